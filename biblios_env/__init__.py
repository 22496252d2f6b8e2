"""Biblios (Steve Finn) as a research environment: a fast rules engine and a PettingZoo AEC env.

``env()`` / ``raw_env()`` build the PettingZoo environment; the rules engine lives in
:mod:`biblios_env.engine`, the action table in :mod:`biblios_env.actions` and the
observation layout in :mod:`biblios_env.observations`.
"""

from biblios_env.engine import Game, IllegalActionError
from biblios_env.layout import ENV_ID, LAYOUT_FINGERPRINT
from biblios_env.pettingzoo_env import env, raw_env

__version__ = "0.1.0"

__all__ = ["ENV_ID", "LAYOUT_FINGERPRINT", "Game", "IllegalActionError", "env", "raw_env"]


def _register() -> None:
    """Register with PettingZoo's registry (PettingZoo >= 1.27) so ``pettingzoo.make`` finds us."""
    import pettingzoo

    registry = getattr(pettingzoo, "aec_registry", None)
    if registry is not None and ENV_ID not in registry:
        pettingzoo.register("aec", ENV_ID, entry_point="biblios_env.pettingzoo_env:env")


_register()
