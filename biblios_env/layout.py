"""The environment's version and the fingerprint of its observation and action layout.

A trained policy is only meaningful against the layout it was trained on: the same 1,134
numbers must mean the same things and the same 266 action ids the same moves. The version
rule (``CHANGELOG.md``): any change to what an observation contains or means, to the action
table, or to the rules a policy plays by bumps :data:`ENV_VERSION`, which renames the
environments (``biblios_vN``, ``biblios/Biblios-vN``). :data:`LAYOUT_FINGERPRINT` hashes the
version with the declared observation pieces and the action table, so a policy file records
it and refuses to load against another layout (:func:`check_layout`). The version and the
registry names live in :mod:`biblios_env.version` (which imports nothing) and are re-exported here.
"""

from __future__ import annotations

import hashlib
import json
from typing import Final

from biblios_env import actions
from biblios_env.observations import OBSERVATION_SIZE, PIECES
from biblios_env.version import ENV_ID, ENV_NAME, ENV_VERSION, GYM_ENV_ID


def _fingerprint() -> str:
    """A short hash of the version, every observation piece (name, size, scale) and the action table."""
    spec = {
        "version": ENV_VERSION,
        "observation": [[piece.name, piece.size, piece.scale] for piece in PIECES],
        "observation_size": OBSERVATION_SIZE,
        "actions": actions.table_markdown(),
        "num_actions": actions.NUM_ACTIONS,
    }
    digest = hashlib.sha256(json.dumps(spec, sort_keys=True).encode()).hexdigest()
    return f"{ENV_NAME}-{digest[:12]}"


#: Recorded in the env's metadata and in every policy file.
LAYOUT_FINGERPRINT: Final = _fingerprint()


class LayoutMismatchError(ValueError):
    """Something trained or recorded against another observation/action layout."""


def check_layout(fingerprint: object, what: str) -> None:
    """Raise :class:`LayoutMismatchError` unless ``fingerprint`` is this code's layout."""
    if fingerprint != LAYOUT_FINGERPRINT:
        raise LayoutMismatchError(
            f"{what} was made for observation/action layout {fingerprint!r}, but this code has "
            f"{LAYOUT_FINGERPRINT!r} (see CHANGELOG.md); retrain it or use the package version it was made with"
        )


__all__ = [
    "ENV_ID",
    "ENV_NAME",
    "ENV_VERSION",
    "GYM_ENV_ID",
    "LAYOUT_FINGERPRINT",
    "LayoutMismatchError",
    "check_layout",
]
