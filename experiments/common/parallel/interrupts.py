"""Ctrl-C during a parallel run, in the runner's process and in a local worker: counted always,
raised only where it loses nothing; and the loop that does one batch's items, which reads it."""

from __future__ import annotations

import os
import signal
import threading
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import Final

from experiments.common.parallel.batches import Item, Result

#: The signals a run defers as Ctrl-C (SIGTERM only where the program raises KeyboardInterrupt on it).
STOP_SIGNALS: Final = (signal.SIGINT, signal.SIGTERM)


class Interrupts:
    """Ctrl-C in one process of a run. Python raises KeyboardInterrupt wherever the program is,
    e.g. halfway through recording a batch or sending a result; here Ctrl-C is counted always,
    and raised only where that loses nothing: inside an item (whose result does not exist yet)
    or while waiting for workers. Elsewhere the count is read at the next item or wait."""

    def __init__(self) -> None:
        self.count = 0
        self.raising = False
        #: Whether a Ctrl-C says what it does (the runner's process: the user's terminal).
        self.announce = False

    def handle(self, signum: int, frame: object) -> None:
        self.count += 1
        if self.announce and self.count <= len(ANNOUNCEMENTS):
            # os.write, not print: the handler may run while the program itself writes to stderr.
            os.write(2, ANNOUNCEMENTS[self.count - 1].encode())
        if self.raising:
            self.raising = False  # one KeyboardInterrupt, raised where it is caught
            raise KeyboardInterrupt

    @contextmanager
    def raised_here(self) -> Iterator[None]:
        """Ctrl-C raises KeyboardInterrupt in this block."""
        self.raising = True
        try:
            yield
        finally:
            self.raising = False


#: What the runner says at the first and the second Ctrl-C (a run that waits for its workers is
#: not silent, and a caller can tell that its Ctrl-C was taken).
ANNOUNCEMENTS: Final = (
    "\nCtrl-C: finishing the work in hand and saving it (Ctrl-C again stops waiting)\n",
    "\nCtrl-C again: not waiting for the work in hand\n",
)
#: This process's Ctrl-C: a local worker's for its whole life, the runner's during a run.
interrupts = Interrupts()


@contextmanager
def interrupts_deferred() -> Iterator[None]:
    """Ctrl-C in this process handled by ``interrupts`` during a run (whose count the run reads
    before the end of this block). Only in the main thread (the only one Python runs signal
    handlers in) and over Python's own handler: a Ctrl-C that is ignored, or handled by the
    program itself, is left so. A SIGTERM that the program turned into KeyboardInterrupt (its
    handler is Python's Ctrl-C handler, as a trainer sets it while it plays games) is a Ctrl-C too."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    taken = [number for number in STOP_SIGNALS if signal.getsignal(number) is signal.default_int_handler]
    if signal.SIGINT not in taken:
        yield
        return
    previous = {number: signal.signal(number, interrupts.handle) for number in taken}
    interrupts.announce = True
    try:
        yield
    finally:
        for number, handler in previous.items():
            signal.signal(number, handler)
        interrupts.count = 0
        interrupts.announce = False


def run_batch(
    work: Callable[[Item], Result],
    items: Sequence[Item],
    stops_run: Callable[[Result], bool] | None,
    stopped: Callable[[], bool] | None = None,
    finished: Callable[[Result], None] | None = None,
) -> tuple[list[Result], bool]:
    """Do ``items`` in order until done, at a result that ``stops_run``, when ``stopped()`` says
    so (asked before each item), or at Ctrl-C, which abandons the item in hand only;
    ``finished(result)`` is called as each item finishes. Returns the finished items' results
    and whether Ctrl-C came."""
    results: list[Result] = []
    try:
        for item in items:
            if interrupts.count or (stopped is not None and stopped()):
                break
            with interrupts.raised_here():
                results.append(work(item))
            if finished is not None:
                finished(results[-1])
            if stops_run is not None and stops_run(results[-1]):
                break
    except KeyboardInterrupt:
        return results, True  # the items finished so far still count; the parent stops the run
    return results, interrupts.count > 0


__all__ = ["Interrupts", "interrupts", "interrupts_deferred", "run_batch"]
