"""The command line of RLlib self-play: ``python -m experiments.train_rllib``."""

from __future__ import annotations

import argparse
import os
import sys
import time
from collections.abc import Sequence
from dataclasses import fields
from pathlib import Path
from typing import Final

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
from experiments.training.rllib.run_folder import check_run_folder, last_checkpoint
from experiments.training.rllib.training import ForfeitError, train
from experiments.training.runs import check_run_folder as check_folder_options
from experiments.training.runs import default_out, read_run, resume_flags
from experiments.training.stopping import stopped_at_once

#: What the quiet default hides, and the one line of Ray's it cannot (its C++ core writes it).
QUIET_NOTE: Final = (
    "Ray's and RLlib's start-up notes are hidden (--verbose shows them); a 'core_worker.cc' line about "
    "max_restarts, if one appears, is one of them and harmless"
)


#: The options that are not settings of the run (how it shows and where Ray runs): the printed
#: resume command repeats them.
NOT_RECORDED: Final = ("progress", "verbose", "backend", "ray_address")


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
    run.add_argument(
        "--verbose", action="store_true",
        help="show Ray's and RLlib's log (start-up notes, deprecations, the workers' output); default: errors only",
    )  # fmt: skip
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
    check_folder_options(args, parser)
    flags = resume_flags(args, parser, NOT_RECORDED)
    address = args.ray_address or os.environ.get("RAY_ADDRESS")
    try:
        from experiments.training.rllib import support as rllib_support  # noqa: F401  # names the extra when RLlib or torch is missing
    except ModuleNotFoundError as error:
        parser.error(str(error))
    resume = args.resume is not None
    settings = {setting.name: getattr(args, setting.name) for setting in fields(RLlibConfig)}
    try:
        if resume:  # the run's own settings, and those given anew (refused below unless they may change)
            given = {key: value for key, value in settings.items() if value != parser.get_default(key)}
            settings = {**read_run(args.resume, MODULE)["settings"], **given}
        out = args.resume if resume else (args.out or default_out("rllib"))
        config = RLlibConfig(**{**settings, "hidden": tuple(settings["hidden"]), "out": out})
        check_run_folder(config, resume)
    except RunFolderError as error:
        parser.error(str(error))
    print(
        f"plan: RLlib PPO to iteration {config.iterations} ({config.train_batch:,} env steps each), "
        f"{config.players} players, {config.num_env_runners} env runner(s); a checkpoint and an evaluation "
        f"every {config.eval_every} iterations ({config.eval_deals} deals against each of random and value)",
        flush=True,
    )
    if not args.verbose:
        print(QUIET_NOTE, flush=True)
    started = connect_ray(None if args.backend == LOCAL else address, config.num_env_runners + 1, not args.verbose)
    try:
        start = time.perf_counter()
        checkpoint = train(config, resume=resume, progress=args.progress, quiet=not args.verbose, flags=flags)
        print(f"trained in {time.perf_counter() - start:.1f} s; last checkpoint: {checkpoint}")
    except ForfeitError as error:
        print(f"{parser.prog}: error: {error}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:  # before the training loop (Ray starting, the algorithm being built), or a second Ctrl-C
        return stopped_at_once(MODULE, config.out, last_checkpoint(config.out) is not None, flags)
    finally:
        if started:
            import ray

            ray.shutdown()
    return 0


__all__ = ["build_parser", "main"]
