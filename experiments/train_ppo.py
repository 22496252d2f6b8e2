"""The MaskablePPO self-play training command: ``python -m experiments.train_ppo``. The recipe and
its options live in :mod:`experiments.training.ppo`."""

import sys

from experiments.training.ppo.cli import build_parser, main

__all__ = ["build_parser", "main"]

if __name__ == "__main__":
    sys.exit(main())
