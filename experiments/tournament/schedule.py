"""What a tournament plays: its config, its tables and seatings, and every game's seeds.

The schedule is a pure function of the config: game ``i`` of deal ``d`` gets its seeds from
:func:`derive_seed` alone, never from the order the games are played in, so any game can be
played on any worker, replayed alone (``--only-games``) or left for a resumed run.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any, Final

from biblios_env.engine.config import GameConfig, check_seed
from experiments.common.match import AgentSpec
from experiments.common.seeds import AGENT, DEAL, derive_seed

HEAD_TO_HEAD: Final = "head-to-head"
ROUND_ROBIN: Final = "round-robin"
MODES: Final = (HEAD_TO_HEAD, ROUND_ROBIN)
SEATINGS: Final = ("cyclic", "all")


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
    preset: str = "standard"

    def __post_init__(self) -> None:
        GameConfig(self.num_players, self.penalty, self.strict_bids, preset=self.preset)  # checks the game options
        check_seed(self.seed)
        labels = [spec.label for spec in self.agents]
        if self.mode not in MODES:
            raise ValueError(f"mode must be one of {MODES}, got {self.mode!r}")
        if self.seatings not in SEATINGS:
            raise ValueError(f"seatings must be one of {SEATINGS}, got {self.seatings!r}")
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
    def game_config(self) -> GameConfig:
        """The options of every game of the tournament."""
        return GameConfig(self.num_players, self.penalty, self.strict_bids, preset=self.preset)

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
            "preset": self.preset,
        }


def selected_tasks(config: TournamentConfig, only_games: Iterable[int] | None) -> list[GameTask]:
    """The scheduled games, or only the games ``only_games`` of them (an index outside the schedule
    is a ValueError naming it): what a run plays and what its run folder expects."""
    tasks = config.schedule()
    if only_games is None:
        return tasks
    wanted = sorted(set(only_games))
    unknown = [index for index in wanted if not 0 <= index < len(tasks)]
    if unknown:
        raise ValueError(f"--only-games {unknown}: this tournament has games 0..{len(tasks) - 1}")
    return [tasks[index] for index in wanted]
