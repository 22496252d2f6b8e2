"""Beliefs over the opponents' hidden cards: determinizations that agree with what the opponents did.

:func:`biblios_env.engine.sampling.sample_state` deals the cards a seat has not seen uniformly, so
its samples ignore what the opponents' decisions reveal. Their bids reveal the most: the ``value``
heuristic raises by one while the price stays within its bid limit and passes above it, and that
limit grows with the gold in its hand (it never bids more than it holds, and it paces its coins
over the auctions to come). Measured on ``value``-vs-``value`` games, the sampler's median limit
misses an opponent's true limit by 1.3 coins, and imposing the opponent's true gold total brings
that to 0.8: the gold it kept face down in the gifts is most of what the sampler misses
(``python -m experiments.studies.belief_error``).

A belief is fed every view its seat is shown, in order (:meth:`observe`), and deals states from
the current one (:meth:`sample_states`). It reads only those views.

* :class:`PlainBelief` (``none``): the sampler alone.
* :class:`BidBelief` (``bids``): importance resampling by the opponents' bids. In each auction
  of a card bid for in gold, the seat watches every opponent's bidding: a seat that bid ``b`` has a
  limit of at least ``b``, a seat that passed facing ``h`` a limit of at most ``h``. Nothing hidden
  changes during an auction, so the opponent's limit is one number for the whole auction. When an
  auction starts the belief draws ``record_samples`` states and computes each opponent's limit in
  each, as its model (``value``) would from that opponent's view of the sample; once the bounds
  are known, these give the chance of bidding as observed for each amount of *hidden gold* (gold in
  its hand the seat has not seen enter it), smoothed over neighbouring amounts. The hidden gold
  only shrinks during the auctions, and the seat sees the gold paid in the open, so a sample's
  hidden gold now gives its hidden gold at every past auction. :meth:`sample_states` draws
  ``candidates`` states, weights each by the chance of every past auction's bidding given its
  hidden gold then and, for the auction under way, by whether each opponent's limit in the sample
  agrees with its bids so far, and resamples the requested number.

Why gold and not every hidden card: the limit at a past auction depends on the opponent's hand
then, which the current sample does not hold (cards were paid since); its gold then follows from
its gold now and the public payments, and gold is what moves the limit most.

Simplifications: gold an opponent paid face down (for a gold card) is taken as the sample's share
of the gold among its face-down discards (the sampler does not deal their order); gold lost in a
penalty is not tracked; with more than two
players gold paid in the open is credited to the opponent whose hand shrank most since the last
view (skipped when that is not one seat).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Final, Protocol

import numpy as np

from agents.heuristics import HeuristicAgent, ValueAgent
from biblios_env.cards import CARD_VALUE, IS_GOLD, gold_value
from biblios_env.engine.flow import PHASE_AUCTION
from biblios_env.engine.sampling import sample_state
from biblios_env.engine.state import NO_CARD, NO_SEAT, State
from biblios_env.engine.views import PlayerView, player_view

#: No upper bound on a limit yet (the opponent has not passed).
UNBOUNDED: Final = 1 << 30


class Belief(Protocol):
    """What a search asks of a belief: follow the game through the seat's views, deal states."""

    name: str

    def start_game(self, seat: int, num_players: int) -> None:
        """A new game begins; forget the last one."""
        ...

    def observe(self, view: PlayerView) -> None:
        """The seat is shown ``view`` (every view of the game, in order)."""
        ...

    def sample_states(self, view: PlayerView, rng: np.random.Generator, count: int) -> list[State]:
        """``count`` full states consistent with ``view`` (the last view observed), drawn from the belief."""
        ...

    def weighted_states(
        self, view: PlayerView, rng: np.random.Generator, count: int
    ) -> tuple[list[State], list[float]]:
        """``count`` states from the sampler and each one's weight under the belief (the largest 1)."""
        ...


class PlainBelief:
    """The sampler alone: hidden cards dealt uniformly from the unseen ones."""

    name = "none"

    def start_game(self, seat: int, num_players: int) -> None:
        pass

    def observe(self, view: PlayerView) -> None:
        pass

    def sample_states(self, view: PlayerView, rng: np.random.Generator, count: int) -> list[State]:
        return [sample_state(view, rng) for _ in range(count)]

    def weighted_states(
        self, view: PlayerView, rng: np.random.Generator, count: int
    ) -> tuple[list[State], list[float]]:
        return self.sample_states(view, rng, count), [1.0] * count


def hidden_gold(state: State, view: PlayerView, relative: int) -> int:
    """Coins in the hand of the seat ``relative`` to the viewer, in ``state``, among the cards the
    viewer has not seen enter that hand."""
    seat = (view.seat + relative) % view.num_players
    public = view.opponent_cards[relative - 1]
    return gold_value(card for card in state.hands[seat] if card not in public)


def model_limit(model: HeuristicAgent, state: State, seat: int) -> int:
    """The bid limit ``model`` sets on the card under auction from ``seat``'s view of ``state``."""
    seat_view = player_view(state, seat)
    return model.bid_limit(seat_view, model.assess(seat_view))


def auction_key(view: PlayerView) -> tuple[int, int, tuple[bool, ...]]:
    """One auction of one card: the card, the pile left, the defaulters (a re-auction is another)."""
    return view.auction_card, view.auction_pile_size, tuple(view.excluded)


def bids_in_gold(view: PlayerView) -> bool:
    """An auction under way on a card bid for in gold (category and church cards, RULES §5)."""
    return view.phase == PHASE_AUCTION and view.auction_card != NO_CARD and not IS_GOLD[view.auction_card]


@dataclass(slots=True)
class LimitBounds:
    """What one opponent's bidding in one auction says about its limit: ``low <= limit <= high``."""

    low: int = 0
    high: int = UNBOUNDED

    def update(self, view: PlayerView, relative: int) -> None:
        if view.high_bidder == relative:
            self.low = max(self.low, view.high_bid)
        if view.passed[relative] and not view.excluded[relative]:
            self.high = min(self.high, view.high_bid)

    def holds(self, limit: int) -> bool:
        return self.low <= limit <= self.high

    @property
    def informative(self) -> bool:
        return self.low > 0 or self.high < UNBOUNDED


@dataclass(slots=True)
class AuctionRecord:
    """One past or current auction: per opponent (relative seat), the limits and hidden gold of the
    states drawn when it started, the bounds its bidding set, and the hidden gold it has paid in
    the open since."""

    key: tuple[int, int, tuple[bool, ...]]
    samples: dict[int, list[tuple[int, int]]]  # relative seat -> [(hidden gold, limit)]
    bounds: dict[int, LimitBounds]
    face_down_counts: list[int]  # each seat's face-down discards when the auction started
    paid_since: dict[int, int] = field(default_factory=dict)

    def likelihood(self, relative: int, gold: float, bandwidth: float, prior_weight: float) -> float:
        """The chance of the observed bidding for an opponent with ``gold`` hidden coins at the time:
        the share of the record's states near that gold (a Gaussian kernel) whose limit agrees, pulled
        towards the share over all states by ``prior_weight`` pseudo-states."""
        bounds = self.bounds[relative]
        samples = self.samples[relative]
        agree_all = sum(bounds.holds(limit) for _, limit in samples)
        prior = (agree_all + 0.5) / (len(samples) + 1.0)
        near = agree = 0.0
        for sample_gold, limit in samples:
            weight = math.exp(-0.5 * ((gold - sample_gold) / bandwidth) ** 2)
            near += weight
            if bounds.holds(limit):
                agree += weight
        return (agree + prior_weight * prior) / (near + prior_weight)


class BidBelief:
    """Importance resampling of determinizations by the opponents' bids (see the module doc).

    Args:
        model: the opponent model whose bid limits are matched (default: ``value``).
        candidates: states drawn per call of :meth:`sample_states`, of which ``count`` are kept.
        record_samples: states drawn when an auction starts, to relate limits to hidden gold.
        bandwidth: the kernel's width in coins when relating limits to hidden gold.
        prior_weight: pseudo-states pulling a past auction's likelihood towards its average.
        mismatch: the weight of a state whose opponent limit contradicts the current auction's bids.
    """

    name = "bids"

    def __init__(
        self,
        model: HeuristicAgent | None = None,
        *,
        candidates: int = 64,
        record_samples: int = 64,
        bandwidth: float = 1.0,
        prior_weight: float = 1.0,
        mismatch: float = 0.05,
    ) -> None:
        for label, value in (("candidates", candidates), ("record_samples", record_samples)):
            if value < 1:
                raise ValueError(f"{label} must be a positive integer, got {value!r}")
        for label, number in (("bandwidth", bandwidth), ("prior_weight", prior_weight)):
            if not number > 0:
                raise ValueError(f"{label} must be positive, got {number!r}")
        if not 0 <= mismatch <= 1:
            raise ValueError(f"mismatch must be a weight in [0, 1], got {mismatch!r}")
        self.model = ValueAgent() if model is None else model
        self.candidates = candidates
        self.record_samples = record_samples
        self.bandwidth = bandwidth
        self.prior_weight = prior_weight
        self.mismatch = mismatch
        self.records: list[AuctionRecord] = []
        self.previous: PlayerView | None = None
        self.seat = 0
        self.num_players = 2
        #: The generator of the records' states, seeded per game so a game's belief replays.
        self.record_rng = np.random.default_rng(0)

    def start_game(self, seat: int, num_players: int) -> None:
        self.seat = seat
        self.num_players = num_players
        self.records = []
        self.previous = None
        self.record_rng = np.random.default_rng([seat, num_players])

    # ------------------------------------------------------------------ following the game
    def observe(self, view: PlayerView) -> None:
        if view.seat != self.seat or view.num_players != self.num_players:
            raise ValueError(
                f"belief of seat {self.seat} at {self.num_players} players shown the view of seat {view.seat} "
                f"at {view.num_players} players (call start_game first)"
            )
        if self.previous is not None:
            self._credit_payments(self.previous, view)
        if bids_in_gold(view):
            key = auction_key(view)
            if not self.records or self.records[-1].key != key:
                self.records.append(self._new_record(view, key))
            record = self.records[-1]
            for relative, bounds in record.bounds.items():
                bounds.update(view, relative)
        self.previous = view

    def _new_record(self, view: PlayerView, key: tuple[int, int, tuple[bool, ...]]) -> AuctionRecord:
        bidders = [relative for relative in range(1, view.num_players) if not view.excluded[relative]]
        samples: dict[int, list[tuple[int, int]]] = {relative: [] for relative in bidders}
        for _ in range(self.record_samples):
            state = sample_state(view, self.record_rng)
            for relative in bidders:
                seat = (view.seat + relative) % view.num_players
                samples[relative].append((hidden_gold(state, view, relative), model_limit(self.model, state, seat)))
        bounds = {relative: LimitBounds() for relative in bidders}
        return AuctionRecord(key, samples, bounds, list(view.face_down_counts))

    def _credit_payments(self, before: PlayerView, after: PlayerView) -> None:
        """Gold that went to the public discards since the last view from an opponent's hidden
        cards: every earlier auction saw that opponent with this much more hidden gold."""
        seen_before = set(before.public_discard)
        seen_before.update(before.hand, before.payment_cards)  # the seat's own payment
        seen_before.add(before.auction_card)  # a card nobody bid for is discarded face up
        paid = [card for card in after.public_discard if card not in seen_before and IS_GOLD[card]]
        if not paid:
            return
        publicly_held = set().union(*before.opponent_cards)
        coins = sum(CARD_VALUE[card] for card in paid if card not in publicly_held)
        payer = self._payer(before, after)
        if not coins or payer == NO_SEAT:
            return
        for record in self.records:
            if payer in record.bounds:
                record.paid_since[payer] = record.paid_since.get(payer, 0) + coins

    @staticmethod
    def _payer(before: PlayerView, after: PlayerView) -> int:
        """The opponent (relative seat) who paid in the open since the last view: the only one at
        two players, else the one whose hand shrank most (``NO_SEAT`` when that is not one seat)."""
        if before.num_players == 2:
            return 1
        shrink = [before.hand_sizes[relative] - after.hand_sizes[relative] for relative in range(before.num_players)]
        most = max(shrink[1:])
        payers = [relative for relative in range(1, before.num_players) if shrink[relative] == most]
        return payers[0] if len(payers) == 1 and most > 0 else NO_SEAT

    # ------------------------------------------------------------------ dealing states
    def weights(self, view: PlayerView, states: Sequence[State]) -> list[float]:
        """Each state's weight: the chance of the opponents' past bidding given its hidden gold, times
        the agreement of its opponent limits with the bidding under way."""
        current = (
            self.records[-1]
            if self.records and bids_in_gold(view) and self.records[-1].key == auction_key(view)
            else None
        )
        past = [record for record in self.records if record is not current]
        result = []
        for state in states:
            log_weight = 0.0
            for relative in range(1, view.num_players):
                gold_now = hidden_gold(state, view, relative)
                discarded = view.face_down_counts[relative]
                discarded_gold = gold_value(state.private_discard[(view.seat + relative) % view.num_players])
                for record in past:
                    if relative in record.bounds and record.bounds[relative].informative:
                        # The face-down discards made since, a share of the state's (their order is not dealt).
                        since = discarded - record.face_down_counts[relative]
                        gold_then: float = gold_now + record.paid_since.get(relative, 0)
                        if since > 0:
                            gold_then += discarded_gold * since / discarded
                        log_weight += math.log(
                            record.likelihood(relative, gold_then, self.bandwidth, self.prior_weight)
                        )
                if current is not None and relative in current.bounds and current.bounds[relative].informative:
                    seat = (view.seat + relative) % view.num_players
                    if not current.bounds[relative].holds(model_limit(self.model, state, seat)):
                        log_weight += math.log(self.mismatch) if self.mismatch > 0 else -math.inf
            result.append(log_weight)
        top = max(result)
        return [math.exp(value - top) if top > -math.inf else 1.0 for value in result]

    def sample_states(self, view: PlayerView, rng: np.random.Generator, count: int) -> list[State]:
        states = [sample_state(view, rng) for _ in range(max(self.candidates, count))]
        weights = self.weights(view, states)
        return [states[index] for index in systematic_resample(weights, count, rng)]

    def weighted_states(
        self, view: PlayerView, rng: np.random.Generator, count: int
    ) -> tuple[list[State], list[float]]:
        states = [sample_state(view, rng) for _ in range(count)]
        return states, self.weights(view, states)


def systematic_resample(weights: Sequence[float], count: int, rng: np.random.Generator) -> list[int]:
    """``count`` indices drawn in proportion to ``weights`` with one uniform offset (systematic
    resampling: every index with weight above ``1/count`` of the total is kept at least once)."""
    total = sum(weights)
    if not total > 0:
        raise ValueError(f"weights must have a positive sum, got {list(weights)[:8]}")
    step = total / count
    position = float(rng.random()) * step
    chosen = []
    cumulative = 0.0
    index = -1
    for _ in range(count):
        while cumulative <= position and index + 1 < len(weights):
            index += 1
            cumulative += weights[index]
        chosen.append(index)
        position += step
    return chosen


#: The beliefs by name, as the measurement command offers them.
BELIEFS: Final = {PlainBelief.name: PlainBelief, BidBelief.name: BidBelief}


def make_belief(name: str) -> Belief:
    """The belief registered as ``name`` with its defaults."""
    if name not in BELIEFS:
        raise ValueError(f"unknown belief {name!r}; known: {sorted(BELIEFS)}")
    return BELIEFS[name]()


__all__ = [
    "BELIEFS",
    "AuctionRecord",
    "Belief",
    "BidBelief",
    "LimitBounds",
    "PlainBelief",
    "hidden_gold",
    "make_belief",
    "model_limit",
    "systematic_resample",
]
