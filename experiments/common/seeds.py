"""Seeds derived from a run's seed: each game, each agent and each purpose gets its own, from the
run's seed and integer keys alone, so any game can be played anywhere, in any order, and replayed."""

from __future__ import annotations

from typing import Final

import numpy as np

# Purposes mixed into derived seeds, so that seeds for different purposes never coincide; one
# list, so that a new purpose takes a new number.
DEAL: Final = 1
AGENT: Final = 2
#: The seed of a league's exploiter run (its games never repeat the main run's).
EXPLOITER_RUN: Final = 3
#: The teacher games of expert iteration and PPO's warm start: each game's deal, its agents, and
#: the draw of who plays the learner seat's move.
TEACHER_GAME: Final = 11
TEACHER_AGENT: Final = 12
TEACHER_CHOICE: Final = 13
#: The self-play trainer's exploring starts: when each game's random move is due, and the move.
EXPLORING_STARTS: Final = 14


def derive_seed(run_seed: int, *keys: int) -> int:
    """A 63-bit seed from the run's seed and integer keys (numpy SeedSequence hashing)."""
    words = np.random.SeedSequence([run_seed, *keys]).generate_state(2, np.uint32)
    return (int(words[0]) << 31) ^ int(words[1])


__all__ = [
    "AGENT",
    "DEAL",
    "EXPLOITER_RUN",
    "EXPLORING_STARTS",
    "TEACHER_AGENT",
    "TEACHER_CHOICE",
    "TEACHER_GAME",
    "derive_seed",
]
