"""Tournament faults: results are saved as games finish, an agent's fault
(any exception, ``SystemExit`` included) names its game and seed, ``--keep-going`` records it
and plays on, and ``--resume DIR`` finishes an interrupted run without replaying its games.
Tiny tournaments of a local uniform agent keep these fast."""

from __future__ import annotations

import csv
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from optional_extras import require

import experiments.tournament.runner as runner_module
from experiments.common.match import AgentError, parse_agent_spec
from experiments.tournament import (
    GAMES_FILE,
    RUN_FILE,
    GameFailedError,
    RunFolderError,
    TournamentConfig,
    main,
    run_tournament,
    write_results,
)

ROOT = Path(__file__).resolve().parents[2]


class UniformAgent:
    """Uniform over the legal actions; ``delay`` seconds of thought per decision (to interrupt)."""

    name = "uniform"

    def __init__(self, delay: float = 0.0) -> None:
        self.delay = delay
        self.seed: int | None = None

    def start_game(self, seat: int, num_players: int, seed: int | None = None) -> None:
        import random

        self.seed = seed
        self.rng = random.Random(seed)

    def act(self, observation) -> int:
        if self.delay:
            time.sleep(self.delay)
        return self.rng.choice(observation.legal_actions)


class FlakyAgent(UniformAgent):
    """Crashes in the games whose agent seed is divisible by ``every`` (deterministic per game)."""

    def __init__(self, every: int = 3) -> None:
        super().__init__()
        self.every = every

    def act(self, observation) -> int:
        if self.seed is not None and self.seed % self.every == 0:
            raise KeyError("lost its notes")
        return super().act(observation)


class ExitingAgent(UniformAgent):
    def act(self, observation) -> int:
        sys.exit(0)


class InterruptedAgent(UniformAgent):
    """Stands for Ctrl-C while ``armed``: raises KeyboardInterrupt in the games whose agent seed
    is divisible by 5; disarmed, it plays as UniformAgent."""

    armed = True

    def act(self, observation) -> int:
        if self.armed and self.seed is not None and self.seed % 5 == 0:
            raise KeyboardInterrupt
        return super().act(observation)


def spec(name: str, params: str = "") -> str:
    return f"{__name__}.{name}" + (f":{params}" if params else "")


UNIFORM = spec("UniformAgent")


def config(*agents: str, deals: int = 6, seed: int = 3) -> TournamentConfig:
    return TournamentConfig(tuple(parse_agent_spec(text) for text in agents), deals=deals, seed=seed)


def games_csv(folder: Path) -> list[dict[str, str]]:
    with (folder / GAMES_FILE).open(newline="") as handle:
        return list(csv.DictReader(handle))


def flaky_games(tournament: TournamentConfig) -> list[int]:
    """The games of ``tournament`` in which a FlakyAgent:every=3 crashes (seat 1 holds it)."""
    return [task.index for task in tournament.schedule() if task.agent_seeds[task.lineup.index(1)] % 3 == 0]


# ----------------------------------------------------------------------------- agent faults
@pytest.mark.parametrize("workers", [1, 2])
def test_a_crashing_game_stops_the_run_but_keeps_the_finished_games(tmp_path: Path, workers: int) -> None:
    tournament = config(UNIFORM, spec("FlakyAgent"))
    crashing = flaky_games(tournament)
    assert 0 < len(crashing) < len(tournament.schedule())
    with pytest.raises(GameFailedError, match=r"game \d+ \(deal \d+, seed \d+\): agent .*FlakyAgent.*KeyError") as info:
        run_tournament(tournament, workers=workers, progress=False, out_dir=tmp_path)
    assert info.value.failure.index in crashing
    saved = [int(row["index"]) for row in games_csv(tmp_path)]
    assert saved and not set(saved) & set(crashing)  # the finished games are on disk, as they finished
    if workers == 1:
        assert sorted(saved) == list(range(min(crashing)))


@pytest.mark.parametrize("workers", [1, 2])
def test_keep_going_records_the_failures_and_plays_every_other_game(tmp_path: Path, workers: int) -> None:
    tournament = config(UNIFORM, spec("FlakyAgent"))
    crashing = flaky_games(tournament)
    result = run_tournament(tournament, workers=workers, progress=False, keep_going=True, out_dir=tmp_path)
    assert [failure.index for failure in result.failures] == crashing
    assert [record.index for record in result.records] == [
        task.index for task in tournament.schedule() if task.index not in crashing
    ]
    failure = result.failures[0]
    assert f"game {failure.index} (deal {failure.deal}, seed {failure.seed})" in failure.error
    assert "KeyError: 'lost its notes'" in failure.error
    paths = write_results(result, tmp_path, plot=False)
    assert (tmp_path / "failures.csv") in paths
    with (tmp_path / "failures.csv").open(newline="") as handle:
        assert [int(row["index"]) for row in csv.DictReader(handle)] == crashing
    document = json.loads((tmp_path / "results.json").read_text())
    assert document["games_failed"] == len(crashing) and len(document["failures"]) == len(crashing)


def test_keep_going_gives_the_same_results_for_any_worker_count(tmp_path: Path) -> None:
    tournament = config(UNIFORM, spec("FlakyAgent"))
    one = run_tournament(tournament, workers=1, progress=False, keep_going=True)
    two = run_tournament(tournament, workers=2, progress=False, keep_going=True)
    assert one.records == two.records and one.failures == two.failures


def test_system_exit_in_an_agent_is_an_error_naming_the_game(tmp_path: Path, capsys) -> None:
    """Before: the run ended with status 0 and printed nothing."""
    code = main(["--agents", UNIFORM, spec("ExitingAgent"), "--games", "2", "--workers", "1", "--out",
                 str(tmp_path), "--no-progress"])  # fmt: skip
    error = capsys.readouterr().err
    assert code == 1
    assert "game 0 (deal 0, seed " in error and "SystemExit" in error
    assert "--only-games 0" in error and f"--resume {tmp_path}" in error and "--keep-going" in error


def test_command_line_keep_going_reports_failures_and_exits_1(tmp_path: Path, capsys) -> None:
    code = main(["--agents", UNIFORM, spec("FlakyAgent"), "--deals", "6", "--seed", "3", "--workers", "1",
                 "--out", str(tmp_path), "--no-progress", "--no-plot", "--keep-going"])  # fmt: skip
    output = capsys.readouterr().out
    assert code == 1
    crashing = flaky_games(config(UNIFORM, spec("FlakyAgent")))
    assert f"{len(crashing)} games failed" in output and "failures.csv" in output
    assert len(games_csv(tmp_path)) == 12 - len(crashing)


# ----------------------------------------------------------------------------- interrupt and resume
@pytest.mark.parametrize("workers", [1, 2])
def test_interrupted_run_saves_its_games_and_resume_finishes_it_alike(
    tmp_path: Path, workers: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Ctrl-C (here raised inside one game) leaves games.csv with the finished games; resuming
    plays only the missing games, and the whole equals an uninterrupted run."""
    tournament = config(UNIFORM, spec("InterruptedAgent"))
    with pytest.raises(KeyboardInterrupt):
        run_tournament(tournament, workers=workers, progress=False, out_dir=tmp_path)
    saved = {int(row["index"]) for row in games_csv(tmp_path)}
    assert 0 < len(saved) < 12
    with pytest.raises(RunFolderError, match="differs from the run recorded"):
        run_tournament(config(UNIFORM, UNIFORM), workers=workers, progress=False, out_dir=tmp_path, resume=True)
    monkeypatch.setattr(InterruptedAgent, "armed", False)
    played: list[int] = []
    original = runner_module.run_game

    def counting_run_game(task, config, log_dir=None):
        played.append(task.index)
        return original(task, config, log_dir)

    monkeypatch.setattr(runner_module, "run_game", counting_run_game)
    resumed = run_tournament(tournament, workers=1, progress=False, out_dir=tmp_path, resume=True)
    assert sorted(played) == sorted(set(range(12)) - saved)
    assert resumed.records == run_tournament(tournament, workers=1, progress=False).records
    assert sorted(int(row["index"]) for row in games_csv(tmp_path)) == list(range(12))


def test_resume_checks_the_config_and_the_folder(tmp_path: Path) -> None:
    tournament = config(UNIFORM, UNIFORM, deals=2)
    with pytest.raises(RunFolderError, match=r"no run\.json"):
        run_tournament(tournament, progress=False, out_dir=tmp_path / "empty", resume=True)
    run_tournament(tournament, workers=1, progress=False, out_dir=tmp_path)
    for other, named in (
        (config(UNIFORM, UNIFORM, deals=3), "deals 3 (recorded: 2)"),
        (TournamentConfig(tournament.agents, deals=2, seed=3, penalty="bluffs"), "penalty 'bluffs'"),
    ):
        with pytest.raises(RunFolderError, match=named.replace("(", r"\(").replace(")", r"\)")):
            run_tournament(other, progress=False, out_dir=tmp_path, resume=True)
    with pytest.raises(RunFolderError, match="only_games"):
        run_tournament(tournament, progress=False, out_dir=tmp_path, resume=True, only_games=[1])
    with pytest.raises(ValueError, match="needs out_dir"):
        run_tournament(tournament, progress=False, resume=True)
    again = run_tournament(tournament, workers=1, progress=False, out_dir=tmp_path, resume=True)
    assert len(again.records) == 4  # a finished run resumes to itself, playing nothing


def test_resume_replays_a_row_cut_short_and_rejects_a_row_of_another_game(tmp_path: Path) -> None:
    tournament = config(UNIFORM, UNIFORM, deals=2)
    full = run_tournament(tournament, workers=1, progress=False, out_dir=tmp_path)
    path = tmp_path / GAMES_FILE
    lines = path.read_text().splitlines(keepends=True)
    path.write_text("".join(lines[:3]) + lines[3][:20])  # killed while writing the third game
    resumed = run_tournament(tournament, workers=1, progress=False, out_dir=tmp_path, resume=True)
    assert resumed.records == full.records
    rows = path.read_text().splitlines(keepends=True)
    path.write_text(rows[0] + rows[1].replace(rows[1].split(",")[4], "12345", 1))  # another seed
    with pytest.raises(RunFolderError, match="line 2"):
        run_tournament(tournament, workers=1, progress=False, out_dir=tmp_path, resume=True)


def test_a_fresh_run_refuses_to_overwrite_an_unfinished_one(tmp_path: Path) -> None:
    interrupted = config(UNIFORM, spec("InterruptedAgent"))
    with pytest.raises(KeyboardInterrupt):
        run_tournament(interrupted, workers=1, progress=False, out_dir=tmp_path)
    with pytest.raises(RunFolderError, match="unfinished tournament run"):
        run_tournament(interrupted, workers=1, progress=False, out_dir=tmp_path)
    assert json.loads((tmp_path / RUN_FILE).read_text())["games"] == 12


def test_command_line_resume(tmp_path: Path, capsys) -> None:
    argv = ["--agents", UNIFORM, UNIFORM, "--deals", "2", "--workers", "1", "--no-progress", "--no-plot"]
    assert main([*argv, "--out", str(tmp_path)]) == 0
    capsys.readouterr()
    assert main([*argv, "--resume", str(tmp_path)]) == 0
    assert "4 games" in capsys.readouterr().out
    with pytest.raises(SystemExit) as exit_info:
        main([*argv[:-4], "--deals", "3", "--workers", "1", "--no-progress", "--resume", str(tmp_path)])
    assert exit_info.value.code == 2 and "--deals 3 (recorded: 2)" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        main([*argv, "--resume", str(tmp_path), "--out", str(tmp_path / "elsewhere")])
    assert "drop --out" in capsys.readouterr().err


@pytest.mark.parametrize("backend", ["local", "ray"])
def test_ctrl_c_from_a_terminal_saves_the_games_and_exits_0(tmp_path: Path, backend: str) -> None:
    """The real thing: SIGINT to the whole process group (what a terminal sends) of a 2-worker run,
    on local processes and on a local Ray that the command starts. Before: exit status 130."""
    if backend == "ray":
        require("ray")
    out = tmp_path / "run"
    command = [sys.executable, "-m", "experiments.tournament", "--agents", spec("UniformAgent", "delay=0.002"),
               UNIFORM, "--deals", "40", "--workers", "2", "--no-progress", "--out", str(out),
               "--backend", backend]  # fmt: skip
    environment = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(ROOT), str(ROOT / "tests"), str(Path(__file__).parent)]),
    }
    process = subprocess.Popen(command, cwd=ROOT, env=environment, start_new_session=True,
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)  # fmt: skip
    deadline = time.monotonic() + 120  # Ray takes several seconds to start
    while time.monotonic() < deadline and process.poll() is None:
        if (out / GAMES_FILE).exists() and len((out / GAMES_FILE).read_text().splitlines()) > 3:
            break
        time.sleep(0.05)
    os.killpg(process.pid, signal.SIGINT)
    output, error = process.communicate(timeout=60)
    assert process.returncode == 0, error
    assert "Traceback" not in output + error
    resume = (
        f"resume with: python -m experiments.tournament --resume {out} --workers 2 --backend {backend} --no-progress"
    )
    assert output.rstrip().endswith(resume), output
    saved = [int(row["index"]) for row in games_csv(out)]
    assert 3 <= len(saved) < 80 and len(set(saved)) == len(saved)  # none twice


def test_agent_error_is_still_an_agent_error() -> None:
    """GameFailedError is the AgentError callers caught before (the API does not break)."""
    assert issubclass(GameFailedError, AgentError)
