"""Network rollouts of the search (``ismcts:rollout=network``; the default ``auto`` at 2 players):
the option is parsed and checked, the network plays the searching seat to the end of every
rollout and a copy of the rollout policy each other seat, stepping rollouts together changes none
of them, and the search plays legal, reproducible games with them."""

from __future__ import annotations

import copy
import random

import numpy as np
import pytest
from scenarios import midgame_states

from agents import make_agent
from agents.network import NumpyNetwork
from agents.network_agent import shipped_network
from agents.rollout_policy import RolloutPolicy
from agents.search import FlatSearch, Rollout, SearchOptions, TreeSearch
from agents.search.network_rollouts import network_rollouts
from biblios_env.engine import rules
from biblios_env.engine.flow import DECISION_NONE
from biblios_env.engine.state import State
from biblios_env.observations import encode_state
from experiments.common.match import AgentSpecError, build_agent, parse_agent_spec, play_game


def one_by_one(state: State, seed: int, seat: int, network: NumpyNetwork, policy: RolloutPolicy) -> list[int]:
    """The rollout played a decision at a time: the network's most likely legal action for
    ``seat``, the policy's copy for the others; returns the actions."""
    others = policy.spawn(random.Random(seed))
    others.begin(state)
    actions = []
    while state.decision != DECISION_NONE:
        if state.current_player == seat:
            legal = rules.legal_actions(state)
            logits = network.logits(encode_state(state, seat))
            action = legal[int(np.argmax(logits[legal]))]
        else:
            action = others._rollout_action(state)
        rules.apply(state, action)
        actions.append(action)
    return actions


def test_the_rollout_option_is_parsed_and_checked() -> None:
    """``auto`` (the default) has the network play the searcher's seat at 2 players only, and
    never with a horizon; ``network`` at every count; ``policy`` never."""
    default = make_agent("ismcts")
    for players, network_rolls in ((2, True), (3, False), (4, False), (2, True)):
        default.start_game(0, players, seed=1)
        assert (default.rollouts.network is shipped_network(players)) is network_rolls, players
    assert SearchOptions().rollout is Rollout.AUTO
    horizon = FlatSearch(SearchOptions(horizon=2))
    horizon.start_game(0, 2)
    assert horizon.rollouts.network is None
    forced = build_agent(parse_agent_spec("ismcts:rollout=network"))
    forced.start_game(1, 4, seed=0)
    assert forced.rollouts.network is shipped_network(4)
    plain = make_agent("ismcts", rollout="policy")
    plain.start_game(0, 2)
    assert plain.rollouts.network is None
    with pytest.raises(ValueError, match=r"^rollout=network plays to the end of the game: it takes no horizon \(got 3"):
        SearchOptions(rollout=Rollout.NETWORK, horizon=3)
    with pytest.raises(AgentSpecError, match=r"rollout must be one of \('auto', 'policy', 'network', 'random'\)"):
        build_agent(parse_agent_spec("ismcts:rollout=greedy"))


def test_spawn_copies_the_parameters_with_fresh_caches_and_its_own_stream() -> None:
    policy = RolloutPolicy(denial=0.2, bid_noise=0.1, capture=0.4)
    stream = random.Random(7)
    spawned = policy.spawn(stream)
    assert spawned is not policy and spawned.rng is stream
    parameters = (spawned.denial, spawned.bid_noise, spawned.capture, spawned.gold_value)
    assert parameters == (0.2, 0.1, 0.4, policy.gold_value)


@pytest.mark.parametrize("num_players", [2, 3])
def test_the_network_plays_the_seat_and_batching_changes_no_rollout(num_players: int) -> None:
    """Stepped together, each rollout is the one a decision-at-a-time loop plays: the network's
    own move at each of the seat's decisions, the policy copy's at the others'. A rollout that
    borrowed another's policy caches or network row would differ."""
    network, policy = shipped_network(num_players), RolloutPolicy()
    states = midgame_states(num_players, 5)
    seeds = [11 * index for index in range(len(states))]
    expected = []
    for state, seed in zip(states, seeds, strict=True):
        expected_state = state.clone(rng=np.random.default_rng(0))
        one_by_one(expected_state, seed, 0, network, policy)
        expected.append(expected_state)
    together = [state.clone(rng=np.random.default_rng(0)) for state in states]
    steps = network_rollouts(together, seeds, 0, network, policy)
    assert all(state.decision == DECISION_NONE for state in together)
    assert [state.vp for state in together] == [state.vp for state in expected]
    assert [state.hands for state in together] == [state.hands for state in expected]
    assert steps > 0


def test_network_rollouts_refuse_a_network_that_reads_a_proposal() -> None:
    reading = copy.copy(shipped_network(2))
    reading.inputs = "observation+value"
    with pytest.raises(ValueError, match="reads the observation alone, not 'observation\\+value'"):
        network_rollouts(midgame_states(2, 1), [0], 0, reading, RolloutPolicy())


@pytest.mark.parametrize("search", [FlatSearch, TreeSearch])
@pytest.mark.parametrize("num_players", [2, 3])
def test_the_search_with_network_rollouts_plays_legal_reproducible_games(search: type, num_players: int) -> None:
    """Whole games as a tournament plays them (an illegal move would raise), twice alike."""

    def game() -> tuple[list[int], list[int]]:
        agents = [search(SearchOptions(iterations=4, rollout=Rollout.NETWORK), seed=2)]
        agents += [make_agent("value") for _ in range(num_players - 1)]
        result = play_game(agents, seed=70 + num_players, agent_seeds=list(range(num_players)))
        return result.vp, result.decisions

    first = game()
    assert first == game() and first[1][0] > 0


@pytest.mark.parametrize("seat", [0, 1])
def test_the_tree_search_rolls_out_with_the_network_in_its_own_seat(seat: int) -> None:
    """The tree search rolls one state out at a time (``playout``, where the flat search steps
    its rollouts together): there too the network plays the searcher's seat, from the seed the
    search draws next. The other seat's network would play another game."""
    network = shipped_network(2)
    agent = TreeSearch(SearchOptions(iterations=4, rollout=Rollout.NETWORK), seed=2)
    agent.start_game(seat, 2, seed=5)
    state = midgame_states(2, 1, seed=8)[0]
    draws = random.Random()
    draws.setstate(agent.rng.getstate())
    policy_seed = draws.getrandbits(63)
    games = {}
    for network_seat in (0, 1):
        games[network_seat] = state.clone(rng=np.random.default_rng(0))
        one_by_one(games[network_seat], policy_seed, network_seat, network, agent.policy)
    assert games[0].vp != games[1].vp or games[0].hands != games[1].hands  # the seat matters here
    played = state.clone(rng=np.random.default_rng(0))
    assert agent.playout(played) > 0
    assert (played.vp, played.hands) == (games[seat].vp, games[seat].hands)
