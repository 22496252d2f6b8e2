"""How a search finds out what a move is worth, given to it from outside as OpenSpiel's MCTS is
given its evaluator: the agent that proposes the move to beat, and the **rollouts** that play a
determinization on after a move.

A search agent takes both as choices by player count (``proposer`` and ``rollouts``, each a
function of the game's player count, called at ``start_game``); :func:`default_proposer` and
:func:`default_rollouts` build the ones its options ask for (the ``ismcts`` spec's ``proposer``
and ``rollout``). Anything with the :class:`Rollouts` methods plugs in: a learned value function
scoring at a horizon, another policy, a batched simulator.

Three rollouts ship:

* :class:`PolicyRollouts`: the search's rollout policy plays every seat (to the end, or to the
  horizon, where the policy scores the position);
* :class:`NetworkRollouts`: a network plays the searching seat and the rollout policy the others,
  the rollouts of a search stepped together so that one forward serves them all
  (:mod:`agents.search.network_rollouts`);
* :class:`RandomRollouts`: uniform over the searched moves.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from typing import Any

from mypy_extensions import mypyc_attr

from agents.network import NumpyNetwork
from agents.network_agent import NetworkAgent, shipped_network
from agents.rollout_policy import play_on
from agents.search.network_rollouts import network_rollouts
from agents.search.options import NETWORK_PROPOSES, NETWORK_ROLLOUTS, Rollout, SearchOptions
from biblios_env.agent_interface import Agent
from biblios_env.engine.state import State


@mypyc_attr(allow_interpreted_subclasses=True)
class Rollouts:
    """Plays a search's determinizations on after a move; returns the decisions applied.

    ``search`` is the search agent asking (its ``policy``, ``horizon``, ``seat``, ``rng`` and
    ``random_move`` are what the shipped rollouts use). :meth:`playouts` plays a block of states,
    each with the policy stream of its seed (the moves of one determinization share a seed:
    common random numbers); by default one :meth:`playout` at a time.
    """

    def __init__(self, batched: bool = False, uses_policy: bool = True, network: NumpyNetwork | None = None) -> None:
        #: Whether the flat search hands over blocks of determinizations (one network forward then
        #: serves the whole block) rather than one at a time.
        self.batched = batched
        #: Whether the rollout policy chooses the moves (the tree search then tries its move first).
        self.uses_policy = uses_policy
        #: The network that plays the searching seat, if any.
        self.network = network

    def playout(self, search: Any, state: State) -> int:
        """Play ``state`` (a game not over) on; the decisions applied."""
        raise NotImplementedError

    def playouts(self, search: Any, states: list[State], policy_seeds: list[int]) -> int:
        steps = 0
        for state, seed in zip(states, policy_seeds):
            search.policy.rng = random.Random(seed)
            steps += int(search.playout(state))  # which skips a state whose game is over
        return steps


@mypyc_attr(allow_interpreted_subclasses=True)
class PolicyRollouts(Rollouts):
    """The search's rollout policy plays every seat, to the end or to the search's horizon."""

    def playout(self, search: Any, state: State) -> int:
        return int(search.policy.rollout(state, search.horizon))


@mypyc_attr(allow_interpreted_subclasses=True)
class RandomRollouts(Rollouts):
    """Every seat plays a searched move drawn uniformly (the search's ``random_move``)."""

    def __init__(self) -> None:
        super().__init__(uses_policy=False)

    def playout(self, search: Any, state: State) -> int:
        return play_on(state, search.horizon, search.random_move)


@mypyc_attr(allow_interpreted_subclasses=True)
class NetworkRollouts(Rollouts):
    """``network`` plays the searching seat to the end of every rollout, the search's rollout
    policy the other seats (:func:`~agents.search.network_rollouts.network_rollouts`)."""

    def __init__(self, network: NumpyNetwork) -> None:
        super().__init__(batched=True, network=network)

    def playout(self, search: Any, state: State) -> int:
        return self.playouts(search, [state], [search.rng.getrandbits(63)])

    def playouts(self, search: Any, states: list[State], policy_seeds: list[int]) -> int:
        network = self.network
        assert network is not None
        return network_rollouts(states, policy_seeds, search.seat, network, search.policy)


def default_rollouts(options: SearchOptions) -> Callable[[int], Rollouts]:
    """The rollouts ``options.rollout`` asks for, by player count: ``network`` the shipped network
    of the game's count; ``auto`` that at the counts of :data:`NETWORK_ROLLOUTS` without a
    horizon, the policy elsewhere."""
    rollout = options.rollout
    if rollout is Rollout.RANDOM:
        return lambda num_players: RandomRollouts()
    if rollout is Rollout.NETWORK:
        return lambda num_players: NetworkRollouts(shipped_network(num_players))
    if rollout is Rollout.AUTO and options.horizon is None:
        return lambda num_players: (
            NetworkRollouts(shipped_network(num_players)) if num_players in NETWORK_ROLLOUTS else PolicyRollouts()
        )
    return lambda num_players: PolicyRollouts()


def default_proposer(options: SearchOptions) -> Callable[[int], Agent | None]:
    """The agent ``options.proposer`` asks for, by player count (``None``: the search's heuristic):
    the shipped network of the game's count for ``network``, and for ``auto`` at the counts of
    :data:`NETWORK_PROPOSES`. One network agent serves every game of the search."""
    if options.proposer == "value":
        return lambda num_players: None
    network = NetworkAgent()
    if options.proposer == "network":
        return lambda num_players: network
    return lambda num_players: network if num_players in NETWORK_PROPOSES else None


__all__ = [
    "NetworkRollouts",
    "PolicyRollouts",
    "RandomRollouts",
    "Rollouts",
    "default_proposer",
    "default_rollouts",
]
