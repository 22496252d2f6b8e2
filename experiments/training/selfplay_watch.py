"""What a user of a self-play run watches: ``progress.csv`` (a row per update), ``eval.csv`` (the
evaluations on duplicate deals), TensorBoard, the console lines, the exported ``policy.npz`` and
``learning_curve.png``."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any, Final

import numpy as np

from experiments.common.match import AgentSpec
from experiments.training import evaluation
from experiments.training.evaluation import EVAL_COLUMNS, plot_learning_curve
from experiments.training.runs import append_rows, read_rows, written_whole
from experiments.training.selfplay_state import Run

#: The command that trains: the exported networks name it.
MODULE: Final = "experiments.train_selfplay"
PROGRESS_COLUMNS: Final = (
    "update", "decisions", "games", "wall_seconds", "decisions_per_s", "games_per_s",
    "policy_loss", "value_loss", "entropy", "approx_kl", "win_share", "snapshots",
)  # fmt: skip
#: ``eval.csv``: the network decisions trained and the seconds, then the evaluation's columns.
SELFPLAY_EVAL_COLUMNS: Final = ("decisions", "wall_seconds", *EVAL_COLUMNS)


def plan(args: Any, done: int) -> str:
    """What the run will do (the console line of each update adds the ETA)."""
    evaluations = (
        f"every {args.eval_every:,} decisions against {args.eval_opponent} ({args.eval_deals} duplicate deals)"
        if args.eval_every
        else "none"
    )
    league = (
        f"; an exploiter every {args.exploiter_every:,} decisions ({args.exploiter_decisions:,} each round, "
        f"{args.backend})"
        if any(item.startswith("exploiter@") for item in args.opponents)
        else ""
    )
    return (
        f"plan: {args.algo} to {args.decisions:,} network decisions (from {done:,}), {args.num_games} games of "
        f"{args.players} players at once, opponents {' '.join(args.opponents)}; evaluations {evaluations}{league}"
    )


class Watch:
    """progress.csv, eval.csv, TensorBoard and the console line of a run."""

    def __init__(self, run: Run, resumed: bool) -> None:
        self.run = run
        self.out = run.args.out
        self.writer: Any = None
        if run.args.tensorboard:
            from torch.utils.tensorboard import SummaryWriter

            self.writer = SummaryWriter(str(self.out / "tb"), purge_step=run.counters["decisions"] if resumed else None)
        self.last_line = time.perf_counter()
        self.rate = 0.0  # decisions/s, averaged over the recent updates: the ETA's

    def progress(self, row: dict[str, Any]) -> None:
        append_rows(self.out / "progress.csv", PROGRESS_COLUMNS, [row])
        if self.writer is not None:
            for key in ("policy_loss", "value_loss", "entropy", "approx_kl", "decisions_per_s", "win_share"):
                self.writer.add_scalar(f"train/{key}", row[key], row["decisions"])
            for kind, share in self.run_shares().items():
                self.writer.add_scalar(f"win_share/vs_{kind}", share, row["decisions"])
        self.rate = row["decisions_per_s"] if not self.rate else 0.9 * self.rate + 0.1 * row["decisions_per_s"]
        now = time.perf_counter()
        if now - self.last_line >= self.run.args.log_seconds:
            self.last_line = now
            shares = " ".join(f"{kind} {share:.0%}" for kind, share in self.run_shares().items())
            left = max(self.run.args.decisions - row["decisions"], 0) / max(self.rate, 1.0)
            print(
                f"[{row['decisions']:>12,} decisions, {row['wall_seconds'] / 60:6.1f} min, ETA {left / 60:,.0f} min] "
                f"{row['decisions_per_s']:,.0f} dec/s {row['games_per_s']:,.0f} games/s | win share vs {shares} | "
                f"policy {row['policy_loss']:+.3f} value {row['value_loss']:.3f} entropy {row['entropy']:.2f}",
                flush=True,
            )

    def run_shares(self) -> dict[str, float]:
        return {kind: float(np.mean(values[-2000:])) for kind, values in sorted(self.run.win_stats.items()) if values}

    def evaluation(self, row: dict[str, Any]) -> None:
        append_rows(self.out / "eval.csv", SELFPLAY_EVAL_COLUMNS, [row])
        if self.writer is not None:
            self.writer.add_scalar(f"eval/win_rate_vs_{row['opponent']}", row["win_rate"], row["decisions"])
        print(
            f"[{row['decisions']:>12,} decisions] vs {row['opponent']} on {row['games']} games: "
            f"{row['win_rate']:.1%} [{row['ci_low']:.1%}, {row['ci_high']:.1%}]",
            flush=True,
        )

    def close(self) -> None:
        if self.writer is not None:
            self.writer.close()


def export(run: Run, path: Path) -> Path:
    """The network as a numpy network file (``network:path=...`` plays it without torch)."""
    from experiments.training.networks import to_numpy

    metadata = {
        "players": [run.args.players],
        "trained_by": f"python -m {MODULE}",
        "algo": run.args.algo,
        "decisions": run.counters["decisions"],
        "settings": run.args.to_json(),
    }
    value_kind = "return"
    network = to_numpy(run.network, metadata, value_kind=value_kind)
    with written_whole(path) as temporary:
        network.save(temporary)
    return path


def evaluate(run: Run, policy: Path) -> dict[str, Any]:
    """The exported policy (deterministic) against ``--eval-opponent`` on duplicate deals, the same
    deals at every evaluation (:func:`experiments.training.evaluation.evaluate`)."""
    args = run.args
    learner = AgentSpec("network", (("path", str(policy)),), label="network")
    row = evaluation.evaluate(learner, args.players, args.eval_opponent, args.eval_deals, preset=args.preset)
    return {"decisions": run.counters["decisions"], "wall_seconds": round(run.counters["wall_seconds"], 1), **row}


def plot_curve(out: Path) -> Path | None:
    """``learning_curve.png``: the evaluations' win rate over the network decisions trained."""
    return plot_learning_curve(
        read_rows(out / "eval.csv"), "decisions", out / "learning_curve.png", f"self-play run {out.name}",
        "network decisions trained",
    )  # fmt: skip


__all__ = ["MODULE", "PROGRESS_COLUMNS", "SELFPLAY_EVAL_COLUMNS", "Watch", "evaluate", "export", "plot_curve"]
