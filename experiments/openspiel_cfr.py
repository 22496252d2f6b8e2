"""Exact game theory on the small presets: ``python -m experiments.openspiel_cfr --preset small``.

The ``mini`` and ``small`` presets (:data:`biblios_env.engine.setup.MINI_CARDS`,
:data:`~biblios_env.engine.setup.SMALL_CARDS`) are two-player games whose whole tree can be
written down. This command exports the tree once to Gambit's ``.efg`` format
(:func:`biblios_env.openspiel.efg_text`), loads it as OpenSpiel's C++ ``efg_game`` and runs the
solvers on it: CFR, CFR+ and outcome-sampling MCCFR in C++, and DCFR (OpenSpiel's Python solver
driving the C++ tree; on ``mini`` only, as on ``small`` it needs more than 24 GB). The same CFR,
CFR+ and DCFR updates also run on the tree read into numpy arrays (``numpy-cfr``,
``numpy-cfr+``, ``numpy-dcfr``: :mod:`experiments.exact.numpy_cfr`, about eleven times as fast as C++
on ``small``). After 1, 2, 4, ... iterations it measures the exploitability of each solver's
average policy (``pyspiel.exploitability``, or the numpy best response for the numpy solvers:
the mean over the seats of what a best response gains against it; 0 at a Nash equilibrium) and
prints the game value for the first player under the least exploitable average policy found.
With ``--out DIR`` it writes ``cfr.csv`` and the log-log plot ``cfr.png`` (exploitability
against iterations and against seconds); ``--efg FILE`` keeps the exported tree (Gambit and
``pyspiel.load_efg_game`` read it). Where the tree is small enough
(:data:`experiments.exact.gambit_lp.LP_MAX_HISTORIES`: ``mini``) and the ``gambit`` extra is
installed, Gambit's sequence-form LP solves it outright and its equilibrium's value and
exploitability cross-check the solvers' (:mod:`experiments.exact.gambit_lp`).

    python -m experiments.openspiel_cfr --preset small --iterations 256 --out runs/cfr-small

``mini`` is played with strict bids (its tree has 1,673 histories); ``small`` without them, its
bids capped at the box's 4 coins (about 880,000 histories; docs/openspiel.md).
"""

from __future__ import annotations

import argparse
import csv
import math
import sys
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from experiments.common.cli import at_least, invocation_note, positive, program_name
from experiments.exact.numpy_cfr import EfgTree, TreeCFR

if TYPE_CHECKING:
    from experiments.exact.gambit_lp import LpSolution

#: The game each preset is solved as: two players, zero-sum ``win`` reward.
PRESET_PARAMETERS: dict[str, dict[str, Any]] = {
    "mini": {"players": 2, "preset": "mini", "strict_bids": True, "reward": "win"},
    "small": {"players": 2, "preset": "small", "strict_bids": False, "reward": "win"},
}
#: The solvers, in the order they run and are plotted: OpenSpiel's, then the same updates on the
#: tree as numpy arrays (:mod:`experiments.exact.numpy_cfr`).
SOLVER_NAMES = ("cfr", "cfr+", "dcfr", "mccfr", "numpy-cfr", "numpy-cfr+", "numpy-dcfr")
#: The numpy solvers' prefix: ``numpy-cfr+`` runs :class:`experiments.exact.numpy_cfr.TreeCFR` ``"cfr+"``.
NUMPY_PREFIX = "numpy-"
#: Outcome-sampling MCCFR samples one history per iteration where the others walk the whole tree:
#: it runs this many times as many iterations (so its checkpoints are still 1, 2, 4, ... "sweeps").
MCCFR_SAMPLES_PER_ITERATION = 1_000
#: The seed of the sampling solver.
MCCFR_SEED = 20_241_204
#: DCFR is OpenSpiel's Python solver: it keeps a Python object per history, and on the small tree
#: (about 880,000 histories) it ran out of 24 GB of memory. It runs on trees up to this size.
DCFR_MAX_HISTORIES = 100_000


@dataclass(frozen=True, slots=True)
class Checkpoint:
    """A solver's average policy's exploitability after ``iterations``, and the seconds spent
    solving so far (the exploitability evaluations between checkpoints are not counted)."""

    solver: str
    iterations: int
    exploitability: float
    seconds: float
    #: The first player's expected return under the average policy, at a solver's last checkpoint
    #: (measured while the solver lives: its C++ average policy reads the solver's own tables).
    value: float | None = field(default=None, compare=False)


@dataclass(frozen=True, slots=True)
class TreeSize:
    """The size of a game tree: every history (chance nodes included), the terminal ones, and the
    information states of each player (what a tabular solver stores)."""

    histories: int
    terminal: int
    information_states: tuple[int, ...]


def checkpoints(iterations: int) -> list[int]:
    """1, 2, 4, ... up to ``iterations``, and ``iterations`` itself."""
    points = []
    point = 1
    while point < iterations:
        points.append(point)
        point *= 2
    return [*points, iterations]


def efg_tree_size(text: str) -> TreeSize:
    """Count the tree of an exported ``.efg`` text: one line per history, and each player's
    information set numbers."""
    histories = terminal = 0
    infosets: dict[str, set[str]] = {}
    for line in text.splitlines():
        kind = line[:2]
        if kind in ("t ", "c ", "p "):
            histories += 1
        if kind == "t ":
            terminal += 1
        elif kind == "p ":
            _, _, player, infoset, *_ = line.split(" ", 4)
            infosets.setdefault(player, set()).add(infoset)
    counts = tuple(len(infosets[player]) for player in sorted(infosets))
    return TreeSize(histories, terminal, counts)


def load_tree(preset: str) -> tuple[str, Any]:
    """The exported tree of ``preset`` (:data:`PRESET_PARAMETERS`) and the C++ game made from it."""
    import pyspiel

    from biblios_env.openspiel import efg_text

    text = efg_text(PRESET_PARAMETERS[preset])
    return text, pyspiel.load_efg_game(text)


@dataclass(frozen=True, slots=True)
class _Solver:
    """A running solver: one iteration, and its average policy's exploitability and game value."""

    step: Callable[[], None]
    exploitability: Callable[[], float]
    value: Callable[[], float]


def _solver(name: str, game: Any, tree: EfgTree | None) -> _Solver:
    """Solver ``name`` on ``game`` (the numpy solvers on ``tree``, the same game as arrays)."""
    import pyspiel

    if name.startswith(NUMPY_PREFIX):
        if tree is None:
            raise ValueError(f"solver {name!r} runs on the tree's arrays: pass tree=EfgTree(text)")
        solver = TreeCFR(tree, name.removeprefix(NUMPY_PREFIX))
        return _Solver(
            solver.iterate,
            lambda: tree.exploitability(solver.average_policy()),
            lambda: float(tree.expected_payoffs(solver.average_policy())[0]),
        )
    if name in ("cfr", "cfr+"):
        cfr = pyspiel.CFRSolver(game) if name == "cfr" else pyspiel.CFRPlusSolver(game)
        step, average_policy = cfr.evaluate_and_update_policy, cfr.average_policy
    elif name == "mccfr":
        sampler = pyspiel.OutcomeSamplingMCCFRSolver(game, seed=MCCFR_SEED)

        def step() -> None:
            for _ in range(MCCFR_SAMPLES_PER_ITERATION):
                sampler.run_iteration()

        average_policy = sampler.average_policy
    else:
        from open_spiel.python.algorithms.discounted_cfr import DCFRSolver
        from open_spiel.python.policy import python_policy_to_pyspiel_policy

        discounted = DCFRSolver(game)
        step = discounted.evaluate_and_update_policy

        def average_policy() -> Any:
            return python_policy_to_pyspiel_policy(discounted.average_policy())

    return _Solver(
        step,
        lambda: pyspiel.exploitability(game, average_policy()),
        lambda: game_value(game, average_policy(), name),
    )


def solve(
    solver_name: str, game: Any, iterations: int, max_seconds: float = math.inf, tree: EfgTree | None = None
) -> Iterator[Checkpoint]:
    """Run ``solver_name`` on ``game`` (a loaded C++ game; the numpy solvers on ``tree``, the
    same tree as arrays) for ``iterations``, yielding a checkpoint at each of
    :func:`checkpoints`; stop early at the first checkpoint past ``max_seconds`` of solving (a
    budget that lets a slow solver take part in a comparison)."""
    solver = _solver(solver_name, game, tree)
    done, seconds = 0, 0.0
    for point in checkpoints(iterations):
        start = time.perf_counter()
        for _ in range(point - done):
            solver.step()
        seconds += time.perf_counter() - start
        done = point
        last = point == iterations or seconds >= max_seconds
        value = solver.value() if last else None
        yield Checkpoint(solver_name, point, solver.exploitability(), seconds, value)
        if last:
            return


def game_value(game: Any, policy: Any, solver_name: str) -> float:
    """The first player's expected return when both seats play ``policy`` (MCCFR's policy answers
    by state, the tabular ones by information state string)."""
    import pyspiel

    by_information_state = solver_name != "mccfr"
    return float(pyspiel.expected_returns(game.new_initial_state(), policy, -1, by_information_state)[0])


def write_outputs(out: Path, preset: str, rows: list[Checkpoint]) -> None:
    """``cfr.csv`` (one row per solver and checkpoint) and ``cfr.png`` (exploitability against
    iterations and against seconds, log-log, one line per solver)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    out.mkdir(parents=True, exist_ok=True)
    with (out / "cfr.csv").open("w", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(["solver", "iterations", "exploitability", "seconds"])
        writer.writerows(
            (row.solver, row.iterations, f"{row.exploitability:.6g}", f"{row.seconds:.3f}") for row in rows
        )
    figure, (by_iterations, by_seconds) = plt.subplots(1, 2, figsize=(10, 4), dpi=120, sharey=True)
    for name in dict.fromkeys(row.solver for row in rows):
        mine = [row for row in rows if row.solver == name and row.exploitability > 0]
        label = f"{name} (x{MCCFR_SAMPLES_PER_ITERATION:,} samples)" if name == "mccfr" else name
        by_iterations.loglog(
            [row.iterations for row in mine], [row.exploitability for row in mine], marker="o", label=label
        )
        by_seconds.loglog(
            [max(row.seconds, 1e-3) for row in mine], [row.exploitability for row in mine], marker="o", label=name
        )
    by_iterations.set_xlabel("iterations")
    by_iterations.set_ylabel("exploitability of the average policy")
    by_seconds.set_xlabel("seconds solving")
    for axes in (by_iterations, by_seconds):
        axes.grid(True, which="both", alpha=0.3)
    by_iterations.legend()
    figure.suptitle(f"Biblios {preset} preset (2 players): OpenSpiel's C++ tree and the numpy arrays")
    figure.tight_layout()
    figure.savefig(out / "cfr.png")
    plt.close(figure)


def report_lp(text: str, game: Any, size: TreeSize, best: Checkpoint) -> LpSolution | None:
    """Solve the tree by Gambit's sequence-form LP where it fits, say whether its value agrees
    with ``best``'s (within twice its exploitability, as that bound allows), and return it."""
    from experiments.exact.gambit_lp import LP_MAX_HISTORIES, gambit_available, lp_equilibrium

    if size.histories > LP_MAX_HISTORIES:
        print(f"no sequence-form LP: {size.histories:,} histories (Gambit's dense LP runs up to {LP_MAX_HISTORIES:,})")
        return None
    if not gambit_available():
        print("no sequence-form LP: install the gambit extra (pip install -e '.[gambit]')")
        return None
    _, lp = lp_equilibrium(text, game)
    agrees = best.value is not None and abs(lp.value - best.value) <= 2 * best.exploitability + 1e-9
    print(
        f"sequence-form LP (Gambit, {lp.seconds:.1f} s): game value for player 1 {lp.value:+.5f}, its "
        f"exploitability {lp.exploitability:.2g} ({lp.empty_information_sets} of {lp.information_sets} "
        f"information sets filled uniformly); {'agrees' if agrees else 'DISAGREES'} with {best.solver}'s value"
    )
    return lp


def openspiel_available() -> bool:
    """Whether OpenSpiel imports; if not, say which extra installs it (the commands exit with 2)."""
    try:
        import pyspiel  # noqa: F401
    except ImportError as error:
        print(f"error: {error}; install the openspiel extra: pip install -e '.[openspiel]'", file=sys.stderr)
        return False
    return True


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog=program_name("experiments.openspiel_cfr"),
        description="Solve Biblios' mini or small preset exactly: the tree exported once to an .efg file, "
        "OpenSpiel's CFR, CFR+, DCFR and outcome-sampling MCCFR on it, the same CFR, CFR+ and DCFR on the tree as "
        "numpy arrays, the exploitability of each average policy.",
        epilog="Needs the openspiel extra (and matplotlib, in the experiments extra, for --out). "
        + invocation_note("experiments.openspiel_cfr"),
    )
    parser.add_argument("--preset", choices=sorted(PRESET_PARAMETERS), default="mini", help="the game (default mini)")
    parser.add_argument("--iterations", type=at_least(1), default=64, help="solver iterations (default 64)")
    parser.add_argument(
        "--solver",
        action="append",
        choices=SOLVER_NAMES,
        help="a solver to run (repeat for several; default: every one, in the order "
        f"{', '.join(SOLVER_NAMES)}); mccfr counts {MCCFR_SAMPLES_PER_ITERATION:,} sampled histories as one iteration",
    )
    parser.add_argument(
        "--max-seconds",
        type=positive,
        default=math.inf,
        metavar="S",
        help="stop a solver at its first checkpoint past S seconds of solving (default: no limit)",
    )
    parser.add_argument("--out", type=Path, metavar="DIR", help="also write DIR/cfr.csv and the plot DIR/cfr.png")
    parser.add_argument("--efg", type=Path, metavar="FILE", help="also write the exported tree to FILE (.efg)")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    if not openspiel_available():
        return 2
    solvers = list(dict.fromkeys(args.solver or SOLVER_NAMES))
    start = time.perf_counter()
    text, game = load_tree(args.preset)
    size = efg_tree_size(text)
    print(
        f"python_biblios {PRESET_PARAMETERS[args.preset]} exported in {time.perf_counter() - start:.1f} s: "
        f"{size.histories:,} histories ({size.terminal:,} terminal), information states "
        f"{' / '.join(f'{count:,}' for count in size.information_states)} (player 1 / player 2)"
    )
    if "dcfr" in solvers and size.histories > DCFR_MAX_HISTORIES:
        message = (
            f"dcfr (OpenSpiel's Python solver) needs more memory than this machine has on a tree of "
            f"{size.histories:,} histories (it runs up to {DCFR_MAX_HISTORIES:,}: the mini preset; "
            "numpy-dcfr runs the same updates on any exported tree)"
        )
        if args.solver:
            print(
                f"error: {message}; choose among {', '.join(n for n in SOLVER_NAMES if n != 'dcfr')}", file=sys.stderr
            )
            return 2
        print(f"skipping {message}")
        solvers.remove("dcfr")
    tree = None
    if any(name.startswith(NUMPY_PREFIX) for name in solvers):
        start = time.perf_counter()
        tree = EfgTree(text)
        print(f"read into numpy arrays in {time.perf_counter() - start:.1f} s ({tree.num_sequences:,} sequences)")
    if args.efg is not None:
        args.efg.parent.mkdir(parents=True, exist_ok=True)
        args.efg.write_text(text)
        print(f"wrote {args.efg}")
    width = max(map(len, solvers))
    print(f"{'solver':>{width}}  {'iterations':>10}  {'exploitability':>14}  {'seconds':>8}")
    rows: list[Checkpoint] = []
    for name in solvers:
        for row in solve(name, game, args.iterations, args.max_seconds, tree):
            rows.append(row)
            measured = f"{row.iterations:>10}  {row.exploitability:>14.6g}  {row.seconds:>8.1f}"
            print(f"{name:>{width}}  {measured}", flush=True)
    best = min((row for row in rows if row.value is not None), key=lambda row: row.exploitability)
    print(
        f"game value for player 1 under {best.solver}'s average policy after {best.iterations} iterations: "
        f"{best.value:+.5f} (within {2 * best.exploitability:.5f} of the exact value)"
    )
    report_lp(text, game, size, best)
    if args.out is not None:
        write_outputs(args.out, args.preset, rows)
        print(f"wrote {args.out / 'cfr.csv'} and {args.out / 'cfr.png'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
