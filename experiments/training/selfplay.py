"""Self-play training on the batched games: ``python -m experiments.train_selfplay`` (``biblios-train-selfplay``).

A script in CleanRL's shape: the settings are one :class:`Args` dataclass (the command line is
derived from it), and the loop reads top to bottom in :func:`train`: collect a rollout (the
network decides for every game where it holds the acting seat, in one forward; the opponent pool
for the others), compute each seat's returns, update. The parts it runs on: the pool
(:mod:`~experiments.training.opponents`), the rollout and its returns
(:mod:`~experiments.training.rollout`), the learning rules, masked PPO and DMC
(:mod:`~experiments.training.updates`), the run's state and checkpoint
(:mod:`~experiments.training.selfplay_state`) and what a user watches
(:mod:`~experiments.training.selfplay_watch`). The run folder, the algorithms and their
measurements: docs/training.md.
"""

from __future__ import annotations

import argparse
import dataclasses
import sys
import time
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from biblios_env.engine.flow import PRESETS, STANDARD_PRESET
from experiments.common.cli import (
    HelpFormatter,
    add_config_arguments,
    at_least,
    fraction,
    invocation_note,
    non_negative,
    positive,
    program_name,
    seed_value,
)
from experiments.common.errors import CheckpointError, RunFolderError
from experiments.common.match import AgentSpecError
from experiments.common.parallel import BACKENDS, LOCAL
from experiments.training.league import League
from experiments.training.learners import LEARNERS, PROCESS
from experiments.training.opponents import LEARNER, Mixture
from experiments.training.rollout import Rollout, returns_and_advantages
from experiments.training.runs import (
    RUN_FILE,
    check_run_folder,
    default_out,
    read_run,
    refuse_new_settings,
    resumable_length,
    resume_flags,
    settings_from_json,
    settings_json,
)
from experiments.training.selfplay_state import Run, start
from experiments.training.selfplay_watch import MODULE, Watch, evaluate, export, plan, plot_curve
from experiments.training.stopping import StopRequest, resume_line, stopped_at_once
from experiments.training.tensors import SparseRows


@dataclass(frozen=True)
class Args:
    """Every setting of a run, one field per option (``run.json`` records them)."""

    out: Path = field(
        default_factory=lambda: default_out("selfplay"),
        metadata={"help": "run folder (default runs/selfplay-<date>-<time>)", "section": "run"},
    )
    players: int = field(default=2, metadata={"help": "players per game", "choices": (2, 3, 4)})
    preset: str = field(
        default=STANDARD_PRESET,
        metadata={"help": "the cards dealt: the rules' game or a reduced one (exact solvers')", "choices": PRESETS},
    )
    decisions: int = field(
        default=20_000_000, metadata={"help": "stop after this many network decisions", "type": at_least(1)}
    )
    seed: int = field(default=1, metadata={"help": "seed of the games, the network and the pool", "type": seed_value})
    algo: str = field(default="ppo", metadata={"help": "the algorithm", "choices": ("ppo", "dmc")})
    num_games: int = field(default=256, metadata={"help": "games stepped together", "type": at_least(1)})
    rollout_steps: int = field(default=64, metadata={"help": "batched steps between updates", "type": at_least(1)})
    reward: str = field(default="win", metadata={"help": "the env's reward", "choices": ("win", "vp")})
    torch_threads: int = field(
        default=1, metadata={"help": "torch threads per side (the games' and the learner's)", "type": at_least(1)}
    )
    pipeline: bool = field(
        default=True, metadata={"help": "train on the last rollout while the games play the next (two cores)"}
    )
    learner: str = field(
        default=PROCESS,
        metadata={
            "help": "where the updates run: a process of their own, which shares no interpreter lock with the "
            "games, or a thread of the trainer's (the same network either way)",
            "choices": LEARNERS,
        },
    )
    hidden: tuple[int, ...] = field(
        default=(256, 128),
        metadata={"help": "hidden layers of the shared trunk", "type": at_least(1), "section": "network"},
    )
    init: Path | None = field(
        default=None, metadata={"help": "start from this network file (sets --hidden from it), e.g. the shipped one"}
    )
    value_warmup: int = field(
        default=0,
        metadata={
            "help": "network decisions at the start that train the value head only (ppo; for --init)",
            "type": at_least(0),
        },
    )
    learning_rate: float = field(
        default=3e-4, metadata={"help": "Adam learning rate", "type": positive, "section": "update"}
    )
    epochs: int = field(default=1, metadata={"help": "passes over each rollout (ppo)", "type": at_least(1)})
    minibatch: int = field(default=4096, metadata={"help": "samples per gradient step", "type": at_least(1)})
    gamma: float = field(default=1.0, metadata={"help": "discount over a seat's own decisions", "type": fraction})
    gae_lambda: float = field(default=0.95, metadata={"help": "GAE lambda (ppo)", "type": fraction})
    clip: float = field(default=0.2, metadata={"help": "PPO's ratio clipping", "type": positive})
    entropy: float = field(default=0.01, metadata={"help": "entropy bonus (ppo)", "type": non_negative})
    value_weight: float = field(default=0.5, metadata={"help": "value loss weight (ppo)", "type": non_negative})
    epsilon: float = field(default=0.05, metadata={"help": "exploration of the DMC actors", "type": fraction})
    exploring_starts: int = field(
        default=0,
        metadata={
            "help": "N > 0: in each game the network's first decision at or after a step drawn from 0..N-1 is a "
            "uniformly random legal move, trained on as an off-policy sample (0: none)",
            "type": at_least(0),
        },
    )
    max_grad_norm: float = field(default=1.0, metadata={"help": "gradient clipping", "type": positive})
    opponents: tuple[str, ...] = field(
        default=("self@0.6", "snapshot@0.2", "value@0.1", "random@0.1"),
        metadata={
            "help": "who plays the seats beside the network's own in each game: SPEC@WEIGHT items; "
            "'self' is the network, 'snapshot' its frozen past versions, 'exploiter' a best response "
            "to it trained beside it (a league), else agent specs",
            "section": "opponents",
        },
    )
    snapshot_every: int = field(
        default=2_000_000, metadata={"help": "network decisions between snapshots", "type": at_least(1)}
    )
    pool_size: int = field(default=10, metadata={"help": "snapshots kept (the newest)", "type": at_least(1)})
    exploiter_every: int = field(
        default=10_000_000, metadata={"help": "decisions between exploiter rounds", "type": at_least(1)}
    )
    exploiter_decisions: int = field(
        default=2_000_000, metadata={"help": "exploiter decisions a round", "type": at_least(1)}
    )
    backend: str = field(
        default=LOCAL,
        metadata={
            "help": "where the exploiter trains: in this process, the network waiting (local), or in a Ray actor "
            "while the network trains on (ray: the cluster at RAY_ADDRESS, else a local Ray)",
            "choices": BACKENDS,
        },
    )
    eval_every: int = field(
        default=5_000_000,
        metadata={
            "help": "network decisions between evaluations (0: none)",
            "type": at_least(0),
            "section": "what you watch",
        },
    )
    eval_deals: int = field(default=100, metadata={"help": "duplicate deals per evaluation", "type": at_least(1)})
    eval_opponent: str = field(default="value", metadata={"help": "the evaluation opponent (an agent spec)"})
    checkpoint_minutes: float = field(default=10.0, metadata={"help": "minutes between checkpoints", "type": positive})
    log_seconds: float = field(default=30.0, metadata={"help": "seconds between progress lines", "type": positive})
    tensorboard: bool = field(default=True, metadata={"help": "write TensorBoard events to RUN_DIR/tb"})
    plot: bool = field(default=False, metadata={"help": "write learning_curve.png at the end"})

    def to_json(self) -> dict[str, Any]:
        return settings_json(self)


# ----------------------------------------------------------------------------- the algorithm
def collect(run: Run, steps: int) -> Rollout:
    """``steps`` batched steps: the actor decides for every game where the network plays the
    acting seat, in one forward, the pool for the others; returns the network's samples."""
    torch, games, pool = run.torch, run.games, run.pool
    size, n = run.args.num_games, run.args.players
    observations, masks, actions_taken, log_probs, values, slots, seats, step_of = [], [], [], [], [], [], [], []
    terminated = np.zeros((steps, size), bool)
    rewards = np.zeros((steps, size, n), np.float32)
    every = np.arange(size)
    for step in range(steps):
        batch = games.batch
        current = batch.current_player
        owners = pool.owners[every, current]
        mine = np.flatnonzero(owners == LEARNER)
        actions = np.zeros(size, np.int64)
        observation = SparseRows.of(torch, games.observation_counts()[mine])
        mask = batch.action_mask[mine]
        with torch.no_grad():
            logits, value = run.actor.forward(observation.tensor(torch))
            chosen, log_prob = run.rule.act(torch, logits, mask)
        actions[mine] = chosen
        if run.exploring is not None:  # the exploring starts that are due: a random move each
            exploring, moves, uniform_log_probs = run.exploring.moves(mine, mask)
            actions[mine[exploring]] = moves
            log_prob[exploring] = uniform_log_probs
        others = np.flatnonzero(owners != LEARNER)
        if len(others):
            pool.actions(others, owners[others], actions)
        observations.append(observation)
        masks.append(mask)
        actions_taken.append(actions[mine])
        log_probs.append(log_prob)
        values.append(value.numpy())
        slots.append(mine)
        seats.append(current[mine])
        step_of.append(np.full(len(mine), step))
        batch = games.step(actions)
        terminated[step] = batch.terminated
        rewards[step] = batch.rewards
        if run.exploring is not None:
            run.exploring.advance(batch.terminated)
        for slot in np.flatnonzero(batch.terminated).tolist():
            run.record_game(slot)
            pool.seat_players(slot)
        run.counters["decisions"] += len(mine)
    return Rollout(
        SparseRows.concatenate(observations), np.concatenate(masks), np.concatenate(actions_taken),
        np.concatenate(log_probs), np.concatenate(values), np.concatenate(slots), np.concatenate(seats),
        np.concatenate(step_of), terminated, rewards,
    )  # fmt: skip


def bootstrap_values(run: Run) -> np.ndarray:
    """``(num_games, players)``: the value of each seat's current observation, for the seats of
    games still running (the network's estimate of what its decisions so far will return)."""
    out = np.zeros((run.args.num_games, run.args.players), np.float32)
    if run.rule.monte_carlo:
        return out  # returns of finished games only (no bootstrap)
    torch = run.torch
    for seat in range(run.args.players):
        with torch.no_grad():
            _, value = run.actor.forward(torch.from_numpy(run.games.observe(seat)))
        out[:, seat] = value.numpy()
    return out


def prepare(run: Run, rollout: Rollout) -> tuple[Rollout, Rollout | None]:
    """The rollout with its returns and advantages, ready for an update; and for a Monte-Carlo
    rule the samples whose games are still running, carried into the next rollout."""
    args = run.args
    returns, advantages, valid = returns_and_advantages(
        rollout, bootstrap_values(run), args.gamma, args.gae_lambda, run.rule.monte_carlo
    )
    carry = rollout.carried(~valid, args.rollout_steps) if run.rule.monte_carlo else None
    return dataclasses.replace(rollout, returns=returns, advantages=advantages, valid=valid), carry


# ----------------------------------------------------------------------------- the main loop
def train(
    args: Args,
    resume: bool = False,
    stop: StopRequest | None = None,
    flags: Sequence[str] = (),
    module: str | None = MODULE,
    record: dict[str, Any] | None = None,
) -> Run:
    """Train until ``args.decisions`` network decisions (see the module docstring).

    With ``--pipeline`` (the default) the learner (``--learner``: a process of its own, or a thread)
    trains the network on the last rollout while the actor (one update behind: PPO's ratio
    corrects for it) plays the next; each side's work does not depend on their timing, so a run
    is deterministic. ``stop`` replaces the Ctrl-C handler; ``flags`` are the options the printed
    resume command repeats, ``module`` the command it names and a new run's ``run.json`` records
    (``experiments.exploit`` trains through this one, its own settings in ``record``; ``None``: no
    resume line, for the league's exploiter, a self-play run inside another run).
    """
    run = start(args, resume, module or MODULE, **(record or {}))
    print(plan(args, int(run.counters["decisions"])), flush=True)
    watch = Watch(run, resume)
    league = League(run, train)
    counters = run.counters
    last_checkpoint = time.perf_counter()
    losses: dict[str, float] = {}
    try:
        with ThreadPoolExecutor(max_workers=1) as learner, stop or StopRequest() as stop:
            while counters["decisions"] < args.decisions and not stop.requested:
                league.step(stop)  # first, so that a run resumed inside a round finishes it where it began
                if stop.requested:
                    break
                began = time.perf_counter()
                games_before, decisions_before = counters["games"], counters["decisions"]
                training = learner.submit(run.update, run.pending) if args.pipeline and run.pending else None
                prepared, run.carry = prepare(run, collect(run, args.rollout_steps).after(run.carry))
                if args.pipeline:
                    losses = training.result() if training is not None else {}
                    run.pending = prepared
                else:
                    losses = run.update(prepared)
                run.sync_actor()
                elapsed = time.perf_counter() - began
                counters["wall_seconds"] += elapsed
                counters["updates"] += 1
                _after_update(run, watch, losses, elapsed, games_before, decisions_before)
                stop.after_update(run)
                if args.eval_every and counters["decisions"] - counters["last_eval"] >= args.eval_every:
                    watch.evaluation(evaluate(run, export(run, args.out / "policy.npz")))
                    counters["last_eval"] = counters["decisions"]
                if time.perf_counter() - last_checkpoint >= 60 * args.checkpoint_minutes:
                    run.save(args.out / "checkpoint.pt")
                    last_checkpoint = time.perf_counter()
            if not stop.requested and run.pending is not None:  # the end: train on the last rollout too
                run.update(run.pending)
                run.pending = None
                run.sync_actor()
            league.close(stopped=stop.requested)
            export(run, args.out / "policy.npz")
            if not stop.requested and args.eval_every and counters["last_eval"] < counters["decisions"]:
                watch.evaluation(evaluate(run, args.out / "policy.npz"))  # the curve ends at the final network
                counters["last_eval"] = counters["decisions"]
            run.save(args.out / "checkpoint.pt")
            if stop.requested and module is not None:
                print(resume_line(module, args.out, f"at {counters['decisions']:,} decisions", flags), flush=True)
    finally:
        league.close(stopped=True)
        watch.close()
        run.close()
    if args.plot:
        plot_curve(args.out)
    return run


def _after_update(
    run: Run, watch: Watch, losses: dict[str, float], elapsed: float, games_before: float, decisions_before: float
) -> None:
    """The progress row of an update, and a snapshot into the pool when one is due."""
    counters = run.counters
    shares = [share for values in run.win_stats.values() for share in values[-500:]]
    watch.progress({
        "update": counters["updates"], "decisions": counters["decisions"], "games": counters["games"],
        "wall_seconds": round(counters["wall_seconds"], 2),
        "decisions_per_s": (counters["decisions"] - decisions_before) / elapsed,
        "games_per_s": (counters["games"] - games_before) / elapsed,
        "win_share": float(np.mean(shares)) if shares else 0.0,
        "snapshots": len(run.pool.snapshots),
        **{key: losses.get(key, 0.0) for key in ("policy_loss", "value_loss", "entropy", "approx_kl")},
    })  # fmt: skip
    if counters["decisions"] - counters["last_snapshot"] >= run.args.snapshot_every:
        run.pool.snapshot(run.network)
        counters["last_snapshot"] = counters["decisions"]


# ----------------------------------------------------------------------------- the command line
def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog=program_name(MODULE),
        description=__doc__.splitlines()[0],
        epilog=invocation_note(MODULE),
        formatter_class=HelpFormatter,
    )
    parser.add_argument(
        "--resume", type=Path, metavar="RUN_DIR", help="continue the run in RUN_DIR from its checkpoint"
    )
    add_config_arguments(parser, Args)
    resumable_length(parser, "decisions")
    return parser


def args_from(namespace: argparse.Namespace, parser: argparse.ArgumentParser) -> tuple[Args, bool]:
    """The run's settings: the command line's, or with ``--resume`` the run's own ``run.json``
    (only ``--decisions`` may be given anew, to train on)."""
    given = {f.name: getattr(namespace, f.name) for f in dataclasses.fields(Args)}
    if namespace.resume is None:
        values: dict[str, Any] = {
            key: tuple(value) if isinstance(value, list) else value for key, value in given.items() if value is not None
        }
        return Args(**values), False
    folder: Path = namespace.resume
    recorded = settings_from_json(Args, read_run(folder, MODULE)["settings"], folder / RUN_FILE)
    if not (folder / "checkpoint.pt").exists():
        parser.error(
            f"--resume {folder}: the run has no checkpoint to continue from ({folder / 'checkpoint.pt'} is missing)"
        )
    refuse_new_settings(namespace, parser, "decisions", "out")
    decisions = recorded.decisions if namespace.decisions is None else namespace.decisions
    return dataclasses.replace(recorded, out=folder, decisions=decisions), True


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    namespace = parser.parse_args(argv)
    check_run_folder(namespace, parser)
    # A resumed run's --decisions is not in its run.json: the resume command repeats it.
    flags = resume_flags(namespace, parser, ["decisions"] if namespace.resume is not None else [])
    try:
        args, resume = args_from(namespace, parser)
        Mixture.parse(args.opponents)  # an unknown opponent is an error before any work
        run = train(args, resume, flags=flags)
    except (AgentSpecError, CheckpointError, RunFolderError) as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:  # while starting, or a second Ctrl-C
        return stopped_at_once(MODULE, args.out, (args.out / "checkpoint.pt").is_file(), flags)
    print(f"{run.counters['decisions']:,} decisions in {run.counters['wall_seconds'] / 60:.1f} min; "
          f"network: {args.out / 'policy.npz'}", flush=True)  # fmt: skip
    return 0


__all__ = ["Args", "build_parser", "main", "train"]
