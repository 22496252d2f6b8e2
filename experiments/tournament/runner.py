"""Playing a whole tournament: :func:`run_tournament` plays the schedule in this process or on the
workers of :mod:`experiments.common.parallel`, saves every game in the run folder as it finishes (with a
replay page for the games asked), and gathers the games into a :class:`TournamentResult` with its
statistics.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path

from experiments.common.match import AgentError, build_agent
from experiments.common.parallel import LOCAL, Runner, batches_of
from experiments.common.stats import (
    AgentStats,
    Rating,
    agent_stats,
    openskill_ratings,
    pairwise_win_shares,
    seat_win_rates,
)
from experiments.tournament.games import GameFailedError, GameFailure, GameRecord, log_path, run_game
from experiments.tournament.progress import Progress, ProgressLines, plan_line
from experiments.tournament.run_folder import RunFolder, replay_folder, replay_page_path
from experiments.tournament.schedule import GameTask, TournamentConfig, selected_tasks


@dataclass(frozen=True, slots=True)
class LogPlan:
    """Where each game's log is saved: every game in ``save_dir`` (``--save-logs``), and each game
    with a replay page in ``replay_dir`` beside its page when there is no ``save_dir``. Sent to
    the workers, so it is plain data."""

    save_dir: Path | None = None
    replay_dir: Path | None = None
    replay_games: frozenset[int] = frozenset()

    def log_dir(self, index: int) -> Path | None:
        """The folder of game ``index``'s log, or None when it is not saved."""
        if self.save_dir is not None:
            return self.save_dir
        return self.replay_dir if index in self.replay_games else None

    def saved_log(self, index: int) -> Path | None:
        """Game ``index``'s log file, or None when it is not saved."""
        folder = self.log_dir(index)
        return None if folder is None else log_path(folder, index)

    def page(self, index: int) -> Path | None:
        """Game ``index``'s replay page, or None when it has none."""
        if self.replay_dir is None or index not in self.replay_games:
            return None
        return replay_page_path(self.replay_dir, index)

    def write_page(self, index: int) -> None:
        """Write game ``index``'s replay page from its saved log (imported here: only runs that ask
        for pages need the replay package)."""
        from experiments.replay import write_page

        saved_log, page = self.saved_log(index), self.page(index)
        if saved_log is None or page is None:
            raise ValueError(f"game {index} has no replay page in this run")
        write_page(saved_log, page)


def _play_or_fail(
    task: GameTask, config: TournamentConfig, logs: LogPlan, errors: dict[int, AgentError] | None = None
) -> GameRecord | GameFailure:
    """The game's record, or its failure (whose exception goes into ``errors``, in this process)."""
    try:
        return run_game(task, config, logs.log_dir(task.index))
    except AgentError as error:
        if errors is not None:
            errors[task.index] = error
        return GameFailure.of(task, config, error)


def _is_failure(outcome: GameRecord | GameFailure) -> bool:
    """Whether a game ended in a failure: it stops the run unless ``keep_going``."""
    return isinstance(outcome, GameFailure)


Record = Callable[[GameRecord | GameFailure], None]


def _play(
    tasks: Sequence[GameTask],
    config: TournamentConfig,
    logs: LogPlan,
    keep_going: bool,
    record: Record,
    runner: Runner,
) -> None:
    """Play on the runner, recording games as their batches return (one game a batch in this
    process). A failure (without ``keep_going``) or Ctrl-C stops the run once the games in
    progress are finished and recorded. Played in this process, the failure is raised from the
    agent's own exception, so that its full traceback is shown."""
    first_failure: list[GameFailure] = []
    errors: dict[int, AgentError] = {}  # in this process, without keep_going: the failed game's exception
    keep_errors = runner.in_process and not keep_going

    def record_batch(_index: int, outcomes: list[GameRecord | GameFailure]) -> None:
        for outcome in outcomes:
            record(outcome)
            if isinstance(outcome, GameFailure) and not first_failure:
                first_failure.append(outcome)

    # One game a batch in this process; on workers, small batches balance the load.
    size = 1 if runner.in_process else max(1, min(16, len(tasks) // (runner.workers * 8)))
    runner.run(
        partial(_play_or_fail, config=config, logs=logs, errors=errors if keep_errors else None),
        batches_of(tasks, size),
        record_batch,
        stops_run=None if keep_going else _is_failure,
        describe=lambda task: f"game {task.index} (deal {task.deal}, seed {task.seed})",
    )
    if first_failure and not keep_going:
        raise GameFailedError(first_failure[0]) from errors.get(first_failure[0].index)


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


def _plan_logs(
    log_dir: str | Path | None,
    out_dir: str | Path | None,
    tasks: Sequence[GameTask],
    replay_html: int,
    finished: dict[int, GameRecord],
) -> LogPlan:
    """The run's :class:`LogPlan`, its folders made; on resume, the replay pages of games finished
    before that have a saved log but no page are written."""
    if replay_html < 0 or (replay_html and out_dir is None):
        raise ValueError(f"replay_html must be a number of games >= 0 and needs out_dir, got {replay_html}, {out_dir}")
    logs = LogPlan(
        None if log_dir is None else Path(log_dir),
        None if out_dir is None or not replay_html else replay_folder(out_dir),
        frozenset(task.index for task in tasks[:replay_html]),
    )
    for folder in (logs.save_dir, logs.replay_dir):
        if folder is not None:
            folder.mkdir(parents=True, exist_ok=True)
    for index in sorted(logs.replay_games & finished.keys()):
        saved_log, page = logs.saved_log(index), logs.page(index)
        if saved_log is not None and page is not None and saved_log.exists() and not page.exists():
            logs.write_page(index)
    return logs


def _progress(
    config: TournamentConfig, total: int, finished: int, bar: bool, log: Callable[[str], None] | None
) -> Progress:
    """A progress bar (``bar``), else plain progress lines to ``log``, else nothing."""
    if bar or log is None:
        from tqdm import tqdm

        return tqdm(total=total, initial=finished, unit="game", disable=not bar, desc=config.mode, dynamic_ncols=True)
    return ProgressLines(total, finished, log)


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
    replay_html: int = 0,
    log: Callable[[str], None] | None = None,
) -> TournamentResult:
    """Play the schedule (or the games ``only_games`` of it) on ``workers`` processes, or on Ray
    with ``backend="ray"`` (see :mod:`experiments.common.parallel`; ``workers`` then sizes a local Ray).

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

    ``replay_html=N`` writes a replay page (:mod:`experiments.replay`) for each of the first N
    games of the run (of the schedule, or of ``only_games``) as it finishes, into
    ``out_dir/replays/game-NNNNNN.html``; their logs go to ``log_dir``, or beside the pages
    without one. Resuming keeps the pages of the games finished before, and writes the missing
    ones whose logs were saved.
    """
    for spec in dict.fromkeys(config.agents):
        build_agent(spec)  # fail fast, in this process, with a clear message
    if resume and out_dir is None:
        raise ValueError("resume=True needs out_dir, the folder of the run to finish")
    tasks = selected_tasks(config, only_games)
    selection = None if only_games is None else [task.index for task in tasks]
    folder = (
        None
        if out_dir is None
        else RunFolder(out_dir, config, selection, len(tasks), resume=resume, log_dir=log_dir, replay_html=replay_html)
    )
    finished = {} if folder is None else folder.finished
    to_play = [task for task in tasks if task.index not in finished]
    logs = _plan_logs(log_dir, out_dir, tasks, replay_html, finished)
    workers = max(1, min(workers or os.cpu_count() or 1, len(to_play)))
    runner = Runner(backend, workers, ray_address)
    if log is not None:
        log(plan_line(config, len(tasks), len(finished), workers, backend))
    start = time.perf_counter()
    records: list[GameRecord] = list(finished.values())
    failures: list[GameFailure] = []
    bar = _progress(config, len(tasks), len(finished), progress, log)

    def record(outcome: GameRecord | GameFailure) -> None:
        if isinstance(outcome, GameFailure):
            failures.append(outcome)
        else:
            records.append(outcome)
        if folder is not None:
            folder.save(outcome)
        if isinstance(outcome, GameRecord) and outcome.index in logs.replay_games:
            logs.write_page(outcome.index)
        bar.update()

    try:
        _play(to_play, config, logs, keep_going, record, runner)
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
