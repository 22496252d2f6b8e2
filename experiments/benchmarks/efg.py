"""Exact game theory at C++ speed, ``python -m experiments.benchmarks.efg``: what exporting a small
preset's tree costs, and what it buys.

For each preset (``mini``, ``small``; :data:`experiments.openspiel_cfr.PRESET_PARAMETERS`) it times
the export to ``.efg`` text (:func:`biblios_env.openspiel.efg_text`), OpenSpiel's C++ CFR and CFR+
per iteration on the tree loaded from it (``pyspiel.load_efg_game``), and C++ CFR per iteration on
``python_biblios`` itself (the same solver calling the Python game at every node), and prints the
ratio of the two CFR figures; then the same tree read into numpy arrays
(:class:`experiments.exact.numpy_cfr.EfgTree`: the seconds to read it) and the numpy CFR+ and DCFR
per iteration, with the ratio of C++ CFR+ to numpy CFR+. The Python game's CFR is slow on ``small`` (about a minute an
iteration), so it runs ``--python-iterations`` there (default 1). Results go to ``--out`` as JSON;
docs/openspiel.md quotes them.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from experiments.benchmarks import save_results
from experiments.common.cli import at_least, invocation_note, program_name
from experiments.exact.numpy_cfr import EfgTree, TreeCFR
from experiments.openspiel_cfr import PRESET_PARAMETERS, efg_tree_size


def seconds_per_iteration(step: Callable[[], None], iterations: int) -> float:
    start = time.perf_counter()
    for _ in range(iterations):
        step()
    return (time.perf_counter() - start) / iterations


def measure(preset: str, iterations: int, python_iterations: int) -> dict[str, Any]:
    """The export's seconds and size, and seconds per solver iteration on both trees."""
    import pyspiel

    import biblios_env.openspiel  # noqa: F401  (registers python_biblios)
    from biblios_env.openspiel import efg_text

    parameters = PRESET_PARAMETERS[preset]
    start = time.perf_counter()
    text = efg_text(parameters)
    export = time.perf_counter() - start
    size = efg_tree_size(text)
    tree = pyspiel.load_efg_game(text)
    cfr = seconds_per_iteration(pyspiel.CFRSolver(tree).evaluate_and_update_policy, iterations)
    cfr_plus = seconds_per_iteration(pyspiel.CFRPlusSolver(tree).evaluate_and_update_policy, iterations)
    start = time.perf_counter()
    arrays = EfgTree(text)
    read = time.perf_counter() - start
    numpy_cfr_plus = seconds_per_iteration(TreeCFR(arrays, "cfr+").iterate, iterations)
    numpy_dcfr = seconds_per_iteration(TreeCFR(arrays, "dcfr").iterate, iterations)
    python_game = pyspiel.load_game("python_biblios", parameters)
    python_cfr = seconds_per_iteration(pyspiel.CFRSolver(python_game).evaluate_and_update_policy, python_iterations)
    row = {
        "preset": preset,
        "histories": size.histories,
        "information_states": list(size.information_states),
        "export_seconds": round(export, 2),
        "efg_megabytes": round(len(text) / 1e6, 1),
        "cfr_seconds_per_iteration_efg": round(cfr, 5),
        "cfr_plus_seconds_per_iteration_efg": round(cfr_plus, 5),
        "cfr_seconds_per_iteration_python_game": round(python_cfr, 4),
        "speedup": round(python_cfr / cfr, 1),
        "numpy_read_seconds": round(read, 2),
        "numpy_cfr_plus_seconds_per_iteration": round(numpy_cfr_plus, 5),
        "numpy_dcfr_seconds_per_iteration": round(numpy_dcfr, 5),
        "numpy_speedup_over_cpp_cfr_plus": round(cfr_plus / numpy_cfr_plus, 1),
    }
    print(
        f"{preset}: {size.histories:,} histories, exported in {export:.1f} s ({row['efg_megabytes']} MB); "
        f"per iteration: C++ CFR on the .efg tree {cfr * 1e3:.1f} ms, CFR+ {cfr_plus * 1e3:.1f} ms, "
        f"CFR on python_biblios {python_cfr:.2f} s: {row['speedup']}x; read into arrays in {read:.1f} s, "
        f"numpy CFR+ {numpy_cfr_plus * 1e3:.1f} ms, DCFR {numpy_dcfr * 1e3:.1f} ms "
        f"({row['numpy_speedup_over_cpp_cfr_plus']}x C++ CFR+)",
        flush=True,
    )
    return row


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog=program_name("experiments.benchmarks.efg"),
        description="Time the .efg export of the small presets, OpenSpiel's CFR on it against CFR "
        "on python_biblios, and the numpy CFR+ and DCFR on the same tree.",
        epilog="Needs the openspiel extra. " + invocation_note("experiments.benchmarks.efg"),
    )
    parser.add_argument("--preset", action="append", choices=sorted(PRESET_PARAMETERS), help="default: mini and small")
    parser.add_argument("--iterations", type=at_least(1), default=20, help="C++ tree iterations timed (default 20)")
    parser.add_argument(
        "--python-iterations",
        type=at_least(1),
        default=1,
        help="python_biblios CFR iterations timed on small (default 1)",
    )
    parser.add_argument("--out", type=Path, default=Path("runs/benchmarks/efg.json"), help="the JSON results file")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    rows = [
        measure(preset, args.iterations, args.iterations if preset == "mini" else args.python_iterations)
        for preset in args.preset or ["mini", "small"]
    ]
    save_results(args.out, "experiments.benchmarks.efg", argv, presets=rows)
    return 0


if __name__ == "__main__":
    sys.exit(main())
