"""Self-play training on the batched games: ``python -m experiments.train_selfplay`` (``biblios-train-selfplay``).

One file in CleanRL's spirit: the settings are one :class:`Args` dataclass (the command line is
derived from it), and the algorithm reads top to bottom in :func:`train`. Every step of
``--num-games`` batched games (:class:`biblios_env.vector.VectorGame`), the current network decides
for every game where it plays the acting seat, in one forward; the other seats are played by the
opponent pool (frozen snapshots of the network, batched too, and the heuristics). Every decision of
the network is a training sample. ``--algo ppo`` is masked PPO with GAE over each seat's own
decisions (terminal rewards; a game still running when a rollout ends is bootstrapped from the
value of each seat's current observation); ``--algo dmc`` is Deep Monte-Carlo as in DouZero (one
Q-value per action regressed on the final return, epsilon-greedy actors). The story, the
measurements and the choice between them: docs/training.md.

A run lives in its ``--out`` folder: ``args.json``, ``checkpoint.pt`` (network, optimizer, pool,
generators, counters and the games in progress; written atomically every ``--checkpoint-minutes``
and when stopped), ``progress.csv`` (one row per update), ``eval.csv`` (the evaluations against
``--eval-opponent`` on duplicate deals), ``policy.npz`` (the latest network as a numpy file for the
``network`` agent), TensorBoard events in ``tb/`` and, with ``--plot``, ``learning_curve.png``.
Ctrl-C (or SIGTERM) finishes the current update, saves, and exits 0 with the line that resumes:
``--resume RUN_DIR`` continues exactly where the checkpoint stood.
"""

from __future__ import annotations

import argparse
import copy
import dataclasses
import json
import os
import sys
import time
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

import numpy as np

from biblios_env.actions import NUM_ACTIONS
from biblios_env.agent_interface import Agent, AgentObservation, UniformBatchAgent
from biblios_env.engine.game import Game
from biblios_env.engine.views import player_view
from biblios_env.layout import LAYOUT_FINGERPRINT
from biblios_env.observations import OBSERVATION_SCALE
from biblios_env.vector import VectorGame
from experiments.common.cli import (
    HelpFormatter,
    add_config_arguments,
    at_least,
    fraction,
    invocation_note,
    non_negative,
    positive,
    program_name,
    seed_value,
)
from experiments.common.errors import CheckpointError, RunFolderError
from experiments.common.match import AgentSpec, AgentSpecError, build_agent, parse_agent_spec
from experiments.training import evaluation
from experiments.training.evaluation import EVAL_COLUMNS, plot_learning_curve
from experiments.training.runs import (
    append_rows,
    check_run_folder,
    default_out,
    read_rows,
    refuse_new_settings,
    resume_flags,
    settings_from_json,
    settings_json,
    write_json,
)
from experiments.training.stopping import StopRequest, resume_line, stopped_at_once

#: The command that trains: the resume line and the exported networks name it.
MODULE: Final = "experiments.train_selfplay"
CHECKPOINT_FORMAT: Final = "biblios-selfplay-checkpoint"
CHECKPOINT_VERSION: Final = 1
#: ``--opponents`` names that are not agent specs: the learning network itself, and its snapshots.
SELF, SNAPSHOT, RANDOM = "self", "snapshot", "random"
#: The owner of a seat: the learning network, a snapshot (``SNAPSHOT_BASE + k``), the batched
#: random agent, or a per-game agent of the pool (``AGENT_BASE + its index in --opponents``).
LEARNER, UNIFORM, SNAPSHOT_BASE, AGENT_BASE = 0, 1, 1000, 100
PROGRESS_COLUMNS: Final = (
    "update", "decisions", "games", "wall_seconds", "decisions_per_s", "games_per_s",
    "policy_loss", "value_loss", "entropy", "approx_kl", "win_share", "snapshots",
)  # fmt: skip
#: ``eval.csv``: the network decisions trained and the seconds, then the evaluation's columns.
SELFPLAY_EVAL_COLUMNS: Final = ("decisions", "wall_seconds", *EVAL_COLUMNS)


@dataclass(frozen=True)
class Args:
    """Every setting of a run, one field per option (``args.json`` records them)."""

    out: Path = field(
        default_factory=lambda: default_out("selfplay"),
        metadata={"help": "run folder (default runs/selfplay-<date>-<time>)", "section": "run"},
    )
    players: int = field(default=2, metadata={"help": "players per game", "choices": (2, 3, 4)})
    decisions: int = field(
        default=20_000_000, metadata={"help": "stop after this many network decisions", "type": at_least(1)}
    )
    seed: int = field(default=1, metadata={"help": "seed of the games, the network and the pool", "type": seed_value})
    algo: str = field(default="ppo", metadata={"help": "the algorithm", "choices": ("ppo", "dmc")})
    num_games: int = field(default=256, metadata={"help": "games stepped together", "type": at_least(1)})
    rollout_steps: int = field(default=64, metadata={"help": "batched steps between updates", "type": at_least(1)})
    reward: str = field(default="win", metadata={"help": "the env's reward", "choices": ("win", "vp")})
    torch_threads: int = field(
        default=1, metadata={"help": "torch threads per side (the games' and the learner's)", "type": at_least(1)}
    )
    pipeline: bool = field(
        default=True, metadata={"help": "train on the last rollout while the games play the next (two cores)"}
    )
    hidden: tuple[int, ...] = field(
        default=(256, 128),
        metadata={"help": "hidden layers of the shared trunk", "type": at_least(1), "section": "network"},
    )
    init: Path | None = field(
        default=None, metadata={"help": "start from this network file (sets --hidden from it), e.g. the shipped one"}
    )
    value_warmup: int = field(
        default=0,
        metadata={
            "help": "network decisions at the start that train the value head only (ppo; for --init)",
            "type": at_least(0),
        },
    )
    learning_rate: float = field(
        default=3e-4, metadata={"help": "Adam learning rate", "type": positive, "section": "update"}
    )
    epochs: int = field(default=1, metadata={"help": "passes over each rollout (ppo)", "type": at_least(1)})
    minibatch: int = field(default=4096, metadata={"help": "samples per gradient step", "type": at_least(1)})
    gamma: float = field(default=1.0, metadata={"help": "discount over a seat's own decisions", "type": fraction})
    gae_lambda: float = field(default=0.95, metadata={"help": "GAE lambda (ppo)", "type": fraction})
    clip: float = field(default=0.2, metadata={"help": "PPO's ratio clipping", "type": positive})
    entropy: float = field(default=0.01, metadata={"help": "entropy bonus (ppo)", "type": non_negative})
    value_weight: float = field(default=0.5, metadata={"help": "value loss weight (ppo)", "type": non_negative})
    epsilon: float = field(default=0.05, metadata={"help": "exploration of the DMC actors", "type": fraction})
    max_grad_norm: float = field(default=1.0, metadata={"help": "gradient clipping", "type": positive})
    opponents: tuple[str, ...] = field(
        default=("self@0.6", "snapshot@0.2", "value@0.1", "random@0.1"),
        metadata={
            "help": "who plays the seats beside the network's own in each game: SPEC@WEIGHT items; "
            "'self' is the network, 'snapshot' its frozen past versions, else agent specs",
            "section": "opponents",
        },
    )
    snapshot_every: int = field(
        default=2_000_000, metadata={"help": "network decisions between snapshots", "type": at_least(1)}
    )
    pool_size: int = field(default=10, metadata={"help": "snapshots kept (the newest)", "type": at_least(1)})
    eval_every: int = field(
        default=5_000_000,
        metadata={
            "help": "network decisions between evaluations (0: none)",
            "type": at_least(0),
            "section": "what you watch",
        },
    )
    eval_deals: int = field(default=100, metadata={"help": "duplicate deals per evaluation", "type": at_least(1)})
    eval_opponent: str = field(default="value", metadata={"help": "the evaluation opponent (an agent spec)"})
    checkpoint_minutes: float = field(default=10.0, metadata={"help": "minutes between checkpoints", "type": positive})
    log_seconds: float = field(default=30.0, metadata={"help": "seconds between progress lines", "type": positive})
    tensorboard: bool = field(default=True, metadata={"help": "write TensorBoard events to RUN_DIR/tb"})
    plot: bool = field(default=False, metadata={"help": "write learning_curve.png at the end"})

    def to_json(self) -> dict[str, Any]:
        return settings_json(self)


# ----------------------------------------------------------------------------- the opponent pool
@dataclass(frozen=True)
class Mixture:
    """The ``--opponents`` items: names and weights (probabilities once normalised)."""

    names: tuple[str, ...]
    weights: np.ndarray

    @staticmethod
    def parse(items: Sequence[str]) -> Mixture:
        names, weights = [], []
        for item in items:
            spec, at, weight = item.rpartition("@")
            try:
                value = float(weight)
            except ValueError:
                value = -1.0
            if not at or not spec or not value >= 0:
                raise AgentSpecError(f"bad --opponents item {item!r}: expected SPEC@WEIGHT with a weight >= 0")
            if spec not in (SELF, SNAPSHOT):
                try:
                    build_agent(parse_agent_spec(spec))
                except (AgentSpecError, ValueError) as error:
                    raise AgentSpecError(f"--opponents item {item!r}: {error}") from None
            names.append(spec)
            weights.append(value)
        total = sum(weights)
        if total <= 0:
            raise AgentSpecError(f"--opponents {' '.join(items)} has no positive weight")
        return Mixture(tuple(names), np.asarray(weights) / total)


# ----------------------------------------------------------------------------- the network
def _torch() -> Any:
    import warnings

    import torch

    # The first layer's sparse CSR product is the one sparse operation used, and it is tested.
    warnings.filterwarnings("ignore", message="Sparse CSR tensor support is in beta state")
    return torch


def make_network(hidden: Sequence[int], init: Path | None) -> Any:
    """The shared-trunk policy-and-value network (``experiments.training.networks.TorchNetwork``),
    fresh or from a network file."""
    from agents.network import NumpyNetwork
    from experiments.training.networks import TorchNetwork, from_numpy

    if init is None:
        return TorchNetwork(tuple(hidden), value_hidden=64, sparse_input=True)
    try:
        network = from_numpy(NumpyNetwork.load(init), sparse_input=True)
    except (OSError, ValueError) as error:
        raise CheckpointError(f"--init {init}: {error}") from error
    if network.inputs != "observation":
        raise CheckpointError(f"--init {init}: the network reads {network.inputs!r}; self-play needs 'observation'")
    if NumpyNetwork.load(init).value_kind != "return":  # another target (a win-share logit): start it at 0
        last = network.value[-1]
        with _torch().no_grad():
            last.weight.zero_()
            last.bias.zero_()
    return network


def masked_logits(torch: Any, logits: Any, masks: Any) -> Any:
    """Logits with the illegal actions pushed to -1e9 (probability 0)."""
    return logits.masked_fill(masks == 0, -1e9)


@dataclass
class SparseRows:
    """Observations in sparse form: per row its non-zero entries (``columns``, ``values``) from
    ``starts[i]`` for ``lengths[i]`` entries. An observation has about 35 non-zero entries of
    1,134, so the network's first layer multiplies only those (a sparse CSR product, forward and
    backward), and the rows are found once, when the sample is taken, not at every epoch."""

    lengths: np.ndarray
    starts: np.ndarray
    columns: np.ndarray
    values: np.ndarray

    @staticmethod
    def of(torch: Any, counts: np.ndarray) -> SparseRows:
        """The rows of observation counts ``(k, 1134)`` uint8."""
        rows, columns = (part.numpy() for part in torch.from_numpy(counts).nonzero(as_tuple=True))
        lengths = np.bincount(rows, minlength=len(counts))
        starts = np.zeros(len(counts), np.int64)
        np.cumsum(lengths[:-1], out=starts[1:])
        values = (counts[rows, columns] * OBSERVATION_SCALE[columns]).astype(np.float32)
        return SparseRows(lengths, starts, columns, values)

    @staticmethod
    def concatenate(parts: Sequence[SparseRows]) -> SparseRows:
        offsets = np.cumsum([0] + [len(part.columns) for part in parts[:-1]])
        return SparseRows(
            np.concatenate([part.lengths for part in parts]),
            np.concatenate([part.starts + offset for part, offset in zip(parts, offsets)]),
            np.concatenate([part.columns for part in parts]),
            np.concatenate([part.values for part in parts]),
        )

    def __len__(self) -> int:
        return len(self.lengths)

    def take(self, index: np.ndarray) -> SparseRows:
        """The rows ``index``, in that order, packed."""
        lengths = self.lengths[index]
        starts = np.zeros(len(index), np.int64)
        np.cumsum(lengths[:-1], out=starts[1:])
        gather = np.repeat(self.starts[index] - starts, lengths) + np.arange(int(lengths.sum()))
        return SparseRows(lengths, starts, self.columns[gather], self.values[gather])

    def tensor(self, torch: Any) -> Any:
        """The rows as a torch CSR tensor (rows packed in order, as :meth:`take` and :meth:`of` leave them)."""
        crow = np.zeros(len(self.lengths) + 1, np.int64)
        np.cumsum(self.lengths, out=crow[1:])
        return torch.sparse_csr_tensor(
            torch.from_numpy(crow), torch.from_numpy(self.columns.astype(np.int64)), torch.from_numpy(self.values),
            size=(len(self.lengths), len(OBSERVATION_SCALE)), check_invariants=False,
        )  # fmt: skip


def sample_masked(torch: Any, logits: Any) -> tuple[Any, Any]:
    """One action per row from masked logits (Gumbel-max) and its log-probability: the same draw
    as ``Categorical(logits).sample()`` at a fraction of its cost."""
    noise = -torch.log(-torch.log(torch.rand_like(logits).clamp_(min=1e-20)))
    actions = (logits + noise).argmax(dim=1)
    log_probs = torch.log_softmax(logits, dim=1).gather(1, actions.unsqueeze(1)).squeeze(1)
    return actions, log_probs


# ----------------------------------------------------------------------------- the run
class Run:
    """The state of a run: what a checkpoint holds, and the helpers of :func:`train`."""

    def __init__(self, args: Args) -> None:
        torch = _torch()
        torch.set_num_threads(args.torch_threads)
        torch.manual_seed(args.seed)
        self.args = args
        self.torch = torch
        self.mixture = Mixture.parse(args.opponents)
        self.network = make_network(args.hidden, args.init)
        self.optimizer = torch.optim.Adam(self.network.modules.parameters(), lr=args.learning_rate)
        self.snapshots: list[dict[str, Any]] = []  # state dicts, the newest last
        self.snapshot_networks: list[Any] = []
        self.rng = np.random.default_rng([args.seed, 7])
        #: The minibatch order of the updates, apart from ``rng``: the learner may run beside the games.
        self.update_rng = np.random.default_rng([args.seed, 11])
        #: The network that plays while the learner trains ``network`` on the previous rollout: its
        #: weights are the learner's as they were when that rollout ended (see :func:`train`).
        self.actor = copy.deepcopy(self.network)
        #: A prepared rollout not yet trained on (the pipeline's), saved with the checkpoint.
        self.pending: dict[str, Any] | None = None
        self.uniform = UniformBatchAgent(args.seed + 1)
        self.games = VectorGame(args.num_games, args.players, seed=args.seed, reward=args.reward)
        n = args.players
        self.owners = np.zeros((args.num_games, n), np.int64)
        self.agents: list[dict[int, Agent]] = [{} for _ in range(args.num_games)]
        self.agent_seeds: list[dict[int, int]] = [{} for _ in range(args.num_games)]
        self.anchor = np.zeros(args.num_games, np.int64)
        self.counters = {"decisions": 0, "games": 0, "updates": 0, "wall_seconds": 0.0, "last_snapshot": 0,
                         "last_eval": 0}  # fmt: skip
        self.win_stats: dict[str, list[float]] = {}

    # ------------------------------------------------------------- seats
    def seat_players(self, slot: int) -> None:
        """Who plays each seat of the game just dealt in ``slot``: the network at a random anchor
        seat, each other seat drawn from the mixture."""
        n = self.args.players
        anchor = int(self.rng.integers(n))
        owners = np.zeros(n, np.int64)
        self.agents[slot], self.agent_seeds[slot] = {}, {}
        for seat in range(n):
            if seat == anchor:
                continue
            name = self.mixture.names[int(self.rng.choice(len(self.mixture.names), p=self.mixture.weights))]
            owners[seat] = self._owner(name)
            if owners[seat] >= AGENT_BASE and owners[seat] < SNAPSHOT_BASE:
                seed = int(self.rng.integers(2**63))
                agent = build_agent(parse_agent_spec(name))
                agent.start_game(seat, n, seed=seed)
                self.agents[slot][seat], self.agent_seeds[slot][seat] = agent, seed
        self.anchor[slot] = anchor
        self.owners[slot] = owners

    def _owner(self, name: str) -> int:
        if name == SELF or (name == SNAPSHOT and not self.snapshots):
            return LEARNER
        if name == SNAPSHOT:
            return SNAPSHOT_BASE + int(self.rng.integers(len(self.snapshots)))
        if name == RANDOM:
            return UNIFORM
        return AGENT_BASE + self.mixture.names.index(name)

    def owner_name(self, owner: int) -> str:
        if owner == LEARNER:
            return SELF
        if owner == UNIFORM:
            return RANDOM
        if owner >= SNAPSHOT_BASE:
            return SNAPSHOT
        return self.mixture.names[owner - AGENT_BASE]

    # ------------------------------------------------------------- acting
    def opponent_actions(self, rows: np.ndarray, owners: np.ndarray, actions: np.ndarray) -> None:
        """Fill ``actions`` for the games ``rows`` whose acting seat an opponent plays."""
        batch = self.games.batch
        torch = self.torch
        for owner in np.unique(owners).tolist():
            chosen = rows[owners == owner]
            if owner == UNIFORM:
                actions[chosen] = self.uniform.act_batch(batch.observation[chosen], batch.action_mask[chosen])
            elif owner >= SNAPSHOT_BASE:
                network = self.snapshot_networks[owner - SNAPSHOT_BASE]
                with torch.no_grad():
                    sparse = SparseRows.of(torch, self.games.observation_counts()[chosen])
                    logits, _ = network.forward(sparse.tensor(torch))
                    logits = masked_logits(torch, logits, torch.from_numpy(batch.action_mask[chosen]))
                    actions[chosen] = sample_masked(torch, logits)[0].numpy()
            else:
                for slot in chosen.tolist():
                    game = self.games.game(slot)
                    seat = game.current_player
                    view = AgentObservation(player_view(game.state, seat), list(game.legal_actions()))
                    actions[slot] = self.agents[slot][seat].act(view)

    def snapshot(self) -> None:
        """Freeze the current network into the pool (the oldest leaves when it is full)."""
        state = {key: value.clone() for key, value in self.network.modules.state_dict().items()}
        self.snapshots.append(state)
        network = copy.deepcopy(self.network)
        self.snapshot_networks.append(network)
        if len(self.snapshots) > self.args.pool_size:
            self.snapshots.pop(0)
            self.snapshot_networks.pop(0)

    def record_game(self, slot: int) -> None:
        """The anchor seat's win share in the game that just ended, per opponent kind at the table."""
        batch = self.games.batch
        anchor = int(self.anchor[slot])
        winners = batch.winners[slot]
        share = float(winners[anchor]) / max(int(winners.sum()), 1)
        kinds = {self.owner_name(int(owner)) for seat, owner in enumerate(self.owners[slot]) if seat != anchor}
        for kind in kinds:
            self.win_stats.setdefault(kind, []).append(share)
        self.counters["games"] += 1

    # ------------------------------------------------------------- checkpoints
    def checkpoint_state(self) -> dict[str, Any]:
        torch = self.torch
        return {
            "format": CHECKPOINT_FORMAT,
            "version": CHECKPOINT_VERSION,
            "layout": LAYOUT_FINGERPRINT,
            "args": self.args.to_json(),
            "network": self.network.modules.state_dict(),
            "hidden": list(self.network.hidden),
            "optimizer": self.optimizer.state_dict(),
            "snapshots": self.snapshots,
            "rng": self.rng.bit_generator.state,
            "update_rng": self.update_rng.bit_generator.state,
            "pending": _packed(self.pending),
            "uniform_rng": self.uniform.rng.bit_generator.state,
            "torch_rng": torch.get_rng_state(),
            "counters": dict(self.counters),
            "win_stats": {kind: values[-2000:] for kind, values in self.win_stats.items()},
            "games": self.games.checkpoint(),
            "owners": self.owners.tolist(),
            "anchor": self.anchor.tolist(),
            "agent_seeds": [{str(seat): seed for seat, seed in seeds.items()} for seeds in self.agent_seeds],
        }

    def save(self, path: Path) -> None:
        """Write the checkpoint whole, then move it into place: a reader never sees half a file."""
        temporary = path.with_suffix(".tmp")
        self.torch.save(self.checkpoint_state(), temporary)
        os.replace(temporary, path)

    def load(self, path: Path) -> None:
        torch = self.torch
        try:
            state = torch.load(path, weights_only=False)
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
        self.network.modules.load_state_dict(state["network"])
        self.optimizer.load_state_dict(state["optimizer"])
        self.snapshots, self.snapshot_networks = [], []
        for snapshot in state["snapshots"]:
            self.network_copy_from(snapshot)
        self.rng.bit_generator.state = state["rng"]
        self.update_rng.bit_generator.state = state["update_rng"]
        self.pending = _unpacked(state["pending"])
        self.sync_actor()
        self.uniform.rng.bit_generator.state = state["uniform_rng"]
        torch.set_rng_state(state["torch_rng"])
        self.counters.update(state["counters"])
        self.win_stats = {kind: list(values) for kind, values in state["win_stats"].items()}
        self.games.restore(state["games"])
        self.owners[:] = np.asarray(state["owners"])
        self.anchor[:] = np.asarray(state["anchor"])
        for slot, seeds in enumerate(state["agent_seeds"]):
            self.agent_seeds[slot] = {int(seat): int(seed) for seat, seed in seeds.items()}
            self.agents[slot] = {
                seat: self._replayed_agent(slot, seat, seed) for seat, seed in self.agent_seeds[slot].items()
            }

    def sync_actor(self) -> None:
        """The actor takes the learner's weights."""
        self.actor.modules.load_state_dict(self.network.modules.state_dict())

    def network_copy_from(self, state: dict[str, Any]) -> None:
        network = copy.deepcopy(self.network)
        network.modules.load_state_dict(state)
        self.snapshots.append(state)
        self.snapshot_networks.append(network)

    def _replayed_agent(self, slot: int, seat: int, seed: int) -> Agent:
        """A per-game opponent brought to where it stood: started with its seed and shown each of
        its decisions of the game so far (its own randomness advances as it did)."""
        owner = int(self.owners[slot, seat])
        agent = build_agent(parse_agent_spec(self.mixture.names[owner - AGENT_BASE]))
        n = self.args.players
        agent.start_game(seat, n, seed=seed)
        current = self.games.game(slot)
        game = Game.from_config(current.config, seed=current.seed, auto_forced=False)
        for action in current.history:
            legal = game.legal_actions()
            if len(legal) > 1 and game.current_player == seat:
                chosen = agent.act(AgentObservation(player_view(game.state, seat), list(legal)))
                if chosen != action:
                    raise CheckpointError(
                        f"replaying opponent {self.mixture.names[owner - AGENT_BASE]!r} (seat {seat}, game slot "
                        f"{slot}, seed {current.seed}): it chose {chosen} where the game went on with {action}; "
                        "an opponent must play the same moves from the same seed"
                    )
            game.apply(action)
        return agent


def _packed(data: dict[str, Any] | None) -> dict[str, Any] | None:
    """A prepared rollout for the checkpoint, its masks packed to bits (8x smaller)."""
    if data is None:
        return None
    return {**data, "masks": np.packbits(data["masks"].astype(bool), axis=1)}


def _unpacked(data: dict[str, Any] | None) -> dict[str, Any] | None:
    if data is None:
        return None
    masks = np.unpackbits(data["masks"], axis=1, count=NUM_ACTIONS).astype(np.int8)
    return {**data, "masks": masks}


# ----------------------------------------------------------------------------- the algorithm
def collect(run: Run, steps: int) -> dict[str, Any]:
    """``steps`` batched steps; returns the network's samples and each step's game results."""
    torch = run.torch
    games = run.games
    args = run.args
    size, n = args.num_games, args.players
    observations, masks, actions_taken, log_probs, values, slots, seats, step_of = [], [], [], [], [], [], [], []
    terminated = np.zeros((steps, size), bool)
    rewards = np.zeros((steps, size, n), np.float32)
    every = np.arange(size)
    for step in range(steps):
        batch = games.batch
        current = batch.current_player
        owners = run.owners[every, current]
        mine = np.flatnonzero(owners == LEARNER)
        actions = np.zeros(size, np.int64)
        observation = SparseRows.of(torch, games.observation_counts()[mine])
        mask = batch.action_mask[mine]
        with torch.no_grad():
            logits, value = run.actor.forward(observation.tensor(torch))
            mask_tensor = torch.from_numpy(mask)
            if args.algo == "dmc":
                q = masked_logits(torch, logits, mask_tensor)
                greedy = q.argmax(dim=1)
                explore = torch.rand(len(mine)) < args.epsilon
                noise = torch.rand(q.shape).masked_fill(mask_tensor == 0, -1.0)
                chosen = torch.where(explore, noise.argmax(dim=1), greedy)
                log_prob = torch.zeros(len(mine))
            else:
                chosen, log_prob = sample_masked(torch, masked_logits(torch, logits, mask_tensor))
        actions[mine] = chosen.numpy()
        others = np.flatnonzero(owners != LEARNER)
        if len(others):
            run.opponent_actions(others, owners[others], actions)
        observations.append(observation)
        masks.append(mask)
        actions_taken.append(actions[mine])
        log_probs.append(log_prob.numpy())
        values.append(value.numpy())
        slots.append(mine)
        seats.append(current[mine])
        step_of.append(np.full(len(mine), step))
        batch = games.step(actions)
        terminated[step] = batch.terminated
        rewards[step] = batch.rewards
        for slot in np.flatnonzero(batch.terminated).tolist():
            run.record_game(slot)
            run.seat_players(slot)
        run.counters["decisions"] += len(mine)
    return {
        "observations": SparseRows.concatenate(observations),
        "masks": np.concatenate(masks),
        "actions": np.concatenate(actions_taken),
        "log_probs": np.concatenate(log_probs),
        "values": np.concatenate(values),
        "slots": np.concatenate(slots),
        "seats": np.concatenate(seats),
        "steps": np.concatenate(step_of),
        "terminated": terminated,
        "rewards": rewards,
    }


def bootstrap_values(run: Run) -> np.ndarray:
    """``(num_games, players)``: the value of each seat's current observation, for the seats of
    games still running (the network's estimate of what its decisions so far will return)."""
    torch = run.torch
    out = np.zeros((run.args.num_games, run.args.players), np.float32)
    if run.args.algo == "dmc":
        return out  # DMC regresses on finished games only (no bootstrap)
    for seat in range(run.args.players):
        with torch.no_grad():
            _, value = run.actor.forward(torch.from_numpy(run.games.observe(seat)))
        out[:, seat] = value.numpy()
    return out


def returns_and_advantages(
    run: Run, data: dict[str, Any], bootstrap: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """GAE over each seat's own decisions, walking the rollout backwards: a seat's next value is
    the value at its own next decision in the game (or its terminal reward when the game ended,
    or the bootstrap value at the end of the rollout). Returns (returns, advantages, valid): a
    sample is valid for DMC only once its game ended (its return is known)."""
    args = run.args
    gamma, lam = args.gamma, args.gae_lambda
    steps = data["terminated"].shape[0]
    next_value = bootstrap.copy()
    next_advantage = np.zeros_like(bootstrap)
    pending_reward = np.zeros_like(bootstrap)
    known = np.zeros(bootstrap.shape, bool)  # DMC: the game's end lies within the rollout
    advantages = np.zeros(len(data["actions"]), np.float32)
    returns = np.zeros(len(data["actions"]), np.float32)
    valid = np.zeros(len(data["actions"]), bool)
    order = np.argsort(data["steps"], kind="stable")
    bounds = np.searchsorted(data["steps"][order], np.arange(steps + 1))
    for step in range(steps - 1, -1, -1):
        ended = data["terminated"][step]
        next_value[ended] = 0.0
        next_advantage[ended] = 0.0
        pending_reward[ended] = data["rewards"][step][ended]
        known[ended] = True
        rows = order[bounds[step] : bounds[step + 1]]
        slots, seats = data["slots"][rows], data["seats"][rows]
        value = data["values"][rows]
        delta = pending_reward[slots, seats] + gamma * next_value[slots, seats] - value
        advantage = delta + gamma * lam * next_advantage[slots, seats]
        advantages[rows] = advantage
        if args.algo == "dmc":
            returns[rows] = pending_reward[slots, seats] + gamma * next_value[slots, seats]
            next_value[slots, seats] = returns[rows]  # the Monte-Carlo return of the seat from here
        else:
            returns[rows] = advantage + value
            next_value[slots, seats] = value
        valid[rows] = known[slots, seats]
        next_advantage[slots, seats] = advantage
        pending_reward[slots, seats] = 0.0
    return returns, advantages, valid


def update(run: Run, data: dict[str, Any]) -> dict[str, float]:
    """The gradient steps of one update on a prepared rollout (:func:`prepare`), to the learner's
    network; returns the mean loss terms."""
    torch = run.torch
    args = run.args
    network = run.network
    returns, advantages, valid = data["returns"], data["advantages"], data["valid"]
    if len(advantages) > 1:  # normalised over the whole rollout (a minibatch may hold one sample)
        advantages = ((advantages - advantages.mean()) / (advantages.std() + 1e-8)).astype(np.float32)
    index = np.flatnonzero(valid) if args.algo == "dmc" else np.arange(len(returns))
    totals = {"policy_loss": 0.0, "value_loss": 0.0, "entropy": 0.0, "approx_kl": 0.0}
    count = 0
    for _ in range(args.epochs if args.algo == "ppo" else 1):
        run.update_rng.shuffle(index)
        for start in range(0, len(index), args.minibatch):
            rows = index[start : start + args.minibatch]
            observation = data["observations"].take(rows).tensor(torch)
            mask = torch.from_numpy(data["masks"][rows])
            action = torch.from_numpy(data["actions"][rows])
            target = torch.from_numpy(returns[rows])
            logits, value = network.forward(observation)
            if args.algo == "dmc":
                q = logits.gather(1, action.unsqueeze(1)).squeeze(1)
                loss = ((q - target) ** 2).mean()
                terms = {"value_loss": float(loss.detach())}
            else:
                legal_logits = masked_logits(torch, logits, mask)
                log_softmax = torch.log_softmax(legal_logits, dim=1)
                log_prob = log_softmax.gather(1, action.unsqueeze(1)).squeeze(1)
                advantage = torch.from_numpy(advantages[rows])
                ratio = (log_prob - torch.from_numpy(data["log_probs"][rows])).exp()
                clipped = ratio.clamp(1 - args.clip, 1 + args.clip)
                policy_loss = -torch.min(ratio * advantage, clipped * advantage).mean()
                value_loss = ((value - target) ** 2).mean()
                # softmax, not log_softmax.exp(): exp of the masked -1e9 entries is ten times slower.
                entropy = -(torch.softmax(legal_logits, dim=1) * log_softmax).sum(dim=1).mean()
                if run.counters["decisions"] < args.value_warmup:
                    # The critic first, on the trunk as it is: a new value head knows nothing, and
                    # training it through the shared trunk would change what the policy reads.
                    head = network.value(network.trunk(observation).detach()).squeeze(-1)
                    loss = ((head - target) ** 2).mean()
                else:
                    loss = policy_loss + args.value_weight * value_loss - args.entropy * entropy
                with torch.no_grad():
                    approx_kl = ((ratio - 1) - (log_prob - torch.from_numpy(data["log_probs"][rows]))).mean()
                terms = {"policy_loss": float(policy_loss.detach()), "value_loss": float(value_loss.detach()),
                         "entropy": float(entropy.detach()), "approx_kl": float(approx_kl)}  # fmt: skip
            run.optimizer.zero_grad()
            loss.backward()
            torch.nn.utils.clip_grad_norm_(network.modules.parameters(), args.max_grad_norm)
            run.optimizer.step()
            for key, value_ in terms.items():
                totals[key] += value_
            count += 1
    return {key: total / max(count, 1) for key, total in totals.items()}


def prepare(run: Run, data: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any] | None]:
    """The rollout with its returns and advantages, ready for :func:`update`; and for DMC the
    samples whose games are still running, carried into the next rollout."""
    returns, advantages, valid = returns_and_advantages(run, data, bootstrap_values(run))
    carry = carried(data, ~valid, run.args.rollout_steps) if run.args.algo == "dmc" else None
    return {**data, "returns": returns, "advantages": advantages, "valid": valid}, carry


def carried(data: dict[str, Any], keep: np.ndarray, steps: int) -> dict[str, Any]:
    """The samples of ``data`` whose games are still running, for the next update (DMC learns from
    finished games only): their steps shifted before the next rollout's first."""
    skipped = ("terminated", "rewards", "observations", "returns", "advantages", "valid")
    out: dict[str, Any] = {key: value[keep] for key, value in data.items() if key not in skipped}
    out["observations"] = data["observations"].take(np.flatnonzero(keep))
    out["steps"] = out["steps"] - steps
    return out


def joined(previous: dict[str, Any] | None, data: dict[str, Any]) -> dict[str, Any]:
    if previous is None or not len(previous["actions"]):
        return data
    out: dict[str, Any] = {key: np.concatenate([previous[key], data[key]]) for key in previous if key != "observations"}
    out["observations"] = SparseRows.concatenate([previous["observations"], data["observations"]])
    out["terminated"], out["rewards"] = data["terminated"], data["rewards"]
    return out


# ----------------------------------------------------------------------------- what a user watches
class Watch:
    """progress.csv, eval.csv, TensorBoard and the console line of a run."""

    def __init__(self, run: Run, resumed: bool) -> None:
        self.run = run
        self.out = run.args.out
        self.writer: Any = None
        if run.args.tensorboard:
            from torch.utils.tensorboard import SummaryWriter

            self.writer = SummaryWriter(str(self.out / "tb"), purge_step=run.counters["decisions"] if resumed else None)
        self.last_line = time.perf_counter()
        self.rate = 0.0  # decisions/s, averaged over the recent updates: the ETA's

    def progress(self, row: dict[str, Any]) -> None:
        append_rows(self.out / "progress.csv", PROGRESS_COLUMNS, [row])
        if self.writer is not None:
            for key in ("policy_loss", "value_loss", "entropy", "approx_kl", "decisions_per_s", "win_share"):
                self.writer.add_scalar(f"train/{key}", row[key], row["decisions"])
            for kind, share in self.run_shares().items():
                self.writer.add_scalar(f"win_share/vs_{kind}", share, row["decisions"])
        self.rate = row["decisions_per_s"] if not self.rate else 0.9 * self.rate + 0.1 * row["decisions_per_s"]
        now = time.perf_counter()
        if now - self.last_line >= self.run.args.log_seconds:
            self.last_line = now
            shares = " ".join(f"{kind} {share:.0%}" for kind, share in self.run_shares().items())
            left = max(self.run.args.decisions - row["decisions"], 0) / max(self.rate, 1.0)
            print(
                f"[{row['decisions']:>12,} decisions, {row['wall_seconds'] / 60:6.1f} min, ETA {left / 60:,.0f} min] "
                f"{row['decisions_per_s']:,.0f} dec/s {row['games_per_s']:,.0f} games/s | win share vs {shares} | "
                f"policy {row['policy_loss']:+.3f} value {row['value_loss']:.3f} entropy {row['entropy']:.2f}",
                flush=True,
            )

    def run_shares(self) -> dict[str, float]:
        return {kind: float(np.mean(values[-2000:])) for kind, values in sorted(self.run.win_stats.items()) if values}

    def evaluation(self, row: dict[str, Any]) -> None:
        append_rows(self.out / "eval.csv", SELFPLAY_EVAL_COLUMNS, [row])
        if self.writer is not None:
            self.writer.add_scalar(f"eval/win_rate_vs_{row['opponent']}", row["win_rate"], row["decisions"])
        print(
            f"[{row['decisions']:>12,} decisions] vs {row['opponent']} on {row['games']} games: "
            f"{row['win_rate']:.1%} [{row['ci_low']:.1%}, {row['ci_high']:.1%}]",
            flush=True,
        )

    def close(self) -> None:
        if self.writer is not None:
            self.writer.close()


def export(run: Run, path: Path) -> Path:
    """The network as a numpy network file (``network:path=...`` plays it without torch)."""
    from experiments.training.networks import to_numpy

    metadata = {
        "players": [run.args.players],
        "trained_by": f"python -m {MODULE}",
        "algo": run.args.algo,
        "decisions": run.counters["decisions"],
        "settings": run.args.to_json(),
    }
    value_kind = "return"
    network = to_numpy(run.network, metadata, value_kind=value_kind)
    temporary = path.with_name(path.stem + ".tmp.npz")
    network.save(temporary)
    os.replace(temporary, path)
    return path


def evaluate(run: Run, policy: Path) -> dict[str, Any]:
    """The exported policy (deterministic) against ``--eval-opponent`` on duplicate deals, the same
    deals at every evaluation (:func:`experiments.training.evaluation.evaluate`)."""
    args = run.args
    learner = AgentSpec("network", (("path", str(policy)),), label="network")
    row = evaluation.evaluate(learner, args.players, args.eval_opponent, args.eval_deals)
    return {"decisions": run.counters["decisions"], "wall_seconds": round(run.counters["wall_seconds"], 1), **row}


def plot_curve(out: Path) -> Path | None:
    """``learning_curve.png``: the evaluations' win rate over the network decisions trained."""
    return plot_learning_curve(
        read_rows(out / "eval.csv"), "decisions", out / "learning_curve.png", f"self-play run {out.name}",
        "network decisions trained",
    )  # fmt: skip


# ----------------------------------------------------------------------------- the main loop
def plan(args: Args, done: int) -> str:
    """What the run will do (the console line of each update adds the ETA)."""
    evaluations = (
        f"every {args.eval_every:,} decisions against {args.eval_opponent} ({args.eval_deals} duplicate deals)"
        if args.eval_every
        else "none"
    )
    return (
        f"plan: {args.algo} to {args.decisions:,} network decisions (from {done:,}), {args.num_games} games of "
        f"{args.players} players at once, opponents {' '.join(args.opponents)}; evaluations {evaluations}"
    )


def start(args: Args, resume: bool) -> Run:
    """A new run in ``args.out``, or the run there continued from its checkpoint."""
    out = args.out
    if resume:
        run = Run(args)
        run.load(out / "checkpoint.pt")
        return run
    if (out / "checkpoint.pt").exists() or (out / "progress.csv").exists():
        raise RunFolderError(f"{out} already holds a run: continue it with --resume {out}, or choose another --out")
    out.mkdir(parents=True, exist_ok=True)
    write_json(out / "args.json", args.to_json())
    run = Run(args)
    run.games.reset()
    for slot in range(args.num_games):
        run.seat_players(slot)
    return run


def train(args: Args, resume: bool = False, stop: StopRequest | None = None, flags: Sequence[str] = ()) -> Run:
    """Train until ``args.decisions`` network decisions (see the module docstring).

    With ``--pipeline`` (the default) the two cores work at once: while the games are played by
    the actor network (the main thread), the learner (a second thread; torch releases the
    interpreter in its kernels) trains the network on the rollout before. At each rollout's end
    the actor takes the learner's weights, so a rollout is played by the network of one update
    before (PPO's ratio corrects for it), and the run stays deterministic: what each side computes
    does not depend on their timing.

    ``stop`` replaces the Ctrl-C handler (a caller that stops the run itself, e.g. after some updates);
    ``flags`` are the options the printed resume command repeats.
    """
    run = start(args, resume)
    print(plan(args, int(run.counters["decisions"])), flush=True)
    watch = Watch(run, resume)
    counters = run.counters
    last_checkpoint = time.perf_counter()
    carry: dict[str, Any] | None = None
    losses: dict[str, float] = {}
    try:
        with ThreadPoolExecutor(max_workers=1) as learner, stop or StopRequest() as stop:
            while counters["decisions"] < args.decisions and not stop.requested:
                began = time.perf_counter()
                games_before, decisions_before = counters["games"], counters["decisions"]
                training = learner.submit(update, run, run.pending) if args.pipeline and run.pending else None
                prepared, carry = prepare(run, joined(carry, collect(run, args.rollout_steps)))
                if args.pipeline:
                    losses = training.result() if training is not None else {}
                    run.pending = prepared
                else:
                    losses = update(run, prepared)
                run.sync_actor()
                elapsed = time.perf_counter() - began
                counters["wall_seconds"] += elapsed
                counters["updates"] += 1
                _after_update(run, watch, losses, elapsed, games_before, decisions_before)
                stop.after_update(run)
                if args.eval_every and counters["decisions"] - counters["last_eval"] >= args.eval_every:
                    watch.evaluation(evaluate(run, export(run, args.out / "policy.npz")))
                    counters["last_eval"] = counters["decisions"]
                if time.perf_counter() - last_checkpoint >= 60 * args.checkpoint_minutes:
                    run.save(args.out / "checkpoint.pt")
                    last_checkpoint = time.perf_counter()
            if not stop.requested and run.pending is not None:  # the end: train on the last rollout too
                update(run, run.pending)
                run.pending = None
                run.sync_actor()
            export(run, args.out / "policy.npz")
            if not stop.requested and args.eval_every and counters["last_eval"] < counters["decisions"]:
                watch.evaluation(evaluate(run, args.out / "policy.npz"))  # the curve ends at the final network
                counters["last_eval"] = counters["decisions"]
            run.save(args.out / "checkpoint.pt")
            if stop.requested:
                print(resume_line(MODULE, args.out, f"at {counters['decisions']:,} decisions", flags), flush=True)
    finally:
        watch.close()
    if args.plot:
        plot_curve(args.out)
    return run


def _after_update(
    run: Run, watch: Watch, losses: dict[str, float], elapsed: float, games_before: float, decisions_before: float
) -> None:
    """The progress row of an update, and a snapshot into the pool when one is due."""
    counters = run.counters
    shares = [share for values in run.win_stats.values() for share in values[-500:]]
    watch.progress({
        "update": counters["updates"], "decisions": counters["decisions"], "games": counters["games"],
        "wall_seconds": round(counters["wall_seconds"], 2),
        "decisions_per_s": (counters["decisions"] - decisions_before) / elapsed,
        "games_per_s": (counters["games"] - games_before) / elapsed,
        "win_share": float(np.mean(shares)) if shares else 0.0,
        "snapshots": len(run.snapshots),
        **{key: losses.get(key, 0.0) for key in ("policy_loss", "value_loss", "entropy", "approx_kl")},
    })  # fmt: skip
    if counters["decisions"] - counters["last_snapshot"] >= run.args.snapshot_every:
        run.snapshot()
        counters["last_snapshot"] = counters["decisions"]


# ----------------------------------------------------------------------------- the command line
def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog=program_name(MODULE),
        description=__doc__.splitlines()[0],
        epilog=invocation_note(MODULE),
        formatter_class=HelpFormatter,
    )
    parser.add_argument(
        "--resume", type=Path, metavar="RUN_DIR", help="continue the run in RUN_DIR from its checkpoint"
    )
    add_config_arguments(parser, Args)
    return parser


def args_from(namespace: argparse.Namespace, parser: argparse.ArgumentParser) -> tuple[Args, bool]:
    """The run's settings: the command line's, or with ``--resume`` the run's own ``args.json``
    (only ``--decisions`` may be given anew, to train on)."""
    given = {f.name: getattr(namespace, f.name) for f in dataclasses.fields(Args)}
    if namespace.resume is None:
        values: dict[str, Any] = {
            key: tuple(value) if isinstance(value, list) else value for key, value in given.items() if value is not None
        }
        return Args(**values), False
    folder: Path = namespace.resume
    settings = folder / "args.json"
    if not (folder / "checkpoint.pt").exists() or not settings.exists():
        parser.error(f"--resume {folder}: no run there (expected {settings} and {folder / 'checkpoint.pt'})")
    recorded = settings_from_json(Args, json.loads(settings.read_text()), settings)
    refuse_new_settings(namespace, parser, "decisions", "out")
    given_decisions = namespace.decisions != parser.get_default("decisions")
    decisions = namespace.decisions if given_decisions else recorded.decisions
    return dataclasses.replace(recorded, out=folder, decisions=decisions), True


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    namespace = parser.parse_args(argv)
    check_run_folder(namespace, parser)
    # A resumed run's --decisions is not in its args.json: the resume command repeats it.
    flags = resume_flags(namespace, parser, ["decisions"] if namespace.resume is not None else [])
    try:
        args, resume = args_from(namespace, parser)
        Mixture.parse(args.opponents)  # an unknown opponent is an error before any work
        run = train(args, resume, flags=flags)
    except (AgentSpecError, CheckpointError, RunFolderError) as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:  # while starting, or a second Ctrl-C
        return stopped_at_once(MODULE, args.out, (args.out / "checkpoint.pt").is_file(), flags)
    print(f"{run.counters['decisions']:,} decisions in {run.counters['wall_seconds'] / 60:.1f} min; "
          f"network: {args.out / 'policy.npz'}", flush=True)  # fmt: skip
    return 0


__all__ = ["Args", "build_parser", "main", "train"]
