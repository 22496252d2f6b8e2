"""One game on the server (:class:`LiveGame`): the engine game, the player's seat, the bots of the
other seats, and what the player's seat has been told so far.

Two kinds of threads touch a game: the requests' (the player's move, the views) and the game's bot
thread (:mod:`experiments.serve.thinking`), which plays the bots' moves. Every change and every
view happens under the game's ``state_lock``, one move at a time; a bot thinks outside it, from its
own seat's view, so the player's requests answer while it thinks. Forced decisions (one legal
action) are played for everybody, bots and player alike, as the terminal game plays them. Every
action goes through :meth:`LiveGame.apply`, which tells it as the player's seat saw it (the
narration of :mod:`experiments.table.narration`), shows each bot that follows the game its own
seat's view and hands the game to ``on_move`` (the store saves its log there).

A bot that crashes, chooses an illegal action or overruns its time ends its game in an error state
(:meth:`LiveGame.fail`): the message is in every later view, the log is kept, and nothing more is
played; never a request failing again and again.

A game starts from a checked request (:func:`new_live_game`) or again from its log
(:func:`resume_live_game`): the log is an exact replay, so the game goes on from the same position
with the same bots. A resumed bot has seen every view again but starts its own randomness afresh,
so its later choices may differ from those an uninterrupted server would have made.
"""

from __future__ import annotations

import secrets
import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Final

from biblios_env.actions import is_action_id
from biblios_env.agent_interface import Agent, AgentObservation
from biblios_env.engine.config import GameConfig
from biblios_env.engine.game import Game
from biblios_env.engine.log import GameLogError, game_digest, replay
from biblios_env.engine.state import NO_SEAT
from biblios_env.engine.views import player_view
from experiments.common.match import AGENT_FAULTS, build_agent, parse_agent_spec, show_views
from experiments.common.seeds import AGENT, derive_seed
from experiments.serve.checks import NewGame
from experiments.serve.errors import ApiError, redact_paths
from experiments.serve.labels import legal_labels
from experiments.serve.specs import BotRules
from experiments.table.narration import Before, Line, Narrator
from experiments.table.page_data import Bidding, mark
from experiments.table.screen import Screen

#: The label of the player's seat in the log (the terminal game writes the same).
HUMAN: Final = "human"
#: The agent behind the hint button: what ``value`` would play.
HINT_AGENT: Final = "value"
#: What the log's metadata holds for this server, beside the labels and seeds every log has.
SERVE_KEY: Final = "serve"
PROGRAM: Final = "experiments.serve"


class BotFaultError(Exception):
    """A bot that crashed, chose an illegal action or did not move in time: the message names it
    and its seat; the game ends in the error state (:meth:`LiveGame.fail`)."""


@dataclass(frozen=True, slots=True)
class Seating:
    """Who sits where: the player's seat, every seat's label (``human`` or an agent spec) and
    agent seed, and whether a bot plays the player's seat too (a watched game of bots only)."""

    seat: int
    labels: tuple[str, ...]
    agent_seeds: tuple[int | None, ...]
    autoplay: bool


class LiveGame:
    """One game, seen from the player's seat. ``told[0]`` is the narration of the deal and
    ``told[k]`` that of the ``k``-th action; the seat's latest news (what a response shows) starts
    at ``told[since]``, its own last decision. ``slow`` names the seats whose bots wait for a
    thinking slot (:meth:`BotRules.slow`)."""

    def __init__(
        self,
        game_id: str,
        token_digest: str,
        game: Game,
        seating: Seating,
        bots: dict[int, Agent],
        on_move: Callable[[LiveGame], None] | None = None,
        slow: frozenset[int] = frozenset(),
    ) -> None:
        if game.auto_forced:
            raise ValueError("a LiveGame plays forced moves itself: build the Game with auto_forced=False")
        self.game_id = game_id
        self.token_digest = token_digest
        self.game = game
        self.seating = seating
        self.seat = seating.seat
        self.bots = bots
        self.on_move = on_move
        self.slow = slow
        self.narrator = Narrator(self.seat, Screen(self.seat, seating.labels).name)
        self.told: list[list[Line]] = [self.narrator.opening(game.state)]
        self.since = 0
        self.bidding = Bidding()
        self.bids: list[list[int | None]] = []
        self.landmark = next((mark(0, line)["label"] for line in self.told[0] if line.heading), "")
        #: Held for every change and every view of the game (by a request or the bot thread).
        self.state_lock = threading.Lock()
        #: Why the game stopped before its end (a bot's fault), or None.
        self.error: str | None = None
        #: The bot decisions a watched game has been asked to play (``POST .../step``) and not played yet.
        self.steps_asked = 0
        self.touched = 0.0  # when a request last asked for it (the store's clock)
        #: Whether the player has its token: the answer creating the game was sent (a restarted
        #: server resumes only such games; the store writes no log before).
        self.answered = False

    @property
    def autoplay(self) -> bool:
        return self.seating.autoplay

    @property
    def ended(self) -> bool:
        """Over, or stopped by a bot's fault: nothing more is played."""
        return self.game.is_over or self.error is not None

    @property
    def names(self) -> list[str]:
        """How the table names each seat: ``player_1 (value)``."""
        screen = Screen(NO_SEAT, self.seating.labels)
        return [screen.name(seat) for seat in range(self.game.num_players)]

    def log_metadata(self) -> dict[str, Any]:
        """The metadata of the game's log: what :func:`resume_live_game` needs besides the game (and
        the error that stopped it, if one did)."""
        seating = self.seating
        serve: dict[str, Any] = {"game_id": self.game_id, "token_sha256": self.token_digest, "seat": seating.seat}
        metadata: dict[str, Any] = {"agents": list(seating.labels), "agent_seeds": list(seating.agent_seeds)}
        if not seating.autoplay:
            metadata["human_seat"] = seating.seat  # as the terminal game's logs say it
        if self.error is not None:
            serve["error"] = self.error
        return {**metadata, "program": PROGRAM, SERVE_KEY: {**serve, "autoplay": seating.autoplay}}

    # ------------------------------------------------------------------ moves
    def apply(self, action: int) -> None:
        """Play one legal action: tell it, show it to the bots that follow the game, hand it on."""
        game, state = self.game, self.game.state
        before = Before.of(state)
        forced = len(game.legal_actions()) == 1
        game.apply(action)
        lines = self.narrator.tell(before, state, action, forced)
        self.told.append(lines)
        if before.seat == self.seat and not forced:
            self.since = len(self.told) - 1
        self.bids = self.bidding.after(action, before.seat, state.auction_card)
        self.landmark = next((mark(0, line)["label"] for line in reversed(lines) if line.heading), self.landmark)
        self._show_bots()
        if self.on_move is not None:
            self.on_move(self)

    def _show_bots(self) -> None:
        """Each bot that follows the game sees the table as its own seat does (RULES §7)."""
        show_views(
            self.game,
            self.bots,
            lambda seat, error: BotFaultError(self.fault(seat, "crashed observing the game", error)),
        )

    def fault(self, seat: int, what: str, error: BaseException | None = None) -> str:
        """The words of a bot's fault: its label, its seat, the move, and the exception if there is one."""
        label = self.seating.labels[seat]
        cause = "" if error is None else f": {type(error).__name__}: {error}"
        return f"agent {label!r} in seat {seat} {what} (move {len(self.game.history)}){cause}"

    def fail(self, message: str) -> None:
        """End the game in the error state with ``message`` (no server path in it); the log is saved."""
        if self.ended:
            return
        self.error = redact_paths(message)
        if self.on_move is not None:
            self.on_move(self)

    def play_forced(self) -> None:
        """The forced moves from here (one legal action each), for every seat."""
        while not self.ended and len(legal := self.game.legal_actions()) == 1:
            self.apply(legal[0])

    def bot_to_move(self) -> int | None:
        """The seat whose bot decides next, or None: the player's turn, the end, or a watched game
        with no step asked."""
        if self.ended:
            return None
        seat = self.game.current_player
        if self.autoplay:
            return seat if self.steps_asked > 0 else None
        return None if seat == self.seat else seat

    def bot_observation(self) -> AgentObservation:
        """What the bot to move is shown: its own seat's view and legal actions, never the player's."""
        game = self.game
        return AgentObservation(player_view(game.state, game.current_player), list(game.legal_actions()))

    def apply_bot(self, seat: int, action: object) -> None:
        """The move ``seat``'s bot chose; BotFaultError if it is not a legal action there."""
        if not is_action_id(action) or self.game.current_player != seat:
            raise BotFaultError(self.fault(seat, f"chose {action!r:.80}, which is not an action id"))
        if int(action) not in self.game.legal_actions():
            raise BotFaultError(self.fault(seat, f"chose {action!r:.80}, which is not a legal action"))
        if self.autoplay:
            self.steps_asked -= 1
        self.apply(int(action))

    # ------------------------------------------------------------------ the player
    def player_to_act(self) -> bool:
        """Whether the game waits for the player's decision."""
        return not self.ended and not self.autoplay and self.game.current_player == self.seat

    def legal_labels(self) -> list[dict[str, Any]]:
        """The player's legal actions with their labels; none unless it is the player's turn."""
        if not self.player_to_act():
            return []
        return legal_labels(player_view(self.game.state, self.seat), self.game.legal_actions())

    def check_playing(self) -> None:
        """ApiError 409 if the game is over or stopped by a bot's fault, saying which."""
        if self.error is not None:
            raise ApiError(409, f"this game was stopped by an error: {self.error}")
        if self.game.is_over:
            raise ApiError(409, "the game is over: nothing more to play (GET its log)")

    def check_turn(self) -> None:
        """ApiError 409 unless the game waits for the player's decision, saying why not."""
        self.check_playing()
        if self.autoplay:
            raise ApiError(409, "bots play every seat of this game, yours too: POST .../step plays its next move")
        if self.game.current_player != self.seat:
            raise ApiError(409, f"it is {self.names[self.game.current_player]}'s turn, not yours: GET the view")

    def play(self, action: int) -> None:
        """The player's action; ApiError 422 naming the legal ones if it is not one. A bot that crashes
        seeing it ends the game (the error state)."""
        self.check_turn()
        if action not in self.game.legal_actions():
            legal = self.legal_labels()
            raise ApiError(
                422,
                f"action {action} is not legal now; legal: {[item['action'] for item in legal]}",
                legal_actions=legal,
            )
        try:
            self.apply(action)
        except BotFaultError as fault:
            self.fail(str(fault))

    def ask_step(self) -> None:
        """A watched game's next decision is asked for (its bot thread plays it)."""
        if not self.autoplay:
            raise ApiError(409, "you play your seat in this game: POST its actions; the bots move in between")
        self.check_playing()
        self.steps_asked = 1

    def hint(self) -> dict[str, Any]:
        """What :data:`HINT_AGENT` would play in the player's place, from the player's view alone."""
        self.check_turn()
        view = player_view(self.game.state, self.seat)
        legal = self.game.legal_actions()
        suggester = build_agent(parse_agent_spec(HINT_AGENT))
        suggester.start_game(self.seat, self.game.num_players, seed=0)
        action = int(suggester.act(AgentObservation(view, list(legal))))
        label = next(item["label"] for item in legal_labels(view, legal) if item["action"] == action)
        return {"action": action, "label": label, "agent": HINT_AGENT}


# ----------------------------------------------------------------------------- starting a game
def _start_bots(game: Game, seating: Seating, rules: BotRules) -> dict[int, Agent]:
    """The bots of ``seating``, built and told the game starts (every seat but a played one)."""
    bots: dict[int, Agent] = {}
    for seat, label in enumerate(seating.labels):
        if seat == seating.seat and not seating.autoplay:
            continue
        bot = rules.build(label)
        try:
            bot.start_game(seat, game.num_players, seed=seating.agent_seeds[seat])
        except AGENT_FAULTS as error:
            message = f"agent {label!r} in seat {seat} crashed starting the game: {type(error).__name__}: {error}"
            raise ApiError(422, message) from error
        bots[seat] = bot
    return bots


def _slow_seats(seating: Seating, bots: dict[int, Agent], rules: BotRules) -> frozenset[int]:
    return frozenset(seat for seat in bots if rules.slow(seating.labels[seat]))


def new_live_game(
    request: NewGame, game_id: str, token_digest: str, rules: BotRules, *, deck: list[int] | None = None
) -> LiveGame:
    """A new game as ``request`` asks, dealt from its seed (or a random one, never shown before the
    end: the seed deals every hidden card) or from ``deck`` (the tests' pairs of deals)."""
    seed = request.seed if request.seed is not None else secrets.randbits(63)
    others = iter(request.opponents)
    mine = request.autoplay if request.autoplay is not None else HUMAN
    labels = tuple(mine if seat == request.seat else next(others) for seat in range(request.players))
    played = request.autoplay is None
    seeds = tuple(
        None if seat == request.seat and played else derive_seed(seed, AGENT, seat) for seat in range(request.players)
    )
    seating = Seating(request.seat, labels, seeds, not played)
    config = GameConfig(request.players, request.penalty, request.strict_bids)
    game = Game.from_config(config, seed=seed, deck=deck, auto_forced=False)
    bots = _start_bots(game, seating, rules)
    return LiveGame(game_id, token_digest, game, seating, bots, slow=_slow_seats(seating, bots, rules))


class ResumeError(ValueError):
    """A saved game that cannot be resumed (a bad log, or one this server did not write)."""


def resume_live_game(log: dict[str, Any], rules: BotRules) -> LiveGame:
    """The game a log of this server records, played again to its last action with its bots (none
    for a finished game: nothing is left to play); ResumeError saying why it cannot be. Its player
    had its token: it is answered."""
    try:
        recorded = replay(log, auto_forced=False)  # every check of the log
    except GameLogError as error:
        raise ResumeError(str(error)) from error
    seating, game_id, token_digest = _saved_seating(log.get("metadata"), recorded.num_players)
    game = Game.from_config(
        recorded.config, seed=recorded.seed, deck=recorded.deck if recorded.deck_given else None, auto_forced=False
    )
    try:
        bots = {} if recorded.is_over else _start_bots(game, seating, rules)
    except ApiError as error:
        raise ResumeError(error.message) from error
    live = LiveGame(game_id, token_digest, game, seating, bots, slow=_slow_seats(seating, bots, rules))
    try:
        for action in log["actions"]:
            live.apply(action)
    except BotFaultError as fault:
        raise ResumeError(str(fault)) from fault
    if game_digest(game) != log["digest"]:
        raise ResumeError("the game played again differs from its log")
    live.answered = True
    return live


def _saved_seating(metadata: object, players: int) -> tuple[Seating, str, str]:
    """The seating, game id and token digest a log of this server keeps in its metadata."""
    serve = metadata.get(SERVE_KEY) if isinstance(metadata, dict) else None
    if not isinstance(metadata, dict) or not isinstance(serve, dict):
        raise ResumeError(f"not a game of this server: its log's metadata has no {SERVE_KEY!r} entry")
    try:
        labels, seeds, seat = metadata["agents"], metadata["agent_seeds"], serve["seat"]
        game_id, token_digest, autoplay = serve["game_id"], serve["token_sha256"], serve["autoplay"]
    except KeyError as error:
        raise ResumeError(f"its log's metadata has no {error.args[0]!r} entry") from None
    shapes = (
        isinstance(labels, list) and len(labels) == players and all(isinstance(label, str) for label in labels),
        isinstance(seeds, list) and len(seeds) == players,
        type(seat) is int and 0 <= seat < players,
        isinstance(game_id, str) and isinstance(token_digest, str) and isinstance(autoplay, bool),
    )
    if not all(shapes):
        raise ResumeError("its log's metadata does not describe the seats of this game")
    return Seating(seat, tuple(labels), tuple(seeds), autoplay), game_id, token_digest
