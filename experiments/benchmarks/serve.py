"""The play server under load, ``python -m experiments.benchmarks.serve``: many games at once against
one real server on the loopback.

It starts ``python -m experiments.serve --port 0 --data DIR`` (a temporary folder unless ``--data``)
and plays ``--games`` games concurrently, one scripted client (a thread) per game: a new game (2, 3
and 4 players in turn, ``value`` bots, a seeded deal), then random legal actions until the end, each
sent with the ``moves`` of the view it answers (and, while the view says the bots are thinking,
``GET`` again). Then it checks every game: its log (``GET .../log``) is complete (it holds every
move of the game), replays to the final scores the last answer showed, and is the log the data
folder kept. It prints the response times (p50, p99, max) of every request and of the actions alone,
and exits with status 1 if a check fails.

Then it plays the same games again beside ``--slow-games`` games against the dearest searching bots
the server accepts (:data:`SLOW_OPPONENT`, thinking ``--bot-seconds`` per decision), played until
the normal games are done, and prints the normal games' p99 with and without them: what a few
clients asking for slow bots cost everybody else.

Bounded: the server listens on 127.0.0.1 only, every request has a timeout, and the server is
stopped at the end (Ctrl-C stops the run and the server). ``docs/serve.md`` gives measured figures.
"""

from __future__ import annotations

import argparse
import contextlib
import http.client
import json
import math
import random
import re
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

from biblios_env.engine.log import replay
from experiments.common.cli import HelpFormatter, at_least, invocation_note, positive, program_name

HOST: Final = "127.0.0.1"
#: Seconds a request may take before the run counts it as failed (a 4-player game's bots move in well under 1 s).
REQUEST_TIMEOUT: Final = 120.0
#: The slow games' bots: the dearest search the server accepts, searching every decision.
SLOW_OPPONENT: Final = "ismcts:iterations=1000000,searched=place-take-bid-church-pay"
#: Seconds the server may take to start and to stop.
SERVER_TIMEOUT: Final = 60.0
_ADDRESS: Final = re.compile(r"http://127\.0\.0\.1:(\d+)/")


@dataclass
class GameRecord:
    """One scripted client's game: its id, the time of each request by route, and what it found."""

    index: int
    game_id: str = ""
    seconds: dict[str, list[float]] = field(default_factory=dict)
    scores: list[int] | None = None
    moves: int = 0
    log: dict[str, Any] | None = None
    failure: str = ""


@dataclass(frozen=True)
class LoadReport:
    """The run: the normal games' records, the wall time and the failures found (empty when every
    check passed), and the slow games' records (played beside them, not checked)."""

    records: list[GameRecord]
    seconds: float
    failures: list[str]
    slow_records: list[GameRecord] = field(default_factory=list)

    def times(self, route: str | None = None) -> list[float]:
        """Every request's seconds (or only those of ``route``: ``create``, ``action``, ``log``)."""
        return sorted(
            value for record in self.records for name, values in record.seconds.items() if route in (None, name)
            for value in values
        )  # fmt: skip


def percentile(values: Sequence[float], fraction: float) -> float:
    """The nearest-rank percentile of sorted ``values`` (``fraction`` 0.5: the median)."""
    if not values:
        raise ValueError("no values to take a percentile of")
    return values[max(0, math.ceil(fraction * len(values)) - 1)]


@contextlib.contextmanager
def running_server(data: Path, max_games: int, options: Sequence[str] = ()) -> Iterator[int]:
    """``python -m experiments.serve`` on 127.0.0.1 and a free port, saving into ``data`` (with more
    ``options``); yields the port and stops the server (Ctrl-C) afterwards."""
    command = [sys.executable, "-m", "experiments.serve", "--host", HOST, "--port", "0", "--data", str(data),
               "--max-games", str(max_games), *options]  # fmt: skip
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert process.stdout is not None
        first = process.stdout.readline()
        found = _ADDRESS.search(first)
        if found is None:
            raise RuntimeError(f"the server did not start: {first!r} {process.stderr.read() if process.stderr else ''}")
        yield int(found.group(1))
    finally:
        process.send_signal(signal.SIGINT)
        try:
            process.communicate(timeout=SERVER_TIMEOUT)
        except subprocess.TimeoutExpired:
            process.kill()
            process.communicate()


class Client:
    """One HTTP connection to the server, timing each request."""

    def __init__(self, port: int, record: GameRecord) -> None:
        self.connection = http.client.HTTPConnection(HOST, port, timeout=REQUEST_TIMEOUT)
        self.record = record
        self.token = ""

    def call(self, route: str, method: str, path: str, body: Any = None) -> Any:
        """The JSON answer of one request; RuntimeError naming it for any status but 200/201."""
        headers = {"Authorization": f"Bearer {self.token}"} if self.token else {}
        payload = None
        if body is not None:
            headers["Content-Type"] = "application/json"
            payload = json.dumps(body)
        start = time.perf_counter()
        self.connection.request(method, path, body=payload, headers=headers)
        response = self.connection.getresponse()
        text = response.read()
        self.record.seconds.setdefault(route, []).append(time.perf_counter() - start)
        if response.status not in (200, 201):
            raise RuntimeError(f"{method} {path} answered {response.status}: {text[:300]!r}")
        return json.loads(text)


def next_view(client: Client, path: str, view: dict[str, Any], rng: random.Random) -> dict[str, Any]:
    """The view after the client's next request: ``GET`` while the bots think, else a random legal
    action answering the view's ``moves``."""
    if view.get("error"):
        raise RuntimeError(f"the game stopped on an error: {view['error']}")
    if view["thinking"]:
        return dict(client.call("poll", "GET", path))
    if not view["legal_actions"]:
        raise RuntimeError(f"not finished, not thinking, yet no legal action: {view}")
    action = rng.choice(view["legal_actions"])["action"]
    return dict(client.call("action", "POST", f"{path}/actions", {"action": action, "moves": view["moves"]}))


def play_one(
    index: int, seed: int, port: int, opponent: str = "value", until: threading.Event | None = None
) -> GameRecord:
    """Game ``index``: created against ``opponent`` bots, played with random legal actions to the end
    (or until ``until`` is set), its log fetched if it finished."""
    record = GameRecord(index)
    client = Client(port, record)
    rng = random.Random(seed + index)
    players = (2, 3, 4)[index % 3]
    request = {
        "players": players,
        "seat": index % players,
        "opponents": [opponent] * (players - 1),
        "seed": seed + index,
    }
    try:
        made = client.call("create", "POST", "/api/games", request)
        record.game_id, client.token, view = made["game_id"], made["token"], made["view"]
        path = f"/api/games/{record.game_id}"
        while not view["finished"] and not (until is not None and until.is_set()):
            view = next_view(client, path, view, rng)
        record.moves = view["moves"]
        if view["finished"]:
            record.scores = view["scores"]
            record.log = client.call("log", "GET", f"{path}/log")
    except (OSError, RuntimeError, ValueError, KeyError) as error:
        record.failure = f"game {index} ({record.game_id or 'not created'}): {type(error).__name__}: {error}"
    finally:
        client.connection.close()
    return record


def check(record: GameRecord, data: Path) -> str:
    """What is wrong with a played game's log, or ``""``: complete, replaying to the scores shown, and
    the very log the data folder kept."""
    if record.failure:
        return record.failure
    log = record.log or {}
    where = f"game {record.index} ({record.game_id})"
    if log.get("num_actions") != record.moves:
        return f"{where}: its log holds {log.get('num_actions')} actions, the game made {record.moves} moves"
    replayed = replay(log)
    if not replayed.is_over or list(replayed.state.vp) != record.scores:
        return f"{where}: its log replays to {list(replayed.state.vp)}, the game ended with {record.scores}"
    kept = data / "finished" / f"{record.game_id}.json"
    if not kept.exists() or json.loads(kept.read_text(encoding="utf-8")) != log:
        return f"{where}: the data folder's log {kept} is missing or differs from the served one"
    return ""


def run_load(
    games: int, seed: int = 0, data: Path | None = None, slow_games: int = 0, bot_seconds: float | None = None
) -> LoadReport:
    """Play ``games`` games at once against a fresh server and check them all; with ``slow_games``
    more against :data:`SLOW_OPPONENT` beside them, until the normal ones are done (the server
    started with ``--bot-seconds bot_seconds``, if given)."""
    options = [] if bot_seconds is None else ["--bot-seconds", str(bot_seconds)]
    with contextlib.ExitStack() as stack:
        folder = data if data is not None else Path(stack.enter_context(tempfile.TemporaryDirectory()))
        port = stack.enter_context(running_server(folder, max_games=games + slow_games, options=options))
        done = threading.Event()
        start = time.perf_counter()
        with ThreadPoolExecutor(max_workers=games + slow_games) as pool:
            slow = [
                pool.submit(play_one, games + index, seed, port, SLOW_OPPONENT, done) for index in range(slow_games)
            ]
            records = list(pool.map(lambda index: play_one(index, seed, port), range(games)))
            seconds = time.perf_counter() - start
            done.set()
            slow_records = [future.result() for future in slow]
        failures = [problem for problem in (check(record, folder) for record in records) if problem]
    return LoadReport(records, seconds, failures, slow_records)


def _line(name: str, values: Sequence[float]) -> str:
    p50, p99 = (1000 * percentile(values, fraction) for fraction in (0.5, 0.99))
    return f"{name}: {len(values):,} requests, p50 {p50:.1f} ms, p99 {p99:.1f} ms, max {1000 * values[-1]:.1f} ms"


def _report(report: LoadReport, games: int, slow_games: int) -> None:
    finished = sum(record.scores is not None for record in report.records)
    played = f"{games} games at once" if games > 1 else "1 game"
    beside = f", beside {slow_games} games against {SLOW_OPPONENT}" if slow_games else ""
    print(f"{played}, value bots{beside}: {finished} finished in {report.seconds:.1f} s")
    if report.times():
        print(_line("  all requests", report.times()))
        print(_line("  actions", report.times("action")))
    slow_failures = [record.failure for record in report.slow_records if record.failure]
    if slow_failures:
        print(f"  the slow games' clients met {len(slow_failures)} error(s), first: {slow_failures[0]}")


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog=program_name("experiments.benchmarks.serve"),
        description="Many games at once against one play server on the loopback: response times, and every "
        "game's log checked; then the same beside games against slow searching bots.",
        formatter_class=HelpFormatter,
        epilog=invocation_note("experiments.benchmarks.serve"),
    )
    parser.add_argument("--games", type=at_least(1), default=50, help="games played at once, one client each")
    parser.add_argument(
        "--slow-games",
        type=at_least(0),
        default=10,
        help="games against slow searching bots played beside them in a second run (0: no second run)",
    )
    parser.add_argument("--bot-seconds", type=positive, help="the server's --bot-seconds (default: the server's)")
    parser.add_argument("--seed", type=int, default=0, help="seeds the deals and the clients' random actions")
    parser.add_argument("--data", type=Path, help="the server's data folder (default: a temporary one)")
    args = parser.parse_args(argv)
    runs = [0, args.slow_games] if args.slow_games else [0]
    failures: list[str] = []
    p99s: list[float] = []
    try:
        for slow_games in runs:
            data = None if args.data is None else args.data / f"beside-{slow_games}-slow"
            report = run_load(args.games, args.seed, data, slow_games, args.bot_seconds)
            _report(report, args.games, slow_games)
            failures += report.failures
            p99s.append(1000 * percentile(report.times(), 0.99) if report.times() else math.nan)
    except KeyboardInterrupt:
        print("Stopped.", file=sys.stderr)
        return 130
    if len(p99s) == 2:
        print(f"normal games' p99: {p99s[0]:.1f} ms alone, {p99s[1]:.1f} ms beside {args.slow_games} slow games")
    for failure in failures:
        print(f"FAILED: {failure}", file=sys.stderr)
    print("every log complete and replaying to the final scores" if not failures else "checks failed")
    return 1 if failures else 0


if __name__ == "__main__":
    raise SystemExit(main())
