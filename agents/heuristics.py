"""Two heuristic agents with different strategies, built on the shared evaluation of
:mod:`agents.card_values`.

* :class:`ValueAgent` ("value") values every card by how much it raises its chance of winning
  each category, weighted by the dice, and bids up to that value in gold, pacing its gold over
  the auctions still to come.
* :class:`HoarderAgent` ("hoarder") specialises in a few categories, hoards gold during the
  gifts, saves its gold in the early auctions and spends it late and hard on its categories.

Both play every decision (RULES §3-§5): where to place a drawn card, what to take from the
common area, bids in gold (category and church cards) and in cards (gold cards), which cards to
pay with, when to refuse, and church dice. They read only their seat's :class:`PlayerView`.
"""

from __future__ import annotations

import math
import random
from typing import Any, ClassVar

from mypy_extensions import mypyc_attr

from agents.card_values import SIGMA_BASE, SIGMA_SCALE, TIE_MARGIN, Assessment, assignment_patterns, cards_affordable
from biblios_env.actions import (
    BID_BASE,
    CHURCH_DECLINE,
    PASS,
    PAY_BASE,
    REFUSE,
    TAKE_BASE,
)
from biblios_env.agent_interface import AgentObservation
from biblios_env.cards import CARD_CATEGORY, CARD_VALUE, IS_GOLD, NUM_CATEGORIES
from biblios_env.engine.auctions import cheapest_cover
from biblios_env.engine.flow import (
    DECISION_BID,
    DECISION_CHURCH,
    DECISION_PAY,
    DECISION_PLACE,
    DECISION_TAKE,
    PHASE_AUCTION,
)
from biblios_env.engine.setup import setup_rules
from biblios_env.engine.views import PlayerView


@mypyc_attr(allow_interpreted_subclasses=True)
class HeuristicAgent:
    """The decision procedures shared by the heuristic agents; subclasses set the strategy
    through their parameters and a few hooks (category weights, coin value, bid limits).

    Common parameters (keyword arguments of every subclass):
        gold_value: utility of one coin during the gift phase.
        auction_share: how much of a card's value the agent expects to keep when it puts the
            card on the auction pile (the rest goes to an opponent): the auction-pile slot is
            worth ``share * gain - (1 - share) * harm``.
        denial: weight of keeping a card from an opponent when bidding or taking
            (0 = only own gain counts).
        capture: fraction of the value of the cards still to be auctioned the agent expects
            to buy; sets how precious each coin is during the auctions.
        min_coin_value, max_coin_value: bounds of the coin value during the auctions.
        placement_samples: futures sampled to place a drawn card (hindsight optimisation
            over the rest of the gift turn).
        bluff: extra coins the agent may bid beyond what it can pay (0 = never bid more than
            it can pay; a higher value risks the penalty).
        sigma_base, sigma_scale, tie_margin, rival_weight: see :class:`Assessment`.
    """

    name = "heuristic"
    defaults: ClassVar[dict[str, Any]] = {
        "gold_value": 0.3,
        "auction_share": 0.45,
        "denial": 0.6,
        "capture": 0.5,
        "min_coin_value": 0.02,
        "max_coin_value": 2.0,
        "placement_samples": 12,
        "bluff": 0,
        "sigma_base": SIGMA_BASE,
        "sigma_scale": SIGMA_SCALE,
        "tie_margin": TIE_MARGIN,
        "rival_weight": None,
    }
    # The parameters, set from ``defaults`` and the keyword arguments by ``__init__``.
    gold_value: float
    auction_share: float
    denial: float
    capture: float
    min_coin_value: float
    max_coin_value: float
    placement_samples: int
    bluff: int
    sigma_base: float
    sigma_scale: float
    tie_margin: float
    rival_weight: float | None

    def __init__(self, **params: Any) -> None:
        unknown = sorted(set(params) - set(self.defaults))
        if unknown:
            raise ValueError(f"unknown parameter(s) {unknown} for agent {self.name!r}; known: {sorted(self.defaults)}")
        self.params: dict[str, Any] = {**self.defaults, **params}
        for key, value in self.params.items():
            setattr(self, key, value)
        self.seat = 0
        self.num_players = 2
        self.rng = random.Random(0)
        #: The coin value of the decision being made, with the assessment it was computed for.
        self._coin_value_of: tuple[Assessment, float] | None = None

    def __repr__(self) -> str:
        changed = {k: v for k, v in self.params.items() if self.defaults[k] != v}
        return f"{type(self).__name__}({', '.join(f'{k}={v!r}' for k, v in changed.items())})"

    # ------------------------------------------------------------------ Agent protocol
    def start_game(self, seat: int, num_players: int, seed: int | None = None) -> None:
        self.seat = seat
        self.num_players = num_players
        self.rng = random.Random(seed)

    def act(self, observation: AgentObservation) -> int:
        legal = observation.legal_actions
        if len(legal) == 1:
            return legal[0]
        view = observation.view
        assessment = self.assess(view)
        decision = view.decision
        if decision == DECISION_PLACE:
            return self.choose_placement(view, assessment, legal)
        if decision == DECISION_TAKE:
            return self.choose_take(view, assessment, legal)
        if decision == DECISION_BID:
            return self.choose_bid(view, assessment, legal)
        if decision == DECISION_PAY:
            return self.choose_payment(view, assessment, legal)
        if decision == DECISION_CHURCH:
            return self.choose_church(view, assessment, legal)
        raise ValueError(f"{self.name} agent asked to act at decision {decision!r} with legal actions {legal[:6]}")

    # ------------------------------------------------------------------ hooks
    def category_weights(self, view: PlayerView) -> tuple[float, ...] | None:
        """Per-category utility multipliers (``None``: all equal)."""
        return None

    def assess(self, view: PlayerView) -> Assessment:
        return Assessment(
            view,
            sigma_base=self.sigma_base,
            sigma_scale=self.sigma_scale,
            rival_weight=self.rival_weight,
            weights=self.category_weights(view),
            tie_margin=self.tie_margin,
        )

    def coin_value(self, view: PlayerView, assessment: Assessment) -> float:
        """Utility of one coin now: fixed in the gift phase; during the auctions, the value of
        what is left to buy shared over the gold in hand (gold is worth little once little is left)."""
        cached = self._coin_value_of
        if cached is not None and cached[0] is assessment:
            return cached[1]
        value = self.gold_value if view.phase != PHASE_AUCTION else self.auction_coin_value(view, assessment)
        self._coin_value_of = (assessment, value)
        return value

    def auction_coin_value(self, view: PlayerView, assessment: Assessment) -> float:
        gold = assessment.gold
        remaining = self.remaining_auction_value(view, assessment)
        value = self.capture * remaining / max(gold, 1)
        return min(self.max_coin_value, max(self.min_coin_value, value))

    def remaining_auction_value(self, view: PlayerView, assessment: Assessment) -> float:
        """Expected gold-buyable value of the cards still on the auction pile (after the current one)."""
        own = view.own_auction_cards
        unknown = max(0, view.auction_pile_size - len(own))
        total = sum(self.purchase_value(assessment, card, self.gold_value) for card in own if not IS_GOLD[card])
        if unknown and assessment.unseen:
            pool = [card for card in assessment.unseen if not IS_GOLD[card]]
            if pool:
                mean = sum(self.purchase_value(assessment, card, self.gold_value) for card in pool) / len(
                    assessment.unseen
                )
                total += unknown * mean
        return total

    def purchase_value(self, assessment: Assessment, card: int, coin_value: float) -> float:
        """What winning ``card`` at auction is worth: own gain plus denial of the strongest rival."""
        harm = 0.0
        for opponent in range(1, assessment.num_players):
            opponent_harm = assessment.harm(card, coin_value, opponent)
            if opponent == 1 or opponent_harm > harm:  # max() over the opponents, as a loop
                harm = opponent_harm
        return assessment.gain(card, coin_value) + self.denial * harm

    def slot_values(self, view: PlayerView, assessment: Assessment, card: int) -> tuple[float, float, float]:
        """Utility of putting ``card`` in keep / auction pile / common area."""
        coin = self.coin_value(view, assessment)
        gain = assessment.gain(card, coin)
        harm = assessment.harm(card, coin)
        share = self.auction_share
        return gain, share * gain - (1.0 - share) * harm, -harm

    def bid_limit(self, view: PlayerView, assessment: Assessment) -> int:
        """The highest bid the agent is willing to make on the card under auction."""
        card = view.auction_card
        coin = self.coin_value(view, assessment)
        if IS_GOLD[card]:
            costs = (assessment.loss(other, coin) for other in assessment.hand)
            return cards_affordable(assessment.gain(card, coin), costs)
        value = self.purchase_value(assessment, card, coin)
        if value <= 0:
            return 0
        limit = math.floor(value / max(coin, 1e-9) + 1e-9)
        return min(limit, assessment.gold + self.bluff)

    # ------------------------------------------------------------------ decisions
    def choose_placement(self, view: PlayerView, assessment: Assessment, legal: list[int]) -> int:
        """Place the drawn card by hindsight optimisation: for each open slot, the card's value
        there plus the best assignment of sampled future draws to the slots left (RULES §3)."""
        card = view.drawn_card
        values_cache: dict[int, tuple[float, float, float]] = {}

        def values(other: int) -> tuple[float, float, float]:
            found = values_cache.get(other)
            if found is None:
                found = values_cache[other] = self.slot_values(view, assessment, other)
            return found

        own = values(card)
        quota = tuple(view.quota)
        still = sum(quota) - 1
        if still <= 0:
            return max(legal, key=lambda slot: own[slot])
        pool = assessment.unseen
        samples = [self.rng.sample(pool, min(still, len(pool))) for _ in range(self.placement_samples)] if pool else []
        best_slot, best_score = legal[0], -math.inf
        for slot in legal:
            rest = list(quota)
            rest[slot] -= 1
            patterns = assignment_patterns((rest[0], rest[1], rest[2]))
            future = 0.0
            for sample in samples:
                future += _best_assignment([values(other) for other in sample], patterns)
            score = own[slot] + (future / len(samples) if samples else 0.0)
            if score > best_score + 1e-12:
                best_slot, best_score = slot, score
        return best_slot

    def choose_take(self, view: PlayerView, assessment: Assessment, legal: list[int]) -> int:
        """Take the common-area card worth most to us, counting what it keeps from the others."""
        coin = self.coin_value(view, assessment)

        def score(action: int) -> float:
            card = action - TAKE_BASE
            return assessment.gain(card, coin) + self.denial * assessment.harm(card, coin)

        return max(legal, key=score)

    def choose_bid(self, view: PlayerView, assessment: Assessment, legal: list[int]) -> int:
        """Ascending auction: raise by one while the price stays within our limit, else pass."""
        limit = self.bid_limit(view, assessment)
        wanted = view.high_bid + 1
        if wanted <= limit and BID_BASE + wanted in legal:
            return BID_BASE + wanted
        return PASS

    def choose_payment(self, view: PlayerView, assessment: Assessment, legal: list[int]) -> int:
        """Pay with the cheapest cover (gold) or the least useful cards (gold-card auctions);
        refuse only when paying costs more than the card and the penalty together."""
        card = view.auction_card
        coin = self.coin_value(view, assessment)
        payable = [action - PAY_BASE for action in legal if action != REFUSE]
        if not payable:
            return REFUSE
        value = self.purchase_value(assessment, card, coin)
        if IS_GOLD[card]:
            need = view.high_bid - view.payment_count
            ranked = sorted(payable, key=lambda other: (assessment.loss(other, coin), -other))
            cost = sum(assessment.loss(other, coin) for other in ranked[:need])
            choice = ranked[0]
        else:
            need = view.high_bid - view.payment_value
            cover = cheapest_cover(payable, need)
            cost = coin * (view.payment_value + sum(CARD_VALUE[other] for other in cover))
            choice = cover[0]
        if REFUSE in legal and cost - value > self.penalty_cost(view, assessment, coin):
            return REFUSE
        return PAY_BASE + choice

    def penalty_cost(self, view: PlayerView, assessment: Assessment, coin: float) -> float:
        """Expected utility lost by refusing to pay (RULES §5, Penalty): one random card from hand
        to each other player in the standard rule. The "medieval bluffs" variant (one card of the
        hand discarded face down, a uniformly random one: the chooser on the defaulter's left
        cannot see the cards) is shown in the view (``view.bluffs``) but not modelled: the agent
        always counts the standard penalty, the costlier of the two."""
        hand = assessment.hand + list(view.payment_cards)
        if not hand:
            return 0.0
        per_card = sum(assessment.loss(card, coin) + assessment.harm(card, coin) for card in hand) / len(hand)
        return per_card * min(len(hand), view.num_players - 1)

    def choose_church(self, view: PlayerView, assessment: Assessment, legal: list[int]) -> int:
        """Raise the dice of categories we are likely to win, lower the others' (RULES §4)."""
        action, _ = assessment.best_church_option(view.church_card)
        return action if action in legal else CHURCH_DECLINE


def _best_assignment(rows: list[tuple[float, float, float]], patterns: list[tuple[int, ...]]) -> float:
    """The best total over ``patterns`` of the values of ``rows`` (one row per card, in draw order)
    in the slots a pattern gives them: ``max(sum(...))``, written as plain loops that add in the
    same order (a compiled build calls ``max`` and ``zip`` through keyword parsing)."""
    best = 0.0
    for index, pattern in enumerate(patterns):
        total = 0.0
        for position in range(min(len(rows), len(pattern))):
            total += rows[position][pattern[position]]
        if index == 0 or total > best:
            best = total
    return best


@mypyc_attr(allow_interpreted_subclasses=True)
class ValueAgent(HeuristicAgent):
    """Values every card by how much it raises the chance of winning each category, weighted by
    the dice, and bids up to that value in gold.

    Strategy: every category is worth its die times the change in win probability (own totals
    against the publicly known holdings of the opponents, their hidden cards filled with the
    average unseen card, the letters for ties). In the gift phase it keeps the most valuable
    card, gives the common area what helps the opponents least and puts on the auction pile
    what it would like to buy, by hindsight optimisation over sampled draws. In the auctions it
    paces its gold: a coin is worth the value still to come divided by the gold in hand, so it
    bids up to ``value / coin value`` (never more than it can pay), and more freely as the
    auction pile runs out. Gold cards are bought with its least useful cards.

    Parameters: see :class:`HeuristicAgent` (defaults in ``ValueAgent.defaults``).
    """

    name = "value"


@mypyc_attr(allow_interpreted_subclasses=True)
class HoarderAgent(HeuristicAgent):
    """A specialist: picks a few categories, hoards gold in the gifts and spends it late and
    hard on the cards of its categories.

    Strategy: the ``focus`` categories with the best prospects (die times win chance, with a
    bonus for the current focus so it does not flip-flop) get the weight ``focus_weight``, the
    others ``off_focus_weight``. Gold is worth ``gold_value`` (higher than the value agent) in
    the gift phase, so it keeps and takes gold; cards of its focus go on the auction pile more
    readily (``focus_auction_share``), since it expects to buy them back. In the auctions it is
    patient: early on a coin is worth ``patience`` times more, falling to the plain pacing value
    as the pile runs out, and on focus cards it bids up to ``aggression`` times its value.

    Parameters (besides those of :class:`HeuristicAgent`):
        focus: number of categories it specialises in.
        focus_weight, off_focus_weight: utility multipliers of focus and other categories.
        focus_bonus: hysteresis: bonus in the focus score for categories already in focus.
        focus_auction_share: auction-pile share for focus cards (see ``auction_share``).
        patience: coin value multiplier at the first auction (decays linearly to 1).
        aggression: bid-limit multiplier on focus cards.
    """

    name = "hoarder"
    defaults: ClassVar[dict[str, Any]] = {
        **HeuristicAgent.defaults,
        "gold_value": 0.4,
        "denial": 0.4,
        "focus": 2,
        "focus_weight": 1.5,
        "off_focus_weight": 0.5,
        "focus_bonus": 0.5,
        "focus_auction_share": 0.65,
        "patience": 1.3,
        "aggression": 1.3,
    }

    # The parameters besides the common ones (set by ``HeuristicAgent.__init__``).
    focus: int
    focus_weight: float
    off_focus_weight: float
    focus_bonus: float
    focus_auction_share: float
    patience: float
    aggression: float
    #: The categories in focus at the last decision (sticky: see ``focus_bonus``).
    _focus: tuple[int, ...] = ()

    def start_game(self, seat: int, num_players: int, seed: int | None = None) -> None:
        super().start_game(seat, num_players, seed)
        self._focus = ()

    def focus_categories(self, view: PlayerView) -> tuple[int, ...]:
        """The categories it specialises in: best die × win-chance prospects, sticky."""
        plain = Assessment(view, sigma_base=self.sigma_base, sigma_scale=self.sigma_scale, tie_margin=self.tie_margin)
        current = self._focus
        scores = [
            view.dice[c] * (0.5 + plain.p_win[c]) + (self.focus_bonus if c in current else 0.0)
            for c in range(NUM_CATEGORIES)
        ]
        focus = tuple(sorted(sorted(range(NUM_CATEGORIES), key=lambda c: -scores[c])[: self.focus]))
        self._focus = focus
        return focus

    def category_weights(self, view: PlayerView) -> tuple[float, ...]:
        focus = self.focus_categories(view)
        return tuple(self.focus_weight if c in focus else self.off_focus_weight for c in range(NUM_CATEGORIES))

    def slot_values(self, view: PlayerView, assessment: Assessment, card: int) -> tuple[float, float, float]:
        coin = self.coin_value(view, assessment)
        gain = assessment.gain(card, coin)
        harm = assessment.harm(card, coin)
        category = CARD_CATEGORY[card]
        in_focus = category >= 0 and assessment.weights[category] == self.focus_weight
        share = self.focus_auction_share if in_focus else self.auction_share
        return gain, share * gain - (1.0 - share) * harm, -harm

    def auction_coin_value(self, view: PlayerView, assessment: Assessment) -> float:
        base = super().auction_coin_value(view, assessment)
        total = setup_rules(view.preset, view.num_players).gift_turns  # also the number of cards auctioned
        progress = 1.0 - min(1.0, view.auction_pile_size / max(total - 1, 1))
        return base * (self.patience + (1.0 - self.patience) * progress)

    def bid_limit(self, view: PlayerView, assessment: Assessment) -> int:
        limit = super().bid_limit(view, assessment)
        card = view.auction_card
        category = CARD_CATEGORY[card]
        if category >= 0 and assessment.weights[category] == self.focus_weight:
            limit = min(assessment.gold + self.bluff, math.floor(limit * self.aggression))
        return limit


__all__ = ["HeuristicAgent", "HoarderAgent", "ValueAgent"]
