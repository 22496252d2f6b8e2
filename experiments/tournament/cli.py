"""The command line ``python -m experiments.tournament`` (installed as ``biblios-tournament``): its
parser, the config it builds (for ``--resume DIR``, from the settings recorded there), ``--list-agents``,
and what it prints after a fault or a stop.
"""

from __future__ import annotations

import argparse
import math
import os
import sys
import textwrap
from collections.abc import Sequence
from datetime import datetime
from functools import partial
from pathlib import Path

from experiments.common.cli import (
    add_backend_arguments,
    add_game_arguments,
    at_least,
    check_backend_arguments,
    invocation_note,
    program_name,
    seed_value,
)
from experiments.common.match import AgentSpecError, describe_agent, parse_agent_spec, registry
from experiments.common.parallel import WorkerCrashedError
from experiments.tournament.games import GameFailedError
from experiments.tournament.report import format_summary, write_results
from experiments.tournament.resume import FREE_OPTIONS, resume_command, resumed_arguments, typed_options
from experiments.tournament.run_folder import GAMES_FILE, REPLAYS_FOLDER, replay_folder
from experiments.tournament.runner import run_tournament
from experiments.tournament.schedule import HEAD_TO_HEAD, MODES, ROUND_ROBIN, SEATINGS, TournamentConfig, seat_orders
from experiments.tournament.stopping import sigterm_as_ctrl_c, stopped


def build_parser() -> argparse.ArgumentParser:
    free = ", ".join("--" + option.replace("_", "-") for option in FREE_OPTIONS)
    parser = argparse.ArgumentParser(
        prog=program_name("experiments.tournament"),
        description="Play a head-to-head or round-robin between Biblios agents with duplicate deals.",
        epilog="Agent specs: NAME or NAME:key=value,... with NAME a registry name or an import path "
        "package.module.Factory, e.g. hoarder:aggression=1.2 or ismcts:iterations=500 (--list-agents shows "
        "every agent's parameters). Results are saved as each game finishes: after a crash or Ctrl-C, "
        "--resume DIR alone plays only the games still missing, with the settings recorded in DIR. "
        + invocation_note("experiments.tournament"),
    )
    parser.add_argument(
        "--agents", nargs="+", metavar="SPEC", help="the agents (specs below); in a head-to-head, one per seat"
    )
    parser.add_argument(
        "--players",
        type=int,
        choices=(2, 3, 4),
        help="players per game (default: the number of agents in a head-to-head, 2 in a round-robin)",
    )
    parser.add_argument(
        "--mode",
        choices=MODES,
        help="default: head-to-head if the agents fill the seats exactly, "
        "else round-robin over every combination of --players agents",
    )
    size = parser.add_mutually_exclusive_group()
    size.add_argument(
        "--games", type=at_least(1), default=100, help="games per table, rounded up to whole deals (default 100)"
    )
    size.add_argument(
        "--deals",
        type=at_least(1),
        help="deals (game seeds) per table, instead of --games; each is played in every seating",
    )
    parser.add_argument(
        "--seatings",
        choices=SEATINGS,
        default="cyclic",
        help="seatings per deal for 3-4 players: the P cyclic rotations or all P! permutations (default cyclic)",
    )
    parser.add_argument("--seed", type=seed_value, default=0, help="tournament seed (default 0)")
    add_game_arguments(parser)
    parser.add_argument(
        "--workers",
        type=at_least(1),
        default=os.cpu_count() or 1,
        help=f"processes (default: all {os.cpu_count() or 1} cores); results do not depend on it",
    )
    add_backend_arguments(parser)
    parser.add_argument("--out", type=Path, metavar="DIR", help="output folder (default runs/tournament-<date>-<time>)")
    parser.add_argument(
        "--resume",
        type=Path,
        metavar="DIR",
        help="finish the interrupted run in DIR (its output folder) with the settings recorded there (a setting "
        f"given too must be the recorded one; {free} may change); the games it finished are kept, not played again",
    )
    parser.add_argument(
        "--keep-going",
        action="store_true",
        help="when an agent crashes or plays illegally, record the game in failures.csv and play on "
        "(default: stop at the first such game)",
    )
    parser.add_argument("--save-logs", type=Path, metavar="DIR", help="also save every game as a replayable log in DIR")
    parser.add_argument(
        "--only-games",
        type=int,
        nargs="+",
        metavar="INDEX",
        help="play only these games of the schedule (to reproduce or inspect them)",
    )
    parser.add_argument(
        "--replay-html",
        type=at_least(1),
        metavar="N",
        help="write a replay page for each of the first N games played (of the schedule, or of --only-games) "
        f"into OUT/{REPLAYS_FOLDER}/game-NNNNNN.html; their logs go to --save-logs, or beside the pages",
    )
    parser.add_argument("--no-plot", action="store_true", help="do not draw winrate.png (default: draw it)")
    parser.add_argument(
        "--no-progress",
        action="store_true",
        help="no progress bar, for logs: a plain progress line every 10%% of the games (at most one per 10 s) "
        "instead (default: a bar)",
    )
    parser.add_argument(
        "--list-agents", action="store_true", help="list the registry's agents and their parameters, then exit"
    )
    return parser


def config_from_args(args: argparse.Namespace, parser: argparse.ArgumentParser) -> TournamentConfig:
    if not args.agents:
        parser.error("--agents is required (e.g. --agents value random)")
    try:
        specs = tuple(parse_agent_spec(text) for text in args.agents)
    except AgentSpecError as error:
        parser.error(str(error))
    mode = args.mode or (HEAD_TO_HEAD if args.players in (None, len(specs)) else ROUND_ROBIN)
    players = args.players or (len(specs) if mode == HEAD_TO_HEAD else 2)
    if mode == HEAD_TO_HEAD and players not in (2, 3, 4):
        parser.error(
            f"{len(specs)} agents cannot share one table (2-4 players); "
            "use --players N for a round-robin over every N of them"
        )
    per_table = len(seat_orders(players, args.seatings))
    deals = args.deals or math.ceil(args.games / per_table)
    try:
        return TournamentConfig(
            agents=specs,
            num_players=players,
            mode=mode,
            deals=deals,
            seatings=args.seatings,
            seed=args.seed,
            penalty=args.penalty,
            strict_bids=args.strict_bids,
            preset=args.preset,
        )
    except ValueError as error:
        parser.error(str(error))


def agent_list() -> str:
    """``--list-agents``: every registry agent with its description and parameters (defaults)."""
    lines = []
    for name in sorted(registry()):
        try:
            description = describe_agent(name)
        except AgentSpecError as error:
            lines += [name, f"    (unavailable here: {error})", ""]
            continue
        lines += [name, *textwrap.wrap(description.summary, 100, initial_indent="    ", subsequent_indent="    ")]
        if description.parameters is None:
            parameters = "parameters: see its documentation"
        else:
            parameters = "parameters: " + (", ".join(description.parameters) or "none")
        lines += [*textwrap.wrap(parameters, 100, initial_indent="    ", subsequent_indent="        "), ""]
    lines.append("Give parameters as NAME:key=value,...; e.g. hoarder:aggression=1.2,focus=3")
    return "\n".join(lines)


def _stopped_at(error: GameFailedError, out: Path, resume: str) -> str:
    """What to do after an agent stopped the run."""
    index = error.failure.index
    return (
        f"The games finished before it are saved in {out}/{GAMES_FILE}. Rerun the failing game alone with "
        f"--workers 1 --only-games {index} for a full traceback; repeat the command with --keep-going to record "
        f"such games and play on; finish the run with: {resume}"
    )


def _arguments(
    parser: argparse.ArgumentParser, argv: Sequence[str] | None, args: argparse.Namespace
) -> tuple[argparse.Namespace, TournamentConfig, set[str]]:
    """The options ``args`` parsed from ``argv`` (for ``--resume DIR``, with the settings recorded
    there), the config they make, and the options typed (their names)."""
    typed = typed_options(parser, argv, args)
    if args.resume is not None:
        if args.out is not None and args.out != args.resume:
            parser.error(f"--resume {args.resume} writes into that folder; drop --out {args.out}")
        try:
            args = resumed_arguments(args, typed)
        except ValueError as error:  # RunFolderError, AgentSpecError
            parser.error(str(error))
    config = config_from_args(args, parser)
    check_backend_arguments(args, parser)
    return args, config, typed


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.list_agents:
        print(agent_list())
        return 0
    args, config, typed = _arguments(parser, argv, args)
    out = args.resume or args.out or Path("runs") / datetime.now().strftime("tournament-%Y%m%d-%H%M%S")
    resume = resume_command(out, args, typed)
    try:
        with sigterm_as_ctrl_c():
            result = run_tournament(
                config,
                workers=args.workers,
                progress=not args.no_progress,
                log_dir=args.save_logs,
                only_games=args.only_games,
                out_dir=out,
                keep_going=args.keep_going,
                resume=args.resume is not None,
                backend=args.backend,
                ray_address=args.ray_address,
                replay_html=args.replay_html or 0,
                log=partial(print, flush=True),
            )
            saved = write_results(result, out, plot=not args.no_plot)
    except AgentSpecError as error:
        parser.error(str(error))
    except GameFailedError as error:
        print(f"error: {error}\n{_stopped_at(error, out, resume)}", file=sys.stderr)
        return 1
    except ValueError as error:  # RunFolderError included
        print(f"error: {error}", file=sys.stderr)
        return 1
    except WorkerCrashedError as error:  # the finished games are saved; the crashed batch plays again on resume
        print(f"error: {error}\nThe finished games are saved; play the rest with: {resume}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        return stopped(out, resume)
    print(format_summary(result, saved))
    if args.replay_html:
        print(f"  Replay pages in {replay_folder(out)}/: open game-NNNNNN.html in a browser.")
    return 1 if result.failures else 0
