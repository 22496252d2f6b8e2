"""One parallel runner for every experiment that plays many games: local processes or Ray.

The work is a list of *batches* of *items* (a game to play, a game to record); a batch is
the unit sent to a worker (about a second of games or more, so the cost of sending it is
small), and a module-level function ``work(item)`` does one item. The runner calls
``on_batch(index, results)`` in this process as each batch returns, in completion order; the
callers store results by item, so what they compute does not depend on the backend, the
number of workers or the timing.

Backends (``--backend`` of the commands):

* ``local`` (the default): a pool of processes on this machine (``workers=1`` runs in this
  process, where a debugger and a full traceback are at hand);
* ``ray``: Ray core tasks. The runner joins the cluster named by ``ray_address`` (the
  commands' ``--ray-address``) or the ``RAY_ADDRESS`` variable, else an already started Ray in
  this process, else starts a local Ray with ``workers`` CPUs, and stops only a Ray it started.
  Every node needs this package installed (the same version), as for any Ray program.

What both backends guarantee:

* **Stopping.** ``stops_run(result)`` (run in the worker, right after the item) ends the run
  on such a result, e.g. the first failed game without ``--keep-going``: the workers finish
  the item in hand and return what they finished, no new batch starts.
* **Ctrl-C loses no finished item.** Each worker returns the items it finished with a flag
  that it was interrupted; the runner records every returned batch, then raises
  ``KeyboardInterrupt``. (Ctrl-C from a terminal reaches the local workers too: they abandon
  the item in hand only. Ray tasks are not sent the signal: they finish their item.)
* **A dead worker is named**: :class:`WorkerCrashedError` lists the items it was holding
  (``describe(item)``, e.g. the game and its seed).

Ray keeps at most two batches per CPU of the cluster in flight, so a stop or Ctrl-C waits for
those only.
"""

from __future__ import annotations

import multiprocessing
import os
import signal
import sys
import time
from collections.abc import Callable, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass
from typing import Any, Final, Generic, TypeVar

Item = TypeVar("Item")
Result = TypeVar("Result")

LOCAL: Final = "local"
RAY: Final = "ray"
BACKENDS: Final = (LOCAL, RAY)
#: Ray batches in flight per CPU of the cluster: enough to keep every CPU busy between batches.
_RAY_BATCHES_PER_CPU: Final = 2
_INSTALL_RAY: Final = 'the ray backend needs Ray: pip install -e ".[distributed]"'


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


# ----------------------------------------------------------------------------- in the worker
# A local worker's stop event (set by the parent) and whether it is doing an item: Ctrl-C
# interrupts an item only, never a worker waiting for work, so a worker never dies with a
# traceback of its own.
_stop_event: Any = None
_working = False


def _start_local_worker(stop_event: Any) -> None:
    global _stop_event
    _stop_event = stop_event
    signal.signal(signal.SIGINT, _interrupt_an_item)


def _interrupt_an_item(signum: int, frame: Any) -> None:
    if _working:
        raise KeyboardInterrupt


def run_batch(
    work: Callable[[Item], Result], items: Sequence[Item], stops_run: Callable[[Result], bool] | None
) -> tuple[list[Result], bool]:
    """Do ``items`` in order until done, stopped by the parent, at a result that ``stops_run``,
    or interrupted by Ctrl-C. Returns the finished items' results and whether Ctrl-C came."""
    global _working
    results: list[Result] = []
    try:
        _working = True
        for item in items:
            if _stop_event is not None and _stop_event.is_set():
                break
            results.append(work(item))
            if stops_run is not None and stops_run(results[-1]):
                break
    except KeyboardInterrupt:
        return results, True  # the items finished so far still count; the parent stops the run
    finally:
        _working = False
    return results, False


# ----------------------------------------------------------------------------- in the parent
def connect_ray(address: str | None, num_cpus: int | None) -> bool:
    """Join the Ray cluster at ``address`` (or at ``RAY_ADDRESS``), or start a new local Ray with
    ``num_cpus`` CPUs (never a cluster some earlier run left on this machine); nothing if this
    process is connected already. True if this call connected: the caller then ends with
    ``ray.shutdown()``. One thread per worker (``OMP_NUM_THREADS``, set before Ray starts so
    that its workers inherit it): more are slower for this work on small machines."""
    try:
        import ray
    except ImportError as error:
        raise ImportError(_INSTALL_RAY) from error
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    if ray.is_initialized():
        return False
    address = address or os.environ.get("RAY_ADDRESS")
    if address:
        ray.init(address=address)
    else:
        ray.init(address="local", num_cpus=num_cpus, include_dashboard=False)
    return True


class Runner:
    """Runs batches of work on a backend; one runner may run several times (e.g. one round of
    game generation per training iteration) and keeps its Ray connection between runs.

    Use as a context manager (``with Runner("ray") as runner: ...``) or call :meth:`close`.
    """

    def __init__(self, backend: str = LOCAL, workers: int | None = None, ray_address: str | None = None) -> None:
        self.backend = check_backend(backend)
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
        ``functools.partial`` of them). Returns when every batch is done or a result
        ``stops_run``; raises KeyboardInterrupt after recording every returned batch on Ctrl-C,
        and :class:`WorkerCrashedError` naming the items (with ``describe``) of a dead worker.
        """
        if not batches:
            return
        if self.in_process:
            for batch in batches:
                results, interrupted = run_batch(work, batch.items, stops_run)
                on_batch(batch.index, results)
                if interrupted:
                    raise KeyboardInterrupt
                if _ends_run(results, stops_run):
                    return
        elif self.backend == LOCAL:
            self._run_local(work, batches, on_batch, stops_run, describe)
        else:
            self._run_ray(work, batches, on_batch, stops_run, describe)

    # ------------------------------------------------------------------------- local processes
    def _run_local(
        self,
        work: Callable[[Item], Result],
        batches: Sequence[Batch[Item]],
        on_batch: Callable[[int, list[Result]], None],
        stops_run: Callable[[Result], bool] | None,
        describe: Callable[[Item], str],
    ) -> None:
        context = _process_context()
        stop = context.Event()
        pool = ProcessPoolExecutor(
            max_workers=min(self.workers, len(batches)),
            mp_context=context,
            initializer=_start_local_worker,
            initargs=(stop,),
        )
        pending: dict[Future[tuple[list[Result], bool]], Batch[Item]] = {
            pool.submit(run_batch, work, batch.items, stops_run): batch for batch in batches
        }

        def collect(future: Future[tuple[list[Result], bool]]) -> bool:
            batch = pending.pop(future)
            try:
                results, interrupted = future.result()
            except BrokenProcessPool as error:
                raise WorkerCrashedError(_crash_message(batch, describe)) from error
            on_batch(batch.index, results)
            if _ends_run(results, stops_run):
                stop.set()
            return interrupted

        try:
            while pending:
                done, _ = wait(pending, return_when=FIRST_COMPLETED)
                if any([collect(future) for future in done]):
                    raise KeyboardInterrupt
        except KeyboardInterrupt:
            stop.set()
            for future in list(pending):  # each returns after its item in hand; Ctrl-C again stops waiting
                collect(future)
            raise
        finally:
            # Wait for the pool's own threads when every batch has returned (the usual case, Ctrl-C
            # included): shutting down without waiting races with the interpreter's exit handler of
            # concurrent.futures, which then writes to a closed pipe and prints a traceback.
            pool.shutdown(wait=not pending, cancel_futures=True)

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
        ray = self._connect_ray()
        in_flight_limit = max(1, int(ray.cluster_resources().get("CPU", 1)) * _RAY_BATCHES_PER_CPU)
        work_ref = ray.put(work)  # sent once, not with every batch
        waiting = iter(batches)
        in_flight: dict[Any, Batch[Item]] = {}
        stopping = interrupted = False

        def submit_next() -> None:
            batch = next(waiting, None)
            if batch is not None:
                in_flight[self._ray_batch.remote(work_ref, batch.items, stops_run)] = batch

        def collect(reference: Any) -> None:
            nonlocal stopping, interrupted
            batch = in_flight.pop(reference)
            results, worker_interrupted = _ray_results(ray, reference, batch, describe)
            on_batch(batch.index, results)
            interrupted = interrupted or worker_interrupted
            stopping = stopping or worker_interrupted or _ends_run(results, stops_run)

        for _ in range(in_flight_limit):
            submit_next()
        try:
            while in_flight:
                done, _ = ray.wait(list(in_flight), num_returns=1)
                collect(done[0])
                if not stopping:
                    submit_next()
        except KeyboardInterrupt:
            for reference in list(in_flight):  # each returns its finished items; Ctrl-C again stops waiting
                collect(reference)
            raise
        if interrupted:  # a worker saw Ctrl-C (a local Ray shares this terminal) and stopped early
            raise KeyboardInterrupt


def _ends_run(results: list[Any], stops_run: Callable[[Any], bool] | None) -> bool:
    """Whether a batch stopped at a result that ends the run."""
    return bool(results) and stops_run is not None and stops_run(results[-1])


def _ray_results(ray: Any, reference: Any, batch: Batch[Any], describe: Callable[[Any], str]) -> tuple[list[Any], bool]:
    """A returned Ray batch, or the error of its worker: a dead one named, an exception re-raised as itself."""
    try:
        return ray.get(reference)
    except (ray.exceptions.WorkerCrashedError, ray.exceptions.NodeDiedError) as error:
        raise WorkerCrashedError(_crash_message(batch, describe)) from error
    except ray.exceptions.RayTaskError as error:
        raise error.as_instanceof_cause() from None  # the worker's own exception and traceback


def _process_context() -> Any:
    """How the local workers start: forked (fast, the default on Linux), but spawned in a process
    where Ray is running: a fork copies Ray's threads' locks mid-use, and the pool or Ray then hangs."""
    ray = sys.modules.get("ray")
    if ray is not None and ray.is_initialized():
        return multiprocessing.get_context("spawn")
    return multiprocessing.get_context()


def _crash_message(batch: Batch[Any], describe: Callable[[Any], str]) -> str:
    items = "; ".join(describe(item) for item in batch.items)
    return (
        f"a worker process died (killed, out of memory or a crash in native code) while doing batch "
        f"{batch.index}: {items}; the batches finished before it are recorded"
    )


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
