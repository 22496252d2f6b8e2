"""The one error a request can end with: :class:`ApiError`, an HTTP status and a message that names
the bad value and what was expected, answered as JSON (``{"error": ..., ...}``) by the app."""

from __future__ import annotations

from typing import Any


class ApiError(Exception):
    """A request the server refuses: ``status`` (a 4xx, or 500 for a bot that failed), the message,
    and what else the answer carries (the legal actions, the choices of an option)."""

    def __init__(self, status: int, message: str, **details: Any) -> None:
        super().__init__(message)
        self.status = status
        self.message = message
        self.details = details

    def body(self) -> dict[str, Any]:
        """The JSON answer: ``{"error": message, **details}``."""
        return {"error": self.message, **self.details}
