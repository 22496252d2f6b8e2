#!/usr/bin/env python3
"""Two commands from a bare clone: ``python3 bootstrap.py play`` sets everything up and starts the
browser game; ``python3 bootstrap.py test`` sets up the same way if needed, then runs the whole
test suite (the quality gate ``.ci/gate``, then pytest). ``python3 bootstrap.py setup`` only sets up.

Why a script rather than a list of pip lines: the order matters (torch's CPU build is pinned by
``constraints.txt`` before any extra can ask for a multi-GB CUDA build), pip hides the minutes the
compiled core takes, and the browser tests need Chromium from the system's packages. The script
needs only Python 3.11 or newer and the standard library; what it installs goes into ``.venv/`` in
the clone (``BIBLIOS_VENV`` names another folder). It records what it installed from in the
environment, so a second run skips straight to the job, and sets up again after ``pyproject.toml``,
``setup.py`` or ``constraints.txt`` change; it recompiles the core after a compiled module's
source changes.
"""

from __future__ import annotations

import hashlib
import json
import os
import queue
import shutil
import subprocess
import sys
import threading
import time
from collections.abc import Sequence
from pathlib import Path
from typing import IO

MINIMUM_PYTHON = (3, 11)
ROOT = Path(__file__).resolve().parent
VENV = Path(os.environ.get("BIBLIOS_VENV") or ROOT / ".venv")
#: Pins torch to the CPU build (and keeps every extra from replacing it); read by every pip call here.
CONSTRAINTS = ROOT / "constraints.txt"
#: The files the installed environment follows: a change in any of them means setting up again.
SETUP_INPUTS = ("pyproject.toml", "setup.py", "constraints.txt")
STAMP = "biblios-setup.json"
#: Debian's Chromium, which the browser tests drive (tests/browser.py).
CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_INSTALL = "sudo apt-get update && sudo apt-get install -y chromium"
IN_CI = os.environ.get("CI", "").lower() == "true"
#: A silent compile step prints a line this often, so a log shows it is alive.
HEARTBEAT_SECONDS = 15.0


def say(message: str) -> None:
    print(f"bootstrap: {message}", flush=True)


def venv_bin(name: str) -> Path:
    return VENV / ("Scripts" if os.name == "nt" else "bin") / name


def run(command: Sequence[str | Path], env: dict[str, str] | None = None) -> None:
    """Run a step's command; a failure stops the setup, naming the command."""
    result = subprocess.run([str(part) for part in command], cwd=ROOT, env=env, check=False)
    if result.returncode != 0:
        shown = " ".join(str(part) for part in command)
        raise SystemExit(f"bootstrap: failed (exit {result.returncode}): {shown}")


def setup_digest() -> str:
    """What the environment was installed from: the setup files and the Python version."""
    digest = hashlib.sha256(f"{sys.version_info[0]}.{sys.version_info[1]}".encode())
    for name in SETUP_INPUTS:
        digest.update(name.encode() + b"\0" + (ROOT / name).read_bytes())
    return digest.hexdigest()


def project_table() -> dict[str, object]:
    import tomllib

    with (ROOT / "pyproject.toml").open("rb") as file:
        return tomllib.load(file)


def all_extras() -> list[str]:
    """Every optional extra in pyproject.toml: the whole suite needs all of them."""
    project = project_table()["project"]
    assert isinstance(project, dict)
    return sorted(project["optional-dependencies"])


def build_requirements() -> list[str]:
    """pyproject.toml's build requirements: the compile step runs setup.py in the environment."""
    build_system = project_table()["build-system"]
    assert isinstance(build_system, dict)
    return list(build_system["requires"])


def make_venv() -> None:
    if venv_bin("python").exists():
        return
    say(f"creating the virtual environment {VENV}")
    try:
        run([sys.executable, "-m", "venv", VENV])
    except SystemExit:
        raise SystemExit(
            "bootstrap: could not create a virtual environment; on Debian or Ubuntu install the venv module "
            "first (sudo apt-get install python3-venv)"
        ) from None


def install_packages() -> None:
    """The packages, unless the environment was already set up from the same files."""
    stamp = VENV / STAMP
    digest = setup_digest()
    if stamp.exists() and json.loads(stamp.read_text()).get("digest") == digest:
        say("packages: up to date")
        return
    pip: list[str | Path] = [venv_bin("python"), "-m", "pip", "install", "--constraint", CONSTRAINTS]
    started = time.monotonic()
    say("packages 1/2: the build tools")
    run([*pip, *build_requirements()])
    extras = ",".join(all_extras())
    say(f"packages 2/2: the project with every extra ({extras}) and the CPU torch (about 5 minutes the first time)")
    # The core is compiled by the next step, where its progress shows; here only the packages.
    run([*pip, "-e", f".[{extras}]"], env={**os.environ, "BIBLIOS_PURE_PYTHON": "1"})
    run([venv_bin("python"), "-m", "pip", "check"])
    stamp.write_text(json.dumps({"digest": digest, "extras": all_extras()}) + "\n")
    say(f"packages installed in {time.monotonic() - started:.0f} s")


def core_is_current() -> bool:
    """Whether the compiled core in the clone matches its sources and loads in the environment."""
    check = (
        "import importlib.util, sys\n"
        "spec = importlib.util.spec_from_file_location('core', 'biblios_env/compiled_core.py')\n"
        "core = importlib.util.module_from_spec(spec); spec.loader.exec_module(core)\n"
        "sys.exit(0 if core.build_is_current(core.ROOT) else 1)\n"
    )
    return subprocess.run([str(venv_bin("python")), "-c", check], cwd=ROOT, check=False).returncode == 0


def compile_core() -> None:
    """Compile the hot modules with mypyc in place, showing its progress (setup.py says why it
    cannot where there is no C compiler, and the pure-Python path is used)."""
    if core_is_current():
        say("compiled core: up to date")
        return
    say("compiling the core with mypyc (a few minutes on 2 cores; type-checking first, then one C file per module)")
    started = time.monotonic()
    process = subprocess.Popen(
        [str(venv_bin("python")), "setup.py", "build_ext", "--inplace"],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    assert process.stdout is not None
    lines: queue.Queue[str | None] = queue.Queue()
    threading.Thread(target=_forward, args=(process.stdout, lines), daemon=True).start()
    while True:
        try:
            line = lines.get(timeout=HEARTBEAT_SECONDS)
        except queue.Empty:  # mypyc type-checks for a minute without a word: say it still works
            line = "still working"
        if line is None:
            break
        print(f"  [{time.monotonic() - started:4.0f} s] {shorten(line.rstrip())}", flush=True)
    if process.wait() != 0:
        raise SystemExit(f"bootstrap: compiling the core failed (exit {process.returncode})")
    say(f"compiled core built in {time.monotonic() - started:.0f} s")


def _forward(stream: IO[str], lines: queue.Queue[str | None]) -> None:
    """Pass a process's output lines on, then ``None`` at its end."""
    for line in stream:
        lines.put(line)
    lines.put(None)


def shorten(line: str, width: int = 110) -> str:
    """A compiler command line cut to what says where the build is (the file it compiles)."""
    if len(line) <= width:
        return line
    words = line.split()
    source = next((word for word in words if word.endswith(".c")), None)
    return f"{words[0]} ... {source}" if source else line[: width - 3] + "..."


def install_chromium() -> None:
    """Debian's Chromium for the browser tests, where this user may install it."""
    if CHROMIUM.exists():
        return
    can_install = shutil.which("apt-get") is not None and hasattr(os, "geteuid") and os.geteuid() == 0
    if not can_install:
        say(f"Chromium is not at {CHROMIUM}: the browser tests will be skipped; install it with: {CHROMIUM_INSTALL}")
        return
    say("installing Debian's Chromium for the browser tests")
    run(["apt-get", "update", "-qq"])
    run(["apt-get", "install", "-y", "-qq", "chromium"], env={**os.environ, "DEBIAN_FRONTEND": "noninteractive"})


def report() -> None:
    """Which build and which torch the environment has; in CI anything but the compiled core
    and the pinned torch fails."""
    check = (
        "import sys, torch, biblios_env\n"
        "print(f'bootstrap: compiled core loaded: {biblios_env.COMPILED}; torch {torch.__version__}')\n"
        "sys.exit(0 if biblios_env.COMPILED or not sys.argv[1] == 'ci' else 3)\n"
    )
    run([venv_bin("python"), "-c", check, "ci" if IN_CI else "local"])


def setup() -> None:
    if sys.version_info < MINIMUM_PYTHON:
        raise SystemExit(f"bootstrap: needs Python 3.11 or newer, this is {sys.version.split()[0]}")
    started = time.monotonic()
    make_venv()
    install_packages()
    compile_core()
    install_chromium()
    report()
    say(f"set up in {time.monotonic() - started:.0f} s; use it with: source {os.path.relpath(VENV)}/bin/activate")


def play(arguments: Sequence[str]) -> int:
    """The browser game (``biblios-serve``, with any of its options); Ctrl-C stops it."""
    say("starting the browser game; next: the README's 'Play a game', or `biblios-serve --help`")
    command = [str(venv_bin("biblios-serve")), *arguments]
    os.execv(command[0], command)
    return 0  # not reached: the server replaces this process


def test(arguments: Sequence[str]) -> int:
    """The quality gate, then pytest (with any of its options) in the environment."""
    env = {**os.environ, "PATH": f"{venv_bin('')}{os.pathsep}{os.environ.get('PATH', '')}"}
    say("the quality gate (.ci/gate: ruff, mypy)")
    run(["bash", ROOT / ".ci" / "gate"], env=env)
    say("the test suite (python -m pytest)")
    return subprocess.run([str(venv_bin("python")), "-m", "pytest", *arguments], cwd=ROOT, env=env).returncode


USAGE = """usage: python3 bootstrap.py {play,test,setup} [ARGS...]

  play   set up (first time: about 10 minutes), then the browser game at http://127.0.0.1:8000
         (ARGS go to biblios-serve, e.g. --port 8080)
  test   set up if needed, then the quality gate and the whole test suite (ARGS go to pytest)
  setup  only set up: .venv with every extra, the CPU torch, the compiled core, Chromium"""


def main(argv: Sequence[str]) -> int:
    if not argv or argv[0] not in ("play", "test", "setup"):
        print(USAGE, file=sys.stderr)
        return 2
    command, arguments = argv[0], argv[1:]
    try:
        setup()
    except KeyboardInterrupt:
        print("\nbootstrap: stopped; run the same command again to continue the set-up", file=sys.stderr)
        return 130
    if command == "play":
        return play(arguments)
    if command == "test":
        return test(arguments)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
