"""Where the self-play trainer's collection of a rollout spends its time, part by part.

The collection (the batched games played for a rollout: the network's moves, the opponents'
moves, the games' steps) is the part of a step that sets a trainer's rate: the pipeline trains
on the last rollout beside it. This resumes a copy of RUN_DIR (its network, its pool of
snapshots, its games), collects ``--rollouts`` rollouts with no update between them, and times
each part of every step by a clock around the call that does it:

- the batched games' step, and within it the dealing of new games;
- the opponents' moves, and within them the snapshots' stacked forward and draw (the rest of
  the opponents' time is the per-game agents, `value` in the default mixture, and random play);
- the network's forward and its draw;
- the sparse rows (the network's and, within the opponents' moves, the snapshots');
- seating the players of the games dealt, and recording the games that ended;
- the rest: the collection's own bookkeeping.

The first ``--warmup`` rollouts are not counted. RUN_DIR is read, never written. ``python -m
experiments.benchmarks.collection --run RUN_DIR`` (under a minute); docs/performance.md holds
the figures.
"""

from __future__ import annotations

import argparse
import shutil
import tempfile
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from experiments.benchmarks import benchmark_parser, save_results
from experiments.benchmarks.pool_cost import add_run_argument, check_run, recorded_settings, timed
from experiments.common.cli import at_least
from experiments.training import selfplay, tensors
from experiments.training.learners import THREAD
from experiments.training.selfplay_state import Run, start

MODULE = "experiments.benchmarks.collection"
#: The parts timed, as printed; an indented part runs within the one above it, and the sparse
#: rows are found both for the network and, within the opponents' moves, for the snapshots.
PARTS: tuple[str, ...] = (
    "the batched games' step",
    "  dealing new games",
    "the opponents' moves",
    "  the snapshots' forward and draw",
    "the network's forward",
    "the network's draw",
    "the sparse rows",
    "seating the games dealt",
    "recording the games that ended",
)
REST = "the rest (the collection's bookkeeping)"


class PartClocks:
    """Seconds spent in each part, by a clock wrapped around the calls that do it. A call made
    inside another timed call counts for its own part only (``outer``), so the parts that are
    not nested add up to the time they cover and the rest is what no clock saw."""

    def __init__(self) -> None:
        self.seconds = dict.fromkeys(PARTS, 0.0)
        self.outer = 0.0  # time inside an outermost timed call
        self.depth = 0

    def wrapped(self, label: str, call: Callable[..., Any]) -> Callable[..., Any]:
        def timed_call(*args: Any, **kwargs: Any) -> Any:
            self.depth += 1
            began = time.perf_counter()
            try:
                return call(*args, **kwargs)
            finally:
                elapsed = time.perf_counter() - began
                self.depth -= 1
                self.seconds[label] += elapsed
                if self.depth == 0:
                    self.outer += elapsed

        return timed_call

    def clear(self) -> None:
        self.seconds = dict.fromkeys(self.seconds, 0.0)
        self.outer = 0.0


class _TimedRule:
    """The run's learning rule with a clock around its draw (the rule itself is frozen)."""

    def __init__(self, rule: Any, clocks: PartClocks) -> None:
        self.rule = rule
        self.act = clocks.wrapped("the network's draw", rule.act)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.rule, name)


@contextmanager
def clocked(run: Run, clocks: PartClocks) -> Iterator[None]:
    """``run``'s parts with their clocks, and the sparse rows' (a class-level function) put back
    as they were afterwards, whatever happened."""
    games, pool = run.games, run.pool
    games.step = clocks.wrapped("the batched games' step", games.step)  # type: ignore[method-assign]
    games._deal = clocks.wrapped("  dealing new games", games._deal)  # type: ignore[method-assign]
    pool.actions = clocks.wrapped("the opponents' moves", pool.actions)  # type: ignore[method-assign]
    pool._snapshot_actions = clocks.wrapped(  # type: ignore[method-assign]
        "  the snapshots' forward and draw", pool._snapshot_actions
    )
    pool.seat_players = clocks.wrapped("seating the games dealt", pool.seat_players)  # type: ignore[method-assign]
    run.record_game = clocks.wrapped("recording the games that ended", run.record_game)  # type: ignore[method-assign]
    run.actor.forward = clocks.wrapped("the network's forward", run.actor.forward)
    run.rule = _TimedRule(run.rule, clocks)
    sparse_rows = tensors.SparseRows.of
    tensors.SparseRows.of = staticmethod(clocks.wrapped("the sparse rows", sparse_rows))  # type: ignore[method-assign]
    try:
        yield
    finally:
        tensors.SparseRows.of = staticmethod(sparse_rows)  # type: ignore[method-assign]


def measure(run_dir: Path, rollouts: int, warmup: int) -> dict[str, Any]:
    """Milliseconds a step of each part over ``rollouts`` rollouts of a copy of ``run_dir``
    resumed, after ``warmup`` rollouts; with the step's total and the snapshots in the pool."""
    with tempfile.TemporaryDirectory() as folder:
        copy = Path(folder) / "run"
        shutil.copytree(run_dir, copy)
        settings = timed(recorded_settings(copy), copy, learner=THREAD)  # collections only: no update
        run = start(settings, resume=True, command=MODULE)
        clocks = PartClocks()
        try:
            with clocked(run, clocks):
                for _ in range(warmup):
                    selfplay.collect(run, settings.rollout_steps)
                clocks.clear()
                began = time.perf_counter()
                for _ in range(rollouts):
                    selfplay.collect(run, settings.rollout_steps)
                total = time.perf_counter() - began
        finally:
            run.close()
    steps = rollouts * settings.rollout_steps
    parts = {label: 1000 * seconds / steps for label, seconds in clocks.seconds.items()}
    parts[REST] = 1000 * (total - clocks.outer) / steps
    return {
        "games": settings.num_games,
        "players": settings.players,
        "snapshots": len(run.pool.snapshots),
        "steps": steps,
        "ms_per_step": 1000 * total / steps,
        "parts_ms_per_step": parts,
    }


def build_parser() -> argparse.ArgumentParser:
    parser = benchmark_parser(MODULE, __doc__)
    add_run_argument(parser)
    parser.add_argument("--rollouts", type=at_least(1), default=10, help="rollouts timed")
    parser.add_argument("--warmup", type=at_least(0), default=2, help="rollouts first, not counted")
    parser.add_argument(
        "--out", type=Path, default=Path("results/collection_benchmark.json"), help="where to save JSON"
    )
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    check_run(parser, args.run, ("checkpoint.pt",))
    result = measure(args.run, args.rollouts, args.warmup)
    total = result["ms_per_step"]
    print(f"{result['games']} games of {result['players']} players, {result['snapshots']} snapshots in the pool, "
          f"{result['steps']} steps: {total:.2f} ms a step")  # fmt: skip
    for label, milliseconds in result["parts_ms_per_step"].items():
        print(f"  {label:42} {milliseconds:6.3f} ms  {milliseconds / total:6.1%}")
    save_results(args.out, MODULE, argv, rollouts=args.rollouts, warmup=args.warmup, **result)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
