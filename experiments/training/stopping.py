"""How every long training command stops: Ctrl-C (SIGINT) or SIGTERM asks the run to stop at its
next safe point (the end of an update or an iteration), where it saves a checkpoint, prints the
one line that resumes it and exits 0, with no traceback. A second signal stops at once. A run
whose safe points are minutes apart and whose finished phases are already on disk stops at the
first signal (``at_once``). While a trainer plays games on the parallel runner
(:meth:`StopRequest.games`), the runner takes the signal as Ctrl-C: it records every batch in
flight, then raises KeyboardInterrupt, and the trainer saves the games finished so far."""

from __future__ import annotations

import shlex
import signal
import sys
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
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

    def after_step(self, phase: str, done: int) -> None:
        """Called as a phase between the safe points makes progress (``done`` games of a game
        phase, the rows of a cloning epoch), so that a subclass can stop there (tests)."""

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

    @contextmanager
    def games(self) -> Iterator[None]:
        """The block in which games are played on :class:`~experiments.common.parallel.Runner`:
        SIGINT and SIGTERM raise KeyboardInterrupt there (the runner defers it until the batches
        in flight are recorded), and a KeyboardInterrupt that leaves the block marks the stop as
        :attr:`requested`, so the trainer saves the finished games and stops."""
        stop_signals = (signal.SIGINT, signal.SIGTERM)
        previous = {number: signal.signal(number, signal.default_int_handler) for number in stop_signals}
        try:
            yield
        except KeyboardInterrupt:
            self.requested = True
            raise
        finally:
            for number, handler in previous.items():
                signal.signal(number, handler)

    def __exit__(self, *exc: object) -> None:
        for sig, handler in self.previous.items():
            signal.signal(sig, handler)
        self.previous = {}


class RunStoppedError(Exception):
    """A run stopped on a signal with what it finished saved; its message says what it kept
    (``after 3,120 of 9,000 bootstrap games``), for :func:`resume_line`."""


def resume_command(module: str, out: object, flags: Sequence[str] = ()) -> str:
    """The command that continues the run in ``out``, with the ``flags`` the user gave that are not
    settings of the run (``--no-progress``, ``--workers 4``, ...): resumed, it runs as before."""
    return " ".join(["python", "-m", module, "--resume", shlex.quote(str(out)), *map(shlex.quote, flags)])


def resume_line(module: str, out: object, what: str, flags: Sequence[str] = ()) -> str:
    """The line a stopped run prints: what it kept (``at 1,024 steps``, ``after 3 of 9 bootstrap
    games``) and the command that continues it (see :func:`resume_command`)."""
    return f"stopped {what}; resume with: {resume_command(module, out, flags)}"


def stopped_at_once(module: str, out: object, resumable: bool, flags: Sequence[str] = ()) -> int:
    """What a command says when a signal stopped it outside its safe points (while starting, or
    a second Ctrl-C): no traceback, the way on, and the exit status of an interrupted command."""
    way_on = (
        f"continue from what it saved with: {resume_command(module, out, flags)}"
        if resumable
        else f"it stopped before its run folder {out} held anything: start it again"
    )
    print(f"\nstopped; {way_on}", file=sys.stderr, flush=True)
    return 130


__all__ = ["RunStoppedError", "StopRequest", "resume_command", "resume_line", "stopped_at_once"]
