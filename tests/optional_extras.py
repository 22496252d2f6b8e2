"""One rule for tests that need an optional extra (Ray, RLlib, torch, the RL frameworks).

Import with ``from optional_extras import require`` (pytest puts ``tests/`` on ``sys.path``).
Outside CI a missing extra skips the test, with the reason and the command that installs it.
In CI (``CI=true``) every extra is installed (``.ci/run``), so a missing one is an import
error, and ``conftest.py`` turns any skip into a failure: nothing is left out unseen.
"""

from __future__ import annotations

import importlib
import os
from types import ModuleType

import pytest

#: Whether this run is CI's: every optional extra is installed and a skip fails the run.
IN_CI = os.environ.get("CI", "").lower() == "true"


#: The extra (``pyproject.toml``) that installs each optional module the tests import.
EXTRAS = {
    "ray": "distributed",
    "ray.rllib": "rllib",
    "torch": "rl",
    "torchrl": "torchrl",
    "tensordict": "torchrl",
    "tianshou": "tianshou",
    "supersuit": "supersuit",
    "pyspiel": "openspiel",
    "biblios_env.openspiel": "openspiel",
    "pygambit": "gambit",
    "starlette": "serve",
}


def require(module: str) -> ModuleType:
    """``module`` imported; where it is missing, a skip naming its extra (an import error in CI)."""
    extra = EXTRAS[module]
    if IN_CI:
        return importlib.import_module(module)
    return pytest.importorskip(module, reason=f'needs the {extra!r} extra: pip install -e ".[{extra}]"')
