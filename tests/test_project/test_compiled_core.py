"""The compiled core and the pure-Python path: one source, two builds, the same games.

* **Differential**: ``tests/differential_games.py`` plays seeded games (every player count, both
  penalty variants, random play, both heuristics, the default search, the PettingZoo env) on
  each build in its own process; every step's fingerprint must agree.
* **The pure path's suites**: the rules and environment suites run again on the pure path
  (the rest of this suite runs on whichever build is installed, the compiled one in CI).
* **Choosing the build**: ``BIBLIOS_PURE_PYTHON=1`` loads the ``.py`` files; a bad value is an
  error naming it; an edited ``.py`` is never shadowed by its stale compiled module (the pure
  path loads, with one warning naming the command that rebuilds).

Tests that need the compiled core skip with the reason when it is not built here (a machine
without a C compiler), except in CI (``CI=true``), which builds it and where a skip would hide
a broken build.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from biblios_env import compiled_core

ROOT = Path(__file__).resolve().parents[2]
BUILT = compiled_core.extension_path(compiled_core.DIGESTS_MODULE) is not None
#: The suites the pure path runs again: rules, worked examples, engine and environments.
PURE_PATH_SUITES = (
    "test_engine/test_setup.py",
    "test_engine/test_gifts.py",
    "test_engine/test_church.py",
    "test_engine/test_auctions.py",
    "test_engine/test_scoring.py",
    "test_engine/test_state.py",
    "test_engine/test_worked_examples.py",
    "test_engine/test_cards_and_actions.py",
    "test_engine/test_visibility.py",
    "test_engine/test_views.py",
    "test_engine/test_sampling.py",
    "test_env/test_observations.py",
    "test_engine/test_game_log.py",
    "test_env/test_playthroughs.py",
    "test_env/test_pettingzoo_env.py",
    "test_env/test_gym_env.py",
    "test_env/test_leakage.py",
    "test_env/test_vector.py",
)


def _needs_compiled_core() -> None:
    if BUILT:
        return
    reason = "the compiled core is not built here (no C compiler at install time)"
    if os.environ.get("CI", "").lower() == "true":
        pytest.fail(f"{reason}: CI must build it (.ci/run installs with a compiler)")
    pytest.skip(reason)


def _python(arguments: list[str], pure: str | None, cwd: Path = ROOT, **env: str) -> subprocess.CompletedProcess[str]:
    """Run the interpreter with ``BIBLIOS_PURE_PYTHON`` set to ``pure`` (unset for ``None``)."""
    environment = {key: value for key, value in os.environ.items() if key != compiled_core.PURE_VARIABLE}
    if pure is not None:
        environment[compiled_core.PURE_VARIABLE] = pure
    environment.update(env)
    return subprocess.run(
        [sys.executable, *arguments], capture_output=True, text=True, env=environment, cwd=cwd, timeout=900
    )


def _which_build(pure: str | None, cwd: Path = ROOT, **env: str) -> dict[str, object]:
    code = (
        "import json, biblios_env, agents.search.flat, biblios_env.engine.state as state;"
        "print(json.dumps({'compiled': biblios_env.COMPILED, 'state': state.__file__,"
        " 'search': agents.search.flat.__file__}))"
    )
    finished = _python(["-W", "always", "-c", code], pure, cwd, **env)
    assert finished.returncode == 0, finished.stderr
    result: dict[str, object] = json.loads(finished.stdout)
    result["stderr"] = finished.stderr
    return result


def test_pure_variable_loads_the_source_files() -> None:
    loaded = _which_build("1")
    assert loaded["compiled"] is False
    assert str(loaded["state"]).endswith("state.py") and str(loaded["search"]).endswith("flat.py")
    assert "out of date" not in str(loaded["stderr"])


def test_compiled_core_loads_by_default() -> None:
    _needs_compiled_core()
    for pure in (None, "0", ""):
        loaded = _which_build(pure)
        assert loaded["compiled"] is True, loaded["stderr"]
        assert not str(loaded["state"]).endswith(".py")
        assert not str(loaded["search"]).endswith(".py")


def test_a_bad_pure_variable_is_an_error_naming_it() -> None:
    finished = _python(["-c", "import biblios_env"], "yes")
    assert finished.returncode != 0
    assert "BIBLIOS_PURE_PYTHON must be 1" in finished.stderr and "'yes'" in finished.stderr


def test_an_edited_source_is_not_shadowed_by_its_stale_compiled_module(tmp_path: Path) -> None:
    """A copy of the built packages: as built, the compiled core loads; after one ``.py`` is
    edited, the pure path loads (the edit is live) with one warning naming the rebuild command."""
    _needs_compiled_core()
    for package in ("biblios_env", "agents"):
        shutil.copytree(ROOT / package, tmp_path / package, ignore=shutil.ignore_patterns("__pycache__"))
    as_built = _which_build(None, tmp_path, PYTHONPATH=str(tmp_path))
    assert as_built["compiled"] is True, as_built["stderr"]
    assert str(as_built["state"]).startswith(str(tmp_path))

    edited = tmp_path / "agents" / "heuristics.py"
    edited.write_text(edited.read_text() + "\nEDITED_AFTER_THE_BUILD = True\n")
    code = "import biblios_env, agents.heuristics as h; "
    code += "print(biblios_env.COMPILED, h.EDITED_AFTER_THE_BUILD, h.__file__)"
    finished = _python(["-W", "always", "-c", code], None, tmp_path, PYTHONPATH=str(tmp_path))
    assert finished.returncode == 0, finished.stderr
    assert finished.stdout.split()[:2] == ["False", "True"]
    assert finished.stdout.split()[2] == str(edited)
    assert finished.stderr.count("out of date") == 1
    assert compiled_core.REBUILD_COMMAND in finished.stderr and "agents.heuristics" in finished.stderr


def test_an_install_reuses_a_current_build_and_never_a_stale_one(tmp_path: Path) -> None:
    """``build_is_current`` (what an editable install asks before compiling): true for a copy of
    the built packages, false once one compiled module's source is edited or one extension is
    missing; an install then compiles again."""
    _needs_compiled_core()
    for package in ("biblios_env", "agents"):
        shutil.copytree(ROOT / package, tmp_path / package, ignore=shutil.ignore_patterns("__pycache__"))
    assert compiled_core.build_is_current(tmp_path)
    edited = tmp_path / "biblios_env" / "engine" / "scoring.py"
    original = edited.read_text()
    edited.write_text(original + "\n# edited after the build\n")
    assert not compiled_core.build_is_current(tmp_path)
    edited.write_text(original)
    assert compiled_core.build_is_current(tmp_path)
    extension = compiled_core.extension_path("agents.heuristics", tmp_path)
    assert extension is not None
    extension.unlink()
    assert not compiled_core.build_is_current(tmp_path)


def _games(pure: str) -> dict[str, object]:
    finished = _python([str(ROOT / "tests" / "differential_games.py")], pure)
    assert finished.returncode == 0, finished.stderr[-3000:]
    result: dict[str, object] = json.loads(finished.stdout)
    return result


def test_both_builds_play_the_same_games_step_for_step() -> None:
    _needs_compiled_core()
    compiled, pure = _games("0"), _games("1")
    assert compiled["compiled"] is True and pure["compiled"] is False
    compiled_games, pure_games = compiled["games"], pure["games"]
    assert isinstance(compiled_games, dict) and isinstance(pure_games, dict)
    assert compiled_games.keys() == pure_games.keys()
    for name, steps in pure_games.items():
        other = compiled_games[name]
        first = next((i for i, (a, b) in enumerate(zip(steps, other, strict=False)) if a != b), None)
        assert first is None and len(steps) == len(other), (
            f"{name}: the builds differ from step {first} on ({len(steps)} vs {len(other)} steps)"
        )


def test_the_rules_and_environment_suites_pass_on_the_pure_path() -> None:
    if os.environ.get(compiled_core.PURE_VARIABLE) == "1":
        pytest.skip("this run is on the pure path already")
    suites = [str(ROOT / "tests" / name) for name in PURE_PATH_SUITES]
    finished = _python(["-m", "pytest", "-q", "-p", "no:cacheprovider", *suites], "1")
    assert finished.returncode == 0, finished.stdout[-5000:] + finished.stderr[-2000:]


@pytest.mark.parametrize("pure", ["1", None])
def test_reloading_the_package_keeps_its_build(pure: str | None) -> None:
    code = (
        "import importlib, biblios_env, agents.search.flat; before = biblios_env.COMPILED;"
        "importlib.reload(biblios_env); print(before, biblios_env.COMPILED)"
    )
    finished = _python(["-c", code], pure)
    assert finished.returncode == 0, finished.stderr
    before, after = finished.stdout.split()
    assert before == after
