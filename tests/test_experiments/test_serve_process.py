"""A real play server (``python -m experiments.serve`` in its own process) against the dearest bots
it accepts: forty games of searching bots hold nobody up, and SIGINT or SIGTERM stop it within a few
seconds while they think, with status 0, "Server stopped." and every log whole.
"""

from __future__ import annotations

import random
import re
import signal
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest
from optional_extras import require

require("starlette")
from biblios_env.engine.log import load_log  # noqa: E402
from experiments.benchmarks.serve import SLOW_OPPONENT, Client, GameRecord, next_view  # noqa: E402

#: Seconds the server may take to stop once signalled ("within a few seconds").
STOP_SECONDS = 8.0
#: The longest any request of the normal game may take while the searches think.
ANSWER_LIMIT = 2.0


def start_server(data: Path, *options: str) -> tuple[subprocess.Popen[str], int]:
    command = [sys.executable, "-m", "experiments.serve", "--port", "0", "--data", str(data), *options]
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert process.stdout is not None
    found = re.search(r"http://127\.0\.0\.1:(\d+)/", process.stdout.readline())
    assert found, process.stderr.read() if process.stderr else ""
    return process, int(found.group(1))


def create(port: int, index: int, opponent: str, players: int = 2) -> tuple[Client, dict[str, Any]]:
    client = Client(port, GameRecord(index))
    request = {"players": players, "seat": players - 1, "opponents": [opponent] * (players - 1), "seed": index}
    made = client.call("create", "POST", "/api/games", request)
    client.token = made["token"]
    return client, made["view"]


def stop(process: subprocess.Popen[str], signum: int) -> tuple[int, str, float]:
    """Send ``signum``; the exit status, the output and the seconds it took to stop."""
    start = time.perf_counter()
    process.send_signal(signum)
    try:
        out, err = process.communicate(timeout=STOP_SECONDS)
    except subprocess.TimeoutExpired:
        process.kill()
        out, err = process.communicate()
        return -1, out + err, time.perf_counter() - start
    return process.returncode, out + err, time.perf_counter() - start


def check_logs(data: Path) -> None:
    """Every log is whole (it replays, digest included), and no temporary file is left."""
    logs = list(data.rglob("*.json"))
    assert logs and not list(data.rglob("*.tmp"))
    for log in logs:
        load_log(log)


def test_forty_searching_games_hold_nobody_and_sigterm_stops_the_server(tmp_path: Path) -> None:
    process, port = start_server(tmp_path, "--bot-seconds", "1")
    try:
        with ThreadPoolExecutor(max_workers=40) as pool:
            slow = list(pool.map(lambda index: create(port, index, SLOW_OPPONENT, 2 + index % 3), range(40)))
        assert sum(view["thinking"] for _, view in slow) >= 30  # the searches are thinking
        client, view = create(port, 99, "value")
        rng = random.Random(99)
        path = f"/api/games/{view['game_id']}"
        while not view["finished"]:
            view = next_view(client, path, view, rng)
        times = [value for values in client.record.seconds.values() for value in values]
        assert len(times) > 20 and max(times) < ANSWER_LIMIT, max(times)
        assert client.call("log", "GET", f"{path}/log")["num_actions"] == view["moves"]
    finally:
        status, output, seconds = stop(process, signal.SIGTERM)
    assert status == 0 and "Server stopped." in output and seconds < STOP_SECONDS, (status, output, seconds)
    check_logs(tmp_path)


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM])
def test_a_signal_stops_the_server_while_its_bots_think(tmp_path: Path, signum: int) -> None:
    process, port = start_server(tmp_path)  # --bot-seconds 10: every search thinks 10 s
    try:
        views = [create(port, index, SLOW_OPPONENT, 3)[1] for index in range(3)]
        assert all(view["thinking"] for view in views)  # signalled while the searches think
    finally:
        status, output, seconds = stop(process, signum)
    assert status == 0 and "Server stopped." in output and seconds < STOP_SECONDS, (status, output, seconds)
    assert output.count("Server stopped.") == 1 and "Traceback" not in output
    check_logs(tmp_path)
