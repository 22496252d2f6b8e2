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

from typing import Final, NamedTuple

import numpy as np

from biblios_env.actions import MAX_BID
from biblios_env.cards import CARD_VALUE, DIE_MAX, IS_GOLD, NUM_CARDS, NUM_CATEGORIES
from biblios_env.engine.state import NO_CARD, NO_SEAT, Decision, Phase, State, indicator_row
from biblios_env.engine.views import PlayerView
from biblios_env.engine.visibility import seat_secrets

MAX_PLAYERS: Final = 4
NUM_OPPONENT_SLOTS: Final = MAX_PLAYERS - 1


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
    Piece("num_players", 3, "one-hot: 2, 3 or 4 players"),
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
    Piece("hand_sizes", MAX_PLAYERS, "per relative seat: cards in hand / 20", 1 / 20),
    Piece("pile_sizes", 3, "draw pile / 80, auction pile / 20, common area / 3", (1 / 80, 1 / 20, 1 / 3)),
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

_O = {name: s.start for name, s in SLICES.items()}
_NUM_PLAYERS, _PHASE, _DECISION, _DICE = _O["num_players"], _O["phase"], _O["decision"], _O["dice"]
_HIGH_BIDDER, _PASSED, _EXCLUDED = _O["high_bidder"], _O["passed"], _O["excluded"]
_ACTIVE, _CURRENT, _FIRST, _PRESENT = _O["active_player"], _O["current_player"], _O["first_player"], _O["seats_present"]
_SCALARS: Final = _O["dice_value"]  # every piece before this one holds only 0s and 1s
_CARD_BLOCK_END: Final = _O["num_players"]  # the card-set rows end where the flags begin
_ZERO_FLAGS: Final = bytes(_SCALARS - _CARD_BLOCK_END)
#: ``_CARD_ROW[card]``: the one-hot row of a single card; ``_CARD_ROW[NO_CARD]`` (index -1) is all zeros.
_CARD_ROW: Final = (
    *(bytes(card) + b"\x01" + bytes(NUM_CARDS - card - 1) for card in range(NUM_CARDS)),
    bytes(NUM_CARDS),
)
_OPPONENT_PADDING: Final = {n: bytes(NUM_CARDS * (MAX_PLAYERS - n)) for n in (2, 3, 4)}


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
_PRESENT_BYTES: Final = {n: b"\x01" * n for n in (2, 3, 4)}
_SIZE_PADDING: Final = {n: bytes(MAX_PLAYERS - n) for n in (2, 3, 4)}
_GOLD_COINS: Final = tuple(CARD_VALUE[card] if IS_GOLD[card] else 0 for card in range(NUM_CARDS))
_DICE_SIZE: Final = NUM_CATEGORIES * DIE_MAX


def _dice_row(dice: tuple[int, ...]) -> bytes:
    """The dice one-hot piece for one combination of die values."""
    row = bytearray(_DICE_SIZE)
    for category, die in enumerate(dice):
        row[DIE_MAX * category + die - 1] = 1
    return bytes(row)


#: Dice one-hot pieces by die values, filled as combinations occur (at most 6**5 = 7,776).
_DICE_ROWS: dict[tuple[int, ...], bytes] = {}


def encode(view: PlayerView, out: np.ndarray | None = None) -> np.ndarray:
    """Encode a view as a float32 vector of length :data:`OBSERVATION_SIZE` (into ``out`` if given)."""
    hand_row = view.hand_row
    if hand_row is None:  # a hand-made view: build the rows from the card lists
        hand_row, common_row, own_auction_row, discard_row, opponent_rows = (
            indicator_row(view.hand),
            indicator_row(view.common_area),
            indicator_row(view.own_auction_cards),
            indicator_row(view.public_discard),
            [indicator_row(cards) for cards in view.opponent_cards],
        )
    else:
        common_row, own_auction_row, opponent_rows = view.common_row, view.own_auction_row, view.opponent_rows
        discard_row = view.public_discard_row
    bidding = view.auction_card != NO_CARD
    return _pack(
        view.num_players,
        view.phase,
        view.decision,
        view.current_player,
        view.active_player,
        view.first_player,
        view.dice,
        hand_row,
        view.hand,
        view.drawn_card,
        view.kept_card,
        view.quota,
        common_row,
        len(view.common_area),
        own_auction_row,
        view.auction_card,
        view.church_card,
        view.high_bid if bidding else 0,
        view.high_bidder,
        view.passed,
        view.excluded,
        view.payment_cards,
        view.payment_count if bidding else 0,
        view.payment_value if bidding else 0,
        discard_row,
        view.own_face_down_discard,
        opponent_rows,  # type: ignore[arg-type]
        view.hand_sizes,
        view.draw_pile_size,
        view.auction_pile_size,
        out,
    )


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
    high_bidder = state.high_bidder
    payment = state.payment
    return _pack(
        n,
        state.phase,
        state.decision,
        NO_SEAT if current == NO_SEAT else (current - seat) % n,
        (state.active_player - seat) % n,
        (state.first_player - seat) % n,
        state.dice,
        state.hand_rows[seat],
        state.hands[seat],
        drawn_card,
        kept_card,
        quota,
        state.common_row,
        len(state.common_area),
        state.contribution_rows[seat],
        auction_card,
        state.church_card,
        state.high_bid if auction_card != NO_CARD else 0,
        NO_SEAT if high_bidder == NO_SEAT else (high_bidder - seat) % n,
        state.passed[seat:] + state.passed[:seat],
        state.excluded[seat:] + state.excluded[:seat],
        payment if sees_payment else (),
        len(payment) if sees_payment else 0,
        state.payment_value if sees_payment else 0,
        state.public_discard_row,
        state.private_discard[seat],
        state.public_hand_rows[seat + 1 :] + state.public_hand_rows[:seat],
        hand_sizes,
        len(state.draw_pile),
        len(state.auction_pile),
        out,
    )


def _pack(
    n: int,
    phase: int,
    decision: int,
    current: int,
    active: int,
    first: int,
    dice: list[int],
    hand_row: bytes | bytearray,
    hand: list[int],
    drawn_card: int,
    kept_card: int,
    quota: list[int] | tuple[int, ...],
    common_row: bytes | bytearray,
    common_size: int,
    own_auction_row: bytes | bytearray,
    auction_card: int,
    church_card: int,
    high_bid: int,
    high_bidder: int,
    passed: list[bool],
    excluded: list[bool],
    payment_cards: list[int] | tuple[int, ...],
    payment_count: int,
    payment_value: int,
    discard_row: bytes | bytearray,
    own_face_down_discard: list[int],
    opponent_rows: list[bytearray],
    hand_sizes: list[int],
    draw_pile_size: int,
    auction_pile_size: int,
    out: np.ndarray | None,
) -> np.ndarray:
    """Write the observation from its parts (seats already relative to the observer).

    Written for speed (it runs at every environment step, and numpy calls and Python
    loops over cards cost more than copying bytes): the card sets arrive as the engine's
    87-byte indicator rows and are joined, the rest is written as small integers into one
    ``bytearray``, and a single numpy multiplication by the pieces' scales makes the floats.
    Positional parameters, because both callers pass every part and keywords cost time.
    """
    if own_face_down_discard:
        discard_row = bytearray(discard_row)
        for card in own_face_down_discard:
            discard_row[card] = 1
    bidding = auction_card != NO_CARD  # the bidding context exists only while a card is under auction
    bits = bytearray().join(
        (
            hand_row,
            _CARD_ROW[drawn_card],
            _CARD_ROW[kept_card],
            common_row,
            own_auction_row,
            _CARD_ROW[auction_card],
            _CARD_ROW[church_card],
            indicator_row(payment_cards) if bidding and payment_cards else _CARD_ROW[NO_CARD],
            discard_row,
            *opponent_rows,
            _OPPONENT_PADDING[n],
            _ZERO_FLAGS,
        )
    )
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
    if bidding:
        bits[_HIGH_BIDDER + (MAX_PLAYERS if high_bidder == NO_SEAT else high_bidder)] = 1
        bits[_PASSED : _PASSED + n] = bytes(passed)
        bits[_EXCLUDED : _EXCLUDED + n] = bytes(excluded)
    gold = 0
    for card in hand:
        gold += _GOLD_COINS[card]
    bits += bytes((*dice, gold, *quota, high_bid, payment_count, payment_value, *hand_sizes))
    bits += _SIZE_PADDING[n]
    bits += bytes((draw_pile_size, auction_pile_size, common_size))
    if out is None:
        return np.multiply(np.frombuffer(bits, np.uint8), _SCALE)
    return np.multiply(np.frombuffer(bits, np.uint8), _SCALE, out=out)


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
