"""The search correcting the shipped network (``ismcts:proposer=network``): the option is
checked, the network plays every decision the search leaves alone and proposes the move the
search must beat, and the search plays legal games at every player count (each count's shipped
network)."""

from __future__ import annotations

import numpy as np
import pytest

from agents import make_agent
from agents.network_agent import NetworkAgent, shipped_network
from agents.search import FlatSearch, SearchOptions, TreeSearch
from biblios_env.actions import NUM_ACTIONS
from biblios_env.agent_interface import AgentObservation
from biblios_env.engine import Game
from biblios_env.engine.flow import Decision
from biblios_env.engine.views import player_view
from biblios_env.observations import encode_state
from experiments.common.match import AgentSpecError, build_agent, describe_agent, parse_agent_spec, play_game


def test_the_proposer_option_is_parsed_and_checked() -> None:
    """By default (``auto``) the network proposes at the counts where it beats ``value`` (2, 3
    and 4 players); ``network`` and ``value`` fix the proposer."""
    default = make_agent("ismcts")
    for players, network_proposes in ((2, True), (3, True), (4, True), (2, True)):
        default.start_game(0, players, seed=1)
        assert isinstance(default.proposer, NetworkAgent) is network_proposes, players
        assert network_proposes or default.proposer is default.heuristic
    agent = build_agent(parse_agent_spec("ismcts:proposer=network"))
    agent.start_game(1, 3, seed=0)
    assert isinstance(agent, FlatSearch) and isinstance(agent.proposer, NetworkAgent)
    tree = make_agent("ismcts", proposer="value", mode="tree")
    tree.start_game(0, 2, seed=0)
    assert isinstance(tree, TreeSearch) and tree.proposer is tree.heuristic and tree.choose_proposer(2) is None
    with pytest.raises(ValueError, match=r"^proposer must be one of \('auto', 'value', 'network'\), got 'ppo'$"):
        SearchOptions(proposer="ppo")
    with pytest.raises(AgentSpecError, match=r"proposer must be one of \('auto', 'value', 'network'\), got 'x'"):
        build_agent(parse_agent_spec("ismcts:proposer=x"))
    parameters = describe_agent("ismcts").parameters
    assert parameters is not None and "proposer=auto" in parameters


@pytest.mark.parametrize("num_players", [2, 3, 4])
def test_the_network_plays_what_the_search_leaves_alone(num_players: int) -> None:
    """With only church dice searched, every placement, take, bid and payment is the shipped
    network's own move for that player count."""
    agent = FlatSearch(SearchOptions(iterations=2, searched=frozenset({Decision.CHURCH}), proposer="network"), seed=1)
    network = shipped_network(num_players)
    game, rng, checked = Game(num_players, seed=11), np.random.default_rng(2), 0
    agent.start_game(0, num_players, seed=5)
    while not game.is_over and checked < 40:
        seat, legal = game.current_player, game.legal_actions()
        if seat == 0 and len(legal) > 1 and game.state.decision != int(Decision.CHURCH):
            vector = encode_state(game.state, seat)
            observation = AgentObservation(player_view(game.state, seat), legal, vector)
            mask = np.zeros(NUM_ACTIONS, bool)
            mask[legal] = True
            assert agent.act(observation) == network.choose(vector, mask, True, rng)
            checked += 1
        game.apply(legal[int(rng.integers(len(legal)))])
    assert checked > 5


@pytest.mark.parametrize("num_players", [2, 3, 4])
@pytest.mark.parametrize("search", [FlatSearch, TreeSearch])
def test_the_search_over_the_network_plays_legal_games(num_players: int, search: type) -> None:
    """Whole games as a tournament plays them (an illegal move would raise)."""
    agents = [search(SearchOptions(iterations=3, proposer="network"), seed=2)]
    agents += [make_agent("value") for _ in range(num_players - 1)]
    result = play_game(agents, seed=60 + num_players, agent_seeds=list(range(num_players)))
    assert len(result.vp) == num_players and result.decisions[0] > 0
