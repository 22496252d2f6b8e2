"""An RLlib run: the algorithm's settings, the training loop, and the checkpoints with their
evaluations."""

from __future__ import annotations

import logging
import math
import os
import shutil
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

from experiments.common.match import AgentSpec
from experiments.training import evaluation
from experiments.training.evaluation import EVAL_COLUMNS
from experiments.training.rllib.config import (
    EVAL_OPPONENTS,
    MODULE,
    PROGRESS_COLUMNS,
    PROGRESS_FILE,
    STRENGTH_FILE,
    RLlibConfig,
)
from experiments.training.rllib.run_folder import checkpoint_path, last_seconds, prepare_run
from experiments.training.runs import append_rows
from experiments.training.stopping import StopRequest, resume_line

if TYPE_CHECKING:
    from ray.rllib.algorithms.algorithm import Algorithm
    from ray.rllib.algorithms.ppo import PPOConfig

#: ``strength.csv``: the iteration and the environment steps so far, then the evaluation's columns.
STRENGTH_COLUMNS: Final = ("iteration", "env_steps", *EVAL_COLUMNS)


def ppo_config(config: RLlibConfig, quiet: bool = False) -> PPOConfig:
    """RLlib's PPO settings of a run: shared masked policy, env check on, learner in this process;
    ``quiet``: RLlib logs errors only (it sets its own log level when the algorithm is built)."""
    from ray.rllib.algorithms.ppo import PPOConfig
    from ray.rllib.core.rl_module.multi_rl_module import MultiRLModuleSpec
    from ray.rllib.core.rl_module.rl_module import RLModuleSpec

    from experiments.training.rllib import support as rllib_support

    module = RLModuleSpec(
        module_class=rllib_support.ActionMaskingTorchRLModule,
        model_config={"fcnet_hiddens": list(config.hidden), "head_fcnet_hiddens": [], "vf_share_layers": True},
    )
    return (
        PPOConfig()
        .environment(rllib_support.RLLIB_ENV, env_config={"num_players": config.players})
        .env_runners(num_env_runners=config.num_env_runners, num_envs_per_env_runner=1, rollout_fragment_length="auto")
        .learners(num_learners=0)
        .training(
            train_batch_size_per_learner=config.train_batch,
            minibatch_size=config.minibatch_size,
            num_epochs=config.epochs,
            lr=config.learning_rate,
            gamma=1.0,
        )
        .multi_agent(
            policies={rllib_support.POLICY},
            policy_mapping_fn=rllib_support.shared_policy,
            policies_to_train=[rllib_support.POLICY],
        )
        .rl_module(rl_module_spec=MultiRLModuleSpec(rl_module_specs={rllib_support.POLICY: module}))
        .callbacks(on_episode_end=rllib_support.count_forfeits)
        .debugging(seed=config.seed, log_level="ERROR" if quiet else "WARN")
    )


def _number(value: Any) -> float | str:
    """A metric for the CSV: a float, or blank where RLlib has none (no episode finished)."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return ""
    return float(value)


def progress_row(result: dict[str, Any], iteration: int, seconds: float) -> dict[str, Any]:
    """The ``progress.csv`` row of one ``Algorithm.train()`` result."""
    from experiments.training.rllib.support import FORFEITS, POLICY

    runners = result.get("env_runners", {})
    learner = result.get("learners", {}).get(POLICY, {})
    return {
        "iteration": iteration,
        "env_steps": int(result["num_env_steps_sampled_lifetime"]),
        "seconds": round(seconds, 2),
        "episodes": int(runners.get("num_episodes", 0)),
        "episode_return_mean": _number(runners.get("episode_return_mean")),
        "episode_len_mean": _number(runners.get("episode_len_mean")),
        "forfeits": int(runners.get(FORFEITS, 0)),
        **{name: _number(learner.get(name)) for name in ("entropy", "policy_loss", "vf_loss")},
    }


def evaluate(checkpoint: Path, config: RLlibConfig, iteration: int, env_steps: int) -> list[dict[str, Any]]:
    """The ``strength.csv`` rows: the checkpoint against each of :data:`EVAL_OPPONENTS` on the same
    duplicate deals every time (:func:`experiments.training.evaluation.evaluate`)."""
    from experiments.training.rllib.support import RLlibAgent

    learner = AgentSpec(f"{RLlibAgent.__module__}.{RLlibAgent.__qualname__}", (("checkpoint", str(checkpoint)),))
    return [
        {"iteration": iteration, "env_steps": env_steps, **evaluation.evaluate(learner, config.players, opponent,
                                                                               config.eval_deals)}
        for opponent in EVAL_OPPONENTS
    ]  # fmt: skip


def save_checkpoint(algo: Algorithm, config: RLlibConfig, iteration: int, env_steps: int) -> list[dict[str, Any]]:
    """Save the algorithm, evaluate the saved policy, write the rows, then rename the checkpoint
    into place: a checkpoint under its final name always has its evaluation written."""
    final = checkpoint_path(config.out, iteration)
    partial = final.with_name(f".{final.name}.partial")
    if partial.exists():
        shutil.rmtree(partial)  # left by an interrupted run
    partial.parent.mkdir(parents=True, exist_ok=True)
    algo.save_to_path(str(partial.resolve()))
    rows = evaluate(partial, config, iteration, env_steps) if config.eval_deals else []
    append_rows(config.out / STRENGTH_FILE, STRENGTH_COLUMNS, rows)
    os.replace(partial, final)
    return rows


#: RLlib's loggers that note its defaults and deprecations while an algorithm is built.
QUIETED_LOGGERS: Final = (
    "ray.rllib.algorithms.algorithm_config", "ray.rllib.core.rl_module.rl_module", "ray.tune.utils.util",
)  # fmt: skip


class ForfeitError(RuntimeError):
    """An episode ended in a forfeit during training: the policy chose an illegal action."""


def train(
    config: RLlibConfig,
    resume: bool = False,
    progress: bool = True,
    quiet: bool = False,
    stop: StopRequest | None = None,
    flags: Sequence[str] = (),
) -> Path:
    """Train (or, with ``resume``, continue) the run in ``config.out`` on the Ray this process is
    connected to; returns the last checkpoint. Ctrl-C or SIGTERM finish the current iteration,
    save its checkpoint and print the line that resumes (``stop`` replaces that handler: a caller
    that stops the run itself). See the module docs for what is written."""
    import torch
    from tqdm import tqdm

    from experiments.training.rllib import support as rllib_support

    torch.set_num_threads(1)
    done = prepare_run(config, resume)
    rllib_support.register_rllib_env()
    if quiet:  # RLlib's notes on its new API stack and deprecations, logged before its log level applies
        for name in QUIETED_LOGGERS:
            logging.getLogger(name).setLevel(logging.ERROR)
    algo = ppo_config(config, quiet).build_algo()
    try:
        if done:
            algo.restore_from_path(str(checkpoint_path(config.out, done).resolve()))
        seconds = last_seconds(config.out)
        bar = tqdm(total=config.iterations, initial=done, unit="iteration", disable=not progress, dynamic_ncols=True)
        with bar, stop or StopRequest("the current iteration") as stop:
            for iteration in range(done + 1, config.iterations + 1):
                result = algo.train()
                seconds += float(result["time_this_iter_s"])
                row = progress_row(result, iteration, seconds)
                append_rows(config.out / PROGRESS_FILE, PROGRESS_COLUMNS, [row])
                if row["forfeits"]:
                    raise ForfeitError(
                        f"iteration {iteration}: {row['forfeits']} episode(s) ended in a forfeit, so the policy chose "
                        "illegal actions: the action mask does not reach it (see progress.csv)"
                    )
                stop.after_update(iteration)
                if iteration % config.eval_every == 0 or iteration == config.iterations or stop.requested:
                    strength = save_checkpoint(algo, config, iteration, row["env_steps"])
                    bar.write(_evaluation_line(iteration, strength))
                bar.set_postfix(env_steps=row["env_steps"], episode_len=row["episode_len_mean"])
                bar.update()
                if stop.requested and iteration < config.iterations:
                    bar.write(resume_line(MODULE, config.out, f"at iteration {iteration}", flags))
                    return checkpoint_path(config.out, iteration)
    finally:
        algo.stop()
    return checkpoint_path(config.out, max(done, config.iterations))  # the last iteration is always saved


def _evaluation_line(iteration: int, rows: Sequence[dict[str, Any]]) -> str:
    shown = ", ".join(
        f"vs {row['opponent']} {row['win_rate']:.3f} [{row['ci_low']:.3f}, {row['ci_high']:.3f}]" for row in rows
    )
    return f"iteration {iteration}: checkpoint saved" + (f"; win rate {shown}" if shown else "")


__all__ = ["STRENGTH_COLUMNS", "ForfeitError", "evaluate", "ppo_config", "progress_row", "save_checkpoint", "train"]
