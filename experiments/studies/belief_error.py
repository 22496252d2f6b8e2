"""How far a belief's determinizations are from the truth, ``python -m experiments.studies.belief_error``.

A search agent plays on states dealt from its view; where they get the opponents' hidden cards
wrong, it misjudges how far they will bid. This command plays ``value``-vs-``value`` games and,
at every bid decision of a seat on a category card (the opponents bid in gold), deals ``samples``
states from the seat's belief (:mod:`agents.belief`) and compares, for each opponent still in the auction:

* **limit**: the median over the states of the opponent's ``value`` bid limit, as it would set it
  from its own view of the state, against its true limit (from its view of the real game);
* **gold**: the mean over the states of the coins in the opponent's hand, against the truth.

It prints the mean absolute errors with 95 % intervals clustered by game (decisions of one game
are not independent), the number of decisions and the belief's cost per decision: the time spent
in the belief (observing every view of the seat and dealing the states at measured decisions)
divided by the measured decisions.

``--views every`` (the default) feeds each belief its seat's view after every action, as
:func:`experiments.common.match.play_game` shows a search agent the table; ``--views own`` only at the
seat's own decisions with a choice. The games and the beliefs' generators are seeded, so two
beliefs run with the same ``--seed`` are measured on the same decisions.
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
from tqdm import tqdm

from agents import make_agent
from agents.belief import BELIEFS, Belief, make_belief, model_limit
from agents.heuristics import ValueAgent
from biblios_env.agent_interface import AgentObservation
from biblios_env.cards import CARD_CATEGORY, gold_value
from biblios_env.engine import Game
from biblios_env.engine.flow import DECISION_BID
from biblios_env.engine.state import NO_CARD
from biblios_env.engine.views import player_view
from experiments.common.cli import HelpFormatter, at_least, invocation_note, program_name, seed_value
from experiments.common.match import play_out
from experiments.common.stats import Interval, cluster_value_interval


@dataclass(slots=True)
class GameErrors:
    """One game's measured decisions: the sums of absolute errors and how many there were."""

    limit: float = 0.0
    gold: float = 0.0
    count: int = 0
    belief_seconds: float = 0.0


@dataclass(slots=True)
class Measurement:
    """Per game errors of one belief, and the figures they give."""

    belief: str
    games: list[GameErrors] = field(default_factory=list)

    @property
    def decisions(self) -> int:
        return sum(game.count for game in self.games)

    def interval(self, what: str) -> Interval:
        return cluster_value_interval([(getattr(game, what), game.count) for game in self.games])

    @property
    def ms_per_decision(self) -> float:
        return 1000 * sum(game.belief_seconds for game in self.games) / max(self.decisions, 1)


def measured(observation: AgentObservation) -> bool:
    """A bid with a choice on a category card: the opponents bid in gold, the limit is a coin amount."""
    view = observation.view
    return (
        view.decision == DECISION_BID
        and view.auction_card != NO_CARD
        and CARD_CATEGORY[view.auction_card] >= 0
        and len(observation.legal_actions) > 1
    )


#: When a belief is shown its seat's view (``--views``): after every action, or at its own decisions only.
VIEWS = ("every", "own")


def measure_game(seed: int, belief_name: str, num_players: int, samples: int, views: str = "every") -> GameErrors:
    """Play one ``value`` game from deal ``seed``; measure every seat's belief at its category bids."""
    game = Game(num_players, seed=seed)
    agents = [make_agent("value") for _ in range(num_players)]
    beliefs: list[Belief] = [make_belief(belief_name) for _ in range(num_players)]
    rngs = [np.random.default_rng([seed, seat]) for seat in range(num_players)]
    for seat in range(num_players):
        agents[seat].start_game(seat, num_players, seed=seed * num_players + seat)
        beliefs[seat].start_game(seat, num_players)
    model = ValueAgent()
    errors = GameErrors()

    def decide(seat: int, observation: AgentObservation) -> int:
        view = observation.view
        start = time.perf_counter()
        beliefs[seat].observe(view)
        if measured(observation):
            states = beliefs[seat].sample_states(view, rngs[seat], samples)
            errors.belief_seconds += time.perf_counter() - start
            for relative in range(1, num_players):
                if view.excluded[relative]:
                    continue
                opponent = (seat + relative) % num_players
                true_limit = model_limit(model, game.state, opponent)
                limits = [model_limit(model, state, opponent) for state in states]
                golds = [gold_value(state.hands[opponent]) for state in states]
                errors.limit += abs(statistics.median(limits) - true_limit)
                errors.gold += abs(statistics.fmean(golds) - gold_value(game.state.hands[opponent]))
                errors.count += 1
        else:
            errors.belief_seconds += time.perf_counter() - start
        return agents[seat].act(observation)

    def show(game: Game) -> None:
        start = time.perf_counter()
        for seat in range(num_players):
            beliefs[seat].observe(player_view(game.state, seat))
        errors.belief_seconds += time.perf_counter() - start

    play_out(game, decide, show if views == "every" else None)
    return errors


def run(
    belief: str, games: int, seed: int, samples: int, num_players: int, views: str = "every", progress: bool = True
) -> Measurement:
    result = Measurement(belief)
    for index in tqdm(range(games), desc=belief, unit="game", disable=not progress, dynamic_ncols=True):
        result.games.append(measure_game(seed + index, belief, num_players, samples, views))
    return result


def report(result: Measurement) -> str:
    limit, gold = result.interval("limit"), result.interval("gold")
    return (
        f"belief {result.belief}: limit MAE {limit.estimate:.2f} [{limit.low:.2f}, {limit.high:.2f}] coins, "
        f"gold MAE {gold.estimate:.2f} [{gold.low:.2f}, {gold.high:.2f}] coins, "
        f"{result.decisions} decisions of {len(result.games)} games, {result.ms_per_decision:.1f} ms a decision"
    )


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog=program_name("experiments.studies.belief_error"),
        description="Errors of a belief's determinizations in the opponents' bid limits and gold, "
        "at the category-card bids of value-vs-value games.",
        formatter_class=HelpFormatter,
        epilog=invocation_note("experiments.studies.belief_error"),
    )
    parser.add_argument("--games", type=at_least(1), default=30, help="games played")
    parser.add_argument("--seed", type=seed_value, default=910000, help="deal seed of the first game (then +1)")
    parser.add_argument("--samples", type=at_least(1), default=16, help="determinizations per decision")
    parser.add_argument(
        "--belief", nargs="+", choices=sorted(BELIEFS), default=["none"], help="beliefs measured, on the same games"
    )
    parser.add_argument("--players", type=at_least(2), default=2, help="players at the table (2-4)")
    parser.add_argument(
        "--views",
        choices=VIEWS,
        default="every",
        help="show a belief its seat's view after every action, or at its decisions",
    )
    parser.add_argument("--no-progress", action="store_true", help="hide the progress bar (default: show it)")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.players > 4:
        parser.error(f"--players must be 2, 3 or 4, got {args.players}")
    for belief in args.belief:
        result = run(belief, args.games, args.seed, args.samples, args.players, args.views, not args.no_progress)
        print(report(result), flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
