"""A rollout of the self-play trainer: the network's decisions over some batched steps (one
sample per decision) and the games' results at each step, then the returns and advantages that
train on it. The returns are computed per seat: in a turn-based game a seat's next value is the
value at its *own* next decision, not at the next step of the batch (another seat acts there)."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any, Final

import numpy as np

from biblios_env.actions import NUM_ACTIONS
from experiments.training.tensors import SparseRows

#: The per-sample arrays of a rollout (one row per network decision), beside ``observations``.
SAMPLE_ARRAYS: Final = ("masks", "actions", "log_probs", "values", "slots", "seats", "steps")


@dataclass
class Rollout:
    """The network's decisions in ``steps`` batched steps, and the games' results at each step.

    Per sample (a decision of the learning network): its observation, legal-action mask, action,
    log-probability and value as the actor saw them, the game slot and seat, and the batched step
    it was taken at. Per step and game: whether the game ended there (``terminated``, ``(steps,
    games)``) and every seat's reward (``rewards``, ``(steps, games, players)``), for
    :func:`returns_and_advantages`; ``returns``, ``advantages`` and ``valid`` are its answers."""

    observations: SparseRows
    masks: np.ndarray
    actions: np.ndarray
    log_probs: np.ndarray
    values: np.ndarray
    slots: np.ndarray
    seats: np.ndarray
    steps: np.ndarray
    terminated: np.ndarray
    rewards: np.ndarray
    returns: np.ndarray | None = None
    advantages: np.ndarray | None = None
    valid: np.ndarray | None = None

    def __len__(self) -> int:
        return len(self.actions)

    def carried(self, keep: np.ndarray, steps: int) -> Rollout:
        """The samples ``keep`` (a boolean row mask) without the step results, their steps shifted
        before the next rollout's first (``steps`` earlier): DMC keeps the decisions of games still
        running until their return is known."""
        arrays = {name: getattr(self, name)[keep] for name in SAMPLE_ARRAYS}
        arrays["steps"] = arrays["steps"] - steps
        no_steps = self.terminated[:0]
        return Rollout(self.observations.take(np.flatnonzero(keep)), **arrays, terminated=no_steps,
                       rewards=self.rewards[:0])  # fmt: skip

    def after(self, previous: Rollout | None) -> Rollout:
        """This rollout with the samples ``previous`` carried in front of its own (see :meth:`carried`)."""
        if previous is None or not len(previous):
            return self
        arrays = {name: np.concatenate([getattr(previous, name), getattr(self, name)]) for name in SAMPLE_ARRAYS}
        observations = SparseRows.concatenate([previous.observations, self.observations])
        return Rollout(observations, **arrays, terminated=self.terminated, rewards=self.rewards)

    def packed(self) -> dict[str, Any]:
        """The rollout as plain arrays for a checkpoint, its masks packed to bits (8x smaller)."""
        fields = {field.name: getattr(self, field.name) for field in dataclasses.fields(self)}
        observations = dataclasses.asdict(fields.pop("observations"))
        return {**fields, "masks": np.packbits(self.masks.astype(bool), axis=1), "observations": observations}

    @staticmethod
    def unpacked(data: dict[str, Any]) -> Rollout:
        """The rollout :meth:`packed` wrote."""
        masks = np.unpackbits(data["masks"], axis=1, count=NUM_ACTIONS).astype(np.int8)
        return Rollout(**{**data, "masks": masks, "observations": SparseRows(**data["observations"])})


def returns_and_advantages(
    rollout: Rollout, bootstrap: np.ndarray, gamma: float, lam: float, monte_carlo: bool
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """GAE over each seat's own decisions, walking the rollout backwards: a seat's next value is
    the value at its own next decision in the game (or its terminal reward when the game ended,
    or ``bootstrap[slot, seat]`` at the end of the rollout). A game's end cuts the chain: nothing
    of a new game dealt in the same slot flows back into the old one.

    Returns (returns, advantages, valid). With ``monte_carlo`` (DMC) a return is the discounted
    final reward from that decision on, and a sample is valid only once its game ended within
    the rollout (its return is known); otherwise the return is advantage + value (PPO's target)."""
    steps = rollout.terminated.shape[0]
    next_value = bootstrap.copy()
    next_advantage = np.zeros_like(bootstrap)
    pending_reward = np.zeros_like(bootstrap)
    known = np.zeros(bootstrap.shape, bool)  # the game's end lies within the rollout
    advantages = np.zeros(len(rollout), np.float32)
    returns = np.zeros(len(rollout), np.float32)
    valid = np.zeros(len(rollout), bool)
    # Carried samples (DMC) sit at negative steps, before this rollout's first: their games were
    # still running when their rollout ended, so no game ended at those steps.
    first = min(0, int(rollout.steps.min())) if len(rollout) else 0
    order = np.argsort(rollout.steps, kind="stable")
    bounds = np.searchsorted(rollout.steps[order], np.arange(first, steps + 1))
    for step in range(steps - 1, first - 1, -1):
        if step >= 0:
            ended = rollout.terminated[step]
            next_value[ended] = 0.0
            next_advantage[ended] = 0.0
            pending_reward[ended] = rollout.rewards[step][ended]
            known[ended] = True
        rows = order[bounds[step - first] : bounds[step - first + 1]]
        slots, seats = rollout.slots[rows], rollout.seats[rows]
        value = rollout.values[rows]
        delta = pending_reward[slots, seats] + gamma * next_value[slots, seats] - value
        advantage = delta + gamma * lam * next_advantage[slots, seats]
        advantages[rows] = advantage
        if monte_carlo:
            returns[rows] = pending_reward[slots, seats] + gamma * next_value[slots, seats]
            next_value[slots, seats] = returns[rows]  # the Monte-Carlo return of the seat from here
        else:
            returns[rows] = advantage + value
            next_value[slots, seats] = value
        valid[rows] = known[slots, seats]
        next_advantage[slots, seats] = advantage
        pending_reward[slots, seats] = 0.0
    return returns, advantages, valid


__all__ = ["SAMPLE_ARRAYS", "Rollout", "returns_and_advantages"]
