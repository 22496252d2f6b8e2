"""The games the server holds (:class:`GameStore`): their ids and tokens, the limits (open games at
once, idle time before a game expires), the token check, the bots' rules and threads
(:class:`~experiments.serve.specs.BotRules`, :class:`~experiments.serve.thinking.Thinker`), and
the logs of the data folder (written after each move, resumed at start, finished ones served again).

A game's log is written only once the answer that created it has been sent (:meth:`GameStore.confirm`):
a game whose player never got its token is never resumed, and expires as any other.

The store is used from the event loop, except :meth:`GameStore.new_game`, :meth:`GameStore.save`,
:meth:`GameStore.confirm` and :meth:`GameStore.load_finished`, which run in worker threads (a bot
may take a while to build; a log takes a file write).
"""

from __future__ import annotations

import hashlib
import hmac
import json
import secrets
import time
from collections.abc import Callable
from typing import Final

from biblios_env.engine.log import to_log
from experiments.serve.checks import NewGame
from experiments.serve.errors import ApiError
from experiments.serve.games import LiveGame, ResumeError, new_live_game, resume_live_game
from experiments.serve.specs import BotRules
from experiments.serve.storage import FAILED, FINISHED, GAME_ID, OPEN, DataFolder
from experiments.serve.thinking import DEFAULT_MAX_THINKING, Thinker

#: Random bytes in a game id and in a token (URL-safe base64: 12 and 32 characters).
ID_BYTES: Final = 9
TOKEN_BYTES: Final = 24
DEFAULT_MAX_GAMES: Final = 100
DEFAULT_IDLE_SECONDS: Final = 3600.0


def token_digest(token: str) -> str:
    """What the server keeps of a token (in memory and in the log): its SHA-256, never the token."""
    return hashlib.sha256(token.encode()).hexdigest()


class GameStore:
    """The games by id. ``max_games`` bounds the unfinished games held at once (a game over, or
    stopped by a bot's error, no longer counts); a game nobody asked about for ``idle_seconds``
    expires (an unfinished one's log moves to the data folder's ``expired/``). ``rules`` says which
    bots a request may ask for; ``max_thinking`` caps the slow bots thinking at once."""

    def __init__(
        self,
        *,
        data: DataFolder | None = None,
        max_games: int = DEFAULT_MAX_GAMES,
        idle_seconds: float = DEFAULT_IDLE_SECONDS,
        rules: BotRules | None = None,
        max_thinking: int = DEFAULT_MAX_THINKING,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.data = data
        self.max_games = max_games
        self.idle_seconds = idle_seconds
        self.rules = rules if rules is not None else BotRules()
        self.thinker = Thinker(self.rules.bot_seconds, max_thinking)
        self.clock = clock
        self.games: dict[str, LiveGame] = {}
        self.starting = 0  # games being built off the loop: they count towards max_games

    @property
    def persistent(self) -> bool:
        """Whether games outlive the server (``--data``)."""
        return self.data is not None

    def open_games(self) -> int:
        """The games that count towards ``max_games``: those being built and those still played."""
        return self.starting + sum(not live.ended for live in self.games.values())

    # ------------------------------------------------------------------ new games
    def reserve(self) -> None:
        """Room for one more game, or ApiError 503; :meth:`add` or :meth:`release` gives it back."""
        self.sweep()
        if self.open_games() >= self.max_games:
            raise ApiError(
                503,
                f"the server holds {self.max_games} unfinished games, its limit (--max-games {self.max_games}): "
                f"finish one, or wait for one to expire after {self.idle_seconds:g} s idle",
            )
        self.starting += 1

    def release(self) -> None:
        """Give back the room :meth:`reserve` made, for a game that failed to start."""
        self.starting -= 1

    def new_game(self, request: NewGame, *, deck: list[int] | None = None) -> tuple[LiveGame, str]:
        """A new game and its token (off the loop: its bots are built). Nothing is written before
        :meth:`confirm`."""
        token = secrets.token_urlsafe(TOKEN_BYTES)
        live = new_live_game(request, secrets.token_urlsafe(ID_BYTES), token_digest(token), self.rules, deck=deck)
        live.on_move = self.save
        return live, token

    def add(self, live: LiveGame) -> None:
        """Hold a game built by :meth:`new_game` in the room :meth:`reserve` made for it."""
        self.release()
        live.touched = self.clock()
        self.games[live.game_id] = live

    def confirm(self, live: LiveGame) -> None:
        """The answer creating the game was sent: its player has the token, so its log is written
        from now on (the first time here)."""
        with live.state_lock:
            live.answered = True
            self.save(live)

    def save(self, live: LiveGame) -> None:
        """Write the game's log to the data folder, if there is one and the game was answered (after
        every move): into ``open/``, then ``finished/`` or ``failed/`` at its end."""
        if self.data is not None and live.answered:
            folder = FAILED if live.error is not None else FINISHED if live.game.is_over else OPEN
            self.data.save(live.game_id, to_log(live.game, **live.log_metadata()), folder=folder)

    # ------------------------------------------------------------------ finding a game
    def held(self, game_id: str) -> LiveGame | None:
        """The game held in memory under ``game_id``, after expiring the idle ones."""
        self.sweep()
        return self.games.get(game_id)

    def load_finished(self, game_id: str) -> LiveGame | None:
        """A finished game of the data folder, held again (off the loop: its log is played again)."""
        if self.data is None or not GAME_ID.match(game_id):
            return None
        path = self.data.finished_log(game_id)
        if path is None:
            return None
        live = resume_live_game(json.loads(path.read_text(encoding="utf-8")), self.rules)
        live.touched = self.clock()
        self.games[game_id] = live
        return live

    def missing(self, game_id: str) -> ApiError:
        """The 404 of an id the server does not hold."""
        return ApiError(
            404, f"no game {game_id!r:.80} on this server (unknown, or expired after {self.idle_seconds:g} s idle)"
        )

    def check_token(self, live: LiveGame, authorization: str | None) -> None:
        """ApiError 403 unless ``authorization`` is ``Bearer`` and the game's token; then the game is touched."""
        scheme, _, token = (authorization or "").strip().partition(" ")
        if scheme.lower() != "bearer" or not token.strip():
            raise ApiError(403, "this game needs its token: send the header 'Authorization: Bearer TOKEN'")
        if not hmac.compare_digest(token_digest(token.strip()), live.token_digest):
            raise ApiError(403, f"wrong token for game {live.game_id!r}")
        live.touched = self.clock()

    # ------------------------------------------------------------------ expiry and restart
    def sweep(self) -> None:
        """Expire the games idle for longer than ``idle_seconds`` (none whose bots are moving)."""
        now = self.clock()
        for game_id, live in list(self.games.items()):
            if now - live.touched > self.idle_seconds and not self.thinker.thinking(live):
                del self.games[game_id]
                if self.data is not None and not live.ended:
                    self.data.expire(game_id)

    def resume(self) -> list[str]:
        """Hold again every unfinished game of the data folder; a line for each one that cannot be."""
        if self.data is None:
            return []
        problems = []
        for game_id, path in self.data.open_logs():
            try:
                live = resume_live_game(json.loads(path.read_text(encoding="utf-8")), self.rules)
            except (OSError, ValueError, ResumeError) as error:
                problems.append(f"{path}: not resumed: {error}")
                continue
            if live.game_id != game_id:
                problems.append(f"{path}: not resumed: its log names game {live.game_id!r}")
                continue
            live.on_move = self.save
            live.touched = self.clock()
            self.games[game_id] = live
        return problems

    def stop(self) -> None:
        """The server stops: no bot moves any more, and a move being saved is waited for."""
        self.thinker.stop(list(self.games.values()))
