"""Tournaments between agents with duplicate deals, in parallel: ``python -m experiments.tournament``.

Schedule. A *table* is a lineup of agents, one per seat: in a head-to-head the agents given
(repeat one to fill seats, e.g. ``value random random random``); in a round-robin every
combination of ``--players`` distinct agents. Each *deal* is one game seed (the same
shuffled deck, removal and chance stream) and is replayed at every table with the lineup
in every *seating*: for 2 players both seatings, for 3-4 players the cyclic rotations
(``--seatings cyclic``, P games per deal) or all permutations (``--seatings all``, P!).
So card luck and seat order cancel out, and every table plays the same deals.

Reproducibility. Game ``i`` of deal ``d`` is played with seed ``derive_seed(seed, DEAL, d)``
and its agent in seat ``s`` is started with ``derive_seed(seed, AGENT, i, s)``; agents are
built fresh for every game, so results do not depend on ``--workers``. ``games.csv`` lists
every game's seeds; ``--only-games I ...`` replays chosen games of the same command and
``--save-logs DIR`` writes each game as a log that :func:`biblios_env.engine.log.load_log`
replays (metadata: agent labels per seat, agent seeds, tournament seed, game index, deal).

Statistics (see :mod:`experiments.stats`): win rate with a 95% cluster-robust interval over
deals (shared wins count fractionally), the Wilson interval over games for comparison,
mean VP, openskill ratings, seat win rates and pairwise win shares. Written to ``--out`` as
``summary.csv``, ``games.csv``, ``pairwise.csv``, ``results.json`` and ``winrate.png``.

Faults and resuming. Agents are third-party code, so a run is built to survive them:

* every game is appended to ``games.csv`` in the output folder as it finishes (``run.json``
  there records the tournament), so a crash, a kill or Ctrl-C loses only the games in progress;
* any fault of an agent (an exception, ``sys.exit()``, an illegal or non-int action) becomes an
  error naming the game, its deal and seed, the agent and its seat. By default it stops the
  run (exit status 1) once the games in progress are saved; with ``--keep-going`` the game is
  recorded in ``failures.csv`` (and ``results.json``), left out of the statistics, and the run
  plays on (exit status 1 at the end if any game failed);
* ``--resume DIR`` finishes the run in ``DIR``: give the same settings as the first time (they
  are checked against ``run.json``; a difference is an error naming it). The finished games
  are read back, not played again; the missing and the failed ones are played. Since every
  game's seeds come from the schedule, the resumed run's results equal an uninterrupted one's.

Python API. ``run_tournament(config, out_dir=..., keep_going=..., resume=...)`` does the same
(``out_dir`` is where games are saved as they finish; without it nothing is written), then
``write_results(result, out_dir)`` writes the summary files::

    from experiments.match import parse_agent_spec
    from experiments.tournament import TournamentConfig, run_tournament, write_results

    config = TournamentConfig(tuple(map(parse_agent_spec, ["value", "hoarder:aggression=1.2"])), deals=20)
    result = run_tournament(config, workers=2, out_dir="runs/example", keep_going=True)
    # after an interruption: run_tournament(config, workers=2, out_dir="runs/example", resume=True)
    write_results(result, "runs/example")
    print(result.failures)  # GameFailure records, each naming its game and seed

Examples::

    python -m experiments.tournament --agents value random --games 200
    python -m experiments.tournament --agents value hoarder:aggression=1.2 random --players 2
    python -m experiments.tournament --agents ismcts value random random --seatings all --deals 10
    python -m experiments.tournament --agents value random --games 200 --out runs/v --keep-going
    python -m experiments.tournament --agents value random --games 200 --resume runs/v  # after Ctrl-C

One module per job: ``schedule`` (tables, seatings, deals and seeds), ``games`` (one game, its
record or failure), ``runner`` (the whole run, on the workers of :mod:`experiments.parallel`),
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
