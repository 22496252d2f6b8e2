"""How every long training command stops: Ctrl-C (SIGINT) or SIGTERM asks the run to stop at its
next safe point (the end of an update or an iteration), where it saves a checkpoint, prints the
one line that resumes it and exits 0, with no traceback. A second signal stops at once. A run
whose safe points are minutes apart and whose finished phases are already on disk stops at the
first signal (``at_once``)."""

from __future__ import annotations

import signal
import sys
from types import FrameType
from typing import Any


class StopRequest:
    """A context manager that turns SIGINT and SIGTERM into :attr:`requested` (the handlers before
    it are restored on exit). The training loop polls :attr:`requested` at its safe points and
    calls :meth:`after_update` there, so a subclass can ask to stop itself (tests, benchmarks)."""

    def __init__(self, safe_point: str = "the current update", at_once: bool = False) -> None:
        self.safe_point = safe_point
        self.at_once = at_once
        self.requested = False
        self.previous: dict[int, Any] = {}

    def after_update(self, progress: Any) -> None:
        """Called at every safe point with the trainer's progress object (a subclass may set
        :attr:`requested` here)."""

    def __enter__(self) -> StopRequest:
        for sig in (signal.SIGINT, signal.SIGTERM):
            self.previous[sig] = signal.signal(sig, self._handle)
        return self

    def _handle(self, signum: int, frame: FrameType | None) -> None:
        if self.requested or self.at_once:
            self.requested = True
            raise KeyboardInterrupt
        self.requested = True
        print(f"\n{signal.Signals(signum).name}: finishing {self.safe_point}, then saving", flush=True)

    def __exit__(self, *exc: object) -> None:
        for sig, handler in self.previous.items():
            signal.signal(sig, handler)
        self.previous = {}


def resume_line(module: str, out: object, where: str) -> str:
    """The line a stopped run prints: where it stopped and the command that continues it."""
    return f"stopped at {where}; resume with: python -m {module} --resume {out}"


def stopped_at_once(module: str, out: object, resumable: bool) -> int:
    """What a command says when a signal stopped it outside its safe points (while starting, or
    a second Ctrl-C): no traceback, the way on, and the exit status of an interrupted command."""
    way_on = (
        f"continue from its last checkpoint with: python -m {module} --resume {out}"
        if resumable
        else (f"it stopped before its first checkpoint: start it again (the folder {out} can be removed)")
    )
    print(f"\nstopped; {way_on}", file=sys.stderr, flush=True)
    return 130


__all__ = ["StopRequest", "resume_line", "stopped_at_once"]
