"""The ASGI app (Starlette): the play page at ``/`` and the JSON API under ``/api/games``
(docs/serve.md documents every route with examples).

Every route answers JSON, a refusal too: ``{"error": message, ...}`` with a 4xx status, and nothing
changed. A request's work on a game (the player's move, the view) runs in a worker thread under the
game's ``state_lock``, never on the event loop; the bots' moves run in the game's bot thread
(:mod:`experiments.serve.thinking`), and a request waits for them :data:`ANSWER_SECONDS` at most,
on the event loop, then answers the view as it stands (``"thinking": true``: ask again). No request
waits for a bot, so no bot holds up the server. POST bodies must be JSON (``Content-Type:
application/json``, at most :data:`MAX_BODY` bytes): a page on another site cannot send that without
the browser asking this server first, and this server never answers yes.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, Final, TypeVar

from starlette.applications import Starlette
from starlette.background import BackgroundTask
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
from experiments.serve.checks import action_request, new_game_request
from experiments.serve.errors import ApiError
from experiments.serve.games import LiveGame, ResumeError
from experiments.serve.page import CONTENT_SECURITY_POLICY, play_page
from experiments.serve.store import GameStore
from experiments.serve.thinking import ANSWER_SECONDS
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
        if not live.answered:  # its token came back: the answer that made it arrived (its log may start)
            await run_in_threadpool(self.store.confirm, live)
        return live

    def _view(self, live: LiveGame) -> dict[str, Any]:
        """The view now; the caller holds ``live.state_lock``."""
        return game_view(live, thinking=self.store.thinker.thinking(live))

    def _moving(self, live: LiveGame) -> dict[str, Any]:
        """Let the bots move if it is their turn (in the game's bot thread); the view now."""
        with live.state_lock:
            self.store.thinker.start(live)
            return self._view(live)

    async def _answer(self, live: LiveGame, work: Callable[[], Any] | None = None) -> dict[str, Any]:
        """``work()`` on the game in a worker thread (it starts the bots if they are to move), then the
        view once the bots are done, or after :data:`ANSWER_SECONDS` as it stands."""
        await run_in_threadpool(work if work is not None else lambda: self._moving(live))
        await self.store.thinker.settled(live, ANSWER_SECONDS)
        return await run_in_threadpool(_locked, live, lambda: self._view(live))

    async def page_route(self, request: Request) -> Response:
        headers = {"Content-Security-Policy": CONTENT_SECURITY_POLICY, **_HEADERS}
        return HTMLResponse(self.page, headers=headers)

    async def create(self, request: Request) -> Response:
        """``POST /api/games``: a new game; answers its id, its token and the first ``VIEW``. Its log
        is written once that answer has been sent."""
        new_game = new_game_request(await _body(request))
        self.store.reserve()
        try:
            live, token = await run_in_threadpool(self.store.new_game, new_game)
        except BaseException:
            self.store.release()
            raise
        self.store.add(live)
        view = await self._answer(live)
        answer = {"game_id": live.game_id, "token": token, "view": view}
        return JSONResponse(answer, 201, _HEADERS, background=BackgroundTask(self.store.confirm, live))

    async def view(self, request: Request) -> Response:
        """``GET /api/games/{game_id}``: the ``VIEW`` (the bots move first, if it is their turn)."""
        live = await self._game(request)
        return _json(await self._answer(live))

    async def act(self, request: Request) -> Response:
        """``POST /api/games/{game_id}/actions``: the player's action, once, then the bots' moves."""
        live = await self._game(request)
        body = await _body(request)

        def play() -> None:
            with live.state_lock:
                action, moves = action_request(body, live.legal_labels())
                thinking = self.store.thinker.thinking(live)
                if thinking or moves != len(live.game.history):
                    moving = " and the bots are moving" if thinking else ""
                    raise ApiError(
                        409,
                        f"this action answers move {moves}, but the game is at move {len(live.game.history)}{moving}: "
                        "the view now is in 'view'",
                        view=self._view(live),
                    )
                live.play(action)
                self.store.thinker.start(live)

        return _json(await self._answer(live, play))

    async def step(self, request: Request) -> Response:
        """``POST /api/games/{game_id}/step``: the next move of a watched game of bots only."""
        live = await self._game(request)

        def step() -> None:
            with live.state_lock:
                if self.store.thinker.thinking(live):
                    raise ApiError(409, "the bots are moving: GET the view until they are done", view=self._view(live))
                live.ask_step()
                self.store.thinker.start(live)

        return _json(await self._answer(live, step))

    async def hint(self, request: Request) -> Response:
        """``GET /api/games/{game_id}/hint``: what the ``value`` heuristic would play now."""
        live = await self._game(request)
        return _json(await run_in_threadpool(_locked, live, live.hint))

    async def log(self, request: Request) -> Response:
        """``GET /api/games/{game_id}/log``: the finished game's log (the engine's format)."""
        live = await self._game(request)
        _check_finished(live)
        return _json(await run_in_threadpool(_locked, live, lambda: to_log(live.game, **live.log_metadata())))

    async def replay(self, request: Request) -> Response:
        """``GET /api/games/{game_id}/replay``: the finished game's replay page, opening on the player's view."""
        live = await self._game(request)
        _check_finished(live)
        html = await run_in_threadpool(_locked, live, lambda: replay_page_html(_saved_game(live), open_seat=live.seat))
        return HTMLResponse(html, headers=_HEADERS)


def _locked(live: LiveGame, work: Callable[[], Result]) -> Result:
    """``work()`` under the game's ``state_lock`` (in a worker thread)."""
    with live.state_lock:
        return work()


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
