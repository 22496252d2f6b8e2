"""PPO's warm start (see :mod:`experiments.training.ppo`): behaviour cloning of a teacher, then
DAgger, on the demonstrations of :mod:`experiments.training.teacher_games`; or the weights of a
network of expert iteration (``--init-network``: :func:`network_arch`, :func:`load_network`)."""

from __future__ import annotations

import time
from typing import Any

import numpy as np

from agents.network import NumpyNetwork
from agents.ppo_agent import numpy_policy
from experiments.common.parallel import Runner
from experiments.training.ppo.config import PPOConfig
from experiments.training.teacher_games import DEMONSTRATION_KEYS, collect_demonstrations


def behaviour_cloning(
    model: Any, data: dict[str, np.ndarray], epochs: int, learning_rate: float, seed: int
) -> dict[str, float]:
    """Train the actor to imitate the labels (masked cross-entropy) and the critic to predict the
    final reward; returns the accuracy and losses on a held-out 10% of the decisions."""
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


def warm_start(model: Any, config: PPOConfig) -> dict[str, Any]:
    """Behaviour cloning of ``--bc-teacher`` then ``--dagger-rounds`` of DAgger; saves warm_start.zip."""
    start = time.perf_counter()
    with Runner(config.backend, config.workers, config.ray_address) as runner:  # one Ray session for every round
        data = _cloning_data(config, runner)
        rounds = [behaviour_cloning(model, data, config.bc_epochs, config.bc_learning_rate, config.seed)]
        print(f"  cloned: {rounds[-1]} ({time.perf_counter() - start:.0f} s)", flush=True)
        for round_index in range(config.dagger_rounds):
            learner = numpy_policy(model.policy)
            with games_bar(config, config.dagger_games, f"DAgger round {round_index + 1}") as bar:
                extra = collect_demonstrations(
                    config.bc_teacher,
                    config.dagger_games,
                    config.players,
                    config.reward,
                    config.seed + 1 + round_index,
                    learner=learner,
                    runner=runner,
                    progress=bar.update,
                )
            data = {key: np.concatenate([data[key], extra[key]]) for key in DEMONSTRATION_KEYS}
            seed = config.seed + 1 + round_index
            rounds.append(behaviour_cloning(model, data, config.dagger_epochs, config.bc_learning_rate, seed))
            print(
                f"  DAgger round {round_index + 1}: +{len(extra['actions']):,} learner decisions, {rounds[-1]} "
                f"({time.perf_counter() - start:.0f} s)",
                flush=True,
            )
    model.save(config.out / "warm_start.zip")
    return {
        "teacher": config.bc_teacher,
        "games": config.bc_games,
        "epochs": config.bc_epochs,
        "dagger_rounds": config.dagger_rounds,
        "dagger_games": config.dagger_games,
        "dagger_epochs": config.dagger_epochs,
        "rounds": rounds,
        "seconds": round(time.perf_counter() - start, 1),
    }


def games_bar(config: PPOConfig, games: int, description: str) -> Any:
    """A progress bar of a warm-start phase's games, with its ETA (hidden with ``--no-progress``)."""
    from tqdm import tqdm

    return tqdm(total=games, unit="game", desc=description, disable=not config.progress, dynamic_ncols=True)


def _cloning_data(config: PPOConfig, runner: Runner) -> dict[str, np.ndarray]:
    """The behaviour-cloning decisions: read from ``--bc-data`` if that file exists, else played
    (and stored there if given)."""
    cache = config.bc_data
    if cache is not None and cache.is_file():
        with np.load(cache) as stored:
            data = {key: stored[key] for key in DEMONSTRATION_KEYS}
        print(f"Behaviour cloning from {len(data['actions']):,} stored decisions in {cache}", flush=True)
        return data
    print(f"Behaviour cloning: {config.bc_games} games of {config.bc_teacher} against itself ...", flush=True)
    with games_bar(config, config.bc_games, "cloning games") as bar:
        data = collect_demonstrations(
            config.bc_teacher, config.bc_games, config.players, config.reward, config.seed, runner=runner,
            progress=bar.update,
        )  # fmt: skip
    if cache is not None:
        cache.parent.mkdir(parents=True, exist_ok=True)
        np.savez(
            cache,
            observations=data["observations"],
            masks=data["masks"],
            actions=data["actions"],
            returns=data["returns"],
        )
    return data


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


__all__ = ["behaviour_cloning", "load_network", "network_arch", "warm_start"]
