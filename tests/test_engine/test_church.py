"""Church cards (RULES §4): acquired by keeping, taking or winning; resolved at once; dice stay in 1..6."""

from __future__ import annotations

import pytest
from scenarios import (
    CHURCH_EITHER,
    CHURCH_ONE_DOWN,
    CHURCH_ONE_UP,
    CHURCH_TWO_DOWN,
    CHURCH_TWO_UP,
    HOLY_BOOKS,
    MANUSCRIPTS,
    MONKS,
    PIGMENTS,
    all_card_places,
    auction_game,
    card,
    gold,
    make_deck,
    random_playout,
    run,
)

from biblios_env import actions as act
from biblios_env.cards import CHURCH_IDS, IS_CHURCH
from biblios_env.engine.game import Game, IllegalActionError
from biblios_env.engine.state import Decision

FILLER = [card(MONKS, "A"), card(PIGMENTS, "A"), card(HOLY_BOOKS, "A"), card(MANUSCRIPTS, "A")]
ALL_ONE_UP = [act.church_one(c, 1) for c in range(5)]
ALL_ONE_DOWN = [act.church_one(c, -1) for c in range(5)]
ALL_PAIRS = [act.church_two(i, j) for i, j in act.CATEGORY_PAIRS]


def _gift_game(num_players, top, **options):
    options.setdefault("seed", 0)
    return Game(num_players, deck=make_deck(num_players, top), **options)


# --------------------------------------------------------------------------- acquisition routes
@pytest.mark.parametrize("num_players", [2, 3, 4])
def test_church_kept_is_resolved_at_once_and_the_turn_goes_on(num_players):
    """Keeping a church card acquires it at placement: the turn stops for its resolution, the card is
    discarded, no card enters the hand this turn, and the turn goes on (RULES §4)."""
    church = CHURCH_ONE_UP[0]
    top = [church, *FILLER[:num_players]]
    game = _gift_game(num_players, top)
    game.apply(act.KEEP)
    assert game.state.decision == Decision.CHURCH
    assert game.current_player == 0
    assert game.state.church_card == church
    assert game.legal_actions() == sorted([act.CHURCH_DECLINE, *ALL_ONE_UP])
    assert game.state.draw_pile[-1] == top[1]  # the next card is not drawn yet
    game.apply(act.church_one(PIGMENTS, 1))
    assert game.state.dice == [3, 4, 3, 3, 3]
    assert church in game.state.discard and church in game.state.public_discard
    assert game.state.decision == Decision.PLACE and game.current_player == 0
    assert game.state.drawn_card == top[1]
    assert game.legal_actions() == [act.AUCTION, act.COMMON]  # the keep slot is used
    game.apply(act.AUCTION)
    while game.state.active_player == 0:
        game.apply(game.legal_actions()[0])
    assert church not in game.state.hands[0]
    assert not set(top) & set(game.state.hands[0])  # nothing entered seat 0's hand this turn


@pytest.mark.parametrize("num_players", [3, 4])
def test_church_taken_from_common_area_interrupts_the_takes(num_players):
    """Taking a church card from the common area acquires it: the taker resolves it at once, then the
    next taker takes (RULES §4)."""
    church = CHURCH_ONE_DOWN[0]
    top = [FILLER[0], FILLER[1], church, *FILLER[2 : num_players + 1]]
    game = _gift_game(num_players, top)
    game.apply(act.KEEP)
    game.apply(act.AUCTION)  # keep and auction used: the common placements are forced
    assert game.state.decision == Decision.TAKE and game.current_player == 1
    game.apply(act.take(church))
    assert game.state.decision == Decision.CHURCH and game.current_player == 1
    assert game.legal_actions() == sorted([act.CHURCH_DECLINE, *ALL_ONE_DOWN])
    game.apply(act.church_one(MANUSCRIPTS, -1))
    assert game.state.dice == [3, 3, 3, 2, 3]
    assert church in game.state.discard and church not in game.state.hands[1]
    if num_players == 3:  # seat 2 takes the last card by itself; then seat 1's gift turn
        assert top[3] in game.state.hands[2]
        assert game.state.active_player == 1 and game.state.decision == Decision.PLACE
    else:
        assert game.state.decision == Decision.TAKE and game.current_player == 2


def test_church_taken_by_the_last_taker_then_next_turn():
    """2 players: the single common card is a church card; the forced taker resolves it, then takes
    their own gift turn (RULES §3, §4)."""
    church = CHURCH_EITHER
    game = _gift_game(2, [FILLER[0], FILLER[1], church, FILLER[2]])
    game.apply(act.KEEP)
    game.apply(act.AUCTION)  # common placement and the take are forced
    assert game.state.decision == Decision.CHURCH and game.current_player == 1
    assert game.legal_actions() == sorted([act.CHURCH_DECLINE, *ALL_ONE_UP, *ALL_ONE_DOWN])
    game.apply(act.church_one(HOLY_BOOKS, -1))
    assert game.state.dice == [3, 3, 2, 3, 3]
    assert game.state.hands == [[FILLER[0]], []]
    assert game.state.decision == Decision.PLACE
    assert game.state.active_player == game.current_player == 1
    assert game.state.drawn_card == FILLER[2]


@pytest.mark.parametrize("num_players", [2, 3, 4])
def test_church_placed_on_auction_pile_or_common_area_is_not_acquired(num_players):
    """A church card put on the auction pile (or in the common area) is not acquired by the active
    player (RULES §4)."""
    top = [CHURCH_ONE_UP[0], CHURCH_TWO_UP[0], *FILLER[: num_players - 1]]
    game = _gift_game(num_players, top, auto_forced=False)
    game.apply(act.AUCTION)
    assert game.state.decision == Decision.PLACE
    assert game.state.auction_pile == [CHURCH_ONE_UP[0]]
    game.apply(act.COMMON)
    assert game.state.decision == Decision.PLACE
    assert game.state.common_area == [CHURCH_TWO_UP[0]]
    assert game.state.dice == [3] * 5


@pytest.mark.parametrize("num_players", [2, 3, 4])
def test_church_won_at_auction_is_resolved_then_next_auction(num_players):
    """A church card won at auction is paid in gold, resolved at once by the winner, discarded; then
    the next player becomes active for the next auction (RULES §4, §5.5-6)."""
    church = CHURCH_TWO_DOWN[0]
    winner = 1
    hands = [[] for _ in range(num_players)]
    hands[winner] = [gold(2, 0)]
    game = auction_game(num_players, hands, [church, FILLER[0]], first_player=0)
    assert game.state.auction_card == church and game.current_player == 1 % num_players
    while game.state.decision == Decision.BID:
        game.apply(act.bid(2) if game.current_player == winner else act.PASS)
    assert game.state.decision == Decision.PAY and game.current_player == winner
    game.apply(act.pay(gold(2, 0)))
    assert game.state.decision == Decision.CHURCH and game.current_player == winner
    assert gold(2, 0) in game.state.public_discard
    assert game.legal_actions() == sorted([act.CHURCH_DECLINE, *ALL_PAIRS])
    game.apply(act.church_two(HOLY_BOOKS, PIGMENTS))
    assert game.state.dice == [3, 2, 2, 3, 3]
    assert church in game.state.discard
    assert all(church not in hand for hand in game.state.hands)
    assert game.state.auction_card == FILLER[0]
    assert game.state.active_player == 1 % num_players


def test_church_won_in_the_last_auction_ends_the_game_after_resolution():
    """Resolving a church card won in the last auction is the game's last decision (RULES §4, §6)."""
    church = CHURCH_ONE_UP[1]
    game = auction_game(2, [[gold(1, 0)], []], [*range(20, 39), church])  # 20 auctions, the church card last
    while game.state.auction_card != church:
        game.apply(act.PASS)
    assert game.state.auction_pile == []
    assert game.state.active_player == 1  # auctions alternate: seat 1 reveals the 20th card
    game.apply(act.bid(1))  # seat 0, left of the active player, bids first
    game.apply(act.PASS)
    game.apply(act.pay(gold(1, 0)))
    assert game.state.decision == Decision.CHURCH and game.current_player == 0
    game.apply(act.church_one(MONKS, 1))
    assert game.is_over and game.state.dice[MONKS] == 4


def test_church_unsold_at_auction_has_no_effect():
    """A church card nobody bids on is discarded without effect (RULES §5.4)."""
    church = CHURCH_ONE_DOWN[1]
    game = auction_game(3, [], [church])
    for _ in range(3):
        game.apply(act.PASS)
    assert church in game.state.discard
    assert game.state.dice == [3] * 5
    assert game.state.decision == Decision.BID and game.state.active_player == 1


# --------------------------------------------------------------------------- resolution options
@pytest.mark.parametrize(
    ("church", "dice", "expected"),
    [
        (CHURCH_ONE_UP[0], [6, 3, 1, 5, 6], [act.church_one(c, 1) for c in (1, 2, 3)]),
        (CHURCH_ONE_DOWN[0], [6, 3, 1, 5, 1], [act.church_one(c, -1) for c in (0, 1, 3)]),
        (
            CHURCH_EITHER,
            [6, 1, 3, 3, 3],
            [act.church_one(0, -1), act.church_one(1, 1), *ALL_ONE_UP[2:], *ALL_ONE_DOWN[2:]],
        ),
        (CHURCH_TWO_UP[1], [6, 3, 3, 6, 5], [act.church_two(1, 2), act.church_two(1, 4), act.church_two(2, 4)]),
        (CHURCH_TWO_DOWN[1], [1, 2, 1, 1, 3], [act.church_two(1, 4)]),
        (CHURCH_TWO_UP[0], [6, 6, 6, 6, 5], []),
        (CHURCH_ONE_UP[1], [6, 6, 6, 6, 6], []),
    ],
)
def test_church_options_keep_dice_within_one_to_six(church, dice, expected):
    """Every change that keeps the dice in 1..6 is offered and no other; two-dice cards change two
    different dice (never one, never the same twice); decline is always legal (RULES §4)."""
    game = _gift_game(3, [church, *FILLER[:3]], auto_forced=False)
    game.state.dice[:] = dice  # narrow unit test: put the dice at their bounds
    game.apply(act.KEEP)
    assert game.legal_actions() == sorted([act.CHURCH_DECLINE, *expected])
    for action in set(range(act.CHURCH_DECLINE, act.NUM_ACTIONS)) - set(expected) - {act.CHURCH_DECLINE}:
        with pytest.raises(IllegalActionError):
            game.clone().apply(action)


def test_church_decline_is_automatic_when_it_is_the_only_option():
    """With no legal die change the card is declined (discarded without effect) by itself (RULES §4)."""
    church = CHURCH_ONE_UP[0]
    game = _gift_game(3, [church, *FILLER[:3]])
    game.state.dice[:] = [6] * 5
    game.apply(act.KEEP)
    assert game.state.decision == Decision.PLACE and game.state.drawn_card == FILLER[0]
    assert church in game.state.discard and game.state.dice == [6] * 5


@pytest.mark.parametrize("church", CHURCH_IDS)
def test_church_decline_discards_without_effect(church):
    """The owner may always decline: the card is discarded and the dice stay (RULES §4)."""
    game = _gift_game(3, [church, *FILLER[:3]])
    game.apply(act.KEEP)
    assert act.CHURCH_DECLINE in game.legal_actions()
    game.apply(act.CHURCH_DECLINE)
    assert game.state.dice == [3] * 5
    assert church in game.state.discard and game.state.decision == Decision.PLACE


@pytest.mark.parametrize(
    ("church", "action", "dice"),
    [
        (CHURCH_ONE_UP[0], act.church_one(MONKS, 1), [4, 3, 3, 3, 3]),
        (CHURCH_ONE_DOWN[1], act.church_one(4, -1), [3, 3, 3, 3, 2]),
        (CHURCH_EITHER, act.church_one(PIGMENTS, 1), [3, 4, 3, 3, 3]),
        (CHURCH_EITHER, act.church_one(PIGMENTS, -1), [3, 2, 3, 3, 3]),
        (CHURCH_TWO_UP[0], act.church_two(MONKS, 4), [4, 3, 3, 3, 4]),
        (CHURCH_TWO_DOWN[0], act.church_two(HOLY_BOOKS, MANUSCRIPTS), [3, 3, 2, 2, 3]),
    ],
)
def test_church_resolution_changes_the_chosen_dice(church, action, dice):
    """One-die cards move one die by their amount; ±1 by the owner's choice; two-dice cards move the
    two chosen dice by the card's amount (RULES §4)."""
    game = _gift_game(4, [church, *FILLER[:4]])
    game.apply(act.KEEP)
    game.apply(action)
    assert game.state.dice == dice


def test_church_dice_reach_their_bounds_in_real_play():
    """Four kept +1 cards push Monks to 6 and no further; then -1 cards keep Holy Books at 1 or more
    (RULES §4)."""
    churches = [
        CHURCH_ONE_UP[0],
        CHURCH_ONE_UP[1],
        CHURCH_EITHER,
        CHURCH_TWO_UP[0],
        CHURCH_ONE_DOWN[0],
        CHURCH_ONE_DOWN[1],
        CHURCH_TWO_DOWN[0],
    ]
    fill = [c for c in range(45) if c not in FILLER]
    top = []
    for church in churches:
        top += [church, *fill[:4]]
        fill = fill[4:]
    game = Game(4, seed=0, deck=make_deck(4, top))
    moves = [act.church_one(MONKS, 1), act.church_one(MONKS, 1), act.church_one(MONKS, 1)]
    for move in moves:
        game.apply(act.KEEP)
        game.apply(move)
        while game.state.decision != Decision.PLACE or game.state.quota != [1, 1, 3]:
            game.apply(game.legal_actions()[0])
    assert game.state.dice[MONKS] == 6
    game.apply(act.KEEP)  # +1 to two dice: Monks is at 6 so no pair may include it
    legal = game.legal_actions()
    assert all(act.church_two(MONKS, other) not in legal for other in range(1, 5))
    assert act.church_two(PIGMENTS, HOLY_BOOKS) in legal
    game.apply(act.CHURCH_DECLINE)
    while game.state.decision != Decision.PLACE or game.state.quota != [1, 1, 3]:
        game.apply(game.legal_actions()[0])
    for _ in range(2):
        game.apply(act.KEEP)
        game.apply(act.church_one(HOLY_BOOKS, -1))
        while game.state.decision != Decision.PLACE or game.state.quota != [1, 1, 3]:
            game.apply(game.legal_actions()[0])
    assert game.state.dice == [6, 3, 1, 3, 3]
    game.apply(act.KEEP)  # -1 to two dice: no pair with Holy Books
    legal = game.legal_actions()
    assert [a for a in legal if a != act.CHURCH_DECLINE] == [
        act.church_two(i, j) for i, j in act.CATEGORY_PAIRS if HOLY_BOOKS not in (i, j)
    ]


@pytest.mark.parametrize("num_players", [2, 3, 4])
def test_church_never_stays_in_a_hand(num_players):
    """Over whole random games no church card is ever in a hand, and the dice stay in 1..6 (RULES §4)."""

    def check(game):
        assert not any(IS_CHURCH[c] for hand in game.state.hands for c in hand)
        assert all(1 <= die <= 6 for die in game.state.dice)

    for seed in range(6):
        random_playout(Game(num_players, seed=seed), seed, check)


def test_church_kept_as_the_forced_last_placement():
    """A church card forced into the keep slot as the last card is acquired too; the takes follow
    (RULES §3, §4)."""
    church = CHURCH_ONE_DOWN[0]
    game = _gift_game(3, [FILLER[0], FILLER[1], FILLER[2], church])
    game.apply(act.COMMON)
    game.apply(act.COMMON)
    game.apply(act.AUCTION)  # the church card can only be kept: placed by itself
    assert game.state.decision == Decision.CHURCH and game.current_player == 0
    assert all_card_places(game) == list(range(87))  # the church card is in play
    game.apply(act.church_one(MONKS, -1))
    assert game.state.dice == [2, 3, 3, 3, 3]
    assert game.state.hands[0] == []
    assert game.state.decision == Decision.TAKE and game.current_player == 1


def test_church_taken_in_the_last_gift_turn_then_the_auctions_begin():
    """A church card taken in the last gift turn is resolved before the auction phase starts
    (RULES §3, §4, §5.1)."""
    church = CHURCH_TWO_UP[1]
    game = Game(2, seed=0, deck=make_deck(2, bottom=[FILLER[0], FILLER[1], church]), auction_order="placed")
    run(game, lambda g: g.state.decision == Decision.CHURCH)
    assert game.phase_name == "gift" and game.state.draw_pile == []
    assert game.state.active_player == 1 and game.current_player == 0  # seat 0 took it (forced)
    assert all_card_places(game) == list(range(87))
    game.apply(act.church_two(MONKS, PIGMENTS))
    assert game.state.dice == [4, 4, 3, 3, 3]
    assert game.phase_name == "auction"
    assert game.state.active_player == 0 and game.current_player == 1
