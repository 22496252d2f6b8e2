"""The declared game facts (biblios_env.engine.facts) hold in play: gift turns and auctions per
game, the maximum game length, the VP maximum and the reward bounds of both reward schemes."""

from __future__ import annotations

import random

import pytest

from biblios_env import raw_env
from biblios_env.actions import NUM_ACTIONS
from biblios_env.cards import NUM_CATEGORIES
from biblios_env.engine import Decision, Game, Phase
from biblios_env.engine.facts import MAX_GAME_LENGTH, MAX_VICTORY_POINTS, REWARD_BOUNDS, ZERO_SUM, game_info
from biblios_env.engine.scoring import REWARDS, rewards
from biblios_env.engine.setup import DECK_SIZE, GIFT_TURNS, PLAYER_COUNTS


def _play(num_players: int, seed: int, **options: object) -> tuple[Game, int, int]:
    """A random game shown every decision (forced ones too); returns it with the gift turns and
    the cards auctioned (a new card always gets at least one bid or pass, RULES §5)."""
    game = Game(num_players, seed=seed, auto_forced=False, **options)
    chooser = random.Random(seed)
    turns, active, auctioned = 0, -1, set()
    while not game.is_over:
        state = game.state
        if state.phase == Phase.GIFT and state.active_player != active:
            turns, active = turns + 1, state.active_player
        if state.decision == Decision.BID:
            auctioned.add(state.auction_card)
        legal = game.legal_actions()
        game.apply(legal[chooser.randrange(len(legal))])
    return game, turns, len(auctioned)


@pytest.mark.parametrize("num_players", PLAYER_COUNTS)
def test_game_info_collects_the_declared_facts(num_players: int) -> None:
    info = game_info(num_players)
    assert info.num_distinct_actions == NUM_ACTIONS == 266
    assert info.deck_size == DECK_SIZE[num_players] == info.gift_turns * (num_players + 1)
    assert info.gift_turns == GIFT_TURNS[num_players] == {2: 20, 3: 18, 4: 16}[num_players]
    assert info.max_game_length == MAX_GAME_LENGTH[num_players]
    assert info.reward_bounds == {"win": (-1.0, 1.0), "vp": (-22.0, 22.0)}
    assert info.zero_sum == {"win": True, "vp": False}
    with pytest.raises(ValueError, match="num_players must be 2, 3 or 4, got 5"):
        game_info(5)


@pytest.mark.parametrize("num_players", PLAYER_COUNTS)
def test_random_games_keep_to_the_declared_facts(num_players: int) -> None:
    for seed in range(12):
        options = {"penalty": "bluffs" if seed % 2 else "standard", "strict_bids": seed % 3 == 0}
        game, turns, auctions = _play(num_players, seed, **options)
        # One card goes to the auction pile per gift turn; each is revealed once (RULES §3, §5).
        assert turns == auctions == GIFT_TURNS[num_players], (seed, turns, auctions)
        assert len(game.history) <= MAX_GAME_LENGTH[num_players]
        assert sum(game.state.dice) <= MAX_VICTORY_POINTS and max(game.state.vp) <= MAX_VICTORY_POINTS
        for reward in REWARDS:
            paid = rewards(reward, game.state.vp, game.state.winners)
            low, high = REWARD_BOUNDS[reward]
            assert all(low <= value <= high for value in paid), (reward, paid)
            if ZERO_SUM[reward]:
                assert sum(paid) == pytest.approx(0.0)


def test_the_victory_point_maximum_is_every_raise_on_five_dice() -> None:
    """5 dice start at 3 (RULES §2); church cards can raise them by 7 in all (RULES §4)."""
    assert MAX_VICTORY_POINTS == 3 * NUM_CATEGORIES + 7 == 22


@pytest.mark.parametrize(
    ("reward", "vp", "winners", "expected"),
    [
        ("win", [5, 3], [0], [1.0, -1.0]),
        ("win", [5, 5, 1], [0, 1], [0.5, 0.5, -1.0]),
        ("win", [4, 4], [0, 1], [0.0, 0.0]),
        ("vp", [22, 0, 0], [0], [22.0, -22.0, -22.0]),
        ("vp", [7, 9, 9, 2], [1, 2], [-2.0, 0.0, 0.0, -7.0]),
    ],
)
def test_rewards_reach_their_bounds_and_match_the_env(
    reward: str, vp: list[int], winners: list[int], expected: list[float]
) -> None:
    assert rewards(reward, vp, winners) == expected
    assert raw_env(len(vp), reward=reward).rewards_of(vp, winners) == expected


def test_an_unknown_reward_scheme_is_named() -> None:
    with pytest.raises(ValueError, match="reward must be one of 'win', 'vp', got 'score'"):
        rewards("score", [1, 2], [1])
