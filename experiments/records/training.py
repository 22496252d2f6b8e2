"""Training runs as tables: the files ``experiments.train_ppo --out DIR`` writes, read into
DataFrames (:func:`read_training_run`), labelled for figures (:func:`training_run_label`), and a
small synthetic run in the same format for demos and tests (:func:`write_demo_training_run`).
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

import numpy as np
import pandas as pd

from experiments.common.stats import wilson_interval

#: Columns :func:`read_training_run` needs in an evaluation CSV (more are kept as they are).
EVALUATION_COLUMNS: Final = ("timesteps", "opponent", "win_rate")
#: Names accepted for the step column of an evaluation CSV (renamed to ``timesteps``).
_STEP_NAMES: Final = ("timesteps", "total_timesteps", "num_timesteps", "time/total_timesteps", "step", "steps")


@dataclass
class TrainingRun:
    """A training run's logs as tables (see :func:`read_training_run`)."""

    path: Path
    config: dict[str, Any]
    progress: pd.DataFrame  # SB3 logger rows, with a ``timesteps`` column
    evaluations: pd.DataFrame  # one row per (evaluation, opponent): timesteps, opponent, win_rate, ...
    episodes: pd.DataFrame  # SB3 Monitor rows in time order: reward, length, time, timesteps (may be empty)

    @property
    def synthetic(self) -> bool:
        """Made up by :func:`write_demo_training_run`, not trained."""
        return bool(self.config.get("synthetic"))


def _with_timesteps(frame: pd.DataFrame, path: Path) -> pd.DataFrame:
    for name in _STEP_NAMES:
        if name in frame.columns:
            return frame.rename(columns={name: "timesteps"}) if name != "timesteps" else frame
    raise ValueError(f"{path} has no step column (one of {', '.join(_STEP_NAMES)}); columns: {list(frame.columns)}")


def read_training_run(run_dir: str | Path) -> TrainingRun:
    """Read a training run folder (``experiments.train_ppo --out DIR``), whatever of these it holds:

    =====================  ==================================================================
    file                   content
    =====================  ==================================================================
    ``training.json``      the run's settings (any JSON object; ``run.json``, the record a
                           run starts with, also read: a run still training has only it)
    ``progress.csv``       Stable-Baselines3's CSV logger: ``time/total_timesteps`` and the
                           logged values (``rollout/ep_rew_mean``, ``train/entropy_loss``,
                           ``train/value_loss``, ``train/approx_kl``, ...), one row per update
    ``*eval*.csv``         periodic evaluations, one row per (evaluation, opponent):
                           ``timesteps``, ``opponent``, ``win_rate`` and optionally
                           ``seconds``, ``players``, ``games``, ``deals``, ``ci_low``,
                           ``ci_high``, ``mean_vp`` (train_ppo's ``eval.csv``)
    ``*monitor.csv``       SB3 ``Monitor`` episodes (a ``#`` JSON line, then ``r, l, t``);
                           train_ppo writes ``monitor/env_<i>.monitor.csv`` per environment
    =====================  ==================================================================

    The episodes of all Monitor files are put in time order (``time``: seconds since the
    environment started) and numbered with ``timesteps``, the learner decisions of all episodes
    finished so far: the training step at which the episode ended, short of the steps of the
    episodes still running in the other environments.

    Files are searched recursively; the step column may also be called ``total_timesteps``,
    ``num_timesteps`` or ``step``. Raises FileNotFoundError if the folder holds neither
    progress nor evaluations.
    """
    run = Path(run_dir)
    if not run.is_dir():
        raise FileNotFoundError(f"no training run folder at {run}")
    config: dict[str, Any] = {}
    for name in (
        "run.json",
        "training.json",
    ):  # the trainers' run record (experiments.training.runs), then the final one
        if (run / name).exists():
            try:
                config.update(json.loads((run / name).read_text()))
            except json.JSONDecodeError as error:
                raise ValueError(f"cannot read {run / name}: {error}") from error
    progress_frames = [_with_timesteps(pd.read_csv(path), path) for path in sorted(run.rglob("progress.csv"))]
    evaluation_frames = []
    for path in sorted(run.rglob("*eval*.csv")):
        frame = _with_timesteps(pd.read_csv(path), path)
        missing = [column for column in EVALUATION_COLUMNS if column not in frame.columns]
        if missing:
            raise ValueError(f"evaluation file {path} lacks the column(s) {missing}; columns: {list(frame.columns)}")
        evaluation_frames.append(frame)
    episode_frames = [
        pd.read_csv(path, comment="#").rename(columns={"r": "reward", "l": "length", "t": "time"})
        for path in sorted(run.rglob("*monitor.csv"))
    ]
    if not progress_frames and not evaluation_frames:
        raise FileNotFoundError(f"{run} holds no progress.csv and no evaluation CSV: not a training run")

    def combined(frames: list[pd.DataFrame]) -> pd.DataFrame:
        if not frames:
            return pd.DataFrame()
        return pd.concat(frames, ignore_index=True).sort_values("timesteps", kind="stable", ignore_index=True)

    return TrainingRun(
        run, config, combined(progress_frames), combined(evaluation_frames), _episodes_in_time_order(episode_frames)
    )


def _episodes_in_time_order(frames: list[pd.DataFrame]) -> pd.DataFrame:
    """Every environment's episodes in the order they ended, with the steps done by then (see above)."""
    if not frames:
        return pd.DataFrame()
    episodes = pd.concat(frames, ignore_index=True).sort_values("time", kind="stable", ignore_index=True)
    return episodes.assign(timesteps=episodes["length"].cumsum())


def training_run_label(run: TrainingRun) -> str:
    """What every figure of ``run`` must say about its data: made-up curves, or which real run."""
    if run.synthetic:
        return "SYNTHETIC demo data (write_demo_training_run): made-up curves, not a training run"
    steps = run.config.get("timesteps")
    if steps is None:
        steps = max(int(frame.timesteps.max()) for frame in (run.progress, run.evaluations) if not frame.empty)
    reward = run.config.get("settings", {}).get("reward")
    return f"real run {run.path.name}: {steps:,} steps" + (f", reward {reward!r}" if reward else "")


def write_demo_training_run(
    run_dir: str | Path,
    *,
    seed: int = 0,
    updates: int = 20,
    steps_per_update: int = 2048,
    opponents: Iterable[str] = ("random", "value", "hoarder"),
) -> Path:
    """Write a small *synthetic* training run in the format :func:`read_training_run` reads: the
    files ``python -m experiments.train_ppo --out DIR`` writes (training.json, progress.csv,
    eval.csv, monitor/env_<i>.monitor.csv), with train_ppo's default reward ``"vp"`` (own VP
    minus the best other player's). ``training.json`` says ``"synthetic": true``.

    The curves are made up (noisy saturating curves), for demos and tests only.
    """
    run = Path(run_dir)
    run.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(seed)
    opponents = list(opponents)
    timesteps = steps_per_update * np.arange(1, updates + 1)
    learned = 1 - np.exp(-3 * np.arange(1, updates + 1) / updates)  # 0 -> 1: how far the made-up policy got
    _write_demo_progress(run, rng, timesteps, learned)
    _write_demo_evaluations(run, rng, timesteps, learned, opponents)
    _write_demo_episodes(run, rng, int(timesteps[-1]))
    settings = {"players": [2], "total_steps": int(timesteps[-1]), "seed": seed, "reward": "vp"}
    (run / "training.json").write_text(
        json.dumps(
            {
                "synthetic": True,
                "command": f"experiments.records.write_demo_training_run(seed={seed}, updates={updates})",
                "settings": {**settings, "eval_opponents": opponents},
                "timesteps": int(timesteps[-1]),
            },
            indent=1,
        )
    )
    return run


def _write_demo_progress(run: Path, rng: np.random.Generator, timesteps: np.ndarray, learned: np.ndarray) -> None:
    """SB3's CSV log, one row per update; the episode reward on the ``"vp"`` scale."""
    size = len(timesteps)
    pd.DataFrame(
        {
            "time/total_timesteps": timesteps,
            "time/fps": rng.normal(450, 30, size).round(),
            "rollout/ep_rew_mean": (-8 + 7 * learned + rng.normal(0, 0.4, size)).round(3),
            "rollout/ep_len_mean": (62 + rng.normal(0, 2, size)).round(2),
            "train/entropy_loss": (-2.5 + 1.2 * learned + rng.normal(0, 0.03, size)).round(4),
            "train/value_loss": (40 * np.exp(-2 * learned) + rng.normal(0, 0.5, size)).round(3),
            "train/approx_kl": np.abs(rng.normal(0.01, 0.003, size)).round(5),
            "train/explained_variance": (0.6 * learned + rng.normal(0, 0.03, size)).round(4),
        }
    ).to_csv(run / "progress.csv", index=False)


def _write_demo_evaluations(
    run: Path, rng: np.random.Generator, timesteps: np.ndarray, learned: np.ndarray, opponents: list[str]
) -> None:
    """eval.csv as train_ppo writes it: at the start, every fourth update and at the end, one row
    per step and opponent."""
    deals = 20
    strength = {"random": 0.95, "value": 0.55, "hoarder": 0.6}
    rows = []
    points = sorted({0, *range(3, len(timesteps), 4), len(timesteps) - 1})
    for index in points:
        step, fraction = (0, 0.0) if index == 0 else (int(timesteps[index]), float(learned[index]))
        for opponent in opponents:
            target = 0.5 * (1 - fraction) + strength.get(opponent, 0.5) * fraction
            interval = wilson_interval(rng.binomial(2 * deals, target), 2 * deals)
            row = {"timesteps": step, "seconds": round(step / 450, 1), "players": 2, "opponent": opponent}
            row |= {"games": 2 * deals, "deals": deals, "win_rate": interval.estimate}
            row |= {"ci_low": interval.low, "ci_high": interval.high, "mean_vp": round(8 + 6 * interval.estimate, 2)}
            rows.append(row)
    pd.DataFrame(rows).to_csv(run / "eval.csv", index=False)


def _write_demo_episodes(run: Path, rng: np.random.Generator, total_steps: int, environments: int = 2) -> None:
    """SB3 Monitor files, one per environment: the learner's episode reward (``"vp"``), length and time."""
    folder = run / "monitor"
    folder.mkdir(exist_ok=True)
    episodes = total_steps // 62 // environments
    for environment in range(environments):
        progress = np.linspace(0, 1, episodes)
        with (folder / f"env_{environment}.monitor.csv").open("w") as handle:
            handle.write("#" + json.dumps({"t_start": 0.0, "env_id": "biblios-demo"}) + "\n")
            pd.DataFrame(
                {
                    "r": np.round(-8 + 7 * progress + rng.normal(0, 4, episodes)),
                    "l": rng.integers(50, 75, size=episodes),
                    "t": np.cumsum(rng.uniform(0.1, 0.2, size=episodes)).round(3),
                }
            ).to_csv(handle, index=False)


__all__ = ["EVALUATION_COLUMNS", "TrainingRun", "read_training_run", "training_run_label", "write_demo_training_run"]
