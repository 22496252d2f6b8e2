"""Self-play PPO with RLlib on Ray: ``python -m experiments.train_rllib`` (``pip install -e ".[rllib]"``).

**The recipe.** One policy plays every seat (shared parameters) through RLlib's new API stack:
PPO, RLlib's ``PettingZooEnv`` over the AEC env, and the masked module and env adapter of
:mod:`experiments.rllib_support`. RLlib's env check stays on (it is why the env forfeits illegal
actions; see there). Rewards are the env's terminal ``"win"`` rewards, undiscounted
(``gamma=1``: a game is about 170 decisions long with 2 players, and a discount would shrink
the result to almost nothing at the first decisions). ``docs/rllib.md`` is the guide.

**Where it runs.** RLlib always runs on Ray. ``--backend local`` (the default) starts a Ray on
this machine for the command, ``ray.init(num_cpus=N)`` with N = ``--num-env-runners`` + 1 (an
env runner per CPU, and this process, which learns and evaluates), and stops it at the end;
``--backend ray`` joins the running cluster at ``--ray-address`` (or the ``RAY_ADDRESS``
variable) and leaves it running, or without either starts a local Ray as ``--backend local``
does (the same rule as every command with ``--backend``); every node needs this package
installed, as for any Ray program. ``--num-env-runners 0`` samples in this process. From Python, with Ray already
initialized in the process, that Ray is used and left running.

**The run folder** (``--out``):

* ``run.json``: the settings. ``--resume`` requires the same ones, ``--iterations`` (which may
  grow) and where the run runs (``--num-env-runners``, ``--backend``) excepted;
* ``progress.csv``: a row per iteration (:data:`PROGRESS_COLUMNS`): environment steps so far,
  training seconds so far, episodes finished, RLlib's mean episode return (the sum of every
  seat's reward: 0 in the zero-sum ``"win"`` game, blank when no episode finished), mean episode
  length, forfeited episodes (the run stops at the first), the policy's entropy and losses;
* ``strength.csv``: every ``--eval-every`` iterations and after the last, the policy (greedy,
  :class:`~experiments.rllib_support.RLlibAgent`) against ``random`` and ``value`` in the
  project's tournament (:data:`STRENGTH_COLUMNS`): duplicate deals of the fixed seed
  :data:`EVAL_SEED`, the same at every evaluation, ``--eval-games`` games each (rounded up to
  whole deals: a deal is played in every seating), the win rate with its 95% interval;
* ``checkpoints/iteration_NNNNNN/``: RLlib's checkpoint (``Algorithm.save_to_path``) at each
  evaluation; ``experiments.rllib_support.RLlibAgent:checkpoint=DIR`` plays it in tournaments.

**Resume.** ``--resume DIR`` continues the run in ``DIR`` from its last checkpoint: the
algorithm is built from the settings and restored (weights, optimizer, counters), the rows
written after that checkpoint are dropped, and training goes on to ``--iterations``, appending
to the CSV files. A checkpoint is renamed into place only once its evaluation is written, so
the last one is always complete. Episodes in progress are not in a checkpoint, so a resumed
run does not replay an uninterrupted one exactly. A run stopped before its first checkpoint
has nothing to resume: the same command with ``--out`` starts it again.

**Reproducibility.** ``--seed`` seeds the deals, the initial weights and the sampling, but
RLlib's multi-agent episodes iterate sets of agent ids, whose order follows Python's hash seed,
so the same seed trains a different policy in every process unless ``PYTHONHASHSEED`` is fixed
(``PYTHONHASHSEED=0 python -m experiments.train_rllib ...`` repeats a local run exactly).

**Threads.** One torch thread in this process, and ``OMP_NUM_THREADS=1`` (unless set) before a
local Ray starts, so that its workers inherit it: more threads are slower for networks this
size on the project's 2-core machines. A cluster's workers take the setting of their nodes.
"""

from __future__ import annotations

import argparse
import csv
import json
import math
import os
import shutil
import sys
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field, fields
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

from biblios_env.engine.setup import PLAYER_COUNTS
from biblios_env.layout import LAYOUT_FINGERPRINT
from experiments.cli import (
    HelpFormatter,
    add_backend_arguments,
    add_config_arguments,
    at_least,
    check_backend_arguments,
    invocation_note,
    program_name,
    seed_value,
)
from experiments.match import AgentSpec
from experiments.parallel import LOCAL
from experiments.tournament import TournamentConfig, run_tournament, seat_orders

if TYPE_CHECKING:
    from ray.rllib.algorithms.algorithm import Algorithm
    from ray.rllib.algorithms.ppo import PPOConfig

MODULE: Final = "experiments.train_rllib"
RUN_FILE: Final = "run.json"
RUN_FORMAT: Final = "biblios-rllib-run"
PROGRESS_FILE: Final = "progress.csv"
STRENGTH_FILE: Final = "strength.csv"
CHECKPOINTS: Final = "checkpoints"
PROGRESS_COLUMNS: Final = (
    "iteration", "env_steps", "seconds", "episodes", "episode_return_mean", "episode_len_mean", "forfeits",
    "entropy", "policy_loss", "vf_loss",
)  # fmt: skip
STRENGTH_COLUMNS: Final = (
    "iteration", "env_steps", "opponent", "players", "deals", "games", "win_rate", "ci_low", "ci_high", "fair_share",
)  # fmt: skip
#: The fixed opponents of every evaluation.
EVAL_OPPONENTS: Final = ("random", "value")
#: The tournament seed of every evaluation: the same deals each time, so the points of a curve compare.
EVAL_SEED: Final = 20_240_601
#: The settings that may change when a run is resumed: how far it goes and where it runs.
RESUMABLE_CHANGES: Final = frozenset({"iterations", "num_env_runners"})


def default_out() -> Path:
    """A fresh run folder named after the moment the run starts: ``runs/rllib-<date>-<time>``."""
    return Path("runs") / datetime.now().strftime("rllib-%Y%m%d-%H%M%S")


@dataclass(frozen=True)
class RLlibConfig:
    """Every setting of a run, each with its command-line option of the same name
    (:func:`experiments.cli.add_config_arguments`); ``run.json`` records them."""

    players: int = field(default=2, metadata={"help": "players at the table", "choices": PLAYER_COUNTS})
    iterations: int = field(default=50, metadata={"help": "training iterations in all", "type": at_least(1)})
    seed: int = field(
        default=1,
        metadata={
            "help": "seeds the deals, the weights and the sampling (a run repeats exactly with PYTHONHASHSEED fixed)",
            "type": seed_value,
        },
    )
    train_batch: int = field(  # env steps (every seat's decisions) per iteration
        default=4000, metadata={"help": "env steps sampled per iteration", "type": at_least(1)}
    )
    minibatch_size: int = field(default=256, metadata={"help": "SGD minibatch size", "type": at_least(1)})
    epochs: int = field(default=4, metadata={"help": "passes over each batch", "type": at_least(1)})
    learning_rate: float = field(default=3e-4, metadata={"help": "Adam learning rate"})
    hidden: tuple[int, ...] = field(
        default=(256, 256), metadata={"help": "hidden layer sizes (shared trunk)", "type": at_least(1)}
    )
    eval_games: int = field(  # per opponent and evaluation; 0: no evaluation
        default=40,
        metadata={
            "help": f"games against each of {' and '.join(EVAL_OPPONENTS)} per evaluation, rounded up to whole deals "
            "(0: checkpoints only)",
            "type": at_least(0),
        },
    )
    eval_every: int = field(
        default=10,
        metadata={
            "help": "iterations between evaluations (each saves a checkpoint; the last iteration always does)",
            "type": at_least(1),
        },
    )
    num_env_runners: int = field(
        default=1,
        metadata={
            "help": "Ray actors that sample games, one CPU each (0: sample in this process)",
            "type": at_least(0),
        },
    )
    out: Path = field(
        default_factory=default_out, metadata={"help": "new run folder (default runs/rllib-<date>-<time>)"}
    )

    def settings(self) -> dict[str, Any]:
        """What ``run.json`` records (JSON types; the folder is where it is written, not a setting)."""
        data = asdict(self)
        data.pop("out")
        data["hidden"] = list(self.hidden)
        return data


# ----------------------------------------------------------------------------- the run folder
class RunFolderError(ValueError):
    """A run folder that cannot be started or resumed: not a run, a run already, other settings."""


def checkpoint_path(out: Path, iteration: int) -> Path:
    return out / CHECKPOINTS / f"iteration_{iteration:06d}"


def last_checkpoint(out: Path) -> tuple[int, Path] | None:
    """The finished checkpoint with the highest iteration, or None."""
    found = sorted(
        (int(path.name.removeprefix("iteration_")), path)
        for path in (out / CHECKPOINTS).glob("iteration_*")
        if path.is_dir() and path.name.removeprefix("iteration_").isdigit()
    )
    return found[-1] if found else None


def _recorded_run(out: Path) -> dict[str, Any] | None:
    """The ``run.json`` of the run in ``out``, None if there is none; RunFolderError if the
    file is another program's (a tournament writes a ``run.json`` too)."""
    run_file = out / RUN_FILE
    if not run_file.is_file():
        return None
    recorded: dict[str, Any] = json.loads(run_file.read_text())
    if recorded.get("format") != RUN_FORMAT:
        raise RunFolderError(f"{run_file} is not a run of {MODULE}: choose another folder")
    return recorded


def check_run_folder(config: RLlibConfig, resume: bool) -> int:
    """What :func:`train` will do in ``config.out``, checked before anything starts; returns the
    checkpointed iteration to continue from (0: a new run).

    A new run needs a folder without a checkpoint (a run stopped before its first one starts
    again). A resumed run needs the same settings and layout (RunFolderError naming each that
    differs) and a checkpoint.
    """
    out = config.out
    recorded = _recorded_run(out)
    found = last_checkpoint(out)
    if not resume:
        if found is not None:
            raise RunFolderError(
                f"{out} already holds a run: pass --resume {out} to continue it, or choose another --out"
            )
        return 0
    if recorded is None:
        raise RunFolderError(f"--resume {out}: no {RUN_FILE} there, so no run of {MODULE} to continue")
    if recorded.get("layout") != LAYOUT_FINGERPRINT:
        raise RunFolderError(
            f"--resume {out}: the run was trained on another observation/action layout "
            f"({recorded.get('layout')}; this code has {LAYOUT_FINGERPRINT})"
        )
    before, now = recorded["settings"], config.settings()
    different = sorted(
        key for key in before.keys() | now.keys() if key not in RESUMABLE_CHANGES and before.get(key) != now.get(key)
    )
    if different:
        changes = ", ".join(f"{key} {before.get(key)!r} in the run, {now.get(key)!r} now" for key in different)
        raise RunFolderError(f"--resume {out}: the run was started with other settings: {changes}")
    if found is None:
        raise RunFolderError(
            f"--resume {out}: the run stopped before its first checkpoint; start it again with --out {out}"
        )
    return found[0]


def prepare_run(config: RLlibConfig, resume: bool) -> int:
    """Check the run folder (:func:`check_run_folder`), then write ``run.json`` and drop the rows
    written after the checkpoint the run continues from; returns that checkpoint's iteration."""
    done = check_run_folder(config, resume)
    config.out.mkdir(parents=True, exist_ok=True)
    run = {"format": RUN_FORMAT, "layout": LAYOUT_FINGERPRINT, "settings": config.settings()}
    (config.out / RUN_FILE).write_text(json.dumps(run, indent=1) + "\n")
    _drop_rows_after(config.out / PROGRESS_FILE, done)
    _drop_rows_after(config.out / STRENGTH_FILE, done)
    return done


def _drop_rows_after(path: Path, iteration: int) -> None:
    """Keep the rows of ``path`` up to ``iteration``: the resumed run writes the later ones again."""
    if not path.exists():
        return
    with path.open(newline="") as handle:
        reader = csv.DictReader(handle)
        columns = reader.fieldnames or []
        rows = [row for row in reader if int(row["iteration"]) <= iteration]
    _write_rows(path, columns, rows, mode="w")


def _write_rows(path: Path, columns: Sequence[str], rows: Sequence[dict[str, Any]], mode: str = "a") -> None:
    new = mode == "w" or not path.exists()
    with path.open(mode, newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=list(columns))
        if new:
            writer.writeheader()
        writer.writerows(rows)


def _last_seconds(out: Path) -> float:
    """The training seconds of the rows kept (a resumed run counts on from there)."""
    path = out / PROGRESS_FILE
    if not path.exists():
        return 0.0
    with path.open(newline="") as handle:
        rows = list(csv.DictReader(handle))
    return float(rows[-1]["seconds"]) if rows else 0.0


# ----------------------------------------------------------------------------- Ray and RLlib
def start_ray(backend: str, address: str | None, num_cpus: int) -> bool:
    """Connect this process to Ray as ``backend`` says (module docs); True if it started a Ray
    that the caller must stop."""
    import ray

    os.environ.setdefault("OMP_NUM_THREADS", "1")  # before Ray starts: its workers inherit it
    if ray.is_initialized():
        return False
    if backend == LOCAL or not address:
        # address="local": a new Ray here even where RAY_ADDRESS names a cluster.
        ray.init(address="local", num_cpus=num_cpus, include_dashboard=False)
        return True
    ray.init(address=address)
    return False


def ppo_config(config: RLlibConfig) -> PPOConfig:
    """RLlib's PPO settings of a run: shared masked policy, env check on, learner in this process."""
    from ray.rllib.algorithms.ppo import PPOConfig
    from ray.rllib.core.rl_module.multi_rl_module import MultiRLModuleSpec
    from ray.rllib.core.rl_module.rl_module import RLModuleSpec

    from experiments import rllib_support

    module = RLModuleSpec(
        module_class=rllib_support.ActionMaskingTorchRLModule,
        model_config={"fcnet_hiddens": list(config.hidden), "head_fcnet_hiddens": [], "vf_share_layers": True},
    )
    return (
        PPOConfig()
        .environment(rllib_support.RLLIB_ENV, env_config={"num_players": config.players})
        .env_runners(num_env_runners=config.num_env_runners, num_envs_per_env_runner=1, rollout_fragment_length="auto")
        .learners(num_learners=0)
        .training(
            train_batch_size_per_learner=config.train_batch,
            minibatch_size=config.minibatch_size,
            num_epochs=config.epochs,
            lr=config.learning_rate,
            gamma=1.0,
        )
        .multi_agent(
            policies={rllib_support.POLICY},
            policy_mapping_fn=rllib_support.shared_policy,
            policies_to_train=[rllib_support.POLICY],
        )
        .rl_module(rl_module_spec=MultiRLModuleSpec(rl_module_specs={rllib_support.POLICY: module}))
        .callbacks(on_episode_end=rllib_support.count_forfeits)
        .debugging(seed=config.seed)
    )


def _number(value: Any) -> float | str:
    """A metric for the CSV: a float, or blank where RLlib has none (no episode finished)."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return ""
    return float(value)


def progress_row(result: dict[str, Any], iteration: int, seconds: float) -> dict[str, Any]:
    """The ``progress.csv`` row of one ``Algorithm.train()`` result."""
    from experiments.rllib_support import FORFEITS, POLICY

    runners = result.get("env_runners", {})
    learner = result.get("learners", {}).get(POLICY, {})
    return {
        "iteration": iteration,
        "env_steps": int(result["num_env_steps_sampled_lifetime"]),
        "seconds": round(seconds, 2),
        "episodes": int(runners.get("num_episodes", 0)),
        "episode_return_mean": _number(runners.get("episode_return_mean")),
        "episode_len_mean": _number(runners.get("episode_len_mean")),
        "forfeits": int(runners.get(FORFEITS, 0)),
        **{name: _number(learner.get(name)) for name in ("entropy", "policy_loss", "vf_loss")},
    }


def evaluate(checkpoint: Path, config: RLlibConfig, iteration: int, env_steps: int) -> list[dict[str, Any]]:
    """The ``strength.csv`` rows: the checkpoint against each of :data:`EVAL_OPPONENTS`, one seat
    each, the opponent in every other seat, on the same duplicate deals every time."""
    from experiments.rllib_support import RLlibAgent

    learner = AgentSpec(f"{RLlibAgent.__module__}.{RLlibAgent.__qualname__}", (("checkpoint", str(checkpoint)),))
    games_per_deal = len(seat_orders(config.players, "cyclic"))
    deals = math.ceil(config.eval_games / games_per_deal)
    rows = []
    for opponent in EVAL_OPPONENTS:
        lineup = (learner, *[AgentSpec(opponent)] * (config.players - 1))
        tournament = TournamentConfig(lineup, num_players=config.players, deals=deals, seed=EVAL_SEED)
        result = run_tournament(tournament, workers=1, progress=False)
        (stats,) = [row for row in result.agents if row.agent == learner.label]
        rows.append(
            {
                "iteration": iteration,
                "env_steps": env_steps,
                "opponent": opponent,
                "players": config.players,
                "deals": deals,
                "games": len(result.records),
                "win_rate": round(stats.win_rate.estimate, 4),
                "ci_low": round(stats.win_rate.low, 4),
                "ci_high": round(stats.win_rate.high, 4),
                "fair_share": round(1 / config.players, 4),
            }
        )
    return rows


def save_checkpoint(algo: Algorithm, config: RLlibConfig, iteration: int, env_steps: int) -> list[dict[str, Any]]:
    """Save the algorithm, evaluate the saved policy, write the rows, then rename the checkpoint
    into place: a checkpoint under its final name always has its evaluation written."""
    final = checkpoint_path(config.out, iteration)
    partial = final.with_name(f".{final.name}.partial")
    if partial.exists():
        shutil.rmtree(partial)  # left by an interrupted run
    partial.parent.mkdir(parents=True, exist_ok=True)
    algo.save_to_path(str(partial.resolve()))
    rows = evaluate(partial, config, iteration, env_steps) if config.eval_games else []
    _write_rows(config.out / STRENGTH_FILE, STRENGTH_COLUMNS, rows)
    os.replace(partial, final)
    return rows


class ForfeitError(RuntimeError):
    """An episode ended in a forfeit during training: the policy chose an illegal action."""


def train(config: RLlibConfig, resume: bool = False, progress: bool = True) -> Path:
    """Train (or, with ``resume``, continue) the run in ``config.out`` on the Ray this process is
    connected to; returns the last checkpoint. See the module docs for what is written."""
    import torch
    from tqdm import tqdm

    from experiments import rllib_support

    torch.set_num_threads(1)
    done = prepare_run(config, resume)
    rllib_support.register_rllib_env()
    algo = ppo_config(config).build_algo()
    try:
        if done:
            algo.restore_from_path(str(checkpoint_path(config.out, done).resolve()))
        seconds = _last_seconds(config.out)
        bar = tqdm(total=config.iterations, initial=done, unit="iteration", disable=not progress, dynamic_ncols=True)
        with bar:
            for iteration in range(done + 1, config.iterations + 1):
                result = algo.train()
                seconds += float(result["time_this_iter_s"])
                row = progress_row(result, iteration, seconds)
                _write_rows(config.out / PROGRESS_FILE, PROGRESS_COLUMNS, [row])
                if row["forfeits"]:
                    raise ForfeitError(
                        f"iteration {iteration}: {row['forfeits']} episode(s) ended in a forfeit, so the policy chose "
                        "illegal actions: the action mask does not reach it (see progress.csv)"
                    )
                if iteration % config.eval_every == 0 or iteration == config.iterations:
                    strength = save_checkpoint(algo, config, iteration, row["env_steps"])
                    bar.write(_evaluation_line(iteration, strength))
                bar.set_postfix(env_steps=row["env_steps"], episode_len=row["episode_len_mean"])
                bar.update()
    finally:
        algo.stop()
    return checkpoint_path(config.out, max(done, config.iterations))  # the last iteration is always saved


def _evaluation_line(iteration: int, rows: Sequence[dict[str, Any]]) -> str:
    shown = ", ".join(
        f"vs {row['opponent']} {row['win_rate']:.3f} [{row['ci_low']:.3f}, {row['ci_high']:.3f}]" for row in rows
    )
    return f"iteration {iteration}: checkpoint saved" + (f"; win rate {shown}" if shown else "")


# ----------------------------------------------------------------------------- command line


def build_parser() -> argparse.ArgumentParser:
    """The command line: :class:`RLlibConfig`'s options, ``--resume``, ``--no-progress`` and where Ray runs."""
    parser = argparse.ArgumentParser(
        prog=program_name(MODULE),
        description="Self-play PPO for Biblios with RLlib on Ray: one masked policy for every seat.",
        epilog=invocation_note(MODULE),
        formatter_class=HelpFormatter,
    )
    run = parser.add_argument_group("run")
    add_config_arguments(run, RLlibConfig, ["players", "iterations", "seed"])
    folder = run.add_mutually_exclusive_group()
    add_config_arguments(folder, RLlibConfig, ["out"])
    folder.add_argument("--resume", type=Path, metavar="DIR", help="continue the run in DIR from its last checkpoint")
    run.add_argument(
        "--no-progress", dest="progress", action="store_false", help="hide the progress bar (default: shown)"
    )
    ray = parser.add_argument_group("Ray")
    add_backend_arguments(ray)
    add_config_arguments(ray, RLlibConfig, ["num_env_runners"])
    ppo = parser.add_argument_group("PPO")
    add_config_arguments(ppo, RLlibConfig, ["train_batch", "minibatch_size", "epochs", "learning_rate", "hidden"])
    evaluation = parser.add_argument_group("evaluation")
    add_config_arguments(evaluation, RLlibConfig, ["eval_games", "eval_every"])
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    check_backend_arguments(args, parser)
    address = args.ray_address or os.environ.get("RAY_ADDRESS")
    try:
        from experiments import rllib_support  # noqa: F401  # names the extra when RLlib or torch is missing
    except ModuleNotFoundError as error:
        parser.error(str(error))
    resume = args.resume is not None
    settings = {setting.name: getattr(args, setting.name) for setting in fields(RLlibConfig)}
    settings.update(hidden=tuple(args.hidden), out=args.resume if resume else (args.out or default_out()))
    config = RLlibConfig(**settings)
    try:
        check_run_folder(config, resume)
    except RunFolderError as error:
        parser.error(str(error))
    started = start_ray(args.backend, address, config.num_env_runners + 1)
    try:
        start = time.perf_counter()
        checkpoint = train(config, resume=resume, progress=args.progress)
        print(f"trained in {time.perf_counter() - start:.1f} s; last checkpoint: {checkpoint}")
    except ForfeitError as error:
        print(f"{parser.prog}: error: {error}", file=sys.stderr)
        return 1
    finally:
        if started:
            import ray

            ray.shutdown()
    return 0
