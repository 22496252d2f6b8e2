"""How every trainer measures its agent: against a fixed opponent on duplicate deals through the
tournament harness, the same deals at every evaluation (:data:`EVAL_SEED`) so that the points of a
learning curve compare, and the learning curve itself."""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Final

from experiments.common.match import AgentSpec, parse_agent_spec
from experiments.common.parallel import LOCAL
from experiments.tournament import TournamentConfig, run_tournament

#: The tournament seed of the trainers' evaluations (never used to deal training games).
EVAL_SEED: Final = 20_240_601
#: The columns :func:`evaluate` fills, after the trainer's own (its step counter, its clock).
EVAL_COLUMNS: Final = (
    "players", "opponent", "deals", "games", "win_rate", "ci_low", "ci_high", "fair_share", "mean_vp",
    "ms_per_decision",
)  # fmt: skip


def evaluate(
    learner: AgentSpec,
    players: int,
    opponent: str,
    deals: int,
    seed: int = EVAL_SEED,
    *,
    preset: str = "standard",
    workers: int = 1,
    backend: str = LOCAL,
    ray_address: str | None = None,
) -> dict[str, Any]:
    """``learner`` in one seat and ``opponent`` (an agent spec) in every other, on ``deals``
    duplicate deals each played in every seating: its win rate with the 95% interval clustered
    over deals, its fair share (1/players), mean VP and time per decision (:data:`EVAL_COLUMNS`);
    the games deal the cards of ``preset``. A learner labelled as the opponent (a trained
    ``network`` against the shipped ``network``) is renamed for the games: one label per agent,
    or the two would be counted as one, at exactly the fair share."""
    other = parse_agent_spec(opponent)
    if learner.label == other.label:
        learner = dataclasses.replace(learner, label=f"{learner.label} (learner)")
    config = TournamentConfig(
        agents=(learner, *[other] * (players - 1)), num_players=players, deals=deals, seed=seed, preset=preset
    )
    result = run_tournament(config, workers=workers, progress=False, backend=backend, ray_address=ray_address)
    stats = next(row for row in result.agents if row.agent == learner.label)
    decisions, seconds = result.thinking()[learner.label]
    return {
        "players": players,
        "opponent": opponent,
        "deals": deals,
        "games": len(result.records),
        "win_rate": round(stats.win_rate.estimate, 4),
        "ci_low": round(stats.win_rate.low, 4),
        "ci_high": round(stats.win_rate.high, 4),
        "fair_share": round(1 / players, 4),
        "mean_vp": round(stats.mean_vp.estimate, 3),
        "ms_per_decision": round(1000 * seconds / max(decisions, 1), 3),
    }


def plot_learning_curve(rows: Sequence[dict[str, Any]], step: str, path: Path, title: str, xlabel: str) -> Path | None:
    """Win rate against each evaluation opponent over ``step`` (a column of the rows), the 95%
    interval as a band and each player count's fair share dashed; ``None`` without rows. Rows
    with a ``run`` column (several runs in one figure) draw one curve per run."""
    if not rows:
        return None
    # A bare Figure renders to a file without pyplot: no backend switch under a notebook's inline plots.
    from matplotlib.figure import Figure
    from matplotlib.ticker import PercentFormatter

    figure = Figure(figsize=(8, 4.5))
    axes = figure.add_subplot()
    series: dict[tuple[int, str, str], list[dict[str, Any]]] = {}
    for row in rows:
        series.setdefault((int(row["players"]), str(row["opponent"]), str(row.get("run", ""))), []).append(row)
    several_counts = len({players for players, _, _ in series}) > 1
    for (players, opponent, run), points in sorted(series.items()):
        x = [float(point[step]) for point in points]
        label = f"{run + ' ' if run else ''}vs {opponent}" + (f" ({players} players)" if several_counts else "")
        (line,) = axes.plot(x, [float(p["win_rate"]) for p in points], marker="o", markersize=3, label=label)
        low, high = [float(p["ci_low"]) for p in points], [float(p["ci_high"]) for p in points]
        axes.fill_between(x, low, high, color=line.get_color(), alpha=0.15)
    for players in sorted({players for players, _, _ in series}):
        axes.axhline(1 / players, color="grey", linestyle="--", linewidth=1)
    axes.set_ylim(0, 1)
    axes.yaxis.set_major_formatter(PercentFormatter(1.0))
    axes.set_xlabel(xlabel)
    axes.set_ylabel("win rate (95% CI over deals)")
    axes.set_title(title, fontsize=10)
    axes.grid(alpha=0.3)
    axes.legend(fontsize=8, loc="lower right")
    figure.tight_layout()
    figure.savefig(path, dpi=110)
    return path


__all__ = ["EVAL_COLUMNS", "EVAL_SEED", "evaluate", "plot_learning_curve"]
