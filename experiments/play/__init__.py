"""Play Biblios in the terminal against any mix of agents: ``python -m experiments.play``.

    python -m experiments.play                                   # you against the value heuristic
    python -m experiments.play --opponents value hoarder         # 3 players
    python -m experiments.play --opponents random --players 4 --seat 2 --seed 7 --save-log game.json

You see exactly what your seat may see (RULES §7): the table is drawn from your
:class:`~biblios_env.engine.views.PlayerView`, and the other players' moves are told as the
table would see them (a card kept or put on the auction pile stays face down). The table and
the question fit an 80x24 terminal with 4 players (a card in its category's row is its value and
letter, ``3F``; in a payment, ``5:3F`` means type 5 to pay that card). Every
decision lists its choices, numbered, with their meaning; in an auction type the amount
you bid (``+`` bids the minimum, ``p`` passes). ``h`` shows the commands, ``s`` asks the
value heuristic for a suggestion, ``t`` shows the table again, ``q`` leaves the game. Bad
input gets a message and the question again; closing the input (Ctrl-D) leaves the game.
At the end the hands are revealed with the score table and its category winners, and the
game can be saved as a replayable log (:func:`biblios_env.engine.log.load_log`).

For tests and other front ends, :func:`main` and :class:`TerminalGame` take the input
function and the rich ``Console`` to use.

One module per job: ``cards`` (cards as coloured text), ``menus`` (each decision's choices and
what input means), ``screen`` (the table, the questions and the score as the player sees them),
``session`` (the game loop and the narration of every move) and ``cli`` (the command line).
"""

from __future__ import annotations

from experiments.play.cli import build_parser, main
from experiments.play.session import LeaveGameError, TerminalGame
from experiments.table.menus import Answer, Choice, auto_payment, menu, parse_answer

__all__ = [
    "Answer",
    "Choice",
    "LeaveGameError",
    "TerminalGame",
    "auto_payment",
    "build_parser",
    "main",
    "menu",
    "parse_answer",
]
