"""Seeded games whose every step is fingerprinted, for the compiled/pure differential test.

``python tests/differential_games.py`` plays a fixed set of games (every player count, both
penalty variants, open and strict bids; random play, the two heuristics and the default search;
the engine directly, the PettingZoo environment and the batched games) and prints, as JSON, which build ran and one
SHA-256 per step of each game: the seat to act, its legal actions, its view, both observation
encodings, the agent's choice and the search's statistics, then the game log and the scores.
``tests/test_project/test_compiled_core.py`` runs it once with ``BIBLIOS_PURE_PYTHON=1`` and once on the
compiled core and requires the two outputs to be identical, step for step.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import sys
from typing import Any

import biblios_env
from agents import make_agent
from biblios_env import raw_env
from biblios_env.agent_interface import AgentObservation
from biblios_env.engine import Game
from biblios_env.engine.log import to_log
from biblios_env.engine.views import player_view
from biblios_env.observations import encode, encode_state

#: (players, penalty, strict bids, agents by seat, seed): random play covers refusals and
#: penalties, the heuristics and the default search cover the agents' arithmetic.
ENGINE_GAMES: list[tuple[int, str, bool, tuple[str, ...], int]] = [
    (players, penalty, strict, ("random",) * players, 100 * players + seed)
    for players in (2, 3, 4)
    for penalty in ("standard", "bluffs")
    for strict in (False, True)
    for seed in range(2)
] + [
    (2, "standard", False, ("value", "hoarder"), 7),
    (3, "bluffs", False, ("hoarder", "value", "random"), 8),
    (4, "standard", True, ("value", "hoarder", "value", "hoarder"), 9),
    (2, "standard", False, ("ismcts", "value"), 10),
    (3, "standard", False, ("value", "ismcts", "hoarder"), 11),
    (4, "bluffs", False, ("ismcts", "value", "random", "hoarder"), 12),
]
#: (players, seed) of games played through the PettingZoo environment with masked random actions.
ENV_GAMES = [(players, 500 + players) for players in (2, 3, 4)]


def _digest(*parts: Any) -> str:
    return hashlib.sha256(repr(parts).encode()).hexdigest()[:16]


def engine_game(players: int, penalty: str, strict: bool, names: tuple[str, ...], seed: int) -> list[str]:
    """One game through :class:`Game` and the agents: a digest per decision, then the log's."""
    game = Game(players, seed=seed, penalty=penalty, strict_bids=strict)
    agents = [make_agent(name) for name in names]
    for seat, agent in enumerate(agents):
        agent.start_game(seat, players, seed=seed * 10 + seat)
    steps = []
    while not game.is_over:
        seat = game.current_player
        view = player_view(game.state, seat)
        legal = game.legal_actions()
        observation = AgentObservation(view, list(legal))
        action = agents[seat].act(observation)
        search = getattr(agents[seat], "last_search", {})
        search = {key: value for key, value in search.items() if key != "seconds"}
        steps.append(
            _digest(
                seat,
                legal,
                dataclasses.astuple(view),
                encode(view).tobytes(),
                encode_state(game.state, seat).tobytes(),
                action,
                sorted(search.items()),
            )
        )
        game.apply(action)
    steps.append(_digest(json.dumps(to_log(game), sort_keys=True), game.snapshot()))
    return steps


def env_game(players: int, seed: int) -> list[str]:
    """One game through the PettingZoo AEC loop: a digest per step (observation, mask, rewards)."""
    environment = raw_env(num_players=players)
    environment.reset(seed=seed)
    chooser = __import__("random").Random(seed)
    steps = []
    for agent in environment.agent_iter():
        observation, reward, terminated, truncated, info = environment.last()
        steps.append(
            _digest(
                agent,
                observation["observation"].tobytes(),
                observation["action_mask"].tobytes(),
                reward,
                terminated,
                truncated,
                sorted((key, repr(value)) for key, value in info.items()),
            )
        )
        if terminated or truncated:
            environment.step(None)
            continue
        legal = observation["action_mask"].nonzero()[0]
        environment.step(int(legal[chooser.randrange(len(legal))]))
    return steps


def vector_games(players: int, seed: int, steps: int = 300) -> list[str]:
    """A batch of 6 games through :class:`VectorGame` (autoresets included): a digest per step of
    the whole batch (observations, masks, seats, results, seeds)."""
    import numpy as np

    from biblios_env.vector import VectorGame

    games = VectorGame(6, players, seed=seed, penalty="bluffs" if players == 3 else "standard")
    rng = np.random.default_rng(seed)
    batch = games.reset()
    digests = []
    for _ in range(steps):
        batch = games.step(np.argmax(rng.random(batch.action_mask.shape) * batch.action_mask, axis=1))
        digests.append(
            _digest(
                *(getattr(batch, name).tobytes() for name in ("observation", "action_mask", "current_player")),
                *(getattr(batch, name).tobytes() for name in ("terminated", "rewards", "final_vp", "seeds")),
            )
        )
    return digests


def main() -> None:
    games = {f"engine {spec}": engine_game(*spec) for spec in ENGINE_GAMES}
    games.update({f"env {spec}": env_game(*spec) for spec in ENV_GAMES})
    games.update({f"vector {spec}": vector_games(*spec) for spec in ENV_GAMES})
    json.dump({"compiled": biblios_env.COMPILED, "games": games}, sys.stdout)


if __name__ == "__main__":
    main()
