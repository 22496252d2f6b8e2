"""experiments.common.match.play_out: the one loop that asks the seat to act and applies its answer."""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from agents.heuristics import ValueAgent
from biblios_env.agent_interface import AgentObservation, Observer
from biblios_env.engine import Game, IllegalActionError
from biblios_env.engine.config import GameConfig
from biblios_env.engine.log import load_log
from biblios_env.engine.views import PlayerView, player_view
from experiments.common.match import AgentError, build_agent, parse_agent_spec, play_game, play_out, seat_observation


@pytest.mark.parametrize("num_players", [2, 3, 4])
def test_play_out_asks_the_seat_to_act_on_its_own_view_until_the_end(num_players: int) -> None:
    game = Game(num_players, seed=num_players)
    chooser = random.Random(num_players)
    asked: list[int] = []

    def decide(seat: int, observation: AgentObservation) -> int:
        assert seat == game.current_player == observation.view.seat
        assert observation.view == player_view(game.state, seat)  # the seat's view, never another's
        assert observation.legal_actions == game.legal_actions()
        asked.append(seat)
        return chooser.choice(observation.legal_actions)

    play_out(game, decide)
    assert game.is_over
    assert 0 < len(asked) <= len(game.history)  # single-option decisions are applied by the game itself
    assert set(asked) == set(range(num_players))


def test_seat_observation_is_what_the_seat_to_act_may_see_and_do() -> None:
    game = Game(3, seed=4)
    game.apply(game.legal_actions()[0])
    observation = seat_observation(game)
    assert observation.view == player_view(game.state, game.current_player)
    assert observation.legal_actions == game.legal_actions()
    assert observation.legal_actions is not game.legal_actions()  # a copy: the agent may not edit the game's list


def test_an_illegal_answer_raises_with_the_game_unchanged_and_the_seat_still_to_act() -> None:
    game = Game(2, seed=5)
    seat, history = game.current_player, list(game.history)

    def illegal(seat: int, observation: AgentObservation) -> int:
        return max(observation.legal_actions) + 1

    with pytest.raises(IllegalActionError):
        play_out(game, illegal)
    assert game.current_player == seat and game.history == history


def test_play_game_plays_the_game_play_out_plays_with_the_same_agents(tmp_path: Path) -> None:
    specs = ["value", "hoarder", "random"]
    seeds = [11, 12, 13]
    play_game([build_agent(parse_agent_spec(s)) for s in specs], 9, agent_seeds=seeds, log_path=tmp_path / "log.json")
    agents = [build_agent(parse_agent_spec(s)) for s in specs]
    game = Game(3, seed=9)
    for seat, agent in enumerate(agents):
        agent.start_game(seat, 3, seed=seeds[seat])
    play_out(game, lambda seat, observation: agents[seat].act(observation))
    assert json.loads((tmp_path / "log.json").read_text())["actions"] == game.history


def test_play_game_plays_its_game_config_and_refuses_one_for_another_table(tmp_path: Path) -> None:
    agents = [build_agent(parse_agent_spec("random")) for _ in range(3)]
    config = GameConfig(3, "bluffs", strict_bids=True)
    play_game(agents, 5, agent_seeds=[1, 2, 3], game_config=config, log_path=tmp_path / "log.json")
    assert load_log(tmp_path / "log.json").config == config
    with pytest.raises(ValueError, match=r"^2 agents cannot play a 3-player game: GameConfig\(num_players=3"):
        play_game(agents[:2], 5, game_config=config)


class Watcher:
    """The ``value`` heuristic that also keeps every view ``observe`` shows it."""

    name = "watcher"

    def __init__(self, crash: bool = False) -> None:
        self.heuristic = ValueAgent()
        self.crash = crash
        self.seat = -1
        self.seen: list[PlayerView] = []

    def start_game(self, seat: int, num_players: int, seed: int | None = None) -> None:
        self.seat = seat
        self.heuristic.start_game(seat, num_players, seed)

    def act(self, observation: AgentObservation) -> int:
        return self.heuristic.act(observation)

    def observe(self, view: PlayerView) -> None:
        if self.crash:
            raise RuntimeError("lost my glasses")
        self.seen.append(view)


def test_play_game_shows_an_observer_its_view_after_every_action() -> None:
    """Whoever acted: one view of the observer's own seat after each decision asked, the same game."""
    watcher = Watcher()
    assert isinstance(watcher, Observer) and not isinstance(ValueAgent(), Observer)
    result = play_game([ValueAgent(), watcher, ValueAgent()], 21, agent_seeds=[1, 2, 3])
    assert len(watcher.seen) == sum(result.decisions)
    assert all(view.seat == 1 for view in watcher.seen)
    assert len({view.current_player for view in watcher.seen}) > 1  # between its own turns too
    plain = play_game([ValueAgent(), ValueAgent(), ValueAgent()], 21, agent_seeds=[1, 2, 3])
    assert (plain.vp, plain.actions) == (result.vp, result.actions)  # watching changes nothing


def test_an_observer_that_crashes_is_named() -> None:
    with pytest.raises(AgentError, match=r"agent 'watcher' in seat 1 crashed observing the game .*lost my glasses"):
        play_game([ValueAgent(), Watcher(crash=True)], 5)


@pytest.mark.parametrize("answer", [2.0, True, "2", np.float32(2.0)])
def test_an_answer_that_is_not_an_action_id_is_the_agents_fault(answer: object) -> None:
    """The envs' rule (:func:`biblios_env.actions.is_action_id`): a float, a bool or text is not a
    move, whatever it would convert to."""

    class Odd:
        name = "odd"

        def start_game(self, seat: int, num_players: int, seed: int | None = None) -> None:
            pass

        def act(self, observation: Any) -> object:
            return answer

    with pytest.raises(AgentError, match=r"agent 'odd' in seat 0 .* not an int action id"):
        play_game([Odd(), build_agent(parse_agent_spec("random"))], seed=1)


def test_a_numpy_integer_answer_is_a_move() -> None:
    class NumpyRandom:
        name = "numpy"

        def start_game(self, seat: int, num_players: int, seed: int | None = None) -> None:
            self.rng = np.random.default_rng(seed)

        def act(self, observation: Any) -> object:
            return np.int64(self.rng.choice(observation.legal_actions))

    result = play_game([NumpyRandom(), build_agent(parse_agent_spec("random"))], seed=1)
    assert sum(result.decisions) > 0
