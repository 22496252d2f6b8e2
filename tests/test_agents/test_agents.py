"""The agents package: legality over seeded games, determinism, the registry, and each
heuristic decision on a small hand-made view where the right choice is clear."""

from __future__ import annotations

from dataclasses import replace

import pytest

from agents import AGENTS, HoarderAgent, RandomAgent, ValueAgent, make_agent
from agents.card_values import Assessment, assignment_patterns, church_options
from biblios_env.actions import (
    AUCTION,
    BID_BASE,
    CHURCH_DECLINE,
    COMMON,
    KEEP,
    PASS,
    REFUSE,
    bid,
    church_one,
    church_two,
    pay,
    take,
)
from biblios_env.agent_interface import Agent, AgentObservation
from biblios_env.cards import DIE_MAX, IS_GOLD
from biblios_env.engine import Game
from biblios_env.engine.state import Decision, Phase
from biblios_env.engine.views import PlayerView, player_view

HEURISTICS = (ValueAgent, HoarderAgent)

# Card ids (RULES §1): category c holds 9c..9c+8 (letters A..I); gold 45-55 / 56-66 / 67-77.
MONKS_2_A, MONKS_2_B, MONKS_3_E, MONKS_3_F, MONKS_4_H, MONKS_4_I = 0, 1, 4, 5, 7, 8
PIGMENTS_2_A, PIGMENTS_3_E, PIGMENTS_4_H, PIGMENTS_4_I = 9, 13, 16, 17
HOLY_BOOKS_1_A, HOLY_BOOKS_1_B = 18, 19
TOMES = tuple(range(36, 45))  # Forbidden Tomes A..I
GOLD_1, GOLD_1B, GOLD_2, GOLD_3, GOLD_3B = 45, 46, 56, 67, 68
CHURCH_ONE_UP, CHURCH_ONE_DOWN, CHURCH_TWO_UP = 78, 80, 82


def play_game(agents, num_players, seed, refusals=None, **options) -> Game:
    """Play one game, checking every chosen action against the legal list; counts each
    seat's voluntary refusals (REFUSE chosen while paying was possible) in ``refusals``."""
    game = Game(num_players, seed=seed, **options)
    for seat, agent in enumerate(agents):
        agent.start_game(seat, num_players, seed=seed * 7 + seat)
    while not game.is_over:
        seat = game.current_player
        legal = game.legal_actions()
        action = agents[seat].act(AgentObservation(player_view(game.state, seat), legal))
        assert action in legal, f"{agents[seat].name} at seat {seat} chose illegal action {action}"
        if refusals is not None and action == REFUSE and len(legal) > 1:
            refusals[seat] += 1
        game.apply(action)
    return game


# ---------------------------------------------------------------------- legality over games
@pytest.mark.parametrize("num_players", [2, 3, 4])
@pytest.mark.parametrize(
    ("penalty", "strict_bids"), [("standard", False), ("bluffs", False), ("standard", True), ("bluffs", True)]
)
def test_agents_only_play_legal_actions(num_players, penalty, strict_bids):
    lineups = [
        ["value", "hoarder", "random", "value"],
        ["random", "random", "hoarder", "hoarder"],
        ["hoarder", "value", "value", "random"],
    ]
    for seed, lineup in enumerate(lineups):
        agents = [make_agent(name) for name in lineup[:num_players]]
        refusals = [0] * num_players
        game = play_game(
            agents, num_players, 100 * num_players + seed, refusals, penalty=penalty, strict_bids=strict_bids
        )
        assert game.state.phase == Phase.END
        # The heuristics never bid more than they can pay, so they never take the penalty by choice.
        assert all(count == 0 for agent, count in zip(agents, refusals) if agent.name != "random")


@pytest.mark.parametrize("num_players", [2, 3, 4])
def test_random_agent_only_plays_legal_actions_over_many_games(num_players):
    for seed in range(20):
        play_game([RandomAgent() for _ in range(num_players)], num_players, seed=seed, strict_bids=seed % 2 == 1)


@pytest.mark.parametrize("num_players", [2, 3, 4])
def test_heuristics_beat_random(num_players):
    """A smoke test of strength: each heuristic wins nearly every game against random players."""
    for cls in HEURISTICS:
        wins = 0
        for seed in range(num_players):
            agents = [RandomAgent() for _ in range(num_players)]
            agents[seed % num_players] = cls()
            game = play_game(agents, num_players, seed=500 + seed)
            wins += (seed % num_players) in game.state.winners
        assert wins >= num_players - 1, f"{cls.name} won only {wins} of {num_players} games against random"


# ---------------------------------------------------------------------- determinism
@pytest.mark.parametrize("name", ["random", "value", "hoarder"])
def test_same_seeds_give_the_same_game(name):
    histories = []
    for _ in range(2):
        game = play_game([make_agent(name) for _ in range(3)], 3, seed=42)
        histories.append(list(game.history))
    assert histories[0] == histories[1]


def test_agent_seed_changes_random_choices():
    games = []
    for agent_seed in (1, 2):
        game = Game(2, seed=3)
        agents = [RandomAgent(), RandomAgent()]
        for seat, agent in enumerate(agents):
            agent.start_game(seat, 2, seed=agent_seed)
        while not game.is_over:
            seat = game.current_player
            game.apply(agents[seat].act(AgentObservation(player_view(game.state, seat), game.legal_actions())))
        games.append(game.history)
    assert games[0] != games[1]


# ---------------------------------------------------------------------- registry
def test_registry_names_and_protocol():
    assert {"random", "value", "hoarder", "ismcts"} <= set(AGENTS)
    for name in ("random", "value", "hoarder"):
        agent = make_agent(name)
        assert isinstance(agent, Agent)
        assert agent.name == name


def test_ismcts_is_registered_and_imported_lazily():
    assert make_agent("ismcts").name == "ismcts"
    with pytest.raises(ValueError, match=r"unknown parameter.*'colour'"):
        make_agent("ismcts", colour="red")


def test_ismcts_spec_defaults_are_the_search_defaults_and_mode_picks_the_search():
    """The defaults --list-agents shows for ``ismcts``, given explicitly, build the default search."""
    from agents.search import FlatSearch, SearchOptions, TreeSearch
    from agents.search.options import SPEC_DEFAULTS

    for agent in (make_agent("ismcts"), make_agent("ismcts", **SPEC_DEFAULTS)):
        assert type(agent) is FlatSearch and agent.options == SearchOptions() and agent.seed is None
    assert type(make_agent("ismcts", mode="tree", seed=3)) is TreeSearch


def test_make_agent_passes_parameters():
    agent = make_agent("value", denial=0.1, placement_samples=3)
    assert agent.denial == 0.1 and agent.placement_samples == 3
    assert make_agent("hoarder", focus=3).focus == 3


def test_make_agent_rejects_unknown_agent_listing_known_ones():
    with pytest.raises(ValueError, match=r"unknown agent 'nope'.*hoarder.*random.*value"):
        make_agent("nope")


@pytest.mark.parametrize("name", ["random", "value", "hoarder"])
def test_make_agent_rejects_unknown_parameter(name):
    with pytest.raises(ValueError, match=r"unknown parameter.*'colour'"):
        make_agent(name, colour="red")


def test_hoarder_parameters_are_not_value_parameters():
    with pytest.raises(ValueError, match="focus"):
        make_agent("value", focus=2)


# ---------------------------------------------------------------------- helpers
def test_assignment_patterns_respect_quotas():
    patterns = assignment_patterns((1, 1, 2))
    assert len(patterns) == 12
    assert all(sorted(pattern) == [0, 1, 2, 2] for pattern in patterns)


def test_church_options_never_leave_one_to_six():
    dice = [6, 1, 3, 3, 3]
    for card in (CHURCH_ONE_UP, CHURCH_ONE_DOWN, CHURCH_TWO_UP, 84, 86):
        for _action, deltas in church_options(card, dice):
            for category, delta in deltas:
                assert 1 <= dice[category] + delta <= DIE_MAX


# ---------------------------------------------------------------------- hand-made views
def make_view(**fields) -> PlayerView:
    """A two-player auction-phase view of seat 0, overridden by ``fields``."""
    base = {
        "num_players": 2,
        "seat": 0,
        "phase": Phase.AUCTION,
        "decision": Decision.BID,
        "current_player": 0,
        "active_player": 1,
        "first_player": 0,
        "dice": [3, 3, 3, 3, 3],
        "hand": [],
        "drawn_card": -1,
        "kept_card": -1,
        "quota": (0, 0, 0),
        "common_area": [],
        "own_auction_cards": [],
        "auction_card": -1,
        "church_card": -1,
        "high_bid": 0,
        "high_bidder": -1,
        "passed": [False, False],
        "excluded": [False, False],
        "payment_cards": [],
        "payment_count": 0,
        "payment_value": 0,
        "public_discard": [],
        "own_face_down_discard": [],
        "opponent_cards": [[]],
        "hand_sizes": [0, 0],
        "draw_pile_size": 0,
        "auction_pile_size": 5,
    }
    base.update(fields)
    # The view's read-only fields are tuples (the compiled build checks the declared types).
    for name in ("dice", "quota", "common_area", "own_auction_cards", "public_discard", "own_face_down_discard"):
        base[name] = tuple(base[name])
    base["opponent_cards"] = [tuple(cards) for cards in base["opponent_cards"]]
    base["hand"] = sorted(base["hand"])
    if "hand_sizes" not in fields:
        base["hand_sizes"] = [len(base["hand"]), len(base["opponent_cards"][0])]
    return PlayerView(**base)


def decide(agent, view: PlayerView, legal: list[int]) -> int:
    agent.start_game(view.seat, view.num_players, seed=0)
    action = agent.act(AgentObservation(view, legal))
    assert action in legal
    return action


@pytest.mark.parametrize("cls", HEURISTICS)
def test_pays_a_bid_of_two_with_gold_two_rather_than_gold_three(cls):
    view = make_view(
        decision=Decision.PAY, auction_card=MONKS_4_I, high_bid=2, high_bidder=0, hand=[GOLD_2, GOLD_3, MONKS_3_E]
    )
    assert decide(cls(), view, [pay(GOLD_2), pay(GOLD_3), REFUSE]) == pay(GOLD_2)


@pytest.mark.parametrize("cls", HEURISTICS)
def test_pays_for_a_gold_card_with_the_least_useful_card(cls):
    # The opponent holds most Forbidden Tomes, so our single Forbidden Tome is worthless;
    # gold is still needed for the auctions to come.
    view = make_view(
        decision=Decision.PAY,
        auction_card=GOLD_3B,
        high_bid=1,
        high_bidder=0,
        hand=[GOLD_3, MONKS_4_I, TOMES[8]],
        opponent_cards=[list(TOMES[:6])],
        auction_pile_size=8,
    )
    legal = [*sorted(pay(card) for card in view.hand), REFUSE]
    assert decide(cls(), view, legal) == pay(TOMES[8])


@pytest.mark.parametrize("cls", HEURISTICS)
def test_never_bids_more_than_it_can_pay(cls):
    # The last auction: Monks 4 would decide Monks, but only one coin is in hand.
    view = make_view(
        hand=[GOLD_1, MONKS_3_E],
        auction_card=MONKS_4_I,
        opponent_cards=[[MONKS_4_H, MONKS_2_A]],
        auction_pile_size=0,
    )
    legal = [PASS, *range(BID_BASE + 1, BID_BASE + 67)]
    assert decide(cls(), view, legal) == bid(1)
    raised = replace(view, high_bid=1, high_bidder=1)
    assert decide(cls(), raised, [PASS, *range(BID_BASE + 2, BID_BASE + 67)]) == PASS


@pytest.mark.parametrize("cls", HEURISTICS)
def test_bids_cards_for_gold_within_its_hand(cls):
    view = make_view(hand=[TOMES[8], HOLY_BOOKS_1_A], auction_card=GOLD_3, opponent_cards=[list(TOMES[:6])])
    action = decide(cls(), view, [PASS, *range(BID_BASE + 1, BID_BASE + 67)])
    assert action == PASS or action - BID_BASE <= len(view.hand)


@pytest.mark.parametrize("cls", HEURISTICS)
def test_church_raises_a_die_it_is_winning_but_never_to_seven(cls):
    # We lead Monks (die already 6) and Pigments; +1 must go to Pigments.
    view = make_view(
        decision=Decision.CHURCH,
        church_card=CHURCH_ONE_UP,
        dice=[6, 3, 3, 3, 3],
        hand=[MONKS_4_I, MONKS_4_H, PIGMENTS_4_I, PIGMENTS_4_H],
        opponent_cards=[[HOLY_BOOKS_1_A]],
    )
    legal = [CHURCH_DECLINE] + [church_one(c, 1) for c in range(1, 5)]
    assert decide(cls(), view, legal) == church_one(1, 1)


@pytest.mark.parametrize("cls", HEURISTICS)
def test_church_lowers_the_die_of_a_category_the_opponent_wins(cls):
    view = make_view(
        decision=Decision.CHURCH,
        church_card=CHURCH_ONE_DOWN,
        dice=[3, 5, 3, 3, 3],
        hand=[MONKS_4_I, MONKS_4_H],
        opponent_cards=[[PIGMENTS_4_I, PIGMENTS_4_H, PIGMENTS_3_E]],
    )
    legal = [CHURCH_DECLINE] + [church_one(c, -1) for c in range(5)]
    assert decide(cls(), view, legal) == church_one(1, -1)


@pytest.mark.parametrize("cls", HEURISTICS)
def test_two_dice_church_card_raises_both_categories_it_leads(cls):
    view = make_view(
        decision=Decision.CHURCH,
        church_card=CHURCH_TWO_UP,
        hand=[MONKS_4_I, MONKS_4_H, PIGMENTS_4_I, PIGMENTS_4_H],
        opponent_cards=[[36, 37, 38, 39]],
    )
    from biblios_env.actions import CATEGORY_PAIRS

    legal = [CHURCH_DECLINE] + [church_two(a, b) for a, b in CATEGORY_PAIRS]
    assert decide(cls(), view, legal) == church_two(0, 1)


@pytest.mark.parametrize("cls", HEURISTICS)
def test_takes_the_obviously_best_common_area_card(cls):
    # 3 players, gift phase: Monks 4 turns a lost Monks race into a lead; Holy Books 1 is noise.
    view = make_view(
        num_players=3,
        phase=Phase.GIFT,
        decision=Decision.TAKE,
        hand=[MONKS_3_E, MONKS_3_F],
        common_area=[HOLY_BOOKS_1_B, MONKS_4_I],
        opponent_cards=[[MONKS_4_H, MONKS_2_A], []],
        hand_sizes=[2, 2, 0],
        passed=[False] * 3,
        excluded=[False] * 3,
        draw_pile_size=30,
        auction_pile_size=3,
    )
    assert decide(cls(), view, [take(HOLY_BOOKS_1_B), take(MONKS_4_I)]) == take(MONKS_4_I)
    gold = replace(view, common_area=(GOLD_1, GOLD_3), hand=[])
    assert decide(cls(), gold, [take(GOLD_1), take(GOLD_3)]) == take(GOLD_3)


@pytest.mark.parametrize("cls", HEURISTICS)
def test_keeps_a_card_that_wins_its_race(cls):
    view = make_view(
        phase=Phase.GIFT,
        decision=Decision.PLACE,
        drawn_card=MONKS_4_I,
        quota=(1, 1, 1),
        hand=[MONKS_4_H, MONKS_3_E],
        opponent_cards=[[MONKS_3_F, MONKS_2_A]],
        draw_pile_size=20,
        auction_pile_size=4,
    )
    assert decide(cls(), view, [KEEP, AUCTION, COMMON]) == KEEP


@pytest.mark.parametrize("cls", HEURISTICS)
def test_last_card_of_a_turn_does_not_go_to_the_opponent_when_it_helps_them(cls):
    # Two players: the single common-area card goes straight to the opponent, who is racing us in Monks.
    view = make_view(
        phase=Phase.GIFT,
        decision=Decision.PLACE,
        drawn_card=MONKS_4_I,
        quota=(0, 1, 1),
        hand=[MONKS_3_E, MONKS_3_F],
        opponent_cards=[[MONKS_4_H, MONKS_2_A]],
        draw_pile_size=20,
        auction_pile_size=4,
    )
    assert decide(cls(), view, [AUCTION, COMMON]) == AUCTION


@pytest.mark.parametrize("cls", HEURISTICS)
def test_refuses_only_when_it_cannot_pay(cls):
    view = make_view(decision=Decision.PAY, auction_card=MONKS_4_I, high_bid=2, high_bidder=0, hand=[GOLD_3])
    assert decide(cls(), view, [pay(GOLD_3), REFUSE]) == pay(GOLD_3)
    assert decide(cls(), replace(view, hand=[GOLD_1]), [REFUSE]) == REFUSE


def test_assessment_counts_unseen_cards_and_opponent_holdings():
    view = make_view(hand=[MONKS_4_I, GOLD_3], opponent_cards=[[MONKS_4_H]], public_discard=[GOLD_1])
    assessment = Assessment(view)
    assert assessment.totals[0] == 4 and assessment.gold == 3
    assert len(assessment.unseen) == 87 - 4
    assert assessment.opponent_totals[0][0] == 4
    assert not any(IS_GOLD[card] and card in (GOLD_1, GOLD_3) for card in assessment.unseen)
    # We hold letter I, they hold H: on a tie they win Monks, so we are the underdog.
    assert assessment.p_win[0] < 0.5


def test_hoarder_focuses_on_the_categories_it_holds():
    agent = HoarderAgent()
    agent.start_game(0, 2, seed=0)
    view = make_view(hand=[HOLY_BOOKS_1_A, HOLY_BOOKS_1_B, 27, 28, 29])
    assert agent.focus_categories(view) == (2, 3)


# ----------------------------------------------------------------------------- ppo at other player counts
def test_ppo_warns_once_per_process_and_count_when_it_plays_a_count_it_was_not_trained_for(monkeypatch):
    """The shipped policy was trained for 2 players: at 3 it still plays a whole legal game, and
    says once per process (and player count) that it was not trained for it."""
    import warnings

    import agents.ppo_agent as ppo_agent
    from experiments.common.match import play_game

    monkeypatch.setattr(ppo_agent, "_WARNED_COUNTS", set())
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # any warning here fails the test
        make_agent("ppo").start_game(0, 2, seed=1)
    with pytest.warns(UserWarning) as caught:
        result = play_game([make_agent("ppo"), RandomAgent(), RandomAgent()], 7, labels=["ppo", "r1", "r2"])
        play_game([RandomAgent(), make_agent("ppo"), RandomAgent()], 8, labels=["r0", "ppo", "r2"])
    assert [str(warning.message) for warning in caught] == [
        f"ppo: the policy {ppo_agent.DEFAULT_POLICY} was trained for 2 players, not 3: it plays 3-player games "
        "without training for them (warned once per process)"
    ]
    assert len(result.vp) == 3 and result.actions > 0
    with pytest.warns(UserWarning, match="trained for 2 players, not 4: it plays 4-player games"):
        make_agent("ppo").start_game(0, 4, seed=1)
