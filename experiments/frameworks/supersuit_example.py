"""The Biblios PettingZoo env with SuperSuit and PettingZoo's conversions:
``python -m experiments.frameworks.supersuit_example``.

Needs ``pip install -e ".[supersuit]"`` (SuperSuit 3.11.0). Three things, each played through
with masked random actions and summarised:

1. **The Box-only wrappers, after removing the mask.** The env's observation is a ``Dict``
   (``{"observation", "action_mask"}``), and most SuperSuit observation wrappers accept only
   ``Box`` (or ``Discrete``) spaces: ``flatten_v0``, ``normalize_obs_v0``, ``dtype_v0``,
   ``frame_stack_v2``, ``pad_observations_v0`` and ``agent_indicator_v0`` fail on the ``Dict``
   (``docs/frameworks.md`` lists each error). SuperSuit has no wrapper that transforms one
   entry of a ``Dict``, so :func:`strip_mask` keeps the ``"observation"`` entry only; those
   wrappers then apply, and the legal actions must come from the unwrapped env
   (:func:`legal_actions`), because they are no longer in the observation.
2. **Parallel-API code.** :func:`parallel_env` is PettingZoo's ``turn_based_aec_to_parallel``:
   each parallel step is one decision of the seat to act; every live seat is in the step's
   dicts, only the acting seat's action is used, and the others' masks are all zeros. It works
   for 2, 3 and 4 players alike, since it never looks at the player count. PettingZoo's
   ``aec_to_parallel`` refuses the env, which declares ``is_parallelizable: False``: that
   conversion assumes every agent acts once per cycle and the env updates only at the cycle's
   end, which a game of auctions, payments and repeated decisions by one seat is not.
3. **A vector env of seats.** :func:`vector_env` is SuperSuit's
   ``concat_vec_envs_v1(pettingzoo_env_to_vec_env_v1(parallel_env), copies)``: one slot per
   seat and game copy, ``Dict`` observations batched per key, games reset as they end. A
   slot whose mask is all zeros is not deciding at that step: its action is ignored, and a
   learner must leave that row out of its policy and loss (a masked distribution over no legal
   action is undefined). Every seat's slot receives its reward at the game's last step.
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Sequence
from typing import Any, Final

import numpy as np
from gymnasium import spaces
from pettingzoo import AECEnv, ParallelEnv
from pettingzoo.utils.conversions import turn_based_aec_to_parallel

from biblios_env.engine.setup import PLAYER_COUNTS
from biblios_env.pettingzoo_env import env as biblios_env
from experiments.common.cli import HelpFormatter, at_least, invocation_note, program_name
from experiments.frameworks import missing_framework

#: The module's name, also when it runs as ``__main__``.
MODULE: Final = "experiments.frameworks.supersuit_example"

try:
    import supersuit
except ImportError as error:
    raise missing_framework(MODULE, "supersuit", error) from error

#: Enough AEC steps for any game with masked random play (a four-player game takes about 400).
MAX_STEPS: Final = 5000


def _observation_only(observation: dict[str, np.ndarray], space: spaces.Dict, agent: str | None = None) -> np.ndarray:
    return observation["observation"]


def _observation_space_only(space: spaces.Dict, agent: str | None = None) -> spaces.Space[Any]:
    return space["observation"]


def strip_mask(env: AECEnv) -> AECEnv:
    """``env`` with the ``Box`` observation alone, the ``action_mask`` dropped, so that
    SuperSuit's ``Box``-only wrappers apply; read the mask with :func:`legal_actions`.

    ``observation_lambda_v0`` needs the space function on a ``Dict`` observation: without one
    it computes the new space from ``space.low``, which a ``Dict`` has not
    (``AttributeError: 'Dict' object has no attribute 'low'``).
    """
    return supersuit.observation_lambda_v0(env, _observation_only, _observation_space_only)


def legal_actions(env: AECEnv, agent: str, observation: object) -> np.ndarray:
    """The legal action ids of ``agent``: from the observation's mask when a wrapper kept it,
    else from the unwrapped env (the only place left once :func:`strip_mask` dropped it)."""
    if isinstance(observation, dict) and "action_mask" in observation:
        return np.flatnonzero(observation["action_mask"])
    return np.flatnonzero(env.unwrapped.observe(agent)["action_mask"])


def play_aec(env: AECEnv, seed: int) -> tuple[int, dict[str, float]]:
    """One game of masked random play through a (wrapped) AEC env: its decisions and every
    seat's final reward. Raises if the wrapper made an illegal action reach the env."""
    env.reset(seed=seed)
    rng = np.random.default_rng(seed)
    decisions = 0
    final: dict[str, float] = {}
    for agent in env.agent_iter(MAX_STEPS):
        observation, reward, termination, truncation, _ = env.last()
        if termination or truncation:
            final[agent] = float(reward)
            env.step(None)
            continue
        env.step(int(rng.choice(legal_actions(env, agent, observation))))
        decisions += 1
    return decisions, final


def parallel_env(num_players: int = 2, **options: Any) -> ParallelEnv:
    """The env as a PettingZoo ``ParallelEnv``: one parallel step per decision (module docs)."""
    return turn_based_aec_to_parallel(biblios_env(num_players, **options))


def play_parallel(env: ParallelEnv, seed: int) -> tuple[int, dict[str, float]]:
    """One game of masked random play through a parallel env: its steps and the rewards of the
    last step. Every live seat sends an action; only the acting seat's (the one seat with a
    nonzero mask) is used."""
    observations, _ = env.reset(seed=seed)
    rng = np.random.default_rng(seed)
    steps = 0
    rewards: dict[str, float] = {}
    while env.agents and steps < MAX_STEPS:
        actions = {}
        for agent in env.agents:
            legal = np.flatnonzero(observations[agent]["action_mask"])
            actions[agent] = int(rng.choice(legal)) if len(legal) else 0
        observations, rewards, _, _, _ = env.step(actions)
        steps += 1
    return steps, rewards


def vector_env(num_players: int = 2, copies: int = 2) -> Any:
    """``copies`` games as one Gymnasium-style vector env with a slot per seat and copy
    (``num_envs = copies * num_players``); see the module docs for the all-zero masks."""
    seats = supersuit.pettingzoo_env_to_vec_env_v1(parallel_env(num_players))
    return supersuit.concat_vec_envs_v1(seats, copies, base_class="gymnasium")


def play_vector(env: Any, steps: int, seed: int) -> list[np.ndarray]:
    """``steps`` steps of masked random play through :func:`vector_env`: the reward rows of the
    steps where some game ended (one entry per slot)."""
    observations, _ = env.reset(seed=seed)
    rng = np.random.default_rng(seed)
    endings = []
    for _ in range(steps):
        masks = observations["action_mask"]
        actions = np.array([rng.choice(np.flatnonzero(mask)) if mask.any() else 0 for mask in masks])
        observations, rewards, terminations, _, _ = env.step(actions)
        if terminations.any():
            endings.append(rewards)
    return endings


def _rewards_text(rewards: dict[str, float]) -> str:
    return ", ".join(f"{agent} {reward:+.2f}" for agent, reward in sorted(rewards.items()))


def main(argv: Sequence[str] | None = None) -> None:
    """Play one game through each route and print what each saw."""
    args = build_parser().parse_args(argv)
    wrapped = supersuit.frame_stack_v2(strip_mask(biblios_env(args.players)), 2)
    decisions, final = play_aec(wrapped, args.seed)
    shape = wrapped.observation_space(wrapped.possible_agents[0]).shape
    print(
        f"frame_stack_v2(strip_mask(env)): observation {shape}, {decisions} decisions, rewards {_rewards_text(final)}"
    )
    steps, rewards = play_parallel(parallel_env(args.players), args.seed)
    print(f"turn_based_aec_to_parallel(env): {steps} parallel steps, rewards {_rewards_text(rewards)}")
    vector = vector_env(args.players)
    started = time.perf_counter()
    endings = play_vector(vector, args.steps, args.seed)
    seconds = time.perf_counter() - started
    print(f"vector env of {vector.num_envs} slots: {args.steps} steps in {seconds:.2f} s, games ended: {len(endings)}")
    for row in endings:
        print("  rewards per slot at a game end: " + " ".join(f"{reward:+.2f}" for reward in row))


def build_parser() -> argparse.ArgumentParser:
    """The command line: player count, vector env steps, seed."""
    parser = argparse.ArgumentParser(
        prog=program_name(MODULE),
        description="The Biblios PettingZoo env with SuperSuit's wrappers and as parallel and vector envs.",
        epilog=invocation_note(MODULE),
        formatter_class=HelpFormatter,
    )
    parser.add_argument("--players", type=int, choices=PLAYER_COUNTS, default=2, help="players at the table")
    parser.add_argument("--steps", type=at_least(1), default=400, help="steps of the vector env (two games at once)")
    parser.add_argument("--seed", type=at_least(0), default=0, help="seeds the deals and the random actions")
    return parser


if __name__ == "__main__":
    main()
