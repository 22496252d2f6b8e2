"""Biblios for one learning seat as a Gymnasium environment (``biblios_gym_v1``), for SB3 / sb3-contrib:
the other seats are played by :class:`~biblios_env.agent_interface.Agent` objects between the
learner's decisions, so a single-agent algorithm trains on a multi-player game; every observation,
mask and reward is the learner's own seat's. Episodes, rewards, masks, bad actions, faults and the
opponents: docs/environment.md, "The single-seat Gymnasium env".
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, Final, TypeGuard

import gymnasium
import numpy as np
from gymnasium import spaces

from biblios_env.actions import NUM_ACTIONS, is_action_id
from biblios_env.agent_interface import Agent, AgentObservation, OpponentSource, UniformRandomAgent
from biblios_env.engine.config import check_seed
from biblios_env.engine.game import Game, IllegalActionError
from biblios_env.engine.setup import check_num_players
from biblios_env.engine.views import player_view
from biblios_env.layout import GYM_ENV_ID
from biblios_env.pettingzoo_env import (
    FORFEIT_REWARD,
    ILLEGAL_ACTIONS,
    RAISE,
    RESET_OPTIONS,
    check_forfeit_reward,
    check_illegal_action,
    is_forfeit,
    known_reset_options,
    raw_env,
    render_output,
)
from biblios_env.text import FULL_TABLE, Viewer, game_text

#: Keys ``reset(options=...)`` accepts besides the PettingZoo env's (``deck``, ``auction_order``, ``first_player``).
GYM_RESET_OPTIONS: Final = ("learner_seat", "num_players")
#: ``render_view`` values: the learner's seat's view (the default) or the full table.
LEARNER_VIEW: Final = "learner"
RENDER_VIEWS: Final = (LEARNER_VIEW, FULL_TABLE)
#: Why the episode cannot go on while the opponents play (replaced by the reason if one fails).
_INTERRUPTED: Final = "the episode was interrupted during an opponent's turn"


class OpponentError(RuntimeError):
    """An opponent raised, or played an illegal action, inside ``reset()`` or ``step()``.

    The game is then stopped on that opponent's turn, so the wrapper refuses further steps
    until ``reset()``: the learner's next action would otherwise be applied to the
    opponent's decision.
    """


def check_learner_action(action: object) -> int:
    """``action`` as an int id: Python and numpy integers, and the 0-d integer arrays that
    ``model.predict`` returns for one observation (what ``Discrete.contains`` accepts).

    Bools, floats and strings are refused, as :meth:`raw_env.step` refuses them: ``int(1.7)``
    would silently play action 1. Whether the id is legal is checked afterwards.
    """
    value = action[()] if isinstance(action, np.ndarray) and action.shape == () else action  # predict's 0-d array
    if is_action_id(value):
        return int(value)
    raise IllegalActionError(
        f"action must be an int id in 0..{NUM_ACTIONS - 1} (numpy integers are fine), got {action!r}"
    )


def _player_counts(num_players: object) -> tuple[int, ...]:
    """The constructor's ``num_players``, a count or a non-empty sequence of counts, as a tuple."""
    counts: tuple[object, ...] = (num_players,)
    if isinstance(num_players, Sequence) and not isinstance(num_players, str):
        counts = tuple(num_players)
    if not counts:
        raise ValueError("num_players must be a count or a non-empty sequence of counts")
    return tuple(check_num_players(count) for count in counts)


def _is_seat_number(value: object) -> bool:
    return not isinstance(value, bool) and isinstance(value, int | np.integer) and bool(value >= 0)


class UniformRandomOpponent(UniformRandomAgent):
    """The default opponent: a uniformly random legal action (the env cannot import ``agents``)."""


class OpponentPool:
    """Opponents sampled per episode and per seat from weighted factories.

    Each entry is ``(factory, weight)``: ``factory()`` returns a fresh agent (cheap: cache any
    loaded policy inside the factory). The pool is an :data:`OpponentSource`, so pass it as
    ``opponents``; keep factories picklable (module-level functions, ``functools.partial``)
    to use the pool with ``SubprocVecEnv``.
    """

    def __init__(self, entries: Sequence[tuple[Callable[[], Agent], float]] = ()) -> None:
        self.factories: list[Callable[[], Agent]] = []
        self.weights: list[float] = []
        for factory, weight in entries:
            self.add(factory, weight)

    def add(self, factory: Callable[[], Agent], weight: float = 1.0) -> None:
        if not callable(factory):
            raise ValueError(f"an opponent factory must be callable, got {factory!r}")
        if not weight >= 0:  # also rejects NaN
            raise ValueError(f"an opponent weight must be >= 0, got {weight!r}")
        self.factories.append(factory)
        self.weights.append(float(weight))

    def __len__(self) -> int:
        return len(self.factories)

    def __call__(self, num_players: int, rng: np.random.Generator) -> list[Agent]:
        total = sum(self.weights)
        if not self.factories or total <= 0:
            raise ValueError("the opponent pool is empty (or all its weights are 0)")
        probabilities = np.asarray(self.weights) / total
        picks = rng.choice(len(self.factories), size=num_players - 1, p=probabilities)
        return [self.factories[int(index)]() for index in picks]


def _is_agent(value: object) -> TypeGuard[Agent]:
    return not isinstance(value, type) and isinstance(value, Agent)


def _agent_name(agent: Agent) -> str:
    return getattr(agent, "name", type(agent).__name__)


class BibliosGymEnv(gymnasium.Env[np.ndarray, np.int64]):
    """One learning seat against given opponents; see the module docstring for the full documentation.

    Args:
        num_players: 2, 3 or 4, or a sequence of counts to draw from per episode.
        opponents: ``None``, a sequence of agents, one agent (2 players), or an
            :data:`OpponentSource` such as :class:`OpponentPool`.
        learner_seat: the learner's seat, or ``None`` to draw it per episode.
        render_mode: ``None``, ``"ansi"`` or ``"human"``.
        render_view: ``None`` / ``"learner"`` (the learner's seat's table) or ``"table"`` (every hand).
        penalty, strict_bids, reward, expose_forced, preset: the PettingZoo env's options.
        illegal_action: ``"raise"`` (default) or ``"forfeit"`` (for the environment checkers).
        forfeit_reward: the reward of a forfeited episode.
    """

    metadata: dict[str, Any] = {"name": "biblios_gym_v1", "render_modes": ["ansi", "human"], "render_fps": 1}

    def __init__(
        self,
        num_players: int | Sequence[int] = 2,
        opponents: OpponentSource[Agent] | Sequence[Agent] | Agent | None = None,
        *,
        learner_seat: int | None = None,
        render_mode: str | None = None,
        render_view: str | None = None,
        penalty: str = "standard",
        strict_bids: bool = False,
        reward: str = "win",
        expose_forced: bool = False,
        preset: str = "standard",
        illegal_action: str = RAISE,
        forfeit_reward: float = FORFEIT_REWARD,
    ) -> None:
        super().__init__()
        self.player_counts: tuple[int, ...] = _player_counts(num_players)
        if learner_seat is not None and not (_is_seat_number(learner_seat) and learner_seat < min(self.player_counts)):
            raise ValueError(
                f"learner_seat must be None or a seat below {min(self.player_counts)}, got {learner_seat!r}"
            )
        if render_mode is not None and render_mode not in self.metadata["render_modes"]:
            raise ValueError(f"render_mode must be None, 'ansi' or 'human', got {render_mode!r}")
        if render_view is not None and render_view not in RENDER_VIEWS:
            raise ValueError(f"render_view must be None, 'learner' or 'table', got {render_view!r}")
        self.learner_seat_option = None if learner_seat is None else int(learner_seat)
        self.render_mode = render_mode
        self.render_view = LEARNER_VIEW if render_view is None else render_view
        self.illegal_action = check_illegal_action(illegal_action)
        self.forfeit_reward = check_forfeit_reward(forfeit_reward)
        #: One PettingZoo env per player count (validates the options now).
        self.envs: dict[int, raw_env] = {
            count: raw_env(
                count,
                penalty=penalty,
                strict_bids=strict_bids,
                reward=reward,
                expose_forced=expose_forced,
                preset=preset,
            )
            for count in self.player_counts
        }
        first = self.envs[self.player_counts[0]]
        self.observation_space = first.observation_space(first.possible_agents[0])["observation"]
        self.action_space = spaces.Discrete(NUM_ACTIONS)
        self.opponent_source: OpponentSource[Agent] = self._source(opponents)
        self.env: raw_env = first
        self.learner_seat = 0
        self.opponents: list[Agent] = []
        self._seat_agents: dict[int, Agent] = {}
        self._mask = np.zeros(NUM_ACTIONS, dtype=bool)
        self._info: dict[str, Any] = {}
        self._done = True
        #: Why the episode cannot go on (a failed reset, an opponent's fault), or None.
        self._aborted: str | None = None

    # ----------------------------------------------------------------- opponents
    def _source(self, opponents: OpponentSource[Agent] | Sequence[Agent] | Agent | None) -> OpponentSource[Agent]:
        if opponents is None:
            return lambda num_players, rng: [UniformRandomOpponent() for _ in range(num_players - 1)]
        if _is_agent(opponents):
            if max(self.player_counts) > 2:
                raise ValueError("one opponent agent serves 2 players only; give one agent per other seat")
            return lambda num_players, rng: [opponents]
        if isinstance(opponents, Sequence) and not isinstance(opponents, str):
            agents = list(opponents)
            bad = [agent for agent in agents if not _is_agent(agent)]
            if bad:
                raise ValueError(f"opponents must implement the Agent protocol (name, start_game, act); got {bad[0]!r}")
            if len(agents) < max(self.player_counts) - 1:
                raise ValueError(
                    f"{max(self.player_counts)} players need {max(self.player_counts) - 1} opponents, got {len(agents)}"
                )
            if len({id(agent) for agent in agents}) != len(agents):
                raise ValueError("give a distinct agent object for every opponent seat")
            return lambda num_players, rng: agents[: num_players - 1]
        if callable(opponents):
            return opponents
        raise ValueError(
            f"opponents must be None, an agent, a sequence of agents or a callable source, got {opponents!r}"
        )

    def set_opponents(self, opponents: OpponentSource[Agent] | Sequence[Agent] | Agent | None) -> None:
        """Replace the opponents from the next episode on (a VecEnv reaches it with ``env_method``)."""
        self.opponent_source = self._source(opponents)

    # ----------------------------------------------------------------- gymnasium API
    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[np.ndarray, dict[str, Any]]:
        """Start an episode (see the module docs). The seed and the options are checked before
        anything changes; if the episode then cannot start (a deck that does not fit the drawn
        player count, an opponent that fails), ``step()`` is refused until the next reset."""
        if seed is not None:
            seed = check_seed(seed)  # our message naming the value, and numpy integers pass
        options = known_reset_options(options, GYM_RESET_OPTIONS + RESET_OPTIONS)
        num_players = options.pop("num_players", None)
        if num_players is not None and check_num_players(num_players) not in self.envs:
            raise ValueError(f"num_players {num_players!r} is not one of this env's counts {self.player_counts}")
        seat = options.pop("learner_seat", self.learner_seat_option)
        if seat is not None and not _is_seat_number(seat):
            raise ValueError(f"learner_seat must be None or a seat, got {seat!r}")
        super().reset(seed=seed)
        self._aborted = "the last reset() did not finish"
        self._start_episode(num_players, seat, options)
        self._play_opponents()
        if self._done:
            raise RuntimeError("the game ended before the learner's first decision")
        self._aborted = None
        return self._observation(), self._step_info()

    def _start_episode(self, num_players: int | None, seat: int | None, game_options: dict[str, Any]) -> None:
        """Draw what ``reset`` left open (player count, learner seat, opponents, seeds) and deal."""
        rng = self.np_random
        if num_players is None:
            num_players = self.player_counts[int(rng.integers(len(self.player_counts)))]
        num_players = int(num_players)
        if seat is None:
            seat = int(rng.integers(num_players))
        elif not seat < num_players:
            raise ValueError(f"learner_seat must be a seat 0..{num_players - 1}, got {seat!r}")
        opponents = list(self.opponent_source(num_players, rng))
        if len(opponents) != num_players - 1:
            raise ValueError(f"the opponent source returned {len(opponents)} agents for {num_players} players")
        self.env = self.envs[num_players]
        self.learner_seat = int(seat)
        self.opponents = opponents
        self.env.reset(seed=int(rng.integers(2**63)), options=game_options or None)
        self._seat_agents = {}
        for offset, agent in enumerate(opponents):
            other = (self.learner_seat + 1 + offset) % num_players  # the learner's left neighbour first
            self._seat_agents[other] = agent
            try:
                agent.start_game(other, num_players, seed=int(rng.integers(2**63)))
            except Exception as error:
                raise self._opponent_failed(other, "raised in start_game()", error) from error
        self._done = False
        self._info = {
            "learner_seat": self.learner_seat,
            "num_players": num_players,
            "opponents": [_agent_name(agent) for agent in opponents],
        }

    def step(self, action: Any) -> tuple[np.ndarray, float, bool, bool, dict[str, Any]]:
        if self._aborted is not None:
            raise RuntimeError(f"{self._aborted}; call reset() to start a new episode")
        if self._done:
            raise RuntimeError("step() after the end of the episode; call reset()")
        game = self._game
        action = check_learner_action(action)
        if is_forfeit(self.illegal_action, action, game.legal_actions()):
            self._done = True
            return self._observation(), self.forfeit_reward, True, False, self._step_info(forfeit=True)
        self.env.step(action)  # raises IllegalActionError naming the action and the legal ones
        self._play_opponents()
        reward = 0.0
        if self._done:
            reward = float(self.env.rewards[self.env.possible_agents[self.learner_seat]])
        if self.render_mode == "human":
            self.render()
        return self._observation(), reward, self._done, False, self._step_info()

    def action_masks(self) -> np.ndarray:
        """The legal actions of the learner's current decision (bool[266]); all False at the end
        and in a stopped episode (see Faults in the module docs)."""
        if self._aborted is not None:
            return np.zeros(NUM_ACTIONS, dtype=bool)
        return self._mask.copy()

    # gymnasium 1.2 (which RLlib pins) types render() as returning its RenderFrame type variable; 1.4 does not.
    def render(self) -> str | None:  # type: ignore[override,unused-ignore]
        """The learner's seat's table, or the full table with ``render_view="table"``."""
        game = self._game
        viewer: Viewer = FULL_TABLE if self.render_view == FULL_TABLE else self.learner_seat
        return render_output(lambda: game_text(game, viewer), self.render_mode)

    def close(self) -> None:
        for env in self.envs.values():
            env.close()

    # ----------------------------------------------------------------- helpers
    @property
    def _game(self) -> Game:
        game = self.env.game
        if game is None:
            raise RuntimeError("call reset() before using the environment")
        return game

    def learner_view(self) -> Any:
        """The learner's information set as a :class:`PlayerView` (for scripted learners and tests)."""
        return player_view(self._game.state, self.learner_seat)

    def _play_opponents(self) -> None:
        """Let the opponents act until the learner must decide or the game ends.

        While they play, the episode counts as aborted: if anything escapes (an opponent's
        exception, an illegal action, even a KeyboardInterrupt) the game stays on an
        opponent's turn, and ``step()`` must not apply the learner's next action to it.
        """
        game = self._game
        env = self.env
        self._aborted = _INTERRUPTED
        while not game.is_over and game.current_player != self.learner_seat:
            seat = game.current_player
            legal = game.legal_actions()
            try:
                action = self._seat_agents[seat].act(AgentObservation(player_view(game.state, seat), list(legal)))
            except Exception as error:
                raise self._opponent_failed(seat, "raised in act()", error) from error
            try:
                env.step(action)
            except IllegalActionError as error:
                raise self._opponent_failed(seat, "played an illegal action", error) from error
        self._aborted = None
        self._done = game.is_over

    def _opponent_failed(self, seat: int, what: str, error: Exception) -> OpponentError:
        """Stop the episode on ``seat``'s fault and build the error that says so."""
        message = (
            f"opponent {_agent_name(self._seat_agents[seat])!r} in seat {seat} {what} "
            f"(game seed {self._game.seed}, {self._game.num_players} players, learner in seat {self.learner_seat}): "
            f"{type(error).__name__}: {error}"
        )
        self._aborted = f"the episode was stopped: {message}"
        return OpponentError(message)

    def _observation(self) -> np.ndarray:
        observed = self.env.observe(self.env.possible_agents[self.learner_seat])
        self._mask = np.zeros(NUM_ACTIONS, dtype=bool) if self._done else observed["action_mask"].astype(bool)
        return observed["observation"]

    def _step_info(self, forfeit: bool = False) -> dict[str, Any]:
        info = dict(self._info)
        info["action_mask"] = self._mask.copy()
        if self._done:
            state = self._game.state
            info["forfeit"] = forfeit
            if forfeit:
                info["vp"], info["winners"], info["is_success"] = None, None, False
            else:
                info["vp"], info["winners"] = state.vp[:], state.winners[:]
                info["is_success"] = self.learner_seat in state.winners
        return info


__all__ = [
    "GYM_ENV_ID",
    "GYM_RESET_OPTIONS",
    "ILLEGAL_ACTIONS",
    "RENDER_VIEWS",
    "BibliosGymEnv",
    "OpponentError",
    "OpponentPool",
    "OpponentSource",
    "UniformRandomOpponent",
]
