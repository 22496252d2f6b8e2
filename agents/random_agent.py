"""The baseline: an agent that plays uniformly at random among the legal actions."""

from __future__ import annotations

import random

from biblios_env.agent_interface import AgentObservation


class RandomAgent:
    """Uniform over ``observation.legal_actions``, with its own generator seeded by
    :meth:`start_game` (the same seed gives the same choices). It bids and refuses at random
    too, so it often wins auctions it cannot pay for and takes the penalty (RULES §5)."""

    name = "random"

    def __init__(self) -> None:
        self.rng = random.Random(0)

    def __repr__(self) -> str:
        return "RandomAgent()"

    def start_game(self, seat: int, num_players: int, seed: int | None = None) -> None:
        self.rng = random.Random(seed)

    def act(self, observation: AgentObservation) -> int:
        legal = observation.legal_actions
        return legal[self.rng.randrange(len(legal))]


__all__ = ["RandomAgent"]
