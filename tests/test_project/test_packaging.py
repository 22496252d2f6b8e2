"""A wheel built from the repository works outside a clone.

The wheel is built the way a user builds it (``pip wheel . --no-deps``, with pip's isolated
build environment and the ``[build-system]`` that pyproject.toml declares) from a copy of the
files a clone has (``git ls-files``: tracked files and new ones not ignored), so the test
never writes ``build/`` or ``*.egg-info`` into the working tree that others are using, and
``tests/`` and ``notebooks/`` are in the copy: their absence from the wheel is a real check.
One wheel is built per test session: a few minutes where a C compiler is, since the wheel
carries the compiled core (``setup.py``), about 5 s without one.

The install check puts the wheel into a *fresh* virtual environment with ``pip install
--no-deps`` and plays from there, in a folder outside the clone. Why ``--no-deps`` and how the
dependencies are found: resolving numpy, gymnasium and pettingzoo from a package index would
take tens of seconds and need the network, so the fresh environment instead gets one ``.pth``
line naming the site-packages of the interpreter running the tests. Python appends that folder
to ``sys.path`` *after* the fresh environment's own site-packages and does not run the
``.pth`` files inside it, so the clone's editable install (a ``.pth`` hook there) stays
inactive: ``biblios_env``, ``agents`` and ``experiments`` can only come from the wheel, which
the test asserts through their ``__file__``. The dependencies themselves are declared in the
wheel's metadata, checked separately. The whole module runs in a few
minutes, most of it compiling; it is part of the default run, since the wheel is what users install.
"""

from __future__ import annotations

import configparser
import inspect
import os
import re
import shutil
import subprocess
import sys
import sysconfig
import zipfile
from importlib import import_module
from pathlib import Path

import pytest

from biblios_env import compiled_core

ROOT = Path(__file__).resolve().parents[2]
#: The console scripts of pyproject.toml and the functions they call.
CONSOLE_SCRIPTS = {
    "biblios-play": "experiments.play:main",
    "biblios-replay": "experiments.replay:main",
    "biblios-serve": "experiments.serve:main",
    "biblios-tournament": "experiments.tournament:main",
    "biblios-train": "experiments.train_network:main",
    "biblios-train-selfplay": "experiments.train_selfplay:main",
}
SHIPPED_POLICY_FILES = (
    "ppo_2p.npz",
    "ppo_2p.json",
    "ppo_2p_learning_curve.png",
    "network.npz",
    "network_2p.npz",
    "network_3p.npz",
    "network_4p.npz",
    "exploiters/value_2p.npz",
    "exploiters/network_2p.npz",
    "exploiters/network_3p.npz",
    "exploiters/network_4p.npz",
    "README.md",
)
PACKAGES = ("biblios_env", "agents", "experiments")


def _run(command: list[str | Path], **kwargs: object) -> subprocess.CompletedProcess[str]:
    """Run a command; on failure, fail the test with its output (pip's errors say what went wrong)."""
    result = subprocess.run([str(part) for part in command], capture_output=True, text=True, **kwargs)  # type: ignore[call-overload]
    if result.returncode != 0:
        pytest.fail(f"{' '.join(map(str, command))} exited {result.returncode}:\n{result.stdout}\n{result.stderr}")
    return result


def _clone_files() -> list[str]:
    """The files a clone would have: tracked ones and new ones that .gitignore does not exclude."""
    listed = _run(["git", "ls-files", "--cached", "--others", "--exclude-standard", "-z"], cwd=ROOT).stdout
    return [name for name in listed.split("\0") if name and (ROOT / name).is_file()]


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The wheel built from a copy of the clone's files."""
    if shutil.which("git") is None or not (ROOT / ".git").exists():
        pytest.fail("the packaging test needs a git checkout to know which files a clone has")
    work = tmp_path_factory.mktemp("wheel")
    source = work / "source"
    for name in _clone_files():
        target = source / name
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(ROOT / name, target)
    _run([sys.executable, "-m", "pip", "wheel", source, "--no-deps", "--quiet", "--wheel-dir", work / "dist"])
    (built,) = (work / "dist").glob("*.whl")
    return built


def _names(wheel: Path) -> list[str]:
    with zipfile.ZipFile(wheel) as archive:
        return archive.namelist()


def _dist_info_file(wheel: Path, name: str) -> str:
    with zipfile.ZipFile(wheel) as archive:
        (path,) = [entry for entry in archive.namelist() if entry.endswith(f".dist-info/{name}")]
        return archive.read(path).decode()


def test_wheel_ships_the_policies_as_package_data(wheel: Path) -> None:
    names = set(_names(wheel))
    missing = [name for name in SHIPPED_POLICY_FILES if f"agents/policies/{name}" not in names]
    assert not missing, f"the wheel lacks agents/policies/{missing}"


def test_wheel_ships_the_page_files(wheel: Path) -> None:
    """Every replay page and the play page (experiments.serve) inline the table's board, style and
    drawing and their own template and scripts from the installed package."""
    names = set(_names(wheel))
    files = [f"table/{name}" for name in ("board.html", "table.css", "table.js")]
    files += [f"replay/{name}" for name in ("page.html", "page.js")]
    files += [f"serve/{name}" for name in ("page.html", "page.css", "page.js")]
    missing = [name for name in files if f"experiments/{name}" not in names]
    assert not missing, f"the wheel lacks experiments/{missing}"


def test_wheel_carries_the_compiled_core_when_built_with_a_compiler(wheel: Path) -> None:
    """Built where a C compiler is (always in CI), the wheel holds every compiled module beside its
    source, the group's shared library and the recorded source digests."""
    compiler = (sysconfig.get_config_var("CC") or "cc").split()[0]
    if shutil.which(compiler) is None:
        pytest.skip(f"no C compiler ({compiler}) here: the wheel is pure Python")
    names = _names(wheel)
    suffix = re.compile(r"\.cpython-[^/]*\.so$|\.pyd$")
    extensions = {suffix.sub("", name).replace("/", ".") for name in names if suffix.search(name)}
    expected = {*compiled_core.COMPILED_MODULES, compiled_core.DIGESTS_MODULE, compiled_core.GROUP_NAME + "__mypyc"}
    assert expected <= extensions, f"missing compiled modules: {sorted(expected - extensions)}"
    sources = {name.removesuffix(".py").replace("/", ".") for name in names if name.endswith(".py")}
    assert set(compiled_core.COMPILED_MODULES) <= sources, "the wheel must carry the pure-Python source too"


def test_wheel_holds_the_packages_and_no_tests_or_notebooks(wheel: Path) -> None:
    top_level = {name.split("/", 1)[0] for name in _names(wheel)}
    packages = {name for name in top_level if not name.endswith(".dist-info")}
    assert packages == set(PACKAGES), f"top-level entries of the wheel: {sorted(top_level)}"
    assert not [name for name in _names(wheel) if "/tests/" in name or name.endswith(".ipynb")]


def test_wheel_declares_the_console_scripts(wheel: Path) -> None:
    entry_points = configparser.ConfigParser()
    entry_points.read_string(_dist_info_file(wheel, "entry_points.txt"))
    assert dict(entry_points["console_scripts"]) == CONSOLE_SCRIPTS


@pytest.mark.parametrize("script", CONSOLE_SCRIPTS)
def test_console_script_targets_take_argv_none(script: str) -> None:
    """A console script calls ``main()`` with no arguments: ``argv`` must default to None (sys.argv)."""
    module_name, function_name = CONSOLE_SCRIPTS[script].split(":")
    main = getattr(import_module(module_name), function_name)
    argv = inspect.signature(main).parameters.get("argv")
    assert argv is not None and argv.default is None, f"{CONSOLE_SCRIPTS[script]} must accept argv=None"


def test_wheel_metadata_declares_the_dependencies(wheel: Path) -> None:
    requirements = [
        line.split(":", 1)[1].strip()
        for line in _dist_info_file(wheel, "METADATA").splitlines()
        if line.startswith("Requires-Dist:")
    ]
    runtime = {re.match(r"[\w.-]+", requirement).group() for requirement in requirements if ";" not in requirement}  # type: ignore[union-attr]
    expected = {"numpy", "gymnasium", "pettingzoo", "mypy_extensions", "librt", "threadpoolctl"}
    assert runtime == expected, f"runtime requirements: {requirements}"


def test_notebooks_extra_installs_a_jupyter_front_end(wheel: Path) -> None:
    """``pip install "biblios-env[notebooks]"`` must give a user something that opens the notebooks."""
    extra = [
        line.split(":", 1)[1].split(";")[0].strip()
        for line in _dist_info_file(wheel, "METADATA").splitlines()
        if line.startswith("Requires-Dist:") and 'extra == "notebooks"' in line
    ]
    names = {re.match(r"[\w.-]+", requirement).group() for requirement in extra}  # type: ignore[union-attr]
    assert names & {"notebook", "jupyterlab"} and "nbconvert" in names, f"notebooks extra: {extra}"


PLAY_ONE_MOVE = """
import sys
from pathlib import Path

import agents, biblios_env, experiments
from agents import make_agent
from biblios_env.agent_interface import AgentObservation
from biblios_env.engine import Game, player_view

environment = Path(sys.prefix).resolve()
for module in (agents, biblios_env, experiments):
    assert environment in Path(module.__file__).resolve().parents, f"{module.__name__} from {module.__file__}"
agent = make_agent("ppo")
assert environment in Path(agent.path).resolve().parents, f"policy from {agent.path}"
game = Game(num_players=2, seed=3)
seat = game.current_player
agent.start_game(seat, 2, seed=0)
legal = list(game.legal_actions())
action = agent.act(AgentObservation(player_view(game.state, seat), legal))
assert action in legal, f"{action} is not among {legal}"
game.apply(action)
print("played", action, "compiled" if biblios_env.COMPILED else "pure")
"""


def test_installed_wheel_plays_a_ppo_move_outside_a_clone(wheel: Path, tmp_path: Path) -> None:
    environment = tmp_path / "venv"
    _run([sys.executable, "-m", "venv", "--without-pip", environment])
    python = environment / "bin" / "python"
    site_packages = _run([python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"]).stdout.strip()
    (Path(site_packages) / "test-dependencies.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    _run([sys.executable, "-m", "pip", "--python", python, "install", "--no-deps", "--no-index", "--quiet", wheel])
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    clean_environment = {key: value for key, value in os.environ.items() if key != "PYTHONPATH"}
    played = _run([python, "-c", PLAY_ONE_MOVE], cwd=outside, env=clean_environment)
    assert played.stdout.startswith("played ")
    if any(name.endswith(".so") for name in _names(wheel)):
        assert played.stdout.split()[-1] == "compiled", "the installed wheel did not load its compiled core"
    for script in CONSOLE_SCRIPTS:
        usage = _run([environment / "bin" / script, "--help"], cwd=outside, env=clean_environment)
        assert "usage:" in usage.stdout
