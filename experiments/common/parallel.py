"""One parallel runner for every experiment that plays many games: local processes or Ray.

The work is a list of *batches* of *items* (a game to play, a game to record); a batch is
the unit sent to a worker (about a second of games or more, so the cost of sending it is
small), and a module-level function ``work(item)`` does one item. The runner calls
``on_batch(index, results)`` in this process as each batch returns, in completion order; the
callers store results by item, so what they compute does not depend on the backend, the
number of workers or the timing.

Backends (``--backend`` of the commands):

* ``local`` (the default): worker processes on this machine (``workers=1`` runs in this
  process, where a debugger and a full traceback are at hand). Each worker is sent one batch at
  a time and sends every item's result back as soon as it is finished;
* ``ray``: Ray core tasks. The runner joins the cluster named by ``ray_address`` (the
  commands' ``--ray-address``) or the ``RAY_ADDRESS`` variable, else an already started Ray in
  this process, else starts a local Ray with ``workers`` CPUs, and stops only a Ray it started.
  Every node needs this package installed (the same version), as for any Ray program.

What both backends guarantee (a batch cut short is recorded with the items it finished):

* **Stopping.** ``stops_run(result)`` ends the run on such a result, e.g. the first failed game
  without ``--keep-going``: no new batch starts, and the runner records every batch in flight
  before it returns (a local worker stops after its item in hand, a Ray task at the end of its
  batch).
* **Ctrl-C loses no finished item.** Ctrl-C (in this process, or in a local worker: a terminal
  sends it to both) stops the run likewise, and the runner raises ``KeyboardInterrupt`` once
  every batch in flight is recorded; a second Ctrl-C here stops waiting for the workers (what
  they sent is still recorded). Ctrl-C interrupts an item only: elsewhere (recording a batch,
  waiting for work) it takes effect at the next item, so it never cuts a recording short. Ray
  ignores SIGINT in its workers: they finish their batch. A runner made with
  ``abandon_items=True`` (a trainer whose items are long games it plays again on resume) passes a
  Ctrl-C of this process on to its local workers, which abandon their item in hand at once.
* **A dead worker is named**: :class:`WorkerCrashedError` names the batch it was doing
  (``describe(item)``, e.g. the game and its seed; a local worker's item in hand too), raised
  once what the workers finished is recorded (a dead local worker's finished items included;
  Ray runs a task again, up to three times, when its worker dies). An exception of ``work`` is
  raised here as itself, likewise after the recording.

Ray keeps at most two batches per CPU of the cluster in flight, so a stop or Ctrl-C waits for
those only.
"""

from __future__ import annotations

import logging
import multiprocessing
import os
import pickle
import signal
import sys
import threading
import time
import traceback
from collections import deque
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager, suppress
from dataclasses import dataclass, field
from multiprocessing.connection import Connection, wait
from typing import Any, Final, Generic, TypeVar

Item = TypeVar("Item")
Result = TypeVar("Result")

LOCAL: Final = "local"
RAY: Final = "ray"
BACKENDS: Final = (LOCAL, RAY)
#: Ray batches in flight per CPU of the cluster: enough to keep every CPU busy between batches.
_RAY_BATCHES_PER_CPU: Final = 2
_INSTALL_RAY: Final = 'the ray backend needs Ray: pip install -e ".[distributed]"'
#: How long a local worker told to quit (or ended) may take to exit before it is killed.
_EXIT_SECONDS: Final = 10.0
#: The signals a run defers as Ctrl-C (SIGTERM only where the program raises KeyboardInterrupt on it).
_STOP_SIGNALS: Final = (signal.SIGINT, signal.SIGTERM)

# What this process and a local worker send each other: (kind, payload).
_BATCH: Final = "batch"  # to the worker: the items of a batch to do
_STOP: Final = "stop"  # to the worker: stop the batch after the item in hand
_QUIT: Final = "quit"  # to the worker: exit
_RESULT: Final = "result"  # from the worker: the result of one finished item
_END: Final = "end"  # from the worker: the batch is over; payload: whether Ctrl-C cut it short
_ERROR: Final = "error"  # from the worker: ``work`` raised; payload: the exception and its traceback


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


# ----------------------------------------------------------------------------- Ctrl-C
class _Interrupts:
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
        if self.announce and self.count <= len(_ANNOUNCEMENTS):
            # os.write, not print: the handler may run while the program itself writes to stderr.
            os.write(2, _ANNOUNCEMENTS[self.count - 1].encode())
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
_ANNOUNCEMENTS: Final = (
    "\nCtrl-C: finishing the work in hand and saving it (Ctrl-C again stops waiting)\n",
    "\nCtrl-C again: not waiting for the work in hand\n",
)
#: This process's Ctrl-C: a local worker's for its whole life, the runner's during a run.
_interrupts = _Interrupts()


@contextmanager
def _interrupts_deferred() -> Iterator[None]:
    """Ctrl-C in this process handled by ``_interrupts`` during a run (whose count the run reads
    before the end of this block). Only in the main thread (the only one Python runs signal
    handlers in) and over Python's own handler: a Ctrl-C that is ignored, or handled by the
    program itself, is left so. A SIGTERM that the program turned into KeyboardInterrupt (its
    handler is Python's Ctrl-C handler, as a trainer sets it while it plays games) is a Ctrl-C too."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    taken = [number for number in _STOP_SIGNALS if signal.getsignal(number) is signal.default_int_handler]
    if signal.SIGINT not in taken:
        yield
        return
    previous = {number: signal.signal(number, _interrupts.handle) for number in taken}
    _interrupts.announce = True
    try:
        yield
    finally:
        for number, handler in previous.items():
            signal.signal(number, handler)
        _interrupts.count = 0
        _interrupts.announce = False


# ----------------------------------------------------------------------------- in the worker
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
            if _interrupts.count or (stopped is not None and stopped()):
                break
            with _interrupts.raised_here():
                results.append(work(item))
            if finished is not None:
                finished(results[-1])
            if stops_run is not None and stops_run(results[-1]):
                break
    except KeyboardInterrupt:
        return results, True  # the items finished so far still count; the parent stops the run
    return results, _interrupts.count > 0


def _local_worker(connection: Connection, work: Callable[[Any], Any], stops_run: Callable[[Any], bool] | None) -> None:
    """A local worker process: does the batches the parent sends, one at a time, until told to
    quit or the parent is gone. Ctrl-C was blocked while the parent started it, so that it cannot
    die of one before its handler is set."""
    _interrupts.count = 0
    signal.signal(signal.SIGINT, _interrupts.handle)
    signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})
    try:
        while (message := connection.recv())[0] != _QUIT:
            if message[0] == _BATCH:
                connection.send(_do_batch(connection, work, message[1], stops_run))
            # else a stop that came after its batch was over: nothing to stop
    except (EOFError, OSError):
        pass  # the parent is gone (it was killed, or stopped waiting after a second Ctrl-C)


def _do_batch(
    connection: Connection, work: Callable[[Any], Any], items: Sequence[Any], stops_run: Callable[[Any], bool] | None
) -> tuple[str, Any]:
    """One batch in a local worker. Each result is sent as soon as it is finished, so a worker
    that dies loses its item in hand only; a stop from the parent is the data waiting on the pipe.
    Returns the batch's last message: its end, or the exception of ``work``."""
    sent = 0

    def send(result: Any) -> None:
        nonlocal sent
        connection.send((_RESULT, result))
        sent += 1

    try:
        results, interrupted = run_batch(work, items, stops_run, connection.poll, send)
        for result in results[sent:]:  # finished as Ctrl-C came, before it could be sent
            send(result)
    except BaseException as error:  # raised again in the parent, as itself
        return _ERROR, _portable(error)
    return _END, interrupted


class _RemoteTracebackError(Exception):
    """The traceback of an exception raised in a worker process, shown as its cause."""

    def __str__(self) -> str:
        return f'\n"""\n{self.args[0]}"""'


def _portable(error: BaseException) -> tuple[BaseException, str]:
    """An exception and its traceback as the parent can receive them (one that does not survive
    pickling becomes a RuntimeError naming it)."""
    text = "".join(traceback.format_exception(error))
    try:
        pickle.loads(pickle.dumps(error))
    except Exception:
        error = RuntimeError(f"{type(error).__name__}: {error}")
    return error, text


# ----------------------------------------------------------------------------- in the parent
def connect_ray(address: str | None, num_cpus: int | None, quiet: bool = False) -> bool:
    """Join the Ray cluster at ``address`` (or at ``RAY_ADDRESS``), or start a new local Ray with
    ``num_cpus`` CPUs (never a cluster some earlier run left on this machine); nothing if this
    process is connected already. True if this call connected: the caller then ends with
    ``ray.shutdown()``. One thread per worker (``OMP_NUM_THREADS``, set before Ray starts so
    that its workers inherit it): more are slower for this work on small machines. ``quiet``
    shows only Ray's errors (its start-up notes and RLlib's deprecation notes are none of the
    user's business) and not the workers' output."""
    try:
        import ray
    except ImportError as error:
        raise ImportError(_INSTALL_RAY) from error
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    if ray.is_initialized():
        return False
    address = address or os.environ.get("RAY_ADDRESS")
    level = logging.ERROR if quiet else logging.INFO
    logging.getLogger("ray").setLevel(level)  # its loggers below "ray" inherit it
    if address:
        ray.init(address=address, logging_level=level, log_to_driver=not quiet)
    else:
        ray.init(
            address="local", num_cpus=num_cpus, include_dashboard=False, logging_level=level, log_to_driver=not quiet
        )
    return True


@dataclass
class _LocalWorker:
    """A local worker process, this end of its pipe, and the batch it is doing with the results
    received so far."""

    process: Any
    connection: Connection
    batch: Batch[Any] | None = None
    results: list[Any] = field(default_factory=list)
    told_to_stop: bool = False
    alive: bool = True


class Runner:
    """Runs batches of work on a backend; one runner may run several times (e.g. one round of
    game generation per training iteration) and keeps its Ray connection between runs.

    Use as a context manager (``with Runner("ray") as runner: ...``) or call :meth:`close`.
    """

    def __init__(
        self,
        backend: str = LOCAL,
        workers: int | None = None,
        ray_address: str | None = None,
        *,
        abandon_items: bool = False,
    ) -> None:
        self.backend = check_backend(backend)
        #: Whether Ctrl-C here ends the local workers' items in hand too (see the module docstring).
        self.abandon_items = abandon_items
        if workers is not None and workers < 1:
            raise ValueError(f"workers must be a positive integer, got {workers!r}")
        if ray_address is not None and backend != RAY:
            raise ValueError(f"--ray-address {ray_address!r} needs --backend ray (got --backend {backend})")
        self.workers = workers or os.cpu_count() or 1
        self.ray_address = ray_address
        #: Seconds spent starting or joining Ray (reported apart from the work: a fixed cost).
        self.start_up_seconds = 0.0
        self._started_ray = False
        self._ray_batch: Any = None

    def __enter__(self) -> Runner:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def close(self) -> None:
        """Stop the Ray this runner started (a Ray started by the caller or a cluster is left as is)."""
        if self._started_ray:
            import ray

            ray.shutdown()
            self._started_ray = False
        self._ray_batch = None

    @property
    def in_process(self) -> bool:
        """Whether :meth:`run` works in this process (the local backend with one worker)."""
        return self.backend == LOCAL and self.workers == 1

    def run(
        self,
        work: Callable[[Item], Result],
        batches: Sequence[Batch[Item]],
        on_batch: Callable[[int, list[Result]], None],
        *,
        stops_run: Callable[[Result], bool] | None = None,
        describe: Callable[[Item], str] = repr,
    ) -> None:
        """Do every batch, calling ``on_batch(batch.index, results)`` here as each returns.

        ``work`` and ``stops_run`` must be picklable (module-level functions, or
        ``functools.partial`` of them) unless the run is :attr:`in_process`. Returns when every
        batch is done or a result ``stops_run``; raises KeyboardInterrupt after recording every
        batch in flight on Ctrl-C, and :class:`WorkerCrashedError` naming the items (with
        ``describe``) of a dead worker.
        """
        if not batches:
            return
        if self.in_process:
            self._run_here(work, batches, on_batch, stops_run)
        elif self.backend == LOCAL:
            self._run_local(work, batches, on_batch, stops_run, describe)
        else:
            self._run_ray(work, batches, on_batch, stops_run, describe)

    @staticmethod
    def _run_here(
        work: Callable[[Item], Result],
        batches: Sequence[Batch[Item]],
        on_batch: Callable[[int, list[Result]], None],
        stops_run: Callable[[Result], bool] | None,
    ) -> None:
        with _interrupts_deferred():
            for batch in batches:
                results, interrupted = run_batch(work, batch.items, stops_run)
                on_batch(batch.index, results)
                if interrupted:
                    raise KeyboardInterrupt
                if _ends_run(results, stops_run):
                    return
            if _interrupts.count:  # Ctrl-C while the last batch was recorded
                raise KeyboardInterrupt

    # ------------------------------------------------------------------------- local processes
    def _run_local(
        self,
        work: Callable[[Item], Result],
        batches: Sequence[Batch[Item]],
        on_batch: Callable[[int, list[Result]], None],
        stops_run: Callable[[Result], bool] | None,
        describe: Callable[[Item], str],
    ) -> None:
        run = _LocalRun(on_batch, stops_run, describe, self.abandon_items)
        with _interrupts_deferred():
            try:
                _start_local_workers(run.workers, min(self.workers, len(batches)), work, stops_run)
                run.run(deque(batches))
            finally:
                _shut_down(run.workers)
            run.interrupted = run.interrupted or _interrupts.count > 0
        if run.failure is not None:
            raise run.failure
        if run.interrupted:
            raise KeyboardInterrupt

    # ------------------------------------------------------------------------- Ray
    def _connect_ray(self) -> Any:
        """Ray's remote ``run_batch``, joining or starting Ray on first use."""
        try:
            import ray
        except ImportError as error:
            raise ImportError(_INSTALL_RAY) from error
        if self._ray_batch is None:
            start = time.perf_counter()
            self._started_ray = connect_ray(self.ray_address, self.workers)
            self._ray_batch = ray.remote(run_batch)
            self.start_up_seconds += time.perf_counter() - start
        return ray

    def _run_ray(
        self,
        work: Callable[[Item], Result],
        batches: Sequence[Batch[Item]],
        on_batch: Callable[[int, list[Result]], None],
        stops_run: Callable[[Result], bool] | None,
        describe: Callable[[Item], str],
    ) -> None:
        """A bounded number of batches in flight; the run stops (no new batch) at a stopping
        result, Ctrl-C, an error or a dead worker, and every batch in flight is collected and
        recorded before it returns or raises."""
        ray = self._connect_ray()
        in_flight_limit = max(1, int(ray.cluster_resources().get("CPU", 1)) * _RAY_BATCHES_PER_CPU)
        work_ref = ray.put(work)  # sent once, not with every batch
        waiting = deque(batches)
        in_flight: dict[Any, Batch[Item]] = {}
        failure: BaseException | None = None
        stopping = interrupted = False

        with _interrupts_deferred():
            while True:
                stopping = stopping or failure is not None or interrupted or _interrupts.count > 0
                while waiting and not stopping and len(in_flight) < in_flight_limit:
                    batch = waiting.popleft()
                    in_flight[self._ray_batch.remote(work_ref, batch.items, stops_run)] = batch
                if not in_flight:
                    break
                if _interrupts.count > 1:  # Ctrl-C again: stop waiting
                    raise KeyboardInterrupt
                try:
                    with _interrupts.raised_here():
                        done, _ = ray.wait(list(in_flight), num_returns=1)
                except KeyboardInterrupt:
                    continue  # counted: the next turn stops the run
                batch = in_flight.pop(done[0])
                try:
                    results, batch_interrupted = _ray_results(ray, done[0], batch, describe)
                except Exception as error:  # a dead worker or the work's own exception: raised once all is in
                    failure = failure or error
                    continue
                on_batch(batch.index, results)
                interrupted = interrupted or batch_interrupted
                stopping = stopping or _ends_run(results, stops_run)
            interrupted = interrupted or _interrupts.count > 0
        if failure is not None:
            raise failure
        if interrupted:  # a worker saw Ctrl-C, or this process did
            raise KeyboardInterrupt


class _LocalRun:
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
        self.workers: list[_LocalWorker] = []
        self.failure: BaseException | None = None  # the first error or dead worker: raised at the end
        self.stopping = False
        self.interrupted = False

    def run(self, waiting: deque[Batch[Any]]) -> None:
        while True:
            self.stopping = self.stopping or self.failure is not None or self.interrupted or _interrupts.count > 0
            for worker in self.workers:
                if worker.alive and worker.batch is None and waiting and not self.stopping:
                    worker.batch = waiting.popleft()
                    _send(worker, _BATCH, worker.batch.items)
                elif worker.batch is not None and self.stopping and not worker.told_to_stop:
                    worker.told_to_stop = True
                    _send(worker, _STOP, None)
                    if self.abandon_items and (self.interrupted or _interrupts.count > 0):
                        with suppress(OSError):  # a worker that has just died is found by its exit
                            os.kill(worker.process.pid, signal.SIGINT)
            busy = [worker for worker in self.workers if worker.batch is not None]
            if not busy:
                return
            if _interrupts.count > 1:  # Ctrl-C again: stop waiting, keep what came
                for worker in busy:
                    self._read(worker)
                    worker.process.terminate()
                    self._end_batch(worker)
                raise KeyboardInterrupt
            alive = [worker for worker in self.workers if worker.alive]
            try:
                with _interrupts.raised_here():
                    wait([worker.connection for worker in busy] + [worker.process.sentinel for worker in alive])
            except KeyboardInterrupt:
                continue  # counted: the next turn stops the run
            for worker in alive:
                self._read(worker)

    def _read(self, worker: _LocalWorker) -> None:
        """What ``worker`` sent, then its death if it died (a dead worker is named with the batch it
        was really doing, and the items it sent before dying are recorded)."""
        dead = not worker.process.is_alive()  # first: all it sent before dying is read next
        messages, closed = _received(worker.connection)
        for kind, payload in messages:
            if kind == _RESULT:
                worker.results.append(payload)
                self.stopping = self.stopping or (self.stops_run is not None and self.stops_run(payload))
                continue
            self._end_batch(worker)
            if kind == _ERROR:
                self.failure = self.failure or _raised_in_worker(*payload)
            else:
                self.interrupted = self.interrupted or payload
        if dead or closed:
            worker.alive = False
            worker.process.join(_EXIT_SECONDS)
            crash = WorkerCrashedError(_local_crash_message(worker, self.describe))
            self.failure = self.failure or crash
            self._end_batch(worker)

    def _end_batch(self, worker: _LocalWorker) -> None:
        batch, results = worker.batch, worker.results
        worker.batch, worker.results, worker.told_to_stop = None, [], False
        if batch is not None:
            self.on_batch(batch.index, results)


def _start_local_workers(
    workers: list[_LocalWorker], count: int, work: Callable[[Any], Any], stops_run: Callable[[Any], bool] | None
) -> None:
    """Start ``count`` worker processes into ``workers``, with Ctrl-C blocked in this thread
    meanwhile: the workers start with it blocked too, until their own handler is set."""
    context = _process_context()
    blocked = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
    try:
        for _ in range(count):
            here, there = context.Pipe()
            process = context.Process(target=_local_worker, args=(there, work, stops_run), daemon=True)
            try:
                process.start()
            except BaseException:
                here.close()
                raise
            finally:
                there.close()  # the worker's end: held by the worker alone, so its death closes the pipe
            workers.append(_LocalWorker(process, here))
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, blocked)


def _send(worker: _LocalWorker, kind: str, payload: Any) -> None:
    """A message to a worker; one that has died is found by its exit, not here."""
    with suppress(OSError):
        worker.connection.send((kind, payload))


def _received(connection: Connection) -> tuple[list[tuple[str, Any]], bool]:
    """The messages waiting on ``connection``, and whether it is closed (its worker has died)."""
    messages = []
    try:
        while connection.poll():
            messages.append(connection.recv())
    except (EOFError, OSError):
        return messages, True
    return messages, False


def _raised_in_worker(error: BaseException, text: str) -> BaseException:
    error.__cause__ = _RemoteTracebackError(text)
    return error


def _shut_down(workers: list[_LocalWorker]) -> None:
    """Let the idle workers exit; end those still working (after a second Ctrl-C, or an error here)."""
    for worker in workers:
        if worker.batch is None:
            _send(worker, _QUIT, None)
        else:
            worker.process.terminate()
    for worker in workers:
        worker.process.join(_EXIT_SECONDS)
        if worker.process.is_alive():
            worker.process.kill()
            worker.process.join()
        worker.connection.close()


def _ends_run(results: list[Any], stops_run: Callable[[Any], bool] | None) -> bool:
    """Whether a batch stopped at a result that ends the run."""
    return bool(results) and stops_run is not None and stops_run(results[-1])


def _ray_results(ray: Any, reference: Any, batch: Batch[Any], describe: Callable[[Any], str]) -> tuple[list[Any], bool]:
    """A returned Ray batch, or the error of its worker: a dead one named, an exception re-raised as itself."""
    try:
        return ray.get(reference)
    except (ray.exceptions.WorkerCrashedError, ray.exceptions.NodeDiedError) as error:
        raise WorkerCrashedError(_ray_crash_message(batch, describe)) from error
    except ray.exceptions.RayTaskError as error:
        raise error.as_instanceof_cause() from None  # the worker's own exception and traceback


def _process_context() -> Any:
    """How the local workers start: forked (fast, the default on Linux), but spawned in a process
    where Ray is running: a fork copies Ray's threads' locks mid-use, and the workers or Ray then hang."""
    ray = sys.modules.get("ray")
    if ray is not None and ray.is_initialized():
        return multiprocessing.get_context("spawn")
    return multiprocessing.get_context()


_DIED: Final = "a worker process died"
_CAUSES: Final = "killed, out of memory or a crash in native code"
_RECORDED: Final = "the items finished before it are recorded"


def _local_crash_message(worker: _LocalWorker, describe: Callable[[Any], str]) -> str:
    """What a dead local worker was doing: the item in hand (the first one it did not send back)
    and its batch, or nothing."""
    code = worker.process.exitcode
    if code is None:
        how = _CAUSES
    elif code < 0:
        how = f"{_signal_name(-code)}: {_CAUSES}"
    else:
        how = f"exit code {code}: {_CAUSES}"
    batch = worker.batch
    if batch is None:
        return f"{_DIED} ({how}) while waiting for work, holding no item; what the workers finished is recorded"
    done = len(worker.results)
    in_hand = f"{describe(batch.items[done])} of " if done < len(batch.items) else ""
    return f"{_DIED} ({how}) while doing {in_hand}{_batch_text(batch, describe)}; {_RECORDED}"


def _ray_crash_message(batch: Batch[Any], describe: Callable[[Any], str]) -> str:
    """What a dead Ray worker was doing: its batch (a task returns all of it or nothing)."""
    return f"{_DIED} ({_CAUSES}) while doing {_batch_text(batch, describe)}; {_RECORDED}"


def _batch_text(batch: Batch[Any], describe: Callable[[Any], str]) -> str:
    return f"batch {batch.index}: " + "; ".join(describe(item) for item in batch.items)


def _signal_name(number: int) -> str:
    try:
        return f"killed by {signal.Signals(number).name}"
    except ValueError:
        return f"killed by signal {number}"


__all__ = [
    "BACKENDS",
    "LOCAL",
    "RAY",
    "Batch",
    "Runner",
    "WorkerCrashedError",
    "batches_of",
    "check_backend",
    "run_batch",
]
