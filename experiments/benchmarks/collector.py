"""What Python's cyclic garbage collector costs the batched games: ``python -m experiments.benchmarks.collector``.

Hundreds of games alive at once are a large heap of containers, and every container a game keeps
(a list it grows, a record it appends) is one more for the collector's full collections to walk
and one more toward the next of them. For each player count this plays ``--steps`` batched steps
of ``--games`` games (random legal play, the observation counts read at every step, as in
``experiments.benchmarks.vector``) after ``--warmup`` steps, and prints:

- the collections of each generation in those steps and the seconds the collector took
  (``gc.callbacks``), as a share of the loop;
- the containers the steps left in the oldest generation (promoted and still alive), the ones
  that bring the next full collection nearer;
- the loop's decisions a second with the collector on and switched off (``gc.disable()``, for the
  measurement only), alternated over ``--repeats`` rounds, and their ratio: what the collector
  still costs, its cache misses included.

The figures are in docs/performance.md.
"""

from __future__ import annotations

import argparse
import gc
import statistics
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from biblios_env.vector import VectorGame
from experiments.benchmarks import benchmark_parser, save_results
from experiments.benchmarks.vector import random_legal
from experiments.common.cli import at_least

MODULE = "experiments.benchmarks.collector"


class CollectorClock:
    """The collections of each generation and the seconds they took, while installed."""

    def __init__(self) -> None:
        self.collections = [0, 0, 0]
        self.seconds = [0.0, 0.0, 0.0]
        self._started = 0.0

    def __call__(self, phase: str, info: dict[str, Any]) -> None:
        if phase == "start":
            self._started = time.perf_counter()
        else:
            self.collections[info["generation"]] += 1
            self.seconds[info["generation"]] += time.perf_counter() - self._started


def play(players: int, args: argparse.Namespace, collector_on: bool, seed: int) -> dict[str, Any]:
    """``args.steps`` timed steps of fresh games: decisions a second, and with the collector on,
    its collections, its seconds and the containers the steps left in the oldest generation."""
    games = VectorGame(args.games, players, seed=seed)
    rng = np.random.default_rng(seed)
    batch = games.reset()
    for _ in range(args.warmup):
        games.observation_counts()
        batch = games.step(random_legal(batch.action_mask, rng))
    gc.collect()
    oldest_before = {id(item) for item in gc.get_objects(2)}
    clock = CollectorClock()
    gc.callbacks.append(clock)
    if not collector_on:
        gc.disable()
    decisions, started = games.decisions, time.perf_counter()
    try:
        for _ in range(args.steps):
            games.observation_counts()
            batch = games.step(random_legal(batch.action_mask, rng))
        seconds = time.perf_counter() - started
    finally:
        gc.enable()
        gc.callbacks.remove(clock)
    promoted = sum(id(item) not in oldest_before for item in gc.get_objects(2))
    return {
        "decisions_per_s": (games.decisions - decisions) / seconds,
        "collections": clock.collections,
        "collector_share": sum(clock.seconds) / seconds,
        "full_collection_ms": 1000 * clock.seconds[2] / max(clock.collections[2], 1),
        "promoted": promoted,
    }


def measure(players: int, args: argparse.Namespace) -> dict[str, Any]:
    """The collector's figures with it on, and the on/off rates alternated (each goes first every other round)."""
    rates: dict[bool, list[float]] = {True: [], False: []}
    first_on: dict[str, Any] = {}
    for round_index in range(args.repeats):
        for collector_on in (True, False) if round_index % 2 == 0 else (False, True):
            figures = play(players, args, collector_on, args.seed + round_index)
            rates[collector_on].append(figures["decisions_per_s"])
            if collector_on and not first_on:
                first_on = figures
    ratios = [off / on for on, off in zip(rates[True], rates[False], strict=True)]
    return {
        **{key: first_on[key] for key in ("collections", "collector_share", "full_collection_ms", "promoted")},
        "on_decisions_per_s": statistics.median(rates[True]),
        "off_decisions_per_s": statistics.median(rates[False]),
        "off / on": statistics.median(ratios),
    }


def build_parser() -> argparse.ArgumentParser:
    parser = benchmark_parser(MODULE, __doc__)
    parser.add_argument("--players", type=int, choices=(2, 3, 4), nargs="+", default=[2, 3, 4], help="player counts")
    parser.add_argument("--games", type=at_least(1), default=256, help="games stepped together")
    parser.add_argument("--steps", type=at_least(1), default=600, help="batched steps timed")
    parser.add_argument("--warmup", type=at_least(0), default=100, help="steps played first, not counted")
    parser.add_argument("--repeats", type=at_least(1), default=5, help="alternated rounds, collector on and off")
    parser.add_argument("--seed", type=int, default=1, help="seed of the games and the actions")
    parser.add_argument("--out", type=Path, default=Path("results/collector_benchmark.json"), help="where to save JSON")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    results = {}
    for players in args.players:
        figures = results[str(players)] = measure(players, args)
        young, middle, full = figures["collections"]
        print(f"{players} players: collections {young}/{middle}/{full} (young/middle/full; a full one "
              f"{figures['full_collection_ms']:.0f} ms), collector {figures['collector_share']:.1%} of the loop, "
              f"{figures['promoted']:,} containers promoted to the oldest generation; "
              f"{figures['on_decisions_per_s']:,.0f} decisions/s on, {figures['off_decisions_per_s']:,.0f} off "
              f"({figures['off / on']:.2f}x)", flush=True)  # fmt: skip
    save_results(args.out, MODULE, argv, games=args.games, steps=args.steps, players=results)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
