"""The command line of MaskablePPO training, ``python -m experiments.train_ppo``: :class:`PPOConfig`'s options."""

from __future__ import annotations

import argparse
import dataclasses
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from experiments.common.cli import (
    HelpFormatter,
    add_config_arguments,
    check_backend_arguments,
    invocation_note,
    program_name,
)
from experiments.common.errors import CheckpointError, RunFolderError
from experiments.common.match import parse_agent_spec
from experiments.training.opponents import FACTORY_POOL_NAMES, Mixture
from experiments.training.ppo.config import PPOConfig
from experiments.training.ppo.training import MODULE, train
from experiments.training.runs import (
    RUN_FILE,
    check_run_folder,
    read_run,
    refuse_new_settings,
    resumable_length,
    resume_flags,
    settings_from_json,
)
from experiments.training.stopping import stopped_at_once

#: The settings a resumed run takes anew: how and where it runs, not what it learns (the printed
#: resume command repeats them).
HOW_IT_RUNS = ("progress", "workers", "backend", "ray_address")


def build_parser() -> argparse.ArgumentParser:
    """The command line; its options, defaults and groups are :class:`PPOConfig`'s."""
    parser = argparse.ArgumentParser(
        prog=program_name(MODULE),
        description="MaskablePPO self-play against a growing pool of its own snapshots mixed with the heuristics.",
        epilog=invocation_note(MODULE),
        formatter_class=HelpFormatter,
    )
    parser.add_argument(
        "--resume", type=Path, metavar="RUN_DIR",
        help="continue the run in RUN_DIR from its checkpoint, with its own settings (--total-steps may be raised)",
    )  # fmt: skip
    add_config_arguments(parser, PPOConfig)
    resumable_length(parser, "total_steps")
    return parser


def config_from_arguments(args: argparse.Namespace) -> PPOConfig:
    """The :class:`PPOConfig` of parsed command-line arguments (no ``--out``: a fresh run folder)."""
    values: dict[str, Any] = {
        key: tuple(value) if isinstance(value, list) else value for key, value in vars(args).items() if key != "resume"
    }
    for unset in ("out", "total_steps"):  # a fresh run folder; the settings' default length
        if values[unset] is None:
            del values[unset]
    return PPOConfig(**values)


def resumed_config(args: argparse.Namespace, parser: argparse.ArgumentParser) -> PPOConfig:
    """The settings of the run in ``--resume RUN_DIR`` (its ``run.json``), with a larger
    ``--total-steps`` and the options of :data:`HOW_IT_RUNS` if given; any other option is
    refused (the run keeps its own)."""
    folder: Path = args.resume
    refuse_new_settings(args, parser, "total_steps", *HOW_IT_RUNS, "out")
    try:
        recorded = settings_from_json(PPOConfig, read_run(folder, MODULE)["settings"], folder / RUN_FILE)
    except RunFolderError as error:
        parser.error(str(error))
    total = recorded.total_steps if args.total_steps is None else args.total_steps
    how = {name: getattr(args, name) for name in HOW_IT_RUNS}
    return dataclasses.replace(recorded, out=folder, total_steps=total, **how)


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    argv = list(sys.argv[1:] if argv is None else argv)
    args = parser.parse_args(argv)
    check_backend_arguments(args, parser)
    check_run_folder(args, parser)
    # A resumed run's --total-steps is not in its run.json: the resume command repeats it too.
    flags = resume_flags(args, parser, HOW_IT_RUNS if args.resume is None else ("total_steps", *HOW_IT_RUNS))
    if args.resume is not None:
        config = resumed_config(args, parser)
    else:
        try:
            Mixture.parse(args.opponents, special=FACTORY_POOL_NAMES)
            for spec in args.eval_opponents:
                parse_agent_spec(spec)
        except ValueError as error:
            parser.error(str(error))
        config = config_from_arguments(args)
    try:
        train(config, argv, resume=args.resume is not None, flags=flags)
    except (CheckpointError, RunFolderError) as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:  # a second Ctrl-C while saving
        return stopped_at_once(MODULE, config.out, (config.out / RUN_FILE).is_file(), flags)
    return 0


__all__ = ["build_parser", "config_from_arguments", "main"]
