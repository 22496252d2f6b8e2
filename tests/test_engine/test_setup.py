"""Setup (RULES §2): dice, removal of unseen cards, the shuffled draw pile, the first player."""

from __future__ import annotations

import re

import numpy as np
import pytest
from scenarios import all_card_places, finish_game, make_deck

from biblios_env.cards import GOLD_IDS_BY_VALUE
from biblios_env.engine.game import Game
from biblios_env.engine.setup import check_num_players

DECK = {2: 60, 3: 72, 4: 80}
REMOVED = {2: 27, 3: 15, 4: 7}
GOLD_PER_VALUE = {2: 2, 3: 1, 4: 0}
SEEDS = range(40)


def _removed_gold_per_value(removed):
    return [sum(1 for card in removed if card in GOLD_IDS_BY_VALUE[v]) for v in (1, 2, 3)]


@pytest.mark.parametrize("num_players", [2, 3, 4])
def test_setup_dice_start_at_three(num_players):
    """All five dice start at 3 (RULES §2.1)."""
    game = Game(num_players, seed=1)
    assert game.state.dice == [3, 3, 3, 3, 3]


@pytest.mark.parametrize("num_players", [2, 3, 4])
def test_setup_removal_counts(num_players):
    """2p keep 60 cards, 3p 72, 4p 80; the rest is removed (RULES §2.2)."""
    for seed in SEEDS:
        game = Game(num_players, seed=seed)
        snap = game.snapshot()
        assert len(snap["removed"]) == REMOVED[num_players]
        # the first card of the first gift turn is already drawn
        assert len(snap["draw_pile"]) + len(snap["in_play"]) == DECK[num_players]
        assert len(game.deck) == DECK[num_players]
        assert all_card_places(game) == list(range(87))


@pytest.mark.parametrize("num_players", [2, 3])
def test_setup_removal_gold_of_each_value(num_players):
    """2p remove two gold cards of each value, 3p one of each, before the random removals (RULES §2.2)."""
    for seed in SEEDS:
        removed = Game(num_players, seed=seed).state.removed
        per_value = _removed_gold_per_value(removed)
        assert min(per_value) >= GOLD_PER_VALUE[num_players], (seed, per_value)


def test_setup_removal_four_players_is_random():
    """4p remove 7 random cards: removals vary by seed, and a deck keeping all 33 gold is legal (RULES §2.2)."""
    removed_sets = {tuple(Game(4, seed=seed).state.removed) for seed in SEEDS}
    assert len(removed_sets) == len(SEEDS)
    deck = [*range(45, 78), *range(0, 45), 78, 79]
    assert Game(4, seed=0, deck=deck).state.removed == list(range(80, 87))


@pytest.mark.parametrize("num_players", [2, 3, 4])
def test_setup_removed_cards_stay_out(num_players):
    """Removed cards stay out of the game: they never reach a hand, pile or discard (RULES §2.2)."""
    game = Game(num_players, seed=7)
    removed = set(game.state.removed)
    finish_game(game)
    assert set(game.state.removed) == removed
    assert not removed & {card for hand in game.state.hands for card in hand}
    assert not removed & set(game.state.discard)
    assert all_card_places(game) == list(range(87))


def test_setup_shuffle_is_seeded():
    """The draw pile is shuffled by the game's seed: same seed, same deck; other seeds differ (RULES §2.3)."""
    assert Game(3, seed=5).deck == Game(3, seed=5).deck
    assert len({Game(3, seed=seed).deck for seed in SEEDS}) == len(SEEDS)


@pytest.mark.parametrize("num_players", [2, 3, 4])
def test_setup_deck_option_is_top_first(num_players):
    """A given deck is the draw pile after removal, top first; the other cards are the removed ones."""
    deck = make_deck(num_players, [40, 3, 86])
    game = Game(num_players, seed=0, deck=deck, auto_forced=False)
    assert game.state.drawn_card == 40
    assert game.deck == tuple(deck)
    assert game.state.removed == sorted(set(range(87)) - set(deck))
    game.apply(game.legal_actions()[0])
    assert game.state.drawn_card == 3


def _too_few_gold_removed(deck, value, keep_out):
    """``deck`` with gold cards of ``value`` swapped in for category cards until only ``keep_out`` stay out."""
    deck = list(deck)
    outside = [g for g in GOLD_IDS_BY_VALUE[value] if g not in deck]
    position = 0
    for gold_card in outside[keep_out:]:
        while deck[position] >= 45:
            position += 1
        deck[position] = gold_card
    return deck


@pytest.mark.parametrize(
    ("num_players", "mutate", "message"),
    [
        (2, lambda d: d[:-1], "60 cards"),
        (3, lambda d: [*d, 86 if 86 not in d else 85], "72 cards"),
        (4, lambda d: [999, *d[1:]], "card id"),
        (4, lambda d: [*d[:-1], "x"], "card id"),
        (3, lambda d: [d[1], *d[1:]], "duplicate"),
        (2, lambda d: _too_few_gold_removed(d, 2, 1), "value 2"),
        (2, lambda d: _too_few_gold_removed(d, 1, 0), "value 1"),
        (3, lambda d: _too_few_gold_removed(d, 3, 0), "value 3"),
    ],
)
def test_setup_deck_option_rejects_impossible_deals(num_players, mutate, message):
    """A deck setup could not produce raises ValueError naming the problem (RULES §2.2)."""
    bad = mutate(make_deck(num_players))
    with pytest.raises(ValueError, match=message):
        Game(num_players, seed=0, deck=bad)


@pytest.mark.parametrize(("num_players", "first_player"), [(2, 0), (2, 1), (3, 2), (4, 1), (4, 3)])
def test_setup_first_player_and_play_to_the_left(num_players, first_player):
    """The first player takes the first gift turn (default seat 0); play passes to the next seat (RULES §2.4)."""
    assert Game(num_players, seed=0).current_player == 0
    game = Game(num_players, seed=0, first_player=first_player, deck=make_deck(num_players))
    actives = []
    for _ in range(2 * num_players):
        actives.append(game.state.active_player)
        assert game.current_player == game.state.active_player
        start = game.state.active_player
        while game.state.active_player == start:
            game.apply(game.legal_actions()[0])
    assert actives == [(first_player + t) % num_players for t in range(2 * num_players)]


@pytest.mark.parametrize("num_players", [2, 3, 4])
def test_setup_hands_start_empty(num_players):
    """Nobody holds a card before the first gift turn (RULES §2, §3)."""
    game = Game(num_players, seed=3)
    assert game.state.hands == [[] for _ in range(num_players)]
    assert game.phase_name == "gift"


@pytest.mark.parametrize("bad", [1, 5, "3", True, 3.0, 2.0, np.float64(4), None])
def test_setup_rejects_player_counts(bad):
    """Biblios is for 2, 3 or 4 players (RULES §2.2); a count is an int, not a float equal to one."""
    with pytest.raises(ValueError, match=rf"num_players must be 2, 3 or 4, got {re.escape(repr(bad))}"):
        Game(bad)
    with pytest.raises(ValueError, match="num_players"):
        check_num_players(bad)


@pytest.mark.parametrize("count", [2, 3, 4, np.int64(3), np.int8(4)])
def test_setup_accepts_int_player_counts(count):
    assert check_num_players(count) == int(count) and type(check_num_players(count)) is int
    assert Game(count, seed=0).num_players == int(count)


def test_setup_rejects_bad_first_player():
    """The first player is a seat of the table (RULES §2.4)."""
    with pytest.raises(ValueError, match="first_player"):
        Game(3, first_player=3)
