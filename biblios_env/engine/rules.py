"""The rules dispatcher: legal actions of a decision and applying one action to a state.

This is the only place that knows how the phases chain together (gift turns → auction
phase → scoring) and where play resumes after a church card interrupts it (RULES §4).
It trusts its caller (:class:`biblios_env.engine.game.Game`) to have checked legality.
"""

from __future__ import annotations

from biblios_env.actions import AUCTION, BID_BASE, COMMON, KEEP, PASS, PAY_BASE, REFUSE, TAKE_BASE
from biblios_env.engine import auctions, church, gifts, setup
from biblios_env.engine.flow import (
    CHANCE_DRAW,
    CHANCE_REMOVAL,
    CHANCE_REVEAL,
    DECISION_BID,
    DECISION_CHURCH,
    DECISION_NONE,
    DECISION_PAY,
    DECISION_PLACE,
    DECISION_TAKE,
    NO_CHANCE,
    PHASE_END,
    RESUME_PLACING,
    RESUME_TAKING,
    STANDARD_PRESET,
)
from biblios_env.engine.scoring import score
from biblios_env.engine.state import NO_SEAT, State, await_chance

_PLACE_ORDER = (KEEP, AUCTION, COMMON)
_OPEN_BIDS = auctions.BID_LEGAL
# Module constants: a global load is cheaper than an enum attribute load in these hot functions.


def start_game(state: State) -> None:
    """The first player takes the first gift turn (RULES §2.4, §3), once the cards are removed."""
    if setup.removals_left(state):
        await_chance(state, CHANCE_REMOVAL)
    else:
        gifts.start_turn(state, state.first_player)


def legal_actions(state: State) -> list[int]:
    """The legal action ids of the current decision, ascending; empty once the game is over.

    Decisions are tested most frequent first: bids outnumber all other decisions together.
    """
    decision = state.decision
    if decision == DECISION_BID:
        if state.strict_bids or state.preset != STANDARD_PRESET:
            return auctions.bid_legal_actions(state)
        # bid_legal_actions() for the standard game without strict bids, saving a call
        return _OPEN_BIDS[state.high_bid][:]
    if decision == DECISION_PAY:
        return auctions.pay_legal_actions(state)
    if decision == DECISION_PLACE:
        quota = state.quota
        return [slot for slot in _PLACE_ORDER if quota[slot]]
    if decision == DECISION_TAKE:
        return sorted([TAKE_BASE + card for card in state.common_area])
    if decision == DECISION_CHURCH:
        return church.legal_actions(state)
    if state.chance_kind:
        return chance_outcomes(state)
    return []


def chance_outcomes(state: State) -> list[int]:
    """The cards the awaited random event may give, ascending, each as likely (explicit chance)."""
    kind = state.chance_kind
    if kind == CHANCE_DRAW:
        return sorted(state.draw_pile)
    if kind == CHANCE_REVEAL:
        return sorted(state.auction_pile)
    if kind == CHANCE_REMOVAL:
        return setup.removal_outcomes(state)
    return sorted(state.hands[state.high_bidder])  # a penalty pick: the defaulter's hand


def apply(state: State, action: int) -> None:
    """Apply a legal ``action`` for the current player and run play on to the next decision."""
    decision = state.decision
    if decision == DECISION_BID:
        going = auctions.pass_(state) if action == PASS else auctions.bid(state, action - BID_BASE)
    elif decision == DECISION_PAY:
        going = auctions.refuse(state) if action == REFUSE else auctions.pay(state, action - PAY_BASE)
    elif decision == DECISION_PLACE:
        gifts.place(state, action)
        return
    elif decision == DECISION_TAKE:
        going = gifts.take(state, action - TAKE_BASE) or _end_gift_turn(state)
    elif decision == DECISION_CHURCH:
        church.resolve(state, action)
        going = _resume_after_church(state)
    else:
        going = _apply_chance(state, action)
    if not going:
        _end_game(state)


def _apply_chance(state: State, card: int) -> bool:
    """The awaited random event gives ``card`` (one of :func:`chance_outcomes`); play runs on."""
    kind = state.chance_kind
    if kind == CHANCE_DRAW:
        gifts.draw(state, card)
        return True
    if kind == CHANCE_REVEAL:
        return auctions.reveal(state, card)
    if kind == CHANCE_REMOVAL:
        setup.remove_unseen(state, card)
        state.chance_kind = NO_CHANCE
        start_game(state)
        return True
    return auctions.penalty_pick(state, card)


def _resume_after_church(state: State) -> bool:
    resume = state.church_resume
    if resume == RESUME_PLACING:
        gifts.continue_placing(state)
        return True
    if resume == RESUME_TAKING:
        return gifts.next_taker(state) or _end_gift_turn(state)
    return auctions.advance(state)


def _end_gift_turn(state: State) -> bool:
    """The next player takes a gift turn; when the draw pile is empty the auctions begin."""
    if state.draw_pile:
        gifts.start_turn(state, state.next_seat(state.active_player))
        return True
    return auctions.start_phase(state)


def _end_game(state: State) -> None:
    state.phase = PHASE_END
    state.decision = DECISION_NONE
    state.current_player = NO_SEAT
    state.vp, state.winners, state.category_winners = score(state.hands, state.dice)
