"""Batched games: many games of Biblios stepped in one call, numpy arrays in and out.

:class:`VectorGame` is the array interface (``docs/vector.md``); the adapters for the RL
libraries import those libraries and are imported from their own modules:
:mod:`biblios_env.vector.gymnasium_env` (a Gymnasium ``VectorEnv`` for one learning seat per
game) and :mod:`biblios_env.vector.sb3` (a Stable-Baselines3 ``VecEnv``).
"""

from biblios_env.vector.games import Batch, VectorGame, deal_seed

__all__ = ["Batch", "VectorGame", "deal_seed"]
