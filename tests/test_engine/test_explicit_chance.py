"""Explicit chance: a game that stops at every random event until its outcome is applied.

The same rules run in both modes (one function per random event: ``setup.remove_unseen``,
``gifts.draw``, ``auctions.reveal``, ``auctions.penalty_pick``); a seeded game only picks the
outcomes itself. So a game with explicit chance that is given the seeded game's outcomes must be
the seeded game, step for step: that is the main check here.
"""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Iterator

import numpy as np
import pytest

from biblios_env.actions import describe
from biblios_env.cards import GOLD_IDS_BY_VALUE, GOLD_VALUES
from biblios_env.engine import Game, IllegalActionError
from biblios_env.engine.flow import CHANCE_DRAW, CHANCE_PENALTY_PICK, CHANCE_REMOVAL, CHANCE_REVEAL, NO_SEAT
from biblios_env.engine.log import to_log
from biblios_env.engine.setup import DECK_SIZE, GIFT_TURNS, GOLD_REMOVED_PER_VALUE, REMOVED_COUNT
from biblios_env.engine.state import CHANCE_PENALTY, STATE_FIELDS, State
from biblios_env.observations import encode_state

#: Fields that differ by construction: the mode itself, the generator, the order of the piles
#: (a dealt pile is ordered, an explicit one is drawn from in any order) and the record of the
#: auction order (a shuffle is one event; explicit reveals are one each).
_OWN_FIELDS = {"explicit_chance", "chance_kind", "_rng", "_rng_state", "draw_pile", "auction_pile", "chance"}
CONFIGS = [(players, penalty) for players in (2, 3, 4) for penalty in ("standard", "bluffs")]


def removal_order(removed: list[int], num_players: int) -> list[int]:
    """The seeded game's removed cards in an order the explicit removals accept: the gold cards
    removed value by value first (RULES §2.2), then the rest."""
    per_value = GOLD_REMOVED_PER_VALUE[num_players]
    first = [
        card for value in GOLD_VALUES for card in [c for c in removed if c in GOLD_IDS_BY_VALUE[value]][:per_value]
    ]
    return first + [card for card in removed if card not in first]


def outcome_from(seeded: Game, explicit: Game, removals: Iterator[int]) -> int:
    """The card the seeded game gave at the random event the explicit game awaits."""
    state = explicit.state
    if state.chance_kind == CHANCE_REMOVAL:
        return next(removals)
    if state.chance_kind == CHANCE_DRAW:
        return seeded.state.drawn_card
    if state.chance_kind == CHANCE_REVEAL:
        return seeded.state.auction_card
    assert state.chance_kind == CHANCE_PENALTY_PICK
    return seeded.state.chance[-1][1][len(state.chance[-1][1])]


def assert_same_position(seeded: State, explicit: State) -> None:
    for name in STATE_FIELDS:
        if name not in _OWN_FIELDS:
            assert getattr(seeded, name) == getattr(explicit, name), name
    assert sorted(seeded.draw_pile) == sorted(explicit.draw_pile)
    assert sorted(seeded.auction_pile) == sorted(explicit.auction_pile)
    for seat in range(seeded.num_players):
        assert np.array_equal(encode_state(seeded, seat), encode_state(explicit, seat))


@pytest.mark.parametrize(("num_players", "penalty"), CONFIGS)
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_given_the_seeded_outcomes_explicit_chance_plays_the_seeded_game(
    num_players: int, penalty: str, seed: int
) -> None:
    seeded = Game(num_players, seed=seed, penalty=penalty, auto_forced=False)
    explicit = Game(num_players, seed=99, penalty=penalty, auto_forced=False, explicit_chance=True)
    removals = iter(removal_order(seeded.state.removed, num_players))
    choices = random.Random(seed)
    events: Counter[int] = Counter()
    while True:
        while explicit.is_chance_node:
            assert explicit.current_player == NO_SEAT and not seeded.is_chance_node
            events[explicit.state.chance_kind] += 1
            explicit.apply(outcome_from(seeded, explicit, removals))
        assert_same_position(seeded.state, explicit.state)
        assert explicit.legal_actions() == seeded.legal_actions()
        if seeded.is_over:
            break
        action = choices.choice(seeded.legal_actions())
        seeded.apply(action)
        explicit.apply(action)
    assert explicit.is_over and explicit.state.vp == seeded.state.vp
    picks = sum(len(cards) for kind, cards in seeded.state.chance if kind == CHANCE_PENALTY)
    assert events == {
        CHANCE_REMOVAL: REMOVED_COUNT[num_players],
        CHANCE_DRAW: DECK_SIZE[num_players],
        CHANCE_REVEAL: GIFT_TURNS[num_players],  # a card refused is auctioned again, not revealed again
        **({CHANCE_PENALTY_PICK: picks} if picks else {}),
    }


def test_outcomes_are_uniform_and_a_wrong_one_is_named() -> None:
    game = Game(2, seed=0, explicit_chance=True)
    assert game.is_chance_node and game.current_player == NO_SEAT and game.deck == ()
    outcomes = game.chance_outcomes()
    per_value = GOLD_REMOVED_PER_VALUE[2]
    assert [card for card, _ in outcomes] == sorted(GOLD_IDS_BY_VALUE[GOLD_VALUES[0]])  # gold first
    assert {probability for _, probability in outcomes} == {1 / len(outcomes)}
    with pytest.raises(IllegalActionError, match=r"^0 is not an outcome of the awaited removal: the outcomes are"):
        game.apply(0)
    for _ in range(per_value * len(GOLD_VALUES)):
        game.apply(game.chance_outcomes()[-1][0])
    assert len(game.chance_outcomes()) == 87 - per_value * len(GOLD_VALUES)  # then any card left
    while game.is_chance_node:
        game.apply(game.chance_outcomes()[0][0])
    assert not game.is_chance_node and game.chance_outcomes() == [] and game.current_player == 0
    twin = game.clone()
    assert twin.state.explicit_chance and sorted(twin.state.draw_pile) == sorted(game.state.draw_pile)


def test_explicit_chance_and_a_given_deck_exclude_each_other() -> None:
    with pytest.raises(ValueError, match="deck fixes the draws, explicit chance leaves them to the caller"):
        Game(2, deck=list(range(60)), explicit_chance=True)
    with pytest.raises(ValueError, match="explicit_chance must be True or False, got 1"):
        Game(2, explicit_chance=1)


def test_the_placed_auction_order_is_no_random_event() -> None:
    game = Game(2, seed=3, explicit_chance=True, auction_order="placed")
    choices = random.Random(0)
    kinds = set()
    while not game.is_over:
        if game.is_chance_node:
            kinds.add(game.state.chance_kind)
            game.apply(choices.choice(game.chance_outcomes())[0])
        else:
            game.apply(choices.choice(game.legal_actions()))
    assert CHANCE_REVEAL not in kinds and {CHANCE_REMOVAL, CHANCE_DRAW} <= kinds


def test_a_game_with_explicit_chance_is_not_logged() -> None:
    with pytest.raises(ValueError, match="a game with explicit chance cannot be logged"):
        to_log(Game(3, explicit_chance=True))


@pytest.mark.parametrize(("players", "preset"), [(2, "small"), (3, "standard"), (4, "standard")])
def test_a_clone_at_a_penalty_pick_leaves_its_original_alone(players: int, preset: str) -> None:
    """Tree search and OpenSpiel's solvers clone a position and try every outcome from it: a pick
    applied to one copy must not change what the next pick does in another."""
    for seed in range(60):
        game = Game(players, seed=seed, preset=preset, explicit_chance=True)
        rng = random.Random(seed)
        history: list[int] = []
        while not game.is_over and not (game.is_chance_node and game.state.chance_kind == CHANCE_PENALTY_PICK):
            legal = game.legal_actions()
            refuse = [action for action in legal if describe(action).startswith("REFUSE")]
            bids = [action for action in legal if describe(action).startswith("BID")]
            history.append(refuse[0] if refuse else rng.choice(bids) if bids else rng.choice(legal))
            game.apply(history[-1])
        if game.is_over:
            continue

        expected = {card: _after(_replayed(players, seed, preset, history), card) for card, _ in game.chance_outcomes()}
        sibling = game.clone()
        for card in expected:
            sibling.clone().apply(card)
        assert {card: _after(game.clone(), card) for card in expected} == expected
        assert {card: _after(sibling.clone(), card) for card in expected} == expected
        return
    pytest.fail("no game reached a penalty")


def _replayed(players: int, seed: int, preset: str, history: list[int]) -> Game:
    """The position after ``history``, played afresh (shares nothing with any other game)."""
    game = Game(players, seed=seed, preset=preset, explicit_chance=True)
    for action in history:
        game.apply(action)
    return game


def _after(game: Game, card: int) -> tuple[object, ...]:
    game.apply(card)
    snapshot = game.snapshot()
    return (snapshot["hands"], game.state.chance[-1], game.is_chance_node, game.state.current_player)
