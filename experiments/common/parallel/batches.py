"""The work of a parallel run: batches of items, the backends that do them, and how a dead
worker is reported (what both backends share)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Final, Generic, TypeVar

Item = TypeVar("Item")
Result = TypeVar("Result")

LOCAL: Final = "local"
RAY: Final = "ray"
BACKENDS: Final = (LOCAL, RAY)


class WorkerCrashedError(RuntimeError):
    """A worker process died (killed, out of memory, a crash in native code) holding a batch."""


@dataclass(frozen=True)
class Batch(Generic[Item]):
    """The items one worker does in order, and where they are in the whole run."""

    index: int
    items: Sequence[Item]


def batches_of(items: Sequence[Item], size: int) -> list[Batch[Item]]:
    """Consecutive batches of ``size`` items (the last one shorter)."""
    if size < 1:
        raise ValueError(f"batch size must be a positive integer, got {size!r}")
    return [Batch(number, items[start : start + size]) for number, start in enumerate(range(0, len(items), size))]


def check_backend(backend: str) -> str:
    """``backend`` if it is one of :data:`BACKENDS`, else a ValueError naming it."""
    if backend not in BACKENDS:
        raise ValueError(f"unknown backend {backend!r}: expected one of {', '.join(BACKENDS)}")
    return backend


def ends_run(results: list[Any], stops_run: Callable[[Any], bool] | None) -> bool:
    """Whether a batch stopped at a result that ends the run."""
    return bool(results) and stops_run is not None and stops_run(results[-1])


# What a dead worker's error says.
DIED: Final = "a worker process died"
CAUSES: Final = "killed, out of memory or a crash in native code"
RECORDED: Final = "the items finished before it are recorded"


def batch_text(batch: Batch[Any], describe: Callable[[Any], str]) -> str:
    """A batch's index and its items as ``describe`` names them."""
    return f"batch {batch.index}: " + "; ".join(describe(item) for item in batch.items)


__all__ = [
    "BACKENDS",
    "CAUSES",
    "DIED",
    "LOCAL",
    "RAY",
    "RECORDED",
    "Batch",
    "Item",
    "Result",
    "WorkerCrashedError",
    "batch_text",
    "batches_of",
    "check_backend",
    "ends_run",
]
