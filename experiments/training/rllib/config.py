"""The settings of an RLlib run (:class:`RLlibConfig`, each declared once with its option) and the
names of the files a run writes."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Final

from biblios_env.engine.setup import PLAYER_COUNTS
from experiments.common.cli import at_least, positive, seed_value
from experiments.training.runs import default_out

MODULE: Final = "experiments.train_rllib"
PROGRESS_FILE: Final = "progress.csv"
STRENGTH_FILE: Final = "strength.csv"
CHECKPOINTS: Final = "checkpoints"
PROGRESS_COLUMNS: Final = (
    "iteration", "env_steps", "seconds", "episodes", "episode_return_mean", "episode_len_mean", "forfeits",
    "entropy", "policy_loss", "vf_loss",
)  # fmt: skip
#: The fixed opponents of every evaluation.
EVAL_OPPONENTS: Final = ("random", "value")
#: The settings that may change when a run is resumed: how far it goes and where it runs.
RESUMABLE_CHANGES: Final = frozenset({"iterations", "num_env_runners"})


@dataclass(frozen=True)
class RLlibConfig:
    """Every setting of a run, each with its command-line option of the same name
    (:func:`experiments.common.cli.add_config_arguments`); ``run.json`` records them."""

    players: int = field(default=2, metadata={"help": "players at the table", "choices": PLAYER_COUNTS})
    iterations: int = field(default=50, metadata={"help": "training iterations in all", "type": at_least(1)})
    seed: int = field(
        default=1,
        metadata={
            "help": "seeds the deals, the weights and the sampling (a run repeats exactly with PYTHONHASHSEED fixed)",
            "type": seed_value,
        },
    )
    train_batch: int = field(  # env steps (every seat's decisions) per iteration
        default=4000, metadata={"help": "env steps sampled per iteration", "type": at_least(1)}
    )
    minibatch_size: int = field(
        default=256, metadata={"help": "SGD minibatch size", "type": at_least(1), "also": "--minibatch"}
    )
    epochs: int = field(default=4, metadata={"help": "passes over each batch", "type": at_least(1)})
    learning_rate: float = field(default=3e-4, metadata={"help": "Adam learning rate", "type": positive})
    hidden: tuple[int, ...] = field(
        default=(256, 256), metadata={"help": "hidden layer sizes (shared trunk)", "type": at_least(1)}
    )
    eval_deals: int = field(  # per opponent and evaluation; 0: no evaluation
        default=20,
        metadata={
            "help": f"duplicate deals against each of {' and '.join(EVAL_OPPONENTS)} per evaluation, each played "
            "in every seating (0: checkpoints only)",
            "type": at_least(0),
        },
    )
    eval_every: int = field(
        default=10,
        metadata={
            "help": "iterations between evaluations (each saves a checkpoint; the last iteration always does)",
            "type": at_least(1),
        },
    )
    num_env_runners: int = field(
        default=1,
        metadata={
            "help": "Ray actors that sample games, one CPU each (0: sample in this process)",
            "type": at_least(0),
        },
    )
    out: Path = field(
        default_factory=lambda: default_out("rllib"),
        metadata={"help": "new run folder (default runs/rllib-<date>-<time>)"},
    )

    def settings(self) -> dict[str, Any]:
        """What ``run.json`` records (JSON types; the folder is where it is written, not a setting)."""
        data = asdict(self)
        data.pop("out")
        data["hidden"] = list(self.hidden)
        return data


__all__ = [
    "CHECKPOINTS", "EVAL_OPPONENTS", "MODULE", "PROGRESS_COLUMNS", "PROGRESS_FILE", "RESUMABLE_CHANGES",
    "STRENGTH_FILE", "RLlibConfig",
]  # fmt: skip
