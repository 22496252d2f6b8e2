"""The mutable game state record and its cheap ``clone()`` (the engine's only data structure).

Design choice: one mutable record of ints and small lists, stepped in
place by the rule modules and copied field by field by :meth:`State.clone`. Search agents
clone millions of times, so no ``deepcopy`` and no per-card objects.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, Final

import numpy as np

from biblios_env.cards import DIE_START, NUM_CARDS, NUM_CATEGORIES
from biblios_env.engine.flow import (
    CHANCE_AUCTION_ORDER,
    CHANCE_PENALTY,
    DECISION_NONE,
    DECISION_PLACE,
    NO_CARD,
    NO_CHANCE,
    NO_SEAT,
    PHASE_GIFT,
    RESUME_PLACING,
    STANDARD_PRESET,
    Decision,
    Phase,
    Resume,
)

#: A card moved by a standard penalty, ``(giver, receiver, card)``: always three ints, typed as a
#: tuple of any length so that the compiled core hands the one object on (a fixed-length tuple
#: type is unpacked into C ints and boxed into a new tuple wherever it is stored), and a record
#: made once (:func:`~biblios_env.engine.visibility.penalty_move`) is stored without a copy.
PenaltyMove = tuple[int, ...]

#: The fields of a :class:`State`: its ``__slots__``, and the list that tests and tools read (a
#: compiled class has no ``__slots__`` attribute to read).
STATE_FIELDS: Final = (
    # configuration
    "num_players",
    "first_player",
    "bluffs",
    "strict_bids",
    "auction_order_placed",
    "explicit_chance",
    "chance_kind",
    "preset",
    # flow
    "phase",
    "decision",
    "current_player",
    "active_player",
    # the table
    "dice",
    "hands",
    "draw_pile",
    "auction_pile",
    "common_area",
    "discard",
    "removed",
    # gift turn
    "drawn_card",
    "kept_card",
    "quota",
    "taker",
    # church card being resolved
    "church_card",
    "church_owner",
    "church_resume",
    # auction
    "auction_card",
    "high_bid",
    "high_bidder",
    "passed",
    "excluded",
    "payment",
    "payment_value",
    # public knowledge (RULES §7)
    "public_hands",
    "public_discard",
    "private_discard",
    "auction_contributions",
    "penalty_moves",
    "public_at_last_loss",
    # derived: card indicator rows and per-seat penalty records (see init_derived)
    "hand_rows",
    "common_row",
    "public_hand_rows",
    "public_discard_row",
    "contribution_rows",
    "penalty_views",
    # chance
    "_rng",
    "_rng_state",
    "chance",
    # result
    "vp",
    "winners",
    "category_winners",
)


class State:
    """Everything about one game; all card collections are lists of card ids.

    Piles keep their top card at the *end* of the list so drawing is ``pop()``.
    The public-knowledge fields record what RULES §7 makes known to the table, so a
    seat's view can be built without replaying history.
    """

    __slots__ = STATE_FIELDS

    num_players: int
    first_player: int
    bluffs: bool
    strict_bids: bool
    auction_order_placed: bool
    #: Random events wait for their outcome (``chance_kind``) instead of drawing it (OpenSpiel's
    #: explicit chance); the usual games sample each outcome from the seeded generator.
    explicit_chance: bool
    #: The random event awaited (``flow.CHANCE_*``), ``NO_CHANCE`` at a player's decision.
    chance_kind: int
    #: The cards the game was dealt from (``setup.PRESETS``): the rules' box or a smaller one.
    preset: str
    phase: int
    decision: int
    current_player: int
    active_player: int
    dice: list[int]
    hands: list[list[int]]
    draw_pile: list[int]
    #: Top card last, like the draw pile, in both phases: a placed card goes under the pile
    #: (so in the placed order the first card placed is auctioned first), the shuffle at the
    #: start of the auctions reorders it, and each auction takes the top card.
    auction_pile: list[int]
    common_area: list[int]
    discard: list[int]
    removed: list[int]
    drawn_card: int
    kept_card: int
    quota: list[int]
    taker: int
    church_card: int
    church_owner: int
    church_resume: int
    auction_card: int
    high_bid: int
    high_bidder: int
    passed: list[bool]
    excluded: list[bool]
    payment: list[int]
    payment_value: int
    public_hands: list[list[int]]
    public_discard: list[int]
    private_discard: list[list[int]]
    auction_contributions: list[list[int]]
    #: Every card moved hand to hand by a standard penalty, in order: ``(defaulter, receiver, card)``.
    #: Who gave how many to whom is public; the card only to those two seats (RULES §7).
    penalty_moves: list[PenaltyMove]
    #: Per seat, its ``public_hands`` entry at the moment it last lost cards unseen (face-down
    #: payment, penalty, blind discard): public cards acquired since are certainly still in hand.
    public_at_last_loss: list[tuple[int, ...]]
    #: Indicator rows (a ``bytearray`` of 87, 1 where the card is in the list) kept in step
    #: with ``hands``, ``common_area``, ``public_hands``, ``public_discard`` and
    #: ``auction_contributions``: the observation encoder copies them instead of looping
    #: over cards at every environment step.
    hand_rows: list[bytearray]
    common_row: bytearray
    public_hand_rows: list[bytearray]
    public_discard_row: bytearray
    contribution_rows: list[bytearray]
    #: Per seat, the penalty moves as that seat sees them: ``(relative defaulter, relative
    #: receiver, card or -1 unless the seat gave or received it)``, in order.
    penalty_views: list[list[PenaltyMove]]
    _rng: np.random.Generator | None
    _rng_state: Mapping[str, Any] | None
    #: The random events of the game log, in order: ``(kind, cards)``. A tuple of ints each, never
    #: a list: the cyclic garbage collector stops tracking a tuple of ints (and a tuple of a string
    #: and one) at its first collection, while every list stays tracked. Kept as lists, these
    #: records were most of the containers a game adds as it goes (a penalty each), and with many
    #: games alive they made the full collections of the whole heap several times as frequent.
    chance: list[tuple[str, tuple[int, ...]]]
    vp: list[int]
    winners: list[int]
    category_winners: list[int]

    def __new__(cls, *args: object, **kwargs: object) -> State:
        """An instance with no field set: :meth:`clone` fills every field itself, and a compiled
        class (mypyc) can skip ``__init__`` only through a ``__new__`` of its own."""
        return super().__new__(cls)

    def __init__(
        self,
        num_players: int,
        rng: np.random.Generator,
        *,
        first_player: int = 0,
        bluffs: bool = False,
        strict_bids: bool = False,
        auction_order_placed: bool = False,
        explicit_chance: bool = False,
        preset: str = STANDARD_PRESET,
    ) -> None:
        """An empty table before the deal: dice at 3, no card anywhere, ``first_player`` to place.

        The one constructor: setup (:func:`~biblios_env.engine.setup.new_state`) then deals the
        draw pile, and the determinization sampler fills in a whole position; both leave every
        other field as set here. The arguments are trusted (setup checks a game's options).
        """
        self.num_players = num_players
        self.first_player = first_player
        self.bluffs = bluffs
        self.strict_bids = strict_bids
        self.auction_order_placed = auction_order_placed
        self.explicit_chance = explicit_chance
        self.chance_kind = NO_CHANCE
        self.preset = preset
        self.phase = PHASE_GIFT
        self.decision = DECISION_PLACE
        self.current_player = first_player
        self.active_player = first_player
        self.dice = [DIE_START] * NUM_CATEGORIES
        self.hands = [[] for _ in range(num_players)]
        self.draw_pile = []
        self.auction_pile = []
        self.common_area = []
        self.discard = []
        self.removed = []
        self.drawn_card = NO_CARD
        self.kept_card = NO_CARD
        self.quota = [0, 0, 0]
        self.taker = NO_SEAT
        self.church_card = NO_CARD
        self.church_owner = NO_SEAT
        self.church_resume = RESUME_PLACING
        self.auction_card = NO_CARD
        self.high_bid = 0
        self.high_bidder = NO_SEAT
        self.passed = [False] * num_players
        self.excluded = [False] * num_players
        self.payment = []
        self.payment_value = 0
        self.public_hands = [[] for _ in range(num_players)]
        self.public_discard = []
        self.private_discard = [[] for _ in range(num_players)]
        self.auction_contributions = [[] for _ in range(num_players)]
        self.penalty_moves = []
        self.public_at_last_loss = [()] * num_players
        self.init_derived()
        self._rng = rng
        self._rng_state = None
        self.chance = []
        self.vp = []
        self.winners = []
        self.category_winners = []

    def clone(self, rng: np.random.Generator | None = None) -> State:
        """An independent copy that replays the same chance events as the original, unless
        ``rng`` is given (search code passes its own generator to vary chance)."""
        other = State.__new__(State)
        other.num_players = self.num_players
        other.first_player = self.first_player
        other.bluffs = self.bluffs
        other.strict_bids = self.strict_bids
        other.auction_order_placed = self.auction_order_placed
        other.explicit_chance = self.explicit_chance
        other.chance_kind = self.chance_kind
        other.preset = self.preset
        other.phase = self.phase
        other.decision = self.decision
        other.current_player = self.current_player
        other.active_player = self.active_player
        other.dice = self.dice[:]
        other.hands = [hand[:] for hand in self.hands]
        other.draw_pile = self.draw_pile[:]
        other.auction_pile = self.auction_pile[:]
        other.common_area = self.common_area[:]
        other.discard = self.discard[:]
        other.removed = self.removed[:]
        other.drawn_card = self.drawn_card
        other.kept_card = self.kept_card
        other.quota = self.quota[:]
        other.taker = self.taker
        other.church_card = self.church_card
        other.church_owner = self.church_owner
        other.church_resume = self.church_resume
        other.auction_card = self.auction_card
        other.high_bid = self.high_bid
        other.high_bidder = self.high_bidder
        other.passed = self.passed[:]
        other.excluded = self.excluded[:]
        other.payment = self.payment[:]
        other.payment_value = self.payment_value
        other.public_hands = [cards[:] for cards in self.public_hands]
        other.public_discard = self.public_discard[:]
        other.private_discard = [cards[:] for cards in self.private_discard]
        other.auction_contributions = [cards[:] for cards in self.auction_contributions]
        other.penalty_moves = self.penalty_moves[:]
        other.public_at_last_loss = self.public_at_last_loss[:]
        other.hand_rows = [bytearray(row) for row in self.hand_rows]
        other.common_row = bytearray(self.common_row)
        other.public_hand_rows = [bytearray(row) for row in self.public_hand_rows]
        other.public_discard_row = bytearray(self.public_discard_row)
        other.contribution_rows = [bytearray(row) for row in self.contribution_rows]
        other.penalty_views = [moves[:] for moves in self.penalty_views]
        if rng is not None:
            other._rng, other._rng_state = rng, None
        else:
            # Copying a numpy generator costs ~30 µs, so both copies keep the same frozen
            # generator state and rebuild a generator only when a chance event needs one.
            if self._rng is not None:
                self._rng_state = self._rng.bit_generator.state
                self._rng = None
            other._rng, other._rng_state = None, self._rng_state
        other.chance = self.chance[:]
        other.vp = self.vp[:]
        other.winners = self.winners[:]
        other.category_winners = self.category_winners[:]
        return other

    def init_derived(self) -> None:
        """(Re)build the derived fields from the card lists: called by the constructor, and by the
        determinization sampler once it has filled in the lists. The per-seat penalty records
        start empty: who saw which card is a visibility rule, so the sampler replays
        ``penalty_moves`` through :func:`biblios_env.engine.visibility.record_penalty_move`."""
        n = self.num_players
        self.hand_rows = [indicator_row(hand) for hand in self.hands]
        self.common_row = indicator_row(self.common_area)
        self.public_hand_rows = [indicator_row(cards) for cards in self.public_hands]
        self.public_discard_row = indicator_row(self.public_discard)
        self.contribution_rows = [indicator_row(cards) for cards in self.auction_contributions]
        self.penalty_views = [[] for _ in range(n)]

    @property
    def rng(self) -> np.random.Generator:
        """The game's single generator; every chance event draws from it (so a game is its seed and actions)."""
        rng = self._rng
        if rng is None:
            state = self._rng_state
            if state is None:
                raise RuntimeError("this State has neither a generator nor a frozen generator state")
            rng = np.random.Generator(getattr(np.random, state["bit_generator"])(0))
            rng.bit_generator.state = state
            self._rng, self._rng_state = rng, None
        return rng

    def next_seat(self, seat: int) -> int:
        """The seat to the left: the next index modulo the number of players (RULES §2.4)."""
        return (seat + 1) % self.num_players


#: 2**-53: numpy's PCG64 makes a double in [0, 1) of the top 53 bits of its next 64-bit output.
_DOUBLE_UNIT: Final = 1.0 / 9007199254740992.0


def await_chance(state: State, kind: int) -> None:
    """Stop at a random event of ``kind`` until its outcome is applied (explicit chance): nobody
    is to act meanwhile, so every reader of the seat to act sees no seat."""
    state.chance_kind = kind
    state.decision = DECISION_NONE
    state.current_player = NO_SEAT


def take_outcome(state: State, pile: list[int], card: int) -> None:
    """``card``, the outcome of a random event, leaves ``pile`` (top card last): a dealt or
    shuffled pile gives its top card, an explicit-chance one any card it holds."""
    if pile[-1] == card:
        pile.pop()
    else:
        pile.remove(card)
    state.chance_kind = NO_CHANCE


def uniform_index(rng: np.random.Generator, size: int) -> int:
    """A uniform index below ``size``: ``int(rng.random() * size)``, the engine's random picks.

    For numpy's PCG64 (every generator the engine makes) the same double comes from the bit
    generator's raw output at about half the cost of ``rng.random()``, and the generator ends in
    the same state (``tests/test_engine/test_state.py`` checks both); other bit generators use ``random()``.
    """
    bit_generator = rng.bit_generator
    if type(bit_generator) is np.random.PCG64:
        return int((bit_generator.random_raw() >> 11) * _DOUBLE_UNIT * size)
    return int(rng.random() * size)


def indicator_row(cards: Iterable[int]) -> bytearray:
    """87 bytes, 1 at each card id in ``cards``."""
    row = bytearray(NUM_CARDS)
    for card in cards:
        row[card] = 1
    return row


def add_card(cards: list[int], row: bytearray, card: int) -> None:
    """Put ``card`` into a card list and into its indicator row: the two always change together."""
    cards.append(card)
    row[card] = 1


def remove_card(cards: list[int], row: bytearray, card: int) -> None:
    """Take ``card`` out of a card list and out of its indicator row."""
    cards.remove(card)
    row[card] = 0


def pop_card(cards: list[int], row: bytearray, index: int) -> int:
    """Take the card at ``index`` out of a card list and its indicator row; returns it."""
    card = cards.pop(index)
    row[card] = 0
    return card


def move_card(cards: list[int], row: bytearray, index: int, to_cards: list[int], to_row: bytearray) -> int:
    """Move the card at ``index`` from one card list (and its row) to the end of another; returns it."""
    card = cards.pop(index)
    row[card] = 0
    to_cards.append(card)
    to_row[card] = 1
    return card


def enter_hand_publicly(state: State, seat: int, card: int) -> None:
    """``card`` enters ``seat``'s hand in view of the table (taken from the common area or won
    at auction): it joins the hand and the seat's publicly known cards (RULES §7)."""
    state.hands[seat].append(card)
    state.hand_rows[seat][card] = 1
    state.public_hands[seat].append(card)
    state.public_hand_rows[seat][card] = 1


def discard_face_up(state: State, card: int) -> None:
    """``card`` is discarded in view of the table (an unsold card, a resolved church card, a
    face-up payment): it joins the discard pile and the public discard (RULES §7)."""
    state.discard.append(card)
    state.public_discard.append(card)
    state.public_discard_row[card] = 1


def discard_face_down(state: State, seat: int, cards: Iterable[int]) -> None:
    """``seat``'s ``cards`` are discarded unseen (a face-down payment, a blind discard): they
    join the discard pile and the seat's own face-down discards, which only that seat knows
    (RULES §7). A whole payment goes in one call, as cheap as the two ``extend`` calls."""
    state.discard.extend(cards)
    state.private_discard[seat].extend(cards)


# The flow's names are defined in biblios_env.engine.flow and also importable from here, beside the record.
__all__ = [
    "CHANCE_AUCTION_ORDER",
    "CHANCE_PENALTY",
    "NO_CARD",
    "NO_SEAT",
    "STATE_FIELDS",
    "Decision",
    "PenaltyMove",
    "Phase",
    "Resume",
    "State",
    "add_card",
    "await_chance",
    "discard_face_down",
    "discard_face_up",
    "enter_hand_publicly",
    "indicator_row",
    "move_card",
    "pop_card",
    "remove_card",
    "take_outcome",
    "uniform_index",
]
