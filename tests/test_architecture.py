"""Layers point one way (STYLE principle 1): cards → engine → encoding → envs → agents →
experiments. Checked by parsing every module's imports."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def _imports(path: Path) -> set[str]:
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module)
    return names


# (folder, top-level packages its modules must never import)
FORBIDDEN = [
    ("biblios_env/engine", ("pettingzoo", "gymnasium", "stable_baselines3", "sb3_contrib", "torch", "agents",
                            "experiments", "biblios_env.pettingzoo_env", "biblios_env.observations")),
    ("biblios_env", ("agents", "experiments")),
    ("agents", ("experiments",)),
]


@pytest.mark.parametrize(("folder", "forbidden"), FORBIDDEN)
def test_layers_point_one_way(folder: str, forbidden: tuple[str, ...]) -> None:
    offenders = []
    for path in sorted((ROOT / folder).rglob("*.py")):
        for name in _imports(path):
            if any(name == bad or name.startswith(bad + ".") for bad in forbidden):
                offenders.append(f"{path.relative_to(ROOT)} imports {name}")
    assert not offenders, "layering violated:\n" + "\n".join(offenders)
