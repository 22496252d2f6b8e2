"""Speed benchmark of the engine and the PettingZoo environment (random legal play).

Prints, for 2, 3 and 4 players, random-playout games per second of the engine,
environment steps per second through the AEC API (``last()`` builds the acting agent's
observation and mask at every step) for ``raw_env`` and the wrapped ``env()``, and player
views built per second (:func:`~biblios_env.engine.views.player_view`, what the tournament
hands an agent at every decision and what search agents build from every sample), and
saves the figures as JSON. Run ``python -m experiments.benchmarks.engine`` (about a minute).

Each figure is measured ``--repeats`` times, the measurements interleaved, and reported as
the best (the least disturbed run: the convention of ``timeit``) and the median. Shared
machines change speed by up to 2x within minutes, so compare code with the
load-independent instruction counts of docs/performance.md, not with one wall-clock run.
"""

from __future__ import annotations

import argparse
import platform
import random
import statistics
import time
from pathlib import Path
from typing import Any

from biblios_env import env, raw_env
from biblios_env.engine import Game
from biblios_env.engine.state import State
from biblios_env.engine.views import player_view
from experiments.benchmarks import benchmark_parser, save_results


def engine_playouts(num_players: int, games: int, seed: int) -> int:
    """Random legal play straight on the engine; returns the decisions made (forced ones excluded)."""
    chooser = random.Random(seed)
    decisions = 0
    for index in range(games):
        game = Game(num_players, seed=seed + index)
        while not game.is_over:
            legal = game.legal_actions()
            game.apply(legal[int(chooser.random() * len(legal))])  # uniform; cheaper than randrange
            decisions += 1
    return decisions


def env_playouts(make: Any, num_players: int, games: int, seed: int) -> int:
    """Random legal play through the AEC loop, ``last()`` (observation + mask) then ``step()``;
    returns the steps made."""
    environment = make(num_players)
    chooser = random.Random(seed)
    steps = 0
    for index in range(games):
        environment.reset(seed=seed + index)
        for _agent in environment.agent_iter():
            observation, _reward, terminated, truncated, _info = environment.last()
            if terminated or truncated:
                environment.step(None)
                continue
            legal = observation["action_mask"].nonzero()[0]  # the cheapest way to list the legal ids
            environment.step(int(legal[int(chooser.random() * len(legal))]))
            steps += 1
    return steps


def decision_positions(num_players: int, games: int, seed: int) -> list[tuple[State, int]]:
    """Every decision of ``games`` random legal games, as (a copy of the state, the seat to act)."""
    chooser = random.Random(seed)
    positions = []
    for index in range(games):
        game = Game(num_players, seed=seed + index)
        while not game.is_over:
            positions.append((game.state.clone(), game.current_player))
            legal = game.legal_actions()
            game.apply(legal[int(chooser.random() * len(legal))])
    return positions


def views_per_second(positions: list[tuple[State, int]]) -> float:
    """Views of the acting seat built per second over ``positions``."""
    start = time.perf_counter()
    for state, seat in positions:
        player_view(state, seat)
    return len(positions) / (time.perf_counter() - start)


def engine_games_per_second(num_players: int, games: int, seed: int) -> tuple[float, float]:
    """Engine random playouts; returns (games/s, decisions/s)."""
    start = time.perf_counter()
    decisions = engine_playouts(num_players, games, seed)
    elapsed = time.perf_counter() - start
    return games / elapsed, decisions / elapsed


def env_steps_per_second(make: Any, num_players: int, games: int, seed: int) -> float:
    """Steps/s of :func:`env_playouts` for ``make`` (``raw_env`` or ``env``)."""
    start = time.perf_counter()
    steps = env_playouts(make, num_players, games, seed)
    return steps / (time.perf_counter() - start)


#: The loops the benchmark can time, and the figures (per second) each one reports.
FIGURES: dict[str, tuple[str, ...]] = {
    "engine": ("engine_games_per_s", "engine_decisions_per_s"),
    "raw_env": ("raw_env_steps_per_s",),
    "env": ("env_steps_per_s",),
    "views": ("views_per_s",),
}
_UNITS = {
    "engine_games_per_s": "games/s",
    "raw_env_steps_per_s": "steps/s",
    "env_steps_per_s": "steps/s",
    "views_per_s": "views/s",
}


def _measure(num_players: int, args: argparse.Namespace) -> dict[str, list[float]]:
    """``args.repeats`` interleaved measurements of each chosen figure for ``num_players``."""
    runs: dict[str, list[float]] = {name: [] for loop in args.loops for name in FIGURES[loop]}
    positions = decision_positions(num_players, args.view_games, args.seed) if "views" in args.loops else []
    for _ in range(args.repeats):
        if "engine" in args.loops:
            games_per_second, decisions_per_second = engine_games_per_second(num_players, args.engine_games, args.seed)
            runs["engine_games_per_s"].append(games_per_second)
            runs["engine_decisions_per_s"].append(decisions_per_second)
        if "raw_env" in args.loops:
            runs["raw_env_steps_per_s"].append(env_steps_per_second(raw_env, num_players, args.env_games, args.seed))
        if "env" in args.loops:
            runs["env_steps_per_s"].append(env_steps_per_second(env, num_players, args.env_games, args.seed))
        if "views" in args.loops:
            runs["views_per_s"].append(views_per_second(positions))
    return runs


def _row_text(row: dict[str, Any], repeats: int) -> str:
    """One player count's figures as best | median."""
    figures = [
        f"{name.removesuffix('_per_s')} {row[name]:8,.1f} | {row[name.replace('_per_s', '_per_s_median')]:8,.1f} {unit}"
        for name, unit in _UNITS.items()
        if name in row
    ]
    return f"{row['players']} players (best | median of {repeats}): " + "  ".join(figures)


def build_parser() -> argparse.ArgumentParser:
    """The command line of the benchmark."""
    parser = benchmark_parser("experiments.benchmarks.engine", __doc__)
    parser.add_argument(
        "--loops",
        nargs="+",
        choices=list(FIGURES),
        default=list(FIGURES),
        help="which loops to time (default: all)",
    )
    parser.add_argument("--engine-games", type=int, default=200, help="engine playouts per player count and repeat")
    parser.add_argument("--env-games", type=int, default=30, help="environment games per player count and repeat")
    parser.add_argument(
        "--view-games", type=int, default=20, help="games whose decisions are the positions of the views loop"
    )
    parser.add_argument("--repeats", type=int, default=5, help="measurements of each figure (best and median reported)")
    parser.add_argument("--seed", type=int, default=0, help="seed of the first game (game i uses seed + i)")
    parser.add_argument("--out", type=Path, default=Path("results/benchmark.json"), help="where to save the JSON")
    return parser


def main(argv: list[str] | None = None) -> dict[str, Any]:
    parser = build_parser()
    args = parser.parse_args(argv)
    for name in ("engine_games", "env_games", "view_games", "repeats"):
        if getattr(args, name) < 1:
            parser.error(f"--{name.replace('_', '-')} must be at least 1, got {getattr(args, name)}")

    rows = []
    for num_players in (2, 3, 4):
        runs = _measure(num_players, args)
        row: dict[str, Any] = {"players": num_players}
        for name, values in runs.items():
            row[name] = round(max(values), 1)
            row[name.replace("_per_s", "_per_s_median")] = round(statistics.median(values), 1)
        row["runs"] = {name: [round(value, 1) for value in values] for name, values in runs.items()}
        rows.append(row)
        print(_row_text(row, args.repeats), flush=True)
    return save_results(
        args.out,
        "experiments.benchmarks.engine",
        argv,
        machine=platform.machine(),
        repeats=args.repeats,
        rows=rows,
    )


if __name__ == "__main__":
    main()
