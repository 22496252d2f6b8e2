"""What a seat can infer from its :class:`PlayerView` about each category race, and what cards
are worth to it: the shared evaluation behind the heuristic agents.

Everything here reads only the viewer's information set (RULES §7). The model is deliberately
simple and fast (agents call it at every decision):

* **Own standing**: the viewer's category totals and best letters (hand plus the card kept this
  gift turn).
* **Opponents**: the totals of the cards publicly seen entering each opponent's hand, plus each
  hidden card slot (hand size minus publicly known cards) filled with the average unseen card.
* **Unseen cards**: the 87 cards minus everything the viewer has seen (card counting: the deck
  composition is public). The share of them still to be handed out (draw pile, other players'
  cards on the auction pile), plus the common area and the viewer's own auction-pile cards, is
  the *future* value of each category, which sets how uncertain the race still is.
* **Win probability** of a category: a logistic curve of (own total − best opponent estimate ±
  letter tie-break) divided by a spread that shrinks as the category's future value runs out.
* **Utility**: ``Σ_c weight_c · die_c · ((1 + r)·P_c − r·live_c)`` where ``r`` is the rival weight
  (1 in two players: every category won by an opponent counts against the viewer as much as one
  won counts for it; less with more players, where a VP lost goes to one of several rivals).

Card values are differences of that utility: ``gain`` (the viewer gets the card), ``harm`` (an
opponent gets it), and for church cards the best die change. Gold is valued by a coin value
(utility per coin) that the agents supply.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from itertools import permutations

from biblios_env.actions import CATEGORY_PAIRS, CHURCH_DECLINE, CHURCH_ONE_BASE, CHURCH_TWO_BASE, church_one
from biblios_env.cards import (
    CARD_CATEGORY,
    CARD_CHURCH,
    CARD_LETTER,
    CARD_VALUE,
    CATEGORY_IDS,
    DIE_MAX,
    DIE_MIN,
    IS_GOLD,
    NUM_CARDS,
    NUM_CATEGORIES,
    ChurchEffect,
)
from biblios_env.engine.scoring import NO_LETTER, category_totals
from biblios_env.engine.views import PlayerView

#: Mean card value per category (Monks and Pigments total 25 over 9 cards, the others 11).
MEAN_CARD_VALUE = tuple(sum(CARD_VALUE[card] for card in CATEGORY_IDS[9 * c : 9 * c + 9]) / 9 for c in range(5))
_CATEGORIES = range(NUM_CATEGORIES)


def church_options(card: int, dice: Sequence[int]) -> list[tuple[int, tuple[tuple[int, int], ...]]]:
    """Every legal way to resolve church ``card`` with ``dice`` (RULES §4): ``(action, ((category, delta), ...))``.

    Declining (no change) is included; dice never leave 1..6; two-dice cards change two different dice.
    """
    effect = CARD_CHURCH[card]
    options: list[tuple[int, tuple[tuple[int, int], ...]]] = [(CHURCH_DECLINE, ())]
    if effect in (ChurchEffect.ONE_UP, ChurchEffect.ONE_DOWN, ChurchEffect.ONE_EITHER):
        deltas = {ChurchEffect.ONE_UP: (1,), ChurchEffect.ONE_DOWN: (-1,)}.get(effect, (1, -1))
        for category in _CATEGORIES:
            for delta in deltas:
                if DIE_MIN <= dice[category] + delta <= DIE_MAX:
                    options.append((church_one(category, delta), ((category, delta),)))
    else:
        delta = 1 if effect == ChurchEffect.TWO_UP else -1
        for index, (first, second) in enumerate(CATEGORY_PAIRS):
            if DIE_MIN <= dice[first] + delta <= DIE_MAX and DIE_MIN <= dice[second] + delta <= DIE_MAX:
                options.append((CHURCH_TWO_BASE + index, ((first, delta), (second, delta))))
    return options


def church_action_deltas(action: int, card: int) -> tuple[tuple[int, int], ...]:
    """The die changes of a church action for ``card`` (empty for CHURCH_DECLINE)."""
    if action == CHURCH_DECLINE:
        return ()
    if action < CHURCH_TWO_BASE:
        category, direction = divmod(action - CHURCH_ONE_BASE, 2)
        return ((category, -1 if direction else 1),)
    delta = 1 if CARD_CHURCH[card] == ChurchEffect.TWO_UP else -1
    first, second = CATEGORY_PAIRS[action - CHURCH_TWO_BASE]
    return ((first, delta), (second, delta))


def cards_affordable(value: float, costs: Iterable[float]) -> int:
    """How many cards, cheapest first, can be given up before their summed cost reaches
    ``value``: the bid limit on a gold card, which is paid with that many cards of any kind."""
    limit, spent = 0, 0.0
    for cost in sorted(costs):
        spent += cost + 1e-6  # a free card still counts: never give away a hand for nothing
        if spent >= value:
            break
        limit += 1
    return limit


def cheapest_cover(golds: Iterable[int], amount: int) -> list[int]:
    """The gold cards whose values cover ``amount`` with the least overpayment (no change is
    given, RULES §5); among equal totals, the fewest cards (small coins stay for exact payments).

    Returns ``[]`` if ``amount <= 0`` and raises ValueError if the gold cannot cover it.
    """
    if amount <= 0:
        return []
    golds = sorted(golds, key=lambda card: -CARD_VALUE[card])
    if sum(CARD_VALUE[card] for card in golds) < amount:
        raise ValueError(f"gold {golds} cannot cover {amount}")
    # Only the count of each coin value matters: enumerate how many 3s, 2s and 1s to use.
    by_value: dict[int, list[int]] = {1: [], 2: [], 3: []}
    for card in golds:
        by_value[CARD_VALUE[card]].append(card)
    best: tuple[int, int] | None = None
    best_counts = (0, 0, 0)
    for threes in range(len(by_value[3]) + 1):
        for twos in range(len(by_value[2]) + 1):
            covered = 3 * threes + 2 * twos
            ones = min(len(by_value[1]), max(0, amount - covered))
            total = covered + ones
            if total < amount:
                continue
            key = (total, threes + twos + ones)
            if best is None or key < best:
                best, best_counts = key, (threes, twos, ones)
    threes, twos, ones = best_counts
    return by_value[3][:threes] + by_value[2][:twos] + by_value[1][:ones]


def assignment_patterns(quota: tuple[int, int, int]) -> list[tuple[int, ...]]:
    """All distinct ways to assign ``sum(quota)`` cards, in draw order, to slots 0/1/2 with these quotas."""
    return _PATTERNS.setdefault(quota, sorted(set(permutations([0] * quota[0] + [1] * quota[1] + [2] * quota[2]))))


_PATTERNS: dict[tuple[int, int, int], list[tuple[int, ...]]] = {}


def _logistic(z: float) -> float:
    if z < -30:
        return 0.0
    return 1.0 / (1.0 + math.exp(-1.7 * z))


class Assessment:
    """One seat's reading of the table at one decision (see the module docstring).

    Args:
        view: the seat's information set.
        sigma_base, sigma_scale: the spread of a category race is
            ``sigma_base + sigma_scale * sqrt(uncertain value * mean card value)``.
        rival_weight: ``r`` in the utility; ``None`` means ``1 / (num_players - 1)``.
        weights: per-category multipliers of the utility (a specialist values its focus more).
        tie_margin: how much the letter tie-break is worth, in category points.
    """

    def __init__(
        self,
        view: PlayerView,
        *,
        sigma_base: float = 1.3,
        sigma_scale: float = 1.7,
        rival_weight: float | None = None,
        weights: Sequence[float] | None = None,
        tie_margin: float = 0.4,
    ) -> None:
        self.view = view
        n = self.num_players = view.num_players
        self.rival_weight = 1.0 / (n - 1) if rival_weight is None else rival_weight
        self.weights = tuple(weights) if weights is not None else (1.0,) * NUM_CATEGORIES
        self.tie_margin = tie_margin
        self.dice = list(view.dice)

        hand = list(view.hand)
        if view.kept_card >= 0:
            hand.append(view.kept_card)
        self.hand = hand
        self.totals, self.letters = category_totals(hand)
        self.gold = sum(CARD_VALUE[card] for card in hand if IS_GOLD[card])

        seen = set(hand)
        seen.update(view.own_auction_cards, view.common_area, view.public_discard, view.own_face_down_discard)
        seen.update(view.payment_cards)
        for card in (view.auction_card, view.drawn_card, view.church_card):
            if card >= 0:
                seen.add(card)
        # Opponents' publicly known cards (relative seats 1..n-1), minus any that moved elsewhere.
        self.opponent_known: list[list[int]] = []
        for cards in view.opponent_cards:
            known = [card for card in cards if card not in seen]
            seen.update(known)
            self.opponent_known.append(known)
        self.unseen = [card for card in range(NUM_CARDS) if card not in seen]
        unseen_count = len(self.unseen)
        unseen_value = [0.0] * NUM_CATEGORIES
        for card in self.unseen:
            category = CARD_CATEGORY[card]
            if category >= 0:
                unseen_value[category] += CARD_VALUE[card]
        self.hidden_slots = [max(0, view.hand_sizes[o] - len(self.opponent_known[o - 1])) for o in range(1, n)]
        own_in_pile = len(view.own_auction_cards)
        to_come = view.draw_pile_size + max(0, view.auction_pile_size - own_in_pile)
        future_share = to_come / unseen_count if unseen_count else 0.0
        per_unseen = [value / unseen_count if unseen_count else 0.0 for value in unseen_value]
        self.unseen_mean_value = per_unseen

        future = [future_share * unseen_value[c] for c in _CATEGORIES]
        for card in (*view.common_area, *view.own_auction_cards):
            category = CARD_CATEGORY[card]
            if category >= 0:
                future[category] += CARD_VALUE[card]
        self.future = future
        hidden_total = sum(self.hidden_slots)
        self.opponent_totals: list[list[float]] = []
        self.opponent_letters: list[list[int]] = []
        for o, known in enumerate(self.opponent_known):
            totals, letters = category_totals(known)
            slots = self.hidden_slots[o]
            self.opponent_totals.append([totals[c] + slots * per_unseen[c] for c in _CATEGORIES])
            self.opponent_letters.append(letters)
        self.best_opponent_letter = [
            min((letters[c] for letters in self.opponent_letters), default=NO_LETTER) for c in _CATEGORIES
        ]
        self.best_opponent_total = [
            max((totals[c] for totals in self.opponent_totals), default=0.0) for c in _CATEGORIES
        ]
        self.sigma = [
            sigma_base
            + sigma_scale * math.sqrt(max(0.0, future[c] + hidden_total * per_unseen[c]) * MEAN_CARD_VALUE[c])
            for c in _CATEGORIES
        ]
        self.live = [
            1.0 if self.totals[c] > 0 or self.best_opponent_total[c] > 0 or future[c] > 0 else 0.0 for c in _CATEGORIES
        ]
        self.p_win = [self.win_probability(c, self.totals[c], self.letters[c]) for c in _CATEGORIES]

    # ------------------------------------------------------------------ races
    def win_probability(
        self, category: int, total: float, letter: int, opponent_best: float | None = None, opponent_letter: int = -1
    ) -> float:
        """Probability that the viewer wins ``category`` holding ``total`` (best letter ``letter``)
        against the best opponent estimate (or ``opponent_best`` / ``opponent_letter`` if given)."""
        best = self.best_opponent_total[category] if opponent_best is None else opponent_best
        best_letter = self.best_opponent_letter[category] if opponent_letter < 0 else opponent_letter
        if total <= 0:
            if best <= 0 and self.future[category] <= 0:
                return 0.0
            tie = -self.tie_margin
        else:
            tie = self.tie_margin if letter < best_letter else -self.tie_margin
        return _logistic((total - best + tie) / self.sigma[category])

    def category_scale(self, category: int) -> float:
        """Utility per unit of win probability in ``category``."""
        return self.weights[category] * self.dice[category] * (1.0 + self.rival_weight)

    def die_weight(self, category: int) -> float:
        """Utility of raising ``category``'s die by one: positive where the viewer leads."""
        return self.weights[category] * (
            (1.0 + self.rival_weight) * self.p_win[category] - self.rival_weight * self.live[category]
        )

    # ------------------------------------------------------------------ card values
    def gain(self, card: int, coin_value: float) -> float:
        """Utility for the viewer of receiving ``card`` (a church card: resolving it at best)."""
        category = CARD_CATEGORY[card]
        if category >= 0:
            letter = min(self.letters[category], CARD_LETTER[card])
            after = self.win_probability(category, self.totals[category] + CARD_VALUE[card], letter)
            return self.category_scale(category) * (after - self.p_win[category])
        if IS_GOLD[card]:
            return coin_value * CARD_VALUE[card]
        return max(0.0, self.church_best(card)[1])

    def loss(self, card: int, coin_value: float) -> float:
        """Utility the viewer loses by giving up ``card`` from hand (for payments and penalties)."""
        category = CARD_CATEGORY[card]
        if category >= 0:
            rest = [other for other in self.hand if other != card and CARD_CATEGORY[other] == category]
            total = sum(CARD_VALUE[other] for other in rest)
            letter = min((CARD_LETTER[other] for other in rest), default=NO_LETTER)
            after = self.win_probability(category, total, letter)
            return self.category_scale(category) * (self.p_win[category] - after)
        if IS_GOLD[card]:
            return coin_value * CARD_VALUE[card]
        return 0.0

    def harm(self, card: int, coin_value: float, opponent: int | None = None) -> float:
        """Utility the viewer loses if an opponent (relative seat ``opponent``, or the average
        opponent) receives ``card``."""
        category = CARD_CATEGORY[card]
        if category >= 0:
            seats = range(1, self.num_players) if opponent is None else (opponent,)
            value, card_letter = CARD_VALUE[card], CARD_LETTER[card]
            mine, letter, before = self.totals[category], self.letters[category], self.p_win[category]
            total_harm = 0.0
            for seat in seats:
                bumped = self.opponent_totals[seat - 1][category] + value
                best = max(self.best_opponent_total[category], bumped)
                best_letter = min(self.best_opponent_letter[category], card_letter)
                total_harm += before - self.win_probability(category, mine, letter, best, best_letter)
            return self.category_scale(category) * total_harm / len(seats)
        if IS_GOLD[card]:
            return self.rival_weight * coin_value * CARD_VALUE[card]
        # An opponent resolves a church card to suit themselves: roughly the viewer's worst option.
        return max(0.0, -min(self.option_value(deltas) for _, deltas in church_options(card, self.dice)))

    def option_value(self, deltas: Iterable[tuple[int, int]]) -> float:
        """Utility of a set of die changes."""
        return sum(delta * self.dice_change_weight(category) for category, delta in deltas)

    def dice_change_weight(self, category: int) -> float:
        return self.die_weight(category)

    def church_best(self, card: int) -> tuple[int, float]:
        """The viewer's best resolution of church ``card`` now: ``(action, utility)``."""
        best_action, best_value = CHURCH_DECLINE, 0.0
        for action, deltas in church_options(card, self.dice):
            value = self.option_value(deltas)
            if value > best_value + 1e-12:
                best_action, best_value = action, value
        return best_action, best_value



__all__ = [
    "MEAN_CARD_VALUE",
    "NO_LETTER",
    "Assessment",
    "assignment_patterns",
    "cheapest_cover",
    "church_action_deltas",
    "church_options",
]
