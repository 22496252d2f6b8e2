"""A saved game, step by step: the log read and checked (:func:`read_saved_game`), then replayed
one action at a time with the narration of each move for every perspective asked (:func:`walk`).

Step 0 is the deal; step ``k`` is the position after the log's ``k``-th action. A log may carry
agent annotations in its metadata (see :func:`read_saved_game`); they are not part of the game
(``load_log`` does not check metadata), so they are checked here.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

from biblios_env.engine.config import GameConfig
from biblios_env.engine.game import Game
from biblios_env.engine.log import GameLogError, load_log
from biblios_env.engine.state import NO_SEAT, State
from experiments.table.narration import Before, Line, Narrator
from experiments.table.screen import Screen

#: The label of a seat whose log does not name its agent.
UNKNOWN_AGENT: Final = "unknown"
#: The metadata entry of the per-decision agent annotations.
ANNOTATIONS: Final = "annotations"

#: A perspective: a seat, or ``None`` for the whole table.
Viewer = int | None


@dataclass(frozen=True, slots=True)
class SavedGame:
    """A checked game log: how to deal the game again, its actions, and what its metadata says
    of the agents (their labels, and their annotations by action position)."""

    path: Path
    config: GameConfig
    seed: int
    deck: tuple[int, ...] | None  # the deck the log gave, None when the seed dealt it
    actions: tuple[int, ...]
    labels: tuple[str, ...]
    annotations: dict[int, dict[str, Any]]

    @property
    def num_players(self) -> int:
        return self.config.num_players

    def seat_name(self, seat: int) -> str:
        """``"player_1 (value)"``: a seat as the whole table names it."""
        return Screen(NO_SEAT, self.labels).name(seat)


def read_saved_game(path: str | Path) -> SavedGame:
    """Read and check a game log; raises :class:`GameLogError` as ``load_log`` does, with its message.

    Agent annotations are optional: ``metadata["annotations"]`` maps the position of an action in
    the log's ``actions`` (a decimal string, ``"0"`` for the first) to an object of named values,
    e.g. ``{"17": {"agent": "ismcts", "visits": {"bid 3": 412, "pass": 88}}}``.
    """
    path = Path(path)
    game = load_log(path)  # every check of the log, with load_log's messages
    log = json.loads(path.read_text())  # read and checked above
    metadata = log.get("metadata")
    metadata = metadata if isinstance(metadata, dict) else {}
    actions = tuple(log["actions"])
    return SavedGame(
        path,
        game.config,
        game.seed,
        game.deck if game.deck_given else None,
        actions,
        _labels(metadata, game.config.num_players),
        _annotations(metadata.get(ANNOTATIONS), len(actions)),
    )


def _labels(metadata: dict[str, Any], num_players: int) -> tuple[str, ...]:
    agents = metadata.get("agents")
    if isinstance(agents, list) and len(agents) == num_players:
        return tuple(str(agent) for agent in agents)
    return (UNKNOWN_AGENT,) * num_players


def _annotations(raw: object, num_actions: int) -> dict[int, dict[str, Any]]:
    """The annotations by action position; GameLogError naming the first entry that is not one."""
    if raw is None:
        return {}
    if not isinstance(raw, dict):
        raise GameLogError(
            f"game log metadata {ANNOTATIONS!r} must map action positions to objects, got {type(raw).__name__}"
        )
    annotations: dict[int, dict[str, Any]] = {}
    for key, note in raw.items():
        if not (key.isascii() and key.isdigit() and int(key) < num_actions):
            raise GameLogError(
                f"game log metadata {ANNOTATIONS!r} key {key[:40]!r} must be an action position, 0..{num_actions - 1}"
            )
        if not isinstance(note, dict):
            raise GameLogError(
                f"game log metadata {ANNOTATIONS!r}[{key!r}] must be an object of named values, "
                f"got {type(note).__name__}"
            )
        annotations[int(key)] = note
    return annotations


def annotation_lines(note: dict[str, Any]) -> list[tuple[str, str]]:
    """An annotation as ``(name, text)`` pairs, the way the page and the terminal show it: an object
    as ``key value`` pairs and a list as its items, comma-separated; floats to four digits."""
    return [(str(name), _value_text(value)) for name, value in note.items()]


def _value_text(value: object) -> str:
    if isinstance(value, dict):
        return ", ".join(f"{key} {_value_text(inner)}" for key, inner in value.items())
    if isinstance(value, list):
        return ", ".join(map(_value_text, value))
    if isinstance(value, float):
        return f"{value:.4g}"
    return json.dumps(value) if value is None or isinstance(value, bool) else str(value)


@dataclass(frozen=True, slots=True)
class Step:
    """One step of the replay: the action that led to it and its narration per perspective."""

    number: int  # 0: the deal; k: after the k-th action
    action: int | None  # the action applied (None at the deal)
    seat: int  # the seat that acted (NO_SEAT at the deal)
    forced: bool  # the action was the only legal one
    lines: dict[Viewer, list[Line]]


def walk(saved: SavedGame, viewers: Sequence[Viewer]) -> Iterator[tuple[Step, State]]:
    """Every step of the game with its position, told for each of ``viewers``.

    The state is the live game's: read what you need from it before taking the next step.
    """
    game = Game.from_config(saved.config, seed=saved.seed, deck=saved.deck, auto_forced=False)
    state = game.state
    narrators = {viewer: Narrator(viewer, _names(saved, viewer)) for viewer in viewers}
    yield (
        Step(0, None, NO_SEAT, False, {viewer: narrator.opening(state) for viewer, narrator in narrators.items()}),
        state,
    )
    for number, action in enumerate(saved.actions, start=1):
        before = Before.of(state)
        forced = len(game.legal_actions()) == 1
        game.apply(action)
        lines = {viewer: narrator.tell(before, state, action, forced) for viewer, narrator in narrators.items()}
        yield Step(number, action, before.seat, forced, lines), state


def _names(saved: SavedGame, viewer: Viewer) -> Callable[[int], str]:
    """How ``viewer``'s narration names the seats: the terminal's names, "You" for the viewer's own seat."""
    return Screen(NO_SEAT if viewer is None else viewer, saved.labels).name
