"""The SB3 callback of self-play: it grows the snapshot pool, evaluates the policy as PPO trains,
writes the resumable checkpoint and stops the run at the end of an update when asked."""

from __future__ import annotations

import math
import time
from pathlib import Path
from typing import Any

from agents.ppo_agent import export_policy
from experiments.training.opponents import Mixture, factory_pool
from experiments.training.ppo import checkpoint
from experiments.training.ppo.checkpoint import SelfPlayState
from experiments.training.ppo.config import PPOConfig
from experiments.training.ppo.evaluation import Evaluations
from experiments.training.stopping import StopRequest


def next_multiple(step: int, every: int) -> float:
    """The first multiple of ``every`` after ``step`` (never, for ``every <= 0``: the option is off)."""
    return (step // every + 1) * every if every > 0 else math.inf


def between_updates(callback: Any, config: PPOConfig, stop: StopRequest) -> None:
    """Evaluate, checkpoint and stop between updates, where the policy has learned from exactly
    ``num_timesteps`` steps (inside a rollout it is still the previous update's: an evaluation
    there would be labelled with steps it has not learned from)."""
    state, steps = callback.state, callback.num_timesteps
    if steps >= state.next_eval:
        callback.evaluate_now()
        state.next_eval = next_multiple(steps, config.eval_every)
    stop.after_update(callback)
    due = steps >= state.next_checkpoint
    if due:
        state.next_checkpoint = next_multiple(steps, config.checkpoint_every)
    if due or stop.requested:
        callback.save_checkpoint()
    callback.stopping = stop.requested


def build_callback(config: PPOConfig, mixture: Mixture, stop: StopRequest, resumed: SelfPlayState | None = None) -> Any:
    """The SB3 callback that grows the snapshot pool, evaluates, checkpoints and stops (built here:
    SB3 is imported lazily). ``resumed`` is the state of the checkpoint a resumed run starts from."""
    from stable_baselines3.common.callbacks import BaseCallback

    out = config.out

    class SelfPlayCallback(BaseCallback):
        """Snapshots into the pool every ``snapshot_every`` steps; evaluation every ``eval_every``
        steps and a checkpoint every ``checkpoint_every``, both between updates, where the policy
        has learned from exactly ``num_timesteps`` steps."""

        def __init__(self) -> None:
            super().__init__()
            state = resumed or SelfPlayState(
                next_eval=next_multiple(0, config.eval_every), next_checkpoint=next_multiple(0, config.checkpoint_every)
            )
            self.state = state
            self.snapshots = [Path(path) for path in state.snapshots]
            self.started = time.perf_counter() - state.seconds  # the clock of the whole run, across stops
            self.evaluations = Evaluations(config, self.started, state.best)
            self.stopping = False

        def _on_training_start(self) -> None:
            if resumed is not None:  # the pool as it was; the start's snapshot and evaluation are done
                self.training_env.env_method("set_opponents", factory_pool(mixture, self.snapshots))
                return
            self._snapshot()  # the initial policy is the pool's first member
            if config.eval_every > 0:
                self.evaluate_now()  # the curve starts from the initial (random or warm-started) policy

        def _on_step(self) -> bool:
            if self.stopping:
                return False  # the first step of a rollout after a stop was asked: its data is not trained on
            if self.num_timesteps >= self.state.next_snapshot:
                self._snapshot()
            return True

        def _on_rollout_start(self) -> None:
            between_updates(self, config, stop)

        def _snapshot(self) -> None:
            path = out / "pool" / f"snapshot_{self.num_timesteps:09d}.npz"
            export_policy(self.model.policy, path, {"timesteps": self.num_timesteps})
            self.snapshots = [*self.snapshots, path][-config.pool_size :]
            self.training_env.env_method("set_opponents", factory_pool(mixture, self.snapshots))
            self.state.next_snapshot = self.num_timesteps + config.snapshot_every

        def save_checkpoint(self) -> None:
            state = self.state
            state.timesteps = self.num_timesteps
            state.snapshots = [str(path) for path in self.snapshots]
            state.best = self.evaluations.best
            state.seconds = time.perf_counter() - self.started
            checkpoint.save(self.model, state, out)

        def evaluate_now(self) -> None:
            path = export_policy(self.model.policy, out / "eval_policy.npz", {"timesteps": self.num_timesteps})
            self.evaluations.evaluate(path, self.num_timesteps, self.logger.record)

    return SelfPlayCallback()


__all__ = ["build_callback"]
