"""The worked examples of RULES §8 (from the rulebook), each reproduced move by move."""

from __future__ import annotations

import pytest
from scenarios import (
    CHURCH_ONE_DOWN,
    CHURCH_TWO_DOWN,
    FORBIDDEN_TOMES,
    HOLY_BOOKS,
    MANUSCRIPTS,
    MONKS,
    PIGMENTS,
    auction_game,
    card,
    gold,
    gold_in_hand,
    golds,
    make_deck,
)

from biblios_env import actions as act
from biblios_env.cards import CARD_VALUE, card_name
from biblios_env.engine.game import Game, IllegalActionError
from biblios_env.engine.scoring import score
from biblios_env.engine.state import Decision

A, B, C = 0, 1, 2  # seats of the rulebook's players


@pytest.mark.parametrize("auto_forced", [True, False])
def test_worked_example_gift_turn_three_players(auto_forced):
    """RULES §8 gift turn (§3): Monks 2 -> auction pile, Gold 1 -> common area, Monks 3 (a different
    card) -> keep, Gold 2 forced to the common area; the kept card goes to hand; the left neighbour
    chooses Gold 2 and the last player gets Gold 1."""
    monks_2, gold_1, monks_3, gold_2 = card(MONKS, "A"), gold(1), card(MONKS, "E"), gold(2)
    assert (CARD_VALUE[monks_2], CARD_VALUE[gold_1], CARD_VALUE[monks_3], CARD_VALUE[gold_2]) == (2, 1, 3, 2)
    game = Game(3, seed=0, deck=make_deck(3, [monks_2, gold_1, monks_3, gold_2]), auto_forced=auto_forced)
    state = game.state

    assert state.drawn_card == monks_2 and game.current_player == A
    game.apply(act.AUCTION)
    assert state.drawn_card == gold_1
    game.apply(act.COMMON)
    assert state.drawn_card == monks_3
    assert game.legal_actions() == [act.KEEP, act.COMMON]  # the auction pile quota is used
    game.apply(act.KEEP)
    if not auto_forced:
        assert state.drawn_card == gold_2
        assert game.legal_actions() == [act.COMMON]  # "which must go to the common area"
        with pytest.raises(IllegalActionError):
            game.apply(act.KEEP)
        game.apply(act.COMMON)

    assert state.auction_pile == [monks_2]
    assert state.common_area == [gold_1, gold_2]
    assert state.hands[A] == [monks_3]  # the kept card goes to hand
    assert state.decision == Decision.TAKE and game.current_player == B  # the left neighbour chooses
    assert game.legal_actions() == sorted([act.take(gold_1), act.take(gold_2)])
    game.apply(act.take(gold_2))
    if not auto_forced:
        assert game.current_player == C and game.legal_actions() == [act.take(gold_1)]
        game.apply(act.take(gold_1))
    assert state.hands == [[monks_3], [gold_2], [gold_1]]  # the last player gets Gold 1
    assert state.common_area == []
    assert state.active_player == B and state.decision == Decision.PLACE  # next gift turn


def test_worked_example_auction_three_players():
    """RULES §8 auction (§5): A reveals Forbidden Tomes 2; B bids 1, C passes, A bids 3, B bids 4,
    A passes; B wins and pays Gold 2 + Gold 3 (5 gold for a bid of 4; no change)."""
    tomes_2, gold_2, gold_3 = card(FORBIDDEN_TOMES, "H"), gold(2), gold(3)
    assert card_name(tomes_2).startswith("Forbidden Tomes 2")
    game = auction_game(3, [[], [gold_2, gold_3]], [tomes_2], first_player=A)
    state = game.state
    coins_before = gold_in_hand(game, B)
    hand_before = sorted(state.hands[B])

    assert state.active_player == A and state.auction_card == tomes_2
    for seat, action in [(B, act.bid(1)), (C, act.PASS), (A, act.bid(3)), (B, act.bid(4)), (A, act.PASS)]:
        assert game.current_player == seat
        assert action in game.legal_actions()
        game.apply(action)
    assert state.decision == Decision.PAY and game.current_player == B
    assert state.high_bid == 4 and state.high_bidder == B
    game.apply(act.pay(gold_2))
    assert state.decision == Decision.PAY and state.payment_value == 2  # not covered yet
    game.apply(act.pay(gold_3))

    assert tomes_2 in state.hands[B]
    assert sorted(state.hands[B]) == sorted([c for c in hand_before if c not in (gold_2, gold_3)] + [tomes_2])
    assert gold_in_hand(game, B) == coins_before - 5  # no change given
    assert state.public_discard[-2:] == [gold_2, gold_3]  # shown to everyone and discarded
    assert state.active_player == B  # the next player becomes active for the next auction


def test_worked_example_church_card_kept_on_a_gift_turn():
    """RULES §8 church (§4): the active player keeps a "-1 to two dice" card as their first placement;
    the turn stops while they lower Holy Books 2->1 and Pigments 3->2, then the turn goes on."""
    filler = [card(MANUSCRIPTS, letter) for letter in "ABCDEF"]
    # Turn 1 (seat A) brings Holy Books to 2 with a "-1 to one die" card; turn 2 is the example.
    top = [CHURCH_ONE_DOWN[0], *filler[:3], CHURCH_TWO_DOWN[0], *filler[3:]]
    game = Game(3, seed=0, deck=make_deck(3, top))
    state = game.state
    game.apply(act.KEEP)
    game.apply(act.church_one(HOLY_BOOKS, -1))
    game.apply(act.AUCTION)  # the two common placements are forced
    game.apply(act.take(filler[1]))  # seat B takes; seat C's take of the last card is forced
    assert state.dice == [3, 3, 2, 3, 3]

    assert state.active_player == B and state.drawn_card == CHURCH_TWO_DOWN[0]
    game.apply(act.KEEP)  # first placement of the turn
    assert state.decision == Decision.CHURCH and game.current_player == B
    assert state.drawn_card == -1 and state.draw_pile[-1] == filler[3]  # the turn stops
    assert act.church_two(PIGMENTS, HOLY_BOOKS) in game.legal_actions()
    game.apply(act.church_two(HOLY_BOOKS, PIGMENTS))
    assert state.dice == [3, 2, 1, 3, 3]  # Holy Books 2 -> 1, Pigments 3 -> 2
    assert CHURCH_TWO_DOWN[0] in state.discard and all(CHURCH_TWO_DOWN[0] not in h for h in state.hands)

    # then the turn goes on: next card, keep slot used
    assert state.decision == Decision.PLACE and game.current_player == B
    assert state.drawn_card == filler[3]
    assert game.legal_actions() == [act.AUCTION, act.COMMON]
    game.apply(act.AUCTION)
    game.apply(act.take(filler[5]))  # seat C takes; seat A's take of the last card is forced
    assert state.hands == [[filler[4]], [filler[1]], [filler[2], filler[5]]]  # no card kept by B this turn
    assert state.active_player == C


def _scoring_example_hands(a_more_gold):
    monks_a = [card(MONKS, "C"), card(MONKS, "E"), card(MONKS, "H")]  # 2 + 3 + 4, best letter C
    monks_b = [card(MONKS, "B"), card(MONKS, "F"), card(MONKS, "I")]  # 2 + 3 + 4, letter B
    rich, poor = [gold(3), gold(3, 1)], [gold(1)]
    hand_a = [*monks_a, card(PIGMENTS, "A"), *(rich if a_more_gold else poor)]
    hand_b = [*monks_b, *(poor if a_more_gold else rich)]
    return hand_a, hand_b


@pytest.mark.parametrize("a_more_gold", [True, False])
def test_worked_example_scoring(a_more_gold):
    """RULES §8 scoring (§6): A has Monks worth 9 (cards 2, 3, 4; best letter C), B has Monks worth 9
    including the letter-B card: B wins Monks. A and B then tie on VP: the one with more gold wins."""
    hand_a, hand_b = _scoring_example_hands(a_more_gold)
    vp, winners, category_winners = score([hand_a, hand_b], [3, 3, 3, 3, 3])
    assert category_winners[MONKS] == B
    assert category_winners[PIGMENTS] == A  # A's VP, to make the tie
    assert vp == [3, 3]
    assert winners == ([A] if a_more_gold else [B])


def test_worked_example_scoring_at_the_end_of_a_real_game():
    """RULES §8 scoring (§6) reached through play: 2 players end with exactly the example's Monks,
    A wins Pigments 11-8, VP tie 3-3, and A wins on gold 37-17."""
    monks_a = [card(MONKS, "C"), card(MONKS, "E"), card(MONKS, "H")]
    monks_b = [card(MONKS, "B"), card(MONKS, "F"), card(MONKS, "I")]
    hand_a = [*monks_a, *(card(PIGMENTS, x) for x in "GHI"), *golds(3, 9), *golds(2, 5)]
    hand_b = [*monks_b, *(card(PIGMENTS, x) for x in "ABCD"), *golds(2, 4, start=5), *golds(1, 9)]
    others = [card(MONKS, x) for x in "ADG"] + [card(PIGMENTS, x) for x in "EF"]
    game = auction_game(2, [hand_a, hand_b], others)
    assert sorted(game.state.hands[A]) == sorted(hand_a)
    assert sorted(game.state.hands[B]) == sorted(hand_b)
    while not game.is_over:  # nobody bids: every auctioned card is discarded
        game.apply(act.PASS)
    assert game.state.dice == [3] * 5
    assert game.state.category_winners == [B, A, -1, -1, -1]
    assert game.state.vp == [3, 3]
    assert (gold_in_hand(game, A), gold_in_hand(game, B)) == (37, 17)
    assert game.state.winners == [A]
