"""The data folder (``--data DIR``): every game's log, written after each move, where a restarted
server finds the games to resume.

``DIR/open/`` holds the games under way (each resumed at start), ``DIR/finished/`` the finished
ones (kept; their logs are served again after a restart), ``DIR/expired/`` the games that expired
unfinished and ``DIR/failed/`` those a bot ended in an error (both kept, not resumed). A log is
written whole to a temporary file beside its place and moved there with ``os.replace``: a crash
leaves the last complete log, never a part of one.

A log holds its game's seed, hence every hidden card: the folders are created readable by the
server's user only (0700) and every log is written so (0600), whatever the umask.
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
FAILED: Final = "failed"
#: The modes of the data folders and of the logs: the server's user only.
FOLDER_MODE: Final = 0o700
LOG_MODE: Final = 0o600
#: A game id as the server makes them (and nothing that could name another path).
GAME_ID: Final = re.compile(r"[A-Za-z0-9_-]{1,64}\Z")


class DataFolder:
    """The logs of the games in ``root`` (created if missing, with its folders, mode 0700)."""

    def __init__(self, root: Path) -> None:
        self.root = root
        for folder in (root, *(root / name for name in (OPEN, FINISHED, EXPIRED, FAILED))):
            if not folder.is_dir():
                folder.mkdir(mode=FOLDER_MODE, parents=True)  # the umask can only take permissions away

    def path(self, folder: str, game_id: str) -> Path:
        if not GAME_ID.match(game_id):
            raise ValueError(f"a game id is 1 to 64 letters, digits, '-' or '_', got {game_id!r:.80}")
        return self.root / folder / f"{game_id}.json"

    def save(self, game_id: str, log: dict[str, Any], *, folder: str = OPEN) -> None:
        """Write the game's log atomically into ``folder`` (its log of ``open/`` then goes, if it is
        another folder): ``open/`` while the game goes on, ``finished/`` or ``failed/`` at its end."""
        target = self.path(folder, game_id)
        temporary = target.with_name(f".{target.name}.{os.getpid()}.{threading.get_ident()}.tmp")
        descriptor = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, LOG_MODE)
        os.fchmod(descriptor, LOG_MODE)  # a left-over temporary file may have had another mode
        try:
            with os.fdopen(descriptor, "w", encoding="utf-8") as file:
                file.write(json.dumps(log))
            os.replace(temporary, target)
        except BaseException:
            temporary.unlink(missing_ok=True)
            raise
        if folder != OPEN:
            self.path(OPEN, game_id).unlink(missing_ok=True)

    def expire(self, game_id: str) -> None:
        """Move an unfinished game's log to ``expired/``: kept, but no longer resumed."""
        source = self.path(OPEN, game_id)
        if source.exists():
            os.replace(source, self.path(EXPIRED, game_id))

    def open_logs(self) -> Iterator[tuple[str, Path]]:
        """``(game id, path)`` of every game to resume, in id order. A game whose finished or failed
        log exists too (the server stopped between writing it and removing the open one) is over:
        skipped."""
        for path in sorted((self.root / OPEN).glob("*.json")):
            game_id = path.stem
            ended = GAME_ID.match(game_id) and any(self.path(end, game_id).exists() for end in (FINISHED, FAILED))
            if GAME_ID.match(game_id) and not ended:
                yield game_id, path

    def finished_log(self, game_id: str) -> Path | None:
        """The finished game's log, if this folder has it."""
        path = self.path(FINISHED, game_id)
        return path if path.exists() else None
