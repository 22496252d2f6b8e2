"""The command line ``python -m experiments.play`` (installed as ``biblios-play``): its parser,
the seating of the opponents, the game and the offer to save its log.
"""

from __future__ import annotations

import argparse
import itertools
import secrets
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from rich.console import Console
from rich.panel import Panel
from rich.text import Text

from biblios_env.agent_interface import Agent
from biblios_env.engine.config import GameConfig
from biblios_env.engine.game import Game
from biblios_env.engine.log import save_log
from experiments.common.cli import add_game_arguments, invocation_note, program_name, seed_value
from experiments.common.match import AgentSpecError, build_agent, parse_agent_spec
from experiments.common.seeds import AGENT, derive_seed
from experiments.play.session import InputFunction, LeaveGameError, TerminalGame

HUMAN: Final = "human"


def _delay(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        value = -1.0
    if not 0 <= value <= 60:
        raise argparse.ArgumentTypeError(f"expected seconds from 0 to 60, got {text!r}")
    return value


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog=program_name("experiments.play"),
        description="Play Biblios in the terminal against agents.",
        epilog="Agent specs as in the tournament: NAME or NAME:key=value,... (e.g. hoarder:aggression=1.2). "
        + invocation_note("experiments.play"),
    )
    parser.add_argument("--opponents", nargs="+", metavar="SPEC", default=["value"],
                        help="the other players' agents, filling the other seats in order (default value)")  # fmt: skip
    parser.add_argument("--players", type=int, choices=(2, 3, 4),
                        help="players (default: you + the opponents; opponents repeat to fill the seats)")  # fmt: skip
    parser.add_argument("--seat", type=int, default=0, help="your seat, 0 starts (default 0)")
    parser.add_argument("--seed", type=seed_value, help="the deal's seed (default: random, shown at the start)")
    add_game_arguments(parser)
    parser.add_argument("--save-log", type=Path, metavar="PATH", help="save the game as a replayable log")
    parser.add_argument("--delay", type=_delay, default=0.0, help="seconds to pause after each opponent move")
    parser.add_argument("--no-color", action="store_true", help="plain text without colours")
    return parser


def _default_input(console: Console) -> InputFunction:
    return lambda prompt: console.input(Text(prompt, style="bold cyan"))


def _save(game: Game, path: Path, console: Console, metadata: dict) -> bool:
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        save_log(game, path, **metadata)
    except OSError as error:
        console.print(Text(f"Could not save the game log to {path}: {error}", style="red"))
        return False
    console.print(Text(f"Game log saved to {path} (replay: biblios_env.engine.log.load_log)."))
    return True


def _player_count(parser: argparse.ArgumentParser, args: argparse.Namespace) -> int:
    """The table's size: ``--players``, or you and the opponents; a parser error when they do not fit."""
    opponents = len(args.opponents)
    players: int = args.players or opponents + 1
    if players not in (2, 3, 4):
        parser.error(f"a game has 2 to 4 players: {opponents} opponents and you make {players}")
    if opponents > players - 1:
        parser.error(f"{opponents} opponents do not fit a {players}-player game")
    if not 0 <= args.seat < players:
        parser.error(f"--seat must be a seat of the {players}-player game: 0..{players - 1}, got {args.seat}")
    return players


@dataclass(frozen=True, slots=True)
class Seating:
    """Who sits where: the agents of the other seats, every seat's label and agent seed."""

    agents: dict[int, Agent]
    labels: list[str]
    agent_seeds: list[int | None]


def _seat_opponents(parser: argparse.ArgumentParser, args: argparse.Namespace, players: int, seed: int) -> Seating:
    """Build the opponents in the other seats, in order, repeating ``--opponents`` to fill them;
    a parser error names a bad spec."""
    agents: dict[int, Agent] = {}
    labels = [HUMAN] * players
    agent_seeds: list[int | None] = [None] * players
    opponent_seats = [seat for seat in range(players) if seat != args.seat]
    try:
        for seat, text in zip(opponent_seats, itertools.cycle(args.opponents)):
            spec = parse_agent_spec(text)
            agents[seat] = build_agent(spec)
            labels[seat] = spec.label
            agent_seeds[seat] = derive_seed(seed, AGENT, seat)
    except AgentSpecError as error:
        parser.error(str(error))
    return Seating(agents, labels, agent_seeds)


def _welcome(session: TerminalGame, game: Game, seed: int) -> Panel:
    players, human = game.state.num_players, session.human
    opponents = ", ".join(session.screen.name(seat) for seat in range(players) if seat != human)
    return Panel(
        Text(
            f"Biblios, {players} players. You are player_{human}"
            + (" and start." if human == game.config.first_player else ".")
            + f" Opponents: {opponents}.\n"
            f"Seed {seed} (replay this deal with --seed {seed}). Type h at any question for help."
        ),
        title="Welcome",
    )


def _offer_save(game: Game, read: InputFunction, console: Console, metadata: dict) -> None:
    """Ask for a file name until the log is saved or the player skips (Enter, Ctrl-D)."""
    while True:
        try:
            answer = read("Save the game log? Type a file name, or press Enter to skip: ").strip()
        except (EOFError, KeyboardInterrupt):
            return
        if not answer or _save(game, Path(answer).expanduser(), console, metadata):
            return


def main(
    argv: Sequence[str] | None = None,
    *,
    input_function: InputFunction | None = None,
    console: Console | None = None,
) -> int:
    """Run the terminal game; returns 0 after a finished game, 1 when the player left, 2 for bad arguments."""
    parser = build_parser()
    args = parser.parse_args(argv)
    if console is None:
        console = Console(no_color=args.no_color, highlight=False)
    read = input_function or _default_input(console)
    players = _player_count(parser, args)
    seed = args.seed if args.seed is not None else secrets.randbits(32)
    seating = _seat_opponents(parser, args, players, seed)
    game = Game.from_config(
        GameConfig(players, args.penalty, args.strict_bids, preset=args.preset), seed=seed, auto_forced=False
    )
    for seat, agent in seating.agents.items():
        agent.start_game(seat, players, seed=seating.agent_seeds[seat])
    session = TerminalGame(
        game, args.seat, seating.agents, seating.labels, console=console, input_function=read, delay=args.delay
    )
    console.print(_welcome(session, game, seed))
    metadata = {
        "agents": seating.labels,
        "agent_seeds": seating.agent_seeds,
        "human_seat": args.seat,
        "program": "experiments.play",
    }
    try:
        session.play()
    except (LeaveGameError, KeyboardInterrupt) as reason:
        console.print(Text(f"\nGame abandoned ({reason or 'interrupted'}).", style="bold"))
        if args.save_log:
            _save(game, args.save_log, console, metadata)
        return 1
    console.print(session.screen.score_table(game.state))
    if args.save_log:
        _save(game, args.save_log, console, metadata)
    else:
        _offer_save(game, read, console, metadata)
    return 0
