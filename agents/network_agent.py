"""A trained network as an agent ("network"): numpy inference, the action mask at every decision.

``make_agent("network")`` plays the strongest shipped network for the game's player count
(:data:`SHIPPED_NETWORKS`, chosen when the game starts, since the player count is known only
then); ``network:path=FILE`` plays another network file (:mod:`agents.network`). A file trained
on another observation/action layout is refused when the agent is built. The agent reads only
its seat's observation vector and mask, and illegal actions get probability zero, so it can
only ever choose a legal action.
"""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path
from typing import Final

import numpy as np

from agents.heuristics import ValueAgent
from agents.network import NumpyNetwork, file_version
from biblios_env.agent_interface import AgentObservation

POLICY_DIR: Final = Path(__file__).resolve().parent / "policies"
#: The shipped network played at each player count (``policies/README.md`` says how it was trained).
#: One network serves 2, 3 and 4 players through the padded observation: trained on all three
#: counts at once, it shares what the counts have in common (card values, bidding, payments).
SHIPPED_NETWORKS: Final = {players: POLICY_DIR / "network.npz" for players in (2, 3, 4)}


@lru_cache(maxsize=32)
def _cached(path: str, modified: int, size: int) -> NumpyNetwork:
    return NumpyNetwork.load(path)


def load_network(path: str | Path) -> NumpyNetwork:
    """The network file at ``path``, read once per process and file version (building many
    agents from one file, as tournaments do, costs nothing)."""
    hint = "train one with python -m experiments.train_network"
    return _cached(*file_version(path, (".npz",), "a network file ends in .npz", "network file", hint))


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
            shipped = SHIPPED_NETWORKS.get(num_players)
            if shipped is None or not shipped.is_file():
                raise ValueError(f"no shipped network for {num_players} players (expected {shipped})")
            self.network = load_network(shipped)
        players = self.network.metadata.get("players") if self.network is not None else None
        if players is not None and num_players not in players:
            raise ValueError(f"network {self.path} was trained for {players} players, not {num_players}")

    def act_batch(self, observations: np.ndarray, action_masks: np.ndarray) -> np.ndarray:
        """Many decisions at once, one forward (a :class:`~biblios_env.agent_interface.BatchAgent`,
        which the batched games call for every game where this agent is to act). The shipped
        network serves every player count. A network that reads the value heuristic's proposal
        needs each game's view: it plays per game (:meth:`act`)."""
        network = self.network if self.network is not None else load_network(SHIPPED_NETWORKS[2])
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
