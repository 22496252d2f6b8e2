"""The beliefs of agents/belief.py deal only states the seat cannot tell from the real one, read
only the seat's views, follow the gold an opponent pays in the open, and the measurement command
runs."""

from __future__ import annotations

import random
from collections.abc import Callable

import numpy as np
import pytest

from agents import make_agent
from agents.belief import (
    AuctionRecord,
    BidBelief,
    LimitBounds,
    PlainBelief,
    bids_in_gold,
    hidden_gold,
    make_belief,
    systematic_resample,
)
from biblios_env.cards import gold_value
from biblios_env.engine import Game
from biblios_env.engine.sampling import sample_game
from biblios_env.engine.state import State
from biblios_env.engine.views import PlayerView, player_view
from experiments.common.match import seat_observation
from experiments.studies import belief_error

#: Small budgets: the tests check what the belief deals, not how well.
SMALL: dict = {"candidates": 12, "record_samples": 8}


def table(state: State) -> tuple:
    """Everything a sample deals: where each card is."""
    return (
        tuple(map(tuple, state.hands)),
        tuple(map(tuple, state.private_discard)),
        tuple(state.removed),
        tuple(state.draw_pile),
        tuple(state.auction_pile),
    )


def value_game_until(seed: int, num_players: int, stop: Callable[[Game, PlayerView], bool], belief: BidBelief) -> Game:
    """Play ``value`` seats from deal ``seed``, showing seat 0's views to ``belief``, up to the
    first decision of seat 0 at which ``stop(game, view)`` holds (the belief has seen that view)."""
    game = Game(num_players, seed=seed)
    agents = [make_agent("value") for _ in range(num_players)]
    for seat, agent in enumerate(agents):
        agent.start_game(seat, num_players, seed=seat)
    belief.start_game(0, num_players)
    while not game.is_over:
        observation = seat_observation(game)
        if game.current_player == 0:
            belief.observe(observation.view)
            if stop(game, observation.view):
                return game
        game.apply(agents[game.current_player].act(observation))
    raise AssertionError(f"game {seed} ended before the stop condition")


def after_auctions(belief: BidBelief, count: int) -> Callable[[Game, PlayerView], bool]:
    """Seat 0 bids on a gold-bid card after watching the bidding of ``count`` earlier auctions."""
    return lambda game, view: bids_in_gold(view) and len(belief.records) > count


@pytest.mark.parametrize("num_players", [2, 3])
def test_samples_agree_with_everything_the_seat_saw(num_players: int) -> None:
    """Every state the belief deals gives the seat exactly its view: its hand, the public cards,
    every count (the hard constraints of card counting)."""
    belief = BidBelief(**SMALL)
    game = value_game_until(31, num_players, after_auctions(belief, 4), belief)
    view = player_view(game.state, 0)
    assert len(belief.records) >= 3
    states = belief.sample_states(view, np.random.default_rng(1), 6)
    assert len(states) == 6
    for state in states:
        assert player_view(state, 0) == view
    drawn, weights = belief.weighted_states(view, np.random.default_rng(2), 6)  # unresampled, weighted
    assert all(player_view(state, 0) == view for state in drawn)
    assert weights == belief.weights(view, drawn) and max(weights) == 1.0 and len(weights) == 6


def test_weights_reward_states_that_agree_with_the_bids() -> None:
    """A past auction in which the opponent bid 6 favours states with more hidden gold: in the
    record, only states with at least 6 hidden coins had a limit of 6 or more."""
    samples = {1: [(gold, gold) for gold in range(12)]}
    record = AuctionRecord((0, 0, (False, False)), samples, {1: LimitBounds(low=6)}, [0, 0])
    low, high = (record.likelihood(1, gold, bandwidth=1.0, prior_weight=1.0) for gold in (2, 9))
    assert high > 4 * low


def test_systematic_resampling_follows_the_weights() -> None:
    rng = np.random.default_rng(0)
    assert systematic_resample([0.0, 1.0, 0.0], 5, rng) == [1] * 5
    assert sorted(set(systematic_resample([1.0, 1.0, 2.0], 4, rng))) == [0, 1, 2]
    with pytest.raises(ValueError, match="positive sum"):
        systematic_resample([0.0, 0.0], 3, rng)


def credit_errors(seed: int) -> list[int]:
    """In a ``value`` game from deal ``seed``, at every decision of seat 0 and for every earlier
    auction in which the opponent discarded nothing face down since: its true hidden gold then less
    (its true hidden gold now plus the hidden gold the belief saw it pay in the open since)."""
    belief = BidBelief(record_samples=1)
    belief.start_game(0, 2)
    game = Game(2, seed=seed)
    agents = [make_agent("value") for _ in range(2)]
    for seat, agent in enumerate(agents):
        agent.start_game(seat, 2, seed=seat)
    truth: dict[int, int] = {}
    errors = []
    while not game.is_over:
        observation = seat_observation(game)
        view = observation.view
        if game.current_player == 0:
            known = len(belief.records)
            belief.observe(view)
            now = hidden_gold(game.state, view, 1)
            if len(belief.records) > known:
                truth[id(belief.records[-1])] = now
            for record in belief.records[:-1]:
                if record.face_down_counts[1] == view.face_down_counts[1]:
                    errors.append(truth[id(record)] - now - record.paid_since.get(1, 0))
        game.apply(agents[game.current_player].act(observation))
    return errors


def test_gold_paid_in_the_open_is_credited_to_every_earlier_auction() -> None:
    """The opponent's hidden gold at a past auction is its hidden gold now plus the hidden gold it
    paid in the open since, exactly, as long as it discarded nothing face down in between."""
    errors = credit_errors(44) + credit_errors(51)  # deals with gold cards nobody bid for
    assert len(errors) > 50
    assert set(errors) == {0}


def indistinguishable_outputs(belief: BidBelief, leak: list[State]) -> tuple[tuple, tuple]:
    """The belief's samples on the real table and on a twin the seat cannot tell apart (another
    deal of every hidden card, the same views), from the same generator state. ``leak`` gets the
    table's state appended before each call, for a planted leak to read."""
    game = value_game_until(23, 2, after_auctions(belief, 5), belief)
    view = player_view(game.state, 0)
    twins = (sample_game(view, random.Random(seed)).state for seed in range(20))
    twin = next(state for state in twins if gold_value(state.hands[1]) != gold_value(game.state.hands[1]))
    assert player_view(twin, 0) == view
    outputs = []
    for state in (game.state, twin):
        leak.append(state)
        samples = belief.sample_states(player_view(state, 0), np.random.default_rng(7), 6)
        outputs.append(tuple(map(table, samples)))
    return outputs[0], outputs[1]


def test_the_belief_reads_only_the_views() -> None:
    real, twin = indistinguishable_outputs(BidBelief(**SMALL), [])
    assert real == twin


def test_a_belief_that_reads_the_table_is_caught() -> None:
    """The check above can fail: a belief whose weights favour states near the real opponent's
    gold (a planted leak) deals differently on the two tables."""
    leak: list[State] = []

    class Leaky(BidBelief):
        def weights(self, view: PlayerView, states: list[State]) -> list[float]:
            truth = gold_value(leak[-1].hands[1])
            return [1.0 if gold_value(state.hands[1]) == truth else 1e-3 for state in states]

    real, twin = indistinguishable_outputs(Leaky(**SMALL), leak)
    assert real != twin


def test_plain_belief_is_the_sampler() -> None:
    belief = make_belief("none")
    assert isinstance(belief, PlainBelief)
    game = Game(2, seed=5)
    view = player_view(game.state, 0)
    states = belief.sample_states(view, np.random.default_rng(2), 3)
    assert all(player_view(state, 0) == view for state in states)


def test_bad_settings_are_named() -> None:
    with pytest.raises(ValueError, match="unknown belief 'oracle'"):
        make_belief("oracle")
    with pytest.raises(ValueError, match="candidates must be a positive integer, got 0"):
        BidBelief(candidates=0)
    with pytest.raises(ValueError, match="mismatch must be a weight in \\[0, 1\\], got 2"):
        BidBelief(mismatch=2)
    belief = BidBelief()
    belief.start_game(1, 2)
    with pytest.raises(ValueError, match="belief of seat 1 at 2 players shown the view of seat 0"):
        belief.observe(player_view(Game(2, seed=1).state, 0))


def test_the_measurement_command_runs(capsys: pytest.CaptureFixture[str]) -> None:
    """A smoke run of ``python -m experiments.studies.belief_error`` on one short game per belief."""
    assert belief_error.main(["--games", "1", "--samples", "2", "--belief", "none", "bids", "--no-progress"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert [line.split(":")[0] for line in lines] == ["belief none", "belief bids"]
    assert all("limit MAE" in line and "decisions of 1 games" in line for line in lines)
    own_views = ["--games", "1", "--samples", "2", "--belief", "bids", "--views", "own", "--no-progress"]
    assert belief_error.main(own_views) == 0
    assert "belief bids: limit MAE" in capsys.readouterr().out
