"""The folder of an RLlib run: ``run.json`` (the settings), the checkpoints, and the checks that
a new run does not overwrite one and a resumed run continues its own."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from biblios_env.layout import LAYOUT_FINGERPRINT
from experiments.common.errors import RunFolderError
from experiments.training.rllib.config import (
    CHECKPOINTS,
    MODULE,
    PROGRESS_FILE,
    RESUMABLE_CHANGES,
    RUN_FILE,
    RUN_FORMAT,
    STRENGTH_FILE,
    RLlibConfig,
)
from experiments.training.runs import keep_rows, read_rows


def checkpoint_path(out: Path, iteration: int) -> Path:
    return out / CHECKPOINTS / f"iteration_{iteration:06d}"


def last_checkpoint(out: Path) -> tuple[int, Path] | None:
    """The finished checkpoint with the highest iteration, or None."""
    found = sorted(
        (int(path.name.removeprefix("iteration_")), path)
        for path in (out / CHECKPOINTS).glob("iteration_*")
        if path.is_dir() and path.name.removeprefix("iteration_").isdigit()
    )
    return found[-1] if found else None


def _recorded_run(out: Path) -> dict[str, Any] | None:
    """The ``run.json`` of the run in ``out``, None if there is none; RunFolderError if the
    file is another program's (a tournament writes a ``run.json`` too)."""
    run_file = out / RUN_FILE
    if not run_file.is_file():
        return None
    recorded: dict[str, Any] = json.loads(run_file.read_text())
    if recorded.get("format") != RUN_FORMAT:
        raise RunFolderError(f"{run_file} is not a run of {MODULE}: choose another folder")
    return recorded


def recorded_settings(out: Path) -> dict[str, Any]:
    """The settings the run in ``out`` was started with (none if there is no run: the check of
    :func:`check_run_folder` then names what is missing)."""
    recorded = _recorded_run(out)
    return dict(recorded["settings"]) if recorded else {}


def check_run_folder(config: RLlibConfig, resume: bool) -> int:
    """What :func:`train` will do in ``config.out``, checked before anything starts; returns the
    checkpointed iteration to continue from (0: a new run).

    A new run needs a folder without a checkpoint (a run stopped before its first one starts
    again). A resumed run needs the same settings and layout (RunFolderError naming each that
    differs) and a checkpoint.
    """
    out = config.out
    recorded = _recorded_run(out)
    found = last_checkpoint(out)
    if not resume:
        if found is not None:
            raise RunFolderError(
                f"{out} already holds a run: pass --resume {out} to continue it, or choose another --out"
            )
        return 0
    if recorded is None:
        raise RunFolderError(f"--resume {out}: no {RUN_FILE} there, so no run of {MODULE} to continue")
    if recorded.get("layout") != LAYOUT_FINGERPRINT:
        raise RunFolderError(
            f"--resume {out}: the run was trained on another observation/action layout "
            f"({recorded.get('layout')}; this code has {LAYOUT_FINGERPRINT})"
        )
    before, now = recorded["settings"], config.settings()
    different = sorted(
        key for key in before.keys() | now.keys() if key not in RESUMABLE_CHANGES and before.get(key) != now.get(key)
    )
    if different:
        changes = ", ".join(f"{key} {before.get(key)!r} in the run, {now.get(key)!r} now" for key in different)
        raise RunFolderError(f"--resume {out}: the run was started with other settings: {changes}")
    if found is None:
        raise RunFolderError(
            f"--resume {out}: the run stopped before its first checkpoint; start it again with --out {out}"
        )
    return found[0]


def prepare_run(config: RLlibConfig, resume: bool) -> int:
    """Check the run folder (:func:`check_run_folder`), then write ``run.json`` and drop the rows
    written after the checkpoint the run continues from; returns that checkpoint's iteration."""
    done = check_run_folder(config, resume)
    config.out.mkdir(parents=True, exist_ok=True)
    run = {"format": RUN_FORMAT, "layout": LAYOUT_FINGERPRINT, "settings": config.settings()}
    (config.out / RUN_FILE).write_text(json.dumps(run, indent=1) + "\n")
    for name in (PROGRESS_FILE, STRENGTH_FILE):  # the resumed run writes the later rows again
        keep_rows(config.out / name, lambda row: int(row["iteration"]) <= done)
    return done


def last_seconds(out: Path) -> float:
    """The training seconds of the rows kept (a resumed run counts on from there)."""
    rows = read_rows(out / PROGRESS_FILE)
    return float(rows[-1]["seconds"]) if rows else 0.0


__all__ = ["RunFolderError", "check_run_folder", "checkpoint_path", "last_checkpoint", "last_seconds", "prepare_run"]
