"""The trainers check every number at parse time: a bad value is a usage error (exit status 2, no
traceback) that names the option and the range expected, and nothing is written. ``--out``
naming a file, and ``--resume RUN`` with an ``--out`` naming another folder, are refused alike."""

from __future__ import annotations

from pathlib import Path

import pytest

from experiments import train_network, train_ppo, train_rllib, train_selfplay

TRAINERS = {"selfplay": train_selfplay.main, "ppo": train_ppo.main, "network": train_network.main}
BAD = [
    ("selfplay", "--learning-rate", "-1", "a positive number"),
    ("selfplay", "--gamma", "5", "a number in [0, 1]"),
    ("selfplay", "--gae-lambda", "-0.1", "a number in [0, 1]"),
    ("selfplay", "--clip", "0", "a positive number"),
    ("selfplay", "--entropy", "-1", "a number >= 0"),
    ("selfplay", "--eval-every", "-5", "an integer >= 0"),
    ("selfplay", "--seed", "-3", "a non-negative integer seed"),
    ("selfplay", "--checkpoint-minutes", "nan", "a positive number"),
    ("ppo", "--learning-rate", "0", "a positive number"),
    ("ppo", "--bc-learning-rate", "-1e-3", "a positive number"),
    ("ppo", "--gamma", "1.5", "a number in [0, 1]"),
    ("ppo", "--clip-range", "-0.2", "a positive number"),
    ("ppo", "--vf-coef", "-1", "a number >= 0"),
    ("ppo", "--bc-games", "-1", "an integer >= 0"),
    ("ppo", "--dagger-rounds", "-2", "an integer >= 0"),
    ("ppo", "--eval-every", "-5", "an integer >= 0"),
    ("network", "--learning-rate", "inf", "a positive number"),
    ("network", "--value-weight", "-0.5", "a number >= 0"),
    ("network", "--teacher-share", "2", "a number in [0, 1]"),
    ("network", "--bootstrap-games", "0", "a positive integer"),
]


def _refused(main, argv: list[str], capsys) -> str:
    with pytest.raises(SystemExit) as stopped:
        main(argv)
    assert stopped.value.code == 2
    return capsys.readouterr().err


@pytest.mark.parametrize(("trainer", "option", "value", "expected"), BAD, ids=[f"{t}{o}={v}" for t, o, v, _ in BAD])
def test_a_number_out_of_range_is_a_usage_error_naming_it(trainer, option, value, expected, tmp_path, capsys) -> None:
    out = tmp_path / "run"
    error = _refused(TRAINERS[trainer], [f"{option}={value}", "--out", str(out)], capsys)
    assert f"argument {option}: expected {expected}, got " in error and value in error.splitlines()[-1], error
    assert "Traceback" not in error and not out.exists()


@pytest.mark.parametrize("trainer", [*TRAINERS, "rllib"])
def test_out_naming_a_file_is_refused(trainer, tmp_path, capsys) -> None:
    existing = tmp_path / "notes.txt"
    existing.write_text("mine")
    main = train_rllib.main if trainer == "rllib" else TRAINERS[trainer]
    error = _refused(main, ["--out", str(existing)], capsys)
    assert f"--out {existing} is a file: expected a run folder" in error, error
    assert existing.read_text() == "mine"


@pytest.mark.parametrize("trainer", TRAINERS)
def test_resume_with_another_out_is_refused(trainer, tmp_path: Path, capsys) -> None:
    run, other = tmp_path / "run", tmp_path / "other"
    run.mkdir()
    error = _refused(TRAINERS[trainer], ["--resume", str(run), "--out", str(other)], capsys)
    assert f"--resume {run} goes on in its own folder: leave out --out {other}" in error, error
    assert not other.exists()
