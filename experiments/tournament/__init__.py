"""Tournaments between agents with duplicate deals, in parallel: ``python -m experiments.tournament``.

A *table* is a lineup of agents; each *deal* is replayed at every table in every seating, so card
luck and seat order cancel out. Every game's seeds derive from the tournament seed alone
(:mod:`experiments.common.seeds`), games are saved as they finish, an agent's fault names the game,
and ``--resume DIR`` finishes an interrupted run with the results of an uninterrupted one.
docs/experiments.md is the guide (the schedule, the statistics, faults and resuming, the Python API).

One module per job: ``schedule`` (tables, seatings, deals and seeds), ``games`` (one game, its
record or failure), ``runner`` (the whole run, on the workers of :mod:`experiments.common.parallel`),
``run_folder`` (saving games as they finish, resuming), ``report`` (summary files, plot, printed
summary) and ``cli`` (the command line); this package re-exports their public names.
"""

from __future__ import annotations

from experiments.tournament.cli import agent_list, build_parser, main
from experiments.tournament.games import GameFailedError, GameFailure, GameRecord
from experiments.tournament.report import format_summary, plot_win_rates, win_rate_figure, write_results
from experiments.tournament.run_folder import FAILURES_FILE, GAMES_FILE, RUN_FILE, RunFolder, RunFolderError
from experiments.tournament.runner import TournamentResult, run_tournament
from experiments.tournament.schedule import (
    AGENT,
    DEAL,
    HEAD_TO_HEAD,
    MODES,
    ROUND_ROBIN,
    SEATINGS,
    GameTask,
    TournamentConfig,
    derive_seed,
    seat_orders,
)

__all__ = [
    "AGENT",
    "DEAL",
    "FAILURES_FILE",
    "GAMES_FILE",
    "HEAD_TO_HEAD",
    "MODES",
    "ROUND_ROBIN",
    "RUN_FILE",
    "SEATINGS",
    "GameFailedError",
    "GameFailure",
    "GameRecord",
    "GameTask",
    "RunFolder",
    "RunFolderError",
    "TournamentConfig",
    "TournamentResult",
    "agent_list",
    "build_parser",
    "derive_seed",
    "format_summary",
    "main",
    "plot_win_rates",
    "run_tournament",
    "seat_orders",
    "win_rate_figure",
    "write_results",
]
