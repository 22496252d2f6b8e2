"""What each seat may see is decided in one place (biblios_env.engine.visibility, RULES §7): the
views and the observations follow it, the moves the table sees are the ones its predicates name,
and a search tree's node key is built from what the seat's view shows."""

from __future__ import annotations

import random
from typing import Any

import pytest

from biblios_env.actions import COMMON, KEEP, PAY_BASE, REFUSE
from biblios_env.engine import Decision, Game, PlayerView, player_view
from biblios_env.engine.flow import NO_CARD, NO_SEAT
from biblios_env.engine.visibility import (
    decision_key,
    payment_face_up,
    penalty_card_seen,
    penalty_move,
    placement_face_up,
    seat_secrets,
)
from biblios_env.observations import encode, encode_state

CHURCH_CARD, GOLD_CARD, CATEGORY_CARD = 78, 57, 4


def random_games(num_players: int, seeds: range, **options: Any):
    """(game before the action, action) for every decision of random games (wild bids, many penalties)."""
    for seed in seeds:
        game = Game(num_players, seed=seed, **options)
        chooser = random.Random(seed)
        while not game.is_over:
            action = chooser.choice(game.legal_actions())
            yield game.clone(), action
            game.apply(action)


def key_from_view(view: PlayerView) -> tuple[Any, ...]:
    """decision_key as the seat's view alone determines it."""
    player = NO_SEAT if view.current_player == NO_SEAT else (view.seat + view.current_player) % view.num_players
    chosen_from: Any = NO_CARD
    if view.current_player == 0 and view.decision == Decision.PLACE:
        chosen_from = view.drawn_card
    elif view.current_player == 0 and view.decision == Decision.TAKE:
        chosen_from = tuple(sorted(view.common_area))
    return (view.decision, player, view.auction_card, view.church_card, chosen_from)


@pytest.mark.parametrize(
    ("slot", "card", "face_up"),
    [(COMMON, CATEGORY_CARD, True), (COMMON, CHURCH_CARD, True), (KEEP, CHURCH_CARD, True),
     (KEEP, CATEGORY_CARD, False), (KEEP, GOLD_CARD, False), (1, CATEGORY_CARD, False), (1, CHURCH_CARD, False)],
)  # fmt: skip
def test_placements_the_table_sees(slot: int, card: int, face_up: bool) -> None:
    assert placement_face_up(slot, card) is face_up


def test_payments_and_penalty_cards_the_table_sees() -> None:
    assert payment_face_up(CATEGORY_CARD) and payment_face_up(CHURCH_CARD) and not payment_face_up(GOLD_CARD)
    assert [penalty_card_seen(seat, 1, 2) for seat in range(4)] == [False, True, True, False]


@pytest.mark.parametrize("num_players", [2, 3, 4])
def test_the_views_and_observations_follow_the_seat_secrets(num_players: int) -> None:
    for game, _ in random_games(num_players, range(2), penalty="bluffs"):
        for seat in range(num_players):
            drawn, kept, quota, sees_payment, hand_sizes = seat_secrets(game.state, seat)
            view = player_view(game.state, seat)
            assert (view.drawn_card, view.kept_card, view.quota, view.hand_sizes) == (
                drawn,
                kept,
                tuple(quota),
                hand_sizes,
            )
            assert view.payment_count == (len(game.state.payment) if sees_payment else 0)
            assert (encode_state(game.state, seat) == encode(view)).all()


@pytest.mark.parametrize("num_players", [2, 3, 4])
def test_moves_are_seen_by_the_other_seats_exactly_as_the_predicates_say(num_players: int) -> None:
    """After each placement, payment and penalty, what another seat's view shows of it is what
    placement_face_up, payment_face_up and penalty_card_seen say."""
    checked = {"placement": 0, "payment": 0, "penalty": 0}
    for game, action in random_games(num_players, range(3)):
        state, actor = game.state, game.current_player
        decision, card, lot, moves = state.decision, state.drawn_card, state.auction_card, len(state.penalty_moves)
        completing = decision == Decision.PAY and action != REFUSE
        paid = [*state.payment, action - PAY_BASE] if completing else []
        game.apply(action)
        after = game.state
        for seat in range(num_players):
            if seat == actor:
                continue
            view = player_view(after, seat)
            # Everything face up for the table, a forced take included (2 players: the taker's card).
            public = {*view.common_area, *view.public_discard, view.church_card, *view.own_public_cards}
            public.update(*view.opponent_cards)
            if decision == Decision.PLACE:
                assert (card in public) == placement_face_up(action, card), (action, card)
                checked["placement"] += 1
            if completing and after.auction_card != lot:  # the payment completed: face up or face down
                assert (
                    set(paid) <= set(view.public_discard)
                    if payment_face_up(lot)
                    else not set(paid) & set(view.public_discard)
                )
                checked["payment"] += 1
            for giver, receiver, moved in view.penalty_moves[moves:]:
                giver, receiver = (view.seat + giver) % num_players, (view.seat + receiver) % num_players
                assert (moved != NO_CARD) == penalty_card_seen(seat, giver, receiver)
                checked["penalty"] += 1
    assert all(checked.values()), checked


@pytest.mark.parametrize("num_players", [2, 3, 4])
def test_penalty_records_are_the_tables_own_tuples(num_players: int) -> None:
    """Recording a penalty move makes no tuple: the state's record and every seat's are the ones
    penalty_move hands out (random play moves cards by penalties every few decisions, and each new
    tuple would count toward the garbage collector's next collection), with the same values."""
    moves = 0
    for seed in range(3):
        game = Game(num_players, seed=seed)
        chooser = random.Random(seed)
        while not game.is_over:
            game.apply(chooser.choice(game.legal_actions()))
        state = game.state
        for record in [*state.penalty_moves, *(move for seat in state.penalty_views for move in seat)]:
            assert record is penalty_move(*record), record
        moves += len(state.penalty_moves)
        assert all(len(seat) == len(state.penalty_moves) for seat in state.penalty_views)
    assert moves > 0
    assert penalty_move(3, 0, -1) == (3, 0, NO_CARD) and penalty_move(1, 2, 86) == (1, 2, 86)


@pytest.mark.parametrize("num_players", [2, 3, 4])
def test_the_search_key_is_a_function_of_the_seats_view(num_players: int) -> None:
    """decision_key never reads anything the seat's view does not show (RULES §7)."""
    for game, _ in random_games(num_players, range(2), strict_bids=True):
        for seat in range(num_players):
            assert decision_key(game.state, seat) == key_from_view(player_view(game.state, seat))
