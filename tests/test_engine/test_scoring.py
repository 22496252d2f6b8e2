"""End of the game and scoring (RULES §6): category winners, victory points and every tie-break."""

from __future__ import annotations

import pytest
from scenarios import (
    FORBIDDEN_TOMES,
    HOLY_BOOKS,
    MANUSCRIPTS,
    MONKS,
    PIGMENTS,
    auction_game,
    card,
    gold,
    random_playout,
)

from biblios_env import actions as act
from biblios_env.engine.game import Game
from biblios_env.engine.scoring import score

NOBODY = -1
DICE = [3, 3, 3, 3, 3]


def M(letter):  # noqa: N802 - reads like the rulebook's card names
    return card(MONKS, letter)


def Pg(letter):  # noqa: N802
    return card(PIGMENTS, letter)


def HB(letter):  # noqa: N802
    return card(HOLY_BOOKS, letter)


def MS(letter):  # noqa: N802
    return card(MANUSCRIPTS, letter)


def FT(letter):  # noqa: N802
    return card(FORBIDDEN_TOMES, letter)


# --------------------------------------------------------------------------- categories
@pytest.mark.parametrize(
    ("hands", "winner"),
    [
        ([[M("E"), M("A")], [M("H")]], 0),  # 5 beats 4
        ([[M("H")], [M("E"), M("A")]], 1),
        ([[HB("H"), HB("A")], [HB("B"), HB("C"), HB("D"), HB("E")]], 1),  # 3 vs 4
        ([[Pg("A"), Pg("I")], [Pg("B"), Pg("E"), Pg("F")], [Pg("H"), Pg("G")]], 1),  # 6 / 8 / 7
        ([[MS("A")], [], [MS("H")], [MS("B")]], 2),  # 1 / 0 / 2 / 1: a higher total beats letter A
    ],
)
def test_scoring_category_highest_total_wins(hands, winner):
    """A category is won by the highest total of card values (RULES §6)."""
    _, _, category_winners = score(hands, DICE)
    won = [c for c in range(5) if category_winners[c] != NOBODY]
    assert len(won) == 1
    assert category_winners[won[0]] == winner


@pytest.mark.parametrize(
    ("hands", "winner"),
    [
        ([[M("H")], [M("B"), M("C")]], 1),  # 4 = 4: B before H
        ([[M("B"), M("C")], [M("H")]], 0),
        ([[M("I"), M("H")], [M("A"), M("B"), M("C"), M("D")]], 1),  # 8 = 8: A before H
        ([[FT("H"), FT("I")], [FT("A"), FT("G"), FT("F"), FT("E")]], 1),  # 4 = 4: A before H
        ([[Pg("H"), Pg("D")], [Pg("C"), Pg("I")], [Pg("E"), Pg("F")]], 1),  # 6 = 6 = 6: C before D, E
    ],
)
def test_scoring_category_tie_goes_to_earliest_letter(hands, winner):
    """Tied totals: the tied player holding the category's earliest letter wins it (RULES §6)."""
    _, _, category_winners = score(hands, DICE)
    won = [c for c in range(5) if category_winners[c] != NOBODY]
    assert len(won) == 1
    assert category_winners[won[0]] == winner


def test_scoring_category_tie_letter_ignores_non_tied_players():
    """Only the tied leaders compare letters: a lower total with letter A does not win (RULES §6)."""
    hands = [[M("A")], [M("H"), M("I")], [M("B"), M("E"), M("F")]]  # 2, 8, 8: B beats H
    _, _, category_winners = score(hands, DICE)
    assert category_winners[MONKS] == 2


def test_scoring_empty_category_is_won_by_nobody():
    """A category in which nobody holds a card is won by nobody and scores nothing (RULES §6)."""
    hands = [[M("A"), gold(3)], [Pg("A")], [gold(1)]]
    vp, _, category_winners = score(hands, [1, 2, 5, 6, 4])
    assert category_winners == [0, 1, NOBODY, NOBODY, NOBODY]
    assert vp == [1, 2, 0]


def test_scoring_category_winner_scores_its_die():
    """The winner of a category scores VP equal to its die (RULES §6)."""
    hands = [[M("A"), HB("A"), FT("H")], [Pg("A"), MS("A"), FT("A")]]
    vp, winners, category_winners = score(hands, [6, 1, 4, 2, 5])
    assert category_winners == [0, 1, 0, 1, 0]
    assert vp == [6 + 4 + 5, 1 + 2]
    assert winners == [0]


# --------------------------------------------------------------------------- winner and tie-breaks
def test_scoring_most_vp_wins_whatever_the_gold():
    """Most VP wins; gold only breaks ties (RULES §6)."""
    hands = [[M("A")], [Pg("A"), *[gold(3, i) for i in range(9)]]]
    vp, winners, _ = score(hands, [4, 3, 3, 3, 3])
    assert vp == [4, 3] and winners == [0]


@pytest.mark.parametrize("order", [(0, 1), (1, 0)])
def test_scoring_vp_tie_broken_by_gold(order):
    """VP tie: most gold (sum of gold values in hand) wins (RULES §6.1)."""
    rich = [M("A"), gold(1, 0), gold(1, 1), gold(1, 2)]  # 3 coins in three cards
    poor = [Pg("A"), gold(2, 0), gold(3, 0)]  # 5 coins in two cards
    hands = [rich, poor] if order == (0, 1) else [poor, rich]
    vp, winners, _ = score(hands, DICE)
    assert vp == [3, 3]
    assert winners == [hands.index(poor)]


def test_scoring_vp_and_gold_tie_broken_by_monks_total():
    """VP and gold tied: the higher Monks total wins, before any other category (RULES §6.2)."""
    hands = [
        [M("A"), Pg("H"), Pg("I"), gold(2)],  # Monks 2, wins Pigments (8)
        [M("E"), HB("A"), gold(1, 0), gold(1, 1)],  # Monks 3, wins Holy Books
        [M("H"), M("I")],  # wins Monks (die 1)
    ]
    vp, winners, category_winners = score(hands, [1, 3, 3, 3, 3])
    assert category_winners[:3] == [2, 0, 1]
    assert vp == [3, 3, 1]
    assert winners == [1]  # Monks 3 > 2, although seat 0 has far more Pigments


def test_scoring_tie_then_earliest_letter_in_the_first_differing_category():
    """Equal non-zero totals in a category: the earliest letter decides (RULES §6.2)."""
    hands = [
        [M("H"), Pg("I"), Pg("H")],  # Monks 4 (H), wins Pigments
        [M("C"), M("D"), HB("A")],  # Monks 4 (C), wins Holy Books
        [M("I"), M("G"), M("A")],  # Monks 9, wins Monks (die 1)
    ]
    vp, winners, _ = score(hands, [1, 3, 3, 3, 3])
    assert vp == [3, 3, 1]
    assert winners == [1]


def test_scoring_zero_totals_skip_to_the_next_category():
    """Both tied players have no Monks: go on to Pigments (RULES §6.2)."""
    hands = [
        [Pg("A"), HB("A"), HB("B")],  # Pigments 2, wins Holy Books
        [Pg("E"), MS("A")],  # Pigments 3, wins Pigments and Manuscripts
        [M("A")],
    ]
    vp, winners, category_winners = score(hands, [6, 1, 2, 1, 3])
    assert category_winners[:4] == [2, 1, 0, 1]
    assert vp == [2, 2, 6]
    hands[2] = []  # now seats 0 and 1 lead on VP and are tied
    vp, winners, _ = score(hands, [6, 1, 2, 1, 3])
    assert vp == [2, 2, 0]
    assert winners == [1]  # Monks 0 = 0, Pigments 3 > 2


def test_scoring_later_categories_decide_when_earlier_are_equal():
    """Categories are compared in Scriptorium order; the first difference decides (RULES §6.2)."""
    hands = [
        [FT("A"), FT("B")],  # wins Forbidden Tomes (die 2)
        [MS("A"), MS("B"), FT("C")],  # wins Manuscripts (die 2), has a lower FT total
    ]
    vp, winners, _ = score(hands, [3, 3, 3, 2, 2])
    assert vp == [2, 2]
    assert winners == [1]  # Manuscripts (index 3) comes before Forbidden Tomes


def test_scoring_shared_win_without_category_cards():
    """Still tied after every tie-break (no category cards at all): the tied players share the win
    (RULES §6)."""
    hands = [[gold(2, 0)], [gold(1, 0), gold(1, 1)], [gold(1, 2)]]
    vp, winners, category_winners = score(hands, DICE)
    assert vp == [0, 0, 0]
    assert category_winners == [NOBODY] * 5
    assert winners == [0, 1]
    assert score([[], [], [], []], DICE)[1] == [0, 1, 2, 3]


def test_scoring_four_players():
    """4 players: letter ties in two categories, one empty category, the rest unclaimed (RULES §6)."""
    hands = [[M("I")], [M("H"), Pg("A")], [Pg("B"), gold(3)], [HB("A"), gold(1)]]
    vp, winners, category_winners = score(hands, [2, 5, 4, 3, 3])
    # Monks: 4 = 4 -> H beats I; Pigments: 2 = 2 -> A beats B
    assert category_winners == [1, 1, 3, NOBODY, NOBODY]
    assert vp == [0, 7, 0, 4]
    assert winners == [1]


# --------------------------------------------------------------------------- in real games
@pytest.mark.parametrize("num_players", [2, 3, 4])
def test_scoring_at_game_end_uses_final_hands_and_dice(num_players):
    """After the last auction the game is scored from the hands and the dice (RULES §6)."""
    for seed in range(4):
        game = random_playout(Game(num_players, seed=seed), seed)
        expected = score(game.state.hands, game.state.dice)
        assert (game.state.vp, game.state.winners, game.state.category_winners) == expected
        snap = game.snapshot()
        assert snap["vp"] == expected[0] and snap["winners"] == expected[1]


def test_scoring_of_a_scripted_game():
    """A scripted 2-player game: seat 1 buys the only category card auctioned and the game is scored
    from the gift-phase hands plus that card (RULES §5, §6)."""
    lot = M("I")
    game = auction_game(2, [[], [gold(3, 0)]], [lot])
    game.apply(act.bid(3))  # seat 1
    game.apply(act.PASS)  # seat 0
    game.apply(act.pay(gold(3, 0)))
    while not game.is_over:
        game.apply(act.PASS)
    assert lot in game.state.hands[1]
    assert (game.state.vp, game.state.winners, game.state.category_winners) == score(game.state.hands, [3] * 5)
