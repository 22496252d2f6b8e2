"""How long a thread waits for the interpreter beside searches thinking in other threads:
``python -m experiments.benchmarks.search_threads``.

The play server runs its searching bots in threads beside the requests; a request needs the
interpreter lock to answer. This starts ``--searches`` threads, each playing games of
``--players`` time-limited searches (``ismcts``, ``--seconds`` per decision), and meanwhile a
ticker thread that sleeps 1 ms in a loop for ``--duration`` seconds: how late each tick wakes is
how long a request would wait. Prints the ticks' median, p99 and worst wait (docs/serve.md).
"""

from __future__ import annotations

import argparse
import statistics
import threading
import time

from biblios_env.engine import Game
from experiments.benchmarks import benchmark_parser
from experiments.common.cli import at_least, positive
from experiments.common.match import build_agent, parse_agent_spec, seat_observation

MODULE = "experiments.benchmarks.search_threads"
SEARCH = "ismcts:iterations=1000000,searched=place-take-bid-church-pay,time_limit={seconds}"


def search_games(seed: int, players: int, seconds: float, stop: threading.Event) -> None:
    """Games of time-limited searches in every seat, one after another, until ``stop``."""
    while not stop.is_set():
        game = Game(num_players=players, seed=seed)
        agents = [build_agent(parse_agent_spec(SEARCH.format(seconds=seconds))) for _ in range(players)]
        for seat, agent in enumerate(agents):
            agent.start_game(seat, players, seed=seed + seat)
        while not game.is_over and not stop.is_set():
            game.apply(agents[game.current_player].act(seat_observation(game)))
        seed += 100


def ticks(duration: float) -> list[float]:
    """The seconds each 1 ms sleep took, for ``duration`` seconds."""
    waits = []
    end = time.perf_counter() + duration
    while time.perf_counter() < end:
        began = time.perf_counter()
        time.sleep(0.001)
        waits.append(time.perf_counter() - began)
    return waits


def build_parser() -> argparse.ArgumentParser:
    parser = benchmark_parser(MODULE, __doc__)
    parser.add_argument("--searches", type=at_least(1), default=2, help="threads of searching games (default 2)")
    parser.add_argument("--players", type=int, choices=(2, 3, 4), default=3, help="players per game (default 3)")
    parser.add_argument("--seconds", type=positive, default=1.0, help="each search's time limit (default 1)")
    parser.add_argument("--duration", type=positive, default=8.0, help="seconds of ticks (default 8)")
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    stop = threading.Event()
    threads = [
        threading.Thread(target=search_games, args=(index, args.players, args.seconds, stop), daemon=True)
        for index in range(args.searches)
    ]
    for thread in threads:
        thread.start()
    waits = sorted(ticks(args.duration))
    stop.set()
    p99 = waits[min(len(waits) - 1, int(0.99 * len(waits)))]
    print(
        f"{len(waits):,} ticks of 1 ms beside {args.searches} searching thread(s): median "
        f"{1000 * statistics.median(waits):.1f} ms, p99 {1000 * p99:.1f} ms, worst {1000 * waits[-1]:.1f} ms"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
