"""The fast full-information policy that plays every seat inside the search's simulations.

:class:`RolloutPolicy` chooses an action for whoever is to act in a complete (determinized)
state, stepping the raw rules functions with no :class:`~biblios_env.engine.Game` and no player
views: the search agents (:mod:`agents.search`) run millions of its decisions, so it is a cheap
cousin of the ``value`` heuristic (:mod:`agents.card_values`) reading the whole state.
:class:`Race` holds one position's category races (every seat's totals, letters and spreads).
"""

from __future__ import annotations

import functools
import math
import random
from collections.abc import Callable

from agents.card_values import (
    CATEGORY_TOTAL_VALUE,
    ROLLOUT_ZERO_BELOW,
    SIGMA_BASE,
    SIGMA_SCALE,
    TIE_MARGIN,
    RaceModel,
    assignment_patterns,
    best_church_option,
    cards_affordable,
    race_spreads,
)
from biblios_env.actions import BID_BASE, MAX_BID, PASS, PAY_BASE, REFUSE, TAKE_BASE
from biblios_env.cards import CARD_CATEGORY, CARD_LETTER, CARD_VALUE, GOLD_IDS_BY_VALUE, IS_GOLD, NUM_CATEGORIES
from biblios_env.engine import rules
from biblios_env.engine.auctions import cheapest_cover
from biblios_env.engine.flow import (
    DECISION_BID,
    DECISION_CHURCH,
    DECISION_NONE,
    DECISION_PAY,
    DECISION_PLACE,
    DECISION_TAKE,
    PHASE_AUCTION,
    PHASE_GIFT,
)
from biblios_env.engine.scoring import NO_LETTER
from biblios_env.engine.state import NO_CARD, State


class Race(RaceModel):
    """Category totals, letters and spreads of one position (full information)."""

    __slots__ = ("dice", "future", "letters", "num_players", "rival_weight", "sigma", "tie_margin", "totals")
    zero_below = ROLLOUT_ZERO_BELOW

    def __init__(self, state: State, sigma_base: float, sigma_scale: float, tie_margin: float, dead: list[int]) -> None:
        n = self.num_players = state.num_players
        totals = [[0] * NUM_CATEGORIES for _ in range(n)]
        letters = [[NO_LETTER] * NUM_CATEGORIES for _ in range(n)]
        in_hands = [0] * NUM_CATEGORIES
        for seat, hand in enumerate(state.hands):
            seat_totals, seat_letters = totals[seat], letters[seat]
            for card in hand:
                category = CARD_CATEGORY[card]
                if category >= 0:
                    value = CARD_VALUE[card]
                    seat_totals[category] += value
                    in_hands[category] += value
                    if CARD_LETTER[card] < seat_letters[category]:
                        seat_letters[category] = CARD_LETTER[card]
        kept = state.kept_card
        if kept != NO_CARD and CARD_CATEGORY[kept] >= 0:
            category = CARD_CATEGORY[kept]
            totals[state.active_player][category] += CARD_VALUE[kept]
            in_hands[category] += CARD_VALUE[kept]
            if CARD_LETTER[kept] < letters[state.active_player][category]:
                letters[state.active_player][category] = CARD_LETTER[kept]
        self.totals, self.letters = totals, letters
        self.future = future = [float(CATEGORY_TOTAL_VALUE[c] - in_hands[c] - dead[c]) for c in range(NUM_CATEGORIES)]
        self.sigma = race_spreads(future, sigma_base, sigma_scale)
        self.dice = state.dice
        self.rival_weight = 1.0 / (n - 1)
        self.tie_margin = tie_margin

    def best_other(self, seat: int, category: int) -> tuple[int, int]:
        """The best total and best letter among the other seats in ``category``."""
        best, letter = 0, NO_LETTER
        for other in range(self.num_players):
            if other != seat:
                total = self.totals[other][category]
                if total > best:
                    best = total
                other_letter = self.letters[other][category]
                if other_letter < letter:
                    letter = other_letter
        return best, letter

    def category_scale(self, category: int) -> float:
        """Utility per unit of win probability in ``category``."""
        return self.dice[category] * (1.0 + self.rival_weight)

    def gain(self, seat: int, card: int) -> float:
        """Utility for ``seat`` of receiving category card ``card``."""
        category = CARD_CATEGORY[card]
        total, letter = self.totals[seat][category], self.letters[seat][category]
        best, best_letter = self.best_other(seat, category)
        before = self.win_chance(category, total, letter, best, best_letter)
        after = self.win_chance(category, total + CARD_VALUE[card], min(letter, CARD_LETTER[card]), best, best_letter)
        return self.category_scale(category) * (after - before)

    def harm(self, seat: int, card: int) -> float:
        """Utility ``seat`` loses when the strongest-hit opponent receives category card ``card``."""
        category = CARD_CATEGORY[card]
        total, letter = self.totals[seat][category], self.letters[seat][category]
        best, best_letter = self.best_other(seat, category)
        before = self.win_chance(category, total, letter, best, best_letter)
        worst = before
        value, card_letter = CARD_VALUE[card], CARD_LETTER[card]
        for other in range(self.num_players):
            if other != seat:
                bumped = self.totals[other][category] + value
                after = self.win_chance(category, total, letter, max(best, bumped), min(best_letter, card_letter))
                if after < worst:
                    worst = after
        return self.category_scale(category) * (before - worst)

    def hand_costs(self, seat: int, hand: list[int], coin: float) -> list[float]:
        """What ``seat`` loses by giving up each card of ``hand``, in hand order: :meth:`loss` for
        a category card, its coins for a gold card, nothing for a church card.

        The same numbers as calling :meth:`loss` card by card, computed once per category (a
        payment for a gold card ranks the whole hand at every pick, so this is a hot path).
        """
        # Per category: the best letter in hand, the card holding it, the second best letter, and
        # (once asked for) the chance of winning before giving a card up with the best other.
        first = [NO_LETTER] * NUM_CATEGORIES
        holder = [-1] * NUM_CATEGORIES
        second = [NO_LETTER] * NUM_CATEGORIES
        for card in hand:
            category = CARD_CATEGORY[card]
            if category >= 0:
                letter = CARD_LETTER[card]
                if letter < first[category]:
                    second[category] = first[category]
                    first[category], holder[category] = letter, card
                elif letter < second[category]:
                    second[category] = letter
        p_before = [-1.0] * NUM_CATEGORIES
        best_total = [0] * NUM_CATEGORIES
        best_letters = [NO_LETTER] * NUM_CATEGORIES
        totals = self.totals[seat]
        costs = []
        for card in hand:
            category = CARD_CATEGORY[card]
            if category < 0:
                costs.append(coin * CARD_VALUE[card] if IS_GOLD[card] else 0.0)
                continue
            total = totals[category]
            if p_before[category] < 0.0:
                best, best_letter = self.best_other(seat, category)
                best_total[category], best_letters[category] = best, best_letter
                p_before[category] = self.win_chance(category, total, self.letters[seat][category], best, best_letter)
            rest_letter = second[category] if card == holder[category] else first[category]
            after = self.win_chance(
                category, total - CARD_VALUE[card], rest_letter, best_total[category], best_letters[category]
            )
            costs.append(self.category_scale(category) * (p_before[category] - after))
        return costs

    def die_weight(self, seat: int, category: int) -> float:
        """Utility for ``seat`` of raising ``category``'s die by one."""
        total = self.totals[seat][category]
        best, best_letter = self.best_other(seat, category)
        p = self.win_chance(category, total, self.letters[seat][category], best, best_letter)
        live = 1.0 if total > 0 or best > 0 or self.future[category] > 0 else 0.0
        return (1.0 + self.rival_weight) * p - self.rival_weight * live

    def best_church_option(self, seat: int, card: int) -> tuple[int, float]:
        """``seat``'s best resolution of church ``card`` now: ``(action, utility)``
        (:func:`~agents.card_values.best_church_option` with its die weights)."""
        weights = [self.die_weight(seat, c) for c in range(NUM_CATEGORIES)]
        return best_church_option(card, self.dice, weights)


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
        sigma_base: float = SIGMA_BASE,
        sigma_scale: float = SIGMA_SCALE,
        tie_margin: float = TIE_MARGIN,
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
        self._race: Race | None = None
        self._race_key: tuple[int, ...] | None = None
        self._bid_limits: dict[tuple[int, int, int, int], int] = {}
        #: The rest of the current gift turn's placement plan: ((drawn card, draw pile size,
        #: active seat), slot) for each card still to come, in draw order.
        self._planned: list[tuple[tuple[int, int, int], int]] = []
        #: In a rollout: the category value out of the game, and the discards counted in it.
        self._dead: list[int] = []
        self._discarded = 0

    def spawn(self, rng: random.Random) -> RolloutPolicy:
        """A policy with this one's parameters, fresh caches and its own stream ``rng``: one per
        rollout when several are stepped in turn, since the caches belong to one rollout."""
        return RolloutPolicy(
            sigma_base=self.sigma_base,
            sigma_scale=self.sigma_scale,
            tie_margin=self.tie_margin,
            gold_value=self.gold_value,
            capture=self.capture,
            min_coin_value=self.min_coin_value,
            max_coin_value=self.max_coin_value,
            auction_share=self.auction_share,
            denial=self.denial,
            church_value=self.church_value,
            bid_noise=self.bid_noise,
            coin_vp=self.coin_vp,
            rng=rng,
        )

    # ------------------------------------------------------------------ helpers
    @staticmethod
    def dead_values(state: State) -> list[int]:
        """Category value out of the game for good: removed and discarded cards."""
        dead = [0] * NUM_CATEGORIES
        for pile in (state.removed, state.discard):
            for card in pile:
                category = CARD_CATEGORY[card]
                if category >= 0:
                    dead[category] += CARD_VALUE[card]
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
        if state.phase != PHASE_AUCTION:
            return self.gold_value
        gold = 0
        for card in state.hands[seat]:
            if IS_GOLD[card]:
                gold += CARD_VALUE[card]
        value = self.capture * (len(state.auction_pile) + 1) / max(gold, 1)
        return min(self.max_coin_value, max(self.min_coin_value, value))

    def gain(self, race: Race, seat: int, card: int, coin: float) -> float:
        if CARD_CATEGORY[card] >= 0:
            return race.gain(seat, card)
        if IS_GOLD[card]:
            return coin * CARD_VALUE[card]
        return max(0.0, race.best_church_option(seat, card)[1])

    def harm(self, race: Race, seat: int, card: int, coin: float) -> float:
        if CARD_CATEGORY[card] >= 0:
            return race.harm(seat, card)
        if IS_GOLD[card]:
            return race.rival_weight * coin * CARD_VALUE[card]
        return 0.5 * self.church_value

    def payment_card(self, state: State, race: Race | None = None) -> int:
        """The next payment card, or -1 when the payment cannot be completed: for a gold card
        the least useful card in hand, else the highest coin of the cheapest cover (RULES §5)."""
        if IS_GOLD[state.auction_card]:
            return self.least_useful_card(state, race)
        return _next_gold(state)

    def least_useful_card(self, state: State, race: Race | None = None) -> int:
        """The card whose loss costs the payer least (the first of equals in hand order), or -1
        when the hand is too small to pay for the gold card under auction with cards."""
        seat = state.current_player
        hand = state.hands[seat]
        if len(hand) < state.high_bid - len(state.payment):
            return -1
        if race is None:
            race = self.race(state)
        best, choice = math.inf, -1
        costs = race.hand_costs(seat, hand, self.coin_value(state, seat))
        for index, card in enumerate(hand):
            if costs[index] < best:
                best, choice = costs[index], card
        return choice

    # ------------------------------------------------------------------ the policy
    def action(self, state: State, dead: list[int] | None = None) -> int:
        """The policy's action at the current decision (never REFUSE unless it cannot pay)."""
        decision = state.decision
        if decision == DECISION_BID:
            key = (len(state.auction_pile), state.auction_card, state.current_player, state.excluded.count(True))
            limit = self._bid_limits.get(key)
            if limit is None:
                limit = self._bid_limits[key] = self.bid_limit(state, self.cached_race(state, dead))
            wanted = state.high_bid + 1
            return BID_BASE + wanted if wanted <= limit else PASS
        if decision == DECISION_PLACE:
            planned = self._planned
            if planned and planned[0][0] == (state.drawn_card, len(state.draw_pile), state.active_player):
                slot = planned[0][1]
                if state.quota[slot]:
                    del planned[0]
                    return slot
            return self.place(state, self.cached_race(state, dead))
        if decision == DECISION_TAKE:
            race = self.cached_race(state, dead)
            seat = state.current_player
            coin = self.coin_value(state, seat)
            best, choice = -math.inf, state.common_area[0]
            for card in state.common_area:
                value = self.gain(race, seat, card, coin) + self.denial * self.harm(race, seat, card, coin)
                if value > best:
                    best, choice = value, card
            return TAKE_BASE + choice
        if decision == DECISION_PAY:
            card = self.payment_card(state, None if not IS_GOLD[state.auction_card] else self.cached_race(state, dead))
            return REFUSE if card < 0 else PAY_BASE + card
        if decision == DECISION_CHURCH:
            race = self.cached_race(state, dead)
            return race.best_church_option(state.current_player, state.church_card)[0]
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
        self._race = None
        self._race_key = None
        self._bid_limits = {}
        self._planned = []

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
            gain = self.gain(race, seat, card, coin)
            harm = self.harm(race, seat, card, coin)
            rows.append((gain, share * gain - (1.0 - share) * harm, -harm))
        best = -math.inf
        best_pattern: tuple[int, ...] = (0,)
        for pattern in assignment_patterns((quota[0], quota[1], quota[2])):
            value = 0.0
            for position in range(min(len(rows), len(pattern))):  # zip(), without its keyword parsing
                value += rows[position][pattern[position]]
            if value > best:
                best, best_pattern = value, pattern
        # Remember the rest of the plan: the next cards of this turn are known in a rollout.
        self._planned = [((cards[i], len(pile) - i, seat), best_pattern[i]) for i in range(1, len(cards))]
        return best_pattern[0]

    def bid_limit(self, state: State, race: Race) -> int:
        seat = state.current_player
        card = state.auction_card
        hand = state.hands[seat]
        coin = self.coin_value(state, seat)
        noise = 1.0 - self.bid_noise + 2.0 * self.bid_noise * self.rng.random() if self.bid_noise else 1.0
        if IS_GOLD[card]:
            costs = race.hand_costs(seat, hand, coin)
            return min(cards_affordable(self.gain(race, seat, card, coin) * noise, costs), MAX_BID)
        value = (self.gain(race, seat, card, coin) + self.denial * self.harm(race, seat, card, coin)) * noise
        if value <= 0:
            return 0
        gold = 0
        for other in hand:
            if IS_GOLD[other]:
                gold += CARD_VALUE[other]
        return min(int(value / coin), gold, MAX_BID)

    def rollout(self, state: State, horizon: int | None = None) -> int:
        """Play the state on with the policy (:func:`play_on`: to the end, or until ``horizon``
        gift turns or auctions have ended); returns the number of decisions applied."""
        self.begin(state)
        return play_on(state, horizon, self._rollout_action)

    def begin(self, state: State) -> None:
        """Start following a rollout from ``state``: forget the caches and count the cards out of
        the game so far (:meth:`rollout` does this itself; :meth:`play_until` needs it first)."""
        self.reset()
        self._dead = self.dead_values(state)
        self._discarded = len(state.discard)

    def play_until(self, state: State, seat: int) -> int:
        """Play the policy in a rollout begun with :meth:`begin` until ``seat`` is to act or the
        game ends; returns the decisions applied. Someone else plays that seat's decisions
        (the search's network rollouts), and the cards they discard count here as they do in
        :meth:`rollout`."""
        steps = 0
        while state.decision != DECISION_NONE and state.current_player != seat:
            rules.apply(state, self._rollout_action(state))
            steps += 1
        return steps

    def _rollout_action(self, state: State) -> int:
        """The policy's action at the next decision of a :meth:`rollout`: the cards discarded
        since the last one first count as out of the game (the races' value still to come)."""
        discard = state.discard
        if len(discard) != self._discarded:
            for card in discard[self._discarded :]:
                if CARD_CATEGORY[card] >= 0:
                    self._dead[CARD_CATEGORY[card]] += CARD_VALUE[card]
            self._discarded = len(discard)
        return self.action(state, self._dead)

    def evaluate(self, state: State, temperature: float = 2.0) -> list[float]:
        """Per seat, a win chance in [0, 1] from the expected VP lead: the dice of the
        categories weighted by each seat's chance to win them, plus its gold at a coin value
        in VP (the VP still to buy at auction, shared over all the gold in hands)."""
        if state.decision == DECISION_NONE:
            winners = state.winners
            return [1.0 / len(winners) if seat in winners else 0.0 for seat in range(state.num_players)]
        race = self.race(state)
        n = state.num_players
        golds = [0] * n
        for seat, hand in enumerate(state.hands):
            for card in hand:
                if IS_GOLD[card]:
                    golds[seat] += CARD_VALUE[card]
        total_gold = sum(golds)
        future = sum(race.future[c] / CATEGORY_TOTAL_VALUE[c] * state.dice[c] for c in range(NUM_CATEGORIES))
        coin_vp = self.coin_vp * future / max(total_gold, 1)
        expected = []
        for seat in range(n):
            vp = coin_vp * golds[seat]
            for category in range(NUM_CATEGORIES):
                best, best_letter = race.best_other(seat, category)
                vp += state.dice[category] * race.win_chance(
                    category, race.totals[seat][category], race.letters[seat][category], best, best_letter
                )
            expected.append(vp)
        values = []
        for seat in range(n):
            lead = expected[seat] - max(expected[other] for other in range(n) if other != seat)
            values.append(0.5 + 0.5 * math.tanh(lead / temperature))
        return values


def _next_gold(state: State) -> int:
    """The next gold card of the payer's cheapest cover of what is still owed (RULES §5: no
    change is given): a card of the cover's highest coin, the first in hand; -1 when the gold in
    hand cannot cover it."""
    hand = state.hands[state.current_player]
    counts = [0, 0, 0, 0]  # gold cards in hand by coin value
    for card in hand:
        if IS_GOLD[card]:
            counts[CARD_VALUE[card]] += 1
    owed = state.high_bid - state.payment_value
    if counts[1] + 2 * counts[2] + 3 * counts[3] < owed:
        return -1
    coin = _highest_coin_of_cover(counts[1], counts[2], counts[3], owed)
    return next(card for card in hand if IS_GOLD[card] and CARD_VALUE[card] == coin)


@functools.cache
def _highest_coin_of_cover(ones: int, twos: int, threes: int, owed: int) -> int:
    """The highest coin value in the engine's cheapest cover of ``owed``
    (:func:`~biblios_env.engine.auctions.cheapest_cover`: overpay least, then the fewest cards)
    from that many gold 1s, 2s and 3s: only the counts matter, so it is worked out once each."""
    golds = [*GOLD_IDS_BY_VALUE[1][:ones], *GOLD_IDS_BY_VALUE[2][:twos], *GOLD_IDS_BY_VALUE[3][:threes]]
    return CARD_VALUE[cheapest_cover(golds, owed)[0]]


def round_marker(state: State) -> tuple[int, int]:
    """Changes when a gift turn or an auction ends."""
    if state.phase == PHASE_GIFT:
        return (0, state.active_player)
    return (1, len(state.auction_pile))


def play_on(state: State, horizon: int | None, choose: Callable[[State], int]) -> int:
    """Apply ``choose(state)`` at every decision until the game ends or, with ``horizon``, until
    that many gift turns or auctions have ended (:func:`round_marker`); returns the number of
    decisions applied. Every rollout of the search plays on here, by policy or at random."""
    steps = 0
    marker = round_marker(state)
    rounds = 0
    while state.decision != DECISION_NONE:
        if horizon is not None:
            now = round_marker(state)
            if now != marker:
                marker = now
                rounds += 1
                if rounds >= horizon:
                    break
        rules.apply(state, choose(state))
        steps += 1
    return steps


__all__ = ["Race", "RolloutPolicy", "play_on", "round_marker"]
