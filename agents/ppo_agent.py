"""A trained MaskablePPO policy as an agent ("ppo"), and the compact policy file it plays from.

Two kinds of files load:

* ``.npz`` — the **policy file** written by :func:`export_policy`: the actor network only
  (hidden layers and action head of an SB3 ``MaskableActorCriticPolicy`` MLP) as numpy
  arrays, plus JSON metadata (architecture, how it was trained). It is small, needs no
  torch and no pickle to load, and plays with a few numpy matrix products — cheap enough
  for the self-play opponents of training and for tournaments on many processes.
  ``agents/policies/`` ships one as package data (:data:`DEFAULT_POLICY`).
* ``.zip`` — a full sb3-contrib ``MaskablePPO`` checkpoint (needs torch and sb3-contrib);
  it plays through ``model.predict(..., action_masks=mask)``.

Either way the action mask is applied at every decision: illegal actions get probability
zero, so the agent can only ever choose a legal action (dropping the mask at prediction
time is the most common MaskablePPO bug). The agent reads only its seat's observation
vector (:mod:`biblios_env.observations`).
"""

from __future__ import annotations

import json
import os
from functools import lru_cache
from pathlib import Path
from typing import Any, Final

import numpy as np

from biblios_env.actions import NUM_ACTIONS
from biblios_env.agent_interface import AgentObservation
from biblios_env.observations import OBSERVATION_SIZE

POLICY_FORMAT: Final = "biblios-ppo-policy"
POLICY_FORMAT_VERSION: Final = 1
ACTIVATIONS: Final = ("relu", "tanh")
ACTIVATIONS_TEXT: Final = ", ".join(ACTIVATIONS)
#: The shipped policy, trained by ``experiments/train_ppo.py`` (see ``agents/policies/README.md``). It is
#: package data beside this module, so it is found in an installed wheel as well as in a clone.
DEFAULT_POLICY: Final = Path(__file__).resolve().parent / "policies" / "ppo_2p.npz"


class NumpyPolicy:
    """The actor of an MLP policy: ``logits = head(act(W_k ... act(W_1 x + b_1) ... + b_k))``."""

    def __init__(
        self,
        layers: list[tuple[np.ndarray, np.ndarray]],
        head: tuple[np.ndarray, np.ndarray],
        activation: str,
        metadata: dict[str, Any] | None = None,
    ) -> None:
        if activation not in ACTIVATIONS:
            raise ValueError(f"activation must be one of {ACTIVATIONS_TEXT}, got {activation!r}")
        size = OBSERVATION_SIZE
        for index, (weight, bias) in enumerate([*layers, head]):
            if weight.ndim != 2 or weight.shape[1] != size or bias.shape != (weight.shape[0],):
                raise ValueError(
                    f"layer {index}: weight {weight.shape} / bias {bias.shape} do not take input size {size}"
                )
            size = weight.shape[0]
        if size != NUM_ACTIONS:
            raise ValueError(f"the action head has {size} outputs, expected {NUM_ACTIONS}")
        # Transposed once, float32, so a decision is x @ W.T without copies.
        self.layers = [(np.ascontiguousarray(w.T, np.float32), b.astype(np.float32)) for w, b in layers]
        self.head = (np.ascontiguousarray(head[0].T, np.float32), head[1].astype(np.float32))
        self.activation = activation
        self.metadata = metadata or {}

    def logits(self, observations: np.ndarray) -> np.ndarray:
        """Unmasked action logits for one observation (1134,) or a batch (B, 1134)."""
        x = np.asarray(observations, np.float32)
        layers = self.layers
        if x.ndim == 1:  # one observation is mostly zeros: multiply only the rows of its non-zero inputs
            nonzero = np.flatnonzero(x)
            weight, bias = layers[0]
            x = self._activate(x[nonzero] @ weight[nonzero] + bias)
            layers = layers[1:]
        for weight, bias in layers:
            x = self._activate(x @ weight + bias)
        return x @ self.head[0] + self.head[1]

    def _activate(self, x: np.ndarray) -> np.ndarray:
        return np.maximum(x, 0.0, out=x) if self.activation == "relu" else np.tanh(x, out=x)

    def probabilities(self, observation: np.ndarray, mask: np.ndarray) -> np.ndarray:
        """The policy's distribution over all actions, the illegal ones (mask 0) at probability 0."""
        legal, weights = self._legal_weights(observation, mask)
        probabilities = np.zeros(NUM_ACTIONS)
        probabilities[legal] = weights / weights.sum()
        return probabilities

    def _legal_weights(self, observation: np.ndarray, mask: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        legal = np.flatnonzero(mask)
        if legal.size == 0:
            raise ValueError("the action mask allows no action")
        values = self.logits(observation)[legal].astype(np.float64)
        return legal, np.exp(values - values.max())

    def choose(self, observation: np.ndarray, mask: np.ndarray, deterministic: bool, rng: np.random.Generator) -> int:
        """The most likely legal action, or one sampled from the masked distribution."""
        if deterministic:
            legal = np.flatnonzero(mask)
            if legal.size == 0:
                raise ValueError("the action mask allows no action")
            return int(legal[np.argmax(self.logits(observation)[legal])])
        legal, weights = self._legal_weights(observation, mask)
        cumulative = np.cumsum(weights)
        index = int(np.searchsorted(cumulative, rng.random() * cumulative[-1], side="right"))
        return int(legal[min(index, legal.size - 1)])

    @property
    def num_parameters(self) -> int:
        return sum(w.size + b.size for w, b in [*self.layers, self.head])


# ----------------------------------------------------------------------------- files
def numpy_policy(policy: Any, metadata: dict[str, Any] | None = None) -> NumpyPolicy:
    """The actor of an SB3 ``MaskableActorCriticPolicy`` (MLP on the flat observation) as a
    :class:`NumpyPolicy`; ValueError for an architecture the numpy player cannot reproduce."""
    from stable_baselines3.common.torch_layers import FlattenExtractor
    from torch import nn  # imported lazily: playing a policy file needs no torch

    if not isinstance(policy.pi_features_extractor, FlattenExtractor):
        raise ValueError(f"only a FlattenExtractor can be exported, got {type(policy.pi_features_extractor).__name__}")
    layers: list[tuple[np.ndarray, np.ndarray]] = []
    activation = None
    for module in policy.mlp_extractor.policy_net:
        if isinstance(module, nn.Linear):
            layers.append((module.weight.detach().cpu().numpy().copy(), module.bias.detach().cpu().numpy().copy()))
        elif isinstance(module, nn.ReLU | nn.Tanh):
            name = "relu" if isinstance(module, nn.ReLU) else "tanh"
            if activation not in (None, name):
                raise ValueError("mixed activations cannot be exported")
            activation = name
        else:
            raise ValueError(f"cannot export a {type(module).__name__} layer")
    head = (
        policy.action_net.weight.detach().cpu().numpy().copy(),
        policy.action_net.bias.detach().cpu().numpy().copy(),
    )
    meta = {
        "format": POLICY_FORMAT,
        "version": POLICY_FORMAT_VERSION,
        "activation": activation or "relu",
        "hidden_layers": [int(weight.shape[0]) for weight, _ in layers],
        "observation_size": OBSERVATION_SIZE,
        "num_actions": NUM_ACTIONS,
        **(metadata or {}),
    }
    return NumpyPolicy(layers, head, meta["activation"], meta)


def export_policy(
    policy: Any, path: str | Path, metadata: dict[str, Any] | None = None, dtype: str = "float32"
) -> Path:
    """Write the actor of an SB3 ``MaskableActorCriticPolicy`` (see :func:`numpy_policy`) as a policy file."""
    return write_policy_file(numpy_policy(policy, metadata), path, dtype)


def write_policy_file(actor: NumpyPolicy, path: str | Path, dtype: str = "float32") -> Path:
    """Write ``actor`` with its metadata; ``dtype="float16"`` halves the file (play is float32 either way)."""
    arrays: dict[str, np.ndarray] = {}
    for index, (weight, bias) in enumerate(actor.layers):
        arrays[f"layer{index}.weight"], arrays[f"layer{index}.bias"] = weight.T.astype(dtype), bias.astype(dtype)
    arrays["head.weight"], arrays["head.bias"] = actor.head[0].T.astype(dtype), actor.head[1].astype(dtype)
    metadata = {
        "format": POLICY_FORMAT,
        "version": POLICY_FORMAT_VERSION,
        "activation": actor.activation,
        "hidden_layers": [int(weight.shape[1]) for weight, _ in actor.layers],
        "observation_size": OBSERVATION_SIZE,
        "num_actions": NUM_ACTIONS,
        **actor.metadata,
    }
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    temporary = path.with_name(path.name + ".tmp.npz")  # written whole, then moved: readers never see half a file
    np.savez_compressed(temporary, meta=np.array(json.dumps(metadata)), **arrays)
    os.replace(temporary, path)
    return path


def read_policy_file(path: str | Path) -> NumpyPolicy:
    """Load a policy file written by :func:`export_policy` (no pickle: ``allow_pickle=False``)."""
    path = Path(path)
    with np.load(path, allow_pickle=False) as data:
        meta = json.loads(str(data["meta"]))
        if meta.get("format") != POLICY_FORMAT:
            raise ValueError(f"{path} is not a {POLICY_FORMAT} file (format {meta.get('format')!r})")
        if meta.get("version") != POLICY_FORMAT_VERSION:
            raise ValueError(
                f"{path}: policy file version {meta.get('version')!r}, this code reads {POLICY_FORMAT_VERSION}"
            )
        count = len(meta["hidden_layers"])
        layers = [(data[f"layer{i}.weight"], data[f"layer{i}.bias"]) for i in range(count)]
        head = (data["head.weight"], data["head.bias"])
    return NumpyPolicy(layers, head, meta["activation"], meta)


@lru_cache(maxsize=64)
def _cached(path: str, modified: int, size: int) -> Any:
    if path.endswith(".zip"):
        from sb3_contrib import MaskablePPO  # imported lazily: only checkpoints need torch

        return MaskablePPO.load(path, device="cpu")
    return read_policy_file(path)


def load_policy(path: str | Path) -> Any:
    """The policy at ``path`` (a :class:`NumpyPolicy` for ``.npz``, a ``MaskablePPO`` for ``.zip``),
    loaded once per process and file version, so building many agents from one file is cheap."""
    resolved = Path(path).expanduser().resolve()
    if resolved.suffix not in (".npz", ".zip"):
        raise ValueError(f"a policy must be a .npz policy file or a .zip MaskablePPO checkpoint, got {path}")
    if not resolved.is_file():
        raise ValueError(f"no policy file at {resolved} (train one with python -m experiments.train_ppo)")
    stat = resolved.stat()
    return _cached(str(resolved), stat.st_mtime_ns, stat.st_size)


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
    def from_policy(cls, policy: NumpyPolicy, deterministic: bool = True, label: str = "ppo") -> PPOAgent:
        """An agent playing an in-memory :class:`NumpyPolicy` (no file)."""
        agent = cls.__new__(cls)
        agent.path, agent.policy, agent.deterministic = None, policy, bool(deterministic)
        agent.name, agent.rng = str(label), np.random.default_rng(0)
        return agent

    def __repr__(self) -> str:
        return f"PPOAgent(path={str(self.path)!r}, deterministic={self.deterministic})"

    def start_game(self, seat: int, num_players: int, seed: int | None = None) -> None:
        self.rng = np.random.default_rng(seed)

    def act(self, observation: AgentObservation) -> int:
        vector, mask = observation.vector, observation.action_mask
        if isinstance(self.policy, NumpyPolicy):
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
    "NumpyPolicy",
    "PPOAgent",
    "export_policy",
    "load_policy",
    "numpy_policy",
    "read_policy_file",
]
