"""The self-play trainer on the batched games: ``python -m experiments.train_selfplay``. The
algorithm and its options live in :mod:`experiments.training.selfplay`."""

import sys

from experiments.training.selfplay import build_parser, main

__all__ = ["build_parser", "main"]

if __name__ == "__main__":
    sys.exit(main())
