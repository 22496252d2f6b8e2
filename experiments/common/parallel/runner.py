"""The runner: one object the commands hold, which does a list of batches on the backend it was
made for (in this process, local worker processes or Ray) and keeps its Ray connection between
runs."""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Sequence
from typing import Any

from experiments.common.parallel.batches import LOCAL, RAY, Batch, Item, Result, check_backend, ends_run
from experiments.common.parallel.interrupts import interrupts, interrupts_deferred, run_batch
from experiments.common.parallel.local import run_local
from experiments.common.parallel.ray_tasks import INSTALL_RAY, connect_ray, run_ray


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
            run_local(work, batches, on_batch, stops_run, describe, self.workers, self.abandon_items)
        else:
            run_ray(self._connect_ray(), self._ray_batch, work, batches, on_batch, stops_run, describe)

    @staticmethod
    def _run_here(
        work: Callable[[Item], Result],
        batches: Sequence[Batch[Item]],
        on_batch: Callable[[int, list[Result]], None],
        stops_run: Callable[[Result], bool] | None,
    ) -> None:
        with interrupts_deferred():
            for batch in batches:
                results, interrupted = run_batch(work, batch.items, stops_run)
                on_batch(batch.index, results)
                if interrupted:
                    raise KeyboardInterrupt
                if ends_run(results, stops_run):
                    return
            if interrupts.count:  # Ctrl-C while the last batch was recorded
                raise KeyboardInterrupt

    def _connect_ray(self) -> Any:
        """Ray, joined or started on first use (its remote ``run_batch`` kept for the next runs)."""
        try:
            import ray
        except ImportError as error:
            raise ImportError(INSTALL_RAY) from error
        if self._ray_batch is None:
            start = time.perf_counter()
            self._started_ray = connect_ray(self.ray_address, self.workers)
            self._ray_batch = ray.remote(run_batch)
            self.start_up_seconds += time.perf_counter() - start
        return ray


__all__ = ["Runner"]
