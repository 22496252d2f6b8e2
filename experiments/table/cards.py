"""Cards as coloured text: every card in its category's colour (gold yellow, church magenta), in
full (``Monks 3 (E)``), short as its table row allows (``3E``) or grouped by row.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final

from rich.text import Text

from biblios_env.cards import (
    CARD_CATEGORY,
    CARD_LETTER,
    CARD_VALUE,
    CATEGORY_NAMES,
    IS_CHURCH,
    IS_GOLD,
    LETTERS,
    card_name,
)

#: Colours of the categories (RULES §1: brown, blue, green, orange, red), gold and church cards.
CATEGORY_STYLES: Final = ("orange4", "dodger_blue1", "green3", "dark_orange", "red1")
GOLD_STYLE: Final = "bold gold1"
CHURCH_STYLE: Final = "magenta"


def card_text(card: int) -> Text:
    """A card's name in its colour: categories in their colours, gold yellow, church magenta."""
    if IS_GOLD[card]:
        style = GOLD_STYLE
    elif IS_CHURCH[card]:
        style = CHURCH_STYLE
    else:
        style = CATEGORY_STYLES[CARD_CATEGORY[card]]
    return Text(card_name(card), style=style)


def cards_text(cards: Sequence[int], empty: str = "-") -> Text:
    """Cards in id order (category, then gold, then church), comma-separated."""
    if not cards:
        return Text(empty, style="dim")
    return Text(", ").join(card_text(card) for card in sorted(cards))


def short_card_text(card: int) -> Text:
    """A card as short as its table row allows: ``3F`` (value and letter) under its category, ``2``
    under Gold, the full name for a church card."""
    if IS_GOLD[card]:
        return Text(str(CARD_VALUE[card]), style=GOLD_STYLE)
    if IS_CHURCH[card]:
        return card_text(card)
    return Text(f"{CARD_VALUE[card]}{LETTERS[CARD_LETTER[card]]}", style=CATEGORY_STYLES[CARD_CATEGORY[card]])


def grouped_cards_text(cards: Sequence[int], empty: str = "-") -> Text:
    """Cards grouped by their row, short: ``Pigments 2B 2D · Gold 1 3 · Church +1 to two dice``."""
    if not cards:
        return Text(empty, style="dim")
    groups: dict[str, tuple[Text | None, list[Text]]] = {}
    for card in sorted(cards):  # ids run category by category (letters in order), then gold, then church
        heading = None if IS_CHURCH[card] else card_row_text(card)  # a church card's name says it all
        key = "church" if heading is None else heading.plain
        groups.setdefault(key, (heading, []))[1].append(short_card_text(card))
    lines = [Text(" ").join([heading, *items] if heading else items) for heading, items in groups.values()]
    return Text(" · ").join(lines)


def card_row_text(card: int) -> Text:
    """The table row a card belongs to: its category, Gold or Church."""
    if IS_GOLD[card]:
        return Text("Gold", style=GOLD_STYLE)
    if IS_CHURCH[card]:
        return Text("Church", style=CHURCH_STYLE)
    return category_text(CARD_CATEGORY[card])


def category_text(category: int) -> Text:
    return Text(CATEGORY_NAMES[category], style=CATEGORY_STYLES[category])
