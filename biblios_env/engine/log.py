"""Game logs: a game as JSON (config, seed, chance outcomes, every action) and exact replay.

A log is self-checking. Replay re-runs the game from its config and seed and compares every
recorded chance outcome, the result, and a digest (SHA-256) of the action list and of the
whole position the game reached, generator state included. So a log that was edited in any
way that changes the game (even to another legal action that replays, such as paying with
another gold card of the same value), truncated, or produced by an engine that plays the
same actions differently fails loudly with :class:`GameLogError`; so does every malformed
log (wrong types, numbers too large to read, nesting too deep), never another exception.
The metadata (agent names, ...) is not part of the game and is not checked.

A log also records :data:`ACTION_LAYOUT`, the fingerprint of the action table its action ids
refer to; a log written for another table is refused with a message naming both, before any
action is replayed (``CHANGELOG.md``, the version rule).

Version 4 added the ``preset`` game option to the config; older logs, which have none, were
dealt from the standard cards and replay as such. Version 3 added the action layout. Version 2
logs (without it) still replay: their digest checks them. Version 1 logs are refused (they have
no digest, so they cannot be checked).
"""

from __future__ import annotations

import hashlib
import json
import reprlib
from pathlib import Path
from typing import Any, Final, get_type_hints

from biblios_env.actions import NUM_ACTIONS, describe, table_markdown
from biblios_env.cards import NUM_CARDS
from biblios_env.engine.config import GameConfig
from biblios_env.engine.game import Game, IllegalActionError
from biblios_env.engine.state import State

LOG_FORMAT: Final = "biblios-game-log"
LOG_VERSION: Final = 4
#: The versions :func:`replay` reads: 2 has no action layout (its digest still checks it).
READABLE_VERSIONS: Final = (2, 3, 4)
#: Game options added to the config after version 2, with the version that added each: an older
#: log has none of them, and its game had the option's default.
_CONFIG_ADDED: Final = {"preset": 4}
#: A log's config holds exactly the game options, each of its JSON type (the names and types are
#: :class:`GameConfig`'s fields; GameConfig checks the values themselves).
_CONFIG_TYPES: Final[dict[str, type]] = get_type_hints(GameConfig)
_CHANCE_KEYS: Final = ("deck", "removed", "events")
#: The State fields a digest covers: everything the rules read or write (the derived indicator
#: rows and per-seat penalty records are rebuilt from these, so they add nothing).
_DIGEST_FIELDS: Final = (
    "num_players", "first_player", "bluffs", "strict_bids", "auction_order_placed",
    "phase", "decision", "current_player", "active_player",
    "dice", "hands", "draw_pile", "auction_pile", "common_area", "discard", "removed",
    "drawn_card", "kept_card", "quota", "taker", "church_card", "church_owner", "church_resume",
    "auction_card", "high_bid", "high_bidder", "passed", "excluded", "payment", "payment_value",
    "public_hands", "public_discard", "private_discard", "auction_contributions", "penalty_moves",
    "public_at_last_loss", "chance", "vp", "winners", "category_winners",
)  # fmt: skip
#: Python refuses to turn ints of more digits into text (sys.get_int_max_str_digits), so
#: messages show such ints by size; no log field needs anywhere near this many bits.
_LARGEST_SHOWN_BITS: Final = 256


def _action_layout() -> str:
    """A short hash of the action table: the number of actions and what every id means.

    The engine-level part of :data:`biblios_env.layout.LAYOUT_FINGERPRINT` (which also hashes
    the observation, a layer above the engine): a log is a list of action ids, so it depends
    on this table and on nothing the observation holds.
    """
    table = {
        "num_actions": NUM_ACTIONS,
        "table": table_markdown(),
        "meanings": [describe(action) for action in range(NUM_ACTIONS)],
    }
    digest = hashlib.sha256(json.dumps(table, sort_keys=True).encode()).hexdigest()
    return f"actions-{NUM_ACTIONS}-{digest[:12]}"


#: Recorded in every log; a log recorded for another action table is refused.
ACTION_LAYOUT: Final = _action_layout()


class GameLogError(ValueError):
    """A game log that is malformed or does not replay to what it records."""


class _ShortRepr(reprlib.Repr):
    """``repr`` for error messages that cannot fail: bounded depth and length, huge ints by size."""

    def __init__(self) -> None:
        super().__init__()
        self.maxlevel, self.maxlist, self.maxdict, self.maxstring, self.maxother = 3, 8, 4, 40, 40

    def repr_int(self, value: int, level: int) -> str:
        if value.bit_length() > _LARGEST_SHOWN_BITS:
            return f"<an int of {value.bit_length()} bits>"
        return super().repr_int(value, level)


_show = _ShortRepr().repr


def game_digest(game: Game) -> str:
    """SHA-256 (hex) of the game's action list and of its whole current position.

    Two games with the same digest made the same moves and reached the same position with the
    same generator state, so they also go on alike.
    """
    state = game.state
    content = {name: getattr(state, name) for name in _DIGEST_FIELDS}
    content["generator"] = state.rng.bit_generator.state
    text = json.dumps([game.history, content], sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()


def to_log(game: Game, **metadata: Any) -> dict[str, Any]:
    """The game so far as a JSON-ready dict; ``metadata`` (agent names, ...) is stored as is.

    A log replays a game from its seed, so a game whose random events were given by the caller
    (``explicit_chance``) has none to replay from: it is refused (its action history, chance
    outcomes included, is the record of such a game)."""
    state = game.state
    if state.explicit_chance:
        raise ValueError(
            "a game with explicit chance cannot be logged: a log replays the random events from the seed; "
            "keep game.history (the chance outcomes are in it) instead"
        )
    log: dict[str, Any] = {
        "format": LOG_FORMAT,
        "version": LOG_VERSION,
        "action_layout": ACTION_LAYOUT,
        "config": game.config.to_dict(),
        "seed": game.seed,
        "deck_given": game.deck_given,
        "chance": {
            "deck": list(game.deck),
            "removed": state.removed[:],
            "events": [[kind, list(cards)] for kind, cards in state.chance],
        },
        "actions": game.history[:],
        "num_actions": len(game.history),  # makes a truncated or padded action list detectable
        "digest": game_digest(game),
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
    except (OSError, UnicodeDecodeError, ValueError) as error:  # ValueError: bad JSON, or an int too long to read
        raise GameLogError(f"cannot read game log {path}: {error}") from error
    except RecursionError:
        raise GameLogError(f"cannot read game log {path}: its JSON is nested too deeply") from None
    return replay(log)


def replay(log: dict[str, Any], *, auto_forced: bool = True) -> Game:
    """Rebuild the game a log records, checking every chance outcome, the result and the digest."""
    _check_header(log)
    if log["version"] >= 3:
        _check_action_layout(_require(log, "action_layout", str))
    config = _check_config(_require(log, "config", dict), log["version"])
    deck_given = _require(log, "deck_given", bool)
    seed = _require(log, "seed", int)
    if seed < 0:
        raise GameLogError(f"game log seed must be a non-negative int, got {_show(seed)}")
    chance = _check_chance(_require(log, "chance", dict))
    actions = _check_actions(_require(log, "actions", list))
    num_actions = _require(log, "num_actions", int)
    digest = _require(log, "digest", str)
    if num_actions != len(actions):
        raise GameLogError(
            f"game log says it holds {_show(num_actions)} actions but its action list has {len(actions)}"
        )
    game = _new_game(config, seed, chance["deck"] if deck_given else None)
    if list(game.deck) != chance["deck"]:
        raise GameLogError(
            f"game log deck {_show(chance['deck'])} is not the deck seed {_show(seed)} deals: {_show(list(game.deck))}"
        )
    if game.state.removed != chance["removed"]:
        raise GameLogError(
            f"game log removed cards {_show(chance['removed'])} differ from the replay's {_show(game.state.removed)}"
        )
    for index, action in enumerate(actions):
        try:
            game.apply(action)
        except IllegalActionError as error:
            raise GameLogError(f"game log action #{index} does not replay: {error}") from error
    _check_outcome(log, chance, game.state, game.is_over)
    replayed = game_digest(game)
    if replayed != digest:
        raise GameLogError(
            f"game log digest {_show(digest)} differs from the replay's {replayed!r}: the replayed game is not the "
            "recorded one (an action, the config or the seed was changed, or the log comes from an engine that "
            "plays these actions differently)"
        )
    game.auto_forced = auto_forced
    if auto_forced:
        game.apply_forced()  # resume normal play from the replayed position
    return game


# ----------------------------------------------------------------------------- checks
def _require(log: dict[str, Any], key: str, kind: type) -> Any:
    if key not in log:
        raise GameLogError(f"game log has no {key!r} entry")
    value = log[key]
    if not isinstance(value, kind) or (isinstance(value, bool) and kind is not bool):
        raise GameLogError(
            f"game log entry {key!r} must be {kind.__name__}, got {type(value).__name__}: {_show(value)}"
        )
    return value


def _check_header(log: object) -> None:
    if not isinstance(log, dict):
        raise GameLogError(f"a game log is a JSON object, got {type(log).__name__}")
    if log.get("format") != LOG_FORMAT:
        raise GameLogError(f"not a game log: format is {_show(log.get('format'))}, expected {LOG_FORMAT!r}")
    version = log.get("version")
    if type(version) is int and 1 <= version < READABLE_VERSIONS[0]:
        raise GameLogError(
            f"game log version {version} is an older format, no longer read: it has no digest of the game, so an "
            f"edited log could replay unnoticed (this version of biblios_env reads versions {list(READABLE_VERSIONS)})"
        )
    if type(version) is not int or version not in READABLE_VERSIONS:
        raise GameLogError(
            f"game log version {_show(version)} is not supported (expected one of {list(READABLE_VERSIONS)})"
        )


def _check_action_layout(action_layout: str) -> None:
    """The log's action ids mean what they mean here (the action table is the same)."""
    if action_layout != ACTION_LAYOUT:
        raise GameLogError(
            f"game log was written for action layout {_show(action_layout)}, but this code has {ACTION_LAYOUT!r}: "
            "its action ids may mean other moves here (see CHANGELOG.md); replay it with the biblios_env version "
            "that wrote it"
        )


def _check_config(config: dict[str, Any], version: int) -> dict[str, Any]:
    """Exactly the config keys of the log's version, each of its JSON type (GameConfig checks the
    values themselves)."""
    expected = {key: kind for key, kind in _CONFIG_TYPES.items() if _CONFIG_ADDED.get(key, 0) <= version}
    unknown = sorted(map(_show, set(config) - set(expected)))
    missing = [key for key in expected if key not in config]
    if unknown or missing:
        raise GameLogError(
            f"game log config must have exactly the keys {list(expected)}; unknown: {unknown}, missing: {missing}"
        )
    for key, kind in expected.items():
        value = config[key]
        if type(value) is not kind or (isinstance(value, int) and kind is int and value.bit_length() > 8):
            raise GameLogError(f"game log config {key!r} must be a small {kind.__name__}, got {_show(value)}")
    return config


def _card_list(value: object, where: str) -> list[int]:
    """``value`` as a list of card ids, or GameLogError naming ``where``."""
    if not isinstance(value, list):
        raise GameLogError(f"game log {where} must be a list of card ids, got {type(value).__name__}: {_show(value)}")
    for position, card in enumerate(value):
        if type(card) is not int or not 0 <= card < NUM_CARDS:
            raise GameLogError(
                f"game log {where}[{position}] must be a card id in 0..{NUM_CARDS - 1}, got {_show(card)}"
            )
    return value


def _check_chance(chance: dict[str, Any]) -> dict[str, Any]:
    for key in _CHANCE_KEYS:
        if key not in chance:
            raise GameLogError(f"game log chance has no {key!r} entry")
    _card_list(chance["deck"], "chance deck")
    _card_list(chance["removed"], "chance removed")
    events = chance["events"]
    if not isinstance(events, list):
        raise GameLogError(f"game log chance events must be a list, got {type(events).__name__}: {_show(events)}")
    for index, event in enumerate(events):
        if not (isinstance(event, list) and len(event) == 2 and isinstance(event[0], str)):
            raise GameLogError(f"game log chance events[{index}] must be [kind, cards], got {_show(event)}")
        _card_list(event[1], f"chance events[{index}] cards")
    return chance


def _check_actions(actions: list[Any]) -> list[int]:
    for index, action in enumerate(actions):
        if type(action) is not int:
            raise GameLogError(f"game log action #{index} must be an int action id, got {_show(action)}")
        if not 0 <= action < NUM_ACTIONS:
            raise GameLogError(
                f"game log action #{index} must be an action id in 0..{NUM_ACTIONS - 1}, got {_show(action)}"
            )
    return actions


def _new_game(config: dict[str, Any], seed: int, deck: list[int] | None) -> Game:
    try:
        return Game.from_config(GameConfig(**config), seed=seed, deck=deck, auto_forced=False)
    except ValueError as error:
        raise GameLogError(f"game log config, seed or deck is invalid: {error}") from error


def _check_outcome(log: dict[str, Any], chance: dict[str, Any], state: State, is_over: bool) -> None:
    """The replay's chance events and result are the ones recorded."""
    events = [[kind, list(cards)] for kind, cards in state.chance]
    if events != chance["events"]:
        raise GameLogError(f"game log chance events {_show(chance['events'])} differ from the replay's {_show(events)}")
    result = log.get("result")
    if result is not None:
        replayed = {"vp": state.vp, "winners": state.winners} if is_over else None
        if replayed != result:
            raise GameLogError(f"game log result {_show(result)} differs from the replay's {_show(replayed)}")
