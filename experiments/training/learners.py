"""Where a self-play run's updates run: beside the games in the trainer's process, or in a
process of their own (``--learner``).

The updates and the games share the machine's two cores: with ``--pipeline`` the learner trains
on the last rollout while the games play the next. In one process the two sides also share the
interpreter lock, and the updates' torch calls hand it back and forth with the games' compiled
engine, which holds it throughout: each side waits for the other at every call (in a slow hour
the pipeline ran 1.27x the serial run where the two sides' times allowed 1.9x:
docs/performance.md). :class:`LearnerProcess` runs the same :class:`Learner` in a new
interpreter that shares no lock with the games: each update sends the rollout there and brings
the new weights back. Both do the same arithmetic in the same order, so a run trains the same
network either way (a test compares them).
"""

from __future__ import annotations

import contextlib
import multiprocessing
import os
import pickle
import signal
import subprocess
import sys
from multiprocessing.connection import Connection
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final, NoReturn

import numpy as np

from experiments.training.rollout import Rollout
from experiments.training.tensors import torch_module
from experiments.training.updates import learning_rule, update

if TYPE_CHECKING:
    from experiments.training.selfplay import Args

#: ``--learner`` choices: the updates in the trainer's own process, or in a process of their own.
THREAD, PROCESS = "thread", "process"
LEARNERS: Final = (THREAD, PROCESS)


class Learner:
    """The learning side of a run: the network it trains, its optimizer, the order of its
    minibatches; :meth:`state` is what a checkpoint keeps of them."""

    def __init__(self, args: Args, network: Any) -> None:
        torch = torch_module()
        self.args = args
        self.rule = learning_rule(args.algo, args)
        self.network = network
        self.optimizer = torch.optim.Adam(network.modules.parameters(), lr=args.learning_rate)
        #: The minibatch order of the updates, apart from the pool's: the learner may run beside the games.
        self.update_rng = np.random.default_rng([args.seed, 11])

    def update(self, rollout: Rollout, warming_up: bool) -> dict[str, float]:
        """One update on ``rollout`` (:func:`~experiments.training.updates.update`): its mean losses."""
        args = self.args
        return update(self.rule, self.network, self.optimizer, rollout, self.update_rng, args.minibatch,
                      args.max_grad_norm, warming_up)  # fmt: skip

    def state(self) -> dict[str, Any]:
        """The network's weights, the optimizer's state and the minibatch generator's."""
        return {
            "network": self.network.modules.state_dict(),
            "optimizer": self.optimizer.state_dict(),
            "update_rng": self.update_rng.bit_generator.state,
        }

    def load(self, state: dict[str, Any]) -> None:
        """Continue from :meth:`state`."""
        self.network.modules.load_state_dict(state["network"])
        self.optimizer.load_state_dict(state["optimizer"])
        self.update_rng.bit_generator.state = state["update_rng"]

    def close(self) -> None:
        """Nothing to release in the trainer's own process."""


class LearnerProcess:
    """A :class:`Learner` in a child process; ``network`` (the trainer's copy, which the pool's
    snapshots, the exports and the evaluations read) takes its weights after every update and load.

    The child is ``python -m experiments.training.learners`` with one end of a socket pair: it
    imports nothing of the trainer's script (``multiprocessing``'s spawn would run a script's
    unguarded top level again), so a notebook, a script or a Ray worker can train alike. It
    ignores Ctrl-C (the trainer stops at an update's end and saves), and ends when the trainer
    closes it or when its end of the socket closes (the trainer gone)."""

    def __init__(self, args: Args, network: Any) -> None:
        self.network = network
        self._pipe, child = multiprocessing.Pipe()
        package_root = str(Path(__file__).resolve().parents[2])
        environment = {
            **os.environ,
            "PYTHONPATH": os.pathsep.join(filter(None, [package_root, os.environ.get("PYTHONPATH")])),
        }
        self._process = subprocess.Popen(
            [sys.executable, "-m", __name__, str(child.fileno())], pass_fds=[child.fileno()], env=environment
        )
        child.close()
        try:
            self._ask("start", args, network.modules.state_dict())  # a failed start raises here, naming why
        except RuntimeError:
            self.close()
            raise

    def _ask(self, *message: Any) -> Any:
        try:
            _send(self._pipe, message)
            kind, answer = _receive(self._pipe)
        except (EOFError, OSError):
            self._ended()
        if kind == "error":
            raise RuntimeError(f"the learner process failed: {answer}")
        return answer

    def _ended(self) -> NoReturn:
        raise RuntimeError(
            f"the learner process ended unexpectedly (exit code {self._process.poll()}); a run can be resumed "
            "from its last checkpoint"
        )

    def update(self, rollout: Rollout, warming_up: bool) -> dict[str, float]:
        losses, weights = self._ask("update", rollout.packed(), warming_up)
        self.network.modules.load_state_dict(weights)
        return losses

    def state(self) -> dict[str, Any]:
        return self._ask("state")

    def load(self, state: dict[str, Any]) -> None:
        self._ask("load", state)
        self.network.modules.load_state_dict(state["network"])

    def close(self) -> None:
        """End the child (idempotent)."""
        if self._process.poll() is None:
            with contextlib.suppress(OSError):
                _send(self._pipe, ("close",))
            try:
                self._process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self._process.kill()
                self._process.wait()
        self._pipe.close()


def _serve(pipe: Connection) -> None:
    """The child's loop: ``start`` its learner, then answer ``update``, ``state`` and ``load``
    until ``close`` or the end of the pipe."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    from experiments.training.selfplay_state import make_network

    learner: Learner | None = None
    while True:
        try:
            message = _receive(pipe)
        except EOFError:
            return
        try:
            answer: Any = None
            if message[0] == "start":
                args, weights = message[1], message[2]
                torch_module().set_num_threads(args.torch_threads)
                network = make_network(args.hidden, None, args.algo)
                network.modules.load_state_dict(weights)
                learner = Learner(args, network)
            elif learner is None or message[0] == "close":
                return
            elif message[0] == "update":
                answer = (
                    learner.update(Rollout.unpacked(message[1]), message[2]),
                    learner.network.modules.state_dict(),
                )
            elif message[0] == "state":
                answer = learner.state()
            elif message[0] == "load":
                learner.load(message[1])
        except Exception as error:  # reported to the trainer, which raises it
            _send(pipe, ("error", f"{type(error).__name__}: {error}"))
            continue
        _send(pipe, ("ok", answer))


def _send(pipe: Connection, message: Any) -> None:
    """``message`` pickled whole (tensors by value: ``Connection.send`` would pass them by file
    descriptors that only a ``multiprocessing`` child may open)."""
    pipe.send_bytes(pickle.dumps(message, protocol=pickle.HIGHEST_PROTOCOL))


def _receive(pipe: Connection) -> Any:
    return pickle.loads(pipe.recv_bytes())


def make_learner(args: Args, network: Any) -> Learner | LearnerProcess:
    """The learner ``args.learner`` names, training ``network``'s weights."""
    if args.learner == PROCESS:
        return LearnerProcess(args, network)
    return Learner(args, network)


__all__ = ["LEARNERS", "PROCESS", "THREAD", "Learner", "LearnerProcess", "make_learner"]


if __name__ == "__main__":
    _serve(Connection(int(sys.argv[1])))
