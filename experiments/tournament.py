"""Tournaments between agents with duplicate deals, in parallel: ``python -m experiments.tournament``.

Schedule. A *table* is a lineup of agents, one per seat: in a head-to-head the agents given
(repeat one to fill seats, e.g. ``value random random random``); in a round-robin every
combination of ``--players`` distinct agents. Each *deal* is one game seed (the same
shuffled deck, removal and chance stream) and is replayed at every table with the lineup
in every *seating*: for 2 players both seatings, for 3-4 players the cyclic rotations
(``--seatings cyclic``, P games per deal) or all permutations (``--seatings all``, P!).
So card luck and seat order cancel out, and every table plays the same deals.

Reproducibility. Game ``i`` of deal ``d`` is played with seed ``derive_seed(seed, DEAL, d)``
and its agent in seat ``s`` is started with ``derive_seed(seed, AGENT, i, s)``; agents are
built fresh for every game, so results do not depend on ``--workers``. ``games.csv`` lists
every game's seeds; ``--only-games I ...`` replays chosen games of the same command and
``--save-logs DIR`` writes each game as a log that :func:`biblios_env.engine.log.load_log`
replays (metadata: agent labels per seat, agent seeds, tournament seed, game index, deal).

Statistics (see :mod:`experiments.stats`): win rate with a 95% cluster-robust interval over
deals (shared wins count fractionally), the Wilson interval over games for comparison,
mean VP, openskill ratings, seat win rates and pairwise win shares. Written to ``--out`` as
``summary.csv``, ``games.csv``, ``pairwise.csv``, ``results.json`` and ``winrate.png``.

Faults and resuming. Agents are third-party code, so a run is built to survive them:

* every game is appended to ``games.csv`` in the output folder as it finishes (``run.json``
  there records the tournament), so a crash, a kill or Ctrl-C loses only the games in progress;
* any fault of an agent (an exception, ``sys.exit()``, an illegal or non-int action) becomes an
  error naming the game, its deal and seed, the agent and its seat. By default it stops the
  run (exit status 1) once the games in progress are saved; with ``--keep-going`` the game is
  recorded in ``failures.csv`` (and ``results.json``), left out of the statistics, and the run
  plays on (exit status 1 at the end if any game failed);
* ``--resume DIR`` finishes the run in ``DIR``: give the same settings as the first time (they
  are checked against ``run.json``; a difference is an error naming it). The finished games
  are read back, not played again; the missing and the failed ones are played. Since every
  game's seeds come from the schedule, the resumed run's results equal an uninterrupted one's.

Python API. ``run_tournament(config, out_dir=..., keep_going=..., resume=...)`` does the same
(``out_dir`` is where games are saved as they finish; without it nothing is written), then
``write_results(result, out_dir)`` writes the summary files::

    from experiments.match import parse_agent_spec
    from experiments.tournament import TournamentConfig, run_tournament, write_results

    config = TournamentConfig(tuple(map(parse_agent_spec, ["value", "hoarder:aggression=1.2"])), deals=20)
    result = run_tournament(config, workers=2, out_dir="runs/example", keep_going=True)
    # after an interruption: run_tournament(config, workers=2, out_dir="runs/example", resume=True)
    write_results(result, "runs/example")
    print(result.failures)  # GameFailure records, each naming its game and seed

Examples::

    python -m experiments.tournament --agents value random --games 200
    python -m experiments.tournament --agents value hoarder:aggression=1.2 random --players 2
    python -m experiments.tournament --agents ismcts value random random --seatings all --deals 10
    python -m experiments.tournament --agents value random --games 200 --out runs/v --keep-going
    python -m experiments.tournament --agents value random --games 200 --resume runs/v  # after Ctrl-C
"""

from __future__ import annotations

import argparse
import csv
import io
import itertools
import json
import math
import os
import sys
import textwrap
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

import numpy as np

from biblios_env.engine.game import PENALTIES, check_seed
from biblios_env.engine.setup import check_num_players
from experiments.cli import (
    add_backend_arguments,
    at_least,
    check_backend_arguments,
    invocation_note,
    program_name,
    seed_value,
)
from experiments.match import (
    AGENT_FAULTS,
    AgentError,
    AgentSpec,
    AgentSpecError,
    GameResult,
    build_agent,
    describe_agent,
    parse_agent_spec,
    play_game,
    registry,
)
from experiments.parallel import LOCAL, Runner, batches_of
from experiments.stats import (
    CI_CLUSTER,
    MIN_DEALS_FOR_CI,
    AgentStats,
    Outcome,
    Rating,
    agent_stats,
    openskill_ratings,
    pairwise_win_shares,
    seat_win_rates,
)

if TYPE_CHECKING:
    from matplotlib.figure import Figure

HEAD_TO_HEAD: Final = "head-to-head"
ROUND_ROBIN: Final = "round-robin"
MODES: Final = (HEAD_TO_HEAD, ROUND_ROBIN)
SEATINGS: Final = ("cyclic", "all")
# Purposes mixed into derived seeds, so deal seeds and agent seeds never coincide.
DEAL: Final = 1
AGENT: Final = 2


def derive_seed(tournament_seed: int, *keys: int) -> int:
    """A 63-bit seed from the tournament seed and integer keys (numpy SeedSequence hashing)."""
    words = np.random.SeedSequence([tournament_seed, *keys]).generate_state(2, np.uint32)
    return (int(words[0]) << 31) ^ int(words[1])


def seat_orders(num_players: int, seatings: str) -> list[tuple[int, ...]]:
    """The seatings of a deal: ``order[seat]`` is the lineup position sitting in ``seat``."""
    if seatings == "all":
        return list(itertools.permutations(range(num_players)))
    return [tuple((seat - shift) % num_players for seat in range(num_players)) for shift in range(num_players)]


@dataclass(frozen=True, slots=True)
class GameTask:
    """One scheduled game: everything a worker needs besides the tournament config."""

    index: int
    table: int
    deal: int
    seating: int
    seed: int
    lineup: tuple[int, ...]  # index into TournamentConfig.agents, per seat
    agent_seeds: tuple[int, ...]


@dataclass(frozen=True)
class TournamentConfig:
    """What to play. ``deals`` is per table; each deal is played once per seating."""

    agents: tuple[AgentSpec, ...]
    num_players: int = 2
    mode: str = HEAD_TO_HEAD
    deals: int = 50
    seatings: str = "cyclic"
    seed: int = 0
    penalty: str = "standard"
    strict_bids: bool = False

    def __post_init__(self) -> None:
        check_num_players(self.num_players)
        check_seed(self.seed)
        labels = [spec.label for spec in self.agents]
        if self.mode not in MODES:
            raise ValueError(f"mode must be one of {MODES}, got {self.mode!r}")
        if self.seatings not in SEATINGS:
            raise ValueError(f"seatings must be one of {SEATINGS}, got {self.seatings!r}")
        if self.penalty not in PENALTIES:
            raise ValueError(f"penalty must be one of {PENALTIES}, got {self.penalty!r}")
        if isinstance(self.deals, bool) or not isinstance(self.deals, int) or self.deals < 1:
            raise ValueError(f"deals must be a positive int, got {self.deals!r}")
        if self.mode == HEAD_TO_HEAD and len(labels) != self.num_players:
            raise ValueError(
                f"a {self.num_players}-player head-to-head needs {self.num_players} agents, one per seat "
                f"(repeat an agent to fill seats), got {len(labels)}: {' '.join(labels)}"
            )
        if self.mode == ROUND_ROBIN:
            repeated = sorted({label for label in labels if labels.count(label) > 1})
            if repeated:
                raise ValueError(f"a round-robin needs distinct agents; given more than once: {', '.join(repeated)}")
            if len(labels) < self.num_players:
                raise ValueError(
                    f"a {self.num_players}-player round-robin needs at least {self.num_players} agents, "
                    f"got {len(labels)}"
                )

    @property
    def labels(self) -> list[str]:
        """Distinct agent labels in the order given."""
        return list(dict.fromkeys(spec.label for spec in self.agents))

    def tables(self) -> list[tuple[int, ...]]:
        """Lineups (indices into ``agents``): the one given, or every combination of distinct agents."""
        if self.mode == HEAD_TO_HEAD:
            return [tuple(range(len(self.agents)))]
        return list(itertools.combinations(range(len(self.agents)), self.num_players))

    def schedule(self) -> list[GameTask]:
        """Every game in canonical order: deal, then table, then seating."""
        tasks: list[GameTask] = []
        orders = seat_orders(self.num_players, self.seatings)
        for deal in range(self.deals):
            seed = derive_seed(self.seed, DEAL, deal)
            for table, lineup in enumerate(self.tables()):
                for seating, order in enumerate(orders):
                    index = len(tasks)
                    tasks.append(
                        GameTask(
                            index=index,
                            table=table,
                            deal=deal,
                            seating=seating,
                            seed=seed,
                            lineup=tuple(lineup[position] for position in order),
                            agent_seeds=tuple(derive_seed(self.seed, AGENT, index, seat) for seat in range(len(order))),
                        )
                    )
        return tasks

    def to_json(self) -> dict[str, Any]:
        return {
            "agents": [spec.label for spec in self.agents],
            "num_players": self.num_players,
            "mode": self.mode,
            "deals": self.deals,
            "seatings": self.seatings,
            "seatings_per_deal": len(seat_orders(self.num_players, self.seatings)),
            "tables": len(self.tables()),
            "seed": self.seed,
            "penalty": self.penalty,
            "strict_bids": self.strict_bids,
        }


@dataclass(frozen=True, slots=True)
class GameRecord:
    """A scheduled game and its result."""

    index: int
    table: int
    deal: int
    seating: int
    result: GameResult

    def outcome(self) -> Outcome:
        result = self.result
        return Outcome(self.deal, result.agents, result.vp, result.winners)


# ----------------------------------------------------------------------------- playing
def task_labels(config: TournamentConfig, task: GameTask) -> tuple[str, ...]:
    """The agent label in each seat of a scheduled game."""
    return tuple(config.agents[position].label for position in task.lineup)


def log_path(log_dir: str | Path, index: int) -> Path:
    return Path(log_dir) / f"game-{index:06d}.json"


@dataclass(frozen=True, slots=True)
class GameFailure:
    """A scheduled game an agent broke (it crashed, raised ``SystemExit`` or played illegally): no
    result, the error instead. ``--keep-going`` records these and plays on."""

    index: int
    table: int
    deal: int
    seating: int
    seed: int
    agents: tuple[str, ...]
    agent_seeds: tuple[int, ...]
    error: str  # names the game, its seed, the agent and its seat

    @classmethod
    def of(cls, task: GameTask, config: TournamentConfig, error: AgentError) -> GameFailure:
        labels = task_labels(config, task)
        return cls(task.index, task.table, task.deal, task.seating, task.seed, labels, task.agent_seeds, str(error))


class GameFailedError(AgentError):
    """The run stopped at a game an agent broke (without ``keep_going``); the games finished
    before it are in the run folder."""

    def __init__(self, failure: GameFailure) -> None:
        super().__init__(failure.error)
        self.failure = failure


def run_game(task: GameTask, config: TournamentConfig, log_dir: str | Path | None = None) -> GameRecord:
    """Play one scheduled game with freshly built agents (so no state leaks between games).

    Any fault of an agent (it cannot be built, raises anything, ``SystemExit`` included, or plays
    illegally) becomes an AgentError whose message starts with the game, its deal and its seed.
    """
    specs = [config.agents[position] for position in task.lineup]
    where = f"game {task.index} (deal {task.deal}, seed {task.seed})"
    metadata = {
        "tournament_seed": config.seed,
        "game_index": task.index,
        "deal": task.deal,
        "table": task.table,
        "seating": task.seating,
    }
    try:
        agents = [build_agent(spec) for spec in specs]
    except AGENT_FAULTS as error:
        raise AgentError(f"{where}: an agent could not be built: {type(error).__name__}: {error}") from error
    try:
        result = play_game(
            agents,
            task.seed,
            agent_seeds=task.agent_seeds,
            labels=[spec.label for spec in specs],
            penalty=config.penalty,
            strict_bids=config.strict_bids,
            log_path=None if log_dir is None else log_path(log_dir, task.index),
            log_metadata=metadata,
        )
    except AgentError as error:
        raise AgentError(f"{where}: {error}") from error
    return GameRecord(task.index, task.table, task.deal, task.seating, result)


def _play_or_fail(task: GameTask, config: TournamentConfig, log_dir: str | Path | None) -> GameRecord | GameFailure:
    try:
        return run_game(task, config, log_dir)
    except AgentError as error:
        return GameFailure.of(task, config, error)


def _is_failure(outcome: GameRecord | GameFailure) -> bool:
    """Whether a game ended in a failure: it stops the run unless ``keep_going``."""
    return isinstance(outcome, GameFailure)


Record = Callable[[GameRecord | GameFailure], None]


def _play_here(
    tasks: Sequence[GameTask], config: TournamentConfig, log_dir: str | Path | None, keep_going: bool, record: Record
) -> None:
    """Play in this process; the first failure stops the run unless ``keep_going`` (raised from the
    agent's own exception, so its full traceback is shown)."""
    for task in tasks:
        try:
            record(run_game(task, config, log_dir))
        except AgentError as error:
            failure = GameFailure.of(task, config, error)
            record(failure)
            if not keep_going:
                raise GameFailedError(failure) from error  # keeps the agent's traceback


def _play_on_runner(
    tasks: Sequence[GameTask],
    config: TournamentConfig,
    log_dir: str | Path | None,
    keep_going: bool,
    record: Record,
    runner: Runner,
) -> None:
    """Play on the runner's workers, recording games as their batches return. A failure (without
    ``keep_going``) or Ctrl-C stops the workers after their current game, keeping what they finished."""
    first_failure: list[GameFailure] = []

    def record_batch(_index: int, outcomes: list[GameRecord | GameFailure]) -> None:
        for outcome in outcomes:
            record(outcome)
            if isinstance(outcome, GameFailure) and not first_failure:
                first_failure.append(outcome)

    # Small batches balance the load and keep the progress bar moving.
    size = max(1, min(16, len(tasks) // (runner.workers * 8)))
    runner.run(
        partial(_play_or_fail, config=config, log_dir=log_dir),
        batches_of(tasks, size),
        record_batch,
        stops_run=None if keep_going else _is_failure,
        describe=lambda task: f"game {task.index} (deal {task.deal}, seed {task.seed})",
    )
    if first_failure and not keep_going:
        raise GameFailedError(first_failure[0])


@dataclass
class TournamentResult:
    config: TournamentConfig
    records: list[GameRecord]
    seconds: float = 0.0  # wall-clock time
    workers: int = 1
    failures: list[GameFailure] = field(default_factory=list)  # games an agent broke (keep_going)
    agents: list[AgentStats] = field(init=False)
    ratings: dict[str, Rating] = field(init=False)
    seats: list[float] = field(init=False)
    pairwise: dict[str, dict[str, float]] = field(init=False)

    def __post_init__(self) -> None:
        outcomes = [record.outcome() for record in self.records]
        self.agents = agent_stats(outcomes)
        self.ratings = openskill_ratings(outcomes)
        self.seats = seat_win_rates(outcomes)
        self.pairwise = pairwise_win_shares(outcomes)

    def thinking(self) -> dict[str, tuple[int, float]]:
        """Decisions and thinking seconds per agent (timings vary between runs and machines)."""
        totals: dict[str, list[float]] = {}
        for record in self.records:
            result = record.result
            for agent, decisions, seconds in zip(result.agents, result.decisions, result.seconds):
                total = totals.setdefault(agent, [0, 0.0])
                total[0] += decisions
                total[1] += seconds
        return {agent: (int(decisions), seconds) for agent, (decisions, seconds) in totals.items()}

    def shared_wins(self) -> int:
        return sum(len(record.result.winners) > 1 for record in self.records)


def _selected_tasks(config: TournamentConfig, only_games: Iterable[int] | None) -> list[GameTask]:
    tasks = config.schedule()
    if only_games is None:
        return tasks
    wanted = sorted(set(only_games))
    unknown = [index for index in wanted if not 0 <= index < len(tasks)]
    if unknown:
        raise ValueError(f"--only-games {unknown}: this tournament has games 0..{len(tasks) - 1}")
    return [tasks[index] for index in wanted]


def run_tournament(
    config: TournamentConfig,
    *,
    workers: int | None = None,
    progress: bool = True,
    log_dir: str | Path | None = None,
    only_games: Iterable[int] | None = None,
    out_dir: str | Path | None = None,
    keep_going: bool = False,
    resume: bool = False,
    backend: str = LOCAL,
    ray_address: str | None = None,
) -> TournamentResult:
    """Play the schedule (or the games ``only_games`` of it) on ``workers`` processes, or on Ray
    with ``backend="ray"`` (see :mod:`experiments.parallel`; ``workers`` then sizes a local Ray).

    ``workers=1`` on the local backend plays in this process. Results are in schedule order and
    identical for any ``workers`` and either backend. Raises AgentSpecError before any game for
    unknown agents or bad params.

    With ``out_dir`` every game is saved in that folder as it finishes (see :class:`RunFolder`),
    so a crash or Ctrl-C loses only the games in progress; ``resume=True`` finishes the run
    recorded there (same config required, else RunFolderError) without replaying its finished
    games. An agent's fault raises GameFailedError (an AgentError naming the game and its seed)
    once the games in progress are finished and saved; with ``keep_going`` it is recorded in
    ``result.failures`` (and ``failures.csv``) and the run goes on. Ctrl-C raises
    KeyboardInterrupt after saving the finished games.
    """
    from tqdm import tqdm

    for spec in dict.fromkeys(config.agents):
        build_agent(spec)  # fail fast, in this process, with a clear message
    if resume and out_dir is None:
        raise ValueError("resume=True needs out_dir, the folder of the run to finish")
    tasks = _selected_tasks(config, only_games)
    selection = None if only_games is None else [task.index for task in tasks]
    folder = None if out_dir is None else RunFolder(out_dir, config, selection, len(tasks), resume=resume)
    finished = {} if folder is None else folder.finished
    to_play = [task for task in tasks if task.index not in finished]
    if log_dir is not None:
        Path(log_dir).mkdir(parents=True, exist_ok=True)
    workers = max(1, min(workers or os.cpu_count() or 1, len(to_play)))
    runner = Runner(backend, workers, ray_address)
    start = time.perf_counter()
    records: list[GameRecord] = list(finished.values())
    failures: list[GameFailure] = []
    bar = tqdm(
        total=len(tasks), initial=len(finished), unit="game", disable=not progress, desc=config.mode, dynamic_ncols=True
    )

    def record(outcome: GameRecord | GameFailure) -> None:
        if isinstance(outcome, GameFailure):
            failures.append(outcome)
        else:
            records.append(outcome)
        if folder is not None:
            folder.save(outcome)
        bar.update()

    try:
        if runner.in_process:
            _play_here(to_play, config, log_dir, keep_going, record)
        else:
            _play_on_runner(to_play, config, log_dir, keep_going, record, runner)
    finally:
        runner.close()
        bar.close()
        if folder is not None:
            folder.close()
    unplayed = len(tasks) - len(records) - len(failures)
    if unplayed:  # cannot happen unless a worker stops early without saying why: never return a partial run
        raise RuntimeError(f"{unplayed} of {len(tasks)} games were neither played nor recorded as failed")
    records.sort(key=lambda game: game.index)
    failures.sort(key=lambda game: game.index)
    return TournamentResult(config, records, time.perf_counter() - start, workers, failures)


# ----------------------------------------------------------------------------- the run folder
RUN_FILE: Final = "run.json"
GAMES_FILE: Final = "games.csv"
FAILURES_FILE: Final = "failures.csv"
RUN_FORMAT: Final = "biblios-tournament-run"
GAME_COLUMNS: Final = (
    "index", "table", "deal", "seating", "seed", "agents", "agent_seeds", "vp", "winners", "category_winners",
    "dice", "actions", "decisions", "seconds",
)  # fmt: skip
FAILURE_COLUMNS: Final = ("index", "table", "deal", "seating", "seed", "agents", "agent_seeds", "error")
_LABEL_SEPARATOR: Final = " | "


class RunFolderError(ValueError):
    """A run folder that cannot be resumed (or started): not a run, another config, unreadable games."""


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

    ``run.json`` records what was asked (the config and the games selected); ``games.csv`` gets
    one row per game as it finishes (in the order they finish; :func:`write_results` sorts them
    at the end), and ``failures.csv`` one row per game an agent broke. Resuming reads the
    finished games back (a last row cut short by a kill is played again) and checks that the
    config is the recorded one. Failed games are played again on resume.
    """

    def __init__(
        self, path: str | Path, config: TournamentConfig, selection: list[int] | None, games: int, *, resume: bool
    ) -> None:
        self.path = Path(path)
        self.tasks = {task.index: task for task in _selected_tasks(config, selection)}
        self.labels = {index: task_labels(config, task) for index, task in self.tasks.items()}
        self.run: dict[str, Any] = {
            "format": RUN_FORMAT,
            "config": config.to_json(),
            "only_games": selection,
            "games": games,
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

    def _recorded_run(self) -> dict[str, Any] | None:
        path = self.path / RUN_FILE
        if not path.exists():
            return None
        try:
            recorded = json.loads(path.read_text())
        except (OSError, ValueError) as error:
            raise RunFolderError(f"cannot read {path}: {error}") from error
        if not isinstance(recorded, dict) or recorded.get("format") != RUN_FORMAT:
            raise RunFolderError(f"{path} is not a tournament run record (format {RUN_FORMAT!r})")
        return recorded

    def _check_recorded_run(self) -> None:
        recorded = self._recorded_run()
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
                + ". Repeat the original command's settings with --resume."
            )

    def _refuse_to_overwrite_an_unfinished_run(self) -> None:
        recorded = self._recorded_run()
        if recorded is None:
            return
        finished = len(self._read_rows())
        if finished < recorded.get("games", 0):
            raise RunFolderError(
                f"{self.path} holds an unfinished tournament run ({finished} of {recorded['games']} games): finish it "
                f"with --resume {self.path} (the same settings), or choose another output folder"
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


# ----------------------------------------------------------------------------- output
SUMMARY_COLUMNS: Final = (
    "agent", "games", "deals", "wins", "win_rate", "ci_low", "ci_high", "ci_method", "wilson_low",
    "wilson_high", "mean_vp", "vp_ci_low", "vp_ci_high", "rating_mu", "rating_sigma", "rating_ordinal",
    "decisions", "ms_per_decision",
)  # fmt: skip


def summary_rows(result: TournamentResult) -> list[dict[str, Any]]:
    thinking = result.thinking()
    rows = []
    for stats in result.agents:
        rating = result.ratings[stats.agent]
        decisions, seconds = thinking.get(stats.agent, (0, 0.0))
        rows.append(
            {
                "agent": stats.agent,
                "games": stats.games,
                "deals": stats.deals,
                "wins": stats.wins,
                "win_rate": stats.win_rate.estimate,
                "ci_low": stats.win_rate.low,
                "ci_high": stats.win_rate.high,
                "ci_method": stats.win_rate.method,
                "wilson_low": stats.wilson.low,
                "wilson_high": stats.wilson.high,
                "mean_vp": stats.mean_vp.estimate,
                "vp_ci_low": stats.mean_vp.low,
                "vp_ci_high": stats.mean_vp.high,
                "rating_mu": rating.mu,
                "rating_sigma": rating.sigma,
                "rating_ordinal": rating.ordinal,
                "decisions": decisions,
                "ms_per_decision": 1000 * seconds / decisions if decisions else math.nan,
            }
        )
    return rows


def game_rows(result: TournamentResult) -> list[dict[str, Any]]:
    return [game_row(record) for record in result.records]


def _json_safe(value: Any) -> Any:
    """NaN is not JSON: write null instead."""
    if isinstance(value, float) and math.isnan(value):
        return None
    if isinstance(value, dict):
        return {key: _json_safe(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [_json_safe(item) for item in value]
    return value


def _write_csv(path: Path, rows: list[dict[str, Any]], columns: Sequence[str]) -> None:
    with path.open("w", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=list(columns))
        writer.writeheader()
        writer.writerows(rows)


def write_results(result: TournamentResult, out_dir: str | Path, *, plot: bool = True) -> list[Path]:
    """Write summary.csv, games.csv (in schedule order), pairwise.csv, results.json, failures.csv
    when games failed, and (with ``plot``) winrate.png."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    summary, games = summary_rows(result), game_rows(result)
    failures = [failure_row(failure) for failure in result.failures]
    labels = [row["agent"] for row in summary]
    pairwise = [{"agent": row, **{col: result.pairwise.get(row, {}).get(col, "") for col in labels}} for row in labels]
    paths = [out / "summary.csv", out / GAMES_FILE, out / "pairwise.csv", out / "results.json"]
    _write_csv(paths[0], summary, SUMMARY_COLUMNS)
    _write_csv(paths[1], games, GAME_COLUMNS)
    _write_csv(paths[2], pairwise, ["agent", *labels])
    if failures:
        paths.append(out / FAILURES_FILE)
        _write_csv(paths[-1], failures, FAILURE_COLUMNS)
    document = {
        "config": result.config.to_json(),
        "games_played": len(result.records),
        "games_failed": len(result.failures),
        "workers": result.workers,
        "wall_seconds": result.seconds,
        "statistics": {
            "win_rate_ci": "95% cluster-robust (sandwich) normal interval over deals; Wilson over deals when "
            "degenerate (ci_method); shared wins count fractionally",
            "wilson": "95% Wilson score interval treating games as independent, for comparison",
            "rating": "openskill Plackett-Luce, mean over 10 seeded random game orders; winners share rank 0, "
            "others ranked by VP",
        },
        "agents": summary,
        "seat_win_rates": result.seats,
        "pairwise_win_shares": result.pairwise,
        "games": games,
        "failures": failures,
    }
    paths[3].write_text(json.dumps(_json_safe(document), indent=1))
    if plot and summary:
        paths.append(plot_win_rates(result, out / "winrate.png"))
    return paths


_LABEL_WIDTH: Final = 28  # characters of an agent label per line on the plot's axis


def _plot_label(label: str) -> str:
    """A long agent label broken after its ``:`` and ``,`` so the bars keep their width."""
    if len(label) <= _LABEL_WIDTH:
        return label
    return label.replace(":", ":\n", 1).replace(",", ",\n")


def plot_win_rates(result: TournamentResult, path: str | Path) -> Path:
    """Save :func:`win_rate_figure` as a PNG."""
    win_rate_figure(result).savefig(path, dpi=120)
    return Path(path)


def win_rate_figure(result: TournamentResult) -> Figure:
    """Horizontal bars of win rate with their 95% intervals, and the fair share as a dashed line.

    Nothing is drawn over the bars: each agent's figures stand in a column right of the plot and
    the legend sits below the axis label, so the picture stays readable from 2 to ~8 agents with
    win rates anywhere in [0, 1]; the figure grows with the number of agents.
    """
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure
    from matplotlib.ticker import PercentFormatter

    rows = result.agents[::-1]  # best at the top
    figure = Figure(figsize=(8.0, 1.9 + 0.5 * len(rows)), layout="constrained")
    FigureCanvasAgg(figure)
    axes = figure.add_subplot()
    positions = list(range(len(rows)))
    rates = [row.win_rate.estimate for row in rows]
    errors = [
        [max(0.0, row.win_rate.estimate - row.win_rate.low) for row in rows],
        [max(0.0, row.win_rate.high - row.win_rate.estimate) for row in rows],
    ]
    axes.barh(positions, rates, height=0.6, color="#4c72b0", alpha=0.85, label="win rate")
    axes.errorbar(rates, positions, xerr=errors, fmt="none", ecolor="black", capsize=4, label="95% CI over deals")
    fair = 1 / result.config.num_players
    axes.axvline(fair, color="grey", linestyle="--", linewidth=1, label=f"fair share ({fair:.0%})")
    axes.set_yticks(positions, [_plot_label(row.agent) for row in rows], fontsize=9)
    axes.set_ylim(-0.6, len(rows) - 0.4)
    axes.set_xlim(0, 1.02)  # room for the cap of an interval that ends at 100%
    axes.set_xticks([0, 0.2, 0.4, 0.6, 0.8, 1.0])
    axes.xaxis.set_major_formatter(PercentFormatter(1.0))
    axes.set_xlabel("win rate")
    figures = axes.get_yaxis_transform()  # x in axes fractions, y in bar positions: a column right of the plot
    axes.text(1.03, len(rows) - 0.4, "win rate [95% CI]", transform=figures, fontsize=8, va="bottom", ha="left")
    for position, row in zip(positions, rows):
        interval = row.win_rate
        text = f"{interval.estimate:.1%} [{interval.low:.0%}, {interval.high:.0%}]"
        axes.text(1.03, position, text, transform=figures, fontsize=8, va="center", ha="left")
    config = result.config
    axes.set_title(
        f"{config.mode}, {config.num_players} players, {len(result.records)} games, seed {config.seed}", fontsize=10
    )
    figure.legend(loc="outside lower center", ncols=3, fontsize=8, frameon=False)
    return figure


def format_summary(result: TournamentResult, saved: Sequence[Path] = ()) -> str:
    """The one-screen summary printed at the end of a run."""
    config = result.config
    per_deal = len(seat_orders(config.num_players, config.seatings))
    tables = len(config.tables())
    schedule = f"{config.deals} deals x {per_deal} seatings" + (f" x {tables} tables" if tables > 1 else "")
    workers = f"{result.workers} worker" + ("s" if result.workers > 1 else "")
    games = f"{len(result.records)} of {len(result.records) + len(result.failures)}" if result.failures else ""
    lines = [
        f"Biblios {config.mode}, {config.num_players} players: {games or len(result.records)} games ({schedule}), "
        f"seed {config.seed}, penalty {config.penalty}, {workers}, {result.seconds:.1f} s",
        "",
    ]
    width = max([len("agent"), *(len(row.agent) for row in result.agents)])
    lines.append(
        f"  {'agent':<{width}}  {'games':>6}  {'win rate':>8}  {'95% CI':^16}  {'mean VP':>7}  {'95% CI':^13}"
        f"  {'rating':>13}  {'ms/move':>7}"
    )
    thinking = result.thinking()
    fallback = False
    for row in result.agents:
        rating = result.ratings[row.agent]
        decisions, seconds = thinking.get(row.agent, (0, 0.0))
        mark = "" if row.win_rate.method == CI_CLUSTER else "*"
        fallback = fallback or bool(mark)
        vp = row.mean_vp
        lines.append(
            f"  {row.agent:<{width}}  {row.games:>6}  {row.win_rate.estimate:>8.1%}  "
            f"{f'[{row.win_rate.low:.1%}, {row.win_rate.high:.1%}]{mark}':^16}  {vp.estimate:>7.2f}  "
            f"{f'[{vp.low:.2f}, {vp.high:.2f}]':^13}  {f'{rating.mu:.1f} ± {rating.sigma:.1f}':>13}  "
            f"{1000 * seconds / decisions if decisions else math.nan:>7.2f}"
        )
    lines.append("")
    deals = max((row.deals for row in result.agents), default=0)
    lines.append(
        f"  Win rate: 95% CI clustered over {deals} deals (the games of a deal share its cards); "
        f"shared wins count 1/k. Fair share {1 / config.num_players:.1%}."
    )
    if fallback:
        lines.append("  * no spread between deals (e.g. 0% or 100%): Wilson interval with one trial per deal.")
    if config.deals < MIN_DEALS_FOR_CI:
        lines.append(
            f"  Only {config.deals} deals: the intervals are rough (trust them from ~{MIN_DEALS_FOR_CI} deals)."
        )
    lines.append("  Rating: openskill Plackett-Luce mu ± sigma. ms/move: mean thinking time per decision.")
    seats = " · ".join(f"seat {seat} {rate:.1%}" for seat, rate in enumerate(result.seats))
    lines.append(f"  Seat win rates: {seats}; shared wins in {result.shared_wins()} games.")
    if config.mode == ROUND_ROBIN and 2 < len(result.agents) <= 8:
        labels = [row.agent for row in result.agents]
        short = [label[:9] for label in labels]
        lines.append("")
        lines.append(f"  Pairwise win share (row vs column):  {'  '.join(f'{name:>9}' for name in short)}")
        for label, name in zip(labels, short):
            cells = "  ".join(
                f"{result.pairwise.get(label, {}).get(other, math.nan):>9.1%}" if other != label else f"{'-':>9}"
                for other in labels
            )
            lines.append(f"  {name:>34}  {cells}")
    if result.failures:
        lines.append("")
        lines.append(
            f"  {len(result.failures)} games failed (an agent crashed or played illegally) and are left out of the "
            f"statistics, so some deals are not balanced: see {FAILURES_FILE}. The first:"
        )
        lines.append(f"  {result.failures[0].error}")
    if saved:
        folder = saved[0].parent
        lines.append("")
        lines.append(f"  Saved in {folder}/: {', '.join(path.name for path in saved)}")
    return "\n".join(lines)


# ----------------------------------------------------------------------------- command line


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog=program_name("experiments.tournament"),
        description="Play a head-to-head or round-robin between Biblios agents with duplicate deals.",
        epilog="Agent specs: NAME or NAME:key=value,... with NAME a registry name or an import path "
        "package.module.Factory, e.g. hoarder:aggression=1.2 or ismcts:iterations=500 (--list-agents shows "
        "every agent's parameters). Results are saved as each game finishes: after a crash or Ctrl-C, repeat "
        "the command with --resume DIR to play only the games still missing. "
        + invocation_note("experiments.tournament"),
    )
    parser.add_argument(
        "--agents", nargs="+", metavar="SPEC", help="the agents (specs below); in a head-to-head, one per seat"
    )
    parser.add_argument(
        "--players",
        type=int,
        choices=(2, 3, 4),
        help="players per game (default: the number of agents in a head-to-head, 2 in a round-robin)",
    )
    parser.add_argument(
        "--mode",
        choices=MODES,
        help="default: head-to-head if the agents fill the seats exactly, "
        "else round-robin over every combination of --players agents",
    )
    size = parser.add_mutually_exclusive_group()
    size.add_argument(
        "--games", type=at_least(1), default=100, help="games per table, rounded up to whole deals (default 100)"
    )
    size.add_argument(
        "--deals",
        type=at_least(1),
        help="deals (game seeds) per table, instead of --games; each is played in every seating",
    )
    parser.add_argument(
        "--seatings",
        choices=SEATINGS,
        default="cyclic",
        help="seatings per deal for 3-4 players: the P cyclic rotations or all P! permutations (default cyclic)",
    )
    parser.add_argument("--seed", type=seed_value, default=0, help="tournament seed (default 0)")
    parser.add_argument(
        "--penalty", choices=PENALTIES, default="standard", help="penalty rule (RULES §5; default standard)"
    )
    parser.add_argument(
        "--strict-bids", action="store_true", help="only allow bids the bidder can pay (default: any bid)"
    )
    parser.add_argument(
        "--workers",
        type=at_least(1),
        default=os.cpu_count() or 1,
        help=f"processes (default: all {os.cpu_count() or 1} cores); results do not depend on it",
    )
    add_backend_arguments(parser)
    parser.add_argument("--out", type=Path, metavar="DIR", help="output folder (default runs/tournament-<date>-<time>)")
    parser.add_argument(
        "--resume",
        type=Path,
        metavar="DIR",
        help="finish the interrupted run in DIR (its output folder): give the same settings as the first time; "
        "the games it finished are kept, not played again",
    )
    parser.add_argument(
        "--keep-going",
        action="store_true",
        help="when an agent crashes or plays illegally, record the game in failures.csv and play on "
        "(default: stop at the first such game)",
    )
    parser.add_argument("--save-logs", type=Path, metavar="DIR", help="also save every game as a replayable log in DIR")
    parser.add_argument(
        "--only-games",
        type=int,
        nargs="+",
        metavar="INDEX",
        help="play only these games of the schedule (to reproduce or inspect them)",
    )
    parser.add_argument("--no-plot", action="store_true", help="do not draw winrate.png (default: draw it)")
    parser.add_argument("--no-progress", action="store_true", help="hide the progress bar (default: show it)")
    parser.add_argument(
        "--list-agents", action="store_true", help="list the registry's agents and their parameters, then exit"
    )
    return parser


def config_from_args(args: argparse.Namespace, parser: argparse.ArgumentParser) -> TournamentConfig:
    if not args.agents:
        parser.error("--agents is required (e.g. --agents value random)")
    try:
        specs = tuple(parse_agent_spec(text) for text in args.agents)
    except AgentSpecError as error:
        parser.error(str(error))
    mode = args.mode or (HEAD_TO_HEAD if args.players in (None, len(specs)) else ROUND_ROBIN)
    players = args.players or (len(specs) if mode == HEAD_TO_HEAD else 2)
    if mode == HEAD_TO_HEAD and players not in (2, 3, 4):
        parser.error(
            f"{len(specs)} agents cannot share one table (2-4 players); "
            "use --players N for a round-robin over every N of them"
        )
    per_table = len(seat_orders(players, args.seatings))
    deals = args.deals or math.ceil(args.games / per_table)
    try:
        return TournamentConfig(
            agents=specs,
            num_players=players,
            mode=mode,
            deals=deals,
            seatings=args.seatings,
            seed=args.seed,
            penalty=args.penalty,
            strict_bids=args.strict_bids,
        )
    except ValueError as error:
        parser.error(str(error))


def agent_list() -> str:
    """``--list-agents``: every registry agent with its description and parameters (defaults)."""
    lines = []
    for name in sorted(registry()):
        try:
            description = describe_agent(name)
        except AgentSpecError as error:
            lines += [name, f"    (unavailable here: {error})", ""]
            continue
        lines += [name, *textwrap.wrap(description.summary, 100, initial_indent="    ", subsequent_indent="    ")]
        if description.parameters is None:
            parameters = "parameters: see its documentation"
        else:
            parameters = "parameters: " + (", ".join(description.parameters) or "none")
        lines += [*textwrap.wrap(parameters, 100, initial_indent="    ", subsequent_indent="        "), ""]
    lines.append("Give parameters as NAME:key=value,...; e.g. hoarder:aggression=1.2,focus=3")
    return "\n".join(lines)


def _stopped_at(error: GameFailedError, out: Path) -> str:
    """What to do after an agent stopped the run."""
    index = error.failure.index
    return (
        f"The games finished before it are saved in {out}/{GAMES_FILE}. Rerun the failing game alone with "
        f"--workers 1 --only-games {index} for a full traceback; repeat the command with --keep-going to record "
        f"such games and play on; repeat it with --resume {out} to finish the run."
    )


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.list_agents:
        print(agent_list())
        return 0
    config = config_from_args(args, parser)
    check_backend_arguments(args, parser)
    if args.resume is not None and args.out is not None and args.out != args.resume:
        parser.error(f"--resume {args.resume} writes into that folder; drop --out {args.out}")
    out = args.resume or args.out or Path("runs") / datetime.now().strftime("tournament-%Y%m%d-%H%M%S")
    try:
        result = run_tournament(
            config,
            workers=args.workers,
            progress=not args.no_progress,
            log_dir=args.save_logs,
            only_games=args.only_games,
            out_dir=out,
            keep_going=args.keep_going,
            resume=args.resume is not None,
            backend=args.backend,
            ray_address=args.ray_address,
        )
    except AgentSpecError as error:
        parser.error(str(error))
    except GameFailedError as error:
        print(f"error: {error}\n{_stopped_at(error, out)}", file=sys.stderr)
        return 1
    except ValueError as error:  # RunFolderError included
        print(f"error: {error}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        repeat = (
            f"The finished games are saved in {out}/{GAMES_FILE}; repeat" if (out / GAMES_FILE).exists() else "Repeat"
        )
        print(f"\nInterrupted. {repeat} the command with --resume {out} to play the rest.", file=sys.stderr)
        return 130
    saved = write_results(result, out, plot=not args.no_plot)
    print(format_summary(result, saved))
    return 1 if result.failures else 0


if __name__ == "__main__":
    sys.exit(main())
