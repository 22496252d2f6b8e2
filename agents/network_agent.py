"""A trained network as an agent ("network"): numpy inference, the action mask at every decision.

``make_agent("network")`` plays the strongest shipped network for the game's player count
(:data:`SHIPPED_NETWORKS`, chosen when the game starts, since the player count is known only
then, or from the observations when it acts for a batch); ``network:path=FILE`` plays another
network file (:mod:`agents.network`). A file trained on another observation/action layout is
refused when the agent is built. The agent reads only its seat's observation vector and mask,
and illegal actions get probability zero, so it can only ever choose a legal action.
"""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path
from typing import Final

import numpy as np

from agents.heuristics import ValueAgent
from agents.network import NumpyNetwork, file_version
from biblios_env.agent_interface import AgentObservation
from biblios_env.engine.setup import PLAYER_COUNTS
from biblios_env.observations import SLICES

POLICY_DIR: Final = Path(__file__).resolve().parent / "policies"
#: The shipped network played at each player count (``docs/policies.md`` says how each was
#: trained and measured): the strongest file for that count. ``network.npz`` (one network for
#: 2, 3 and 4 players, trained on all three counts at once through the padded observation) is
#: where they started: ``network_2p.npz`` is it trained on by 2-player self-play,
#: ``network_3p.npz`` that trained on by 3-player self-play, and ``network_4p.npz`` that by
#: 4-player self-play; each beats ``network.npz`` at its count.
SHIPPED_NETWORKS: Final = {
    2: POLICY_DIR / "network_2p.npz",
    3: POLICY_DIR / "network_3p.npz",
    4: POLICY_DIR / "network_4p.npz",
}


@lru_cache(maxsize=32)
def _cached(path: str, modified: int, size: int) -> NumpyNetwork:
    return NumpyNetwork.load(path)


def load_network(path: str | Path) -> NumpyNetwork:
    """The network file at ``path``, read once per process and file version (building many
    agents from one file, as tournaments do, costs nothing)."""
    hint = "train one with python -m experiments.train_network"
    return _cached(*file_version(path, (".npz",), "a network file ends in .npz", "network file", hint))


def shipped_network(num_players: int) -> NumpyNetwork:
    """The shipped network for ``num_players`` (:data:`SHIPPED_NETWORKS`)."""
    shipped = SHIPPED_NETWORKS.get(num_players)
    if shipped is None or not shipped.is_file():
        raise ValueError(f"no shipped network for {num_players} players (expected {shipped})")
    return load_network(shipped)


def player_count(observations: np.ndarray) -> int:
    """The player count of a batch of observation vectors (their ``num_players`` one-hot), which
    every row must share."""
    counts = np.unique(np.argmax(np.asarray(observations)[:, SLICES["num_players"]], axis=1))
    if len(counts) != 1:
        found = sorted(PLAYER_COUNTS[int(index)] for index in counts)
        raise ValueError(f"a batch of observations must come from games of one player count, got {found}")
    return PLAYER_COUNTS[int(counts[0])]


class NetworkAgent:
    """Plays a network file through the agent interface.

    Args:
        path: a network file; ``None`` (default) plays the shipped network for the player count.
        deterministic: the most likely legal action (default, for evaluation) or a sample from
            the masked policy (diverse opponents for training), seeded by :meth:`start_game`.
        label: the agent's name in results (default ``"network"``).
    """

    def __init__(self, path: str | Path | None = None, deterministic: bool = True, label: str = "network") -> None:
        if not isinstance(deterministic, bool):
            raise ValueError(f"deterministic must be true or false, got {deterministic!r}")
        self.path = None if path is None else Path(path)
        self.network: NumpyNetwork | None = None if path is None else load_network(path)
        self.shipped = path is None  # pick the shipped network when the player count is known
        self.heuristic = ValueAgent()  # proposes a move to networks that read one (agents.network.INPUTS)
        self.deterministic = deterministic
        self.name = str(label)
        self.rng = np.random.default_rng(0)

    @classmethod
    def from_network(cls, network: NumpyNetwork, deterministic: bool = True, label: str = "network") -> NetworkAgent:
        """An agent playing an in-memory network (no file)."""
        agent = cls.__new__(cls)
        agent.path, agent.network, agent.deterministic, agent.shipped = None, network, bool(deterministic), False
        agent.name, agent.rng, agent.heuristic = str(label), np.random.default_rng(0), ValueAgent()
        return agent

    def __repr__(self) -> str:
        return f"NetworkAgent(path={str(self.path) if self.path else None!r}, deterministic={self.deterministic})"

    def start_game(self, seat: int, num_players: int, seed: int | None = None) -> None:
        self.rng = np.random.default_rng(seed)
        self.heuristic.start_game(seat, num_players, seed)
        if self.shipped:
            self.network = shipped_network(num_players)
        players = self.network.metadata.get("players") if self.network is not None else None
        if players is not None and num_players not in players:
            raise ValueError(f"network {self.path} was trained for {players} players, not {num_players}")

    def can_act_batch(self, num_players: int) -> bool:
        """Whether :meth:`act_batch` serves ``num_players``-player games: its network reads the
        observation alone (one that reads the value heuristic's proposal needs each game's view)."""
        return self.batch_network(num_players) is not None

    def batch_network(self, num_players: int) -> NumpyNetwork | None:
        """The network :meth:`act_batch` plays ``num_players``-player games with, if it can (see
        :meth:`can_act_batch`): a trainer can play the same weights through its own, faster copy."""
        network = shipped_network(num_players) if self.shipped else self.network
        return network if network is not None and network.inputs == "observation" else None

    def act_batch(self, observations: np.ndarray, action_masks: np.ndarray) -> np.ndarray:
        """Many decisions at once, one forward (a :class:`~biblios_env.agent_interface.BatchAgent`,
        which the batched games call for every game where this agent is to act). Playing the
        shipped networks, the observations' player count picks the file (a batch agent may never
        be started). A network that reads the value heuristic's proposal needs each game's view:
        it plays per game (:meth:`act`)."""
        network = self.network
        if self.shipped or network is None:
            network = shipped_network(player_count(observations))
        if network.inputs != "observation":
            raise ValueError(
                f"network {self.path} reads {network.inputs!r}, which needs each game's view: it cannot act for a batch"
            )
        return network.choose_batch(observations, action_masks, self.deterministic, self.rng)

    def act(self, observation: AgentObservation) -> int:
        network = self.network
        if network is None:
            raise RuntimeError("NetworkAgent.act before start_game: the player count picks the shipped network")
        proposal = self.heuristic.act(observation) if network.inputs == "observation+value" else None
        vector = network.input_vector(observation.vector, proposal)
        return network.choose(vector, observation.action_mask, self.deterministic, self.rng)


__all__ = ["SHIPPED_NETWORKS", "NetworkAgent", "load_network"]
