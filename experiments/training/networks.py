"""Supervised training of a policy-and-value network in torch, and its export to numpy.

The network (:class:`TorchNetwork`) is an MLP trunk on the observation with two heads: a policy
head trained by masked cross-entropy towards a teacher's choices (a search, a heuristic) and a
value head trained by binary cross-entropy towards the observer's final win share. After
training it becomes an :class:`agents.network.NumpyNetwork` (:func:`to_numpy`) that plays
without torch; :func:`from_numpy` turns a network file back into torch to continue training.

Datasets are :class:`Samples`: observation *counts* (``uint8``; the observation is counts times
:data:`biblios_env.observations.OBSERVATION_SCALE`), legal-action masks packed as bits, the
teacher's action and the value target, the player count and the game id of each sample, and the
move the ``value`` heuristic proposed there (the extra input of ``"observation+value"`` networks).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from agents.network import INPUTS, NumpyNetwork
from biblios_env.actions import NUM_ACTIONS
from biblios_env.observations import OBSERVATION_SCALE, OBSERVATION_SIZE

#: Bytes of one packed action mask.
MASK_BYTES = (NUM_ACTIONS + 7) // 8
SAMPLE_FIELDS = ("counts", "masks", "actions", "values", "players", "games", "proposals")


@dataclass
class Samples:
    """Training samples, one row per decision (see the module docstring)."""

    counts: np.ndarray  # (N, 1134) uint8
    masks: np.ndarray  # (N, MASK_BYTES) uint8, np.packbits of the legal-action mask
    actions: np.ndarray  # (N,) int16, the teacher's action
    values: np.ndarray  # (N,) float32, the observer's final win share
    players: np.ndarray  # (N,) int8
    games: np.ndarray  # (N,) int64, a game id (samples of one game are correlated)
    proposals: np.ndarray  # (N,) int16, the value heuristic's move at the decision (-1: not recorded)

    def __len__(self) -> int:
        return len(self.actions)

    @staticmethod
    def empty() -> Samples:
        """No samples (e.g. the games of a learner seat that never had a real choice)."""
        return Samples(
            np.zeros((0, OBSERVATION_SIZE), np.uint8), np.zeros((0, MASK_BYTES), np.uint8), np.zeros(0, np.int16),
            np.zeros(0, np.float32), np.zeros(0, np.int8), np.zeros(0, np.int64), np.zeros(0, np.int16),
        )  # fmt: skip

    @staticmethod
    def concatenate(parts: Sequence[Samples]) -> Samples:
        return Samples(*(np.concatenate([getattr(part, name) for part in parts]) for name in SAMPLE_FIELDS))

    def subset(self, index: np.ndarray) -> Samples:
        return Samples(*(getattr(self, name)[index] for name in SAMPLE_FIELDS))

    def save(self, path: Any) -> None:
        np.savez(path, **{name: getattr(self, name) for name in SAMPLE_FIELDS})

    @staticmethod
    def load(path: Any) -> Samples:
        with np.load(path, allow_pickle=False) as data:
            return Samples(*(data[name] for name in SAMPLE_FIELDS))


def _torch() -> Any:
    import torch

    torch.set_num_threads(1)  # default threads ran 30-40x slower on the project's 2-core machines
    return torch


def sparse_first_layer(width: int, size: int) -> Any:
    """A linear layer that also takes sparse rows (a :class:`~experiments.training.tensors.SparseBatch`):
    the observation is mostly zeros (about 35 of its 1,134 entries are not), and summing the weight
    rows of the non-zero entries costs a fraction of the dense product in the forward and the
    backward pass. Its ``weight`` reads and writes as a ``Linear``'s ``(out, in)``, so files export
    and load unchanged."""
    torch = _torch()

    class SparseFirstLinear(torch.nn.Module):  # type: ignore[name-defined]
        def __init__(self) -> None:
            super().__init__()
            dense = torch.nn.Linear(width, size)  # the same initialisation as a dense layer
            self.weight_t = torch.nn.Parameter(dense.weight.detach().t().contiguous())
            self.bias = torch.nn.Parameter(dense.bias.detach().clone())

        @property
        def weight(self) -> Any:
            return self.weight_t.t()

        def forward(self, x: Any) -> Any:
            if isinstance(x, torch.Tensor):
                return x @ self.weight_t + self.bias
            bag = torch.nn.functional.embedding_bag(
                x.columns, self.weight_t, x.offsets, mode="sum", per_sample_weights=x.values
            )
            return bag + self.bias

    return SparseFirstLinear()


class TorchNetwork:
    """Builds the torch modules lazily (importing this module needs no torch). With
    ``sparse_input`` the first layer also takes sparse rows (:func:`sparse_first_layer`)."""

    def __init__(
        self,
        hidden: Sequence[int] = (512, 256),
        value_hidden: int = 64,
        inputs: str = "observation",
        sparse_input: bool = False,
    ) -> None:
        torch = _torch()
        nn = torch.nn
        layers: list[Any] = []
        self.inputs = inputs
        width = INPUTS[inputs]
        for size in hidden:
            first = not layers
            layers += [sparse_first_layer(width, size) if first and sparse_input else nn.Linear(width, size), nn.ReLU()]
            width = size
        self.hidden = tuple(hidden)
        self.value_hidden = value_hidden
        self.trunk = nn.Sequential(*layers)
        self.policy = nn.Linear(width, NUM_ACTIONS)
        self.value = nn.Sequential(nn.Linear(width, value_hidden), nn.ReLU(), nn.Linear(value_hidden, 1))
        self.modules = nn.ModuleList([self.trunk, self.policy, self.value])

    def forward(self, x: Any) -> tuple[Any, Any]:
        features = self.trunk(x)
        return self.policy(features), self.value(features).squeeze(-1)


def to_numpy(
    network: TorchNetwork, metadata: dict[str, Any] | None = None, value_kind: str = "win_share"
) -> NumpyNetwork:
    """The trained network as a :class:`NumpyNetwork` (torch's ``(out, in)`` weight layout);
    ``value_kind`` says what its value head predicts (:data:`agents.network.VALUE_KINDS`)."""

    def layers(module: Any) -> list[tuple[np.ndarray, np.ndarray]]:
        linear = [m for m in (module if hasattr(module, "__iter__") else [module]) if hasattr(m, "weight")]
        return [(m.weight.detach().cpu().numpy().copy(), m.bias.detach().cpu().numpy().copy()) for m in linear]

    return NumpyNetwork(
        layers(network.trunk), layers(network.policy), layers(network.value), value_kind=value_kind,
        inputs=network.inputs, metadata={"hidden": list(network.hidden), **(metadata or {})},
    )  # fmt: skip


def torch_copy_problem(numpy_network: NumpyNetwork) -> str | None:
    """Why :func:`from_numpy` cannot copy ``numpy_network`` exactly, if it cannot: the torch
    network has ReLU activations, a one-layer policy head and a two-layer value head."""
    if numpy_network.value is None or len(numpy_network.policy) != 1 or len(numpy_network.value) != 2:
        return "only networks with a trunk, a one-layer policy head and a two-layer value head continue"
    if numpy_network.activation != "relu":
        return f"only ReLU networks continue, this one has {numpy_network.activation!r} activations"
    return None


def from_numpy(numpy_network: NumpyNetwork, sparse_input: bool = False) -> TorchNetwork:
    """A torch copy of a network trained here (see :func:`torch_copy_problem`)."""
    torch = _torch()
    hidden = [int(weight.shape[1]) for weight, _ in numpy_network.trunk]
    problem = torch_copy_problem(numpy_network)
    if problem is not None or numpy_network.value is None:
        raise ValueError(problem)
    value_hidden = int(numpy_network.value[0][0].shape[1])
    network = TorchNetwork(hidden, value_hidden, numpy_network.inputs, sparse_input=sparse_input)
    linear = [m for m in network.trunk if hasattr(m, "weight")] + [network.policy]
    linear += [m for m in network.value if hasattr(m, "weight")]
    arrays = [*numpy_network.trunk, *numpy_network.policy, *numpy_network.value]
    with torch.no_grad():
        for module, (weight, bias) in zip(linear, arrays, strict=True):
            module.weight.copy_(torch.from_numpy(np.ascontiguousarray(weight.T)))
            module.bias.copy_(torch.from_numpy(bias))
    return network


@dataclass
class FitReport:
    """What one :func:`fit` call measured on the held-out games."""

    epochs: int
    samples: int
    agreement: float  # share of held-out decisions where the policy's top legal action is the teacher's
    policy_loss: float
    value_loss: float
    seconds: float


class _Batches:
    """Tensors for a set of sample rows, and the losses of the network on them: what every
    training step and every held-out evaluation of :func:`fit` computes."""

    def __init__(self, network: TorchNetwork, samples: Samples) -> None:
        self.torch = _torch()
        self.network, self.samples = network, samples
        self.scale = self.torch.from_numpy(np.array(OBSERVATION_SCALE, np.float32))
        self.with_proposals = network.inputs == "observation+value"
        if self.with_proposals and (samples.proposals < 0).any():
            raise ValueError("an observation+value network needs the heuristic's proposal at every sample")

    def tensors(self, index: np.ndarray) -> tuple[Any, Any, Any, Any]:
        """Inputs, legal masks, teacher actions and value targets of the rows ``index``."""
        torch, samples = self.torch, self.samples
        x = torch.from_numpy(samples.counts[index].astype(np.float32)) * self.scale
        if self.with_proposals:
            proposal = torch.nn.functional.one_hot(
                torch.from_numpy(samples.proposals[index].astype(np.int64)), NUM_ACTIONS
            )
            x = torch.cat([x, proposal.float()], dim=1)
        mask = torch.from_numpy(np.unpackbits(samples.masks[index], axis=1, count=NUM_ACTIONS).astype(bool))
        return (
            x,
            mask,
            torch.from_numpy(samples.actions[index].astype(np.int64)),
            torch.from_numpy(samples.values[index]),
        )

    def losses(self, index: np.ndarray) -> tuple[Any, Any, Any]:
        """Masked cross-entropy against the teacher, the value loss, and the masked logits."""
        functional = self.torch.nn.functional
        x, mask, actions, values = self.tensors(index)
        logits, value = self.network.forward(x)
        logits = logits.masked_fill(~mask, -1e9)
        policy_loss = functional.cross_entropy(logits, actions)
        value_loss = functional.binary_cross_entropy_with_logits(value, values)
        return policy_loss, value_loss, logits

    def evaluate(self, index: np.ndarray) -> tuple[float, float, float]:
        """Mean policy loss, value loss and agreement with the teacher over the rows ``index``."""
        if not len(index):
            return 0.0, 0.0, 0.0
        totals = [0.0, 0.0, 0.0]
        with self.torch.no_grad():
            for begin in range(0, len(index), 4096):
                rows = index[begin : begin + 4096]
                policy_loss, value_loss, logits = self.losses(rows)
                totals[0] += float(policy_loss) * len(rows)
                totals[1] += float(value_loss) * len(rows)
                totals[2] += float((logits.argmax(-1) == self.torch.from_numpy(self.samples.actions[rows])).sum())
        return totals[0] / len(index), totals[1] / len(index), totals[2] / len(index)


def _split_by_game(samples: Samples, held_out: float, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """Training and held-out rows, split by whole games: the decisions of one game are alike, so a
    held-out set drawn by row would measure memory, not generalisation."""
    game_ids = np.unique(samples.games)
    test_games = rng.choice(game_ids, size=max(1, int(len(game_ids) * held_out)), replace=False)
    is_test = np.isin(samples.games, test_games)
    return np.flatnonzero(~is_test), np.flatnonzero(is_test)


def fit(
    network: TorchNetwork,
    samples: Samples,
    *,
    epochs: int = 4,
    batch_size: int = 512,
    learning_rate: float = 1e-3,
    value_weight: float = 0.5,
    held_out: float = 0.05,
    seed: int = 0,
    progress: Callable[[int, int], None] | None = None,
) -> FitReport:
    """Train on ``samples`` (games split into training and ``held_out`` games), keeping the
    weights of the epoch with the best held-out policy loss."""
    import time

    start = time.perf_counter()
    rng = np.random.default_rng(seed)
    train_index, test_index = _split_by_game(samples, held_out, rng)
    batches = _Batches(network, samples)
    torch = batches.torch
    optimizer = torch.optim.Adam(network.modules.parameters(), lr=learning_rate)
    best: tuple[float, list[Any], tuple[float, float, float]] | None = None
    steps = epochs * math.ceil(len(train_index) / batch_size)
    done = 0
    for _epoch in range(epochs):
        order = rng.permutation(train_index)
        for begin in range(0, len(order), batch_size):
            policy_loss, value_loss, _ = batches.losses(order[begin : begin + batch_size])
            optimizer.zero_grad()
            (policy_loss + value_weight * value_loss).backward()
            optimizer.step()
            done += 1
            if progress is not None:
                progress(done, steps)
        scores = batches.evaluate(test_index)
        if best is None or scores[0] < best[0]:
            best = (scores[0], [p.detach().clone() for p in network.modules.parameters()], scores)
    assert best is not None
    with torch.no_grad():
        for parameter, kept in zip(network.modules.parameters(), best[1], strict=True):
            parameter.copy_(kept)
    policy_loss, value_loss, agreement = best[2]
    return FitReport(epochs, len(train_index), agreement, policy_loss, value_loss, time.perf_counter() - start)


__all__ = ["MASK_BYTES", "FitReport", "Samples", "TorchNetwork", "fit", "from_numpy", "to_numpy"]
