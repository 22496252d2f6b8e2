"""Nothing finished is lost: a tournament interrupted (Ctrl-C to the command, Ctrl-C or a kill to a
worker) or stopped by a failing game, on local processes and on Ray. In each case every game a
worker finished is in games.csv, none twice, and ``--resume`` plays the rest, to the games of an
uninterrupted run.

One fault is planted per run by :class:`FaultAgent`: a game chosen by the test stalls at its first
decision until the test lets it go, so a signal lands in a known game. It is the second game of
its batch (batches of two games here), after a game that its worker finished. Each game's log
(``--save-logs``) is written by its worker as the game ends: the logs are the games that finished.

The Ray tests share one local Ray of 2 CPUs, which the commands join with ``--ray-address``; they
are slow (Ray takes about 20 s to start here) and the quick check of a Ray stop is in
``test_parallel.py``.
"""

from __future__ import annotations

import csv
import os
import random
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from optional_extras import require

from experiments.common.match import parse_agent_spec
from experiments.tournament import (
    GAMES_FILE,
    GameFailedError,
    TournamentConfig,
    TournamentResult,
    main,
    run_tournament,
)

ROOT = Path(__file__).resolve().parents[2]
#: Where the commands and Ray's workers find this module (its agents are named by import path).
IMPORT_PATH = os.pathsep.join([str(ROOT), str(ROOT / "tests"), str(Path(__file__).parent)])
DEALS = 16  # 32 games: batches of two games on two workers
STALL, GO, FAILED = "stall", "go", "failed"
#: How long a stalled game waits for the test at most (a broken test fails instead of hanging).
PATIENCE = 60.0


def _claim(path: Path, text: str) -> bool:
    """Whether this call created ``path`` with ``text`` before any other process (written aside,
    then linked into place: whoever reads it finds it whole)."""
    aside = path.with_name(f"{path.name}.{os.getpid()}")
    aside.write_text(text)
    try:
        os.link(aside, path)
        return True
    except FileExistsError:
        return False
    finally:
        aside.unlink()


class FaultAgent:
    """Uniform over the legal actions, one millisecond a decision until ``marks/go`` exists (so
    that a run lasts until the test acts). The game where its agent seed is ``stall`` stalls at
    its first decision until ``marks/go`` exists, having claimed ``marks/stall`` with its process
    id (once: played again, it plays on). With ``fail``, the first decision elsewhere during the
    stall raises (once: it claims ``marks/failed``) and lets the stalled game go on. Once
    ``marks/go`` exists it is a plain uniform agent (the resumed and the reference runs)."""

    name = "fault"

    def __init__(self, marks: str, stall: int, fail: bool = False) -> None:
        self.marks = Path(marks)
        self.stall = stall
        self.fail = fail
        self.seed: int | None = None

    def start_game(self, seat: int, num_players: int, seed: int | None = None) -> None:
        self.seed = seed
        self.rng = random.Random(seed)

    def act(self, observation) -> int:
        if not (self.marks / GO).exists():
            stalled = (self.marks / STALL).exists()
            if self.seed == self.stall and not stalled and _claim(self.marks / STALL, str(os.getpid())):
                self._wait_to_go()
            elif self.fail and stalled and _claim(self.marks / FAILED, str(self.seed)):
                (self.marks / GO).touch()
                raise KeyError("a planted fault")
            else:
                time.sleep(0.001)
        return self.rng.choice(observation.legal_actions)

    def _wait_to_go(self) -> None:
        deadline = time.monotonic() + PATIENCE
        while not (self.marks / GO).exists():
            if time.monotonic() > deadline:
                raise TimeoutError(f"{self.marks / GO} did not appear within {PATIENCE} s")
            time.sleep(0.01)


class Run:
    """One tournament of a FaultAgent and ``random`` in ``folder`` where game ``stalled`` stalls
    (game 1: the second of the first batch): its command line and the checks of what it saved."""

    def __init__(
        self, folder: Path, backend: str, *, stalled: int = 1, fail: bool = False, ray_address: str | None = None
    ) -> None:
        self.folder, self.stalled = folder, stalled
        self.marks, self.out, self.logs = folder / "marks", folder / "run", folder / "logs"
        self.marks.mkdir()
        task = TournamentConfig((parse_agent_spec("random"),) * 2, deals=DEALS, seed=3).schedule()[stalled]
        seed = task.agent_seeds[task.lineup.index(0)]  # the FaultAgent's in that game (it does not depend on labels)
        fault = f"{__name__}.FaultAgent:marks={self.marks},stall={seed}" + (",fail=true" if fail else "")
        self.tournament = TournamentConfig((parse_agent_spec(fault), parse_agent_spec("random")), deals=DEALS, seed=3)
        self.argv = ["--agents", fault, "random", "--deals", str(DEALS), "--seed", "3", "--workers", "2",
                     "--no-progress", "--no-plot", "--save-logs", str(self.logs), "--backend", backend]  # fmt: skip
        self.address = [] if ray_address is None else ["--ray-address", ray_address]

    @property
    def games(self) -> int:
        return len(self.tournament.schedule())

    def start(self) -> subprocess.Popen[str]:
        """The command in a process of its own (a signal to it reaches no other)."""
        return subprocess.Popen(
            [sys.executable, "-m", "experiments.tournament", *self.argv, *self.address, "--out", str(self.out)],
            cwd=ROOT,
            env={**os.environ, "PYTHONPATH": IMPORT_PATH},
            start_new_session=True,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )

    def stalled_worker(self, process: subprocess.Popen[str] | None = None) -> int:
        """The process id of the stalled game's worker, once the game stalls."""
        deadline = time.monotonic() + PATIENCE
        while not (self.marks / STALL).exists():
            if process is not None and process.poll() is not None:
                pytest.fail(f"the command ended before game {self.stalled} stalled: {process.communicate()}")
            if time.monotonic() > deadline:
                pytest.fail(f"game {self.stalled} did not stall within {PATIENCE} s")
            time.sleep(0.01)
        return int((self.marks / STALL).read_text())

    def go(self) -> None:
        (self.marks / GO).touch()

    def saved(self) -> set[int]:
        """The games in games.csv, checked: each once, and exactly the games that finished."""
        indices = [int(row["index"]) for row in _rows(self.out)]
        assert len(indices) == len(set(indices)), f"games saved twice: {sorted(indices)}"
        finished = {int(path.stem.removeprefix("game-")) for path in self.logs.glob("game-*.json")}
        assert set(indices) == finished, (
            f"finished but not saved: {sorted(finished - set(indices))}; "
            f"saved but never finished: {sorted(set(indices) - finished)}"
        )
        return set(indices)

    def resume_completes_it(self) -> None:
        """``--resume`` plays the rest, and games.csv then holds an uninterrupted run's games."""
        self.go()  # whatever stalled or failed has happened: the rest plays plainly
        assert main([*self.argv, *self.address, "--resume", str(self.out)]) == 0
        reference = self.folder / "reference"
        run_tournament(self.tournament, workers=1, progress=False, out_dir=reference)
        assert _deterministic(_rows(self.out)) == _deterministic(_rows(reference))


def _rows(folder: Path) -> list[dict[str, str]]:
    with (folder / GAMES_FILE).open(newline="") as handle:
        return list(csv.DictReader(handle))


def _deterministic(rows: list[dict[str, str]]) -> list[dict[str, str]]:
    """The rows in schedule order, without the thinking times (which vary between runs)."""
    return [{key: value for key, value in row.items() if key != "seconds"} for row in sorted(rows, key=_index)]


def _index(row: dict[str, str]) -> int:
    return int(row["index"])


def _ended(process: subprocess.Popen[str]) -> tuple[int, str]:
    """The command's exit status and its output (standard output, then standard error)."""
    output, error = process.communicate(timeout=PATIENCE)
    return process.returncode, output + error


def _line_with(process: subprocess.Popen[str], text: str) -> str:
    """The command's standard error up to the line holding ``text`` (read as it comes; a test
    that waits in vain fails after :data:`PATIENCE` seconds instead of hanging)."""
    assert process.stderr is not None
    with ThreadPoolExecutor(max_workers=1) as reader:
        lines: list[str] = []
        while not lines or text not in lines[-1]:
            line = reader.submit(process.stderr.readline).result(timeout=PATIENCE)
            assert line, f"the command ended without saying {text!r}: {''.join(lines)}"
            lines.append(line)
    return "".join(lines)


def _ctrl_c_to_the_command(run: Run) -> None:
    """Ctrl-C to the command while a worker is stalled on a game, then let it go: the command
    exits 0 (with the line that resumes) with every finished game saved (the stalled one included), and
    ``--resume`` completes the run."""
    process = run.start()
    run.stalled_worker(process)
    process.send_signal(signal.SIGINT)
    run.go()
    code, error = _ended(process)
    assert code == 0 and "resume with: " in error and "Traceback" not in error, error
    saved = run.saved()
    assert run.stalled in saved and len(saved) < run.games
    run.resume_completes_it()


# ----------------------------------------------------------------------------- local processes
def test_ctrl_c_to_the_command_saves_every_game_it_finished(tmp_path: Path) -> None:
    """Ctrl-C to the command alone: the workers finish their game in hand (the stalled one is let
    go only after the Ctrl-C) and every finished game is saved before the command exits."""
    run = Run(tmp_path, "local")
    _ctrl_c_to_the_command(run)


def test_ctrl_c_to_a_worker_saves_every_game_it_finished(tmp_path: Path) -> None:
    """Ctrl-C to one worker: it abandons its game in hand only (the game before it in its batch is
    saved), the other worker finishes its own, and the command stops as on Ctrl-C."""
    run = Run(tmp_path, "local")
    process = run.start()
    worker = run.stalled_worker(process)
    os.kill(worker, signal.SIGINT)
    code, error = _ended(process)
    assert code == 0 and "resume with: " in error and "Traceback" not in error, error
    saved = run.saved()
    assert run.stalled not in saved and len(saved) < run.games
    run.resume_completes_it()


def test_a_second_ctrl_c_stops_waiting_for_a_game_that_does_not_end(tmp_path: Path) -> None:
    """The stalled game is never let go: the first Ctrl-C waits for it, the second stops waiting
    (ending that worker) and still saves every game finished."""
    run = Run(tmp_path, "local")
    process = run.start()
    run.stalled_worker(process)
    process.send_signal(signal.SIGINT)
    first = _line_with(process, "Ctrl-C: finishing the work in hand")  # taken: the command waits
    assert process.poll() is None, "the first Ctrl-C waits for the stalled game"
    process.send_signal(signal.SIGINT)  # once: the first was taken, so the two cannot merge
    code, error = _ended(process)
    error = first + error
    assert "Ctrl-C again: not waiting" in error, error
    assert code == 0 and "resume with: " in error and "Traceback" not in error, error
    assert run.stalled not in run.saved()
    run.resume_completes_it()


@pytest.mark.parametrize("stalled", [1, 3], ids=["first-worker", "second-worker"])
def test_a_killed_worker_is_named_and_every_game_finished_is_saved(tmp_path: Path, stalled: int) -> None:
    """A worker killed (as by the out-of-memory killer), the one with the first batch or the one
    with the second: the games it finished before, in its batch too, and the other worker's game
    in hand are saved; the error names the game it was playing, not one of the other worker's."""
    run = Run(tmp_path, "local", stalled=stalled)
    process = run.start()
    worker = run.stalled_worker(process)
    os.kill(worker, signal.SIGKILL)
    code, error = _ended(process)
    assert code == 1, error
    assert run.stalled not in run.saved()
    died = "a worker process died (killed by SIGKILL: killed, out of memory or a crash in native code)"
    assert f"{died} while doing game {run.stalled} (deal " in error
    run.resume_completes_it()


def test_a_failing_game_stops_the_run_once_the_games_in_hand_are_saved(tmp_path: Path) -> None:
    run = Run(tmp_path, "local", fail=True)
    with pytest.raises(GameFailedError, match="KeyError: 'a planted fault'") as failed:
        run_tournament(run.tournament, workers=2, progress=False, out_dir=run.out, log_dir=run.logs)
    saved = run.saved()
    assert run.stalled in saved and failed.value.failure.index not in saved and len(saved) < run.games
    run.resume_completes_it()


# ----------------------------------------------------------------------------- Ray
@pytest.fixture(scope="module")
def ray_address() -> Iterator[str]:
    """A new local Ray of 2 CPUs whose workers import this module; its address, for the commands."""
    ray = require("ray")
    ray.shutdown()
    previous = os.environ.get("PYTHONPATH")
    os.environ["PYTHONPATH"] = IMPORT_PATH  # Ray's processes, the workers among them, inherit it
    try:
        context = ray.init(address="local", num_cpus=2, include_dashboard=False, log_to_driver=False)
    finally:
        if previous is None:
            del os.environ["PYTHONPATH"]
        else:
            os.environ["PYTHONPATH"] = previous
    yield context.address_info["gcs_address"]
    ray.shutdown()


def _signal_the_stalled_worker(run: Run, signal_number: int) -> None:
    """Send ``signal_number`` to the stalled game's worker, then let the game go (played again by
    another worker after a kill)."""
    worker = run.stalled_worker()
    os.kill(worker, signal_number)
    time.sleep(0.2)
    run.go()


def _on_ray(run: Run) -> TournamentResult:
    return run_tournament(run.tournament, workers=2, progress=False, out_dir=run.out, log_dir=run.logs, backend="ray")


@pytest.mark.slow
def test_ray_ctrl_c_to_the_command_saves_every_batch_in_flight(tmp_path: Path, ray_address: str) -> None:
    run = Run(tmp_path, "ray", ray_address=ray_address)
    _ctrl_c_to_the_command(run)


@pytest.mark.slow
@pytest.mark.parametrize("signal_number", [signal.SIGINT, signal.SIGKILL], ids=["ctrl-c", "kill"])
def test_ray_plays_on_when_a_worker_is_interrupted_or_killed(
    tmp_path: Path, ray_address: str, signal_number: int
) -> None:
    """Ray ignores SIGINT in its workers, and runs a task again when its worker dies: either way
    the run ends complete, each game saved once."""
    run = Run(tmp_path, "ray")
    with ThreadPoolExecutor(1) as thread:
        signalled = thread.submit(_signal_the_stalled_worker, run, signal_number)
        result = _on_ray(run)
        signalled.result()
    assert run.saved() == set(range(run.games)) and len(result.records) == run.games
    run.resume_completes_it()


@pytest.mark.slow
def test_ray_failing_game_stops_the_run_once_the_batches_in_flight_are_saved(tmp_path: Path, ray_address: str) -> None:
    run = Run(tmp_path, "ray", fail=True)
    with pytest.raises(GameFailedError, match="KeyError: 'a planted fault'") as failed:
        _on_ray(run)
    saved = run.saved()
    assert run.stalled in saved and failed.value.failure.index not in saved and len(saved) < run.games
    run.resume_completes_it()
