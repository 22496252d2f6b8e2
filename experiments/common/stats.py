"""Tournament statistics: win shares, confidence intervals over duplicate deals, and ratings.

The unit of independence is the **deal** (one game seed), not the game. A duplicate deal is
replayed with the seats permuted, and in a round-robin every table replays the same deals,
so the games of one deal share their card luck and are correlated. Treating them as
independent games (the Wilson interval) would misstate the uncertainty, usually in the
too-wide direction for a head-to-head, because the seatings of one deal cancel each
other's luck. The primary interval is therefore a cluster-robust one:

* an agent's win rate is the ratio estimator ``p = sum(s_g) / sum(n_g)`` where, for each
  deal ``g``, ``s_g`` is the agent's total win share and ``n_g`` its number of seats in
  the games of that deal (a shared win of ``k`` players counts ``1/k`` for each of them);
* its standard error is the cluster-robust (sandwich) one,
  ``SE² = G / (G - 1) * sum((s_g - p * n_g)²) / (sum n_g)²`` over the ``G`` deals;
* the 95% interval is ``p ± z * SE`` with ``z = 1.95996``, clipped to [0, 1].

Every win-rate interval is clipped at the source to ``0 <= low <= p <= high <= 1``: rounding
can put a bound a hair on the wrong side (a Wilson lower bound of 2.8e-17 above a 0.0 win
rate), and a caller drawing ``p - low`` as an error bar must never get a negative length.

When that interval degenerates (fewer than two deals, or ``SE = 0``, e.g. an agent that
won every game) it falls back to the Wilson score interval with one trial per deal, which
stays honest at 0% and 100%. The plain Wilson interval over games is reported alongside
for comparison. Both are normal approximations: trust them from about 20 deals on.

Mean VP gets the same cluster-robust interval. Ratings are openskill's Plackett-Luce model
updated game by game (the winners share first place, the other players are ranked by VP),
averaged over ten seeded random orders of the games because sequential updates depend on
the order.
"""

from __future__ import annotations

import math
import random
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from statistics import NormalDist
from typing import Final, TypeVar

_Number = TypeVar("_Number", int, float)  # a total of win shares or VP (float) or of games (int)

#: Two-sided 95% normal quantile.
Z_95: Final = NormalDist().inv_cdf(0.975)
#: Fewer deals than this and the normal-approximation intervals are rough (the summary says so).
MIN_DEALS_FOR_CI: Final = 20

CI_CLUSTER: Final = "cluster"
CI_WILSON_DEALS: Final = "wilson-deals"


@dataclass(frozen=True, slots=True)
class Outcome:
    """What the statistics need from one game: its deal, who sat where, VP and winners."""

    deal: int  # games with the same deal (game seed) are one cluster
    agents: tuple[str, ...]  # agent label per seat
    vp: tuple[int, ...]  # VP per seat
    winners: tuple[int, ...]  # winning seats (more than one when the win is shared)


def win_shares(winners: Sequence[int], num_players: int) -> list[float]:
    """Each seat's share of the win: 1/k for each of k (co-)winners, 0 for the others (RULES §6)."""
    shares = [0.0] * num_players
    for seat in winners:
        shares[seat] = 1.0 / len(winners)
    return shares


@dataclass(frozen=True, slots=True)
class Interval:
    """An estimate with a 95% interval; ``method`` names how the interval was computed."""

    estimate: float
    low: float
    high: float
    method: str


def proportion_interval(estimate: float, low: float, high: float, method: str) -> Interval:
    """An interval for a proportion, clipped so that ``0 <= low <= estimate <= high <= 1``."""
    return Interval(estimate, min(max(0.0, low), estimate), max(min(1.0, high), estimate), method)


def wilson_interval(successes: float, trials: float, z: float = Z_95) -> Interval:
    """Wilson score interval for a proportion; fractional successes (shared wins) are allowed."""
    if trials <= 0:
        return Interval(math.nan, math.nan, math.nan, "wilson")
    p = successes / trials
    denominator = 1 + z * z / trials
    centre = (p + z * z / (2 * trials)) / denominator
    half = z / denominator * math.sqrt(p * (1 - p) / trials + z * z / (4 * trials * trials))
    return proportion_interval(p, centre - half, centre + half, "wilson")


def cluster_mean(clusters: Sequence[tuple[float, float]]) -> tuple[float, float]:
    """Ratio estimate ``sum(s) / sum(n)`` over ``(s_g, n_g)`` clusters and its cluster-robust
    standard error (NaN with fewer than two clusters)."""
    total = sum(s for s, _ in clusters)
    count = sum(n for _, n in clusters)
    if count <= 0:
        return math.nan, math.nan
    mean = total / count
    groups = len(clusters)
    if groups < 2:
        return mean, math.nan
    squares = sum((s - mean * n) ** 2 for s, n in clusters)
    return mean, math.sqrt(groups / (groups - 1) * squares) / count


def cluster_win_interval(clusters: Sequence[tuple[float, float]], z: float = Z_95) -> Interval:
    """The win-rate interval of the module docstring, with its Wilson-per-deal fallback."""
    mean, se = cluster_mean(clusters)
    if math.isnan(mean):
        return Interval(math.nan, math.nan, math.nan, CI_CLUSTER)
    if math.isnan(se) or se == 0.0:
        fallback = wilson_interval(mean * len(clusters), len(clusters), z)
        return proportion_interval(mean, fallback.low, fallback.high, CI_WILSON_DEALS)
    return proportion_interval(mean, mean - z * se, mean + z * se, CI_CLUSTER)


def cluster_value_interval(clusters: Sequence[tuple[float, float]], z: float = Z_95) -> Interval:
    """A cluster-robust interval for a mean (VP); NaN bounds with fewer than two clusters."""
    mean, se = cluster_mean(clusters)
    return Interval(mean, mean - z * se, mean + z * se, CI_CLUSTER)


@dataclass(frozen=True, slots=True)
class AgentStats:
    """One agent's line of the results table (ratings are added by :func:`openskill_ratings`)."""

    agent: str
    games: int  # seats played (an agent listed twice in a lineup plays two seats per game)
    deals: int
    wins: float  # shared wins count fractionally
    win_rate: Interval
    wilson: Interval  # the same rate with games treated as independent, for comparison
    mean_vp: Interval


def agent_stats(outcomes: Iterable[Outcome]) -> list[AgentStats]:
    """Per-agent results, best win rate first (ties by name, so the order is deterministic)."""
    wins: dict[str, dict[int, float]] = {}
    seats: dict[str, dict[int, int]] = {}
    points: dict[str, dict[int, float]] = {}
    for outcome in outcomes:
        shares = win_shares(outcome.winners, len(outcome.agents))
        for seat, agent in enumerate(outcome.agents):
            _add(wins, agent, outcome.deal, shares[seat])
            _add(seats, agent, outcome.deal, 1)
            _add(points, agent, outcome.deal, outcome.vp[seat])
    rows = []
    for agent, by_deal in seats.items():
        deals = sorted(by_deal)
        counts = [by_deal[deal] for deal in deals]
        win_clusters = [(wins[agent][deal], n) for deal, n in zip(deals, counts)]
        vp_clusters = [(points[agent][deal], n) for deal, n in zip(deals, counts)]
        total_wins = sum(s for s, _ in win_clusters)
        games = sum(counts)
        rows.append(
            AgentStats(
                agent=agent,
                games=games,
                deals=len(deals),
                wins=total_wins,
                win_rate=cluster_win_interval(win_clusters),
                wilson=wilson_interval(total_wins, games),
                mean_vp=cluster_value_interval(vp_clusters),
            )
        )
    rows.sort(key=lambda row: (-row.win_rate.estimate, row.agent))
    return rows


def _add(table: dict[str, dict[int, _Number]], agent: str, deal: int, value: _Number) -> None:
    """Add ``value`` to the agent's total of the deal (agent stats are clustered by deal)."""
    by_deal = table.setdefault(agent, {})
    by_deal[deal] = by_deal.get(deal, 0) + value


def seat_win_rates(outcomes: Sequence[Outcome]) -> list[float]:
    """Mean win share of each seat over all games (seat 0 starts): the seat advantage."""
    if not outcomes:
        return []
    num_players = len(outcomes[0].agents)
    totals = [0.0] * num_players
    for outcome in outcomes:
        for seat, share in enumerate(win_shares(outcome.winners, num_players)):
            totals[seat] += share
    return [total / len(outcomes) for total in totals]


def pairwise_win_shares(outcomes: Iterable[Outcome]) -> dict[str, dict[str, float]]:
    """``result[a][b]``: ``a``'s mean win share over the games where ``a`` and ``b`` both sat.

    In 2 players this is the head-to-head win rate; in 3-4 players the shares of a row do not
    add up to anything in particular (a third player may win)."""
    totals: dict[tuple[str, str], list[float]] = {}
    for outcome in outcomes:
        shares = win_shares(outcome.winners, len(outcome.agents))
        for seat, agent in enumerate(outcome.agents):
            for other in set(outcome.agents) - {agent}:
                total = totals.setdefault((agent, other), [0.0, 0.0])
                total[0] += shares[seat]
                total[1] += 1
    result: dict[str, dict[str, float]] = {}
    for (agent, other), (share, count) in sorted(totals.items()):
        result.setdefault(agent, {})[other] = share / count
    return result


def finishing_ranks(vp: Sequence[int], winners: Sequence[int]) -> list[float]:
    """Openskill ranks (lower is better): the winners share rank 0, the others follow by VP
    (equal VP, equal rank; VP ties between winners and losers were broken by RULES §6). Whole
    numbers, typed as openskill's ``ranks`` are."""
    losing_vp = sorted({points for seat, points in enumerate(vp) if seat not in winners}, reverse=True)
    return [0 if seat in winners else 1 + losing_vp.index(points) for seat, points in enumerate(vp)]


@dataclass(frozen=True, slots=True)
class Rating:
    mu: float
    sigma: float

    @property
    def ordinal(self) -> float:
        """The conservative skill estimate ``mu - 3 sigma`` that leaderboards sort by."""
        return self.mu - 3 * self.sigma


def openskill_ratings(outcomes: Sequence[Outcome], *, orderings: int = 10, seed: int = 0) -> dict[str, Rating]:
    """Plackett-Luce ratings, averaged over ``orderings`` seeded shuffles of the games.

    Sequential rating updates depend on the order of the games (the last games move the
    ratings most), and agents do not change between games, so the order is noise: the mean
    over several fixed random orders is stable and reproducible. An agent listed in several
    seats of one game is rated as one team per seat, all starting from its current rating;
    its new rating is the mean of those teams' updates."""
    from openskill.models import PlackettLuce

    model = PlackettLuce()
    ranks = [finishing_ranks(outcome.vp, outcome.winners) for outcome in outcomes]
    shuffler = random.Random(seed)
    sums: dict[str, list[float]] = {}
    for _ in range(orderings):
        order = list(range(len(outcomes)))
        shuffler.shuffle(order)
        ratings: dict[str, tuple[float, float]] = {}
        for index in order:
            agents = outcomes[index].agents
            teams = []
            for agent in agents:
                mu, sigma = ratings.get(agent, (model.mu, model.sigma))
                teams.append([model.rating(mu=mu, sigma=sigma)])
            updated = model.rate(teams, ranks=ranks[index])
            new: dict[str, list[tuple[float, float]]] = {}
            for agent, (rating,) in zip(agents, updated):
                new.setdefault(agent, []).append((rating.mu, rating.sigma))
            for agent, values in new.items():
                ratings[agent] = (sum(v[0] for v in values) / len(values), sum(v[1] for v in values) / len(values))
        for agent, (mu, sigma) in ratings.items():
            total = sums.setdefault(agent, [0.0, 0.0])
            total[0] += mu
            total[1] += sigma
    return {agent: Rating(mu / orderings, sigma / orderings) for agent, (mu, sigma) in sums.items()}
