"""Rollouts in which the network plays the searching seat (``rollout=network``).

The search asks, of each candidate move, how the game goes on *after* it. Played on by the rollout
policy for every seat, the answer is how the game goes if the searcher then played like the
``value`` heuristic. But a search that corrects the shipped network plays on as the network, whose
future bids and placements are not the heuristic's: a card is worth what the seat that owns it
will make of it. So here the network plays the searching seat to the end of every rollout, as it
will in the game, and the rollout policy plays the others (the model of the opponents is
unchanged).

One network forward per decision would cost more than the rest of the rollout; the rollouts of a
search are stepped together instead: each runs with its own rollout policy until the searcher is
to act (or the game ends), then one forward serves every rollout waiting on the searcher, as the
batched games do for training. The network plays deterministically (its most likely legal action,
as the ``network`` agent does). numpy's BLAS runs that forward on one thread: the forwards are
small, and more threads only contend with the other workers of a tournament.
"""

from __future__ import annotations

import random

import numpy as np
from threadpoolctl import ThreadpoolController

from agents.network import NumpyNetwork
from agents.rollout_policy import RolloutPolicy
from biblios_env.engine import rules
from biblios_env.engine.flow import DECISION_NONE
from biblios_env.engine.state import State
from biblios_env.observations import encode_state

#: Finds the BLAS libraries numpy loaded once, so limiting their threads per search costs nothing.
_THREADS = ThreadpoolController()


def network_rollouts(
    states: list[State], policy_seeds: list[int], seat: int, network: NumpyNetwork, policy: RolloutPolicy
) -> int:
    """Play every state of ``states`` to the end: ``network`` plays ``seat``, and a copy of
    ``policy`` (:meth:`RolloutPolicy.spawn`, seeded by the state's entry of ``policy_seeds``) each
    other seat; returns the decisions applied.

    Each state gets its own copy, since the policy caches what it computed for the position it is
    following. The states are stepped together so that one network forward serves all that wait
    on ``seat`` (module doc)."""
    if network.inputs != "observation":
        raise ValueError(f"network rollouts need a network that reads the observation alone, not {network.inputs!r}")
    policies = []
    for state, seed in zip(states, policy_seeds, strict=True):
        copy = policy.spawn(random.Random(seed))
        copy.begin(state)
        policies.append(copy)
    steps = 0
    playing = list(range(len(states)))
    with _THREADS.limit(limits=1, user_api="blas"):
        while playing:
            waiting = []
            for index in playing:
                state = states[index]
                steps += policies[index].play_until(state, seat)
                if state.decision != DECISION_NONE:
                    waiting.append(index)
            if not waiting:
                break
            logits = network.logits(np.stack([encode_state(states[index], seat) for index in waiting]))
            for row, index in enumerate(waiting):
                state = states[index]
                legal = rules.legal_actions(state)
                choice = legal[0] if len(legal) == 1 else legal[int(np.argmax(logits[row, legal]))]
                rules.apply(state, choice)
                steps += 1
            playing = waiting
    return steps


__all__ = ["network_rollouts"]
