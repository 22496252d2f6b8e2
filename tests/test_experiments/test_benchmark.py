"""The benchmark script runs and saves its figures (a smoke test: speed is measured by the
script itself, never asserted in tests)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

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
