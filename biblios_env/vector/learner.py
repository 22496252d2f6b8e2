"""One learning seat per game of a :class:`~biblios_env.vector.VectorGame`, the other seats played
by opponents: what the Gymnasium and Stable-Baselines3 adapters share.

Every slot is a game in which one seat, the learner's, is driven from outside, one decision per
:meth:`LearnerGames.step`; between two of its decisions the opponents play, as in the Gymnasium
wrapper (:mod:`biblios_env.gym_env`): the learner's seat and the opponents are drawn for each new
game, the opponents sit left of the learner in order, and a game that ends (on the learner's move
or an opponent's) is dealt anew at once.

Opponents are :class:`~biblios_env.agent_interface.BatchAgent` objects (a network: one call for
every game where it is to act) or per-game :class:`~biblios_env.agent_interface.Agent` objects
(started for each game, shown their seat's view), given as for the Gymnasium wrapper: ``None``
(uniformly random moves, batched), one batch agent for every opponent seat, or an
:data:`~biblios_env.agent_interface.OpponentSource` called per game (an
:class:`~biblios_env.gym_env.OpponentPool` of factories; a factory that returns one shared batch
agent batches it across games).
"""

from __future__ import annotations

from typing import Any, cast

import numpy as np

from biblios_env.agent_interface import (
    NO_OBSERVATIONS,
    Agent,
    AgentObservation,
    BatchAgent,
    OpponentSource,
    UniformBatchAgent,
    reads_observations,
)
from biblios_env.engine.views import player_view
from biblios_env.gym_env import OpponentError
from biblios_env.observations import encode_state
from biblios_env.pettingzoo_env import raw_env
from biblios_env.vector.games import VectorGame

#: The agent code of a seat played by a per-game agent (a batch agent's code is its ``id``, the
#: learner's seat 0): the codes let a round group the games to step by agent in numpy.
PER_GAME_AGENT = -1


def _name(agent: object) -> str:
    return str(getattr(agent, "name", type(agent).__name__))


class LearnerGames:
    """``num_games`` games, each with one learning seat; see the module docstring.

    Args:
        num_games: the batch size.
        num_players: 2, 3 or 4.
        opponents: ``None``, a :class:`BatchAgent`, or an :data:`OpponentSource`.
        learner_seat: a fixed seat, or ``None`` to draw one per game.
        seed: seeds the deals (:class:`VectorGame`), the seats and the opponents.
        game_options: the options of :class:`VectorGame` (``penalty``, ``reward``, ...).
    """

    def __init__(
        self,
        num_games: int,
        num_players: int = 2,
        opponents: OpponentSource[Agent | BatchAgent] | BatchAgent | None = None,
        *,
        learner_seat: int | None = None,
        seed: int | None = None,
        **game_options: Any,
    ) -> None:
        self.games = VectorGame(num_games, num_players, seed, **game_options)
        self.num_games = self.games.num_games
        self.num_players = self.games.num_players
        template = raw_env(self.num_players)
        #: A learner's observation space, the PettingZoo env's: ``{"observation", "action_mask"}``.
        self.observation_space = template.observation_space(template.possible_agents[0])
        if learner_seat is not None and (
            isinstance(learner_seat, bool)
            or not isinstance(learner_seat, int | np.integer)
            or not 0 <= learner_seat < self.num_players
        ):
            raise ValueError(f"learner_seat must be None or a seat in 0..{self.num_players - 1}, got {learner_seat!r}")
        self.fixed_seat = None if learner_seat is None else int(learner_seat)
        #: The default opponent (``opponents=None``), reseeded with the games.
        self.uniform = UniformBatchAgent()
        self.source = self._source(opponents)
        self._seed_generators(self.games.seed)
        self.learner_seat = np.zeros(self.num_games, np.int64)
        #: Per slot, the agent of each seat (``None`` at the learner's).
        self.seat_agents: list[list[Agent | BatchAgent | None]] = [[None] * self.num_players] * self.num_games
        #: Per slot and seat, the code of its agent (:data:`PER_GAME_AGENT`); ``seat_agents`` keeps
        #: every coded batch agent alive, so no two of them share an ``id``.
        self.agent_codes = np.zeros((self.num_games, self.num_players), np.int64)
        #: Per slot, the names of the current game's opponents, left of the learner first.
        self.opponent_names: list[list[str]] = [[] for _ in range(self.num_games)]
        self.rewards = np.zeros(self.num_games, np.float32)
        self.terminated = np.zeros(self.num_games, bool)
        #: Per slot, the learner's last finished game: (seat, final VP, winners, opponents' names).
        self.results: list[dict[str, Any] | None] = [None] * self.num_games

    def _source(
        self, opponents: OpponentSource[Agent | BatchAgent] | BatchAgent | None
    ) -> OpponentSource[Agent | BatchAgent]:
        if opponents is None:
            uniform = self.uniform
            return lambda num_players, rng: [uniform] * (num_players - 1)
        if isinstance(opponents, BatchAgent):
            batch_agent = opponents
            return lambda num_players, rng: [batch_agent] * (num_players - 1)
        if callable(opponents):
            return opponents
        raise ValueError(f"opponents must be None, a batch agent (act_batch) or a callable source, got {opponents!r}")

    def _seed_generators(self, seed: int) -> None:
        """The generators of the seats and opponents, and of the default opponent's moves."""
        self.rng = np.random.default_rng([seed, 0])
        self.uniform.rng = np.random.default_rng([seed, 1])

    # ----------------------------------------------------------------- episodes
    def reset(self, seed: int | None = None) -> None:
        """Deal a game in every slot and play the opponents up to each learner's first decision."""
        if seed is not None:
            self._seed_generators(seed)
        self.games.reset(seed)
        for slot in range(self.num_games):
            self._seat_players(slot)
        self.rewards[:] = 0.0
        self.terminated[:] = False
        self._play_opponents()

    def step(self, actions: np.ndarray, active: np.ndarray | None = None) -> None:
        """The learner's action in every game, then the opponents up to its next decision; sets
        :attr:`rewards` (the learner's reward of a game that ended) and :attr:`terminated`.

        ``active`` (bool per game) steps only those games: the others keep the learner's decision
        and their actions are ignored, not checked. The Gymnasium adapter holds a game that ended
        this way for one step, to hand out its next-step autoreset (its new game is already dealt).
        Every stepped game's action is checked before any game changes.
        """
        self.rewards[:] = 0.0
        self.terminated[:] = False
        self.games.step(actions, active, eager=False)  # encoded when read: the learner's positions alone
        self._record_finished()
        self._play_opponents()

    def _seat_players(self, slot: int) -> None:
        """Draw the learner's seat and the opponents of the game just dealt in ``slot``."""
        n = self.num_players
        seat = self.fixed_seat if self.fixed_seat is not None else int(self.rng.integers(n))
        opponents = list(self.source(n, self.rng))
        if len(opponents) != n - 1:
            raise ValueError(f"the opponent source returned {len(opponents)} agents for {n} players")
        agents: list[Agent | BatchAgent | None] = [None] * n
        codes = [0] * n
        for offset, agent in enumerate(opponents):
            other = (seat + 1 + offset) % n
            agents[other] = agent
            if isinstance(agent, BatchAgent):
                codes[other] = id(agent)
            else:
                codes[other] = PER_GAME_AGENT
                agent.start_game(other, n, seed=int(self.rng.integers(2**63)))
        self.learner_seat[slot] = seat
        self.seat_agents[slot] = agents
        self.agent_codes[slot] = codes
        self.opponent_names[slot] = [_name(agent) for agent in opponents]

    def _record_finished(self) -> None:
        """For every game that ended in the last step: the learner's reward and result, new players."""
        batch = self.games.batch
        for slot in self.games.ended:
            seat = int(self.learner_seat[slot])
            self.rewards[slot] = batch.rewards[slot, seat]
            self.terminated[slot] = True
            self.results[slot] = {
                "learner_seat": seat,
                "vp": batch.final_vp[slot].tolist(),
                "winners": np.flatnonzero(batch.winners[slot]).tolist(),
                "is_success": bool(batch.winners[slot, seat]),
                "opponents": self.opponent_names[slot],
            }
            self._seat_players(slot)

    def _play_opponents(self) -> None:
        """Step the games where an opponent is to act until the learner is to act in every game.

        Each round steps only the games waiting for an opponent (the others, and their rows of
        the batch, are left as they are), the agents grouped by code: one ``act_batch`` call per
        batch agent and round, one ``act`` per game for the others. A game that ends is dealt anew
        with new seats, and played on in the next round."""
        batch = self.games.batch
        actions = np.zeros(self.num_games, np.int64)
        while True:
            waiting = batch.current_player != self.learner_seat
            rows = waiting.nonzero()[0]
            if len(rows) == 0:
                return
            self._choose_actions(rows, actions)
            try:
                self.games._step_rows(actions.tolist(), None if len(rows) == self.num_games else rows, eager=False)
            except ValueError as error:  # an opponent's illegal action (IllegalActionError is one)
                raise OpponentError(f"an opponent chose an illegal action: {error}") from error
            self._record_finished()

    def _choose_actions(self, rows: np.ndarray, actions: np.ndarray) -> None:
        """The opponents' moves in the games ``rows`` (ascending), into ``actions``."""
        batch = self.games.batch
        codes = self.agent_codes[rows, batch.current_player[rows]]
        distinct = sorted(set(codes.tolist()))  # for a few games, cheaper than numpy's reductions
        for code in distinct:
            chosen = rows if len(distinct) == 1 else rows[codes == code]
            if code == PER_GAME_AGENT:
                for slot in chosen.tolist():
                    seat = int(batch.current_player[slot])
                    actions[slot] = self._single_action(slot, cast(Agent, self.seat_agents[slot][seat]))
            else:
                self._batch_actions(chosen, actions)

    def _batch_actions(self, slots: np.ndarray, actions: np.ndarray) -> None:
        """The moves of one batch agent in the games ``slots`` (ascending), into ``actions``."""
        batch = self.games.batch
        first = int(slots[0])
        agent = cast(BatchAgent, self.seat_agents[first][int(batch.current_player[first])])
        try:
            observations = batch.observation[slots] if reads_observations(agent) else NO_OBSERVATIONS
            actions[slots] = agent.act_batch(observations, batch.action_mask[slots])
        except Exception as error:
            raise OpponentError(f"batch opponent {_name(agent)!r} raised in act_batch(): {error!r}") from error

    def _single_action(self, slot: int, agent: Agent | None) -> int:
        """A per-game opponent's move in ``slot``, from its seat's view."""
        game = self.games.game(slot)
        seat = game.current_player
        if agent is None:
            raise RuntimeError(f"no agent for seat {seat} in game {slot}")
        try:
            view = player_view(game.state, seat)
            return int(agent.act(AgentObservation(view, list(game.legal_actions()))))
        except Exception as error:
            raise OpponentError(
                f"opponent {_name(agent)!r} in seat {seat} of game {slot} (seed {game.seed}) raised in act(): {error!r}"
            ) from error

    # ----------------------------------------------------------------- views
    @property
    def observation(self) -> np.ndarray:
        """The learner's observation in every game (the batch's: the learner is to act everywhere)."""
        return self.games.batch.observation

    @property
    def action_mask(self) -> np.ndarray:
        return self.games.batch.action_mask

    def final_observation(self, slot: int) -> np.ndarray:
        """The learner's observation at the end of the last finished game of ``slot``."""
        game = self.games.finished_game(slot)
        if game is None:
            raise ValueError(f"no game of slot {slot} has ended yet")
        return encode_state(game.state, int(self.results[slot]["learner_seat"]))  # type: ignore[index]


__all__ = ["LearnerGames"]
