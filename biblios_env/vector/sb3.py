"""A Stable-Baselines3 ``VecEnv`` on the batched games: ``MaskablePPO("MultiInputPolicy", vec_env)``.

``BibliosVecEnv(num_envs=256, num_players=2, opponents=...)`` steps ``num_envs`` games with one
learning seat each (:mod:`biblios_env.vector.learner`) behind SB3's ``VecEnv`` interface, so SB3's
algorithms and sb3-contrib's ``MaskablePPO`` train on it unchanged:

- observations are a dict, ``{"observation": (num_envs, 1134) float32, "action_mask": (num_envs,
  266) int8}``, the PettingZoo env's (for ``MultiInputPolicy``); with ``dict_observation=False``
  the plain ``(num_envs, 1134)`` array (for ``MlpPolicy``);
- ``env_method("action_masks")`` returns each game's legal actions, which is how ``MaskablePPO``
  masks its policy;
- a game that ends is dealt anew in the same step; its ``infos[i]`` carry the learner's result
  (``vp``, ``winners``, ``is_success``, ``learner_seat``, ``opponents``) and the
  ``terminal_observation``, as SB3 expects.

Needs the ``rl`` extra (``stable-baselines3``).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

import numpy as np
from gymnasium import spaces
from stable_baselines3.common.vec_env import VecEnv

from biblios_env.actions import NUM_ACTIONS
from biblios_env.agent_interface import Agent, BatchAgent, OpponentSource
from biblios_env.vector.learner import LearnerGames

#: The one method ``env_method`` answers (sb3-contrib's name for the masks).
ACTION_MASKS = "action_masks"


class BibliosVecEnv(VecEnv):
    """``num_envs`` games with one learning seat each; see the module docstring.

    Args:
        num_envs: games stepped together.
        num_players: 2, 3 or 4.
        opponents: ``None`` (random), a batch agent, or an opponent source (an ``OpponentPool``).
        learner_seat: a fixed seat, or ``None`` to draw one per game.
        seed: seeds the deals, seats and opponents (:meth:`seed` replaces it for the next reset).
        dict_observation: dict observations with the mask (default) or the plain vector.
        game_options: the PettingZoo env's game options (``penalty``, ``reward``, ``preset``, ...).
    """

    render_mode = None

    def __init__(
        self,
        num_envs: int,
        num_players: int = 2,
        opponents: OpponentSource[Agent | BatchAgent] | BatchAgent | None = None,
        *,
        learner_seat: int | None = None,
        seed: int | None = None,
        dict_observation: bool = True,
        **game_options: Any,
    ) -> None:
        self.learner = LearnerGames(
            num_envs, num_players, opponents, learner_seat=learner_seat, seed=seed, **game_options
        )
        self.dict_observation = bool(dict_observation)
        space = self.learner.observation_space
        observation_space = space if self.dict_observation else space["observation"]
        self._next_seed: int | None = seed
        self._actions: np.ndarray | None = None
        super().__init__(self.learner.num_games, observation_space, spaces.Discrete(NUM_ACTIONS))

    def _observations(self) -> Any:
        learner = self.learner
        if self.dict_observation:
            return {"observation": learner.observation.copy(), "action_mask": learner.action_mask.copy()}
        return learner.observation.copy()

    def reset(self) -> Any:
        self.learner.reset(self._next_seed)
        self._next_seed = None  # SB3's convention: a seed applies to the next reset only
        self.reset_infos = [{} for _ in range(self.num_envs)]
        return self._observations()

    def step_async(self, actions: np.ndarray) -> None:
        self._actions = np.asarray(actions)

    def step_wait(self) -> tuple[Any, np.ndarray, np.ndarray, list[dict[str, Any]]]:
        if self._actions is None:
            raise RuntimeError("step_wait() without step_async()")
        learner = self.learner
        learner.step(self._actions)
        self._actions = None
        dones = learner.terminated.copy()
        infos: list[dict[str, Any]] = [{} for _ in range(self.num_envs)]
        for slot in np.flatnonzero(dones).tolist():
            infos[slot] = dict(learner.results[slot] or {})
            final = learner.final_observation(slot)
            if self.dict_observation:
                infos[slot]["terminal_observation"] = {
                    "observation": final,
                    "action_mask": np.zeros(NUM_ACTIONS, np.int8),
                }
            else:
                infos[slot]["terminal_observation"] = final
        return self._observations(), learner.rewards.copy(), dones, infos

    def action_masks(self) -> np.ndarray:
        """Every game's legal actions, ``(num_envs, 266)`` bool."""
        return self.learner.action_mask.astype(bool)

    def seed(self, seed: int | None = None) -> Sequence[int | None]:
        self._next_seed = seed
        return [seed] * self.num_envs

    def close(self) -> None:
        self._actions = None

    # ----------------------------------------------------------------- SB3's attribute access
    def _indices(self, indices: int | Iterable[int] | None) -> list[int]:
        if indices is None:
            return list(range(self.num_envs))
        if isinstance(indices, int):
            return [indices]
        return list(indices)

    def env_method(self, method_name: str, *method_args: Any, indices: Any = None, **method_kwargs: Any) -> list[Any]:
        if method_name != ACTION_MASKS:
            raise AttributeError(f"BibliosVecEnv's games answer only env_method({ACTION_MASKS!r}), not {method_name!r}")
        masks = self.action_masks()
        return [masks[slot] for slot in self._indices(indices)]

    def get_attr(self, attr_name: str, indices: Any = None) -> list[Any]:
        if attr_name == ACTION_MASKS:
            return [self.action_masks] * len(self._indices(indices))
        if attr_name == "render_mode":
            return [None] * len(self._indices(indices))
        raise AttributeError(f"BibliosVecEnv's games have no attribute {attr_name!r}")

    def set_attr(self, attr_name: str, value: Any, indices: Any = None) -> None:
        raise AttributeError(f"BibliosVecEnv's games have no settable attribute {attr_name!r}")

    def env_is_wrapped(self, wrapper_class: type, indices: Any = None) -> list[bool]:
        return [False] * len(self._indices(indices))


__all__ = ["ACTION_MASKS", "BibliosVecEnv"]
