"""Replay a saved game: a self-contained HTML page, or step by step in the terminal.

    python -m experiments.replay game.json --html game.html        # the page (installed as biblios-replay)
    python -m experiments.replay game.json --html game.html --seat 1   # the page opens on seat 1's view
    python -m experiments.replay game.json                         # step through it in the terminal
    python -m experiments.replay game.json --seat 1                # ... as seat 1 saw it

The page is one HTML file with its style, its script and the game inside (no network: it opens
from disk). It steps through every decision (buttons, arrow keys, a slider with the gift turns,
the auctions and the phases marked, a jump list), tells each one in the terminal game's words,
and switches at any step between the whole table and one seat's knowledge. A seat's view is
that seat's :class:`~biblios_env.engine.views.PlayerView`, computed in Python and embedded: the
page's script draws what it is given and knows no rule. Agent annotations in the log's metadata
are shown beside the decision they explain (:func:`read_saved_game` gives the format).

A bad log raises :class:`~biblios_env.engine.log.GameLogError` with ``load_log``'s message (the
command prints it and exits with status 1) and nothing is written. ``docs/replay.md`` shows the
page.

One module per job: ``timeline`` (the log read and checked, replayed step by step with the
narration of :mod:`experiments.table.narration`), ``scenes`` (what each perspective shows at a
step), ``page_data`` (every step as the page's JSON), ``page`` (the HTML file, with
``page.html``, ``board.html``, ``page.css``, ``table.js``, the table's drawing that the play page
of :mod:`experiments.serve` shares, and ``page.js``), ``terminal`` (the terminal stepper) and ``cli``.
"""

from __future__ import annotations

from experiments.replay.cli import build_parser, main
from experiments.replay.page import page_html, save_page, write_page
from experiments.replay.page_data import page_data
from experiments.replay.terminal import TerminalReplay
from experiments.replay.timeline import SavedGame, Step, read_saved_game, walk

__all__ = [
    "SavedGame",
    "Step",
    "TerminalReplay",
    "build_parser",
    "main",
    "page_data",
    "page_html",
    "read_saved_game",
    "save_page",
    "walk",
    "write_page",
]
