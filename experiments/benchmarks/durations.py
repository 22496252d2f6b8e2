"""How long the documented commands take: ``python -m experiments.benchmarks.durations``.

Runs each command of :data:`COMMANDS` as a user would (a fresh process, in a scratch folder) and
writes the table of ``docs/durations.md`` with the seconds it took, the date and the machine, so
that every duration the README and the docs quote comes from a measured run. Run it before a
release on an otherwise idle machine (``--only KEY ...`` re-measures some; the other rows keep
their last measurement). The README's examples must each finish in under :data:`QUICK_LIMIT`.
"""

from __future__ import annotations

import argparse
import os
import platform
import re
import shlex
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from datetime import date
from pathlib import Path
from typing import Final

ROOT: Final = Path(__file__).resolve().parents[2]
DOCUMENT: Final = ROOT / "docs" / "durations.md"
#: The README's examples finish within this many seconds on the project's 2-core machine.
QUICK_LIMIT: Final = 120.0
BEGIN, END = "<!-- durations:begin -->", "<!-- durations:end -->"
COLUMNS: Final = ("key", "command", "seconds", "peak memory (GB)", "measured", "machine and load")


@dataclass(frozen=True)
class Command:
    """A documented command: ``quick`` ones are the README's examples (under :data:`QUICK_LIMIT`)."""

    key: str
    command: str
    quick: bool
    #: The test suite, the install and the build run in the clone, the rest in a scratch folder
    #: (``{scratch}`` in a command is that folder).
    cwd_is_clone: bool = False


COMMANDS: Final = (
    Command(
        "train-selfplay-quick",
        "python -m experiments.train_selfplay --out runs/sp --decisions 1000000 --eval-deals 20 --no-plot",
        quick=True,
    ),
    Command(
        "train-network-quick",
        "python -m experiments.train_network --out runs/net --players 2 --bootstrap-games 150 --iterations 1 "
        "--games 10 --teacher ismcts:iterations=20 --eval-deals 10 --eval-opponents value --no-progress",
        quick=True,
    ),
    Command(
        "train-ppo-quick",
        "python -m experiments.train_ppo --out runs/ppo --total-steps 16384 --bc-games 100 --dagger-rounds 1 "
        "--dagger-games 50 --eval-every 8192 --eval-deals 10 --eval-opponents value --no-progress",
        quick=True,
    ),
    Command(
        "train-rllib-quick",
        "python -m experiments.train_rllib --players 2 --iterations 5 --out runs/rllib --eval-every 5 --no-progress",
        quick=True,
    ),
    Command("train-ppo", "python -m experiments.train_ppo --seed 1 --out runs/ppo-2p --no-progress", quick=False),
    Command("install-again", "python -m pip install -e . --no-deps --quiet", quick=False, cwd_is_clone=True),
    Command(
        "build-core",
        "python setup.py --quiet build_ext --build-lib {scratch}/lib --build-temp {scratch}/temp",
        quick=False,
        cwd_is_clone=True,
    ),
    Command("test-suite", "python -m pytest -q -p no:cacheprovider", quick=False, cwd_is_clone=True),
    # The README's first command on a clone of the committed tree, with pip's cache as it is here.
    Command(
        "bootstrap-setup",
        'bash -c "git clone --quiet {clone} {scratch}/clone && python3 {scratch}/clone/bootstrap.py setup"',
        quick=False,
    ),
    Command("game-random", "python -m biblios_env --players 3 --seed 7", quick=False),
    Command(
        "tournament-replays",
        "python -m experiments.tournament --agents value hoarder --games 20 --out runs/vh --replay-html 3",
        quick=False,
    ),
    Command(
        "tournament-heuristics",
        "python -m experiments.tournament --agents value hoarder random --players 2 --deals 50 --out results/rr2",
        quick=False,
    ),
    Command(
        "tournament-ismcts",
        "python -m experiments.tournament --agents ismcts value random --deals 20 --keep-going --out runs/t",
        quick=False,
    ),
    Command(
        "tournament-ismcts-ray",
        "python -m experiments.tournament --agents ismcts value random --deals 20 --backend ray",
        quick=False,
    ),
    Command("torchrl-example", "python -m experiments.frameworks.torchrl_example", quick=False),
    Command("openspiel-duel", "python -m experiments.studies.openspiel_duel", quick=False),
    Command("openspiel-cfr-small", "python -m experiments.openspiel_cfr --preset small --out runs/cfr", quick=False),
    Command("benchmark-build", "python -m experiments.benchmarks.build", quick=False, cwd_is_clone=True),
    Command("benchmark-engine", "python -m experiments.benchmarks.engine", quick=False),
    Command("benchmark-instructions", "python -m experiments.benchmarks.instructions", quick=False),
)


def machine() -> str:
    """The machine class: CPU model and count, memory, Python."""
    model = platform.processor() or "cpu"
    cpuinfo = Path("/proc/cpuinfo")
    if cpuinfo.exists():
        found = re.search(r"model name\s*:\s*(.+)", cpuinfo.read_text())
        model = found.group(1).strip() if found else model
    memory = ""
    meminfo = Path("/proc/meminfo")
    if meminfo.exists():
        found = re.search(r"MemTotal:\s*(\d+) kB", meminfo.read_text())
        memory = f", {int(found.group(1)) / 2**20:.0f} GB" if found else ""
    return f"{os.cpu_count()} × {model}{memory}, Python {platform.python_version()}"


#: Runs a command and then prints, as its last line on stderr, the peak resident memory in kB of
#: the largest process it waited for (``ru_maxrss`` of its children), so each row can say how
#: much memory the command needs, not only how long it takes.
PEAK_MEMORY = (
    "import resource, subprocess, sys\n"
    "code = subprocess.run(sys.argv[1:]).returncode\n"
    "print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss, file=sys.stderr)\n"
    "sys.exit(code)\n"
)


def measure(command: Command) -> tuple[float, float]:
    """Wall-clock seconds and peak memory (GB, the largest process) of one run of ``command`` (a
    RuntimeError with its output if it fails)."""
    with tempfile.TemporaryDirectory(prefix="biblios-durations-") as scratch:
        cwd = ROOT if command.cwd_is_clone else Path(scratch)
        words = shlex.split(command.command.replace("{scratch}", scratch).replace("{clone}", str(ROOT)))
        argv = [sys.executable if word == "python" else word for word in words]
        began = time.perf_counter()
        finished = subprocess.run(
            [sys.executable, "-c", PEAK_MEMORY, *argv], cwd=cwd, capture_output=True, text=True, check=False
        )
        seconds = time.perf_counter() - began
    if finished.returncode != 0:
        output = (finished.stdout + finished.stderr)[-3000:]
        raise RuntimeError(f"{command.command} failed ({finished.returncode}), nothing recorded:\n{output}")
    peak_kb = float(finished.stderr.strip().splitlines()[-1])
    return seconds, peak_kb / 2**20


def read_table(text: str) -> dict[str, list[str]]:
    """The rows of the generated table in ``text``, by key: [key, command, seconds, peak memory,
    date, machine]."""
    block = text.split(BEGIN, 1)[1].split(END, 1)[0] if BEGIN in text else ""
    rows = {}
    for line in block.splitlines():
        cells = [cell.strip() for cell in line.strip().strip("|").split("|")]
        if len(cells) == len(COLUMNS) and cells[0].startswith("`"):  # a measurement, not the header or its rule
            rows[cells[0].strip("`")] = cells
    return rows


def table(rows: dict[str, list[str]]) -> str:
    lines = ["| " + " | ".join(COLUMNS) + " |", "|---|---|---:|---:|---|---|"]
    for command in COMMANDS:
        if command.key in rows:
            lines.append("| " + " | ".join(rows[command.key]) + " |")
    return "\n".join(lines)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m experiments.benchmarks.durations", description=__doc__.split("\n")[0]
    )
    parser.add_argument("--only", nargs="+", choices=[c.key for c in COMMANDS], help="measure only these commands")
    parser.add_argument("--quick", action="store_true", help="measure only the README's examples")
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    chosen = [c for c in COMMANDS if (args.only is None or c.key in args.only) and (c.quick or not args.quick)]
    text = DOCUMENT.read_text()
    rows = read_table(text)
    where, today = machine(), date.today().isoformat()
    for command in chosen:
        print(f"{command.key}: {command.command}", flush=True)
        seconds, gigabytes = measure(command)
        print(f"  {seconds:.1f} s, {gigabytes:.2f} GB", flush=True)
        if command.quick and seconds > QUICK_LIMIT:
            print(f"  over the README's limit of {QUICK_LIMIT:.0f} s: make the example smaller", flush=True)
        load = f"{where}; load {os.getloadavg()[0]:.1f}" if hasattr(os, "getloadavg") else where
        rows[command.key] = [
            f"`{command.key}`",
            f"`{command.command}`",
            f"{seconds:.0f}",
            f"{gigabytes:.2f}",
            today,
            load,
        ]
        head, _, rest = text.partition(BEGIN)
        text = head + BEGIN + "\n" + table(rows) + "\n" + END + rest.split(END, 1)[1]
        DOCUMENT.write_text(text)  # after every command: a long run stopped half-way keeps what it measured
    return 0


if __name__ == "__main__":
    sys.exit(main())
