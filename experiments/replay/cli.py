"""The command line ``python -m experiments.replay`` (installed as ``biblios-replay``): a saved
game as a replay page (``--html``), or stepped through in the terminal.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

from rich.console import Console
from rich.text import Text

from biblios_env.engine.log import GameLogError
from experiments.common.cli import invocation_note, program_name
from experiments.replay.page import save_page
from experiments.replay.terminal import InputFunction, TerminalReplay
from experiments.replay.timeline import read_saved_game


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog=program_name("experiments.replay"),
        description="Replay a saved Biblios game: as a self-contained HTML page, or step by step in the terminal.",
        epilog="LOG is a game log (biblios-play --save-log, biblios-tournament --save-logs). "
        + invocation_note("experiments.replay"),
    )
    parser.add_argument("log", type=Path, metavar="LOG", help="the game log to replay")
    parser.add_argument(
        "--html",
        type=Path,
        metavar="OUT.html",
        help="write the replay page to this file (its folder is created) instead of stepping in the terminal",
    )
    parser.add_argument(
        "--seat",
        type=int,
        metavar="N",
        help="one seat's view, showing only what it knows (default: the whole table); with --html, the view the "
        "page opens with",
    )
    parser.add_argument("--no-color", action="store_true", help="plain text without colours in the terminal")
    return parser


def main(
    argv: Sequence[str] | None = None,
    *,
    input_function: InputFunction | None = None,
    console: Console | None = None,
) -> int:
    """Write the page or step through the game; returns 0, 1 for a bad log or an unwritable page
    (nothing is written then), 2 for bad arguments."""
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        saved = read_saved_game(args.log)
    except GameLogError as error:
        print(f"error: {type(error).__name__}: {error}", file=sys.stderr)
        return 1
    if args.seat is not None and not 0 <= args.seat < saved.num_players:
        parser.error(f"--seat must be a seat of this {saved.num_players}-player game: 0..{saved.num_players - 1}, "
                     f"got {args.seat}")  # fmt: skip
    if args.html is not None:
        try:
            path = save_page(saved, args.html, open_seat=args.seat)
        except OSError as error:
            print(f"error: cannot write the replay page {args.html}: {error}", file=sys.stderr)
            return 1
        print(f"Replay page written to {path} ({path.stat().st_size:,} bytes); open it in a browser.")
        return 0
    terminal = console if console is not None else Console(no_color=args.no_color, highlight=False)
    read = input_function or (lambda prompt: terminal.input(Text(prompt, style="bold cyan")))
    try:
        TerminalReplay(saved, args.seat, console=terminal, input_function=read).run()
    except KeyboardInterrupt:
        terminal.print("\nReplay stopped.")
        return 130
    return 0
