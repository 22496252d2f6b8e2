"""The games of an unfinished phase kept on disk: a trainer stopped while it plays a phase's games
(bootstrap, teacher or DAgger games) saves the finished ones here, and the resumed run plays only
the others. A game's data are arrays with one row per decision; the file holds them concatenated,
with each game's number and row count, so that they come back game by game and a resumed phase
puts every game in its place: the same data as an uninterrupted phase."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any, Final

import numpy as np

from experiments.common.errors import RunFolderError
from experiments.training.runs import written_whole

GameData = Mapping[str, np.ndarray]
#: The file's own arrays, beside the data's: the games kept and the rows of each.
_GAMES: Final = "kept_games"
_ROWS: Final = "kept_rows"


def save_kept(path: Path, kept: Mapping[int, GameData]) -> None:
    """Write the games ``kept`` (number -> arrays, each with one row per decision) to ``path``
    whole, then move it into place (a stop while saving leaves the previous file)."""
    games = sorted(kept)
    keys = sorted(next(iter(kept.values()))) if kept else []
    arrays: dict[str, Any] = {key: np.concatenate([kept[game][key] for game in games]) for key in keys}
    rows = np.array([len(kept[game][keys[0]]) if keys else 0 for game in games], np.int64)
    arrays.update({_GAMES: np.array(games, np.int64), _ROWS: rows})
    with written_whole(path) as temporary:
        np.savez(temporary, **arrays)


def load_kept(path: Path) -> dict[int, dict[str, np.ndarray]]:
    """The games saved by :func:`save_kept` in ``path`` (none if there is no such file)."""
    if not path.is_file():
        return {}
    try:
        with np.load(path, allow_pickle=False) as stored:
            games, rows = stored[_GAMES], stored[_ROWS]
            arrays = {key: stored[key] for key in stored.files if key not in (_GAMES, _ROWS)}
    except (OSError, ValueError, KeyError) as error:
        raise RunFolderError(f"{path} does not hold the kept games of a phase: {error}") from None
    ends = np.cumsum(rows)
    return {
        int(game): {key: array[end - count : end] for key, array in arrays.items()}
        for game, count, end in zip(games, rows, ends, strict=True)
    }


__all__ = ["load_kept", "save_kept"]
