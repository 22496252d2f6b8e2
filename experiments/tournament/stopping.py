"""How a tournament stops on a signal, the way the trainers do: Ctrl-C (SIGINT) or SIGTERM finishes
the games in progress, saves them, prints the line that resumes the run and exits 0, with no
traceback; a second Ctrl-C stops at once (what the workers finished is still saved). A signal that
comes before the run folder exists leaves nothing to resume: the command says so and exits 130,
the status of an interrupted command.

Both signals are handled by :mod:`experiments.common.parallel` during a run, which raises
KeyboardInterrupt only where that loses no finished game.
"""

from __future__ import annotations

import signal
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from experiments.tournament.run_folder import GAMES_FILE, RUN_FILE


@contextmanager
def sigterm_as_ctrl_c() -> Iterator[None]:
    """SIGTERM (``kill``, a job scheduler's stop) stops the run in this block as Ctrl-C does: its
    handler is Python's Ctrl-C handler, which the parallel runner takes over during a run (so
    that it, too, loses no finished game) and which raises KeyboardInterrupt elsewhere. The
    handler before it is restored on exit. Only the main thread can set handlers: elsewhere
    SIGTERM keeps its own."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = signal.signal(signal.SIGTERM, signal.default_int_handler)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


def stopped(out: Path, resume_command: str) -> int:
    """What the command prints when a signal stopped it, and its exit status."""
    if not (out / RUN_FILE).is_file():
        print("\nstopped before the run started: nothing to resume; start it again", file=sys.stderr)
        return 130
    print(f"\nstopped; the finished games are saved in {out / GAMES_FILE}; resume with: {resume_command}", flush=True)
    return 0
