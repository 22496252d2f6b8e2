"""The settings of a MaskablePPO training run, each declared once with its command-line option."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from experiments.common.cli import (
    BACKEND_OPTION,
    RAY_ADDRESS_OPTION,
    at_least,
    fraction,
    non_negative,
    positive,
    seed_value,
)
from experiments.common.parallel import LOCAL
from experiments.training.runs import default_out, settings_json


@dataclass(frozen=True)
class PPOConfig:
    """Every setting of a training run, one field per command-line option (the same names and
    defaults: :func:`experiments.common.cli.add_config_arguments` builds the options from the fields,
    their ``section`` the groups of the help). ``training.json`` records them under
    ``settings``, in this order."""

    players: tuple[int, ...] = field(
        default=(2,),
        metadata={
            "help": "player count(s); with several, each episode draws one",
            "choices": (2, 3, 4),
            "section": "run",
        },
    )
    total_steps: int = field(default=400_000, metadata={"help": "learner decisions to train for", "type": at_least(1)})
    seed: int = field(
        default=1, metadata={"help": "seed of the model, the environments and the warm start", "type": seed_value}
    )
    n_envs: int = field(
        default=8, metadata={"help": "vectorized environments (games)", "type": at_least(1), "also": "--num-games"}
    )
    vec: str = field(
        default="dummy",  # "dummy": environments stepped in this process; "subproc": in worker processes
        metadata={
            "help": "step the environments in this process or in worker processes",
            "choices": ("dummy", "subproc"),
        },
    )
    torch_threads: int = field(
        default=1, metadata={"help": "torch threads (more is slower on a small machine)", "type": at_least(1)}
    )
    out: Path = field(
        default_factory=lambda: default_out("ppo"), metadata={"help": "output folder (default runs/ppo-<date>-<time>)"}
    )
    progress: bool = field(
        default=True, metadata={"help": "show a progress bar during PPO (default: shown; --no-progress hides it)"}
    )
    reward: str = field(
        default="vp",
        metadata={
            "help": "the environment's reward option (vp: own VP minus the best other, a denser signal than win)",
            "choices": ("win", "vp"),
        },
    )
    opponents: tuple[str, ...] = field(
        default=("value@0.6", "hoarder@0.1", "random@0.05", "snapshot@0.25"),
        metadata={
            "help": "opponent mixture: SPEC@WEIGHT items (agent specs; 'snapshot': the learner's saved past versions)",
            "section": "opponents",
        },
    )
    snapshot_every: int = field(default=50_000, metadata={"help": "steps between snapshots", "type": at_least(1)})
    pool_size: int = field(default=20, metadata={"help": "snapshots kept (the newest)", "type": at_least(1)})
    eval_every: int = field(
        default=100_000,
        metadata={
            "help": "steps between evaluations (0: at the end only)",
            "type": at_least(0),
            "section": "evaluation and checkpoints",
        },
    )
    eval_deals: int = field(
        default=50,
        metadata={
            "help": "duplicate deals per evaluation opponent (each played in every seating)",
            "type": at_least(1),
        },
    )
    eval_opponents: tuple[str, ...] = field(
        default=("value", "hoarder", "random"),
        metadata={"help": "fixed opponents (agent specs); the first one picks best_policy.npz"},
    )
    checkpoint_every: int = field(
        default=100_000, metadata={"help": "steps between full checkpoints (0: none)", "type": at_least(0)}
    )
    bc_games: int = field(
        default=1000,
        metadata={
            "help": "teacher games to imitate (0: start from scratch)",
            "type": at_least(0),
            "section": "warm start (before PPO): behaviour cloning and DAgger, or a saved model",
        },
    )
    bc_teacher: str = field(default="value", metadata={"help": "the agent to imitate (an agent spec)"})
    bc_data: Path | None = field(
        default=None, metadata={"help": "demonstrations file: loaded if it exists, else collected and saved"}
    )
    bc_epochs: int = field(default=6, metadata={"help": "epochs of behaviour cloning", "type": at_least(1)})
    bc_learning_rate: float = field(
        default=1e-3, metadata={"help": "Adam learning rate of cloning and DAgger", "type": positive}
    )
    dagger_rounds: int = field(
        default=5, metadata={"help": "DAgger rounds after cloning (0: none)", "type": at_least(0)}
    )
    dagger_games: int = field(default=400, metadata={"help": "learner games per DAgger round", "type": at_least(1)})
    dagger_epochs: int = field(
        default=2, metadata={"help": "epochs over all data per DAgger round", "type": at_least(1)}
    )
    workers: int = field(default=2, metadata={"help": "processes that play the warm-start games", "type": at_least(1)})
    backend: str = field(default=LOCAL, metadata=BACKEND_OPTION)
    ray_address: str | None = field(default=None, metadata=RAY_ADDRESS_OPTION)
    init: Path | None = field(
        default=None, metadata={"help": "start from this MaskablePPO .zip (same architecture) instead"}
    )
    init_network: Path | None = field(
        default=None,
        metadata={"help": "start from this network file of experiments.train_network instead (sets --hidden from it)"},
    )
    hidden: tuple[int, ...] = field(
        default=(128, 128),
        metadata={"help": "hidden layers of the actor and of the critic", "type": at_least(1), "section": "PPO"},
    )
    activation: str = field(default="relu", metadata={"help": "hidden-layer activation", "choices": ("relu", "tanh")})
    learning_rate: float = field(default=5e-5, metadata={"help": "Adam learning rate of PPO", "type": positive})
    n_steps: int = field(
        default=512,
        metadata={"help": "rollout steps per environment per update", "type": at_least(1), "also": "--rollout-steps"},
    )
    batch_size: int = field(
        default=256, metadata={"help": "minibatch size of a PPO update", "type": at_least(1), "also": "--minibatch"}
    )
    n_epochs: int = field(
        default=4, metadata={"help": "passes over each rollout per update", "type": at_least(1), "also": "--epochs"}
    )
    gamma: float = field(
        default=1.0, metadata={"help": "discount factor (terminal rewards: 1 keeps them whole)", "type": fraction}
    )
    gae_lambda: float = field(default=0.95, metadata={"help": "GAE lambda of the advantage estimate", "type": fraction})
    clip_range: float = field(
        default=0.2, metadata={"help": "PPO's clipping of the probability ratio", "type": positive, "also": "--clip"}
    )
    ent_coef: float = field(
        default=0.0, metadata={"help": "entropy bonus coefficient", "type": non_negative, "also": "--entropy"}
    )
    vf_coef: float = field(
        default=0.5, metadata={"help": "value-loss coefficient", "type": non_negative, "also": "--value-weight"}
    )

    def settings(self) -> dict[str, Any]:
        """The settings as ``run.json`` and ``training.json`` record them: paths as text,
        sequences as lists."""
        return settings_json(self)


__all__ = ["PPOConfig"]
