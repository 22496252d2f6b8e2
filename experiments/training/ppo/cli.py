"""The command line of MaskablePPO training, ``python -m experiments.train_ppo``: :class:`PPOConfig`'s options."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from typing import Any

from experiments.common.cli import (
    HelpFormatter,
    add_config_arguments,
    check_backend_arguments,
    invocation_note,
    program_name,
)
from experiments.common.match import parse_agent_spec
from experiments.training.ppo.config import PPOConfig
from experiments.training.ppo.opponents import parse_mixture
from experiments.training.ppo.training import MODULE, train


def build_parser() -> argparse.ArgumentParser:
    """The command line; its options, defaults and groups are :class:`PPOConfig`'s."""
    parser = argparse.ArgumentParser(
        prog=program_name(MODULE),
        description="MaskablePPO self-play against a growing pool of its own snapshots mixed with the heuristics.",
        epilog=invocation_note(MODULE),
        formatter_class=HelpFormatter,
    )
    add_config_arguments(parser, PPOConfig)
    return parser


def config_from_arguments(args: argparse.Namespace) -> PPOConfig:
    """The :class:`PPOConfig` of parsed command-line arguments (no ``--out``: a fresh run folder)."""
    values: dict[str, Any] = {
        key: tuple(value) if isinstance(value, list) else value for key, value in vars(args).items()
    }
    if values["out"] is None:
        del values["out"]
    return PPOConfig(**values)


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    argv = list(sys.argv[1:] if argv is None else argv)
    args = parser.parse_args(argv)
    check_backend_arguments(args, parser)
    try:
        parse_mixture(args.opponents)
        for spec in args.eval_opponents:
            parse_agent_spec(spec)
    except ValueError as error:
        parser.error(str(error))
    train(config_from_arguments(args), argv)
    return 0


__all__ = ["build_parser", "config_from_arguments", "main"]
