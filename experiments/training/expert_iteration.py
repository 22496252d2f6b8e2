"""Train a policy-and-value network by expert iteration: ``python -m experiments.train_network``.

The recipe (``docs/policies.md`` records what was tried and measured):

0. **Bootstrap.** The ``bootstrap_teacher`` (the ``value`` heuristic) plays itself at every
   player count; the network learns its moves (policy head) and the final win shares (value
   head) from scratch.
1. **Expert iterations** ``1..iterations``. The current network plays the learner seat (sampling
   its masked policy) against the opponents; the *teacher*, a search agent, labels every learner
   decision with its own move, and the game goes on with the teacher's move with probability
   ``teacher_share`` (DAgger: the teacher also labels the positions the network reaches alone).
   The network continues training on all data so far. The search, not the heuristic, is the
   teacher from here on.
2. **Evaluation** after every iteration: the network against each fixed opponent at each player
   count on the same duplicate deals (the tournament harness, seed ``eval_seed``, never used to
   generate training data), written to ``eval.csv`` and drawn in ``strength.png``;
   ``best_network.npz`` is the iteration with the best mean win share against ``value``.

Runs are safe to interrupt (Ctrl-C or SIGTERM stop within seconds, exit 0 and print the line
that resumes): the run folder (``--out``) keeps the config, every iteration's network and data,
and the evaluation rows; a stop while an iteration's games are played keeps the games finished
(``data/iteration_N.kept.npz``), and ``--resume RUN_DIR`` plays only the others; an interrupted
training or evaluation is done again from its start. ``--resume`` may raise ``--iterations`` to
go on, so a long recipe can run as several resumed chunks.

Every seed is derived from ``--seed``, so a resumed run ends with
the same networks as an uninterrupted one. The plan is printed first; progress bars with ETAs
show games and training steps.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path
from typing import Any, Final

from agents.network import INPUTS, NumpyNetwork
from experiments.common.cli import (
    BACKEND_OPTION,
    RAY_ADDRESS_OPTION,
    HelpFormatter,
    add_config_arguments,
    at_least,
    check_backend_arguments,
    fraction,
    invocation_note,
    non_negative,
    positive,
    program_name,
    seed_value,
)
from experiments.common.errors import RunFolderError
from experiments.common.match import parse_agent_spec
from experiments.common.parallel import LOCAL, Runner
from experiments.tournament.progress import ProgressLines
from experiments.training import evaluation
from experiments.training.evaluation import EVAL_COLUMNS, EVAL_SEED
from experiments.training.kept_games import load_kept, save_kept
from experiments.training.networks import SAMPLE_FIELDS, FitReport, Samples, TorchNetwork, fit, from_numpy, to_numpy
from experiments.training.opponents import SELF, Mixture
from experiments.training.runs import (
    RUN_FILE,
    append_rows,
    check_run_folder,
    read_rows,
    read_run,
    record_run,
    refuse_new_settings,
    resumable_length,
    resume_flags,
    settings_from_json,
    start_run,
    write_json,
)
from experiments.training.stopping import RunStoppedError, StopRequest, resume_line, stopped_at_once
from experiments.training.teacher_games import SelfPlayConfig, generate

MODULE: Final = "experiments.train_network"
STATE_FILE: Final = "state.json"
EVAL_FILE: Final = "eval.csv"
#: ``eval.csv``: the iteration, then the evaluation's columns.
ITERATION_EVAL_COLUMNS: Final = ("iteration", *EVAL_COLUMNS)
#: The options that are not settings of the run (``run.json`` leaves them out): where and how its
#: games run. A resumed run takes them anew, and the printed resume command repeats them.
NOT_RECORDED: Final = ("workers", "backend", "ray_address", "progress")
#: The settings ``--resume`` may change: how long the run goes on, and the options not recorded.
RESUMABLE: Final = ("iterations", *NOT_RECORDED)


@dataclass
class ExpertIterationConfig:
    """Every setting of a run (saved in ``run.json``; ``--resume`` requires the same), each with
    its command-line option (:func:`experiments.common.cli.add_config_arguments`)."""

    out: str = field(default="runs/network", metadata={"help": "run folder (config, networks, data, eval.csv, plot)"})
    players: tuple[int, ...] = field(default=(2, 3, 4), metadata={"help": "player counts"})
    iterations: int = field(default=3, metadata={"help": "expert iterations after the bootstrap", "type": at_least(0)})
    bootstrap_teacher: str = field(default="value", metadata={"help": "agent spec of the bootstrap teacher"})
    bootstrap_games: int = field(
        default=3000, metadata={"help": "bootstrap games per player count", "type": at_least(1)}
    )
    teacher: str = field(default="ismcts", metadata={"help": "agent spec of the expert (search) teacher"})
    teacher_share: float = field(
        default=0.5,
        metadata={
            "help": "probability that a learner seat plays the teacher's move (1 = behaviour cloning)",
            "type": fraction,
        },
    )
    games: int = field(
        default=400, metadata={"help": "games per player count and expert iteration", "type": at_least(1)}
    )
    opponents: tuple[str, ...] = field(
        default=("value@0.7", "hoarder@0.1", "self@0.2"),
        metadata={"help": "the learner seat's opponents: SPEC@WEIGHT items (agent specs; 'self': the current network)"},
    )
    hidden: tuple[int, ...] = field(default=(512, 256), metadata={"help": "trunk layer sizes", "type": at_least(1)})
    inputs: str = field(
        default="observation",
        metadata={
            "help": "what the network reads: the observation, or also the value heuristic's proposed move",
            "choices": tuple(INPUTS),
        },
    )
    epochs: int = field(default=4, metadata={"help": "training epochs per expert iteration", "type": at_least(1)})
    bootstrap_epochs: int = field(default=6, metadata={"help": "epochs of the bootstrap", "type": at_least(1)})
    learning_rate: float = field(default=1e-3, metadata={"help": "Adam learning rate", "type": positive})
    batch_size: int = field(
        default=512, metadata={"help": "minibatch size", "type": at_least(1), "also": "--minibatch"}
    )
    value_weight: float = field(default=0.25, metadata={"help": "weight of the value loss", "type": non_negative})
    eval_deals: int = field(default=100, metadata={"help": "duplicate deals per evaluation table", "type": at_least(1)})
    eval_opponents: tuple[str, ...] = field(
        default=("value", "hoarder", "random"), metadata={"help": "fixed opponents"}
    )
    eval_seed: int = field(default=EVAL_SEED, metadata={"help": "seed of the evaluation deals", "type": seed_value})
    seed: int = field(default=1, metadata={"help": "seed of the training games", "type": seed_value})
    workers: int = field(default=2, metadata={"help": "processes playing games", "type": at_least(1)})
    backend: str = field(default=LOCAL, metadata=BACKEND_OPTION)
    ray_address: str | None = field(default=None, metadata=RAY_ADDRESS_OPTION)
    progress: bool = field(
        default=True, metadata={"help": "hide the progress bars (default: shown)", "flag": "--no-progress"}
    )

    def to_json(self) -> dict[str, Any]:
        data = asdict(self)
        for where in NOT_RECORDED:  # the data do not depend on where or how games run
            data.pop(where)
        return data


@dataclass
class RunState:
    """What is finished (``state.json``)."""

    completed: int = -1  # the last finished iteration (0 = bootstrap)
    played: int = -1  # the last iteration whose games are saved
    seconds: float = 0.0
    reports: list[dict[str, Any]] = field(default_factory=list)


def network_path(out: Path, iteration: int) -> Path:
    return out / f"network_{iteration}.npz"


def data_path(out: Path, iteration: int) -> Path:
    return out / "data" / f"iteration_{iteration}.npz"


def kept_path(out: Path, iteration: int) -> Path:
    """The games an iteration stopped while playing them finished (see :mod:`~experiments.training.kept_games`)."""
    return out / "data" / f"iteration_{iteration}.kept.npz"


def _opponents(items: Sequence[str], network: Path | None) -> tuple[tuple[Any, float], ...]:
    """The ``--opponents`` mixture as weighted agent specs; ``self`` is the current network
    (sampling from its policy), left out before there is one."""
    mixture = Mixture.parse(items, special=(SELF,))
    opponents = []
    for name, weight in zip(mixture.names, mixture.weights.tolist(), strict=True):
        if name == SELF:
            if network is None:
                continue
            name = f"network:path={network},deterministic=false"
        opponents.append((parse_agent_spec(name), weight))
    if not opponents:
        raise ValueError(f"no opponents in {' '.join(items)} before the first network")
    return tuple(opponents)


def selfplay_config(config: ExpertIterationConfig, iteration: int, previous: Path | None) -> SelfPlayConfig:
    seed = config.seed * 1000 + iteration  # training data never use the evaluation seed's deals
    proposals = config.inputs == "observation+value"
    if iteration == 0:
        teacher = parse_agent_spec(config.bootstrap_teacher)
        return SelfPlayConfig(players=config.players, teacher=teacher, seed=seed, proposals=proposals)
    if previous is None:
        raise ValueError(f"expert iteration {iteration} needs the previous iteration's network")
    return SelfPlayConfig(
        players=config.players,
        teacher=parse_agent_spec(config.teacher),
        learner=parse_agent_spec(f"network:path={previous},deterministic=false"),
        teacher_share=config.teacher_share,
        opponents=_opponents(config.opponents, previous),
        seed=seed,
        proposals=proposals,
    )


def _bar(total: int, unit: str, desc: str, enabled: bool) -> Any:
    """A progress bar; without one (``--no-progress``, a log file), games still print a plain line
    now and then, so that a log shows a run playing thousands of games is alive."""
    from tqdm import tqdm

    if not enabled and unit == "game":
        return ProgressLines(total, 0, lambda line: print(f"{desc}: {line}", flush=True))
    return tqdm(total=total, unit=unit, desc=desc, disable=not enabled, dynamic_ncols=True)


def play_iteration(
    config: ExpertIterationConfig, out: Path, iteration: int, previous: Path | None, runner: Runner, stop: StopRequest
) -> Samples:
    """Play an iteration's games (those a stopped run kept are not played again) and save them. A
    stop saves the games finished and raises RunStoppedError saying how many."""
    games = config.bootstrap_games if iteration == 0 else config.games
    total = games * len(config.players)
    selfplay = selfplay_config(config, iteration, previous)
    kept_file = kept_path(out, iteration)
    kept = {game: Samples(**data) for game, data in load_kept(kept_file).items()}
    phase = "bootstrap games" if iteration == 0 else f"games of iteration {iteration}"
    bar = _bar(total, "game", f"iteration {iteration}: games", config.progress)
    bar.update(len(kept))

    def progress(count: int) -> None:
        bar.update(count)
        stop.after_step(phase, len(kept))

    try:
        with stop.games():
            samples = generate(selfplay, range(total), runner=runner, progress=progress, kept=kept)
    except KeyboardInterrupt:
        bar.close()
        kept_file.parent.mkdir(parents=True, exist_ok=True)
        save_kept(
            kept_file, {game: {name: getattr(part, name) for name in SAMPLE_FIELDS} for game, part in kept.items()}
        )
        raise RunStoppedError(f"after {len(kept):,} of {total:,} {phase}") from None
    bar.close()
    path = data_path(out, iteration)
    path.parent.mkdir(parents=True, exist_ok=True)
    samples.save(path)
    kept_file.unlink(missing_ok=True)
    return samples


def train_iteration(config: ExpertIterationConfig, out: Path, iteration: int, previous: Path | None) -> FitReport:
    parts = [Samples.load(data_path(out, k)) for k in range(iteration + 1)]
    samples = Samples.concatenate(parts)
    import torch

    torch.manual_seed(config.seed + iteration)  # the same run gives the same networks, resumed or not
    if previous is None:
        network = TorchNetwork(config.hidden, inputs=config.inputs)
    else:
        network = from_numpy(NumpyNetwork.load(previous))
    epochs = config.bootstrap_epochs if iteration == 0 else config.epochs
    bar = _bar(0, "step", f"iteration {iteration}: training", config.progress)

    def progress(done: int, total: int) -> None:
        bar.total = total
        bar.update(done - bar.n)

    try:
        report = fit(
            network, samples, epochs=epochs, batch_size=config.batch_size, learning_rate=config.learning_rate,
            value_weight=config.value_weight, seed=config.seed + iteration, progress=progress,
        )  # fmt: skip
    finally:
        bar.close()
    metadata = {
        "players": list(config.players),
        "trained_by": f"python -m {MODULE}",
        "settings": config.to_json(),  # a network file says how it was made, without its run folder
        "iteration": iteration,
        "teacher": config.bootstrap_teacher if iteration == 0 else config.teacher,
        "samples": len(samples),
        "held_out_agreement": round(report.agreement, 4),
    }
    to_numpy(network, metadata).save(network_path(out, iteration))
    return report


def evaluate(config: ExpertIterationConfig, out: Path, iteration: int) -> list[dict[str, Any]]:
    """The network against every evaluation opponent at every player count (duplicate deals)."""
    learner = parse_agent_spec(f"network:path={network_path(out, iteration)}")
    return [
        {"iteration": iteration, **evaluation.evaluate(
            learner, players, opponent, config.eval_deals, config.eval_seed,
            workers=config.workers, backend=config.backend, ray_address=config.ray_address,
        )}
        for players in config.players
        for opponent in config.eval_opponents
    ]  # fmt: skip


def plot_strength(out: Path) -> Path | None:
    """Win share against each fixed opponent over the iterations, one panel per player count."""
    rows = read_rows(out / EVAL_FILE)
    if not rows:
        return None
    from matplotlib.figure import Figure

    players = sorted({int(row["players"]) for row in rows})
    figure = Figure(figsize=(4.2 * len(players), 3.6), layout="constrained")
    axes = figure.subplots(1, len(players), squeeze=False)[0]
    for axis, count in zip(axes, players, strict=True):
        mine = [row for row in rows if int(row["players"]) == count]
        for opponent in dict.fromkeys(row["opponent"] for row in mine):
            series = sorted((int(r["iteration"]), float(r["win_rate"]), float(r["ci_low"]), float(r["ci_high"]))
                            for r in mine if r["opponent"] == opponent)  # fmt: skip
            x = [s[0] for s in series]
            y = [s[1] for s in series]
            axis.errorbar(x, y, yerr=[[s[1] - s[2] for s in series], [s[3] - s[1] for s in series]],
                          marker="o", capsize=3, label=f"vs {opponent}")  # fmt: skip
        axis.axhline(1 / count, color="grey", linestyle="--", linewidth=1, label="fair share")
        axis.set_title(f"{count} players")
        axis.set_xlabel("iteration (0 = bootstrap)")
        axis.set_ylabel("network win rate")
        axis.set_ylim(0, 1)
        axis.legend(fontsize="small", loc="lower right")
    path = out / "strength.png"
    figure.savefig(path, dpi=110)
    return path


def yardstick(eval_opponents: Sequence[str]) -> str:
    """The evaluation opponent that picks the best network: ``value`` (the strongest fixed
    heuristic) when the run evaluates against it, else the first opponent evaluated."""
    return "value" if "value" in eval_opponents else eval_opponents[0]


def best_iteration(out: Path, opponent: str = "value") -> int:
    """The iteration with the best mean win rate against ``opponent`` (relative to the fair share,
    over the player counts)."""
    scores: dict[int, list[float]] = {}
    for row in read_rows(out / EVAL_FILE):
        if row["opponent"] == opponent:
            scores.setdefault(int(row["iteration"]), []).append(float(row["win_rate"]) * int(row["players"]))
    return max(scores, key=lambda iteration: (sum(scores[iteration]) / len(scores[iteration]), iteration))


def prepare_run(config: ExpertIterationConfig, resume: bool) -> tuple[Path, RunState]:
    """Create the run folder (refused if it holds a run: a ``run.json`` is one, resumable from
    its first phase), or read the state of the run that ``--resume`` continues (its settings are
    :func:`resumed_config`'s)."""
    out = Path(config.out)
    state_file = out / STATE_FILE
    if resume:
        state = RunState(**json.loads(state_file.read_text())) if state_file.exists() else RunState()
        record_run(out, MODULE, config.to_json())  # --iterations may have grown
        return out, state
    start_run(out, MODULE, config.to_json(), held=(out / RUN_FILE).exists())
    return out, RunState()


def resumed_config(args: argparse.Namespace, parser: argparse.ArgumentParser) -> ExpertIterationConfig:
    """The settings of the run in ``--resume RUN_DIR`` (its ``run.json``, which must be of this
    command and layout); only ``--iterations`` (to go on) and where the games run may be given anew."""
    folder: Path = args.resume
    refuse_new_settings(args, parser, *RESUMABLE)
    try:
        recorded = read_run(folder, MODULE)["settings"]
        given = {key: getattr(args, key) for key in RESUMABLE}
        if args.iterations is None:
            given["iterations"] = recorded["iterations"]
        config: ExpertIterationConfig = settings_from_json(
            ExpertIterationConfig, {**recorded, **given}, folder / RUN_FILE
        )
    except RunFolderError as error:
        parser.error(str(error))
    return dataclasses.replace(config, out=str(folder))


def run(
    config: ExpertIterationConfig, resume: bool = False, flags: Sequence[str] = (), stop: StopRequest | None = None
) -> Path:
    """Run (or continue) the recipe; returns the run folder. Ctrl-C or SIGTERM stops it at once
    (``stop`` replaces the signal handler: a caller that stops the run itself): the games finished
    in the games phase are saved, and every finished phase (an iteration's games, its network,
    its evaluation) is on disk; the resumed run plays only the games not kept, and an interrupted
    training or evaluation again from its start. A stop prints what was kept and the command that
    resumes (with ``flags``, the options given that are not settings of the run), then raises
    RunStoppedError."""
    with stop or StopRequest(at_once=True) as stop:  # from the start: once the run folder exists, a stop resumes
        out, state = prepare_run(config, resume)
        try:
            print_plan(config, state)
            with Runner(config.backend, config.workers, config.ray_address, abandon_items=True) as runner:
                for iteration in range(state.completed + 1, config.iterations + 1):
                    _iteration(config, out, state, iteration, runner, stop)
        except RunStoppedError as stopped:
            print(resume_line(MODULE, out, str(stopped), flags), flush=True)
            raise
        except KeyboardInterrupt:
            print(resume_line(MODULE, out, _kept(state), flags), flush=True)
            raise RunStoppedError(_kept(state)) from None
    return out


def _kept(state: RunState) -> str:
    """What a run stopped outside its games phase has kept."""
    if state.played > state.completed:
        phase = "bootstrap" if state.played == 0 else f"iteration {state.played}"
        return f"after the games of the {phase} (its training and evaluation start again)"
    if state.completed < 0:
        return "before its first game"
    return f"after iteration {state.completed}"


def print_plan(config: ExpertIterationConfig, state: RunState) -> None:
    """What the run will do, phase by phase, before it starts (each phase has a progress bar
    whose ETA is the estimate of its duration)."""
    counts = "/".join(map(str, config.players))
    phases = []
    if state.completed < 0:
        games = "games kept" if state.played == 0 else f"{config.bootstrap_games:,} games per player count ({counts})"
        phases.append(
            f"bootstrap: {games} of {config.bootstrap_teacher}, then {config.bootstrap_epochs} epochs of training"
        )
    todo = config.iterations - max(state.completed, 0)
    if todo > 0:
        phases.append(
            f"{todo} expert iteration(s): {config.games:,} games per player count labelled by {config.teacher}, "
            f"then {config.epochs} epochs over all data so far"
        )
    evaluations = len(config.players) * len(config.eval_opponents)
    phases.append(f"after each: {evaluations} evaluation tables of {config.eval_deals} duplicate deals")
    print("plan: " + "; ".join(phases), flush=True)


def _iteration(
    config: ExpertIterationConfig, out: Path, state: RunState, iteration: int, runner: Runner, stop: StopRequest
) -> None:
    """Play, train and evaluate one iteration, then record it as finished."""
    start = time.perf_counter()
    previous = None if iteration == 0 else network_path(out, iteration - 1)
    if state.played < iteration:  # a resumed run keeps the games of an iteration stopped while training
        play_iteration(config, out, iteration, previous, runner, stop)
        state.played = iteration
        write_json(out / STATE_FILE, asdict(state))
    report = train_iteration(config, out, iteration, previous)
    rows = evaluate(config, out, iteration)
    append_rows(out / EVAL_FILE, ITERATION_EVAL_COLUMNS, rows)
    plot_strength(out)
    best = best_iteration(out, yardstick(config.eval_opponents))
    NumpyNetwork.load(network_path(out, best)).save(out / "best_network.npz")
    state.completed = iteration
    state.seconds += time.perf_counter() - start
    state.reports.append({"iteration": iteration, **asdict(report), "seconds_total": round(state.seconds, 1)})
    write_json(out / STATE_FILE, asdict(state))
    if config.progress:
        summary = ", ".join(f"{r['players']}p vs {r['opponent']} {float(r['win_rate']):.3f}" for r in rows)
        print(f"iteration {iteration}: agreement {report.agreement:.3f}; {summary}; best so far {best}", flush=True)


def build_parser() -> argparse.ArgumentParser:
    """The command line: :class:`ExpertIterationConfig`'s options, and ``--resume``."""
    parser = argparse.ArgumentParser(
        prog=program_name(MODULE),
        description="Train a policy-and-value network for Biblios by expert iteration (search-labelled DAgger).",
        formatter_class=HelpFormatter,
        epilog=invocation_note(MODULE),
    )
    settings = [setting.name for setting in fields(ExpertIterationConfig) if setting.name != "progress"]
    add_config_arguments(parser, ExpertIterationConfig, settings)
    parser.add_argument(
        "--resume", type=Path, metavar="RUN_DIR",
        help="continue the run in RUN_DIR where it stopped, with its own settings (--iterations may be raised)",
    )  # fmt: skip
    add_config_arguments(parser, ExpertIterationConfig, ["progress"])
    resumable_length(parser, "iterations")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    check_backend_arguments(args, parser)
    check_run_folder(args, parser)
    resume = args.resume is not None
    if resume:
        config = resumed_config(args, parser)
    else:
        values = {key: value for key, value in vars(args).items() if key != "resume"}
        if values["iterations"] is None:  # the settings' default
            del values["iterations"]
        config = ExpertIterationConfig(**{**values, "players": tuple(args.players), "hidden": tuple(args.hidden),
                                          "eval_opponents": tuple(args.eval_opponents),
                                          "opponents": tuple(args.opponents)})  # fmt: skip
        try:
            Mixture.parse(config.opponents, special=(SELF,))  # a bad mixture is an error before any work
        except ValueError as error:
            parser.error(str(error))
    flags = resume_flags(args, parser, NOT_RECORDED)
    try:
        out = run(config, resume=resume, flags=flags)
    except RunFolderError as error:
        parser.error(str(error))
    except RunStoppedError:
        return 0
    except KeyboardInterrupt:  # a second Ctrl-C while saving
        return stopped_at_once(MODULE, config.out, (Path(config.out) / RUN_FILE).is_file(), flags)
    print(f"best network: {out / 'best_network.npz'}; evaluations: {out / EVAL_FILE}; plot: {out / 'strength.png'}")
    return 0
