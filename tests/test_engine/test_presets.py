"""The card sets a game is dealt from (the ``preset`` option): the rules' 87 cards; "mini", four
cards for two players, small enough for exact methods (CFR in OpenSpiel); and "small", five
cards whose exact solution still takes solvers real work.

Every count of a game follows from :data:`~biblios_env.engine.setup.SETUP_RULES`, so the small
games are the same rules on a smaller box: they are dealt only from their cards, with explicit
chance as with a seed; the determinization sampler deals only from them; the declared facts
bound them; bids are capped at all the gold in the box.
"""

from __future__ import annotations

import random
from collections import Counter

import numpy as np
import pytest

from biblios_env.actions import BID_BASE, MAX_BID, PASS
from biblios_env.cards import CARD_CATEGORY, CARD_VALUE, IS_CHURCH, IS_GOLD, NUM_CARDS
from biblios_env.engine import Game, player_view, sample_state
from biblios_env.engine.facts import MAX_GAME_LENGTH, game_info
from biblios_env.engine.flow import CHANCE_REMOVAL, DECISION_BID, MINI_PRESET, SMALL_PRESET, STANDARD_PRESET
from biblios_env.engine.sampling import unseen_cards
from biblios_env.engine.setup import DECK_SIZE, GIFT_TURNS, MINI_CARDS, REMOVED_COUNT, SMALL_CARDS, setup_rules

MINI = setup_rules(MINI_PRESET, 2)
SMALL = setup_rules(SMALL_PRESET, 2)
BOXES = {MINI_PRESET: MINI_CARDS, SMALL_PRESET: SMALL_CARDS}


def every_card(game: Game) -> list[int]:
    """Every card of the position, wherever it is (the omniscient snapshot's card lists)."""
    snapshot = game.snapshot()
    piles = ("draw_pile", "auction_pile", "common_area", "in_play", "discard", "removed")
    return [card for hand in snapshot["hands"] for card in hand] + [c for pile in piles for c in snapshot[pile]]


def play_randomly(game: Game, seed: int) -> list[Game]:
    """Play ``game`` to its end with random legal actions; returns a copy at every decision."""
    rng = random.Random(seed)
    positions = []
    while not game.is_over:
        positions.append(game.clone())
        game.apply(rng.choice(game.legal_actions()))
    return positions


def test_the_mini_box_and_its_counts() -> None:
    """Three category cards and a gold card (something to bid with), no church card; one removed
    unseen leaves one gift turn of three cards and one auction."""
    assert MINI.cards == MINI_CARDS == tuple(sorted(MINI_CARDS))
    assert [IS_GOLD[card] for card in MINI.cards].count(True) == 1
    assert not any(IS_CHURCH[card] for card in MINI.cards)
    assert (MINI.removed_count, MINI.deck_size, MINI.gift_turns) == (1, 3, 1)
    info = game_info(2, MINI_PRESET)
    assert (info.deck_size, info.gift_turns) == (3, 1)
    assert info.max_game_length < MAX_GAME_LENGTH[2]


def test_the_small_box_and_its_counts() -> None:
    """Two category cards of equal value (the dice decide which is worth more), gold of 1 and 3
    coins, one church card; two removed unseen leave one gift turn and one auction; bids are
    capped at the box's 4 coins."""
    assert SMALL.cards == SMALL_CARDS == tuple(sorted(SMALL_CARDS))
    categories = [card for card in SMALL.cards if not IS_GOLD[card] and not IS_CHURCH[card]]
    assert len({CARD_CATEGORY[card] for card in categories}) == 2 and len({CARD_VALUE[c] for c in categories}) == 1
    assert sorted(CARD_VALUE[card] for card in SMALL.cards if IS_GOLD[card]) == [1, 3]
    assert [IS_CHURCH[card] for card in SMALL.cards].count(True) == 1
    assert (SMALL.removed_count, SMALL.deck_size, SMALL.gift_turns, SMALL.max_bid) == (2, 3, 1, 4)
    assert MINI.max_bid == setup_rules(STANDARD_PRESET, 2).max_bid == MAX_BID
    info = game_info(2, SMALL_PRESET)
    assert (info.deck_size, info.gift_turns) == (3, 1)
    assert info.max_game_length < MAX_GAME_LENGTH[2]


def test_the_standard_counts_are_the_rules() -> None:
    """RULES §2.2: 60, 72 and 80 cards in the draw pile; 20, 18 and 16 gift turns."""
    assert DECK_SIZE == {2: 60, 3: 72, 4: 80}
    assert GIFT_TURNS == {2: 20, 3: 18, 4: 16}
    assert REMOVED_COUNT == {2: 27, 3: 15, 4: 7}
    assert setup_rules(STANDARD_PRESET, 3).cards == tuple(range(NUM_CARDS))


@pytest.mark.parametrize(
    ("players", "preset", "message"),
    [(3, "mini", "for 2 players, got 3"), (4, "small", "the 'small' preset is for 2 players, got 4"), (2, "x", "'x'")],
)
def test_a_preset_without_such_a_game_is_named(players: int, preset: str, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        Game(players, seed=0, preset=preset)


@pytest.mark.parametrize("preset", [MINI_PRESET, SMALL_PRESET])
@pytest.mark.parametrize("penalty", ["standard", "bluffs"])
@pytest.mark.parametrize("strict_bids", [False, True])
def test_small_games_are_dealt_from_the_box_and_end_within_the_declared_length(
    preset: str, penalty: str, strict_bids: bool
) -> None:
    info = game_info(2, preset)
    rules = setup_rules(preset, 2)
    for seed in range(40):
        game = Game(2, seed=seed, preset=preset, penalty=penalty, strict_bids=strict_bids)
        assert len(game.state.removed) == rules.removed_count and len(game.deck) == 3
        positions = play_randomly(game, seed)
        for position in [*positions, game]:
            assert Counter(every_card(position)) == Counter(BOXES[preset])
            if position.state.decision == DECISION_BID:  # never above the preset's cap
                assert max(position.legal_actions()) <= BID_BASE + rules.max_bid
        assert len(game.history) <= info.max_game_length
        assert game.state.vp and game.state.winners


def test_a_deck_outside_the_box_is_named() -> None:
    gold_one = next(card for card in range(NUM_CARDS) if IS_GOLD[card] and CARD_VALUE[card] == 1)
    with pytest.raises(ValueError, match=rf"deck\[2\] must be one of the 'mini' preset's cards .*got {gold_one}"):
        Game(2, seed=0, preset=MINI_PRESET, deck=[0, 9, gold_one])
    with pytest.raises(ValueError, match="must hold 3 cards, got 2"):
        Game(2, seed=0, preset=MINI_PRESET, deck=[0, 9])
    game = Game(2, seed=0, preset=MINI_PRESET, deck=[18, 9, 0])
    assert game.deck == (18, 9, 0) and game.state.removed == [MINI_CARDS[-1]]


def test_explicit_chance_removes_and_draws_from_the_box_only() -> None:
    for seed in range(10):
        game = Game(2, seed=seed, preset=MINI_PRESET, explicit_chance=True, strict_bids=True)
        assert game.is_chance_node and game.state.chance_kind == CHANCE_REMOVAL
        assert game.chance_outcomes() == [(card, 1 / len(MINI_CARDS)) for card in MINI_CARDS]
        rng = random.Random(seed)
        while not game.is_over:
            legal = game.legal_actions()
            if game.is_chance_node:
                assert set(legal) <= set(MINI_CARDS)
            game.apply(rng.choice(legal))
        assert Counter(every_card(game)) == Counter(MINI_CARDS)


@pytest.mark.parametrize("preset", [MINI_PRESET, SMALL_PRESET])
def test_the_sampler_deals_only_the_box_and_keeps_every_view(preset: str) -> None:
    rng = np.random.default_rng(0)
    for seed in range(15):
        for position in play_randomly(Game(2, seed=seed, preset=preset), seed):
            for seat in range(2):
                view = player_view(position.state, seat)
                assert set(unseen_cards(view)) <= set(BOXES[preset])
                sample = sample_state(view, rng)
                assert sample.preset == preset
                assert player_view(sample, seat) == view
                assert Counter(every_card(Game.from_state(sample, 0))) == Counter(BOXES[preset])


@pytest.mark.parametrize(("preset", "cap"), [(MINI_PRESET, MAX_BID), (SMALL_PRESET, 4), (STANDARD_PRESET, MAX_BID)])
def test_bids_without_strict_bids_reach_the_presets_cap(preset: str, cap: int) -> None:
    """RULES §5: bids are not limited by what the bidder holds (bluffing), only by all the gold in
    the game, 66; the small game caps them at its box's 4 coins."""
    game = Game(2, seed=3, preset=preset)
    while game.state.decision != DECISION_BID:
        game.apply(game.legal_actions()[-1])
    assert game.state.high_bid == 0
    assert game.legal_actions() == [PASS, *range(BID_BASE + 1, BID_BASE + cap + 1)]
