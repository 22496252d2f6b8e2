"""The bots' moves, off the request path (:class:`Thinker`): a request that lets bots move starts
the game's bot thread and answers at once, or as soon as the bots are done if that is within
:data:`ANSWER_SECONDS`; the view says ``"thinking": true`` meanwhile, and the client asks again
(``GET``). No request ever waits for a bot, so no bot can hold the server.

* One bot thread per game at most (:meth:`Thinker.start` under the game's ``state_lock``), so two
  requests at once never move the bots twice. It plays the forced moves and the bots' decisions up
  to the player's next decision (a watched game: the step asked), each move applied and saved under
  the game's ``state_lock``.
* A deadline: every decision runs in a thread of its own, and a bot that has not chosen by
  :func:`deadline_seconds` (``--bot-seconds`` and half as much again, 2 s at least: a search checks
  its clock between rollouts, and on a loaded machine its last rollouts run late) ends its game in
  the error state
  (:meth:`~experiments.serve.games.LiveGame.fail`): log kept, nothing more played. Searches are told
  ``--bot-seconds`` as their time limit (:mod:`experiments.serve.specs`), so they stop in time; a
  thread cannot be killed, so one that overruns is left to finish in the background, its move thrown
  away. A bot that raises ends its game the same way, with the exception's message.
* A cap: at most ``max_thinking`` slow bots (searches, import paths) think at once, server-wide; the
  others wait for a slot, their games saying ``thinking``. The heuristic, network and random bots
  choose in milliseconds and take no slot, so a game against them goes on whatever the searches do.
  The threads share one interpreter: more slots than cores would only slow every answer.
* Stop: :meth:`Thinker.stop` lets no bot thread apply another move and waits for a move being
  saved; the threads are daemons, so the process exits without waiting for a bot that thinks. Each
  log is then the game before or after its last move, whole, never between.
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
from collections.abc import Iterable
from concurrent.futures import Future
from typing import Final

from biblios_env.agent_interface import Agent, AgentObservation
from experiments.common.match import AGENT_FAULTS
from experiments.serve.games import BotFaultError, LiveGame

#: The longest a request waits for the bots it set moving before answering the view as it stands.
ANSWER_SECONDS: Final = 0.5
#: The least time past ``--bot-seconds`` before a bot that has not chosen ends its game.
OVERRUN_SECONDS: Final = 2.0
#: The share of ``--bot-seconds`` past it before a bot that has not chosen ends its game (if more).
OVERRUN_SHARE: Final = 0.5
#: Slow bots thinking at once, server-wide, by default (``--max-thinking``).
DEFAULT_MAX_THINKING: Final = 2
#: Seconds :meth:`Thinker.stop` waits for a game's move being saved.
STOP_WAIT_SECONDS: Final = 5.0


def deadline_seconds(bot_seconds: float) -> float:
    """How long a bot may take to choose, once it thinks: ``bot_seconds`` and an allowance for a
    search that overruns its time limit by a rollout or two under load (one 10 s search of a
    4-player game, beside 50 busy games on 2 cores, was measured choosing after 12 s)."""
    return bot_seconds + max(OVERRUN_SECONDS, OVERRUN_SHARE * bot_seconds)


class _HaltedError(Exception):
    """The game ended or the server stops while a bot waited or thought: nothing more is applied."""


class Thinker:
    """The bot threads of every game: ``bot_seconds`` per decision, ``max_thinking`` slow bots at once."""

    def __init__(self, bot_seconds: float, max_thinking: int = DEFAULT_MAX_THINKING) -> None:
        self.bot_seconds = bot_seconds
        self.deadline = deadline_seconds(bot_seconds)
        self.max_thinking = max_thinking
        self.slots = threading.BoundedSemaphore(max_thinking)
        self.stopping = threading.Event()
        self._waiters: dict[str, list[tuple[asyncio.AbstractEventLoop, asyncio.Future[None]]]] = {}
        self._thinking: set[str] = set()
        self._lock = threading.Lock()  # guards the two above; never held for long

    # ------------------------------------------------------------------ the requests' side
    def thinking(self, live: LiveGame) -> bool:
        """Whether the game's bot thread is running."""
        with self._lock:
            return live.game_id in self._thinking

    def start(self, live: LiveGame) -> None:
        """Start the game's bot thread if its bots are to move (forced moves included) and it is not
        running; the caller holds ``live.state_lock``."""
        if self.stopping.is_set() or live.ended:
            return
        if live.bot_to_move() is None and len(live.game.legal_actions()) != 1:
            return
        with self._lock:
            if live.game_id in self._thinking:
                return
            self._thinking.add(live.game_id)
        threading.Thread(target=self._run, args=(live,), name=f"bots of {live.game_id}", daemon=True).start()

    async def settled(self, live: LiveGame, seconds: float = ANSWER_SECONDS) -> None:
        """Wait until the game's bot thread is done, for ``seconds`` at most (on the event loop,
        holding no thread)."""
        loop = asyncio.get_running_loop()
        done: asyncio.Future[None] = loop.create_future()
        with self._lock:
            if live.game_id not in self._thinking:
                return
            self._waiters.setdefault(live.game_id, []).append((loop, done))
        with contextlib.suppress(TimeoutError):  # then the view as it stands
            await asyncio.wait_for(done, seconds)

    def stop(self, games: Iterable[LiveGame]) -> None:
        """No bot thread applies another move; a move being applied and saved now is waited for."""
        self.stopping.set()
        for live in games:
            if live.state_lock.acquire(timeout=STOP_WAIT_SECONDS):
                live.state_lock.release()

    # ------------------------------------------------------------------ the bot thread
    def _run(self, live: LiveGame) -> None:
        """:meth:`_play`; once the server stops, whatever a bot thread meets on its way out (an event
        loop already closed, say) is nothing to report: the logs were settled by :meth:`stop`."""
        try:
            self._play(live)
        except Exception:
            if not self.stopping.is_set():
                raise

    def _play(self, live: LiveGame) -> None:
        """The forced moves and the bots' decisions up to the player's (or the end); a fault ends the game."""
        try:
            while True:
                with live.state_lock:
                    self._check_going(live)
                    live.play_forced()
                    seat = live.bot_to_move()
                    if seat is None:
                        self._finish(live)
                        return
                    bot, observation = live.bots[seat], live.bot_observation()
                action = self._decide(live, seat, bot, observation)
                with live.state_lock:
                    self._check_going(live)
                    live.apply_bot(seat, action)
        except _HaltedError:
            with live.state_lock:
                self._finish(live)
        except Exception as error:  # a bot's fault, or the server's (a log that cannot be written)
            message = str(error) if isinstance(error, BotFaultError) else f"the game cannot go on: {error}"
            with live.state_lock:
                if not self.stopping.is_set():
                    live.fail(message)
                self._finish(live)

    def _check_going(self, live: LiveGame) -> None:
        if self.stopping.is_set() or live.ended:
            raise _HaltedError

    def _decide(self, live: LiveGame, seat: int, bot: Agent, observation: AgentObservation) -> object:
        """The bot's choice, within the deadline (a slow bot first waits for a slot); BotFaultError if it
        raises or overruns."""
        slow = seat in live.slow
        if slow:
            self.slots.acquire()
        try:
            if self.stopping.is_set() or live.ended:
                raise _HaltedError
            choice: Future[object] = Future()
            thread = threading.Thread(target=_think, args=(bot, observation, choice), daemon=True)
            thread.start()
            try:
                return choice.result(timeout=self.deadline)
            except TimeoutError:
                what = f"did not choose within {self.deadline:g} s (--bot-seconds {self.bot_seconds:g})"
                raise BotFaultError(live.fault(seat, what)) from None
            except AGENT_FAULTS as error:
                raise BotFaultError(live.fault(seat, "crashed", error)) from error
        finally:
            if slow:
                self.slots.release()

    def _finish(self, live: LiveGame) -> None:
        """The thread ends (under ``live.state_lock``): the requests waiting for it answer."""
        with self._lock:
            self._thinking.discard(live.game_id)
            waiters = self._waiters.pop(live.game_id, [])
        for loop, done in waiters:
            with contextlib.suppress(RuntimeError):  # its loop closed: the server has stopped
                loop.call_soon_threadsafe(_resolve, done)


def _think(bot: Agent, observation: AgentObservation, choice: Future[object]) -> None:
    """The bot's ``act``, in its own thread: its answer or its exception goes to ``choice``."""
    try:
        choice.set_result(bot.act(observation))
    except AGENT_FAULTS as error:
        choice.set_exception(error)


def _resolve(done: asyncio.Future[None]) -> None:
    if not done.done():
        done.set_result(None)
