"""The parallel runner's overhead on one machine: the same tournament on local processes and on Ray.

Ray pays for its scheduler, object store and serialisation; this measures what that costs a
real workload. The same tournament (same games, same seeds) is played on both backends,
alternated (local, ray, local, ray, ...) so that a change in the machine's load hits both; Ray
is started before each Ray run (and stopped after it, so that the local runs fork plain
processes) and its start-up is reported apart, as a fixed cost of a run. Each run should last
minutes, not seconds, for the figure to mean something::

    python -m experiments.benchmarks.parallel                       # about 2 minutes of games per run on 2 cores
    python -m experiments.benchmarks.parallel --deals 400 --rounds 3 --out overhead.json
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from experiments.common.cli import HelpFormatter, invocation_note, program_name
from experiments.common.match import parse_agent_spec
from experiments.common.parallel import BACKENDS, LOCAL, RAY
from experiments.tournament import TournamentConfig, run_tournament


def measure(agents: Sequence[str], players: int, deals: int, workers: int, rounds: int, seed: int) -> dict[str, Any]:
    """Seconds of each run per backend (alternated), Ray's start-up, and Ray's overhead in percent."""
    import ray

    config = TournamentConfig(tuple(map(parse_agent_spec, agents)), num_players=players, deals=deals, seed=seed)
    seconds: dict[str, list[float]] = {backend: [] for backend in BACKENDS}
    start_up: list[float] = []
    games: dict[str, list[Any]] = {}
    for _ in range(rounds):
        for backend in BACKENDS:
            if backend == RAY:  # started for its runs only: the local runs fork plain processes
                start = time.perf_counter()
                ray.init(address="local", num_cpus=workers, include_dashboard=False, log_to_driver=False)
                start_up.append(time.perf_counter() - start)
            try:
                start = time.perf_counter()
                result = run_tournament(config, workers=workers, progress=False, backend=backend)
                seconds[backend].append(time.perf_counter() - start)
            finally:
                ray.shutdown()
            games[backend] = [(record.index, record.result.vp) for record in result.records]
    if games[LOCAL] != games[RAY]:
        raise AssertionError("the backends played different games: the runner is broken")
    local, on_ray = statistics.mean(seconds[LOCAL]), statistics.mean(seconds[RAY])
    return {
        "agents": list(agents),
        "players": players,
        "games": len(games[LOCAL]),
        "workers": workers,
        "rounds": rounds,
        "seconds": seconds,
        "ray_start_up_seconds": [round(value, 2) for value in start_up],
        "mean_seconds": {LOCAL: round(local, 2), RAY: round(on_ray, 2)},
        "ray_overhead_percent": round(100 * (on_ray / local - 1), 1),
    }


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog=program_name("experiments.benchmarks.parallel"),
        description=__doc__.split("\n\n")[0] if __doc__ else None,
        formatter_class=HelpFormatter,
        epilog=invocation_note("experiments.benchmarks.parallel"),
    )
    parser.add_argument("--agents", nargs="+", default=["value", "hoarder", "random"], help="the table's agents")
    parser.add_argument("--players", type=int, default=3, help="players per game")
    parser.add_argument("--deals", type=int, default=3600, help="duplicate deals (games = deals x seatings)")
    parser.add_argument("--workers", type=int, default=2, help="processes, and the local Ray's CPUs")
    parser.add_argument("--rounds", type=int, default=2, help="alternated runs per backend")
    parser.add_argument("--seed", type=int, default=0, help="tournament seed")
    parser.add_argument("--out", type=Path, help="also write the figures to this JSON file")
    return parser


def main(argv: Sequence[str] | None = None) -> dict[str, Any]:
    args = build_parser().parse_args(argv)
    figures = measure(args.agents, args.players, args.deals, args.workers, args.rounds, args.seed)
    text = json.dumps(figures, indent=1)
    print(text)
    if args.out is not None:
        args.out.write_text(text + "\n")
    return figures


if __name__ == "__main__":
    main()
