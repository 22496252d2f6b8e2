"""Counterfactual regret minimization on the mini preset: ``python -m experiments.openspiel_cfr``.

The "mini" preset (:data:`biblios_env.engine.setup.MINI_CARDS`: four cards, one removed unseen,
one gift turn, one auction, two players) with strict bids is small enough for OpenSpiel's exact
methods: its whole game tree has about 1,700 nodes. This command runs OpenSpiel's CFR (or CFR+)
on ``python_biblios`` with ``preset=mini`` and measures the exploitability of the average policy
(``pyspiel.exploitability``: the mean over seats of what a best response gains against it; 0 at a
Nash equilibrium) after 1, 2, 4, ... iterations, as the curve that shows the solver converging.
It prints the table, and with ``--out DIR`` writes ``cfr.csv`` and the plot ``cfr.png``.

    python -m experiments.openspiel_cfr --iterations 256 --out runs/cfr

The solvers are OpenSpiel's C++ ones driving the Python game (each node visit calls into the
engine), which is why the game must be this small.
"""

from __future__ import annotations

import argparse
import csv
import sys
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from experiments.common.cli import at_least, invocation_note, program_name

#: The solvers offered, by the names OpenSpiel's C++ classes have in ``pyspiel``.
SOLVERS = {"cfr": "CFRSolver", "cfr+": "CFRPlusSolver"}
#: The game the command solves: the mini preset, two players, strict bids, zero-sum win reward.
GAME_PARAMETERS = {"players": 2, "preset": "mini", "strict_bids": True, "reward": "win"}


@dataclass(frozen=True, slots=True)
class Checkpoint:
    """The average policy's exploitability after ``iterations``, and the seconds spent so far."""

    iterations: int
    exploitability: float
    seconds: float


def checkpoints(iterations: int) -> list[int]:
    """1, 2, 4, ... up to ``iterations``, and ``iterations`` itself."""
    points = []
    point = 1
    while point < iterations:
        points.append(point)
        point *= 2
    return [*points, iterations]


@dataclass(frozen=True, slots=True)
class TreeSize:
    """The size of a game tree: every history (chance nodes included), the terminal ones, and the
    distinct information states of the players (what a tabular solver stores)."""

    histories: int
    terminal: int
    information_states: int


def tree_size(game: Any) -> TreeSize:
    """Walk the whole tree of ``game`` (a loaded OpenSpiel game) and count it."""
    histories = terminal = 0
    information_states: set[str] = set()
    pending = [game.new_initial_state()]
    while pending:
        state = pending.pop()
        histories += 1
        if state.is_terminal():
            terminal += 1
            continue
        if state.is_chance_node():
            actions = [action for action, _ in state.chance_outcomes()]
        else:
            information_states.add(state.information_state_string())
            actions = state.legal_actions()
        pending.extend(state.child(action) for action in actions)
    return TreeSize(histories, terminal, len(information_states))


def load_mini() -> Any:
    """``python_biblios`` with :data:`GAME_PARAMETERS` (registering the game first)."""
    import pyspiel

    import biblios_env.openspiel  # noqa: F401  (registers python_biblios)

    return pyspiel.load_game("python_biblios", GAME_PARAMETERS)


def solve(solver_name: str, iterations: int) -> Iterator[Checkpoint]:
    """Run ``solver_name`` on the mini preset for ``iterations``, yielding a checkpoint at each of
    :func:`checkpoints` (exploitability measured then; its time is not counted as solving)."""
    import pyspiel

    game = load_mini()
    solver = getattr(pyspiel, SOLVERS[solver_name])(game)
    done, seconds = 0, 0.0
    for point in checkpoints(iterations):
        start = time.perf_counter()
        for _ in range(point - done):
            solver.evaluate_and_update_policy()
        seconds += time.perf_counter() - start
        done = point
        yield Checkpoint(point, pyspiel.exploitability(game, solver.average_policy()), seconds)


def write_outputs(out: Path, solver_name: str, rows: list[Checkpoint]) -> None:
    """``cfr.csv`` (one row per checkpoint) and ``cfr.png`` (exploitability against iterations, log-log)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    out.mkdir(parents=True, exist_ok=True)
    with (out / "cfr.csv").open("w", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(["iterations", "exploitability", "seconds"])
        writer.writerows((row.iterations, f"{row.exploitability:.6g}", f"{row.seconds:.3f}") for row in rows)
    figure, axes = plt.subplots(figsize=(6, 4), dpi=120)
    axes.loglog([row.iterations for row in rows], [row.exploitability for row in rows], marker="o")
    axes.set_xlabel(f"{solver_name.upper()} iterations")
    axes.set_ylabel("exploitability of the average policy")
    axes.set_title("Biblios mini preset (2 players, strict bids) in OpenSpiel")
    axes.grid(True, which="both", alpha=0.3)
    figure.tight_layout()
    figure.savefig(out / "cfr.png")
    plt.close(figure)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog=program_name("experiments.openspiel_cfr"),
        description="OpenSpiel's CFR on Biblios' mini preset: exploitability of the average policy as it learns.",
        epilog="Needs the openspiel extra (and matplotlib, in the experiments extra, for --out). "
        + invocation_note("experiments.openspiel_cfr"),
    )
    parser.add_argument("--iterations", type=at_least(1), default=64, help="solver iterations (default 64)")
    parser.add_argument("--solver", choices=sorted(SOLVERS), default="cfr", help="the solver (default cfr)")
    parser.add_argument("--out", type=Path, metavar="DIR", help="also write DIR/cfr.csv and the plot DIR/cfr.png")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        import pyspiel  # noqa: F401
    except ImportError as error:
        print(f"error: {error}; install the openspiel extra: pip install -e '.[openspiel]'", file=sys.stderr)
        return 2
    size = tree_size(load_mini())
    print(
        f"{args.solver} on python_biblios {GAME_PARAMETERS}: {size.histories:,} histories "
        f"({size.terminal:,} terminal), {size.information_states:,} information states"
    )
    print(f"{'iterations':>10}  {'exploitability':>14}  {'seconds':>8}")
    rows = []
    for row in solve(args.solver, args.iterations):
        rows.append(row)
        print(f"{row.iterations:>10}  {row.exploitability:>14.6f}  {row.seconds:>8.1f}", flush=True)
    if args.out is not None:
        write_outputs(args.out, args.solver, rows)
        print(f"wrote {args.out / 'cfr.csv'} and {args.out / 'cfr.png'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
