"""Load-independent speed figures: CPU instructions per engine decision and per environment step.

Wall-clock rates on shared machines swing by up to 2x within minutes; instruction counts
do not. This script runs the benchmarks' loops (random legal play, 3 players by default;
``vector`` is the batched games, 128 at a time, the actions drawn in numpy) under valgrind's
callgrind twice, once with no games to count the start-up (imports,
first game), and reports the difference per decision / per step. Needs ``valgrind``
(``apt-get install valgrind``); takes a few minutes, as valgrind runs code ~50x slower.

    python -m experiments.benchmarks.instructions            # engine, raw_env and env()
    python -m experiments.benchmarks.instructions --games 5 --players 2
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Mapping
from pathlib import Path
from typing import Final

from biblios_env import env, raw_env
from experiments.benchmarks.engine import engine_playouts, env_playouts
from experiments.benchmarks.vector import vector_playouts
from experiments.common.cli import HelpFormatter, invocation_note, program_name

LOOPS = ("engine", "raw_env", "env", "vector")
_START_UP_SEED = 10_000
#: The runs under valgrind must do the same work every time: a fixed hash seed, and numpy's
#: BLAS on one thread (its idle worker threads spin for a varying number of instructions,
#: which moved the figures by up to 50% between identical runs).
_REPRODUCIBLE_SETTINGS: Final = {
    "PYTHONHASHSEED": "0",
    "OPENBLAS_NUM_THREADS": "1",
    "OMP_NUM_THREADS": "1",
    "MKL_NUM_THREADS": "1",
}


def run_loop(loop: str, num_players: int, games: int) -> int:
    """Play ``games`` random games through ``loop``; returns the decisions (engine) or steps made.

    A first game is always played, uncounted, so that lazy imports and caches count as start-up.
    """
    if loop == "engine":
        engine_playouts(num_players, 1, seed=_START_UP_SEED)
        return engine_playouts(num_players, games, seed=0)
    if loop == "vector":
        vector_playouts(num_players, 1, seed=_START_UP_SEED)
        return vector_playouts(num_players, games, seed=0)
    make = raw_env if loop == "raw_env" else env
    env_playouts(make, num_players, 1, seed=_START_UP_SEED)
    return env_playouts(make, num_players, games, seed=0)


def callgrind(
    arguments: list[str], environment: Mapping[str, str] | None = None, cwd: Path | None = None
) -> tuple[int, str]:
    """Run ``python ARGUMENTS`` under valgrind's callgrind, reproducibly (see
    :data:`_REPRODUCIBLE_SETTINGS`); returns the instructions it executed and what it printed."""
    with tempfile.TemporaryDirectory() as folder:
        out = Path(folder) / "callgrind.out"
        command = ["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}", sys.executable, *arguments]
        finished = subprocess.run(
            command,
            capture_output=True,
            text=True,
            env={**(environment or os.environ), **_REPRODUCIBLE_SETTINGS},
            cwd=cwd,
        )
    collected = re.search(r"Collected : (\d+)", finished.stderr)
    if finished.returncode != 0 or collected is None:
        raise RuntimeError(f"{' '.join(command)} failed:\n{finished.stdout}\n{finished.stderr[-3000:]}")
    return int(collected.group(1)), finished.stdout


def _instructions(loop: str, num_players: int, games: int) -> tuple[int, int]:
    """(instructions, decisions or steps) of one run under callgrind."""
    arguments = ["-m", "experiments.benchmarks.instructions", "--inner", loop, "--players", str(num_players)]
    instructions, printed = callgrind([*arguments, "--games", str(games)])
    counted = re.search(r"^count (\d+)$", printed, re.MULTILINE)
    if counted is None:
        raise RuntimeError(f"could not read the loop's count:\n{printed}")
    return instructions, int(counted.group(1))


def build_parser() -> argparse.ArgumentParser:
    """The command line of the instruction count (``--inner`` is its own run under valgrind, hidden)."""
    parser = argparse.ArgumentParser(
        prog=program_name("experiments.benchmarks.instructions"),
        description=__doc__.splitlines()[0],
        epilog=invocation_note("experiments.benchmarks.instructions") + " Needs valgrind on the PATH.",
        formatter_class=HelpFormatter,
    )
    parser.add_argument("--players", type=int, default=3, choices=(2, 3, 4), help="players per game")
    parser.add_argument("--games", type=int, default=10, help="games counted per loop (after the start-up game)")
    parser.add_argument(
        "--loops", nargs="+", default=list(LOOPS), choices=LOOPS, help="which loops to count (default: all)"
    )
    parser.add_argument("--inner", choices=LOOPS, help=argparse.SUPPRESS)  # the run under valgrind
    return parser


def main(argv: list[str] | None = None) -> dict[str, float]:
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.inner:
        print(f"count {run_loop(args.inner, args.players, args.games)}")
        return {}
    if args.games < 1:
        parser.error(f"--games must be at least 1, got {args.games}")
    if shutil.which("valgrind") is None:
        parser.error("valgrind is not installed (apt-get install valgrind)")
    results = {}
    for loop in args.loops:
        base, _ = _instructions(loop, args.players, 0)
        total, count = _instructions(loop, args.players, args.games)
        results[loop] = (total - base) / count
        unit = "step" if loop in ("raw_env", "env") else "decision"
        print(
            f"{loop:8s} {args.players} players: {results[loop] / 1000:6.1f}k instructions per {unit} "
            f"({count:,} {unit}s in {args.games} games)",
            flush=True,
        )
    return results


if __name__ == "__main__":
    main()
