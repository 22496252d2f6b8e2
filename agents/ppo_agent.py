"""A trained MaskablePPO policy as an agent ("ppo"), and the compact policy file it plays from.

Two kinds of files load:

* ``.npz`` — the **policy file** written by :func:`export_policy`: a network file of
  :mod:`agents.network` holding the actor (hidden layers and action head of an SB3
  ``MaskableActorCriticPolicy`` MLP) and the critic, with JSON metadata (architecture, the
  observation/action layout fingerprint, how it was trained). It is small, needs no torch and
  no pickle to load, refuses to load against another layout, and plays with a few numpy matrix
  products — cheap enough for the self-play opponents of training and for tournaments on many
  processes. ``agents/policies/`` ships one as package data (:data:`DEFAULT_POLICY`).
* ``.zip`` — a full sb3-contrib ``MaskablePPO`` checkpoint (needs torch and sb3-contrib);
  it plays through ``model.predict(..., action_masks=mask)``.

Either way the action mask is applied at every decision: illegal actions get probability
zero, so the agent can only ever choose a legal action (dropping the mask at prediction
time is the most common MaskablePPO bug). The agent reads only its seat's observation
vector (:mod:`biblios_env.observations`).

A policy file records the player counts it was trained for (the shipped one: 2 players). At
another count the agent still plays, since its observation has room for every count, but
untrained there: it says so with a ``UserWarning``, once per process and player count (a
tournament builds a fresh agent for every game). It warns rather than refuses, unlike a
``network`` file trained for other counts, because the measured ladders of docs/results.md play
``ppo`` at 3 and 4 players as a baseline.
"""

from __future__ import annotations

import warnings
from functools import lru_cache
from pathlib import Path
from typing import Any, Final

import numpy as np

from agents.network import NumpyNetwork, file_version
from biblios_env.actions import NUM_ACTIONS
from biblios_env.agent_interface import AgentObservation

#: The shipped policy, trained by ``experiments/train_ppo.py`` (see ``docs/policies.md``).
DEFAULT_POLICY: Final = Path(__file__).resolve().parent / "policies" / "ppo_2p.npz"
#: The player counts this process has warned about (see :func:`warn_if_untrained`).
_WARNED_COUNTS: Final[set[int]] = set()


def numpy_policy(policy: Any, metadata: dict[str, Any] | None = None) -> NumpyNetwork:
    """The actor and critic of an SB3 ``MaskableActorCriticPolicy`` (MLPs on the flat observation)
    as a :class:`NumpyNetwork` with an empty trunk (SB3's actor and critic share no layers);
    ValueError for an architecture the numpy player cannot reproduce."""
    from stable_baselines3.common.torch_layers import FlattenExtractor
    from torch import nn  # imported lazily: playing a policy file needs no torch

    if not isinstance(policy.pi_features_extractor, FlattenExtractor):
        raise ValueError(f"only a FlattenExtractor can be exported, got {type(policy.pi_features_extractor).__name__}")
    activations: set[str] = set()

    def layers(modules: Any, head: Any) -> list[tuple[np.ndarray, np.ndarray]]:
        found = []
        for module in [*modules, head]:
            if isinstance(module, nn.Linear):
                found.append((module.weight.detach().cpu().numpy().copy(), module.bias.detach().cpu().numpy().copy()))
            elif isinstance(module, nn.ReLU | nn.Tanh):
                activations.add("relu" if isinstance(module, nn.ReLU) else "tanh")
            else:
                raise ValueError(f"cannot export a {type(module).__name__} layer")
        return found

    actor = layers(policy.mlp_extractor.policy_net, policy.action_net)
    critic = layers(policy.mlp_extractor.value_net, policy.value_net)
    if len(activations) > 1:
        raise ValueError("mixed activations cannot be exported")
    return NumpyNetwork(
        [], actor, critic, activation=activations.pop() if activations else "relu", value_kind="return",
        metadata={"hidden_layers": [int(weight.shape[0]) for weight, _ in actor[:-1]], **(metadata or {})},
    )  # fmt: skip


def export_policy(
    policy: Any, path: str | Path, metadata: dict[str, Any] | None = None, dtype: str = "float32"
) -> Path:
    """Write the actor and critic of an SB3 ``MaskableActorCriticPolicy`` (see :func:`numpy_policy`)."""
    return numpy_policy(policy, metadata).save(path, dtype)


def read_policy_file(path: str | Path) -> NumpyNetwork:
    """Load a policy file (a network file of :mod:`agents.network`; no pickle)."""
    return NumpyNetwork.load(path)


def write_policy_file(network: NumpyNetwork, path: str | Path, dtype: str = "float32") -> Path:
    """Write ``network``; ``dtype="float16"`` halves the file (play is float32 either way)."""
    return network.save(path, dtype)


@lru_cache(maxsize=64)
def _cached(path: str, modified: int, size: int) -> Any:
    if path.endswith(".zip"):
        from sb3_contrib import MaskablePPO  # imported lazily: only checkpoints need torch

        return MaskablePPO.load(path, device="cpu")
    return NumpyNetwork.load(path)


def load_policy(path: str | Path) -> Any:
    """The policy at ``path`` (a :class:`NumpyNetwork` for ``.npz``, a ``MaskablePPO`` for ``.zip``),
    loaded once per process and file version, so building many agents from one file is cheap."""
    wrong = "a policy must be a .npz policy file or a .zip MaskablePPO checkpoint"
    hint = "train one with python -m experiments.train_ppo"
    return _cached(*file_version(path, (".npz", ".zip"), wrong, "policy file", hint))


def trained_players(policy: Any) -> list[int] | None:
    """The player counts a policy was trained for, from its file's metadata (None when it does not
    say, e.g. a MaskablePPO checkpoint)."""
    if not isinstance(policy, NumpyNetwork):
        return None
    players = policy.metadata.get("players")
    return None if players is None else [int(count) for count in players]


def warn_if_untrained(policy: Any, source: object, num_players: int) -> None:
    """A ``UserWarning`` (once per process and player count) when ``policy`` (read from ``source``)
    was trained for other player counts than ``num_players``."""
    players = trained_players(policy)
    if players is None or num_players in players or num_players in _WARNED_COUNTS:
        return
    _WARNED_COUNTS.add(num_players)
    warnings.warn(
        f"ppo: the policy {source} was trained for {' or '.join(map(str, players))} players, not {num_players}: "
        f"it plays {num_players}-player games without training for them (warned once per process)",
        UserWarning,
        stacklevel=3,
    )


# ----------------------------------------------------------------------------- the agent
class PPOAgent:
    """Plays a trained policy through the agent interface, masking illegal actions at every decision.

    Args:
        path: a ``.npz`` policy file (default: the shipped :data:`DEFAULT_POLICY`) or a ``.zip``
            MaskablePPO checkpoint.
        deterministic: play the most likely legal action (default, for evaluation) or sample
            from the masked distribution (for diverse self-play opponents), seeded by
            :meth:`start_game`.
        label: the agent's name in results (default ``"ppo"``).
    """

    def __init__(self, path: str | Path = DEFAULT_POLICY, deterministic: bool = True, label: str = "ppo") -> None:
        if not isinstance(deterministic, bool):
            raise ValueError(f"deterministic must be true or false, got {deterministic!r}")
        self.path: Path | None = Path(path)
        self.policy = load_policy(path)
        self.deterministic = deterministic
        self.name = str(label)
        self.rng = np.random.default_rng(0)

    @classmethod
    def from_policy(cls, policy: NumpyNetwork, deterministic: bool = True, label: str = "ppo") -> PPOAgent:
        """An agent playing an in-memory :class:`NumpyPolicy` (no file)."""
        agent = cls.__new__(cls)
        agent.path, agent.policy, agent.deterministic = None, policy, bool(deterministic)
        agent.name, agent.rng = str(label), np.random.default_rng(0)
        return agent

    def __repr__(self) -> str:
        return f"PPOAgent(path={str(self.path)!r}, deterministic={self.deterministic})"

    def start_game(self, seat: int, num_players: int, seed: int | None = None) -> None:
        self.rng = np.random.default_rng(seed)
        warn_if_untrained(self.policy, self.path or "in memory", num_players)

    def act(self, observation: AgentObservation) -> int:
        vector, mask = observation.vector, observation.action_mask
        if isinstance(self.policy, NumpyNetwork):
            return self.policy.choose(vector, mask, self.deterministic, self.rng)
        return _checkpoint_action(self.policy, vector, mask, self.deterministic, self.rng)


def _checkpoint_action(
    model: Any, vector: np.ndarray, mask: np.ndarray, deterministic: bool, rng: np.random.Generator
) -> int:
    """A MaskablePPO checkpoint's action, always with ``action_masks``."""
    if deterministic:
        action, _ = model.predict(vector, deterministic=True, action_masks=mask.astype(bool))
        return int(action)
    import torch

    with torch.no_grad():
        observation, _ = model.policy.obs_to_tensor(vector)
        distribution = model.policy.get_distribution(observation, action_masks=mask.astype(bool)[None])
        probabilities = distribution.distribution.probs[0].double().numpy()
    return int(rng.choice(NUM_ACTIONS, p=probabilities / probabilities.sum()))


__all__ = [
    "DEFAULT_POLICY",
    "PPOAgent",
    "export_policy",
    "load_policy",
    "numpy_policy",
    "read_policy_file",
    "trained_players",
    "warn_if_untrained",
]
