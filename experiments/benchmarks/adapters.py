"""Speed of the Stable-Baselines3 adapter of the batched games against a ``DummyVecEnv`` of Gymnasium wrappers.

Two workloads, each measured on both sides at every size (``--games`` for stepping,
``--learn-games`` for learning; 2 players, uniformly random opponents), alternated in this one
process (``--repeats`` rounds of every side in turn, so a machine that slows down slows both):

- ``step``: learner steps per second stepping with random legal actions, the masks read as
  sb3-contrib's ``MaskablePPO`` reads them (``get_action_masks``, through ``env_method``): a
  ``DummyVecEnv`` of ``BibliosGymEnv`` against :class:`~biblios_env.vector.sb3.BibliosVecEnv`;
- ``learn``: learner steps per second of ``MaskablePPO.learn`` through either, with
  ``experiments.train_ppo``'s hyperparameters (a 2x128 ``MlpPolicy``, 512 steps per environment
  an update, minibatches of 256, 4 epochs, the ``vp`` reward) and one torch thread.

``python -m experiments.benchmarks.adapters`` prints, per workload and size, each side's median
rate and the ratio adapter / ``DummyVecEnv`` (median and range of the per-round ratios), and saves
JSON (docs/performance.md holds the figures).
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from biblios_env import COMPILED
from experiments.benchmarks import benchmark_parser, save_results
from experiments.benchmarks.vector import random_legal
from experiments.common.cli import at_least

WORKLOADS = ("step", "learn")
#: The two sides of every comparison: the baseline first.
SIDES = ("dummy", "adapter")
#: ``experiments.train_ppo``'s PPO settings (its defaults).
PPO_SETTINGS: dict[str, Any] = {
    "n_steps": 512,
    "batch_size": 256,
    "n_epochs": 4,
    "learning_rate": 5e-5,
    "gamma": 1.0,
    "gae_lambda": 0.95,
    "device": "cpu",
    "policy_kwargs": {"net_arch": [128, 128]},
}


def make_env(side: str, num_envs: int, seed: int, **options: Any) -> Any:
    """A VecEnv of ``num_envs`` 2-player games: the ``DummyVecEnv`` of Gymnasium wrappers or the adapter."""
    from stable_baselines3.common.vec_env import DummyVecEnv

    from biblios_env.gym_env import BibliosGymEnv
    from biblios_env.vector.sb3 import BibliosVecEnv

    if side == "adapter":
        return BibliosVecEnv(num_envs, 2, seed=seed, dict_observation=False, **options)
    env = DummyVecEnv([lambda: BibliosGymEnv(2, **options) for _ in range(num_envs)])
    env.seed(seed)
    return env


def time_step(side: str, num_envs: int, args: argparse.Namespace) -> float:
    """Learner steps per second stepping ``side`` with random legal actions."""
    from sb3_contrib.common.maskable.utils import get_action_masks

    env = make_env(side, num_envs, args.seed)
    rng = np.random.default_rng(args.seed)
    env.reset()
    steps = max(1, args.step_decisions // num_envs)
    start = time.perf_counter()
    for _ in range(steps):
        env.step(random_legal(get_action_masks(env), rng))
    return steps * num_envs / (time.perf_counter() - start)


def time_learn(side: str, num_envs: int, args: argparse.Namespace) -> float:
    """Learner steps per second of ``MaskablePPO.learn`` through ``side``."""
    import torch
    from sb3_contrib import MaskablePPO

    torch.set_num_threads(1)
    env = make_env(side, num_envs, args.seed, reward="vp")
    model = MaskablePPO("MlpPolicy", env, seed=args.seed, **PPO_SETTINGS)
    start = time.perf_counter()
    model.learn(args.learn_decisions)
    return model.num_timesteps / (time.perf_counter() - start)


TIMERS: dict[str, Callable[[str, int, argparse.Namespace], float]] = {"step": time_step, "learn": time_learn}


def measure(workload: str, num_envs: int, args: argparse.Namespace) -> dict[str, Any]:
    """``args.repeats`` alternated rounds of both sides; their medians and the ratio's median and range."""
    runs: dict[str, list[float]] = {side: [] for side in SIDES}
    for _ in range(args.repeats):
        for side in SIDES:
            runs[side].append(TIMERS[workload](side, num_envs, args))
    ratios = [adapter / dummy for adapter, dummy in zip(runs["adapter"], runs["dummy"])]
    return {
        "workload": workload,
        "games": num_envs,
        **{side: round(statistics.median(values)) for side, values in runs.items()},
        "adapter / dummy": {
            "median": round(statistics.median(ratios), 2),
            "min": round(min(ratios), 2),
            "max": round(max(ratios), 2),
        },
    }


def build_parser() -> argparse.ArgumentParser:
    parser = benchmark_parser("experiments.benchmarks.adapters", __doc__)
    parser.add_argument("--workloads", nargs="+", choices=WORKLOADS, default=list(WORKLOADS), help="what to time")
    parser.add_argument(
        "--games", nargs="+", type=at_least(1), default=[8, 64], help="environments per VecEnv when stepping"
    )
    parser.add_argument(
        "--learn-games", nargs="+", type=at_least(1), default=[8], help="environments per VecEnv in learn()"
    )
    parser.add_argument(
        "--step-decisions", type=at_least(1), default=8_192, help="learner steps per stepping measurement"
    )
    parser.add_argument(
        "--learn-decisions", type=at_least(1), default=16_384, help="learner steps per learn() measurement"
    )
    parser.add_argument("--repeats", type=at_least(1), default=5, help="alternated rounds (medians reported)")
    parser.add_argument("--seed", type=int, default=0, help="seed of the games and the policy")
    parser.add_argument("--out", type=Path, default=Path("results/adapters_benchmark.json"), help="where to save JSON")
    return parser


def main(argv: list[str] | None = None) -> dict[str, Any]:
    args = build_parser().parse_args(argv)
    rows = []
    for workload in args.workloads:
        for num_envs in args.games if workload == "step" else args.learn_games:
            row = measure(workload, num_envs, args)
            rows.append(row)
            print(json.dumps(row), flush=True)
    return save_results(
        args.out,
        "experiments.benchmarks.adapters",
        argv,
        compiled=COMPILED,
        repeats=args.repeats,
        rows=rows,
    )


if __name__ == "__main__":
    main()
