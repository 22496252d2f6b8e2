"""The RLlib self-play training command: ``python -m experiments.train_rllib`` (``pip install -e ".[rllib]"``).
The recipe and its options live in :mod:`experiments.training.rllib`."""

import sys

from experiments.training.rllib import build_parser, main

__all__ = ["build_parser", "main"]

if __name__ == "__main__":
    sys.exit(main())
