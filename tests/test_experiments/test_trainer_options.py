"""The trainers check every number at parse time: a bad value is a usage error (exit status 2, no
traceback) that names the option and the range expected, and nothing is written. ``--out``
naming a file, and ``--resume RUN`` with an ``--out`` naming another folder, are refused alike."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from experiments import train_network, train_ppo, train_rllib, train_selfplay
from experiments.common.cli import COMMON_NAMES

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
    named = re.search(
        rf"argument {option}(/--[a-z-]+)?: expected {re.escape(expected)}, got ", error
    )  # and its other name
    assert named and value in error.splitlines()[-1], error
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


#: The trainers' parsers, by the command's name.
PARSERS = {
    "selfplay": train_selfplay.build_parser,
    "ppo": train_ppo.build_parser,
    "network": train_network.build_parser,
    "rllib": train_rllib.build_parser,
}
#: Per trainer, the setting that each common name sets there (where the trainer has that setting).
COMMON_SETTINGS = {
    "selfplay": {"--epochs": "epochs", "--minibatch": "minibatch", "--clip": "clip", "--entropy": "entropy",
                 "--value-weight": "value_weight", "--num-games": "num_games", "--rollout-steps": "rollout_steps",
                 "--learning-rate": "learning_rate", "--gamma": "gamma", "--gae-lambda": "gae_lambda"},
    "ppo": {"--epochs": "n_epochs", "--minibatch": "batch_size", "--clip": "clip_range", "--entropy": "ent_coef",
            "--value-weight": "vf_coef", "--num-games": "n_envs", "--rollout-steps": "n_steps",
            "--learning-rate": "learning_rate", "--gamma": "gamma", "--gae-lambda": "gae_lambda"},
    "network": {"--epochs": "epochs", "--minibatch": "batch_size", "--value-weight": "value_weight",
                "--learning-rate": "learning_rate"},
    "rllib": {"--epochs": "epochs", "--minibatch": "minibatch_size", "--learning-rate": "learning_rate"},
}  # fmt: skip


@pytest.mark.parametrize("trainer", PARSERS)
def test_the_common_names_set_the_same_settings_in_every_trainer(trainer: str) -> None:
    """One set of names across the trainers (``COMMON_NAMES``): each sets the trainer's own
    setting of that meaning, whatever the trainer's own name for it."""
    parser = PARSERS[trainer]()
    settings = COMMON_SETTINGS[trainer]
    assert set(settings) <= set(COMMON_NAMES)
    for name, setting in settings.items():
        default = parser.get_default(setting)
        value = "3" if isinstance(default, int) else "0.375"
        names = next(action for action in parser._actions if action.dest == setting).option_strings
        assert name in names, (trainer, name, names)  # a name of its own, not a prefix argparse completes
        own = names[0]
        given = vars(parser.parse_args([name, value]))[setting]
        assert given == vars(parser.parse_args([own, value]))[setting] != default, (trainer, name, own)
