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

from collections.abc import Sequence
from typing import Final, NamedTuple

import numpy as np
from librt.strings import BytesWriter

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


def _one_hot_rows(size: int) -> tuple[bytes, ...]:
    """``rows[i]``: a piece of ``size`` bytes with a 1 at ``i``; ``rows[size]``: all zeros."""
    return (*(bytes(index) + b"\x01" + bytes(size - index - 1) for index in range(size)), bytes(size))


#: The card sets, one 87-byte row each (the opponents' three), as :func:`encode` and
#: :func:`encode_state_counts` write them ...
_CARD_PIECES: Final = (
    "hand",
    "drawn_card",
    "kept_card",
    "common_area",
    "own_auction_cards",
    "auction_card",
    "church_card",
    "payment_cards",
    "known_discard",
    "opponent_cards",
)
#: ... then the pieces :func:`_write_flags_and_scalars` writes, in this order, each from a table of bytes
#: below (the layout is checked against :data:`PIECES` at import, so the two cannot drift).
_FLAG_PIECES: Final = (
    "num_players",
    "phase",
    "decision",
    "dice",
    "high_bidder",
    "passed",
    "excluded",
    "active_player",
    "current_player",
    "first_player",
    "seats_present",
)
#: ... then the scalars, one byte each (see :func:`_write_flags_and_scalars`).
_SCALAR_PIECES: Final = (
    "dice_value",
    "hand_gold",
    "quota",
    "high_bid",
    "payment_progress",
    "hand_sizes",
    "pile_sizes",
)


def _check_packing_order() -> None:
    """The encoders write the pieces in :data:`PIECES` order: card sets, flags, scalars."""
    names = tuple(piece.name for piece in PIECES)
    if names != _CARD_PIECES + _FLAG_PIECES + _SCALAR_PIECES:
        raise AssertionError("the observation encoders write the pieces in another order than PIECES declares")


_check_packing_order()

#: ``_CARD_ROW[card]``: the one-hot row of a single card; ``_CARD_ROW[NO_CARD]`` (index -1) is all zeros.
_CARD_ROW: Final = _one_hot_rows(NUM_CARDS)
_NO_CARDS_ROW: Final = _CARD_ROW[NO_CARD]
#: By player count: the rows of the opponent seats that are not in the game, and their hand sizes.
_OPPONENT_PADDING: Final = tuple(bytes(NUM_CARDS * max(MAX_PLAYERS - n, 0)) for n in range(MAX_PLAYERS + 1))
_OPPONENT_SIZES_PADDING: Final = tuple(bytes(max(MAX_PLAYERS - n, 0)) for n in range(MAX_PLAYERS + 1))
#: The flags are written in four groups, each one ready-made row of bytes from a table indexed by
#: the group's values (:func:`_write_flags_and_scalars`): a Python-level step costs far more than copying bytes.
_NUM_PHASES: Final[int] = len(Phase)
_NUM_DECISIONS: Final[int] = len(Decision)
_NO_AUCTION: Final[int] = MAX_PLAYERS + 1  # the high-bidder index outside an auction
_NOBODY: Final[int] = MAX_PLAYERS  # the current-player index once the game is over


def _join_rows(*rows: bytes) -> bytes:
    return b"".join(rows)


def _seat_set(bits: int) -> bytes:
    """Per-seat flags from a bit mask: byte ``r`` is bit ``r`` of ``bits`` (passed, excluded, present)."""
    return bytes((bits >> seat) & 1 for seat in range(MAX_PLAYERS))


#: ``num_players``, ``phase``, ``decision`` by ``((n - 2) * phases + phase) * decisions + decision``.
_GAME_ROWS: Final = tuple(
    _join_rows(players, phase, decision)
    for players in _one_hot_rows(len(PLAYER_COUNTS))[:-1]
    for phase in _one_hot_rows(_NUM_PHASES)[:-1]
    for decision in _one_hot_rows(_NUM_DECISIONS)[:-1]
)
#: ``dice`` by the dice read as a base-6 number (die ``k`` the ``k``-th digit, value - 1).
_DICE_ROWS: Final = tuple(
    _join_rows(*(_one_hot_rows(DIE_MAX)[(key // DIE_MAX**category) % DIE_MAX] for category in range(NUM_CATEGORIES)))
    for key in range(DIE_MAX**NUM_CATEGORIES)
)
#: ``high_bidder``, ``passed``, ``excluded`` by ``(high bidder index * 16 + passed bits) * 16 +
#: excluded bits``: the index is the relative seat, ``MAX_PLAYERS`` for no bid yet, ``_NO_AUCTION``
#: (all zeros) outside an auction; the bits by relative seat (:func:`_seat_bits`).
_BIDDING_ROWS: Final = tuple(
    _join_rows(high_bidder, _seat_set(passed), _seat_set(excluded))
    for high_bidder in _one_hot_rows(MAX_PLAYERS + 1)
    for passed in range(1 << MAX_PLAYERS)
    for excluded in range(1 << MAX_PLAYERS)
)
#: ``active_player``, ``current_player``, ``first_player``, ``seats_present`` by
#: ``((active * 5 + current) * 4 + first) * 3 + n - 2``, relative seats, current ``_NOBODY`` at the end.
_SEAT_ROWS: Final = tuple(
    _join_rows(active, current, first, _seat_set((1 << players) - 1))
    for active in _one_hot_rows(MAX_PLAYERS)[:-1]
    for current in _one_hot_rows(MAX_PLAYERS)
    for first in _one_hot_rows(MAX_PLAYERS)[:-1]
    for players in PLAYER_COUNTS
)
_GOLD_COINS: Final = tuple(CARD_VALUE[card] if IS_GOLD[card] else 0 for card in range(NUM_CARDS))


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
#: Where the scaled entries begin: every piece before holds only 0s and 1s, so a batch of counts
#: converts there by a plain cast (:mod:`biblios_env.vector`).
SCALED_FROM: Final[int] = SLICES[_SCALAR_PIECES[0]].start


def observation_counts(observations: np.ndarray) -> np.ndarray:
    """The integer counts behind observations (``uint8``, 4x smaller than the float32 vectors)."""
    return np.rint(np.asarray(observations, np.float32) / _SCALE).astype(np.uint8)


# numpy's functions, bound once: the compiled build would look each up on the module every call.
_MULTIPLY: Final = np.multiply
_FROM_BUFFER: Final = np.frombuffer
_UINT8: Final = np.uint8


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
    writer = BytesWriter()
    writer.write(hand_row)
    writer.write(_CARD_ROW[view.drawn_card])
    writer.write(_CARD_ROW[view.kept_card])
    writer.write(common_row)
    writer.write(own_auction_row)
    writer.write(_CARD_ROW[view.auction_card])
    writer.write(_CARD_ROW[view.church_card])
    _write_known_cards(writer, view.payment_cards if bidding else [], discard_row, view.own_face_down_discard)
    for row in opponent_rows:
        writer.write(row)
    turn = (view.phase, view.decision, view.current_player, view.active_player, view.first_player, list(view.dice))
    quota = view.quota
    counts = (
        view.hand,
        (quota[0], quota[1], quota[2]),
        view.high_bid if bidding else 0,
        view.payment_count if bidding else 0,
        view.payment_value if bidding else 0,
        view.hand_sizes,
        view.draw_pile_size,
        view.auction_pile_size,
        len(view.common_area),
    )
    bidders: _Bidders = None
    if bidding:
        bidders = (view.high_bidder, _seat_bits(view.passed, 0), _seat_bits(view.excluded, 0))
    _write_flags_and_scalars(writer, view.num_players, turn, bidders, counts)
    return _scaled(writer.getvalue(), out)


def encode_state(state: State, seat: int, out: np.ndarray | None = None) -> np.ndarray:
    """``encode(player_view(state, seat))``, read straight from the state without building the view.

    The environment observes at every step, and the view's 42 fields cost about as much as
    the encoding itself. A property test checks both paths give identical vectors over random
    games of every size.
    """
    return _scaled(encode_state_counts(state, seat), out)


def encode_state_counts(state: State, seat: int) -> bytes:
    """The observation of ``seat`` as its integer counts, one byte per entry (the vector of
    :func:`encode_state` divided by :data:`OBSERVATION_SCALE`): what the batched games join
    into one array, converting a whole batch to floats at once.

    What the seat may see is decided where the view's is:
    :func:`~biblios_env.engine.visibility.seat_secrets` (drawn and kept cards only to their
    owner, a payment in progress only to the payer); like the view, it reads only the observer's
    own face-down discards and hand.
    """
    n = state.num_players
    drawn_card, kept_card, quota, sees_payment, hand_sizes = seat_secrets(state, seat)
    current = state.current_player
    bidding = state.auction_card != NO_CARD
    payment = state.payment
    writer = BytesWriter()
    writer.write(state.hand_rows[seat])
    writer.write(_CARD_ROW[drawn_card])
    writer.write(_CARD_ROW[kept_card])
    writer.write(state.common_row)
    writer.write(state.contribution_rows[seat])
    writer.write(_CARD_ROW[state.auction_card])
    writer.write(_CARD_ROW[state.church_card])
    _write_known_cards(
        writer, payment if sees_payment and bidding else [], state.public_discard_row, state.private_discard[seat]
    )
    public_hand_rows = state.public_hand_rows
    for offset in range(1, n):
        writer.write(public_hand_rows[(seat + offset) % n])
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
            _seat_bits(state.passed, seat),
            _seat_bits(state.excluded, seat),
        )
    _write_flags_and_scalars(writer, n, turn, bidders, counts)
    return writer.getvalue()


def _write_known_cards(
    writer: BytesWriter, payment_cards: Sequence[int], public_discard_row: bytearray, own_face_down: Sequence[int]
) -> None:
    """The observer's payment in progress (the cards it picked so far, seen only by it), then the
    discards it knows: the public ones and its own face-down ones."""
    if payment_cards:
        writer.write(indicator_row(payment_cards))
    else:
        writer.write(_NO_CARDS_ROW)
    if own_face_down:
        discard_row = bytearray(public_discard_row)
        for card in own_face_down:
            discard_row[card] = 1
        writer.write(discard_row)
    else:
        writer.write(public_discard_row)


def _seat_bits(flags: Sequence[bool], seat: int) -> int:
    """Per-seat flags as a bit mask by seat relative to ``seat`` (bit ``r``: seat ``seat + r``)."""
    n = len(flags)
    bits = 0
    for relative in range(n):
        if flags[(seat + relative) % n]:
            bits |= 1 << relative
    return bits


def _scaled(counts: bytes, out: np.ndarray | None) -> np.ndarray:
    """The float32 observation of its counts (into ``out`` if given)."""
    if out is None:
        return _MULTIPLY(_FROM_BUFFER(counts, _UINT8), _SCALE)
    return _MULTIPLY(_FROM_BUFFER(counts, _UINT8), _SCALE, out=out)


#: The parts of one observation after its card-set rows, seats already relative to the observer.
#: phase, decision, current player, active player, first player, dice.
_Turn = tuple[int, int, int, int, int, list[int]]
#: While a card is under auction: the high bidder and who has passed or is excluded (bit masks
#: by relative seat, see :func:`_seat_bits`); ``None`` otherwise (the bidding context exists only then).
_Bidders = tuple[int, int, int] | None
#: The observer's hand (for its coins), quota, high bid, the observer's own payment so far
#: (cards, coins), hand sizes, and the sizes of the draw pile, auction pile and common area.
_Counts = tuple[list[int], tuple[int, int, int], int, int, int, list[int], int, int, int]


def _write_flags_and_scalars(writer: BytesWriter, n: int, turn: _Turn, bidders: _Bidders, counts: _Counts) -> None:
    """After the card-set rows of the seats in the game: the opponents' padding, the flags, then
    the scalars (:data:`_FLAG_PIECES`, :data:`_SCALAR_PIECES`).

    Written for speed (it runs at every environment step, and a Python-level write of one byte
    into a ``bytearray`` costs as much as copying a row): every flag group is a ready-made row of
    bytes from the tables above, and the scalars are appended one byte each to a
    :class:`librt.strings.BytesWriter`, which the compiled build calls without Python objects.
    """
    phase, decision, current, active, first, dice = turn
    hand, quota, high_bid, payment_count, payment_value, hand_sizes, draw_pile_size, auction_pile_size, common_size = (
        counts
    )
    high_bidder_index, passed, excluded = _NO_AUCTION, 0, 0
    if bidders is not None:
        high_bidder, passed, excluded = bidders
        high_bidder_index = MAX_PLAYERS if high_bidder == NO_SEAT else high_bidder
    dice_key = 0
    for category in range(NUM_CATEGORIES - 1, -1, -1):
        dice_key = dice_key * DIE_MAX + dice[category] - 1
    current_index = _NOBODY if current == NO_SEAT else current
    writer.write(_OPPONENT_PADDING[n])
    writer.write(_GAME_ROWS[((n - 2) * _NUM_PHASES + phase) * _NUM_DECISIONS + decision])
    writer.write(_DICE_ROWS[dice_key])
    writer.write(_BIDDING_ROWS[(high_bidder_index << 8) + (passed << 4) + excluded])
    writer.write(_SEAT_ROWS[((active * (MAX_PLAYERS + 1) + current_index) * MAX_PLAYERS + first) * 3 + n - 2])
    # The scalars, in _SCALAR_PIECES order: dice values, gold, quota, high bid, payment progress,
    # hand sizes padded to MAX_PLAYERS seats, pile sizes.
    for die in dice:
        writer.append(die)
    gold = 0
    for card in hand:
        gold += _GOLD_COINS[card]
    writer.append(gold)
    writer.append(quota[0])
    writer.append(quota[1])
    writer.append(quota[2])
    writer.append(high_bid)
    writer.append(payment_count)
    writer.append(payment_value)
    for size in hand_sizes:
        writer.append(size)
    writer.write(_OPPONENT_SIZES_PADDING[n])
    writer.append(draw_pile_size)
    writer.append(auction_pile_size)
    writer.append(common_size)


#: The length of a global state vector (:func:`encode_global_state`): seat 0's observation, then
#: 87-wide card indicators of every hand (seats 0..3, padded), the draw pile, the auction pile
#: and the removed cards.
STATE_SIZE: Final = OBSERVATION_SIZE + (MAX_PLAYERS + 3) * NUM_CARDS


def encode_global_state(state: State, out: np.ndarray | None = None) -> np.ndarray:
    """The whole table as one float32 vector of :data:`STATE_SIZE`, for centralized critics (the
    PettingZoo env's ``state()``). It shows every hidden card: never give it to a player."""
    if out is None:
        out = np.zeros(STATE_SIZE, dtype=np.float32)
    else:
        out[OBSERVATION_SIZE:] = 0.0
    encode_state(state, 0, out[:OBSERVATION_SIZE])
    base = OBSERVATION_SIZE
    padding: list[list[int]] = [[]] * (MAX_PLAYERS - state.num_players)
    for cards in (*state.hands, *padding, state.draw_pile, state.auction_pile, state.removed):
        out[[base + card for card in cards]] = 1.0
        base += NUM_CARDS
    return out


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
