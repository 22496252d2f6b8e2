"""Evaluations during PPO training (see :mod:`experiments.training.ppo`): the current policy
against the fixed ``--eval-opponents`` on the same duplicate deals every time, the rows of
``eval.csv``, ``best_policy.npz`` and the learning curve."""

from __future__ import annotations

import csv
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, Final

from experiments.match import AgentSpec, parse_agent_spec
from experiments.tournament import TournamentConfig, run_tournament
from experiments.training.ppo.config import PPOConfig

EVAL_COLUMNS: Final = (
    "timesteps", "seconds", "players", "opponent", "games", "deals", "win_rate", "ci_low", "ci_high", "mean_vp",
)  # fmt: skip
#: The tournament seed of every evaluation: the same deals each time, so curve points compare.
EVAL_SEED: Final = 20_240_601


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


class Evaluations:
    """The evaluations of one run: each evaluation's rows (appended to ``eval.csv``), its console
    line, and ``best_policy.npz``, the evaluated policy with the best win rate against the first
    ``--eval-opponents`` entry at the first ``--players`` count."""

    def __init__(self, config: PPOConfig, start: float) -> None:
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


__all__ = ["EVAL_COLUMNS", "EVAL_SEED", "Evaluations", "evaluate", "plot_learning_curve"]
