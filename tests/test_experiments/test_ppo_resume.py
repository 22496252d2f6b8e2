"""Stopping and resuming MaskablePPO training (``experiments.train_ppo``) on tiny runs.

* SIGINT stops the command at the end of an update with exit status 0, the checkpoint saved and
  the line that resumes it, and no traceback; ``--resume`` finishes the run (a subprocess).
* A run stopped after two updates and resumed ends where the uninterrupted run ends: the same
  steps in ``progress.csv`` and ``eval.csv`` (no row twice), the same snapshots in the pool.
* A folder that holds a run is not overwritten; ``--resume`` with other settings, or on a folder
  without a run, is a usage error naming the option or the file.
"""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest
from interrupts import interrupt, run_module

from experiments.common.errors import RunFolderError
from experiments.training.ppo.cli import main
from experiments.training.ppo.config import PPOConfig
from experiments.training.ppo.training import MODULE, train
from experiments.training.stopping import StopRequest

#: Two environments x 256 steps: an update every 512 steps.
TINY = [
    "--n-envs", "2", "--n-steps", "256", "--batch-size", "128", "--n-epochs", "1", "--hidden", "16",
    "--snapshot-every", "512", "--eval-every", "512", "--eval-deals", "1", "--eval-opponents", "random",
    "--checkpoint-every", "0", "--bc-games", "0", "--no-progress", "--seed", "4",
]  # fmt: skip


class StopAfter(StopRequest):
    """Asks the run to stop after ``updates`` updates, as Ctrl-C would."""

    def __init__(self, updates: int) -> None:
        super().__init__()
        self.updates = updates
        self.seen = 0

    def after_update(self, progress: object) -> None:
        self.seen += 1
        self.requested = self.requested or self.seen > self.updates  # the first call is before any update


def _rows(path: Path) -> list[dict[str, str]]:
    with path.open() as handle:
        return list(csv.DictReader(handle))


def _config(out: Path, total: int) -> PPOConfig:
    from experiments.training.ppo.cli import build_parser, config_from_arguments

    return config_from_arguments(build_parser().parse_args([*TINY, "--total-steps", str(total), "--out", str(out)]))


def test_a_resumed_run_ends_where_the_uninterrupted_run_ends(tmp_path: Path) -> None:
    whole = _config(tmp_path / "whole", 2048)
    train(whole)
    parted = _config(tmp_path / "parted", 2048)
    assert train(parted, stop=StopAfter(2)) is None  # stopped: no training.json record
    state = json.loads((parted.out / "checkpoint.json").read_text())
    assert state["timesteps"] == 1024 and not (parted.out / "training.json").exists()
    info = train(parted, resume=True)
    assert info is not None and info["timesteps"] == 2048
    for name, column in (("progress.csv", "time/total_timesteps"), ("eval.csv", "timesteps")):
        steps = [int(row[column]) for row in _rows(parted.out / name)]
        assert steps == [int(row[column]) for row in _rows(whole.out / name)], name
        assert len(steps) == len(set(steps)), f"{name} has a step twice: {steps}"
    assert sorted(p.name for p in (parted.out / "pool").iterdir()) == sorted(
        p.name for p in (whole.out / "pool").iterdir()
    )
    state = json.loads((parted.out / "checkpoint.json").read_text())
    assert state["timesteps"] == 2048  # the finished run's checkpoint: --resume --total-steps N trains on


def test_sigint_saves_prints_the_resume_line_and_resume_finishes(tmp_path: Path) -> None:
    out = tmp_path / "run"
    progress = out / "progress.csv"
    interrupt(MODULE, [*TINY, "--total-steps", "1000000", "--out", str(out)],
              ready=lambda: progress.exists() and len(_rows(progress)) >= 2)  # fmt: skip
    stopped_at = json.loads((out / "checkpoint.json").read_text())["timesteps"]
    assert stopped_at >= 1024 and stopped_at % 512 == 0
    resumed = run_module(MODULE, ["--resume", str(out), "--total-steps", str(stopped_at + 512)])
    assert resumed.returncode == 0, resumed.stderr
    assert json.loads((out / "training.json").read_text())["timesteps"] == stopped_at + 512
    steps = [int(row["time/total_timesteps"]) for row in _rows(out / "progress.csv")]
    assert steps == sorted(set(steps)) and steps[-1] == stopped_at + 512


def test_a_run_folder_is_not_overwritten_and_resume_keeps_its_settings(tmp_path: Path, capsys) -> None:
    config = _config(tmp_path / "run", 512)
    train(config)
    with pytest.raises(RunFolderError, match="already holds a run: continue it with --resume"):
        train(config)
    with pytest.raises(SystemExit):
        main(["--resume", str(config.out), "--learning-rate", "0.1"])
    assert (
        "only --total-steps, --progress, --workers, --backend, --ray-address, --out may be given, not --learning-rate"
        in (capsys.readouterr().err)
    )
    with pytest.raises(SystemExit):
        main(["--resume", str(tmp_path / "nothing")])
    assert "run.json is missing" in capsys.readouterr().err
