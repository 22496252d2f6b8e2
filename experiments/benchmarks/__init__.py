"""Speed measurements, one command each (``python -m experiments.benchmarks.NAME``); their figures
are in docs/performance.md and docs/scaling.md."""

from __future__ import annotations

import argparse
import json
import platform
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from experiments.common.cli import HelpFormatter, invocation_note, program_name


def benchmark_parser(module: str, doc: str) -> argparse.ArgumentParser:
    """The argument parser of benchmark ``module``: its name as the program, the first line of its
    docstring ``doc`` as the description, how to run it as the epilog."""
    return argparse.ArgumentParser(
        prog=program_name(module), description=doc.splitlines()[0], epilog=invocation_note(module),
        formatter_class=HelpFormatter,
    )  # fmt: skip


def save_results(out: Path, module: str, argv: Sequence[str] | None, **fields: Any) -> dict[str, Any]:
    """Write a benchmark's results as JSON to ``out`` with the command that measured them and the
    Python version (so a figure can be traced to its run); returns them."""
    result = {
        "command": f"python -m {module} " + " ".join(argv if argv is not None else sys.argv[1:]),
        "python": platform.python_version(),
        **fields,
    }
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(result, indent=2))
    print(f"saved {out}")
    return result
