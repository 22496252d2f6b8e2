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

from experiments.common.parallel.batches import (
    BACKENDS,
    LOCAL,
    RAY,
    Batch,
    WorkerCrashedError,
    batches_of,
    check_backend,
)
from experiments.common.parallel.interrupts import run_batch
from experiments.common.parallel.ray_tasks import connect_ray
from experiments.common.parallel.runner import Runner

__all__ = [
    "BACKENDS",
    "LOCAL",
    "RAY",
    "Batch",
    "Runner",
    "WorkerCrashedError",
    "batches_of",
    "check_backend",
    "connect_ray",
    "run_batch",
]
