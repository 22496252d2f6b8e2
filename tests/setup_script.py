"""The clone's set-up script, ``bootstrap.py``, loaded by path (it lives beside the packages, not
in one), so the tests read its facts (where Chromium is, the command that installs it) from
their one home."""

from __future__ import annotations

import importlib.util
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
_spec = importlib.util.spec_from_file_location("bootstrap", ROOT / "bootstrap.py")
assert _spec is not None and _spec.loader is not None
bootstrap = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(bootstrap)

__all__ = ["ROOT", "bootstrap"]
