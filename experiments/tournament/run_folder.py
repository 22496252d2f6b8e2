"""A tournament's output folder while it plays: ``run.json``, ``games.csv``, ``failures.csv`` and
the ``replays/`` folder of replay pages.

Every game is appended as it finishes, so a crash, a kill or Ctrl-C loses only the games in
progress, and ``--resume`` reads the finished ones back instead of playing them again. The
file names and the row formats live here; the summary files of
:mod:`experiments.tournament.report` write the same rows.
"""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Final

from experiments.common.errors import RunFolderError
from experiments.common.match import GameResult
from experiments.tournament.games import GameFailure, GameRecord, log_path, task_labels
from experiments.tournament.schedule import GameTask, TournamentConfig, selected_tasks

RUN_FILE: Final = "run.json"
GAMES_FILE: Final = "games.csv"
FAILURES_FILE: Final = "failures.csv"
RUN_FORMAT: Final = "biblios-tournament-run"
#: The folder of the replay pages (``--replay-html``), and of their logs when there is no ``--save-logs``.
REPLAYS_FOLDER: Final = "replays"
GAME_COLUMNS: Final = (
    "index", "table", "deal", "seating", "seed", "agents", "agent_seeds", "vp", "winners", "category_winners",
    "dice", "actions", "decisions", "seconds",
)  # fmt: skip
FAILURE_COLUMNS: Final = ("index", "table", "deal", "seating", "seed", "agents", "agent_seeds", "error")
_LABEL_SEPARATOR: Final = " | "


def read_run_record(folder: str | Path) -> dict[str, Any] | None:
    """The run recorded in ``folder``'s ``run.json`` (None if it has none), read by a resumed run
    and by a fresh one that must not overwrite it; RunFolderError if it is unreadable or another
    program's."""
    path = Path(folder) / RUN_FILE
    if not path.exists():
        return None
    try:
        recorded = json.loads(path.read_text())
    except (OSError, ValueError) as error:
        raise RunFolderError(f"cannot read {path}: {error}") from error
    if (
        not isinstance(recorded, dict)
        or recorded.get("format") != RUN_FORMAT
        or not isinstance(recorded.get("config"), dict)
    ):
        raise RunFolderError(f"{path} is not a tournament run record (format {RUN_FORMAT!r})")
    return recorded


def replay_folder(out_dir: str | Path) -> Path:
    """The run's folder of replay pages."""
    return Path(out_dir) / REPLAYS_FOLDER


def replay_page_path(replay_dir: str | Path, index: int) -> Path:
    """Game ``index``'s replay page: named as its log, ``game-000012.html``."""
    return log_path(replay_dir, index).with_suffix(".html")


def game_row(record: GameRecord) -> dict[str, Any]:
    """One ``games.csv`` row (lists are space-separated; agent labels are joined by `` | ``)."""
    game = record.result
    return {
        "index": record.index,
        "table": record.table,
        "deal": record.deal,
        "seating": record.seating,
        "seed": game.seed,
        "agents": _LABEL_SEPARATOR.join(game.agents),
        "agent_seeds": " ".join(map(str, game.agent_seeds)),
        "vp": " ".join(map(str, game.vp)),
        "winners": " ".join(map(str, game.winners)),
        "category_winners": " ".join(map(str, game.category_winners)),
        "dice": " ".join(map(str, game.dice)),
        "actions": game.actions,
        "decisions": " ".join(map(str, game.decisions)),
        "seconds": " ".join(f"{seconds:.4f}" for seconds in game.seconds),
    }


def failure_row(failure: GameFailure) -> dict[str, Any]:
    return {
        "index": failure.index,
        "table": failure.table,
        "deal": failure.deal,
        "seating": failure.seating,
        "seed": failure.seed,
        "agents": _LABEL_SEPARATOR.join(failure.agents),
        "agent_seeds": " ".join(map(str, failure.agent_seeds)),
        "error": failure.error,
    }


def _ints(text: str) -> tuple[int, ...]:
    return tuple(int(word) for word in text.split())


def _record_from_row(row: dict[str, Any], task: GameTask, labels: tuple[str, ...]) -> GameRecord:
    """A finished game read back from ``games.csv``; ValueError if the row is not the scheduled game."""
    result = GameResult(
        seed=int(row["seed"]),
        agents=labels,
        agent_seeds=_ints(row["agent_seeds"]),
        vp=_ints(row["vp"]),
        winners=_ints(row["winners"]),
        category_winners=_ints(row["category_winners"]),
        dice=_ints(row["dice"]),
        actions=int(row["actions"]),
        decisions=_ints(row["decisions"]),
        seconds=tuple(float(word) for word in row["seconds"].split()),
    )
    record = GameRecord(int(row["index"]), int(row["table"]), int(row["deal"]), int(row["seating"]), result)
    labels_text = _LABEL_SEPARATOR.join(labels)
    scheduled = (task.index, task.table, task.deal, task.seating, task.seed, labels_text, task.agent_seeds)
    found = (record.index, record.table, record.deal, record.seating, result.seed, row["agents"], result.agent_seeds)
    if found != scheduled:
        raise ValueError(f"it records {found}, but the schedule has {scheduled}")
    return record


class RunFolder:
    """A tournament's output folder while it plays, so that nothing finished is lost.

    ``run.json`` records what was asked (the config, the games selected, where the game logs go
    and how many games get a replay page), so that ``--resume DIR`` alone continues the run;
    ``games.csv`` gets one row per game as it finishes (in the order they finish;
    :func:`write_results` sorts them at the end), and ``failures.csv`` one row per game an agent
    broke. Resuming reads the finished games back (a last row cut short by a kill is played
    again) and checks that the config is the recorded one. Failed games are played again on resume.
    """

    def __init__(
        self,
        path: str | Path,
        config: TournamentConfig,
        selection: list[int] | None,
        games: int,
        *,
        resume: bool,
        log_dir: str | Path | None = None,
        replay_html: int = 0,
    ) -> None:
        self.path = Path(path)
        self.tasks = {task.index: task for task in selected_tasks(config, selection)}
        self.labels = {index: task_labels(config, task) for index, task in self.tasks.items()}
        self.run: dict[str, Any] = {
            "format": RUN_FORMAT,
            "config": config.to_json(),
            "only_games": selection,
            "games": games,
            "save_logs": None if log_dir is None else str(log_dir),
            "replay_html": replay_html,
        }
        if resume:
            self._check_recorded_run()
            self.finished = self._read_finished()
        else:
            self._refuse_to_overwrite_an_unfinished_run()
            self.finished = {}
        self.path.mkdir(parents=True, exist_ok=True)
        (self.path / RUN_FILE).write_text(json.dumps(self.run, indent=1))
        (self.path / FAILURES_FILE).unlink(missing_ok=True)  # failed games are played again
        self._games = (self.path / GAMES_FILE).open("w", newline="")
        self._failures: Any = None
        self._write(self._games, GAME_COLUMNS, None)
        for record in sorted(self.finished.values(), key=lambda game: game.index):
            self._write(self._games, GAME_COLUMNS, game_row(record))

    def save(self, outcome: GameRecord | GameFailure) -> None:
        """Append a finished game (or failure) and flush, so that it survives a crash of the run."""
        if isinstance(outcome, GameRecord):
            self._write(self._games, GAME_COLUMNS, game_row(outcome))
            return
        if self._failures is None:
            self._failures = (self.path / FAILURES_FILE).open("w", newline="")
            self._write(self._failures, FAILURE_COLUMNS, None)
        self._write(self._failures, FAILURE_COLUMNS, failure_row(outcome))

    def close(self) -> None:
        self._games.close()
        if self._failures is not None:
            self._failures.close()

    @staticmethod
    def _write(handle: Any, columns: Sequence[str], row: dict[str, Any] | None) -> None:
        """One line in one ``write`` call: Ctrl-C cannot leave half a row behind."""
        text = io.StringIO()
        writer = csv.DictWriter(text, fieldnames=list(columns))
        if row is None:
            writer.writeheader()
        else:
            writer.writerow(row)
        handle.write(text.getvalue())
        handle.flush()

    def _check_recorded_run(self) -> None:
        recorded = read_run_record(self.path)
        if recorded is None:
            raise RunFolderError(
                f"cannot resume {self.path}: it has no {RUN_FILE} (not a tournament run folder, or one written "
                "by a version without --resume)"
            )
        differences = [
            f"{key} {value!r} (recorded: {recorded['config'].get(key)!r})"
            for key, value in self.run["config"].items()
            if recorded.get("config", {}).get(key) != value
        ]
        if recorded.get("only_games") != self.run["only_games"]:
            differences.append(f"only_games {self.run['only_games']} (recorded: {recorded.get('only_games')})")
        if differences:
            raise RunFolderError(
                f"cannot resume {self.path}: this command's tournament differs from the run recorded there: "
                + "; ".join(differences)
                + ". Resume it with the config recorded there (on the command line: --resume DIR alone)."
            )

    def _refuse_to_overwrite_an_unfinished_run(self) -> None:
        recorded = read_run_record(self.path)
        if recorded is None:
            return
        finished = len(self._read_rows())
        if finished < recorded.get("games", 0):
            raise RunFolderError(
                f"{self.path} holds an unfinished tournament run ({finished} of {recorded['games']} games): finish it "
                f"with --resume {self.path}, or choose another output folder"
            )

    def _read_rows(self) -> list[dict[str, Any]]:
        path = self.path / GAMES_FILE
        if not path.exists():
            return []
        with path.open(newline="") as handle:
            reader = csv.DictReader(handle)
            if reader.fieldnames is not None and tuple(reader.fieldnames) != GAME_COLUMNS:
                raise RunFolderError(f"{path} has the columns {reader.fieldnames}, expected {list(GAME_COLUMNS)}")
            rows = list(reader)
        if rows and (None in rows[-1].values() or None in rows[-1]):
            rows.pop()  # a row cut short when the run was killed: that game is played again
        return rows

    def _read_finished(self) -> dict[int, GameRecord]:
        finished: dict[int, GameRecord] = {}
        for line, row in enumerate(self._read_rows(), start=2):
            try:
                index = int(row["index"])
                if index not in self.tasks:
                    raise ValueError(f"game {index} is not in this tournament's schedule")
                record = _record_from_row(row, self.tasks[index], self.labels[index])
            except (TypeError, ValueError) as error:
                raise RunFolderError(f"cannot resume {self.path}: {GAMES_FILE} line {line}: {error}") from error
            if finished.setdefault(index, record) != record:
                raise RunFolderError(f"cannot resume {self.path}: {GAMES_FILE} holds game {index} twice, differently")
        return finished
