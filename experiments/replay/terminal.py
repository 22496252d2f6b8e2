"""Stepping through a saved game in the terminal (``python -m experiments.replay LOG``): each
decision told as the whole table or one seat saw it (the terminal game's narration), one Enter
at a time, the table on demand, the score table at the end.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Final

from rich.console import Console, RenderableType
from rich.panel import Panel
from rich.text import Text

from biblios_env.engine.state import NO_SEAT, Phase, State
from biblios_env.engine.views import player_view
from biblios_env.text import full_table_text
from experiments.replay.timeline import SavedGame, Step, Viewer, annotation_lines, walk
from experiments.table.narration import print_lines
from experiments.table.screen import Screen

InputFunction = Callable[[str], str]
HELP: Final = "Enter: the next decision · n: on to the next gift turn or auction · t: the table now · q: quit"


class TerminalReplay:
    """One saved game told in the terminal from ``viewer``'s perspective (a seat, or ``None`` for
    the whole table); ``input_function`` reads the keys (``input`` by default in the command line)."""

    def __init__(self, saved: SavedGame, viewer: Viewer, *, console: Console, input_function: InputFunction) -> None:
        self.saved = saved
        self.viewer = viewer
        self.console = console
        self.input_function = input_function
        self.screen = Screen(NO_SEAT if viewer is None else viewer, saved.labels)

    def run(self) -> None:
        """Tell the game step by step until its last action, or until the reader quits."""
        saved = self.saved
        last = len(saved.actions)
        who = "the whole table (every card shown)" if self.viewer is None else f"player_{self.viewer}'s view"
        self.console.print(
            Panel(Text(f"{saved.path.name}: {saved.num_players} players, seed {saved.seed}, {who}.\n{HELP}"),
                  title="Replay"),
        )  # fmt: skip
        skipping = False
        for step, state in walk(saved, [self.viewer]):
            lines = step.lines[self.viewer]
            skipping = skipping and not any(line.heading for line in lines)
            self._tell(step)
            if step.number == last:
                self._finish(state)
                return
            if not skipping:
                answer = self._ask(step.number, last, state)
                if answer == "q":
                    return
                skipping = answer == "n"

    def _tell(self, step: Step) -> None:
        print_lines(self.console, step.lines[self.viewer])
        note = self.saved.annotations.get(step.number - 1)
        if note is not None and self.viewer in (None, step.seat):  # an agent's notes are its own
            text = " · ".join(f"{name}: {value}" for name, value in annotation_lines(note))
            self.console.print(Text(f"  agent notes: {text}", style="dim"), highlight=False)

    def _ask(self, number: int, last: int, state: State) -> str:
        """Read keys until one moves on: ``""`` (the next decision), ``"n"`` or ``"q"``; closing
        the input quits."""
        while True:
            try:
                answer = self.input_function(f"[{number}/{last}] Enter, n, t, q: ").strip().lower()
            except EOFError:
                return "q"
            if answer in ("", "n", "q"):
                return answer
            if answer == "t":
                self.console.print(self._table(state))
            else:
                self.console.print(Text(f"{answer!r} is not a key here. {HELP}", style="yellow"), highlight=False)

    def _table(self, state: State) -> RenderableType:
        if self.viewer is None:
            return Text(full_table_text(state))
        return self.screen.table(player_view(state, self.viewer))

    def _finish(self, state: State) -> None:
        if state.phase == Phase.END:
            self.console.print(self.screen.score_table(state))
        else:
            self.console.print(Text("The log ends here: the game was not finished.", style="bold"))
