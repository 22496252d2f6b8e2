"""The tensor helpers of the self-play trainer's hot loop: observations as sparse rows (the first
layer multiplies only an observation's few non-zero entries), masked logits and a cheap masked
draw. They sit beside :mod:`experiments.training.networks`, whose networks they feed."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from biblios_env.observations import OBSERVATION_SCALE


def torch_module() -> Any:
    """torch, imported on first use (the trainer's parts load without it)."""
    import torch

    return torch


@dataclass(frozen=True)
class SparseBatch:
    """A batch of sparse rows as the network's first layer takes them
    (:func:`~experiments.training.networks.sparse_first_layer`): each row's non-zero ``columns``
    and ``values``, the rows one after another from ``offsets``, as ``torch.nn.functional.embedding_bag``
    reads a bag of weighted indices (twice as fast as a sparse CSR product here, and its backward
    a quarter faster)."""

    columns: Any  # (nnz,) int64 tensor
    offsets: Any  # (rows,) int64 tensor: where each row starts
    values: Any  # (nnz,) float32 tensor
    width: int

    def to_dense(self, torch: Any) -> Any:
        """The rows as a dense ``(rows, width)`` tensor (for checks; the network never needs it)."""
        rows = len(self.offsets)
        lengths = torch.diff(self.offsets, append=torch.tensor([len(self.columns)]))
        dense = torch.zeros(rows, self.width)
        dense[torch.repeat_interleave(torch.arange(rows), lengths), self.columns] = self.values
        return dense


@dataclass(frozen=True)
class LegalEntries:
    """The legal entries of a batch of logits, row by row: a few dozen of a row's 266 actions are
    legal, so the draw and its log-probability work on those alone (a third of the cost of the
    same Gumbel-max over the masked rows, whose illegal entries need noise and logarithms too)."""

    flat: np.ndarray  # (legal,) the legal entries' positions in the flattened (rows, width) logits
    row_of: np.ndarray  # (legal,) the row of each entry
    starts: np.ndarray  # (rows,) where each row's entries start
    logits: np.ndarray  # (legal,) float32, the entries' logits
    width: int

    @staticmethod
    def of(logits: Any, masks: np.ndarray) -> LegalEntries:
        """The entries of ``logits`` (a ``(rows, width)`` float tensor) that ``masks`` marks legal.
        A row with no legal action has nothing to draw: a ValueError naming it."""
        if tuple(logits.shape) != masks.shape:
            raise ValueError(f"logits of shape {tuple(logits.shape)} for masks of shape {masks.shape}: one per action")
        rows, width = masks.shape
        flat = np.flatnonzero(masks != 0)  # a 1-D search over bools: numpy's fast path
        row_of = flat // width
        lengths = np.bincount(row_of, minlength=rows)
        if rows and not lengths.all():
            raise ValueError(f"rows {np.flatnonzero(lengths == 0).tolist()[:8]} have no legal action to draw")
        starts = np.zeros(rows, np.int64)
        np.cumsum(lengths[:-1], out=starts[1:])
        values = logits.detach().numpy().reshape(-1)[flat]
        return LegalEntries(flat, row_of, starts, values, width)

    def draw(self, torch: Any) -> tuple[np.ndarray, np.ndarray]:
        """One action per row with the softmax probabilities of its legal logits, by Gumbel-max
        (the largest logit plus ``-log(-log(u))`` noise; ``u`` from torch's generator, which a
        checkpoint keeps); and the entry each action is. Non-finite logits are a
        FloatingPointError, not a row without a move."""
        if not len(self.starts):
            return self.flat, self.flat
        uniform = torch.rand(len(self.flat)).numpy()
        scores = self.logits - np.log(-np.log(np.maximum(uniform, np.float32(1e-20))))
        best = np.maximum.reduceat(scores, self.starts)
        hits = np.flatnonzero(scores == best[self.row_of])
        hit_rows = self.row_of[hits]
        first = hits[np.r_[True, hit_rows[1:] != hit_rows[:-1]]] if len(hits) else hits  # each row's first best
        if len(first) != len(self.starts):
            bad = sorted(set(range(len(self.starts))) - set(hit_rows.tolist()))[:8]
            raise FloatingPointError(f"the logits of rows {bad} are not finite: no action to draw there")
        return self.flat[first] - self.row_of[first] * self.width, first

    def log_probs(self, entries: np.ndarray) -> np.ndarray:
        """The log-probabilities of the legal ``entries`` (one per row) under each row's softmax
        over its legal logits (the masked log-softmax PPO's loss computes, to float rounding)."""
        if not len(self.starts):
            return self.logits
        top = np.maximum.reduceat(self.logits, self.starts)
        total = np.add.reduceat(np.exp(self.logits - top[self.row_of]), self.starts)
        return self.logits[entries] - top - np.log(total)


def masked_logits(torch: Any, logits: Any, masks: Any) -> Any:
    """Logits with the illegal actions pushed to -1e9 (probability 0)."""
    return logits.masked_fill(masks == 0, -1e9)


def draw_legal(torch: Any, logits: Any, masks: np.ndarray) -> np.ndarray:
    """One action per row of ``logits`` among the legal ones of ``masks``, with its softmax
    probability: the opponents' draw, which needs no log-probability."""
    actions, _ = LegalEntries.of(logits, masks).draw(torch)
    return actions


def sample_legal(torch: Any, logits: Any, masks: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """One action per row as :func:`draw_legal` draws it, and its log-probability (the actor's
    samples: PPO's ratio needs it)."""
    entries = LegalEntries.of(logits, masks)
    actions, chosen = entries.draw(torch)
    return actions, entries.log_probs(chosen)


@dataclass
class SparseRows:
    """Observations in sparse form: per row its non-zero entries (``columns``, ``values``) from
    ``starts[i]`` for ``lengths[i]`` entries. An observation has about 35 non-zero entries of
    1,134, so the network's first layer multiplies only those (a sparse CSR product, forward and
    backward), and the rows are found once, when the sample is taken, not at every epoch."""

    lengths: np.ndarray
    starts: np.ndarray
    columns: np.ndarray
    values: np.ndarray

    @staticmethod
    def of(torch: Any, counts: np.ndarray) -> SparseRows:
        """The rows of observation counts ``(k, 1134)`` uint8, scaled as the dense observation is.
        The entries are found in the flat array, row by row (a 1-D search over a bool array is
        numpy's fast path: about 4x less time than ``torch.nonzero`` or a 2-D ``np.nonzero`` over
        these bytes), then split into rows and columns."""
        positions = np.flatnonzero(counts != 0)
        rows, columns = np.divmod(positions, counts.shape[1])
        lengths = np.bincount(rows, minlength=len(counts))
        starts = np.zeros(len(counts), np.int64)
        np.cumsum(lengths[:-1], out=starts[1:])
        values = (counts.reshape(-1)[positions] * OBSERVATION_SCALE[columns]).astype(np.float32)
        return SparseRows(lengths, starts, columns, values)

    @staticmethod
    def concatenate(parts: Sequence[SparseRows]) -> SparseRows:
        """The rows of ``parts``, one after another."""
        offsets = np.cumsum([0] + [len(part.columns) for part in parts[:-1]])
        return SparseRows(
            np.concatenate([part.lengths for part in parts]),
            np.concatenate([part.starts + offset for part, offset in zip(parts, offsets, strict=True)]),
            np.concatenate([part.columns for part in parts]),
            np.concatenate([part.values for part in parts]),
        )

    def __len__(self) -> int:
        return len(self.lengths)

    def take(self, index: np.ndarray) -> SparseRows:
        """The rows ``index``, in that order, packed."""
        lengths = self.lengths[index]
        starts = np.zeros(len(index), np.int64)
        np.cumsum(lengths[:-1], out=starts[1:])
        gather = np.repeat(self.starts[index] - starts, lengths) + np.arange(int(lengths.sum()))
        return SparseRows(lengths, starts, self.columns[gather], self.values[gather])

    def tensor(self, torch: Any) -> SparseBatch:
        """The rows as the first layer takes them (rows packed in order, as :meth:`take` and :meth:`of` leave them)."""
        return SparseBatch(
            torch.from_numpy(self.columns.astype(np.int64)), torch.from_numpy(self.starts.astype(np.int64)),
            torch.from_numpy(self.values), len(OBSERVATION_SCALE),
        )  # fmt: skip


class StackedNetworks:
    """Several networks of one shape (the pool's snapshots) played in one forward: each row of a
    batch through the network its index names. The first layers are one embedding bag over all
    their weight rows stacked (a row's columns shifted to its network's block), the later layers
    one batched product over the rows grouped by network (padded to the largest group). One
    forward instead of one per network: a step's cost no longer grows with the pool."""

    def __init__(self, torch: Any, networks: Sequence[Any]) -> None:
        self.torch = torch
        self.count = len(networks)
        first = [network.trunk[0] for network in networks]
        self.width = int(first[0].weight_t.shape[0])
        with torch.no_grad():
            self.table = torch.cat([layer.weight_t for layer in first])  # (count * width, hidden)
            self.first_bias = torch.stack([layer.bias for layer in first])
            later = [[m for m in network.trunk[1:] if hasattr(m, "weight")] + [network.policy] for network in networks]
            self.weights = [torch.stack([layers[i].weight.t() for layers in later]) for i in range(len(later[0]))]
            self.biases = [torch.stack([layers[i].bias for layers in later]) for i in range(len(later[0]))]

    def logits(self, batch: SparseBatch, which: np.ndarray) -> Any:
        """The policy logits of each row of ``batch`` by the network ``which[row]``."""
        torch = self.torch
        rows = len(which)
        lengths = np.diff(np.append(batch.offsets.numpy(), len(batch.columns)))
        shift = torch.from_numpy(np.repeat(which.astype(np.int64) * self.width, lengths))
        index = torch.from_numpy(which.astype(np.int64))
        with torch.no_grad():
            hidden = torch.nn.functional.embedding_bag(
                batch.columns + shift, self.table, batch.offsets, mode="sum", per_sample_weights=batch.values
            )
            hidden = torch.relu(hidden + self.first_bias[index])
            counts = np.bincount(which, minlength=self.count)
            order = np.argsort(which, kind="stable")
            slot = np.arange(rows) - np.repeat(np.cumsum(counts) - counts, counts)
            group, place = torch.from_numpy(which[order].astype(np.int64)), torch.from_numpy(slot)
            padded = hidden.new_zeros((self.count, int(counts.max()), hidden.shape[1]))
            padded[group, place] = hidden[torch.from_numpy(order)]
            for layer, (weight, bias) in enumerate(zip(self.weights, self.biases, strict=True)):
                padded = torch.baddbmm(bias.unsqueeze(1), padded, weight)
                if layer < len(self.weights) - 1:
                    padded = torch.relu(padded)
            out = padded.new_empty((rows, padded.shape[2]))
            out[torch.from_numpy(order)] = padded[group, place]
            return out


__all__ = [
    "LegalEntries", "SparseBatch", "SparseRows", "StackedNetworks", "draw_legal", "masked_logits", "sample_legal",
    "torch_module",
]  # fmt: skip
