"""Play against the bots in a browser: a small web server with a page and a JSON API.

    python -m experiments.serve                      # http://127.0.0.1:8000/ (installed as biblios-serve)
    python -m experiments.serve --port 0 --data games/   # any free port; games saved and resumed

The page sets up a game (players, your seat, the opponents as agent specs, a seed or a random
deal), draws your seat's table with the replay page's drawing and plays the move you click; a
hint says what ``value`` would play; a game of bots only can be watched from a seat; at the end
the final score and the game's replay page. Every answer about a game shows one seat's knowledge
only (RULES §7). ``docs/serve.md`` documents the API with examples.

One module per job: ``checks`` (the request bodies), ``labels`` (the words of the legal actions),
``games`` (one game and its bots), ``views`` (the seat's ``VIEW``), ``storage`` (the data folder),
``store`` (the games held, their tokens and limits), ``page`` (the HTML page, with ``page.html``,
``page.css`` and ``page.js``), ``app`` (the routes) and ``cli``. Only ``app`` needs Starlette.
"""

from __future__ import annotations

from experiments.serve.cli import build_parser, main

__all__ = ["build_parser", "main"]
