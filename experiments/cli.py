"""What the experiments' command lines share: the program name in their help, and the help
formatter that appends defaults only where they read right.

The rule for the program name (shown in ``usage:`` and in the epilog of every command line):
the usage line names the command as it was run. A module with a console script (installed
with the package, declared in ``pyproject.toml``) is shown as that script when run through it
(``biblios-tournament``), and as ``python -m experiments.tournament`` otherwise; a module
without one is always ``python -m experiments.<module>``.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Final

from biblios_env.engine.game import check_seed

#: The console scripts of ``pyproject.toml`` ([project.scripts]), by the module whose ``main`` they run.
CONSOLE_SCRIPTS: Final = {
    "experiments.play": "biblios-play",
    "experiments.tournament": "biblios-tournament",
    "experiments.train_network": "biblios-train",
}


def program_name(module: str) -> str:
    """The command as it was run: the console script of ``module`` when ``sys.argv[0]`` is that
    script (``biblios-play``, or ``biblios-play.exe`` on Windows), else ``python -m module``."""
    script = CONSOLE_SCRIPTS.get(module)
    if script is not None and Path(sys.argv[0]).stem == script:
        return script
    return f"python -m {module}"


def invocation_note(module: str) -> str:
    """The epilog line that documents the rule: both ways to run ``module``."""
    script = CONSOLE_SCRIPTS.get(module)
    if script is None:
        return f"Run as python -m {module}."
    return f"Run as {script} (installed with the package) or python -m {module}; usage shows the one you ran."


class HelpFormatter(argparse.ArgumentDefaultsHelpFormatter):
    """Appends ``(default: X)`` to an option's help only where that is true and useful: not when the
    help already names its default, and not for ``None`` (no value) or on/off flags, where the
    default of the stored value is not the default of the flag (``--no-progress (default: True)``).
    A list default is shown as it would be typed (``(default: value hoarder random)``), not as
    Python's ``['value', 'hoarder', 'random']``."""

    def _get_help_string(self, action: argparse.Action) -> str | None:
        text = action.help or ""
        if "default" in text or action.default is None or isinstance(action.default, bool):
            return text
        if isinstance(action.default, list | tuple) and action.option_strings:
            typed = " ".join(str(value) for value in action.default).replace("%", "%%")  # help is %-formatted
            return f"{text} (default: {typed})"
        return super()._get_help_string(action)


def add_backend_arguments(parser: argparse.ArgumentParser | argparse._ArgumentGroup) -> None:
    """``--backend {local,ray}`` and ``--ray-address``: where a command that runs games in
    parallel runs them (see :mod:`experiments.parallel`)."""
    from experiments.parallel import BACKENDS, LOCAL

    parser.add_argument(
        "--backend",
        choices=BACKENDS,
        default=LOCAL,
        help="where the games run: local processes (the default), or Ray (a cluster at --ray-address or "
        "RAY_ADDRESS, else a local Ray with --workers CPUs); results do not depend on it",
    )
    parser.add_argument(
        "--ray-address",
        metavar="ADDRESS",
        help="the Ray cluster to join with --backend ray (e.g. 10.0.0.5:6379 or auto; default: RAY_ADDRESS)",
    )


def check_backend_arguments(args: argparse.Namespace, parser: argparse.ArgumentParser) -> None:
    """A parser error for ``--ray-address`` without ``--backend ray``."""
    if args.ray_address is not None and args.backend != "ray":
        parser.error(f"--ray-address {args.ray_address} needs --backend ray")


def at_least(minimum: int) -> Callable[[str], int]:
    """An argparse type: an integer of at least ``minimum``; the error names the bad value."""
    expected = "a positive integer" if minimum == 1 else f"an integer >= {minimum}"

    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected {expected}, got {text!r}") from None
        if value < minimum:
            raise argparse.ArgumentTypeError(f"expected {expected}, got {value}")
        return value

    return parse


def seed_value(text: str) -> int:
    """An argparse type: a game or run seed (a non-negative integer the engine accepts)."""
    try:
        return check_seed(int(text))
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a non-negative integer seed, got {text!r}") from None
