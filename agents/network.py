"""A policy-and-value network over the observation vector, played with numpy, and its file format.

One class, :class:`NumpyNetwork`, plays every trained network of the project: the networks of
``experiments.train_network`` (a shared trunk with a policy head and a value head) and the actors
and critics exported from MaskablePPO (``experiments.train_ppo``: separate policy and value
MLPs, i.e. an empty trunk). The layers are plain ``(weight, bias)`` arrays, so playing needs no
torch: a decision is a few matrix products, far below the 1 ms budget of a network agent.

**Network files** (``.npz``) hold the arrays and a JSON ``meta`` entry: the format and its
version, the observation/action layout fingerprint they were trained on
(:data:`biblios_env.layout.LAYOUT_FINGERPRINT`), the architecture, what the value head predicts
and how the network was trained. Loading refuses a file made for another layout with a
:class:`~biblios_env.layout.LayoutMismatchError` naming both fingerprints, since the same
numbers would mean other things (``CHANGELOG.md``). Files are read with ``allow_pickle=False``
and written whole, then moved into place, so a reader never sees half a file.
"""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Final

import numpy as np

from biblios_env.actions import NUM_ACTIONS
from biblios_env.layout import LAYOUT_FINGERPRINT, check_layout
from biblios_env.observations import OBSERVATION_SIZE

NETWORK_FORMAT: Final = "biblios-network"
NETWORK_FORMAT_VERSION: Final = 1
ACTIVATIONS: Final = ("relu", "tanh")
#: What a value head predicts: the observer's expected win share (a logit, squashed by a
#: sigmoid), or an RL return in the units of the training reward (MaskablePPO's critic).
VALUE_KINDS: Final = ("win_share", "return")
#: The three parts of a network, in file order.
PARTS: Final = ("trunk", "policy", "value")
#: What a network reads, and its input width: the observation vector alone, or the observation
#: followed by a one-hot of the move the ``value`` heuristic proposes at the decision (its prior,
#: computed from the same view by :class:`agents.network_agent.NetworkAgent`).
INPUTS: Final = {"observation": OBSERVATION_SIZE, "observation+value": OBSERVATION_SIZE + NUM_ACTIONS}

Layer = tuple[np.ndarray, np.ndarray]


class NumpyNetwork:
    """``trunk`` layers shared by a ``policy`` head (ending in 266 logits) and an optional
    ``value`` head (ending in one number); every hidden layer is followed by ``activation``.

    Args:
        trunk, policy, value: lists of ``(weight (out, in), bias (out,))``, torch's layout.
        activation: ``"relu"`` or ``"tanh"``.
        value_kind: what the value head predicts (:data:`VALUE_KINDS`).
        metadata: JSON-ready facts written to and read from the file (training run, player counts).
    """

    def __init__(
        self,
        trunk: Sequence[Layer],
        policy: Sequence[Layer],
        value: Sequence[Layer] | None = None,
        *,
        activation: str = "relu",
        value_kind: str = "win_share",
        inputs: str = "observation",
        metadata: dict[str, Any] | None = None,
    ) -> None:
        if inputs not in INPUTS:
            raise ValueError(f"inputs must be one of {tuple(INPUTS)}, got {inputs!r}")
        if activation not in ACTIVATIONS:
            raise ValueError(f"activation must be one of {ACTIVATIONS}, got {activation!r}")
        if value_kind not in VALUE_KINDS:
            raise ValueError(f"value_kind must be one of {VALUE_KINDS}, got {value_kind!r}")
        if not policy:
            raise ValueError("a network needs at least one policy layer (the action head)")
        self.inputs = inputs
        self.input_size = INPUTS[inputs]
        width = _check_chain("trunk", trunk, self.input_size)
        if _check_chain("policy", policy, width) != NUM_ACTIONS:
            raise ValueError(f"the policy head must end in {NUM_ACTIONS} outputs (one per action id)")
        if value is not None and _check_chain("value", value, width) != 1:
            raise ValueError("the value head must end in one output")
        # Transposed once to (in, out) float32, so a forward pass is x @ W + b without copies.
        self.trunk = [_prepared(layer) for layer in trunk]
        self.policy = [_prepared(layer) for layer in policy]
        self.value = None if value is None else [_prepared(layer) for layer in value]
        self.activation = activation
        self.value_kind = value_kind
        self.metadata = dict(metadata or {})

    # ------------------------------------------------------------------ inference
    def logits(self, observations: np.ndarray) -> np.ndarray:
        """Unmasked action logits for one input vector or a batch (see :meth:`input_vector`)."""
        return self._run(self.policy, self._run(self.trunk, observations, heads_follow=True))

    def predict_value(self, observations: np.ndarray) -> np.ndarray | float:
        """The value head's prediction: a win share in [0, 1] or a return (see ``value_kind``)."""
        if self.value is None:
            raise ValueError("this network has no value head")
        out = self._run(self.value, self._run(self.trunk, observations, heads_follow=True))[..., 0]
        if self.value_kind == "win_share":
            out = 1.0 / (1.0 + np.exp(-out))
        return float(out) if np.ndim(out) == 0 else out

    def input_vector(self, observation: np.ndarray, proposal: int | None = None) -> np.ndarray:
        """What the network reads at a decision: the observation vector, followed for an
        ``"observation+value"`` network by the one-hot of the heuristic's proposed action."""
        if self.inputs == "observation":
            return observation
        if proposal is None:
            raise ValueError("this network reads the value heuristic's proposed action too; pass it as proposal")
        vector = np.zeros(self.input_size, np.float32)
        vector[:OBSERVATION_SIZE] = observation
        vector[OBSERVATION_SIZE + proposal] = 1.0
        return vector

    def _run(self, layers: list[Layer], x: np.ndarray, heads_follow: bool = False) -> np.ndarray:
        """Apply ``layers``: an activation after each, except after the last of a head (its output).

        The first layer of the network meets the raw observation, which is mostly zeros (about
        6 % of the entries are not): only the weight rows of the inputs that are non-zero (in some
        row of a batch) are multiplied, which halves a batch's forward.
        """
        x = np.asarray(x, np.float32)
        for index, (weight, bias) in enumerate(layers):
            if index == 0 and weight.shape[0] == self.input_size and x.shape[-1] == self.input_size:
                nonzero = np.flatnonzero(x if x.ndim == 1 else x.any(axis=0))
                x = x[..., nonzero] @ weight[nonzero] + bias
            else:
                x = x @ weight + bias
            if heads_follow or index < len(layers) - 1:
                x = self._activate(x)
        return x

    def _activate(self, x: np.ndarray) -> np.ndarray:
        return np.maximum(x, 0.0, out=x) if self.activation == "relu" else np.tanh(x, out=x)

    def probabilities(self, observation: np.ndarray, mask: np.ndarray) -> np.ndarray:
        """The masked policy over all 266 actions: illegal actions (mask 0) have probability 0."""
        legal, weights = self._legal_weights(observation, mask)
        probabilities = np.zeros(NUM_ACTIONS)
        probabilities[legal] = weights / weights.sum()
        return probabilities

    def choose(self, observation: np.ndarray, mask: np.ndarray, deterministic: bool, rng: np.random.Generator) -> int:
        """The most likely legal action, or one sampled from the masked policy."""
        legal, weights = self._legal_weights(observation, mask)
        if deterministic:
            return int(legal[np.argmax(weights)])
        cumulative = np.cumsum(weights)
        index = int(np.searchsorted(cumulative, rng.random() * cumulative[-1], side="right"))
        return int(legal[min(index, legal.size - 1)])

    def choose_batch(
        self, observations: np.ndarray, masks: np.ndarray, deterministic: bool, rng: np.random.Generator
    ) -> np.ndarray:
        """:meth:`choose` for a batch, in one forward: per row the most likely legal action, or one
        sampled from the masked policy (Gumbel-max, the same distribution)."""
        if not np.asarray(masks).any(axis=1).all():
            raise ValueError("an action mask of the batch allows no action")
        scores = self.logits(observations).astype(np.float64)
        if not deterministic:
            scores += rng.gumbel(size=scores.shape)
        return np.where(np.asarray(masks) != 0, scores, -np.inf).argmax(axis=1)

    def _legal_weights(self, observation: np.ndarray, mask: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        legal = np.flatnonzero(mask)
        if legal.size == 0:
            raise ValueError("the action mask allows no action")
        values = self.logits(observation)[legal].astype(np.float64)
        return legal, np.exp(values - values.max())

    @property
    def num_parameters(self) -> int:
        return sum(w.size + b.size for part in self._parts().values() for w, b in part)

    def _parts(self) -> dict[str, list[Layer]]:
        return {"trunk": self.trunk, "policy": self.policy, "value": self.value or []}

    # ------------------------------------------------------------------ files
    def save(self, path: str | Path, dtype: str = "float32") -> Path:
        """Write the network file; ``dtype="float16"`` halves it (play is float32 either way)."""
        arrays: dict[str, np.ndarray] = {}
        for part, layers in self._parts().items():
            for index, (weight, bias) in enumerate(layers):
                arrays[f"{part}{index}.weight"] = weight.T.astype(dtype)
                arrays[f"{part}{index}.bias"] = bias.astype(dtype)
        meta = {
            **self.metadata,
            "format": NETWORK_FORMAT,
            "version": NETWORK_FORMAT_VERSION,
            "layout": LAYOUT_FINGERPRINT,
            "activation": self.activation,
            "value_kind": self.value_kind,
            "inputs": self.inputs,
            "layers": {part: len(layers) for part, layers in self._parts().items()},
            "hidden": [int(weight.shape[1]) for weight, _ in self.trunk],
            "num_parameters": self.num_parameters,
        }
        if self.value is None:
            meta["layers"]["value"] = None
        path = Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        temporary = path.with_name(path.name + ".tmp.npz")
        np.savez_compressed(temporary, allow_pickle=False, meta=np.array(json.dumps(meta)), **arrays)
        os.replace(temporary, path)
        return path

    @classmethod
    def load(cls, path: str | Path) -> NumpyNetwork:
        """Read a network file; refuses other formats, versions and observation/action layouts."""
        path = Path(path)
        try:
            data = np.load(path, allow_pickle=False)
        except (OSError, ValueError) as error:
            raise ValueError(f"cannot read network file {path}: {error}") from error
        with data:
            if "meta" not in data:
                raise ValueError(f"{path} is not a {NETWORK_FORMAT} file (no 'meta' entry)")
            meta = json.loads(str(data["meta"]))
            if meta.get("format") != NETWORK_FORMAT:
                raise ValueError(f"{path} is not a {NETWORK_FORMAT} file (format {meta.get('format')!r})")
            if meta.get("version") != NETWORK_FORMAT_VERSION:
                raise ValueError(
                    f"{path}: network file version {meta.get('version')!r}, this code reads {NETWORK_FORMAT_VERSION}"
                )
            check_layout(meta.get("layout"), f"network file {path}")
            parts: dict[str, list[Layer] | None] = {}
            for part in PARTS:
                count = meta["layers"][part]
                parts[part] = (
                    None
                    if count is None
                    else [(data[f"{part}{i}.weight"], data[f"{part}{i}.bias"]) for i in range(count)]
                )
        known = {"format", "version", "layout", "activation", "value_kind", "inputs", "layers", "hidden"}
        known.add("num_parameters")
        return cls(
            parts["trunk"] or [],
            parts["policy"] or [],
            parts["value"],
            activation=meta["activation"],
            value_kind=meta["value_kind"],
            inputs=meta.get("inputs", "observation"),
            metadata={key: value for key, value in meta.items() if key not in known},
        )


def _check_chain(part: str, layers: Sequence[Layer], width: int) -> int:
    """Check that ``layers`` chain from ``width`` inputs; returns the output width."""
    for index, (weight, bias) in enumerate(layers):
        if weight.ndim != 2 or weight.shape[1] != width or bias.shape != (weight.shape[0],):
            raise ValueError(
                f"{part} layer {index}: weight {weight.shape} / bias {bias.shape} do not take {width} inputs"
            )
        width = weight.shape[0]
    return width


def _prepared(layer: Layer) -> Layer:
    weight, bias = layer
    return np.ascontiguousarray(np.asarray(weight, np.float32).T), np.asarray(bias, np.float32).copy()


def file_version(
    path: str | Path, suffixes: tuple[str, ...], wrong_suffix: str, what: str, hint: str
) -> tuple[str, int, int]:
    """``(resolved path, modification time, size)`` of a policy file, the key under which its
    loaders cache what they read (so building many agents from one file, as tournaments do,
    reads it once, and a rewritten file is read again). A wrong suffix or a missing file raises
    a ValueError naming the path (``what`` names the kind of file, ``hint`` how to make one)."""
    resolved = Path(path).expanduser().resolve()
    if resolved.suffix not in suffixes:
        raise ValueError(f"{wrong_suffix}, got {path}")
    if not resolved.is_file():
        raise ValueError(f"no {what} at {resolved} ({hint})")
    stat = resolved.stat()
    return str(resolved), stat.st_mtime_ns, stat.st_size


__all__ = ["ACTIVATIONS", "NETWORK_FORMAT", "NETWORK_FORMAT_VERSION", "VALUE_KINDS", "NumpyNetwork", "file_version"]
