"""The Ray backend: Ray core tasks, each doing one batch and returning all of its results; at most
two batches per CPU of the cluster in flight, so that a stop or Ctrl-C waits for those only."""

from __future__ import annotations

import logging
import os
from collections import deque
from collections.abc import Callable, Sequence
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
    ends_run,
)
from experiments.common.parallel.interrupts import interrupts, interrupts_deferred

#: Ray batches in flight per CPU of the cluster: enough to keep every CPU busy between batches.
RAY_BATCHES_PER_CPU: Final = 2
INSTALL_RAY: Final = 'the ray backend needs Ray: pip install -e ".[distributed]"'


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
        raise ImportError(INSTALL_RAY) from error
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


def run_ray(
    ray: Any,
    remote_batch: Any,
    work: Callable[[Item], Result],
    batches: Sequence[Batch[Item]],
    on_batch: Callable[[int, list[Result]], None],
    stops_run: Callable[[Result], bool] | None,
    describe: Callable[[Item], str],
) -> None:
    """A bounded number of batches in flight; the run stops (no new batch) at a stopping
    result, Ctrl-C, an error or a dead worker, and every batch in flight is collected and
    recorded before it returns or raises."""
    in_flight_limit = max(1, int(ray.cluster_resources().get("CPU", 1)) * RAY_BATCHES_PER_CPU)
    work_ref = ray.put(work)  # sent once, not with every batch
    waiting = deque(batches)
    in_flight: dict[Any, Batch[Item]] = {}
    failure: BaseException | None = None
    stopping = interrupted = False

    with interrupts_deferred():
        while True:
            stopping = stopping or failure is not None or interrupted or interrupts.count > 0
            while waiting and not stopping and len(in_flight) < in_flight_limit:
                batch = waiting.popleft()
                in_flight[remote_batch.remote(work_ref, batch.items, stops_run)] = batch
            if not in_flight:
                break
            if interrupts.count > 1:  # Ctrl-C again: stop waiting
                raise KeyboardInterrupt
            try:
                with interrupts.raised_here():
                    done, _ = ray.wait(list(in_flight), num_returns=1)
            except KeyboardInterrupt:
                continue  # counted: the next turn stops the run
            batch = in_flight.pop(done[0])
            try:
                results, batch_interrupted = ray_results(ray, done[0], batch, describe)
            except Exception as error:  # a dead worker or the work's own exception: raised once all is in
                failure = failure or error
                continue
            on_batch(batch.index, results)
            interrupted = interrupted or batch_interrupted
            stopping = stopping or ends_run(results, stops_run)
        interrupted = interrupted or interrupts.count > 0
    if failure is not None:
        raise failure
    if interrupted:  # a worker saw Ctrl-C, or this process did
        raise KeyboardInterrupt


def ray_results(ray: Any, reference: Any, batch: Batch[Any], describe: Callable[[Any], str]) -> tuple[list[Any], bool]:
    """A returned Ray batch, or the error of its worker: a dead one named, an exception re-raised as itself."""
    try:
        return ray.get(reference)
    except (ray.exceptions.WorkerCrashedError, ray.exceptions.NodeDiedError) as error:
        raise WorkerCrashedError(ray_crash_message(batch, describe)) from error
    except ray.exceptions.RayTaskError as error:
        raise error.as_instanceof_cause() from None  # the worker's own exception and traceback


def ray_crash_message(batch: Batch[Any], describe: Callable[[Any], str]) -> str:
    """What a dead Ray worker was doing: its batch (a task returns all of it or nothing)."""
    return f"{DIED} ({CAUSES}) while doing {batch_text(batch, describe)}; {RECORDED}"


__all__ = ["INSTALL_RAY", "connect_ray", "run_ray"]
