"""``python -m experiments.studies.openspiel_duel``: OpenSpiel's IS-MCTS bot against project agents."""

from __future__ import annotations

import pytest
from optional_extras import require

require("pyspiel")

from experiments.studies import openspiel_duel  # noqa: E402


def test_a_short_duel_plays_both_seats_and_reports_the_win_rate(capsys: pytest.CaptureFixture[str]) -> None:
    assert openspiel_duel.main(["--games", "2", "--simulations", "2", "--opponent", "random", "--seed", "3"]) == 0
    out = capsys.readouterr().out
    assert "game 0: bot in seat 0" in out and "game 1: bot in seat 1" in out
    assert "IS-MCTS (2 simulations) vs random, 2 players, 2 games: win rate" in out


def test_a_bad_opponent_is_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_info:
        openspiel_duel.main(["--opponent", "nosuch"])
    assert exit_info.value.code == 2 and "unknown agent 'nosuch'" in capsys.readouterr().err
