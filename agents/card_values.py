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
  letter tie-break) divided by a spread that shrinks as the category's future value runs out
  (:class:`RaceModel`: the one race model, shared with the rollout policy of the search,
  :mod:`agents.rollout_policy`).
* **Utility**: ``Σ_c weight_c · die_c · ((1 + r)·P_c − r·live_c)`` where ``r`` is the rival weight
  (1 in two players: every category won by an opponent counts against the viewer as much as one
  won counts for it; less with more players, where a VP lost goes to one of several rivals).

Card values are differences of that utility: ``gain`` (the viewer gets the card), ``harm`` (an
opponent gets it), and for church cards the best die change (:func:`best_church_option`, shared
with the rollout policy). Gold is valued by a coin value (utility per coin) that the agents supply.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from itertools import permutations
from typing import Final

from mypy_extensions import mypyc_attr

from biblios_env.actions import CHURCH_DECLINE, CHURCH_MOVES, DieChanges
from biblios_env.cards import (
    CARD_CATEGORY,
    CARD_CHURCH,
    CARD_LETTER,
    CARD_VALUE,
    CARDS_PER_CATEGORY,
    CATEGORY_IDS,
    IS_GOLD,
    NUM_CATEGORIES,
    gold_value,
)
from biblios_env.engine import church
from biblios_env.engine.scoring import NO_LETTER, category_totals
from biblios_env.engine.setup import setup_rules
from biblios_env.engine.views import PlayerView

#: Total card value per category (Monks and Pigments 25 over 9 cards, the others 11; RULES §1).
CATEGORY_TOTAL_VALUE: Final = tuple(
    sum(CARD_VALUE[card] for card in CATEGORY_IDS[CARDS_PER_CATEGORY * c : CARDS_PER_CATEGORY * (c + 1)])
    for c in range(NUM_CATEGORIES)
)
#: Mean card value per category.
MEAN_CARD_VALUE: Final = tuple(total / CARDS_PER_CATEGORY for total in CATEGORY_TOTAL_VALUE)

# ---------------------------------------------------------------------- the race model
# One model of a category race serves the heuristic agents (:class:`Assessment`, from a view)
# and the rollout policy of the search (``agents.rollout_policy.Race``, from a full state, and
# calibrated to the heuristic): its formulas and its defaults live here only.

#: Default spread of a race: ``SIGMA_BASE + SIGMA_SCALE * sqrt(uncertain value * mean card value)``.
SIGMA_BASE: Final = 1.3
SIGMA_SCALE: Final = 1.7
#: Default worth of the letter tie-break (RULES §6), in category points.
TIE_MARGIN: Final = 0.4
#: Slope of the logistic curve (1.7 brings it close to the normal distribution's).
_LOGISTIC_SLOPE: Final = 1.7
#: Standardised leads below which a race counts as lost outright (chance 0, no ``exp``): the
#: heuristics' and the rollout policy's cut-offs have always differed; both are kept so that
#: games stay exactly as they were.
HEURISTIC_ZERO_BELOW: Final = -30.0
ROLLOUT_ZERO_BELOW: Final = -20.0


def race_spreads(uncertain_values: list[float], sigma_base: float, sigma_scale: float) -> list[float]:
    """The spread of the race in each category, from the value that can still change hands
    in it (cards to come, hidden cards): the less is left, the more a lead counts."""
    return [
        sigma_base + sigma_scale * math.sqrt(max(0.0, value) * MEAN_CARD_VALUE[category])
        for category, value in enumerate(uncertain_values)
    ]


@mypyc_attr(allow_interpreted_subclasses=True)
class RaceModel:
    """The chance of winning a category race, as one model for the heuristics'
    :class:`Assessment` (built from a view) and the rollout policy's ``Race`` (from a full state).

    A subclass sets, per category, ``future`` (value still to come) and ``sigma`` (the spread,
    :func:`race_spreads`), and ``tie_margin`` (the worth of the letter tie-break, RULES §6, in
    category points); the class sets ``zero_below`` (see :data:`HEURISTIC_ZERO_BELOW`).
    """

    __slots__ = ()
    # Lists, not any sequence: a compiled build reads a list's items directly.
    future: list[float]
    sigma: list[float]
    tie_margin: float
    zero_below: float

    def win_chance(self, category: int, total: float, letter: int, best: float, best_letter: int) -> float:
        """The chance that a seat holding ``total`` (best letter ``letter``) wins ``category``
        against the best other holding ``best`` (best letter ``best_letter``): a logistic curve
        of the lead, plus or minus ``tie_margin`` for the letter tie-break, over the spread.

        A seat with nothing in the category wins it with chance 0 when nobody holds any of it
        and none of it is still to come: nobody wins an empty category (RULES §6).
        """
        if total <= 0:
            if best <= 0 and self.future[category] <= 0:
                return 0.0
            tie = -self.tie_margin
        else:
            tie = self.tie_margin if letter < best_letter else -self.tie_margin
        z = (total - best + tie) / self.sigma[category]
        if z < self.zero_below:
            return 0.0
        return 1.0 / (1.0 + math.exp(-_LOGISTIC_SLOPE * z))


# ---------------------------------------------------------------------- card helpers
#: The die changes of every church action, by church effect (from the action table).
_CHURCH_CHANGES: Final[dict[int, dict[int, DieChanges]]] = {
    int(effect): dict(moves) for effect, moves in CHURCH_MOVES.items()
}


def church_options(card: int, dice: Sequence[int]) -> list[tuple[int, DieChanges]]:
    """Every legal way to resolve church ``card`` with ``dice`` (RULES §4), ascending, as
    ``(action, ((category, delta), ...))``: declining first, then the engine's legal die changes."""
    changes = _CHURCH_CHANGES[CARD_CHURCH[card]]
    return [(action, changes[action]) for action in church.options(card, dice)]


def best_church_option(card: int, dice: Sequence[int], die_weights: list[float]) -> tuple[int, float]:
    """The best way to resolve church ``card`` with ``dice`` for a seat whose utility of raising
    each category's die by one is ``die_weights``: ``(action, utility)``, declining (utility 0)
    unless a die change is worth more. Both utility models (:class:`Assessment` and the rollout
    policy's ``Race``) choose their church moves here."""
    best_action, best_value = CHURCH_DECLINE, 0.0
    for action, deltas in church_options(card, dice):
        value = sum(delta * die_weights[category] for category, delta in deltas)
        if value > best_value + 1e-12:
            best_action, best_value = action, value
    return best_action, best_value


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


def assignment_patterns(quota: tuple[int, int, int]) -> list[tuple[int, ...]]:
    """All distinct ways to assign ``sum(quota)`` cards, in draw order, to slots 0/1/2 with these quotas."""
    return _PATTERNS.setdefault(quota, sorted(set(permutations([0] * quota[0] + [1] * quota[1] + [2] * quota[2]))))


_PATTERNS: dict[tuple[int, int, int], list[tuple[int, ...]]] = {}


def _own_cards(view: PlayerView) -> list[int]:
    """The viewer's hand, plus the card it kept this gift turn (not in the hand until the turn ends)."""
    hand = list(view.hand)
    if view.kept_card >= 0:
        hand.append(view.kept_card)
    return hand


def _cards_seen(view: PlayerView, hand: list[int]) -> tuple[set[int], list[list[int]]]:
    """Every card the viewer knows the place of (RULES §7), and per opponent (relative seats
    1..n-1) its publicly known cards, minus any that moved where the viewer saw them since."""
    seen = set(hand)
    seen.update(view.own_auction_cards, view.common_area, view.public_discard, view.own_face_down_discard)
    seen.update(view.payment_cards)
    for card in (view.auction_card, view.drawn_card, view.church_card):
        if card >= 0:
            seen.add(card)
    opponent_known: list[list[int]] = []
    for cards in view.opponent_cards:
        known = [card for card in cards if card not in seen]
        seen.update(known)
        opponent_known.append(known)
    return seen, opponent_known


def _unseen_and_future_values(view: PlayerView, unseen: list[int]) -> tuple[list[float], list[float]]:
    """Per category, the mean value per unseen card, and the *future* value: the share of the
    unseen value still to be handed out (draw pile, the others' auction-pile cards) plus the
    common area and the viewer's own auction-pile cards."""
    unseen_count = len(unseen)
    unseen_value = [0.0] * NUM_CATEGORIES
    for card in unseen:
        category = CARD_CATEGORY[card]
        if category >= 0:
            unseen_value[category] += CARD_VALUE[card]
    own_in_pile = len(view.own_auction_cards)
    to_come = view.draw_pile_size + max(0, view.auction_pile_size - own_in_pile)
    future_share = to_come / unseen_count if unseen_count else 0.0
    per_unseen = [value / unseen_count if unseen_count else 0.0 for value in unseen_value]
    future = [future_share * unseen_value[c] for c in range(NUM_CATEGORIES)]
    for card in (*view.common_area, *view.own_auction_cards):
        category = CARD_CATEGORY[card]
        if category >= 0:
            future[category] += CARD_VALUE[card]
    return per_unseen, future


class Assessment(RaceModel):
    """One seat's reading of the table at one decision (see the module docstring).

    Args:
        view: the seat's information set.
        sigma_base, sigma_scale: the spread of a category race is
            ``sigma_base + sigma_scale * sqrt(uncertain value * mean card value)``.
        rival_weight: ``r`` in the utility; ``None`` means ``1 / (num_players - 1)``.
        weights: per-category multipliers of the utility (a specialist values its focus more).
        tie_margin: how much the letter tie-break is worth, in category points.
    """

    zero_below = HEURISTIC_ZERO_BELOW

    def __init__(
        self,
        view: PlayerView,
        *,
        sigma_base: float = SIGMA_BASE,
        sigma_scale: float = SIGMA_SCALE,
        rival_weight: float | None = None,
        weights: Sequence[float] | None = None,
        tie_margin: float = TIE_MARGIN,
    ) -> None:
        n = self.num_players = view.num_players
        self.rival_weight = 1.0 / (n - 1) if rival_weight is None else rival_weight
        self.weights = tuple(weights) if weights is not None else (1.0,) * NUM_CATEGORIES
        self.tie_margin = tie_margin
        self.dice = list(view.dice)

        self.hand = hand = _own_cards(view)
        self.totals, self.letters = category_totals(hand)
        self.gold = gold_value(hand)

        seen, opponent_known = _cards_seen(view, hand)
        self.unseen = [card for card in setup_rules(view.preset, n).cards if card not in seen]
        per_unseen, self.future = _unseen_and_future_values(view, self.unseen)
        hidden_slots = [max(0, view.hand_sizes[o] - len(opponent_known[o - 1])) for o in range(1, n)]
        self._estimate_opponents(opponent_known, hidden_slots, per_unseen)
        hidden_total = sum(hidden_slots)
        uncertain = [self.future[c] + hidden_total * per_unseen[c] for c in range(NUM_CATEGORIES)]
        self.sigma = race_spreads(uncertain, sigma_base, sigma_scale)
        self.live = [
            1.0 if self.totals[c] > 0 or self.best_opponent_total[c] > 0 or self.future[c] > 0 else 0.0
            for c in range(NUM_CATEGORIES)
        ]
        self.p_win = [self.win_probability(c, self.totals[c], self.letters[c]) for c in range(NUM_CATEGORIES)]

    def _estimate_opponents(
        self, opponent_known: list[list[int]], hidden_slots: list[int], per_unseen: list[float]
    ) -> None:
        """Each opponent's estimated totals (its publicly known cards plus every hidden slot
        filled with the average unseen card), and the best estimate and letter per category."""
        self.opponent_totals: list[list[float]] = []
        opponent_letters: list[list[int]] = []
        for o, known in enumerate(opponent_known):
            totals, letters = category_totals(known)
            slots = hidden_slots[o]
            self.opponent_totals.append([totals[c] + slots * per_unseen[c] for c in range(NUM_CATEGORIES)])
            opponent_letters.append(letters)
        # The lowest letter and the highest total per category, as plain loops (min() and max()
        # with a default go through keyword parsing on a compiled build).
        self.best_opponent_letter = [NO_LETTER] * NUM_CATEGORIES
        self.best_opponent_total = [0.0] * NUM_CATEGORIES
        for c in range(NUM_CATEGORIES):
            for o in range(len(opponent_letters)):
                if o == 0 or opponent_letters[o][c] < self.best_opponent_letter[c]:
                    self.best_opponent_letter[c] = opponent_letters[o][c]
                if o == 0 or self.opponent_totals[o][c] > self.best_opponent_total[c]:
                    self.best_opponent_total[c] = self.opponent_totals[o][c]

    # ------------------------------------------------------------------ races
    def win_probability(
        self, category: int, total: float, letter: int, opponent_best: float | None = None, opponent_letter: int = -1
    ) -> float:
        """Probability that the viewer wins ``category`` holding ``total`` (best letter ``letter``)
        against the best opponent estimate (or ``opponent_best`` / ``opponent_letter`` if given)."""
        best = self.best_opponent_total[category] if opponent_best is None else opponent_best
        best_letter = self.best_opponent_letter[category] if opponent_letter < 0 else opponent_letter
        return self.win_chance(category, total, letter, best, best_letter)

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
        return max(0.0, self.best_church_option(card)[1])

    def loss(self, card: int, coin_value: float) -> float:
        """Utility the viewer loses by giving up ``card`` from hand (for payments and penalties)."""
        category = CARD_CATEGORY[card]
        if category >= 0:
            rest = [other for other in self.hand if other != card and CARD_CATEGORY[other] == category]
            total = sum(CARD_VALUE[other] for other in rest)
            letter = NO_LETTER  # the lowest letter left (min() with a default, as a loop)
            for index, other in enumerate(rest):
                if index == 0 or CARD_LETTER[other] < letter:
                    letter = CARD_LETTER[other]
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
            # The opponents asked about, as a range of relative seats (a plain loop compiles well).
            first, last = (1, self.num_players) if opponent is None else (opponent, opponent + 1)
            value, card_letter = CARD_VALUE[card], CARD_LETTER[card]
            mine, letter, before = self.totals[category], self.letters[category], self.p_win[category]
            total_harm = 0.0
            for seat in range(first, last):
                bumped = self.opponent_totals[seat - 1][category] + value
                best = max(self.best_opponent_total[category], bumped)
                best_letter = min(self.best_opponent_letter[category], card_letter)
                total_harm += before - self.win_probability(category, mine, letter, best, best_letter)
            return self.category_scale(category) * total_harm / (last - first)
        if IS_GOLD[card]:
            return self.rival_weight * coin_value * CARD_VALUE[card]
        # An opponent resolves a church card to suit themselves: roughly the viewer's worst option.
        return max(0.0, -min(self.option_value(deltas) for _, deltas in church_options(card, self.dice)))

    def option_value(self, deltas: Iterable[tuple[int, int]]) -> float:
        """Utility of a set of die changes."""
        return sum(delta * self.die_weight(category) for category, delta in deltas)

    def best_church_option(self, card: int) -> tuple[int, float]:
        """The viewer's best resolution of church ``card`` now: ``(action, utility)``
        (:func:`best_church_option` with its die weights)."""
        return best_church_option(card, self.dice, [self.die_weight(c) for c in range(NUM_CATEGORIES)])


__all__ = [
    "CATEGORY_TOTAL_VALUE",
    "HEURISTIC_ZERO_BELOW",
    "MEAN_CARD_VALUE",
    "ROLLOUT_ZERO_BELOW",
    "SIGMA_BASE",
    "SIGMA_SCALE",
    "TIE_MARGIN",
    "Assessment",
    "RaceModel",
    "assignment_patterns",
    "best_church_option",
    "cards_affordable",
    "church_options",
    "race_spreads",
]
