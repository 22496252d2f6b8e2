"""The search's fuel: simulated decisions per second, ``python -m experiments.benchmarks.search``.

A search agent is as strong as the number of decisions it can simulate in its budget. This
benchmark times the two loops that bound it, on the same positions every run (bid decisions of
seeded ``value``-vs-``value`` games, where the default search spends its time):

* **rollouts**: :meth:`agents.rollout_policy.RolloutPolicy.rollout` from each position, after a
  determinization, to the end of the game (the rollout policy plus the rules engine);
* **searches**: whole searched decisions of the default ``ismcts`` agent with a fixed number of
  determinizations (sampling, clones, opponent model, rollouts, the gate), as simulated decisions
  per second and milliseconds per searched decision.

Figures vary with the machine's load: compare code versions A/B in one run, or count
instructions (``python -m experiments.benchmarks.instructions``).
"""

from __future__ import annotations

import argparse
import json
import random
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from agents.heuristics import ValueAgent
from agents.rollout_policy import RolloutPolicy
from agents.search import FlatSearch, SearchOptions
from biblios_env.agent_interface import AgentObservation
from biblios_env.engine import Game
from biblios_env.engine.sampling import sample_state
from biblios_env.engine.state import Decision
from experiments.common.cli import HelpFormatter, invocation_note, program_name
from experiments.common.match import play_out


def bid_positions(num_players: int, games: int, seed: int = 0) -> list[AgentObservation]:
    """Every other bid decision (with a real choice) of seeded value-vs-value games."""
    found = []
    for game_index in range(games):
        game = Game(num_players, seed=seed + game_index)
        agents = [ValueAgent() for _ in range(num_players)]
        for seat, agent in enumerate(agents):
            agent.start_game(seat, num_players, seed=game_index * 10 + seat)
        bid_decisions = 0

        def decide(seat: int, observation: AgentObservation, agents: list[ValueAgent] = agents) -> int:
            nonlocal bid_decisions
            if observation.view.decision == Decision.BID and len(observation.legal_actions) > 1:
                bid_decisions += 1
                if bid_decisions % 2 == 0:
                    found.append(observation)
            return agents[seat].act(observation)

        play_out(game, decide)
    return found


def time_rollouts(positions: Sequence[AgentObservation], seed: int = 0) -> dict[str, float]:
    rng = np.random.default_rng(seed)
    policy = RolloutPolicy(rng=random.Random(seed))
    states = [sample_state(observation.view, rng) for observation in positions]
    start = time.perf_counter()
    decisions = sum(policy.rollout(state) for state in states)
    seconds = time.perf_counter() - start
    return {"rollouts": len(states), "decisions": decisions, "decisions_per_second": decisions / seconds}


def time_searches(positions: Sequence[AgentObservation], iterations: int, seed: int = 0) -> dict[str, float]:
    agent = FlatSearch(SearchOptions(iterations=iterations), seed=seed)
    searched = simulated = 0
    seconds = 0.0
    for index, observation in enumerate(positions):
        agent.start_game(observation.view.seat, observation.view.num_players, seed=seed + index)
        start = time.perf_counter()
        agent.act(observation)
        seconds += time.perf_counter() - start
        if agent.last_search:
            searched += 1
            simulated += int(agent.last_search["simulated_decisions"])
    return {
        "searched_decisions": searched,
        "simulated_decisions": simulated,
        "simulated_per_second": simulated / seconds if seconds else 0.0,
        "ms_per_searched_decision": 1000 * seconds / max(searched, 1),
    }


def run(players: Sequence[int], games: int, iterations: int) -> dict[str, Any]:
    results: dict[str, Any] = {}
    for num_players in players:
        positions = bid_positions(num_players, games)
        results[str(num_players)] = {
            "positions": len(positions),
            "rollout": time_rollouts(positions),
            "search": time_searches(positions, iterations),
        }
    return results


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog=program_name("experiments.benchmarks.search"),
        description="Simulated decisions per second of the rollout policy and of the default search.",
        formatter_class=HelpFormatter,
        epilog=invocation_note("experiments.benchmarks.search"),
    )
    parser.add_argument("--players", type=int, nargs="+", default=[2, 3, 4], help="player counts")
    parser.add_argument("--games", type=int, default=2, help="value-vs-value games whose bid decisions are used")
    parser.add_argument("--iterations", type=int, default=60, help="determinizations per searched decision")
    parser.add_argument("--out", type=Path, help="also write the figures to this JSON file")
    args = parser.parse_args(argv)
    results = run(args.players, args.games, args.iterations)
    for count, figures in results.items():
        rollout, search = figures["rollout"], figures["search"]
        print(
            f"{count} players: rollouts {rollout['decisions_per_second']:,.0f} decisions/s; search "
            f"{search['simulated_per_second']:,.0f} simulated decisions/s, "
            f"{search['ms_per_searched_decision']:.1f} ms per searched decision ({figures['positions']} positions)"
        )
    if args.out is not None:
        args.out.write_text(json.dumps(results, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
