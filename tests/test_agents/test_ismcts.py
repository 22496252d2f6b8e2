"""The search agents behind ``ismcts`` (agents.search): legal moves only, determinism given a
seed and an iteration budget, the time budget, the heuristic default and its gate, the heuristic
and the rollout policy as arguments, the rollout horizon, and the search's action abstraction."""

from __future__ import annotations

import itertools
import math
import random
import statistics
import time
from collections.abc import Callable

import pytest

from agents import make_agent
from agents.heuristics import HoarderAgent, ValueAgent
from agents.random_agent import RandomAgent
from agents.rollout_policy import RolloutPolicy, play_on, round_marker
from agents.search import FlatSearch, SearchAgent, SearchOptions, TreeSearch
from agents.search.common import PAY_MOVE
from agents.search.flat import _best_against
from agents.search.options import SEARCHABLE
from biblios_env.actions import BID_BASE, PASS, REFUSE
from biblios_env.agent_interface import Agent, AgentObservation
from biblios_env.cards import IS_GOLD
from biblios_env.engine import Game, rules
from biblios_env.engine.state import Decision, State
from biblios_env.engine.views import player_view


def play(agents: list, seed: int, max_decisions: int | None = None, **options) -> tuple[Game, list[int]]:
    """Play a game (or its first decisions), checking that every action is legal."""
    game = Game(len(agents), seed=seed, **options)
    for seat, agent in enumerate(agents):
        agent.start_game(seat, len(agents), seed=seed * 10 + seat)
    chosen: list[int] = []
    while not game.is_over and (max_decisions is None or len(chosen) < max_decisions):
        seat = game.current_player
        legal = game.legal_actions()
        action = agents[seat].act(AgentObservation(player_view(game.state, seat), list(legal)))
        assert action in legal, (seat, action, legal)
        chosen.append(action)
        game.apply(action)
    return game, chosen


def test_ismcts_is_an_agent() -> None:
    agent = FlatSearch(SearchOptions(iterations=2))
    assert isinstance(agent, Agent)
    assert agent.name == "ismcts"


@pytest.mark.parametrize(
    ("num_players", "options"),
    [(2, {}), (3, {"penalty": "bluffs"}), (4, {"strict_bids": True})],
)
def test_ismcts_plays_only_legal_moves(num_players: int, options: dict) -> None:
    """Whole games at every player count with a tiny budget (speed is not the point here)."""
    agents = [FlatSearch(SearchOptions(iterations=3))] + [RandomAgent() for _ in range(num_players - 1)]
    game, _ = play(agents, seed=num_players, **options)
    assert game.is_over


def test_ismcts_tree_mode_searching_every_decision_plays_only_legal_moves() -> None:
    agent = TreeSearch(SearchOptions(iterations=4, searched=frozenset(SEARCHABLE.values())))
    _, chosen = play([agent, RandomAgent()], seed=9, max_decisions=80)
    assert chosen


def heuristic_twin(agent: SearchAgent, seat: int, num_players: int) -> ValueAgent:
    """A value agent whose generator is in the state of ``agent``'s (it proposes the same move)."""
    twin = ValueAgent()
    twin.start_game(seat, num_players)
    twin.rng = random.Random()
    twin.rng.setstate(agent.rng.getstate())
    return twin


def replay_against_twin(agent: SearchAgent, seed: int, decisions: int) -> list[tuple[Decision, int, int, dict]]:
    """Play ``agent`` (seat 0) against random play; per own decision with a choice: the
    decision, the agent's action, the heuristic's action from the same generator state, and
    ``last_search``."""
    game = Game(2, seed=seed)
    agent.start_game(0, 2, seed=seed)
    opponent = RandomAgent()
    opponent.start_game(1, 2, seed=seed)
    records = []
    while not game.is_over and len(records) < decisions:
        seat = game.current_player
        legal = list(game.legal_actions())
        observation = AgentObservation(player_view(game.state, seat), legal)
        if seat != 0:
            game.apply(opponent.act(observation))
            continue
        if len(legal) == 1:
            game.apply(agent.act(observation))
            continue
        proposal = heuristic_twin(agent, 0, 2).act(observation)
        action = agent.act(observation)
        assert action in legal
        records.append((game.state.decision, action, proposal, dict(agent.last_search)))
        game.apply(action)
    return records


def test_unsearched_decisions_are_the_heuristics_and_bids_are_searched() -> None:
    records = replay_against_twin(FlatSearch(SearchOptions(iterations=3, proposer="value")), seed=11, decisions=60)
    assert any(decision == Decision.BID for decision, *_ in records)
    for decision, action, proposal, search in records:
        if decision != Decision.BID:
            assert action == proposal
            assert not search
        elif search:
            assert search["iterations"] == 3
            assert search["simulated_decisions"] > 3


def test_gate_keeps_the_heuristics_bid_unless_the_evidence_is_clear() -> None:
    """An infinite gate never overrules the heuristic; without a gate the best mean is played,
    which differs from the heuristic somewhere in a game."""
    kept = replay_against_twin(
        FlatSearch(SearchOptions(iterations=4, gate=float("inf"), proposer="value")), seed=12, decisions=60
    )
    assert all(action == proposal for _, action, proposal, _ in kept)
    free = replay_against_twin(
        FlatSearch(SearchOptions(iterations=4, gate=0.0, proposer="value")), seed=12, decisions=60
    )
    assert any(action != proposal for decision, action, proposal, _ in free if decision == Decision.BID)


def test_ismcts_is_deterministic_given_seed_and_iterations() -> None:
    first = play([FlatSearch(SearchOptions(iterations=6)), RandomAgent()], seed=5, max_decisions=40)[1]
    again = play([FlatSearch(SearchOptions(iterations=6)), RandomAgent()], seed=5, max_decisions=40)[1]
    assert first == again


@pytest.mark.parametrize("search", [FlatSearch, TreeSearch])
def test_the_heuristic_and_the_policy_default_to_a_value_agent_and_the_options_policy(
    search: type[SearchAgent],
) -> None:
    """Given explicitly, today's defaults play the same game; ``options.policy`` configures the
    default policy only, so it and a policy together are refused."""
    options = SearchOptions(iterations=3, searched=frozenset({Decision.BID, Decision.CHURCH}))
    default = play([search(options), RandomAgent()], seed=6, max_decisions=60)[1]
    explicit = search(options, heuristic=ValueAgent(), policy=RolloutPolicy())
    assert play([explicit, RandomAgent()], seed=6, max_decisions=60)[1] == default
    tuned = SearchOptions(iterations=3, policy={"denial": 0.2})
    by_options = play([search(tuned), RandomAgent()], seed=6, max_decisions=60)[1]
    given = search(SearchOptions(iterations=3), policy=RolloutPolicy(denial=0.2))
    assert play([given, RandomAgent()], seed=6, max_decisions=60)[1] == by_options
    with pytest.raises(ValueError, match="not both"):
        search(tuned, policy=RolloutPolicy())


class _Proposing(HoarderAgent):
    """A heuristic that notes every move it proposes."""

    def __init__(self) -> None:
        super().__init__()
        self.proposals: list[int] = []

    def act(self, observation: AgentObservation) -> int:
        self.proposals.append(super().act(observation))
        return self.proposals[-1]


def test_the_heuristic_given_plays_the_unsearched_decisions() -> None:
    heuristic = _Proposing()
    agent = FlatSearch(SearchOptions(iterations=2, proposer="value"), heuristic=heuristic)
    game = Game(2, seed=8)
    agent.start_game(0, 2, seed=8)
    assert heuristic.rng is agent.rng and agent.policy.rng is agent.rng
    opponent = RandomAgent()
    opponent.start_game(1, 2, seed=8)
    unsearched = 0
    while not game.is_over:
        seat = game.current_player
        legal = list(game.legal_actions())
        observation = AgentObservation(player_view(game.state, seat), legal)
        if seat == 0 and len(legal) > 1:
            proposed = len(heuristic.proposals)
            action = agent.act(observation)
            assert len(heuristic.proposals) == proposed + 1
            if observation.view.decision != Decision.BID:
                assert action == heuristic.proposals[-1]
                unsearched += 1
        else:
            action = (agent if seat == 0 else opponent).act(observation)
        game.apply(action)
    assert unsearched


@pytest.mark.parametrize("horizon", [None, 1, 3])
def test_rollouts_stop_once_horizon_gift_turns_or_auctions_have_ended(horizon: int | None) -> None:
    """:func:`play_on`, where every rollout plays on (by policy or at random), stops when the
    ``horizon``-th gift turn or auction ends, or at the end of the game."""
    state = Game(3, seed=2).state.clone()
    markers: list[tuple[int, int]] = []

    def first_legal(state: State) -> int:
        markers.append(round_marker(state))
        return rules.legal_actions(state)[0]

    steps = play_on(state, horizon, first_legal)
    assert steps == len(markers)
    ended = sum(before != after for before, after in itertools.pairwise(markers))
    if horizon is None:
        assert state.decision == Decision.NONE
    else:
        assert ended == horizon - 1 and round_marker(state) != markers[-1]


def test_ismcts_respects_its_time_budget() -> None:
    agent = FlatSearch(SearchOptions(iterations=None, time_limit=0.05, searched=frozenset({Decision.PLACE})))
    game = Game(3, seed=4)
    agent.start_game(game.current_player, 3, seed=1)
    observation = AgentObservation(player_view(game.state, game.current_player), list(game.legal_actions()))
    start = time.perf_counter()
    action = agent.act(observation)
    elapsed = time.perf_counter() - start
    assert action in observation.legal_actions
    assert elapsed < 0.05 + 0.25  # the budget plus at most one iteration's overshoot
    assert agent.last_search["iterations"] >= 1


def test_ismcts_needs_a_budget() -> None:
    with pytest.raises(ValueError, match="budget"):
        SearchOptions(iterations=None, time_limit=None)
    with pytest.raises(ValueError, match="bid_raises"):
        SearchOptions(bid_raises=(0,))
    with pytest.raises(ValueError, match="searched"):
        make_agent("ismcts", searched="bid-auction")
    with pytest.raises(ValueError, match="gate"):
        SearchOptions(gate=-1.0)


def test_bids_searched_are_pass_and_payable_raises() -> None:
    """The tree's bids: PASS and the configured raises, never above what the bidder can pay."""
    agent = FlatSearch(SearchOptions(iterations=1, bid_raises=(1, 2, 4)))
    game = Game(2, seed=3)
    while game.state.decision != Decision.BID:
        game.apply(game.legal_actions()[0])
    state = game.state
    state.hands[state.current_player] = [card for card in state.hands[state.current_player] if card < 45]
    state.hands[state.current_player] += [67, 68]  # two gold 3s: 6 coins
    card = state.auction_card
    moves = [action for _, action in agent.moves(state)]
    cap = len(state.hands[state.current_player]) if IS_GOLD[card] else 6  # a gold card is bid for in cards
    assert moves[0] == PASS
    assert all(BID_BASE < move <= BID_BASE + cap for move in moves[1:])
    assert [move - BID_BASE - state.high_bid for move in moves[1:]] == [
        r for r in (1, 2, 4) if state.high_bid + r <= cap
    ]


def test_payment_is_one_move_and_refuse_is_searched_only_on_request() -> None:
    """A payment is searched as one move (the payment policy's cards); REFUSE only with
    ``search_refuse=True``, and only at the start of the payment."""
    agent = FlatSearch(SearchOptions(iterations=1, search_refuse=True))
    game = Game(2, seed=6)
    while game.state.decision != Decision.PAY:
        legal = game.legal_actions()
        bids = [action for action in legal if BID_BASE < action <= BID_BASE + 1]
        game.apply(bids[0] if bids else legal[0])
    keys = [key for key, _ in agent.moves(game.state)]
    assert keys == [PAY_MOVE, REFUSE]
    assert [key for key, _ in FlatSearch(SearchOptions(iterations=1)).moves(game.state)] == [PAY_MOVE]
    game.apply(agent.moves(game.state)[0][1])
    if game.state.decision == Decision.PAY:  # mid-payment: keep paying
        assert [key for key, _ in agent.moves(game.state)] == [PAY_MOVE]


def decisions_on_indistinguishable_tables(
    num_players: int, positions: int = 4, searching: list | None = None, sampler: Callable | None = None
) -> list[tuple[tuple, tuple]]:
    """At the first ``positions`` bids with a choice of a random game: the seeded search's
    decision and statistics on the real table and on a table the sampler dealt from the bidder's
    view (other hidden hands, another pile order; the same view). ``searching``, if given, gets
    each table's state appended just before the agent decides on it; ``sampler``, if given,
    replaces the agent's determinization sampler."""
    from biblios_env.engine.sampling import sample_game

    game, rng, found = Game(num_players, seed=17), random.Random(0), []
    while not game.is_over and len(found) < positions:
        seat, legal = game.current_player, list(game.legal_actions())
        if game.state.decision == Decision.BID and len(legal) > 1:
            view = player_view(game.state, seat)
            twin = sample_game(view, random.Random(len(found)))
            assert twin.state.hands != game.state.hands or twin.state.draw_pile != game.state.draw_pile
            assert player_view(twin.state, seat) == view
            pair = []
            for table in (game, twin):
                if searching is not None:
                    searching.append(table.state)
                agent = FlatSearch(SearchOptions(iterations=12))
                if sampler is not None:
                    agent.sampler = sampler
                agent.start_game(seat, num_players, seed=5)
                action = agent.act(AgentObservation(player_view(table.state, seat), list(table.legal_actions())))
                pair.append((action, tuple((k, v) for k, v in agent.last_search.items() if k != "seconds")))
            found.append((pair[0], pair[1]))
        game.apply(legal[rng.randrange(len(legal))])
    assert len(found) == positions
    return found


@pytest.mark.parametrize("num_players", [2, 3])
def test_the_search_decides_from_the_view_alone(num_players: int) -> None:
    """Two tables one seat cannot tell apart get the same decision and the same search
    statistics from the same seeded agent: its samples come from the view, never the table."""
    for real, twin in decisions_on_indistinguishable_tables(num_players):
        assert real == twin


def test_a_search_that_samples_the_real_table_is_caught() -> None:
    """The check above can fail: a search whose samples are the real table (a planted leak)
    decides differently on the two tables somewhere."""
    from biblios_env.engine.sampling import sample_state

    searching: list = []

    def leaky(view, rng):
        sample_state(view, rng)  # the same generator draws as the honest search
        return searching[-1].clone()

    pairs = decisions_on_indistinguishable_tables(2, searching=searching, sampler=leaky)
    assert any(real != twin for real, twin in pairs)


def test_a_search_without_a_budget_is_refused() -> None:
    from agents import make_agent

    with pytest.raises(ValueError, match=r"^the search needs a budget: iterations, time_limit or both$"):
        make_agent("ismcts", iterations=None, time_limit=None)


def test_the_gate_weighs_determinizations_and_counts_the_effective_evidence() -> None:
    """Equal weights give the plain paired t statistic; a zero weight drops a determinization;
    one heavy state among light ones is about one state of evidence, too little to pass."""
    rewards = [[0.0, 1.0, 0.0, 1.0, 0.5], [1.0, 1.0, 0.5, 1.0, 1.0]]
    diffs = [b - a for a, b in zip(*rewards, strict=True)]
    mean = statistics.fmean(diffs)
    t = mean / (statistics.stdev(diffs) / math.sqrt(len(diffs)))
    best, z = _best_against(rewards, [1.0] * 5, 0)
    assert best == 1 and z == pytest.approx(t)
    with_a_dropped_round = [[*rewards[0], 1.0], [*rewards[1], -5.0]]
    assert _best_against(with_a_dropped_round, [1.0] * 5 + [0.0], 0) == (best, z)
    assert _best_against(rewards, [1e-9] * 4 + [1.0], 0) == (0, 0.0)
