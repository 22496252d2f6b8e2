"""Where a self-play run's updates run (experiments.training.learners): in a process of their own
they train the same network as in the trainer's process, and the child process is looked after:
it survives Ctrl-C, ends with the run, and a child that fails or dies is an error naming it."""

from __future__ import annotations

import csv
import signal
import time
from pathlib import Path
from typing import Any

import pytest

from tests.optional_extras import require

LOSSES = ("policy_loss", "value_loss", "entropy", "approx_kl")


def _tiny(out: Path, **changes: Any) -> Any:
    from experiments.training.selfplay import Args

    return Args(out=out, decisions=3000, num_games=16, rollout_steps=16, hidden=(16,), minibatch=256, eval_every=0,
                tensorboard=False, log_seconds=1e9, **changes)  # fmt: skip


def test_the_process_learner_trains_the_same_network_as_the_thread(tmp_path: Path) -> None:
    """The same updates in the same order: the weights equal bit for bit, every update's losses too."""
    require("torch")
    import torch

    from experiments.training.selfplay import train

    runs = {}
    for learner in ("thread", "process"):
        args = _tiny(tmp_path / learner, learner=learner)
        run = train(args)
        with (args.out / "progress.csv").open(newline="") as handle:
            losses = [[row[key] for key in LOSSES] for row in csv.DictReader(handle)]
        runs[learner] = ({key: value.clone() for key, value in run.network.modules.state_dict().items()}, losses)
    (thread_weights, thread_losses), (process_weights, process_losses) = runs["thread"], runs["process"]
    assert len(thread_losses) >= 5 and thread_losses == process_losses
    assert thread_weights.keys() == process_weights.keys()
    assert all(torch.equal(thread_weights[key], process_weights[key]) for key in thread_weights)


def _learner(tmp_path: Path) -> Any:
    from experiments.training.learners import LearnerProcess
    from experiments.training.selfplay_state import make_network

    args = _tiny(tmp_path / "run")
    return LearnerProcess(args, make_network(args.hidden, None, args.algo))


def test_the_learner_process_ignores_ctrl_c_and_ends_with_the_run(tmp_path: Path) -> None:
    require("torch")
    learner = _learner(tmp_path)
    try:
        state = learner.state()  # started
        assert set(state) == {"network", "optimizer", "update_rng"}
        learner._process.send_signal(signal.SIGINT)  # the trainer stops at an update's end; its learner must not die
        time.sleep(0.5)
        assert learner._process.poll() is None
        learner.load(state)
    finally:
        learner.close()
    assert learner._process.poll() == 0
    learner.close()  # twice is harmless


def test_a_failure_in_the_learner_process_is_raised_naming_it(tmp_path: Path) -> None:
    require("torch")
    learner = _learner(tmp_path)
    try:
        state = learner.state()
        wrong = {**state, "network": {key: value[:1] for key, value in state["network"].items()}}
        with pytest.raises(RuntimeError, match=r"(?s)the learner process failed: RuntimeError: .*size mismatch"):
            learner.load(wrong)
        assert learner.state()["update_rng"] == state["update_rng"]  # it goes on answering
    finally:
        learner.close()


def test_a_learner_process_that_died_is_a_named_error(tmp_path: Path) -> None:
    require("torch")
    learner = _learner(tmp_path)
    try:
        learner.state()
        learner._process.kill()
        learner._process.wait()
        with pytest.raises(RuntimeError, match=r"the learner process ended unexpectedly \(exit code -9\).*resumed"):
            learner.state()
    finally:
        learner.close()
