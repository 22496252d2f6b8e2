"""A Gymnasium ``VectorEnv`` on the batched games: one learning seat per game, opponents in between.

``BibliosVectorEnv(num_envs=256, num_players=2, opponents=...)`` is ``num_envs`` copies of the
Gymnasium wrapper (:class:`biblios_env.gym_env.BibliosGymEnv`) stepped as one: observations
``(num_envs, 1134)`` float32, actions ``(num_envs,)`` ids, the learner's own terminal rewards.
Opponents as :mod:`biblios_env.vector.learner` describes (batched where they can be).

- **Autoreset**: ``SAME_STEP`` (``metadata["autoreset_mode"]``): a game that ends is dealt anew in
  the same step; the returned observation is the new game's, and ``infos["final_obs"]`` /
  ``infos["final_info"]`` (with their ``_final_obs`` / ``_final_info`` masks) hold the ended one's.
- **Masks**: :meth:`action_masks` (``(num_envs, 266)`` bool, what sb3-contrib looks for) and
  ``infos["action_mask"]`` at every reset and step (what CleanRL-style loops read).
- **Illegal actions** raise :class:`~biblios_env.engine.game.IllegalActionError` naming the game,
  before any game changes; nothing is forfeited.
"""

from __future__ import annotations

from typing import Any

import gymnasium
import numpy as np
from gymnasium import spaces
from gymnasium.vector import AutoresetMode

from biblios_env.actions import NUM_ACTIONS
from biblios_env.agent_interface import BatchAgent
from biblios_env.vector.learner import LearnerGames, OpponentSource


class BibliosVectorEnv(gymnasium.vector.VectorEnv):
    """``num_envs`` games with one learning seat each; see the module docstring.

    Args:
        num_envs: games stepped together.
        num_players: 2, 3 or 4.
        opponents: ``None`` (random), a batch agent, or an opponent source (an ``OpponentPool``).
        learner_seat: a fixed seat, or ``None`` to draw one per game.
        seed: seeds the deals, seats and opponents (``reset(seed=...)`` replaces it).
        game_options: the PettingZoo env's game options (``penalty``, ``reward``, ``preset``, ...).
    """

    metadata: dict[str, Any] = {"autoreset_mode": AutoresetMode.SAME_STEP, "render_modes": []}

    def __init__(
        self,
        num_envs: int,
        num_players: int = 2,
        opponents: OpponentSource | BatchAgent | None = None,
        *,
        learner_seat: int | None = None,
        seed: int | None = None,
        **game_options: Any,
    ) -> None:
        self.learner = LearnerGames(
            num_envs, num_players, opponents, learner_seat=learner_seat, seed=seed, **game_options
        )
        self.num_envs = self.learner.num_games
        self.single_observation_space = self.learner.observation_space["observation"]
        self.single_action_space = spaces.Discrete(NUM_ACTIONS)
        self.observation_space = gymnasium.vector.utils.batch_space(self.single_observation_space, self.num_envs)
        self.action_space = gymnasium.vector.utils.batch_space(self.single_action_space, self.num_envs)
        self._started = False

    def reset(
        self, *, seed: int | list[int] | None = None, options: dict[str, Any] | None = None
    ) -> tuple[np.ndarray, dict[str, Any]]:
        """Deal every game anew; ``seed`` (one int) replays the same games."""
        if isinstance(seed, list):
            raise ValueError("seed must be one int for all games (a game's deal comes from it and its index)")
        if options:
            raise ValueError(f"this VectorEnv takes no reset options, got {sorted(options)}")
        self.learner.reset(seed)
        self._started = True
        return self.learner.observation.copy(), {"action_mask": self.action_masks()}

    def step(self, actions: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, dict[str, Any]]:
        if not self._started:
            raise RuntimeError("call reset() before step()")
        learner = self.learner
        learner.step(np.asarray(actions))
        terminated = learner.terminated.copy()
        infos: dict[str, Any] = {"action_mask": self.action_masks()}
        if terminated.any():
            final_obs = np.full(self.num_envs, None, dtype=object)
            final_info = np.full(self.num_envs, None, dtype=object)
            for slot in np.flatnonzero(terminated).tolist():
                final_obs[slot] = learner.final_observation(slot)
                final_info[slot] = dict(learner.results[slot] or {})
            infos.update(final_obs=final_obs, _final_obs=terminated, final_info=final_info, _final_info=terminated)
        truncated = np.zeros(self.num_envs, bool)
        return learner.observation.copy(), learner.rewards.copy(), terminated, truncated, infos

    def action_masks(self) -> np.ndarray:
        """The learner's legal actions in every game, ``(num_envs, 266)`` bool."""
        return self.learner.action_mask.astype(bool)

    def close_extras(self, **kwargs: Any) -> None:
        self._started = False


__all__ = ["BibliosVectorEnv"]
