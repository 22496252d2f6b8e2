"""The project's environments through other RL frameworks: runnable examples, one per framework.

- :mod:`experiments.frameworks.torchrl_example`: TorchRL's ``PettingZooWrapper`` over the AEC
  env, a masked random rollout and a short self-play REINFORCE loop with one shared policy
  (``pip install -e ".[torchrl]"``);
- :mod:`experiments.frameworks.tianshou_example`: Tianshou's ``PettingZooEnv``, a masked random
  rollout and a short self-play DQN with one shared Q-network (``pip install -e ".[tianshou]"``);
- :mod:`experiments.frameworks.supersuit_example`: which SuperSuit wrappers apply to the
  masked ``Dict`` observation, and the env as parallel-API code and as a vector env through
  PettingZoo's ``turn_based_aec_to_parallel`` (``pip install -e ".[supersuit]"``).

Each framework is an optional extra, so each example imports its framework at module level
and turns a missing one into an error that names the extra to install
(:func:`missing_framework`). The two examples with a training loop share one command line
(:func:`example_parser`). ``docs/frameworks.md`` is the guide: versions, gotchas, timings.

Only the standard library and the project are imported here, so that a missing framework is
reported by the example that needs it, never by the package.
"""

from __future__ import annotations

import argparse

from biblios_env.engine.scoring import REWARDS
from biblios_env.engine.setup import PLAYER_COUNTS
from experiments.common.cli import HelpFormatter, at_least, invocation_note, program_name


def missing_framework(module: str, extra: str, error: ImportError) -> ModuleNotFoundError:
    """The error an example raises when its framework is not installed: it names the example,
    the import that failed and the command that installs the extra, rather than leaving the
    user with a bare ``No module named ...`` from deep inside an import chain."""
    return ModuleNotFoundError(
        f'{module} needs the {extra!r} extra ({error}); install it with: pip install -e ".[{extra}]"',
        name=error.name,
    )


def example_parser(module: str, description: str, *, train_iterations: int, iteration: str) -> argparse.ArgumentParser:
    """The command line the training examples share: player count, rollout length, seed,
    reward scheme and the number of training iterations (0 runs the rollout only).

    ``iteration`` says what one training iteration is in that framework (a collector batch,
    a collected game), so ``--help`` is exact for each example.
    """
    parser = argparse.ArgumentParser(
        prog=program_name(module),
        description=description,
        epilog=invocation_note(module),
        formatter_class=HelpFormatter,
    )
    parser.add_argument("--players", type=int, choices=PLAYER_COUNTS, default=2, help="players at the table")
    parser.add_argument("--steps", type=at_least(1), default=300, help="env steps of the masked random rollout")
    parser.add_argument("--seed", type=at_least(0), default=0, help="seeds the deals, the policy and the sampling")
    parser.add_argument("--reward", choices=REWARDS, default="win", help="the env's terminal reward scheme")
    parser.add_argument(
        "--train-iterations",
        type=at_least(0),
        default=train_iterations,
        help=f"training iterations, each {iteration}; 0 runs the rollout only",
    )
    return parser
