"""What a finished tournament reports: the summary files (``summary.csv``, ``games.csv`` in
schedule order, ``pairwise.csv``, ``results.json``, ``failures.csv``), the win-rate plot and the
one-screen summary printed at the end of a run.
"""

from __future__ import annotations

import csv
import json
import math
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

from experiments.common.stats import CI_CLUSTER, MIN_DEALS_FOR_CI
from experiments.tournament.run_folder import (
    FAILURE_COLUMNS,
    FAILURES_FILE,
    GAME_COLUMNS,
    GAMES_FILE,
    failure_row,
    game_row,
)
from experiments.tournament.runner import TournamentResult
from experiments.tournament.schedule import ROUND_ROBIN, seat_orders

if TYPE_CHECKING:
    from matplotlib.figure import Figure


SUMMARY_COLUMNS: Final = (
    "agent", "games", "deals", "wins", "win_rate", "ci_low", "ci_high", "ci_method", "wilson_low",
    "wilson_high", "mean_vp", "vp_ci_low", "vp_ci_high", "rating_mu", "rating_sigma", "rating_ordinal",
    "decisions", "ms_per_decision",
)  # fmt: skip


def summary_rows(result: TournamentResult) -> list[dict[str, Any]]:
    thinking = result.thinking()
    rows = []
    for stats in result.agents:
        rating = result.ratings[stats.agent]
        decisions, seconds = thinking.get(stats.agent, (0, 0.0))
        rows.append(
            {
                "agent": stats.agent,
                "games": stats.games,
                "deals": stats.deals,
                "wins": stats.wins,
                "win_rate": stats.win_rate.estimate,
                "ci_low": stats.win_rate.low,
                "ci_high": stats.win_rate.high,
                "ci_method": stats.win_rate.method,
                "wilson_low": stats.wilson.low,
                "wilson_high": stats.wilson.high,
                "mean_vp": stats.mean_vp.estimate,
                "vp_ci_low": stats.mean_vp.low,
                "vp_ci_high": stats.mean_vp.high,
                "rating_mu": rating.mu,
                "rating_sigma": rating.sigma,
                "rating_ordinal": rating.ordinal,
                "decisions": decisions,
                "ms_per_decision": 1000 * seconds / decisions if decisions else math.nan,
            }
        )
    return rows


def game_rows(result: TournamentResult) -> list[dict[str, Any]]:
    return [game_row(record) for record in result.records]


def _json_safe(value: Any) -> Any:
    """NaN is not JSON: write null instead."""
    if isinstance(value, float) and math.isnan(value):
        return None
    if isinstance(value, dict):
        return {key: _json_safe(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [_json_safe(item) for item in value]
    return value


def _write_csv(path: Path, rows: list[dict[str, Any]], columns: Sequence[str]) -> None:
    with path.open("w", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=list(columns))
        writer.writeheader()
        writer.writerows(rows)


def write_results(result: TournamentResult, out_dir: str | Path, *, plot: bool = True) -> list[Path]:
    """Write summary.csv, games.csv (in schedule order), pairwise.csv, results.json, failures.csv
    when games failed, and (with ``plot``) winrate.png."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    summary, games = summary_rows(result), game_rows(result)
    failures = [failure_row(failure) for failure in result.failures]
    labels = [row["agent"] for row in summary]
    pairwise = [{"agent": row, **{col: result.pairwise.get(row, {}).get(col, "") for col in labels}} for row in labels]
    paths = [out / "summary.csv", out / GAMES_FILE, out / "pairwise.csv", out / "results.json"]
    _write_csv(paths[0], summary, SUMMARY_COLUMNS)
    _write_csv(paths[1], games, GAME_COLUMNS)
    _write_csv(paths[2], pairwise, ["agent", *labels])
    if failures:
        paths.append(out / FAILURES_FILE)
        _write_csv(paths[-1], failures, FAILURE_COLUMNS)
    document = {
        "config": result.config.to_json(),
        "games_played": len(result.records),
        "games_failed": len(result.failures),
        "workers": result.workers,
        "wall_seconds": result.seconds,
        "statistics": {
            "win_rate_ci": "95% cluster-robust (sandwich) normal interval over deals; Wilson over deals when "
            "degenerate (ci_method); shared wins count fractionally",
            "wilson": "95% Wilson score interval treating games as independent, for comparison",
            "rating": "openskill Plackett-Luce, mean over 10 seeded random game orders; winners share rank 0, "
            "others ranked by VP",
        },
        "agents": summary,
        "seat_win_rates": result.seats,
        "pairwise_win_shares": result.pairwise,
        "games": games,
        "failures": failures,
    }
    paths[3].write_text(json.dumps(_json_safe(document), indent=1))
    if plot and summary:
        paths.append(plot_win_rates(result, out / "winrate.png"))
    return paths


_LABEL_WIDTH: Final = 28  # characters of an agent label per line on the plot's axis


def _plot_label(label: str) -> str:
    """A long agent label broken after its ``:`` and ``,`` so the bars keep their width."""
    if len(label) <= _LABEL_WIDTH:
        return label
    return label.replace(":", ":\n", 1).replace(",", ",\n")


def plot_win_rates(result: TournamentResult, path: str | Path) -> Path:
    """Save :func:`win_rate_figure` as a PNG."""
    win_rate_figure(result).savefig(path, dpi=120)
    return Path(path)


def win_rate_figure(result: TournamentResult) -> Figure:
    """Horizontal bars of win rate with their 95% intervals, and the fair share as a dashed line.

    Nothing is drawn over the bars: each agent's figures stand in a column right of the plot and
    the legend sits below the axis label, so the picture stays readable from 2 to ~8 agents with
    win rates anywhere in [0, 1]; the figure grows with the number of agents.
    """
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure
    from matplotlib.ticker import PercentFormatter

    rows = result.agents[::-1]  # best at the top
    figure = Figure(figsize=(8.0, 1.9 + 0.5 * len(rows)), layout="constrained")
    FigureCanvasAgg(figure)
    axes = figure.add_subplot()
    positions = list(range(len(rows)))
    rates = [row.win_rate.estimate for row in rows]
    errors = [
        [max(0.0, row.win_rate.estimate - row.win_rate.low) for row in rows],
        [max(0.0, row.win_rate.high - row.win_rate.estimate) for row in rows],
    ]
    axes.barh(positions, rates, height=0.6, color="#4c72b0", alpha=0.85, label="win rate")
    axes.errorbar(rates, positions, xerr=errors, fmt="none", ecolor="black", capsize=4, label="95% CI over deals")
    fair = 1 / result.config.num_players
    axes.axvline(fair, color="grey", linestyle="--", linewidth=1, label=f"fair share ({fair:.0%})")
    axes.set_yticks(positions, [_plot_label(row.agent) for row in rows], fontsize=9)
    axes.set_ylim(-0.6, len(rows) - 0.4)
    axes.set_xlim(0, 1.02)  # room for the cap of an interval that ends at 100%
    axes.set_xticks([0, 0.2, 0.4, 0.6, 0.8, 1.0])
    axes.xaxis.set_major_formatter(PercentFormatter(1.0))
    axes.set_xlabel("win rate")
    figures = axes.get_yaxis_transform()  # x in axes fractions, y in bar positions: a column right of the plot
    axes.text(1.03, len(rows) - 0.4, "win rate [95% CI]", transform=figures, fontsize=8, va="bottom", ha="left")
    for position, row in zip(positions, rows):
        interval = row.win_rate
        text = f"{interval.estimate:.1%} [{interval.low:.0%}, {interval.high:.0%}]"
        axes.text(1.03, position, text, transform=figures, fontsize=8, va="center", ha="left")
    config = result.config
    axes.set_title(
        f"{config.mode}, {config.num_players} players, {len(result.records)} games, seed {config.seed}", fontsize=10
    )
    figure.legend(loc="outside lower center", ncols=3, fontsize=8, frameon=False)
    return figure


def format_summary(result: TournamentResult, saved: Sequence[Path] = ()) -> str:
    """The one-screen summary printed at the end of a run."""
    config = result.config
    per_deal = len(seat_orders(config.num_players, config.seatings))
    tables = len(config.tables())
    schedule = f"{config.deals} deals x {per_deal} seatings" + (f" x {tables} tables" if tables > 1 else "")
    workers = f"{result.workers} worker" + ("s" if result.workers > 1 else "")
    games = f"{len(result.records)} of {len(result.records) + len(result.failures)}" if result.failures else ""
    lines = [
        f"Biblios {config.mode}, {config.num_players} players: {games or len(result.records)} games ({schedule}), "
        f"seed {config.seed}, penalty {config.penalty}, {workers}, {result.seconds:.1f} s",
        "",
    ]
    width = max([len("agent"), *(len(row.agent) for row in result.agents)])
    lines.append(
        f"  {'agent':<{width}}  {'games':>6}  {'win rate':>8}  {'95% CI':^16}  {'mean VP':>7}  {'95% CI':^13}"
        f"  {'rating':>13}  {'ms/move':>7}"
    )
    thinking = result.thinking()
    fallback = False
    for row in result.agents:
        rating = result.ratings[row.agent]
        decisions, seconds = thinking.get(row.agent, (0, 0.0))
        mark = "" if row.win_rate.method == CI_CLUSTER else "*"
        fallback = fallback or bool(mark)
        vp = row.mean_vp
        lines.append(
            f"  {row.agent:<{width}}  {row.games:>6}  {row.win_rate.estimate:>8.1%}  "
            f"{f'[{row.win_rate.low:.1%}, {row.win_rate.high:.1%}]{mark}':^16}  {vp.estimate:>7.2f}  "
            f"{f'[{vp.low:.2f}, {vp.high:.2f}]':^13}  {f'{rating.mu:.1f} ± {rating.sigma:.1f}':>13}  "
            f"{1000 * seconds / decisions if decisions else math.nan:>7.2f}"
        )
    lines.append("")
    deals = max((row.deals for row in result.agents), default=0)
    lines.append(
        f"  Win rate: 95% CI clustered over {deals} deals (the games of a deal share its cards); "
        f"shared wins count 1/k. Fair share {1 / config.num_players:.1%}."
    )
    if fallback:
        lines.append("  * no spread between deals (e.g. 0% or 100%): Wilson interval with one trial per deal.")
    if config.deals < MIN_DEALS_FOR_CI:
        lines.append(
            f"  Only {config.deals} deals: the intervals are rough (trust them from ~{MIN_DEALS_FOR_CI} deals)."
        )
    lines.append("  Rating: openskill Plackett-Luce mu ± sigma. ms/move: mean thinking time per decision.")
    seats = " · ".join(f"seat {seat} {rate:.1%}" for seat, rate in enumerate(result.seats))
    lines.append(f"  Seat win rates: {seats}; shared wins in {result.shared_wins()} games.")
    if config.mode == ROUND_ROBIN and 2 < len(result.agents) <= 8:
        labels = [row.agent for row in result.agents]
        short = [label[:9] for label in labels]
        lines.append("")
        lines.append(f"  Pairwise win share (row vs column):  {'  '.join(f'{name:>9}' for name in short)}")
        for label, name in zip(labels, short):
            cells = "  ".join(
                f"{result.pairwise.get(label, {}).get(other, math.nan):>9.1%}" if other != label else f"{'-':>9}"
                for other in labels
            )
            lines.append(f"  {name:>34}  {cells}")
    if result.failures:
        lines.append("")
        lines.append(
            f"  {len(result.failures)} games failed (an agent crashed or played illegally) and are left out of the "
            f"statistics, so some deals are not balanced: see {FAILURES_FILE}. The first:"
        )
        lines.append(f"  {result.failures[0].error}")
    if saved:
        folder = saved[0].parent
        lines.append("")
        lines.append(f"  Saved in {folder}/: {', '.join(path.name for path in saved)}")
    return "\n".join(lines)
