"""The parallel runner (experiments.common.parallel): the same results on both backends and any number
of workers, stopping, crashes named, and the commands' --backend options.

The Ray tests start their own Ray (2 CPUs) and stop it; one simulates a two-node cluster on this
machine with ``ray.cluster_utils.Cluster``. Without Ray installed they are skipped (see
``optional_extras.py``).
"""

from __future__ import annotations

import os
import sys
import time
from contextlib import nullcontext
from functools import partial
from pathlib import Path

import numpy as np
import pytest
from optional_extras import require
from ray_cluster import two_node_cluster

from experiments.common.match import parse_agent_spec
from experiments.common.parallel import LOCAL, RAY, Batch, Runner, WorkerCrashedError, batches_of, check_backend
from experiments.tournament import TournamentConfig, build_parser, run_tournament
from experiments.training.teacher_games import SelfPlayConfig, generate


def _square(item: int) -> int:
    return item * item


def _die_at(item: int, doomed: int) -> int:
    """Work that kills its worker process at item ``doomed`` (as an out-of-memory kill would)."""
    if item == doomed:
        os._exit(3)
    return item


def _fail_at(item: int, doomed: int) -> int:
    if item == doomed:
        raise ArithmeticError(f"item {item} is doomed")
    return item


def _negative(result: int) -> bool:
    return result < 0


def _run(runner: Runner, work, items: list[int], size: int, **options) -> dict[int, list[int]]:
    returned: dict[int, list[int]] = {}
    runner.run(work, batches_of(items, size), returned.__setitem__, **options)
    return returned


# ----------------------------------------------------------------------------- both backends' contract
def test_batches_cover_the_items_in_order() -> None:
    batches = batches_of(list(range(7)), 3)
    assert [batch.index for batch in batches] == [0, 1, 2]
    assert [list(batch.items) for batch in batches] == [[0, 1, 2], [3, 4, 5], [6]]
    with pytest.raises(ValueError, match="batch size must be a positive integer, got 0"):
        batches_of([1], 0)


def test_bad_settings_are_named() -> None:
    with pytest.raises(ValueError, match="unknown backend 'dask': expected one of local, ray"):
        check_backend("dask")
    with pytest.raises(ValueError, match="workers must be a positive integer, got 0"):
        Runner(LOCAL, 0)
    with pytest.raises(ValueError, match="--ray-address 'auto' needs --backend ray"):
        Runner(LOCAL, 2, ray_address="auto")


@pytest.mark.parametrize("workers", [1, 2])
def test_local_results_do_not_depend_on_the_workers(workers: int) -> None:
    returned = _run(Runner(LOCAL, workers), _square, list(range(20)), 3)
    assert [value for index in sorted(returned) for value in returned[index]] == [n * n for n in range(20)]


@pytest.mark.parametrize("workers", [1, 2])
def test_a_stopping_result_ends_the_run(workers: int) -> None:
    items = [1, 2, -3, 4, 5, 6, 7, 8]
    returned = _run(Runner(LOCAL, workers), partial(_fail_at, doomed=99), items, 2, stops_run=_negative)
    batch_of_stop = next(index for index, values in returned.items() if -3 in values)
    assert returned[batch_of_stop][-1] == -3  # the batch stopped right after it
    if workers == 1:
        assert sorted(returned) == [0, 1]  # in this process nothing after the stop is started


def test_a_dead_local_worker_is_named_with_its_items() -> None:
    """Named with the item it died at and that item's batch, every time (never another batch in
    flight), and the item it finished before in that batch is recorded."""
    returned: dict[int, list[int]] = {}
    with pytest.raises(WorkerCrashedError, match=r"\(exit code 3: .*\) while doing item 5 of batch 2: item 4; item 5;"):
        Runner(LOCAL, 2).run(
            partial(_die_at, doomed=5),
            batches_of(list(range(8)), 2),
            returned.__setitem__,
            describe=lambda item: f"item {item}",
        )
    assert returned[2] == [4]
    for index, values in returned.items():  # the others: done, or stopped after their item in hand
        assert values == [2 * index, 2 * index + 1][: len(values)]


def _marked(item: int, folder: str) -> int:
    """Work that leaves a file for each item it starts. A negative item returns once item 0 has
    started on another worker (-1, a result that stops the run) or raises then (-2); every other
    item takes a while: batches are in flight when the run stops."""
    Path(folder, str(item)).touch()
    if item >= 0:
        time.sleep(0.3)
        return item
    deadline = time.monotonic() + 30
    while not Path(folder, "0").exists() and time.monotonic() < deadline:
        time.sleep(0.01)
    if item == -2:
        raise ArithmeticError(f"item {item} is doomed")
    return item


def _check_every_item_started_is_recorded(runner: Runner, folder: Path, first: int) -> None:
    """The batches in flight when the first item stops the run (-1) or raises (-2) are waited for
    and recorded before the run returns or raises, not abandoned."""
    items = [first, *range(10)]
    returned: dict[int, list[int]] = {}
    work = partial(_marked, folder=str(folder))
    with pytest.raises(ArithmeticError, match="item -2 is doomed") if first == -2 else nullcontext():
        runner.run(work, batches_of(items, 1), returned.__setitem__, stops_run=_negative)
    started = sorted(int(path.name) for path in folder.iterdir())
    assert sorted(value for values in returned.values() for value in values) == [n for n in started if n != -2]
    assert first in started and 0 in started and len(started) < len(items)


@pytest.mark.parametrize("first", [-1, -2], ids=["stop", "error"])
def test_a_stop_or_an_error_records_every_item_started(tmp_path: Path, first: int) -> None:
    _check_every_item_started_is_recorded(Runner(LOCAL, 2), tmp_path, first)


def test_an_exception_of_the_work_is_raised_as_itself_with_its_traceback() -> None:
    returned: dict[int, list[int]] = {}
    with pytest.raises(ArithmeticError, match="item 5 is doomed") as raised:
        Runner(LOCAL, 2).run(partial(_fail_at, doomed=5), batches_of(list(range(8)), 2), returned.__setitem__)
    assert "in _fail_at" in str(raised.value.__cause__)  # the worker's traceback
    assert returned[2] == [4]


def test_tournament_options_name_the_backends() -> None:
    args = build_parser().parse_args(["--agents", "value", "random", "--backend", "ray", "--ray-address", "auto"])
    assert (args.backend, args.ray_address) == (RAY, "auto")
    with pytest.raises(SystemExit):
        build_parser().parse_args(["--agents", "value", "random", "--backend", "dask"])


# ----------------------------------------------------------------------------- Ray
ray = require("ray")


# Ray's workers cannot import this test module (pytest put its folder on the path of this process
# only): its work functions travel by value.
ray.cloudpickle.register_pickle_by_value(sys.modules[__name__])


@pytest.fixture(scope="module")
def local_ray():
    """A Ray of 2 CPUs for this module's tests (a Ray left running by another test is stopped first).
    A new local Ray, never one already running on the machine (a run killed earlier may have left
    one behind, and joining it would refuse ``num_cpus``)."""
    ray.shutdown()
    ray.init(address="local", num_cpus=2, include_dashboard=False, log_to_driver=False)
    yield
    ray.shutdown()


def _tournament() -> TournamentConfig:
    agents = tuple(map(parse_agent_spec, ["value", "hoarder", "random"]))
    return TournamentConfig(agents, num_players=3, deals=4, seed=5)


def _games(result) -> list[tuple]:
    return [(r.index, r.result.seed, tuple(r.result.vp), tuple(r.result.winners)) for r in result.records]


def test_a_tournament_gives_the_same_games_on_both_backends(local_ray) -> None:
    config = _tournament()
    local = run_tournament(config, workers=2, progress=False)
    on_ray = run_tournament(config, workers=2, progress=False, backend=RAY)
    assert _games(on_ray) == _games(local) and len(local.records) == 12
    assert ray.is_initialized()  # the caller's Ray is left running


def test_game_generation_gives_the_same_samples_on_both_backends(local_ray) -> None:
    config = SelfPlayConfig(players=(2, 3), teacher=parse_agent_spec("value"), seed=3)
    here = generate(config, range(6))
    on_ray = generate(config, range(6), runner=Runner(RAY, 2))
    np.testing.assert_array_equal(on_ray.counts, here.counts)
    np.testing.assert_array_equal(on_ray.actions, here.actions)
    np.testing.assert_array_equal(on_ray.games, here.games)


def test_ray_stops_at_a_stopping_result_and_reraises_a_task_error(local_ray) -> None:
    items = list(range(40))
    returned = _run(Runner(RAY, 2), partial(_fail_at, doomed=99), [-1, *items], 1, stops_run=_negative)
    assert returned[0] == [-1]
    # No batch starts once the stop is seen: only those in flight (2 per CPU) and those that returned
    # before the stopping one was collected finish, never the 41.
    assert len(returned) < 20
    with pytest.raises(ArithmeticError, match="item 7 is doomed"):
        _run(Runner(RAY, 2), partial(_fail_at, doomed=7), items, 4)


@pytest.mark.parametrize("first", [-1, -2], ids=["stop", "error"])
def test_a_ray_stop_or_error_records_every_batch_in_flight(local_ray, tmp_path: Path, first: int) -> None:
    _check_every_item_started_is_recorded(Runner(RAY, 2), tmp_path, first)


def test_a_dead_ray_worker_is_named_with_its_items(local_ray) -> None:
    with pytest.raises(WorkerCrashedError, match=r"batch 1: item 2; item 3"):
        Runner(RAY, 2).run(
            partial(_die_at, doomed=3),
            [Batch(0, [0, 1]), Batch(1, [2, 3])],
            lambda index, results: None,
            describe=lambda item: f"item {item}",
        )


def _node(item: int) -> tuple[int, str]:
    import time

    time.sleep(0.5)  # long enough that the second node's worker starts while there is work left
    return item, ray.get_runtime_context().get_node_id()


def test_a_two_node_cluster_plays_the_same_tournament() -> None:
    with two_node_cluster():
        returned = _run(Runner(RAY, 2), _node, list(range(12)), 1)
        assert len({node for values in returned.values() for _item, node in values}) == 2  # both nodes worked
        config = _tournament()
        assert _games(run_tournament(config, workers=2, progress=False, backend=RAY)) == _games(
            run_tournament(config, workers=1, progress=False)
        )


def test_a_run_started_locally_is_finished_on_ray(local_ray, tmp_path) -> None:
    """The run folder does not record the backend: --resume on Ray plays only the missing games
    and the whole equals an uninterrupted run."""
    from experiments.tournament import GAMES_FILE

    config = _tournament()
    full = run_tournament(config, workers=2, progress=False, out_dir=tmp_path)
    path = tmp_path / GAMES_FILE
    lines = path.read_text().splitlines(keepends=True)
    path.write_text("".join(lines[:5]))  # the header and 4 games: as if interrupted
    resumed = run_tournament(config, workers=2, progress=False, out_dir=tmp_path, resume=True, backend=RAY)
    assert _games(resumed) == _games(full)
    assert len(path.read_text().splitlines()) == 13
