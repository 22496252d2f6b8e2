"""The public action table: one flat ``Discrete(266)`` space for every player count.

The ids below are a stable contract (logs, trained policies and tests refer to them):

==============  ==========================================================
ids             meaning
==============  ==========================================================
0, 1, 2         place the drawn card: KEEP, AUCTION, COMMON (RULES §3)
3 + c           TAKE card ``c`` (0..86) from the common area
90              PASS in an auction
90 + k          BID ``k`` (1..66)
157 + c         PAY with card ``c`` (one card at a time; RULES §5)
244             REFUSE to pay (take the penalty)
245             CHURCH_DECLINE: discard a church card without effect
246 + 2·cat + d change one die: d = 0 for +1, 1 for -1
256 + p         change two dice: pair ``p`` of the 10 (i < j) category pairs,
                lexicographic; the direction is the church card's
==============  ==========================================================
"""

from __future__ import annotations

from itertools import combinations
from typing import Any, Final, TypeGuard

import numpy as np

from biblios_env.cards import (
    CARD_CHURCH,
    CATEGORY_NAMES,
    IS_CHURCH,
    NUM_CATEGORIES,
    TOTAL_GOLD,
    ChurchEffect,
    card_name,
    check_card,
)

KEEP: Final = 0
AUCTION: Final = 1
COMMON: Final = 2
TAKE_BASE: Final = 3
PASS: Final = 90
BID_BASE: Final = 90  # BID k is BID_BASE + k, k >= 1
MAX_BID: Final = TOTAL_GOLD  # 66: all the gold in the game
PAY_BASE: Final = 157
REFUSE: Final = 244
CHURCH_DECLINE: Final = 245
CHURCH_ONE_BASE: Final = 246
CHURCH_TWO_BASE: Final = 256
#: The 10 pairs of different categories, in lexicographic order (index = action - CHURCH_TWO_BASE).
CATEGORY_PAIRS: Final[tuple[tuple[int, int], ...]] = tuple(combinations(range(NUM_CATEGORIES), 2))
NUM_ACTIONS: Final = CHURCH_TWO_BASE + len(CATEGORY_PAIRS)  # 266

_PAIR_INDEX: Final = {pair: index for index, pair in enumerate(CATEGORY_PAIRS)}
_PLACE_NAMES: Final = ("KEEP", "AUCTION", "COMMON")


def _check_category(category: object) -> int:
    if isinstance(category, bool) or not isinstance(category, int) or not 0 <= category < NUM_CATEGORIES:
        raise ValueError(f"category must be an int in 0..{NUM_CATEGORIES - 1}, got {category!r}")
    return category


def table_markdown() -> str:
    """The action table as Markdown, generated from the constants (docs/environment.md embeds it)."""
    rows = [
        ("0, 1, 2", "place the drawn card: KEEP, AUCTION, COMMON"),
        (f"{TAKE_BASE} + c (c = 0..86)", "TAKE card c from the common area"),
        (f"{PASS}", "PASS (auction)"),
        (f"{BID_BASE} + k (k = 1..{MAX_BID})", "BID k (gold for non-gold cards, a card count for gold cards)"),
        (f"{PAY_BASE} + c (c = 0..86)", "PAY with card c (one card at a time; completes once covered)"),
        (f"{REFUSE}", "REFUSE to pay (take the penalty)"),
        (f"{CHURCH_DECLINE}", "CHURCH_DECLINE"),
        (f"{CHURCH_ONE_BASE} + 2·cat + d", "change one die: d = 0 for +1, 1 for −1"),
        (f"{CHURCH_TWO_BASE} + p (p = 0..{len(CATEGORY_PAIRS) - 1})", "change two dice: pair p of the (i<j) pairs"),
    ]
    lines = ["| ids | meaning |", "|---|---|"]
    lines += [f"| {ids} | {meaning} |" for ids, meaning in rows]
    return "\n".join(lines)


def take(card: int) -> int:
    """The action that takes ``card`` from the common area."""
    return TAKE_BASE + check_card(card)


def bid(amount: int) -> int:
    """The action that bids ``amount`` (1..66): gold for non-gold cards, a card count for gold cards."""
    if isinstance(amount, bool) or not isinstance(amount, int) or not 1 <= amount <= MAX_BID:
        raise ValueError(f"bid must be an int in 1..{MAX_BID}, got {amount!r}")
    return BID_BASE + amount


def pay(card: int) -> int:
    """The action that adds ``card`` from hand to the payment in progress."""
    return PAY_BASE + check_card(card)


def church_one(category: int, delta: int) -> int:
    """The action that changes one category's die by ``delta`` (+1 or -1)."""
    _check_category(category)
    if delta not in (1, -1) or isinstance(delta, bool):
        raise ValueError(f"delta must be +1 or -1, got {delta!r}")
    return CHURCH_ONE_BASE + 2 * category + (0 if delta == 1 else 1)


def church_two(first: int, second: int) -> int:
    """The action that changes two different categories' dice (order of the two does not matter)."""
    _check_category(first)
    _check_category(second)
    if first == second:
        raise ValueError(f"a two-dice church card changes two different dice, got category {first} twice")
    return CHURCH_TWO_BASE + _PAIR_INDEX[(min(first, second), max(first, second))]


#: A church card's possible die changes per die it moves, by effect (RULES §4).
_ONE_DIE_DELTAS: Final = {ChurchEffect.ONE_UP: (1,), ChurchEffect.ONE_DOWN: (-1,), ChurchEffect.ONE_EITHER: (1, -1)}
_TWO_DICE_DELTA: Final = {ChurchEffect.TWO_UP: 1, ChurchEffect.TWO_DOWN: -1}

#: Die changes of a church action: ``((category, delta), ...)``, empty for CHURCH_DECLINE.
DieChanges = tuple[tuple[int, int], ...]


def _church_moves(effect: ChurchEffect) -> tuple[tuple[int, DieChanges], ...]:
    moves: list[tuple[int, DieChanges]] = [(CHURCH_DECLINE, ())]
    if effect in _ONE_DIE_DELTAS:
        for category in range(NUM_CATEGORIES):
            moves += [(church_one(category, delta), ((category, delta),)) for delta in _ONE_DIE_DELTAS[effect]]
    else:
        delta = _TWO_DICE_DELTA[effect]
        for index, (first, second) in enumerate(CATEGORY_PAIRS):
            moves.append((CHURCH_TWO_BASE + index, ((first, delta), (second, delta))))
    return tuple(sorted(moves))


#: ``CHURCH_MOVES[effect]``: every church action that can resolve a card with that effect,
#: ascending, with its die changes, whatever the dice show (RULES §4; the engine keeps the
#: ones that leave every die within 1..6).
CHURCH_MOVES: Final[dict[int, tuple[tuple[int, DieChanges], ...]]] = {
    effect: _church_moves(effect) for effect in ChurchEffect
}
_CHURCH_CHANGES: Final[dict[tuple[int, int], DieChanges]] = {
    (effect, action): changes for effect, moves in CHURCH_MOVES.items() for action, changes in moves
}


def church_changes(action: int, card: int) -> DieChanges:
    """The die changes ``((category, delta), ...)`` of church ``action`` resolving church ``card``
    (RULES §4): one die for the one-die cards, two different dice moved the same way for the
    two-dice cards (the card gives the direction), none for CHURCH_DECLINE.

    Raises ValueError naming the action and the card when ``action`` cannot resolve ``card``.
    """
    check_card(card)
    if not IS_CHURCH[card]:
        raise ValueError(f"card {card} ({card_name(card)}) is not a church card")
    changes = _CHURCH_CHANGES.get((CARD_CHURCH[card], action))
    if changes is None:
        raise ValueError(f"action {action!r} ({describe(action)}) cannot resolve {card_name(card)} [#{card}]")
    return changes


def is_action_id(action: object) -> TypeGuard[int | np.integer[Any]]:
    """Whether ``action`` is an action id by its type, in range or not: a Python or numpy integer,
    not a bool (``True`` is not KEEP) nor a float. The line between a move (an illegal id can be
    forfeited) and a caller's bug (anything else always raises)."""
    return not isinstance(action, bool) and isinstance(action, (int, np.integer))


def check_action(action: object) -> int:
    """Return ``action`` as an int id, or raise ValueError naming the value and the valid range."""
    if not is_action_id(action) or not 0 <= action < NUM_ACTIONS:
        raise ValueError(f"action must be an int in 0..{NUM_ACTIONS - 1}, got {action!r}")
    return int(action)


def describe(action: int) -> str:
    """A readable description of an action id, e.g. ``"BID 4"`` or ``"TAKE Gold 2 [#57]"``."""
    action = check_action(action)
    if action < TAKE_BASE:
        return _PLACE_NAMES[action]
    if action < PASS:
        card = action - TAKE_BASE
        return f"TAKE {card_name(card)} [#{card}]"
    if action == PASS:
        return "PASS"
    if action < PAY_BASE:
        return f"BID {action - BID_BASE}"
    if action < REFUSE:
        card = action - PAY_BASE
        return f"PAY {card_name(card)} [#{card}]"
    if action == REFUSE:
        return "REFUSE to pay"
    if action == CHURCH_DECLINE:
        return "CHURCH_DECLINE"
    if action < CHURCH_TWO_BASE:
        ((category, delta),) = _CHURCH_CHANGES[ChurchEffect.ONE_EITHER, action]
        return f"DIE {CATEGORY_NAMES[category]} {delta:+d}"
    first, second = CATEGORY_PAIRS[action - CHURCH_TWO_BASE]
    return f"DICE {CATEGORY_NAMES[first]} & {CATEGORY_NAMES[second]}"
