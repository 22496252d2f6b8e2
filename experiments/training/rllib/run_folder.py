"""The folder of an RLlib run: ``run.json`` (the settings, :mod:`experiments.training.runs`), the
checkpoints, and the checks that a new run does not overwrite one and a resumed run continues its
own with the settings it may change."""

from __future__ import annotations

from pathlib import Path

from experiments.common.errors import RunFolderError
from experiments.training.rllib.config import (
    CHECKPOINTS,
    MODULE,
    PROGRESS_FILE,
    RESUMABLE_CHANGES,
    STRENGTH_FILE,
    RLlibConfig,
)
from experiments.training.runs import check_new_run, keep_rows, read_rows, read_run, record_run, start_run


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


def check_run_folder(config: RLlibConfig, resume: bool) -> int:
    """What :func:`train` will do in ``config.out``, checked before anything starts; returns the
    checkpointed iteration to continue from (0: a new run).

    A new run needs a folder without a checkpoint (a run stopped before its first one starts
    again). A resumed run needs its own ``run.json`` and layout, the same settings but those of
    :data:`RESUMABLE_CHANGES` (RunFolderError naming each that differs) and a checkpoint.
    """
    out = config.out
    found = last_checkpoint(out)
    if not resume:
        check_new_run(out, MODULE, held=found is not None)
        return 0
    before, now = read_run(out, MODULE)["settings"], config.settings()
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
    """Start the run (``run.json``) or check the one resumed (:func:`check_run_folder`) and record
    its settings anew (how far it goes and where it runs may have changed), then drop the rows
    written after the checkpoint the run continues from; returns that checkpoint's iteration."""
    out = config.out
    if resume:
        done = check_run_folder(config, resume)
        record_run(out, MODULE, config.settings())
    else:
        done = 0
        start_run(out, MODULE, config.settings(), held=last_checkpoint(out) is not None)
    for name in (PROGRESS_FILE, STRENGTH_FILE):  # the resumed run writes the later rows again
        keep_rows(out / name, lambda row: int(row["iteration"]) <= done)
    return done


def last_seconds(out: Path) -> float:
    """The training seconds of the rows kept (a resumed run counts on from there)."""
    rows = read_rows(out / PROGRESS_FILE)
    return float(rows[-1]["seconds"]) if rows else 0.0


__all__ = ["RunFolderError", "check_run_folder", "checkpoint_path", "last_checkpoint", "last_seconds", "prepare_run"]
