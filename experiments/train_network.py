"""The expert-iteration training command: ``python -m experiments.train_network`` (installed as
``biblios-train``). The recipe and its options live in :mod:`experiments.training.expert_iteration`."""

from experiments.training.expert_iteration import build_parser, main

__all__ = ["build_parser", "main"]

if __name__ == "__main__":
    raise SystemExit(main())
