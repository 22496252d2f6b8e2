"""Church cards (RULES §4): acquired cards are resolved at once by changing dice, then discarded.

Which die changes a church card offers is the action table's (:data:`~biblios_env.actions.CHURCH_MOVES`,
:func:`~biblios_env.actions.church_changes`); this module keeps the ones the dice allow and applies them.
"""

from __future__ import annotations

from collections.abc import Sequence

from biblios_env.actions import CHURCH_MOVES, church_changes
from biblios_env.cards import CARD_CHURCH, DIE_MAX, DIE_MIN
from biblios_env.engine.flow import DECISION_CHURCH
from biblios_env.engine.state import NO_CARD, NO_SEAT, State, discard_face_up


def acquire(state: State, seat: int, card: int, resume: int) -> None:
    """``seat`` acquired church ``card``: play stops until they resolve it (RULES §4)."""
    state.church_card = card
    state.church_owner = seat
    state.church_resume = resume
    state.decision = DECISION_CHURCH
    state.current_player = seat


def options(card: int, dice: Sequence[int]) -> list[int]:
    """The ways to resolve church ``card`` with these dice, ascending: DECLINE plus every die
    change that keeps each die within 1..6 (RULES §4)."""
    legal = []
    for action, changes in CHURCH_MOVES[CARD_CHURCH[card]]:
        for category, delta in changes:
            if not DIE_MIN <= dice[category] + delta <= DIE_MAX:
                break
        else:  # plain loops: three times cheaper than all() over a generator
            legal.append(action)
    return legal


def legal_actions(state: State) -> list[int]:
    """The legal church actions of the card being resolved (reads only ``church_card`` and ``dice``)."""
    return options(state.church_card, state.dice)


def resolve(state: State, action: int) -> None:
    """Apply a legal church action and discard the card face up (acquisition is public, RULES §7)."""
    card = state.church_card
    for category, delta in church_changes(action, card):
        state.dice[category] += delta
    discard_face_up(state, card)
    state.church_card = NO_CARD
    state.church_owner = NO_SEAT
