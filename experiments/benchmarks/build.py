"""The compiled core against the pure-Python path: ``python -m experiments.benchmarks.build``.

Times the hot loops of every experiment on each build, in separate processes, alternated
round by round (A B C A B C ...) so that a change in the machine's speed hits every build
alike, and prints the speed-ups over the first build with the median and spread of the rounds:

* ``engine``: random legal playouts through :class:`~biblios_env.engine.Game`, decisions/s;
* ``raw_env``: steps of the PettingZoo ``raw_env`` with ``last()`` (observation and mask) at
  every step, steps/s;
* ``value``: decisions of the ``value`` heuristic on the positions of seeded value games, /s;
* ``ismcts``: searched bid decisions of the default ``ismcts`` agent (same positions, same
  seeds, so the same work on every build), decisions/s and simulated decisions/s.

The builds: ``pure`` (this checkout with ``BIBLIOS_PURE_PYTHON=1``), ``compiled`` (this
checkout's compiled core; refused if it is not built or out of date), and with ``--baseline
PATH`` a second checkout run on the pure path (say a ``git worktree`` of an older commit), so
a change can be measured against the code before it. Each round runs every workload once per
build; the inner runs use only the package's public API, so an older checkout runs them too.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any, Final

ROOT: Final = Path(__file__).resolve().parent.parent
#: The workloads and the rates each one reports.
WORKLOADS: Final = {
    "engine": ("decisions_per_s",),
    "raw_env": ("steps_per_s",),
    "value": ("decisions_per_s",),
    "ismcts": ("decisions_per_s", "simulated_per_s"),
}
PLAYERS: Final = 3


# ---------------------------------------------------------------------- the inner runs
def _engine(size: int) -> dict[str, float]:
    from biblios_env.engine import Game

    chooser = random.Random(0)
    decisions = 0
    start = time.perf_counter()
    for seed in range(size * 20):
        game = Game(PLAYERS, seed=seed)
        while not game.is_over:
            legal = game.legal_actions()
            game.apply(legal[int(chooser.random() * len(legal))])
            decisions += 1
    return {"decisions_per_s": decisions / (time.perf_counter() - start), "work": decisions}


def _raw_env(size: int) -> dict[str, float]:
    from biblios_env import raw_env

    environment = raw_env(num_players=PLAYERS)
    chooser = random.Random(0)
    steps = 0
    start = time.perf_counter()
    for seed in range(size * 3):
        environment.reset(seed=seed)
        for _agent in environment.agent_iter():
            observation, _reward, terminated, truncated, _info = environment.last()
            if terminated or truncated:
                environment.step(None)
                continue
            legal = observation["action_mask"].nonzero()[0]
            environment.step(int(legal[int(chooser.random() * len(legal))]))
            steps += 1
    return {"steps_per_s": steps / (time.perf_counter() - start), "work": steps}


def choice_positions(games: int, only_bids: bool, players: int = PLAYERS) -> list[Any]:
    """The decisions with a real choice of seeded value-vs-value games of ``players``, as agent
    observations."""
    from agents.heuristics import ValueAgent
    from biblios_env.agent_interface import AgentObservation
    from biblios_env.engine import Decision, Game
    from biblios_env.engine.views import player_view

    found = []
    for seed in range(games):
        game = Game(players, seed=seed)
        agents = [ValueAgent() for _ in range(players)]
        for seat, agent in enumerate(agents):
            agent.start_game(seat, players, seed=seed * 10 + seat)
        while not game.is_over:
            seat = game.current_player
            observation = AgentObservation(player_view(game.state, seat), list(game.legal_actions()))
            if len(observation.legal_actions) > 1 and (not only_bids or observation.view.decision == Decision.BID):
                found.append(observation)
            game.apply(agents[seat].act(observation))
    return found


def _value(size: int) -> dict[str, float]:
    from agents.heuristics import ValueAgent

    positions = choice_positions(3, only_bids=False)
    agent = ValueAgent()
    agent.start_game(0, PLAYERS, seed=0)
    start = time.perf_counter()
    for _ in range(size):
        for observation in positions:
            agent.seat = observation.view.seat
            agent.act(observation)
    decisions = size * len(positions)
    return {"decisions_per_s": decisions / (time.perf_counter() - start), "work": decisions}


def _ismcts(size: int) -> dict[str, float]:
    from agents.search import FlatSearch

    positions = choice_positions(2, only_bids=True)[::5][: size * 4]
    agent = FlatSearch(seed=0)
    simulated = 0
    start = time.perf_counter()
    for index, observation in enumerate(positions):
        agent.start_game(observation.view.seat, PLAYERS, seed=index)
        agent.act(observation)
        simulated += int(agent.last_search.get("simulated_decisions", 0))
    seconds = time.perf_counter() - start
    return {"decisions_per_s": len(positions) / seconds, "simulated_per_s": simulated / seconds, "work": simulated}


_INNER: Final = {"engine": _engine, "raw_env": _raw_env, "value": _value, "ismcts": _ismcts}


def _inner(workload: str, size: int) -> None:
    import biblios_env

    result = _INNER[workload](size)
    result["compiled"] = bool(getattr(biblios_env, "COMPILED", False))
    print(json.dumps(result))


# ---------------------------------------------------------------------- the comparison
def _builds(baseline: Path | None) -> dict[str, dict[str, str]]:
    """Per build, the environment its processes run in."""
    plain = {key: value for key, value in os.environ.items() if key not in ("PYTHONPATH", "BIBLIOS_PURE_PYTHON")}
    builds = {
        "pure": {**plain, "PYTHONPATH": str(ROOT), "BIBLIOS_PURE_PYTHON": "1"},
        "compiled": {**plain, "PYTHONPATH": str(ROOT), "BIBLIOS_PURE_PYTHON": "0"},
    }
    if baseline is not None:
        builds = {"baseline": {**plain, "PYTHONPATH": str(baseline.resolve()), "BIBLIOS_PURE_PYTHON": "1"}, **builds}
    return builds


def _run(workload: str, size: int, environment: dict[str, str]) -> dict[str, Any]:
    command = [sys.executable, str(Path(__file__).resolve()), "--inner", workload, "--size", str(size)]
    finished = subprocess.run(command, capture_output=True, text=True, env=environment, cwd=ROOT.parent)
    if finished.returncode != 0:
        raise RuntimeError(f"{' '.join(command)} failed:\n{finished.stderr[-3000:]}")
    result: dict[str, Any] = json.loads(finished.stdout.strip().splitlines()[-1])
    return result


def _table(runs: dict[str, dict[str, dict[str, list[float]]]], reference: str) -> str:
    """Markdown: per workload and rate, each build's median and its speed-up over ``reference``."""
    builds = list(next(iter(runs.values())))
    lines = [
        "| workload | " + " | ".join(builds) + " | " + " | ".join(f"{b} / {reference}" for b in builds[1:]) + " |",
        "|---" * (1 + 2 * len(builds) - 1) + "|",
    ]
    for workload, per_build in runs.items():
        for rate in WORKLOADS[workload]:
            medians = {build: statistics.median(per_build[build][rate]) for build in builds}
            ratios = []
            for build in builds[1:]:
                paired = [a / b for a, b in zip(per_build[build][rate], per_build[reference][rate], strict=True)]
                ratios.append(f"×{statistics.median(paired):.2f} ({min(paired):.2f}–{max(paired):.2f})")
            cells = " | ".join(f"{medians[build]:,.0f}" for build in builds)
            lines.append(f"| {workload} {rate.replace('_per_s', '/s')} | {cells} | " + " | ".join(ratios) + " |")
    return "\n".join(lines)


def _instructions(workload: str, size: int, environment: dict[str, str]) -> tuple[int, float]:
    """(instructions, work done) of one inner run under valgrind's callgrind."""
    from experiments.benchmarks.instructions import callgrind  # here: an inner run may use an older checkout

    arguments = [str(Path(__file__).resolve()), "--inner", workload, "--size", str(size)]
    instructions, printed = callgrind(arguments, environment, cwd=ROOT.parent)
    return instructions, float(json.loads(printed.strip().splitlines()[-1])["work"])


def count_instructions(builds: dict[str, dict[str, str]], workloads: list[str], size: int) -> str:
    """Markdown: instructions per unit of work (decision, step or simulated decision) of each
    build, from two runs of each workload (sizes 1 and ``1 + size``), so start-up cancels out."""
    units = {"engine": "decision", "raw_env": "step", "value": "decision", "ismcts": "simulated decision"}
    names = list(builds)
    lines = [
        "| workload | " + " | ".join(f"{build} (instructions per unit)" for build in names) + " | "
        + " | ".join(f"{build} / {names[0]}" for build in names[1:]) + " |",
        "|---" * (2 * len(names)) + "|",
    ]  # fmt: skip
    for workload in workloads:
        per_unit = {}
        for build, environment in builds.items():
            small, small_work = _instructions(workload, 1, environment)
            large, large_work = _instructions(workload, 1 + size, environment)
            per_unit[build] = (large - small) / (large_work - small_work)
        cells = " | ".join(f"{per_unit[build] / 1000:,.1f}k" for build in names)
        ratios = " | ".join(f"×{per_unit[names[0]] / per_unit[build]:.2f}" for build in names[1:])
        lines.append(f"| {workload} (per {units[workload]}) | {cells} | {ratios} |")
        print(lines[-1], file=sys.stderr, flush=True)
    return "\n".join(lines)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m experiments.benchmarks.build",
        description=__doc__.splitlines()[0],
        epilog="Run as python -m experiments.benchmarks.build. Needs the compiled core (pip install -e .).",
    )
    parser.add_argument("--baseline", type=Path, help="a second checkout, run on the pure path (e.g. a git worktree)")
    parser.add_argument("--rounds", type=int, default=5, help="alternated rounds (default: 5)")
    parser.add_argument("--size", type=int, default=5, help="work per inner run, in workload units (default: 5)")
    parser.add_argument("--workloads", nargs="+", choices=list(WORKLOADS), default=list(WORKLOADS))
    parser.add_argument("--out", type=Path, default=Path("results/build_benchmark.json"), help="where to save the JSON")
    parser.add_argument(
        "--instructions",
        action="store_true",
        help="count CPU instructions per unit of work under valgrind instead of timing (load-independent; slow)",
    )
    parser.add_argument("--inner", choices=list(WORKLOADS), help=argparse.SUPPRESS)
    return parser


def main(argv: list[str] | None = None) -> dict[str, Any]:
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.inner:
        _inner(args.inner, args.size)
        return {}
    if args.rounds < 1 or args.size < 1:
        parser.error(f"--rounds and --size must be at least 1, got {args.rounds} and {args.size}")
    if args.baseline is not None and not (args.baseline / "biblios_env" / "__init__.py").exists():
        parser.error(f"--baseline {args.baseline} is not a checkout of this project (no biblios_env/__init__.py)")
    builds = _builds(args.baseline)
    if args.instructions:
        if shutil.which("valgrind") is None:
            parser.error("--instructions needs valgrind (apt-get install valgrind)")
        table = count_instructions(builds, args.workloads, args.size)
        print(table)
        return {"instructions": table}
    runs: dict[str, dict[str, dict[str, list[float]]]] = {
        workload: {build: {rate: [] for rate in WORKLOADS[workload]} for build in builds} for workload in args.workloads
    }
    for round_index in range(args.rounds):
        for workload in args.workloads:
            for build, environment in builds.items():
                result = _run(workload, args.size, environment)
                if build == "compiled" and not result["compiled"]:
                    parser.error("the compiled core is not loaded (not built, or out of date): pip install -e .")
                for rate in WORKLOADS[workload]:
                    runs[workload][build][rate].append(result[rate])
        print(f"round {round_index + 1}/{args.rounds} done", file=sys.stderr, flush=True)
    reference = next(iter(builds))
    table = _table(runs, reference)
    print(table)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    saved = {"command": " ".join(["python -m experiments.benchmarks.build", *(argv or sys.argv[1:])]), "runs": runs}
    args.out.write_text(json.dumps(saved, indent=2))
    return saved


if __name__ == "__main__":
    main()
