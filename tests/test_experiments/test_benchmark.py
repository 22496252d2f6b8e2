"""The benchmark script runs and saves its figures (a smoke test: speed is measured by the
script itself, never asserted in tests)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from optional_extras import require

from experiments.benchmarks import engine as benchmark
from experiments.benchmarks.instructions import run_loop


def test_benchmark_saves_best_and_median_of_its_repeats(tmp_path: Path) -> None:
    out = tmp_path / "bench.json"
    result = benchmark.main(["--engine-games", "1", "--env-games", "1", "--repeats", "3", "--out", str(out)])
    assert json.loads(out.read_text()) == result
    assert [row["players"] for row in result["rows"]] == [2, 3, 4]
    for row in result["rows"]:
        for name in ("engine_games_per_s", "engine_decisions_per_s", "raw_env_steps_per_s", "env_steps_per_s"):
            runs = row["runs"][name]
            assert len(runs) == 3 and all(value > 0 for value in runs)
            assert row[name] == max(runs)
            assert min(runs) <= row[name.replace("_per_s", "_per_s_median")] <= max(runs)


def test_benchmark_rejects_a_zero_count(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        benchmark.main(["--repeats", "0"])
    assert "--repeats must be at least 1, got 0" in capsys.readouterr().err


def test_instruction_count_loops_count_only_the_requested_games() -> None:
    """The loop run under valgrind plays an uncounted start-up game, then the counted ones."""
    assert run_loop("engine", 2, 0) == 0
    one = run_loop("engine", 2, 1)
    assert one == benchmark.engine_playouts(2, 1, seed=0) > 50
    assert run_loop("raw_env", 2, 1) == one  # the same seeded game, one step per choice
    assert run_loop("env", 2, 1) == one


def test_the_snapshot_benchmark_times_both_ways_for_each_pool_size(tmp_path: Path) -> None:
    require("torch")
    from experiments.benchmarks import snapshots

    out = tmp_path / "snapshots.json"
    assert snapshots.main(["--snapshots", "1", "3", "--games", "8", "--steps", "3", "--out", str(out)]) == 0
    figures = json.loads(out.read_text())["microseconds_per_step"]
    assert set(figures) == {"1", "3"}
    for row in figures.values():
        assert row["stacked"] > 0 and row["one per snapshot"] > 0
        assert row["ratio"] == pytest.approx(row["one per snapshot"] / row["stacked"], rel=0.05)


def _small_run(folder: Path, games: int = 8, decisions: int = 600) -> tuple[Path, int]:
    """A finished self-play run of ``decisions`` in ``games`` games at once, in ``folder / "run"``,
    with snapshots in its pool; and how many it keeps."""
    from experiments.training import selfplay

    run = folder / "run"
    settings = selfplay.Args(
        out=run, decisions=decisions, num_games=games, rollout_steps=8, hidden=(8,), minibatch=32, snapshot_every=150,
        eval_every=0, tensorboard=False, log_seconds=1e9,
    )  # fmt: skip
    selfplay.train(settings)
    kept = int((run / "progress.csv").read_text().splitlines()[-1].split(",")[-1])
    assert kept >= 2  # the run made snapshots to keep
    return run, kept


def _files(folder: Path) -> dict[str, bytes]:
    return {path.name: path.read_bytes() for path in folder.iterdir() if path.is_file()}


def test_the_pool_cost_benchmark_times_a_run_with_its_pool_and_without(tmp_path: Path) -> None:
    """The run resumed keeps its snapshots, the run started from its network has none, and the
    run folder timed is left as it was."""
    require("torch")
    from experiments.benchmarks import pool_cost

    run, kept = _small_run(tmp_path)
    before = _files(run)

    out = tmp_path / "pool.json"
    argv = ["--run", str(run), "--updates", "3", "--warmup", "1", "--repeats", "2", "--out", str(out)]
    assert pool_cost.main(argv) == 0
    result = json.loads(out.read_text())
    assert result["medians"]["with its pool"]["snapshots"] == kept  # and no new one while timed
    assert result["medians"]["empty pool"]["snapshots"] == 0
    for figures in result["medians"].values():
        assert figures["decisions_per_s"] > 0 and figures["games_per_s"] >= 0
    assert result["ratio"] == pytest.approx(
        result["medians"]["empty pool"]["decisions_per_s"] / result["medians"]["with its pool"]["decisions_per_s"],
        rel=1e-3,
    )
    assert _files(run) == before


def test_the_pool_cost_benchmark_refuses_a_folder_without_a_run(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from experiments.benchmarks import pool_cost

    with pytest.raises(SystemExit) as stopped:
        pool_cost.main(["--run", str(tmp_path)])
    assert stopped.value.code == 2
    assert (
        f"--run {tmp_path}: not a self-play run to time ({tmp_path / 'checkpoint.pt'} is missing)"
        in capsys.readouterr().err
    )


def test_the_collector_benchmark_times_each_collection_and_leaves_the_collector_on(tmp_path: Path) -> None:
    """Its figures come from the collections it saw (none while switched off), and it leaves the
    collector as it found it, whatever happened in the loop."""
    import gc

    from experiments.benchmarks import collector

    out = tmp_path / "collector.json"
    assert collector.main(["--players", "4", "--games", "8", "--steps", "400", "--warmup", "5", "--repeats", "2",
                           "--out", str(out)]) == 0  # fmt: skip
    assert gc.isenabled() and not any(isinstance(callback, collector.CollectorClock) for callback in gc.callbacks)
    figures = json.loads(out.read_text())["players"]["4"]
    assert len(figures["collections"]) == 3 and figures["collections"][0] > 0, "8 games still fill the young generation"
    assert 0 < figures["collector_share"] < 1 and figures["promoted"] >= 0
    assert figures["off / on"] > 0 and figures["on_decisions_per_s"] > 0 and figures["off_decisions_per_s"] > 0


def test_the_collection_benchmark_splits_a_step_into_parts_that_add_up(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Every part is timed (a nested part within its parent), the parts outside one another and
    the rest add up to the step, the pool is the run's own, the run folder is left as it was and
    the sparse rows' function is put back."""
    require("torch")
    from experiments.benchmarks import collection
    from experiments.training.tensors import SparseRows

    run, kept = _small_run(tmp_path, games=32, decisions=8000)  # games dealt since the first snapshot
    before, sparse_rows = _files(run), SparseRows.of
    out = tmp_path / "collection.json"
    assert collection.main(["--run", str(run), "--rollouts", "12", "--warmup", "1", "--out", str(out)]) == 0
    result = json.loads(out.read_text())
    parts = result["parts_ms_per_step"]
    assert list(parts) == [*collection.PARTS, collection.REST]
    assert all(parts[label] > 0 for label in collection.PARTS)
    assert parts["  dealing new games"] <= parts["the batched games' step"]
    assert parts["  the snapshots' forward and draw"] <= parts["the opponents' moves"]
    outer = sum(milliseconds for label, milliseconds in parts.items() if not label.startswith(" "))
    # The sparse rows count once as their own part and, for the snapshots, within the opponents'.
    assert outer - parts["the sparse rows"] <= result["ms_per_step"] * 1.001 <= outer * 1.002
    assert result["snapshots"] == kept and result["steps"] == 12 * 8 and result["games"] == 32
    assert _files(run) == before and SparseRows.of is sparse_rows
    with pytest.raises(SystemExit) as stopped:
        collection.main(["--run", str(tmp_path)])
    assert stopped.value.code == 2 and "not a self-play run to time" in capsys.readouterr().err
