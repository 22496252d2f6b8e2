"""What both search agents share (:class:`SearchAgent`): the proposer's default move, the
determinizations, the searched moves and their action abstraction, the rollouts, the rewards and
the budget. A search plays its proposer's move everywhere and may overrule it only at the searched
decisions, after simulating each candidate move on determinizations of the hidden cards. How it
all works, and how to give a search your own rollouts: docs/search.md.
"""

from __future__ import annotations

import math
import random
import time
from collections.abc import Callable
from typing import Any, ClassVar, Final

import numpy as np
from mypy_extensions import mypyc_attr

from agents.belief import Belief, PlainBelief, make_belief
from agents.heuristics import HeuristicAgent, ValueAgent
from agents.rollout_policy import RolloutPolicy
from agents.search.evaluators import PolicyRollouts, Rollouts, default_proposer, default_rollouts
from agents.search.options import SPEC_DEFAULTS, SearchOptions
from biblios_env.actions import BID_BASE, MAX_BID, PASS, PAY_BASE, REFUSE
from biblios_env.agent_interface import Agent, AgentObservation
from biblios_env.engine import rules
from biblios_env.engine.auctions import capacity
from biblios_env.engine.flow import DECISION_BID, DECISION_NONE, DECISION_PAY
from biblios_env.engine.sampling import sample_state
from biblios_env.engine.state import State
from biblios_env.engine.views import PlayerView

#: The abstract "pay with the payment policy's card" move.
PAY_MOVE: Final = -1
#: Determinizations a belief deals at once when the search has no iteration cap.
BELIEF_BATCH: Final = 32
#: Seconds a time-limited search runs between handing the interpreter lock to other threads.
RELEASE_SECONDS: Final = 0.005


@mypyc_attr(allow_interpreted_subclasses=True)
class SearchAgent:
    """A heuristic, corrected at the searched decisions by a search (module doc); each search
    agent defines :meth:`search`.

    Args:
        options: how it searches (``None``: the defaults).
        seed: seeds the agent's generator when ``start_game`` gets no seed.
        heuristic: plays every decision that is not searched and proposes the move the search
            must beat at one that is (``None``: ``ValueAgent()``), unless ``options.proposer``
            has the shipped network do that at the game's player count (``auto``, the default,
            does at 2, 3 and 4 players: give ``proposer="value"`` to have this heuristic propose);
            it also sets the searcher's own bid limit in the ``value`` opponent model.
        policy: plays every seat in the simulations (``rollout=policy``; every other seat with
            network rollouts, a copy per rollout), picks the cards of a
            searched payment and scores a position at the ``horizon`` (``None``: a
            :class:`RolloutPolicy` with ``options.policy``, so giving both is a ValueError).
        proposer: the agent that proposes, by the game's player count, in the heuristic's stead
            (``None`` for a count: the heuristic; ``None`` here: what ``options.proposer`` asks
            for, :func:`~agents.search.evaluators.default_proposer`).
        rollouts: how a determinization is played on after a move, by the game's player count
            (``None``: what ``options.rollout`` asks for,
            :func:`~agents.search.evaluators.default_rollouts`); any
            :class:`~agents.search.evaluators.Rollouts` plugs in.

    The agent owns their random streams: ``start_game`` starts the heuristic's game and hands
    both the agent's generator; the flat search reseeds the policy for each determinization.
    """

    name = "ismcts"
    defaults: ClassVar[dict[str, Any]] = SPEC_DEFAULTS

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
        self.options = options = SearchOptions() if options is None else options
        if policy is not None and options.policy:
            raise ValueError("options.policy configures the default rollout policy: give it or a policy, not both")
        # The options the searches read, as attributes: in the compiled build these are C fields,
        # where reading the options object is a Python attribute lookup.
        self.iterations = options.iterations
        self.time_limit = options.time_limit
        self.next_release = 0.0  # when a time-limited search next lets other threads run
        self.searched = frozenset(int(decision) for decision in options.searched)
        self.bid_raises = options.bid_raises
        self.margin_weight = options.margin_weight
        #: How the search plays a determinization on after a move, by the game's player count
        #: (:mod:`agents.search.evaluators`; ``None``: what ``options.rollout`` asks for).
        self.choose_rollouts = default_rollouts(options) if rollouts is None else rollouts
        #: This game's rollouts (chosen by ``start_game``).
        self.rollouts: Rollouts = PolicyRollouts()
        self.horizon = options.horizon
        self.temperature = options.temperature
        self.search_refuse = options.search_refuse
        self.seed = seed
        self.seat = 0
        self.num_players = 2
        self.rng = random.Random(seed)
        self.policy = RolloutPolicy(rng=self.rng, **(options.policy or {})) if policy is None else policy
        self.heuristic: HeuristicAgent = ValueAgent() if heuristic is None else heuristic
        #: The agent that plays the unsearched decisions and proposes the move to beat, by the
        #: game's player count (``None`` there: the heuristic; ``None`` here: what
        #: ``options.proposer`` asks for).
        self.choose_proposer = default_proposer(options) if proposer is None else proposer
        #: This game's proposer (chosen by ``start_game``).
        self.proposer: Agent = self.heuristic
        #: The determinization sampler (a seam: the leakage tests plant a leaky one here).
        self.sampler: Callable[[PlayerView, random.Random], State] = sample_state
        #: The belief that deals the determinizations (``None``: the sampler, one per iteration).
        self.belief: Belief | None = None if options.belief == PlainBelief.name else make_belief(options.belief)
        #: The determinizations the belief dealt for the decision being searched, next one last,
        #: and their importance weights.
        self.dealt: list[State] = []
        self.dealt_weights: list[float] = []
        self.belief_weights = options.belief_weights
        #: The last search: iterations, simulated decisions and seconds (empty if none ran).
        self.last_search: dict[str, float] = {}

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.options!r}, seed={self.seed!r})"

    # ------------------------------------------------------------------ Agent protocol
    def start_game(self, seat: int, num_players: int, seed: int | None = None) -> None:
        self.seat = seat
        self.num_players = num_players
        self.rng = random.Random(self.seed if seed is None else seed)
        self.policy.rng = self.rng
        self.heuristic.start_game(seat, num_players)
        self.heuristic.rng = self.rng
        proposer = self.choose_proposer(num_players)
        self.proposer = self.heuristic
        if proposer is not None:  # its own game, seeded alike (the shipped network has no stream)
            proposer.start_game(seat, num_players, seed)
            self.proposer = proposer
        self.rollouts = self.choose_rollouts(num_players)
        self.last_search = {}
        if self.belief is not None:
            self.belief.start_game(seat, num_players)

    def observe(self, view: PlayerView) -> None:
        """The table after any seat's action: the belief, if any, follows it."""
        if self.belief is not None:
            self.belief.observe(view)

    def act(self, observation: AgentObservation) -> int:
        """The heuristic's move, unless this decision is searched and the search overrules it. The
        belief, if any, sees every view first (searched or not, forced or not)."""
        legal = observation.legal_actions
        self.last_search = {}
        self.dealt = []
        self.dealt_weights = []
        if self.belief is not None:
            self.belief.observe(observation.view)
        if len(legal) == 1:
            return legal[0]
        default = self.proposer.act(observation)
        if observation.view.decision not in self.searched:
            return default
        moves = self.moves(self.sampler(observation.view, self.rng))
        if len(moves) == 1 or all(key != default for key, _ in moves):
            return default
        action = self.search(observation, moves, default)
        return action if action in legal else default

    def search(self, observation: AgentObservation, moves: list[tuple[int, int]], default: int) -> int:
        """The action to play at a searched decision with a choice: ``moves`` are the searched
        moves on a first determinization, ``default`` the heuristic's move (one of their keys)."""
        raise NotImplementedError

    def determinization(self, view: PlayerView) -> State:
        """The next determinization of the search at ``view``: a fresh sample of the sampler, or
        the next of the states the belief dealt for this decision, resampled by their weights (a
        new batch when they run out: ``iterations`` states, or :data:`BELIEF_BATCH` without an
        iteration cap)."""
        return self._deal(view, False)[0]

    def weighted_determinization(self, view: PlayerView) -> tuple[State, float]:
        """The next determinization and its importance weight: with ``belief_weights`` the belief's
        states come as drawn, each with its weight (no state repeats); otherwise as
        :meth:`determinization`, with weight 1."""
        return self._deal(view, self.belief_weights)

    def _deal(self, view: PlayerView, weighted: bool) -> tuple[State, float]:
        belief = self.belief
        if belief is None:
            return self.sampler(view, self.rng), 1.0
        if not self.dealt:
            generator = np.random.default_rng(self.rng.getrandbits(63))
            count = self.iterations or BELIEF_BATCH
            if weighted:
                states, weights = belief.weighted_states(view, generator, count)
            else:
                states, weights = belief.sample_states(view, generator, count), [1.0] * count
            # Resampling keeps the candidates' order with repeats side by side: shuffle, so a search
            # stopped early (time, a decisive lead) still gets a fair share of the batch.
            order = generator.permutation(len(states))
            self.dealt = [states[index] for index in order]
            self.dealt_weights = [weights[index] for index in order]
        # Resampled states repeat: each copy gets its own generator for the chance events to come.
        return self.dealt.pop().clone(rng=np.random.default_rng(self.rng.getrandbits(63))), self.dealt_weights.pop()

    # ------------------------------------------------------------------ the budget
    def deadline(self, start: float) -> float | None:
        """When a search started at ``start`` (``time.perf_counter``) must stop; ``None``: never."""
        return None if self.time_limit is None else start + self.time_limit

    def budget_left(self, done: int, deadline: float | None) -> bool:
        """Another search iteration fits: under the iteration cap and before the deadline (the
        first iteration always runs, so every search returns a move).

        A time-limited search also lets other threads run every :data:`RELEASE_SECONDS`. Compiled
        code never checks the interpreter's switch interval, so it would otherwise hold the lock
        for its whole time limit; in the play server, where searches think in threads beside the
        requests, every answer would wait for them (two 1 s searches: 85 ms stalls of a 1 ms
        ticker thread, 16 ms with this). ``time.sleep(0)`` releases the lock for about 80 µs,
        long enough for a waiting thread to take it (``os.sched_yield``'s microsecond is not: two
        searches then pass the lock between themselves for seconds); once per 5 ms that is under
        2 % of the search's iterations. A search capped by iterations alone, as in tournaments and
        benchmarks, never pays it."""
        budget = self.iterations
        if deadline is None:
            return budget is None or done < budget
        now = time.perf_counter()
        if now >= self.next_release:
            time.sleep(0)
            self.next_release = now + RELEASE_SECONDS
        return (budget is None or done < budget) and (not done or now < deadline)

    def record_search(self, iterations: int, simulated: int, start: float) -> None:
        """Note the search that started at ``start`` in :attr:`last_search`."""
        self.last_search = {
            "iterations": iterations,
            "simulated_decisions": simulated,
            "seconds": time.perf_counter() - start,
        }

    # ------------------------------------------------------------------ simulations
    def moves(self, state: State) -> list[tuple[int, int]]:
        """The searched moves at the current decision as ``(key, action)`` (module doc)."""
        decision = state.decision
        if decision == DECISION_BID:
            high = state.high_bid
            cap = min(MAX_BID, capacity(state, state.current_player))
            moves = [(PASS, PASS)]
            for raise_ in self.bid_raises:
                amount = high + raise_
                if amount > cap:
                    break
                moves.append((BID_BASE + amount, BID_BASE + amount))
            return moves
        if decision == DECISION_PAY:
            card = self.policy.payment_card(state)
            if card < 0:
                return [(REFUSE, REFUSE)]
            if state.payment or state.strict_bids or not self.search_refuse:
                return [(PAY_MOVE, PAY_BASE + card)]
            return [(PAY_MOVE, PAY_BASE + card), (REFUSE, REFUSE)]
        return [(action, action) for action in rules.legal_actions(state)]

    def playout(self, state: State) -> int:
        """Roll the state out (to the end, or to the horizon); returns the decisions applied."""
        if state.decision == DECISION_NONE:
            return 0
        return self.rollouts.playout(self, state)

    def playouts(self, states: list[State], policy_seeds: list[int]) -> int:
        """Roll every state out, each with the policy stream of its seed (common random numbers:
        the moves of one determinization share a seed); returns the decisions applied. Network
        rollouts are stepped together (:func:`~agents.search.network_rollouts.network_rollouts`).
        The policy's stream is left on the last seed: the caller restores it."""
        return self.rollouts.playouts(self, states, policy_seeds)

    def random_move(self, state: State) -> int:
        """The action of a searched move drawn uniformly (``rollout=random``)."""
        moves = self.moves(state)
        return moves[int(self.rng.random() * len(moves))][1]

    def rewards(self, state: State) -> list[float]:
        """Per seat: the win share plus ``margin_weight * tanh(VP margin over the best other / 5)``
        at the end of the game; the policy's evaluation at a rollout horizon."""
        if state.decision != DECISION_NONE:
            return self.policy.evaluate(state, self.temperature)
        winners = state.winners
        vp = state.vp
        share = 1.0 / len(winners)
        weight = self.margin_weight
        rewards = []
        for seat, points in enumerate(vp):
            reward = share if seat in winners else 0.0
            if weight:
                best_other = max(p for other, p in enumerate(vp) if other != seat)
                reward += weight * math.tanh((points - best_other) / 5.0)
            rewards.append(reward)
        return rewards


__all__ = ["PAY_MOVE", "SearchAgent"]
