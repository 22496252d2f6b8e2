"""Ctrl-C in the phases of the trainers that play games keeps what is done: a stop while the
bootstrap games of expert iteration (``experiments.train_network``) or the teacher and DAgger
games of PPO's warm start (``experiments.train_ppo``) are played saves the games finished, a stop
while cloning keeps the phases before it, and ``--resume`` ends as the uninterrupted run.

A stop lands at a chosen point: :class:`SignalAt` sends SIGINT to this process when the trainer
reports that a phase reached a number of games (its ``after_step`` hook); the games are played
in this process (``--workers 1``), where the runner stops at the next game. One stop per trainer
is a real SIGINT to the command, which must exit 0 with a resume command that repeats the flags
given (``--no-progress``, ``--workers``)."""

from __future__ import annotations

import json
import os
import signal
from pathlib import Path

import numpy as np
import pytest
from interrupts import interrupt, run_module
from optional_extras import require

from experiments import train_network
from experiments.training.expert_iteration import kept_path
from experiments.training.kept_games import load_kept
from experiments.training.ppo.cli import build_parser, config_from_arguments
from experiments.training.ppo.training import train
from experiments.training.ppo.warm_start import WARM_START_FOLDER
from experiments.training.stopping import StopRequest

NETWORK = [
    "--players", "2", "3", "--iterations", "0", "--bootstrap-games", "6", "--hidden", "16",
    "--bootstrap-epochs", "1", "--eval-deals", "1", "--eval-opponents", "value", "--workers", "1", "--no-progress",
]  # fmt: skip
PPO = [
    "--n-envs", "2", "--n-steps", "256", "--batch-size", "128", "--n-epochs", "1", "--hidden", "16",
    "--snapshot-every", "512", "--eval-every", "0", "--eval-deals", "1", "--eval-opponents", "random",
    "--checkpoint-every", "0", "--bc-games", "6", "--dagger-rounds", "2", "--dagger-games", "4", "--bc-epochs", "1",
    "--dagger-epochs", "1", "--workers", "1", "--no-progress", "--seed", "4", "--total-steps", "512",
]  # fmt: skip


class SignalAt(StopRequest):
    """Sends SIGINT to this process (as Ctrl-C would) once ``phase`` has reached ``done`` games
    or rows; once only."""

    def __init__(self, phase: str, done: int, at_once: bool = False) -> None:
        super().__init__(at_once=at_once)
        self.phase: str | None = phase
        self.done = done

    def after_step(self, phase: str, done: int) -> None:
        if phase == self.phase and done >= self.done:
            self.phase = None
            os.kill(os.getpid(), signal.SIGINT)


def _arrays_equal(first: Path, second: Path) -> None:
    with np.load(first) as one, np.load(second) as other:
        assert sorted(one.files) == sorted(other.files)
        for key in one.files:
            if one[key].dtype.kind not in "OU":  # the metadata name the run folder
                np.testing.assert_array_equal(one[key], other[key], err_msg=key)


# ----------------------------------------------------------------------------- expert iteration
def test_a_stop_in_the_bootstrap_games_keeps_them_and_resume_plays_the_rest(tmp_path: Path, capsys) -> None:
    """12 bootstrap games in batches of 3: SIGINT once 4 are reported stops after the second
    batch, 6 games kept; the resumed run plays the other 6 and ends with the data and the network
    of an uninterrupted run."""
    require("torch")
    whole, parted = tmp_path / "whole", tmp_path / "parted"
    assert train_network.main([*NETWORK, "--out", str(whole)]) == 0
    capsys.readouterr()
    config = train_network.build_parser().parse_args([*NETWORK, "--out", str(parted)])
    from experiments.training.expert_iteration import ExpertIterationConfig, RunStoppedError, run

    values = {key: value for key, value in vars(config).items() if key != "resume"}
    settings = ExpertIterationConfig(**{**values, "players": (2, 3), "hidden": (16,), "eval_opponents": ("value",)})
    with pytest.raises(RunStoppedError, match="after 6 of 12 bootstrap games"):
        run(settings, flags=["--no-progress"], stop=SignalAt("bootstrap games", 4, at_once=True))
    out = capsys.readouterr().out
    line = f"stopped after 6 of 12 bootstrap games; resume with: python -m {train_network.__name__}"
    assert f"{line} --resume {parted} --no-progress" in out, out
    assert sorted(load_kept(kept_path(parted, 0))) == [0, 1, 2, 3, 4, 5]
    assert not (parted / "state.json").exists()
    assert train_network.main(["--resume", str(parted), "--workers", "1", "--no-progress"]) == 0
    assert not kept_path(parted, 0).exists()
    _arrays_equal(whole / "data" / "iteration_0.npz", parted / "data" / "iteration_0.npz")
    _arrays_equal(whole / "network_0.npz", parted / "network_0.npz")


def test_sigint_to_the_command_in_its_bootstrap_exits_0_with_every_flag_in_the_resume_line(tmp_path: Path) -> None:
    require("torch")
    out = tmp_path / "run"
    module = "experiments.train_network"
    arguments = [*NETWORK, "--bootstrap-games", "400", "--workers", "3", "--out", str(out)]
    stdout = interrupt(module, arguments, ready=lambda: (out / "run.json").exists())
    assert f"resume with: python -m {module} --resume {out} --workers 3 --no-progress\n" in stdout, stdout
    assert "nothing finished yet" not in stdout and not (out / "network_0.npz").exists()
    kept = len(load_kept(kept_path(out, 0)))
    assert (kept < 800 and f"{kept:,} of 800 bootstrap games" in stdout) or "before its first game" in stdout, stdout


def test_sigterm_in_the_bootstrap_stops_as_ctrl_c_does(tmp_path: Path) -> None:
    """SIGTERM (a job scheduler's stop) keeps the finished games and exits 0 like Ctrl-C."""
    require("torch")
    out = tmp_path / "run"
    module = "experiments.train_network"
    arguments = [*NETWORK, "--bootstrap-games", "400", "--out", str(out)]
    stdout = interrupt(module, arguments, ready=lambda: (out / "run.json").exists(), signal_number=signal.SIGTERM)
    assert f"resume with: python -m {module} --resume {out} --workers 1 --no-progress\n" in stdout, stdout
    resumed = run_module(module, ["--resume", str(out), "--bootstrap-games", "6"])
    assert resumed.returncode == 2 and "not --bootstrap-games" in resumed.stderr


# ----------------------------------------------------------------------------- PPO's warm start
def _ppo(out: Path) -> object:
    return config_from_arguments(build_parser().parse_args([*PPO, "--out", str(out)]))


def test_stops_in_every_phase_of_the_warm_start_resume_to_the_uninterrupted_policy(tmp_path: Path, capsys) -> None:
    """Stopped in the cloning games, in a DAgger round's games and in a cloning, each resumed: the
    games kept are not played again and the final policy is the uninterrupted run's."""
    require("torch")
    whole = _ppo(tmp_path / "whole")
    train(whole)
    parted = _ppo(tmp_path / "parted")
    kept = parted.out / WARM_START_FOLDER
    capsys.readouterr()
    assert train(parted, stop=SignalAt("cloning games", 2), flags=["--no-progress"]) is None
    assert "stopped during the warm start, after 2 cloning games kept; resume with: " in capsys.readouterr().out
    assert sorted(load_kept(kept / "games.kept.npz")) == [0, 1]
    assert train(parted, resume=True, stop=SignalAt("games of DAgger round 1", 2)) is None
    progress = json.loads((kept / "progress.json").read_text())
    assert progress["phases_played"] == 1 and len(progress["rounds"]) == 1  # the cloning games and the cloned policy
    assert sorted(load_kept(kept / "games.kept.npz")) == [0, 1]
    assert train(parted, resume=True, stop=SignalAt("cloning", 0)) is None  # the first minibatch of round 1
    progress = json.loads((kept / "progress.json").read_text())
    assert progress["phases_played"] == 2 and len(progress["rounds"]) == 1
    info = train(parted, resume=True)
    assert info is not None and info["timesteps"] == 512
    _arrays_equal(whole.out / "policy.npz", parted.out / "policy.npz")
    finished = json.loads((whole.out / "training.json").read_text())["warm_start"]["rounds"]
    assert info["warm_start"]["rounds"] == finished and len(finished) == 3


@pytest.mark.slow
def test_sigint_to_the_command_in_its_warm_start_exits_0_and_resume_finishes(tmp_path: Path) -> None:
    require("torch")
    out = tmp_path / "run"
    module = "experiments.train_ppo"
    arguments = [*PPO, "--bc-games", "300", "--out", str(out)]
    stdout = interrupt(module, arguments, ready=lambda: (out / "monitor").exists())
    assert "stopped during the warm start, after " in stdout, stdout
    assert f"resume with: python -m {module} --resume {out} --no-progress --workers 1\n" in stdout, stdout
    assert "start it again" not in stdout and not (out / "checkpoint.json").exists()
    resumed = run_module(module, ["--resume", str(out), "--bc-games", "6"])
    assert resumed.returncode == 2 and "not --bc-games" in resumed.stderr
    resumed = run_module(module, ["--resume", str(out), "--no-progress", "--workers", "2"])
    assert resumed.returncode == 0, resumed.stderr
    assert json.loads((out / "training.json").read_text())["timesteps"] == 512
