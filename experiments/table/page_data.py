"""The table as both pages draw it, as JSON-ready data: the card table (what a tile shows, the
colours the terminal uses), a narration line, a timeline landmark, the bids on the card under
auction and the final score. The replay page (:mod:`experiments.replay.page_data`) stores them for
every step of a saved game; the play page (:mod:`experiments.serve`) sends them as a game goes on.
Both draw them with ``table.js`` (this package's web assets, :mod:`experiments.table.web`)."""

from __future__ import annotations

from typing import Any, Final

from rich.style import Style

from biblios_env.actions import BID_BASE, PASS, PAY_BASE, REFUSE
from biblios_env.cards import (
    CARD_CATEGORY,
    CARD_CHURCH,
    CARD_KIND,
    CARD_LETTER,
    CARD_VALUE,
    CATEGORY_NAMES,
    LETTERS,
    NUM_CARDS,
    NUM_CATEGORIES,
    ChurchEffect,
    Kind,
    card_name,
    gold_value,
)
from biblios_env.engine.scoring import category_totals
from biblios_env.engine.state import NO_CARD, State
from experiments.table.cards import CATEGORY_STYLES, CHURCH_STYLE, GOLD_STYLE
from experiments.table.narration import (
    AUCTION_HEADING,
    AUCTIONS_HEADING,
    GIFT_TURN_HEADING,
    CardPart,
    CardsPart,
    CategoryPart,
    Line,
    Part,
)

#: The phases as the page names them, by phase number.
PHASE_TITLES: Final = ("Gifts", "Auctions", "Game over")
#: A church card's effect as short as a tile needs it (its full name is the tile's tooltip).
_CHURCH_CAPTIONS: Final = {
    ChurchEffect.ONE_UP: "+1",
    ChurchEffect.ONE_DOWN: "−1",
    ChurchEffect.TWO_UP: "+1 +1",
    ChurchEffect.TWO_DOWN: "−1 −1",
    ChurchEffect.ONE_EITHER: "±1",
}
#: The kind of landmark each narration heading marks on the timeline.
_MARK_KINDS: Final = {GIFT_TURN_HEADING: "turn", AUCTIONS_HEADING: "phase", AUCTION_HEADING: "auction"}


def table_data() -> dict[str, Any]:
    """What drawing the table needs besides a scene, the same in every game: ``cards``,
    ``categories``, ``colours`` and ``phases`` (the play page of :mod:`experiments.serve` sends them too)."""
    return {
        "cards": [_card_data(card) for card in range(NUM_CARDS)],
        "categories": list(CATEGORY_NAMES),
        "colours": _colours(),
        "phases": list(PHASE_TITLES),
    }


class Bidding:
    """The bids and passes on the card under auction so far, in order (public, RULES §7): what
    each seat knew when it bid. A new card, or a re-auction after a penalty, starts afresh."""

    def __init__(self) -> None:
        self.card = NO_CARD
        self.bids: list[list[int | None]] = []

    def after(self, action: int | None, seat: int, card: int) -> list[list[int | None]]:
        """``[[seat, amount or None for a pass], ...]`` after ``action`` by ``seat``."""
        if action is not None and BID_BASE <= action < PAY_BASE:
            self.bids = [*self.bids, [seat, action - BID_BASE if action != PASS else None]]
        if card != self.card or action == REFUSE:
            self.card, self.bids = card, []
        return self.bids


def mark(step: int, line: Line) -> dict[str, Any]:
    """A landmark, labelled by its heading without the cards it names: the timeline is the same in
    every perspective, and an auction's card is face down in the auction pile until then."""
    text = "".join(part if isinstance(part, str) else "a card" for part in line.parts)
    return {"step": step, "kind": _MARK_KINDS[line.heading], "label": text}


def _part_data(part: Part) -> Any:
    """A narration part as JSON: text as a string, a card as its id, several cards as a list of
    ids, a category as ``{"category": index}``."""
    if isinstance(part, CardPart):
        return part.card
    if isinstance(part, CardsPart):
        return sorted(part.cards)
    if isinstance(part, CategoryPart):
        return {"category": part.category}
    return part


def line_data(line: Line) -> dict[str, Any]:
    """A line as JSON; its adjacent text parts joined into one."""
    parts: list[Any] = []
    for part in map(_part_data, line.parts):
        if isinstance(part, str) and parts and isinstance(parts[-1], str):
            parts[-1] += part
        elif part != "":
            parts.append(part)
    data: dict[str, Any] = {"parts": parts}
    if line.style:
        data["style"] = line.style
    if line.heading:
        data["heading"] = line.heading
    return data


def _card_data(card: int) -> list[Any]:
    """``[kind, category, value, letter, name, caption]``: what a tile shows. The caption is the
    small print under the value: a category card's letter, ``gold``, or a church card's effect."""
    kind = CARD_KIND[card]
    if kind == Kind.CATEGORY:
        caption = LETTERS[CARD_LETTER[card]]
    elif kind == Kind.GOLD:
        caption = "gold"
    else:
        caption = _CHURCH_CAPTIONS[ChurchEffect(CARD_CHURCH[card])]
    letter = caption if kind == Kind.CATEGORY else ""
    return [Kind(kind).name.lower(), CARD_CATEGORY[card], CARD_VALUE[card], letter, card_name(card), caption]


def _colour(style: str) -> str:
    """The hex colour of a terminal style: the page's tiles take the terminal's colours."""
    colour = Style.parse(style).color
    if colour is None:
        raise ValueError(f"terminal style {style!r} has no colour")
    return colour.get_truecolor().hex


def _colours() -> dict[str, Any]:
    return {
        "categories": [_colour(style) for style in CATEGORY_STYLES],
        "gold": _colour(GOLD_STYLE),
        "church": _colour(CHURCH_STYLE),
    }


def final_score(state: State) -> dict[str, Any]:
    """The final score (RULES §6): per seat its category totals and best letters, VP, gold and
    hand; the category winners; the winners. The hands are scored openly, so every perspective
    shows it."""
    rows = []
    for seat, hand in enumerate(state.hands):
        totals, letters = category_totals(hand)
        rows.append(
            {
                "totals": totals,
                "letters": [LETTERS[letters[c]] if totals[c] else "" for c in range(NUM_CATEGORIES)],
                "vp": state.vp[seat],
                "gold": gold_value(hand),
                "hand": sorted(hand),
            }
        )
    return {
        "dice": state.dice[:],
        "rows": rows,
        "categoryWinners": state.category_winners[:],
        "winners": state.winners[:],
    }


__all__ = ["PHASE_TITLES", "Bidding", "final_score", "line_data", "mark", "table_data"]
