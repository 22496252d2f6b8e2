"""Playing a whole tournament: :func:`run_tournament` plays the schedule in this process or on the
workers of :mod:`experiments.parallel`, saves every game in the run folder as it finishes, and
gathers the games into a :class:`TournamentResult` with its statistics.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path

from experiments.match import AgentError, build_agent
from experiments.parallel import LOCAL, Runner, batches_of
from experiments.stats import AgentStats, Rating, agent_stats, openskill_ratings, pairwise_win_shares, seat_win_rates
from experiments.tournament.games import GameFailedError, GameFailure, GameRecord, run_game
from experiments.tournament.run_folder import RunFolder
from experiments.tournament.schedule import GameTask, TournamentConfig, selected_tasks


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
    tasks = selected_tasks(config, only_games)
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
