"""Play and render one complete game with uniformly random legal moves.

    python -m biblios_env --players 3 --seed 7            # every decision, rendered
    python -m biblios_env --players 4 --seed 7 --final    # only the final table
    python -m biblios_env --players 2 --save-log game.json

A smoke test of the whole stack (engine, PettingZoo env, rendering, logs) that needs
nothing beyond the package itself.
"""

from __future__ import annotations

import argparse
import random
from pathlib import Path

import numpy as np

from biblios_env.actions import describe
from biblios_env.engine.log import save_log
from biblios_env.pettingzoo_env import raw_env


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m biblios_env", description=__doc__.splitlines()[0])
    parser.add_argument("--players", type=int, default=3, choices=(2, 3, 4))
    parser.add_argument("--seed", type=int, default=0, help="seeds the deal and the random moves")
    parser.add_argument("--penalty", choices=("standard", "bluffs"), default="standard")
    parser.add_argument("--final", action="store_true", help="render only the final table")
    parser.add_argument("--save-log", type=Path, help="write the game as a replayable JSON log")
    args = parser.parse_args(argv)

    environment = raw_env(args.players, render_mode="ansi", penalty=args.penalty)
    environment.reset(seed=args.seed)
    chooser = random.Random(args.seed)
    for agent in environment.agent_iter():
        observation, _reward, terminated, truncated, _info = environment.last()
        if terminated or truncated:
            environment.step(None)
            continue
        legal = np.flatnonzero(observation["action_mask"])
        action = int(legal[chooser.randrange(len(legal))])
        if not args.final:
            print(environment.render())
            print(f">>> {agent}: {describe(action)}\n")
        environment.step(action)
    print(environment.render())
    game = environment.game
    assert game is not None  # reset() made it and only close() removes it
    print(f"Category winners (Monks..Forbidden Tomes, -1 = nobody): {game.state.category_winners}")
    if args.save_log:
        save_log(game, args.save_log)
        print(f"Game log saved to {args.save_log}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
