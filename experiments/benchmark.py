"""Speed benchmark of the engine and the PettingZoo environment (random legal play).

Prints, for 2, 3 and 4 players, random-playout games per second of the engine and
environment steps per second through the AEC API (``last()`` builds the acting agent's
observation and mask at every step) for ``raw_env`` and the wrapped ``env()``, and
saves the figures as JSON. Run ``python -m experiments.benchmark`` (about a minute).
"""

from __future__ import annotations

import argparse
import json
import platform
import random
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

from biblios_env import env, raw_env
from biblios_env.engine import Game


def engine_games_per_second(num_players: int, games: int, seed: int) -> tuple[float, float]:
    """Random playouts straight on the engine; returns (games/s, decisions/s)."""
    chooser = random.Random(seed)
    decisions = 0
    start = time.perf_counter()
    for index in range(games):
        game = Game(num_players, seed=seed + index)
        while not game.is_over:
            legal = game.legal_actions()
            game.apply(legal[int(chooser.random() * len(legal))])  # uniform; cheaper than randrange
            decisions += 1
    elapsed = time.perf_counter() - start
    return games / elapsed, decisions / elapsed


def env_steps_per_second(make: Any, num_players: int, games: int, seed: int) -> float:
    """Steps/s through the AEC loop: ``last()`` (observation + mask), a random legal action, ``step()``."""
    environment = make(num_players)
    chooser = random.Random(seed)
    steps = 0
    start = time.perf_counter()
    for index in range(games):
        environment.reset(seed=seed + index)
        for _agent in environment.agent_iter():
            observation, _reward, terminated, truncated, _info = environment.last()
            if terminated or truncated:
                environment.step(None)
                continue
            legal = np.flatnonzero(observation["action_mask"])
            environment.step(int(legal[chooser.randrange(len(legal))]))
            steps += 1
    return steps / (time.perf_counter() - start)


def main(argv: list[str] | None = None) -> dict[str, Any]:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--engine-games", type=int, default=400, help="engine playouts per player count")
    parser.add_argument("--env-games", type=int, default=60, help="environment games per player count")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", type=Path, default=Path("results/benchmark.json"), help="where to save the JSON")
    args = parser.parse_args(argv)
    for name in ("engine_games", "env_games"):
        if getattr(args, name) < 1:
            parser.error(f"--{name.replace('_', '-')} must be at least 1, got {getattr(args, name)}")

    rows = []
    for num_players in (2, 3, 4):
        games_per_second, decisions_per_second = engine_games_per_second(num_players, args.engine_games, args.seed)
        raw = env_steps_per_second(raw_env, num_players, args.env_games, args.seed)
        wrapped = env_steps_per_second(env, num_players, args.env_games, args.seed)
        rows.append(
            {
                "players": num_players,
                "engine_games_per_s": round(games_per_second, 1),
                "engine_decisions_per_s": round(decisions_per_second),
                "raw_env_steps_per_s": round(raw),
                "env_steps_per_s": round(wrapped),
            }
        )
        print(
            f"{num_players} players: engine {games_per_second:7.1f} games/s ({decisions_per_second:,.0f} decisions/s)"
            f" | raw_env {raw:8,.0f} steps/s | env() {wrapped:8,.0f} steps/s",
            flush=True,
        )
    result = {
        "command": "python -m experiments.benchmark " + " ".join(argv if argv is not None else sys.argv[1:]),
        "python": platform.python_version(),
        "machine": platform.machine(),
        "rows": rows,
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=2))
    print(f"saved {args.out}")
    return result


if __name__ == "__main__":
    main()
