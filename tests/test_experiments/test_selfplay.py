"""The self-play trainer (``experiments.train_selfplay``) on tiny runs.

* A run trains, checkpoints, stops on SIGINT with exit status 0 and the line that resumes it (no
  traceback), resumes and finishes (the command, in a subprocess).
* A resumed run logs what the uninterrupted run of the same seed logs (PPO, the pipeline and the
  heuristics' replay included; DMC too).
* A corrupt or foreign checkpoint is refused naming the file and why; an unknown opponent is an
  error before any work; a run folder that already holds a run is not overwritten.
* The exported network plays as ``network:path=...`` in a tournament; its evaluations plot, and
  several runs' plot together (``experiments.studies.learning_curves``).
"""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest
from interrupts import interrupt, run_module
from optional_extras import require

require("torch")

from experiments.common.errors import CheckpointError  # noqa: E402
from experiments.training.runs import resume_flags  # noqa: E402
from experiments.training.selfplay import Args, Run, args_from, build_parser, main, train  # noqa: E402
from experiments.training.stopping import StopRequest  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
TINY = {
    "num_games": 8,
    "rollout_steps": 8,
    "hidden": (16,),
    "minibatch": 32,
    "eval_every": 0,
    "tensorboard": False,
    "snapshot_every": 100,
    "log_seconds": 1e9,
    # A sampling network (one batched agent: the checkpoint keeps its generator) and a per-game
    # random agent named by its import path (its moves depend on its seed, so the replay that
    # brings it back after a resume is exercised).
    "opponents": (
        "self@0.4",
        "snapshot@0.1",
        "value@0.2",
        "network:deterministic=false@0.1",
        "agents.random_agent.RandomAgent@0.1",
        "random@0.1",
    ),
}
#: The logged columns that must match between a resumed and an uninterrupted run (not the timings).
COMPARED = (
    "update",
    "decisions",
    "games",
    "policy_loss",
    "value_loss",
    "entropy",
    "approx_kl",
    "win_share",
    "snapshots",
)


class StopAfter(StopRequest):
    """Stops the run after ``updates`` updates, as Ctrl-C would."""

    def __init__(self, updates: int) -> None:
        super().__init__()
        self.updates = updates

    def after_update(self, run: Run) -> None:
        if run.counters["updates"] >= self.updates:
            self.requested = True


def _progress(folder: Path) -> list[dict[str, str]]:
    with (folder / "progress.csv").open(newline="") as handle:
        return list(csv.DictReader(handle))


def _same_rows(first: list[dict[str, str]], second: list[dict[str, str]]) -> None:
    assert len(first) == len(second)
    for a, b in zip(first, second):
        for column in COMPARED:
            assert float(a[column]) == pytest.approx(float(b[column]), rel=1e-4, abs=1e-6), (column, a["update"])


@pytest.mark.parametrize(("algo", "exploring"), [("ppo", 0), ("dmc", 0), ("ppo", 3)])
def test_a_resumed_run_logs_what_the_uninterrupted_run_logs(tmp_path: Path, algo: str, exploring: int) -> None:
    decisions = 4000  # about 24 games of 8 slots: games end before, at and after each stop
    settings = {"decisions": decisions, "algo": algo, "exploring_starts": exploring, **TINY}
    whole = Args(out=tmp_path / "whole", **settings)  # type: ignore[arg-type]
    train(whole)
    parts = Args(out=tmp_path / "parts", **settings)  # type: ignore[arg-type]
    train(parts, stop=StopAfter(20))
    assert len(_progress(parts.out)) == 20
    train(parts, resume=True, stop=StopAfter(40))
    train(parts, resume=True)
    _same_rows(_progress(whole.out), _progress(parts.out))


def test_the_command_stops_on_sigint_saves_and_resumes(tmp_path: Path) -> None:
    out = tmp_path / "run"
    command = ["--out", str(out), "--decisions", "100000000"]
    command += ["--num-games", "8", "--rollout-steps", "8", "--hidden", "16", "--minibatch", "32"]
    command += ["--eval-every", "0", "--no-tensorboard", "--opponents", "self@0.5", "random@0.5"]
    progress = out / "progress.csv"
    interrupt("experiments.train_selfplay", command, ready=lambda: progress.exists() and len(_progress(out)) >= 3)
    stopped_at = int(_progress(out)[-1]["decisions"])
    resumed = run_module("experiments.train_selfplay", ["--resume", str(out), "--decisions", str(stopped_at + 500)])
    assert resumed.returncode == 0, resumed.stderr
    rows = _progress(out)
    assert int(rows[-1]["decisions"]) >= stopped_at + 500
    assert [int(row["update"]) for row in rows] == list(range(1, len(rows) + 1))  # counters continue
    assert json.loads((out / "run.json").read_text())["settings"]["hidden"] == [16]


def test_a_corrupt_or_foreign_checkpoint_is_refused_naming_the_file(tmp_path: Path) -> None:
    args = Args(out=tmp_path / "run", decisions=200, **TINY)  # type: ignore[arg-type]
    train(args)
    checkpoint = args.out / "checkpoint.pt"
    checkpoint.write_bytes(b"not a checkpoint")
    with pytest.raises(CheckpointError, match=rf"cannot read checkpoint {checkpoint}"):
        train(args, resume=True)
    import torch

    torch.save({"format": "something else"}, checkpoint)
    with pytest.raises(CheckpointError, match="is not a self-play checkpoint"):
        train(args, resume=True)
    from experiments.training.selfplay_state import CHECKPOINT_VERSION

    torch.save({"format": "biblios-selfplay-checkpoint", "version": CHECKPOINT_VERSION - 1}, checkpoint)
    with pytest.raises(CheckpointError, match=f"is checkpoint version {CHECKPOINT_VERSION - 1}, this code reads"):
        train(args, resume=True)
    foreign = {"format": "biblios-selfplay-checkpoint", "version": CHECKPOINT_VERSION, "layout": "biblios_v0-000"}
    torch.save(foreign, checkpoint)
    with pytest.raises(CheckpointError, match="was made for observation/action layout 'biblios_v0-000'"):
        train(args, resume=True)


def test_bad_settings_are_refused_before_any_work(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "run"
    assert main(["--out", str(out), "--opponents", "self@0.5", "nosuchagent@0.5"]) == 2
    assert "nosuchagent" in capsys.readouterr().err
    assert not out.exists()
    assert main(["--out", str(out), "--opponents", "value"]) == 2
    assert "expected SPEC@WEIGHT" in capsys.readouterr().err
    train(Args(out=out, decisions=100, **TINY))  # type: ignore[arg-type]
    assert main(["--out", str(out)]) == 2
    assert "already holds a run" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        main(["--resume", str(out), "--hidden", "32"])  # a resumed run keeps its settings


def test_the_exported_network_plays_in_a_tournament(tmp_path: Path) -> None:
    from experiments.common.match import parse_agent_spec
    from experiments.tournament import TournamentConfig, run_tournament

    args = Args(out=tmp_path / "run", decisions=300, **TINY)  # type: ignore[arg-type]
    train(args)
    policy = args.out / "policy.npz"
    config = TournamentConfig(agents=(parse_agent_spec(f"network:path={policy}"), parse_agent_spec("random")), deals=2)
    result = run_tournament(config, workers=1, progress=False)
    assert len(result.records) == 4


def test_an_evaluation_and_the_plot_are_written(tmp_path: Path) -> None:
    settings = {**TINY, "eval_every": 200, "eval_deals": 1, "plot": True}
    args = Args(out=tmp_path / "run", decisions=400, **settings)  # type: ignore[arg-type]
    train(args)
    with (args.out / "eval.csv").open() as handle:
        rows = list(csv.DictReader(handle))
    assert rows and rows[0]["opponent"] == "value" and int(rows[0]["games"]) == 2
    assert (args.out / "learning_curve.png").stat().st_size > 1000

    from experiments.studies import learning_curves

    second = tmp_path / "second"
    second.mkdir()
    (second / "eval.csv").write_text((args.out / "eval.csv").read_text())
    figure = tmp_path / "curves.png"
    assert learning_curves.main([str(args.out), str(second), "--out", str(figure)]) == 0
    assert figure.stat().st_size > 1000
    assert [row["run"] for row in learning_curves.curve_rows([args.out, second])] == ["run"] * len(rows) + [
        "second"
    ] * len(rows)
    assert learning_curves.main([str(args.out), str(tmp_path / "empty"), "--out", str(figure)]) == 2


def test_a_resumed_run_takes_decisions_given_anew_even_at_the_default(tmp_path: Path) -> None:
    """``--decisions 20000000`` (the default of a new run) is a request like any other value: the
    resumed run trains to it and the printed resume command repeats it."""
    out = tmp_path / "run"
    train(Args(out=out, decisions=300, **TINY))  # type: ignore[arg-type]
    parser = build_parser()
    given = ["--resume", str(out), "--decisions", "20000000"]
    for argv, expected in ((["--resume", str(out)], 300), (given, 20_000_000)):
        namespace = parser.parse_args(argv)
        resumed, resume = args_from(namespace, parser)
        assert resume and resumed.decisions == expected
        assert resume_flags(namespace, parser, ["decisions"]) == argv[2:]
    fresh, _ = args_from(parser.parse_args(["--out", str(tmp_path / "new")]), parser)
    assert fresh.decisions == Args.decisions == 20_000_000  # a new run: the settings' default
