"""Layers point one way: card and action tables → engine → encoding → batched games →
envs → agents → experiments, and within experiments/ common → table → replay and records →
tournament → play → serve → training → the commands, benchmarks and studies.

Three checks. Statically, every module's imports (parsed, function-level ones included) must be
on its layer's allow-list: the standard library, the third-party packages named for the layer,
and modules of the same or a lower layer. At run time, a fresh interpreter imports each layer
and must not have loaded anything that belongs above it — so a package ``__init__`` that pulls
in PettingZoo, or a "lazy" import that runs at import time after all, is caught too. And the
packages of experiments/ import one another without a cycle (checked on the package graph itself,
so a cycle inside one sub-layer is caught as well).
"""

from __future__ import annotations

import ast
import json
import subprocess
import sys
from pathlib import Path
from typing import Final

import pytest

ROOT = Path(__file__).resolve().parents[2]

#: The environment and learning packages that the agents and the experiments may both import.
LEARNING_PACKAGES: Final = ("numpy", "gymnasium", "pettingzoo", "torch", "stable_baselines3", "sb3_contrib")
#: The third-party packages of every experiments/ sub-layer (only the modules that use an extra import it).
EXPERIMENT_PACKAGES: Final = (
    *LEARNING_PACKAGES,
    "pandas",
    "matplotlib",
    "rich",
    "tqdm",
    "openskill",
    "ray",
    "torchrl",
    "tensordict",
    "tianshou",
    "supersuit",
    "pyspiel",
    "open_spiel",
    "pygambit",
)

#: The layers, lowest first: the modules of each (a name ending in ``.*`` covers a package's
#: submodules) and the third-party packages its modules may import besides the standard library.
LAYERS: Final[tuple[tuple[str, tuple[str, ...], tuple[str, ...]], ...]] = (
    # The package's __init__ runs before any submodule, so it sits at the bottom; its public
    # names (env, Game, ...) are imported on first use, never at import time. It first asks
    # compiled_core which build to load (the build writes _compiled_digests beside it).
    (
        "tables",
        (
            "biblios_env",
            "biblios_env.compiled_core",
            "biblios_env._compiled_digests",
            "biblios_env.version",
            "biblios_env.cards",
            "biblios_env.actions",
        ),
        ("numpy",),
    ),
    ("engine", ("biblios_env.engine", "biblios_env.engine.*"), ("numpy",)),
    (
        "encoding",
        ("biblios_env.observations", "biblios_env.layout", "biblios_env.text", "biblios_env.agent_interface"),
        ("numpy", "librt"),
    ),
    # The batched games: many engine games stepped in one call, arrays out (no RL library).
    (
        "batch",
        ("biblios_env.vector", "biblios_env.vector.games", "biblios_env.vector.stepping"),
        ("numpy", "librt"),
    ),
    (
        "envs",
        (
            "biblios_env.__main__",
            "biblios_env.pettingzoo_env",
            "biblios_env.gym_env",
            "biblios_env.playthrough",
            "biblios_env.openspiel",
            # The batched games behind the RL libraries' vectorized interfaces.
            "biblios_env.vector.learner",
            "biblios_env.vector.gymnasium_env",
        ),
        ("numpy", "gymnasium", "pettingzoo", "pyspiel"),
    ),
    # The batched games as a Stable-Baselines3 VecEnv: importing SB3 loads torch (the rl extra).
    (
        "sb3 adapter",
        ("biblios_env.vector.sb3",),
        ("numpy", "gymnasium", "stable_baselines3", "torch", "rich", "tqdm"),
    ),
    (
        "agents",
        ("agents", "agents.*"),
        (*LEARNING_PACKAGES, "mypy_extensions", "threadpoolctl"),
    ),
    # experiments/ in ordered sub-layers, lowest first: a package imports only its own sub-layer
    # and those below, so no two of its packages import each other (see also the cycle test).
    # The package's __init__ runs before any submodule (and imports nothing), so it sits lowest.
    ("experiments: common", ("experiments", "experiments.common", "experiments.common.*"), EXPERIMENT_PACKAGES),
    ("experiments: table", ("experiments.table", "experiments.table.*"), EXPERIMENT_PACKAGES),
    (
        "experiments: replay and records",
        ("experiments.replay", "experiments.replay.*", "experiments.records", "experiments.records.*"),
        EXPERIMENT_PACKAGES,
    ),
    ("experiments: tournament", ("experiments.tournament", "experiments.tournament.*"), EXPERIMENT_PACKAGES),
    ("experiments: play", ("experiments.play", "experiments.play.*"), EXPERIMENT_PACKAGES),
    # The play page's web server: the table's and the replay's code behind an ASGI app.
    (
        "experiments: serve",
        ("experiments.serve", "experiments.serve.*"),
        (*EXPERIMENT_PACKAGES, "starlette", "uvicorn"),
    ),
    ("experiments: training", ("experiments.training", "experiments.training.*"), EXPERIMENT_PACKAGES),
    (
        "experiments: commands, benchmarks and studies",
        (
            "experiments.train_network",
            "experiments.train_ppo",
            "experiments.train_rllib",
            "experiments.train_selfplay",
            "experiments.openspiel_cfr",
            "experiments.exact",
            "experiments.exact.*",
            "experiments.exploit",
            "experiments.exploit.*",
            "experiments.benchmarks",
            "experiments.benchmarks.*",
            "experiments.studies",
            "experiments.studies.*",
            "experiments.frameworks",
            "experiments.frameworks.*",
        ),
        EXPERIMENT_PACKAGES,
    ),
)
LAYER_NAMES: Final = tuple(name for name, _, _ in LAYERS)
#: Packages whose ``__init__`` re-exports names from higher layers: only their module-level
#: imports must keep to the layer (the re-exports are imported inside functions, on first
#: use; the run-time tests below prove that importing the layer loads nothing above it).
FACADES: Final = frozenset({"biblios_env"})


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


#: Every module of the three packages, by dotted name.
MODULES: Final = {
    _module_name(path): path
    for package in ("biblios_env", "agents", "experiments")
    for path in (ROOT / package).rglob("*.py")
}


def layer_of(module: str) -> int:
    """The index in :data:`LAYERS` of a project module; raises for a module no layer lists."""
    for index, (_, members, _) in enumerate(LAYERS):
        for member in members:
            if module == member or (member.endswith(".*") and module.startswith(member[:-1])):
                return index
    raise AssertionError(f"{module} belongs to no layer: add it to LAYERS in tests/test_project/test_architecture.py")


def _run_at_import(node: ast.AST) -> list[ast.AST]:
    """``node`` and its descendants outside function bodies (what runs when a module is imported)."""
    found = [node]
    for child in ast.iter_child_nodes(node):
        if not isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda):
            found += _run_at_import(child)
    return found


def imports_of(path: Path, module_level_only: bool = False) -> set[str]:
    """Absolute module names a file imports (``from package import module`` names the module);
    with ``module_level_only``, only the statements run when the module is imported."""
    tree = ast.parse(path.read_text())
    nodes = _run_at_import(tree) if module_level_only else ast.walk(tree)
    names: set[str] = set()
    for node in nodes:
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            for alias in node.names:
                submodule = f"{node.module}.{alias.name}"
                names.add(submodule if submodule in MODULES else node.module)
    return names


def allowed(module: str, imported: str) -> bool:
    """Whether ``module`` may import ``imported`` (see the module docstring)."""
    top = imported.split(".")[0]
    if top in sys.stdlib_module_names or top == "__future__":
        return True
    layer = layer_of(module)
    if imported in MODULES:
        return layer_of(imported) <= layer
    return top in LAYERS[layer][2]


def test_every_module_has_a_layer() -> None:
    for module in MODULES:
        layer_of(module)


@pytest.mark.parametrize("layer", LAYER_NAMES)
def test_imports_stay_on_the_allow_list(layer: str) -> None:
    index = LAYER_NAMES.index(layer)
    offenders = [
        f"{module} ({layer}) imports {imported}"
        for module, path in sorted(MODULES.items())
        if layer_of(module) == index
        for imported in sorted(imports_of(path, module_level_only=module in FACADES))
        if not allowed(module, imported)
    ]
    assert not offenders, "layering violated:\n" + "\n".join(offenders)


def _loaded_after_importing(modules: list[str]) -> set[str]:
    """``sys.modules`` of a fresh interpreter after importing ``modules``."""
    script = f"import importlib, json, sys\nfor name in {modules!r}:\n    importlib.import_module(name)\n"
    script += "print(json.dumps(sorted(sys.modules)))"
    finished = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, cwd=ROOT)
    assert finished.returncode == 0, f"importing {', '.join(modules)} failed:\n{finished.stderr}"
    return set(json.loads(finished.stdout))


def _above(index: int) -> tuple[set[str], set[str]]:
    """The project modules and the third-party packages of the layers above ``index`` that the
    layers up to ``index`` do not use themselves."""
    modules = {module for module in MODULES if layer_of(module) > index}
    own = {package for _, _, packages in LAYERS[: index + 1] for package in packages}
    packages = {package for _, _, packages in LAYERS[index + 1 :] for package in packages} - own
    return modules, packages


@pytest.mark.parametrize("layer", LAYER_NAMES[:-1])
def test_importing_a_layer_loads_nothing_from_above(layer: str) -> None:
    index = LAYER_NAMES.index(layer)
    members = sorted(module for module in MODULES if layer_of(module) == index and not module.endswith("__main__"))
    loaded = _loaded_after_importing(members)
    modules, packages = _above(index)
    leaked = sorted(loaded & modules) + sorted(name for name in loaded if name.split(".")[0] in packages)
    assert not leaked, f"importing the {layer} layer ({', '.join(members)}) loaded: {', '.join(leaked)}"


def test_the_engine_imports_without_the_env_libraries() -> None:
    loaded = _loaded_after_importing(["biblios_env.engine"])
    for package in ("pettingzoo", "gymnasium", "torch", "stable_baselines3", "sb3_contrib", "pandas"):
        assert package not in loaded, f"import biblios_env.engine loaded {package}"
    assert {name for name in loaded if name.startswith("biblios_env.")} <= {
        "biblios_env.compiled_core",
        "biblios_env._compiled_digests",
        "biblios_env._compiled__mypyc",
        "biblios_env.cards",
        "biblios_env.actions",
        *(name for name in MODULES if name.startswith("biblios_env.engine")),
    }


@pytest.mark.parametrize(
    "imports",
    [
        "import biblios_env",
        "import biblios_env, gymnasium",
        "import gymnasium, biblios_env",
        "import pettingzoo, biblios_env",
        "import biblios_env, pettingzoo",
    ],
)
def test_importing_the_package_registers_both_envs(imports: str) -> None:
    """``import biblios_env`` registers the PettingZoo env and the Gymnasium wrapper (README's
    Quickstart) without importing either library itself, whichever is imported first."""
    script = (
        "import sys\n"
        f"{imports}\n"
        "if 'gymnasium' not in sys.modules: assert 'pettingzoo' not in sys.modules\n"
        "import gymnasium, pettingzoo\n"
        "assert 'biblios_env.gym_env' not in sys.modules\n"
        "env = pettingzoo.make('aec', 'biblios/Biblios-v1', num_players=3)\n"
        "gym = gymnasium.make('biblios/BibliosGym-v1', num_players=2)\n"
        "print(env.metadata['name'], type(gym.unwrapped).__name__)\n"
    )
    finished = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, cwd=ROOT, check=False)
    assert finished.returncode == 0, finished.stderr
    assert finished.stdout.strip() == "biblios_v1 BibliosGymEnv"


def _package_of(module: str) -> str:
    """The experiments/ package a module belongs to (``experiments.replay`` for its submodules)."""
    parts = module.split(".")
    return ".".join(parts[:2])


def package_cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """A cycle of the directed graph, as a path that ends where it starts, or ``None``."""
    state: dict[str, int] = {}  # 1: on the current path, 2: done
    path: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        path.append(node)
        for successor in sorted(graph.get(node, ())):
            if state.get(successor) == 1:
                return [*path[path.index(successor) :], successor]
            if successor not in state and (found := visit(successor)) is not None:
                return found
        state[node] = 2
        path.pop()
        return None

    for node in sorted(graph):
        if node not in state and (found := visit(node)) is not None:
            return found
    return None


def test_the_cycle_check_finds_a_cycle() -> None:
    assert package_cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert package_cycle({"a": {"b"}, "b": {"c"}}) is None


def test_the_experiments_packages_import_each_other_without_a_cycle() -> None:
    graph: dict[str, set[str]] = {}
    for module, path in MODULES.items():
        if not module.startswith("experiments.") or "." not in module[len("experiments.") :]:
            continue  # the loose command modules import packages but are imported by none
        source = _package_of(module)
        for imported in imports_of(path):
            if imported.startswith("experiments.") and _package_of(imported) != source:
                graph.setdefault(source, set()).add(_package_of(imported))
    cycle = package_cycle(graph)
    assert cycle is None, "experiments/ packages import each other in a cycle: " + " -> ".join(cycle or [])


def other_answer_rules(source: str) -> list[int]:
    """The lines of ``source`` that judge a value as an action id by another rule than
    :func:`biblios_env.actions.is_action_id`: ``hasattr(x, "__index__")`` or ``operator.index(x)``
    (which let through any object with ``__index__``, where the envs refuse all but integers)."""
    lines = []
    for node in ast.walk(ast.parse(source)):
        if not isinstance(node, ast.Call):
            continue
        function = node.func
        if isinstance(function, ast.Name) and function.id == "hasattr" and len(node.args) == 2:
            name = node.args[1]
            if isinstance(name, ast.Constant) and name.value == "__index__":
                lines.append(node.lineno)
        elif (
            isinstance(function, ast.Attribute)
            and function.attr == "index"
            and isinstance(function.value, ast.Name)
            and function.value.id == "operator"
        ):
            lines.append(node.lineno)
    return lines


def test_the_answer_rule_check_finds_another_rule() -> None:
    assert other_answer_rules('ok = hasattr(action, "__index__")\nn = operator.index(action)\n') == [1, 2]
    assert other_answer_rules("ok = is_action_id(action)\nn = int(action)\n") == []


def test_every_game_loop_judges_an_answer_by_the_envs_rule() -> None:
    """The tournament, the server, the terminal game and the envs accept the same answers from an
    agent: one rule, :func:`biblios_env.actions.is_action_id`."""
    found = {module: lines for module, path in MODULES.items() if (lines := other_answer_rules(path.read_text()))}
    assert not found, f"answers judged by another rule than is_action_id: {found}"


#: A trainer's run record by name: ``run.json``, the earlier names of its settings files, and the
#: constants that named them.
RUN_RECORD_FILES: Final = frozenset({"run.json", "args.json", "settings.json", "config.json", "exploit_args.json"})
RUN_RECORD_CONSTANTS: Final = frozenset({"RUN_FILE", "SETTINGS_FILE", "CONFIG_FILE", "EXPLOIT_ARGS"})
#: The calls that write a file.
FILE_WRITES: Final = frozenset({"write_json", "write_bytes", "write_text", "dump"})
#: The one home of the run record, and the tournament, whose ``run.json`` is its own record of another shape.
RUN_RECORD_HOMES: Final = ("experiments.training.runs", "experiments.tournament")


def _names_run_record(node: ast.AST) -> bool:
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value.rsplit("/", 1)[-1] in RUN_RECORD_FILES
    name = node.id if isinstance(node, ast.Name) else node.attr if isinstance(node, ast.Attribute) else None
    return name in RUN_RECORD_CONSTANTS


def own_run_records(source: str) -> list[int]:
    """The lines of ``source`` that keep a run folder's record their own way: the refusal text
    "already holds a run" (one message, :mod:`experiments.training.runs`'), or a file write
    (``write_json``, ``write_text``, ``write_bytes``, ``json.dump``) of a file named as a run record."""
    lines = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and "already holds a run" in node.value:
            lines.add(node.lineno)
        elif isinstance(node, ast.Call):
            function = node.func
            called = function.id if isinstance(function, ast.Name) else getattr(function, "attr", None)
            if called in FILE_WRITES and any(_names_run_record(part) for part in ast.walk(node)):
                lines.add(node.lineno)
    return sorted(lines)


def test_the_run_record_check_finds_a_record_of_its_own() -> None:
    written = 'write_json(out / "args.json", args)\n(out / RUN_FILE).write_text(text)\n'
    written += 'raise E(f"{out} already holds a run")\n'
    assert own_run_records(written) == [1, 2, 3]
    assert own_run_records('write_json(out / "exploitability.json", r)\nstart_run(out, MODULE, s, held)\n') == []


def test_every_trainer_keeps_its_run_record_through_runs_py() -> None:
    """One record (``run.json``), one refusal of a folder that holds a run, one reading for
    ``--resume``: :mod:`experiments.training.runs`; no other module of experiments/ writes a run
    record or the refusal its own way (the tournament's ``run.json`` is its own, of another shape)."""
    found = {
        module: lines
        for module, path in MODULES.items()
        if module.startswith("experiments.")
        and not any(module == home or module.startswith(home + ".") for home in RUN_RECORD_HOMES)
        and (lines := own_run_records(path.read_text()))
    }
    assert not found, f"run records or the refusal written outside experiments/training/runs.py: {found}"


#: The one helper that moves a file written whole into place, and the trainer whose checkpoint is
#: a directory (RLlib's, evaluated before it is moved: no file to write whole).
WHOLE_FILE_HOMES: Final = ("experiments.training.runs", "experiments.training.rllib.training")


#: The module functions that move a file, and the names whose ``replace`` is no path's.
MODULE_MOVES: Final = frozenset({("os", "replace"), ("os", "rename"), ("shutil", "move")})
NOT_PATHS: Final = ("os", "shutil", "dataclasses")


def own_file_moves(source: str) -> list[int]:
    """The lines of ``source`` that move a file into place themselves: ``os.replace``,
    ``os.rename``, ``shutil.move`` or a path's one-argument ``.replace(target)`` / ``.rename``
    (a string's ``replace`` takes two, ``dataclasses.replace`` is no file's)."""
    lines = set()
    for node in ast.walk(ast.parse(source)):
        if not isinstance(node, ast.Call) or not isinstance(node.func, ast.Attribute):
            continue
        owner = node.func.value.id if isinstance(node.func.value, ast.Name) else None
        name = node.func.attr
        module_call = (owner, name) in MODULE_MOVES
        path_call = owner not in NOT_PATHS and name in ("replace", "rename") and len(node.args) == 1
        if module_call or path_call:
            lines.add(node.lineno)
    return sorted(lines)


def test_the_file_move_check_finds_a_move_of_its_own() -> None:
    moved = "os.replace(tmp, path)\ntemporary.replace(path)\nshutil.move(a, b)\n"
    assert own_file_moves(moved) == [1, 2, 3]
    kept = 'name.replace("a", "b")\ndataclasses.replace(args, out=out)\n'
    kept += "with written_whole(path) as tmp:\n    save(tmp)\n"
    assert own_file_moves(kept) == []


def test_every_trainer_writes_its_files_whole_through_runs_py() -> None:
    """One way to write a file whole (:func:`experiments.training.runs.written_whole`): no other
    module of the trainers moves a temporary file into place its own way."""
    found = {
        module: lines
        for module, path in MODULES.items()
        if module.startswith("experiments.training.")
        and module not in WHOLE_FILE_HOMES
        and (lines := own_file_moves(path.read_text()))
    }
    assert not found, f"files moved into place outside experiments/training/runs.py: {found}"


#: The most modules experiments/ holds at its top, ``__init__`` included: the command entry points
#: (``train_*``, ``openspiel_cfr``); everything else lives in a package of its job.
MAX_LOOSE_MODULES: Final = 6
#: The most lines one module of experiments/ or agents/ may have: past it, it holds several jobs.
MAX_MODULE_LINES: Final = 600


def test_experiments_keeps_few_loose_modules() -> None:
    loose = sorted(path.name for path in (ROOT / "experiments").glob("*.py"))
    assert len(loose) <= MAX_LOOSE_MODULES, f"{len(loose)} modules at experiments/ top: {loose}"


def test_no_module_of_the_experiments_or_the_agents_is_over_the_line_limit() -> None:
    long = {
        str(path.relative_to(ROOT)): count
        for folder in ("experiments", "agents")
        for path in (ROOT / folder).rglob("*.py")
        if (count := len(path.read_text().splitlines())) > MAX_MODULE_LINES
    }
    assert not long, f"modules over {MAX_MODULE_LINES} lines (split them by job): {long}"
