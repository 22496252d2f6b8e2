"""The environment's version and registry names, on their own: this module imports nothing of
the package, so anything (the package ``__init__``, a game log, a policy file's reader) can read
them without loading the observation and action code.

The version rule is in ``CHANGELOG.md``: any change to what an observation contains or means,
to the action table, or to the rules a policy plays by bumps :data:`ENV_VERSION`, which renames
the environments. :mod:`biblios_env.layout` re-exports these names beside the layout
fingerprint, which hashes :data:`ENV_VERSION` with the layout itself.
"""

from __future__ import annotations

from typing import Final

ENV_VERSION: Final = 1
#: PettingZoo's ``metadata["name"]``.
ENV_NAME: Final = f"biblios_v{ENV_VERSION}"
#: The PettingZoo registry id (``pettingzoo.make("aec", ENV_ID)``).
ENV_ID: Final = f"biblios/Biblios-v{ENV_VERSION}"
#: The Gymnasium registry id of the single-seat wrapper (``gymnasium.make(GYM_ENV_ID)``).
GYM_ENV_ID: Final = f"biblios/BibliosGym-v{ENV_VERSION}"

__all__ = ["ENV_ID", "ENV_NAME", "ENV_VERSION", "GYM_ENV_ID"]
