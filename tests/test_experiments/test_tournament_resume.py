"""Stopping and resuming the tournament command as a user does: a stop (Ctrl-C or SIGTERM) saves
the finished games, prints the line that resumes the run with the free options given and exits 0;
``--resume DIR`` alone finishes the run with the settings recorded there, as an uninterrupted run
would; a setting given with ``--resume`` must be the recorded one; ``--no-progress`` runs print a
plan line and plain progress lines. Tiny tournaments of a local uniform agent keep these fast.

The stops are deterministic: an agent sends the signal to its own process in chosen games (the
real signal path: the handler, then the game abandoned and the run stopped), or the command runs
in a child process stopped with Ctrl-C once it has saved some games."""

from __future__ import annotations

import csv
import itertools
import json
import os
import random
import signal
import time
from functools import partial
from pathlib import Path

import pytest
from interrupts import interrupt

import experiments.tournament.runner as runner_module
from experiments.tournament import GAMES_FILE, RUN_FILE, build_parser, main
from experiments.tournament.progress import ProgressLines
from experiments.tournament.resume import FREE_OPTIONS, SETTING_OPTIONS

TESTS = Path(__file__).resolve().parents[1]


class UniformAgent:
    """Uniform over the legal actions; ``delay`` seconds of thought per decision (a run long
    enough to be stopped from outside)."""

    name = "uniform"

    def __init__(self, delay: float = 0.0) -> None:
        self.delay = delay
        self.rng = random.Random(0)
        self.seed: int | None = None

    def start_game(self, seat: int, num_players: int, seed: int | None = None) -> None:
        self.seed = seed
        self.rng = random.Random(seed)

    def act(self, observation) -> int:
        if self.delay:
            time.sleep(self.delay)
        return self.rng.choice(observation.legal_actions)


class SignallingAgent(UniformAgent):
    """Sends ``signal_name`` to its own process at its first move of the games whose agent seed is
    divisible by 5 (as a user's Ctrl-C or ``kill`` would come, but at a known game); with
    ``signal_name`` None it plays as UniformAgent."""

    signal_name: str | None = None

    def act(self, observation) -> int:
        if self.signal_name is not None and self.seed is not None and self.seed % 5 == 0:
            os.kill(os.getpid(), signal.Signals[self.signal_name])
        return super().act(observation)


UNIFORM = f"{__name__}.UniformAgent"
SIGNALLING = f"{__name__}.SignallingAgent"
#: The command of a 12-game run stopped by SIGNALLING (seed 3: its first signal comes in game 4).
STOPPED = ["--agents", UNIFORM, SIGNALLING, "--deals", "6", "--seed", "3"]
RESUME = "resume with: python -m experiments.tournament --resume"


def game_rows(folder: Path) -> list[dict[str, str]]:
    """``games.csv`` without the thinking times, which vary between runs."""
    with (folder / GAMES_FILE).open(newline="") as handle:
        return [{key: value for key, value in row.items() if key != "seconds"} for row in csv.DictReader(handle)]


def folder_contents(folder: Path) -> dict[str, bytes]:
    return {str(path.relative_to(folder)): path.read_bytes() for path in sorted(folder.rglob("*")) if path.is_file()}


def _sigterm_not_handled(signum: int, frame: object) -> None:
    raise AssertionError("the command left SIGTERM to its default handler, which ends the process")


def stop(folder: Path, *options: str, signal_name: str = "SIGINT") -> int:
    """Run STOPPED into ``folder`` with ``options`` until SignallingAgent stops it (a SIGTERM the
    command does not handle fails the test instead of ending the test session)."""
    SignallingAgent.signal_name = signal_name
    previous = signal.signal(signal.SIGTERM, _sigterm_not_handled)
    try:
        return main([*STOPPED, "--out", str(folder), *options])
    finally:
        SignallingAgent.signal_name = None
        signal.signal(signal.SIGTERM, previous)


# ----------------------------------------------------------------------------- stopping
@pytest.mark.parametrize("signal_name", ["SIGINT", "SIGTERM"])
def test_a_stop_saves_the_finished_games_and_exits_0_with_the_resume_line(
    tmp_path: Path, signal_name: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """Before: exit status 130, and a resume line without the options given (SIGTERM lost the
    games in progress)."""
    code = stop(tmp_path, "--workers", "1", "--keep-going", "--no-plot", "--no-progress", signal_name=signal_name)
    captured = capsys.readouterr()
    assert code == 0, captured.err
    assert "Traceback" not in captured.out + captured.err
    assert [int(row["index"]) for row in game_rows(tmp_path)] == [0, 1, 2, 3]  # game 4 was stopped
    resume_line = captured.out.splitlines()[-1]
    assert resume_line == (
        f"stopped; the finished games are saved in {tmp_path / GAMES_FILE}; {RESUME} {tmp_path} "
        "--workers 1 --keep-going --no-plot --no-progress"
    )


def test_ctrl_c_on_the_command_line_exits_0_with_the_resume_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The real thing: the command in its own process, Ctrl-C once it has saved three games."""
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join([str(TESTS), str(Path(__file__).parent)]))  # the agents
    out = tmp_path / "run"
    games = out / GAMES_FILE
    command = ["--agents", f"{UNIFORM}:delay=0.002", UNIFORM, "--deals", "400",
               "--workers", "1", "--no-progress", "--out", str(out)]  # fmt: skip
    stdout = interrupt("experiments.tournament", command, ready=lambda: games.exists() and len(game_rows(out)) >= 3)
    assert stdout.startswith("plan: 800 games (400 deals x 2 seatings x 1 table); 800 to play on 1 worker (local)\n")
    assert stdout.rstrip().endswith(f"{RESUME} {out} --workers 1 --no-progress")
    assert 3 <= len(game_rows(out)) < 800


# ----------------------------------------------------------------------------- resuming
def test_every_option_is_either_a_setting_of_the_run_or_free() -> None:
    """A new option must be sorted: recorded and checked on resume, or repeated in the resume line."""
    assert not set(SETTING_OPTIONS) & set(FREE_OPTIONS)
    options = set(vars(build_parser().parse_args([])))
    assert options == {*SETTING_OPTIONS, *FREE_OPTIONS, "out", "resume", "list_agents"}


def test_resume_alone_finishes_the_run_as_an_uninterrupted_run(tmp_path: Path) -> None:
    """Before: ``--resume DIR`` alone failed with "--agents is required"."""
    stopped, whole = tmp_path / "stopped", tmp_path / "whole"
    assert stop(stopped, "--workers", "1", "--no-progress", "--no-plot") == 0
    assert 0 < len(game_rows(stopped)) < 12
    assert main(["--resume", str(stopped)]) == 0
    assert main([*STOPPED, "--out", str(whole), "--workers", "1", "--no-progress", "--no-plot"]) == 0
    assert len(game_rows(whole)) == 12
    assert game_rows(stopped) == game_rows(whole)
    assert json.loads((stopped / RUN_FILE).read_text()) == json.loads((whole / RUN_FILE).read_text())


def test_a_folder_that_recorded_no_logs_settings_resumes_alone(tmp_path: Path) -> None:
    """Run folders written before the logs and replay pages were recorded in run.json resume too."""
    assert stop(tmp_path, "--workers", "1", "--no-progress", "--no-plot") == 0
    recorded = json.loads((tmp_path / RUN_FILE).read_text())
    del recorded["save_logs"], recorded["replay_html"]
    (tmp_path / RUN_FILE).write_text(json.dumps(recorded))
    assert main(["--resume", str(tmp_path), "--workers", "1", "--no-progress", "--no-plot"]) == 0
    assert sorted(int(row["index"]) for row in game_rows(tmp_path)) == list(range(12))


@pytest.mark.parametrize(
    ("given", "named"),
    [
        (["--seed", "0"], "--seed 0 (recorded: 3)"),  # a default value typed is given too
        (["--deals", "5"], "--deals 5 (recorded: 6)"),
        (["--games", "20"], "--games 20, that is 10 deals (recorded: 6 deals)"),
        (["--agents", UNIFORM, "random"], f"--agents {UNIFORM} random (recorded: {UNIFORM} {SIGNALLING})"),
        (["--players", "3"], "--players 3 (recorded: 2)"),
        (["--mode", "round-robin"], "--mode round-robin (recorded: head-to-head)"),
        (["--seatings", "all"], "--seatings all (recorded: cyclic)"),
        (["--penalty", "bluffs"], "--penalty bluffs (recorded: standard)"),
        (["--strict-bids"], "--strict-bids on (recorded: off)"),
        (["--preset", "small"], "--preset small (recorded: standard)"),
        (["--only-games", "2", "1"], "--only-games 1 2 (recorded: none)"),
        (["--save-logs", "logs"], "--save-logs logs (recorded: none)"),
        (["--replay-html", "1"], "--replay-html 1 (recorded: none)"),
    ],
)
def test_resume_refuses_a_setting_that_differs_from_the_recorded_one(
    tmp_path: Path, given: list[str], named: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """Exit status 2, an error naming the option with the recorded and the given value, and
    nothing written."""
    assert stop(tmp_path, "--workers", "1", "--no-progress", "--no-plot") == 0
    before = folder_contents(tmp_path)
    capsys.readouterr()
    with pytest.raises(SystemExit) as exit_info:
        main(["--resume", str(tmp_path), "--workers", "1", *given])
    assert exit_info.value.code == 2
    error = capsys.readouterr().err
    assert f"error: --resume {tmp_path} continues the run recorded there with its own settings" in error
    assert named in error and "Traceback" not in error
    assert folder_contents(tmp_path) == before


def test_resume_accepts_the_recorded_settings_and_any_free_option(tmp_path: Path) -> None:
    assert stop(tmp_path, "--workers", "1", "--no-progress", "--no-plot") == 0
    argv = ["--resume", str(tmp_path), "--agents", UNIFORM, SIGNALLING, "--seed", "3", "--games", "11",
            "--penalty", "standard", "--workers", "2", "--keep-going", "--no-progress", "--no-plot"]  # fmt: skip
    assert main(argv) == 0
    assert sorted(int(row["index"]) for row in game_rows(tmp_path)) == list(range(12))


def test_resume_of_a_folder_without_a_run_is_a_usage_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_info:
        main(["--resume", str(tmp_path / "nothing")])
    assert exit_info.value.code == 2
    assert f"--resume {tmp_path / 'nothing'}: no tournament run there" in capsys.readouterr().err
    assert not (tmp_path / "nothing").exists()


# ----------------------------------------------------------------------------- what --no-progress prints
def test_progress_lines_come_every_tenth_of_the_games_or_every_10_s_whichever_is_rarer() -> None:
    lines: list[str] = []
    fast = ProgressLines(20, 0, lines.append, clock=itertools.count(0, 10).__next__)  # 10 s a game
    for _ in range(4):
        fast.update()
    assert lines == [
        "2 of 20 games finished (10%); 20 s so far, about 3.0 min left",
        "4 of 20 games finished (20%); 40 s so far, about 2.7 min left",
    ]
    lines.clear()
    slow = ProgressLines(20, 5, lines.append, clock=itertools.count(0, 1).__next__)  # 1 s a game; 5 done before
    for _ in range(15):
        slow.update()
    assert lines == ["15 of 20 games finished (75%); 10 s so far, about 5 s left"]  # 10 s, not 10% of the games


def test_no_progress_prints_the_plan_and_progress_lines(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Before: nothing at all until the summary. Here every game takes 10 s by the test's clock."""
    clock = partial(ProgressLines, clock=itertools.count(0, 10).__next__)
    monkeypatch.setattr(runner_module, "ProgressLines", clock)
    assert stop(tmp_path, "--workers", "1", "--no-progress", "--no-plot") == 0
    assert capsys.readouterr().out.splitlines()[:4] == [
        "plan: 12 games (6 deals x 2 seatings x 1 table); 12 to play on 1 worker (local)",
        "2 of 12 games finished (17%); 20 s so far, about 100 s left",
        "4 of 12 games finished (33%); 40 s so far, about 80 s left",
        "",  # the stop
    ]
    assert main(["--resume", str(tmp_path), "--workers", "1", "--no-progress", "--no-plot"]) == 0
    output = capsys.readouterr().out.splitlines()
    assert (
        output[0] == "plan: 12 games (6 deals x 2 seatings x 1 table); 4 finished before; 8 to play on 1 worker (local)"
    )
    assert output[1:5] == [  # every 2 games (the 10 s pass every game)
        f"{done} of 12 games finished ({done / 12:.0%}); {10 * (done - 4)} s so far, about {10 * (12 - done)} s left"
        for done in (6, 8, 10, 12)
    ]
    assert output[5].startswith("Biblios head-to-head, 2 players: 12 games")
