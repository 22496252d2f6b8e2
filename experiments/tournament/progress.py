"""What a tournament tells its user while it plays: the plan line at the start and, where no
progress bar is drawn (``--no-progress``, a log file), a plain progress line now and then, so that
the log of a long run shows it is alive without filling up with one line per game.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from typing import Final, Protocol

from experiments.tournament.schedule import TournamentConfig, seat_orders

#: A progress line comes once at least this many seconds *and* this share of the games have
#: passed since the last one (whichever is rarer): about ten lines a run, never two within 10 s.
LINE_SECONDS: Final = 10.0
LINE_FRACTION: Final = 0.1


class Progress(Protocol):
    """What follows the games as they finish: a tqdm bar or :class:`ProgressLines`."""

    def update(self, n: int = 1) -> object: ...

    def close(self) -> None: ...


def _plural(count: int, noun: str) -> str:
    return f"{count} {noun}" + ("" if count == 1 else "s")


def plan_line(config: TournamentConfig, games: int, finished: int, workers: int, backend: str) -> str:
    """The run's plan, printed before its first game: how many games of which schedule, how many
    of them a resumed run has already, and the workers that play the rest."""
    seatings = len(seat_orders(config.num_players, config.seatings))
    tables = len(config.tables())
    scheduled = config.deals * seatings * tables
    which = _plural(games, "game") if games == scheduled else f"{games} of the {scheduled} games"
    before = f"; {finished} finished before" if finished else ""
    return (
        f"plan: {which} ({_plural(config.deals, 'deal')} x {_plural(seatings, 'seating')} x "
        f"{_plural(tables, 'table')}){before}; {games - finished} to play on {_plural(workers, 'worker')} ({backend})"
    )


def _duration(seconds: float) -> str:
    if seconds < 120:
        return f"{seconds:.0f} s"
    if seconds < 7200:
        return f"{seconds / 60:.1f} min"
    return f"{seconds / 3600:.1f} h"


class ProgressLines:
    """Plain progress lines written to ``write``: one when at least ``every_seconds`` have passed
    and ``every_fraction`` of the run's games have finished since the last one. A line says how
    many games are finished, the time so far and an estimate of the time left; its words depend
    only on the counts and on ``clock``, so a test that brings its own clock reads exact lines."""

    def __init__(
        self,
        total: int,
        finished: int,
        write: Callable[[str], None],
        *,
        clock: Callable[[], float] = time.monotonic,
        every_seconds: float = LINE_SECONDS,
        every_fraction: float = LINE_FRACTION,
    ) -> None:
        self.total = total
        self.done = self.first = self.last_done = finished
        self.write = write
        self.clock = clock
        self.every_seconds = every_seconds
        self.every_games = max(1, math.ceil(total * every_fraction))
        self.start = self.last_time = clock()

    def update(self, n: int = 1) -> None:
        """``n`` more games finished: a line if it is time for one."""
        self.done += n
        now = self.clock()
        if self.done - self.last_done < self.every_games or now - self.last_time < self.every_seconds:
            return
        self.last_done, self.last_time = self.done, now
        elapsed = now - self.start
        left = (self.total - self.done) * elapsed / (self.done - self.first)
        self.write(
            f"{self.done} of {self.total} games finished ({self.done / self.total:.0%}); "
            f"{_duration(elapsed)} so far, about {_duration(left)} left"
        )

    def close(self) -> None:
        """Nothing to end (a bar would clear its line): the run's summary follows."""
