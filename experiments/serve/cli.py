"""The command line ``python -m experiments.serve`` (installed as ``biblios-serve``): the options,
the listening socket and uvicorn serving the app until Ctrl-C or SIGTERM.

The server listens on 127.0.0.1 unless ``--host`` says otherwise: another address opens it to
whoever can reach it, and to any web page a browser there opens, so the command says so on stderr.
The first line it prints is the page's address (with ``--port 0``, the free port it got).
Starlette and uvicorn are imported only when it serves, so ``--help`` works without the ``serve``
extra.

Stopping: SIGINT (Ctrl-C) and SIGTERM both stop it the same way, within a few seconds whatever
the bots are doing: uvicorn stops taking requests and gives those under way
:data:`GRACEFUL_SECONDS`; no bot moves any more (a move being saved is finished); the bots' threads
are not waited for. It prints "Server stopped." and exits 0.
"""

from __future__ import annotations

import argparse
import asyncio
import ipaddress
import signal
import socket
import sys
from collections.abc import Sequence
from pathlib import Path
from types import FrameType
from typing import Any, Final

from agents.search.options import OPTION_RANGES
from experiments.common.cli import at_least, invocation_note, positive, program_name
from experiments.serve.errors import hide_folders
from experiments.serve.specs import DEFAULT_BOT_SECONDS, BotRules
from experiments.serve.storage import DataFolder
from experiments.serve.store import DEFAULT_IDLE_SECONDS, DEFAULT_MAX_GAMES, GameStore
from experiments.serve.thinking import DEFAULT_MAX_THINKING

DEFAULT_HOST: Final = "127.0.0.1"
DEFAULT_PORT: Final = 8000
#: The names a request to a loopback server may be addressed to (any other is refused).
LOOPBACK_NAMES: Final = ("127.0.0.1", "localhost", "[::1]", "::1")
#: Seconds uvicorn gives the requests under way when the server stops (none waits for a bot).
GRACEFUL_SECONDS: Final = 2.0
#: The longest ``--bot-seconds``: a search's longest time limit.
MAX_BOT_SECONDS: Final = OPTION_RANGES["time_limit"][1]


def _port(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        value = -1
    if not 0 <= value <= 65535:
        raise argparse.ArgumentTypeError(f"expected a port from 0 to 65535 (0: any free one), got {text!r}")
    return value


def _bot_seconds(text: str) -> float:
    value = positive(text)
    if value > MAX_BOT_SECONDS:
        raise argparse.ArgumentTypeError(
            f"expected a number of seconds from above 0 to {MAX_BOT_SECONDS:g}, got {text!r}"
        )
    return value


def _folder(text: str) -> Path:
    path = Path(text)
    if not path.is_dir():
        raise argparse.ArgumentTypeError(f"expected an existing folder, got {text!r}")
    return path


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog=program_name("experiments.serve"),
        description="Play Biblios against the bots in a browser: a page and its JSON API (docs/serve.md).",
        epilog="Open the address it prints. " + invocation_note("experiments.serve"),
    )
    parser.add_argument(
        "--host",
        default=DEFAULT_HOST,
        help=f"the address to listen on (default {DEFAULT_HOST}: this machine only; any other opens the server to "
        "the network, with a warning)",
    )
    parser.add_argument(
        "--port", type=_port, default=DEFAULT_PORT, help=f"the port (default {DEFAULT_PORT}; 0: any free one, printed)"
    )
    parser.add_argument(
        "--data",
        type=Path,
        metavar="DIR",
        help="keep every game's log in DIR, written after each move, and resume the unfinished ones at start "
        "(default: games live in memory only)",
    )
    parser.add_argument(
        "--max-games",
        type=at_least(1),
        default=DEFAULT_MAX_GAMES,
        metavar="N",
        help=f"unfinished games held at once; more are refused (default {DEFAULT_MAX_GAMES})",
    )
    parser.add_argument(
        "--idle-timeout",
        type=positive,
        default=DEFAULT_IDLE_SECONDS,
        metavar="SECONDS",
        help=f"a game nobody asks about for this long expires (default {DEFAULT_IDLE_SECONDS:g})",
    )
    parser.add_argument(
        "--import-agents",
        action="store_true",
        help="also accept agent specs that are import paths (package.module.Factory): the server then runs code "
        "a request names; off by default",
    )
    parser.add_argument(
        "--policy-dir",
        type=_folder,
        metavar="DIR",
        help="let agent specs name the .npz policy and network files inside DIR (network:path=FILE.npz, relative "
        "to DIR); by default a spec may name no file",
    )
    parser.add_argument(
        "--bot-seconds",
        type=_bot_seconds,
        default=DEFAULT_BOT_SECONDS,
        metavar="S",
        help=f"seconds a bot may think per decision (default {DEFAULT_BOT_SECONDS:g}): a search's time limit; a bot "
        "that has not chosen by then and half as much again (2 s at least) ends its game in an error",
    )
    parser.add_argument(
        "--max-thinking",
        type=at_least(1),
        default=DEFAULT_MAX_THINKING,
        metavar="N",
        help=f"searching bots thinking at once, server-wide; the others wait their turn (default "
        f"{DEFAULT_MAX_THINKING})",
    )
    return parser


def is_loopback(host: str) -> bool:
    """Whether ``host`` is this machine only (127.0.0.0/8, ::1, localhost)."""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def listening_socket(host: str, port: int) -> socket.socket:
    """A socket bound to ``host``:``port`` and listening, so the address printed next already answers.
    Its protocol is named (TCP), as asyncio needs it to turn Nagle's delay off on each connection:
    unnamed, every answer on a kept-alive connection waits some 40 ms for the client's delayed ACK."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((host, port))
        sock.listen(128)
    except OSError:
        sock.close()
        raise
    return sock


class _StopSignalError(Exception):
    """SIGINT or SIGTERM while the server is not serving (uvicorn handles them while it serves)."""


def _stop(signum: int, frame: FrameType | None) -> None:
    raise _StopSignalError


class _StopQuietly:
    """The app, but a request that uvicorn cancels as the server stops (past the
    :data:`GRACEFUL_SECONDS` it gives the requests under way; on a loaded machine a request can wait
    that long for its turn) ends without a traceback: nobody waits for its answer any more, and a
    log is replaced whole, so none is left half written."""

    def __init__(self, app: Any) -> None:
        self.app = app

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        try:
            await self.app(scope, receive, send)
        except asyncio.CancelledError:
            return


def main(argv: Sequence[str] | None = None) -> int:
    """Serve until Ctrl-C or SIGTERM; returns 0 then, 1 when the extra is missing or the address
    cannot be used, 2 for bad arguments."""
    args = build_parser().parse_args(argv)
    try:
        import uvicorn

        from experiments.serve.app import create_app
    except ImportError as error:
        print(f'error: biblios-serve needs the serve extra: pip install -e ".[serve]" ({error})', file=sys.stderr)
        return 1
    try:
        data = None if args.data is None else DataFolder(args.data)
    except OSError as error:
        print(f"error: cannot use the data folder {args.data}: {error}", file=sys.stderr)
        return 1
    hide_folders(folder for folder in (args.data, args.policy_dir) if folder is not None)
    rules = BotRules(args.bot_seconds, args.import_agents, args.policy_dir)
    store = GameStore(
        data=data, max_games=args.max_games, idle_seconds=args.idle_timeout, rules=rules, max_thinking=args.max_thinking
    )
    previous = {signum: signal.signal(signum, _stop) for signum in (signal.SIGINT, signal.SIGTERM)}
    try:
        _serve(args, store, uvicorn, create_app)
    except (_StopSignalError, KeyboardInterrupt):
        pass  # uvicorn raises the signal that stopped it again once it is done: it lands here
    except OSError as error:
        print(f"error: cannot listen on {args.host} port {args.port}: {error}", file=sys.stderr)
        return 1
    finally:
        for signum in previous:
            signal.signal(signum, signal.SIG_IGN)  # a second signal while the bots are stopped changes nothing
        store.stop()
        for signum, handler in previous.items():
            signal.signal(signum, handler)
    print("Server stopped.", flush=True)
    return 0


def _serve(args: argparse.Namespace, store: GameStore, uvicorn: Any, create_app: Any) -> None:
    """Resume the saved games, listen, say where, and serve until a signal stops uvicorn."""
    problems = store.resume()
    loopback = is_loopback(args.host)
    sock = listening_socket(args.host, args.port)
    port = sock.getsockname()[1]
    shown_host = f"[{args.host}]" if ":" in args.host else args.host
    print(f"Biblios server: open http://{shown_host}:{port}/ (Ctrl-C stops it)", flush=True)
    if not loopback:
        print(f"warning: listening on {args.host}: anyone who can reach this address can start and play games, "
              "over plain HTTP (a game's token travels unencrypted), and so can any web page that a browser able "
              "to reach it opens", file=sys.stderr)  # fmt: skip
    for problem in problems:
        print(f"warning: {problem}", file=sys.stderr)
    where = f"saved in {args.data} after every move" if store.persistent else "in memory only (--data DIR keeps them)"
    print(f"Games: {where}; {len(store.games)} resumed.", flush=True)
    app = create_app(store, allowed_hosts=(*LOOPBACK_NAMES, shown_host) if loopback else None)
    config = uvicorn.Config(
        _StopQuietly(app), log_level="warning", access_log=False, lifespan="off",
        timeout_graceful_shutdown=GRACEFUL_SECONDS,
    )  # fmt: skip
    uvicorn.Server(config).run(sockets=[sock])
