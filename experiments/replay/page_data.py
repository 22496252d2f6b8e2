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
unpacked, is the dict of :mod:`experiments.table.scenes`; what the play page shares is in
:mod:`experiments.table.page_data`.
"""

from __future__ import annotations

import json
from typing import Any, Final

from biblios_env.engine.flow import STANDARD_PRESET
from biblios_env.engine.state import Phase
from biblios_env.engine.views import player_view
from experiments.replay.timeline import SavedGame, Viewer, annotation_lines, walk
from experiments.table.page_data import Bidding, final_score, line_data, mark, table_data
from experiments.table.scenes import SCENE_FIELDS, Scene, seat_scene, table_scene

#: Landmarks of the timeline besides the narration's headings: the start and the final score.
START_LABEL: Final = "The deal: the gifts begin"
SCORE_LABEL: Final = "Game over: the final score"


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
