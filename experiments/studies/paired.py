"""Two agents compared on the same deals, ``python -m experiments.studies.paired RUN_A RUN_B``.

Two tournaments with the same ``--seed``, table size and number of deals, one agent swapped for
another (``--agents ismcts value value`` and ``--agents "ismcts:belief=bids" value value``),
play the same deals with the same seeds for every other seat. The deal luck that makes a win
rate's interval wide is then common to both, and their *paired* difference is much tighter:
for every deal, the compared agent's win share averaged over the deal's seatings in run B minus
the same in run A, and a 95 % interval over deals (``experiments.common.stats.cluster_value_interval``,
one cluster per deal).

The compared agent of a run is its first agent (``--agent-a``/``--agent-b`` pick another). The
two runs must hold the same games (the same game seeds in the same order): anything else is an
error naming the first game that differs. Prints each agent's win rate and the difference, in
percentage points.
"""

from __future__ import annotations

import argparse
import csv
import json
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from experiments.common.cli import HelpFormatter, invocation_note, program_name
from experiments.common.stats import Interval, cluster_value_interval, win_shares


class PairingError(ValueError):
    """Two runs that did not play the same games, or an agent that is not in a run."""


@dataclass(frozen=True, slots=True)
class RunShares:
    """One run's compared agent and its mean win share on each deal (over the deal's seatings)."""

    agent: str
    seeds: tuple[int, ...]  # every game's seed, in the schedule's order
    shares: dict[int, float]  # deal -> mean win share of the agent


def read_run(folder: str | Path, agent: str | None = None) -> RunShares:
    """The compared agent's win share per deal in the tournament saved in ``folder``."""
    folder = Path(folder)
    games_file, results_file = folder / "games.csv", folder / "results.json"
    for path in (games_file, results_file):
        if not path.is_file():
            raise PairingError(f"{folder} is not a finished tournament folder: {path.name} is missing")
    agents = json.loads(results_file.read_text())["config"]["agents"]
    agent = agents[0] if agent is None else agent
    if agent not in agents:
        raise PairingError(f"agent {agent!r} did not play in {folder} (its agents: {agents})")
    per_deal: dict[int, list[float]] = defaultdict(list)
    seeds = []
    with games_file.open(newline="") as handle:
        for row in csv.DictReader(handle):
            labels = row["agents"].split(" | ")
            shares = win_shares([int(seat) for seat in row["winners"].split()], len(labels))
            seats = [seat for seat, label in enumerate(labels) if label == agent]
            per_deal[int(row["deal"])].append(sum(shares[seat] for seat in seats) / len(seats))
            seeds.append(int(row["seed"]))
    return RunShares(agent, tuple(seeds), {deal: sum(v) / len(v) for deal, v in sorted(per_deal.items())})


@dataclass(frozen=True, slots=True)
class Comparison:
    """Both agents' win rates on the shared deals and the paired difference (B - A)."""

    a: RunShares
    b: RunShares
    rate_a: Interval
    rate_b: Interval
    difference: Interval


def compare(a: RunShares, b: RunShares) -> Comparison:
    """The paired comparison of two runs of the same games (PairingError if they differ)."""
    if a.seeds != b.seeds:
        first = next(
            (index for index, (x, y) in enumerate(zip(a.seeds, b.seeds, strict=False)) if x != y),
            min(len(a.seeds), len(b.seeds)),
        )
        raise PairingError(
            f"the runs did not play the same games: {len(a.seeds)} and {len(b.seeds)} games, "
            f"first different at game {first} (use the same --seed, players and --deals)"
        )
    deals = list(a.shares)
    return Comparison(
        a,
        b,
        cluster_value_interval([(a.shares[deal], 1.0) for deal in deals]),
        cluster_value_interval([(b.shares[deal], 1.0) for deal in deals]),
        cluster_value_interval([(b.shares[deal] - a.shares[deal], 1.0) for deal in deals]),
    )


def _percent(interval: Interval, signed: bool = False) -> str:
    sign = "+" if signed else ""
    return f"{100 * interval.estimate:{sign}.1f} [{100 * interval.low:{sign}.1f}, {100 * interval.high:{sign}.1f}]"


def report(comparison: Comparison) -> str:
    deals = len(comparison.a.shares)
    return "\n".join(
        [
            f"{deals} deals, {len(comparison.a.seeds)} games per run; 95 % intervals over deals",
            f"A {comparison.a.agent}: {_percent(comparison.rate_a)} %",
            f"B {comparison.b.agent}: {_percent(comparison.rate_b)} %",
            f"B - A: {_percent(comparison.difference, signed=True)} points",
        ]
    )


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog=program_name("experiments.studies.paired"),
        description="The paired difference of two agents' win rates over the same deals of two tournaments.",
        formatter_class=HelpFormatter,
        epilog=invocation_note("experiments.studies.paired"),
    )
    parser.add_argument("run_a", metavar="RUN_A", help="output folder of the first tournament")
    parser.add_argument("run_b", metavar="RUN_B", help="output folder of the second, on the same deals")
    parser.add_argument("--agent-a", metavar="SPEC", help="the agent compared in RUN_A (default: its first)")
    parser.add_argument("--agent-b", metavar="SPEC", help="the agent compared in RUN_B (default: its first)")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        comparison = compare(read_run(args.run_a, args.agent_a), read_run(args.run_b, args.agent_b))
    except PairingError as error:
        print(f"error: {error}")
        return 1
    print(report(comparison))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
