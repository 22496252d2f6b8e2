"""The table's web assets, shared by the replay page and the play page: the board (``board.html``),
its style (``table.css``) and its drawing (``table.js``, which turns a scene of
:mod:`experiments.table.scenes` and the data of :mod:`experiments.table.page_data` into the board),
and the way a page carries its data (:func:`data_json`)."""

from __future__ import annotations

import json
import re
from importlib import resources
from typing import Any, Final

#: Characters that could end the data's ``<script>`` element or open a comment in it, written as
#: JSON escapes (``</script>`` in an agent's label stays text).
_UNSAFE_IN_SCRIPT: Final = {"<": "\\u003c", ">": "\\u003e", "&": "\\u0026"}


def asset(name: str) -> str:
    """A web asset of this package: ``board.html``, ``table.css`` or ``table.js``."""
    return resources.files("experiments.table").joinpath(name).read_text(encoding="utf-8")


def data_json(data: dict[str, Any]) -> str:
    """A page's data as compact JSON that is safe inside a ``<script>`` element."""
    text = json.dumps(data, separators=(",", ":"), ensure_ascii=False)
    return re.sub("[<>&]", lambda match: _UNSAFE_IN_SCRIPT[match.group()], text)


__all__ = ["asset", "data_json"]
