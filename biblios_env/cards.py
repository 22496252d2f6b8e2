"""The card table of RULES §1: 87 cards with canonical ids 0..86, built once at import.

Cards are plain ints everywhere in the package; this module turns an id into its
facts (kind, category, value, tie-break letter, church effect) through tuples indexed
by id, so the engine never allocates card objects in its hot loop.
"""

from __future__ import annotations

from collections.abc import Iterable
from enum import IntEnum
from typing import Final


class Category(IntEnum):
    """The five categories in Scriptorium order (RULES §1), the order of every per-category array."""

    MONKS = 0
    PIGMENTS = 1
    HOLY_BOOKS = 2
    MANUSCRIPTS = 3
    FORBIDDEN_TOMES = 4


class Kind(IntEnum):
    """What a card is: a category card, a gold card or a church card."""

    CATEGORY = 0
    GOLD = 1
    CHURCH = 2


NUM_CARDS: Final = 87
NUM_CATEGORIES: Final = len(Category)
CARDS_PER_CATEGORY: Final = 9
LETTERS: Final = "ABCDEFGHI"
CATEGORY_NAMES: Final = ("Monks", "Pigments", "Holy Books", "Manuscripts", "Forbidden Tomes")
DIE_MIN: Final = 1
DIE_MAX: Final = 6
DIE_START: Final = 3

# Category card values by letter index (RULES §1: lower values take the earlier letters).
_HIGH_VALUES: Final = (2, 2, 2, 2, 3, 3, 3, 4, 4)  # Monks, Pigments: total 25
_LOW_VALUES: Final = (1, 1, 1, 1, 1, 1, 1, 2, 2)  # Holy Books, Manuscripts, Forbidden Tomes: total 11

# Card ids: the 45 category cards (category by category, letters in order), then the gold
# cards by value (11 of each of 1, 2 and 3 coins), then the 9 church cards (RULES §1).
GOLD_FIRST: Final = NUM_CATEGORIES * CARDS_PER_CATEGORY  # 45
GOLD_CARDS_PER_VALUE: Final = 11
GOLD_VALUES: Final = (1, 2, 3)
CHURCH_FIRST: Final = GOLD_FIRST + len(GOLD_VALUES) * GOLD_CARDS_PER_VALUE  # 78
GOLD_IDS_BY_VALUE: Final = {
    value: tuple(range(GOLD_FIRST + index * GOLD_CARDS_PER_VALUE, GOLD_FIRST + (index + 1) * GOLD_CARDS_PER_VALUE))
    for index, value in enumerate(GOLD_VALUES)
}
CHURCH_IDS: Final = tuple(range(CHURCH_FIRST, NUM_CARDS))
CATEGORY_IDS: Final = tuple(range(GOLD_FIRST))
TOTAL_GOLD: Final = sum(value * len(ids) for value, ids in GOLD_IDS_BY_VALUE.items())  # 66


class ChurchEffect(IntEnum):
    """What a church card lets its owner do to the dice (RULES §4)."""

    ONE_UP = 0  # +1 to one die
    ONE_DOWN = 1  # -1 to one die
    TWO_UP = 2  # +1 to two different dice
    TWO_DOWN = 3  # -1 to two different dice
    ONE_EITHER = 4  # +1 or -1 to one die, owner's choice


#: The church cards' effects in id order (RULES §1, §4): two of each, one "+1 or -1".
_CHURCH_EFFECTS: Final = (
    ChurchEffect.ONE_UP,
    ChurchEffect.ONE_UP,
    ChurchEffect.ONE_DOWN,
    ChurchEffect.ONE_DOWN,
    ChurchEffect.TWO_UP,
    ChurchEffect.TWO_UP,
    ChurchEffect.TWO_DOWN,
    ChurchEffect.TWO_DOWN,
    ChurchEffect.ONE_EITHER,
)


def _build() -> tuple[tuple[int, ...], ...]:
    kind, category, value, letter, church = [], [], [], [], []
    for card in range(NUM_CARDS):
        if card < GOLD_FIRST:
            category_index, letter_index = divmod(card, CARDS_PER_CATEGORY)
            kind.append(Kind.CATEGORY)
            category.append(category_index)
            value.append((_HIGH_VALUES if category_index <= Category.PIGMENTS else _LOW_VALUES)[letter_index])
            letter.append(letter_index)
            church.append(-1)
        elif card < CHURCH_FIRST:
            kind.append(Kind.GOLD)
            category.append(-1)
            value.append(GOLD_VALUES[(card - GOLD_FIRST) // GOLD_CARDS_PER_VALUE])
            letter.append(-1)
            church.append(-1)
        else:
            kind.append(Kind.CHURCH)
            category.append(-1)
            value.append(0)
            letter.append(-1)
            church.append(int(_CHURCH_EFFECTS[card - CHURCH_FIRST]))
    return tuple(kind), tuple(category), tuple(value), tuple(letter), tuple(church)


_KIND, _CATEGORY, _VALUE, _LETTER, _CHURCH = _build()

#: ``CARD_KIND[card]`` is a :class:`Kind` value.
CARD_KIND: Final[tuple[int, ...]] = _KIND
#: ``CARD_CATEGORY[card]`` is the category index of a category card, -1 otherwise.
CARD_CATEGORY: Final[tuple[int, ...]] = _CATEGORY
#: ``CARD_VALUE[card]``: points of a category card, coins of a gold card, 0 for church cards.
CARD_VALUE: Final[tuple[int, ...]] = _VALUE
#: ``CARD_LETTER[card]``: tie-break letter index (0 = "A") of a category card, -1 otherwise.
CARD_LETTER: Final[tuple[int, ...]] = _LETTER
#: ``CARD_CHURCH[card]``: a :class:`ChurchEffect` value for church cards, -1 otherwise.
CARD_CHURCH: Final[tuple[int, ...]] = _CHURCH
#: ``IS_GOLD[card]`` / ``IS_CHURCH[card]``: fast membership flags for the hot loop.
IS_GOLD: Final[tuple[bool, ...]] = tuple(kind == Kind.GOLD for kind in _KIND)
IS_CHURCH: Final[tuple[bool, ...]] = tuple(kind == Kind.CHURCH for kind in _KIND)

_CHURCH_TEXT: Final = ("+1 to one die", "-1 to one die", "+1 to two dice", "-1 to two dice", "+1 or -1 to one die")


def card_name(card: int) -> str:
    """A short readable name, e.g. ``"Monks 3 (E)"``, ``"Gold 2"``, ``"Church -1 to two dice"``."""
    check_card(card)
    kind = CARD_KIND[card]
    if kind == Kind.CATEGORY:
        return f"{CATEGORY_NAMES[CARD_CATEGORY[card]]} {CARD_VALUE[card]} ({LETTERS[CARD_LETTER[card]]})"
    if kind == Kind.GOLD:
        return f"Gold {CARD_VALUE[card]}"
    return f"Church {_CHURCH_TEXT[CARD_CHURCH[card]]}"


def check_card(card: object) -> int:
    """Return ``card`` as an int id, or raise ValueError naming the bad value."""
    if isinstance(card, bool) or not isinstance(card, int) or not 0 <= card < NUM_CARDS:
        raise ValueError(f"card id must be an int in 0..{NUM_CARDS - 1}, got {card!r}")
    return int(card)


def gold_value(cards: Iterable[int]) -> int:
    """Total coins of the gold cards among ``cards`` (used for payments and the gold tie-break)."""
    return sum(_VALUE[card] for card in cards if IS_GOLD[card])
