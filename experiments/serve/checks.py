"""The request bodies, checked before anything changes: what a new game asks for
(:func:`new_game_request`) and the action a player sends (:func:`action_request`). A bad body is a
422 whose message names the field, the value given and what was expected.

An action names the move it answers: ``{"action": A, "moves": N}``, ``N`` the ``moves`` of the view
the player acted on. A request sent twice (a client retrying after a timeout) then finds the game
moved on and is refused (409) instead of being played a second time."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Final

from biblios_env.engine.config import PENALTIES, GameConfig
from experiments.serve.errors import ApiError

#: The fields of ``POST /api/games``; the first three are required.
NEW_GAME_FIELDS: Final = ("players", "seat", "opponents", "seed", "autoplay", "penalty", "strict_bids")
REQUIRED_FIELDS: Final = NEW_GAME_FIELDS[:3]
PLAYER_COUNTS: Final = (2, 3, 4)
#: The body of ``POST /api/games/{game_id}/actions``: the action, and the moves of the view it answers.
ACTION_FIELD: Final = "action"
MOVES_FIELD: Final = "moves"


@dataclass(frozen=True, slots=True)
class NewGame:
    """A checked request for a new game. ``opponents`` holds one agent spec per other seat, in seat
    order; ``autoplay``, when given, is the agent spec that plays the player's own seat too: a game
    of bots only, watched from that seat."""

    players: int
    seat: int
    opponents: tuple[str, ...]
    seed: int | None = None
    autoplay: str | None = None
    penalty: str = GameConfig().penalty
    strict_bids: bool = False


def _int(body: dict[str, Any], name: str, expected: str) -> int:
    value = body[name]
    if isinstance(value, bool) or not isinstance(value, int):
        raise ApiError(422, f"{name} must be {expected}, got {value!r:.80}")
    return value


def new_game_request(body: object) -> NewGame:
    """The new game ``body`` asks for; ApiError 422 naming the first field that is wrong."""
    if not isinstance(body, dict):
        raise ApiError(422, f"a new game is a JSON object with {', '.join(NEW_GAME_FIELDS)}, got {body!r:.80}")
    unknown = sorted(set(body) - set(NEW_GAME_FIELDS))
    if unknown:
        raise ApiError(
            422, f"unknown field(s) {unknown}; a new game takes: {', '.join(NEW_GAME_FIELDS)}", choices=NEW_GAME_FIELDS
        )
    missing = [name for name in REQUIRED_FIELDS if name not in body]
    if missing:
        raise ApiError(422, f"a new game needs {', '.join(REQUIRED_FIELDS)}; missing: {', '.join(missing)}")
    players = _int(body, "players", "2, 3 or 4")
    if players not in PLAYER_COUNTS:
        raise ApiError(422, f"players must be 2, 3 or 4, got {players}", choices=PLAYER_COUNTS)
    seat = _int(body, "seat", f"a seat of the {players}-player game, 0..{players - 1}")
    if not 0 <= seat < players:
        raise ApiError(422, f"seat must be a seat of the {players}-player game, 0..{players - 1}, got {seat}")
    return NewGame(
        players,
        seat,
        _opponents(body["opponents"], players),
        _seed(body.get("seed")),
        _autoplay(body.get("autoplay")),
        _penalty(body.get("penalty", GameConfig().penalty)),
        _strict_bids(body.get("strict_bids", False)),
    )


def _opponents(value: object, players: int) -> tuple[str, ...]:
    expected = f'a list of {players - 1} agent spec(s), one per other seat in seat order (e.g. "value")'
    if not isinstance(value, list) or not all(isinstance(spec, str) for spec in value):
        raise ApiError(422, f"opponents must be {expected}, got {value!r:.80}")
    if len(value) != players - 1:
        raise ApiError(422, f"opponents must be {expected}, got {len(value)}")
    return tuple(value)


def _seed(value: object) -> int | None:
    if value is not None and (isinstance(value, bool) or not isinstance(value, int) or not 0 <= value < 2**63):
        expected = "a non-negative integer below 2**63, or null for a random deal"
        raise ApiError(422, f"seed must be {expected}, got {value!r:.80}")
    return value


def _autoplay(value: object) -> str | None:
    if value is not None and not isinstance(value, str):
        raise ApiError(422, f"autoplay must be the agent spec that plays your seat (or null), got {value!r:.80}")
    return value


def _penalty(value: object) -> str:
    if value not in PENALTIES:
        raise ApiError(422, f"penalty must be one of {', '.join(PENALTIES)}, got {value!r:.80}", choices=PENALTIES)
    return str(value)


def _strict_bids(value: object) -> bool:
    if not isinstance(value, bool):
        raise ApiError(422, f"strict_bids must be true or false, got {value!r:.80}")
    return value


def _whole(body: dict[str, Any], name: str) -> bool:
    value = body.get(name)
    return isinstance(value, int) and not isinstance(value, bool)


def action_request(body: object, legal_actions: list[dict[str, Any]]) -> tuple[int, int]:
    """The action id and the moves of ``{"action": ID, "moves": N}``; ApiError 422 naming the legal
    ones for any other body (a missing ``moves`` included)."""
    if (
        isinstance(body, dict)
        and set(body) == {ACTION_FIELD, MOVES_FIELD}
        and all(_whole(body, name) for name in (ACTION_FIELD, MOVES_FIELD))
    ):
        return body[ACTION_FIELD], body[MOVES_FIELD]
    missing = " (moves is missing)" if isinstance(body, dict) and MOVES_FIELD not in body else ""
    raise ApiError(
        422,
        f'an action is {{"action": ID, "moves": N}}: ID one of the legal action ids '
        f"{[item['action'] for item in legal_actions]}, N the moves of the view you answer{missing}; "
        f"got {body!r:.80}",
        legal_actions=legal_actions,
    )
