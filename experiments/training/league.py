"""The league of the self-play trainer: an exploiter beside the main network.

With ``exploiter@W`` in ``--opponents``, every ``--exploiter-every`` network decisions a round
trains the run's exploiter, a best response to the network as it is then (AlphaStar's main
exploiter, PSRO's best-response oracle): the network is written to ``RUN_DIR/exploiter/target.npz``
and the exploiter, a self-play run of its own in ``RUN_DIR/exploiter/`` whose mixture is that file
alone, trains ``--exploiter-decisions`` more decisions (the first round starts it from the network,
later rounds continue it against the newer target). Its weights then play the ``exploiter`` seats
of the main pool, so the network keeps meeting the strategy that beats it best.

Where a round runs (``--backend``): ``local`` trains it in this process at the round's start, the
network waiting; ``ray`` trains it in a Ray actor (a local Ray, or the cluster at ``RAY_ADDRESS``)
while the network trains on, the two learners exchanging weights, checkpoint and log through
Ray's object store, and the exploiter of a round joins the pool at the start of the next one.
Either way the run folder holds both runs and a stopped run resumes to what the uninterrupted run
does: a round stopped or in flight is trained again from the exploiter's last checkpoint and the
target kept in its folder. docs/training.md shows a league run and its cost."""

from __future__ import annotations

import dataclasses
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

from experiments.common.parallel import LOCAL, RAY, connect_ray
from experiments.common.seeds import EXPLOITER_RUN, derive_seed
from experiments.training.opponents import EXPLOITER
from experiments.training.runs import RUN_FILE, write_bytes
from experiments.training.selfplay_state import Run
from experiments.training.selfplay_watch import export
from experiments.training.stopping import StopRequest

#: The exploiter run's files a Ray round sends back to the run folder (its ``run.json`` written
#: when its first round started it).
ROUND_FILES: tuple[str, ...] = (RUN_FILE, "checkpoint.pt", "progress.csv", "policy.npz")


def exploiter_folder(out: Path) -> Path:
    """Where a league run keeps its exploiter's own run."""
    return out / "exploiter"


def exploiter_args(args: Any, rounds: int) -> Any:
    """The exploiter run's settings for its ``rounds``-th round: the main run's, trained against
    ``target.npz`` alone, started from it, to ``rounds`` times ``--exploiter-decisions``."""
    folder = exploiter_folder(args.out)
    target = folder / "target.npz"
    return dataclasses.replace(
        args, out=folder, opponents=(f"network:path={target}@1",), init=target, value_warmup=0,
        decisions=rounds * args.exploiter_decisions, seed=derive_seed(args.seed, EXPLOITER_RUN) % 2**31,
        eval_every=0, tensorboard=False, plot=False, backend=LOCAL,
    )  # fmt: skip


def train_round(args: Any, rounds: int, stop: StopRequest | None, train: Callable[..., Run]) -> Run:
    """Train the exploiter of ``args`` (the main run's settings) to the end of round ``rounds``
    against its folder's ``target.npz``: a new run in the first round, its checkpoint continued after."""
    inner = exploiter_args(args, rounds)
    return train(inner, resume=(inner.out / "checkpoint.pt").exists(), stop=stop, module=None)


def weights(run: Run) -> dict[str, Any]:
    """A copy of a run's network weights (what the pool seats)."""
    return {key: value.clone() for key, value in run.network.modules.state_dict().items()}


class RayLearner:
    """The exploiter's learner in a Ray actor: each round it receives the main run's settings, the
    target and the exploiter's files so far, trains the round in a folder of its own and returns
    the weights and files (the run folder stays on the main run's machine)."""

    def train_round(self, args: Any, rounds: int, files: dict[str, bytes], train: Callable[..., Run]) -> Any:
        with tempfile.TemporaryDirectory() as scratch:
            here = dataclasses.replace(args, out=Path(scratch))
            folder = exploiter_folder(here.out)
            folder.mkdir(parents=True)
            for name, data in files.items():
                (folder / name).write_bytes(data)
            exploiter = train_round(here, rounds, None, train)
            back = {name: (folder / name).read_bytes() for name in ROUND_FILES if (folder / name).exists()}
            return weights(exploiter), back


class League:
    """The rounds of a league run (:meth:`step` at every update's start, :meth:`close` at the end);
    ``train`` is the self-play trainer's loop, which trains the exploiter."""

    def __init__(self, run: Run, train: Callable[..., Run]) -> None:
        self.run = run
        self.train = train
        self.active = EXPLOITER in run.pool.mixture.names
        self.folder = exploiter_folder(run.args.out)
        self.actor: Any = None
        self.in_flight: Any = None  # the Ray reference of the round training now
        self.started_ray = False

    def due(self) -> bool:
        """Whether ``--exploiter-every`` decisions have passed since the last round began."""
        counters = self.run.counters
        return self.active and counters["decisions"] - counters["last_exploiter"] >= self.run.args.exploiter_every

    def step(self, stop: StopRequest) -> None:
        """At an update's start: on Ray, send again a round that a stop left unfinished; when a
        round is due, begin it (local: train it now; Ray: seat the last round's exploiter, send the next)."""
        counters = self.run.counters
        if (
            self.run.args.backend == RAY
            and counters["exploiter_sent"] > counters["exploiter_rounds"]
            and self.in_flight is None
        ):
            self._send(int(counters["exploiter_sent"]))
        if not self.due():
            return
        if self.run.args.backend == LOCAL:
            self._local_round(stop)
            return
        self._receive()
        self._begin(int(counters["exploiter_rounds"]) + 1)
        self._send(int(counters["exploiter_sent"]))

    def close(self, stopped: bool) -> None:
        """At the run's end: a finished run takes the round in flight into its folder (a stopped one
        drops it: its resume trains it again); the actor and a Ray this run started end."""
        if self.in_flight is not None and not stopped:
            self._receive()
        if self.actor is not None:
            import ray

            ray.kill(self.actor)
            self.actor = None
        if self.started_ray:
            import ray

            ray.shutdown()
            self.started_ray = False

    # ------------------------------------------------------------------ rounds
    def _begin(self, rounds: int) -> None:
        """Write the target of round ``rounds`` (the network now) and count the round as begun."""
        counters = self.run.counters
        self.folder.mkdir(parents=True, exist_ok=True)
        export(self.run, self.folder / "target.npz")
        trained = rounds * self.run.args.exploiter_decisions
        print(f"exploiter round {rounds}: a best response to the network at {int(counters['decisions']):,} "
              f"decisions, to {trained:,} exploiter decisions", flush=True)  # fmt: skip
        counters["exploiter_sent"] = rounds
        counters["last_exploiter"] = counters["decisions"]

    def _local_round(self, stop: StopRequest) -> None:
        """Train the round here. A signal stops the exploiter at its next update (it saves its own
        checkpoint) and then the run, the round uncounted: the resumed run trains it again from
        where the exploiter stopped. The main run's torch generator is put back afterwards."""
        counters = self.run.counters
        rounds = int(counters["exploiter_rounds"]) + 1
        last = counters["last_exploiter"]
        self._begin(rounds)
        torch_state = self.run.torch.get_rng_state()
        round_stop = StopRequest()
        try:
            exploiter = train_round(self.run.args, rounds, round_stop, self.train)
        finally:
            self.run.torch.set_rng_state(torch_state)
        if round_stop.requested:
            counters["last_exploiter"], counters["exploiter_sent"] = last, rounds - 1
            stop.requested = True
            return
        self.run.pool.set_exploiter(weights(exploiter))
        counters["exploiter_rounds"] = rounds

    def _send(self, rounds: int) -> None:
        """Send round ``rounds`` to the Ray actor with the target and the exploiter's files."""
        import ray

        if self.actor is None:
            self.started_ray = connect_ray(None, None, quiet=True)
            self.actor = ray.remote(num_cpus=1)(RayLearner).remote()
        names = ("target.npz", *ROUND_FILES)
        files = {name: (self.folder / name).read_bytes() for name in names if (self.folder / name).exists()}
        self.in_flight = self.actor.train_round.remote(self.run.args, rounds, files, self.train)

    def _receive(self) -> None:
        """Wait for the round in flight, keep its files and seat its exploiter."""
        if self.in_flight is None:
            return
        import ray

        state, files = ray.get(self.in_flight)
        self.in_flight = None
        for name, data in files.items():
            write_bytes(self.folder / name, data)
        self.run.pool.set_exploiter(state)
        self.run.counters["exploiter_rounds"] = self.run.counters["exploiter_sent"]
