"""What the self-play trainer's pool pays to play its snapshots: ``python -m experiments.benchmarks.snapshots``.

With ``--snapshots K`` frozen copies of the trainer's default network in the pool, every opponent
seat of ``--games`` 2-player games is a snapshot, drawn uniformly. At each of ``--steps`` batched
steps the pool chooses the snapshots' moves two ways, alternated in this one process: in one
forward for all of them (:class:`~experiments.training.tensors.StackedNetworks`, what the pool
does) and one forward per snapshot over its own games (what it did before). Prints microseconds
per step of each and their ratio, for each ``K`` (docs/performance.md).
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from biblios_env.vector import VectorGame
from experiments.benchmarks import benchmark_parser, save_results
from experiments.common.cli import at_least
from experiments.training.networks import TorchNetwork
from experiments.training.opponents import SNAPSHOT_BASE, BatchedOpponentPool, Mixture
from experiments.training.selfplay import Args
from experiments.training.tensors import torch_module

MODULE = "experiments.benchmarks.snapshots"
#: The trainer's default trunk, which its snapshots have.
DEFAULT_HIDDEN = Args().hidden


def pool_with(snapshots: int, games: int, seed: int) -> BatchedOpponentPool:
    """A pool of ``snapshots`` frozen networks of the trainer's default shape over fresh games."""
    torch = torch_module()
    torch.set_num_threads(1)
    torch.manual_seed(seed)
    batch = VectorGame(games, 2, seed=seed)
    batch.reset()
    template = TorchNetwork(DEFAULT_HIDDEN, sparse_input=True)
    pool = BatchedOpponentPool(Mixture.parse(["snapshot@1"]), batch, template, snapshots, seed, torch)
    for _ in range(snapshots):
        pool.snapshot(TorchNetwork(DEFAULT_HIDDEN, sparse_input=True))
    return pool


def step_times(pool: BatchedOpponentPool, steps: int, seed: int) -> dict[str, float]:
    """Microseconds a step of choosing the snapshots' moves, stacked and one forward per snapshot."""
    rng = np.random.default_rng(seed)
    games = pool.games
    every = np.arange(games.num_games)
    times: dict[str, list[float]] = {"stacked": [], "one per snapshot": []}

    def stacked(which: np.ndarray, actions: np.ndarray) -> None:
        pool.actions(every, SNAPSHOT_BASE + which, actions)

    def one_per_snapshot(which: np.ndarray, actions: np.ndarray) -> None:
        for index in np.unique(which).tolist():
            rows = every[which == index]
            actions[rows] = pool._forward(pool.snapshot_networks[index], rows, False)

    ways = {"stacked": stacked, "one per snapshot": one_per_snapshot}
    for step in range(steps):
        which = rng.integers(len(pool.snapshots), size=games.num_games)
        actions = np.zeros(games.num_games, np.int64)
        for name in sorted(ways, reverse=bool(step % 2)):  # each goes first every other step
            began = time.perf_counter()
            ways[name](which, actions)
            times[name].append(time.perf_counter() - began)
        games.step(actions)
    return {name: statistics.median(values) * 1e6 for name, values in times.items()}


def build_parser() -> argparse.ArgumentParser:
    parser = benchmark_parser(MODULE, __doc__)
    parser.add_argument("--snapshots", type=at_least(1), nargs="+", default=[1, 2, 5, 10], help="pool sizes")
    parser.add_argument(
        "--games", type=at_least(1), default=52, help="games whose opponent seat acts (about 20%% of 256)"
    )
    parser.add_argument("--steps", type=at_least(1), default=300, help="batched steps timed")
    parser.add_argument("--seed", type=int, default=1, help="seed of the games, the networks and the draws")
    parser.add_argument("--out", type=Path, default=Path("results/snapshots_benchmark.json"), help="where to save JSON")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    results = {}
    for snapshots in args.snapshots:
        figures = step_times(pool_with(snapshots, args.games, args.seed), args.steps, args.seed)
        ratio = figures["one per snapshot"] / figures["stacked"]
        results[str(snapshots)] = {
            **{name: round(value, 1) for name, value in figures.items()},
            "ratio": round(ratio, 2),
        }
        print(f"{snapshots:>3} snapshots: stacked {figures['stacked']:7.1f} µs a step, one forward per snapshot "
              f"{figures['one per snapshot']:7.1f} µs ({ratio:.2f}x)", flush=True)  # fmt: skip
    save_results(args.out, MODULE, argv, games=args.games, steps=args.steps, microseconds_per_step=results)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
