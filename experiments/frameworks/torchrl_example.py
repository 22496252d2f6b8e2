"""The Biblios PettingZoo env through TorchRL: ``python -m experiments.frameworks.torchrl_example``.

A masked random rollout, then a short self-play REINFORCE loop in which every seat plays the
same policy; ``--train-iterations 0`` runs the rollout only. Needs ``pip install -e ".[torchrl]"``
(TorchRL 0.14.1 with tensordict 0.14.3); ``docs/frameworks.md`` has the timings and gotchas.

**The wrapper.** TorchRL's own ``PettingZooWrapper`` takes the AEC env as it is::

    PettingZooWrapper(env(num_players), use_mask=True, group_map=MarlGroupMapType.ALL_IN_ONE_GROUP,
                      categorical_actions=True, seed=seed)

``use_mask=True`` is compulsory for AEC envs (without it: ``ValueError: For AEC environments
you need to set use_mask=True``). ``ALL_IN_ONE_GROUP`` puts every seat in one group
``"agents"``, so one network runs over a ``[n_players, ...]`` batch (parameter sharing; the
AEC default is one group per seat). Every step carries every seat's entries:

- ``("agents", "observation", "observation")``: the observation (nested, because the wrapper
  removes ``action_mask`` from the ``Dict`` observation and keeps the rest as a sub-tensordict);
- ``("agents", "action_mask")``: the legal actions of the seat to act (all True for the others);
- ``("agents", "mask")``: True for the seat to act only; only its action is applied.

The random rollout samples the action spec, whose mask the wrapper updates at every step, and
the env raises ``IllegalActionError`` on any illegal action, so a finished rollout shows that
the masks are respected.

**Terminal-reward credit.** The env pays every seat its reward at the step that ends the game,
but that step is one seat's decision: ``("agents", "mask")`` marks only the last mover there,
while ``("next", "agents", "reward")`` holds every seat's reward. A loss that keeps only the
acting seat's entries of each step (as a MAPPO-style ``mask`` does in GAE and PPO) credits the
last mover with its reward and silently drops every other seat's. So the returns here are
computed per seat over *all* steps (:func:`returns_to_go`: each seat's reward stream summed to
the end of the game, undiscounted) and only then read at that seat's own decisions: each
decision of a seat is credited with that seat's final reward. Decisions of a game still running
at the end of a batch are left out of that batch's loss (their reward is not known yet).

TorchRL's ``Collector`` (0.14's name for ``SyncDataCollector``) gathers the batches; the policy
is an MLP whose logits go to ``MaskedCategorical`` through ``ProbabilisticActor``. The loss is
REINFORCE with the batch's mean return as baseline.
"""

from __future__ import annotations

import argparse
import time
import warnings
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final

from biblios_env.pettingzoo_env import env as biblios_env
from experiments.frameworks import example_parser, missing_framework

#: The module's name, also when it runs as ``__main__``.
MODULE: Final = "experiments.frameworks.torchrl_example"

try:
    import torch
    from tensordict import TensorDictBase
    from tensordict.nn import TensorDictModule
    from torch import nn
    from torchrl.collectors import Collector
    from torchrl.envs import MarlGroupMapType, PettingZooWrapper
    from torchrl.modules import MaskedCategorical, ProbabilisticActor
except ImportError as error:
    raise missing_framework(MODULE, "torchrl", error) from error

#: The one group of :data:`MarlGroupMapType.ALL_IN_ONE_GROUP`, and the keys read from it.
GROUP: Final = "agents"
OBSERVATION: Final = (GROUP, "observation", "observation")
ACTION_MASK: Final = (GROUP, "action_mask")
ACTING: Final = (GROUP, "mask")
ACTION: Final = (GROUP, "action")
LOGITS: Final = (GROUP, "logits")
REWARD: Final = ("next", GROUP, "reward")
DONE: Final = ("next", "done")
#: Env steps per collector batch: a two-player game is about 135 to 190 steps, so a batch holds
#: a few finished games; a four-player game is about 330 to 390.
BATCH_STEPS: Final = 512
HIDDEN: Final = 64
LEARNING_RATE: Final = 1e-3


def make_env(num_players: int = 2, seed: int = 0, reward: str = "win") -> PettingZooWrapper:
    """The AEC env in TorchRL's wrapper, every seat in group ``"agents"`` (see the module docs).

    The wrapper warns at each construction that TorchRL is tested with PettingZoo 1.24.3; this
    project pins 1.27, which works, so that one warning is silenced here and nothing else.
    """
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message="PettingZoo in TorchRL is tested", category=UserWarning)
        return PettingZooWrapper(
            biblios_env(num_players, reward=reward),
            use_mask=True,
            group_map=MarlGroupMapType.ALL_IN_ONE_GROUP,
            categorical_actions=True,
            seed=seed,
        )


def make_policy(env: PettingZooWrapper, hidden: int = HIDDEN) -> ProbabilisticActor:
    """One MLP for every seat; its logits become a ``MaskedCategorical`` over the legal actions."""
    observation_size = env.observation_spec[OBSERVATION].shape[-1]
    num_actions = env.full_action_spec[ACTION].space.n
    network = nn.Sequential(nn.Linear(observation_size, hidden), nn.Tanh(), nn.Linear(hidden, num_actions))
    return ProbabilisticActor(
        TensorDictModule(network, in_keys=[OBSERVATION], out_keys=[LOGITS]),
        in_keys={"logits": LOGITS, "mask": ACTION_MASK},
        out_keys=[ACTION],
        distribution_class=MaskedCategorical,
    )


def returns_to_go(rewards: torch.Tensor, done: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """Each seat's undiscounted return from each step to the end of that step's game, and
    whether that game ended inside these steps.

    ``rewards`` is ``[steps, seats]`` (the rewards that arrived after each step), ``done``
    ``[steps]``. The sum runs over every step, whoever acted at it, so the reward a seat
    receives at the game-ending step (where it is usually not the actor) reaches its own
    earlier decisions: that is the credit the module docs explain.
    """
    returns = torch.zeros_like(rewards)
    ended = torch.zeros_like(done)
    following = torch.zeros_like(rewards[0])
    game_ends = False
    for step in range(done.shape[0] - 1, -1, -1):
        if done[step]:
            following, game_ends = torch.zeros_like(following), True
        following = rewards[step] + following
        returns[step] = following
        ended[step] = game_ends
    return returns, ended


def reinforce_loss(policy: ProbabilisticActor, batch: TensorDictBase) -> tuple[torch.Tensor, int] | None:
    """REINFORCE over the decisions (acting seat, finished game) of a collector batch, with the
    mean return as baseline; ``None`` when no game ended in the batch, so nothing is credited."""
    returns, ended = returns_to_go(batch[REWARD].squeeze(-1), batch[DONE].squeeze(-1))
    decisions = batch[ACTING] & ended[:, None]
    if not decisions.any():
        return None
    log_prob = policy.get_dist(batch).log_prob(batch[ACTION])
    advantage = returns - returns[decisions].mean()
    return -(log_prob * advantage)[decisions].mean(), int(decisions.sum())


@dataclass(frozen=True)
class BatchResult:
    """One training iteration: the steps collected, the games that ended in them, the decisions
    the loss used and the loss (``None``: no game ended, no update)."""

    steps: int
    games: int
    decisions: int
    loss: float | None


def train(
    env: PettingZooWrapper,
    policy: ProbabilisticActor,
    iterations: int,
    batch_steps: int = BATCH_STEPS,
    learning_rate: float = LEARNING_RATE,
) -> list[BatchResult]:
    """``iterations`` collector batches of ``batch_steps`` env steps, one gradient step each.

    ``auto_register_policy_transforms=False``: TorchRL 0.14 warns that 0.15 will add the
    transforms a recurrent policy needs to the env by default; this policy has no state.
    """
    optimizer = torch.optim.Adam(policy.parameters(), lr=learning_rate)
    collector = Collector(
        env,
        policy,
        frames_per_batch=batch_steps,
        total_frames=batch_steps * iterations,
        auto_register_policy_transforms=False,
    )
    results = []
    try:
        for batch in collector:
            games = int(batch[DONE].sum())
            computed = reinforce_loss(policy, batch)
            if computed is None:
                results.append(BatchResult(batch.batch_size[0], games, 0, None))
                continue
            loss, decisions = computed
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            results.append(BatchResult(batch.batch_size[0], games, decisions, loss.item()))
    finally:
        collector.shutdown()
    return results


@dataclass(frozen=True)
class GameEnd:
    """A game end in a rollout: its step, every seat's reward there, and which seats TorchRL
    marks as acting there (one: the last mover; see the module docs)."""

    step: int
    rewards: list[float]
    acting: list[bool]


def game_ends(rollout: TensorDictBase) -> list[GameEnd]:
    """The game ends of a rollout, in order."""
    return [
        GameEnd(step, rollout[REWARD][step].flatten().tolist(), rollout[ACTING][step].flatten().tolist())
        for step in rollout[DONE].squeeze(-1).nonzero().flatten().tolist()
    ]


def _report_rollout(rollout: TensorDictBase, seconds: float, agents: Sequence[str]) -> None:
    steps = rollout.batch_size[0]
    ends = game_ends(rollout)
    print(f"random rollout: {steps} steps in {seconds:.2f} s ({steps / seconds:.0f} steps/s), games ended: {len(ends)}")
    for end in ends:
        paid = ", ".join(f"{agent} {reward:+.2f}" for agent, reward in zip(agents, end.rewards))
        movers = ", ".join(agent for agent, moved in zip(agents, end.acting) if moved)
        print(f"  game end at step {end.step}: rewards {paid}; marked as acting: {movers}")


def main(argv: Sequence[str] | None = None) -> None:
    """Run the rollout, then the training loop, printing a short summary of each."""
    args = build_parser().parse_args(argv)
    torch.set_num_threads(1)  # a 64-unit MLP: extra threads only contend on a 2-core machine
    torch.manual_seed(args.seed)  # the rollout's random actions and the policy's samples
    env = make_env(args.players, args.seed, args.reward)
    agents = env.group_map[GROUP]
    started = time.perf_counter()
    rollout = env.rollout(args.steps, break_when_any_done=False)
    _report_rollout(rollout, time.perf_counter() - started, agents)
    if args.train_iterations == 0:
        return
    policy = make_policy(env)
    started = time.perf_counter()
    for index, result in enumerate(train(env, policy, args.train_iterations), start=1):
        loss = "no game ended, no update" if result.loss is None else f"loss {result.loss:+.4f}"
        print(f"batch {index}: {result.steps} steps, games ended: {result.games}, {result.decisions} decisions, {loss}")
    print(f"training: {args.train_iterations} batches in {time.perf_counter() - started:.1f} s")


def build_parser() -> argparse.ArgumentParser:
    """The command line (shared with the other examples: :func:`experiments.frameworks.example_parser`)."""
    return example_parser(
        MODULE,
        "The Biblios PettingZoo env through TorchRL: a masked random rollout and self-play REINFORCE.",
        train_iterations=4,
        iteration=f"a collector batch of {BATCH_STEPS} env steps and one gradient step",
    )


if __name__ == "__main__":
    main()
