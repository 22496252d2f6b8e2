"""Instructions per simulated decision of the default ``ismcts`` search on the compiled core, at 2
players (network rollouts) and 3 (policy rollouts): the load-independent check that a change to the
search costs nothing. Run it on the code before and after the change and compare.

    python -m experiments.benchmarks.search_instructions              # about ten minutes (valgrind)

Each count is the difference of two runs under callgrind (one and two searched bid positions of
seeded ``value`` games, the positions of the build benchmark's ``ismcts`` workload), so start-up
cancels out; the simulated decisions of both runs are printed too: equal before and after, the
search did the same work.
"""

from __future__ import annotations

import argparse
import os
import re
import sys

from experiments.benchmarks.build import choice_positions
from experiments.benchmarks.instructions import callgrind

#: The player counts measured: network rollouts by default at 2, policy rollouts at 3.
COUNTS = (2, 3)


def searched(players: int, positions: int) -> int:
    """Search ``positions`` searched bid positions with the default agent; the decisions simulated."""
    from agents.search import search_agent

    agent = search_agent(seed=0)
    simulated = 0
    for index, observation in enumerate(choice_positions(2, only_bids=True, players=players)[::5][:positions]):
        agent.start_game(observation.view.seat, players, seed=index)
        agent.act(observation)
        simulated += int(agent.last_search.get("simulated_decisions", 0))
    return simulated


def count(players: int) -> tuple[float, int, int]:
    """Instructions per simulated decision at ``players``, and the decisions of the two runs."""
    runs = []
    for positions in (1, 2):
        arguments = ["-m", "experiments.benchmarks.search_instructions", "--inner", str(players), str(positions)]
        instructions, printed = callgrind(arguments, {**os.environ, "BIBLIOS_PURE_PYTHON": "0"})
        decisions = re.search(r"^simulated (\d+)$", printed, re.MULTILINE)
        assert decisions is not None, printed
        runs.append((instructions, int(decisions.group(1))))
    (small, small_work), (large, large_work) = runs
    return (large - small) / (large_work - small_work), small_work, large_work


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m experiments.benchmarks.search_instructions", description=__doc__)
    parser.add_argument("--inner", nargs=2, type=int, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.inner:
        print(f"simulated {searched(*args.inner)}")
        return
    for players in COUNTS:
        per_decision, small, large = count(players)
        print(f"{players} players: {per_decision:,.0f} instructions per simulated decision "
              f"(simulated decisions {small:,} and {large:,})", file=sys.stderr, flush=True)  # fmt: skip


if __name__ == "__main__":
    main()
