"""What the opponent pool costs the self-play trainer, end to end, in network decisions per second.

A default self-play run slows down as its pool of snapshots fills. Much else changes over the
same run (the policy, the positions it reaches, the process's memory), so this separates the
pool from the rest: it times two runs that train the same network, alternated over
``--repeats`` rounds in this one process, each for ``--updates`` updates in a temporary folder:

- ``with its pool``: a copy of RUN_DIR resumed from its checkpoint, its snapshots playing their
  share of the seats;
- ``empty pool``: a new run with RUN_DIR's settings started from its ``policy.npz`` (``--init``),
  so that the network plays the snapshots' share itself until the run's first snapshot.

A rate is network decisions (and games finished) per second after the first ``--warmup``
updates, from each run's own ``progress.csv``; evaluations are off, and neither run takes a new
snapshot. RUN_DIR is read, never
written. ``python -m experiments.benchmarks.pool_cost --run RUN_DIR`` (a few minutes); the figures
are in docs/performance.md.
"""

from __future__ import annotations

import argparse
import csv
import dataclasses
import shutil
import statistics
import tempfile
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from experiments.benchmarks import benchmark_parser, save_results
from experiments.benchmarks.selfplay import Updates
from experiments.common.cli import at_least
from experiments.training import selfplay
from experiments.training.runs import RunFolderError

MODULE = "experiments.benchmarks.pool_cost"


def recorded_settings(run: Path) -> selfplay.Args:
    """RUN_DIR's settings as ``--resume`` reads them (RunFolderError or exit 2 when it has no run)."""
    parser = selfplay.build_parser()
    settings, _ = selfplay.args_from(parser.parse_args(["--resume", str(run)]), parser)
    return settings


#: What a timed run measured: network decisions and games finished per second, and the most
#: snapshots its pool held over the counted updates.
Rates = tuple[float, float, int]


def timed(settings: selfplay.Args, out: Path, **changes: Any) -> selfplay.Args:
    """``settings`` as a timed run in ``out`` has them: no end, no evaluation, no output, and no
    new snapshot (the pool timed is the run's own, or none)."""
    return dataclasses.replace(
        settings, out=out, decisions=10**15, eval_every=0, tensorboard=False, log_seconds=1e9, snapshot_every=10**15,
        **changes,
    )  # fmt: skip


def progress_rates(progress: Path, first: int) -> Rates:
    """The :data:`Rates` of ``progress`` from row ``first`` (0: its first update) to its end,
    the time before row ``first`` not counted."""
    rows = list(csv.DictReader(progress.open(newline="")))
    start, end = rows[first - 1], rows[-1]
    seconds = float(end["wall_seconds"]) - float(start["wall_seconds"])
    return (
        (int(end["decisions"]) - int(start["decisions"])) / seconds,
        (int(end["games"]) - int(start["games"])) / seconds,
        max(int(row["snapshots"]) for row in rows[first:]),
    )


def with_pool(run: Path, args: argparse.Namespace) -> Rates:
    """RUN_DIR resumed, in a copy, for ``args.updates`` more updates."""
    with tempfile.TemporaryDirectory() as folder:
        copy = Path(folder) / "run"
        shutil.copytree(run, copy)
        done = sum(1 for _ in (copy / "progress.csv").open()) - 1  # its updates so far (one row each)
        settings = timed(recorded_settings(copy), copy)
        selfplay.train(settings, resume=True, stop=Updates(done + args.updates))
        return progress_rates(copy / "progress.csv", done + args.warmup)


def empty_pool(run: Path, args: argparse.Namespace) -> Rates:
    """A new run with RUN_DIR's settings from its exported network, for ``args.updates`` updates."""
    with tempfile.TemporaryDirectory() as folder:
        settings = timed(recorded_settings(run), Path(folder) / "run", init=run / "policy.npz", value_warmup=0)
        selfplay.train(settings, stop=Updates(args.updates))
        return progress_rates(settings.out / "progress.csv", args.warmup)


#: The two runs timed, by the name printed.
WAYS: dict[str, Callable[[Path, argparse.Namespace], Rates]] = {
    "with its pool": with_pool,
    "empty pool": empty_pool,
}


def add_run_argument(parser: argparse.ArgumentParser) -> None:
    """``--run RUN_DIR``: the self-play run a benchmark times (a copy of it; it is never written)."""
    parser.add_argument("--run", type=Path, required=True, metavar="RUN_DIR", help="a self-play run with a checkpoint")


def check_run(parser: argparse.ArgumentParser, run: Path, needed: Sequence[str]) -> None:
    """Exit with status 2 naming what is missing unless ``run`` is a self-play run with the files
    ``needed`` and settings ``--resume`` reads."""
    for name in needed:
        if not (run / name).exists():
            parser.error(f"--run {run}: not a self-play run to time ({run / name} is missing)")
    try:
        recorded_settings(run)
    except RunFolderError as error:
        parser.error(str(error))


def build_parser() -> argparse.ArgumentParser:
    parser = benchmark_parser(MODULE, __doc__)
    add_run_argument(parser)
    parser.add_argument("--updates", type=at_least(2), default=16, help="updates per timed run")
    parser.add_argument("--warmup", type=at_least(1), default=4, help="first updates not counted")
    parser.add_argument("--repeats", type=at_least(1), default=3, help="alternated rounds")
    parser.add_argument("--out", type=Path, default=Path("results/pool_cost_benchmark.json"), help="where to save JSON")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.warmup >= args.updates:
        parser.error(f"--warmup ({args.warmup}) must be below --updates ({args.updates})")
    check_run(parser, args.run, ("checkpoint.pt", "policy.npz", "progress.csv"))
    rates: dict[str, list[Rates]] = {name: [] for name in WAYS}
    for _ in range(args.repeats):
        for name, way in WAYS.items():
            rates[name].append(way(args.run, args))
            decisions, games, snapshots = rates[name][-1]
            print(f"{name} ({snapshots} snapshots): {decisions:,.0f} network decisions/s, {games:,.1f} games/s")
    medians = {
        name: {
            "decisions_per_s": round(statistics.median(rate[0] for rate in values)),
            "games_per_s": round(statistics.median(rate[1] for rate in values), 1),
            "snapshots": max(rate[2] for rate in values),
        }
        for name, values in rates.items()
    }
    ratio = medians["empty pool"]["decisions_per_s"] / medians["with its pool"]["decisions_per_s"]
    print(f"empty pool / with its pool: {ratio:.2f}x network decisions a second")
    save_results(
        args.out, MODULE, argv, updates=args.updates, warmup=args.warmup, medians=medians, ratio=round(ratio, 3)
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
