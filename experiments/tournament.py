"""Tournaments between agents with duplicate deals, in parallel: ``python -m experiments.tournament``.

Schedule. A *table* is a lineup of agents, one per seat: in a head-to-head the agents given
(repeat one to fill seats, e.g. ``value random random random``); in a round-robin every
combination of ``--players`` distinct agents. Each *deal* is one game seed (the same
shuffled deck, removal and chance stream) and is replayed at every table with the lineup
in every *seating*: for 2 players both seatings, for 3-4 players the cyclic rotations
(``--seatings cyclic``, P games per deal) or all permutations (``--seatings all``, P!).
So card luck and seat order cancel out, and every table plays the same deals.

Reproducibility. Game ``i`` of deal ``d`` is played with seed ``derive_seed(seed, DEAL, d)``
and its agent in seat ``s`` is started with ``derive_seed(seed, AGENT, i, s)``; agents are
built fresh for every game, so results do not depend on ``--workers``. ``games.csv`` lists
every game's seeds; ``--only-games I ...`` replays chosen games of the same command and
``--save-logs DIR`` writes each game as a log that :func:`biblios_env.engine.log.load_log`
replays (metadata: agent labels per seat, agent seeds, tournament seed, game index, deal).

Statistics (see :mod:`experiments.stats`): win rate with a 95% cluster-robust interval over
deals (shared wins count fractionally), the Wilson interval over games for comparison,
mean VP, openskill ratings, seat win rates and pairwise win shares. Written to ``--out`` as
``summary.csv``, ``games.csv``, ``pairwise.csv``, ``results.json`` and ``winrate.png``.

Examples::

    python -m experiments.tournament --agents value random --games 200
    python -m experiments.tournament --agents value:aggression=1.2 hoarder random --players 2
    python -m experiments.tournament --agents ismcts value random random --seatings all --deals 10
"""

from __future__ import annotations

import argparse
import csv
import itertools
import json
import math
import os
import sys
import time
from collections.abc import Iterable, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any, Final

import numpy as np

from biblios_env.engine.game import PENALTIES, check_seed
from biblios_env.engine.setup import check_num_players
from experiments.match import (
    AgentError,
    AgentSpec,
    AgentSpecError,
    GameResult,
    build_agent,
    parse_agent_spec,
    play_game,
    registry,
)
from experiments.stats import (
    CI_CLUSTER,
    MIN_DEALS_FOR_CI,
    AgentStats,
    Outcome,
    Rating,
    agent_stats,
    openskill_ratings,
    pairwise_win_shares,
    seat_win_rates,
)

HEAD_TO_HEAD: Final = "head-to-head"
ROUND_ROBIN: Final = "round-robin"
MODES: Final = (HEAD_TO_HEAD, ROUND_ROBIN)
SEATINGS: Final = ("cyclic", "all")
# Purposes mixed into derived seeds, so deal seeds and agent seeds never coincide.
DEAL: Final = 1
AGENT: Final = 2


def derive_seed(tournament_seed: int, *keys: int) -> int:
    """A 63-bit seed from the tournament seed and integer keys (numpy SeedSequence hashing)."""
    words = np.random.SeedSequence([tournament_seed, *keys]).generate_state(2, np.uint32)
    return (int(words[0]) << 31) ^ int(words[1])


def seat_orders(num_players: int, seatings: str) -> list[tuple[int, ...]]:
    """The seatings of a deal: ``order[seat]`` is the lineup position sitting in ``seat``."""
    if seatings == "all":
        return list(itertools.permutations(range(num_players)))
    return [tuple((seat - shift) % num_players for seat in range(num_players)) for shift in range(num_players)]


@dataclass(frozen=True, slots=True)
class GameTask:
    """One scheduled game: everything a worker needs besides the tournament config."""

    index: int
    table: int
    deal: int
    seating: int
    seed: int
    lineup: tuple[int, ...]  # index into TournamentConfig.agents, per seat
    agent_seeds: tuple[int, ...]


@dataclass(frozen=True)
class TournamentConfig:
    """What to play. ``deals`` is per table; each deal is played once per seating."""

    agents: tuple[AgentSpec, ...]
    num_players: int = 2
    mode: str = HEAD_TO_HEAD
    deals: int = 50
    seatings: str = "cyclic"
    seed: int = 0
    penalty: str = "standard"
    strict_bids: bool = False

    def __post_init__(self) -> None:
        check_num_players(self.num_players)
        check_seed(self.seed)
        labels = [spec.label for spec in self.agents]
        if self.mode not in MODES:
            raise ValueError(f"mode must be one of {MODES}, got {self.mode!r}")
        if self.seatings not in SEATINGS:
            raise ValueError(f"seatings must be one of {SEATINGS}, got {self.seatings!r}")
        if self.penalty not in PENALTIES:
            raise ValueError(f"penalty must be one of {PENALTIES}, got {self.penalty!r}")
        if isinstance(self.deals, bool) or not isinstance(self.deals, int) or self.deals < 1:
            raise ValueError(f"deals must be a positive int, got {self.deals!r}")
        if self.mode == HEAD_TO_HEAD and len(labels) != self.num_players:
            raise ValueError(
                f"a {self.num_players}-player head-to-head needs {self.num_players} agents, one per seat "
                f"(repeat an agent to fill seats), got {len(labels)}: {' '.join(labels)}"
            )
        if self.mode == ROUND_ROBIN:
            repeated = sorted({label for label in labels if labels.count(label) > 1})
            if repeated:
                raise ValueError(f"a round-robin needs distinct agents; given more than once: {', '.join(repeated)}")
            if len(labels) < self.num_players:
                raise ValueError(
                    f"a {self.num_players}-player round-robin needs at least {self.num_players} agents, "
                    f"got {len(labels)}"
                )

    @property
    def labels(self) -> list[str]:
        """Distinct agent labels in the order given."""
        return list(dict.fromkeys(spec.label for spec in self.agents))

    def tables(self) -> list[tuple[int, ...]]:
        """Lineups (indices into ``agents``): the one given, or every combination of distinct agents."""
        if self.mode == HEAD_TO_HEAD:
            return [tuple(range(len(self.agents)))]
        return list(itertools.combinations(range(len(self.agents)), self.num_players))

    def schedule(self) -> list[GameTask]:
        """Every game in canonical order: deal, then table, then seating."""
        tasks = []
        orders = seat_orders(self.num_players, self.seatings)
        for deal in range(self.deals):
            seed = derive_seed(self.seed, DEAL, deal)
            for table, lineup in enumerate(self.tables()):
                for seating, order in enumerate(orders):
                    index = len(tasks)
                    tasks.append(
                        GameTask(
                            index=index,
                            table=table,
                            deal=deal,
                            seating=seating,
                            seed=seed,
                            lineup=tuple(lineup[position] for position in order),
                            agent_seeds=tuple(derive_seed(self.seed, AGENT, index, seat) for seat in range(len(order))),
                        )
                    )
        return tasks

    def to_json(self) -> dict[str, Any]:
        return {
            "agents": [spec.label for spec in self.agents],
            "num_players": self.num_players,
            "mode": self.mode,
            "deals": self.deals,
            "seatings": self.seatings,
            "seatings_per_deal": len(seat_orders(self.num_players, self.seatings)),
            "tables": len(self.tables()),
            "seed": self.seed,
            "penalty": self.penalty,
            "strict_bids": self.strict_bids,
        }


@dataclass(frozen=True, slots=True)
class GameRecord:
    """A scheduled game and its result."""

    index: int
    table: int
    deal: int
    seating: int
    result: GameResult

    def outcome(self) -> Outcome:
        result = self.result
        return Outcome(self.deal, result.agents, result.vp, result.winners)


def log_path(log_dir: str | Path, index: int) -> Path:
    return Path(log_dir) / f"game-{index:06d}.json"


def run_game(task: GameTask, config: TournamentConfig, log_dir: str | Path | None = None) -> GameRecord:
    """Play one scheduled game with freshly built agents (so no state leaks between games)."""
    specs = [config.agents[position] for position in task.lineup]
    metadata = {
        "tournament_seed": config.seed,
        "game_index": task.index,
        "deal": task.deal,
        "table": task.table,
        "seating": task.seating,
    }
    try:
        result = play_game(
            [build_agent(spec) for spec in specs],
            task.seed,
            agent_seeds=task.agent_seeds,
            labels=[spec.label for spec in specs],
            penalty=config.penalty,
            strict_bids=config.strict_bids,
            log_path=None if log_dir is None else log_path(log_dir, task.index),
            log_metadata=metadata,
        )
    except AgentError as error:
        raise AgentError(f"game {task.index} (deal {task.deal}, seed {task.seed}): {error}") from error
    return GameRecord(task.index, task.table, task.deal, task.seating, result)


def _run_chunk(tasks: Sequence[GameTask], config: TournamentConfig, log_dir: str | Path | None) -> list[GameRecord]:
    return [run_game(task, config, log_dir) for task in tasks]


@dataclass
class TournamentResult:
    config: TournamentConfig
    records: list[GameRecord]
    seconds: float = 0.0  # wall-clock time
    workers: int = 1
    agents: list[AgentStats] = field(init=False)
    ratings: dict[str, Rating] = field(init=False)
    seats: list[float] = field(init=False)
    pairwise: dict[str, dict[str, float]] = field(init=False)

    def __post_init__(self) -> None:
        outcomes = [record.outcome() for record in self.records]
        self.agents = agent_stats(outcomes)
        self.ratings = openskill_ratings(outcomes)
        self.seats = seat_win_rates(outcomes)
        self.pairwise = pairwise_win_shares(outcomes)

    def thinking(self) -> dict[str, tuple[int, float]]:
        """Decisions and thinking seconds per agent (timings vary between runs and machines)."""
        totals: dict[str, list[float]] = {}
        for record in self.records:
            result = record.result
            for agent, decisions, seconds in zip(result.agents, result.decisions, result.seconds):
                total = totals.setdefault(agent, [0, 0.0])
                total[0] += decisions
                total[1] += seconds
        return {agent: (int(decisions), seconds) for agent, (decisions, seconds) in totals.items()}

    def shared_wins(self) -> int:
        return sum(len(record.result.winners) > 1 for record in self.records)


def _chunks(tasks: Sequence[GameTask], workers: int) -> list[Sequence[GameTask]]:
    """Contiguous chunks small enough to balance the load and keep the progress bar moving."""
    size = max(1, min(16, len(tasks) // (workers * 8)))
    return [tasks[start : start + size] for start in range(0, len(tasks), size)]


def run_tournament(
    config: TournamentConfig,
    *,
    workers: int | None = None,
    progress: bool = True,
    log_dir: str | Path | None = None,
    only_games: Iterable[int] | None = None,
) -> TournamentResult:
    """Play the schedule (or the games ``only_games`` of it) on ``workers`` processes.

    ``workers=1`` plays in this process. Results are in schedule order and identical for any
    ``workers``. Raises AgentSpecError before any game for unknown agents or bad params, and
    AgentError (naming the game and its seed) when an agent crashes or plays illegally.
    """
    from tqdm import tqdm

    for spec in dict.fromkeys(config.agents):
        build_agent(spec)  # fail fast, in this process, with a clear message
    tasks = config.schedule()
    if only_games is not None:
        wanted = sorted(set(only_games))
        unknown = [index for index in wanted if not 0 <= index < len(tasks)]
        if unknown:
            raise ValueError(f"--only-games {unknown}: this tournament has games 0..{len(tasks) - 1}")
        tasks = [tasks[index] for index in wanted]
    if log_dir is not None:
        Path(log_dir).mkdir(parents=True, exist_ok=True)
    workers = max(1, min(workers or os.cpu_count() or 1, len(tasks)))
    start = time.perf_counter()
    records: list[GameRecord] = []
    with tqdm(total=len(tasks), unit="game", disable=not progress, desc=config.mode, dynamic_ncols=True) as bar:
        if workers == 1:
            for task in tasks:
                records.append(run_game(task, config, log_dir))
                bar.update()
        else:
            with ProcessPoolExecutor(max_workers=workers) as executor:
                pending: set[Future[list[GameRecord]]] = {
                    executor.submit(_run_chunk, chunk, config, log_dir) for chunk in _chunks(tasks, workers)
                }
                try:
                    while pending:
                        done, pending = wait(pending, return_when=FIRST_COMPLETED)
                        for future in done:
                            chunk_records = future.result()
                            records.extend(chunk_records)
                            bar.update(len(chunk_records))
                except BaseException:
                    executor.shutdown(wait=True, cancel_futures=True)
                    raise
    records.sort(key=lambda record: record.index)
    return TournamentResult(config, records, seconds=time.perf_counter() - start, workers=workers)


# ----------------------------------------------------------------------------- output
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
    rows = []
    for record in result.records:
        game = record.result
        rows.append(
            {
                "index": record.index,
                "table": record.table,
                "deal": record.deal,
                "seating": record.seating,
                "seed": game.seed,
                "agents": " | ".join(game.agents),
                "agent_seeds": " ".join(map(str, game.agent_seeds)),
                "vp": " ".join(map(str, game.vp)),
                "winners": " ".join(map(str, game.winners)),
                "category_winners": " ".join(map(str, game.category_winners)),
                "dice": " ".join(map(str, game.dice)),
                "actions": game.actions,
                "decisions": " ".join(map(str, game.decisions)),
                "seconds": " ".join(f"{seconds:.4f}" for seconds in game.seconds),
            }
        )
    return rows


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
    """Write summary.csv, games.csv, pairwise.csv, results.json and (with ``plot``) winrate.png."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    summary, games = summary_rows(result), game_rows(result)
    labels = [row["agent"] for row in summary]
    pairwise = [{"agent": row, **{col: result.pairwise.get(row, {}).get(col, "") for col in labels}} for row in labels]
    paths = [out / "summary.csv", out / "games.csv", out / "pairwise.csv", out / "results.json"]
    _write_csv(paths[0], summary, SUMMARY_COLUMNS)
    _write_csv(paths[1], games, list(games[0]) if games else ["index"])
    _write_csv(paths[2], pairwise, ["agent", *labels])
    document = {
        "config": result.config.to_json(),
        "games_played": len(result.records),
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
    }
    paths[3].write_text(json.dumps(_json_safe(document), indent=1))
    if plot and summary:
        paths.append(plot_win_rates(result, out / "winrate.png"))
    return paths


def plot_win_rates(result: TournamentResult, path: str | Path) -> Path:
    """Horizontal bars of win rate with their 95% intervals, and the fair share as a dashed line."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure
    from matplotlib.ticker import PercentFormatter

    rows = result.agents[::-1]  # best at the top
    figure = Figure(figsize=(7.5, 1.2 + 0.45 * len(rows)))
    FigureCanvasAgg(figure)
    axes = figure.add_subplot()
    rates = [row.win_rate.estimate for row in rows]
    errors = [
        [max(0.0, row.win_rate.estimate - row.win_rate.low) for row in rows],
        [max(0.0, row.win_rate.high - row.win_rate.estimate) for row in rows],
    ]
    positions = range(len(rows))
    axes.barh(positions, rates, xerr=errors, capsize=4, color="#4c72b0", alpha=0.85)
    axes.axvline(1 / result.config.num_players, color="grey", linestyle="--", linewidth=1, label="fair share")
    axes.set_yticks(list(positions), [row.agent for row in rows])
    axes.set_xlim(0, 1)
    axes.set_xlabel("win rate (95% CI over deals)")
    config = result.config
    axes.set_title(
        f"{config.mode}, {config.num_players} players, {len(result.records)} games, seed {config.seed}", fontsize=10
    )
    for position, row in zip(positions, rows):
        axes.text(min(row.win_rate.high + 0.01, 0.9), position, f"{row.win_rate.estimate:.1%}", va="center", fontsize=8)
    axes.xaxis.set_major_formatter(PercentFormatter(1.0))
    axes.legend(loc="lower right", fontsize=8)
    figure.tight_layout()
    figure.savefig(path, dpi=120)
    return Path(path)


def format_summary(result: TournamentResult, saved: Sequence[Path] = ()) -> str:
    """The one-screen summary printed at the end of a run."""
    config = result.config
    per_deal = len(seat_orders(config.num_players, config.seatings))
    tables = len(config.tables())
    schedule = f"{config.deals} deals x {per_deal} seatings" + (f" x {tables} tables" if tables > 1 else "")
    workers = f"{result.workers} worker" + ("s" if result.workers > 1 else "")
    lines = [
        f"Biblios {config.mode}, {config.num_players} players: {len(result.records)} games ({schedule}), "
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
    if saved:
        folder = saved[0].parent
        lines.append("")
        lines.append(f"  Saved in {folder}/: {', '.join(path.name for path in saved)}")
    return "\n".join(lines)


# ----------------------------------------------------------------------------- command line
def _positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {value}")
    return value


def _seed(text: str) -> int:
    try:
        return check_seed(int(text))
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a non-negative integer seed, got {text!r}") from None


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m experiments.tournament",
        description="Play a head-to-head or round-robin between Biblios agents with duplicate deals.",
        epilog="Agent specs: NAME or NAME:key=value,... with NAME a registry name (see --list-agents) or an "
        "import path package.module.Factory; e.g. value:aggression=1.2 or ismcts:iterations=500.",
    )
    parser.add_argument("--agents", nargs="+", metavar="SPEC", help="agents (see below); a lineup in head-to-head")
    parser.add_argument(
        "--players",
        type=int,
        choices=(2, 3, 4),
        help="players per game (head-to-head default: number of agents; round-robin default: 2)",
    )
    parser.add_argument(
        "--mode",
        choices=MODES,
        help="default: head-to-head if the agents fill the seats exactly, "
        "else round-robin over every combination of --players agents",
    )
    size = parser.add_mutually_exclusive_group()
    size.add_argument(
        "--games", type=_positive_int, default=100, help="games per table, rounded up to whole deals (default 100)"
    )
    size.add_argument(
        "--deals", type=_positive_int, help="deals (game seeds) per table; each is played in every seating"
    )
    parser.add_argument(
        "--seatings",
        choices=SEATINGS,
        default="cyclic",
        help="seatings per deal for 3-4 players: the P cyclic rotations or all P! permutations",
    )
    parser.add_argument("--seed", type=_seed, default=0, help="tournament seed (default 0)")
    parser.add_argument("--penalty", choices=PENALTIES, default="standard", help="penalty rule (RULES §5)")
    parser.add_argument("--strict-bids", action="store_true", help="only allow bids the bidder can pay")
    parser.add_argument(
        "--workers",
        type=_positive_int,
        default=os.cpu_count() or 1,
        help="processes (default: all cores); results do not depend on it",
    )
    parser.add_argument("--out", type=Path, help="output folder (default runs/tournament-<date>-<time>)")
    parser.add_argument("--save-logs", type=Path, metavar="DIR", help="save every game as a replayable log")
    parser.add_argument(
        "--only-games",
        type=int,
        nargs="+",
        metavar="INDEX",
        help="play only these games of the schedule (to reproduce or inspect them)",
    )
    parser.add_argument("--no-plot", action="store_true", help="skip winrate.png")
    parser.add_argument("--no-progress", action="store_true", help="no progress bar")
    parser.add_argument("--list-agents", action="store_true", help="list the agent registry and exit")
    return parser


def config_from_args(args: argparse.Namespace, parser: argparse.ArgumentParser) -> TournamentConfig:
    if not args.agents:
        parser.error("--agents is required (e.g. --agents value random)")
    try:
        specs = tuple(parse_agent_spec(text) for text in args.agents)
    except AgentSpecError as error:
        parser.error(str(error))
    mode = args.mode or (HEAD_TO_HEAD if args.players in (None, len(specs)) else ROUND_ROBIN)
    players = args.players or (len(specs) if mode == HEAD_TO_HEAD else 2)
    if mode == HEAD_TO_HEAD and players not in (2, 3, 4):
        parser.error(
            f"{len(specs)} agents cannot share one table (2-4 players); "
            "use --players N for a round-robin over every N of them"
        )
    per_table = len(seat_orders(players, args.seatings))
    deals = args.deals or math.ceil(args.games / per_table)
    try:
        return TournamentConfig(
            agents=specs,
            num_players=players,
            mode=mode,
            deals=deals,
            seatings=args.seatings,
            seed=args.seed,
            penalty=args.penalty,
            strict_bids=args.strict_bids,
        )
    except ValueError as error:
        parser.error(str(error))


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.list_agents:
        for name in sorted(registry()):
            try:
                doc = (type(build_agent(AgentSpec(name))).__doc__ or "").strip().splitlines()
            except AgentSpecError as error:
                doc = [f"(unavailable: {error})"]
            print(f"{name:<10} {doc[0] if doc else ''}")
        return 0
    config = config_from_args(args, parser)
    out = args.out or Path("runs") / datetime.now().strftime("tournament-%Y%m%d-%H%M%S")
    try:
        result = run_tournament(
            config,
            workers=args.workers,
            progress=not args.no_progress,
            log_dir=args.save_logs,
            only_games=args.only_games,
        )
    except AgentSpecError as error:
        parser.error(str(error))
    except (AgentError, ValueError) as error:
        print(f"error: {error}", file=sys.stderr)
        if isinstance(error, AgentError):
            print(
                "Rerun the failing game alone with --workers 1 --only-games INDEX for a full traceback.",
                file=sys.stderr,
            )
        return 1
    saved = write_results(result, out, plot=not args.no_plot)
    print(format_summary(result, saved))
    return 0


if __name__ == "__main__":
    sys.exit(main())
