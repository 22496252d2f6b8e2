"""One scheduled game: playing it with freshly built agents, and what a run records of it.

A game is what a worker plays and what the run folder saves, so its two outcomes live here:
:class:`GameRecord` (the result) and :class:`GameFailure` (an agent broke it). :func:`run_game`
turns any fault of an agent into an error that names the game, its deal and its seed.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from experiments.common.match import AGENT_FAULTS, AgentError, GameResult, build_agent, play_game
from experiments.common.stats import Outcome
from experiments.tournament.schedule import GameTask, TournamentConfig


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
            game_config=config.game_config,
            log_path=None if log_dir is None else log_path(log_dir, task.index),
            log_metadata=metadata,
        )
    except AgentError as error:
        raise AgentError(f"{where}: {error}") from error
    return GameRecord(task.index, task.table, task.deal, task.seating, result)
