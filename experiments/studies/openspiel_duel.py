"""OpenSpiel's IS-MCTS bot against the project's agents: ``python -m experiments.studies.openspiel_duel``.

The game is ``python_biblios`` (:mod:`biblios_env.openspiel`); OpenSpiel's own bot
(``open_spiel.python.algorithms.ismcts`` with random rollouts) plays one seat, resampling the
hidden cards with :meth:`~biblios_env.openspiel.BibliosState.resample_from_infostate`, and
project agents (any agent spec, as in the tournament) play the others on their own view of the
table. The bot's seat turns round the table from game to game; chance outcomes are drawn from
the run's seed. Prints the bot's win rate with a 95% Wilson interval (shared wins count
fractionally) and its mean thinking time per move.

    python -m experiments.studies.openspiel_duel --opponent value --games 20 --simulations 50
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from experiments.common.cli import at_least, invocation_note, program_name, seed_value
from experiments.common.match import AgentSpecError, build_agent, parse_agent_spec, seat_observation
from experiments.common.seeds import derive_seed
from experiments.common.stats import wilson_interval, win_shares


@dataclass(frozen=True, slots=True)
class DuelResult:
    """One game: the bot's seat, its share of the win, its moves and its thinking time."""

    bot_seat: int
    share: float
    moves: int
    seconds: float


def play_duel_game(game: object, bot: object, opponent: str, bot_seat: int, seed: int) -> DuelResult:
    """One game of ``game`` (a loaded ``python_biblios``) with ``bot`` in ``bot_seat`` and a fresh
    agent of spec ``opponent`` in every other seat."""
    state = game.new_initial_state()  # type: ignore[attr-defined]
    players = game.num_players()  # type: ignore[attr-defined]
    agents = {}
    for seat in range(players):
        if seat != bot_seat:
            agents[seat] = build_agent(parse_agent_spec(opponent))
            agents[seat].start_game(seat, players, seed=derive_seed(seed, seat))
    chance = random.Random(seed)
    moves, seconds = 0, 0.0
    while not state.is_terminal():
        if state.is_chance_node():
            outcomes = state.chance_outcomes()
            state.apply_action(outcomes[chance.randrange(len(outcomes))][0])
        elif state.current_player() == bot_seat:
            start = time.perf_counter()
            action = bot.step(state)  # type: ignore[attr-defined]
            seconds += time.perf_counter() - start
            moves += 1
            state.apply_action(action)
        else:
            seat = state.current_player()
            state.apply_action(agents[seat].act(seat_observation(state.game_)))
    share = win_shares(state.game_.state.winners, players)[bot_seat]
    return DuelResult(bot_seat, share, moves, seconds)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog=program_name("experiments.studies.openspiel_duel"),
        description="OpenSpiel's IS-MCTS bot against the project's agents, on python_biblios.",
        epilog="Needs the openspiel extra: pip install -e '.[openspiel]'. "
        + invocation_note("experiments.studies.openspiel_duel"),
    )
    parser.add_argument(
        "--opponent", default="value", metavar="SPEC", help="agent spec of the other seats (default value)"
    )
    parser.add_argument("--players", type=int, choices=(2, 3, 4), default=2, help="players per game (default 2)")
    parser.add_argument("--games", type=at_least(1), default=10, help="games; the bot's seat rotates (default 10)")
    parser.add_argument("--simulations", type=at_least(1), default=50, help="IS-MCTS simulations per move (default 50)")
    parser.add_argument(
        "--seed", type=seed_value, default=0, help="run seed: chance, the bot and the agents (default 0)"
    )
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        build_agent(parse_agent_spec(args.opponent))
    except AgentSpecError as error:
        parser.error(str(error))
    try:
        import pyspiel
        from open_spiel.python.algorithms import ismcts, mcts

        import biblios_env.openspiel  # noqa: F401  (registers python_biblios)
    except ImportError as error:
        print(f"error: {error}; install the openspiel extra: pip install -e '.[openspiel]'", file=sys.stderr)
        return 2
    game = pyspiel.load_game("python_biblios", {"players": args.players})
    total, moves, seconds = 0.0, 0, 0.0
    for index in range(args.games):
        random_state = np.random.RandomState(derive_seed(args.seed, 1, index) % 2**32)
        evaluator = mcts.RandomRolloutEvaluator(n_rollouts=1, random_state=random_state)
        bot = ismcts.ISMCTSBot(game, evaluator, uct_c=2.0, max_simulations=args.simulations, random_state=random_state)
        result = play_duel_game(game, bot, args.opponent, index % args.players, derive_seed(args.seed, 2, index))
        total += result.share
        moves += result.moves
        seconds += result.seconds
        print(f"game {index}: bot in seat {result.bot_seat}, win share {result.share:.2f}", flush=True)
    interval = wilson_interval(total, args.games)
    fair = 1 / args.players
    print(
        f"IS-MCTS ({args.simulations} simulations) vs {args.opponent}, {args.players} players, {args.games} games: "
        f"win rate {interval.estimate:.1%} [{interval.low:.1%}, {interval.high:.1%}] (fair {fair:.1%}); "
        f"{1000 * seconds / max(moves, 1):.0f} ms per move"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
