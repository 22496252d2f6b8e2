"""What RLlib's new API stack needs to train and play Biblios (``pip install -e ".[rllib]"``).

RLlib (Ray 2.60) trains on the PettingZoo AEC env through its own ``PettingZooEnv`` wrapper,
which hands every seat its terminal reward: the end of a game steps each finished agent once,
so a shared self-play policy learns from the winners' and the losers' returns alike. Three
things stand between that wrapper and the project's env, and they live here:

* **The observation keys.** RLlib's action-masking convention (its example masking module, and
  :class:`ActionMaskingTorchRLModule` below) reads ``{"observations", "action_mask"}``; the env
  says ``"observation"``, as PettingZoo's classic games do. :class:`RLlibObservations` renames
  the key and changes no value.
* **RLlib's env check.** Before sampling, RLlib steps the env once with
  ``action_space.sample()``, an *unmasked* id (legal with a probability of about 3/266), and
  reports any exception as an "old gym API" error. :func:`make_rllib_env` therefore builds the
  env with ``illegal_action="forfeit"`` (see :mod:`biblios_env.pettingzoo_env`): an illegal id
  ends the game instead of raising, and the check stays on. A masked policy never forfeits, so
  :func:`count_forfeits` counts forfeited episodes during training, and the training command
  stops on the first one.
* **A masking policy.** Nothing outside RLlib's ``examples`` package masks actions, and example
  code is no stable API, so :class:`ActionMaskingTorchRLModule` is the example's idea rebuilt
  on PPO's default torch module: illegal actions' logits are pushed to the float minimum.

:class:`RLlibAgent` plays a checkpoint through the project's :class:`~biblios_env.agent_interface.Agent`
interface, so tournaments and matches take it as an agent spec (``DIR`` a checkpoint folder,
``runs/rllib-.../checkpoints/iteration_000050``)::

    python -m experiments.tournament --agents experiments.training.rllib.support.RLlibAgent:checkpoint=DIR value
"""

from __future__ import annotations

import os
from collections.abc import Hashable, Mapping
from functools import lru_cache
from pathlib import Path
from typing import Any, Final

import numpy as np
from gymnasium import spaces
from pettingzoo import AECEnv
from pettingzoo.utils import BaseWrapper

from biblios_env.agent_interface import AgentObservation
from biblios_env.pettingzoo_env import FORFEIT
from biblios_env.pettingzoo_env import env as biblios_env

#: The command that installs what this module needs.
INSTALL: Final = 'pip install -e ".[rllib]"'

try:
    import torch
    from ray.rllib.algorithms.ppo.torch.default_ppo_torch_rl_module import DefaultPPOTorchRLModule
    from ray.rllib.core import COMPONENT_LEARNER, COMPONENT_LEARNER_GROUP, COMPONENT_RL_MODULE
    from ray.rllib.core.columns import Columns
    from ray.rllib.core.rl_module.rl_module import RLModule
    from ray.rllib.core.rl_module.torch import TorchRLModule
    from ray.rllib.env.wrappers.pettingzoo_env import PettingZooEnv
    from ray.rllib.utils.torch_utils import FLOAT_MIN
    from ray.tune.registry import register_env
except ImportError as error:
    raise ModuleNotFoundError(
        f"{__name__} needs RLlib and torch, the 'rllib' extra ({error}); install it with: {INSTALL}", name=error.name
    ) from error

#: The name RLlib knows the env by (``config.environment(RLLIB_ENV, env_config=...)``).
RLLIB_ENV: Final = "biblios_rllib"
#: The one policy every seat plays (self-play with shared parameters): its RLModule's id.
POLICY: Final = "shared"
#: RLlib's action-masking observation keys.
OBSERVATIONS: Final = "observations"
ACTION_MASK: Final = "action_mask"
#: The episode metric :func:`count_forfeits` logs (``result["env_runners"][FORFEITS]``).
FORFEITS: Final = "forfeited_episodes"


# ----------------------------------------------------------------------------- the env
class RLlibObservations(BaseWrapper):
    """The env's observations under RLlib's action-masking keys, ``{"observations", "action_mask"}``.

    Only the key changes. The mask stays int8: torch promotes it where the module takes its
    logarithm, and PettingZoo's ``api_test`` samples masked actions with ``Discrete.sample(mask)``,
    which accepts an int8 mask only.
    """

    def __init__(self, env: AECEnv) -> None:
        super().__init__(env)
        inner = env.observation_space(env.possible_agents[0])
        space = spaces.Dict({OBSERVATIONS: inner["observation"], ACTION_MASK: inner["action_mask"]})
        self.observation_spaces = {agent: space for agent in env.possible_agents}

    def observation_space(self, agent: str) -> spaces.Dict:
        return self.observation_spaces[agent]

    def observe(self, agent: str) -> dict[str, np.ndarray]:
        observation = self.env.observe(agent)
        return {OBSERVATIONS: observation["observation"], ACTION_MASK: observation["action_mask"]}


def make_rllib_env(config: Mapping[str, Any] | None = None) -> PettingZooEnv:
    """RLlib's env creator: its ``PettingZooEnv`` around the project env (with PettingZoo's
    call-order wrapper), ``illegal_action="forfeit"`` and RLlib's observation keys.

    ``config`` is RLlib's ``env_config``: the env's constructor options (``num_players``,
    ``reward``, ``forfeit_reward``, ...). ``illegal_action`` is always ``"forfeit"``, which RLlib's
    env check needs; asking for anything else is a ValueError.
    """
    options = dict(config or {})
    if options.setdefault("illegal_action", FORFEIT) != FORFEIT:
        raise ValueError(
            f"the RLlib env always forfeits illegal actions (RLlib's env check steps an unmasked action), "
            f"got illegal_action={options['illegal_action']!r}"
        )
    return PettingZooEnv(RLlibObservations(biblios_env(**options)))


def register_rllib_env() -> None:
    """Register :func:`make_rllib_env` as :data:`RLLIB_ENV`. Ray keeps the registration in the
    cluster, so the driver registers once, before it builds or restores an algorithm."""
    register_env(RLLIB_ENV, make_rllib_env)


def shared_policy(agent_id: Hashable, episode: Any, **kwargs: Any) -> str:
    """RLlib's ``policy_mapping_fn``: every seat plays :data:`POLICY` (a module-level function,
    so that RLlib can send it to its env runners)."""
    return POLICY


def count_forfeits(*, episode: Any, metrics_logger: Any, **kwargs: Any) -> None:
    """RLlib's ``on_episode_end`` callback: log 1 under :data:`FORFEITS` for an episode that
    ended in a forfeit, else 0 (summed over the iteration's episodes).

    The forfeit option is there for RLlib's env check only; during training the masked policy
    must never choose an illegal action, and without this count a forfeit would end an episode
    silently instead of raising.
    """
    last_infos = episode.get_infos(-1, env_steps=False)  # each agent's last info
    forfeited = any(isinstance(info, dict) and info.get("forfeit") for info in last_infos.values())
    metrics_logger.log_value(FORFEITS, int(forfeited), reduce="sum")


# ----------------------------------------------------------------------------- the policy
def _split(batch: dict[str, Any]) -> tuple[dict[str, Any], Any]:
    """The batch with only the observation vector under ``obs``, and the action mask.

    The batch given is left as it is: RLlib calls ``compute_values`` and ``forward_train`` on the
    same batch, and each needs the mask.
    """
    observation = batch[Columns.OBS]
    return {**batch, Columns.OBS: observation[OBSERVATIONS]}, observation[ACTION_MASK]


def _masked(outputs: dict[str, Any], mask: Any) -> dict[str, Any]:
    """Add ``log(mask)``, clamped to the float minimum, to the action logits: 0 for a legal
    action, the float minimum for an illegal one. The softmax then gives an illegal action a
    probability of exactly 0 in float32, and the logits stay finite (no NaN in the loss)."""
    outputs[Columns.ACTION_DIST_INPUTS] = outputs[Columns.ACTION_DIST_INPUTS] + torch.clamp(
        torch.log(mask), min=FLOAT_MIN
    )
    return outputs


class ActionMaskingTorchRLModule(DefaultPPOTorchRLModule):
    """PPO's default torch module (encoder, policy and value heads) over the observation vector,
    whose action logits are masked to the legal actions in every forward pass.

    The observation space is the masked ``Dict`` of :class:`RLlibObservations`; the networks are
    built for its ``"observations"`` entry only (the mask is no input). Built as RLlib's example
    module is (its observation space swapped during ``setup``), on PPO's default module rather
    than the example's deprecated alias of it.
    """

    def __init__(self, *, observation_space: spaces.Space | None = None, **kwargs: Any) -> None:
        if not isinstance(observation_space, spaces.Dict) or set(observation_space.spaces) != {
            OBSERVATIONS,
            ACTION_MASK,
        }:
            raise ValueError(
                f"{type(self).__name__} needs a Dict observation space with the keys {OBSERVATIONS!r} and "
                f"{ACTION_MASK!r} (wrap the env in RLlibObservations), got {observation_space}"
            )
        self.observation_space_with_mask = observation_space
        super().__init__(observation_space=observation_space[OBSERVATIONS], **kwargs)

    def setup(self) -> None:
        """Build the networks for the observation vector, then give the module back the masked
        space: a checkpoint rebuilds the module from the space it holds, and ``__init__`` needs
        the ``Dict``."""
        super().setup()
        self.observation_space = self.observation_space_with_mask

    def _forward(self, batch: dict[str, Any], **kwargs: Any) -> dict[str, Any]:
        """Inference and exploration (RLlib routes both here)."""
        inputs, mask = _split(batch)
        return _masked(super()._forward(inputs, **kwargs), mask)

    def _forward_train(self, batch: dict[str, Any], **kwargs: Any) -> dict[str, Any]:
        inputs, mask = _split(batch)
        return _masked(super()._forward_train(inputs, **kwargs), mask)

    def compute_values(self, batch: dict[str, Any], embeddings: Any = None) -> Any:
        inputs, _ = _split(batch)
        return super().compute_values(inputs, embeddings)


# ----------------------------------------------------------------------------- the agent
def policy_path(checkpoint: str | os.PathLike[str]) -> Path:
    """Where an algorithm checkpoint (``Algorithm.save_to_path``) keeps :data:`POLICY`'s module."""
    return Path(checkpoint) / COMPONENT_LEARNER_GROUP / COMPONENT_LEARNER / COMPONENT_RL_MODULE / POLICY


@lru_cache(maxsize=8)
def _load_module(path: str, modified: int) -> TorchRLModule:
    """The torch module at ``path``, read once per process and version (``modified``): a
    tournament builds a fresh agent for every game."""
    module = RLModule.from_checkpoint(path)
    if not isinstance(module, TorchRLModule):
        raise ValueError(f"{path} holds a {type(module).__name__}, not a torch RLModule")
    module.eval()
    return module


def load_policy(checkpoint: str | os.PathLike[str]) -> TorchRLModule:
    """The shared policy of an algorithm checkpoint written by ``python -m experiments.train_rllib``;
    ValueError naming the checkpoint when it holds none."""
    path = policy_path(checkpoint)
    if not path.is_dir():
        raise ValueError(
            f"checkpoint {os.fspath(checkpoint)!r} holds no RLlib policy {POLICY!r} (expected {path}); "
            "give a checkpoint folder written by python -m experiments.train_rllib"
        )
    return _load_module(str(path.resolve()), path.stat().st_mtime_ns)


class RLlibAgent:
    """Plays an RLlib checkpoint of ``python -m experiments.train_rllib``: the most likely legal
    action of its shared policy (greedy, so the same position gets the same move).

    It reads what the env's observation holds for its seat, encoded by
    :mod:`biblios_env.observations` exactly as the env encodes it, and chooses among the legal
    actions only, so it never plays an illegal action. Inference uses one torch thread: more
    are slower for a network this size, and tournaments run one agent per core.

    Args:
        checkpoint: an algorithm checkpoint folder (``checkpoints/iteration_NNNNNN`` of a run).
    """

    name = "rllib"

    def __init__(self, checkpoint: str | os.PathLike[str]) -> None:
        if not isinstance(checkpoint, str | os.PathLike):
            raise ValueError(f"checkpoint must be a path to a checkpoint folder, got {checkpoint!r}")
        torch.set_num_threads(1)
        self.checkpoint = Path(checkpoint)
        self.module = load_policy(checkpoint)

    def __repr__(self) -> str:
        return f"RLlibAgent(checkpoint={str(self.checkpoint)!r})"

    def start_game(self, seat: int, num_players: int, seed: int | None = None) -> None:
        """Nothing to prepare: greedy play draws no random numbers, and the policy plays any seat."""

    def act(self, observation: AgentObservation) -> int:
        batch = {
            Columns.OBS: {
                OBSERVATIONS: torch.from_numpy(observation.vector)[None],
                ACTION_MASK: torch.from_numpy(observation.action_mask)[None],
            }
        }
        with torch.no_grad():
            logits = self.module.forward_inference(batch)[Columns.ACTION_DIST_INPUTS][0]
        legal = observation.legal_actions
        return legal[int(torch.argmax(logits[legal]))]


__all__ = [
    "ACTION_MASK",
    "FORFEITS",
    "OBSERVATIONS",
    "POLICY",
    "RLLIB_ENV",
    "ActionMaskingTorchRLModule",
    "RLlibAgent",
    "RLlibObservations",
    "count_forfeits",
    "load_policy",
    "make_rllib_env",
    "policy_path",
    "register_rllib_env",
    "shared_policy",
]
