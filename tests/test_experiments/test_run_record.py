"""The one record every trainer keeps in its run folder (``run.json``,
:mod:`experiments.training.runs`).

* A new run writes ``run.json``: the command, the observation/action layout, the settings and
  what else the trainer records; a folder that holds a run (the trainer's sign of one, another
  trainer's run, a tournament's folder) is refused with the one message, naming the way on.
* ``--resume`` reads the record back, or refuses with a RunFolderError naming the problem: no run
  there, a tournament's folder, another trainer's run, another layout.
* Each trainer's command refuses to resume another trainer's run, naming it.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from biblios_env.layout import LAYOUT_FINGERPRINT
from experiments import train_network, train_ppo, train_selfplay
from experiments.common.errors import RunFolderError
from experiments.common.match import AgentSpec
from experiments.tournament import TournamentConfig, run_tournament
from experiments.training.runs import RUN_FILE, read_run, record_run, start_run

PPO = "experiments.train_ppo"
RLLIB = "experiments.train_rllib"
SETTINGS = {"seed": 3, "hidden": [16, 8], "init": None}


@pytest.fixture(scope="module")
def tournament_folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A finished tournament's folder: it holds a ``run.json`` of the tournament's own shape."""
    folder = tmp_path_factory.mktemp("tournament")
    lineup = (AgentSpec("random"), AgentSpec("random"))
    run_tournament(TournamentConfig(lineup, deals=1), workers=1, progress=False, out_dir=folder)
    assert (folder / RUN_FILE).is_file()
    return folder


def test_a_new_run_writes_its_record(tmp_path: Path) -> None:
    out = tmp_path / "runs" / "new"
    start_run(out, PPO, SETTINGS, held=False, command_line="python -m experiments.train_ppo --seed 3")
    assert json.loads((out / RUN_FILE).read_text()) == {
        "command": PPO,
        "layout": LAYOUT_FINGERPRINT,
        "settings": SETTINGS,
        "command_line": "python -m experiments.train_ppo --seed 3",
    }
    assert sorted(path.name for path in out.iterdir()) == [RUN_FILE]  # written whole: no temporary left
    assert read_run(out, PPO)["settings"] == SETTINGS


def test_a_second_start_is_refused_with_the_way_on(tmp_path: Path) -> None:
    start_run(tmp_path, PPO, SETTINGS, held=False)
    message = f"{tmp_path} already holds a run: continue it with --resume {tmp_path}, or choose another --out"
    with pytest.raises(RunFolderError) as refused:
        start_run(tmp_path, PPO, {"seed": 4}, held=True)
    assert str(refused.value) == message
    assert read_run(tmp_path, PPO)["settings"] == SETTINGS  # nothing overwritten


def test_a_run_stopped_before_the_trainers_sign_of_a_run_starts_again(tmp_path: Path) -> None:
    """A trainer whose run.json alone is no run (no checkpoint, no log yet) starts it again."""
    start_run(tmp_path, RLLIB, SETTINGS, held=False)
    start_run(tmp_path, RLLIB, {"seed": 4}, held=False)
    assert read_run(tmp_path, RLLIB)["settings"] == {"seed": 4}


def test_a_start_in_another_trainers_run_is_refused_naming_it(tmp_path: Path) -> None:
    start_run(tmp_path, PPO, SETTINGS, held=False)
    with pytest.raises(
        RunFolderError, match=rf"already holds a run of {PPO}: continue it with python -m {PPO} --resume"
    ):
        start_run(tmp_path, RLLIB, SETTINGS, held=False)
    assert read_run(tmp_path, PPO)["settings"] == SETTINGS


def test_a_start_in_a_tournaments_folder_is_refused(tournament_folder: Path) -> None:
    before = (tournament_folder / RUN_FILE).read_text()
    with pytest.raises(RunFolderError, match=r"already holds a run of another program .*is not a trainer's run record"):
        start_run(tournament_folder, PPO, SETTINGS, held=False)
    assert (tournament_folder / RUN_FILE).read_text() == before


def test_resuming_an_empty_folder_names_the_missing_record(tmp_path: Path) -> None:
    with pytest.raises(RunFolderError, match=rf"--resume {tmp_path}: no run of {PPO} there \(.*run\.json is missing\)"):
        read_run(tmp_path, PPO)


def test_resuming_a_tournaments_folder_is_refused_clearly(tournament_folder: Path) -> None:
    with pytest.raises(RunFolderError, match=rf"run\.json is not a run of {PPO} \(not a trainer's run record"):
        read_run(tournament_folder, PPO)


def test_resuming_another_trainers_run_names_its_command(tmp_path: Path) -> None:
    start_run(tmp_path, PPO, SETTINGS, held=False)
    with pytest.raises(
        RunFolderError, match=rf"is not a run of {RLLIB} but of {PPO}: continue it with python -m {PPO}"
    ):
        read_run(tmp_path, RLLIB)


def test_resuming_a_run_of_another_layout_names_both(tmp_path: Path) -> None:
    record_run(tmp_path, PPO, SETTINGS)
    record = json.loads((tmp_path / RUN_FILE).read_text())
    (tmp_path / RUN_FILE).write_text(json.dumps({**record, "layout": "biblios_v0-000000000000"}))
    with pytest.raises(
        RunFolderError,
        match=rf"another observation/action layout \(biblios_v0-000000000000; this code has {LAYOUT_FINGERPRINT}\)",
    ):
        read_run(tmp_path, PPO)


def test_an_unreadable_record_is_no_trainers(tmp_path: Path) -> None:
    (tmp_path / RUN_FILE).write_text("{not json")
    with pytest.raises(RunFolderError, match="not a trainer's run record"):
        read_run(tmp_path, PPO)
    with pytest.raises(RunFolderError, match="already holds a run of another program"):
        start_run(tmp_path, PPO, SETTINGS, held=False)


@pytest.mark.parametrize(
    ("main", "other"),
    [(train_selfplay.main, PPO), (train_ppo.main, RLLIB), (train_network.main, "experiments.train_selfplay")],
    ids=["selfplay", "ppo", "network"],
)
def test_each_trainer_refuses_to_resume_another_trainers_run(
    main, other: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    record_run(tmp_path, other, SETTINGS)
    try:
        status = main(["--resume", str(tmp_path)])
    except SystemExit as error:  # argparse's usage error
        status = error.code
    assert status == 2
    assert f"but of {other}: continue it with python -m {other} --resume {tmp_path}" in capsys.readouterr().err
