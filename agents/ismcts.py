"""Information-set Monte Carlo search guided by the ``value`` heuristic: the ``"ismcts"`` agent.

**Default algorithm** (``mode="flat"``, ``searched="bid"``, 60 determinizations): the value
heuristic (:class:`agents.heuristics.ValueAgent`, run on the agent's own observation) proposes
every move, and determinized Monte Carlo search over the agent's information set overrules it
at the bids, where most of the game is won or lost:

1. **determinize**: sample a full game state consistent with the searching seat's view
   (:func:`biblios_env.engine.sampling.sample_state`: exact card counting; opponents' hidden
   cards, the removed cards and the piles dealt at random; a fresh generator for the chance
   events still to come, such as the auction shuffle and penalty picks);
2. **play every candidate move** (PASS, raise by one) on that same determinization with the
   same chance and rollout-policy random streams (common random numbers), and **roll out** to
   the end of the game with :class:`RolloutPolicy`, a fast full-information imitation of the
   value heuristic stepping the raw rules functions;
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

``mode="tree"`` is single-observer IS-MCTS (Cowling, Powley & Whitehouse 2012, "Information
Set Monte Carlo Tree Search", IEEE TCIAIG 4(2)) for the searched decisions: each iteration
determinizes, **selects** down one tree shared by all determinizations with UCB1 (counting a
move's *availability*, how often it was legal when its node was visited, instead of the
node's visits, because moves that depend on hidden cards are not always there), **expands**
one new move (at the root any untried move, deeper the rollout policy's move first), rolls
out (``rollout="random"``: uniform over the searched moves instead; ``horizon``: stop after
that many gift turns / auctions and score with :meth:`RolloutPolicy.evaluate`) and **backs
up** the rewards above for the player who made each move. A node is reached by the moves
made so far and what the searcher observes after each (the decision and player to act, the
card under auction, a church card being resolved, its own drawn card, the common area it
takes from); opponents' hidden choices are never branched on (a face-down payment is one
abstract move), so the tree does not leak hidden cards. The most visited root move is played.

**Action abstraction** of the search (266 action ids, 66 of them bids):

* *bids*: PASS and raises of ``bid_raises`` over the high bid (default: +1 only; the English
  auction's minimum raise), never above what the bidder can pay (coins for a category or
  church card, cards for a gold card). Jump bids and bluffs are not searched: in our
  measurements jump bids only added noise to the estimates.
* *payments*: a payment (a sequence of PAY decisions) is one move, the payment policy's card
  at each step (the gold that overpays least, the least useful cards for a gold card). REFUSE
  is searched only with ``search_refuse=True``: since searched bids never exceed what the
  bidder can pay, refusing only hands cards to the opponents.
* placements, common-area takes and church dice are searched in full when listed in
  ``searched``.

Budget: ``iterations`` determinizations per searched decision and/or ``time_limit`` seconds
per searched decision, whichever comes first (at least one). Decisions not searched, and
decisions with a single candidate move, are the heuristic's. ``last_search`` holds the last
search's iterations, simulated decisions (moves, forced moves and rollout moves applied) and
seconds.
"""

from __future__ import annotations

import math
import random
import time
from collections.abc import Callable
from typing import Any, Final, SupportsIndex

import numpy as np
from mypy_extensions import mypyc_attr

from agents.heuristics import ValueAgent
from agents.rollout_policy import RolloutPolicy, round_marker
from biblios_env.actions import BID_BASE, MAX_BID, PASS, PAY_BASE, REFUSE
from biblios_env.agent_interface import AgentObservation
from biblios_env.engine import rules
from biblios_env.engine.auctions import capacity
from biblios_env.engine.flow import (
    DECISION_BID,
    DECISION_CHURCH,
    DECISION_NONE,
    DECISION_PAY,
    DECISION_PLACE,
    DECISION_TAKE,
)
from biblios_env.engine.sampling import sample_state
from biblios_env.engine.state import NO_SEAT, State
from biblios_env.engine.views import PlayerView, player_view
from biblios_env.engine.visibility import decision_key

#: The abstract "pay with the payment policy's card" move of the tree.
PAY_MOVE: Final = -1
MODES: Final = ("flat", "tree")
#: The decisions that can be searched, by the names the ``searched`` argument uses.
SEARCHABLE: Final = {
    "place": DECISION_PLACE,
    "take": DECISION_TAKE,
    "bid": DECISION_BID,
    "pay": DECISION_PAY,
    "church": DECISION_CHURCH,
}
ROLLOUTS: Final = ("policy", "random")
#: How the flat search models the other bidders on the card under auction: by the rollout
#: policy, or by the ``value`` heuristic's own bid limit computed from each seat's view of the
#: determinization (exact against ``value`` given the sample; see ``bidding_sample``).
OPPONENT_MODELS: Final = ("policy", "value")


class _Node:
    """One information set of the searcher: per move key ``[visits, reward sum, availability]``,
    and the children reached by ``(move key, what the searcher observed next)``."""

    __slots__ = ("children", "stats")

    def __init__(self) -> None:
        self.stats: dict[int, list[float]] = {}
        self.children: dict[tuple[Any, ...], _Node] = {}


def _best_against(rewards: list[list[float]], base_index: int) -> tuple[int, float]:
    """The move with the best mean reward and its paired advantage over move ``base_index`` in
    standard errors (0 when it is that move, or with fewer than two rounds)."""
    rounds = len(rewards[base_index])
    best = max(range(len(rewards)), key=lambda index: sum(rewards[index]))
    if best == base_index or rounds < 2:
        return base_index, 0.0
    diffs = [a - b for a, b in zip(rewards[best], rewards[base_index], strict=True)]
    mean = sum(diffs) / rounds
    spread = math.sqrt(sum((d - mean) ** 2 for d in diffs) / (rounds - 1) / rounds)
    if spread == 0.0:
        return best, math.inf if mean > 0 else 0.0
    return best, mean / spread


def _budget_left(done: int, budget: int | None, deadline: float | None) -> bool:
    """Another search iteration fits: under the iteration cap and before the deadline (the
    first iteration always runs, so every search returns a move)."""
    return (budget is None or done < budget) and (deadline is None or not done or time.perf_counter() < deadline)


def _at_least(name: str, value: Any, minimum: int, expected: str) -> int:
    """``value`` as an int of at least ``minimum``, else ValueError naming it (``expected`` says
    what was wanted); bools are refused."""
    if isinstance(value, bool) or int(value) < minimum:
        raise ValueError(f"{name} must be {expected}, got {value!r}")
    return int(value)


def _one_of(name: str, value: str, choices: tuple[str, ...]) -> str:
    """``value`` if it is among ``choices``, else ValueError naming it."""
    if value not in choices:
        raise ValueError(f"{name} must be one of {choices}, got {value!r}")
    return value


def _budget(iterations: SupportsIndex | None, time_limit: float | None) -> tuple[int | None, float | None]:
    """The search budget (module doc): an iteration cap and/or seconds per searched decision."""
    if iterations is None and time_limit is None:
        raise ValueError("ISMCTSAgent needs a budget: iterations, time_limit or both")
    if iterations is not None:
        iterations = _at_least("iterations", iterations, 1, "a positive int or None")
    if time_limit is not None and float(time_limit) <= 0:
        raise ValueError(f"time_limit must be a positive number of seconds or None, got {time_limit!r}")
    return iterations, None if time_limit is None else float(time_limit)


def _words(text: str) -> tuple[str, ...]:
    """The parts of a command-line list such as ``"1-2-4"`` or ``"bid/church"``."""
    return tuple(text.replace("-", " ").replace("/", " ").split())


def _bid_raises(bid_raises: tuple[int, ...] | list[int] | int | str) -> tuple[int, ...]:
    """The searched raises over the high bid, ascending and distinct (all positive)."""
    if isinstance(bid_raises, str):
        bid_raises = tuple(int(part) for part in _words(bid_raises))
    elif isinstance(bid_raises, int):
        bid_raises = (bid_raises,)
    raises = tuple(sorted({int(raise_) for raise_ in bid_raises}))
    if not raises or raises[0] < 1:
        raise ValueError(f"bid_raises must be positive ints, got {bid_raises!r}")
    return raises


def _searched(searched: tuple[str, ...] | list[str] | str) -> frozenset[int]:
    """The searched decisions, named as in :data:`SEARCHABLE`."""
    if isinstance(searched, str):
        searched = _words(searched)
    unknown = sorted(set(searched) - set(SEARCHABLE))
    if unknown:
        raise ValueError(f"searched must name decisions among {tuple(SEARCHABLE)}, got {unknown}")
    return frozenset(SEARCHABLE[name] for name in searched)


@mypyc_attr(allow_interpreted_subclasses=True)
class ISMCTSAgent:
    """The value heuristic, corrected by information-set Monte Carlo search (module doc).

    Args:
        iterations: determinizations per searched decision (``"flat"``: each plays out every
            candidate move; ``"tree"``: one tree walk each); ``None`` for no cap (then
            ``time_limit`` must be set).
        time_limit: seconds of thinking per searched decision; ``None`` for no time cap.
        searched: the decisions searched, a subset of ``place take bid pay church`` (a string
            such as ``"bid-church"`` is accepted); the others are the heuristic's.
        gate: ``"flat"`` plays its best move instead of the heuristic's only when the paired
            advantage exceeds ``gate`` standard errors (0: always the best mean).
        mode: ``"flat"`` (the default search) or ``"tree"`` (IS-MCTS with UCB1).
        exploration: UCB1 exploration constant of ``"tree"`` (rewards in about [-0.25, 1.25]).
        bid_raises: raises over the high bid searched as bids, besides PASS; a string such as
            ``"1-2-4"`` is accepted (command-line agent specs).
        margin_weight: weight of ``tanh(VP margin / 5)`` added to the win share.
        rollout: ``"policy"`` (:class:`RolloutPolicy`) or ``"random"`` (uniform over the
            searched moves).
        horizon: end rollouts after this many gift turns / auctions and score the position
            with :meth:`RolloutPolicy.evaluate` (``None``: play to the end of the game).
        temperature: VP lead that :meth:`RolloutPolicy.evaluate` maps to tanh's knee.
        search_refuse: also search REFUSE at the start of a payment.
        seed: seeds the agent's generator when ``start_game`` gets no seed.
        policy: keyword parameters of the :class:`RolloutPolicy` (a dict).
    """

    name = "ismcts"

    def __init__(
        self,
        iterations: SupportsIndex | None = 60,
        time_limit: float | None = None,
        searched: tuple[str, ...] | list[str] | str = ("bid",),
        gate: float = 1.5,
        mode: str = "flat",
        exploration: float = 0.7,
        bid_raises: tuple[int, ...] | list[int] | str = (1,),
        margin_weight: float = 0.25,
        rollout: str = "policy",
        horizon: SupportsIndex | None = None,
        temperature: float = 2.0,
        search_refuse: bool = False,
        seed: int | None = None,
        policy: dict[str, float] | None = None,
        opponent_model: str = "policy",
        consistency_tries: SupportsIndex = 3,
        decisive: float = 0.0,
        min_iterations: SupportsIndex = 20,
    ) -> None:
        if float(decisive) < 0:
            raise ValueError(f"decisive must be >= 0 standard errors (0: no early stop), got {decisive!r}")
        self.decisive = float(decisive)
        self.min_iterations = _at_least("min_iterations", min_iterations, 2, "an int >= 2")
        self.opponent_model = _one_of("opponent_model", opponent_model, OPPONENT_MODELS)
        self.consistency_tries = _at_least("consistency_tries", consistency_tries, 1, "a positive int")
        self.model = ValueAgent()
        self.iterations, self.time_limit = _budget(iterations, time_limit)
        self.bid_raises = _bid_raises(bid_raises)
        self.searched = _searched(searched)
        if float(gate) < 0:
            raise ValueError(f"gate must be >= 0 standard errors, got {gate!r}")
        self.gate = float(gate)
        self.mode = _one_of("mode", mode, MODES)
        self.rollout_mode = _one_of("rollout", rollout, ROLLOUTS)
        self.horizon = None if horizon is None else _at_least("horizon", horizon, 1, "a positive int or None")
        self.exploration = float(exploration)
        self.margin_weight = float(margin_weight)
        self.temperature = float(temperature)
        self.search_refuse = bool(search_refuse)
        self.seed = seed
        self.seat = 0
        self.num_players = 2
        self.rng = random.Random(seed)
        self.policy = RolloutPolicy(rng=self.rng, **(policy or {}))
        self.heuristic = ValueAgent()
        #: The determinization sampler (a seam: the leakage tests plant a leaky one here).
        self.sampler: Callable[[PlayerView, random.Random], State] = sample_state
        #: The last search: iterations, simulated decisions and seconds (empty if none ran).
        self.last_search: dict[str, float] = {}

    def __repr__(self) -> str:
        searched = "-".join(name for name, decision in SEARCHABLE.items() if decision in self.searched)
        return (
            f"ISMCTSAgent(iterations={self.iterations}, time_limit={self.time_limit}, searched={searched!r}, "
            f"gate={self.gate}, mode={self.mode!r}, rollout={self.rollout_mode!r}, horizon={self.horizon}, "
            f"bid_raises={self.bid_raises})"
        )

    # ------------------------------------------------------------------ Agent protocol
    def start_game(self, seat: int, num_players: int, seed: int | None = None) -> None:
        self.seat = seat
        self.num_players = num_players
        self.rng = random.Random(self.seed if seed is None else seed)
        self.policy.rng = self.rng
        self.heuristic.start_game(seat, num_players)
        self.heuristic.rng = self.rng
        self.last_search = {}

    def act(self, observation: AgentObservation) -> int:
        """The heuristic's move, unless this decision is searched and the search overrules it."""
        legal = observation.legal_actions
        self.last_search = {}
        if len(legal) == 1:
            return legal[0]
        default = self.heuristic.act(observation)
        if observation.view.decision not in self.searched:
            return default
        moves = self.moves(self.sampler(observation.view, self.rng))
        if len(moves) == 1 or all(key != default for key, _ in moves):
            return default
        action = self.flat_search(observation, moves, default) if self.mode == "flat" else self.search(observation)
        return action if action in legal else default

    def search(self, observation: AgentObservation) -> int:
        """Run IS-MCTS from the observation; return the most visited root move's action."""
        view = observation.view
        start = time.perf_counter()
        deadline = None if self.time_limit is None else start + self.time_limit
        root = _Node()
        root_actions: dict[int, int] = {}
        simulated = 0
        iteration = 0
        while _budget_left(iteration, self.iterations, deadline):
            iteration += 1
            state = self.sampler(view, self.rng)
            path, steps = self.tree_walk(state, root, root_actions, view.seat)
            simulated += steps + self.playout(state)
            rewards = self.rewards(state)
            for entry, player in path:
                entry[0] += 1
                entry[1] += rewards[player]
        self.last_search = {
            "iterations": iteration,
            "simulated_decisions": simulated,
            "seconds": time.perf_counter() - start,
        }
        return _most_visited(root, root_actions, observation.legal_actions)

    def tree_walk(
        self, state: State, root: _Node, root_actions: dict[int, int], observer: int
    ) -> tuple[list[tuple[list[float], int]], int]:
        """One descent of the tree on the determinization ``state``: select with UCB1 while every
        move of the node was tried, expand one untried move, and stop there (or at the end of the
        game). Returns the statistics entries passed with the seat that moved at each, and the
        decisions applied; the first action of each root move key is noted in ``root_actions``."""
        node = root
        path: list[tuple[list[float], int]] = []
        moves: list[tuple[int, int]] | None = self.moves(state)
        simulated = 0
        while moves is not None:
            move, expanded = self.select(node, moves, state, node is root)
            key, action = move
            if node is root:
                root_actions.setdefault(key, action)
            path.append((node.stats[key], state.current_player))
            rules.apply(state, action)
            moves, steps = self.advance(state)
            simulated += 1 + steps
            if expanded or moves is None:
                break
            child_key = (key, decision_key(state, observer))
            child = node.children.get(child_key)
            if child is None:
                child = node.children[child_key] = _Node()
            node = child
        return path, simulated

    def select(
        self, node: _Node, moves: list[tuple[int, int]], state: State, at_root: bool
    ) -> tuple[tuple[int, int], bool]:
        """The move to play at ``node`` and whether it is a new (expanded) one: counts each
        move's availability, then an untried move if any (at the root at random, deeper the
        rollout policy's move first when the rollouts follow the policy), else the best UCB1."""
        stats = node.stats
        untried = []
        best_score, best = -math.inf, moves[0]
        for move in moves:
            entry = stats.get(move[0])
            if entry is None:
                entry = stats[move[0]] = [0, 0.0, 0]
            entry[2] += 1
            visits = entry[0]
            if not visits:
                untried.append(move)
            elif not untried:
                score = entry[1] / visits + self.exploration * math.sqrt(math.log(entry[2]) / visits)
                if score > best_score:
                    best_score, best = score, move
        if not untried:
            return best, False
        move = untried[self.rng.randrange(len(untried))]
        if self.rollout_mode == "policy" and not at_root:
            preferred = self.policy_key(state)
            move = next((m for m in untried if m[0] == preferred), move)
        return move, True

    def flat_search(self, observation: AgentObservation, moves: list[tuple[int, int]], default: int) -> int:
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
        start = time.perf_counter()
        deadline = None if self.time_limit is None else start + self.time_limit
        budget = self.iterations
        rounds = 0
        simulated = 0
        modelled = self.opponent_model == "value" and view.decision == DECISION_BID
        my_limit = self.heuristic.bid_limit(view, self.heuristic.assess(view)) if modelled else 0
        base_index = next(index for index, (key, _) in enumerate(moves) if key == default)
        while _budget_left(rounds, budget, deadline) and not self._decided(rewards, base_index, rounds):
            rounds += 1
            if modelled:
                base, limits = self.bidding_sample(view)
                limits[me] = my_limit
            else:
                base, limits = self.sampler(view, rng), []
            chance_seed = rng.getrandbits(63)
            policy_seed = rng.getrandbits(63)
            for index, (_key, action) in enumerate(moves):
                state = base.clone(rng=np.random.default_rng(chance_seed))
                self.policy.rng = random.Random(policy_seed)
                rules.apply(state, action)
                if modelled:
                    simulated += finish_bidding(state, limits, view.auction_card, view.auction_pile_size)
                simulated += 1 + self.playout(state)
                rewards[index].append(self.rewards(state)[me])
        self.policy.rng = rng
        self.last_search = {
            "iterations": rounds,
            "simulated_decisions": simulated,
            "seconds": time.perf_counter() - start,
        }
        best, z = _best_against(rewards, base_index)
        return moves[best][1] if z > self.gate else moves[base_index][1]

    def _decided(self, rewards: list[list[float]], base_index: int, rounds: int) -> bool:
        """Sequential stopping: from ``min_iterations`` on (checked every 10 rounds), stop once
        the best move's paired advantage over the heuristic's is ``decisive`` standard errors
        beyond the gate either way, so clear decisions leave time for close ones."""
        if not self.decisive or rounds < self.min_iterations or rounds % 10:
            return False
        _, z = _best_against(rewards, base_index)
        return z >= self.gate + self.decisive or z <= self.gate - self.decisive

    # ------------------------------------------------------------------ the opponent model
    def bidding_sample(self, view: PlayerView) -> tuple[State, list[int]]:
        """A determinization and every bidder's limit on the card under auction, as the ``value``
        heuristic would set it from that seat's view of the sample; among a few samples the first
        whose limits agree with the bidding so far (the high bidder's limit covers its bid, a seat
        that passed would not pay more than the high bid), else the one that disagrees least."""
        n, me = view.num_players, view.seat
        high_bidder = NO_SEAT if view.high_bidder == NO_SEAT else (me + view.high_bidder) % n
        passed = [view.passed[(seat - me) % n] for seat in range(n)]
        best: tuple[int, State, list[int]] | None = None
        for _ in range(self.consistency_tries):
            state = self.sampler(view, self.rng)
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
                best = (disagreements, state, limits)
            if not disagreements:
                break
        assert best is not None  # consistency_tries >= 1
        return best[1], best[2]

    # ------------------------------------------------------------------ pieces
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

    def policy_key(self, state: State) -> int:
        """The move key of the rollout policy's choice."""
        self.policy.reset()
        action = self.policy.action(state)
        return PAY_MOVE if state.decision == DECISION_PAY and action != REFUSE else action

    def advance(self, state: State) -> tuple[list[tuple[int, int]] | None, int]:
        """Apply single-move decisions; return the next decision's moves (``None`` at the end
        of the game) and how many decisions were applied."""
        steps = 0
        while state.decision != DECISION_NONE:
            moves = self.moves(state)
            if len(moves) > 1:
                return moves, steps
            rules.apply(state, moves[0][1])
            steps += 1
        return None, steps

    def playout(self, state: State) -> int:
        """Roll the state out (to the end, or to the horizon); returns the decisions applied."""
        if state.decision == DECISION_NONE:
            return 0
        if self.rollout_mode == "policy":
            return self.policy.rollout(state, self.horizon)
        steps = 0
        rand = self.rng.random
        marker, rounds = round_marker(state), 0
        while state.decision != DECISION_NONE:
            if self.horizon is not None and round_marker(state) != marker:
                marker, rounds = round_marker(state), rounds + 1
                if rounds >= self.horizon:
                    break
            moves = self.moves(state)
            rules.apply(state, moves[int(rand() * len(moves))][1])
            steps += 1
        return steps

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


def _most_visited(root: _Node, root_actions: dict[int, int], legal: list[int]) -> int:
    """The action of the most visited root move that is legal (ties: the higher mean reward,
    then the higher key); the first legal action if no root move is."""
    ranked = sorted(
        ((entry[0], entry[1] / entry[0] if entry[0] else 0.0, key) for key, entry in root.stats.items()),
        reverse=True,
    )
    for _visits, _mean, key in ranked:
        action = root_actions.get(key)
        if action is not None and action in legal:
            return action
    return legal[0]


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


__all__ = ["MODES", "PAY_MOVE", "ROLLOUTS", "SEARCHABLE", "ISMCTSAgent"]
