"""What every trainer's run folder shares: a default name, CSV logs appended row by row (and
trimmed back when a run resumes from an earlier checkpoint), and files written whole."""

from __future__ import annotations

import csv
import json
import os
from collections.abc import Callable, Sequence
from datetime import datetime
from pathlib import Path
from typing import Any


def default_out(kind: str) -> Path:
    """A fresh run folder named after the command and the moment the run starts: ``runs/<kind>-<date>-<time>``."""
    return Path("runs") / datetime.now().strftime(f"{kind}-%Y%m%d-%H%M%S")


def append_rows(path: Path, columns: Sequence[str], rows: Sequence[dict[str, Any]]) -> None:
    """Append ``rows`` to the CSV file ``path`` (with a header if it is new); keys outside
    ``columns`` are left out."""
    new = not path.exists()
    with path.open("a", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=list(columns), extrasaction="ignore")
        if new:
            writer.writeheader()
        writer.writerows(rows)


def read_rows(path: Path) -> list[dict[str, str]]:
    """The rows of the CSV file ``path`` (none if it does not exist)."""
    if not path.exists():
        return []
    with path.open(newline="") as handle:
        return list(csv.DictReader(handle))


def keep_rows(path: Path, keep: Callable[[dict[str, str]], bool]) -> None:
    """Rewrite ``path`` with the rows ``keep`` accepts: a run resumed from a checkpoint writes the
    later rows again."""
    if not path.exists():
        return
    with path.open(newline="") as handle:
        reader = csv.DictReader(handle)
        columns = reader.fieldnames or []
        rows = [row for row in reader if keep(row)]
    path.unlink()
    if columns:
        append_rows(path, columns, rows)


def write_json(path: Path, data: Any) -> None:
    """Write ``data`` as JSON whole, then move it into place: a reader never sees half a file."""
    temporary = path.with_name(path.name + ".tmp")
    temporary.write_text(json.dumps(data, indent=1) + "\n")
    os.replace(temporary, path)


__all__ = ["append_rows", "default_out", "keep_rows", "read_rows", "write_json"]
