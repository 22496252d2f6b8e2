"""What one seat knows (RULES §7), as a :class:`PlayerView` built from the full state.

Renderers and agents get a ``PlayerView`` (or its encoding), never the :class:`State`. What
is visible to whom is decided in :mod:`biblios_env.engine.visibility`, which this module and
the environment's fast observation path (:func:`biblios_env.observations.encode_state`, tested
to give exactly the encoding of this view) both ask. Seats in a view
are *relative* to the viewer: 0 is the viewer, 1 the player to their left, and so on, so
one policy can serve every seat and player count.

A view shares nothing that can change the game: agents are third-party code (a tournament
hands every decision's view to them). Each sequence in a view is either read-only (tuples)
or built for this view alone (the sorted hand, the rotated per-seat lists, the payment in
progress, and copies of the card indicator rows: copying a ``bytearray`` costs half as much
as making ``bytes`` of it). Writing into a view therefore either raises (``view.dice[0] = 6``
is a TypeError) or changes only that view, and a view kept for later still describes the
moment it was built. The copies cost about 20-30% of a view: ~44k-50k CPU instructions for
2-4 players against ~37k when the view shared the state's lists (callgrind; wall clock with
``python -m experiments.benchmarks.engine --loops views``).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from biblios_env.engine.flow import STANDARD_PRESET
from biblios_env.engine.state import NO_CARD, NO_SEAT, PenaltyMove, State
from biblios_env.engine.visibility import seat_secrets

_copy_row = bytearray.copy


@dataclass(slots=True)
class PlayerView:
    """One seat's information set. Card fields are card ids (-1 for none); seat fields are
    relative seats (-1 for none); per-seat lists are indexed by relative seat."""

    num_players: int
    seat: int  # the viewer's absolute seat (to turn relative seats back into seats)
    phase: int
    decision: int
    current_player: int
    active_player: int
    first_player: int
    dice: tuple[int, ...]
    hand: list[int]  # sorted (the view's own list)
    drawn_card: int  # the card the viewer is placing (only while it is theirs to place)
    kept_card: int  # the card the viewer kept this gift turn, not yet in hand
    quota: tuple[int, ...]  # keep / auction / common placements left this gift turn
    common_area: tuple[int, ...]
    own_auction_cards: tuple[int, ...]  # the viewer's cards still face down in the auction pile
    auction_card: int
    church_card: int
    high_bid: int
    high_bidder: int
    passed: list[bool]
    excluded: list[bool]
    payment_cards: list[int]  # the cards picked so far for the viewer's own payment (nobody else sees them)
    payment_count: int  # cards picked so far for the viewer's own payment (0 for the others)
    payment_value: int  # coins picked so far for the viewer's own payment (0 for the others)
    public_discard: tuple[int, ...]  # discards everybody saw
    own_face_down_discard: tuple[int, ...]  # the viewer's own face-down payments and blind discards
    opponent_cards: list[tuple[int, ...]]  # per relative seat 1..N-1: publicly seen entering that hand
    hand_sizes: list[int]  # a payer's picked cards still count as in hand for the others
    draw_pile_size: int
    auction_pile_size: int
    # Public facts a determinization sampler needs (biblios_env.engine.sampling).
    bluffs: bool = False  # the "medieval bluffs" penalty variant is on (RULES §5)
    strict_bids: bool = False
    auction_order_placed: bool = False  # auctions follow the placed order instead of a shuffle
    own_public_cards: tuple[int, ...] = ()  # publicly seen entering the viewer's hand
    face_down_counts: list[int] = field(default_factory=list)  # per relative seat: cards discarded face down
    # per relative seat: its publicly known cards when it last lost cards unseen (older ones may be gone)
    public_at_last_loss: list[tuple[int, ...]] = field(default_factory=list)
    # standard penalties, in order: (relative defaulter, relative receiver, card or -1 unless the viewer is one of them)
    penalty_moves: tuple[PenaltyMove, ...] = ()
    hidden_kept: bool = False  # an opponent's kept card lies face down this gift turn
    preset: str = STANDARD_PRESET  # the cards the game was dealt from (setup.PRESETS)
    # The card sets above as 87-byte indicator rows copied from the state (what the observation
    # encoder joins); ``None`` in hand-made views, which are then encoded from the card lists.
    hand_row: bytearray | None = None
    common_row: bytearray | None = None
    own_auction_row: bytearray | None = None
    public_discard_row: bytearray | None = None
    opponent_rows: list[bytearray] | None = None


def player_view(state: State, seat: int) -> PlayerView:
    """Build ``seat``'s view of ``state``; nothing hidden from ``seat`` is read into it.

    Per-seat lists are rotated with slices (``lst[seat:] + lst[:seat]`` puts them in relative
    seat order) and converted with ``map`` rather than comprehensions: this runs at every
    tournament decision and for every sample a search agent draws.
    """
    n = state.num_players
    drawn_card, kept_card, quota, sees_payment, hand_sizes = seat_secrets(state, seat)
    current = state.current_player
    high_bidder = state.high_bidder
    payment = state.payment
    public_hands = state.public_hands
    rotated_private = state.private_discard[seat:] + state.private_discard[:seat]
    return PlayerView(
        n,
        seat,
        state.phase,
        state.decision,
        NO_SEAT if current == NO_SEAT else (current - seat) % n,
        (state.active_player - seat) % n,
        (state.first_player - seat) % n,
        tuple(state.dice),
        sorted(state.hands[seat]),
        drawn_card,
        kept_card,
        tuple(quota),
        tuple(state.common_area),
        tuple(state.auction_contributions[seat]),
        state.auction_card,
        state.church_card,
        state.high_bid,
        NO_SEAT if high_bidder == NO_SEAT else (high_bidder - seat) % n,
        state.passed[seat:] + state.passed[:seat],
        state.excluded[seat:] + state.excluded[:seat],
        payment[:] if sees_payment else [],
        len(payment) if sees_payment else 0,
        state.payment_value if sees_payment else 0,
        tuple(state.public_discard),
        tuple(rotated_private[0]),
        [*map(tuple, public_hands[seat + 1 :] + public_hands[:seat])],
        hand_sizes,
        len(state.draw_pile),
        len(state.auction_pile),
        state.bluffs,
        state.strict_bids,
        state.auction_order_placed,
        tuple(public_hands[seat]),
        list(map(len, rotated_private)),
        state.public_at_last_loss[seat:] + state.public_at_last_loss[:seat],  # a new list of tuples
        tuple(state.penalty_views[seat]),
        state.kept_card != NO_CARD and kept_card == NO_CARD,  # someone else's card kept face down this turn
        state.preset,
        state.hand_rows[seat].copy(),
        state.common_row.copy(),
        state.contribution_rows[seat].copy(),
        state.public_discard_row.copy(),
        [*map(_copy_row, state.public_hand_rows[seat + 1 :] + state.public_hand_rows[:seat])],
    )
