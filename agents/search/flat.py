"""The default search of the ``ismcts`` agent: flat Monte Carlo over the candidate moves,
gated by the ``value`` heuristic (:class:`FlatSearch`).

**Default algorithm** (``searched`` bids, 60 determinizations): the proposer (the shipped
network at 2, 3 and 4 players, the value heuristic with ``proposer=value``) plays every move,
and determinized Monte Carlo search over the agent's information set overrules it at the bids,
where most of the game is won or lost:

1. **determinize**: sample a full game state consistent with the searching seat's view
   (:mod:`agents.search.common`);
2. **play every candidate move** (PASS, raise by one) on that same determinization with the
   same chance and rollout-policy random streams (common random numbers), and **roll out** to
   the end of the game with the rollout policy (at 2 players, where the network proposes, the
   network plays the searcher's own seat in the rollouts: :mod:`agents.search.network_rollouts`;
   the determinizations of a block of :data:`NETWORK_BLOCK` are rolled out together then);
3. **score** each rollout for the searcher: a win share (1 for a sole winner, 1/k for a k-way
   shared win, else 0) plus ``margin_weight * tanh(VP margin / 5)``;
4. **gate**: play the move with the best mean instead of the heuristic's only if its paired
   advantage (per determinization, over the heuristic's move) exceeds ``gate`` standard errors.

Why this shape: the rollouts are only as good as their model of how both seats play on, and
an imitation of the heuristic agrees with it on about four bids in five and on two
placements in three. Searching placements on that model (or letting a tree explore
non-policy opponent moves) made the agent lose to the heuristic; deviating at bids only on
clear, paired evidence lets the search exploit the heuristic's fixed bid limits (push the
price, stop early) while falling back to the heuristic when the estimates are noise.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from typing import Final

import numpy as np
from mypy_extensions import mypyc_attr

from agents.heuristics import HeuristicAgent, ValueAgent
from agents.rollout_policy import RolloutPolicy
from agents.search.common import SearchAgent
from agents.search.evaluators import Rollouts
from agents.search.options import OpponentModel, SearchOptions
from biblios_env.actions import BID_BASE, MAX_BID, PASS
from biblios_env.agent_interface import Agent, AgentObservation
from biblios_env.engine import rules
from biblios_env.engine.flow import DECISION_BID
from biblios_env.engine.state import NO_SEAT, State
from biblios_env.engine.views import PlayerView, player_view

#: Determinizations whose rollouts a flat search with network rollouts steps together: a third of
#: the default budget, so the deadline and the early stop (checked every 10 rounds from
#: ``min_iterations``) are still checked twice within it.
NETWORK_BLOCK: Final = 20


def _best_against(rewards: list[list[float]], weights: list[float], base_index: int) -> tuple[int, float]:
    """The move with the best weighted mean reward and its paired advantage over move
    ``base_index`` in standard errors (0 when it is that move, or with too little evidence).

    ``weights`` are the determinizations' importance weights (all 1 without a weighting belief).
    The standard error is the self-normalised importance sampling one, ``sum w^2 (d - mean)^2 /
    (sum w)^2``, corrected for the effective number of determinizations ``n = (sum w)^2 / sum w^2``
    by ``n / (n - 1)``; under two states of evidence there is no verdict. A few heavy states are
    little evidence however many light ones there are. With equal weights this is the plain paired
    t statistic."""
    rounds = len(rewards[base_index])
    best = max(range(len(rewards)), key=lambda index: sum(w * r for w, r in zip(weights, rewards[index])))
    total = sum(weights)
    squares = sum(w * w for w in weights)
    effective = total * total / squares if squares > 0 else 0.0
    if best == base_index or rounds < 2 or effective < 2.0:
        return base_index, 0.0
    diffs = [a - b for a, b in zip(rewards[best], rewards[base_index], strict=True)]
    mean = sum(w * d for w, d in zip(weights, diffs)) / total
    scatter = sum(w * w * (d - mean) ** 2 for w, d in zip(weights, diffs))
    spread = math.sqrt(scatter / (effective - 1) / total * (effective / total))
    if spread == 0.0:
        return best, math.inf if mean > 0 else 0.0
    return best, mean / spread


@mypyc_attr(allow_interpreted_subclasses=True)
class FlatSearch(SearchAgent):
    """The value heuristic, corrected by information-set Monte Carlo search (module doc).

    Args:
        options: how it searches (``None``: the defaults); it reads ``gate``,
            ``opponent_model``, ``consistency_tries``, ``decisive`` and ``min_iterations``
            besides the options of every search.
        seed: seeds the agent's generator when ``start_game`` gets no seed.
        heuristic, policy: the heuristic and the rollout policy (:class:`SearchAgent`; ``None``:
            the defaults).
    """

    def __init__(
        self,
        options: SearchOptions | None = None,
        seed: int | None = None,
        *,
        heuristic: HeuristicAgent | None = None,
        policy: RolloutPolicy | None = None,
        proposer: Callable[[int], Agent | None] | None = None,
        rollouts: Callable[[int], Rollouts] | None = None,
    ) -> None:
        super().__init__(options, seed, heuristic=heuristic, policy=policy, proposer=proposer, rollouts=rollouts)
        options = self.options
        self.gate = options.gate
        self.value_model = options.opponent_model is OpponentModel.VALUE
        self.consistency_tries = options.consistency_tries
        self.decisive = options.decisive
        self.min_iterations = options.min_iterations
        #: The ``value`` heuristic that sets the other bidders' limits (``opponent_model=value``).
        self.model = ValueAgent()

    def search(self, observation: AgentObservation, moves: list[tuple[int, int]], default: int) -> int:
        """Determinized flat Monte Carlo with common random numbers, gated by the heuristic.

        Every candidate move is played out on the same determinizations with the same chance
        and policy streams, so the paired differences between two moves carry no deal luck.
        The best mean move replaces the heuristic's move ``default`` only if its paired
        advantage exceeds ``gate`` standard errors: the rollouts' opponent model is imperfect,
        so small advantages are as likely its bias as a real mistake of the heuristic.
        """
        view = observation.view
        rng = self.rng
        me = view.seat
        rewards: list[list[float]] = [[] for _ in moves]
        weights: list[float] = []
        start = time.perf_counter()
        deadline = self.deadline(start)
        rounds = 0
        simulated = 0
        modelled = self.value_model and view.decision == DECISION_BID
        my_limit = self.heuristic.bid_limit(view, self.heuristic.assess(view)) if modelled else 0
        base_index = next(index for index, (key, _) in enumerate(moves) if key == default)
        while self.budget_left(rounds, deadline) and not self._decided(rewards, weights, base_index, rounds):
            states: list[State] = []
            policy_seeds: list[int] = []
            for _ in range(self.block(rounds)):
                rounds += 1
                if modelled:
                    base, weight, limits = self.bidding_sample(view)
                    limits[me] = my_limit
                else:
                    (base, weight), limits = self.weighted_determinization(view), []
                weights.append(weight)
                chance_seed = rng.getrandbits(63)
                policy_seed = rng.getrandbits(63)
                for _key, action in moves:
                    state = base.clone(rng=np.random.default_rng(chance_seed))
                    rules.apply(state, action)
                    if modelled:
                        simulated += finish_bidding(state, limits, view.auction_card, view.auction_pile_size)
                    simulated += 1
                    states.append(state)
                    policy_seeds.append(policy_seed)
            simulated += self.playouts(states, policy_seeds)
            for position, state in enumerate(states):
                rewards[position % len(moves)].append(self.rewards(state)[me])
        self.policy.rng = rng
        self.record_search(rounds, simulated, start)
        best, z = _best_against(rewards, weights, base_index)
        return moves[best][1] if z > self.gate else moves[base_index][1]

    def block(self, rounds: int) -> int:
        """Determinizations to play out together after ``rounds``: one at a time with rollouts by
        the policy; with network rollouts :data:`NETWORK_BLOCK` (or what is left of the iteration
        cap), so that each network forward serves many rollouts."""
        if not self.rollouts.batched:
            return 1
        left = NETWORK_BLOCK if self.iterations is None else self.iterations - rounds
        return max(1, min(NETWORK_BLOCK, left))

    def _decided(self, rewards: list[list[float]], weights: list[float], base_index: int, rounds: int) -> bool:
        """Sequential stopping: from ``min_iterations`` on (checked every 10 rounds), stop once
        the best move's paired advantage over the heuristic's is ``decisive`` standard errors
        beyond the gate either way, so clear decisions leave time for close ones."""
        if not self.decisive or rounds < self.min_iterations or rounds % 10:
            return False
        _, z = _best_against(rewards, weights, base_index)
        return z >= self.gate + self.decisive or z <= self.gate - self.decisive

    # ------------------------------------------------------------------ the opponent model
    def bidding_sample(self, view: PlayerView) -> tuple[State, float, list[int]]:
        """A determinization, its weight and every bidder's limit on the card under auction, as the ``value``
        heuristic would set it from that seat's view of the sample; among a few samples the first
        whose limits agree with the bidding so far (the high bidder's limit covers its bid, a seat
        that passed would not pay more than the high bid), else the one that disagrees least.
        A belief's states need no such check: it already weighs them by that agreement, with every
        bid of the auction (not only the last), so its next state is taken as it comes."""
        n, me = view.num_players, view.seat
        high_bidder = NO_SEAT if view.high_bidder == NO_SEAT else (me + view.high_bidder) % n
        passed = [view.passed[(seat - me) % n] for seat in range(n)]
        best: tuple[int, State, float, list[int]] | None = None
        tries = self.consistency_tries if self.belief is None else 1
        for _ in range(tries):
            state, weight = self.weighted_determinization(view)
            limits = [0] * n
            disagreements = 0
            for seat in range(n):
                if seat == me or state.excluded[seat]:
                    continue
                seat_view = player_view(state, seat)
                limits[seat] = self.model.bid_limit(seat_view, self.model.assess(seat_view))
                too_low = seat == high_bidder and limits[seat] < view.high_bid
                disagreements += too_low or (passed[seat] and limits[seat] > view.high_bid)
            if best is None or disagreements < best[0]:
                best = (disagreements, state, weight, limits)
            if not disagreements:
                break
        assert best is not None  # consistency_tries >= 1
        return best[1], best[2], best[3]


def finish_bidding(state: State, limits: list[int], card: int, pile_size: int) -> int:
    """Play the bidding on ``card`` on to its end, every bidder raising by one while the price
    stays within its limit (the value heuristic's ascending-auction rule); returns the bids and
    passes applied. The payment and what follows are left to the rollout."""
    applied = 0
    while state.decision == DECISION_BID and state.auction_card == card and len(state.auction_pile) == pile_size:
        wanted = state.high_bid + 1
        limit = min(limits[state.current_player], MAX_BID)
        rules.apply(state, BID_BASE + wanted if wanted <= limit else PASS)
        applied += 1
    return applied


__all__ = ["FlatSearch", "finish_bidding"]
