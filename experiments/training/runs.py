"""What every trainer's run folder shares: a default name, one record of the run (``run.json``:
the command, the observation/action layout and the settings, read back for ``--resume``), CSV
logs appended row by row (and trimmed back when a run resumes from an earlier checkpoint), and
files written whole."""

from __future__ import annotations

import argparse
import contextlib
import csv
import dataclasses
import json
import os
import typing
from collections.abc import Callable, Iterator, Sequence
from datetime import datetime
from pathlib import Path
from typing import Any, Final

from biblios_env.layout import LAYOUT_FINGERPRINT
from experiments.common.errors import RunFolderError

#: The record of a trainer's run, one name and one shape for every trainer (:func:`start_run`).
RUN_FILE: Final = "run.json"


def default_out(kind: str) -> Path:
    """A fresh run folder named after the command and the moment the run starts: ``runs/<kind>-<date>-<time>``."""
    return Path("runs") / datetime.now().strftime(f"{kind}-%Y%m%d-%H%M%S")


def settings_json(config: Any) -> dict[str, Any]:
    """A settings dataclass as JSON: paths as text, tuples as lists."""
    return {
        key: str(value) if isinstance(value, Path) else list(value) if isinstance(value, tuple) else value
        for key, value in dataclasses.asdict(config).items()
    }


def settings_from_json(config_class: type[Any], data: dict[str, Any], source: Path) -> Any:
    """The settings dataclass ``config_class`` recorded as ``data`` by :func:`settings_json` (in
    the file ``source``): lists back to tuples, text back to paths; an unknown or missing setting
    is a RunFolderError naming it."""
    hints = typing.get_type_hints(config_class)
    unknown = sorted(set(data) - set(hints))
    if unknown:
        raise RunFolderError(f"{source} has settings {config_class.__name__} does not know: {', '.join(unknown)}")
    values: dict[str, Any] = {}
    for key, value in data.items():
        hint = hints[key]
        if value is not None and (hint is Path or Path in typing.get_args(hint)):
            value = Path(value)
        elif isinstance(value, list):
            value = tuple(value)
        values[key] = value
    try:
        return config_class(**values)
    except TypeError as error:
        raise RunFolderError(f"{source}: not the settings of a {config_class.__name__} run ({error})") from None


def check_new_run(folder: Path, command: str, *, held: bool) -> None:
    """Refuse (RunFolderError) to start a run of ``command`` in ``folder`` if it holds a run
    already, so that nothing of it is overwritten: a ``run.json`` of another command or another
    program (a tournament writes one too), or ``held``, the trainer's own sign of a run there (its
    checkpoint or logs; its own ``run.json`` where it resumes a run without a checkpoint)."""
    recorded = _record(folder)
    other = None if recorded is None else recorded.get("command")
    if recorded is not None and not isinstance(other, str):
        raise RunFolderError(
            f"{folder} already holds a run of another program ({folder / RUN_FILE} is not a trainer's run record): "
            "choose another --out"
        )
    if other is not None and other != command:
        raise RunFolderError(
            f"{folder} already holds a run of {other}: continue it with python -m {other} --resume {folder}, "
            "or choose another --out"
        )
    if held:
        raise RunFolderError(
            f"{folder} already holds a run: continue it with --resume {folder}, or choose another --out"
        )


def start_run(folder: Path, command: str, settings: dict[str, Any], *, held: bool, **extra: Any) -> None:
    """Start a new run of ``command`` in ``folder``: refused as :func:`check_new_run` says, else the
    folder is made and ``run.json`` written (:func:`record_run`)."""
    check_new_run(folder, command, held=held)
    folder.mkdir(parents=True, exist_ok=True)
    record_run(folder, command, settings, **extra)


def record_run(folder: Path, command: str, settings: dict[str, Any], **extra: Any) -> None:
    """Write ``run.json``: the command that trains (``experiments.train_ppo``), the observation/action
    layout it trains on, its settings (JSON types) and what else the trainer records (``extra``,
    e.g. the command line); again by a resumed run whose settings may change (how long it trains)."""
    write_json(folder / RUN_FILE, {"command": command, "layout": LAYOUT_FINGERPRINT, "settings": settings, **extra})


def read_run(folder: Path, command: str) -> dict[str, Any]:
    """The ``run.json`` record of the run of ``command`` in ``folder``, for ``--resume``; a
    RunFolderError naming the problem when there is no run there, the record is another command's
    or another program's, or the run trained on another observation/action layout."""
    path = folder / RUN_FILE
    recorded = _record(folder)
    if recorded is None:
        raise RunFolderError(f"--resume {folder}: no run of {command} there ({path} is missing)")
    other = recorded.get("command")
    if not isinstance(other, str) or not isinstance(recorded.get("settings"), dict):
        raise RunFolderError(
            f"--resume {folder}: {path} is not a run of {command} (not a trainer's run record: a tournament's, "
            "or another program's)"
        )
    if other != command:
        raise RunFolderError(
            f"--resume {folder}: {path} is not a run of {command} but of {other}: "
            f"continue it with python -m {other} --resume {folder}"
        )
    if recorded.get("layout") != LAYOUT_FINGERPRINT:
        raise RunFolderError(
            f"--resume {folder}: the run was trained on another observation/action layout "
            f"({recorded.get('layout')}; this code has {LAYOUT_FINGERPRINT})"
        )
    return recorded


def _record(folder: Path) -> dict[str, Any] | None:
    """What ``folder``'s ``run.json`` holds (None without one; an empty record for a file that is
    not a JSON object, which no trainer wrote)."""
    path = folder / RUN_FILE
    if not path.is_file():
        return None
    try:
        recorded = json.loads(path.read_text())
    except (OSError, ValueError):
        return {}
    return recorded if isinstance(recorded, dict) else {}


def resumable_length(parser: argparse.ArgumentParser, dest: str) -> None:
    """Let option ``dest`` (how long a run trains: ``--decisions``, ``--total-steps``, ...) be given
    anew to a resumed run at any value, its default too: the parser's default becomes ``None``
    (given or not is then plain), the help still names the default of a new run, and a new run
    takes that default from its settings class."""
    for action in parser._actions:
        if action.dest == dest:
            action.help = f"{action.help} (default: {action.default:,}; resumed: the run's own unless given)"
            action.default = None
            return
    raise ValueError(f"the parser has no option {dest!r}")


def refuse_new_settings(namespace: argparse.Namespace, parser: argparse.ArgumentParser, *allowed: str) -> None:
    """A ``--resume`` continues a run with its own settings: exit with a usage error naming the
    first option set to another value than its default, unless it is one of ``allowed`` (the
    settings a resumed run may change, e.g. how long it trains) or ``--resume`` itself."""
    for key, value in vars(namespace).items():
        if key not in {"resume", *allowed} and value != parser.get_default(key):
            permitted = ", ".join("--" + name.replace("_", "-") for name in allowed) or "no option"
            parser.error(
                f"--resume continues the run with its own settings; only {permitted} may be given, "
                f"not --{key.replace('_', '-')}"
            )


def check_run_folder(namespace: argparse.Namespace, parser: argparse.ArgumentParser) -> None:
    """Exit with a usage error, before anything is written, when ``--out`` names a file (a run
    folder is a folder) or ``--resume RUN`` comes with an ``--out`` naming another folder (a
    resumed run goes on in its own folder, so that other folder would be silently ignored)."""
    out, resume = namespace.out, namespace.resume
    given_out = out is not None and out != parser.get_default("out")
    if resume is not None and given_out and Path(out).resolve() != Path(resume).resolve():
        parser.error(f"--resume {resume} goes on in its own folder: leave out --out {out} (or give the same folder)")
    for option, folder in (("--out", out), ("--resume", resume)):
        if folder is not None and Path(folder).exists() and not Path(folder).is_dir():
            parser.error(f"{option} {folder} is a file: expected a run folder (a new or an existing folder)")


def resume_flags(namespace: argparse.Namespace, parser: argparse.ArgumentParser, names: Sequence[str]) -> list[str]:
    """The options ``names`` (destinations) that the command line set to other values than their
    defaults, as the words that set them (``--workers 4``, ``--no-progress``): the flags that are
    not settings recorded in the run folder, which the printed resume command must repeat."""
    words: list[str] = []
    for action in parser._actions:
        value = getattr(namespace, action.dest, None)
        if action.dest not in names or not action.option_strings or value == action.default:
            continue
        if isinstance(action, argparse.BooleanOptionalAction):
            positive, negative = action.option_strings[:2]
            words.append(positive if value else negative)
        elif action.nargs == 0:  # an on/off flag (store_true, store_false)
            words.append(action.option_strings[0])
        else:
            values = value if isinstance(value, list | tuple) else [value]
            words.extend([action.option_strings[0], *(str(item) for item in values)])
    return words


def append_rows(path: Path, columns: Sequence[str], rows: Sequence[dict[str, Any]]) -> None:
    """Append ``rows`` to the CSV file ``path`` (with a header if it is new); keys outside
    ``columns`` are left out."""
    new = not path.exists()
    with path.open("a", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=list(columns), extrasaction="ignore")
        if new:
            writer.writeheader()
        writer.writerows(rows)


def read_rows(path: Path) -> list[dict[str, str]]:
    """The rows of the CSV file ``path`` (none if it does not exist)."""
    if not path.exists():
        return []
    with path.open(newline="") as handle:
        return list(csv.DictReader(handle))


def keep_rows(path: Path, keep: Callable[[dict[str, str]], bool]) -> None:
    """Rewrite ``path`` with the rows ``keep`` accepts: a run resumed from a checkpoint writes the
    later rows again."""
    if not path.exists():
        return
    with path.open(newline="") as handle:
        reader = csv.DictReader(handle)
        columns = reader.fieldnames or []
        rows = [row for row in reader if keep(row)]
    path.unlink()
    if columns:
        append_rows(path, columns, rows)


@contextlib.contextmanager
def written_whole(path: Path) -> Iterator[Path]:
    """A temporary name beside ``path`` to write the whole file under, moved onto ``path`` when the
    block ends without an error: a reader, or a run resumed after a stop while saving, never sees
    half a file (a failed write leaves the previous one). ``tmp-`` goes before the name, so savers
    that add their extension when it is missing (numpy's, SB3's) keep it."""
    temporary = path.with_name("tmp-" + path.name)
    yield temporary
    os.replace(temporary, path)


def write_bytes(path: Path, data: bytes) -> None:
    """Write ``data`` whole (:func:`written_whole`)."""
    with written_whole(path) as temporary:
        temporary.write_bytes(data)


def write_json(path: Path, data: Any) -> None:
    """Write ``data`` as JSON whole (:func:`write_bytes`)."""
    write_bytes(path, (json.dumps(data, indent=1) + "\n").encode())


__all__ = [
    "RUN_FILE",
    "append_rows",
    "check_new_run",
    "check_run_folder",
    "default_out",
    "keep_rows",
    "read_rows",
    "read_run",
    "record_run",
    "refuse_new_settings",
    "resume_flags",
    "settings_from_json",
    "settings_json",
    "start_run",
    "write_bytes",
    "write_json",
    "written_whole",
]  # fmt: skip
