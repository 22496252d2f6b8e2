"""The search's evaluator seam (:mod:`agents.search.evaluators`): a search plays its
determinizations on with the rollouts it is given and lets the proposer it is given play what it
does not search; the defaults the options ask for are the ones it builds without them; an
interpreted subclass of the compiled rollouts plugs in."""

from __future__ import annotations

import random
from typing import Any

import numpy as np
import pytest
from scenarios import midgame_states

from agents.random_agent import RandomAgent
from agents.search import FlatSearch, Rollout, SearchOptions, TreeSearch
from agents.search.evaluators import NetworkRollouts, PolicyRollouts, RandomRollouts, default_rollouts
from biblios_env.agent_interface import AgentObservation
from biblios_env.engine import Game
from biblios_env.engine.flow import Decision
from biblios_env.engine.state import State
from biblios_env.engine.views import player_view


class CountingRollouts(PolicyRollouts):
    """The policy's rollouts, counting the states played on (an interpreted subclass)."""

    def __init__(self) -> None:
        super().__init__()
        self.played = 0

    def playout(self, search: Any, state: State) -> int:
        self.played += 1
        return super().playout(search, state)


def first_searched_bid(num_players: int, seed: int) -> AgentObservation:
    """Seat 0's first bid decision with a choice, PASS or a raise of one, in a random game."""
    game, rng = Game(num_players, seed=seed), np.random.default_rng(seed)
    while not game.is_over:
        legal = game.legal_actions()
        view = player_view(game.state, game.current_player)
        if game.current_player == 0 and view.decision == Decision.BID and len(legal) > 1:
            return AgentObservation(view, legal)
        game.apply(legal[int(rng.integers(len(legal)))])
    raise AssertionError("no bid decision in the game")


def test_the_flat_search_plays_each_move_of_each_determinization_on_with_the_rollouts_given() -> None:
    """8 determinizations, 2 searched moves (PASS, one more): 16 states played on, none by
    another rollout."""
    rollouts = CountingRollouts()
    options = SearchOptions(iterations=8, proposer="value", searched=frozenset({Decision.BID}))
    agent = FlatSearch(options, seed=1, rollouts=lambda num_players: rollouts)
    observation = first_searched_bid(2, seed=4)
    agent.start_game(0, 2, seed=3)
    agent.act(observation)
    assert agent.rollouts is rollouts
    assert agent.last_search["iterations"] == 8
    assert rollouts.played == 16


@pytest.mark.parametrize("search", [FlatSearch, TreeSearch])
def test_given_policy_rollouts_play_as_the_policy_option(search: type) -> None:
    """At 2 players ``auto`` has the network roll out; given policy rollouts instead, the search
    plays exactly as ``rollout=policy`` does (the same moves, the same decisions simulated)."""
    plain = search(SearchOptions(iterations=6, proposer="value", rollout=Rollout.POLICY), seed=2)
    given = search(SearchOptions(iterations=6, proposer="value"), seed=2, rollouts=lambda num_players: PolicyRollouts())
    searched = 0
    for seed in range(40):
        observation = first_searched_bid(2, seed)
        for agent in (plain, given):
            agent.start_game(0, 2, seed=seed)
        assert given.act(observation) == plain.act(observation)
        simulated = given.last_search.get("simulated_decisions")
        assert simulated == plain.last_search.get("simulated_decisions")
        searched += simulated is not None
        if searched == 3:
            return
    raise AssertionError(f"only {searched} of the positions were searched")


def test_the_proposer_given_plays_what_the_search_leaves_alone() -> None:
    """Nothing searched: every move is the given proposer's, here a seeded random agent's."""
    proposer, twin = RandomAgent(), RandomAgent()
    agent = FlatSearch(SearchOptions(searched=frozenset()), seed=1, proposer=lambda num_players: proposer)
    agent.start_game(0, 3, seed=7)
    twin.start_game(0, 3, seed=7)
    game, rng, checked = Game(3, seed=5), np.random.default_rng(5), 0
    while not game.is_over and checked < 30:
        legal = game.legal_actions()
        if game.current_player == 0 and len(legal) > 1:
            observation = AgentObservation(player_view(game.state, 0), legal)
            assert agent.act(observation) == twin.act(observation)
            checked += 1
        game.apply(legal[int(rng.integers(len(legal)))])
    assert agent.proposer is proposer and checked == 30


def test_the_defaults_are_what_the_options_ask_for() -> None:
    """``auto``: the network at 2 players, the policy at 3 and 4 and with a horizon; ``network``
    at every count; ``random``: the searched moves at random."""
    auto = default_rollouts(SearchOptions())
    assert isinstance(auto(2), NetworkRollouts) and auto(2).batched
    assert type(auto(3)) is PolicyRollouts and not auto(3).batched and auto(3).network is None
    assert type(default_rollouts(SearchOptions(horizon=2))(2)) is PolicyRollouts
    assert isinstance(default_rollouts(SearchOptions(rollout=Rollout.NETWORK))(4), NetworkRollouts)
    random_rollouts = default_rollouts(SearchOptions(rollout=Rollout.RANDOM))(2)
    assert isinstance(random_rollouts, RandomRollouts) and not random_rollouts.uses_policy


def test_policy_rollouts_play_each_state_with_the_policy_stream_of_its_seed() -> None:
    """A block of states played on together equals each played alone by the policy seeded with
    its own seed (the flat search's common random numbers rest on this)."""
    agent = FlatSearch(SearchOptions(rollout=Rollout.POLICY), seed=1)
    agent.start_game(0, 2, seed=1)
    states, seeds = midgame_states(2, 4, seed=6), [11, 12, 11, 40]
    expected = []
    for state, seed in zip(states, seeds):
        alone = state.clone(rng=np.random.default_rng(0))
        agent.policy.rng = random.Random(seed)
        agent.policy.rollout(alone, None)
        expected.append((alone.vp, alone.hands))
    played = [state.clone(rng=np.random.default_rng(0)) for state in states]
    assert agent.rollouts.playouts(agent, played, seeds) > 0
    assert [(state.vp, state.hands) for state in played] == expected
