"""The replay page's data: one JSON-ready dict with every step of a saved game, for the whole
table and for each seat, that the page's script draws without knowing any rule.

Each step names one scene and one narration per perspective (the whole table first, then seat
0, 1, ...). Everything is stored once and referred to by index: a scene is a list with one entry
per name of :data:`SCENE_FIELDS`, the index of that field's value in ``pieces`` (for ``hands``,
a list of one index per seat), and the scenes and narrations themselves are stored once each. A
hand, the discards or the dice stay the same over many steps and perspectives, and many sentences
read the same from every seat: a 4-player game's page stays under half a megabyte
(``docs/replay.md`` gives measured sizes).

Keys of the dict (the page's script reads them): ``title``, ``source``, ``names`` (per seat),
``cards`` (per card id: ``[kind, category, value, letter, name, caption]``), ``categories``,
``colours``, ``phases``, ``perspectives``, ``steps`` (``action``, ``seat``, ``forced``,
``scenes``, ``lines``, ``bids``), ``sceneFields``, ``scenes``, ``pieces``, ``narrations``,
``marks`` (landmarks of the timeline: ``step``, ``kind``, ``label``), ``annotations`` (by step,
as ``[name, text]`` pairs), ``score`` (``None`` unless the game is over) and ``openView`` (the
perspective the page opens with, added by :func:`experiments.replay.page.page_html`). A scene,
unpacked, is the dict of :mod:`experiments.replay.scenes`.
"""

from __future__ import annotations

import json
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
from biblios_env.engine.flow import STANDARD_PRESET
from biblios_env.engine.scoring import category_totals
from biblios_env.engine.state import NO_CARD, Phase, State
from biblios_env.engine.views import player_view
from experiments.replay.scenes import SCENE_FIELDS, Scene, seat_scene, table_scene
from experiments.replay.timeline import SavedGame, Viewer, annotation_lines, walk
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
#: Landmarks of the timeline besides the narration's headings: the start and the final score.
START_LABEL: Final = "The deal: the gifts begin"
SCORE_LABEL: Final = "Game over: the final score"
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


def page_data(saved: SavedGame) -> dict[str, Any]:
    """Every step of ``saved`` for every perspective, ready for ``json.dumps``."""
    n = saved.num_players
    viewers: list[Viewer] = [None, *range(n)]
    scenes, pieces, narrations = _Interned(), _Interned(), _Interned()
    steps: list[dict[str, Any]] = []
    marks: list[dict[str, Any]] = [{"step": 0, "kind": "phase", "label": START_LABEL}]
    score: dict[str, Any] | None = None
    bidding = Bidding()
    for step, state in walk(saved, viewers):
        views = [table_scene(state), *(seat_scene(player_view(state, seat)) for seat in range(n))]
        steps.append(
            {
                "action": step.action,
                "seat": step.seat,
                "forced": step.forced,
                "scenes": [scenes.index(_packed(scene, pieces)) for scene in views],
                "lines": [narrations.index([line_data(line) for line in step.lines[viewer]]) for viewer in viewers],
                "bids": bidding.after(step.action, step.seat, state.auction_card),
            }
        )
        marks += [mark(step.number, line) for line in step.lines[None] if line.heading]
        if state.phase == Phase.END:
            score = final_score(state)
            marks.append({"step": step.number, "kind": "phase", "label": SCORE_LABEL})
    return {
        "title": _title(saved),
        "source": saved.path.name,
        "names": [saved.seat_name(seat) for seat in range(n)],
        **table_data(),
        "perspectives": ["Whole table", *(saved.seat_name(seat) for seat in range(n))],
        "steps": steps,
        "sceneFields": list(SCENE_FIELDS),
        "scenes": scenes.values,
        "pieces": pieces.values,
        "narrations": narrations.values,
        "marks": marks,
        "annotations": {
            str(position + 1): [list(pair) for pair in annotation_lines(note)]
            for position, note in sorted(saved.annotations.items())
        },
        "score": score,
    }


def _packed(scene: Scene, pieces: _Interned) -> list[Any]:
    """A scene as indices into ``pieces``, in the order of :data:`SCENE_FIELDS`."""
    if set(scene) != set(SCENE_FIELDS):
        raise ValueError(f"a scene has the fields {sorted(SCENE_FIELDS)}, got {sorted(scene)}")
    return [
        [pieces.index(hand) for hand in scene[field]] if field == "hands" else pieces.index(scene[field])
        for field in SCENE_FIELDS
    ]


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


class _Interned:
    """Values stored once each, by their JSON text: :meth:`index` gives a value's position."""

    def __init__(self) -> None:
        self.values: list[Any] = []
        self._positions: dict[str, int] = {}

    def index(self, value: Any) -> int:
        key = json.dumps(value, separators=(",", ":"))
        position = self._positions.get(key)
        if position is None:
            position = self._positions[key] = len(self.values)
            self.values.append(value)
        return position


def _title(saved: SavedGame) -> str:
    config = saved.config
    options = [f"{config.num_players} players", f"seed {saved.seed}", f"{config.penalty} penalty"]
    if config.strict_bids:
        options.append("strict bids")
    if config.preset != STANDARD_PRESET:
        options.append(f"{config.preset} preset")
    return " · ".join(options)


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
