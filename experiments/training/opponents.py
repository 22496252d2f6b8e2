"""Opponent mixtures, the one syntax of every trainer's ``--opponents``, and the pools that play
them: who plays the seats beside the learner's, and how those seats decide.

``--opponents`` is a mixture of ``SPEC@WEIGHT`` items (:class:`Mixture`): ``self`` (the learning
network, whose decisions are training samples), ``snapshot`` (a frozen past version of it, drawn
uniformly from the newest ``--pool-size``), ``exploiter`` (the league's best response to the
network, :mod:`~experiments.training.league`), ``random`` or any agent spec.

Two pools play a mixture, one for each kind of game. :class:`BatchedOpponentPool` seats the
batched games of the self-play trainer, the exploiter and the league: when a game is dealt, the
network takes a random anchor seat and every other seat is drawn from the mixture; the pool then
answers for those seats, batching what can be batched (the snapshots, the random agent, an agent
that acts for a batch: a network reading the observation alone is played through a torch copy
like the snapshots), one agent per game and seat, started with its own seed, for the rest; it is
checkpointed with the run. :func:`factory_pool` turns a mixture into the Gymnasium env's pool of
agent factories (single games and the SB3 adapter: MaskablePPO's opponents, the snapshots being
its saved files)."""

from __future__ import annotations

import copy
import functools
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

import numpy as np

from agents.ppo_agent import PPOAgent
from biblios_env.agent_interface import (
    NO_OBSERVATIONS,
    Agent,
    AgentObservation,
    BatchAgent,
    UniformBatchAgent,
    reads_observations,
)
from biblios_env.engine.game import Game
from biblios_env.engine.views import player_view
from biblios_env.gym_env import OpponentPool
from biblios_env.vector import VectorGame
from experiments.common.errors import CheckpointError
from experiments.common.match import AgentSpecError, build_agent, parse_agent_spec
from experiments.training.networks import from_numpy, torch_copy_problem
from experiments.training.tensors import SparseRows, StackedNetworks, draw_legal, masked_logits

#: ``--opponents`` names that are not agent specs: the learning network itself, and its snapshots.
SELF, SNAPSHOT, EXPLOITER, RANDOM = "self", "snapshot", "exploiter", "random"
#: The names a trainer may give a meaning besides agent specs (each trainer says which it knows).
TRAINER_NAMES: Final = (SELF, SNAPSHOT, EXPLOITER)
#: The owner of a seat: the learning network, a snapshot (``SNAPSHOT_BASE + k``), the batched
#: random agent, or a per-game agent of the pool (``AGENT_BASE + its index in --opponents``).
LEARNER: Final = 0
UNIFORM: Final = 1
EXPLOITER_OWNER: Final = 2
AGENT_BASE: Final = 100
SNAPSHOT_BASE: Final = 1000


@dataclass(frozen=True)
class Mixture:
    """The ``--opponents`` items: names and weights (probabilities once normalised)."""

    names: tuple[str, ...]
    weights: np.ndarray

    @staticmethod
    def parse(items: Sequence[str], special: Sequence[str] = (SELF, SNAPSHOT, EXPLOITER, RANDOM)) -> Mixture:
        """The mixture of ``SPEC@WEIGHT`` items, the one syntax of every trainer's ``--opponents``:
        an agent spec, or one of the names ``special`` that the trainer gives a meaning (``self``:
        the learning network; ``snapshot``: its frozen past versions). An item that does not
        parse, a name the trainer does not know, an agent spec that does not build or plays
        another agent here (:func:`unplayable`), or no positive weight is an
        :class:`AgentSpecError` naming it."""
        if isinstance(items, str):
            raise AgentSpecError(f"--opponents takes SPEC@WEIGHT items, one per argument, not one text {items!r}")
        names, weights = [], []
        for item in items:
            spec, at, weight = item.rpartition("@")
            try:
                value = float(weight)
            except ValueError:
                value = -1.0
            if not at or not spec or not value >= 0:
                hint = f" (write {_spec_weight_items(item)})" if "@" not in item and "=" in item else ""
                raise AgentSpecError(f"bad --opponents item {item!r}: expected SPEC@WEIGHT with a weight >= 0{hint}")
            if spec in TRAINER_NAMES and spec not in special:
                known = ", ".join(repr(name) for name in special if name in TRAINER_NAMES) or "none"
                raise AgentSpecError(
                    f"--opponents item {item!r}: {spec!r} is not an opponent of this trainer (its names besides "
                    f"agent specs: {known})"
                )
            if spec not in TRAINER_NAMES:
                try:
                    agent = build_agent(parse_agent_spec(spec))
                except (AgentSpecError, ValueError) as error:
                    raise AgentSpecError(f"--opponents item {item!r}: {error}") from None
                if (problem := unplayable(agent)) is not None:
                    raise AgentSpecError(f"--opponents item {item!r}: {problem}")
            names.append(spec)
            weights.append(value)
        total = sum(weights)
        if total <= 0:
            raise AgentSpecError(f"--opponents {' '.join(items)} has no positive weight")
        return Mixture(tuple(names), np.asarray(weights) / total)


def _spec_weight_items(text: str) -> str:
    """``value=0.6,self=0.4`` (the ``NAME=WEIGHT`` lists of earlier versions) as SPEC@WEIGHT items."""
    return " ".join(
        f"{name.strip()}@{weight.strip()}" for name, _, weight in (part.partition("=") for part in text.split(","))
    )


class BatchedOpponentPool:
    """The seats of ``games``: which owner plays each (``owners``, ``anchor``), the per-game agents
    with their seeds, and the frozen snapshots of the network (``template`` is copied for each).
    ``seed`` seeds the seating draws and the random agent, so a run is reproducible."""

    def __init__(
        self, mixture: Mixture, games: VectorGame, template: Any, pool_size: int, seed: int, torch: Any
    ) -> None:
        self.mixture = mixture
        self.games = games
        self.template = template
        self.pool_size = pool_size
        self.torch = torch
        self.rng = np.random.default_rng([seed, 7])
        self.uniform = UniformBatchAgent(seed + 1)
        #: The agent specs that act for a batch, by their index in the mixture (one agent each).
        self.batched: dict[int, BatchAgent] = {}
        for index, name in enumerate(mixture.names):
            agent = batch_agent(name, games.num_players, seed + 2 + index)
            if agent is not None:
                self.batched[index] = agent
        #: The batched agents played through a sparse torch copy of their network (the snapshots'
        #: way, a fraction of the numpy network's dense product), with whether they take the most
        #: likely action; by their index in the mixture.
        self.copies: dict[int, tuple[Any, bool]] = {}
        for index, agent in self.batched.items():
            if (network := torch_copy(agent, games.num_players)) is not None:
                self.copies[index] = (network, bool(getattr(agent, "deterministic", False)))
        self.snapshots: list[dict[str, Any]] = []  # state dicts, the newest last
        self.snapshot_networks: list[Any] = []
        self.stacked: StackedNetworks | None = None  # the snapshots for one forward, built on first use
        #: The league's exploiter (a best response to the network, trained beside it), once there is one.
        self.exploiter: Any | None = None
        self.exploiter_state: dict[str, Any] | None = None
        size, players = games.num_games, games.num_players
        self.owners = np.zeros((size, players), np.int64)
        self.anchor = np.zeros(size, np.int64)
        self.agents: list[dict[int, Agent]] = [{} for _ in range(size)]
        self.agent_seeds: list[dict[int, int]] = [{} for _ in range(size)]

    # ------------------------------------------------------------- seats
    def seat_players(self, slot: int) -> None:
        """Who plays each seat of the game just dealt in ``slot``: the network at a random anchor
        seat, each other seat drawn from the mixture."""
        n = self.games.num_players
        anchor = int(self.rng.integers(n))
        owners = np.zeros(n, np.int64)
        self.agents[slot], self.agent_seeds[slot] = {}, {}
        for seat in range(n):
            if seat == anchor:
                continue
            name = self.mixture.names[int(self.rng.choice(len(self.mixture.names), p=self.mixture.weights))]
            owners[seat] = self._owner(name)
            if AGENT_BASE <= owners[seat] < SNAPSHOT_BASE and owners[seat] - AGENT_BASE not in self.batched:
                seed = int(self.rng.integers(2**63))
                agent = build_agent(parse_agent_spec(name))
                agent.start_game(seat, n, seed=seed)
                self.agents[slot][seat], self.agent_seeds[slot][seat] = agent, seed
        self.anchor[slot] = anchor
        self.owners[slot] = owners

    def _owner(self, name: str) -> int:
        if name == SELF or (name == SNAPSHOT and not self.snapshots) or (name == EXPLOITER and self.exploiter is None):
            return LEARNER
        if name == SNAPSHOT:
            return SNAPSHOT_BASE + int(self.rng.integers(len(self.snapshots)))
        if name == RANDOM:
            return UNIFORM
        if name == EXPLOITER:
            return EXPLOITER_OWNER
        return AGENT_BASE + self.mixture.names.index(name)

    def owner_name(self, owner: int) -> str:
        """The ``--opponents`` name of an owner (every snapshot is ``snapshot``)."""
        if owner == LEARNER:
            return SELF
        if owner == UNIFORM:
            return RANDOM
        if owner == EXPLOITER_OWNER:
            return EXPLOITER
        if owner >= SNAPSHOT_BASE:
            return SNAPSHOT
        return self.mixture.names[owner - AGENT_BASE]

    # ------------------------------------------------------------- acting
    def actions(self, rows: np.ndarray, owners: np.ndarray, actions: np.ndarray) -> None:
        """Fill ``actions`` for the games ``rows`` whose acting seat an opponent (``owners``) plays:
        one call per owner, the snapshots and the random agent for all their games at once."""
        batch = self.games.batch
        snapshots = owners >= SNAPSHOT_BASE
        if snapshots.any():  # every snapshot's games in one forward
            actions[rows[snapshots]] = self._snapshot_actions(rows[snapshots], owners[snapshots] - SNAPSHOT_BASE)
        for owner in np.unique(owners[~snapshots]).tolist():
            chosen = rows[owners == owner]
            if owner == UNIFORM:
                actions[chosen] = self.uniform.act_batch(NO_OBSERVATIONS, batch.action_mask[chosen])
            elif owner - AGENT_BASE in self.copies:
                network, deterministic = self.copies[owner - AGENT_BASE]
                actions[chosen] = self._forward(network, chosen, deterministic)
            elif owner - AGENT_BASE in self.batched:
                agent = self.batched[owner - AGENT_BASE]
                observations = batch.observation[chosen] if reads_observations(agent) else NO_OBSERVATIONS
                actions[chosen] = agent.act_batch(observations, batch.action_mask[chosen])
            elif owner == EXPLOITER_OWNER:
                actions[chosen] = self._forward(self.exploiter, chosen, False)
            else:
                for slot in chosen.tolist():
                    game = self.games.game(slot)
                    seat = game.current_player
                    view = AgentObservation(player_view(game.state, seat), list(game.legal_actions()))
                    actions[slot] = self.agents[slot][seat].act(view)

    def _forward(self, network: Any, rows: np.ndarray, deterministic: bool) -> np.ndarray:
        """The actions of the torch ``network`` in the games ``rows``: the most likely legal one,
        or one sampled from its masked policy."""
        torch = self.torch
        with torch.no_grad():
            sparse = SparseRows.of(torch, self.games.observation_counts()[rows])
            logits, _ = network.forward(sparse.tensor(torch))
            masks = self.games.batch.action_mask[rows]
            if deterministic:
                return np.asarray(masked_logits(torch, logits, torch.from_numpy(masks)).argmax(dim=1).numpy())
            return draw_legal(torch, logits, masks)

    def _snapshot_actions(self, rows: np.ndarray, which: np.ndarray) -> np.ndarray:
        """The actions of the snapshots ``which`` in the games ``rows``, sampled from their masked
        policies, all in one forward (:class:`~experiments.training.tensors.StackedNetworks`)."""
        torch = self.torch
        if len(set(which.tolist())) == 1:  # one snapshot: its own forward is cheaper than the stack's
            return self._forward(self.snapshot_networks[int(which[0])], rows, False)
        if self.stacked is None:
            self.stacked = StackedNetworks(torch, self.snapshot_networks)
        sparse = SparseRows.of(torch, self.games.observation_counts()[rows])
        logits = self.stacked.logits(sparse.tensor(torch), which)
        return draw_legal(torch, logits, self.games.batch.action_mask[rows])

    # ------------------------------------------------------------- snapshots
    def snapshot(self, network: Any) -> None:
        """Freeze ``network`` into the pool (the oldest leaves when it is full)."""
        self.add_snapshot({key: value.clone() for key, value in network.modules.state_dict().items()})
        if len(self.snapshots) > self.pool_size:
            self.snapshots.pop(0)
            self.snapshot_networks.pop(0)
            self.stacked = None

    def add_snapshot(self, state: dict[str, Any]) -> None:
        """A snapshot from its weights (a new one, or one a checkpoint kept), the newest."""
        network = copy.deepcopy(self.template)
        network.modules.load_state_dict(state)
        self.snapshots.append(state)
        self.snapshot_networks.append(network)
        self.stacked = None

    def set_exploiter(self, state: dict[str, Any] | None) -> None:
        """The exploiter's weights (``None``: none yet); it plays the seats ``exploiter`` draws from
        then on, sampling from its policy as the snapshots do."""
        self.exploiter_state = state
        self.exploiter = None
        if state is not None:
            self.exploiter = copy.deepcopy(self.template)
            self.exploiter.modules.load_state_dict(state)

    # ------------------------------------------------------------- checkpoints
    def state(self) -> dict[str, Any]:
        """What a checkpoint keeps of the pool (the per-game agents as their seeds)."""
        return {
            "snapshots": self.snapshots,
            "exploiter": self.exploiter_state,
            "rng": self.rng.bit_generator.state,
            "uniform_rng": self.uniform.rng.bit_generator.state,
            "batched_rngs": {str(index): _rng_state(agent) for index, agent in self.batched.items()},
            "owners": self.owners.tolist(),
            "anchor": self.anchor.tolist(),
            "agent_seeds": [{str(seat): seed for seat, seed in seeds.items()} for seeds in self.agent_seeds],
        }

    def restore(self, state: dict[str, Any]) -> None:
        """The pool as :meth:`state` kept it; call once the games are restored (each per-game
        agent replays its game so far)."""
        self.snapshots, self.snapshot_networks = [], []
        for snapshot in state["snapshots"]:
            self.add_snapshot(snapshot)
        self.set_exploiter(state.get("exploiter"))
        self.rng.bit_generator.state = state["rng"]
        self.uniform.rng.bit_generator.state = state["uniform_rng"]
        for index, rng_state in state.get("batched_rngs", {}).items():
            if rng_state is not None:
                self.batched[int(index)].rng.bit_generator.state = rng_state  # type: ignore[attr-defined]
        self.owners[:] = np.asarray(state["owners"])
        self.anchor[:] = np.asarray(state["anchor"])
        for slot, seeds in enumerate(state["agent_seeds"]):
            batched = [seat for seat in seeds if int(self.owners[slot, int(seat)]) - AGENT_BASE in self.batched]
            if batched:
                raise CheckpointError(
                    f"the checkpoint has game-by-game agents in seats this version plays batched (game slot {slot}, "
                    f"seats {', '.join(batched)}): continue it with the version that wrote it"
                )
            self.agent_seeds[slot] = {int(seat): int(seed) for seat, seed in seeds.items()}
            self.agents[slot] = {
                seat: self._replayed_agent(slot, seat, seed) for seat, seed in self.agent_seeds[slot].items()
            }

    def _replayed_agent(self, slot: int, seat: int, seed: int) -> Agent:
        """A per-game opponent brought to where it stood: started with its seed and shown each of
        its decisions of the game so far (its own randomness advances as it did)."""
        name = self.mixture.names[int(self.owners[slot, seat]) - AGENT_BASE]
        agent = build_agent(parse_agent_spec(name))
        agent.start_game(seat, self.games.num_players, seed=seed)
        current = self.games.game(slot)
        game = Game.from_config(current.config, seed=current.seed, auto_forced=False)
        for action in current.history:
            legal = game.legal_actions()
            if len(legal) > 1 and game.current_player == seat:
                chosen = agent.act(AgentObservation(player_view(game.state, seat), list(legal)))
                if chosen != action:
                    raise CheckpointError(
                        f"replaying opponent {name!r} (seat {seat}, game slot {slot}, seed {current.seed}): it "
                        f"chose {chosen} where the game went on with {action}; an opponent must play the same "
                        "moves from the same seed"
                    )
            game.apply(action)
        return agent


# ------------------------------------------------------------- single games
#: The names of a mixture for single games besides agent specs: the learner itself is no opponent
#: there (its environments may step in other processes), its saved snapshots are.
FACTORY_POOL_NAMES: Final = (SNAPSHOT,)


def spec_factory(spec: str) -> Agent:
    """A fresh agent of ``spec`` (module level, so a pool holding it pickles for SubprocVecEnv)."""
    return build_agent(parse_agent_spec(spec))


def snapshot_factory(path: str, label: str) -> Agent:
    """A saved MaskablePPO snapshot of the learner that samples from its masked policy (the file
    is loaded once per process)."""
    return PPOAgent(path, deterministic=False, label=label)


def factory_pool(mixture: Mixture, snapshots: Sequence[Path]) -> OpponentPool:
    """The mixture as the Gymnasium env's pool of agent factories (one opponent per episode and
    seat; MaskablePPO's opponents): each agent spec at its weight, the ``snapshot`` weight shared
    by the saved ``snapshots``; before the first snapshot, uniform random play if the mixture
    names nothing else."""
    pool = OpponentPool()
    for name, weight in zip(mixture.names, mixture.weights.tolist(), strict=True):
        if weight <= 0:
            continue
        if name != SNAPSHOT:
            pool.add(functools.partial(spec_factory, name), weight)
        for path in snapshots if name == SNAPSHOT else ():
            pool.add(functools.partial(snapshot_factory, str(path), f"snapshot:{path.stem}"), weight / len(snapshots))
    if len(pool) == 0:
        pool.add(functools.partial(spec_factory, RANDOM), 1.0)
    return pool


def unplayable(agent: Agent) -> str | None:
    """Why the pool cannot play ``agent`` as the agent it is, if it cannot: the batched games show
    no agent the other seats' moves, so an agent with a belief built from them (a search with
    ``belief=bids``) would play another agent than the one named."""
    if getattr(agent, "belief", None) is not None:
        return (
            "the agent follows the other seats' moves (a belief), which the batched games do not show it: "
            "choose it without one"
        )
    return None


def batch_agent(spec: str, num_players: int, seed: int) -> BatchAgent | None:
    """The one agent that plays every seat of ``spec`` in ``num_players``-player games, if it can
    act for a batch (:meth:`~agents.network_agent.NetworkAgent.can_act_batch`), started with
    ``seed`` (a sampling network's draws); ``None`` for an agent that plays game by game, or for
    the names that are not agent specs."""
    if spec in (*TRAINER_NAMES, RANDOM):
        return None
    agent = build_agent(parse_agent_spec(spec))
    can_act_batch = getattr(agent, "can_act_batch", None)
    if can_act_batch is None or not can_act_batch(num_players):
        return None
    agent.start_game(0, num_players, seed=seed)
    return agent  # type: ignore[return-value]


def torch_copy(agent: BatchAgent, num_players: int) -> Any | None:
    """A sparse torch copy of the network a batched agent plays ``num_players``-player games with
    (:meth:`~agents.network_agent.NetworkAgent.batch_network`), if it has one of the trainer's
    shape; ``None`` leaves the agent to its own :meth:`act_batch`."""
    batch_network = getattr(agent, "batch_network", None)
    network = None if batch_network is None else batch_network(num_players)
    if network is None or torch_copy_problem(network) is not None:
        return None
    return from_numpy(network, sparse_input=True)


def _rng_state(agent: BatchAgent) -> dict[str, Any] | None:
    """The state of a batched agent's generator (what a checkpoint keeps of it), if it has one."""
    rng = getattr(agent, "rng", None)
    return None if rng is None else dict(rng.bit_generator.state)


__all__ = [
    "EXPLOITER",
    "FACTORY_POOL_NAMES",
    "LEARNER",
    "RANDOM",
    "SELF",
    "SNAPSHOT",
    "BatchedOpponentPool",
    "Mixture",
    "batch_agent",
    "factory_pool",
    "snapshot_factory",
    "spec_factory",
    "torch_copy",
    "unplayable",
]
