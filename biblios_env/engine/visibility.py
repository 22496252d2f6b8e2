"""What each seat may see (RULES §7), decided in one place.

Everything that shows one seat's information asks these functions instead of re-deriving
the rules: the seat's view (:func:`biblios_env.engine.views.player_view`), the environment's
fast observation (:func:`biblios_env.observations.encode_state`), the engine's per-seat
penalty records, the key of a search tree's nodes (:func:`decision_key`) and the terminal
game's narration of the other players' moves (``experiments.play``).

* :func:`seat_secrets`: of the hidden information that changes at every step, what one seat
  sees now (its drawn and kept card, the placements left, a payment in progress, hand sizes).
* :func:`placement_face_up`, :func:`payment_face_up`, :func:`penalty_card_seen`: which moves
  the whole table sees, and who sees a card moved by a penalty;
  :func:`record_penalty_move` keeps each seat's record of the penalty moves by that rule.

Public records the state keeps for everyone (the common area, cards publicly seen entering a
hand, public discards) and the seat's own records (its hand, its auction cards, its face-down
discards) need no decision: a view copies them.
"""

from __future__ import annotations

from typing import Any, Final

from biblios_env.actions import COMMON, KEEP
from biblios_env.cards import IS_CHURCH, IS_GOLD, NUM_CARDS
from biblios_env.engine.flow import DECISION_PLACE, DECISION_TAKE, NO_CARD, PHASE_GIFT
from biblios_env.engine.setup import PLAYER_COUNTS
from biblios_env.engine.state import PenaltyMove, State

_NO_QUOTA: Final[tuple[int, int, int]] = (0, 0, 0)
# Module constants: a global load is cheaper than an enum attribute load in the hot functions.


def seat_secrets(state: State, seat: int) -> tuple[int, int, tuple[int, int, int], bool, list[int]]:
    """What ``seat`` sees now of the hidden information that changes from step to step:
    ``(drawn card, kept card, placements left, sees the payment, hand sizes by relative seat)``.

    During the gifts, the card being placed is seen only by the seat placing it and the card
    kept this turn only by the active player (both ``-1`` for the others); the placements left
    are public during the gifts and none otherwise. A payment in progress is seen only by the
    payer (paying is one act, RULES §5): to everyone else the picked cards are still in the
    payer's hand, so they count in its hand size. Hand sizes are by seat relative to ``seat``.
    """
    gift_phase = state.phase == PHASE_GIFT
    quota = state.quota
    hands = state.hands
    n = state.num_players
    hand_sizes = [len(hands[(seat + offset) % n]) for offset in range(n)]
    payer = state.high_bidder
    sees_payment = payer == seat
    payment = state.payment
    if payment and not sees_payment:
        hand_sizes[(payer - seat) % n] += len(payment)
    return (
        state.drawn_card if gift_phase and state.current_player == seat else NO_CARD,
        state.kept_card if gift_phase and state.active_player == seat else NO_CARD,
        (quota[0], quota[1], quota[2]) if gift_phase else _NO_QUOTA,
        sees_payment,
        hand_sizes,
    )


def placement_face_up(slot: int, card: int) -> bool:
    """Whether the whole table sees a card placed in ``slot`` (RULES §3, §4, §7): the common area
    is face up and a kept church card is acquired, resolved and discarded face up; a card kept
    or put on the auction pile is seen only by the seat that placed it."""
    return slot == COMMON or (slot == KEEP and IS_CHURCH[card])


def payment_face_up(auction_card: int) -> bool:
    """Whether the whole table sees which cards paid for ``auction_card`` (RULES §5, §7): gold paid
    for a category or church card is discarded face up, the cards paid for a gold card face down."""
    return not IS_GOLD[auction_card]


def penalty_card_seen(seat: int, giver: int, receiver: int) -> bool:
    """Whether ``seat`` sees which card a standard penalty moved from ``giver`` to ``receiver``:
    only the two of them do; everybody sees that a card moved (RULES §5, §7)."""
    return seat in (giver, receiver)


#: ``_PENALTY_MOVES[giver][receiver][card + 1]`` is the record ``(giver, receiver, card)``, for
#: every seat and card id or ``NO_CARD``: made once here, so that recording a move allocates
#: nothing. Random play moves a card by a penalty every few decisions at 4 players, and each
#: move was ``1 + num_players`` new tuples: most of what set off the garbage collector's young
#: collections in the batched games (a new tuple counts toward the next one until it is freed).
_SEATS: Final = range(max(PLAYER_COUNTS))
_PENALTY_MOVES: Final[tuple[tuple[tuple[PenaltyMove, ...], ...], ...]] = tuple(
    tuple(tuple((giver, receiver, card) for card in range(NO_CARD, NUM_CARDS)) for receiver in _SEATS)
    for giver in _SEATS
)


def penalty_move(giver: int, receiver: int, card: int) -> PenaltyMove:
    """The record ``(giver, receiver, card)`` of a penalty move (seats, or seats relative to the
    seat that keeps it; ``card`` a card id or ``NO_CARD``), the same tuple at every call."""
    return _PENALTY_MOVES[giver][receiver][card + 1]


def record_penalty_move(state: State, giver: int, receiver: int, card: int) -> None:
    """Record one card moved by a standard penalty, in ``state.penalty_moves`` and as every seat
    sees it (RULES §7: how many cards moved is public, which card only the two players involved
    know)."""
    n = state.num_players
    state.penalty_moves.append(penalty_move(giver, receiver, card))
    for seat, moves in enumerate(state.penalty_views):
        seen = card if penalty_card_seen(seat, giver, receiver) else NO_CARD
        moves.append(penalty_move((giver - seat) % n, (receiver - seat) % n, seen))


def decision_key(state: State, seat: int) -> tuple[Any, ...]:
    """A short summary of the position as ``seat`` sees it, for the nodes of a search tree: the
    decision and the seat to act, the card under auction and the church card (face up), and
    when ``seat`` is to act, what it chooses from that nobody else sees change the same way (its
    drawn card when placing, the common area when taking). Built only from what ``seat`` may
    see, so a tree keyed by it does not branch on hidden cards (``tests/test_engine/test_views.py``)."""
    decision = state.decision
    player = state.current_player
    chosen_from: Any = NO_CARD
    if player == seat:
        if decision == DECISION_PLACE:
            chosen_from = state.drawn_card
        elif decision == DECISION_TAKE:
            chosen_from = tuple(sorted(state.common_area))
    return (decision, player, state.auction_card, state.church_card, chosen_from)
