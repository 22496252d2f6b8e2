"""The baseline: an agent that plays uniformly at random among the legal actions."""

from __future__ import annotations

from biblios_env.agent_interface import UniformRandomAgent


class RandomAgent(UniformRandomAgent):
    """Uniform over ``observation.legal_actions``, with its own generator seeded by
    :meth:`start_game` (the same seed gives the same choices). It bids and refuses at random
    too, so it often wins auctions it cannot pay for and takes the penalty (RULES §5). The
    drawing is :class:`~biblios_env.agent_interface.UniformRandomAgent`'s, shared with the
    Gymnasium wrapper's default opponent."""

    name = "random"

    def __repr__(self) -> str:
        return "RandomAgent()"


__all__ = ["RandomAgent"]
