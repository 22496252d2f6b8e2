"""PPO's warm start (see :mod:`experiments.training.ppo`): behaviour cloning of a teacher, then
DAgger, on the demonstrations of :mod:`experiments.training.teacher_games`; or the weights of a
network of expert iteration (``--init-network``: :func:`network_arch`, :func:`load_network`)."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any, Final

import numpy as np

from agents.network import NumpyNetwork
from agents.ppo_agent import numpy_policy
from experiments.common.parallel import Runner
from experiments.training.kept_games import load_kept, save_kept
from experiments.training.ppo.config import PPOConfig
from experiments.training.runs import write_json, written_whole
from experiments.training.stopping import RunStoppedError, StopRequest
from experiments.training.teacher_games import DEMONSTRATION_KEYS, collect_demonstrations

#: The folder of a run that keeps the warm start's finished parts until PPO starts (see :func:`warm_start`).
WARM_START_FOLDER: Final = "warm_start"


class WarmStartStoppedError(RunStoppedError):
    """The warm start stopped on a signal, its finished parts saved (the message says which)."""


def behaviour_cloning(
    model: Any,
    data: dict[str, np.ndarray],
    epochs: int,
    learning_rate: float,
    seed: int,
    stop: StopRequest | None = None,
) -> dict[str, float]:
    """Train the actor to imitate the labels (masked cross-entropy) and the critic to predict the
    final reward; returns the accuracy and losses on a held-out 10% of the decisions. A ``stop``
    requested ends it after the minibatch in hand (raising KeyboardInterrupt): a minibatch lasts a
    fraction of a second, and the cloning is done again from its start on resume."""
    import torch

    policy = model.policy
    optimizer = torch.optim.Adam(policy.parameters(), lr=learning_rate)
    count = len(data["actions"])
    rows = np.arange(count)
    held_out, train_rows = rows[rows % 10 == 0], rows[rows % 10 != 0]  # the same rows in every DAgger round

    def tensors(rows: np.ndarray) -> tuple[Any, ...]:
        return (
            torch.as_tensor(data["observations"][rows].astype(np.float32)),
            torch.as_tensor(data["actions"][rows]),
            torch.as_tensor(data["masks"][rows]),
            torch.as_tensor(data["returns"][rows]),
        )

    policy.set_training_mode(True)
    shuffler = np.random.default_rng(seed + 1)
    for _ in range(epochs):
        shuffler.shuffle(train_rows)
        for start in range(0, len(train_rows), 512):
            if stop is not None:
                stop.after_step("cloning", start)
                if stop.requested:
                    raise KeyboardInterrupt
            observations, actions, masks, returns = tensors(train_rows[start : start + 512])
            values, log_prob, _entropy = policy.evaluate_actions(observations, actions, action_masks=masks)
            loss = -log_prob.mean() + model.vf_coef * torch.nn.functional.mse_loss(values.flatten(), returns)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
    policy.set_training_mode(False)
    with torch.no_grad():
        observations, actions, masks, returns = tensors(held_out)
        values, log_prob, _ = policy.evaluate_actions(observations, actions, action_masks=masks)
        predicted = policy.get_distribution(observations, action_masks=masks.numpy()).get_actions(deterministic=True)
    return {
        "decisions": count,
        "held_out_accuracy": round(float((predicted == actions).float().mean()), 4),
        "held_out_nll": round(float(-log_prob.mean()), 4),
        "held_out_value_mse": round(float(((values.flatten() - returns) ** 2).mean()), 4),
    }


class WarmStartFolder:
    """The warm start's finished parts in ``RUN_DIR/warm_start/``, so that a stopped warm start
    goes on where it stopped and ends as an uninterrupted one: ``data.npz`` (the decisions of the
    game phases finished: the cloning games, then each DAgger round's), ``policy.zip`` (the model
    after the last finished training: the cloning, then each DAgger round), ``progress.json``
    (how many game phases and trainings are finished, the trainings' reports) and
    ``games.kept.npz`` (the games finished of a game phase that stopped)."""

    def __init__(self, out: Path) -> None:
        self.folder = out / WARM_START_FOLDER
        self.data_file, self.policy_file = self.folder / "data.npz", self.folder / "policy.zip"
        self.progress_file, self.kept_file = self.folder / "progress.json", self.folder / "games.kept.npz"
        progress = json.loads(self.progress_file.read_text()) if self.progress_file.is_file() else {}
        self.phases_played: int = progress.get("phases_played", 0)
        self.rounds: list[dict[str, float]] = progress.get("rounds", [])
        self.seconds: float = progress.get("seconds", 0.0)

    def data(self) -> dict[str, np.ndarray]:
        with np.load(self.data_file) as stored:
            return {key: stored[key] for key in DEMONSTRATION_KEYS}

    def save_data(self, data: dict[str, Any]) -> None:
        self.folder.mkdir(parents=True, exist_ok=True)
        with written_whole(self.data_file) as temporary:
            np.savez(temporary, **data)
        self.phases_played += 1
        self.kept_file.unlink(missing_ok=True)
        self.save_progress()

    def save_model(self, model: Any, report: dict[str, float]) -> None:
        with written_whole(self.policy_file) as temporary:
            model.save(temporary)
        self.rounds.append(report)
        self.save_progress()

    def save_progress(self) -> None:
        self.folder.mkdir(parents=True, exist_ok=True)
        write_json(
            self.progress_file, {"phases_played": self.phases_played, "rounds": self.rounds, "seconds": self.seconds}
        )


def _phase_name(phase: int) -> str:
    return "cloning games" if phase == 0 else f"games of DAgger round {phase}"


def warm_start(model: Any, config: PPOConfig, stop: StopRequest | None = None) -> dict[str, Any]:
    """Behaviour cloning of ``--bc-teacher`` then ``--dagger-rounds`` of DAgger; saves warm_start.zip.

    Each finished part is kept in :class:`WarmStartFolder`: a ``stop`` (Ctrl-C, SIGTERM) saves the
    games finished of a game phase, or abandons a training in hand, and raises
    :class:`WarmStartStoppedError`; called again on the same run folder, the warm start loads the
    model and data kept and goes on, to the model of an uninterrupted warm start."""
    stop = stop or StopRequest()
    kept = WarmStartFolder(config.out)
    start = time.perf_counter() - kept.seconds
    if kept.rounds:
        model.set_parameters(str(kept.policy_file), device="cpu")
        print(f"  warm start kept: {_kept_text(kept)}", flush=True)
    data = kept.data() if kept.phases_played else {}
    try:
        with Runner(config.backend, config.workers, config.ray_address, abandon_items=True) as runner:
            for phase in range(config.dagger_rounds + 1):  # phase 0: behaviour cloning; then the DAgger rounds
                if kept.phases_played <= phase:
                    data = _play_phase(config, runner, model, phase, data, kept, stop)
                if len(kept.rounds) <= phase:
                    _train_phase(config, model, phase, data, kept, stop)
                    kept.seconds = time.perf_counter() - start
                    report = kept.rounds[-1]
                    what = "cloned" if phase == 0 else f"DAgger round {phase}"
                    print(f"  {what}: {report} ({kept.seconds:.0f} s)", flush=True)
    except KeyboardInterrupt:
        kept.seconds = time.perf_counter() - start
        kept.save_progress()
        raise WarmStartStoppedError(f"during the warm start, after {_kept_text(kept)}") from None
    model.save(config.out / "warm_start.zip")
    return {
        "teacher": config.bc_teacher,
        "games": config.bc_games,
        "epochs": config.bc_epochs,
        "dagger_rounds": config.dagger_rounds,
        "dagger_games": config.dagger_games,
        "dagger_epochs": config.dagger_epochs,
        "rounds": kept.rounds,
        "seconds": round(time.perf_counter() - start, 1),
    }


def _kept_text(kept: WarmStartFolder) -> str:
    """What a warm start kept, for the line a stop prints."""
    parts = []
    if kept.phases_played:
        rounds = kept.phases_played - 1
        parts.append("the cloning games" + (f" and {rounds} DAgger round(s) of games" if rounds else ""))
    if kept.rounds:
        trained = len(kept.rounds) - 1
        parts.append("the cloned policy" if not trained else f"the policy of DAgger round {trained}")
    if kept.kept_file.is_file():
        parts.append(f"{len(load_kept(kept.kept_file)):,} {_phase_name(kept.phases_played)}")
    return (", ".join(parts) if parts else "nothing") + " kept"


def _play_phase(
    config: PPOConfig,
    runner: Runner,
    model: Any,
    phase: int,
    data: dict[str, np.ndarray],
    kept: WarmStartFolder,
    stop: StopRequest,
) -> dict[str, np.ndarray]:
    """A game phase: the cloning games (or ``--bc-data``), or the games of DAgger round ``phase``
    sampled by the model; the data so far with the new decisions, saved. A stop saves the
    games finished (KeyboardInterrupt raised after)."""
    if stop.requested:
        raise KeyboardInterrupt
    if phase == 0 and config.bc_data is not None and config.bc_data.is_file():
        with np.load(config.bc_data) as stored:
            new = {key: stored[key] for key in DEMONSTRATION_KEYS}
        print(f"Behaviour cloning from {len(new['actions']):,} stored decisions in {config.bc_data}", flush=True)
    else:
        games = config.bc_games if phase == 0 else config.dagger_games
        if phase == 0:
            print(f"Behaviour cloning: {games} games of {config.bc_teacher} against itself ...", flush=True)
        finished = load_kept(kept.kept_file)
        with games_bar(config, games, _phase_name(phase)) as bar:
            bar.update(len(finished))

            def progress(count: int) -> None:
                bar.update(count)
                stop.after_step(_phase_name(phase), len(finished))

            try:
                with stop.games():
                    new = collect_demonstrations(
                        config.bc_teacher, games, config.players, config.reward, config.seed + phase,
                        learner=None if phase == 0 else numpy_policy(model.policy), runner=runner,
                        progress=progress, kept=finished,
                    )  # fmt: skip
            except KeyboardInterrupt:
                if finished:
                    kept.folder.mkdir(parents=True, exist_ok=True)
                    save_kept(kept.kept_file, finished)
                raise
        if phase == 0 and config.bc_data is not None:
            config.bc_data.parent.mkdir(parents=True, exist_ok=True)
            stored_data: dict[str, Any] = new
            np.savez(config.bc_data, **stored_data)
    if phase:
        print(f"  DAgger round {phase}: +{len(new['actions']):,} learner decisions", flush=True)
    data = new if phase == 0 else {key: np.concatenate([data[key], new[key]]) for key in DEMONSTRATION_KEYS}
    kept.save_data(data)
    return data


def _train_phase(
    config: PPOConfig, model: Any, phase: int, data: dict[str, np.ndarray], kept: WarmStartFolder, stop: StopRequest
) -> None:
    """The cloning (phase 0) or DAgger round ``phase``'s training on all data so far, then the model saved."""
    epochs = config.bc_epochs if phase == 0 else config.dagger_epochs
    report = behaviour_cloning(model, data, epochs, config.bc_learning_rate, config.seed + phase, stop)
    kept.save_model(model, report)


def games_bar(config: PPOConfig, games: int, description: str) -> Any:
    """A progress bar of a warm-start phase's games, with its ETA (hidden with ``--no-progress``)."""
    from tqdm import tqdm

    return tqdm(total=games, unit="game", desc=description, disable=not config.progress, dynamic_ncols=True)


def network_arch(network: NumpyNetwork) -> dict[str, list[int]]:
    """The SB3 ``net_arch`` that holds a network of :mod:`experiments.train_network`: its trunk
    in the actor, its trunk and the value head's hidden layer in the critic."""
    if not network.trunk or network.value is None or len(network.policy) != 1:
        raise ValueError("--init-network needs a network with a trunk, a one-layer policy head and a value head")
    if network.inputs != "observation":
        raise ValueError(
            f"--init-network needs a network that reads the observation alone, got one that reads {network.inputs!r}"
            " (the PPO policy sees the Gymnasium observation, which has no heuristic proposal)"
        )
    trunk = [int(weight.shape[1]) for weight, _ in network.trunk]
    return {"pi": trunk, "vf": trunk + [int(weight.shape[1]) for weight, _ in network.value[:-1]]}


def load_network(policy: Any, network: NumpyNetwork) -> None:
    """Copy a network's weights into a ``MaskableActorCriticPolicy`` built with :func:`network_arch`.

    SB3's actor and critic share no layers, so both start from a copy of the trunk. The value
    head's last layer is copied too although it predicted a win-share logit, not the PPO
    return: the critic starts from features that know the game and relearns its scale.
    """
    import torch

    def linear(modules: Any) -> list[Any]:
        return [module for module in modules if isinstance(module, torch.nn.Linear)]

    assert network.value is not None  # checked by network_arch
    targets = [
        ([*linear(policy.mlp_extractor.policy_net), policy.action_net], [*network.trunk, *network.policy]),
        ([*linear(policy.mlp_extractor.value_net), policy.value_net], [*network.trunk, *network.value]),
    ]
    with torch.no_grad():
        for modules, layers in targets:
            for module, (weight, bias) in zip(modules, layers, strict=True):
                module.weight.copy_(torch.from_numpy(np.ascontiguousarray(weight.T)))  # (in, out) -> torch's (out, in)
                module.bias.copy_(torch.from_numpy(bias))


__all__ = [
    "WARM_START_FOLDER",
    "WarmStartFolder",
    "WarmStartStoppedError",
    "behaviour_cloning",
    "load_network",
    "network_arch",
    "warm_start",
]
