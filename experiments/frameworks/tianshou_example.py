"""The Biblios PettingZoo env through Tianshou 2.0: ``python -m experiments.frameworks.tianshou_example``.

A masked random rollout, then a short self-play DQN in which every seat plays the same
Q-network; ``--train-iterations 0`` runs the rollout only. Needs ``pip install -e ".[tianshou]"``
(Tianshou 2.0.1); ``docs/frameworks.md`` has the timings and gotchas.

**The wrapper.** ``tianshou.env.PettingZooEnv(env(num_players))`` turns each AEC step into one
transition of the seat to act: the observation becomes ``{"agent_id", "obs", "mask"}`` (the
mask a list of bools), the reward a vector with every seat's reward, one column per seat. The
2.0 names of the multi-agent classes (1.x names in brackets, which no longer exist):
``MultiAgentOffPolicyAlgorithm(algorithms=[...], env=env)`` (``MultiAgentPolicyManager``),
``MARLRandomDiscreteMaskedOffPolicyAlgorithm`` (``RandomPolicy``), ``DQN(policy=
DiscreteQLearningPolicy(model=...), optim=AdamOptimizerFactory(...))`` (``DQNPolicy``). The
random algorithm and DQN's policy read ``obs.mask``, so both pick legal actions only, and the
env raises ``IllegalActionError`` on any other, so a finished rollout shows the masks are obeyed.

**Terminal-reward credit: the gotcha.** The multi-agent dispatcher gives each transition to
the seat that acted (``obs.agent_id``) with that seat's reward column only. The game-ending
transition is the last mover's, so the final rewards of the other seats sit in columns that no
transition of theirs reads there: with one-step targets only the last mover ever learns from
its result. And ``obs_next`` is the *next* seat's observation, so a one-step target would also
bootstrap from another seat's point of view.

**The fix used here: whole-game returns, no wrapper.** When the dispatcher computes a seat's
targets it swaps the buffer's rewards for that seat's column, and DQN's n-step return sums
that column over the following transitions in the buffer, *whoever made them*, until the game
ends. So with ``gamma = 1`` and a horizon no game can exceed
(:data:`biblios_env.engine.facts.MAX_GAME_LENGTH`), every transition of a finished game gets
exactly its seat's final reward as its target, and no target bootstraps, so ``obs_next`` is
never used: DQN becomes Monte Carlo regression of Q(observation, action) on the seat's result,
with no target network to keep. Training collects whole games (``collect(n_episode=1)`` on one
env), because a transition of a game still running when sampled would bootstrap from the
newest observation, which can be another seat's. The price: Tianshou walks the horizon one
step at a time for each sampled batch, which dominates a gradient step (``docs/frameworks.md``).

A wrapper that emitted extra transitions at the end cannot do this: it could hand each seat
its reward on a made-up last transition, but not on the decisions that earned it.

The training loop is written out (collect a game, then a few gradient steps, inside
``policy_within_training_step`` as Tianshou's trainer does) so that the losses can be printed.
"""

from __future__ import annotations

import argparse
import functools
import logging
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final

import numpy as np

from biblios_env.engine.facts import MAX_GAME_LENGTH
from biblios_env.pettingzoo_env import env as biblios_env
from experiments.frameworks import example_parser, missing_framework

#: The module's name, also when it runs as ``__main__``.
MODULE: Final = "experiments.frameworks.tianshou_example"

try:
    import torch
    from tianshou.algorithm import DQN, MARLRandomDiscreteMaskedOffPolicyAlgorithm, MultiAgentOffPolicyAlgorithm
    from tianshou.algorithm.algorithm_base import OffPolicyAlgorithm
    from tianshou.algorithm.modelfree.dqn import DiscreteQLearningPolicy
    from tianshou.algorithm.optim import AdamOptimizerFactory
    from tianshou.data import Collector, CollectStats, ReplayBuffer
    from tianshou.env import DummyVectorEnv, PettingZooEnv
    from tianshou.utils.net.common import Net
    from tianshou.utils.torch_utils import policy_within_training_step
except ImportError as error:
    raise missing_framework(MODULE, "tianshou", error) from error

HIDDEN: Final = 64
LEARNING_RATE: Final = 1e-3
#: Exploration while training: the chance of a random legal action instead of the best one.
EXPLORATION: Final = 0.2
#: Gradient steps after each collected game, and the transitions each one samples.
GRADIENT_STEPS: Final = 4
BATCH_SIZE: Final = 64
#: Transitions kept: about thirty two-player games, fourteen four-player ones.
BUFFER_SIZE: Final = 5000


def make_env(num_players: int = 2, reward: str = "win") -> PettingZooEnv:
    """The AEC env in Tianshou's wrapper (see the module docs for what it turns a step into)."""
    return PettingZooEnv(biblios_env(num_players, reward=reward))


def _vector_env(num_players: int, reward: str, seed: int) -> DummyVectorEnv:
    """One env stepped in this process, seeded (later resets continue from that seed)."""
    vector_env = DummyVectorEnv([functools.partial(make_env, num_players, reward)])
    vector_env.seed(seed)
    return vector_env


def random_rollout(num_players: int, steps: int, seed: int, reward: str = "win") -> tuple[ReplayBuffer, CollectStats]:
    """``steps`` transitions of masked random play, every seat drawing a uniform legal action."""
    env = make_env(num_players, reward)
    randoms: list[OffPolicyAlgorithm] = [
        MARLRandomDiscreteMaskedOffPolicyAlgorithm(action_space=env.action_space) for _ in env.agents
    ]
    algorithm = MultiAgentOffPolicyAlgorithm(algorithms=randoms, env=env)
    buffer = ReplayBuffer(steps)
    collector = Collector[CollectStats](algorithm, _vector_env(num_players, reward, seed), buffer)
    stats = collector.collect(n_step=steps, reset_before_collect=True)
    return buffer, stats


def make_selfplay_dqn(env: PettingZooEnv, num_players: int) -> MultiAgentOffPolicyAlgorithm:
    """One DQN for every seat, with whole-game returns (``gamma = 1``, the horizon of the
    longest possible game; see the module docs for why this credits every seat).

    Passing the same algorithm object for every seat shares its network: the dispatcher
    updates it once with each seat's share of a sampled batch.
    """
    observation_size = env.observation_space["observation"].shape[0]
    network = Net(state_shape=observation_size, action_shape=int(env.action_space.n), hidden_sizes=[HIDDEN])
    dqn = DQN(
        policy=DiscreteQLearningPolicy(
            model=network, action_space=env.action_space, eps_training=EXPLORATION, eps_inference=0.0
        ),
        optim=AdamOptimizerFactory(lr=LEARNING_RATE),
        gamma=1.0,
        n_step_return_horizon=MAX_GAME_LENGTH[num_players],
        target_update_freq=0,  # no target bootstraps (see above), so no target network
    )
    return MultiAgentOffPolicyAlgorithm(algorithms=[dqn] * num_players, env=env)


@dataclass(frozen=True)
class GameResult:
    """One training iteration: the game collected (its length and every seat's return) and the
    mean loss of the gradient steps that followed it."""

    steps: int
    returns: list[float]
    loss: float


def train(
    algorithm: MultiAgentOffPolicyAlgorithm, num_players: int, iterations: int, seed: int, reward: str = "win"
) -> list[GameResult]:
    """``iterations`` times: collect one whole game with exploration, then :data:`GRADIENT_STEPS`
    gradient steps on :data:`BATCH_SIZE` transitions sampled from every game so far."""
    buffer = ReplayBuffer(BUFFER_SIZE)
    collector = Collector[CollectStats](
        algorithm, _vector_env(num_players, reward, seed), buffer, exploration_noise=True
    )
    collector.reset()
    results = []
    with policy_within_training_step(algorithm.policy):
        for _ in range(iterations):
            game = collector.collect(n_episode=1)
            losses = [
                loss
                for _ in range(GRADIENT_STEPS)
                for loss in algorithm.update(buffer, BATCH_SIZE).get_loss_stats_dict().values()
            ]
            results.append(GameResult(game.n_collected_steps, game.returns[0].tolist(), float(np.mean(losses))))
    return results


@dataclass(frozen=True)
class GameEnd:
    """A game end in a buffer: its transition, every seat's reward in that transition's reward
    vector, and the seat whose transition it is (the last mover; see the module docs)."""

    transition: int
    rewards: list[float]
    actor: str


def game_ends(buffer: ReplayBuffer) -> list[GameEnd]:
    """The game ends of a buffer that has not wrapped around, in order."""
    size = len(buffer)
    return [
        GameEnd(int(end), buffer.rew[end].tolist(), str(buffer.obs.agent_id[end]))
        for end in np.flatnonzero(buffer.done[:size])
    ]


def _report_rollout(stats: CollectStats, seconds: float, ends: Sequence[GameEnd], agents: Sequence[str]) -> None:
    steps, collecting = stats.n_collected_steps, stats.collect_time
    print(
        f"random rollout: {steps} steps in {collecting:.2f} s ({steps / collecting:.0f} steps/s), games ended: "
        f"{len(ends)}; {seconds - collecting:.1f} s before it (Tianshou compiles its numba helpers once a process)"
    )
    for end in ends:
        paid = ", ".join(f"{agent} {reward:+.2f}" for agent, reward in zip(agents, end.rewards))
        print(f"  game end at transition {end.transition}: rewards {paid}; the transition is {end.actor}'s")


def main(argv: Sequence[str] | None = None) -> None:
    """Run the rollout, then the training loop, printing a short summary of each."""
    args = build_parser().parse_args(argv)
    torch.set_num_threads(1)  # a 64-unit MLP: extra threads only contend on a 2-core machine
    # Tianshou's random algorithm, DQN's exploration and its replay sampling draw from numpy's
    # global generator, and the network's initial weights from torch's: seed both.
    np.random.seed(args.seed)
    torch.manual_seed(args.seed)
    # Tianshou's episode statistics warn at every collect that a per-seat reward vector is not
    # 1-D; that vector is what a multi-agent env returns, and the summary below reads it itself.
    logging.getLogger("tianshou.data.stats").setLevel(logging.ERROR)
    env = make_env(args.players, args.reward)
    started = time.perf_counter()
    buffer, stats = random_rollout(args.players, args.steps, args.seed, args.reward)
    _report_rollout(stats, time.perf_counter() - started, game_ends(buffer), env.agents)
    if args.train_iterations == 0:
        return
    algorithm = make_selfplay_dqn(env, args.players)
    started = time.perf_counter()
    for index, game in enumerate(train(algorithm, args.players, args.train_iterations, args.seed, args.reward), 1):
        paid = ", ".join(f"{agent} {value:+.2f}" for agent, value in zip(env.agents, game.returns))
        print(f"game {index}: {game.steps} steps, returns {paid}; mean loss of {GRADIENT_STEPS} steps {game.loss:.4f}")
    print(f"training: {args.train_iterations} games in {time.perf_counter() - started:.1f} s")


def build_parser() -> argparse.ArgumentParser:
    """The command line (shared with the other examples: :func:`experiments.frameworks.example_parser`)."""
    return example_parser(
        MODULE,
        "The Biblios PettingZoo env through Tianshou: a masked random rollout and self-play DQN.",
        train_iterations=8,
        iteration=f"one game collected, then {GRADIENT_STEPS} gradient steps of {BATCH_SIZE} transitions",
    )


if __name__ == "__main__":
    main()
