"""A Gymnasium ``VectorEnv`` on the batched games: one learning seat per game, opponents in between.

``BibliosVectorEnv(num_envs=256, num_players=2, opponents=...)`` is ``num_envs`` copies of the
Gymnasium wrapper (:class:`biblios_env.gym_env.BibliosGymEnv`) stepped as one, and behaves as
Gymnasium 1.x's ``SyncVectorEnv`` of those copies does, so code and wrappers written for that run
unchanged: observations ``(num_envs, 1134)`` float32, actions ``(num_envs,)`` ids, the learner's
own terminal rewards. Opponents as :mod:`biblios_env.vector.learner` describes (batched where
they can be).

- **Autoreset** (``autoreset_mode=``, read back from ``metadata["autoreset_mode"]``), as
  Gymnasium defines the modes:

  - ``NEXT_STEP`` (the default, Gymnasium's): the step on which a game ends returns its final
    observation, its reward and ``terminated``; the next step starts the slot's new game instead
    of stepping it: that slot's action is ignored, its reward is 0, ``terminated`` False, and the
    observation and info are the new game's first. Gymnasium's observation wrappers
    (``NormalizeObservation``, ``FlattenObservation``, ``DtypeObservation``, ...) need this mode.
  - ``SAME_STEP``: a game that ends is dealt anew in the same step; the returned observation is
    the new game's, and ``infos["final_obs"]`` / ``infos["final_info"]`` hold the ended one's.

- **Infos** are laid out as Gymnasium's ``VectorEnv._add_info`` lays out the copies' infos: a
  dict of arrays, each key ``k`` with a bool mask ``_k`` of the games that have it. Every game
  has ``learner_seat``, ``num_players``, ``opponents`` and ``action_mask`` at every reset and
  step; the game that ended also has ``vp``, ``winners``, ``is_success`` and ``forfeit`` (always
  False: an illegal action raises): at top level in ``NEXT_STEP`` mode, under ``final_info``
  (a dict of arrays, masked by ``_final_info``, next to ``final_obs``/``_final_obs``, an object
  array) in ``SAME_STEP`` mode.
- **Masks**: :meth:`action_masks` (``(num_envs, 266)`` bool, what sb3-contrib looks for) and
  ``infos["action_mask"]`` at every reset and step (what CleanRL-style loops read). A game
  waiting for its ``NEXT_STEP`` reset accepts any action and ignores it, so its mask is all True
  (one game's env shows all False after its end): a masked policy always has an action to sample.
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
from biblios_env.agent_interface import Agent, BatchAgent, OpponentSource
from biblios_env.vector.learner import LearnerGames

#: The autoreset modes this env implements (Gymnasium's ``DISABLED`` needs per-game resets, which it has not).
AUTORESET_MODES = (AutoresetMode.NEXT_STEP, AutoresetMode.SAME_STEP)


def check_autoreset_mode(value: AutoresetMode | str) -> AutoresetMode:
    """``value`` as an :class:`AutoresetMode`: the member or its string, as ``SyncVectorEnv`` takes it."""
    for mode in AUTORESET_MODES:
        if value is mode or value == mode.value:
            return mode
    accepted = ", ".join(f"AutoresetMode.{mode.name} ({mode.value!r})" for mode in AUTORESET_MODES)
    raise ValueError(f"autoreset_mode must be one of {accepted}, got {value!r}")


class BibliosVectorEnv(gymnasium.vector.VectorEnv):
    """``num_envs`` games with one learning seat each; see the module docstring.

    Args:
        num_envs: games stepped together.
        num_players: 2, 3 or 4.
        opponents: ``None`` (random), a batch agent, or an opponent source (an ``OpponentPool``).
        learner_seat: a fixed seat, or ``None`` to draw one per game.
        seed: seeds the deals, seats and opponents (``reset(seed=...)`` replaces it).
        autoreset_mode: ``AutoresetMode.NEXT_STEP`` (default) or ``SAME_STEP``, or their strings.
        game_options: the PettingZoo env's game options (``penalty``, ``reward``, ``preset``, ...).
    """

    def __init__(
        self,
        num_envs: int,
        num_players: int = 2,
        opponents: OpponentSource[Agent | BatchAgent] | BatchAgent | None = None,
        *,
        learner_seat: int | None = None,
        seed: int | None = None,
        autoreset_mode: AutoresetMode | str = AutoresetMode.NEXT_STEP,
        **game_options: Any,
    ) -> None:
        self.autoreset_mode = check_autoreset_mode(autoreset_mode)
        #: An instance attribute, as ``SyncVectorEnv`` sets it: Gymnasium's wrappers read the mode here.
        self.metadata = {"autoreset_mode": self.autoreset_mode, "render_modes": []}
        self.learner = LearnerGames(
            num_envs, num_players, opponents, learner_seat=learner_seat, seed=seed, **game_options
        )
        self.num_envs = self.learner.num_games
        self.single_observation_space = self.learner.observation_space["observation"]
        self.single_action_space = spaces.Discrete(NUM_ACTIONS)
        self.observation_space = gymnasium.vector.utils.batch_space(self.single_observation_space, self.num_envs)
        self.action_space = gymnasium.vector.utils.batch_space(self.single_action_space, self.num_envs)
        #: The games that ended on the last step and start anew on the next (``NEXT_STEP`` only).
        self.waiting_reset = np.zeros(self.num_envs, bool)
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
        self.waiting_reset[:] = False
        self._started = True
        return self.learner.observation.copy(), self._current_infos()

    def step(self, actions: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, dict[str, Any]]:
        """One learner action per game (ignored in a game waiting for its ``NEXT_STEP`` reset)."""
        if not self._started:
            raise RuntimeError("call reset() before step()")
        if self.autoreset_mode == AutoresetMode.NEXT_STEP:
            return self._step_next_step(np.asarray(actions))
        return self._step_same_step(np.asarray(actions))

    def _step_next_step(self, actions: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, dict]:
        """Step the games that are on, and let those that ended last step show their new game
        (already dealt by the learner's games, held back from this step)."""
        learner = self.learner
        learner.step(actions, ~self.waiting_reset if self.waiting_reset.any() else None)
        ended = learner.terminated.copy()
        observation = learner.observation.copy()
        self.waiting_reset = ended.copy()
        infos = self._current_infos()
        any_action = np.ones(NUM_ACTIONS, bool)
        for slot in np.flatnonzero(ended).tolist():
            observation[slot] = learner.final_observation(slot)
            infos = self._add_info(infos, self._ended_game_info(slot, any_action), slot)
        return observation, learner.rewards.copy(), ended, np.zeros(self.num_envs, bool), infos

    def _step_same_step(self, actions: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, dict]:
        """Step every game; those that end are already dealt anew, the ended ones under ``final_*``."""
        learner = self.learner
        learner.step(actions)
        ended = learner.terminated.copy()
        infos = self._current_infos()
        no_action = np.zeros(NUM_ACTIONS, bool)
        for slot in np.flatnonzero(ended).tolist():
            final = {"final_obs": learner.final_observation(slot), "final_info": self._ended_game_info(slot, no_action)}
            infos = self._add_info(infos, final, slot)
        return learner.observation.copy(), learner.rewards.copy(), ended, np.zeros(self.num_envs, bool), infos

    def _current_infos(self) -> dict[str, Any]:
        """What every game's info holds at every reset and step, for the game now in its slot,
        built as whole arrays (``_add_info`` one game at a time would cost a Python loop per key)."""
        learner = self.learner
        opponents = np.full(self.num_envs, None, dtype=object)
        for slot, names in enumerate(learner.opponent_names):
            opponents[slot] = names
        infos: dict[str, Any] = {
            "learner_seat": learner.learner_seat.copy(),
            "num_players": np.full(self.num_envs, learner.num_players),
            "opponents": opponents,
            "action_mask": self.action_masks(),
        }
        for key in list(infos):
            infos[f"_{key}"] = np.ones(self.num_envs, bool)
        return infos

    def _ended_game_info(self, slot: int, action_mask: np.ndarray) -> dict[str, Any]:
        """The info of the game that ended in ``slot``, with the keys and types one
        :class:`~biblios_env.gym_env.BibliosGymEnv` gives on its last step."""
        result = self.learner.results[slot]
        if result is None:
            raise RuntimeError(f"no game of slot {slot} has ended yet")
        return {
            "learner_seat": result["learner_seat"],
            "num_players": self.learner.num_players,
            "opponents": result["opponents"],
            "action_mask": action_mask.copy(),
            "forfeit": False,
            "vp": result["vp"],
            "winners": result["winners"],
            "is_success": result["is_success"],
        }

    def action_masks(self) -> np.ndarray:
        """The learner's legal actions in every game, ``(num_envs, 266)`` bool; all True in a game
        waiting for its ``NEXT_STEP`` reset (its action is ignored)."""
        masks = self.learner.action_mask.astype(bool)
        masks[self.waiting_reset] = True
        return masks

    def close_extras(self, **kwargs: Any) -> None:
        self._started = False


__all__ = ["AUTORESET_MODES", "BibliosVectorEnv", "check_autoreset_mode"]
