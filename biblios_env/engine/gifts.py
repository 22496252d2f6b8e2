"""Phase 1, the gift turns (RULES §3): draw N+1 cards one at a time, place each, then others take.

Functions here step a :class:`State` in place. A church card kept or taken interrupts the turn
(RULES §4): :func:`place` and :func:`take` hand the decision to its owner
(:func:`~biblios_env.engine.church.acquire`), and the dispatcher in ``rules.py`` resumes the
turn once it is resolved (:func:`continue_placing` or :func:`next_taker`, as
``state.church_resume`` says). :func:`take` and :func:`next_taker` return ``False`` once every
other seat has taken, when the dispatcher starts the next turn or the auctions.
"""

from __future__ import annotations

from biblios_env.actions import AUCTION, COMMON, KEEP
from biblios_env.cards import IS_CHURCH
from biblios_env.engine import church
from biblios_env.engine.flow import (
    CHANCE_DRAW,
    DECISION_PLACE,
    DECISION_TAKE,
    RESUME_PLACING,
    RESUME_TAKING,
)
from biblios_env.engine.state import (
    NO_CARD,
    State,
    add_card,
    await_chance,
    enter_hand_publicly,
    remove_card,
    take_outcome,
)


def start_turn(state: State, active: int) -> None:
    """``active`` becomes the active player with fresh quotas: keep 1, auction 1, common N-1."""
    state.active_player = active
    quota = state.quota  # in place, as the per-auction lists (see auctions.open_bidding)
    quota[KEEP], quota[AUCTION], quota[COMMON] = 1, 1, state.num_players - 1
    state.kept_card = NO_CARD
    _draw(state)


def _draw(state: State) -> None:
    if state.explicit_chance:
        await_chance(state, CHANCE_DRAW)
    else:
        draw(state, state.draw_pile[-1])


def draw(state: State, card: int) -> None:
    """The random event of a draw: the active player draws ``card`` and is to place it (RULES §3).
    A dealt pile gives its top card; with explicit chance the event names any card of the pile."""
    take_outcome(state, state.draw_pile, card)
    state.drawn_card = card
    state.decision = DECISION_PLACE
    state.current_player = state.active_player


def place(state: State, slot: int) -> None:
    """Put the drawn card in ``slot`` (KEEP, AUCTION or COMMON); the caller checked the quota."""
    card = state.drawn_card
    state.drawn_card = NO_CARD
    state.quota[slot] -= 1
    seat = state.active_player
    if slot == KEEP:
        if IS_CHURCH[card]:
            # Kept church cards are acquired at once and never reach the hand (RULES §4).
            church.acquire(state, seat, card, RESUME_PLACING)
            return
        state.kept_card = card
    elif slot == AUCTION:
        # Under the pile (its top card is last): in the placed order the first card placed is
        # auctioned first.
        state.auction_pile.insert(0, card)
        add_card(state.auction_contributions[seat], state.contribution_rows[seat], card)
    else:
        add_card(state.common_area, state.common_row, card)
    continue_placing(state)


def continue_placing(state: State) -> None:
    """Draw the next card, or once all N+1 are placed, add the kept card to hand and let others take."""
    if state.quota[KEEP] or state.quota[AUCTION] or state.quota[COMMON]:
        _draw(state)
        return
    if state.kept_card != NO_CARD:
        add_card(state.hands[state.active_player], state.hand_rows[state.active_player], state.kept_card)
        state.kept_card = NO_CARD
    state.taker = state.active_player
    next_taker(state)


def next_taker(state: State) -> bool:
    """Hand the common area to the next player round the table; ``False`` once the turn is over."""
    state.taker = state.next_seat(state.taker)
    if state.taker == state.active_player:
        return False
    state.decision = DECISION_TAKE
    state.current_player = state.taker
    return True


def take(state: State, card: int) -> bool:
    """The current taker takes ``card`` from the common area; ``True`` if play goes on in this turn."""
    seat = state.current_player
    remove_card(state.common_area, state.common_row, card)
    if IS_CHURCH[card]:
        church.acquire(state, seat, card, RESUME_TAKING)
        return True
    enter_hand_publicly(state, seat, card)
    return next_taker(state)
