"""Prototype: plan the stopping price of the current auction against modelled opponents."""

from __future__ import annotations

import math
import random
import time
from typing import Any

import numpy as np

from agents.heuristics import ValueAgent
from agents.rollout_policy import RolloutPolicy
from biblios_env.actions import BID_BASE, MAX_BID, PASS
from biblios_env.agent_interface import AgentObservation
from biblios_env.cards import CARD_VALUE, IS_GOLD
from biblios_env.engine import rules
from biblios_env.engine.sampling import sample_state
from biblios_env.engine.state import Decision, State
from biblios_env.engine.views import player_view


def capacity(state: State, seat: int) -> int:
    hand = state.hands[seat]
    if IS_GOLD[state.auction_card]:
        return len(hand)
    return sum(CARD_VALUE[card] for card in hand if IS_GOLD[card])


class BidSearchAgent:
    name = "bidsearch"

    def __init__(
        self,
        determinizations: int = 30,
        max_tries: int = 3,
        margin_weight: float = 0.25,
        gate: float = 0.0,
        time_limit: float | None = None,
        consistent: bool = True,
        seed: int | None = None,
        policy: dict[str, Any] | None = None,
        mode: str = "plan",
    ) -> None:
        self.mode = mode
        self.determinizations = determinizations
        self.max_tries = max_tries
        self.margin_weight = margin_weight
        self.gate = gate
        self.time_limit = time_limit
        self.consistent = consistent
        self.seed = seed
        self.rng = random.Random(seed)
        self.heuristic = ValueAgent()
        self.model = ValueAgent()
        self.policy = RolloutPolicy(rng=self.rng, **(policy or {}))
        self.last_search: dict[str, float] = {}
        self.seat = 0

    def start_game(self, seat: int, num_players: int, seed: int | None = None) -> None:
        self.seat = seat
        self.rng = random.Random(self.seed if seed is None else seed)
        self.heuristic.start_game(seat, num_players)
        self.heuristic.rng = self.rng
        self.model.start_game(seat, num_players, 0)
        self.policy.rng = self.rng

    def act(self, observation: AgentObservation) -> int:
        legal = observation.legal_actions
        if len(legal) == 1:
            return legal[0]
        view = observation.view
        if view.decision != Decision.BID:
            return self.heuristic.act(observation)
        if self.mode == "step":
            return self.step_bid(observation)
        return self.plan_bid(observation)

    def step_bid(self, observation: AgentObservation) -> int:
        """PASS vs raise-by-one now; then both sides bid to their modelled value limits in this
        auction (mine: the heuristic's limit from my real view), the policy after it; gated."""
        view = observation.view
        legal = observation.legal_actions
        heuristic_action = self.heuristic.act(observation)
        high = view.high_bid
        my_limit = self.heuristic.bid_limit(view, self.heuristic.assess(view))
        raise_action = BID_BASE + high + 1
        if raise_action not in legal:
            return heuristic_action
        base_state = sample_state(view, self.rng)
        if capacity(base_state, self.seat) < high + 1:
            return heuristic_action
        start = time.perf_counter()
        rewards = {PASS: [], raise_action: []}
        rounds = 0
        while rounds < self.determinizations:
            sample = self.consistent_sample(view)
            if sample is None:
                break
            state, limits = sample
            rounds += 1
            chance_seed = self.rng.getrandbits(63)
            policy_seed = self.rng.getrandbits(63)
            for action in (PASS, raise_action):
                trial = state.clone(rng=np.random.default_rng(chance_seed))
                rules.apply(trial, action)
                self.resolve_auction(trial, limits, max(my_limit, high + 1) if action != PASS else high)
                self.policy.rng = random.Random(policy_seed)
                self.policy.rollout(trial)
                rewards[action].append(self.reward(trial))
        self.policy.rng = self.rng
        self.last_search = {"iterations": rounds, "seconds": time.perf_counter() - start}
        other = PASS if heuristic_action != PASS else raise_action
        if rounds < 2:
            return heuristic_action
        diffs = [a - b for a, b in zip(rewards[other], rewards[heuristic_action], strict=True)]
        mean = sum(diffs) / rounds
        sd = math.sqrt(sum((d - mean) ** 2 for d in diffs) / (rounds - 1) / rounds)
        return other if mean > self.gate * sd else heuristic_action

    # ------------------------------------------------------------------ the model
    def opponent_limit(self, state: State, seat: int) -> int:
        view = player_view(state, seat)
        return self.model.bid_limit(view, self.model.assess(view))

    def consistent_sample(self, view) -> tuple[State, dict[int, int]] | None:
        """A determinization whose modelled opponents' limits agree with this auction's bids so far."""
        me = view.seat
        n = view.num_players
        high = view.high_bid
        bidder = -1 if view.high_bidder < 0 else (me + view.high_bidder) % n
        passed = [view.passed[(s - me) % n] for s in range(n)]
        excluded = [view.excluded[(s - me) % n] for s in range(n)]
        best = None
        for _ in range(self.max_tries):
            state = sample_state(view, self.rng)
            limits = {}
            violations = 0
            for seat in range(n):
                if seat == me or excluded[seat]:
                    continue
                limit = self.opponent_limit(state, seat)
                limits[seat] = limit
                if seat == bidder and limit < high:
                    violations += 1
                elif passed[seat] and limit > high:
                    violations += 1
            if not violations or not self.consistent:
                return state, limits
            if best is None or violations < best[2]:
                best = (state, limits, violations)
        return None if best is None else (best[0], best[1])

    # ------------------------------------------------------------------ the plan
    def resolve_auction(self, state: State, limits: dict[int, int], my_limit: int) -> tuple[int, int]:
        """Step the auction with every bidder raising by one up to its limit; returns (winner, price)."""
        me = self.seat
        card = state.auction_card
        pile = len(state.auction_pile)
        while state.decision == Decision.BID and state.auction_card == card and len(state.auction_pile) == pile:
            seat = state.current_player
            limit = my_limit if seat == me else limits.get(seat, 0)
            wanted = state.high_bid + 1
            action = BID_BASE + wanted if wanted <= min(limit, MAX_BID) else PASS
            rules.apply(state, action)
        if state.decision == Decision.PAY and state.auction_card == card:
            return state.current_player, state.high_bid
        return -1, 0

    def reward(self, state: State) -> float:
        me = self.seat
        winners = state.winners
        value = 1.0 / len(winners) if me in winners else 0.0
        best_other = max(p for seat, p in enumerate(state.vp) if seat != me)
        return value + self.margin_weight * math.tanh((state.vp[me] - best_other) / 5.0)

    def plan_bid(self, observation: AgentObservation) -> int:
        view = observation.view
        legal = observation.legal_actions
        start = time.perf_counter()
        high = view.high_bid
        heuristic_action = self.heuristic.act(observation)
        # Candidate stopping prices: pass now (high), or keep raising by one up to each price.
        base = sample_state(view, self.rng)
        cap = min(capacity(base, self.seat), MAX_BID)
        candidates = list(range(high, cap + 1))
        if len(candidates) <= 1:
            return PASS
        totals = [0.0] * len(candidates)
        squares: list[list[float]] = [[] for _ in candidates]
        rounds = 0
        simulated = 0
        deadline = None if self.time_limit is None else start + self.time_limit
        while rounds < self.determinizations and (deadline is None or not rounds or time.perf_counter() < deadline):
            sample = self.consistent_sample(view)
            if sample is None:
                break
            state, limits = sample
            rounds += 1
            chance_seed = self.rng.getrandbits(63)
            policy_seed = self.rng.getrandbits(63)
            outcomes: dict[tuple[int, int], float] = {}
            for index, my_limit in enumerate(candidates):
                trial = state.clone(rng=np.random.default_rng(chance_seed))
                outcome = self.resolve_auction(trial, limits, my_limit)
                value = outcomes.get(outcome)
                if value is None:
                    self.policy.rng = random.Random(policy_seed)
                    simulated += self.policy.rollout(trial)
                    value = outcomes[outcome] = self.reward(trial)
                totals[index] += value
                squares[index].append(value)
        self.policy.rng = self.rng
        best = max(range(len(candidates)), key=lambda i: totals[i])
        heuristic_limit = high if heuristic_action == PASS else high + 1
        # gate: compare the best plan with "stop where the heuristic's limit is" approximated by its move
        chosen = candidates[best]
        if self.gate > 0 and rounds > 1:
            ref = next(i for i, c in enumerate(candidates) if (c > high) == (heuristic_action != PASS))
            if (chosen > high) != (heuristic_action != PASS):
                diffs = [a - b for a, b in zip(squares[best], squares[ref], strict=True)]
                mean = sum(diffs) / rounds
                sd = math.sqrt(sum((d - mean) ** 2 for d in diffs) / (rounds - 1) / rounds)
                if mean <= self.gate * sd:
                    chosen = heuristic_limit
        self.last_search = {"iterations": rounds, "simulated_decisions": simulated,
                            "seconds": time.perf_counter() - start}
        action = BID_BASE + high + 1 if chosen > high else PASS
        return action if action in legal else heuristic_action
