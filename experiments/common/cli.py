"""What the experiments' command lines share: the program name in their help, and the help
formatter that appends defaults only where they read right.

The rule for the program name (shown in ``usage:`` and in the epilog of every command line):
the usage line names the command as it was run. A module with a console script (installed
with the package, declared in ``pyproject.toml``) is shown as that script when run through it
(``biblios-tournament``), and as ``python -m experiments.tournament`` otherwise; a module
without one is always ``python -m experiments.<module>``.

The rule for options: a command whose settings are a config dataclass declares each option once,
in the config, and :func:`add_config_arguments` derives the parser from it.
"""

from __future__ import annotations

import argparse
import dataclasses
import math
import sys
import types
import typing
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Any, Final

from biblios_env.engine.config import PENALTIES, GameConfig, check_seed
from biblios_env.engine.flow import PRESETS
from experiments.common.parallel import BACKENDS, LOCAL

#: The console scripts of ``pyproject.toml`` ([project.scripts]), by the module whose ``main`` they run.
CONSOLE_SCRIPTS: Final = {
    "experiments.play": "biblios-play",
    "experiments.replay": "biblios-replay",
    "experiments.serve": "biblios-serve",
    "experiments.tournament": "biblios-tournament",
    "experiments.train_network": "biblios-train",
    "experiments.train_selfplay": "biblios-train-selfplay",
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
    Python's ``['value', 'hoarder', 'random']``: one word per value for an option that takes
    several words, the values joined by commas for one that takes them in one (``--layers 128,128``)."""

    def _get_help_string(self, action: argparse.Action) -> str | None:
        text = action.help or ""
        if "default" in text or action.default is None or isinstance(action.default, bool):
            return text
        if isinstance(action.default, list | tuple) and action.option_strings:
            separator = "," if action.nargs is None else " "
            typed = separator.join(str(value) for value in action.default).replace("%", "%%")  # help is %-formatted
            return f"{text} (default: {typed})"
        return super()._get_help_string(action)


#: The ``--backend`` option of a command that runs games in parallel (see :mod:`experiments.common.parallel`),
#: as the metadata of a config field (:func:`add_config_arguments`).
BACKEND_OPTION: Final[Mapping[str, Any]] = {
    "help": "where the games run: local processes (the default), or Ray (a cluster at --ray-address or "
    "RAY_ADDRESS, else a local Ray with --workers CPUs); results do not depend on it",
    "choices": BACKENDS,
}
#: The ``--ray-address`` option that goes with :data:`BACKEND_OPTION`.
RAY_ADDRESS_OPTION: Final[Mapping[str, Any]] = {
    "help": "the Ray cluster to join with --backend ray (e.g. 10.0.0.5:6379 or auto; default: RAY_ADDRESS)",
    "metavar": "ADDRESS",
}


def add_backend_arguments(parser: argparse.ArgumentParser | argparse._ArgumentGroup) -> None:
    """``--backend {local,ray}`` and ``--ray-address`` for a command without a config field for
    them: where a command that runs games in parallel runs them (see :mod:`experiments.common.parallel`)."""
    parser.add_argument("--backend", default=LOCAL, **BACKEND_OPTION)
    parser.add_argument("--ray-address", **RAY_ADDRESS_OPTION)


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


def _number(text: str, accepts: Callable[[float], bool], expected: str) -> float:
    """``text`` as a float that ``accepts`` takes, else an argparse error naming the bad value."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected {expected}, got {text!r}") from None
    if not math.isfinite(value) or not accepts(value):
        raise argparse.ArgumentTypeError(f"expected {expected}, got {text!r}")
    return value


def fraction(text: str) -> float:
    """An argparse type: a probability, a number in [0, 1]; the error names the bad value."""
    return _number(text, lambda value: 0.0 <= value <= 1.0, "a number in [0, 1]")


def positive(text: str) -> float:
    """An argparse type: a positive number (a learning rate); the error names the bad value."""
    return _number(text, lambda value: value > 0, "a positive number")


def non_negative(text: str) -> float:
    """An argparse type: a number >= 0 (a loss weight, an entropy bonus); the error names the bad value."""
    return _number(text, lambda value: value >= 0, "a number >= 0")


def seed_value(text: str) -> int:
    """An argparse type: a game or run seed (a non-negative integer the engine accepts)."""
    try:
        return check_seed(int(text))
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a non-negative integer seed, got {text!r}") from None


def add_game_arguments(parser: argparse.ArgumentParser | argparse._ArgumentGroup) -> None:
    """``--penalty``, ``--strict-bids`` and ``--preset``: the game options a command line sets, with
    their choices and defaults from :class:`~biblios_env.engine.config.GameConfig` (the player count
    and first player are each command's own business)."""
    defaults = GameConfig()
    parser.add_argument(
        "--penalty",
        choices=PENALTIES,
        default=defaults.penalty,
        help=f"penalty rule (RULES §5; default {defaults.penalty})",
    )
    parser.add_argument(
        "--strict-bids", action="store_true", help="only allow bids the bidder can pay (default: any bid)"
    )
    parser.add_argument(
        "--preset",
        choices=PRESETS,
        default=defaults.preset,
        help=f"the cards dealt: the rules' game or a reduced one for exact solvers (default {defaults.preset})",
    )


#: What a config field's ``metadata`` may say about its option (see :func:`add_config_arguments`).
#: The names every trainer accepts for the settings they share (the self-play trainer's); a
#: trainer whose own name differs takes this one too (a field's ``also``).
COMMON_NAMES: Final = (
    "--epochs",
    "--minibatch",
    "--clip",
    "--entropy",
    "--value-weight",
    "--num-games",
    "--rollout-steps",
    "--learning-rate",
    "--gamma",
    "--gae-lambda",
)
OPTION_KEYS: Final = frozenset({"help", "type", "nargs", "choices", "metavar", "flag", "section", "also"})


def add_config_arguments(
    parser: argparse.ArgumentParser | argparse._ArgumentGroup, config: type, names: Iterable[str] | None = None
) -> None:
    """Add to ``parser`` the option of each field of the dataclass ``config`` (of the fields
    ``names``, in that order; default: every field, in the config's order), so that a setting,
    its default, its type and its help are declared once, in the config.

    Field ``name`` becomes ``--name`` (underscores as dashes) with the field's default; a field
    whose default is computed when a config is made (a ``default_factory``, e.g. a dated run
    folder) has none on the command line: the option is None unless given. Its ``metadata``
    holds ``help`` (required) and may hold:

    * ``type``: the function that parses a word; by default the annotation's (``int``,
      ``float``, ``Path``; ``X | None`` is an ``X`` that may be left out);
    * ``nargs``: a tuple field takes one or more words of its element type (``"+"``) unless
      ``nargs`` says otherwise (``None``: one word that ``type`` parses whole, ``128,128``);
    * ``choices`` and ``metavar``, as argparse has them;
    * ``flag``: a bool field is ``--name``/``--no-name``; with ``flag="--no-name"`` it is that
      one flag, which turns the setting off;
    * ``section``: the title of a group of the help that starts at this field and goes on to the
      next field with a ``section`` (``parser`` must then be the parser itself);
    * ``also``: the setting's name in the other trainers (``"--minibatch"`` for MaskablePPO's
      ``--batch-size``), accepted as well, so that one set of names works across the commands
      (:data:`COMMON_NAMES`).
    """
    fields = {field.name: field for field in dataclasses.fields(config)}
    hints = typing.get_type_hints(config)
    target = parser
    for name in fields if names is None else names:
        field = fields[name]
        option = dict(field.metadata)
        if "help" not in option or not option.keys() <= OPTION_KEYS:
            raise TypeError(f"{config.__name__}.{name}: option metadata needs 'help' and no keys but {OPTION_KEYS}")
        if "section" in option:
            if not isinstance(parser, argparse.ArgumentParser):
                raise TypeError(f"{config.__name__}.{name}: a section needs the parser, not a group")
            target = parser.add_argument_group(option.pop("section"))
        also = option.pop("also", None)
        flag, arguments = _config_option(field, hints[name], option)
        target.add_argument(flag, *([also] if also else []), dest=name, **arguments)


def _config_option(field: dataclasses.Field[Any], hint: Any, option: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    """The flag and the ``add_argument`` keywords of a config field (see :func:`add_config_arguments`)."""
    flag = option.pop("flag", "--" + field.name.replace("_", "-"))
    default = None if field.default is dataclasses.MISSING else field.default
    if hint is bool:
        if flag.startswith("--no-"):
            if default is not True:
                raise TypeError(f"{flag} turns {field.name} off, so its default must be True")
            return flag, {"action": "store_false", **option}
        return flag, {"action": argparse.BooleanOptionalAction, "default": default, **option}
    if typing.get_origin(hint) in (types.UnionType, typing.Union):  # X | None
        (hint,) = (member for member in typing.get_args(hint) if member is not type(None))
    nargs = None
    if typing.get_origin(hint) is tuple:
        hint = typing.get_args(hint)[0]
        nargs = option.pop("nargs", "+")
        if nargs is not None and default is not None:
            default = list(default)  # as argparse gives the words typed
    if "type" not in option and hint is not str:
        option["type"] = hint
    arguments = {"nargs": nargs, "default": default, **option}
    return flag, {key: value for key, value in arguments.items() if value is not None}
