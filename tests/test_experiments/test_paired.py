"""``python -m experiments.studies.paired``: two tournaments on the same deals, one agent swapped, compared
deal by deal."""

from __future__ import annotations

from pathlib import Path

import pytest

from experiments.studies import paired
from experiments.tournament.cli import main as tournament


def run(folder: Path, *agents: str, deals: int = 3, seed: int = 17) -> Path:
    argv = ["--agents", *agents, "--deals", str(deals), "--seed", str(seed), "--workers", "1"]
    assert tournament([*argv, "--out", str(folder), "--no-progress", "--no-plot"]) == 0
    return folder


def test_a_swapped_agent_is_compared_deal_by_deal(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    a = paired.read_run(run(tmp_path / "a", "random", "value", "value"))
    b = paired.read_run(run(tmp_path / "b", "hoarder", "value", "value"))
    assert (a.agent, b.agent) == ("random", "hoarder") and a.seeds == b.seeds and len(a.seeds) == 9
    comparison = paired.compare(a, b)
    differences = [b.shares[deal] - a.shares[deal] for deal in range(3)]
    assert comparison.difference.estimate == pytest.approx(sum(differences) / 3)
    assert comparison.rate_b.estimate - comparison.rate_a.estimate == pytest.approx(comparison.difference.estimate)
    same = paired.compare(a, paired.read_run(tmp_path / "a"))
    assert (same.difference.low, same.difference.high) == (0.0, 0.0)  # a run against itself: no difference
    capsys.readouterr()
    assert paired.main([str(tmp_path / "a"), str(tmp_path / "b"), "--agent-b", "value"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == "3 deals, 9 games per run; 95 % intervals over deals"
    assert lines[1].startswith("A random: ") and lines[2].startswith("B value: ") and lines[3].startswith("B - A: ")


def test_runs_of_other_games_and_missing_agents_are_named(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    a = run(tmp_path / "a", "random", "value", deals=2)
    other_seed = run(tmp_path / "b", "random", "value", deals=2, seed=18)
    with pytest.raises(paired.PairingError, match="first different at game 0"):
        paired.compare(paired.read_run(a), paired.read_run(other_seed))
    missing = r"agent 'hoarder' did not play in .* \(its agents: \['random', 'value'\]\)"
    with pytest.raises(paired.PairingError, match=missing):
        paired.read_run(a, "hoarder")
    assert paired.main([str(a), str(tmp_path / "nothing")]) == 1
    assert "games.csv is missing" in capsys.readouterr().out
