"""MaskablePPO self-play training: the environments, the model, the warm start, the callbacks and
every file a run writes (see :mod:`experiments.training.ppo`)."""

from __future__ import annotations

import json
import platform
import shlex
import time
from collections.abc import Sequence
from datetime import datetime
from pathlib import Path
from typing import Any, Final

from agents.network import NumpyNetwork
from agents.ppo_agent import export_policy, read_policy_file, write_policy_file
from biblios_env.gym_env import BibliosGymEnv, OpponentPool
from experiments.training.evaluation import plot_learning_curve
from experiments.training.ppo.callback import build_callback
from experiments.training.ppo.config import PPOConfig
from experiments.training.ppo.opponents import SELF, build_pool, parse_mixture
from experiments.training.ppo.warm_start import load_network, network_arch, warm_start

#: The command that trains: ``training.json`` and the policy files record it.
MODULE: Final = "experiments.train_ppo"


def make_env_factory(players: tuple[int, ...], pool: OpponentPool, reward: str, seed: int, monitor: Path) -> Any:
    """A training environment whose ``Monitor`` feeds SB3's log and writes every episode (the
    learner's reward and length) to ``monitor.monitor.csv``, which the training notebook plots."""

    def factory() -> Any:
        from stable_baselines3.common.monitor import Monitor

        env = BibliosGymEnv(players, pool, reward=reward)
        env.reset(seed=seed)
        return Monitor(env, filename=str(monitor))

    return factory


def build_model(config: PPOConfig, vec_env: Any, initial: NumpyNetwork | None) -> tuple[Any, Any]:
    """The MaskablePPO model of ``config`` on ``vec_env`` and its architecture (``initial``'s when
    it starts from a network file)."""
    import torch
    from sb3_contrib import MaskablePPO

    activation = {"relu": torch.nn.ReLU, "tanh": torch.nn.Tanh}[config.activation]
    net_arch = {"pi": list(config.hidden), "vf": list(config.hidden)} if initial is None else network_arch(initial)
    model = MaskablePPO(
        "MlpPolicy",
        vec_env,
        learning_rate=config.learning_rate,
        n_steps=config.n_steps,
        batch_size=config.batch_size,
        n_epochs=config.n_epochs,
        gamma=config.gamma,
        gae_lambda=config.gae_lambda,
        clip_range=config.clip_range,
        ent_coef=config.ent_coef,
        vf_coef=config.vf_coef,
        policy_kwargs={"net_arch": net_arch, "activation_fn": activation},
        seed=config.seed,
        device="cpu",
        verbose=0,
    )
    return model, net_arch


def train(config: PPOConfig, argv: Sequence[str] = ()) -> dict[str, Any]:
    """Train as ``config`` says; ``argv`` is the command line that asked for it (for ``training.json``)."""
    import torch
    from stable_baselines3.common.callbacks import CallbackList, CheckpointCallback
    from stable_baselines3.common.logger import configure
    from stable_baselines3.common.vec_env import DummyVecEnv, SubprocVecEnv

    torch.set_num_threads(config.torch_threads)
    out = config.out
    out.mkdir(parents=True, exist_ok=True)
    (out / "eval.csv").unlink(missing_ok=True)
    mixture = parse_mixture(config.opponents)
    players = config.players
    start = time.perf_counter()
    initial_pool = build_pool({name: w for name, w in mixture.items() if name != SELF} or {"random": 1.0}, [])
    (out / "monitor").mkdir(exist_ok=True)
    factories = [
        make_env_factory(players, initial_pool, config.reward, config.seed * 1000 + i, out / "monitor" / f"env_{i}")
        for i in range(config.n_envs)
    ]
    vec_env = SubprocVecEnv(factories) if config.vec == "subproc" else DummyVecEnv(factories)
    try:  # the environments' worker processes end with the run, also when it fails
        initial = None if config.init_network is None else NumpyNetwork.load(config.init_network)
        model, net_arch = build_model(config, vec_env, initial)
        model.set_logger(configure(str(out), ["csv"]))
        warm: dict[str, Any] = {}
        if initial is not None:
            load_network(model.policy, initial)
            warm = {"init_network": str(config.init_network), "net_arch": net_arch}
        elif config.init is not None:
            model.set_parameters(str(config.init), exact_match=False, device="cpu")
            warm = {"init": str(config.init)}
        elif config.bc_games > 0 or config.bc_data:
            warm = warm_start(model, config)
        self_play = build_callback(config, mixture, start)
        callbacks = [self_play]
        if config.checkpoint_every > 0:
            every = max(1, config.checkpoint_every // config.n_envs)  # CheckpointCallback counts vectorized steps
            callbacks.append(CheckpointCallback(every, str(out / "checkpoints"), name_prefix="ppo"))
        print(
            f"Training MaskablePPO for {config.total_steps:,} steps, {'/'.join(map(str, players))} players, "
            f"{config.n_envs} envs, "
            f"opponents {mixture}; output in {out}/",
            flush=True,
        )
        model.learn(config.total_steps, callback=CallbackList(callbacks), progress_bar=config.progress)
        train_seconds = time.perf_counter() - start
        self_play.evaluate_now()
        model.save(out / "final_model.zip")
        info = {
            "command": f"python -m {MODULE} " + " ".join(shlex.quote(a) for a in argv),
            "settings": config.settings(),
            "timesteps": int(model.num_timesteps),
            "train_seconds": round(train_seconds, 1),
            "steps_per_second": round(model.num_timesteps / train_seconds, 1),
            "warm_start": warm,
            "best_eval": {
                "win_rate": self_play.evaluations.best[0],
                "timesteps": self_play.evaluations.best[1],
                "opponent": config.eval_opponents[0],
            },
            "final_eval": [row for row in self_play.evaluations.rows if row["timesteps"] == model.num_timesteps],
            "versions": _versions(),
            "finished": datetime.now().isoformat(timespec="seconds"),
        }
        provenance = {"trained_by": info["command"], "train_seconds": info["train_seconds"], "players": list(players)}
        export_policy(model.policy, out / "policy.npz", {**provenance, "timesteps": info["timesteps"]})
        if (out / "best_policy.npz").is_file():  # stamp the same provenance on the best evaluated policy
            best = read_policy_file(out / "best_policy.npz")
            best.metadata.update(provenance, best_eval=info["best_eval"])
            write_policy_file(best, out / "best_policy.npz")
        (out / "training.json").write_text(json.dumps(info, indent=1))
        plot_learning_curve(
            self_play.evaluations.rows,
            "timesteps",
            out / "learning_curve.png",
            f"MaskablePPO self-play, {'/'.join(map(str, players))} players, seed {config.seed}",
            "training steps (learner decisions)",
        )
    finally:
        vec_env.close()
    print(
        f"Done: {info['timesteps']:,} steps in {train_seconds / 60:.1f} min ({info['steps_per_second']} steps/s); "
        f"saved {out}/policy.npz, final_model.zip, eval.csv, learning_curve.png, training.json",
        flush=True,
    )
    return info


def _versions() -> dict[str, str]:
    from importlib.metadata import PackageNotFoundError, version

    found = {"python": platform.python_version()}
    for package in ("torch", "stable-baselines3", "sb3-contrib", "gymnasium", "numpy"):
        try:
            found[package] = version(package)
        except PackageNotFoundError:
            found[package] = "missing"
    return found


__all__ = ["MODULE", "make_env_factory", "train"]
