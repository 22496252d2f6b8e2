"""The engine's modules in one import order, lowest first, as ``tests/test_project/test_architecture.py``
checks the layers: a module may import only the modules before it. So the state record sits on
nothing but the flow's names, the rules of visibility sit on the state, and no two engine
modules import each other (a cycle is what this order rules out).

Every import is read statically, those inside functions and ``if TYPE_CHECKING:`` blocks
included: a cycle hidden behind a lazy import is still a cycle for a reader.
"""

from __future__ import annotations

import ast
from pathlib import Path
from typing import Final

import pytest

ENGINE = Path(__file__).resolve().parents[2] / "biblios_env" / "engine"

#: Lowest first. ``flow`` holds only names (phases, decisions, markers), so the record of a
#: position (``state``) imports nothing else of the engine; ``__init__`` is the public face.
ORDER: Final = (
    "flow",
    "state",
    "setup",
    "config",
    "visibility",
    "scoring",
    "church",
    "gifts",
    "auctions",
    "rules",
    "views",
    "game",
    "sampling",
    "facts",
    "log",
    "__init__",
)


def engine_imports(path: Path) -> set[str]:
    """The engine modules ``path`` imports, by short name (``from biblios_env.engine import rules``
    and ``from biblios_env.engine.rules import ...`` both give ``rules``)."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.ImportFrom) and node.module:
            if node.module == "biblios_env.engine":
                found.update(alias.name for alias in node.names)
            elif node.module.startswith("biblios_env.engine."):
                found.add(node.module.split(".")[2])
        elif isinstance(node, ast.Import):
            found.update(
                alias.name.split(".")[2] for alias in node.names if alias.name.startswith("biblios_env.engine.")
            )
    return found


def test_the_order_lists_every_engine_module() -> None:
    assert sorted(ORDER) == sorted(path.stem for path in ENGINE.glob("*.py"))


@pytest.mark.parametrize("module", ORDER)
def test_an_engine_module_imports_only_the_modules_below_it(module: str) -> None:
    below = set(ORDER[: ORDER.index(module)])
    above = sorted(engine_imports(ENGINE / f"{module}.py") - below)
    assert not above, f"biblios_env.engine.{module} imports {above}, which come after it in ORDER"


def test_the_state_record_imports_only_the_flow_names() -> None:
    assert engine_imports(ENGINE / "state.py") <= {"flow"}


def test_the_check_catches_an_upward_import(tmp_path: Path) -> None:
    """The parser sees every spelling of an engine import, lazy ones included."""
    source = tmp_path / "state.py"
    source.write_text(
        "from biblios_env.engine import rules\n"
        "import biblios_env.engine.views\n"
        "def later():\n"
        "    from biblios_env.engine.visibility import penalty_card_seen\n"
    )
    assert engine_imports(source) == {"rules", "views", "visibility"}
