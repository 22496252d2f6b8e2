"""The league of the self-play trainer: an exploiter beside the main network.

With ``exploiter@W`` in ``--opponents``, every ``--exploiter-every`` network decisions the run
pauses and trains its exploiter, a best response to the network as it is then (AlphaStar's main
exploiter, PSRO's best-response oracle): the network is written to ``RUN_DIR/exploiter/target.npz``
and the exploiter, a self-play run of its own in ``RUN_DIR/exploiter/`` whose mixture is that file
alone, trains ``--exploiter-decisions`` more decisions (the first round starts it from the
network, later rounds continue it against the newer target). Its weights then play the
``exploiter`` seats of the main pool until the next round, so the network keeps meeting the
strategy that beats it best. Both runs are checkpointed: a stop inside a round finishes the
round first when the run is resumed. docs/training.md shows a league run and its cost."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from pathlib import Path
from typing import Any

from experiments.common.seeds import derive_seed
from experiments.training.opponents import EXPLOITER
from experiments.training.selfplay_state import Run
from experiments.training.selfplay_watch import export
from experiments.training.stopping import StopRequest

#: The purpose mixed into the exploiter's seed (its games never repeat the main run's).
EXPLOITER_SEED: int = 3


def exploiter_folder(out: Path) -> Path:
    """Where a league run keeps its exploiter's own run."""
    return out / "exploiter"


def has_exploiter(run: Run) -> bool:
    """Whether the run's mixture names the exploiter (then it trains one)."""
    return EXPLOITER in run.pool.mixture.names


def round_due(run: Run) -> bool:
    """Whether the run has played ``--exploiter-every`` decisions since the last round."""
    counters = run.counters
    return has_exploiter(run) and counters["decisions"] - counters["last_exploiter"] >= run.args.exploiter_every


def exploiter_args(args: Any, rounds: int) -> Any:
    """The exploiter run's settings for its ``rounds``-th round: the main run's, trained against
    ``target.npz`` alone, started from it, to ``rounds`` times ``--exploiter-decisions``."""
    folder = exploiter_folder(args.out)
    target = folder / "target.npz"
    return dataclasses.replace(
        args, out=folder, opponents=(f"network:path={target}@1",), init=target, value_warmup=0,
        decisions=rounds * args.exploiter_decisions, seed=derive_seed(args.seed, EXPLOITER_SEED) % 2**31,
        eval_every=0, tensorboard=False, plot=False,
    )  # fmt: skip


def league_round(run: Run, stop: StopRequest, train: Callable[..., Run]) -> None:
    """Train the exploiter against the network as it is (``train`` is the self-play trainer's
    loop) and seat it in the pool. A signal during the round stops the exploiter at its next
    update (it saves its own checkpoint) and then the main run; the round is not counted, so
    the resumed run finishes it first. The main run's torch generator is put back afterwards:
    what the main run draws does not depend on the round."""
    args, counters = run.args, run.counters
    rounds = int(counters["exploiter_rounds"]) + 1
    inner = exploiter_args(args, rounds)
    folder = exploiter_folder(args.out)
    resuming = (folder / "checkpoint.pt").exists()
    folder.mkdir(parents=True, exist_ok=True)
    export(run, folder / "target.npz")  # a resumed round writes the same network: the run stopped where it began
    print(f"exploiter round {rounds}: a best response to the network at {int(counters['decisions']):,} decisions, "
          f"to {inner.decisions:,} exploiter decisions", flush=True)  # fmt: skip
    torch_state = run.torch.get_rng_state()
    round_stop = StopRequest()
    try:
        exploiter = train(inner, resume=resuming, stop=round_stop, module=None)
    finally:
        run.torch.set_rng_state(torch_state)
    if round_stop.requested:
        stop.requested = True
        return
    run.pool.set_exploiter({key: value.clone() for key, value in exploiter.network.modules.state_dict().items()})
    counters["exploiter_rounds"] = rounds
    counters["last_exploiter"] = counters["decisions"]
