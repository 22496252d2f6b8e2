"""The two commands: the README's set-up-and-play and set-up-and-test lines, ``.ci/run`` being
exactly the test line, what ``bootstrap.py`` installs and when it skips, the browser game it
starts (it answers, then stops on Ctrl-C with status 0), and the browser tests' skip without
Chromium."""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import sys
import urllib.request
from pathlib import Path

import browser
import pytest
from setup_script import ROOT, bootstrap

PLAY = "python3 bootstrap.py play"
TEST = "python3 bootstrap.py test"


def readme_commands() -> list[str]:
    """The commands of the README's first code block."""
    block = re.search(r"```bash\n(.*?)```", (ROOT / "README.md").read_text(), re.DOTALL)
    assert block is not None, "the README has no bash block"
    return [line.split("#")[0].strip() for line in block.group(1).splitlines() if line.split("#")[0].strip()]


def test_the_readme_opens_with_the_two_commands() -> None:
    readme = (ROOT / "README.md").read_text()
    assert readme_commands() == [PLAY, TEST]
    assert readme.index(PLAY) < readme.index("## "), "the two commands come before the first section"


def test_ci_runs_exactly_the_readme_test_command() -> None:
    lines = [line.strip() for line in (ROOT / ".ci" / "run").read_text().splitlines()]
    commands = [line for line in lines if line and not line.startswith("#") and not line.startswith("set ")]
    assert commands == ['cd "$(dirname "$0")/.."', f"exec {TEST}"]


def test_the_test_command_runs_the_gate_then_pytest(monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[list[str]] = []
    monkeypatch.setattr(bootstrap, "run", lambda command, env=None: calls.append([str(part) for part in command]))

    class Finished:
        returncode = 5

    monkeypatch.setattr(bootstrap.subprocess, "run", lambda command, **kwargs: calls.append(command) or Finished())
    assert bootstrap.test(["-k", "rules"]) == 5
    assert calls == [
        ["bash", str(ROOT / ".ci" / "gate")],
        [str(bootstrap.venv_bin("python")), "-m", "pytest", "-k", "rules"],
    ]


def test_every_pip_call_pins_the_cpu_torch(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    assert "torch==2.13.0" in (ROOT / "constraints.txt").read_text().splitlines()
    calls: list[list[str]] = []
    monkeypatch.setattr(bootstrap, "VENV", tmp_path)
    monkeypatch.setattr(bootstrap, "run", lambda command, env=None: calls.append([str(part) for part in command]))
    bootstrap.install_packages()
    installs = [call for call in calls if call[3:4] == ["install"]]
    assert len(installs) == 2
    for call in installs:
        assert call[4:6] == ["--constraint", str(ROOT / "constraints.txt")]
    extras = ",".join(sorted(bootstrap.project_table()["project"]["optional-dependencies"]))
    assert installs[1][-2:] == ["-e", f".[{extras}]"]
    assert "pip" in calls[-1] and "check" in calls[-1]


def test_setup_is_skipped_when_the_environment_matches_its_files(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    calls: list[object] = []
    monkeypatch.setattr(bootstrap, "VENV", tmp_path)
    monkeypatch.setattr(bootstrap, "run", lambda command, env=None: calls.append(command))
    bootstrap.install_packages()
    done = len(calls)
    assert json.loads((tmp_path / bootstrap.STAMP).read_text())["digest"] == bootstrap.setup_digest()
    bootstrap.install_packages()
    assert len(calls) == done, "a second set-up from the same files installs nothing"
    (tmp_path / bootstrap.STAMP).write_text(json.dumps({"digest": "older"}))
    bootstrap.install_packages()
    assert len(calls) == 2 * done, "a set-up from other files installs again"


def test_the_digest_follows_each_setup_file(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    for name in bootstrap.SETUP_INPUTS:
        shutil.copy(ROOT / name, tmp_path / name)
    monkeypatch.setattr(bootstrap, "ROOT", tmp_path)
    digests = {bootstrap.setup_digest()}
    for name in bootstrap.SETUP_INPUTS:
        with (tmp_path / name).open("a") as file:
            file.write("\n# changed\n")
        digests.add(bootstrap.setup_digest())
    assert len(digests) == 1 + len(bootstrap.SETUP_INPUTS)


def test_an_unknown_command_prints_the_usage(capsys: pytest.CaptureFixture[str]) -> None:
    assert bootstrap.main(["serve"]) == 2
    assert "usage: python3 bootstrap.py {play,test,setup}" in capsys.readouterr().err


def test_without_chromium_the_browser_tests_skip_with_the_install_command(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(browser, "CHROMIUM", Path("/nonexistent/chromium"))
    monkeypatch.setattr(browser, "IN_CI", False)
    skipped = pytest.raises(pytest.skip.Exception, match=re.escape(bootstrap.CHROMIUM_INSTALL))
    with skipped, browser.chromium("replay page"):
        pass
    monkeypatch.setattr(browser, "IN_CI", True)
    with pytest.raises(pytest.fail.Exception, match="needs Chromium"), browser.chromium("replay page"):
        pass


def test_setup_says_how_to_install_chromium_where_it_may_not(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(bootstrap, "CHROMIUM", Path("/nonexistent/chromium"))
    monkeypatch.setattr(bootstrap.shutil, "which", lambda name: None)
    monkeypatch.setattr(bootstrap, "run", lambda command, env=None: pytest.fail(f"ran {command}"))
    bootstrap.install_chromium()
    assert bootstrap.CHROMIUM_INSTALL in capsys.readouterr().out


def test_long_compiler_lines_are_cut_to_the_file_they_compile() -> None:
    line = "x86_64-linux-gnu-gcc -Wsign-compare -DNDEBUG -g -O3 " * 4 + "-c build/__native_biblios.c -o build/x.o"
    assert bootstrap.shorten(line) == "x86_64-linux-gnu-gcc ... build/__native_biblios.c"
    assert bootstrap.shorten("running build_ext") == "running build_ext"


def test_the_play_command_serves_the_game_and_stops_on_ctrl_c() -> None:
    """In the environment the set-up made (CI's): the command's start, an answer, Ctrl-C, status 0."""
    prefix = Path(sys.prefix)
    stamp = prefix / bootstrap.STAMP
    if not stamp.exists() or json.loads(stamp.read_text()).get("digest") != bootstrap.setup_digest():
        if os.environ.get("CI", "").lower() == "true":
            pytest.fail(f"CI's tests run outside the environment {TEST} set up (sys.prefix {prefix})")
        pytest.skip(f"runs in the environment the set-up makes: {TEST}")
    process = subprocess.Popen(
        [sys.executable, str(ROOT / "bootstrap.py"), "play", "--port", "0"],
        cwd=ROOT,
        env={**os.environ, "BIBLIOS_VENV": str(prefix)},
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    assert process.stdout is not None
    try:
        address = None
        for line in process.stdout:
            found = re.search(r"open (http://127\.0\.0\.1:\d+/)", line)
            if found:
                address = found.group(1)
                break
        assert address is not None, "the server never printed its address"
        with urllib.request.urlopen(address, timeout=30) as answer:
            assert answer.status == 200
            assert b"Biblios" in answer.read()
        process.send_signal(signal.SIGINT)
        rest, _ = process.communicate(timeout=30)
    finally:
        if process.poll() is None:
            process.kill()
    assert process.returncode == 0
    assert "Server stopped." in rest
