"""Church cards (RULES §4): acquired cards are resolved at once by changing dice, then discarded."""

from __future__ import annotations

from biblios_env.actions import CATEGORY_PAIRS, CHURCH_DECLINE, CHURCH_ONE_BASE, CHURCH_TWO_BASE
from biblios_env.cards import CARD_CHURCH, DIE_MAX, DIE_MIN, ChurchEffect
from biblios_env.engine.state import NO_CARD, NO_SEAT, Decision, State

#: The die change of a two-dice card, by effect.
_TWO_DICE_DELTA = {ChurchEffect.TWO_UP: 1, ChurchEffect.TWO_DOWN: -1}


def acquire(state: State, seat: int, card: int, resume: int) -> None:
    """``seat`` acquired church ``card``: play stops until they resolve it (RULES §4)."""
    state.church_card = card
    state.church_owner = seat
    state.church_resume = resume
    state.decision = Decision.CHURCH
    state.current_player = seat


def legal_actions(state: State) -> list[int]:
    """DECLINE plus every die change that keeps the dice within 1..6 (RULES §4)."""
    dice = state.dice
    effect = CARD_CHURCH[state.church_card]
    actions = [CHURCH_DECLINE]
    if effect in (ChurchEffect.ONE_UP, ChurchEffect.ONE_DOWN, ChurchEffect.ONE_EITHER):
        for category, value in enumerate(dice):
            if effect != ChurchEffect.ONE_DOWN and value < DIE_MAX:
                actions.append(CHURCH_ONE_BASE + 2 * category)
            if effect != ChurchEffect.ONE_UP and value > DIE_MIN:
                actions.append(CHURCH_ONE_BASE + 2 * category + 1)
    else:
        delta = _TWO_DICE_DELTA[effect]
        for index, (first, second) in enumerate(CATEGORY_PAIRS):
            if DIE_MIN <= dice[first] + delta <= DIE_MAX and DIE_MIN <= dice[second] + delta <= DIE_MAX:
                actions.append(CHURCH_TWO_BASE + index)
    return actions


def resolve(state: State, action: int) -> None:
    """Apply a legal church action and discard the card face up (acquisition is public, RULES §7)."""
    if action != CHURCH_DECLINE:
        if action < CHURCH_TWO_BASE:
            category, direction = divmod(action - CHURCH_ONE_BASE, 2)
            state.dice[category] += -1 if direction else 1
        else:
            delta = _TWO_DICE_DELTA[CARD_CHURCH[state.church_card]]
            first, second = CATEGORY_PAIRS[action - CHURCH_TWO_BASE]
            state.dice[first] += delta
            state.dice[second] += delta
    state.discard.append(state.church_card)
    state.public_discard.append(state.church_card)
    state.public_discard_row[state.church_card] = 1
    state.church_card = NO_CARD
    state.church_owner = NO_SEAT
