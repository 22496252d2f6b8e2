"""The observation vector: declared pieces → one flat float32 vector with named slices.

Each piece is declared once in :data:`PIECES` (name, size, meaning); offsets, the
:data:`SLICES` table, the docs table (:func:`layout_markdown`) and :func:`decode` all derive
from it, so the documentation cannot drift from the encoder. Seats are relative to the
observer (0 = self, 1 = left neighbour, ...) and padded to 4 players, so one policy can
serve every seat and player count. :func:`encode` turns a :class:`PlayerView` into the
vector, so nothing hidden from the observer can reach it (RULES §7); :func:`encode_state`,
the environment's per-step path, produces the same vector straight from the state (tests
compare the two over random games, and the leakage tests run on it).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Final, NamedTuple

import numpy as np

from biblios_env.actions import MAX_BID
from biblios_env.cards import CARD_VALUE, DIE_MAX, IS_GOLD, NUM_CARDS, NUM_CATEGORIES
from biblios_env.engine.setup import DECK_SIZE, GIFT_TURNS, PLAYER_COUNTS
from biblios_env.engine.state import NO_CARD, NO_SEAT, Decision, Phase, State, indicator_row
from biblios_env.engine.views import PlayerView
from biblios_env.engine.visibility import seat_secrets

MAX_PLAYERS: Final = max(PLAYER_COUNTS)
NUM_OPPONENT_SLOTS: Final = MAX_PLAYERS - 1
#: Hand sizes are divided by this; a hand can outgrow it through penalties.
HAND_SIZE_SCALE: Final = 20


class Piece(NamedTuple):
    """One named part of the observation; ``scale`` multiplies the raw count (1 for 0/1 pieces)."""

    name: str
    size: int
    meaning: str
    scale: tuple[float, ...] | float = 1.0


#: The observation layout, in order. Card sets are 87-wide indicator vectors by card id.
PIECES: Final[tuple[Piece, ...]] = (
    # Card sets: indicators by card id.
    Piece("hand", NUM_CARDS, "the observer's hand"),
    Piece("drawn_card", NUM_CARDS, "the card the observer must place now"),
    Piece("kept_card", NUM_CARDS, "the card the observer kept this gift turn (joins the hand at its end)"),
    Piece("common_area", NUM_CARDS, "cards face up in the common area"),
    Piece("own_auction_cards", NUM_CARDS, "the observer's cards still face down in the auction pile"),
    Piece("auction_card", NUM_CARDS, "the card under auction"),
    Piece("church_card", NUM_CARDS, "the church card being resolved"),
    Piece("payment_cards", NUM_CARDS, "cards the observer has picked so far for its own payment in progress"),
    Piece("known_discard", NUM_CARDS, "discarded cards the observer knows: public ones and own face-down ones"),
    Piece(
        "opponent_cards",
        NUM_OPPONENT_SLOTS * NUM_CARDS,
        "per opponent (relative seats 1..3, 87 each): cards publicly seen entering their hand and not publicly "
        "seen leaving it",
    ),
    # One-hot and flag pieces.
    Piece("num_players", len(PLAYER_COUNTS), "one-hot: 2, 3 or 4 players"),
    Piece("phase", len(Phase), "one-hot: gift, auction, end"),
    Piece("decision", len(Decision), "one-hot: place, take, church, bid, pay, none"),
    Piece("dice", NUM_CATEGORIES * DIE_MAX, "one-hot per category (Scriptorium order) of its die, 1..6"),
    Piece("high_bidder", MAX_PLAYERS + 1, "one-hot relative seat of the high bidder; last entry: no bid yet"),
    Piece("passed", MAX_PLAYERS, "per relative seat: has passed on this card"),
    Piece("excluded", MAX_PLAYERS, "per relative seat: defaulted on this card, may not bid"),
    Piece("active_player", MAX_PLAYERS, "one-hot relative seat of the active player"),
    Piece("current_player", MAX_PLAYERS, "one-hot relative seat of the player to act"),
    Piece("first_player", MAX_PLAYERS, "one-hot relative seat of the first player"),
    Piece("seats_present", MAX_PLAYERS, "per relative seat: 1 if that seat is in the game"),
    # Scalars last: small counts, scaled to about 0..1.
    Piece("dice_value", NUM_CATEGORIES, "die value / 6 per category", 1 / DIE_MAX),
    Piece("hand_gold", 1, "coins in the observer's hand / 66", 1 / MAX_BID),
    Piece("quota", 3, "placements left this gift turn: keep (/1), auction (/1), common (/3)", (1.0, 1.0, 1 / 3)),
    Piece("high_bid", 1, "highest bid on the card under auction / 66", 1 / MAX_BID),
    Piece(
        "payment_progress", 2, "the observer's own payment so far: cards picked / 66 and coins picked / 66", 1 / MAX_BID
    ),
    Piece("hand_sizes", MAX_PLAYERS, "per relative seat: cards in hand / 20", 1 / HAND_SIZE_SCALE),
    # Divided by their largest sizes: the 4-player draw pile, the 2-player auction pile (one card
    # per gift turn), a common area of N-1 cards.
    Piece(
        "pile_sizes",
        3,
        "draw pile / 80, auction pile / 20, common area / 3",
        (1 / max(DECK_SIZE.values()), 1 / max(GIFT_TURNS.values()), 1 / (MAX_PLAYERS - 1)),
    ),
)


def _offsets() -> dict[str, slice]:
    slices, start = {}, 0
    for piece in PIECES:
        slices[piece.name] = slice(start, start + piece.size)
        start += piece.size
    return slices


#: ``SLICES[name]`` is the slice of the observation holding piece ``name``.
SLICES: Final[dict[str, slice]] = _offsets()
OBSERVATION_SIZE: Final = sum(piece.size for piece in PIECES)

#: Where each piece starts in the observation.
#: ``Final[int]`` each: the compiled build reads them as C constants, not from the module's dict.
_START: Final[dict[str, int]] = {name: s.start for name, s in SLICES.items()}
_NUM_PLAYERS: Final[int] = _START["num_players"]
_PHASE: Final[int] = _START["phase"]
_DECISION: Final[int] = _START["decision"]
_DICE: Final[int] = _START["dice"]
_HIGH_BIDDER: Final[int] = _START["high_bidder"]
_PASSED: Final[int] = _START["passed"]
_EXCLUDED: Final[int] = _START["excluded"]
_ACTIVE: Final[int] = _START["active_player"]
_CURRENT: Final[int] = _START["current_player"]
_FIRST: Final[int] = _START["first_player"]
_PRESENT: Final[int] = _START["seats_present"]
_SCALARS: Final[int] = _START["dice_value"]  # every piece before this one holds only 0s and 1s
_CARD_BLOCK_END: Final[int] = _START["num_players"]  # the card-set rows end where the flags begin
_ZERO_FLAGS: Final = bytes(_SCALARS - _CARD_BLOCK_END)
#: ``_CARD_ROW[card]``: the one-hot row of a single card; ``_CARD_ROW[NO_CARD]`` (index -1) is all zeros.
_CARD_ROW: Final = (
    *(bytes(card) + b"\x01" + bytes(NUM_CARDS - card - 1) for card in range(NUM_CARDS)),
    bytes(NUM_CARDS),
)
_NO_CARDS_ROW: Final = _CARD_ROW[NO_CARD]
_OPPONENT_PADDING: Final = {n: bytes(NUM_CARDS * (MAX_PLAYERS - n)) for n in PLAYER_COUNTS}


def _scale_vector() -> np.ndarray:
    scale = np.ones(OBSERVATION_SIZE, dtype=np.float32)
    for piece in PIECES:
        scale[SLICES[piece.name]] = piece.scale
    return scale


#: Raw counts times this give the observation (encoded as bytes, converted in one numpy call).
_SCALE: Final = _scale_vector()
_SCALE.flags.writeable = False
#: The observation's scale per entry (read-only): every observation is a vector of small
#: non-negative integer counts times this, so datasets can store the counts as ``uint8``
#: (:func:`observation_counts`) and rebuild observations exactly by multiplying.
OBSERVATION_SCALE: Final = _SCALE


def observation_counts(observations: np.ndarray) -> np.ndarray:
    """The integer counts behind observations (``uint8``, 4x smaller than the float32 vectors)."""
    return np.rint(np.asarray(observations, np.float32) / _SCALE).astype(np.uint8)


# The constant pieces written into an observation by slice assignment are bytearrays: a bytes
# value would be copied into a temporary bytearray first at each assignment.
_PRESENT_BYTES: Final = {n: bytearray(b"\x01" * n) for n in PLAYER_COUNTS}
_SIZE_PADDING: Final = {n: (0,) * (MAX_PLAYERS - n) for n in PLAYER_COUNTS}
_GOLD_COINS: Final = tuple(CARD_VALUE[card] if IS_GOLD[card] else 0 for card in range(NUM_CARDS))
_DICE_SIZE: Final[int] = NUM_CATEGORIES * DIE_MAX
# numpy's functions, bound once: the compiled build would look each up on the module every call.
_MULTIPLY: Final = np.multiply
_FROM_BUFFER: Final = np.frombuffer
_UINT8: Final = np.uint8


def _dice_row(dice: tuple[int, ...]) -> bytearray:
    """The dice one-hot piece for one combination of die values (never modified once cached)."""
    row = bytearray(_DICE_SIZE)
    for category, die in enumerate(dice):
        row[DIE_MAX * category + die - 1] = 1
    return row


#: Dice one-hot pieces by die values, filled as combinations occur (at most 6**5 = 7,776).
_DICE_ROWS: dict[tuple[int, ...], bytearray] = {}


def encode(view: PlayerView, out: np.ndarray | None = None) -> np.ndarray:
    """Encode a view as a float32 vector of length :data:`OBSERVATION_SIZE` (into ``out`` if given)."""
    hand_row, common_row, own_auction_row, discard_row, opponent_rows = (
        view.hand_row,
        view.common_row,
        view.own_auction_row,
        view.public_discard_row,
        view.opponent_rows,
    )
    if (
        hand_row is None
        or common_row is None
        or own_auction_row is None
        or discard_row is None
        or opponent_rows is None
    ):
        # A hand-made view has no rows: build them from its card lists.
        hand_row, common_row, own_auction_row, discard_row, opponent_rows = (
            indicator_row(view.hand),
            indicator_row(view.common_area),
            indicator_row(view.own_auction_cards),
            indicator_row(view.public_discard),
            [indicator_row(cards) for cards in view.opponent_cards],
        )
    bidding = view.auction_card != NO_CARD
    own_face_down = view.own_face_down_discard
    payment_cards = view.payment_cards
    card_rows = [
        hand_row,
        _CARD_ROW[view.drawn_card],
        _CARD_ROW[view.kept_card],
        common_row,
        own_auction_row,
        _CARD_ROW[view.auction_card],
        _CARD_ROW[view.church_card],
        indicator_row(payment_cards) if bidding and payment_cards else _NO_CARDS_ROW,
        _with_cards(discard_row, own_face_down) if own_face_down else discard_row,
        *opponent_rows,
    ]
    turn = (view.phase, view.decision, view.current_player, view.active_player, view.first_player, view.dice)
    counts = (
        view.hand,
        view.quota,
        view.high_bid if bidding else 0,
        view.payment_count if bidding else 0,
        view.payment_value if bidding else 0,
        view.hand_sizes,
        view.draw_pile_size,
        view.auction_pile_size,
        len(view.common_area),
    )
    bidders = (view.high_bidder, view.passed, view.excluded) if bidding else None
    return _pack(view.num_players, card_rows, turn, bidders, counts, out)


def encode_state(state: State, seat: int, out: np.ndarray | None = None) -> np.ndarray:
    """``encode(player_view(state, seat))``, read straight from the state without building the view.

    The environment observes at every step, and the view's 42 fields cost about as much as
    the encoding itself. What the seat may see is decided where the view's is:
    :func:`~biblios_env.engine.visibility.seat_secrets` (drawn and kept cards only to their
    owner, a payment in progress only to the payer); like the view, it reads only the observer's
    own face-down discards and hand. A property test checks both paths give identical vectors
    over random games of every size.
    """
    n = state.num_players
    drawn_card, kept_card, quota, sees_payment, hand_sizes = seat_secrets(state, seat)
    current = state.current_player
    auction_card = state.auction_card
    bidding = auction_card != NO_CARD
    payment = state.payment
    own_face_down = state.private_discard[seat]
    public_hand_rows = state.public_hand_rows
    card_rows = [
        state.hand_rows[seat],
        _CARD_ROW[drawn_card],
        _CARD_ROW[kept_card],
        state.common_row,
        state.contribution_rows[seat],
        _CARD_ROW[auction_card],
        _CARD_ROW[state.church_card],
        indicator_row(payment) if sees_payment and payment and bidding else _NO_CARDS_ROW,
        _with_cards(state.public_discard_row, own_face_down) if own_face_down else state.public_discard_row,
        *public_hand_rows[seat + 1 :],
        *public_hand_rows[:seat],
    ]
    turn = (
        state.phase,
        state.decision,
        NO_SEAT if current == NO_SEAT else (current - seat) % n,
        (state.active_player - seat) % n,
        (state.first_player - seat) % n,
        state.dice,
    )
    counts = (
        state.hands[seat],
        quota,
        state.high_bid if bidding else 0,
        len(payment) if sees_payment else 0,
        state.payment_value if sees_payment else 0,
        hand_sizes,
        len(state.draw_pile),
        len(state.auction_pile),
        len(state.common_area),
    )
    bidders: _Bidders = None
    if bidding:
        high_bidder = state.high_bidder
        bidders = (
            NO_SEAT if high_bidder == NO_SEAT else (high_bidder - seat) % n,
            state.passed[seat:] + state.passed[:seat],
            state.excluded[seat:] + state.excluded[:seat],
        )
    return _pack(n, card_rows, turn, bidders, counts, out)


def _with_cards(row: bytes | bytearray, cards: Iterable[int]) -> bytearray:
    """A copy of an indicator row with ``cards`` added (the known discard: public plus own face-down)."""
    row = bytearray(row)
    for card in cards:
        row[card] = 1
    return row


#: The parts of one observation, seats already relative to the observer. The card rows: one
#: 87-byte indicator row per card-set piece in :data:`PIECES` order, the opponents' rows for
#: the seats in the game only (the padding is added here).
_CardRows = list[bytes | bytearray]
#: phase, decision, current player, active player, first player, dice.
_Turn = tuple[int, int, int, int, int, Sequence[int]]
#: While a card is under auction: the high bidder and who has passed or is excluded, per
#: relative seat; ``None`` otherwise (the bidding context exists only then).
_Bidders = tuple[int, Sequence[bool], Sequence[bool]] | None
#: The observer's hand (for its coins), quota, high bid, the observer's own payment so far
#: (cards, coins), hand sizes, and the sizes of the draw pile, auction pile and common area.
_Counts = tuple[Iterable[int], Sequence[int], int, int, int, Sequence[int], int, int, int]


def _pack(
    n: int, card_rows: _CardRows, turn: _Turn, bidders: _Bidders, counts: _Counts, out: np.ndarray | None
) -> np.ndarray:
    """Write the observation from its parts: the card-set rows, then the flags, then the counts.

    Written for speed (it runs at every environment step, and numpy calls and Python
    loops over cards cost more than copying bytes): the card sets arrive as the engine's
    87-byte indicator rows and are joined, the rest is written as small integers into one
    ``bytearray``, and a single numpy multiplication by the pieces' scales makes the floats.
    The parts are plain tuples and a list (unpacked here): both callers build every part at
    every step, and named tuples would cost several times more. ``card_rows`` is the caller's
    fresh list, extended here with the padding so that one ``join`` writes every row.
    """
    card_rows.append(_OPPONENT_PADDING[n])
    card_rows.append(_ZERO_FLAGS)
    bits = bytearray().join(card_rows)
    phase, decision, current, active, first, dice = turn
    dice_key = tuple(dice)
    dice_row = _DICE_ROWS.get(dice_key)
    if dice_row is None:
        dice_row = _DICE_ROWS[dice_key] = _dice_row(dice_key)
    bits[_DICE : _DICE + _DICE_SIZE] = dice_row
    bits[_NUM_PLAYERS + n - 2] = 1
    bits[_PHASE + phase] = 1
    bits[_DECISION + decision] = 1
    bits[_ACTIVE + active] = 1
    bits[_FIRST + first] = 1
    bits[_PRESENT : _PRESENT + n] = _PRESENT_BYTES[n]
    if current != NO_SEAT:
        bits[_CURRENT + current] = 1
    if bidders is not None:
        high_bidder, passed, excluded = bidders
        bits[_HIGH_BIDDER + (MAX_PLAYERS if high_bidder == NO_SEAT else high_bidder)] = 1
        for relative in range(n):
            if passed[relative]:
                bits[_PASSED + relative] = 1
            if excluded[relative]:
                bits[_EXCLUDED + relative] = 1
    hand, quota, high_bid, payment_count, payment_value, hand_sizes, draw_pile_size, auction_pile_size, common_size = (
        counts
    )
    gold = 0
    for card in hand:
        gold += _GOLD_COINS[card]
    bits += bytes(
        (
            *dice,
            gold,
            *quota,
            high_bid,
            payment_count,
            payment_value,
            *hand_sizes,
            *_SIZE_PADDING[n],
            draw_pile_size,
            auction_pile_size,
            common_size,
        )
    )
    if out is None:
        return _MULTIPLY(_FROM_BUFFER(bits, _UINT8), _SCALE)
    return _MULTIPLY(_FROM_BUFFER(bits, _UINT8), _SCALE, out=out)


def decode(observation: np.ndarray) -> dict[str, np.ndarray]:
    """Split an observation into its named pieces (views into ``observation``, no copies)."""
    if observation.shape != (OBSERVATION_SIZE,):
        raise ValueError(f"observation must have shape ({OBSERVATION_SIZE},), got {observation.shape}")
    return {name: observation[s] for name, s in SLICES.items()}


def layout_markdown() -> str:
    """The observation layout as a Markdown table (used by the docs, tested against them)."""
    lines = ["| piece | slice | size | meaning |", "|---|---|---|---|"]
    for piece in PIECES:
        s = SLICES[piece.name]
        lines.append(f"| `{piece.name}` | {s.start}:{s.stop} | {piece.size} | {piece.meaning} |")
    return "\n".join(lines)
