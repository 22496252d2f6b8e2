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

import numpy as np

from agents.network import NumpyNetwork
from agents.ppo_agent import export_policy, read_policy_file, write_policy_file
from biblios_env.gym_env import BibliosGymEnv, OpponentPool
from experiments.training.evaluation import plot_learning_curve
from experiments.training.opponents import FACTORY_POOL_NAMES, Mixture, factory_pool
from experiments.training.ppo import checkpoint
from experiments.training.ppo.callback import build_callback
from experiments.training.ppo.checkpoint import SelfPlayState
from experiments.training.ppo.config import PPOConfig
from experiments.training.ppo.warm_start import WarmStartStoppedError, load_network, network_arch, warm_start
from experiments.training.runs import RUN_FILE, keep_rows, start_run
from experiments.training.stopping import StopRequest, resume_line

#: The command that trains: ``training.json`` and the policy files record it.
MODULE: Final = "experiments.train_ppo"


def make_env_factory(
    players: tuple[int, ...], pool: OpponentPool, reward: str, seed: int, monitor: Path, new_file: bool = True
) -> Any:
    """A training environment whose ``Monitor`` feeds SB3's log and writes every episode (the
    learner's reward and length) to ``monitor.monitor.csv``, which the training notebook plots
    (``new_file=False``: a resumed run appends to it)."""

    def factory() -> Any:
        from stable_baselines3.common.monitor import Monitor

        env = BibliosGymEnv(players, pool, reward=reward)
        env.reset(seed=seed)
        return Monitor(env, filename=str(monitor), override_existing=new_file)

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


def train(
    config: PPOConfig,
    argv: Sequence[str] = (),
    resume: bool = False,
    stop: StopRequest | None = None,
    flags: Sequence[str] = (),
) -> dict[str, Any] | None:
    """Train as ``config`` says, or with ``resume`` continue the run in ``config.out`` from its
    checkpoint (or its warm start from the parts it kept); ``argv`` is the command line that asked
    for it (for ``run.json`` and ``training.json``). Returns ``training.json``'s record, or None
    when a stop (Ctrl-C, SIGTERM, ``stop``) ended the run at a checkpoint or with the warm start's
    finished parts saved, having printed the command that resumes (with ``flags``, the options
    given that the resumed command must repeat). ``stop`` replaces the signal handler (a caller
    that stops the run itself)."""
    import torch
    from stable_baselines3.common.callbacks import CallbackList, CheckpointCallback
    from stable_baselines3.common.vec_env import DummyVecEnv, SubprocVecEnv

    torch.set_num_threads(config.torch_threads)
    out = config.out
    resumed = start_run_folder(config, argv, resume)
    if resumed is None:
        print(plan(config), flush=True)
    mixture = Mixture.parse(config.opponents, special=FACTORY_POOL_NAMES)
    players = config.players
    initial_pool = factory_pool(mixture, [])
    (out / "monitor").mkdir(exist_ok=True)
    monitor = out / "monitor"
    factories = [
        make_env_factory(players, initial_pool, config.reward, env_seed(config.seed, i, resumed), monitor / f"env_{i}",
                         resumed is None)
        for i in range(config.n_envs)
    ]  # fmt: skip
    vec_env = SubprocVecEnv(factories) if config.vec == "subproc" else DummyVecEnv(factories)
    try:  # the environments' worker processes end with the run, also when it fails
        with stop or StopRequest() as stop:
            if resumed is None:
                try:
                    model, warm = new_model(config, vec_env, stop)
                except WarmStartStoppedError as stopped:
                    print(resume_line(MODULE, out, str(stopped), flags), flush=True)
                    return None
            else:
                model = checkpoint.load_model(out, resumed, vec_env)
                model.set_random_seed(config.seed + resumed.timesteps)  # a resumed run is reproducible too
                warm = resumed.warm_start
            model.set_logger(csv_logger(out, resumed))
            self_play = build_callback(config, mixture, stop, resumed)
            self_play.state.warm_start = warm
            callbacks = [self_play]
            if config.checkpoint_every > 0:
                every = max(1, config.checkpoint_every // config.n_envs)  # CheckpointCallback counts vectorized steps
                callbacks.append(CheckpointCallback(every, str(out / "checkpoints"), name_prefix="ppo"))
            done = 0 if resumed is None else resumed.timesteps
            print(
                f"{'Continuing' if resumed else 'Training'} MaskablePPO to {config.total_steps:,} steps "
                f"(from {done:,}), {'/'.join(map(str, players))} players, {config.n_envs} envs, "
                f"opponents {' '.join(config.opponents)}; output in {out}/",
                flush=True,
            )
            model.learn(
                config.total_steps - done, callback=CallbackList(callbacks), progress_bar=config.progress,
                reset_num_timesteps=resumed is None,
            )  # fmt: skip
            if stop.requested:
                print(resume_line(MODULE, out, f"at {self_play.state.timesteps:,} steps", flags), flush=True)
                return None
        return finish(config, argv, model, self_play, warm)
    finally:
        vec_env.close()


def plan(config: PPOConfig) -> str:
    """What a new run will do, phase by phase (each has a progress bar with its ETA)."""
    phases = []
    if config.init_network is not None or config.init is not None:
        phases.append(f"start from {config.init_network or config.init}")
    elif config.bc_games > 0 or config.bc_data:
        phases.append(
            f"warm start: behaviour cloning of {config.bc_teacher} ({config.bc_games:,} games, {config.bc_epochs} "
            f"epochs), {config.dagger_rounds} DAgger round(s) of {config.dagger_games:,} games"
        )
    evaluations = f"every {config.eval_every:,} steps" if config.eval_every > 0 else "at the end"
    phases.append(
        f"MaskablePPO to {config.total_steps:,} steps; evaluations {evaluations} "
        f"({config.eval_deals} deals against each of {', '.join(config.eval_opponents)})"
    )
    return "plan: " + "; then ".join(phases)


def start_run_folder(config: PPOConfig, argv: Sequence[str], resume: bool) -> SelfPlayState | None:
    """A new run's folder (refused if it holds a run: a checkpoint, or a ``run.json`` alone, which
    ``--resume`` continues), or a resumed run's checkpoint state with the logs trimmed back to the
    checkpoint's step (a stop after it wrote rows for steps that the resumed run plays again). A
    resumed run stopped before its first checkpoint (in its warm start) has none: None, and the
    run starts its model again, its warm start from what it kept."""
    out = config.out
    if resume and not (out / checkpoint.STATE_FILE).exists() and not (out / checkpoint.MODEL_FILE).exists():
        for name in ("eval.csv", "progress.csv"):
            (out / name).unlink(missing_ok=True)
        return None
    if resume:
        state = checkpoint.load_state(out)
        keep_rows(out / "eval.csv", lambda row: int(row["timesteps"]) <= state.timesteps)
        keep_rows(out / "progress.csv", lambda row: int(row["time/total_timesteps"]) <= state.timesteps)
        return state
    held = (out / checkpoint.STATE_FILE).exists() or (out / RUN_FILE).exists()
    start_run(out, MODULE, config.settings(), held=held, command_line=command_line(argv))
    for name in ("eval.csv", "progress.csv"):
        (out / name).unlink(missing_ok=True)
    return None


def env_seed(seed: int, index: int, resumed: SelfPlayState | None) -> int:
    """Environment ``index``'s seed: ``seed * 1000 + index`` for a new run; a resumed run deals
    other games (derived from the step it resumes at)."""
    if resumed is None:
        return seed * 1000 + index
    return int(np.random.SeedSequence([seed, index, resumed.timesteps]).generate_state(1)[0])


def new_model(config: PPOConfig, vec_env: Any, stop: StopRequest | None = None) -> tuple[Any, dict[str, Any]]:
    """A new run's model and its warm start (the record of how it started); a ``stop`` during the
    warm start raises :class:`WarmStartStoppedError` once its finished parts are saved."""
    initial = None if config.init_network is None else NumpyNetwork.load(config.init_network)
    model, net_arch = build_model(config, vec_env, initial)
    warm: dict[str, Any] = {}
    if initial is not None:
        load_network(model.policy, initial)
        warm = {"init_network": str(config.init_network), "net_arch": net_arch}
    elif config.init is not None:
        model.set_parameters(str(config.init), exact_match=False, device="cpu")
        warm = {"init": str(config.init)}
    elif config.bc_games > 0 or config.bc_data:
        warm = warm_start(model, config, stop)
    return model, warm


def csv_logger(out: Path, resumed: SelfPlayState | None) -> Any:
    """SB3's logger writing ``progress.csv``; a resumed run's rows follow the earlier ones."""
    from stable_baselines3.common.logger import CSVOutputFormat, Logger, configure

    if resumed is None or not (out / "progress.csv").exists():
        return configure(str(out), ["csv"])

    class ContinuedCSV(CSVOutputFormat):
        """SB3's CSV output, opened on the existing file: its header's keys kept, rows appended."""

        def __init__(self, filename: str) -> None:
            self.file = open(filename, "r+")  # noqa: SIM115 (closed by the logger, as SB3's own)
            self.keys = self.file.readline().strip().split(",")
            self.file.seek(0, 2)
            self.separator, self.quotechar = ",", '"'

    return Logger(str(out), [ContinuedCSV(str(out / "progress.csv"))])


def finish(config: PPOConfig, argv: Sequence[str], model: Any, self_play: Any, warm: dict[str, Any]) -> dict[str, Any]:
    """The end of a run: the final evaluation, model and policy files, ``training.json``, the plot."""
    out = config.out
    self_play.evaluate_now()
    train_seconds = time.perf_counter() - self_play.started
    self_play.save_checkpoint()
    model.save(out / "final_model.zip")
    info = {
        "command": command_line(argv),
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
    provenance = {
        "trained_by": info["command"],
        "train_seconds": info["train_seconds"],
        "players": list(config.players),
    }
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
        f"MaskablePPO self-play, {'/'.join(map(str, config.players))} players, seed {config.seed}",
        "training steps (learner decisions)",
    )
    print(
        f"Done: {info['timesteps']:,} steps in {train_seconds / 60:.1f} min ({info['steps_per_second']} steps/s); "
        f"saved {out}/policy.npz, final_model.zip, eval.csv, learning_curve.png, training.json",
        flush=True,
    )
    return info


def command_line(argv: Sequence[str]) -> str:
    """The command that started the run, as ``training.json`` and the policy files record it."""
    return f"python -m {MODULE} " + " ".join(shlex.quote(a) for a in argv)


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
