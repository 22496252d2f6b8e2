"""Commands run as a user runs them, stopped with Ctrl-C (SIGINT) and resumed: the shared steps
of the training commands' stop-and-resume tests."""

from __future__ import annotations

import signal
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def run_module(module: str, arguments: Sequence[str], timeout: float = 300) -> subprocess.CompletedProcess[str]:
    """``python -m module arguments`` in the clone, its output captured."""
    command = [sys.executable, "-m", module, *arguments]
    return subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=timeout, check=False)


def interrupt(
    module: str,
    arguments: Sequence[str],
    ready: Callable[[], bool],
    timeout: float = 120,
    signal_number: int = signal.SIGINT,
) -> str:
    """Start ``python -m module arguments``, send SIGINT (or ``signal_number``) once ``ready()``
    (polled; or after ``timeout``), and check that it stopped as every training command must: exit status 0, the
    line that resumes it (``--resume``), no traceback. Returns its standard output."""
    command = [sys.executable, "-m", module, *arguments]
    process = subprocess.Popen(command, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline and not ready():
        time.sleep(0.2)
    process.send_signal(signal_number)
    stdout, stderr = process.communicate(timeout=timeout)
    assert process.returncode == 0, stderr[-3000:]
    assert "Traceback" not in stdout + stderr, stderr[-3000:]
    assert f"resume with: python -m {module} --resume " in stdout, stdout[-3000:]
    return stdout
