"""Shared helpers for building rulebook scenarios out of real play (read-only for other test files).

Import with ``from scenarios import ...`` (pytest puts ``tests/`` on ``sys.path``).

Two ways to build a scenario:

* :func:`make_deck` — a legal draw pile (top first) that starts with chosen cards; the rest
  is filled in so that setup could have produced it (2 players leave out two gold cards of
  each value, 3 players one; church cards are left out first so that filler play stays quiet).
* :func:`deal_plan` — a draw pile that, played with :func:`gift_policy` (keep the first card,
  auction the second, common the rest; takers take the earliest-placed common card), ends the
  gift phase with chosen cards in each hand and a chosen auction pile (placed order). Use it
  with ``auction_order="placed"`` to open the auction phase on a hand-picked situation;
  :func:`auction_game` does both and plays the gift phase.

:func:`run`, :func:`finish_gifts`, :func:`finish_game` drive a game with a policy;
:func:`random_playout` plays seeded random legal actions and fails rather than hang.

Card helpers follow RULES §1 (``card(MONKS, "C")`` is the Monks card with letter C, worth 2;
``gold(3)`` is a gold card of value 3); every helper returns plain card ids.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Iterable, Sequence

import numpy as np

from biblios_env import actions as act
from biblios_env.cards import (
    CARD_CATEGORY,
    CARD_VALUE,
    CATEGORY_IDS,
    CHURCH_IDS,
    GOLD_IDS_BY_VALUE,
    IS_CHURCH,
    IS_GOLD,
    NUM_CARDS,
)
from biblios_env.engine.facts import MAX_GAME_LENGTH
from biblios_env.engine.game import Game
from biblios_env.engine.setup import DECK_SIZE, GIFT_TURNS, GOLD_REMOVED_PER_VALUE
from biblios_env.engine.state import Decision, State

MONKS, PIGMENTS, HOLY_BOOKS, MANUSCRIPTS, FORBIDDEN_TOMES = range(5)

# Church cards by effect (RULES §1).
CHURCH_ONE_UP = (78, 79)
CHURCH_ONE_DOWN = (80, 81)
CHURCH_TWO_UP = (82, 83)
CHURCH_TWO_DOWN = (84, 85)
CHURCH_EITHER = 86

Policy = Callable[[Game], int]


# --------------------------------------------------------------------------- card names
def card(category: int, letter: str) -> int:
    """The category card with tie-break ``letter`` ("A".."I")."""
    return 9 * category + "ABCDEFGHI".index(letter)


def cards_of_value(category: int, value: int) -> list[int]:
    """All cards of ``category`` worth ``value``, earliest letter first."""
    return [c for c in range(9 * category, 9 * category + 9) if CARD_VALUE[c] == value]


def gold(value: int, index: int = 0) -> int:
    """The ``index``-th gold card of ``value`` (1, 2 or 3)."""
    return GOLD_IDS_BY_VALUE[value][index]


def golds(value: int, count: int, start: int = 0) -> list[int]:
    """``count`` distinct gold cards of ``value``."""
    return list(GOLD_IDS_BY_VALUE[value][start : start + count])


# --------------------------------------------------------------------------- decks
def _check_unique(cards: Iterable[int]) -> list[int]:
    cards = [int(c) for c in cards]
    if len(set(cards)) != len(cards):
        raise ValueError(f"scenario uses a card twice: {sorted(cards)}")
    return cards


def _reserve_removed_gold(num_players: int, used: set[int]) -> set[int]:
    """The gold cards setup must remove for this player count, chosen among unused ones (highest ids)."""
    reserved: set[int] = set()
    per_value = GOLD_REMOVED_PER_VALUE[num_players]
    for value in (1, 2, 3):
        free = [c for c in GOLD_IDS_BY_VALUE[value] if c not in used]
        if len(free) < per_value:
            raise ValueError(f"scenario uses too many gold {value} cards for {num_players} players")
        reserved.update(free[len(free) - per_value :])
    return reserved


def make_deck(
    num_players: int,
    top: Sequence[int] = (),
    *,
    bottom: Sequence[int] = (),
    avoid: Iterable[int] = (),
) -> list[int]:
    """A legal draw pile (top first) that starts with ``top`` and ends with ``bottom``.

    The middle is filled with category cards (ascending ids), then gold, then church cards,
    so that scenario play after ``top`` draws no church card unless the player count forces
    one in (4 players remove only 7 cards: two church cards then sit just above ``bottom``).
    Cards in ``avoid`` are removed if possible.
    """
    top, bottom = _check_unique(top), _check_unique(bottom)
    used = set(_check_unique([*top, *bottom]))
    avoid = set(avoid) - used
    reserved = _reserve_removed_gold(num_players, used)
    pool = [c for c in range(NUM_CARDS) if c not in used and c not in reserved]
    pool.sort(key=lambda c: (c in avoid, IS_CHURCH[c], IS_GOLD[c], c))
    needed = DECK_SIZE[num_players] - len(top) - len(bottom)
    if needed < 0 or needed > len(pool):
        raise ValueError(f"cannot build a {num_players}-player deck from {len(top)} top and {len(bottom)} bottom cards")
    return [*top, *pool[:needed], *bottom]


def deal_plan(
    num_players: int,
    hands: Sequence[Sequence[int]] = (),
    auction: Sequence[int] = (),
    *,
    first_player: int = 0,
) -> list[int]:
    """A draw pile that :func:`gift_policy` turns into the given hands and auction pile.

    Turn ``t`` (active seat ``a = first_player + t``) draws: the card ``a`` keeps, the card put
    on the auction pile, then one card for each other seat in order from ``a``'s left (each
    taker takes the earliest-placed card left in the common area). Seat ``s`` ends the gift
    phase with ``hands[s]`` plus filler (category cards first, then gold); the auction pile,
    in placed order, is ``auction`` followed by filler (church cards first, then gold, then
    category cards). No church card is ever kept or taken, so nothing interrupts the plan.
    """
    n = num_players
    turns = GIFT_TURNS[n]
    per_seat = turns  # each seat keeps turns/n cards and takes (n-1)*turns/n: `turns` in all
    wanted = [list(h) for h in hands] + [[] for _ in range(n - len(hands))]
    specified = _check_unique([*(c for h in wanted for c in h), *auction])
    if any(IS_CHURCH[c] for h in wanted for c in h):
        raise ValueError("church cards never stay in a hand (RULES §4)")
    for seat, hand in enumerate(wanted):
        if len(hand) > per_seat:
            raise ValueError(f"seat {seat} can hold at most {per_seat} cards after the gift phase, asked {len(hand)}")
    if len(auction) > turns:
        raise ValueError(f"the auction pile holds {turns} cards, asked {len(auction)}")
    used = set(specified)
    reserved = _reserve_removed_gold(n, used)
    pool = [c for c in range(NUM_CARDS) if c not in used and c not in reserved]
    auction_pool = sorted(pool, key=lambda c: (not IS_CHURCH[c], not IS_GOLD[c], -c))
    auction_fill = auction_pool[: turns - len(auction)]
    pile = [*auction, *auction_fill]
    taken = set(auction_fill)
    hand_pool = [c for c in sorted(pool, key=lambda c: (IS_GOLD[c], c)) if c not in taken and not IS_CHURCH[c]]
    for hand in wanted:
        missing = per_seat - len(hand)
        if missing > len(hand_pool):
            raise ValueError("not enough filler cards for the hands")
        hand.extend(hand_pool[:missing])
        hand_pool = hand_pool[missing:]
    deck: list[int] = []
    queues = [list(h) for h in wanted]
    for t in range(turns):
        active = (first_player + t) % n
        deck.append(queues[active].pop(0))
        deck.append(pile[t])
        for offset in range(1, n):
            deck.append(queues[(active + offset) % n].pop(0))
    return deck


# --------------------------------------------------------------------------- driving games
def gift_policy(game: Game) -> int:
    """Keep the first card, auction the second, common the rest; take the earliest-placed common
    card; decline church cards; pass every bid; refuse to pay. Deterministic, so plans replay."""
    state = game.state
    legal = game.legal_actions()
    decision = state.decision
    if decision == Decision.PLACE:
        return legal[0]
    if decision == Decision.TAKE:
        return act.take(state.common_area[0])
    if decision == Decision.CHURCH:
        return act.CHURCH_DECLINE
    if decision == Decision.BID:
        return act.PASS
    if decision == Decision.PAY:
        return act.REFUSE if act.REFUSE in legal else legal[0]
    raise AssertionError(f"no decision to take in phase {game.phase_name}")


def run(game: Game, until: Callable[[Game], bool], policy: Policy = gift_policy, max_steps: int = 5000) -> Game:
    """Apply ``policy`` until ``until(game)`` holds (checked before every step) or the game ends."""
    for _ in range(max_steps):
        if game.is_over or until(game):
            return game
        game.apply(policy(game))
    raise AssertionError("scenario did not reach its goal")


def finish_gifts(game: Game, policy: Policy = gift_policy) -> Game:
    """Play the rest of the gift phase with ``policy``."""
    return run(game, lambda g: g.phase_name != "gift", policy)


def finish_game(game: Game, policy: Policy = gift_policy) -> Game:
    """Play to the end with ``policy`` (by default every remaining card goes unsold)."""
    return run(game, lambda g: False, policy)


def random_playout(game: Game, seed: int, check: Callable[[Game], None] | None = None) -> Game:
    """Play uniformly random legal actions (seeded) to the end, calling ``check(game)`` before every
    step and at the end; fails instead of hanging if the game does not end."""
    rng = random.Random(seed)
    for _ in range(MAX_GAME_LENGTH[game.num_players] + 1):
        if check is not None:
            check(game)
        if game.is_over:
            return game
        game.apply(rng.choice(game.legal_actions()))
    raise AssertionError(f"game did not end within {MAX_GAME_LENGTH[game.num_players]} actions (seed {seed})")


def auction_game(
    num_players: int,
    hands: Sequence[Sequence[int]] = (),
    auction: Sequence[int] = (),
    *,
    first_player: int = 0,
    seed: int = 0,
    **options: object,
) -> Game:
    """A game at its first auction decision: seat ``s`` holds ``hands[s]`` plus filler, and the
    auction pile is ``auction`` then filler, auctioned in that order (RULES §5)."""
    deck = deal_plan(num_players, hands, auction, first_player=first_player)
    game = Game(num_players, seed=seed, first_player=first_player, auction_order="placed", deck=deck, **options)
    finish_gifts(game)
    for seat, hand in enumerate(hands):
        missing = set(hand) - set(game.state.hands[seat])
        if missing:
            raise AssertionError(f"scenario plan failed: seat {seat} lacks {sorted(missing)}")
    return game


def gold_in_hand(game: Game, seat: int) -> int:
    """Coins held by ``seat``."""
    return sum(CARD_VALUE[c] for c in game.state.hands[seat] if IS_GOLD[c])


def category_cards(cards: Iterable[int]) -> list[int]:
    return [c for c in cards if CARD_CATEGORY[c] >= 0]


def all_card_places(game: Game) -> list[int]:
    """Every card id from the snapshot's card lists (RULES §1: always exactly the 87 cards)."""
    snap = game.snapshot()
    places = [*snap["draw_pile"], *snap["auction_pile"], *snap["common_area"], *snap["in_play"]]
    places += [*snap["discard"], *snap["removed"]]
    for hand in snap["hands"]:
        places += hand
    return sorted(places)


__all__ = [
    "CATEGORY_IDS",
    "CHURCH_EITHER",
    "CHURCH_IDS",
    "CHURCH_ONE_DOWN",
    "CHURCH_ONE_UP",
    "CHURCH_TWO_DOWN",
    "CHURCH_TWO_UP",
    "FORBIDDEN_TOMES",
    "HOLY_BOOKS",
    "MANUSCRIPTS",
    "MONKS",
    "PIGMENTS",
    "all_card_places",
    "auction_game",
    "card",
    "cards_of_value",
    "category_cards",
    "deal_plan",
    "finish_game",
    "finish_gifts",
    "gift_policy",
    "gold",
    "gold_in_hand",
    "golds",
    "make_deck",
    "random_playout",
    "run",
]


def two_player_split_deck(hand_0: list[int], hand_1: list[int], auctioned: list[int]) -> list[int]:
    """A 2-player draw pile (top first) such that always playing the lowest legal action
    (KEEP, then AUCTION, then COMMON; the other player takes it; everybody passes every
    auction) ends with ``hand_0`` in seat 0's hand, ``hand_1`` in seat 1's, and
    ``auctioned`` put on the auction pile in that order and discarded unsold."""
    first, second = iter(hand_0), iter(hand_1)
    deck: list[int] = []
    for turn, card in enumerate(auctioned):
        keeper, taker = (first, second) if turn % 2 == 0 else (second, first)
        deck += [next(keeper), card, next(taker)]
    return deck


def midgame_states(num_players: int, count: int, seed: int = 3) -> list[State]:
    """``count`` positions a few dozen random moves into games of ``num_players``."""
    states = []
    for index in range(count):
        game, rng = Game(num_players, seed=seed + index), random.Random(seed + index)
        for _ in range(25 + 7 * index):
            game.apply(rng.choice(game.legal_actions()))
        states.append(game.state.clone(rng=np.random.default_rng(index)))
    return states
