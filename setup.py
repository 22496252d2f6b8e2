"""Builds the compiled core: the hot modules compiled to C with mypyc, when a C compiler is here.

Everything else about the package is declared in ``pyproject.toml``. The modules to compile
are listed once, in ``biblios_env/compiled_core.py`` (read here by path, without importing the
package); beside them the build compiles ``biblios_env/_compiled_digests.py``, which it writes
with each module's source digest so that an edited ``.py`` is never shadowed by its stale
extension. ``BIBLIOS_PURE_PYTHON=1`` or a missing compiler installs the pure-Python path. An editable
install (``pip install -e``) of a tree whose compiled core matches its sources reuses it.
"""

from __future__ import annotations

import importlib.util
import shutil
import sys
import sysconfig
from pathlib import Path
from types import ModuleType

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

HERE = Path(__file__).resolve().parent
#: The name of the extension that stands for the compiled core until it is built.
STAND_IN = "biblios_env._compiled_core_stand_in"


def _compiled_core() -> ModuleType:
    """``biblios_env/compiled_core.py``, loaded by path (the package is not installed yet)."""
    spec = importlib.util.spec_from_file_location("_biblios_compiled_core", HERE / "biblios_env" / "compiled_core.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _missing_toolchain() -> str | None:
    """Why C extensions cannot be built here, or ``None`` if they can."""
    compiler = (sysconfig.get_config_var("CC") or "cc").split()[0]
    if shutil.which(compiler) is None:
        return f"no C compiler ({compiler!r} is not on the PATH)"
    header = Path(sysconfig.get_paths()["include"]) / "Python.h"
    if not header.exists():
        return f"no Python headers ({header} is missing)"
    return None


def _say(message: str) -> None:
    print(f"biblios-env: {message}", file=sys.stderr, flush=True)


def _write_digests(core: ModuleType) -> Path:
    """Write the digests module that the build compiles with the others."""
    path = core.source_path(core.DIGESTS_MODULE, HERE)
    digests = core.source_digests(core.COMPILED_MODULES, HERE)
    lines = [f"    {module!r}: {digest!r}," for module, digest in digests.items()]
    path.write_text(
        '"""Written by setup.py at build time (not in version control): the SHA-256 of each compiled\n'
        'module\'s source when it was compiled (see biblios_env.compiled_core)."""\n\n'
        "DIGESTS: dict[str, str] = {\n" + "\n".join(lines) + "\n}\n"
    )
    return path


def _compiled_extensions() -> list[Extension]:
    """Run mypyc over the compiled modules (it writes the C sources into ``build/``)."""
    from mypyc.build import mypycify

    core = _compiled_core()
    digests = _write_digests(core)
    paths = [str(core.source_path(module, HERE).relative_to(HERE)) for module in core.COMPILED_MODULES]
    _say(f"compiling the core with mypyc ({len(paths)} modules; a few minutes)")
    # The modules import only the core dependencies, but mypy also follows the package's lazy
    # imports of optional extras (torch, stable-baselines3), which need not be installed here.
    options = ["--ignore-missing-imports"]
    return mypycify([*options, *paths, str(digests.relative_to(HERE))], opt_level="3", group_name=core.GROUP_NAME)


class BuildCompiledCore(build_ext):
    """``build_ext`` that runs mypyc only when the extensions are really built: the metadata steps
    of an install finalize this command too (to list the sources), where translating the modules
    to C would cost minutes for nothing. Until then the extension list is a stand-in."""

    def build_extensions(self) -> None:
        stand_in = [extension.name for extension in self.extensions] == [STAND_IN]
        in_tree = self.inplace or getattr(self, "editable_mode", False)
        if stand_in and in_tree and _compiled_core().build_is_current(HERE):
            _say("the compiled core in this tree matches its sources: reused, not compiled again")
            self.extensions = []
            return
        if stand_in:
            self.extensions = _compiled_extensions()
            for extension in self.extensions:  # what finalize_options did for the stand-in
                extension._full_name = self.get_ext_fullname(extension.name)
                self.ext_map[extension._full_name] = extension
                extension._links_to_dynamic = extension._needs_stub = False
                extension._file_name = self.get_ext_filename(extension._full_name)
        super().build_extensions()


def ext_modules() -> list[Extension]:
    """A stand-in for the compiled core's extensions (replaced by :class:`BuildCompiledCore`), or
    none, for the pure-Python path, with the reason said once."""
    core = _compiled_core()
    if core.pure_forced():
        _say(f"{core.PURE_VARIABLE}=1: installing the pure-Python path only (no compiled core)")
        return []
    missing = _missing_toolchain()
    if missing is not None:
        _say(f"{missing}: installing the pure-Python path only; the compiled core is several times faster")
        return []
    return [Extension(STAND_IN, sources=[])]


setup(ext_modules=ext_modules(), cmdclass={"build_ext": BuildCompiledCore})
