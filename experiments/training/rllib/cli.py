"""The command line of RLlib self-play: ``python -m experiments.train_rllib``."""

from __future__ import annotations

import argparse
import os
import sys
import time
from collections.abc import Sequence
from dataclasses import fields
from pathlib import Path

from experiments.common.cli import (
    HelpFormatter,
    add_backend_arguments,
    add_config_arguments,
    check_backend_arguments,
    invocation_note,
    program_name,
)
from experiments.common.errors import RunFolderError
from experiments.common.parallel import LOCAL, connect_ray
from experiments.training.rllib.config import MODULE, RLlibConfig
from experiments.training.rllib.run_folder import check_run_folder
from experiments.training.rllib.training import ForfeitError, train
from experiments.training.runs import default_out


def build_parser() -> argparse.ArgumentParser:
    """The command line: :class:`RLlibConfig`'s options, ``--resume``, ``--no-progress`` and where Ray runs."""
    parser = argparse.ArgumentParser(
        prog=program_name(MODULE),
        description="Self-play PPO for Biblios with RLlib on Ray: one masked policy for every seat.",
        epilog=invocation_note(MODULE),
        formatter_class=HelpFormatter,
    )
    run = parser.add_argument_group("run")
    add_config_arguments(run, RLlibConfig, ["players", "iterations", "seed"])
    folder = run.add_mutually_exclusive_group()
    add_config_arguments(folder, RLlibConfig, ["out"])
    folder.add_argument("--resume", type=Path, metavar="DIR", help="continue the run in DIR from its last checkpoint")
    run.add_argument(
        "--no-progress", dest="progress", action="store_false", help="hide the progress bar (default: shown)"
    )
    ray = parser.add_argument_group("Ray")
    add_backend_arguments(ray)
    add_config_arguments(ray, RLlibConfig, ["num_env_runners"])
    ppo = parser.add_argument_group("PPO")
    add_config_arguments(ppo, RLlibConfig, ["train_batch", "minibatch_size", "epochs", "learning_rate", "hidden"])
    evaluation = parser.add_argument_group("evaluation")
    add_config_arguments(evaluation, RLlibConfig, ["eval_deals", "eval_every"])
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    check_backend_arguments(args, parser)
    address = args.ray_address or os.environ.get("RAY_ADDRESS")
    try:
        from experiments.training.rllib import support as rllib_support  # noqa: F401  # names the extra when RLlib or torch is missing
    except ModuleNotFoundError as error:
        parser.error(str(error))
    resume = args.resume is not None
    settings = {setting.name: getattr(args, setting.name) for setting in fields(RLlibConfig)}
    settings.update(hidden=tuple(args.hidden), out=args.resume if resume else (args.out or default_out("rllib")))
    config = RLlibConfig(**settings)
    try:
        check_run_folder(config, resume)
    except RunFolderError as error:
        parser.error(str(error))
    started = connect_ray(None if args.backend == LOCAL else address, config.num_env_runners + 1)
    try:
        start = time.perf_counter()
        checkpoint = train(config, resume=resume, progress=args.progress)
        print(f"trained in {time.perf_counter() - start:.1f} s; last checkpoint: {checkpoint}")
    except ForfeitError as error:
        print(f"{parser.prog}: error: {error}", file=sys.stderr)
        return 1
    finally:
        if started:
            import ray

            ray.shutdown()
    return 0


__all__ = ["build_parser", "main"]
