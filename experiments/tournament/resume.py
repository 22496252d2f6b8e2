"""What ``--resume DIR`` continues: the run's settings read back from its folder, the options given
with ``--resume`` checked against them, and the command line that resumes a stopped run.

An option of the command is either a *setting* of the run (what it plays and what it writes: the
agents, the schedule, the seed, the game options, the games selected, the logs and replay pages)
or a *free* option (how it is played: the workers and where they run, what is shown, whether a
broken game stops it). A resumed run keeps its settings, so that its results are those of an
uninterrupted run: they are recorded in ``run.json`` and ``--resume DIR`` alone continues it; a
setting given with ``--resume`` must be the recorded one. The free options may change, and the
resume line a stopped run prints repeats the ones given, so that the rest is played the same way.
"""

from __future__ import annotations

import argparse
import math
import shlex
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Final

from experiments.common.errors import RunFolderError
from experiments.common.match import parse_agent_spec
from experiments.tournament.run_folder import RUN_FILE, read_run_record
from experiments.tournament.schedule import seat_orders

MODULE: Final = "experiments.tournament"
#: The options that are settings of the run (recorded in ``run.json``).
SETTING_OPTIONS: Final = (
    "agents", "players", "mode", "games", "deals", "seatings", "seed", "penalty", "strict_bids",
    "preset", "only_games", "save_logs", "replay_html",
)  # fmt: skip
#: The options that are not settings of the run: free with ``--resume``, repeated in the resume line.
FREE_OPTIONS: Final = ("workers", "backend", "ray_address", "keep_going", "no_plot", "no_progress")


def typed_options(parser: argparse.ArgumentParser, argv: Sequence[str] | None, args: argparse.Namespace) -> set[str]:
    """The options typed on the command line, told apart from their defaults (``--seed 0`` is
    typed although 0 is the default): the command line parsed again over a namespace whose values
    are all a marker that only a typed option replaces."""
    unset = object()
    typed = parser.parse_args(argv, argparse.Namespace(**dict.fromkeys(vars(args), unset)))
    return {option for option, value in vars(typed).items() if value is not unset}


def recorded_settings(folder: Path) -> dict[str, Any]:
    """The settings of the run in ``folder`` as the options' values (``args.deals`` ...).

    A folder written before the game logs and replay pages were recorded lacks those two: the
    options given with ``--resume`` (or their defaults) apply to them."""
    recorded = read_run_record(folder)
    if recorded is None:
        raise RunFolderError(f"--resume {folder}: no tournament run there ({folder / RUN_FILE} is missing)")
    try:
        config = recorded["config"]
        settings = {
            "agents": list(config["agents"]),
            "players": config["num_players"],
            "mode": config["mode"],
            "deals": config["deals"],
            "seatings": config["seatings"],
            "seed": config["seed"],
            "penalty": config["penalty"],
            "strict_bids": config["strict_bids"],
            "preset": config.get("preset", "standard"),  # recorded since presets could be chosen
            "only_games": recorded["only_games"],
        }
    except KeyError as error:
        raise RunFolderError(f"--resume {folder}: {folder / RUN_FILE} lacks the setting {error}") from None
    if "save_logs" in recorded:
        settings["save_logs"] = None if recorded["save_logs"] is None else Path(recorded["save_logs"])
    if "replay_html" in recorded:
        settings["replay_html"] = recorded["replay_html"] or None
    return settings


def _difference(option: str, args: argparse.Namespace, settings: dict[str, Any]) -> str | None:
    """How the setting ``option`` given with ``--resume`` differs from the recorded one (None: it does not)."""
    value = getattr(args, option)
    flag = "--" + option.replace("_", "-")
    if option == "games":  # recorded as the deals these games make
        deals = math.ceil(value / len(seat_orders(settings["players"], settings["seatings"])))
        if deals == settings["deals"]:
            return None
        return f"{flag} {value}, that is {deals} deals (recorded: {settings['deals']} deals)"
    if option == "agents":
        value = [parse_agent_spec(text).label for text in value]
    elif option == "only_games":
        value = sorted(set(value))
    recorded = settings[option]
    return None if value == recorded else f"{flag} {_shown(value)} (recorded: {_shown(recorded)})"


def _shown(value: Any) -> str:
    """A value as it is typed on the command line (``none`` for an option not given)."""
    if value is None:
        return "none"
    if isinstance(value, bool):
        return "on" if value else "off"
    if isinstance(value, list):
        return " ".join(map(str, value))
    return str(value)


def resumed_arguments(args: argparse.Namespace, typed: set[str]) -> argparse.Namespace:
    """``args`` with the settings of the run in ``args.resume``; RunFolderError naming every
    setting given with another value than the recorded one (option, recorded value, given value)."""
    folder: Path = args.resume
    settings = recorded_settings(folder)
    checked = [option for option in SETTING_OPTIONS if option in typed and (option in settings or option == "games")]
    differences = [text for option in checked if (text := _difference(option, args, settings)) is not None]
    if differences:
        raise RunFolderError(
            f"--resume {folder} continues the run recorded there with its own settings, and these differ from "
            f"them: {'; '.join(differences)}. Drop them, or give the recorded values."
        )
    return argparse.Namespace(**{**vars(args), **settings})


def resume_command(out: Path, args: argparse.Namespace, typed: set[str]) -> str:
    """The command line that resumes the run in ``out``: ``--resume`` and every free option given."""
    words = ["python", "-m", MODULE, "--resume", str(out)]
    for option in FREE_OPTIONS:
        if option in typed:
            value = getattr(args, option)
            flag = "--" + option.replace("_", "-")
            words += [flag] if isinstance(value, bool) else [flag, str(value)]
    return shlex.join(words)
