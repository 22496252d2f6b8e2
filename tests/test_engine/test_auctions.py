"""Phase 2, the auctions (RULES §5): bidding, payment, penalties, the bluffs variant, strict bids."""

from __future__ import annotations

import itertools
import random

import pytest
from scenarios import (
    FORBIDDEN_TOMES,
    MANUSCRIPTS,
    MONKS,
    PIGMENTS,
    auction_game,
    card,
    deal_plan,
    finish_gifts,
    gold,
    gold_in_hand,
    random_playout,
)

from biblios_env import actions as act
from biblios_env.cards import CARD_VALUE, IS_GOLD, NUM_CARDS
from biblios_env.engine.auctions import bid_capacity, cheapest_cover
from biblios_env.engine.game import Game, IllegalActionError
from biblios_env.engine.setup import GIFT_TURNS
from biblios_env.engine.state import Decision
from biblios_env.engine.views import player_view
from biblios_env.observations import decode, encode, encode_state

P = act.PASS
B = act.bid
LOT = card(FORBIDDEN_TOMES, "H")  # a category card worth 2
LOT2 = card(MANUSCRIPTS, "A")
GOLD_LOT = gold(3, 0)
ALL_BIDS = [P, *(B(k) for k in range(1, 67))]


def play(game, script):
    """Apply ``(seat, action)`` pairs, checking that each seat is the one asked to act."""
    for seat, action in script:
        assert game.current_player == seat, (seat, act.describe(action), game.current_player)
        game.apply(action)


def hands_for(num_players, **by_seat):
    hands = [[] for _ in range(num_players)]
    for key, cards in by_seat.items():
        hands[int(key[1:])] = cards
    return hands


# --------------------------------------------------------------------------- order of play
@pytest.mark.parametrize(("num_players", "first_player"), [(2, 0), (2, 1), (3, 0), (3, 2), (4, 1), (4, 3)])
def test_auction_first_active_player_and_bidding_order(num_players, first_player):
    """The first player is the first active player; bidding starts on their left and goes round,
    the active player bidding last (RULES §5.1-3)."""
    game = auction_game(num_players, [], [LOT], first_player=first_player)
    assert game.phase_name == "auction"
    assert game.state.active_player == first_player
    assert game.state.auction_card == LOT
    order = []
    for _ in range(num_players - 1):
        order.append(game.current_player)
        game.apply(B(len(order)))  # everybody raises by one
    order.append(game.current_player)
    assert order == [(first_player + k) % num_players for k in range(1, num_players + 1)]
    assert order[-1] == first_player


@pytest.mark.parametrize(("num_players", "first_player"), [(2, 1), (3, 1), (4, 0)])
def test_auction_next_player_becomes_active_and_cards_come_in_placed_order(num_players, first_player):
    """After each auction the next player to the left is active; with auction_order="placed" the
    cards come in the order they were put on the pile (RULES §5.6)."""
    lots = [card(MONKS, "A"), card(PIGMENTS, "B"), LOT, LOT2, gold(1, 0)]
    game = auction_game(num_players, [], lots, first_player=first_player)
    seen = []
    while len(seen) < len(lots):
        seen.append((game.state.auction_card, game.state.active_player))
        for _ in range(num_players):
            game.apply(P)
    assert seen == [(lot, (first_player + k) % num_players) for k, lot in enumerate(lots)]


@pytest.mark.parametrize("num_players", [2, 3, 4])
def test_auction_pile_is_shuffled_by_default(num_players):
    """The auction pile is shuffled into the auction draw pile (RULES §5.1): the auctioned order is a
    permutation of the placed one, recorded as a chance outcome, and seeds give different orders."""
    lots = [*range(20, 18 + GIFT_TURNS[num_players]), 80, 81]  # church cards never stay in hands
    deck = deal_plan(num_players, [], lots)
    orders = set()
    for seed in range(4):
        game = Game(num_players, seed=seed, deck=deck)
        finish_gifts(game)
        auctioned = []
        while not game.is_over:
            auctioned.append(game.state.auction_card)
            for _ in range(num_players):
                game.apply(P)
        assert sorted(auctioned) == lots
        assert ("auction_order", tuple(auctioned)) in game.state.chance
        orders.add(tuple(auctioned))
    assert len(orders) > 1 and tuple(lots) not in orders


@pytest.mark.parametrize("num_players", [2, 3, 4])
def test_auction_phase_ends_when_the_auction_pile_is_empty(num_players):
    """One auction per card on the auction pile, then the game is over and scored (RULES §5.6, §6)."""
    game = auction_game(num_players, [], [])
    auctions = 0
    while not game.is_over:
        assert game.state.decision == Decision.BID
        auctions += 1
        for _ in range(num_players):
            game.apply(P)
    assert auctions == GIFT_TURNS[num_players]
    assert game.phase_name == "end" and game.current_player == -1
    assert len(game.state.vp) == num_players and game.state.winners


# --------------------------------------------------------------------------- bids and passes
def test_auction_bids_must_rise_and_start_at_one():
    """A bid is a whole number strictly above every earlier bid, the first at least 1 (RULES §5.3)."""
    game = auction_game(3, [], [LOT], auto_forced=False)
    assert game.legal_actions() == ALL_BIDS
    game.apply(B(3))
    assert game.legal_actions() == [P, *(B(k) for k in range(4, 67))]
    for low in (B(1), B(3)):
        with pytest.raises(IllegalActionError, match="BID"):
            game.apply(low)
    game.apply(B(66))  # the cap: all the gold in the game
    assert game.current_player == 0
    assert game.legal_actions() == [P]


def test_auction_bluffing_is_allowed_by_default():
    """Bids are not limited by what the bidder can pay (RULES §5): a player without gold may bid 66."""
    game = auction_game(2, [[], [LOT2]], [LOT])
    assert gold_in_hand(game, 1) == 0
    assert game.current_player == 1
    assert game.legal_actions() == ALL_BIDS


def test_auction_pass_is_final_and_bidding_goes_round_until_one_bidder_is_left():
    """A player who passed may not bid again; bidding skips them and goes round until all but the
    highest bidder have passed (RULES §5.3)."""
    hands = hands_for(4, p1=[gold(3, 0), gold(3, 1)])
    game = auction_game(4, hands, [LOT])
    # seat 0 active: bidding order 1, 2, 3, 0
    play(game, [(1, B(1)), (2, P), (3, B(2)), (0, B(3)), (1, B(4)), (3, P), (0, B(5)), (1, B(6))])
    assert game.state.passed == [False, False, True, True]
    assert game.current_player == 0  # seats 2 and 3 are skipped
    game.apply(P)
    assert game.state.decision == Decision.PAY and game.current_player == 1
    assert game.state.high_bid == 6 and game.state.high_bidder == 1


def test_auction_passed_player_cannot_bid_again():
    """Pass finality: the seat that passed is never asked again on this card (RULES §5.3)."""
    game = auction_game(3, hands_for(3, p2=[gold(3, 0), gold(3, 1)]), [LOT])
    play(game, [(1, P), (2, B(1))])
    asked = []
    while game.state.decision == Decision.BID:
        asked.append(game.current_player)
        game.apply(B(game.state.high_bid + 1) if len(asked) < 5 else P)
    assert 1 not in asked
    assert asked == [0, 2, 0, 2, 0]
    assert game.state.decision == Decision.PAY and game.current_player == 2


@pytest.mark.parametrize("num_players", [2, 3, 4])
def test_auction_nobody_bids_card_is_discarded(num_players):
    """If everybody passes without a bid the card is discarded face up (RULES §5.4)."""
    game = auction_game(num_players, [], [LOT, LOT2])
    before = [sorted(hand) for hand in game.state.hands]
    for _ in range(num_players):
        game.apply(P)
    assert LOT in game.state.discard and LOT in game.state.public_discard
    assert [sorted(hand) for hand in game.state.hands] == before
    assert game.state.auction_card == LOT2 and game.state.active_player == 1


# --------------------------------------------------------------------------- payment
def test_auction_winner_pays_gold_and_takes_the_card():
    """The winner pays with gold worth at least the bid; the gold is shown and discarded; the card
    goes to the winner's hand (RULES §5.5)."""
    hands = hands_for(3, p0=[card(MONKS, "I")], p1=[gold(2, 0), gold(1, 0)], p2=[gold(3, 0)])
    game = auction_game(3, hands, [LOT])
    play(game, [(1, B(3)), (2, P), (0, P)])
    assert game.state.decision == Decision.PAY and game.current_player == 1
    legal = game.legal_actions()
    assert act.REFUSE in legal
    paying = [a - act.PAY_BASE for a in legal if a != act.REFUSE]
    assert paying == sorted(c for c in game.state.hands[1] if IS_GOLD[c])  # gold only, any of it
    play(game, [(1, act.pay(gold(1, 0)))])
    assert game.state.decision == Decision.PAY and game.state.payment == [gold(1, 0)]
    play(game, [(1, act.pay(gold(2, 0)))])
    assert LOT in game.state.hands[1]
    assert gold(1, 0) not in game.state.hands[1] and gold(2, 0) not in game.state.hands[1]
    assert {gold(1, 0), gold(2, 0)} <= set(game.state.public_discard)
    assert game.state.auction_card != LOT and game.state.active_player == 1


def test_auction_no_change_is_given():
    """Paying a bid of 2 with a single Gold 3 costs 3: payment completes once covered (RULES §5)."""
    hands = hands_for(2, p1=[gold(3, 0), gold(1, 0), gold(1, 1)])
    game = auction_game(2, hands, [LOT])
    before = gold_in_hand(game, 1)
    play(game, [(1, B(2)), (0, P), (1, act.pay(gold(3, 0)))])
    assert LOT in game.state.hands[1]
    assert gold_in_hand(game, 1) == before - 3
    assert gold(3, 0) in game.state.discard
    assert {gold(1, 0), gold(1, 1)} <= set(game.state.hands[1])


def test_auction_winner_chooses_which_gold_to_pay():
    """The winner chooses the payment cards: the same bid can be covered in different ways (RULES §5)."""
    hands = hands_for(2, p1=[gold(1, 0), gold(1, 1), gold(2, 0)])
    game = auction_game(2, hands, [LOT])
    play(game, [(1, B(2)), (0, P)])
    first = game.clone()
    first.apply(act.pay(gold(2, 0)))
    second = game.clone()
    second.apply(act.pay(gold(1, 0)))
    second.apply(act.pay(gold(1, 1)))
    assert gold(2, 0) not in first.state.hands[1] and {gold(1, 0), gold(1, 1)} <= set(first.state.hands[1])
    assert gold(2, 0) in second.state.hands[1] and not {gold(1, 0), gold(1, 1)} & set(second.state.hands[1])


def test_auction_gold_card_is_paid_with_exactly_bid_cards_of_any_kind_face_down():
    """For a gold card a bid is a number of cards: exactly that many cards of any kind, discarded
    face down (others learn how many, not which) (RULES §5, §7)."""
    paid = [card(MONKS, "A"), gold(1, 0), card(PIGMENTS, "C")]
    hands = hands_for(3, p2=[*paid, card(MONKS, "B")])
    game = auction_game(3, hands, [GOLD_LOT])
    play(game, [(1, P), (2, B(3)), (0, P)])
    legal = game.legal_actions()
    assert [a - act.PAY_BASE for a in legal if a != act.REFUSE] == sorted(game.state.hands[2])
    hand_before = len(game.state.hands[2])
    for index, chosen in enumerate(paid):
        assert game.state.decision == Decision.PAY, index
        game.apply(act.pay(chosen))
    assert GOLD_LOT in game.state.hands[2]
    assert len(game.state.hands[2]) == hand_before - 3 + 1
    assert card(MONKS, "B") in game.state.hands[2]
    assert sorted(game.state.private_discard[2]) == sorted(paid)
    assert set(paid) <= set(game.state.discard)
    assert not set(paid) & set(game.state.public_discard)


def test_auction_bid_for_gold_card_counts_cards_not_coins():
    """A one-card bid on a gold card is paid with one card even if it is not gold (RULES §5)."""
    hands = hands_for(2, p1=[card(MONKS, "A")])
    game = auction_game(2, hands, [GOLD_LOT])
    play(game, [(1, B(1)), (0, P), (1, act.pay(card(MONKS, "A")))])
    assert GOLD_LOT in game.state.hands[1] and card(MONKS, "A") not in game.state.hands[1]
    assert game.state.private_discard[1] == [card(MONKS, "A")]


# --------------------------------------------------------------------------- penalty (standard)
def _moved_cards(game):
    kind, cards = game.state.chance[-1]
    assert kind == "penalty"
    return cards


@pytest.mark.parametrize(("num_players", "defaulter", "active"), [(2, 1, 0), (3, 1, 0), (3, 0, 0), (4, 2, 1)])
def test_auction_penalty_standard_each_other_player_takes_a_random_card(num_players, defaulter, active):
    """A winner who cannot pay is penalised: each other player, from the defaulter's left, takes one
    random card from the defaulter's hand; then the same card is auctioned again without the
    defaulter, by the same active player (RULES §5, Penalty)."""
    game = auction_game(num_players, [], [LOT], first_player=active)
    sizes = [len(hand) for hand in game.state.hands]
    hand_before = set(game.state.hands[defaulter])
    while not game.state.excluded[defaulter]:  # the defaulter bids more gold than exists in any hand
        game.apply(B(60) if game.current_player == defaulter else P)
    # PAY offers only REFUSE (it cannot pay), applied automatically
    assert game.state.decision == Decision.BID
    moved = _moved_cards(game)
    assert len(moved) == num_players - 1
    assert set(moved) <= hand_before and not set(moved) & set(game.state.hands[defaulter])
    for offset, moved_card in enumerate(moved, start=1):
        assert moved_card in game.state.hands[(defaulter + offset) % num_players]
    expected = [size + 1 for size in sizes]
    expected[defaulter] = sizes[defaulter] - (num_players - 1)
    assert [len(hand) for hand in game.state.hands] == expected
    # the same card again, same active player, without the defaulter
    assert game.state.auction_card == LOT and game.state.active_player == active
    assert game.state.excluded[defaulter] and game.state.passed[defaulter]
    assert game.state.high_bid == 0 and game.state.high_bidder == -1
    first = (active + 1) % num_players
    if first == defaulter:
        first = (first + 1) % num_players
    assert game.current_player == first
    assert game.legal_actions() == ALL_BIDS  # a fresh auction: the first bid is at least 1 again


def test_auction_penalty_random_cards_depend_on_the_seed():
    """The penalty cards are drawn at random from the game's seeded generator (RULES §5)."""
    outcomes = set()
    for seed in range(6):
        game = auction_game(2, [], [LOT], seed=seed)
        play(game, [(1, B(60)), (0, P)])
        outcomes.add(tuple(_moved_cards(game)))
        replay = auction_game(2, [], [LOT], seed=seed)
        play(replay, [(1, B(60)), (0, P)])
        assert _moved_cards(replay) == _moved_cards(game)
    assert len(outcomes) > 1


def test_auction_refuse_returns_picked_cards_before_the_penalty():
    """REFUSE is legal at any point of a payment; cards already picked go back to hand first
    (RULES §5, Penalty)."""
    hands = hands_for(2, p1=[gold(1, 0), gold(1, 1), gold(2, 0)])
    game = auction_game(2, hands, [LOT])
    hand_before = sorted(game.state.hands[1])
    play(game, [(1, B(4)), (0, P), (1, act.pay(gold(1, 0))), (1, act.pay(gold(2, 0)))])
    assert game.state.decision == Decision.PAY and act.REFUSE in game.legal_actions()
    game.apply(act.REFUSE)
    moved = _moved_cards(game)
    assert sorted([*game.state.hands[1], *moved]) == hand_before
    assert gold(1, 0) not in game.state.discard and gold(2, 0) not in game.state.discard
    assert game.state.excluded[1]


def test_auction_penalty_stops_when_the_defaulter_has_no_cards_left():
    """Each other player takes a card only while the defaulter has cards (RULES §5, Penalty)."""
    # Seat 1 spends its whole hand on a gold card, then defaults holding only that gold card.
    game = auction_game(3, [], [GOLD_LOT, LOT])
    hand = sorted(game.state.hands[1])
    play(game, [(1, B(len(hand))), (2, P), (0, P)])
    for paid in hand:
        game.apply(act.pay(paid))
    assert game.state.hands[1] == [GOLD_LOT]
    assert game.state.active_player == 1 and game.current_player == 2
    sizes = [len(h) for h in game.state.hands]
    play(game, [(2, P), (0, P), (1, B(1)), (1, act.REFUSE)])
    assert _moved_cards(game) == (GOLD_LOT,)
    assert GOLD_LOT in game.state.hands[2]  # the left neighbour took the only card
    assert [len(h) for h in game.state.hands] == [sizes[0], 0, sizes[2] + 1]


# --------------------------------------------------------------------------- penalty (bluffs variant)
@pytest.mark.parametrize(("num_players", "defaulter"), [(2, 0), (3, 1), (4, 3)])
def test_auction_penalty_bluffs_discards_one_random_card(num_players, defaulter):
    """Medieval bluffs: the defaulter discards one blindly chosen card (face down) and is excluded from
    the re-auction; the other hands do not change (RULES §5, variant)."""
    game = auction_game(num_players, [], [LOT], penalty="bluffs")
    hands_before = [sorted(hand) for hand in game.state.hands]
    while not game.state.excluded[defaulter]:
        game.apply(B(60) if game.current_player == defaulter else P)
    moved = _moved_cards(game)
    assert len(moved) == 1 and moved[0] in hands_before[defaulter]
    assert moved[0] in game.state.discard and moved[0] in game.state.private_discard[defaulter]
    assert moved[0] not in game.state.public_discard
    for seat in range(num_players):
        expected = [c for c in hands_before[seat] if c not in moved]
        assert sorted(game.state.hands[seat]) == expected
    assert game.state.excluded[defaulter] and game.state.auction_card == LOT


# --------------------------------------------------------------------------- defaulter exclusion
@pytest.mark.parametrize("penalty", ["standard", "bluffs"])
def test_auction_defaulters_accumulate_then_unsold_card_is_discarded(penalty):
    """Defaulters on the same card accumulate; when every player has defaulted the card is discarded
    (project decision); the next auction starts with nobody excluded (RULES §5, Penalty)."""
    game = auction_game(3, [], [LOT, LOT2], penalty=penalty)
    play(game, [(1, B(60)), (2, P), (0, P)])  # seat 1 defaults
    assert game.state.excluded == [False, True, False]
    play(game, [(2, B(1)), (0, B(60)), (2, P)])  # seat 0 defaults
    assert game.state.excluded == [True, True, False]
    assert game.state.auction_card == LOT and game.current_player == 2
    assert game.legal_actions() == ALL_BIDS
    play(game, [(2, B(60))])  # the last bidder wins alone and defaults too
    assert LOT in game.state.discard
    assert all(LOT not in hand for hand in game.state.hands)
    assert game.state.auction_card == LOT2 and game.state.active_player == 1
    assert game.state.excluded == [False, False, False]
    assert game.current_player == 2


def test_auction_last_bidder_standing_after_defaults_may_pass():
    """After a default the remaining players may all pass: the card is then discarded (RULES §5.4)."""
    game = auction_game(2, [], [LOT, LOT2])
    play(game, [(1, B(60))])
    play(game, [(0, P)])  # seat 1 could not pay; now seat 0 alone
    assert game.state.auction_card == LOT and game.current_player == 0
    play(game, [(0, P)])
    assert LOT in game.state.discard and game.state.auction_card == LOT2


def test_auction_single_remaining_bidder_wins_with_one_bid():
    """With everyone else excluded, one bid wins at once (RULES §5.3)."""
    hands = hands_for(2, p0=[gold(2, 0)])
    game = auction_game(2, hands, [LOT])
    play(game, [(1, B(60)), (0, P)])  # seat 1 defaults
    play(game, [(0, B(1)), (0, act.pay(gold(2, 0)))])
    assert LOT in game.state.hands[0]


# --------------------------------------------------------------------------- strict bids option
def test_auction_strict_bids_cap_at_the_bidders_coins():
    """strict_bids: bids on a non-gold card are capped at the bidder's coins; no REFUSE (RULES §5)."""
    hands = hands_for(3, p0=[gold(3, 0), gold(2, 0)], p1=[gold(1, 0)], p2=[])
    game = auction_game(3, hands, [LOT], strict_bids=True)
    coins = [gold_in_hand(game, seat) for seat in range(3)]
    assert coins[1] == 1
    assert game.legal_actions() == [P, B(1)]
    game.apply(B(1))
    assert game.legal_actions() == [P, *(B(k) for k in range(2, coins[2] + 1))]
    game.apply(P)
    assert game.legal_actions() == [P, *(B(k) for k in range(2, coins[0] + 1))]
    with pytest.raises(IllegalActionError):
        game.apply(B(coins[0] + 1))
    game.apply(B(5))
    # seat 1 cannot bid above its 1 coin: its pass was the only legal action (applied by itself)
    assert game.state.passed[1]
    assert game.state.decision == Decision.PAY and game.current_player == 0
    assert act.REFUSE not in game.legal_actions()
    with pytest.raises(IllegalActionError, match="REFUSE"):
        game.apply(act.REFUSE)


def test_auction_strict_bids_cap_gold_card_at_hand_size():
    """strict_bids: bids on a gold card are capped at the number of cards in hand (RULES §5)."""
    game = auction_game(2, [], [GOLD_LOT], strict_bids=True)
    size = len(game.state.hands[1])
    assert gold_in_hand(game, 1) < size
    assert game.legal_actions() == [P, *(B(k) for k in range(1, size + 1))]


def test_auction_strict_bids_without_gold_only_pass():
    """strict_bids: a player without gold can only pass on a non-gold card (RULES §5)."""
    game = auction_game(2, [[gold(1, 0)], []], [LOT], strict_bids=True, auto_forced=False)
    assert gold_in_hand(game, 1) == 0
    assert game.current_player == 1
    assert game.legal_actions() == [P]
    game.apply(P)
    assert game.current_player == 0 and game.legal_actions() == [P, B(1)]


def test_auction_strict_bids_is_off_by_default():
    """Restricting bids is an option, never the default; the standard penalty is the default (RULES §5)."""
    game = Game(3, seed=0)
    assert game.config.strict_bids is False
    assert game.config.penalty == "standard"


@pytest.mark.parametrize("num_players", [2, 3, 4])
def test_auction_strict_bids_whole_games_never_refuse(num_players):
    """Whole games under strict_bids: every winner can pay, REFUSE is never legal (RULES §5)."""

    def check(game):
        legal = game.legal_actions()
        if game.is_over:
            return
        assert legal and act.REFUSE not in legal
        if game.state.decision == Decision.BID and max(legal) != P:
            hand = game.state.hands[game.current_player]
            if IS_GOLD[game.state.auction_card]:
                assert max(legal) - act.BID_BASE <= len(hand)
            else:
                assert max(legal) - act.BID_BASE <= sum(CARD_VALUE[c] for c in hand if IS_GOLD[c])

    for seed in range(3):
        game = random_playout(Game(num_players, seed=seed, strict_bids=True), seed, check)
        assert not any(kind == "penalty" for kind, _ in game.state.chance)


# --------------------------------------------------------------------------- no change is ever given
def gold_coins(cards) -> int:
    """Coins in ``cards`` (gold cards only)."""
    return sum(CARD_VALUE[c] for c in cards if IS_GOLD[c])


def table_gold(state) -> int:
    """Coins anywhere on the table: hands, payment in progress, discard, piles, removed cards."""
    places = [*state.hands, state.payment, state.discard, state.draw_pile, state.auction_pile, state.removed]
    places.append([c for c in (state.auction_card, state.drawn_card, state.kept_card) if c >= 0])
    return sum(gold_coins(cards) for cards in places)


def assert_paid_without_change(before, after, payer: int, paid: list[int], won: int) -> None:
    """``payer`` completed a payment of exactly ``paid`` for the non-gold card ``won``, and nothing else moved.

    There is no change (RULES §5): the payer's hand lost the paid cards and gained only the won
    card, every other hand is untouched, the discard and the public discard grew by exactly the
    paid cards, and the coins on the table are the same (none came back from anywhere).
    """
    assert sorted(after.hands[payer]) == sorted([*(c for c in before.hands[payer] if c not in paid), won])
    assert gold_coins(after.hands[payer]) == gold_coins(before.hands[payer]) - gold_coins(paid)
    for seat in range(before.num_players):
        if seat != payer:
            assert sorted(after.hands[seat]) == sorted(before.hands[seat]), seat
    assert after.discard == [*before.discard, *paid]
    assert after.public_discard == [*before.public_discard, *paid]
    assert sorted(after.removed) == sorted(before.removed)
    assert table_gold(after) == table_gold(before)


def test_auction_overpaying_with_one_gold_gives_no_change_back_from_the_discard():
    """Bidding 2 and paying with a single Gold 3 costs 3 (RULES §5), even when a Gold 1 that
    could serve as change lies in the discard: it stays there, face up."""
    change = gold(1, 0)
    hands = hands_for(2, p1=[change, gold(2, 0), gold(3, 0), gold(1, 1)])
    game = auction_game(2, hands, [LOT, LOT2])
    play(game, [(1, B(3)), (0, P), (1, act.pay(change)), (1, act.pay(gold(2, 0)))])
    assert change in game.state.public_discard  # change is there to be (wrongly) handed back
    before = game.state.clone()
    play(game, [(0, P), (1, B(2)), (1, act.pay(gold(3, 0)))])
    assert_paid_without_change(before, game.state, 1, [gold(3, 0)], LOT2)
    assert change in game.state.discard and change not in game.state.hands[1]


@pytest.mark.parametrize("num_players", [2, 3, 4])
def test_auction_overpaying_with_the_last_of_several_golds_gives_no_change(num_players):
    """Bid 3 paid with Gold 2 + Gold 2 costs 4: the second card completes the payment and
    nothing comes back, from the discard or from the other players (RULES §5)."""
    other = 2 if num_players > 2 else 0
    hands = hands_for(num_players, p1=[gold(2, 0), gold(2, 1), gold(1, 0)])
    hands[other] = [gold(1, 1), gold(1, 2)]  # coins another player could (wrongly) give back
    game = auction_game(num_players, hands, [LOT])
    game.apply(B(3))  # seat 1 bids first (left of the active seat 0)
    while game.state.decision == Decision.BID:
        game.apply(P)
    assert game.state.decision == Decision.PAY and game.current_player == 1
    before = game.state.clone()
    play(game, [(1, act.pay(gold(2, 0)))])
    assert game.state.decision == Decision.PAY  # 2 coins do not cover a bid of 3
    play(game, [(1, act.pay(gold(2, 1)))])
    assert_paid_without_change(before, game.state, 1, [gold(2, 0), gold(2, 1)], LOT)
    assert gold(1, 0) in game.state.hands[1]


def test_auction_an_overpayment_leaves_no_credit_for_the_next_payment():
    """Two payments in a row: an overpayment (bid 1, Gold 3) then bid 3 paid with Gold 1 + Gold 2.
    The 2 coins overpaid the first time are gone, not carried over: the second payment still
    needs both cards (RULES §5)."""
    hands = hands_for(2, p1=[gold(3, 0), gold(2, 0), gold(1, 0), gold(1, 1)])
    game = auction_game(2, hands, [LOT, LOT2])
    first = game.state.clone()
    play(game, [(1, B(1)), (0, P), (1, act.pay(gold(3, 0)))])
    assert_paid_without_change(first, game.state, 1, [gold(3, 0)], LOT)
    second = game.state.clone()
    play(game, [(0, P), (1, B(3)), (1, act.pay(gold(1, 0)))])
    assert game.state.decision == Decision.PAY and game.current_player == 1  # 1 coin of 3 so far
    play(game, [(1, act.pay(gold(2, 0)))])
    assert_paid_without_change(second, game.state, 1, [gold(1, 0), gold(2, 0)], LOT2)
    assert gold_in_hand(game, 1) == 1


# --------------------------------------------------------------------------- a face-up payment is public
def assert_nobody_lists_as_held(game, cards: list[int]) -> None:
    """No seat's public knowledge places any of ``cards`` in a hand: the state's public hands and
    their indicator rows, every seat's view (opponents' cards and its own public cards) and
    every seat's observation (the ``opponent_cards`` piece, from the view and from the state)."""
    state = game.state
    n = state.num_players
    for seat in range(n):
        assert not set(cards) & set(state.public_hands[seat]), seat
        assert not any(state.public_hand_rows[seat][c] for c in cards), seat
    for viewer in range(n):
        view = player_view(state, viewer)
        assert not set(cards) & set(view.own_public_cards), viewer
        for relative, known in enumerate(view.opponent_cards, start=1):
            assert not set(cards) & set(known), (viewer, relative)
        for observation in (encode(view), encode_state(state, viewer)):
            blocks = decode(observation)["opponent_cards"].reshape(-1, NUM_CARDS)
            assert not blocks[:, cards].any(), viewer


def assert_everybody_lists_as_held(game, seat: int, card_id: int) -> None:
    """Every seat's public knowledge places ``card_id`` in ``seat``'s hand (the positive control)."""
    state = game.state
    n = state.num_players
    assert card_id in state.public_hands[seat] and state.public_hand_rows[seat][card_id]
    for viewer in range(n):
        view = player_view(state, viewer)
        relative = (seat - viewer) % n
        if relative == 0:
            assert card_id in view.own_public_cards
        else:
            assert card_id in view.opponent_cards[relative - 1]
            blocks = decode(encode_state(state, viewer))["opponent_cards"].reshape(-1, NUM_CARDS)
            assert blocks[relative - 1, card_id] == 1


@pytest.mark.parametrize("num_players", [2, 3, 4])
def test_auction_gold_paid_face_up_is_no_longer_publicly_in_the_payers_hand(num_players):
    """A Gold 3 seat 1 took from the common area (so everybody knows it holds it) and then paid
    face up for a category card is seen going to the discard (RULES §5, §7): no seat's view or
    observation lists it in seat 1's hand any more; the won card is listed instead."""
    public_gold, kept_gold = gold(3, 0), gold(1, 0)
    game = auction_game(num_players, hands_for(num_players, p1=[public_gold, kept_gold]), [LOT])
    assert_everybody_lists_as_held(game, 1, public_gold)  # seat 1 took it from the common area
    assert kept_gold not in game.state.public_hands[1]  # kept face down: never public
    game.apply(B(4))
    while game.state.decision == Decision.BID:
        game.apply(P)
    play(game, [(1, act.pay(public_gold))])
    assert_everybody_lists_as_held(game, 1, public_gold)  # paying is one act: not seen until complete
    play(game, [(1, act.pay(kept_gold))])
    assert LOT in game.state.hands[1]
    assert_nobody_lists_as_held(game, [public_gold, kept_gold])
    assert_everybody_lists_as_held(game, 1, LOT)


def test_auction_gold_moved_by_a_penalty_then_paid_face_up_is_no_longer_public_anywhere():
    """Seat 1 takes a Gold 3 from the common area, loses it in a penalty to seat 2 (the others do
    not see which card moved, so it is still listed in seat 1's hand), and seat 2 pays it face up:
    once everybody sees it discarded, no hand lists it (RULES §5, §7)."""
    public_gold = gold(3, 0)
    hands = hands_for(3, p1=[public_gold])
    for seed in range(200):  # the penalty card is random: find a seed that moves the Gold 3 to seat 2
        game = auction_game(3, hands, [LOT, LOT2], seed=seed)
        play(game, [(1, B(60)), (2, P), (0, P)])  # seat 1 cannot pay 60: its REFUSE is forced
        if public_gold in game.state.hands[2]:
            break
    else:
        pytest.fail("no seed moved the Gold 3 to seat 2 in a penalty")
    assert public_gold in game.state.public_hands[1]  # which card moved is not public
    play(game, [(2, B(3)), (0, P), (2, act.pay(public_gold))])
    assert LOT in game.state.hands[2]
    assert_nobody_lists_as_held(game, [public_gold])


def test_bid_capacity_counts_cards_for_gold_and_coins_otherwise():
    """RULES §5: a gold card is paid with that many cards of any kind, anything else in gold."""
    hand = [gold(1), gold(3), card(MONKS, "A"), gold(2)]
    assert bid_capacity(hand, GOLD_LOT) == 4
    assert bid_capacity(hand, LOT) == 6
    assert bid_capacity([], LOT) == 0


def _brute_force_cover(golds: list[int], amount: int) -> list[int]:
    """The cover by definition: fewest coins, then fewest cards, then fewest 3s, over all subsets."""
    best = None
    for size in range(len(golds) + 1):
        for subset in itertools.combinations(golds, size):
            coins = sum(CARD_VALUE[c] for c in subset)
            if coins >= amount:
                key = (coins, size, sum(CARD_VALUE[c] == 3 for c in subset))
                best = key if best is None or key < best else best
    return best


def test_cheapest_cover_overpays_least_with_the_fewest_cards():
    rng = random.Random(5)
    pool = [gold(value, index) for value in (1, 2, 3) for index in range(5)]
    for _ in range(300):
        golds = rng.sample(pool, rng.randint(1, 8))
        amount = rng.randint(1, sum(CARD_VALUE[c] for c in golds))
        cover = cheapest_cover(golds, amount)
        values = [CARD_VALUE[c] for c in cover]
        assert (sum(values), len(values), values.count(3)) == _brute_force_cover(golds, amount), (golds, amount)
        assert values == sorted(values, reverse=True)  # higher values first ...
        assert cover == sorted(cover, key=lambda c: (-CARD_VALUE[c], golds.index(c)))  # ... then the given order
    assert cheapest_cover([gold(2), gold(3, 0), gold(1)], 4) == [gold(3, 0), gold(1)]  # exact, not 3+2
    assert cheapest_cover([gold(2, 0), gold(2, 1), gold(3, 0), gold(1)], 4) == [gold(2, 0), gold(2, 1)]  # 2+2 ties 3+1
    assert cheapest_cover([gold(3)], 0) == []


def test_cheapest_cover_names_what_it_cannot_pay():
    with pytest.raises(ValueError, match=r"cannot cover 7"):
        cheapest_cover([gold(3), gold(2)], 7)
    with pytest.raises(ValueError, match=r"gold cards only, got card 0"):
        cheapest_cover([card(MONKS, "A")], 1)
