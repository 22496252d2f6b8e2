"""The observation layout (``biblios_env.observations``): declared pieces, named slices,
docs table, and what ``encode`` writes where.

Scenario tests build exact positions from a given draw pile (RULES §8 style) and check
single pieces; a cross-check replays seeded random games and recomputes every piece
from the full state with explicit relative-seat arithmetic (RULES §7: what a seat knows).
"""

from __future__ import annotations

import dataclasses
import re

import numpy as np
import pytest
from scenarios import two_player_split_deck

from biblios_env import Game, actions, raw_env
from biblios_env.cards import CARD_VALUE, IS_GOLD, NUM_CARDS, NUM_CATEGORIES
from biblios_env.engine.state import NO_CARD, NO_SEAT, Decision, Phase, State
from biblios_env.engine.views import player_view
from biblios_env.observations import (
    MAX_PLAYERS,
    OBSERVATION_SIZE,
    PIECES,
    SLICES,
    decode,
    encode,
    encode_state,
    layout_markdown,
)

# ----------------------------------------------------------------- helpers


def observe(game: Game, seat: int) -> dict[str, np.ndarray]:
    return decode(encode(player_view(game.state, seat)))


def indicator(cards: list[int] | tuple[int, ...]) -> np.ndarray:
    out = np.zeros(NUM_CARDS, dtype=np.float32)
    out[list(cards)] = 1.0
    return out


def one_hot(index: int, size: int) -> np.ndarray:
    out = np.zeros(size, dtype=np.float32)
    if index >= 0:
        out[index] = 1.0
    return out


def cards_of(vector: np.ndarray) -> list[int]:
    return [int(card) for card in np.flatnonzero(vector)]


def opponent_slot(pieces: dict[str, np.ndarray], relative: int) -> np.ndarray:
    """The 87-wide block of ``opponent_cards`` for relative seat ``relative`` (1..3)."""
    return pieces["opponent_cards"][(relative - 1) * NUM_CARDS : relative * NUM_CARDS]


# Seat 0: Monks A-I, Holy Books A-I, two Gold 3. Seat 1: Pigments A-I, nine Gold 1, two Gold 2.
HAND_0 = [*range(0, 9), *range(18, 27), 67, 68]
HAND_1 = [*range(9, 18), *range(45, 54), 56, 57]
# Forbidden Tomes A first, then a Gold 2 card, then the rest; the removed cards include
# two gold cards of each value, as 2-player setup requires (RULES §2).
AUCTIONED = [36, 58, *range(27, 36), *range(37, 45), 78]
SPLIT_DECK = two_player_split_deck(HAND_0, HAND_1, AUCTIONED)


def auction_game() -> Game:
    """The split-deck game at the first auction (the piles are auctioned in placed order)."""
    game = Game(2, seed=0, deck=SPLIT_DECK, auction_order="placed")
    while game.state.phase == Phase.GIFT:
        game.apply(game.legal_actions()[0])
    return game


# ----------------------------------------------------------------- layout


def test_observation_size_is_the_documented_1134() -> None:
    assert OBSERVATION_SIZE == 1134
    assert sum(piece.size for piece in PIECES) == OBSERVATION_SIZE


def test_slices_cover_the_vector_contiguously_in_piece_order() -> None:
    assert list(SLICES) == [piece.name for piece in PIECES]
    assert len({piece.name for piece in PIECES}) == len(PIECES)
    start = 0
    for piece in PIECES:
        piece_slice = SLICES[piece.name]
        assert piece_slice.start == start, piece.name
        assert piece_slice.stop - piece_slice.start == piece.size, piece.name
        assert piece_slice.step is None
        start = piece_slice.stop
    assert start == OBSERVATION_SIZE


def test_card_set_pieces_are_87_wide_and_opponents_padded_to_four_players() -> None:
    for name in (
        "hand",
        "drawn_card",
        "kept_card",
        "common_area",
        "own_auction_cards",
        "auction_card",
        "church_card",
        "payment_cards",
        "known_discard",
    ):
        assert SLICES[name].stop - SLICES[name].start == NUM_CARDS, name
    assert SLICES["opponent_cards"].stop - SLICES["opponent_cards"].start == (MAX_PLAYERS - 1) * NUM_CARDS
    for name in (
        "passed",
        "excluded",
        "active_player",
        "current_player",
        "first_player",
        "seats_present",
        "hand_sizes",
    ):
        assert SLICES[name].stop - SLICES[name].start == MAX_PLAYERS, name
    assert SLICES["high_bidder"].stop - SLICES["high_bidder"].start == MAX_PLAYERS + 1
    assert SLICES["dice"].stop - SLICES["dice"].start == NUM_CATEGORIES * 6


def test_decode_returns_named_views_of_the_vector() -> None:
    observation = np.arange(OBSERVATION_SIZE, dtype=np.float32)
    pieces = decode(observation)
    assert list(pieces) == [piece.name for piece in PIECES]
    for piece in PIECES:
        view = pieces[piece.name]
        assert view.shape == (piece.size,)
        assert np.shares_memory(view, observation), f"{piece.name} is a copy, not a view"
        assert view[0] == SLICES[piece.name].start
    pieces["hand"][0] = -7.0
    assert observation[0] == -7.0


@pytest.mark.parametrize("shape", [(OBSERVATION_SIZE - 1,), (OBSERVATION_SIZE + 1,), (1, OBSERVATION_SIZE), (0,)])
def test_decode_rejects_wrong_shapes(shape: tuple[int, ...]) -> None:
    with pytest.raises(ValueError, match=re.escape(str(shape))):
        decode(np.zeros(shape, dtype=np.float32))


def test_layout_markdown_lists_every_piece_with_its_slice_and_size() -> None:
    text = layout_markdown()
    rows = [line for line in text.splitlines() if line.startswith("| `")]
    assert len(rows) == len(PIECES)
    for row, piece in zip(rows, PIECES):
        piece_slice = SLICES[piece.name]
        cells = [cell.strip() for cell in row.strip("|").split("|")]
        assert cells[0] == f"`{piece.name}`"
        assert cells[1] == f"{piece_slice.start}:{piece_slice.stop}"
        assert cells[2] == str(piece.size)
        assert cells[3] == piece.meaning


def test_encode_writes_into_a_given_buffer_and_matches_a_fresh_encoding() -> None:
    game = Game(3, seed=4)
    view = player_view(game.state, 0)
    buffer = np.full(OBSERVATION_SIZE, 9.0, dtype=np.float32)
    returned = encode(view, buffer)
    assert returned is buffer
    fresh = encode(view)
    assert fresh.dtype == np.float32 and fresh.shape == (OBSERVATION_SIZE,)
    np.testing.assert_array_equal(buffer, fresh)


# ----------------------------------------------------------------- gift-turn scenario, 4 players


def four_player_game() -> Game:
    """4 players, no forced moves applied. Turn 0 (seat 0): Monks A, Gold 1, Pigments A,
    Holy Books A, Manuscripts A; turn 1 (seat 1) starts with church card 78 (+1 to one die).
    The seven church cards 80..86 are the removed ones."""
    top = [0, 45, 9, 18, 27, 78]
    rest = [card for card in range(80) if card not in top]
    return Game(4, seed=0, deck=top + rest, auto_forced=False)


#: Seat 0 keeps Monks A, auctions Gold 1, puts the other three in the common area; seats 1, 2, 3 take.
FIRST_GIFT_TURN = (
    actions.KEEP,
    actions.AUCTION,
    actions.COMMON,
    actions.COMMON,
    actions.COMMON,
    actions.take(9),
    actions.take(18),
    actions.take(27),
)


def test_start_of_game_pieces_for_the_active_player_and_an_opponent() -> None:
    game = four_player_game()
    active, other = observe(game, 0), observe(game, 2)
    np.testing.assert_array_equal(active["drawn_card"], indicator([0]))
    np.testing.assert_array_equal(other["drawn_card"], np.zeros(NUM_CARDS))  # RULES §7: only the placer sees it
    for pieces, relative_first in ((active, 0), (other, 2)):
        np.testing.assert_array_equal(pieces["num_players"], [0, 0, 1])
        np.testing.assert_array_equal(pieces["phase"], one_hot(Phase.GIFT, 3))
        np.testing.assert_array_equal(pieces["decision"], one_hot(Decision.PLACE, 6))
        np.testing.assert_array_equal(pieces["dice"], np.tile(one_hot(2, 6), NUM_CATEGORIES))  # every die at 3
        np.testing.assert_allclose(pieces["dice_value"], [0.5] * NUM_CATEGORIES)
        np.testing.assert_array_equal(pieces["current_player"], one_hot(relative_first, 4))
        np.testing.assert_array_equal(pieces["active_player"], one_hot(relative_first, 4))
        np.testing.assert_array_equal(pieces["first_player"], one_hot(relative_first, 4))
        np.testing.assert_array_equal(pieces["seats_present"], [1, 1, 1, 1])
        np.testing.assert_allclose(pieces["quota"], [1, 1, 1])  # keep 1, auction 1, common 3 of 3
        np.testing.assert_allclose(pieces["pile_sizes"], [79 / 80, 0, 0])
        np.testing.assert_array_equal(pieces["hand_sizes"], np.zeros(4))
        np.testing.assert_array_equal(pieces["high_bidder"], np.zeros(5))
        assert not pieces["hand"].any() and not pieces["common_area"].any()


def test_kept_and_auctioned_cards_are_seen_only_by_the_active_player() -> None:
    game = four_player_game()
    game.apply(actions.KEEP)  # Monks A
    np.testing.assert_array_equal(observe(game, 0)["kept_card"], indicator([0]))
    assert not observe(game, 0)["hand"].any(), "the kept card joins the hand at the end of the turn (RULES §3)"
    np.testing.assert_array_equal(observe(game, 0)["drawn_card"], indicator([45]))
    np.testing.assert_allclose(observe(game, 0)["quota"], [0, 1, 1])
    game.apply(actions.AUCTION)  # Gold 1
    active, other = observe(game, 0), observe(game, 2)
    np.testing.assert_array_equal(active["own_auction_cards"], indicator([45]))
    np.testing.assert_array_equal(active["drawn_card"], indicator([9]))
    for name in ("kept_card", "own_auction_cards", "drawn_card"):
        assert not other[name].any(), name
    for pieces in (active, other):
        np.testing.assert_allclose(pieces["pile_sizes"], [77 / 80, 1 / 20, 0])
        np.testing.assert_allclose(pieces["quota"], [0, 0, 1])


def test_common_area_takes_and_hand_sizes_by_relative_seat() -> None:
    game = four_player_game()
    for action in FIRST_GIFT_TURN[:5]:
        game.apply(action)
    # The kept Monks A is now in seat 0's hand; seat 1 takes first from the common area.
    seen_by_2 = observe(game, 2)
    np.testing.assert_array_equal(seen_by_2["common_area"], indicator([9, 18, 27]))
    np.testing.assert_allclose(seen_by_2["pile_sizes"], [75 / 80, 1 / 20, 1])
    np.testing.assert_array_equal(seen_by_2["decision"], one_hot(Decision.TAKE, 6))
    np.testing.assert_array_equal(seen_by_2["current_player"], one_hot(3, 4))  # seat 1 is seat 2's relative 3
    np.testing.assert_allclose(seen_by_2["hand_sizes"], [0, 0, 1 / 20, 0])  # seats 2, 3, 0, 1
    np.testing.assert_array_equal(observe(game, 0)["hand"], indicator([0]))
    np.testing.assert_allclose(observe(game, 0)["quota"], [0, 0, 0])
    assert not seen_by_2["opponent_cards"].any(), "a kept card is private (RULES §7)"

    game.apply(actions.take(9))  # seat 1
    game.apply(actions.take(18))  # seat 2
    game.apply(actions.take(27))  # seat 3
    seen_by_2, seen_by_0, seen_by_3 = observe(game, 2), observe(game, 0), observe(game, 3)
    np.testing.assert_array_equal(seen_by_2["hand"], indicator([18]))
    # Seat 2's opponents in order: seat 3 (relative 1), seat 0 (2), seat 1 (3).
    np.testing.assert_array_equal(opponent_slot(seen_by_2, 1), indicator([27]))
    np.testing.assert_array_equal(opponent_slot(seen_by_2, 2), np.zeros(NUM_CARDS))
    np.testing.assert_array_equal(opponent_slot(seen_by_2, 3), indicator([9]))
    # Seat 0's opponents: seat 1, seat 2, seat 3.
    np.testing.assert_array_equal(opponent_slot(seen_by_0, 1), indicator([9]))
    np.testing.assert_array_equal(opponent_slot(seen_by_0, 2), indicator([18]))
    np.testing.assert_array_equal(opponent_slot(seen_by_0, 3), indicator([27]))
    # Seat 3's opponents: seat 0 (whose kept card nobody saw), seat 1, seat 2.
    np.testing.assert_array_equal(opponent_slot(seen_by_3, 1), np.zeros(NUM_CARDS))
    np.testing.assert_array_equal(opponent_slot(seen_by_3, 2), indicator([9]))
    np.testing.assert_array_equal(opponent_slot(seen_by_3, 3), indicator([18]))
    np.testing.assert_allclose(seen_by_3["hand_sizes"], [1 / 20] * 4)
    # Turn 1: seat 1 is active and draws the church card.
    np.testing.assert_array_equal(seen_by_2["active_player"], one_hot(3, 4))
    np.testing.assert_array_equal(seen_by_0["active_player"], one_hot(1, 4))
    np.testing.assert_array_equal(seen_by_0["first_player"], one_hot(0, 4))
    np.testing.assert_array_equal(seen_by_3["first_player"], one_hot(1, 4))
    np.testing.assert_array_equal(observe(game, 1)["drawn_card"], indicator([78]))


def test_a_kept_church_card_is_public_and_its_die_change_shows_in_the_dice() -> None:
    game = four_player_game()
    for action in FIRST_GIFT_TURN:
        game.apply(action)
    game.apply(actions.KEEP)  # seat 1 keeps church card 78 (+1 to one die) and resolves it at once (RULES §4)
    for seat in range(4):
        pieces = observe(game, seat)
        np.testing.assert_array_equal(pieces["church_card"], indicator([78]))
        np.testing.assert_array_equal(pieces["decision"], one_hot(Decision.CHURCH, 6))
        np.testing.assert_array_equal(pieces["current_player"], one_hot((1 - seat) % 4, 4))
    game.apply(actions.church_one(0, +1))  # Monks 3 -> 4
    for seat in range(4):
        pieces = observe(game, seat)
        assert not pieces["church_card"].any()
        np.testing.assert_array_equal(pieces["dice"][0:6], one_hot(3, 6))
        np.testing.assert_array_equal(pieces["dice"][6:30], np.tile(one_hot(2, 6), 4))
        np.testing.assert_allclose(pieces["dice_value"], [4 / 6, 0.5, 0.5, 0.5, 0.5])
        np.testing.assert_array_equal(pieces["known_discard"], indicator([78]))


# ----------------------------------------------------------------- auction scenario, 2 players


#: Forbidden Tomes A: seat 1 bids 2, seat 0 bids 3, seat 1 bids 5, seat 0 passes; seat 1 pays 2 + 2 + 1.
FIRST_AUCTION = (
    actions.bid(2),
    actions.bid(3),
    actions.bid(5),
    actions.PASS,
    actions.pay(56),
    actions.pay(57),
    actions.pay(45),
)
#: Gold 2: seat 0 bids 2 (cards), seat 1 passes, seat 0 pays with Monks A and Monks B.
SECOND_AUCTION = (actions.bid(2), actions.PASS, actions.pay(0), actions.pay(1))


def test_auction_scenario_bids_payment_and_padding_for_two_players() -> None:
    game = auction_game()
    seen_by_0, seen_by_1 = observe(game, 0), observe(game, 1)
    np.testing.assert_array_equal(seen_by_0["hand"], indicator(HAND_0))
    np.testing.assert_array_equal(seen_by_1["hand"], indicator(HAND_1))
    np.testing.assert_allclose(seen_by_0["hand_gold"], [6 / 66])
    np.testing.assert_allclose(seen_by_1["hand_gold"], [13 / 66])
    for pieces in (seen_by_0, seen_by_1):
        np.testing.assert_array_equal(pieces["phase"], one_hot(Phase.AUCTION, 3))
        np.testing.assert_array_equal(pieces["decision"], one_hot(Decision.BID, 6))
        np.testing.assert_array_equal(pieces["auction_card"], indicator([36]))  # placed order: Forbidden Tomes A
        np.testing.assert_array_equal(pieces["high_bidder"], one_hot(4, 5))  # no bid yet
        np.testing.assert_array_equal(pieces["num_players"], [1, 0, 0])
        np.testing.assert_array_equal(pieces["seats_present"], [1, 1, 0, 0])
        np.testing.assert_allclose(pieces["hand_sizes"], [1, 1, 0, 0])  # 20 cards each, padded
        np.testing.assert_allclose(pieces["pile_sizes"], [0, 19 / 20, 0])
        np.testing.assert_array_equal(pieces["opponent_cards"][NUM_CARDS:], np.zeros(2 * NUM_CARDS))
        np.testing.assert_allclose(pieces["quota"], [0, 0, 0])
    # The cards seat 1 took from the common area are public; seat 0's kept ones are not.
    taken_by_1 = [card for turn, card in enumerate(SPLIT_DECK[2::3]) if turn % 2 == 0]
    taken_by_0 = [card for turn, card in enumerate(SPLIT_DECK[2::3]) if turn % 2 == 1]
    np.testing.assert_array_equal(opponent_slot(seen_by_0, 1), indicator(taken_by_1))
    np.testing.assert_array_equal(opponent_slot(seen_by_1, 1), indicator(taken_by_0))
    # Own cards still face down in the auction pile: the even (seat 0) or odd (seat 1) turns' cards.
    np.testing.assert_array_equal(seen_by_0["own_auction_cards"], indicator(AUCTIONED[2::2]))
    np.testing.assert_array_equal(seen_by_1["own_auction_cards"], indicator(AUCTIONED[1::2]))

    # Seat 1 (left of the active seat 0) bids 2, seat 0 bids 3, seat 1 bids 5, seat 0 passes.
    for action in FIRST_AUCTION[:4]:
        game.apply(action)
    seen_by_0, seen_by_1 = observe(game, 0), observe(game, 1)
    np.testing.assert_array_equal(seen_by_1["decision"], one_hot(Decision.PAY, 6))
    np.testing.assert_array_equal(seen_by_0["high_bidder"], one_hot(1, 5))
    np.testing.assert_array_equal(seen_by_1["high_bidder"], one_hot(0, 5))
    np.testing.assert_array_equal(seen_by_0["passed"], [1, 0, 0, 0])
    np.testing.assert_array_equal(seen_by_1["passed"], [0, 1, 0, 0])
    np.testing.assert_allclose(seen_by_0["high_bid"], [5 / 66])
    sizes_before = [len(hand) for hand in game.state.hands]
    game.apply(actions.pay(56))  # a Gold 2: shown to everyone only once the payment is complete (RULES §5)
    payer, other = observe(game, 1), observe(game, 0)
    np.testing.assert_array_equal(payer["payment_cards"], indicator([56]))
    np.testing.assert_allclose(payer["payment_progress"], [1 / 66, 2 / 66])  # 1 card, 2 coins
    assert not other["payment_cards"].any() and not other["payment_progress"].any(), "paying is one act"
    np.testing.assert_allclose(other["hand_sizes"][:2], [sizes_before[0] / 20, sizes_before[1] / 20])
    np.testing.assert_allclose(payer["hand_sizes"][0], (sizes_before[1] - 1) / 20)
    game.apply(actions.pay(57))
    game.apply(actions.pay(45))  # 2 + 2 + 1 = 5 covers the bid
    seen_by_0, seen_by_1 = observe(game, 0), observe(game, 1)
    for pieces in (seen_by_0, seen_by_1):
        np.testing.assert_array_equal(pieces["known_discard"], indicator([56, 57, 45]))
        assert not pieces["payment_cards"].any()
        np.testing.assert_array_equal(pieces["auction_card"], indicator([58]))  # next: the Gold 2 card
    assert seen_by_0["opponent_cards"][36] == 1, "the won card is publicly in seat 1's hand"
    assert seen_by_1["hand"][36] == 1 and seen_by_1["hand"][56] == 0
    np.testing.assert_array_equal(seen_by_0["active_player"], one_hot(1, 4))


def test_a_payment_in_progress_changes_nothing_the_other_player_sees() -> None:
    """Paying is one act (RULES §5): until it completes, picking cards changes no other seat's
    observation, and a refused payment reveals none of the cards picked for it."""
    game = auction_game()
    for action in FIRST_AUCTION[:4]:  # seat 1 wins the Holy Books card with a bid of 5 and pays
        game.apply(action)
    before = encode_state(game.state, 0)
    for card in (56, 57):  # two Gold 2 picked, 4 of 5 coins: not complete yet
        game.apply(actions.pay(card))
        np.testing.assert_array_equal(encode_state(game.state, 0), before)
    discard_before = list(game.state.public_discard)
    game.apply(actions.REFUSE)
    seen = decode(encode_state(game.state, 0))
    assert not seen["payment_cards"].any()
    assert list(game.state.public_discard) == discard_before, "a refused payment reveals nothing"
    assert not {56, 57} & set(np.flatnonzero(seen["known_discard"]).tolist())


def test_cards_paid_for_a_gold_card_are_hidden_from_the_other_player() -> None:
    game = auction_game()
    for action in FIRST_AUCTION:
        game.apply(action)
    # Gold 2 under auction, seat 1 active: seat 0 bids 2 (cards), seat 1 passes, seat 0 pays.
    for action in SECOND_AUCTION[:3]:
        game.apply(action)
    payer, other = observe(game, 0), observe(game, 1)
    np.testing.assert_array_equal(payer["payment_cards"], indicator([0]))
    assert not other["payment_cards"].any(), "cards paid for gold are face down (RULES §5, §7)"
    np.testing.assert_allclose(payer["payment_progress"], [1 / 66, 0])  # 1 card, no coins
    assert not other["payment_progress"].any(), "paying is one act: the others see no progress (RULES §5)"
    game.apply(SECOND_AUCTION[3])
    payer, other = observe(game, 0), observe(game, 1)
    assert payer["known_discard"][0] == 1 and payer["known_discard"][1] == 1
    assert other["known_discard"][0] == 0 and other["known_discard"][1] == 0
    assert payer["hand"][58] == 1 and opponent_slot(other, 1)[58] == 1


def test_a_default_marks_the_defaulter_excluded_for_everyone() -> None:
    game = auction_game()
    for action in FIRST_AUCTION + SECOND_AUCTION:
        game.apply(action)
    # Manuscripts A under auction, seat 0 active: seat 1 bids 1, seat 0 passes, seat 1 refuses.
    hand_sizes = [len(hand) for hand in game.state.hands]
    game.apply(actions.bid(1))
    game.apply(actions.PASS)
    game.apply(actions.REFUSE)
    seen_by_0, seen_by_1 = observe(game, 0), observe(game, 1)
    np.testing.assert_array_equal(seen_by_0["excluded"], [0, 1, 0, 0])
    np.testing.assert_array_equal(seen_by_1["excluded"], [1, 0, 0, 0])
    np.testing.assert_array_equal(seen_by_0["high_bidder"], one_hot(4, 5))  # the card is auctioned again
    np.testing.assert_allclose(seen_by_0["hand_sizes"], [(hand_sizes[0] + 1) / 20, (hand_sizes[1] - 1) / 20, 0, 0])
    np.testing.assert_array_equal(seen_by_0["current_player"], one_hot(0, 4))


# ----------------------------------------------------------------- every piece, every step, random games


def expected_pieces(state: State, seat: int) -> dict[str, np.ndarray]:
    """Every piece recomputed from the full state and RULES §7 (relative seat r is absolute (seat + r) % n)."""
    n = state.num_players

    def absolute(relative: int) -> int:
        return (seat + relative) % n

    def relative(absolute_seat: int) -> int:
        return (absolute_seat - seat) % n

    def per_relative_seat(values: list[float]) -> np.ndarray:
        return np.array([values[absolute(r)] for r in range(n)] + [0.0] * (MAX_PLAYERS - n), dtype=np.float32)

    gift, auction = state.phase == Phase.GIFT, state.phase == Phase.AUCTION
    card = state.auction_card
    bidding = auction and card != NO_CARD  # the bidding context exists only while a card is under auction
    own_payment = auction and state.high_bidder == seat  # only the payer sees a payment in progress (RULES §5)
    hand_sizes = [len(h) for h in state.hands]
    if state.payment and not own_payment:
        hand_sizes[state.high_bidder] += len(state.payment)
    opponents = [
        indicator(state.public_hands[absolute(r)]) if r < n else np.zeros(NUM_CARDS) for r in range(1, MAX_PLAYERS)
    ]
    high_bid = state.high_bid if bidding else 0
    hand = state.hands[seat]
    return {
        "hand": indicator(hand),
        "drawn_card": indicator(
            [state.drawn_card] if gift and state.current_player == seat and state.drawn_card != NO_CARD else []
        ),
        "kept_card": indicator(
            [state.kept_card] if gift and state.active_player == seat and state.kept_card != NO_CARD else []
        ),
        "common_area": indicator(state.common_area),
        "own_auction_cards": indicator(state.auction_contributions[seat]),
        "auction_card": indicator([card] if auction and card != NO_CARD else []),
        "church_card": indicator([state.church_card] if state.church_card != NO_CARD else []),
        "payment_cards": indicator(state.payment if own_payment else []),
        "known_discard": indicator(state.public_discard + state.private_discard[seat]),
        "opponent_cards": np.concatenate(opponents),
        "num_players": one_hot(n - 2, 3),
        "phase": one_hot(state.phase, 3),
        "decision": one_hot(state.decision, len(Decision)),
        "dice": np.concatenate([one_hot(die - 1, 6) for die in state.dice]),
        "high_bidder": one_hot(MAX_PLAYERS if state.high_bidder == NO_SEAT else relative(state.high_bidder), 5)
        if bidding
        else np.zeros(5),
        "passed": per_relative_seat(state.passed) if bidding else np.zeros(4),
        "excluded": per_relative_seat(state.excluded) if bidding else np.zeros(4),
        "active_player": one_hot(relative(state.active_player), 4),
        "current_player": one_hot(-1 if state.current_player == NO_SEAT else relative(state.current_player), 4),
        "first_player": one_hot(relative(state.first_player), 4),
        "seats_present": per_relative_seat([1.0] * n),
        "dice_value": np.array(state.dice) / 6,
        "hand_gold": np.array([sum(CARD_VALUE[c] for c in hand if IS_GOLD[c]) / 66]),
        "quota": np.array([state.quota[0], state.quota[1], state.quota[2] / 3] if gift else [0, 0, 0]),
        "high_bid": np.array([high_bid / 66]),
        "payment_progress": np.array([len(state.payment) / 66, state.payment_value / 66] if own_payment else [0, 0]),
        "hand_sizes": per_relative_seat([size / 20 for size in hand_sizes]),
        "pile_sizes": np.array([len(state.draw_pile) / 80, len(state.auction_pile) / 20, len(state.common_area) / 3]),
    }


@pytest.mark.parametrize(
    ("num_players", "seed", "penalty"),
    [
        (2, 11, "standard"),
        (2, 21, "bluffs"),
        (3, 12, "standard"),
        (3, 22, "bluffs"),
        (4, 13, "standard"),
        (4, 23, "bluffs"),
    ],
)
def test_every_piece_matches_the_state_in_random_games(num_players: int, seed: int, penalty: str) -> None:
    game = Game(num_players, seed=seed, penalty=penalty)
    rng = np.random.default_rng(seed)
    steps = 0
    while True:
        for seat in range(num_players):
            observation = encode(player_view(game.state, seat))
            expected = expected_pieces(game.state, seat)
            if np.allclose(observation, np.concatenate([expected[name] for name in SLICES]), rtol=1e-6, atol=1e-7):
                continue
            for name, piece in decode(observation).items():  # name the first wrong piece
                np.testing.assert_allclose(
                    piece,
                    expected[name],
                    rtol=1e-6,
                    atol=1e-7,
                    err_msg=f"piece {name!r} for seat {seat} at step {steps} "
                    f"({Phase(game.state.phase).name}, {Decision(game.state.decision).name})",
                )
        if game.is_over:
            break
        legal = game.legal_actions()
        game.apply(legal[int(rng.integers(len(legal)))])
        steps += 1
    assert steps > 50


@pytest.mark.parametrize("num_players", [2, 3, 4])
@pytest.mark.parametrize(("penalty", "strict_bids"), [("standard", False), ("bluffs", False), ("standard", True)])
def test_the_environment_fast_path_encodes_exactly_the_view(num_players: int, penalty: str, strict_bids: bool) -> None:
    """``encode_state`` (what the environment calls) repeats ``player_view``'s visibility rules
    to skip building the view; any drift between the two would leak or lose information."""
    checked = 0
    for seed in range(8):
        game = Game(num_players, seed=seed, penalty=penalty, strict_bids=strict_bids)
        rng = np.random.default_rng(seed)
        while True:
            for seat in range(num_players):
                fast = encode_state(game.state, seat)
                slow = encode(player_view(game.state, seat))
                if not np.array_equal(fast, slow):
                    slow_pieces = decode(slow)
                    wrong = [name for name, part in decode(fast).items() if not np.array_equal(part, slow_pieces[name])]
                    pytest.fail(f"seed {seed}, seat {seat}, decision {len(game.history)}: pieces {wrong} differ")
                checked += 1
            if game.is_over:
                break
            legal = game.legal_actions()
            game.apply(legal[int(rng.integers(len(legal)))])
    assert checked > 1000


def test_no_auction_context_is_left_in_the_final_observation() -> None:
    """'high_bid' is the bid on *the card under auction*; once the game is over none is."""
    stale = []
    for seed in range(30):
        game = Game(3, seed=seed)
        rng = np.random.default_rng(seed)
        while not game.is_over:
            legal = game.legal_actions()
            game.apply(legal[int(rng.integers(len(legal)))])
        pieces = observe(game, 0)
        if pieces["high_bid"][0] != 0 or pieces["payment_progress"].any():
            stale.append((seed, float(pieces["high_bid"][0]) * 66))
    assert not stale, f"final observations still report a high bid (seed, bid): {stale}"


@pytest.mark.parametrize("num_players", [2, 3, 4])
def test_env_observations_are_the_encoded_views_and_within_bounds(num_players: int) -> None:
    env = raw_env(num_players)
    env.reset(seed=num_players)
    space = env.observation_space("player_0")["observation"]
    assert np.all(space.low == 0)
    rng = np.random.default_rng(0)
    for agent in env.agent_iter():
        _, _, terminated, truncated, _ = env.last()
        for other in env.agents:
            observation = env.observe(other)["observation"]
            assert observation.dtype == np.float32 and observation.shape == (OBSERVATION_SIZE,)
            assert space.contains(observation), f"{other}: out of bounds at {np.flatnonzero(observation > space.high)}"
            np.testing.assert_array_equal(observation, encode(env.view(other)))
            assert set(np.unique(observation[: SLICES["dice_value"].start])) <= {0.0, 1.0}
        if terminated or truncated:
            env.step(None)
        else:
            env.step(int(rng.choice(np.flatnonzero(env.observe(agent)["action_mask"]))))


@pytest.mark.parametrize("num_players", [2, 3, 4])
def test_a_view_without_indicator_rows_encodes_like_one_with_them(num_players: int) -> None:
    """A hand-made view (a test's, a tool's) carries no indicator rows; ``encode`` builds them
    from its card lists, and must give the vector the engine's rows give."""
    checked = 0
    game = Game(num_players, seed=5, penalty="bluffs")
    rng = np.random.default_rng(5)
    while not game.is_over:
        for seat in range(num_players):
            view = player_view(game.state, seat)
            bare = dataclasses.replace(
                view, hand_row=None, common_row=None, own_auction_row=None, public_discard_row=None, opponent_rows=None
            )
            np.testing.assert_array_equal(encode(bare), encode(view), err_msg=f"decision {len(game.history)}")
            checked += 1
        legal = game.legal_actions()
        game.apply(legal[int(rng.integers(len(legal)))])
    assert checked > 100
