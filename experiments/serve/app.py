"""The ASGI app (Starlette): the play page at ``/`` and the JSON API under ``/api/games``
(docs/serve.md documents every route with examples).

Every route answers JSON, a refusal too: ``{"error": message, ...}`` with a 4xx status, and nothing
changed. The work of a game (its bots' moves, its views) runs in worker threads, never on the event
loop, one request at a time per game (its lock): a bot that thinks for seconds holds up its own game
and no other. POST bodies must be JSON (``Content-Type: application/json``, at most
:data:`MAX_BODY` bytes): a page on another site cannot send that without the browser asking this
server first, and this server never answers yes.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, Final, TypeVar

from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.exceptions import HTTPException
from starlette.middleware import Middleware
from starlette.middleware.trustedhost import TrustedHostMiddleware
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, Response
from starlette.routing import Route

from biblios_env.engine.log import to_log
from experiments.replay.page import page_html as replay_page_html
from experiments.replay.timeline import SavedGame
from experiments.serve.checks import action_id, new_game_request
from experiments.serve.errors import ApiError
from experiments.serve.games import LiveGame, ResumeError
from experiments.serve.page import CONTENT_SECURITY_POLICY, play_page
from experiments.serve.store import GameStore
from experiments.serve.views import game_view

#: The largest request body read, in bytes (a new game's request is a few hundred).
MAX_BODY: Final = 16_384
#: Headers of every answer: nothing is cached, and a browser takes JSON for JSON only.
_HEADERS: Final = {"Cache-Control": "no-store", "X-Content-Type-Options": "nosniff"}

Result = TypeVar("Result")


def _json(content: Any, status: int = 200) -> JSONResponse:
    return JSONResponse(content, status_code=status, headers=_HEADERS)


async def _body(request: Request) -> object:
    """The request's JSON body: 415 if it is not sent as JSON, 413 past :data:`MAX_BODY` bytes, 422
    if it does not parse."""
    content_type = request.headers.get("content-type", "").partition(";")[0].strip().lower()
    if content_type != "application/json":
        raise ApiError(415, f"send the body as JSON with 'Content-Type: application/json', got {content_type!r:.60}")
    declared = request.headers.get("content-length", "")
    if declared.isdigit() and int(declared) > MAX_BODY:
        raise ApiError(413, f"the body has {int(declared)} bytes; at most {MAX_BODY} are read")
    body = b""
    async for chunk in request.stream():
        body += chunk
        if len(body) > MAX_BODY:
            raise ApiError(413, f"the body has more than {MAX_BODY} bytes, the most that is read")
    try:
        return json.loads(body)
    except (UnicodeDecodeError, ValueError, RecursionError) as error:
        raise ApiError(422, f"the body is not JSON: {error}") from None


class Api:
    """The routes' handlers around one :class:`GameStore`."""

    def __init__(self, store: GameStore, page: str) -> None:
        self.store = store
        self.page = page

    async def _game(self, request: Request) -> LiveGame:
        """The game of the path, if the request carries its token: 404 for an unknown id, 403 for a
        missing or wrong token."""
        game_id = request.path_params["game_id"]
        live = self.store.held(game_id)
        if live is None:
            try:
                live = await run_in_threadpool(self.store.load_finished, game_id)
            except (OSError, ValueError, ResumeError) as error:
                raise ApiError(500, f"the saved game {game_id!r} cannot be read: {error}") from error
        if live is None:
            raise self.store.missing(game_id)
        self.store.check_token(live, request.headers.get("authorization"))
        return live

    @staticmethod
    async def _locked(live: LiveGame, work: Callable[[], Result]) -> Result:
        """``work()`` on the game, in a worker thread, while no other request touches the game."""
        async with live.lock:
            return await run_in_threadpool(work)

    async def page_route(self, request: Request) -> Response:
        headers = {"Content-Security-Policy": CONTENT_SECURITY_POLICY, **_HEADERS}
        return HTMLResponse(self.page, headers=headers)

    async def create(self, request: Request) -> Response:
        """``POST /api/games``: a new game; answers its id, its token and the first ``VIEW``."""
        new_game = new_game_request(await _body(request))
        self.store.reserve()
        built: list[LiveGame] = []
        try:
            live, token = await run_in_threadpool(self.store.new_game, new_game, built=built)
            view = await self._locked(live, lambda: _advanced_view(live))
        except BaseException:
            self.store.release()
            for orphan in built:  # nobody has its token: its log is set aside, never resumed
                self.store.discard(orphan)
            raise
        self.store.add(live)
        return _json({"game_id": live.game_id, "token": token, "view": view}, 201)

    async def view(self, request: Request) -> Response:
        """``GET /api/games/{game_id}``: the ``VIEW`` (after the bots' moves, if it is their turn)."""
        live = await self._game(request)
        return _json(await self._locked(live, lambda: _advanced_view(live)))

    async def act(self, request: Request) -> Response:
        """``POST /api/games/{game_id}/actions``: the player's action, then the bots' moves."""
        live = await self._game(request)
        body = await _body(request)

        def play() -> dict[str, Any]:
            live.advance()  # a game resumed in the bots' turn: they play first
            live.check_turn()
            live.play(action_id(body, live.legal_labels()))
            return game_view(live)

        return _json(await self._locked(live, play))

    async def step(self, request: Request) -> Response:
        """``POST /api/games/{game_id}/step``: the next move of a watched game of bots only."""
        live = await self._game(request)

        def step() -> dict[str, Any]:
            live.step()
            return game_view(live)

        return _json(await self._locked(live, step))

    async def hint(self, request: Request) -> Response:
        """``GET /api/games/{game_id}/hint``: what the ``value`` heuristic would play now."""
        live = await self._game(request)
        return _json(await self._locked(live, live.hint))

    async def log(self, request: Request) -> Response:
        """``GET /api/games/{game_id}/log``: the finished game's log (the engine's format)."""
        live = await self._game(request)
        _check_finished(live)
        return _json(await self._locked(live, lambda: to_log(live.game, **live.log_metadata())))

    async def replay(self, request: Request) -> Response:
        """``GET /api/games/{game_id}/replay``: the finished game's replay page, opening on the player's view."""
        live = await self._game(request)
        _check_finished(live)
        html = await self._locked(live, lambda: replay_page_html(_saved_game(live), open_seat=live.seat))
        return HTMLResponse(html, headers=_HEADERS)


def _advanced_view(live: LiveGame) -> dict[str, Any]:
    live.advance()
    return game_view(live)


def _check_finished(live: LiveGame) -> None:
    if not live.game.is_over:
        raise ApiError(409, "the game is not over yet: its log would tell what your seat may not know")


def _saved_game(live: LiveGame) -> SavedGame:
    """The finished game as the replay reads a log, without a file."""
    game = live.game
    return SavedGame(
        Path(f"{live.game_id}.json"),
        game.config,
        game.seed,
        game.deck if game.deck_given else None,
        tuple(game.history),
        live.seating.labels,
        {},
    )


async def _api_error(request: Request, error: Exception) -> Response:
    assert isinstance(error, ApiError)
    return _json(error.body(), error.status)


async def _http_error(request: Request, error: Exception) -> Response:
    """Starlette's own refusals (no such route, a method the route does not take) as JSON too."""
    assert isinstance(error, HTTPException)
    return _json({"error": f"{request.method} {request.url.path}: {error.detail}"}, error.status_code)


def create_app(store: GameStore, *, allowed_hosts: Sequence[str] | None = None) -> Starlette:
    """The app serving ``store``'s games. ``allowed_hosts``: the host names a request may be addressed
    to (a server on the loopback answers only its own names, so no other site's page can reach it
    through a DNS name of its own); ``None`` for any."""
    api = Api(store, play_page(persistent=store.persistent))
    routes = [
        Route("/", api.page_route, methods=["GET"]),
        Route("/api/games", api.create, methods=["POST"]),
        Route("/api/games/{game_id}", api.view, methods=["GET"]),
        Route("/api/games/{game_id}/actions", api.act, methods=["POST"]),
        Route("/api/games/{game_id}/step", api.step, methods=["POST"]),
        Route("/api/games/{game_id}/hint", api.hint, methods=["GET"]),
        Route("/api/games/{game_id}/log", api.log, methods=["GET"]),
        Route("/api/games/{game_id}/replay", api.replay, methods=["GET"]),
    ]
    middleware = [] if allowed_hosts is None else [Middleware(TrustedHostMiddleware, allowed_hosts=list(allowed_hosts))]
    return Starlette(
        routes=routes,
        middleware=middleware,
        exception_handlers={ApiError: _api_error, HTTPException: _http_error},
    )
