"""The replay page as one self-contained HTML file: the template ``page.html`` with the table's
board, style and drawing (:mod:`experiments.table.web`: ``board.html``, ``table.css``,
``table.js``, which the play page of :mod:`experiments.serve` shares), the timeline's script
``page.js`` and the game's data (:mod:`experiments.replay.page_data`) written inside it. Nothing is
fetched when the page opens (its content security policy forbids it too), so it works from disk,
offline, in any browser.
"""

from __future__ import annotations

import re
from importlib import resources
from pathlib import Path
from typing import Final

from experiments.replay.page_data import page_data
from experiments.replay.timeline import SavedGame, read_saved_game
from experiments.table.web import asset, data_json

#: Where the template takes each inlined part: ``<!-- replay:NAME -->``.
_SLOT: Final = re.compile(r"<!-- replay:(style|script|data|board) -->")


def own_text(name: str) -> str:
    """A file of the replay page itself: ``page.html`` (the template) or ``page.js`` (the timeline)."""
    return resources.files("experiments.replay").joinpath(name).read_text(encoding="utf-8")


def page_html(saved: SavedGame, *, open_seat: int | None = None) -> str:
    """The whole page for ``saved``; it opens on ``open_seat``'s view, or the whole table."""
    if open_seat is not None and not 0 <= open_seat < saved.num_players:
        raise ValueError(f"open_seat must be a seat of this {saved.num_players}-player game, got {open_seat}")
    data = page_data(saved)
    data["openView"] = 0 if open_seat is None else open_seat + 1
    parts = {
        "style": asset("table.css"),
        "script": asset("table.js") + own_text("page.js"),
        "data": data_json(data),
        "board": asset("board.html"),
    }
    return _SLOT.sub(lambda match: parts[match.group(1)], own_text("page.html"))


def write_page(log_path: str | Path, out_path: str | Path, *, open_seat: int | None = None) -> Path:
    """Write the replay page of the game log ``log_path`` to ``out_path``, creating its folder.

    The log is read and checked first: a bad log raises
    :class:`~biblios_env.engine.log.GameLogError` (as ``load_log`` does) and nothing is written.
    """
    return save_page(read_saved_game(log_path), out_path, open_seat=open_seat)


def save_page(saved: SavedGame, out_path: str | Path, *, open_seat: int | None = None) -> Path:
    """Write the replay page of ``saved`` to ``out_path``, creating its folder; the whole page is
    built before the file is opened, so a failure leaves no partial page behind."""
    html = page_html(saved, open_seat=open_seat)
    out_path = Path(out_path)
    out_path.parent.mkdir(parents=True, exist_ok=True)
    out_path.write_text(html, encoding="utf-8")
    return out_path
