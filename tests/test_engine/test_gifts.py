"""Phase 1, the gift turns (RULES §3)."""

from __future__ import annotations

import pytest
from scenarios import FORBIDDEN_TOMES, MONKS, PIGMENTS, card, deal_plan, finish_gifts, gift_policy, gold, make_deck

from biblios_env import actions as act
from biblios_env.engine.game import Game, IllegalActionError
from biblios_env.engine.state import Decision

PLAYER_COUNTS = [2, 3, 4]


def _turn_cards(num_players):
    """N + 1 distinct category cards for one gift turn."""
    return [card(MONKS, "A"), card(PIGMENTS, "B"), card(FORBIDDEN_TOMES, "C"), gold(1), gold(2)][: num_players + 1]


def _game(num_players, top=(), **options):
    options.setdefault("seed", 0)
    return Game(num_players, deck=make_deck(num_players, top), **options)


@pytest.mark.parametrize("num_players", PLAYER_COUNTS)
def test_gift_turn_draws_n_plus_one_cards_one_at_a_time(num_players):
    """The active player draws N+1 cards one at a time, placing each before the next (RULES §3)."""
    top = _turn_cards(num_players)
    game = _game(num_players, top, auto_forced=False)
    deck_size = len(game.deck)
    for index, expected in enumerate(top):
        assert game.state.decision == Decision.PLACE
        assert game.current_player == 0
        assert game.state.drawn_card == expected
        assert len(game.state.draw_pile) == deck_size - index - 1  # only this card is off the pile
        game.apply(game.legal_actions()[0])
    assert game.state.decision == Decision.TAKE
    assert game.state.drawn_card == -1
    assert len(game.state.draw_pile) == deck_size - num_players - 1


@pytest.mark.parametrize("num_players", PLAYER_COUNTS)
def test_gift_quotas_one_keep_one_auction_n_minus_one_common(num_players):
    """Exactly 1 keep, 1 auction pile and N-1 common placements per turn (RULES §3)."""
    game = _game(num_players, _turn_cards(num_players), auto_forced=False)
    assert game.legal_actions() == [act.KEEP, act.AUCTION, act.COMMON]
    assert game.state.quota == [1, 1, num_players - 1]
    game.apply(act.KEEP)
    assert game.legal_actions() == [act.AUCTION, act.COMMON]
    with pytest.raises(IllegalActionError, match="KEEP"):
        game.apply(act.KEEP)
    game.apply(act.AUCTION)
    assert game.legal_actions() == [act.COMMON]
    with pytest.raises(IllegalActionError, match="AUCTION"):
        game.apply(act.AUCTION)
    for _ in range(num_players - 1):
        game.apply(act.COMMON)
    assert game.state.decision == Decision.TAKE
    assert len(game.state.common_area) == num_players - 1
    assert len(game.state.auction_pile) == 1


@pytest.mark.parametrize(
    ("num_players", "early", "forced"),
    [
        (2, [act.COMMON, act.AUCTION], act.KEEP),
        (2, [act.KEEP, act.COMMON], act.AUCTION),
        (2, [act.AUCTION, act.KEEP], act.COMMON),
        (3, [act.COMMON, act.COMMON, act.KEEP], act.AUCTION),
        (4, [act.COMMON, act.AUCTION, act.COMMON, act.COMMON], act.KEEP),
        (4, [act.KEEP, act.AUCTION], act.COMMON),
    ],
)
def test_gift_quotas_force_late_placements(num_players, early, forced):
    """A slot whose quota is used is closed, so late cards can be forced (RULES §3)."""
    top = _turn_cards(num_players)
    game = _game(num_players, top, auto_forced=False)
    for slot in early:
        game.apply(slot)
    # the last card has a single slot left; or keep + auction are used and the rest must go common
    assert game.legal_actions() == [forced]
    # With auto_forced (the default) the forced placements happen by themselves.
    auto = _game(num_players, top)
    for slot in early:
        auto.apply(slot)
    state = auto.state
    placed_last = top[len(early)]
    common = state.common_area if num_players > 2 else state.hands[1]  # 2p: the single taker is forced too
    where = {act.KEEP: state.hands[0], act.AUCTION: state.auction_pile, act.COMMON: common}
    assert placed_last in where[forced]
    assert state.decision == (Decision.TAKE if num_players > 2 else Decision.PLACE)


@pytest.mark.parametrize("num_players", PLAYER_COUNTS)
def test_gift_kept_card_enters_hand_when_all_cards_are_placed(num_players):
    """The kept card goes face down in front of the player, into the hand once all N+1 are placed (RULES §3)."""
    top = _turn_cards(num_players)
    game = _game(num_players, top, auto_forced=False)
    game.apply(act.KEEP)
    assert game.state.kept_card == top[0]
    assert game.state.hands[0] == []
    game.apply(act.AUCTION)
    for _ in range(num_players - 2):
        game.apply(act.COMMON)
        assert game.state.hands[0] == []
    game.apply(act.COMMON)
    assert game.state.hands[0] == [top[0]]
    assert game.state.kept_card == -1
    assert game.state.auction_pile == [top[1]]
    assert game.state.common_area == top[2:]
    assert top[1] not in game.state.hands[0]  # the auction card is not in anybody's hand


@pytest.mark.parametrize(("num_players", "first_player"), [(2, 1), (3, 0), (3, 2), (4, 2)])
def test_gift_takers_go_round_from_the_active_players_left(num_players, first_player):
    """Starting left of the active player, each other player takes one common card; the last
    one takes the last card (RULES §3)."""
    top = _turn_cards(num_players)
    game = _game(num_players, top, first_player=first_player, auto_forced=False)
    game.apply(act.KEEP)
    game.apply(act.AUCTION)
    for _ in range(num_players - 1):
        game.apply(act.COMMON)
    takers = []
    took = []
    while game.state.decision == Decision.TAKE:
        takers.append(game.current_player)
        assert game.legal_actions() == sorted(act.take(c) for c in game.state.common_area)
        choice = max(game.state.common_area)  # any card may be chosen, not just the first
        took.append(choice)
        game.apply(act.take(choice))
        assert choice in game.state.hands[takers[-1]]
    assert takers == [(first_player + k) % num_players for k in range(1, num_players)]
    assert took == sorted(top[2:], reverse=True)
    assert game.state.common_area == []
    # the next player to the left becomes active and draws
    assert game.state.decision == Decision.PLACE
    assert game.state.active_player == game.current_player == (first_player + 1) % num_players


@pytest.mark.parametrize("num_players", PLAYER_COUNTS)
def test_gift_last_taker_is_forced(num_players):
    """The last taker gets the last card: with auto_forced it is taken by itself (RULES §3)."""
    top = _turn_cards(num_players)
    game = _game(num_players, top)
    game.apply(act.KEEP)
    game.apply(act.AUCTION)  # the remaining common placements are forced
    for _ in range(num_players - 2):
        game.apply(act.take(game.state.common_area[0]))
    last = (0 + num_players - 1) % num_players
    assert top[-1] in game.state.hands[last]
    assert game.state.active_player == 1
    assert game.state.decision == Decision.PLACE


def test_gift_take_only_from_the_common_area():
    """A taker may take only a card that is in the common area; placing is not a take (RULES §3)."""
    top = _turn_cards(3)
    game = _game(3, top, auto_forced=False)
    with pytest.raises(IllegalActionError, match="TAKE"):
        game.apply(act.take(top[0]))
    for slot in (act.KEEP, act.AUCTION, act.COMMON, act.COMMON):
        game.apply(slot)
    with pytest.raises(IllegalActionError, match="TAKE"):
        game.apply(act.take(top[0]))  # kept card, now in seat 0's hand
    with pytest.raises(IllegalActionError):
        game.apply(act.KEEP)
    with pytest.raises(IllegalActionError):
        game.apply(act.PASS)


@pytest.mark.parametrize(("num_players", "turns"), [(2, 20), (3, 18), (4, 16)])
def test_gift_phase_ends_when_draw_pile_is_empty(num_players, turns):
    """The phase ends when the draw pile is empty; removal counts divide it into whole turns (RULES §3)."""
    game = Game(num_players, seed=0, deck=deal_plan(num_players))  # no church card reaches a hand
    actives = []
    while game.phase_name == "gift":
        if game.state.decision == Decision.PLACE and game.state.quota == [1, 1, num_players - 1]:
            actives.append(game.state.active_player)
        game.apply(gift_policy(game))
    assert len(actives) == turns
    assert actives == [t % num_players for t in range(turns)]
    assert game.state.draw_pile == []
    assert game.state.common_area == []
    assert game.phase_name == "auction"
    # each turn put exactly one card on the auction pile
    assert len(game.state.auction_pile) + 1 == turns  # one is already revealed
    assert game.state.auction_card != -1
    # every player kept turns/N cards and took one card in each other player's turn
    assert [len(hand) for hand in game.state.hands] == [turns] * num_players


@pytest.mark.parametrize("num_players", PLAYER_COUNTS)
def test_gift_no_card_lost_over_the_phase(num_players):
    """Every drawn card ends in a hand or the auction pile (church cards: discarded) (RULES §3, §4)."""
    game = Game(num_players, seed=11)
    deck = set(game.deck)
    finish_gifts(game)
    placed = {c for hand in game.state.hands for c in hand} | set(game.state.auction_pile)
    placed |= {game.state.auction_card} | set(game.state.discard)
    assert placed == deck
