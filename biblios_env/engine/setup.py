"""Game setup (RULES §2): dice to 3, removal of unseen cards, the shuffled draw pile.

Also validates a caller-supplied draw pile (the ``"deck"`` reset option), so rulebook
scenarios can be reproduced exactly while still being a deal that setup could produce.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final

import numpy as np

from biblios_env.cards import CARD_VALUE, CHURCH_IDS, GOLD_IDS_BY_VALUE, GOLD_VALUES, IS_GOLD, NUM_CARDS, TOTAL_GOLD
from biblios_env.engine.flow import MINI_PRESET, PRESETS, SMALL_PRESET, STANDARD_PRESET
from biblios_env.engine.state import State

PLAYER_COUNTS: Final = (2, 3, 4)
#: Gold cards of *each* value removed before the random removals (RULES §2.2).
GOLD_REMOVED_PER_VALUE: Final = {2: 2, 3: 1, 4: 0}
#: Further random cards removed (RULES §2.2).
RANDOM_REMOVALS: Final = {2: 21, 3: 12, 4: 7}

#: The mini preset's box: one card of three categories (Monks A and Pigments A, 2 points each,
#: Holy Books A, 1 point) and a 2-coin gold card, no church card. Setup removes one card unseen,
#: so one gift turn of three cards and one auction are played: with strict bids the game tree
#: has about 1,700 nodes, small enough for exact methods in Python (docs/openspiel.md).
MINI_CARDS: Final = (0, 9, 18, GOLD_IDS_BY_VALUE[2][0])
MINI_PLAYERS: Final = 2
MINI_REMOVALS: Final = 1

#: The small preset's box: Monks A and Pigments A (2 points each: the dice decide which is worth
#: more), a 1-coin and a 3-coin gold card, and the "+1 to one die" church card. Setup removes two
#: cards unseen, so one gift turn of three cards and one auction are played; bids are capped at
#: the box's 4 coins (:attr:`SetupRules.max_bid`), so bluffing and its penalty stay in. Chosen
#: by measuring OpenSpiel's CFR+ on its tree (docs/openspiel.md): about 880,000 histories and
#: 145,000 information states, still exploitable by more than 0.01 after 30 iterations.
SMALL_CARDS: Final = (0, 9, GOLD_IDS_BY_VALUE[1][0], GOLD_IDS_BY_VALUE[3][0], CHURCH_IDS[0])
SMALL_PLAYERS: Final = 2
SMALL_REMOVALS: Final = 2
SMALL_MAX_BID: Final = sum(CARD_VALUE[card] for card in SMALL_CARDS if IS_GOLD[card])  # 4


@dataclass(frozen=True, slots=True)
class SetupRules:
    """What setup deals from and removes for one preset and player count (RULES §2.2): the
    fact every count of a game follows from (the draw pile, gift turns, auctions, removals)."""

    preset: str
    num_players: int
    cards: tuple[int, ...]  # the cards in the box, ascending
    gold_removed_per_value: int  # gold cards of each value removed before the random removals
    random_removals: int
    deck_size: int  # cards in the draw pile after the removals
    #: Gift turns in a game: each turn draws N + 1 cards until the draw pile is empty (RULES §3).
    #: Each turn puts exactly one card on the auction pile, so this is also the number of cards
    #: auctioned in the second phase (RULES §5).
    gift_turns: int
    removed_count: int  # cards removed unseen at setup
    #: The highest bid allowed without strict bids: all the gold in the game, 66 (RULES §5), in
    #: the standard and mini games; the small game's 4 coins, so that bluffing (a bid above what
    #: the bidder holds, deterred by the penalty) stays in a tree small enough to solve exactly.
    max_bid: int


def _setup_rules(
    preset: str, num_players: int, cards: tuple[int, ...], gold_per_value: int, random: int, max_bid: int = TOTAL_GOLD
) -> SetupRules:
    removed = len(GOLD_VALUES) * gold_per_value + random
    deck_size = len(cards) - removed
    gift_turns = deck_size // (num_players + 1)
    return SetupRules(preset, num_players, cards, gold_per_value, random, deck_size, gift_turns, removed, max_bid)


#: Every preset and player count a game can be dealt with.
SETUP_RULES: Final = {
    **{
        (STANDARD_PRESET, n): _setup_rules(
            STANDARD_PRESET, n, tuple(range(NUM_CARDS)), GOLD_REMOVED_PER_VALUE[n], RANDOM_REMOVALS[n]
        )
        for n in PLAYER_COUNTS
    },
    (MINI_PRESET, MINI_PLAYERS): _setup_rules(MINI_PRESET, MINI_PLAYERS, MINI_CARDS, 0, MINI_REMOVALS),
    (SMALL_PRESET, SMALL_PLAYERS): _setup_rules(
        SMALL_PRESET, SMALL_PLAYERS, SMALL_CARDS, 0, SMALL_REMOVALS, SMALL_MAX_BID
    ),
}
#: Cards left in the draw pile after removal in the standard game: 60, 72 and 80.
DECK_SIZE: Final = {n: SETUP_RULES[STANDARD_PRESET, n].deck_size for n in PLAYER_COUNTS}
#: Gift turns (and cards auctioned) in the standard game: 20, 18 and 16.
GIFT_TURNS: Final = {n: SETUP_RULES[STANDARD_PRESET, n].gift_turns for n in PLAYER_COUNTS}
#: Cards removed unseen at setup in the standard game (RULES §2.2): 27, 15 and 7.
REMOVED_COUNT: Final = {n: SETUP_RULES[STANDARD_PRESET, n].removed_count for n in PLAYER_COUNTS}


def setup_rules(preset: str, num_players: int) -> SetupRules:
    """The setup of ``preset`` for ``num_players``; ValueError if the preset has no such game."""
    rules = SETUP_RULES.get((preset, num_players))
    if rules is None:
        counts = sorted(n for name, n in SETUP_RULES if name == preset)
        if not counts:
            raise ValueError(f"preset must be one of {', '.join(map(repr, PRESETS))}, got {preset!r}")
        raise ValueError(f"the {preset!r} preset is for {' or '.join(map(str, counts))} players, got {num_players}")
    return rules


def check_num_players(num_players: object) -> int:
    """Return the player count, or raise ValueError naming the bad value.

    Only ints (numpy's included) count: ``3.0`` and ``True`` compare equal to a count but are
    a caller's mistake, not a player count (RULES §2: 2, 3 or 4 players).
    """
    is_int = isinstance(num_players, int | np.integer) and not isinstance(num_players, bool)
    count = int(num_players) if isinstance(num_players, int | np.integer) else 0
    if not is_int or count not in PLAYER_COUNTS:
        raise ValueError(f"num_players must be 2, 3 or 4, got {num_players!r}")
    return count


def check_seat(seat: object, num_players: int, what: str = "seat") -> int:
    """Return ``seat`` as an int, or raise ValueError naming the bad value and the range."""
    if isinstance(seat, bool) or not isinstance(seat, (int, np.integer)) or not 0 <= seat < num_players:
        raise ValueError(f"{what} must be an int in 0..{num_players - 1} for {num_players} players, got {seat!r}")
    return int(seat)


def deal(rules: SetupRules, rng: np.random.Generator) -> tuple[list[int], list[int]]:
    """Remove cards unseen and shuffle the rest: returns ``(draw pile top first, removed)``."""
    removed: list[int] = []
    per_value = rules.gold_removed_per_value
    if per_value:
        for value in GOLD_VALUES:
            ids = GOLD_IDS_BY_VALUE[value]
            removed.extend(ids[int(i)] for i in rng.choice(len(ids), size=per_value, replace=False))
    removed_set = set(removed)
    rest = [card for card in rules.cards if card not in removed_set]
    order = rng.permutation(len(rest)).tolist()  # Python ints in one call, not one numpy scalar per card
    random_removals = rules.random_removals
    removed.extend(rest[i] for i in order[:random_removals])
    deck = [rest[i] for i in order[random_removals:]]
    return deck, sorted(removed)


def check_deck(deck: object, rules: SetupRules) -> tuple[list[int], list[int]]:
    """Validate a draw pile given top first; returns ``(deck, removed)`` or raises ValueError."""
    if isinstance(deck, (str, bytes)) or not isinstance(deck, Sequence | np.ndarray):
        raise ValueError(f"deck must be a list of card ids, got {type(deck).__name__}")
    num_players = rules.num_players
    in_box = set(rules.cards)
    cards: list[int] = []
    for position, card in enumerate(deck):
        if isinstance(card, bool) or not isinstance(card, (int, np.integer)) or not 0 <= card < NUM_CARDS:
            raise ValueError(f"deck[{position}] must be a card id in 0..{NUM_CARDS - 1}, got {card!r}")
        if card not in in_box:
            raise ValueError(
                f"deck[{position}] must be one of the {rules.preset!r} preset's cards {list(rules.cards)}, got {card!r}"
            )
        cards.append(int(card))
    expected = rules.deck_size
    if len(cards) != expected:
        raise ValueError(f"deck for {num_players} players must hold {expected} cards, got {len(cards)}")
    seen = set(cards)
    if len(seen) < len(cards):
        duplicates = sorted(card for card, count in Counter(cards).items() if count > 1)
        raise ValueError(f"deck holds duplicate card ids: {duplicates}")
    removed = sorted(in_box - seen)
    per_value = rules.gold_removed_per_value
    for value, ids in GOLD_IDS_BY_VALUE.items():
        missing = sum(1 for card in ids if card not in seen)
        if missing < per_value:
            raise ValueError(
                f"setup for {num_players} players removes {per_value} gold cards of value {value}, "
                f"but the deck leaves out only {missing} of them (removed: {removed})"
            )
    return cards, removed


def new_state(
    num_players: int,
    rng: np.random.Generator,
    *,
    first_player: int = 0,
    bluffs: bool = False,
    strict_bids: bool = False,
    auction_order_placed: bool = False,
    deck: Sequence[int] | None = None,
    explicit_chance: bool = False,
    preset: str = STANDARD_PRESET,
) -> State:
    """A state dealt and ready for the first gift turn (RULES §2, §3).

    With ``explicit_chance`` nothing is dealt yet: every card is in the draw pile, unordered, and
    the removals are the game's first random events (:func:`removal_outcomes`, :func:`remove_unseen`);
    each draw then takes the card its random event names. Otherwise the seeded generator deals
    (:func:`deal`): the removed cards and the draw pile in order, whose top card each draw takes.
    """
    num_players = check_num_players(num_players)
    first_player = check_seat(first_player, num_players, "first_player")
    rules = setup_rules(preset, num_players)
    if explicit_chance and deck is not None:
        raise ValueError("deck fixes the draws, explicit chance leaves them to the caller: give one or the other")
    draw: list[int]
    removed: list[int]
    if explicit_chance:
        draw, removed = list(rules.cards), []
    else:
        draw, removed = deal(rules, rng) if deck is None else check_deck(deck, rules)
    state = State(
        num_players,
        rng,
        first_player=first_player,
        bluffs=bluffs,
        strict_bids=strict_bids,
        auction_order_placed=auction_order_placed,
        explicit_chance=explicit_chance,
        preset=preset,
    )
    state.draw_pile = draw[::-1]  # top card last
    state.removed = removed
    return state


def removals_left(state: State) -> int:
    """Cards still to remove unseen before the first gift turn (none once dealt)."""
    return setup_rules(state.preset, state.num_players).removed_count - len(state.removed)


def removal_outcomes(state: State) -> list[int]:
    """The cards the next removal may take, ascending, each as likely: a gold card of the value
    whose removals are due (RULES §2.2: the gold cards first, value by value), then any card left."""
    done = len(state.removed)
    gold_removals = setup_rules(state.preset, state.num_players).gold_removed_per_value
    if done < gold_removals * len(GOLD_VALUES):
        value = GOLD_VALUES[done // gold_removals]
        removed = set(state.removed)
        return [card for card in GOLD_IDS_BY_VALUE[value] if card not in removed]
    return sorted(state.draw_pile)


def remove_unseen(state: State, card: int) -> None:
    """The random event of a removal: ``card`` leaves the draw pile unseen (RULES §2.2)."""
    state.draw_pile.remove(card)
    state.removed.append(card)
    if not removals_left(state):
        state.removed.sort()
