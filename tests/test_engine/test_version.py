"""biblios_env.version: the env version and registry names in a module that imports nothing of
the package (so a log or policy reader can record them cheaply), re-exported unchanged by
biblios_env.layout, whose fingerprint hashes the version with the layout."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import biblios_env
from biblios_env import compiled_core, layout, version

#: The layout fingerprint of this code (changing it means a new layout: see CHANGELOG.md).
FINGERPRINT = "biblios_v1-b4f94f4c6917"


def test_the_version_module_imports_nothing_of_the_package() -> None:
    tree = ast.parse(Path(version.__file__).read_text())
    imported = {node.module for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)}
    imported |= {alias.name for node in ast.walk(tree) if isinstance(node, ast.Import) for alias in node.names}
    assert imported <= {"__future__", "typing"}, imported


def test_importing_the_version_loads_no_other_package_module() -> None:
    code = "import sys, biblios_env.version; print(sorted(m for m in sys.modules if m.startswith('biblios_env')))"
    loaded = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    # The package's __init__ first chooses the build (compiled_core), which on a compiled build
    # reads the build's source digests (a compiled module, so the group's library loads too).
    build = {compiled_core.DIGESTS_MODULE, compiled_core.GROUP_NAME + "__mypyc"}
    assert {"biblios_env", "biblios_env.compiled_core", "biblios_env.version"} <= set(ast.literal_eval(loaded))
    assert set(ast.literal_eval(loaded)) - build == {"biblios_env", "biblios_env.compiled_core", "biblios_env.version"}


def test_layout_and_the_package_re_export_the_same_names() -> None:
    for name in version.__all__:
        assert getattr(layout, name) == getattr(version, name), name
    assert biblios_env.ENV_ID == version.ENV_ID == f"biblios/Biblios-v{version.ENV_VERSION}"
    assert layout.LAYOUT_FINGERPRINT == FINGERPRINT
    assert layout.LAYOUT_FINGERPRINT.startswith(version.ENV_NAME + "-")
