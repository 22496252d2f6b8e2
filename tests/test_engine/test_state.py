"""The state record (biblios_env.engine.state): one constructor that sets every field, a clone
that copies every field, indicator rows that always agree with their card lists, and one
orientation of the piles (top card last)."""

from __future__ import annotations

import gc
import random

import numpy as np
import pytest

from biblios_env.actions import AUCTION
from biblios_env.engine import Game, Phase, State, player_view, sample_state
from biblios_env.engine.state import (
    STATE_FIELDS,
    add_card,
    discard_face_down,
    discard_face_up,
    enter_hand_publicly,
    indicator_row,
    move_card,
    pop_card,
    remove_card,
    uniform_index,
)

#: Each indicator row and the card list(s) it mirrors.
ROWS = {
    "hand_rows": "hands",
    "common_row": "common_area",
    "public_hand_rows": "public_hands",
    "public_discard_row": "public_discard",
    "contribution_rows": "auction_contributions",
}
MUTABLE = (list, bytearray, dict)


def check_rows(state: State) -> None:
    for row_name, list_name in ROWS.items():
        rows, lists = getattr(state, row_name), getattr(state, list_name)
        if isinstance(rows, bytearray):
            rows, lists = [rows], [lists]
        for row, cards in zip(rows, lists, strict=True):
            assert row == indicator_row(cards), f"{row_name} disagrees with {list_name}: {sorted(cards)}"


def random_states(seed: int, every: int = 5) -> list[State]:
    """Clones of every ``every``-th position of random games of each size and variant."""
    found = []
    chooser = random.Random(seed)
    for num_players in (2, 3, 4):
        for options in ({}, {"penalty": "bluffs"}, {"strict_bids": True}, {"auction_order": "placed"}):
            game = Game(num_players, seed=seed, **options)
            while not game.is_over:
                if len(game.history) % every == 0:
                    found.append(game.state.clone())
                legal = game.legal_actions()
                game.apply(legal[chooser.randrange(len(legal))])
            found.append(game.state.clone())
    return found


def test_the_constructor_sets_every_field_to_an_empty_table() -> None:
    state = State(3, np.random.default_rng(0), first_player=2, bluffs=True)
    assert all(hasattr(state, name) for name in STATE_FIELDS), [n for n in STATE_FIELDS if not hasattr(state, n)]
    assert (state.num_players, state.first_player, state.current_player, state.active_player) == (3, 2, 2, 2)
    assert state.bluffs and not state.strict_bids and not state.auction_order_placed
    assert state.phase == Phase.GIFT and state.dice == [3] * 5
    assert state.hands == [[], [], []] and state.draw_pile == [] and state.auction_pile == []
    check_rows(state)


def test_clone_copies_every_field_and_shares_nothing_mutable() -> None:
    for state in random_states(seed=1, every=37):
        other = state.clone()
        for name in STATE_FIELDS:
            if name in ("_rng", "_rng_state"):
                continue
            mine, theirs = getattr(state, name), getattr(other, name)
            assert mine == theirs, name
            if isinstance(mine, MUTABLE):
                assert mine is not theirs, f"clone shares {name}"
                for item, copied in zip(mine, theirs):
                    if isinstance(item, MUTABLE):
                        assert item is not copied, f"clone shares an element of {name}"
        assert state.rng.bit_generator.state == other.rng.bit_generator.state


def test_indicator_rows_agree_with_their_lists_in_play_and_in_samples() -> None:
    for state in random_states(seed=2):
        check_rows(state)
        if state.current_player >= 0:
            check_rows(sample_state(player_view(state, state.current_player), np.random.default_rng(0)))


def test_the_card_helpers_change_a_list_and_its_row_together() -> None:
    cards, row, other, other_row = [4, 9], indicator_row([4, 9]), [1], indicator_row([1])
    add_card(cards, row, 30)
    remove_card(cards, row, 4)
    assert (cards, row) == ([9, 30], indicator_row([9, 30]))
    assert pop_card(cards, row, 0) == 9 and row == indicator_row([30])
    assert move_card(cards, row, 0, other, other_row) == 30
    assert (cards, row, other, other_row) == ([], indicator_row([]), [1, 30], indicator_row([1, 30]))
    state = State(2, np.random.default_rng(0))
    enter_hand_publicly(state, 1, 57)
    assert state.hands[1] == state.public_hands[1] == [57]
    check_rows(state)


def test_the_discard_helpers_record_who_saw_the_card() -> None:
    state = State(3, np.random.default_rng(0))
    discard_face_up(state, 80)
    discard_face_down(state, 2, [46])
    assert state.discard == [80, 46]
    assert state.public_discard == [80] and state.private_discard == [[], [], [46]]
    check_rows(state)


def test_every_discarded_card_is_public_or_one_seats_face_down_discard() -> None:
    for state in random_states(seed=3, every=11):
        face_down = [card for cards in state.private_discard for card in cards]
        assert sorted(state.discard) == sorted(state.public_discard + face_down)


@pytest.mark.parametrize("auction_order", ["shuffle", "placed"])
def test_the_auction_pile_keeps_its_top_card_last_in_both_phases(auction_order: str) -> None:
    """A placed card goes under the pile; each auction takes the last card (RULES §3, §5)."""
    game = Game(2, seed=4, auction_order=auction_order)
    placed: list[int] = []
    while game.state.phase == Phase.GIFT:
        state = game.state
        legal = game.legal_actions()
        if state.drawn_card >= 0 and AUCTION in legal:
            placed.append(state.drawn_card)
            game.apply(AUCTION)
            assert state.auction_pile[::-1] == placed and game.snapshot()["auction_pile"] == placed
        else:
            game.apply(legal[0])
    order = placed if auction_order == "placed" else list(game.state.chance[0][1])
    assert sorted(order) == sorted(placed)
    revealed = []
    while not game.is_over:
        state = game.state
        if state.auction_card >= 0 and (not revealed or revealed[-1] != state.auction_card):
            revealed.append(state.auction_card)
            assert game.snapshot()["auction_pile"] == order[len(revealed) :]
        game.apply(game.legal_actions()[0])  # PASS, or a forced decision
    assert revealed == order


@pytest.mark.parametrize("bit_generator", [np.random.PCG64, np.random.MT19937])
def test_uniform_index_draws_what_random_would_and_leaves_the_same_state(bit_generator: type) -> None:
    """The engine's picks: the shortcut for PCG64 gives int(rng.random() * size) exactly."""
    picked, reference = np.random.Generator(bit_generator(11)), np.random.Generator(bit_generator(11))
    for size in [1, 2, 3, 7, 13, 40] * 200:
        assert uniform_index(picked, size) == int(reference.random() * size)
    assert picked.bit_generator.random_raw(5).tolist() == reference.bit_generator.random_raw(5).tolist()


@pytest.mark.parametrize("explicit_chance", [False, True])
def test_a_games_chance_records_leave_the_garbage_collectors_view(explicit_chance: bool) -> None:
    """The chance log grows by a record at every penalty. As tuples of ints the cyclic garbage
    collector stops tracking the records once it has seen them (lists it would track for the
    game's life), so hundreds of games alive at once, as the batched games keep them, do not
    make its collections of the whole heap several times as frequent."""
    game, chooser = Game(4, seed=5, explicit_chance=explicit_chance), random.Random(5)
    while not game.is_over:
        options = game.legal_actions()
        game.apply(options[chooser.randrange(len(options))])
    records = game.state.chance
    assert sum(kind == "penalty" for kind, _ in records) >= 5, "random play at 4 players defaults often"
    assert all(type(cards) is tuple and all(type(card) is int for card in cards) for _, cards in records)
    gc.collect()
    gc.collect()  # a record is untracked once its cards are: the second collection sees them so
    assert not any(gc.is_tracked(record) or gc.is_tracked(cards) for record in records for cards in record[1:])
