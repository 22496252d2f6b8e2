"""Exploring starts: in each training game, one early move of the learner is a uniformly random
legal one, so that the play after rare early moves gets trained too.

A best response (BR) trained by PPO or DMC against a heuristic finds the exploits that its own
play keeps reaching; an exploit behind an early move the policy has settled against (auctioning
a card the target keeps, at the game's first decision) pays only once the rest of the game is
played to exploit it, so the policy never learns that the move pays (docs/exploitability.md, on
the `small` preset). Exploring starts, the classic remedy of Monte-Carlo control, reach those
positions in every game. With ``--exploring-starts N`` a game step ``k`` is drawn uniformly from
``0..N-1`` for each game dealt, and the learner's first decision at or after step ``k`` is a
uniformly random legal move; it is a training sample like the others, with the uniform
probability as its behaviour probability, so PPO's clipped importance ratio weighs it as an
off-policy sample and DMC values the move by the game's return, as it does its epsilon moves.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from experiments.common.seeds import EXPLORING_STARTS, derive_seed


class ExploringStarts:
    """Per game slot: the step at which its exploring move is due, the steps its game has taken,
    and whether the move was made. ``within`` is ``N``; ``seed`` the run's."""

    def __init__(self, within: int, num_games: int, seed: int) -> None:
        if within < 1:
            raise ValueError(f"exploring starts need a window of at least one step, got {within}")
        self.within = within
        self.rng = np.random.default_rng(derive_seed(seed, EXPLORING_STARTS))
        self.due = self.rng.integers(within, size=num_games)
        self.steps = np.zeros(num_games, np.int64)
        self.made = np.zeros(num_games, bool)

    def moves(self, slots: np.ndarray, masks: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """For the learner's decisions in ``slots`` (with their legal ``masks``): which of them
        explore (a bool per decision), the random legal moves there and the log-probabilities of
        those moves under uniform play."""
        exploring = ~self.made[slots] & (self.steps[slots] >= self.due[slots])
        rows = masks[exploring]
        legal = rows.sum(axis=1)
        pick = (self.rng.random(len(rows)) * legal).astype(np.int64)
        moves = np.argmax(rows.cumsum(axis=1) > pick[:, None], axis=1)
        self.made[slots[exploring]] = True
        return exploring, moves, -np.log(legal.astype(np.float32))

    def advance(self, terminated: np.ndarray) -> None:
        """After a batched step (every game took one): count it, and start over in the games
        that ended there (dealt anew), each with a new due step."""
        self.steps += 1
        ended = np.flatnonzero(terminated)
        if len(ended):
            self.steps[ended] = 0
            self.made[ended] = False
            self.due[ended] = self.rng.integers(self.within, size=len(ended))

    def state(self) -> dict[str, Any]:
        """What a checkpoint keeps."""
        return {
            "rng": self.rng.bit_generator.state,
            "due": self.due.tolist(),
            "steps": self.steps.tolist(),
            "made": self.made.tolist(),
        }

    def restore(self, state: dict[str, Any]) -> None:
        """As :meth:`state` kept it."""
        self.rng.bit_generator.state = state["rng"]
        self.due[:] = state["due"]
        self.steps[:] = state["steps"]
        self.made[:] = state["made"]


__all__ = ["ExploringStarts"]
