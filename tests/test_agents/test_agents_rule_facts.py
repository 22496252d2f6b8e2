"""The agents ask the engine for the rules' facts and share one race model: the
search's bids, the rollout's gold payments and the church options agree with the engine's
homes; the race model's defaults and its two cut-offs are declared once; the search's
parameters are checked by name."""

from __future__ import annotations

import itertools
import random
from typing import Any

import pytest

from agents import make_agent
from agents.card_values import (
    HEURISTIC_ZERO_BELOW,
    ROLLOUT_ZERO_BELOW,
    SIGMA_BASE,
    SIGMA_SCALE,
    TIE_MARGIN,
    Assessment,
    RaceModel,
    church_options,
)
from agents.heuristics import HoarderAgent, ValueAgent
from agents.rollout_policy import Race, RolloutPolicy
from agents.search import FlatSearch, SearchOptions
from biblios_env.actions import BID_BASE, CHURCH_DECLINE, PASS, church_changes
from biblios_env.agent_interface import AgentObservation
from biblios_env.cards import CHURCH_IDS, GOLD_IDS_BY_VALUE, IS_GOLD, NUM_CATEGORIES, gold_value
from biblios_env.engine import Game, church
from biblios_env.engine.auctions import capacity, cheapest_cover
from biblios_env.engine.state import Decision, Phase, State
from biblios_env.engine.views import PlayerView, player_view

MONKS_CARDS = (0, 1, 2)  # category cards that are not gold, mixed into the hands


def _first_state(decision: Decision, seed: int = 0, auction_gold: bool | None = None) -> State:
    """A state at ``decision`` reached by value agents (for a PAY: on a gold card or not)."""
    for game_seed in range(seed, seed + 50):
        game = Game(num_players=2, seed=game_seed)
        agents = [ValueAgent(), ValueAgent()]
        for seat, agent in enumerate(agents):
            agent.start_game(seat, 2, seed=seat)
        while not game.is_over:
            state = game.state
            wanted_card = auction_gold is None or IS_GOLD[state.auction_card] == auction_gold
            if state.decision == decision and wanted_card:
                return state.clone()
            seat = game.current_player
            game.apply(agents[seat].act(AgentObservation(player_view(state, seat), list(game.legal_actions()))))
    raise AssertionError(f"no {decision!r} reached")


# ---------------------------------------------------------------------- payments and bids
def test_rollout_gold_payment_is_the_engines_cheapest_cover() -> None:
    """The rollout pays for a category or church card with the first card of the engine's
    cheapest cover of what it still owes (RULES §5: no change is given), or cannot pay."""
    state = _first_state(Decision.PAY, auction_gold=False)
    policy = RolloutPolicy()
    rng = random.Random(0)
    checked = 0
    for ones, twos, threes in itertools.product(range(4), repeat=3):
        golds = [*GOLD_IDS_BY_VALUE[1][:ones], *GOLD_IDS_BY_VALUE[2][:twos], *GOLD_IDS_BY_VALUE[3][:threes]]
        hand = golds + list(MONKS_CARDS)
        rng.shuffle(hand)
        in_hand_order = [card for card in hand if IS_GOLD[card]]
        for owed in range(1, 14):
            state.hands[state.current_player] = hand
            state.high_bid, state.payment_value = owed + 2, 2
            expected = cheapest_cover(in_hand_order, owed)[0] if gold_value(hand) >= owed else -1
            assert policy.payment_card(state) == expected, (hand, owed)
            checked += 1
    assert checked == 64 * 13


def test_search_bids_stop_at_what_the_engine_says_the_bidder_can_pay() -> None:
    state = _first_state(Decision.BID)
    agent = FlatSearch(SearchOptions(iterations=1, bid_raises=(1, 2, 3, 5, 8, 13, 21)))
    for gold in ([], [GOLD_IDS_BY_VALUE[1][0]], [GOLD_IDS_BY_VALUE[3][0], GOLD_IDS_BY_VALUE[2][0]]):
        state.hands[state.current_player] = gold + list(MONKS_CARDS)
        state.high_bid = 0
        bids = [action - BID_BASE for _, action in agent.moves(state) if action != PASS]
        limit = capacity(state, state.current_player)
        assert bids == [raise_ for raise_ in (1, 2, 3, 5, 8, 13, 21) if raise_ <= limit]


# ---------------------------------------------------------------------- church cards
@pytest.mark.parametrize("dice", [[1, 1, 1, 1, 1], [6, 6, 6, 6, 6], [6, 1, 3, 3, 5], [3, 3, 3, 3, 3]])
def test_church_options_are_the_engines_legal_church_actions(dice: list[int]) -> None:
    """The agents' church options are the engine's legal actions with the action table's die
    changes (RULES §4), declining first."""
    for card in CHURCH_IDS:
        options = church_options(card, dice)
        assert [action for action, _ in options] == church.options(card, dice)
        assert options[0] == (CHURCH_DECLINE, ())
        for action, changes in options:
            assert changes == church_changes(action, card)


# ---------------------------------------------------------------------- the race model
class _Race(RaceModel):
    """A race model with every number given (one category)."""

    def __init__(self, future: float, sigma: float, tie_margin: float, zero_below: float) -> None:
        self.future, self.sigma, self.tie_margin, self.zero_below = [future], [sigma], tie_margin, zero_below


def test_race_model_chances_follow_the_lead_and_the_letter() -> None:
    race = _Race(future=5.0, sigma=1.0, tie_margin=0.4, zero_below=-30.0)
    assert race.win_chance(0, 4, 3, 4, 5) > 0.5 > race.win_chance(0, 4, 5, 4, 3)  # the earlier letter wins ties
    assert race.win_chance(0, 6, 3, 4, 5) > race.win_chance(0, 5, 3, 4, 5)
    assert race.win_chance(0, 0, 9, 0, 9) < 0.5  # nothing held yet, but cards are still to come
    assert _Race(0.0, 1.0, 0.4, -30.0).win_chance(0, 0, 9, 0, 9) == 0.0  # nobody wins an empty category


def _race_models() -> dict[str, RaceModel]:
    """One of each race model, on the first position of a game."""
    game = Game(2, seed=0)
    return {
        "Assessment": Assessment(player_view(game.state, 0)),
        "Race": Race(game.state, SIGMA_BASE, SIGMA_SCALE, TIE_MARGIN, dead=[0] * NUM_CATEGORIES),
    }


@pytest.mark.parametrize(("model", "cut_off"), [("Assessment", HEURISTIC_ZERO_BELOW), ("Race", ROLLOUT_ZERO_BELOW)])
def test_each_race_model_counts_a_lead_below_its_cut_off_as_lost(model: str, cut_off: float) -> None:
    """The heuristics and the rollout policy keep their own cut-offs (named, not copied)."""
    zero_below = _race_models()[model].zero_below
    assert zero_below == cut_off
    race = _Race(future=5.0, sigma=1.0, tie_margin=0.0, zero_below=zero_below)
    assert race.win_chance(0, 1, 0, 1 - cut_off + 0.01, 9) == 0.0
    assert race.win_chance(0, 1, 0, 1 - cut_off - 0.01, 9) > 0.0


def test_the_race_model_defaults_are_declared_once() -> None:
    expected = {"sigma_base": SIGMA_BASE, "sigma_scale": SIGMA_SCALE, "tie_margin": TIE_MARGIN}
    for agent in (ValueAgent(), HoarderAgent()):
        assert {name: agent.params[name] for name in expected} == expected
    policy = RolloutPolicy()
    assert {name: getattr(policy, name) for name in expected} == expected
    view = player_view(_first_state(Decision.BID), 0)
    defaults, explicit = Assessment(view), Assessment(view, sigma_base=SIGMA_BASE, sigma_scale=SIGMA_SCALE)
    assert defaults.sigma == explicit.sigma and defaults.tie_margin == TIE_MARGIN


# ---------------------------------------------------------------------- the coin value
def _views_in_both_phases() -> tuple[PlayerView, PlayerView]:
    gift = player_view(_first_state(Decision.PLACE), 0)
    auction = player_view(_first_state(Decision.BID), 0)
    assert gift.phase == Phase.GIFT and auction.phase == Phase.AUCTION
    return gift, auction


def test_the_coin_value_is_kept_for_one_assessment_only() -> None:
    """A coin is worth ``gold_value`` in the gifts and the pacing value in the auctions: the
    value worked out for one decision is not reused at the next."""
    agent = ValueAgent()
    gift, auction = _views_in_both_phases()
    auction_assessment = agent.assess(auction)
    pacing = agent.auction_coin_value(auction, auction_assessment)
    assert pacing != agent.gold_value
    assert agent.coin_value(gift, agent.assess(gift)) == agent.gold_value
    assert agent.coin_value(auction, auction_assessment) == pacing
    assert agent.coin_value(auction, auction_assessment) == pacing  # from the cache


# ---------------------------------------------------------------------- the search's parameters
@pytest.mark.parametrize(
    ("params", "named"),
    [
        ({"iterations": 0}, "iterations"),
        ({"iterations": True}, "iterations"),
        ({"iterations": None}, "budget"),
        ({"time_limit": 0}, "time_limit"),
        ({"min_iterations": 1}, "min_iterations"),
        ({"consistency_tries": 0}, "consistency_tries"),
        ({"decisive": -1}, "decisive"),
        ({"opponent_model": "oracle"}, "opponent_model"),
        ({"mode": "deep"}, "mode"),
        ({"rollout": "greedy"}, "rollout"),
        ({"horizon": 0}, "horizon"),
        ({"bid_raises": "0-1"}, "bid_raises"),
        ({"searched": "bid-dance"}, "searched"),
        ({"gate": -0.5}, "gate"),
    ],
)
def test_ismcts_names_a_bad_parameter(params: dict[str, Any], named: str) -> None:
    with pytest.raises(ValueError, match=named):
        make_agent("ismcts", **params)


@pytest.mark.parametrize(
    ("options", "named"),
    [
        ({"iterations": 0}, "iterations"),
        ({"iterations": True}, "iterations"),
        ({"iterations": None}, "budget"),
        ({"time_limit": 0}, "time_limit"),
        ({"min_iterations": 1}, "min_iterations"),
        ({"consistency_tries": 0}, "consistency_tries"),
        ({"decisive": -1}, "decisive"),
        ({"horizon": 0}, "horizon"),
        ({"bid_raises": (0, 1)}, "bid_raises"),
        ({"gate": -0.5}, "gate"),
    ],
)
def test_search_options_name_a_bad_value(options: dict[str, Any], named: str) -> None:
    with pytest.raises(ValueError, match=named):
        SearchOptions(**options)


def test_ismcts_reads_command_line_lists() -> None:
    options = make_agent("ismcts", bid_raises="4-1/1", searched="bid/church-place", horizon=2, time_limit=1).options
    assert options.bid_raises == (1, 4)
    assert options.searched == {Decision.BID, Decision.CHURCH, Decision.PLACE}
    assert (options.iterations, options.time_limit, options.horizon) == (60, 1.0, 2)
