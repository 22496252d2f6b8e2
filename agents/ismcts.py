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
from typing import Any, Final

import numpy as np

from agents.card_values import assignment_patterns, cards_affordable, church_action_deltas
from agents.heuristics import ValueAgent
from biblios_env.actions import BID_BASE, CHURCH_DECLINE, MAX_BID, PASS, PAY_BASE, REFUSE, TAKE_BASE
from biblios_env.agent_interface import AgentObservation
from biblios_env.cards import CARD_CATEGORY, CARD_LETTER, CARD_VALUE, IS_GOLD, NUM_CATEGORIES
from biblios_env.engine import church, rules
from biblios_env.engine.sampling import sample_state
from biblios_env.engine.state import NO_CARD, Decision, Phase, State

#: The abstract "pay with the payment policy's card" move of the tree.
PAY_MOVE: Final = -1
MODES: Final = ("flat", "tree")
#: The decisions that can be searched, by the names the ``searched`` argument uses.
SEARCHABLE: Final = {
    "place": Decision.PLACE,
    "take": Decision.TAKE,
    "bid": Decision.BID,
    "pay": Decision.PAY,
    "church": Decision.CHURCH,
}
ROLLOUTS: Final = ("policy", "random")
_NO_LETTER: Final = 99
_CATEGORIES: Final = range(NUM_CATEGORIES)
_CAT: Final = CARD_CATEGORY
_VAL: Final = CARD_VALUE
_LET: Final = CARD_LETTER
_GOLD: Final = IS_GOLD
_CATEGORY_TOTAL: Final = tuple(sum(CARD_VALUE[9 * c + k] for k in range(9)) for c in _CATEGORIES)
_MEAN_VALUE: Final = tuple(total / 9 for total in _CATEGORY_TOTAL)
_PLACE, _TAKE, _CHURCH, _BID, _PAY = Decision.PLACE, Decision.TAKE, Decision.CHURCH, Decision.BID, Decision.PAY
_NONE = Decision.NONE


def _logistic(z: float) -> float:
    if z < -20.0:
        return 0.0
    return 1.0 / (1.0 + math.exp(-1.7 * z))


class Race:
    """Category totals, letters and spreads of one position (full information)."""

    __slots__ = ("dice", "future", "letters", "n", "rival", "sigma", "tie", "totals")

    def __init__(self, state: State, sigma_base: float, sigma_scale: float, tie_margin: float, dead: list[int]) -> None:
        n = self.n = state.num_players
        totals = [[0] * NUM_CATEGORIES for _ in range(n)]
        letters = [[_NO_LETTER] * NUM_CATEGORIES for _ in range(n)]
        in_hands = [0] * NUM_CATEGORIES
        for seat, hand in enumerate(state.hands):
            seat_totals, seat_letters = totals[seat], letters[seat]
            for card in hand:
                category = _CAT[card]
                if category >= 0:
                    value = _VAL[card]
                    seat_totals[category] += value
                    in_hands[category] += value
                    if _LET[card] < seat_letters[category]:
                        seat_letters[category] = _LET[card]
        kept = state.kept_card
        if kept != NO_CARD and _CAT[kept] >= 0:
            category = _CAT[kept]
            totals[state.active_player][category] += _VAL[kept]
            in_hands[category] += _VAL[kept]
            if _LET[kept] < letters[state.active_player][category]:
                letters[state.active_player][category] = _LET[kept]
        self.totals, self.letters = totals, letters
        self.future = future = [_CATEGORY_TOTAL[c] - in_hands[c] - dead[c] for c in _CATEGORIES]
        self.sigma = [sigma_base + sigma_scale * math.sqrt(max(0, future[c]) * _MEAN_VALUE[c]) for c in _CATEGORIES]
        self.dice = state.dice
        self.rival = 1.0 / (n - 1)
        self.tie = tie_margin

    def best_other(self, seat: int, category: int) -> tuple[int, int]:
        """The best total and best letter among the other seats in ``category``."""
        best, letter = 0, _NO_LETTER
        for other in range(self.n):
            if other != seat:
                total = self.totals[other][category]
                if total > best:
                    best = total
                other_letter = self.letters[other][category]
                if other_letter < letter:
                    letter = other_letter
        return best, letter

    def p_win(self, category: int, total: int, letter: int, best: int, best_letter: int) -> float:
        if total <= 0:
            if best <= 0 and self.future[category] <= 0:
                return 0.0
            tie = -self.tie
        else:
            tie = self.tie if letter < best_letter else -self.tie
        return _logistic((total - best + tie) / self.sigma[category])

    def scale(self, category: int) -> float:
        return self.dice[category] * (1.0 + self.rival)

    def gain(self, seat: int, card: int) -> float:
        """Utility for ``seat`` of receiving category card ``card``."""
        category = _CAT[card]
        total, letter = self.totals[seat][category], self.letters[seat][category]
        best, best_letter = self.best_other(seat, category)
        before = self.p_win(category, total, letter, best, best_letter)
        after = self.p_win(category, total + _VAL[card], min(letter, _LET[card]), best, best_letter)
        return self.scale(category) * (after - before)

    def harm(self, seat: int, card: int) -> float:
        """Utility ``seat`` loses when the strongest-hit opponent receives category card ``card``."""
        category = _CAT[card]
        total, letter = self.totals[seat][category], self.letters[seat][category]
        best, best_letter = self.best_other(seat, category)
        before = self.p_win(category, total, letter, best, best_letter)
        worst = before
        value, card_letter = _VAL[card], _LET[card]
        for other in range(self.n):
            if other != seat:
                bumped = self.totals[other][category] + value
                after = self.p_win(category, total, letter, max(best, bumped), min(best_letter, card_letter))
                if after < worst:
                    worst = after
        return self.scale(category) * (before - worst)

    def loss(self, seat: int, card: int, hand: list[int]) -> float:
        """Utility ``seat`` loses by giving up category card ``card`` from ``hand``."""
        category = _CAT[card]
        total, letter = self.totals[seat][category], self.letters[seat][category]
        rest_letter = _NO_LETTER
        for other in hand:
            if other != card and _CAT[other] == category and _LET[other] < rest_letter:
                rest_letter = _LET[other]
        best, best_letter = self.best_other(seat, category)
        before = self.p_win(category, total, letter, best, best_letter)
        after = self.p_win(category, total - _VAL[card], rest_letter, best, best_letter)
        return self.scale(category) * (before - after)

    def die_weight(self, seat: int, category: int) -> float:
        """Utility for ``seat`` of raising ``category``'s die by one."""
        total = self.totals[seat][category]
        best, best_letter = self.best_other(seat, category)
        p = self.p_win(category, total, self.letters[seat][category], best, best_letter)
        live = 1.0 if total > 0 or best > 0 or self.future[category] > 0 else 0.0
        return (1.0 + self.rival) * p - self.rival * live


class RolloutPolicy:
    """The rollout policy: chooses an action for whoever is to act in a full state.

    It is a cheap cousin of the ``value`` heuristic (:mod:`agents.card_values`) that reads
    the whole (determinized) state:

    * **Category races.** For each category, every seat's total and best letter; the value
      still to come (cards in no hand, not discarded or removed) sets the spread of the race,
      ``sigma_base + sigma_scale * sqrt(future value * mean card value)``. A seat's chance to
      win a category is a logistic curve of its lead over the best other total (±
      ``tie_margin`` for the letter tie-break). A card's *gain* for a seat is the die times the
      change in that chance (times ``1 + r``, ``r = 1 / (players - 1)``); its *harm* is what
      the seat loses if the opponent it hurts most gets the card.
    * **Gold** is worth ``gold_value`` per coin during the gifts; during the auctions a coin
      is worth ``capture * (cards left to auction + 1) / gold in hand`` (bounded by
      ``min_coin_value`` and ``max_coin_value``).
    * **Placements** take the actual next cards of the gift turn (the state is a sample
      already) and pick the best assignment of the turn's cards to keep / auction pile /
      common area, worth ``gain``, ``auction_share * gain - (1 - auction_share) * harm`` and
      ``-harm``.
    * **Takes**: the best ``gain + denial * harm``. **Bids**: raise by one while the price
      stays within ``(gain + denial * harm) / coin value`` (times a noise factor in
      ``[1 - bid_noise, 1 + bid_noise]``, drawn once per bidder and auction) and within what
      the seat can pay; for a gold card the limit is the number of cards whose losses stay
      below its gain (no denial term, as the value heuristic). **Payments**: the gold that
      overpays least, or the least useful cards for a gold card. **Church cards**: the die
      changes that help the owner most.

    It never bluffs, so it never refuses a payment it can make. It is the search's model of
    both seats, so its defaults are calibrated to the value heuristic (the heuristic's race
    spreads, and a ``capture`` that matches its mean coin value during the auctions): on
    value-vs-value games its bid limits then match the heuristic's within a coin or so and
    its bids agree with the heuristic's about four times in five.
    """

    def __init__(
        self,
        *,
        sigma_base: float = 1.3,
        sigma_scale: float = 1.7,
        tie_margin: float = 0.4,
        gold_value: float = 0.3,
        capture: float = 0.3,
        min_coin_value: float = 0.05,
        max_coin_value: float = 2.0,
        auction_share: float = 0.45,
        denial: float = 0.6,
        church_value: float = 0.3,
        bid_noise: float = 0.25,
        coin_vp: float = 0.5,
        rng: random.Random | None = None,
    ) -> None:
        self.sigma_base = sigma_base
        self.sigma_scale = sigma_scale
        self.tie_margin = tie_margin
        self.gold_value = gold_value
        self.capture = capture
        self.min_coin_value = min_coin_value
        self.max_coin_value = max_coin_value
        self.auction_share = auction_share
        self.denial = denial
        self.church_value = church_value
        self.bid_noise = bid_noise
        self.coin_vp = coin_vp
        self.rng = rng if rng is not None else random.Random(0)
        self.reset()

    # ------------------------------------------------------------------ helpers
    @staticmethod
    def dead_values(state: State) -> list[int]:
        """Category value out of the game for good: removed and discarded cards."""
        dead = [0] * NUM_CATEGORIES
        for pile in (state.removed, state.discard):
            for card in pile:
                category = _CAT[card]
                if category >= 0:
                    dead[category] += _VAL[card]
        return dead

    def race(self, state: State, dead: list[int] | None = None) -> Race:
        return Race(
            state,
            self.sigma_base,
            self.sigma_scale,
            self.tie_margin,
            self.dead_values(state) if dead is None else dead,
        )

    def coin_value(self, state: State, seat: int) -> float:
        if state.phase != Phase.AUCTION:
            return self.gold_value
        gold = 0
        for card in state.hands[seat]:
            if _GOLD[card]:
                gold += _VAL[card]
        value = self.capture * (len(state.auction_pile) + 1) / max(gold, 1)
        return min(self.max_coin_value, max(self.min_coin_value, value))

    def gain(self, race: Race, state: State, seat: int, card: int, coin: float) -> float:
        if _CAT[card] >= 0:
            return race.gain(seat, card)
        if _GOLD[card]:
            return coin * _VAL[card]
        return self.church_gain(race, seat, card, state.dice)

    def harm(self, race: Race, seat: int, card: int, coin: float) -> float:
        if _CAT[card] >= 0:
            return race.harm(seat, card)
        if _GOLD[card]:
            return race.rival * coin * _VAL[card]
        return 0.5 * self.church_value

    def church_gain(self, race: Race, seat: int, card: int, dice: list[int]) -> float:
        return max(0.0, self.church_choice(race, seat, card, dice)[1])

    def church_choice(self, race: Race, seat: int, card: int, dice: list[int]) -> tuple[int, float]:
        weights = [race.die_weight(seat, c) for c in _CATEGORIES]
        best_action, best_value = CHURCH_DECLINE, 0.0
        for action in church.legal_actions(_ChurchQuery(card, dice)):  # type: ignore[arg-type]
            value = sum(delta * weights[c] for c, delta in church_action_deltas(action, card))
            if value > best_value + 1e-12:
                best_action, best_value = action, value
        return best_action, best_value

    def payment_card(self, state: State, race: Race | None = None) -> int:
        """The next payment card, or -1 when the payment cannot be completed."""
        seat = state.current_player
        hand = state.hands[seat]
        if _GOLD[state.auction_card]:
            if len(hand) < state.high_bid - len(state.payment):
                return -1
            if race is None:
                race = self.race(state)
            coin = self.coin_value(state, seat)
            best, choice = math.inf, -1
            for card in hand:
                cost = race.loss(seat, card, hand) if _CAT[card] >= 0 else (coin * _VAL[card] if _GOLD[card] else 0.0)
                if cost < best:
                    best, choice = cost, card
            return choice
        need = state.high_bid - state.payment_value
        counts = [0, 0, 0, 0]
        for card in hand:
            if _GOLD[card]:
                counts[_VAL[card]] += 1
        if counts[1] + 2 * counts[2] + 3 * counts[3] < need:
            return -1
        best_rank: tuple[int, int] | None = None
        plan = (0, 0, 0)
        for threes in range(min(counts[3], (need + 2) // 3) + 1):
            for twos in range(min(counts[2], max(0, need - 3 * threes + 1) // 2) + 1):
                ones = max(0, need - 3 * threes - 2 * twos)
                if ones > counts[1]:
                    continue
                rank = (ones + 2 * twos + 3 * threes, ones + twos + threes)
                if best_rank is None or rank < best_rank:
                    best_rank, plan = rank, (ones, twos, threes)
        value = 3 if plan[2] else 2 if plan[1] else 1
        for card in hand:
            if _GOLD[card] and _VAL[card] == value:
                return card
        return -1  # pragma: no cover - the plan only uses cards in hand

    # ------------------------------------------------------------------ the policy
    def action(self, state: State, dead: list[int] | None = None) -> int:
        """The policy's action at the current decision (never REFUSE unless it cannot pay)."""
        decision = state.decision
        if decision == _BID:
            key = (len(state.auction_pile), state.auction_card, state.current_player, state.excluded.count(True))
            limit = self._bid_limits.get(key)
            if limit is None:
                limit = self._bid_limits[key] = self.bid_limit(state, self.cached_race(state, dead))
            wanted = state.high_bid + 1
            return BID_BASE + wanted if wanted <= limit else PASS
        if decision == _PLACE:
            planned = self._planned
            if planned and planned[0] == (state.drawn_card, len(state.draw_pile), state.active_player):
                slot = planned[1]
                if state.quota[slot]:
                    self._planned = planned[2]
                    return slot
            return self.place(state, self.cached_race(state, dead))
        if decision == _TAKE:
            race = self.cached_race(state, dead)
            seat = state.current_player
            coin = self.coin_value(state, seat)
            best, choice = -math.inf, state.common_area[0]
            for card in state.common_area:
                value = self.gain(race, state, seat, card, coin) + self.denial * self.harm(race, seat, card, coin)
                if value > best:
                    best, choice = value, card
            return TAKE_BASE + choice
        if decision == _PAY:
            card = self.payment_card(state, None if not _GOLD[state.auction_card] else self.cached_race(state, dead))
            return REFUSE if card < 0 else PAY_BASE + card
        if decision == _CHURCH:
            race = self.cached_race(state, dead)
            return self.church_choice(race, state.current_player, state.church_card, state.dice)[0]
        raise ValueError(f"no decision to make: the game is over (decision {decision!r})")

    def cached_race(self, state: State, dead: list[int] | None) -> Race:
        """The race of this position, reused while no card changed hands and no die moved."""
        hands = state.hands
        key = (
            len(state.discard),
            len(state.draw_pile),
            len(state.auction_pile),
            state.kept_card,
            *[len(hand) for hand in hands],
            *state.dice,
        )
        if self._race_key == key and self._race is not None:
            return self._race
        race = self.race(state, dead)
        self._race, self._race_key = race, key
        return race

    def reset(self) -> None:
        """Forget the caches (call before stepping a new state)."""
        self._race: Race | None = None
        self._race_key: tuple[int, ...] | None = None
        self._bid_limits: dict[tuple[int, int, int, int], int] = {}
        self._planned: tuple | None = None

    def place(self, state: State, race: Race) -> int:
        seat = state.active_player
        coin = self.gold_value
        quota = state.quota
        count = quota[0] + quota[1] + quota[2]
        cards = [state.drawn_card]
        pile = state.draw_pile
        cards.extend(pile[-1 - i] for i in range(min(count - 1, len(pile))))
        share = self.auction_share
        rows = []
        for card in cards:
            gain = self.gain(race, state, seat, card, coin)
            harm = self.harm(race, seat, card, coin)
            rows.append((gain, share * gain - (1.0 - share) * harm, -harm))
        best, best_pattern = -math.inf, (0,)
        for pattern in assignment_patterns((quota[0], quota[1], quota[2])):
            value = 0.0
            for row, slot_of in zip(rows, pattern, strict=False):
                value += row[slot_of]
            if value > best:
                best, best_pattern = value, pattern
        # Remember the rest of the plan: the next cards of this turn are known in a rollout.
        planned = None
        for index in range(len(cards) - 1, 0, -1):
            planned = ((cards[index], len(pile) - index, seat), best_pattern[index], planned)
        self._planned = planned
        return best_pattern[0]

    def bid_limit(self, state: State, race: Race) -> int:
        seat = state.current_player
        card = state.auction_card
        hand = state.hands[seat]
        coin = self.coin_value(state, seat)
        noise = 1.0 - self.bid_noise + 2.0 * self.bid_noise * self.rng.random() if self.bid_noise else 1.0
        if _GOLD[card]:
            costs = (
                race.loss(seat, other, hand) if _CAT[other] >= 0 else (coin * _VAL[other] if _GOLD[other] else 0.0)
                for other in hand
            )
            return min(cards_affordable(self.gain(race, state, seat, card, coin) * noise, costs), MAX_BID)
        value = (self.gain(race, state, seat, card, coin) + self.denial * self.harm(race, seat, card, coin)) * noise
        if value <= 0:
            return 0
        gold = 0
        for other in hand:
            if _GOLD[other]:
                gold += _VAL[other]
        return min(int(value / coin), gold, MAX_BID)

    def rollout(self, state: State, horizon: int | None = None) -> int:
        """Play the state on with the policy, to the end or (with ``horizon``) until that many
        gift turns or auctions have ended; returns the number of decisions applied."""
        apply = rules.apply
        action = self.action
        dead = self.dead_values(state)
        discarded = len(state.discard)
        steps = 0
        self.reset()
        marker = _round_marker(state)
        rounds = 0
        while state.decision != _NONE:
            if horizon is not None:
                now = _round_marker(state)
                if now != marker:
                    marker = now
                    rounds += 1
                    if rounds >= horizon:
                        break
            discard = state.discard
            if len(discard) != discarded:
                for card in discard[discarded:]:
                    if _CAT[card] >= 0:
                        dead[_CAT[card]] += _VAL[card]
                discarded = len(discard)
            apply(state, action(state, dead))
            steps += 1
        return steps

    def evaluate(self, state: State, temperature: float = 2.0) -> list[float]:
        """Per seat, a win chance in [0, 1] from the expected VP lead: the dice of the
        categories weighted by each seat's chance to win them, plus its gold at a coin value
        in VP (the VP still to buy at auction, shared over all the gold in hands)."""
        if state.decision == _NONE:
            winners = state.winners
            return [1.0 / len(winners) if seat in winners else 0.0 for seat in range(state.num_players)]
        race = self.race(state)
        n = state.num_players
        golds = [0] * n
        for seat, hand in enumerate(state.hands):
            for card in hand:
                if _GOLD[card]:
                    golds[seat] += _VAL[card]
        total_gold = sum(golds)
        future = sum(race.future[c] / _CATEGORY_TOTAL[c] * state.dice[c] for c in _CATEGORIES)
        coin_vp = self.coin_vp * future / max(total_gold, 1)
        expected = []
        for seat in range(n):
            vp = coin_vp * golds[seat]
            for category in _CATEGORIES:
                best, best_letter = race.best_other(seat, category)
                vp += state.dice[category] * race.p_win(
                    category, race.totals[seat][category], race.letters[seat][category], best, best_letter
                )
            expected.append(vp)
        values = []
        for seat in range(n):
            lead = expected[seat] - max(expected[other] for other in range(n) if other != seat)
            values.append(0.5 + 0.5 * math.tanh(lead / temperature))
        return values


def _round_marker(state: State) -> tuple[int, int]:
    """Changes when a gift turn or an auction ends."""
    if state.phase == Phase.GIFT:
        return (0, state.active_player)
    return (1, len(state.auction_pile))


class _ChurchQuery:
    """The two fields :func:`biblios_env.engine.church.legal_actions` reads (dice, church card)."""

    __slots__ = ("church_card", "dice")

    def __init__(self, card: int, dice: list[int]) -> None:
        self.church_card = card
        self.dice = dice


class _Node:
    """One information set of the searcher: per move key ``[visits, reward sum, availability]``,
    and the children reached by ``(move key, what the searcher observed next)``."""

    __slots__ = ("children", "stats")

    def __init__(self) -> None:
        self.stats: dict[int, list[float]] = {}
        self.children: dict[tuple[Any, ...], _Node] = {}


def _budget_left(done: int, budget: int | None, deadline: float | None) -> bool:
    """Another search iteration fits: under the iteration cap and before the deadline (the
    first iteration always runs, so every search returns a move)."""
    return (budget is None or done < budget) and (deadline is None or not done or time.perf_counter() < deadline)


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
        iterations: int | None = 60,
        time_limit: float | None = None,
        searched: tuple[str, ...] | list[str] | str = ("bid",),
        gate: float = 1.5,
        mode: str = "flat",
        exploration: float = 0.7,
        bid_raises: tuple[int, ...] | list[int] | str = (1,),
        margin_weight: float = 0.25,
        rollout: str = "policy",
        horizon: int | None = None,
        temperature: float = 2.0,
        search_refuse: bool = False,
        seed: int | None = None,
        policy: dict[str, float] | None = None,
    ) -> None:
        if iterations is None and time_limit is None:
            raise ValueError("ISMCTSAgent needs a budget: iterations, time_limit or both")
        if iterations is not None and (isinstance(iterations, bool) or int(iterations) < 1):
            raise ValueError(f"iterations must be a positive int or None, got {iterations!r}")
        if time_limit is not None and float(time_limit) <= 0:
            raise ValueError(f"time_limit must be a positive number of seconds or None, got {time_limit!r}")
        if isinstance(bid_raises, str):
            bid_raises = tuple(int(part) for part in bid_raises.replace("-", " ").replace("/", " ").split())
        elif isinstance(bid_raises, int):
            bid_raises = (bid_raises,)
        raises = tuple(sorted({int(raise_) for raise_ in bid_raises}))
        if not raises or raises[0] < 1:
            raise ValueError(f"bid_raises must be positive ints, got {bid_raises!r}")
        if isinstance(searched, str):
            searched = tuple(searched.replace("-", " ").replace("/", " ").split())
        unknown = sorted(set(searched) - set(SEARCHABLE))
        if unknown:
            raise ValueError(f"searched must name decisions among {tuple(SEARCHABLE)}, got {unknown}")
        if float(gate) < 0:
            raise ValueError(f"gate must be >= 0 standard errors, got {gate!r}")
        if mode not in MODES:
            raise ValueError(f"mode must be one of {MODES}, got {mode!r}")
        if rollout not in ROLLOUTS:
            raise ValueError(f"rollout must be one of {ROLLOUTS}, got {rollout!r}")
        if horizon is not None and (isinstance(horizon, bool) or int(horizon) < 1):
            raise ValueError(f"horizon must be a positive int or None, got {horizon!r}")
        self.iterations = None if iterations is None else int(iterations)
        self.time_limit = None if time_limit is None else float(time_limit)
        self.searched = frozenset(SEARCHABLE[name] for name in searched)
        self.gate = float(gate)
        self.mode = mode
        self.exploration = float(exploration)
        self.bid_raises = raises
        self.margin_weight = float(margin_weight)
        self.rollout_mode = rollout
        self.horizon = None if horizon is None else int(horizon)
        self.temperature = float(temperature)
        self.search_refuse = bool(search_refuse)
        self.seed = seed
        self.seat = 0
        self.num_players = 2
        self.rng = random.Random(seed)
        self.policy = RolloutPolicy(rng=self.rng, **(policy or {}))
        self.heuristic = ValueAgent()
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
        moves = self.moves(sample_state(observation.view, self.rng))
        if len(moves) == 1 or all(key != default for key, _ in moves):
            return default
        action = self.flat_search(observation, moves, default) if self.mode == "flat" else self.search(observation)
        return action if action in legal else default

    def search(self, observation: AgentObservation) -> int:
        """Run IS-MCTS from the observation; return the most visited root move's action."""
        view = observation.view
        legal = set(observation.legal_actions)
        rng = self.rng
        observer = view.seat
        exploration = self.exploration
        policy_first = self.rollout_mode == "policy"
        start = time.perf_counter()
        deadline = None if self.time_limit is None else start + self.time_limit
        budget = self.iterations
        root = _Node()
        root_actions: dict[int, int] = {}
        simulated = 0
        iteration = 0
        while _budget_left(iteration, budget, deadline):
            iteration += 1
            state = sample_state(view, rng)
            node = root
            path: list[tuple[list[float], int]] = []
            moves: list[tuple[int, int]] | None = self.moves(state)
            at_root = True
            while moves is not None:
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
                        score = entry[1] / visits + exploration * math.sqrt(math.log(entry[2]) / visits)
                        if score > best_score:
                            best_score, best = score, move
                if untried:
                    move = untried[rng.randrange(len(untried))]
                    if policy_first and not at_root:
                        preferred = self.policy_key(state)
                        move = next((m for m in untried if m[0] == preferred), move)
                else:
                    move = best
                key, action = move
                if at_root:
                    root_actions.setdefault(key, action)
                    at_root = False
                path.append((stats[key], state.current_player))
                rules.apply(state, action)
                moves, steps = self.advance(state)
                simulated += 1 + steps
                if untried or moves is None:
                    break
                child_key = (key, self.observed(state, observer))
                child = node.children.get(child_key)
                if child is None:
                    child = node.children[child_key] = _Node()
                node = child
            simulated += self.playout(state)
            rewards = self.rewards(state)
            for entry, player in path:
                entry[0] += 1
                entry[1] += rewards[player]
        self.last_search = {
            "iterations": iteration,
            "simulated_decisions": simulated,
            "seconds": time.perf_counter() - start,
        }
        ranked = sorted(
            ((entry[0], entry[1] / entry[0] if entry[0] else 0.0, key) for key, entry in root.stats.items()),
            reverse=True,
        )
        for _visits, _mean, key in ranked:
            action = root_actions.get(key)
            if action in legal:
                return action
        return observation.legal_actions[0]

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
        while _budget_left(rounds, budget, deadline):
            rounds += 1
            base = sample_state(view, rng)
            chance_seed = rng.getrandbits(63)
            policy_seed = rng.getrandbits(63)
            for index, (_key, action) in enumerate(moves):
                state = base.clone(rng=np.random.default_rng(chance_seed))
                self.policy.rng = random.Random(policy_seed)
                rules.apply(state, action)
                simulated += 1 + self.playout(state)
                rewards[index].append(self.rewards(state)[me])
        self.policy.rng = rng
        self.last_search = {
            "iterations": rounds,
            "simulated_decisions": simulated,
            "seconds": time.perf_counter() - start,
        }
        base_index = next(index for index, (key, _) in enumerate(moves) if key == default)
        best = max(range(len(moves)), key=lambda index: sum(rewards[index]))
        if best == base_index or rounds < 2:
            return moves[base_index][1]
        diffs = [a - b for a, b in zip(rewards[best], rewards[base_index], strict=True)]
        mean = sum(diffs) / rounds
        spread = math.sqrt(sum((d - mean) ** 2 for d in diffs) / (rounds - 1) / rounds)
        return moves[best][1] if mean > self.gate * spread else moves[base_index][1]

    # ------------------------------------------------------------------ pieces
    def moves(self, state: State) -> list[tuple[int, int]]:
        """The searched moves at the current decision as ``(key, action)`` (module doc)."""
        decision = state.decision
        if decision == Decision.BID:
            high = state.high_bid
            cap = min(MAX_BID, _capacity(state, state.current_player))
            moves = [(PASS, PASS)]
            for raise_ in self.bid_raises:
                amount = high + raise_
                if amount > cap:
                    break
                moves.append((BID_BASE + amount, BID_BASE + amount))
            return moves
        if decision == Decision.PAY:
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
        return PAY_MOVE if state.decision == Decision.PAY and action != REFUSE else action

    def advance(self, state: State) -> tuple[list[tuple[int, int]] | None, int]:
        """Apply single-move decisions; return the next decision's moves (``None`` at the end
        of the game) and how many decisions were applied."""
        steps = 0
        while state.decision != Decision.NONE:
            moves = self.moves(state)
            if len(moves) > 1:
                return moves, steps
            rules.apply(state, moves[0][1])
            steps += 1
        return None, steps

    @staticmethod
    def observed(state: State, observer: int) -> tuple[Any, ...]:
        """What the searcher sees of the position after a move: the key of the next node."""
        decision = state.decision
        player = state.current_player
        extra: Any = NO_CARD
        if player == observer:
            if decision == Decision.PLACE:
                extra = state.drawn_card
            elif decision == Decision.TAKE:
                extra = tuple(sorted(state.common_area))
        return (decision, player, state.auction_card, state.church_card, extra)

    def playout(self, state: State) -> int:
        """Roll the state out (to the end, or to the horizon); returns the decisions applied."""
        if state.decision == Decision.NONE:
            return 0
        if self.rollout_mode == "policy":
            return self.policy.rollout(state, self.horizon)
        steps = 0
        rand = self.rng.random
        marker, rounds = _round_marker(state), 0
        while state.decision != Decision.NONE:
            if self.horizon is not None and _round_marker(state) != marker:
                marker, rounds = _round_marker(state), rounds + 1
                if rounds >= self.horizon:
                    break
            moves = self.moves(state)
            rules.apply(state, moves[int(rand() * len(moves))][1])
            steps += 1
        return steps

    def rewards(self, state: State) -> list[float]:
        """Per seat: the win share plus ``margin_weight * tanh(VP margin over the best other / 5)``
        at the end of the game; the policy's evaluation at a rollout horizon."""
        if state.decision != Decision.NONE:
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


def _capacity(state: State, seat: int) -> int:
    """The largest bid ``seat`` can pay on the card under auction (coins, or cards for gold)."""
    hand = state.hands[seat]
    if IS_GOLD[state.auction_card]:
        return len(hand)
    return sum(CARD_VALUE[card] for card in hand if IS_GOLD[card])


__all__ = ["MODES", "PAY_MOVE", "ROLLOUTS", "SEARCHABLE", "ISMCTSAgent", "Race", "RolloutPolicy"]
