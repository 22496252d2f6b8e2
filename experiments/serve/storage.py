"""The data folder (``--data DIR``): every game's log, written after each move, where a restarted
server finds the games to resume.

``DIR/open/`` holds the games under way (each resumed at start), ``DIR/finished/`` the finished
ones (kept; their logs are served again after a restart) and ``DIR/expired/`` the games that expired
unfinished (kept, not resumed). A log is written whole to a temporary file beside its place and
moved there with ``os.replace``: a crash leaves the last complete log, never a part of one.
"""

from __future__ import annotations

import json
import os
import re
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any, Final

OPEN: Final = "open"
FINISHED: Final = "finished"
EXPIRED: Final = "expired"
#: A game id as the server makes them (and nothing that could name another path).
GAME_ID: Final = re.compile(r"[A-Za-z0-9_-]{1,64}\Z")


class DataFolder:
    """The logs of the games in ``root`` (created if missing)."""

    def __init__(self, root: Path) -> None:
        self.root = root
        for folder in (OPEN, FINISHED, EXPIRED):
            (root / folder).mkdir(parents=True, exist_ok=True)

    def path(self, folder: str, game_id: str) -> Path:
        if not GAME_ID.match(game_id):
            raise ValueError(f"a game id is 1 to 64 letters, digits, '-' or '_', got {game_id!r:.80}")
        return self.root / folder / f"{game_id}.json"

    def save(self, game_id: str, log: dict[str, Any], *, finished: bool) -> None:
        """Write the game's log atomically: into ``open/``, or into ``finished/`` once the game is over
        (its open log then goes)."""
        target = self.path(FINISHED if finished else OPEN, game_id)
        temporary = target.with_name(f".{target.name}.{os.getpid()}.{threading.get_ident()}.tmp")
        temporary.write_text(json.dumps(log), encoding="utf-8")
        os.replace(temporary, target)
        if finished:
            self.path(OPEN, game_id).unlink(missing_ok=True)

    def expire(self, game_id: str) -> None:
        """Move an unfinished game's log to ``expired/``: kept, but no longer resumed."""
        source = self.path(OPEN, game_id)
        if source.exists():
            os.replace(source, self.path(EXPIRED, game_id))

    def open_logs(self) -> Iterator[tuple[str, Path]]:
        """``(game id, path)`` of every game to resume, in id order. A game whose finished log exists
        too (the server stopped between writing it and removing the open one) is finished: skipped."""
        for path in sorted((self.root / OPEN).glob("*.json")):
            game_id = path.stem
            if GAME_ID.match(game_id) and not self.path(FINISHED, game_id).exists():
                yield game_id, path

    def finished_log(self, game_id: str) -> Path | None:
        """The finished game's log, if this folder has it."""
        path = self.path(FINISHED, game_id)
        return path if path.exists() else None
