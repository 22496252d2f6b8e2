"""The search with a belief (``ismcts:belief=bids``): the option is checked, the search plays legal
games at every player count, its belief is shown every view the game shows the seat, it deals the
search's determinizations, and the search still decides from the seat's views alone."""

from __future__ import annotations

import random

import numpy as np
import pytest

from agents import make_agent
from agents.belief import BidBelief, bids_in_gold
from agents.heuristics import ValueAgent
from agents.search import FlatSearch, SearchOptions, TreeSearch
from agents.search.common import SearchAgent
from biblios_env.agent_interface import AgentObservation
from biblios_env.cards import gold_value
from biblios_env.engine import Game
from biblios_env.engine.sampling import sample_game
from biblios_env.engine.state import State
from biblios_env.engine.views import PlayerView, player_view
from experiments.common.match import AgentSpecError, build_agent, describe_agent, parse_agent_spec, play_game, play_out

#: Small budgets: these tests check what the search does with its belief, not how well it plays.
SMALL: dict = {"candidates": 8, "record_samples": 6}


def belief_search(iterations: int, belief: BidBelief | None = None, tree: bool = False) -> SearchAgent:
    """A search agent with ``belief=bids`` whose belief is ``belief`` (default: a small ``bids`` belief)."""
    search = TreeSearch if tree else FlatSearch
    agent = search(SearchOptions(iterations=iterations, belief="bids"), seed=3)
    agent.belief = BidBelief(**SMALL) if belief is None else belief
    return agent


def test_the_belief_option_is_parsed_and_checked() -> None:
    assert make_agent("ismcts").belief is None  # the default: today's sampler
    agent = build_agent(parse_agent_spec("ismcts:belief=bids"))
    assert isinstance(agent, FlatSearch) and isinstance(agent.belief, BidBelief)
    assert isinstance(make_agent("ismcts", belief="bids", mode="tree").belief, BidBelief)
    with pytest.raises(ValueError, match=r"^belief must be one of \('none', 'bids'\), got 'oracle'$"):
        SearchOptions(belief="oracle")
    with pytest.raises(AgentSpecError, match=r"belief must be one of \('none', 'bids'\), got 3"):
        build_agent(parse_agent_spec("ismcts:belief=3"))
    parameters = describe_agent("ismcts").parameters
    assert parameters is not None and "belief=none" in parameters
    assert build_agent(parse_agent_spec("ismcts:belief=none")).belief is None  # the default, as listed


@pytest.mark.parametrize("num_players", [2, 3, 4])
def test_the_belief_search_plays_legal_games(num_players: int) -> None:
    """Whole games as a tournament plays them (an illegal move would raise)."""
    agents = [belief_search(2)] + [ValueAgent() for _ in range(num_players - 1)]
    result = play_game(agents, seed=40 + num_players, agent_seeds=list(range(num_players)))
    assert len(result.vp) == num_players and result.decisions[0] > 0


def test_the_tree_search_plays_on_the_belief_too() -> None:
    agents = [belief_search(2, tree=True), ValueAgent()]
    assert play_game(agents, seed=7, agent_seeds=[1, 2]).decisions[0] > 0


class CountingBelief(BidBelief):
    """A ``bids`` belief that notes every view it observes and every batch it deals."""

    def __init__(self) -> None:
        super().__init__(**SMALL)
        self.observed: list[PlayerView] = []
        self.batches: list[int] = []

    def observe(self, view: PlayerView) -> None:
        self.observed.append(view)
        super().observe(view)

    def sample_states(self, view: PlayerView, rng: np.random.Generator, count: int) -> list[State]:
        self.batches.append(count)
        return super().sample_states(view, rng, count)


@pytest.mark.parametrize("num_players", [2, 3])
def test_the_belief_is_shown_every_view_of_the_seat(num_players: int) -> None:
    """Forced, unsearched and searched decisions alike: the belief observes exactly the views the
    game showed the seat, in order (forced moves are shown here: the game does not apply them)."""
    belief = CountingBelief()
    agents = [belief_search(2, belief)] + [ValueAgent() for _ in range(num_players - 1)]
    for seat, agent in enumerate(agents):
        agent.start_game(seat, num_players, seed=seat)
    shown: list[PlayerView] = []
    forced = 0

    def decide(seat: int, observation: AgentObservation) -> int:
        nonlocal forced
        if seat == 0:
            shown.append(observation.view)
            forced += len(observation.legal_actions) == 1
        return agents[seat].act(observation)

    play_out(Game(num_players, seed=9, auto_forced=False), decide)
    assert forced > 0 and len(shown) > forced
    assert belief.observed == shown
    assert belief.batches  # and it dealt the searches' determinizations


def test_a_search_draws_a_new_batch_when_the_belief_runs_out() -> None:
    """Without a search in between, seven determinizations from a budget of three come from
    three batches (3 + 3 + 1), each a state the seat cannot tell from its view."""
    belief = CountingBelief()
    agent = belief_search(3, belief)
    agent.start_game(0, 2, seed=1)
    view = player_view(Game(2, seed=4).state, 0)
    belief.observe(view)
    states = [agent.determinization(view) for _ in range(7)]
    assert belief.batches == [3, 3, 3]
    assert all(player_view(state, 0) == view for state in states)


def decisions_on_indistinguishable_tables(
    num_players: int, make_belief: type[BidBelief], leak: list[State], positions: int = 3
) -> list[tuple[tuple, tuple]]:
    """Two seeded belief searches in seat 0 follow one game of ``value`` opponents in lockstep
    (shown the same views); at the first ``positions`` gold bids with a choice after two earlier
    auctions, one decides on the real table and the other on a table the seat cannot tell from it
    (another deal of the hidden cards, the opponent to its left with other gold). Returns both
    decisions with their search statistics. ``leak`` gets each table's state before each decision."""
    game = Game(num_players, seed=23)
    searches = [belief_search(6, make_belief(**SMALL)) for _ in range(2)]
    others = [ValueAgent() for _ in range(num_players)]
    for seat in range(num_players):
        others[seat].start_game(seat, num_players, seed=seat)
    for search in searches:
        search.start_game(0, num_players, seed=5)
    found: list[tuple[tuple, tuple]] = []
    while not game.is_over and len(found) < positions:
        legal = list(game.legal_actions())
        observation = AgentObservation(player_view(game.state, game.current_player), legal)
        if game.current_player != 0:
            game.apply(others[game.current_player].act(observation))
            continue
        view = observation.view
        belief = searches[0].belief
        assert isinstance(belief, BidBelief)
        tables = [game.state, game.state]
        if bids_in_gold(view) and len(legal) > 1 and len(belief.records) >= 2:
            twins = (sample_game(view, random.Random(seed)).state for seed in range(50))
            tables[1] = next(state for state in twins if gold_value(state.hands[1]) != gold_value(game.state.hands[1]))
            assert player_view(tables[1], 0) == view
        pair = []
        for search, table in zip(searches, tables, strict=True):
            leak.append(table)
            action = search.act(AgentObservation(player_view(table, 0), legal))
            pair.append((action, tuple((k, v) for k, v in search.last_search.items() if k != "seconds")))
        if tables[1] is not game.state:
            found.append((pair[0], pair[1]))
        game.apply(pair[0][0])
    assert len(found) == positions
    return found


@pytest.mark.parametrize("num_players", [2, 3])
def test_the_belief_search_decides_from_the_views_alone(num_players: int) -> None:
    for real, twin in decisions_on_indistinguishable_tables(num_players, BidBelief, []):
        assert real == twin


def test_a_belief_search_that_reads_the_table_is_caught() -> None:
    """The check above can fail: a belief that favours states with the real opponent's gold (a
    planted leak) makes the search decide or count differently on the two tables somewhere."""
    leak: list[State] = []

    class Leaky(BidBelief):
        def weights(self, view: PlayerView, states: list[State]) -> list[float]:
            truth = gold_value(leak[-1].hands[1])
            return [1.0 if gold_value(state.hands[1]) == truth else 1e-3 for state in states]

    pairs = decisions_on_indistinguishable_tables(2, Leaky, leak)
    assert any(real != twin for real, twin in pairs)


def test_a_tournament_game_shows_the_belief_every_action() -> None:
    """``play_game`` shows the search agent (an Observer) the table after every action, so at three
    players its belief sees the bids made between its turns: one view per decision of the game,
    plus the view of each of its own decisions."""
    belief = CountingBelief()
    agents = [belief_search(2, belief), ValueAgent(), ValueAgent()]
    result = play_game(agents, seed=31, agent_seeds=[0, 1, 2])
    assert len(belief.observed) == sum(result.decisions) + result.decisions[0]


class WeighingBelief(CountingBelief):
    """Notes the weights it hands out too."""

    def __init__(self) -> None:
        super().__init__()
        self.handed: list[float] = []

    def weighted_states(
        self, view: PlayerView, rng: np.random.Generator, count: int
    ) -> tuple[list[State], list[float]]:
        states, weights = super().weighted_states(view, rng, count)
        self.batches.append(count)
        self.handed.extend(weights)
        return states, weights


def test_belief_weights_deal_the_states_as_drawn_with_their_weights() -> None:
    """With ``belief_weights`` the flat search takes the belief's states unresampled, each with the
    weight the belief gives it; without, resampled states of weight 1."""
    assert build_agent(parse_agent_spec("ismcts:belief=bids,belief_weights=true")).belief_weights is True
    assert make_agent("ismcts").belief_weights is False
    view = player_view(Game(2, seed=4).state, 0)
    for weighted in (True, False):
        belief = WeighingBelief()
        agent = FlatSearch(SearchOptions(iterations=4, belief="bids", belief_weights=weighted), seed=3)
        agent.belief = belief
        agent.start_game(0, 2, seed=1)
        belief.observe(view)
        dealt = [agent.weighted_determinization(view) for _ in range(4)]
        assert all(player_view(state, 0) == view for state, _ in dealt)
        assert belief.batches == [4]
        if weighted:
            assert sorted(weight for _, weight in dealt) == sorted(belief.handed)
        else:
            assert not belief.handed and [weight for _, weight in dealt] == [1.0] * 4
