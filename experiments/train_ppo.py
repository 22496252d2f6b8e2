"""Train a MaskablePPO policy by self-play: ``python -m experiments.train_ppo``.

**Warm start** (optional, on by default; ``--bc-games 0`` starts from scratch). Behaviour
cloning of ``--bc-teacher`` (``value``): ``--bc-games`` games of the teacher against itself,
the actor trained on its choices (masked cross-entropy), the critic on the final reward; then
``--dagger-rounds`` of DAgger: the policy plays ``--dagger-games`` games against the teacher,
the teacher labels every state the policy reached, and the policy retrains on all the data.
``--bc-data FILE`` keeps the teacher's games for the next run; ``--init MODEL.zip`` starts from
a saved model instead. The warm-started model is saved as ``warm_start.zip``.

**Self-play.** The learner plays one seat of :class:`~biblios_env.gym_env.BibliosGymEnv` (its
seat drawn per episode); the other seats are drawn per episode and seat from an
:class:`~biblios_env.gym_env.OpponentPool` that mixes the heuristics with a **growing pool of
past snapshots of the learner itself**. Every ``--snapshot-every`` steps the current policy is
exported as a policy file (:func:`agents.ppo_agent.export_policy`, numpy, a few hundred KB) and
joins the pool (the newest ``--pool-size`` are kept); snapshots play by sampling from their
masked policy with numpy inference (~0.1 ms, against ~1 ms for the ``value`` heuristic), so
they cost far less than the learner's own step. ``--opponents`` sets the mixture, e.g.
``value=0.6,hoarder=0.1,random=0.05,self=0.25``: ``self`` is the total weight of the
snapshots, shared evenly among them.

**Evaluation.** At the start, after the first update past every ``--eval-every`` steps, and at
the end, the current policy plays the fixed ``--eval-opponents`` through the tournament harness
(:mod:`experiments.tournament`: duplicate deals, the same deals at every evaluation,
deterministic play); win rates with 95% intervals go to ``eval.csv`` (one row per step, players
and opponent) and the console. A row's ``timesteps`` is what the evaluated policy has learned
from: evaluations run between updates, never inside a rollout. At the end: ``final_model.zip``
(the full MaskablePPO model), ``policy.npz`` (the policy file of the final weights),
``best_policy.npz`` (the evaluated policy with the best win rate against the first
``--eval-opponents`` entry), ``learning_curve.png``
and ``training.json`` (the command, settings, versions, wall time and steps/s).
``checkpoints/`` holds full models every ``--checkpoint-every`` steps, ``progress.csv`` SB3's log,
``monitor/env_<i>.monitor.csv`` every episode of environment ``i`` (reward, length, time).

The defaults are the recipe of the shipped policy (``agents/policies/README.md``; about 25 minutes)::

    python -m experiments.train_ppo --seed 1 --out runs/ppo-2p

and suit 2 CPU cores: 8 environments stepped in this process (``DummyVecEnv``; ``--vec subproc``
runs them in worker processes), one torch thread, two processes for the warm-start games.
"""

from __future__ import annotations

import argparse
import csv
import dataclasses
import functools
import json
import math
import platform
import shlex
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any, Final

import numpy as np

from agents import make_agent
from agents.network import NumpyNetwork
from agents.ppo_agent import (
    PPOAgent,
    export_policy,
    numpy_policy,
    read_policy_file,
    write_policy_file,
)
from biblios_env.agent_interface import Agent, AgentObservation
from biblios_env.engine import Game
from biblios_env.engine.scoring import rewards
from biblios_env.gym_env import BibliosGymEnv, OpponentPool
from experiments.cli import (
    HelpFormatter,
    add_backend_arguments,
    at_least,
    check_backend_arguments,
    invocation_note,
    program_name,
)
from experiments.match import AgentSpec, build_agent, parse_agent_spec, play_out
from experiments.parallel import LOCAL, Runner, batches_of
from experiments.tournament import TournamentConfig, run_tournament

SELF: Final = "self"
EVAL_COLUMNS: Final = (
    "timesteps", "seconds", "players", "opponent", "games", "deals", "win_rate", "ci_low", "ci_high", "mean_vp",
)  # fmt: skip
#: The tournament seed of every evaluation: the same deals each time, so curve points compare.
EVAL_SEED: Final = 20_240_601


def default_out() -> Path:
    """A fresh run folder named after the moment the run starts: ``runs/ppo-<date>-<time>``."""
    return Path("runs") / datetime.now().strftime("ppo-%Y%m%d-%H%M%S")


@dataclass(frozen=True)
class TrainConfig:
    """Every setting of a training run, one field per command-line option (the same names and
    defaults: :func:`build_parser` takes its defaults from here). ``training.json`` records
    them under ``settings``, in this order."""

    # run
    players: tuple[int, ...] = (2,)
    total_steps: int = 400_000
    seed: int = 1
    n_envs: int = 8
    vec: str = "dummy"  # "dummy": environments stepped in this process; "subproc": in worker processes
    torch_threads: int = 1
    out: Path = field(default_factory=default_out)
    progress: bool = True
    reward: str = "vp"
    # opponents
    opponents: str = "value=0.6,hoarder=0.1,random=0.05,self=0.25"
    snapshot_every: int = 50_000
    pool_size: int = 20
    # evaluation and checkpoints
    eval_every: int = 100_000
    eval_deals: int = 50
    eval_opponents: tuple[str, ...] = ("value", "hoarder", "random")
    checkpoint_every: int = 100_000
    # warm start
    bc_games: int = 1000
    bc_teacher: str = "value"
    bc_data: Path | None = None
    bc_epochs: int = 6
    bc_learning_rate: float = 1e-3
    dagger_rounds: int = 5
    dagger_games: int = 400
    dagger_epochs: int = 2
    workers: int = 2
    backend: str = LOCAL
    ray_address: str | None = None
    init: Path | None = None
    init_network: Path | None = None
    # PPO
    net_arch: tuple[int, ...] = (128, 128)
    activation: str = "relu"
    learning_rate: float = 5e-5
    n_steps: int = 512
    batch_size: int = 256
    n_epochs: int = 4
    gamma: float = 1.0
    gae_lambda: float = 0.95
    clip_range: float = 0.2
    ent_coef: float = 0.0
    vf_coef: float = 0.5

    def settings(self) -> dict[str, Any]:
        """The settings as ``training.json`` records them: paths as text, sequences as lists."""
        return {
            key: str(value) if isinstance(value, Path) else list(value) if isinstance(value, tuple) else value
            for key, value in dataclasses.asdict(self).items()
        }


# ----------------------------------------------------------------------------- opponents
def heuristic_factory(name: str) -> Agent:
    """A fresh registry agent (module level, so a pool holding it pickles for SubprocVecEnv)."""
    return make_agent(name)


def snapshot_factory(path: str, label: str) -> Agent:
    """A snapshot of the learner that samples from its masked policy (the file is loaded once per process)."""
    return PPOAgent(path, deterministic=False, label=label)


def parse_mixture(text: str) -> dict[str, float]:
    """``"value=0.4,self=0.6"`` -> {"value": 0.4, "self": 0.6}; names are registry agents or ``self``."""
    mixture: dict[str, float] = {}
    for item in text.split(","):
        name, equals, weight = (part.strip() for part in item.partition("="))
        if not equals:
            raise ValueError(f"bad opponent mixture item {item!r}: expected name=weight")
        try:
            value = float(weight)
        except ValueError:
            raise ValueError(f"bad weight {weight!r} for opponent {name!r}") from None
        if not value >= 0:
            raise ValueError(f"opponent weight must be >= 0, got {name}={weight}")
        if name != SELF:
            make_agent(name)  # ValueError naming the known agents
        mixture[name] = value
    if sum(mixture.values()) <= 0:
        raise ValueError(f"the opponent mixture {text!r} has no positive weight")
    return mixture


def build_pool(mixture: dict[str, float], snapshots: Sequence[Path]) -> OpponentPool:
    """The opponent pool: each heuristic at its weight, the ``self`` weight shared by the snapshots."""
    pool = OpponentPool()
    for name, weight in mixture.items():
        if name != SELF and weight > 0:
            pool.add(functools.partial(heuristic_factory, name), weight)
    if snapshots and mixture.get(SELF, 0.0) > 0:
        share = mixture[SELF] / len(snapshots)
        for path in snapshots:
            pool.add(functools.partial(snapshot_factory, str(path), f"snapshot:{path.stem}"), share)
    return pool


# ----------------------------------------------------------------------------- evaluation
def evaluate(policy: Path, players: int, opponent: str, deals: int, seed: int = EVAL_SEED) -> dict[str, Any]:
    """The policy (deterministic) against ``players - 1`` copies of ``opponent`` with duplicate deals."""
    learner = AgentSpec("ppo", (("path", str(policy)),), label="ppo")
    other = parse_agent_spec(opponent)
    config = TournamentConfig(agents=(learner, *[other] * (players - 1)), num_players=players, deals=deals, seed=seed)
    result = run_tournament(config, workers=1, progress=False)
    stats = next(row for row in result.agents if row.agent == "ppo")
    return {
        "players": players,
        "opponent": opponent,
        "games": len(result.records),
        "deals": deals,
        "win_rate": stats.win_rate.estimate,
        "ci_low": stats.win_rate.low,
        "ci_high": stats.win_rate.high,
        "mean_vp": stats.mean_vp.estimate,
    }


def plot_learning_curve(rows: Sequence[dict[str, Any]], path: Path, title: str) -> Path | None:
    """Win rate against each evaluation opponent over training steps, with the 95% interval as a band."""
    if not rows:
        return None
    # A bare Figure renders to a file without pyplot: no backend switch under a notebook's inline plots.
    from matplotlib.figure import Figure
    from matplotlib.ticker import PercentFormatter

    figure = Figure(figsize=(8, 4.5))
    axes = figure.add_subplot()
    series: dict[tuple[int, str], list[dict[str, Any]]] = {}
    for row in rows:
        series.setdefault((int(row["players"]), str(row["opponent"])), []).append(row)
    for (players, opponent), points in sorted(series.items()):
        steps = [int(p["timesteps"]) for p in points]
        label = f"vs {opponent}" + (f" ({players} players)" if len({k[0] for k in series}) > 1 else "")
        (line,) = axes.plot(steps, [float(p["win_rate"]) for p in points], marker="o", markersize=3, label=label)
        axes.fill_between(
            steps,
            [float(p["ci_low"]) for p in points],
            [float(p["ci_high"]) for p in points],
            color=line.get_color(),
            alpha=0.15,
        )
    for players in sorted({k[0] for k in series}):
        axes.axhline(1 / players, color="grey", linestyle="--", linewidth=1)
    axes.set_ylim(0, 1)
    axes.yaxis.set_major_formatter(PercentFormatter(1.0))
    axes.set_xlabel("training steps (learner decisions)")
    axes.set_ylabel("win rate (95% CI over deals)")
    axes.set_title(title, fontsize=10)
    axes.grid(alpha=0.3)
    axes.legend(fontsize=8, loc="lower right")
    figure.tight_layout()
    figure.savefig(path, dpi=110)
    return path


# ----------------------------------------------------------------------------- warm start
DEMONSTRATION_KEYS: Final = ("observations", "masks", "actions", "returns")


def _demonstration_game_data(
    game: tuple[int, int, int], teacher: str, reward: str, learner: NumpyNetwork | None
) -> dict[str, list[Any]]:
    """One game of :func:`collect_demonstrations` (a module function, so the runner's workers run it):
    ``game`` is (players, game seed, agents' seed)."""
    kept: dict[str, list[Any]] = {key: [] for key in DEMONSTRATION_KEYS}
    count, game_seed, agent_seed = game
    _demonstration_game(parse_agent_spec(teacher), count, (game_seed, agent_seed), reward, learner, kept)
    return kept


def _demonstration_game(
    spec: AgentSpec,
    count: int,
    seeds: tuple[int, int],
    reward: str,
    learner: NumpyNetwork | None,
    kept: dict[str, list[Any]],
) -> None:
    """One game of ``count`` copies of the teacher (one seat played by ``learner`` in DAgger), seeded
    by ``seeds`` (the game's, the agents'); the decisions to learn from are appended to ``kept``."""
    game_seed, agent_seed = seeds
    game = Game(count, seed=game_seed)
    seeder = np.random.default_rng(agent_seed)
    agents = [build_agent(spec) for _ in range(count)]
    for seat, agent in enumerate(agents):
        agent.start_game(seat, count, seed=int(seeder.integers(2**63)))
    learner_seat = int(seeder.integers(count)) if learner is not None else -1
    seats: list[int] = []

    def decide(seat: int, observation: AgentObservation) -> int:
        """The teacher labels the decision; the learner, if any, plays its own seat by sampling."""
        label = agents[seat].act(observation)  # the teacher's choice in this seat's position
        if learner is None or seat == learner_seat:
            kept["observations"].append(observation.vector.astype(np.float16))  # exact for the 0/1 pieces
            kept["masks"].append(observation.action_mask.astype(bool))
            kept["actions"].append(label)
            seats.append(seat)
        if learner is None or seat != learner_seat:
            return label
        return learner.choose(observation.vector, observation.action_mask, False, seeder)

    play_out(game, decide)
    outcome = rewards(reward, game.state.vp, game.state.winners)
    kept["returns"].extend(outcome[seat] for seat in seats)


def collect_demonstrations(
    teacher: str,
    games: int,
    players: Sequence[int],
    reward: str,
    seed: int,
    learner: NumpyNetwork | None = None,
    runner: Runner | None = None,
) -> dict[str, np.ndarray]:
    """Decisions labelled by ``teacher`` (an agent spec): observation (float16), mask, the teacher's
    action and the final reward of the deciding seat (the env's ``reward`` option).

    Without ``learner`` the teacher plays every seat and every decision is kept (behaviour
    cloning). With ``learner`` (DAgger) the learner plays one random seat by sampling from its
    masked policy against the teacher, and only the learner's decisions are kept, each labelled
    with what the teacher would have played there: the states the learner really reaches.
    The games are played on ``runner`` (default: in this process); the decisions come in game
    order whatever the backend and the number of workers.
    """
    rng = np.random.default_rng(seed)
    seeds = [
        (players[index % len(players)], int(rng.integers(2**63)), int(rng.integers(2**63))) for index in range(games)
    ]
    runner = runner or Runner(LOCAL, 1)
    by_batch: dict[int, list[dict[str, list[Any]]]] = {}
    runner.run(
        functools.partial(_demonstration_game_data, teacher=teacher, reward=reward, learner=learner),
        batches_of(seeds, max(1, min(8, games // (runner.workers * 4)))),
        by_batch.__setitem__,
        describe=lambda game: f"a {game[0]}-player game (seed {game[1]}, agents' seed {game[2]})",
    )
    kept: dict[str, list[Any]] = {key: [] for key in DEMONSTRATION_KEYS}
    for index in sorted(by_batch):
        for game_data in by_batch[index]:
            for key in DEMONSTRATION_KEYS:
                kept[key].extend(game_data[key])
    return {
        "observations": np.stack(kept["observations"]),
        "masks": np.stack(kept["masks"]),
        "actions": np.asarray(kept["actions"], np.int64),
        "returns": np.asarray(kept["returns"], np.float32),
    }


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


def warm_start(model: Any, config: TrainConfig) -> dict[str, Any]:
    """Behaviour cloning of ``--bc-teacher`` then ``--dagger-rounds`` of DAgger; saves warm_start.zip."""
    start = time.perf_counter()
    with Runner(config.backend, config.workers, config.ray_address) as runner:  # one Ray session for every round
        data = _cloning_data(config, runner)
        rounds = [behaviour_cloning(model, data, config.bc_epochs, config.bc_learning_rate, config.seed)]
        print(f"  cloned: {rounds[-1]} ({time.perf_counter() - start:.0f} s)", flush=True)
        for round_index in range(config.dagger_rounds):
            learner = numpy_policy(model.policy)
            extra = collect_demonstrations(
                config.bc_teacher,
                config.dagger_games,
                config.players,
                config.reward,
                config.seed + 1 + round_index,
                learner=learner,
                runner=runner,
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


def _cloning_data(config: TrainConfig, runner: Runner) -> dict[str, np.ndarray]:
    """The behaviour-cloning decisions: read from ``--bc-data`` if that file exists, else played
    (and stored there if given)."""
    cache = config.bc_data
    if cache is not None and cache.is_file():
        with np.load(cache) as stored:
            data = {key: stored[key] for key in DEMONSTRATION_KEYS}
        print(f"Behaviour cloning from {len(data['actions']):,} stored decisions in {cache}", flush=True)
        return data
    print(f"Behaviour cloning: {config.bc_games} games of {config.bc_teacher} against itself ...", flush=True)
    data = collect_demonstrations(
        config.bc_teacher, config.bc_games, config.players, config.reward, config.seed, runner=runner
    )
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


# ----------------------------------------------------------------------------- training
def make_env_factory(players: tuple[int, ...], pool: OpponentPool, reward: str, seed: int, monitor: Path) -> Any:
    """A training environment whose ``Monitor`` feeds SB3's log and writes every episode (the
    learner's reward and length) to ``monitor.monitor.csv``, which the training notebook plots."""

    def factory() -> Any:
        from stable_baselines3.common.monitor import Monitor

        env = BibliosGymEnv(players, pool, reward=reward)
        env.reset(seed=seed)
        return Monitor(env, filename=str(monitor))

    return factory


class Evaluations:
    """The evaluations of one run: each evaluation's rows (appended to ``eval.csv``), its console
    line, and ``best_policy.npz``, the evaluated policy with the best win rate against the first
    ``--eval-opponents`` entry at the first ``--players`` count."""

    def __init__(self, config: TrainConfig, start: float) -> None:
        self.config = config
        self.start = start  # the run's perf_counter at its start: rows say how long it has run
        self.rows: list[dict[str, Any]] = []
        self.best: tuple[float, int] = (-1.0, -1)  # (win rate, timesteps)

    def evaluate(self, policy: Path, timesteps: int, record: Callable[[str, float], None]) -> None:
        """Play the evaluation tables of ``policy`` (trained for ``timesteps``); ``record(key,
        value)`` logs each win rate to SB3's logger."""
        seconds = time.perf_counter() - self.start
        parts = []
        for players in self.config.players:
            for opponent in self.config.eval_opponents:
                row = {
                    "timesteps": timesteps,
                    "seconds": round(seconds, 1),
                    **evaluate(policy, players, opponent, self.config.eval_deals),
                }
                self.rows.append(row)
                self._append_row(row)
                record(f"eval/{players}p_win_rate_vs_{opponent}", row["win_rate"])
                parts.append(self._summary(row))
                self._keep_if_best(policy, row)
        print(f"[{timesteps:>9,} steps, {seconds / 60:5.1f} min] win rate vs " + " · ".join(parts), flush=True)

    def _append_row(self, row: dict[str, Any]) -> None:
        with (self.config.out / "eval.csv").open("a", newline="") as handle:
            writer = csv.DictWriter(handle, fieldnames=list(EVAL_COLUMNS))
            if handle.tell() == 0:
                writer.writeheader()
            writer.writerow(row)

    def _summary(self, row: dict[str, Any]) -> str:
        """``value 41.0% [35.2%, 47.1%]`` (with ``/3p`` after the opponent when several counts are trained)."""
        players = "" if len(self.config.players) == 1 else f"/{row['players']}p"
        return f"{row['opponent']}{players} {row['win_rate']:.1%} [{row['ci_low']:.1%}, {row['ci_high']:.1%}]"

    def _keep_if_best(self, policy: Path, row: dict[str, Any]) -> None:
        config = self.config
        first_table = row["opponent"] == config.eval_opponents[0] and row["players"] == config.players[0]
        if first_table and row["win_rate"] > self.best[0]:
            self.best = (row["win_rate"], row["timesteps"])
            (config.out / "best_policy.npz").write_bytes(policy.read_bytes())


def build_callback(config: TrainConfig, mixture: dict[str, float], start: float) -> Any:
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


def train(config: TrainConfig, argv: Sequence[str] = ()) -> dict[str, Any]:
    """Train as ``config`` says; ``argv`` is the command line that asked for it (for ``training.json``)."""
    import torch
    from sb3_contrib import MaskablePPO
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
    activation = {"relu": torch.nn.ReLU, "tanh": torch.nn.Tanh}[config.activation]
    initial = None if config.init_network is None else NumpyNetwork.load(config.init_network)
    net_arch = {"pi": list(config.net_arch), "vf": list(config.net_arch)} if initial is None else network_arch(initial)
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
        "command": "python -m experiments.train_ppo " + " ".join(shlex.quote(a) for a in argv),
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
        out / "learning_curve.png",
        f"MaskablePPO self-play, {'/'.join(map(str, players))} players, seed {config.seed}",
    )
    vec_env.close()
    print(
        f"Done: {info['timesteps']:,} steps in {train_seconds / 60:.1f} min ({info['steps_per_second']} steps/s); "
        f"saved {out}/policy.npz, final_model.zip, eval.csv, learning_curve.png, training.json",
        flush=True,
    )
    return info


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


def _versions() -> dict[str, str]:
    from importlib.metadata import PackageNotFoundError, version

    found = {"python": platform.python_version()}
    for package in ("torch", "stable-baselines3", "sb3-contrib", "gymnasium", "numpy"):
        try:
            found[package] = version(package)
        except PackageNotFoundError:
            found[package] = "missing"
    return found


# ----------------------------------------------------------------------------- command line


def _layers(text: str) -> tuple[int, ...]:
    try:
        sizes = tuple(int(part) for part in text.split(","))
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected layer sizes like 128,128, got {text!r}") from None
    if not sizes or min(sizes) < 1:
        raise argparse.ArgumentTypeError(f"expected positive layer sizes, got {text!r}")
    return sizes


def build_parser() -> argparse.ArgumentParser:
    """The command line; its defaults are :class:`TrainConfig`'s."""
    defaults = TrainConfig()
    parser = argparse.ArgumentParser(
        prog=program_name("experiments.train_ppo"),
        description="MaskablePPO self-play against a growing pool of its own snapshots mixed with the heuristics.",
        epilog=invocation_note("experiments.train_ppo"),
        formatter_class=HelpFormatter,
    )
    run = parser.add_argument_group("run")
    run.add_argument(
        "--players",
        type=int,
        nargs="+",
        default=list(defaults.players),
        choices=(2, 3, 4),
        help="player count(s); with several, each episode draws one",
    )
    run.add_argument(
        "--total-steps", type=at_least(1), default=defaults.total_steps, help="learner decisions to train for"
    )
    run.add_argument(
        "--seed", type=int, default=defaults.seed, help="seed of the model, the environments and the warm start"
    )
    run.add_argument("--n-envs", type=at_least(1), default=defaults.n_envs, help="vectorized environments")
    run.add_argument(
        "--vec",
        choices=("dummy", "subproc"),
        default=defaults.vec,
        help="step the environments in this process or in worker processes",
    )
    run.add_argument(
        "--torch-threads",
        type=at_least(1),
        default=defaults.torch_threads,
        help="torch threads (more is slower on a small machine)",
    )
    run.add_argument("--out", type=Path, help="output folder (default runs/ppo-<date>-<time>)")
    run.add_argument(
        "--progress",
        action=argparse.BooleanOptionalAction,
        default=defaults.progress,
        help="show a progress bar during PPO (default: shown; --no-progress hides it)",
    )
    run.add_argument(
        "--reward",
        choices=("win", "vp"),
        default=defaults.reward,
        help="the environment's reward option (vp: own VP minus the best other, a denser signal than win)",
    )
    pool = parser.add_argument_group("opponents")
    pool.add_argument(
        "--opponents",
        default=defaults.opponents,
        help="opponent mixture: registry agents and 'self' (the snapshot pool) with weights",
    )
    pool.add_argument(
        "--snapshot-every", type=at_least(1), default=defaults.snapshot_every, help="steps between snapshots"
    )
    pool.add_argument("--pool-size", type=at_least(1), default=defaults.pool_size, help="snapshots kept (the newest)")
    evaluation = parser.add_argument_group("evaluation and checkpoints")
    evaluation.add_argument(
        "--eval-every", type=int, default=defaults.eval_every, help="steps between evaluations (0: at the end only)"
    )
    evaluation.add_argument(
        "--eval-deals",
        type=at_least(1),
        default=defaults.eval_deals,
        help="duplicate deals per evaluation opponent (each played in every seating)",
    )
    evaluation.add_argument(
        "--eval-opponents",
        nargs="+",
        default=list(defaults.eval_opponents),
        help="fixed opponents (agent specs); the first one picks best_policy.npz",
    )
    evaluation.add_argument(
        "--checkpoint-every",
        type=int,
        default=defaults.checkpoint_every,
        help="steps between full checkpoints (0: none)",
    )
    warm = parser.add_argument_group("warm start (before PPO): behaviour cloning and DAgger, or a saved model")
    warm.add_argument(
        "--bc-games", type=int, default=defaults.bc_games, help="teacher games to imitate (0: start from scratch)"
    )
    warm.add_argument("--bc-teacher", default=defaults.bc_teacher, help="the agent to imitate (an agent spec)")
    warm.add_argument("--bc-data", type=Path, help="demonstrations file: loaded if it exists, else collected and saved")
    warm.add_argument("--bc-epochs", type=at_least(1), default=defaults.bc_epochs, help="epochs of behaviour cloning")
    warm.add_argument(
        "--bc-learning-rate",
        type=float,
        default=defaults.bc_learning_rate,
        help="Adam learning rate of cloning and DAgger",
    )
    warm.add_argument(
        "--dagger-rounds", type=int, default=defaults.dagger_rounds, help="DAgger rounds after cloning (0: none)"
    )
    warm.add_argument(
        "--dagger-games", type=at_least(1), default=defaults.dagger_games, help="learner games per DAgger round"
    )
    warm.add_argument(
        "--dagger-epochs",
        type=at_least(1),
        default=defaults.dagger_epochs,
        help="epochs over all data per DAgger round",
    )
    warm.add_argument(
        "--workers", type=at_least(1), default=defaults.workers, help="processes that play the warm-start games"
    )
    add_backend_arguments(warm)
    warm.add_argument("--init", type=Path, help="start from this MaskablePPO .zip (same architecture) instead")
    warm.add_argument(
        "--init-network",
        type=Path,
        help="start from this network file of experiments.train_network instead (sets --net-arch from it)",
    )
    ppo = parser.add_argument_group("PPO")
    ppo.add_argument(
        "--net-arch",
        type=_layers,
        default=",".join(map(str, defaults.net_arch)),
        help="hidden layers of the actor and the critic",
    )
    ppo.add_argument(
        "--activation", choices=("relu", "tanh"), default=defaults.activation, help="hidden-layer activation"
    )
    ppo.add_argument("--learning-rate", type=float, default=defaults.learning_rate, help="Adam learning rate of PPO")
    ppo.add_argument(
        "--n-steps", type=at_least(1), default=defaults.n_steps, help="rollout steps per environment per update"
    )
    ppo.add_argument(
        "--batch-size", type=at_least(1), default=defaults.batch_size, help="minibatch size of a PPO update"
    )
    ppo.add_argument(
        "--n-epochs", type=at_least(1), default=defaults.n_epochs, help="passes over each rollout per update"
    )
    ppo.add_argument(
        "--gamma", type=float, default=defaults.gamma, help="discount factor (terminal rewards: 1 keeps them whole)"
    )
    ppo.add_argument(
        "--gae-lambda", type=float, default=defaults.gae_lambda, help="GAE lambda of the advantage estimate"
    )
    ppo.add_argument(
        "--clip-range", type=float, default=defaults.clip_range, help="PPO's clipping of the probability ratio"
    )
    ppo.add_argument("--ent-coef", type=float, default=defaults.ent_coef, help="entropy bonus coefficient")
    ppo.add_argument("--vf-coef", type=float, default=defaults.vf_coef, help="value-loss coefficient")
    return parser


def config_from_arguments(args: argparse.Namespace) -> TrainConfig:
    """The :class:`TrainConfig` of parsed command-line arguments (no ``--out``: a fresh run folder)."""
    values: dict[str, Any] = {
        key: tuple(value) if isinstance(value, list) else value for key, value in vars(args).items()
    }
    if values["out"] is None:
        del values["out"]
    return TrainConfig(**values)


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    argv = list(sys.argv[1:] if argv is None else argv)
    args = parser.parse_args(argv)
    check_backend_arguments(args, parser)
    try:
        parse_mixture(args.opponents)
        for spec in args.eval_opponents:
            parse_agent_spec(spec)
    except ValueError as error:
        parser.error(str(error))
    train(config_from_arguments(args), argv)
    return 0


if __name__ == "__main__":
    sys.exit(main())
