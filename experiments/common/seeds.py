"""Seeds derived from a run's seed: each game, each agent and each purpose gets its own, from the
run's seed and integer keys alone, so any game can be played anywhere, in any order, and replayed."""

from __future__ import annotations

from typing import Final

import numpy as np

# Purposes mixed into derived seeds, so deal seeds and agent seeds never coincide.
DEAL: Final = 1
AGENT: Final = 2


def derive_seed(run_seed: int, *keys: int) -> int:
    """A 63-bit seed from the run's seed and integer keys (numpy SeedSequence hashing)."""
    words = np.random.SeedSequence([run_seed, *keys]).generate_state(2, np.uint32)
    return (int(words[0]) << 31) ^ int(words[1])


__all__ = ["AGENT", "DEAL", "derive_seed"]
