"""The SB3 callback of self-play: it grows the snapshot pool and evaluates the policy as PPO trains."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

from agents.ppo_agent import export_policy
from experiments.training.ppo.config import PPOConfig
from experiments.training.ppo.evaluation import Evaluations
from experiments.training.ppo.opponents import build_pool


def build_callback(config: PPOConfig, mixture: dict[str, float], start: float) -> Any:
    """The SB3 callback that grows the snapshot pool and evaluates (built here: SB3 is imported lazily)."""
    from stable_baselines3.common.callbacks import BaseCallback

    out = config.out

    class SelfPlayCallback(BaseCallback):
        """Snapshots into the pool every ``snapshot_every`` steps; evaluation every ``eval_every`` steps."""

        def __init__(self) -> None:
            super().__init__()
            self.snapshots: list[Path] = []
            self.next_snapshot = 0
            self.next_eval = config.eval_every if config.eval_every > 0 else math.inf
            self.evaluations = Evaluations(config, start)

        def _on_training_start(self) -> None:
            self._snapshot()  # the initial policy is the pool's first member
            if config.eval_every > 0:
                self.evaluate_now()  # the curve starts from the initial (random or warm-started) policy

        def _on_step(self) -> bool:
            if self.num_timesteps >= self.next_snapshot:
                self._snapshot()
            return True

        def _on_rollout_start(self) -> None:
            """Evaluate between updates, where the policy has learned from exactly ``num_timesteps`` steps.

            Inside a rollout (``_on_step``) the policy is still the one of the previous update: an
            evaluation there is labelled with steps it has not learned from, and at the last step
            the evaluation after ``learn`` wrote a second, different row for the same step."""
            if self.num_timesteps >= self.next_eval:
                self.evaluate_now()
                self.next_eval = (self.num_timesteps // config.eval_every + 1) * config.eval_every

        def _snapshot(self) -> None:
            path = out / "pool" / f"snapshot_{self.num_timesteps:09d}.npz"
            export_policy(self.model.policy, path, {"timesteps": self.num_timesteps})
            self.snapshots = [*self.snapshots, path][-config.pool_size :]
            self.training_env.env_method("set_opponents", build_pool(mixture, self.snapshots))
            self.next_snapshot = self.num_timesteps + config.snapshot_every

        def evaluate_now(self) -> None:
            path = export_policy(self.model.policy, out / "eval_policy.npz", {"timesteps": self.num_timesteps})
            self.evaluations.evaluate(path, self.num_timesteps, self.logger.record)

    return SelfPlayCallback()


__all__ = ["build_callback"]
