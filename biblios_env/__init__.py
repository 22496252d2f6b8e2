"""Biblios (Steve Finn) as a research environment: a fast rules engine and a PettingZoo AEC env.

``env()`` / ``raw_env()`` build the PettingZoo environment; the rules engine lives in
:mod:`biblios_env.engine`, the action table in :mod:`biblios_env.actions` and the
observation layout in :mod:`biblios_env.observations`.

Importing this package loads nothing but this file and :mod:`biblios_env.compiled_core`
(Python runs it before any submodule, so it belongs to the lowest layer; it decides, before any
hot module is imported, whether the compiled core or the pure-Python source runs, and
:data:`COMPILED` says which): the names below are imported on first use (PEP 562), and
``import biblios_env.engine`` runs without PettingZoo or Gymnasium (``tests/test_project/test_architecture.py``
checks it in a fresh interpreter). ``import biblios_env``
still registers ``"biblios/Biblios-v1"`` with PettingZoo's registry and ``"biblios/BibliosGym-v1"``
with Gymnasium's: at once where that library is already imported, else the moment it is.
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.util
import sys
from types import ModuleType
from typing import Any

from biblios_env import compiled_core

__version__ = "0.1.0"

#: True when the compiled core (the hot modules built with mypyc) is loaded, False on the
#: pure-Python path (no compiler at install time, ``BIBLIOS_PURE_PYTHON=1``, or a stale build).
COMPILED: bool = compiled_core.load()

#: The package's public names and the module each comes from.
_HOMES = {
    "ENV_ID": "biblios_env.version",
    "LAYOUT_FINGERPRINT": "biblios_env.layout",
    "Game": "biblios_env.engine",
    "IllegalActionError": "biblios_env.engine",
    "env": "biblios_env.pettingzoo_env",
    "raw_env": "biblios_env.pettingzoo_env",
}

__all__ = ["COMPILED", "ENV_ID", "LAYOUT_FINGERPRINT", "Game", "IllegalActionError", "env", "raw_env"]


def __getattr__(name: str) -> Any:
    """Import a public name from its home module on first use (PEP 562)."""
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module 'biblios_env' has no attribute {name!r}")
    value = getattr(importlib.import_module(home), name)
    globals()[name] = value  # later lookups skip this function
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *_HOMES})


def _register_pettingzoo(pettingzoo: ModuleType) -> None:
    """Register with PettingZoo's registry (PettingZoo >= 1.27) so ``pettingzoo.make`` finds us."""
    from biblios_env.version import ENV_ID

    registry = getattr(pettingzoo, "aec_registry", None)
    if registry is not None and ENV_ID not in registry:
        pettingzoo.register("aec", ENV_ID, entry_point="biblios_env.pettingzoo_env:env")


def _register_gymnasium(gymnasium: ModuleType) -> None:
    """Register the single-seat wrapper so ``gymnasium.make`` finds it after ``import biblios_env``
    alone (the entry point is a string: the wrapper's module loads only when an env is made)."""
    from biblios_env.version import GYM_ENV_ID

    if GYM_ENV_ID not in gymnasium.registry:
        gymnasium.register(GYM_ENV_ID, entry_point="biblios_env.gym_env:BibliosGymEnv")


#: The registries this package joins, by the module that holds each, and how it registers there.
_REGISTRIES = {"pettingzoo": _register_pettingzoo, "gymnasium": _register_gymnasium}


class _RegisterWhenLoaded(importlib.abc.MetaPathFinder):
    """A one-shot import hook: when ``pettingzoo`` or ``gymnasium`` is imported, register the env
    right after its module has run. Nothing else is touched: the hook finds the module with the
    ordinary finders, leaves its loader in place and removes itself once every registry is served."""

    def __init__(self, waiting: set[str]) -> None:
        self.waiting = waiting

    def find_spec(self, fullname: str, path: Any, target: Any = None) -> importlib.machinery.ModuleSpec | None:
        if fullname not in self.waiting:
            return None
        self.waiting.discard(fullname)
        if not self.waiting:
            sys.meta_path.remove(self)
        spec = self._find_without_me(fullname)
        loader = spec.loader if spec is not None else None
        if loader is None or not hasattr(loader, "exec_module"):
            return spec
        run_module = loader.exec_module
        register = _REGISTRIES[fullname]

        def run_and_register(module: ModuleType) -> None:
            run_module(module)
            register(module)

        loader.exec_module = run_and_register  # type: ignore[method-assign]  # this spec's own loader
        return spec

    def _find_without_me(self, fullname: str) -> importlib.machinery.ModuleSpec | None:
        """The spec the other finders give (this hook may still be on ``sys.meta_path``)."""
        inside = self in sys.meta_path
        if inside:
            sys.meta_path.remove(self)
        try:
            return importlib.util.find_spec(fullname)
        finally:
            if inside:
                sys.meta_path.insert(0, self)


def _register_with_registries() -> None:
    """Register now where the registry's module is loaded, else as soon as it is (never import it here)."""
    waiting = set()
    for name, register in _REGISTRIES.items():
        if name in sys.modules:
            register(sys.modules[name])
        else:
            waiting.add(name)
    if waiting and not any(isinstance(finder, _RegisterWhenLoaded) for finder in sys.meta_path):
        sys.meta_path.insert(0, _RegisterWhenLoaded(waiting))


_register_with_registries()
