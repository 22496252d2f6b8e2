"""Game logs: a game as JSON (config, seed, chance outcomes, every action) and exact replay.

A log is self-checking: replay re-runs the game from its config and seed and compares
every recorded chance outcome and the final result, so a log that was edited, truncated
or produced by another engine version fails loudly with :class:`GameLogError`.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Final

from biblios_env.engine.game import Game, IllegalActionError

LOG_FORMAT: Final = "biblios-game-log"
LOG_VERSION: Final = 1
_CONFIG_KEYS: Final = ("num_players", "penalty", "strict_bids", "first_player", "auction_order")


class GameLogError(ValueError):
    """A game log that is malformed or does not replay to what it records."""


def to_log(game: Game, **metadata: Any) -> dict[str, Any]:
    """The game so far as a JSON-ready dict; ``metadata`` (agent names, ...) is stored as is."""
    state = game.state
    log: dict[str, Any] = {
        "format": LOG_FORMAT,
        "version": LOG_VERSION,
        "config": dict(game.config),
        "seed": game.seed,
        "deck_given": game.deck_given,
        "chance": {
            "deck": list(game.deck),
            "removed": state.removed[:],
            "events": [[kind, cards[:]] for kind, cards in state.chance],
        },
        "actions": game.history[:],
        "num_actions": len(game.history),  # makes a truncated or padded action list detectable
        "metadata": metadata,
    }
    if game.is_over:
        log["result"] = {"vp": state.vp[:], "winners": state.winners[:]}
    return log


def save_log(game: Game, path: str | Path, **metadata: Any) -> Path:
    path = Path(path)
    path.write_text(json.dumps(to_log(game, **metadata)))
    return path


def load_log(path: str | Path) -> Game:
    """Read a log file and replay it; raises GameLogError for unreadable or inconsistent logs."""
    path = Path(path)
    try:
        log = json.loads(path.read_text())
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as error:
        raise GameLogError(f"cannot read game log {path}: {error}") from error
    return replay(log)


def _require(log: dict[str, Any], key: str, kind: type) -> Any:
    if key not in log:
        raise GameLogError(f"game log has no {key!r} entry")
    value = log[key]
    if not isinstance(value, kind) or (isinstance(value, bool) and kind is not bool):
        raise GameLogError(f"game log entry {key!r} must be {kind.__name__}, got {type(value).__name__}: {value!r:.80}")
    return value


def replay(log: dict[str, Any], *, auto_forced: bool = True) -> Game:
    """Rebuild the game a log records, checking every chance outcome and the result."""
    if not isinstance(log, dict):
        raise GameLogError(f"a game log is a JSON object, got {type(log).__name__}")
    if log.get("format") != LOG_FORMAT:
        raise GameLogError(f"not a game log: format is {log.get('format')!r}, expected {LOG_FORMAT!r}")
    if type(log.get("version")) is not int or log.get("version") != LOG_VERSION:
        raise GameLogError(f"game log version {log.get('version')!r} is not supported (expected {LOG_VERSION})")
    config = _require(log, "config", dict)
    unknown = sorted(set(config) - set(_CONFIG_KEYS))
    missing = [key for key in _CONFIG_KEYS if key not in config]
    if unknown or missing:
        raise GameLogError(
            f"game log config must have exactly the keys {list(_CONFIG_KEYS)}; unknown: {unknown}, missing: {missing}"
        )
    deck_given = _require(log, "deck_given", bool)
    seed = _require(log, "seed", int)
    chance = _require(log, "chance", dict)
    actions = _require(log, "actions", list)
    num_actions = _require(log, "num_actions", int)
    deck = chance.get("deck")
    try:
        game = Game(**config, seed=seed, deck=deck if deck_given else None, auto_forced=False)
    except ValueError as error:
        raise GameLogError(f"game log config, seed or deck is invalid: {error}") from error
    if list(game.deck) != deck:
        raise GameLogError(f"game log deck {deck!r:.80} is not the deck seed {seed} deals: {list(game.deck)!r:.80}")
    if game.state.removed != chance.get("removed"):
        raise GameLogError(
            f"game log removed cards {chance.get('removed')!r} differ from the replay's {game.state.removed!r}"
        )
    for index, action in enumerate(actions):
        if isinstance(action, bool) or not isinstance(action, int):
            raise GameLogError(f"game log action #{index} must be an int action id, got {action!r}")
        try:
            game.apply(action)
        except IllegalActionError as error:
            raise GameLogError(f"game log action #{index} does not replay: {error}") from error
    events = [[kind, cards] for kind, cards in game.state.chance]
    if events != chance.get("events"):
        raise GameLogError(
            f"game log chance events {chance.get('events')!r:.120} differ from the replay's {events!r:.120}"
        )
    result = log.get("result")
    if result is not None:
        replayed = {"vp": game.state.vp, "winners": game.state.winners} if game.is_over else None
        if replayed != result:
            raise GameLogError(f"game log result {result!r} differs from the replay's {replayed!r}")
    if num_actions != len(actions):  # checked last: the specific checks above name the problem better
        raise GameLogError(f"game log says it holds {num_actions} actions but its action list has {len(actions)}")
    game.auto_forced = auto_forced
    if auto_forced:
        game.apply_forced()  # resume normal play from the replayed position
    return game
