"""Several self-play runs' learning curves in one figure:
``python -m experiments.studies.learning_curves RUN_DIR ... --out curves.png``.

Each run folder's ``eval.csv`` (written by ``experiments.train_selfplay``) gives one curve: the
win rate of the run's network against its evaluation opponent over the network decisions
trained, with the 95% interval as a band. Runs evaluated on the same deals (the trainers'
evaluation seed) compare point by point; those deals choose nothing in the curves, but they are
not fresh deals either, so strength claims come from tournaments on other seeds.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

from experiments.common.cli import invocation_note, program_name
from experiments.training.evaluation import plot_learning_curve
from experiments.training.runs import read_rows


def curve_rows(runs: Sequence[Path]) -> list[dict[str, str]]:
    """Every evaluation row of ``runs``, each tagged with its run's folder name (``run``)."""
    rows = []
    for run in runs:
        evaluations = read_rows(run / "eval.csv")
        if not evaluations:
            raise ValueError(f"{run} has no evaluations (expected {run / 'eval.csv'} with at least one row)")
        rows += [{**row, "run": run.name} for row in evaluations]
    return rows


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog=program_name("experiments.studies.learning_curves"),
        description="Plot several self-play runs' evaluations (their eval.csv) as one curve per run.",
        epilog="Needs matplotlib (the experiments extra). " + invocation_note("experiments.studies.learning_curves"),
    )
    parser.add_argument(
        "runs", nargs="+", type=Path, metavar="RUN_DIR", help="run folders of experiments.train_selfplay"
    )
    parser.add_argument("--out", type=Path, required=True, metavar="PNG", help="the figure to write")
    parser.add_argument("--title", default="self-play runs", help="the figure's title")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        rows = curve_rows(args.runs)
    except ValueError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    args.out.parent.mkdir(parents=True, exist_ok=True)
    plot_learning_curve(rows, "decisions", args.out, args.title, "network decisions trained")
    print(f"wrote {args.out} ({len(rows)} evaluations of {len(args.runs)} runs)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
