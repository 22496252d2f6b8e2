"""Player views cannot change the game: agents are third-party code, so a
view shares no mutable object with the live state. Writing into a view raises or changes
only that view, and a view kept for later still shows the moment it was built.
"""

from __future__ import annotations

import copy
import dataclasses
import json
import random
from pathlib import Path
from typing import Any, Final

import pytest

from biblios_env.agent_interface import UniformRandomAgent
from biblios_env.engine import Game
from biblios_env.engine.state import STATE_FIELDS, State
from biblios_env.engine.views import PlayerView, player_view
from experiments.benchmarks import engine as benchmark
from experiments.common.match import play_game

PLAYER_COUNTS: Final = (2, 3, 4)
_SENTINEL: Final = 7  # a card id and die value that is valid, so a corrupted state would not crash at once


def state_contents(state: State) -> dict[str, Any]:
    """Every field of the state but its generator, deep-copied (State has no ``__eq__``)."""
    return {name: copy.deepcopy(getattr(state, name)) for name in STATE_FIELDS if not name.startswith("_")}


def vandalize(value: Any) -> int:
    """Write into every mutable container reachable from ``value``; returns how many were found.

    Tuples and bytes are tried too: item assignment must raise TypeError on them.
    """
    found = 0
    if isinstance(value, list):
        for item in value:
            found += vandalize(item)
        if value:
            value[0] = copy.copy(value[0]) if isinstance(value[0], (list, bytearray)) else _SENTINEL
        value.append(_SENTINEL)
        found += 1
    elif isinstance(value, bytearray):
        if value:
            value[0] ^= 1
        value.append(1)
        found += 1
    elif isinstance(value, (tuple, bytes)):
        for item in value:
            found += vandalize(item)
        if value:
            with pytest.raises(TypeError):
                value[0] = _SENTINEL  # type: ignore[index]
    return found


def vandalize_view(view: PlayerView) -> int:
    return sum(vandalize(getattr(view, field.name)) for field in dataclasses.fields(view))


def positions(num_players: int, seed: int, penalty: str = "standard") -> list[Game]:
    """Copies of a random legal game at every decision (penalties included, with wild bids)."""
    chooser = random.Random(seed)
    game = Game(num_players, seed=seed, penalty=penalty)
    found = []
    while not game.is_over:
        found.append(game.clone())
        game.apply(chooser.choice(game.legal_actions()))
    found.append(game)
    return found


@pytest.mark.parametrize("penalty", ["standard", "bluffs"])
@pytest.mark.parametrize("num_players", PLAYER_COUNTS)
def test_writing_into_any_view_leaves_the_game_unchanged(num_players: int, penalty: str) -> None:
    mutable_seen = 0
    for game in positions(num_players, 40 + num_players, penalty)[::3]:
        before = state_contents(game.state)
        legal = game.legal_actions()[:]
        for seat in range(num_players):
            pristine = copy.deepcopy(player_view(game.state, seat))
            view = player_view(game.state, seat)
            mutable_seen += vandalize_view(view)
            assert state_contents(game.state) == before, f"seat {seat}'s view changed the game"
            assert player_view(game.state, seat) == pristine, f"seat {seat}'s view changed the next view"
        assert game.legal_actions() == legal
    assert mutable_seen > 0  # the view's own lists were written into (the vandal can reach something)


@pytest.mark.parametrize("num_players", PLAYER_COUNTS)
def test_a_kept_view_still_shows_the_moment_it_was_built(num_players: int) -> None:
    game = Game(num_players, seed=5)
    chooser = random.Random(5)
    kept: list[tuple[PlayerView, PlayerView]] = []
    while not game.is_over:
        view = player_view(game.state, game.current_player)
        kept.append((view, copy.deepcopy(view)))
        game.apply(chooser.choice(game.legal_actions()))
    for index, (view, snapshot) in enumerate(kept):
        assert view == snapshot, f"the view of decision {index} changed as the game went on"


def test_writing_into_the_dice_of_a_view_raises() -> None:
    """The issue's example: ``view.dice[0] = 6`` must not move the real die."""
    game = Game(3, seed=1)
    view = player_view(game.state, 0)
    with pytest.raises(TypeError):
        view.dice[0] = 6  # type: ignore[index]
    assert game.state.dice == [3, 3, 3, 3, 3]


class VandalAgent(UniformRandomAgent):
    """The uniform random agent, but it writes into everything it is given."""

    name = "vandal"

    def act(self, observation: Any) -> int:
        action = super().act(observation)
        vandalize_view(observation.view)
        vandalize(observation.legal_actions)
        return action


@pytest.mark.parametrize("num_players", PLAYER_COUNTS)
def test_an_agent_that_writes_into_its_views_plays_the_same_game(num_players: int) -> None:
    """A tournament game with vandal agents ends exactly as the same game with honest ones."""
    seeds = list(range(100, 100 + num_players))
    honest = play_game([UniformRandomAgent() for _ in range(num_players)], 17, agent_seeds=seeds)
    vandal = play_game([VandalAgent() for _ in range(num_players)], 17, agent_seeds=seeds)
    assert (vandal.vp, vandal.winners, vandal.dice, vandal.actions) == (
        honest.vp,
        honest.winners,
        honest.dice,
        honest.actions,
    )


def test_benchmark_times_the_views_loop_alone(tmp_path: Path) -> None:
    """``--loops views`` measures player_view alone (the figure quoted for this change)."""
    out = tmp_path / "views.json"
    result = benchmark.main(["--loops", "views", "--view-games", "1", "--repeats", "2", "--out", str(out)])
    assert json.loads(out.read_text()) == result
    for row in result["rows"]:
        assert set(row["runs"]) == {"views_per_s"}
        assert len(row["runs"]["views_per_s"]) == 2 and row["views_per_s"] == max(row["runs"]["views_per_s"])
