"""The play page: one HTML document, the template ``page.html`` with the table's board, style and
drawing, shared with the replay page (:mod:`experiments.table.web`: ``board.html``, ``table.css``, ``table.js``),
this page's own style and script (``page.css``, ``page.js``) and its data (the agents offered by
name, the card table, whether games are saved) written inside it. The page talks to the JSON API of
its own server and nothing else (its content security policy says so)."""

from __future__ import annotations

import re
from importlib import resources
from typing import Final

from experiments.serve.games import HINT_AGENT
from experiments.serve.specs import agent_choices
from experiments.table.page_data import table_data
from experiments.table.web import asset, data_json

#: Where the template takes each inlined part: ``<!-- serve:NAME -->``.
_SLOT: Final = re.compile(r"<!-- serve:(style|script|data|board) -->")
#: The opponent the page proposes for every seat.
DEFAULT_OPPONENT: Final = "value"
#: The page may run its inline script and style and call its own server; nothing else.
CONTENT_SECURITY_POLICY: Final = (
    "default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'; connect-src 'self'; "
    "img-src 'none'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
)


def _own_text(name: str) -> str:
    return resources.files("experiments.serve").joinpath(name).read_text(encoding="utf-8")


def play_page(*, persistent: bool) -> str:
    """The page, for a server that keeps its games in a data folder (``persistent``) or in memory only."""
    data = {
        **table_data(),
        "agents": agent_choices(),
        "defaultOpponent": DEFAULT_OPPONENT,
        "hintAgent": HINT_AGENT,
        "persistent": persistent,
    }
    parts = {
        "style": asset("table.css") + _own_text("page.css"),
        "script": asset("table.js") + _own_text("page.js"),
        "data": data_json(data),
        "board": asset("board.html"),
    }
    return _SLOT.sub(lambda match: parts[match.group(1)], _own_text("page.html"))
