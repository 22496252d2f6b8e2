"""Which build of the hot modules runs: the compiled core or the pure-Python source.

The rules engine, the observation encoder and the search agents are the inner loop of every
experiment, so the same source files are also compiled to C extensions with mypyc when the
package is installed on a machine with a C compiler (``setup.py``). Both builds behave the
same, byte for byte (``tests/test_project/test_compiled_core.py`` plays seeded games on both and compares
every step); the compiled one is several times faster (``docs/performance.md``).

This module decides, once per process and before any of those modules is imported (the
``biblios_env`` package imports it first, and ``agents`` imports ``biblios_env`` first):

* ``BIBLIOS_PURE_PYTHON=1`` in the environment: the pure-Python source, whatever is built;
* no compiled module on disk (no compiler at install time): the pure-Python source;
* a compiled build whose recorded source digests match the ``.py`` files: the compiled core;
* anything else (a ``.py`` edited since the build, a partial build): the pure-Python source,
  with one warning naming the command that rebuilds, so an edit is never shadowed by an older
  compiled module.

It must stay importable without the rest of the package (``setup.py`` loads it by path to
read :data:`COMPILED_MODULES`), so it uses only the standard library, and it is never compiled.
"""

from __future__ import annotations

import ast
import hashlib
import importlib.abc
import importlib.machinery
import importlib.util
import inspect
import os
import sys
import warnings
from collections.abc import Sequence
from pathlib import Path
from types import ModuleType
from typing import Final

#: The modules compiled to C, all in one extension group so that their calls to each other stay
#: in C (a call across the compiled/interpreted boundary costs more than it saves). Engine and
#: agents go together for that reason. The environment classes, the game log, the declared
#: facts and the experiments are not in the hot loop and stay interpreted.
COMPILED_MODULES: Final = (
    "biblios_env.cards",
    "biblios_env.actions",
    "biblios_env.observations",
    "biblios_env.engine.flow",
    "biblios_env.engine.visibility",
    "biblios_env.engine.state",
    "biblios_env.engine.setup",
    "biblios_env.engine.scoring",
    "biblios_env.engine.gifts",
    "biblios_env.engine.church",
    "biblios_env.engine.auctions",
    "biblios_env.engine.rules",
    "biblios_env.engine.views",
    "biblios_env.engine.game",
    "biblios_env.engine.sampling",
    "biblios_env.vector.stepping",
    "agents.card_values",
    "agents.rollout_policy",
    "agents.heuristics",
    "agents.search.network_rollouts",
    "agents.search.evaluators",
    "agents.search.common",
    "agents.search.flat",
    "agents.search.tree",
)
#: The module the build writes and compiles with the others: the SHA-256 of each compiled
#: module's source, as it was when compiled (``DIGESTS``), so a stale build is detected.
DIGESTS_MODULE: Final = "biblios_env._compiled_digests"
#: The shared library of the group (mypyc's ``group_name``).
GROUP_NAME: Final = "biblios_env._compiled"
PURE_VARIABLE: Final = "BIBLIOS_PURE_PYTHON"
#: Rebuilds the compiled core in place, in a clone installed with ``pip install -e``.
REBUILD_COMMAND: Final = "python setup.py build_ext --inplace"

#: The folder holding the ``biblios_env`` and ``agents`` packages (the clone, or site-packages).
ROOT: Final = Path(__file__).resolve().parent.parent


def pure_forced(environ: dict[str, str] | os._Environ[str] = os.environ) -> bool:
    """Whether ``BIBLIOS_PURE_PYTHON`` asks for the pure-Python path: ``1`` yes; unset, empty or
    ``0`` no; anything else is a ValueError naming the value (a typo must not be ignored)."""
    value = environ.get(PURE_VARIABLE, "").strip()
    if value not in ("", "0", "1"):
        raise ValueError(f"{PURE_VARIABLE} must be 1 (pure Python) or 0/unset (compiled if built), got {value!r}")
    return value == "1"


def source_path(module: str, root: Path = ROOT) -> Path:
    """The ``.py`` file of ``module`` under ``root``."""
    return root.joinpath(*module.split(".")).with_suffix(".py")


def source_digest(path: Path) -> str:
    """The SHA-256 of a source file's bytes (what the build records and the import compares)."""
    return hashlib.sha256(path.read_bytes()).hexdigest()


def source_digests(modules: Sequence[str] = COMPILED_MODULES, root: Path = ROOT) -> dict[str, str]:
    """``module -> digest`` of the current source of ``modules``."""
    return {module: source_digest(source_path(module, root)) for module in modules}


def extension_path(module: str, root: Path = ROOT) -> Path | None:
    """The compiled extension of ``module`` beside its source, if there is one."""
    source = source_path(module, root)
    for suffix in importlib.machinery.EXTENSION_SUFFIXES:
        candidate = source.with_name(source.stem + suffix)
        if candidate.exists():
            return candidate
    return None


def _evaluate(expression: ast.expr, namespace: dict[str, object]) -> object:
    """A default value of the source, evaluated in its module's namespace as Python does."""
    return eval(ast.unparse(expression), namespace)


def _signature(function: ast.FunctionDef, namespace: dict[str, object]) -> inspect.Signature:
    """The signature of a constructor as its source declares it, without ``self``."""
    arguments = function.args
    positional = [
        *((argument, inspect.Parameter.POSITIONAL_ONLY) for argument in arguments.posonlyargs),
        *((argument, inspect.Parameter.POSITIONAL_OR_KEYWORD) for argument in arguments.args),
    ]
    defaults: list[ast.expr | None] = [None] * (len(positional) - len(arguments.defaults))
    defaults += arguments.defaults
    keyword_only = [(argument, inspect.Parameter.KEYWORD_ONLY) for argument in arguments.kwonlyargs]
    listed: list[tuple[tuple[ast.arg, inspect._ParameterKind], ast.expr | None]] = [
        *list(zip(positional, defaults, strict=True))[1:],
        *zip(keyword_only, arguments.kw_defaults, strict=True),
    ]
    if arguments.vararg is not None:
        listed.insert(len(positional) - 1, ((arguments.vararg, inspect.Parameter.VAR_POSITIONAL), None))
    if arguments.kwarg is not None:
        listed.append(((arguments.kwarg, inspect.Parameter.VAR_KEYWORD), None))
    parameters = [
        inspect.Parameter(
            argument.arg,
            kind,
            default=inspect.Parameter.empty if default is None else _evaluate(default, namespace),
            annotation=inspect.Parameter.empty if argument.annotation is None else ast.unparse(argument.annotation),
        )
        for (argument, kind), default in listed
    ]
    returns = inspect.Signature.empty if function.returns is None else ast.unparse(function.returns)
    return inspect.Signature(parameters, return_annotation=returns)


def restore_documentation(module: ModuleType) -> None:
    """Give a hot module's classes what its source says of them, on both builds alike: the
    docstrings of the module and its classes, which mypyc drops (``help()``, the agents'
    descriptions), and each class's constructor signature as ``__init__`` declares it
    (``inspect.signature``: mypyc shows every parameter as positional-only, and a class with a
    ``__new__`` of its own shows that one's). A compiled function keeps no docstring: its
    ``__doc__`` cannot be set."""
    tree = ast.parse(source_path(module.__name__).read_text())
    if not module.__doc__:
        module.__doc__ = ast.get_docstring(tree, clean=False)
    for node in tree.body:
        if not isinstance(node, ast.ClassDef) or not isinstance(cls := getattr(module, node.name, None), type):
            continue
        if not cls.__doc__:
            cls.__doc__ = ast.get_docstring(node, clean=False)
        init = next((item for item in node.body if isinstance(item, ast.FunctionDef) and item.name == "__init__"), None)
        if init is not None:
            cls.__signature__ = _signature(init, vars(module))  # type: ignore[attr-defined]


class _DocumentedSourceLoader(importlib.machinery.SourceFileLoader):
    """Loads a hot module from its ``.py`` file (the pure-Python path), then documents it."""

    def exec_module(self, module: ModuleType) -> None:
        super().exec_module(module)
        restore_documentation(module)


class _DocumentedExtensionLoader(importlib.machinery.ExtensionFileLoader):
    """Loads a hot module's compiled extension, then documents it."""

    def exec_module(self, module: ModuleType) -> None:
        super().exec_module(module)
        restore_documentation(module)


class _HotModuleFinder(importlib.abc.MetaPathFinder):
    """Finds the hot modules of the chosen build, ahead of Python's own finder (which prefers an
    extension module to a source file of the same name)."""

    def __init__(self, compiled: bool) -> None:
        self.compiled = compiled

    def find_spec(
        self, fullname: str, path: Sequence[str] | None, target: object = None
    ) -> importlib.machinery.ModuleSpec | None:
        if fullname not in COMPILED_MODULES:
            return None
        if self.compiled:
            extension = extension_path(fullname)
            if extension is None:
                return None
            loader: importlib.abc.Loader = _DocumentedExtensionLoader(fullname, str(extension))
            return importlib.util.spec_from_file_location(fullname, extension, loader=loader)
        source = source_path(fullname)
        return importlib.util.spec_from_file_location(
            fullname, source, loader=_DocumentedSourceLoader(fullname, str(source))
        )


def _stale_modules() -> list[str]:
    """The compiled modules whose source changed since the build (all of them when the build
    recorded no digests): empty when the build is current."""
    if extension_path(DIGESTS_MODULE) is None:
        return list(COMPILED_MODULES)
    built: dict[str, str] = getattr(importlib.import_module(DIGESTS_MODULE), "DIGESTS", {})
    current = source_digests()
    return [module for module in COMPILED_MODULES if built.get(module) != current[module]]


#: Run in a fresh interpreter by :func:`build_is_current`: loads the digests extension of the
#: tree ``sys.argv[1]`` under a bare ``biblios_env`` package (the real one imports numpy, which an
#: isolated build environment lacks) and prints its ``DIGESTS`` as JSON.
_READ_DIGESTS: Final = """
import importlib.util, json, sys, types
package = types.ModuleType("biblios_env")
package.__path__ = [sys.argv[1] + "/biblios_env"]
sys.modules["biblios_env"] = package
spec = importlib.util.spec_from_file_location("biblios_env._compiled_digests", sys.argv[2])
module = importlib.util.module_from_spec(spec)
spec.loader.exec_module(module)
print(json.dumps(module.DIGESTS))
"""


def build_is_current(root: Path = ROOT) -> bool:
    """Whether the tree ``root`` holds a complete compiled build for this interpreter whose
    recorded digests match the sources: an install of an unchanged tree reuses it instead of
    compiling again (minutes). Read in a subprocess, so the build process imports nothing of it."""
    digests = extension_path(DIGESTS_MODULE, root)
    if digests is None or any(extension_path(module, root) is None for module in COMPILED_MODULES):
        return False
    import json
    import subprocess

    read = subprocess.run(
        [sys.executable, "-c", _READ_DIGESTS, str(root), str(digests)], capture_output=True, text=True, check=False
    )
    if read.returncode != 0:  # built by another interpreter or mypyc, or a partial build
        return False
    built: dict[str, str] = json.loads(read.stdout)
    return built == source_digests(COMPILED_MODULES, root)


def _use(compiled: bool) -> None:
    """Make the hot modules load from the chosen build in this process (again: nothing to do,
    as when ``biblios_env`` is reloaded with the same choice)."""
    installed = [finder for finder in sys.meta_path if isinstance(finder, _HotModuleFinder)]
    if installed and installed[0].compiled == compiled:
        return
    imported = [module for module in COMPILED_MODULES if module in sys.modules]
    if imported:  # only possible if something imported them before biblios_env, or another build
        raise ImportError(f"cannot choose the build of the compiled core: already imported {imported}")
    for finder in installed:
        sys.meta_path.remove(finder)
    sys.meta_path.insert(0, _HotModuleFinder(compiled))


def load() -> bool:
    """Choose the build for this process (module doc); True when the compiled core is loaded."""
    compiled = False
    if not pure_forced() and any(extension_path(module) is not None for module in COMPILED_MODULES):
        stale = _stale_modules()
        compiled = not stale
        if stale:
            warnings.warn(
                f"the compiled core is out of date ({len(stale)} module(s) changed since it was built, "
                f"e.g. {stale[0]}): using the pure-Python source; run `{REBUILD_COMMAND}` to rebuild it",
                stacklevel=3,
            )
    _use(compiled)
    return compiled


__all__ = [
    "COMPILED_MODULES",
    "DIGESTS_MODULE",
    "GROUP_NAME",
    "PURE_VARIABLE",
    "REBUILD_COMMAND",
    "build_is_current",
    "extension_path",
    "load",
    "pure_forced",
    "restore_documentation",
    "source_digests",
    "source_path",
]
