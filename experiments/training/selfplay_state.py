"""The state of a self-play run (:class:`Run`): the learning network and its actor copy, the
optimizer, the batched games, the opponent pool and the counters, and the checkpoint that holds
them all, so that a resumed run goes on exactly as an uninterrupted one; and how a run starts
in its folder or is resumed from it (:func:`start`)."""

from __future__ import annotations

import copy
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

from biblios_env.layout import LAYOUT_FINGERPRINT
from biblios_env.vector import VectorGame
from experiments.common.errors import CheckpointError
from experiments.training.exploring import ExploringStarts
from experiments.training.learners import make_learner
from experiments.training.opponents import BatchedOpponentPool, Mixture
from experiments.training.rollout import Rollout
from experiments.training.runs import start_run, written_whole
from experiments.training.tensors import torch_module
from experiments.training.updates import learning_rule

if TYPE_CHECKING:
    from experiments.training.selfplay import Args

CHECKPOINT_FORMAT: Final = "biblios-selfplay-checkpoint"
#: 2: the pending rollout is kept as plain arrays (1 pickled the trainer's own classes), and the
#: decisions DMC carries to the next rollout are kept too.
CHECKPOINT_VERSION: Final = 2


class Run:
    """The state of a run: what a checkpoint holds, and the helpers of :func:`train`."""

    def __init__(self, args: Args) -> None:
        torch = torch_module()
        torch.set_num_threads(args.torch_threads)
        torch.manual_seed(args.seed)
        self.args = args
        self.torch = torch
        #: How the actor picks its moves (the learner's copy of the rule trains the network).
        self.rule = learning_rule(args.algo, args)
        #: The learner's network, or with ``--learner process`` its weights after each update.
        self.network = make_network(args.hidden, args.init, args.algo)
        #: The learning side (``--learner``): its optimizer and minibatch order; :meth:`close` ends it.
        self.learner = make_learner(args, self.network)
        #: The network that plays while the learner trains ``network`` on the previous rollout: its
        #: weights are the learner's as they were when that rollout ended (see :func:`train`).
        self.actor = copy.deepcopy(self.network)
        #: A rollout with its returns not yet trained on (the pipeline's), saved with the checkpoint.
        self.pending: Rollout | None = None
        #: The decisions of games still running that a Monte-Carlo rule trains on once they end.
        self.carry: Rollout | None = None
        self.games = VectorGame(args.num_games, args.players, seed=args.seed, reward=args.reward, preset=args.preset)
        self.pool = BatchedOpponentPool(Mixture.parse(args.opponents), self.games, self.network, args.pool_size,
                                        args.seed, torch)  # fmt: skip
        #: The exploring starts (``--exploring-starts``), if any.
        self.exploring = (
            ExploringStarts(args.exploring_starts, args.num_games, args.seed) if args.exploring_starts else None
        )
        self.counters = {"decisions": 0, "games": 0, "updates": 0, "wall_seconds": 0.0, "last_snapshot": 0,
                         "last_eval": 0, "last_exploiter": 0, "exploiter_rounds": 0, "exploiter_sent": 0}  # fmt: skip
        self.win_stats: dict[str, list[float]] = {}

    def record_game(self, slot: int) -> None:
        """The anchor seat's win share in the game that just ended, per opponent kind at the table."""
        anchor = int(self.pool.anchor[slot])
        winners = self.games.batch.winners[slot]
        share = float(winners[anchor]) / max(int(winners.sum()), 1)
        owners = self.pool.owners[slot]
        kinds = {self.pool.owner_name(int(owner)) for seat, owner in enumerate(owners) if seat != anchor}
        for kind in kinds:
            self.win_stats.setdefault(kind, []).append(share)
        self.counters["games"] += 1

    def update(self, rollout: Rollout) -> dict[str, float]:
        """One update of the learner's network on ``rollout`` (:func:`~experiments.training.updates.update`);
        ``network`` holds its weights after it."""
        return self.learner.update(rollout, self.counters["decisions"] < self.args.value_warmup)

    def sync_actor(self) -> None:
        """The actor takes the learner's weights."""
        self.actor.modules.load_state_dict(self.network.modules.state_dict())

    def close(self) -> None:
        """End the learner's process, if it has one (the run can still be saved before)."""
        self.learner.close()

    # ------------------------------------------------------------- checkpoints
    def save(self, path: Path) -> None:
        """Write the checkpoint whole, then move it into place: a reader never sees half a file."""
        state = {
            "format": CHECKPOINT_FORMAT, "version": CHECKPOINT_VERSION, "layout": LAYOUT_FINGERPRINT,
            "args": self.args.to_json(), **self.learner.state(), "hidden": list(self.network.hidden),
            "pending": None if self.pending is None else self.pending.packed(),
            "carry": None if self.carry is None else self.carry.packed(),
            "torch_rng": self.torch.get_rng_state(), "counters": dict(self.counters),
            "win_stats": {kind: values[-2000:] for kind, values in self.win_stats.items()},
            "games": self.games.checkpoint(), **self.pool.state(),
            "exploring": None if self.exploring is None else self.exploring.state(),
        }  # fmt: skip
        with written_whole(path) as temporary:
            self.torch.save(state, temporary)

    def load(self, path: Path) -> None:
        """Continue from the checkpoint in ``path``; a file of another kind, version or layout is
        refused naming it."""
        try:
            state = self.torch.load(path, weights_only=False)
        except Exception as error:
            raise CheckpointError(f"cannot read checkpoint {path}: {type(error).__name__}: {error}") from None
        if not isinstance(state, dict) or state.get("format") != CHECKPOINT_FORMAT:
            raise CheckpointError(f"{path} is not a self-play checkpoint (no {CHECKPOINT_FORMAT!r} format mark)")
        if state.get("version") != CHECKPOINT_VERSION:
            raise CheckpointError(
                f"{path} is checkpoint version {state.get('version')}, this code reads {CHECKPOINT_VERSION}"
            )
        if state.get("layout") != LAYOUT_FINGERPRINT:
            raise CheckpointError(
                f"{path} was made for observation/action layout {state.get('layout')!r}, this code has "
                f"{LAYOUT_FINGERPRINT!r}; it cannot continue here"
            )
        self.learner.load({key: state[key] for key in ("network", "optimizer", "update_rng")})
        self.pending = None if state["pending"] is None else Rollout.unpacked(state["pending"])
        self.carry = None if state["carry"] is None else Rollout.unpacked(state["carry"])
        self.sync_actor()
        self.torch.set_rng_state(state["torch_rng"])
        self.counters.update(state["counters"])
        self.win_stats = {kind: list(values) for kind, values in state["win_stats"].items()}
        self.games.restore(state["games"])
        self.pool.restore(state)
        if self.exploring is not None:
            self.exploring.restore(state["exploring"])


def make_network(hidden: Sequence[int], init: Path | None, algo: str) -> Any:
    """The shared-trunk policy-and-value network (``experiments.training.networks.TorchNetwork``),
    fresh or from a network file (:func:`read_init`)."""
    from experiments.training.networks import TorchNetwork, from_numpy

    if init is None:
        return TorchNetwork(tuple(hidden), value_hidden=64, sparse_input=True)
    numpy_network = read_init(init, algo)
    try:
        network = from_numpy(numpy_network, sparse_input=True)
    except ValueError as error:
        raise CheckpointError(f"--init {init}: {error}") from error
    if numpy_network.value_kind != "return":  # another target (a win-share logit): start it at 0
        last = network.value[-1]
        with torch_module().no_grad():
            last.weight.zero_()
            last.bias.zero_()
    return network


#: What a network file's policy head holds, by the ``algo`` its training recorded (files without
#: one, such as expert iteration's, hold policy logits).
HEADS: Final = {"ppo": "policy logits", "dmc": "Q-values of the return"}


def read_init(init: Path, algo: str) -> Any:
    """The network file ``--init`` names, if a run of ``algo`` can start from it: it reads the
    observation, and its policy head holds what ``algo`` reads there. A PPO file's logits read as
    DMC's Q-values (or the reverse) make a silently broken start: a DMC best response started from
    ``network_2p.npz`` lost every game within a million decisions. Raised as
    :class:`CheckpointError` before the run writes anything."""
    from agents.network import NumpyNetwork

    try:
        network = NumpyNetwork.load(init)
    except (OSError, ValueError) as error:
        raise CheckpointError(f"--init {init}: {error}") from error
    if network.inputs != "observation":
        raise CheckpointError(f"--init {init}: the network reads {network.inputs!r}; self-play needs 'observation'")
    trained = "dmc" if network.metadata.get("algo") == "dmc" else "ppo"
    if trained != algo:
        raise CheckpointError(
            f"--init {init}: its policy head holds {HEADS[trained]} (trained by {trained}), and --algo {algo} "
            f"reads that head as {HEADS[algo]}: start --algo {algo} from a file a {algo} run wrote, or without --init"
        )
    return network


def holds_run(out: Path) -> bool:
    """Whether ``out`` holds a self-play run that a new one would overwrite: its checkpoint or its
    log (a ``run.json`` alone is a run stopped before either, which starts again)."""
    return (out / "checkpoint.pt").exists() or (out / "progress.csv").exists()


def start(args: Args, resume: bool, command: str, **extra: Any) -> Run:
    """A new run of ``command`` in ``args.out`` (``run.json`` records ``extra`` too), or the run
    there continued from its checkpoint."""
    out = args.out
    if resume:
        run = Run(args)
        run.load(out / "checkpoint.pt")
        return run
    if args.init is not None:  # a file the run cannot start from is refused before anything is written
        read_init(args.init, args.algo)
    start_run(out, command, args.to_json(), held=holds_run(out), **extra)
    run = Run(args)
    run.games.reset()
    for slot in range(args.num_games):
        run.pool.seat_players(slot)
    return run


__all__ = ["CHECKPOINT_FORMAT", "CHECKPOINT_VERSION", "HEADS", "Run", "holds_run", "make_network", "read_init", "start"]
