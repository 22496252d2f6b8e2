"""The local backend: worker processes on this machine, each sent one batch at a time, sending
every item's result back as soon as it is finished (so a worker that dies loses its item in hand
only), told to stop after the item in hand when the run stops."""

from __future__ import annotations

import multiprocessing
import os
import pickle
import signal
import sys
import traceback
from collections import deque
from collections.abc import Callable, Sequence
from contextlib import suppress
from dataclasses import dataclass, field
from multiprocessing.connection import Connection, wait
from typing import Any, Final

from experiments.common.parallel.batches import (
    CAUSES,
    DIED,
    RECORDED,
    Batch,
    Item,
    Result,
    WorkerCrashedError,
    batch_text,
)
from experiments.common.parallel.interrupts import interrupts, interrupts_deferred, run_batch

#: How long a local worker told to quit (or ended) may take to exit before it is killed.
EXIT_SECONDS: Final = 10.0

# What this process and a local worker send each other: (kind, payload).
BATCH: Final = "batch"  # to the worker: the items of a batch to do
STOP: Final = "stop"  # to the worker: stop the batch after the item in hand
QUIT: Final = "quit"  # to the worker: exit
RESULT: Final = "result"  # from the worker: the result of one finished item
END: Final = "end"  # from the worker: the batch is over; payload: whether Ctrl-C cut it short
ERROR: Final = "error"  # from the worker: ``work`` raised; payload: the exception and its traceback


# ----------------------------------------------------------------------------- in the worker
def local_worker(connection: Connection, work: Callable[[Any], Any], stops_run: Callable[[Any], bool] | None) -> None:
    """A local worker process: does the batches the parent sends, one at a time, until told to
    quit or the parent is gone. Ctrl-C was blocked while the parent started it, so that it cannot
    die of one before its handler is set."""
    interrupts.count = 0
    signal.signal(signal.SIGINT, interrupts.handle)
    signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})
    try:
        while (message := connection.recv())[0] != QUIT:
            if message[0] == BATCH:
                connection.send(do_batch(connection, work, message[1], stops_run))
            # else a stop that came after its batch was over: nothing to stop
    except (EOFError, OSError):
        pass  # the parent is gone (it was killed, or stopped waiting after a second Ctrl-C)


def do_batch(
    connection: Connection, work: Callable[[Any], Any], items: Sequence[Any], stops_run: Callable[[Any], bool] | None
) -> tuple[str, Any]:
    """One batch in a local worker. Each result is sent as soon as it is finished, so a worker
    that dies loses its item in hand only; a stop from the parent is the data waiting on the pipe.
    Returns the batch's last message: its end, or the exception of ``work``."""
    sent = 0

    def send(result: Any) -> None:
        nonlocal sent
        connection.send((RESULT, result))
        sent += 1

    try:
        results, interrupted = run_batch(work, items, stops_run, connection.poll, send)
        for result in results[sent:]:  # finished as Ctrl-C came, before it could be sent
            send(result)
    except BaseException as error:  # raised again in the parent, as itself
        return ERROR, portable(error)
    return END, interrupted


class RemoteTracebackError(Exception):
    """The traceback of an exception raised in a worker process, shown as its cause."""

    def __str__(self) -> str:
        return f'\n"""\n{self.args[0]}"""'


def portable(error: BaseException) -> tuple[BaseException, str]:
    """An exception and its traceback as the parent can receive them (one that does not survive
    pickling becomes a RuntimeError naming it)."""
    text = "".join(traceback.format_exception(error))
    try:
        pickle.loads(pickle.dumps(error))
    except Exception:
        error = RuntimeError(f"{type(error).__name__}: {error}")
    return error, text


# ----------------------------------------------------------------------------- in the parent
@dataclass
class LocalWorker:
    """A local worker process, this end of its pipe, and the batch it is doing with the results
    received so far."""

    process: Any
    connection: Connection
    batch: Batch[Any] | None = None
    results: list[Any] = field(default_factory=list)
    told_to_stop: bool = False
    alive: bool = True


def run_local(
    work: Callable[[Item], Result],
    batches: Sequence[Batch[Item]],
    on_batch: Callable[[int, list[Result]], None],
    stops_run: Callable[[Result], bool] | None,
    describe: Callable[[Item], str],
    workers: int,
    abandon_items: bool,
) -> None:
    """Do ``batches`` on ``workers`` worker processes (see :class:`LocalRun`); raises the first
    failure, else KeyboardInterrupt if Ctrl-C came, once every batch in flight is recorded."""
    run = LocalRun(on_batch, stops_run, describe, abandon_items)
    with interrupts_deferred():
        try:
            start_local_workers(run.workers, min(workers, len(batches)), work, stops_run)
            run.run(deque(batches))
        finally:
            shut_down(run.workers)
        run.interrupted = run.interrupted or interrupts.count > 0
    if run.failure is not None:
        raise run.failure
    if run.interrupted:
        raise KeyboardInterrupt


class LocalRun:
    """The local workers' run: one batch at a time per worker, its results received as they come.
    A stopping result, Ctrl-C, an error or a dead worker stops it (no new batch, a stop sent to
    the busy workers), and every batch in flight is recorded before it ends."""

    def __init__(
        self,
        on_batch: Callable[[int, list[Any]], None],
        stops_run: Callable[[Any], bool] | None,
        describe: Callable[[Any], str],
        abandon_items: bool = False,
    ) -> None:
        self.abandon_items = abandon_items
        self.on_batch = on_batch
        self.stops_run = stops_run
        self.describe = describe
        self.workers: list[LocalWorker] = []
        self.failure: BaseException | None = None  # the first error or dead worker: raised at the end
        self.stopping = False
        self.interrupted = False

    def run(self, waiting: deque[Batch[Any]]) -> None:
        while True:
            self.stopping = self.stopping or self.failure is not None or self.interrupted or interrupts.count > 0
            for worker in self.workers:
                if worker.alive and worker.batch is None and waiting and not self.stopping:
                    worker.batch = waiting.popleft()
                    send(worker, BATCH, worker.batch.items)
                elif worker.batch is not None and self.stopping and not worker.told_to_stop:
                    worker.told_to_stop = True
                    send(worker, STOP, None)
                    if self.abandon_items and (self.interrupted or interrupts.count > 0):
                        with suppress(OSError):  # a worker that has just died is found by its exit
                            os.kill(worker.process.pid, signal.SIGINT)
            busy = [worker for worker in self.workers if worker.batch is not None]
            if not busy:
                return
            if interrupts.count > 1:  # Ctrl-C again: stop waiting, keep what came
                for worker in busy:
                    self._read(worker)
                    worker.process.terminate()
                    self._end_batch(worker)
                raise KeyboardInterrupt
            alive = [worker for worker in self.workers if worker.alive]
            try:
                with interrupts.raised_here():
                    wait([worker.connection for worker in busy] + [worker.process.sentinel for worker in alive])
            except KeyboardInterrupt:
                continue  # counted: the next turn stops the run
            for worker in alive:
                self._read(worker)

    def _read(self, worker: LocalWorker) -> None:
        """What ``worker`` sent, then its death if it died (a dead worker is named with the batch it
        was really doing, and the items it sent before dying are recorded)."""
        dead = not worker.process.is_alive()  # first: all it sent before dying is read next
        messages, closed = received(worker.connection)
        for kind, payload in messages:
            if kind == RESULT:
                worker.results.append(payload)
                self.stopping = self.stopping or (self.stops_run is not None and self.stops_run(payload))
                continue
            self._end_batch(worker)
            if kind == ERROR:
                self.failure = self.failure or raised_in_worker(*payload)
            else:
                self.interrupted = self.interrupted or payload
        if dead or closed:
            worker.alive = False
            worker.process.join(EXIT_SECONDS)
            crash = WorkerCrashedError(local_crash_message(worker, self.describe))
            self.failure = self.failure or crash
            self._end_batch(worker)

    def _end_batch(self, worker: LocalWorker) -> None:
        batch, results = worker.batch, worker.results
        worker.batch, worker.results, worker.told_to_stop = None, [], False
        if batch is not None:
            self.on_batch(batch.index, results)


def start_local_workers(
    workers: list[LocalWorker], count: int, work: Callable[[Any], Any], stops_run: Callable[[Any], bool] | None
) -> None:
    """Start ``count`` worker processes into ``workers``, with Ctrl-C blocked in this thread
    meanwhile: the workers start with it blocked too, until their own handler is set."""
    context = process_context()
    blocked = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
    try:
        for _ in range(count):
            here, there = context.Pipe()
            process = context.Process(target=local_worker, args=(there, work, stops_run), daemon=True)
            try:
                process.start()
            except BaseException:
                here.close()
                raise
            finally:
                there.close()  # the worker's end: held by the worker alone, so its death closes the pipe
            workers.append(LocalWorker(process, here))
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, blocked)


def send(worker: LocalWorker, kind: str, payload: Any) -> None:
    """A message to a worker; one that has died is found by its exit, not here."""
    with suppress(OSError):
        worker.connection.send((kind, payload))


def received(connection: Connection) -> tuple[list[tuple[str, Any]], bool]:
    """The messages waiting on ``connection``, and whether it is closed (its worker has died)."""
    messages = []
    try:
        while connection.poll():
            messages.append(connection.recv())
    except (EOFError, OSError):
        return messages, True
    return messages, False


def raised_in_worker(error: BaseException, text: str) -> BaseException:
    error.__cause__ = RemoteTracebackError(text)
    return error


def shut_down(workers: list[LocalWorker]) -> None:
    """Let the idle workers exit; end those still working (after a second Ctrl-C, or an error here)."""
    for worker in workers:
        if worker.batch is None:
            send(worker, QUIT, None)
        else:
            worker.process.terminate()
    for worker in workers:
        worker.process.join(EXIT_SECONDS)
        if worker.process.is_alive():
            worker.process.kill()
            worker.process.join()
        worker.connection.close()


def process_context() -> Any:
    """How the local workers start: forked (fast, the default on Linux), but spawned in a process
    where Ray is running: a fork copies Ray's threads' locks mid-use, and the workers or Ray then hang."""
    ray = sys.modules.get("ray")
    if ray is not None and ray.is_initialized():
        return multiprocessing.get_context("spawn")
    return multiprocessing.get_context()


def local_crash_message(worker: LocalWorker, describe: Callable[[Any], str]) -> str:
    """What a dead local worker was doing: the item in hand (the first one it did not send back)
    and its batch, or nothing."""
    code = worker.process.exitcode
    if code is None:
        how = CAUSES
    elif code < 0:
        how = f"{signal_name(-code)}: {CAUSES}"
    else:
        how = f"exit code {code}: {CAUSES}"
    batch = worker.batch
    if batch is None:
        return f"{DIED} ({how}) while waiting for work, holding no item; what the workers finished is recorded"
    done = len(worker.results)
    in_hand = f"{describe(batch.items[done])} of " if done < len(batch.items) else ""
    return f"{DIED} ({how}) while doing {in_hand}{batch_text(batch, describe)}; {RECORDED}"


def signal_name(number: int) -> str:
    try:
        return f"killed by {signal.Signals(number).name}"
    except ValueError:
        return f"killed by signal {number}"


__all__ = ["LocalRun", "run_local"]
