"""The one error a request can end with: :class:`ApiError`, an HTTP status and a message that names
the bad value and what was expected, answered as JSON (``{"error": ..., ...}``) by the app.

No answer names a folder of the server's machine (its home, its working directory, where the code,
the data or the policy files live): a message built from an exception may hold one (a file that
could not be read), so :func:`redact_paths` replaces each such path with ``<server path>`` before a
message leaves the server.
"""

from __future__ import annotations

import re
import sys
import tempfile
from collections.abc import Iterable
from pathlib import Path
from typing import Any, Final

#: What a server path is replaced with in an answer.
HIDDEN_PATH: Final = "<server path>"
_server_folders: set[str] = set()


def hide_folders(folders: Iterable[Path | str]) -> None:
    """Add folders whose paths no answer may show (the data folder, the policy folder)."""
    for folder in folders:
        for form in {str(folder), str(Path(folder).expanduser().resolve())}:
            if len(Path(form).parts) > 1:  # never "/" itself: that would hide every path the client wrote
                _server_folders.add(form.rstrip("/"))


def redact_paths(text: str) -> str:
    """``text`` with every path under a server folder replaced by :data:`HIDDEN_PATH`."""
    if not _server_folders:
        hide_folders([Path.home(), Path.cwd(), Path(__file__).parents[2], sys.prefix, sys.base_prefix])
        hide_folders([tempfile.gettempdir()])
    for folder in sorted(_server_folders, key=len, reverse=True):
        text = re.sub(re.escape(folder) + r"(?:/[^\s'\"<>]*)?", HIDDEN_PATH, text)
    return text


class ApiError(Exception):
    """A request the server refuses: ``status`` (a 4xx), the message, and what else the answer
    carries (the legal actions, the choices of an option, the current view)."""

    def __init__(self, status: int, message: str, **details: Any) -> None:
        super().__init__(message)
        self.status = status
        self.message = message
        self.details = details

    def body(self) -> dict[str, Any]:
        """The JSON answer: ``{"error": message, **details}``, with no server path in the message."""
        return {"error": redact_paths(self.message), **self.details}
