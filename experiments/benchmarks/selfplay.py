"""Speed of the self-play trainer (``experiments.train_selfplay``), end to end, in network decisions per second.

Runs the trainer with its defaults (2 players unless ``--players``; no evaluation, no TensorBoard)
in a temporary folder for ``--updates`` updates, in each of the configurations asked for, the
configurations alternated over ``--repeats`` rounds in this one process so that a machine that
slows down slows them all. A rate is a run's decisions over its wall time after its first
``--warmup`` updates (start-up, first rollout). Also prints where the time of one update goes
(collecting the rollout, preparing it, the gradient steps), measured without the pipeline.
The ``thread-*`` configurations train in a thread of the trainer's process (``--learner
thread``), the others in a process of their own (the default).

``--mixtures`` times other opponent mixtures the same way: the best-response runs of
``experiments.exploit``, whose mixture is the target alone (``network``: one batched forward for
its seats; ``value``: the heuristic game by game), against the default self-play mixture.

``python -m experiments.benchmarks.selfplay`` (five configurations, three rounds each); the figures are in
docs/performance.md.
"""

from __future__ import annotations

import argparse
import csv
import dataclasses
import json
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

from experiments.benchmarks import benchmark_parser, save_results
from experiments.common.cli import at_least
from experiments.training import selfplay
from experiments.training.learners import PROCESS, THREAD
from experiments.training.selfplay import Args
from experiments.training.selfplay_state import start
from experiments.training.selfplay_watch import MODULE
from experiments.training.stopping import StopRequest

#: The configurations: (pipeline, torch threads per side, where the updates run). ``thread-*``:
#: the updates in a thread of the trainer's process, sharing its interpreter lock with the games.
CONFIGURATIONS = {
    "pipeline-1": (True, 1, PROCESS), "pipeline-2": (True, 2, PROCESS), "serial-1": (False, 1, PROCESS),
    "serial-2": (False, 2, PROCESS), "thread-pipeline-1": (True, 1, THREAD), "thread-serial-1": (False, 1, THREAD),
}  # fmt: skip
#: Timed unless ``--configurations`` says otherwise: every one but the serial run of a learner thread.
DEFAULT_CONFIGURATIONS = [name for name in CONFIGURATIONS if name != "thread-serial-1"]
#: The opponent mixtures (``--opponents``; ``None``: the trainer's default).
MIXTURES: dict[str, tuple[str, ...] | None] = {
    "default": None,
    "best-response-network": ("network@1",),
    "best-response-value": ("value@1",),
}


class Updates(StopRequest):
    """Stops the run after a number of updates."""

    def __init__(self, updates: int) -> None:
        super().__init__()
        self.updates = updates

    def after_update(self, run: selfplay.Run) -> None:
        if run.counters["updates"] >= self.updates:
            self.requested = True


def rate(name: str, mixture: str, args: argparse.Namespace) -> float:
    """Network decisions per second of one run of configuration ``name`` with the opponents ``mixture``."""
    pipeline, threads, learner = CONFIGURATIONS[name]
    opponents = MIXTURES[mixture]
    with tempfile.TemporaryDirectory() as folder:
        settings = Args(
            out=Path(folder) / "run", players=args.players, decisions=10**12, seed=args.seed, pipeline=pipeline,
            torch_threads=threads, learner=learner, eval_every=0, tensorboard=False, log_seconds=1e9,
        )  # fmt: skip
        if opponents is not None:
            settings = dataclasses.replace(settings, opponents=opponents)
        selfplay.train(settings, stop=Updates(args.updates))
        with (settings.out / "progress.csv").open(newline="") as handle:
            rows = list(csv.DictReader(handle))
    counted = rows[args.warmup :]
    decisions = int(counted[-1]["decisions"]) - int(rows[args.warmup - 1]["decisions"])
    seconds = float(counted[-1]["wall_seconds"]) - float(rows[args.warmup - 1]["wall_seconds"])
    return decisions / seconds


def breakdown(args: argparse.Namespace) -> dict[str, float]:
    """Microseconds per network decision of each part of an update, without the pipeline, the
    updates in the trainer's process (their own work, without sending the rollout elsewhere)."""
    with tempfile.TemporaryDirectory() as folder:
        settings = Args(out=Path(folder) / "run", players=args.players, seed=args.seed, eval_every=0,
                        tensorboard=False, learner=THREAD)  # fmt: skip
        run = start(settings, resume=False, command=MODULE)
        times = {"collect": 0.0, "prepare": 0.0, "update": 0.0}
        decisions = 0.0
        for index in range(args.updates):
            before = run.counters["decisions"]
            began = time.perf_counter()
            data = selfplay.collect(run, settings.rollout_steps)
            collected = time.perf_counter()
            prepared, _ = selfplay.prepare(run, data)
            ready = time.perf_counter()
            run.update(prepared)
            done = time.perf_counter()
            if index >= args.warmup:
                times["collect"] += collected - began
                times["prepare"] += ready - collected
                times["update"] += done - ready
                decisions += run.counters["decisions"] - before
    return {part: round(seconds / decisions * 1e6, 2) for part, seconds in times.items()}


def build_parser() -> argparse.ArgumentParser:
    parser = benchmark_parser("experiments.benchmarks.selfplay", __doc__)
    parser.add_argument(
        "--configurations", nargs="+", choices=list(CONFIGURATIONS), default=DEFAULT_CONFIGURATIONS, help="what to time"
    )
    parser.add_argument(
        "--mixtures", nargs="+", choices=list(MIXTURES), default=["default"], help="opponent mixtures to time"
    )
    parser.add_argument("--players", type=int, choices=(2, 3, 4), default=2, help="players per game")
    parser.add_argument("--updates", type=at_least(2), default=12, help="updates per run")
    parser.add_argument("--warmup", type=at_least(1), default=2, help="first updates not counted")
    parser.add_argument("--repeats", type=at_least(1), default=3, help="alternated rounds")
    parser.add_argument("--seed", type=int, default=1, help="the runs' seed")
    parser.add_argument("--out", type=Path, default=Path("results/selfplay_benchmark.json"), help="where to save JSON")
    return parser


def main(argv: list[str] | None = None) -> dict[str, Any]:
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.warmup >= args.updates:
        parser.error(f"--warmup ({args.warmup}) must be below --updates ({args.updates})")
    timed = [(name, mixture) for name in args.configurations for mixture in args.mixtures]
    runs: dict[str, list[float]] = {_label(name, mixture): [] for name, mixture in timed}
    for _ in range(args.repeats):
        for name, mixture in timed:
            label = _label(name, mixture)
            runs[label].append(rate(name, mixture, args))
            print(f"{label}: {runs[label][-1]:,.0f} decisions/s", flush=True)
    decisions_per_s = {name: {"best": round(max(v)), "median": round(statistics.median(v))} for name, v in runs.items()}
    result = save_results(
        args.out,
        "experiments.benchmarks.selfplay",
        argv,
        players=args.players,
        decisions_per_s=decisions_per_s,
        microseconds_per_decision=breakdown(args),
    )
    print(json.dumps({key: result[key] for key in ("decisions_per_s", "microseconds_per_decision")}, indent=2))
    return result


def _label(name: str, mixture: str) -> str:
    """A timed run's name: the configuration, and the mixture unless it is the default."""
    return name if mixture == "default" else f"{name} {mixture}"


if __name__ == "__main__":
    main()
