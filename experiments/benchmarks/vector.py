"""Speed of the batched games (``biblios_env.vector``) against one game per call, in decisions per second.

Four workloads, each at 2, 3 and 4 players, measured in this one process and alternated
(``--repeats`` rounds of every workload in turn, so a machine that slows down slows them all):

- ``raw_env``: the PettingZoo env with random legal actions, ``last()`` at every step (the
  observation and the mask of the acting seat), one game at a time;
- ``vector``: :class:`~biblios_env.vector.VectorGame` with ``--games`` games, random legal actions
  drawn from the masks in numpy (:func:`random_legal`), the observation counts read at every step
  (so every position is encoded, as ``raw_env``'s ``last()`` encodes it);
- ``naive_mlp``: the first batch anyone writes: a Python list of engine games, ``encode_state``
  into one preallocated array, the mask filled by numpy indexing, one loop, and a 2x128 MLP
  policy forward over the batch (torch, one thread) choosing every action (its most likely legal one);
- ``vector_mlp``: the same MLP forward over :class:`VectorGame`'s batch.

``python -m experiments.benchmarks.vector`` (a few minutes) prints best and median per workload
and the ratios the docs quote, each ratio's median and range over the rounds, and saves JSON
(docs/performance.md holds the figures). The SB3 adapter has its own benchmark,
``experiments.benchmarks.adapters``.
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

from biblios_env import COMPILED, raw_env
from biblios_env.actions import NUM_ACTIONS
from biblios_env.engine import Game
from biblios_env.observations import OBSERVATION_SIZE, encode_state
from biblios_env.vector import VectorGame
from experiments.benchmarks import benchmark_parser, save_results
from experiments.benchmarks.engine import env_playouts
from experiments.common.cli import at_least

WORKLOADS = ("raw_env", "vector", "naive_mlp", "vector_mlp")
#: The ratios reported, each workload over its baseline.
RATIOS = {
    "vector / raw_env": ("vector", "raw_env"),
    "vector_mlp / naive_mlp": ("vector_mlp", "naive_mlp"),
}


def random_legal(mask: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """A uniformly random legal action per row of ``mask``, in numpy: one random number per row
    picks the k-th legal action (a draw per action id would cost more than stepping the game)."""
    cumulative = mask.cumsum(axis=1, dtype=np.int16)
    pick = (rng.random(len(mask)) * cumulative[:, -1]).astype(np.int16)
    return np.argmax(cumulative > pick[:, None], axis=1)


class MaskedMLP:
    """A 2x128 MLP policy over the observation: one forward over the batch, then the most likely
    legal action of each row (the same cheap choice in both workloads that use it)."""

    def __init__(self, seed: int) -> None:
        import torch

        torch.set_num_threads(1)
        torch.manual_seed(seed)
        self.torch = torch
        self.net = torch.nn.Sequential(
            torch.nn.Linear(OBSERVATION_SIZE, 128),
            torch.nn.ReLU(),
            torch.nn.Linear(128, 128),
            torch.nn.ReLU(),
            torch.nn.Linear(128, NUM_ACTIONS),
        )

    def __call__(self, observation: np.ndarray, mask: np.ndarray) -> np.ndarray:
        torch = self.torch
        with torch.inference_mode():
            logits = self.net(torch.from_numpy(observation)).numpy()
        return np.where(mask != 0, logits, -np.inf).argmax(axis=1)


def vector_playouts(num_players: int, games: int, seed: int, batch_size: int = 128) -> int:
    """Random legal play through a :class:`VectorGame` of ``batch_size`` games until ``games`` games
    per slot have ended on average (so that the count covers whole games, as one-game loops do;
    the actions drawn in numpy, as in the ``vector`` workload); returns the decisions made."""
    vector = VectorGame(batch_size, num_players, seed=seed)
    rng = np.random.default_rng(seed)
    batch = vector.reset()
    finished = 0
    while finished < games * batch_size:
        batch = vector.step(random_legal(batch.action_mask, rng))
        vector.observation_counts()  # every position encoded, as for a policy (raw_env's last() encodes too)
        finished += int(batch.terminated.sum())
    return vector.decisions


def time_raw_env(num_players: int, args: argparse.Namespace) -> float:
    start = time.perf_counter()
    steps = env_playouts(raw_env, num_players, args.env_games, args.seed)
    return steps / (time.perf_counter() - start)


def time_vector(num_players: int, args: argparse.Namespace, policy: Callable[..., np.ndarray] | None = None) -> float:
    games = VectorGame(args.games, num_players, seed=args.seed)
    rng = np.random.default_rng(args.seed)
    batch = games.reset()
    start = time.perf_counter()
    for _ in range(args.steps):
        if policy is None:
            games.observation_counts()  # every position encoded, as for a policy (raw_env's last() encodes too)
            actions = random_legal(batch.action_mask, rng)
        else:
            actions = policy(batch.observation, batch.action_mask)
        batch = games.step(actions)
    return games.decisions / (time.perf_counter() - start)


def time_naive(num_players: int, args: argparse.Namespace, policy: Callable[..., np.ndarray]) -> float:
    """The naive batch of the module docstring."""
    size = args.games
    games = [Game(num_players, seed=args.seed + slot) for slot in range(size)]
    observation = np.zeros((size, OBSERVATION_SIZE), np.float32)
    mask = np.zeros((size, NUM_ACTIONS), np.int8)
    dealt = size
    decisions = 0
    start = time.perf_counter()
    for _ in range(args.steps):
        mask[:] = 0
        rows: list[int] = []
        columns: list[int] = []
        for slot, game in enumerate(games):
            encode_state(game.state, game.current_player, observation[slot])
            legal = game.legal_actions()
            rows.extend([slot] * len(legal))
            columns.extend(legal)
        mask[rows, columns] = 1
        actions = policy(observation, mask).tolist()
        for slot, game in enumerate(games):
            game.apply(actions[slot])
            if game.is_over:
                games[slot] = Game(num_players, seed=args.seed + dealt)
                dealt += 1
        decisions += size
    return decisions / (time.perf_counter() - start)


def measure(num_players: int, args: argparse.Namespace, policy: MaskedMLP | None) -> dict[str, list[float]]:
    """``args.repeats`` alternated rounds of the chosen workloads."""
    timers: dict[str, Callable[[], float]] = {
        "raw_env": lambda: time_raw_env(num_players, args),
        "vector": lambda: time_vector(num_players, args),
    }
    if policy is not None:
        timers["naive_mlp"] = lambda: time_naive(num_players, args, policy)
        timers["vector_mlp"] = lambda: time_vector(num_players, args, policy)
    runs: dict[str, list[float]] = {name: [] for name in args.workloads}
    for _ in range(args.repeats):
        for name in args.workloads:
            runs[name].append(timers[name]())
    return runs


def build_parser() -> argparse.ArgumentParser:
    parser = benchmark_parser("experiments.benchmarks.vector", __doc__)
    parser.add_argument("--workloads", nargs="+", choices=WORKLOADS, default=list(WORKLOADS), help="what to time")
    parser.add_argument("--players", nargs="+", type=int, choices=(2, 3, 4), default=[2, 3, 4], help="player counts")
    parser.add_argument("--games", type=at_least(1), default=256, help="games per batch")
    parser.add_argument("--steps", type=at_least(1), default=200, help="batched steps per measurement")
    parser.add_argument("--env-games", type=at_least(1), default=40, help="raw_env games per measurement")
    parser.add_argument("--repeats", type=at_least(1), default=5, help="alternated rounds (best and median reported)")
    parser.add_argument("--seed", type=int, default=0, help="seed of the games and the policy")
    parser.add_argument("--out", type=Path, default=Path("results/vector_benchmark.json"), help="where to save JSON")
    return parser


def main(argv: list[str] | None = None) -> dict[str, Any]:
    args = build_parser().parse_args(argv)
    needs_policy = bool({"naive_mlp", "vector_mlp"} & set(args.workloads))
    policy = MaskedMLP(args.seed) if needs_policy else None
    rows = []
    for num_players in args.players:
        runs = measure(num_players, args, policy)
        row: dict[str, Any] = {"players": num_players}
        for name, values in runs.items():
            row[name] = {"best": round(max(values)), "median": round(statistics.median(values))}
        for label, (numerator, denominator) in RATIOS.items():
            if numerator in runs and denominator in runs:
                pairs = [a / b for a, b in zip(runs[numerator], runs[denominator])]
                row[label] = {
                    "median": round(statistics.median(pairs), 2),
                    "min": round(min(pairs), 2),
                    "max": round(max(pairs), 2),
                }
        rows.append(row)
        print(json.dumps(row), flush=True)
    return save_results(
        args.out,
        "experiments.benchmarks.vector",
        argv,
        compiled=COMPILED,
        games=args.games,
        repeats=args.repeats,
        rows=rows,
    )


if __name__ == "__main__":
    main()
