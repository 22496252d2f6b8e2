"""Speed measurements, one command each (``python -m experiments.benchmarks.NAME``); their figures
are in docs/performance.md and docs/scaling.md."""

from __future__ import annotations

import json
import platform
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any


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
