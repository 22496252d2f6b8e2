"""Phase 2, the auctions (RULES §5): reveal, bid round the table, pay or take the penalty.

Functions step a :class:`State` in place. ``advance`` moves to the next auction and
returns ``False`` once the auction draw pile is empty (the caller then scores the game).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Final

from biblios_env.actions import BID_BASE, MAX_BID, PASS, PAY_BASE, REFUSE
from biblios_env.cards import CARD_VALUE, IS_CHURCH, IS_GOLD, gold_value
from biblios_env.engine import church
from biblios_env.engine.flow import (
    CHANCE_PENALTY_PICK,
    CHANCE_REVEAL,
    DECISION_BID,
    DECISION_PAY,
    NO_CHANCE,
    PHASE_AUCTION,
    RESUME_AUCTIONING,
    STANDARD_PRESET,
)
from biblios_env.engine.setup import setup_rules
from biblios_env.engine.state import (
    CHANCE_AUCTION_ORDER,
    CHANCE_PENALTY,
    NO_CARD,
    NO_SEAT,
    State,
    add_card,
    await_chance,
    discard_face_down,
    discard_face_up,
    enter_hand_publicly,
    move_card,
    pop_card,
    remove_card,
    take_outcome,
    uniform_index,
)
from biblios_env.engine.visibility import payment_face_up, record_penalty_move


def start_phase(state: State) -> bool:
    """Shuffle the auction pile (unless replaying the placed order) and hold the first auction.

    With explicit chance the pile is not shuffled here: each auction's card is a random event
    of its own (:func:`advance`), which orders the pile as a shuffle would."""
    state.phase = PHASE_AUCTION
    if not state.auction_order_placed and not state.explicit_chance:
        placed = state.auction_pile[::-1]  # the pile as placed, first card first
        order = [placed[int(i)] for i in state.rng.permutation(len(placed))]
        state.chance.append((CHANCE_AUCTION_ORDER, tuple(order)))
        state.auction_pile = order[::-1]  # top card last: the first card of the order is auctioned first
    # The first player of the game is the first active player (RULES §5.1); advance() moves on by one.
    state.active_player = (state.first_player - 1) % state.num_players
    return advance(state)


def advance(state: State) -> bool:
    """The next player becomes active and reveals the next card; ``False`` when none is left."""
    state.auction_card = NO_CARD
    if not state.auction_pile:
        return False
    state.active_player = state.next_seat(state.active_player)
    if state.explicit_chance and not state.auction_order_placed:
        await_chance(state, CHANCE_REVEAL)
        return True
    return reveal(state, state.auction_pile[-1])


def reveal(state: State, card: int) -> bool:
    """The random event of an auction: ``card`` leaves the auction pile face up and the bidding
    opens (RULES §5). A shuffled pile gives its top card; with explicit chance the event names any
    card of the pile."""
    take_outcome(state, state.auction_pile, card)
    state.auction_card = card
    for contributions, row in zip(state.auction_contributions, state.contribution_rows):
        if row[card]:
            remove_card(contributions, row, card)
            break
    excluded = state.excluded
    for seat in range(len(excluded)):  # in place, as the other per-auction lists (see open_bidding)
        excluded[seat] = False
    return open_bidding(state)


def open_bidding(state: State) -> bool:
    """Bidding starts left of the active player; defaulters on this card may not bid (RULES §5.3)."""
    state.high_bid = 0
    state.high_bidder = NO_SEAT
    # The per-auction lists (passed, excluded, payment) are reset in place, not replaced: a list
    # alive for a few steps outlives the collector's young generations, and hundreds of games
    # replacing theirs at every auction set off its full collections of the whole heap.
    # Nothing keeps a reference to them (a clone or a view copies).
    passed, excluded = state.passed, state.excluded
    for seat in range(len(passed)):
        passed[seat] = excluded[seat]
    first = _next_bidder(state, state.active_player)
    if first == NO_SEAT:  # every player has defaulted on this card: nobody can buy it
        return _discard_unsold(state)
    state.decision = DECISION_BID
    state.current_player = first
    return True


def _next_bidder(state: State, seat: int) -> int:
    """The next seat after ``seat`` (round the table, ``seat`` last) that has not passed."""
    passed = state.passed
    n = state.num_players
    candidate = seat
    for _ in range(n):
        candidate += 1
        if candidate == n:
            candidate = 0
        if not passed[candidate]:
            return candidate
    return NO_SEAT


def _discard_unsold(state: State) -> bool:
    """Nobody bid: the revealed card is discarded face up (RULES §5.4)."""
    discard_face_up(state, state.auction_card)
    return advance(state)


#: For each high bid, PASS and every higher bid up to 66: copying a slice of a prepared list is
#: about three times cheaper than building it, and bidding is most of the decisions. Hand out
#: slices (copies) only, never these lists.
BID_LEGAL: Final[tuple[list[int], ...]] = tuple(
    [PASS, *range(BID_BASE + high_bid + 1, BID_BASE + MAX_BID + 1)] for high_bid in range(MAX_BID + 1)
)


def bid_legal_actions(state: State) -> list[int]:
    """PASS and every bid above the high bid, capped at the preset's highest bid
    (:attr:`~biblios_env.engine.setup.SetupRules.max_bid`: 66 but in the small game), and at what
    the bidder can pay when ``strict_bids`` is on (RULES §5: bluffing is allowed by default)."""
    high_bid = state.high_bid
    limit = MAX_BID if state.preset == STANDARD_PRESET else setup_rules(state.preset, state.num_players).max_bid
    if state.strict_bids:
        limit = min(limit, capacity(state, state.current_player))
    return BID_LEGAL[high_bid][: 1 + max(0, limit - high_bid)]


def capacity(state: State, seat: int) -> int:
    """The largest bid ``seat`` could pay now for the card under auction (see :func:`bid_capacity`)."""
    return bid_capacity(state.hands[seat], state.auction_card)


def bid_capacity(hand: Sequence[int], auction_card: int) -> int:
    """The largest bid ``hand`` could pay for ``auction_card`` (RULES §5): a gold card is paid
    with that many cards of any kind, anything else with gold cards worth at least the bid."""
    if IS_GOLD[auction_card]:
        return len(hand)
    return gold_value(hand)


def cheapest_cover(golds: Iterable[int], amount: int) -> list[int]:
    """The gold cards among ``golds`` that pay ``amount`` overpaying least: no change is given
    (RULES §5), so this is the cheapest way to complete a payment. Ties go to the fewest cards,
    then to the fewest 3s; the cover lists higher values first, cards of one value in the order
    given. Not a rule (a payer may pick any cover), but its arithmetic: agents and front ends
    call it rather than each solving it again.

    Returns ``[]`` for ``amount <= 0``; raises ValueError if ``golds`` cannot cover ``amount``.
    """
    if amount <= 0:
        return []
    by_value: dict[int, list[int]] = {1: [], 2: [], 3: []}
    for card in golds:
        if not IS_GOLD[card]:
            raise ValueError(f"cheapest_cover pays with gold cards only, got card {card}")
        by_value[CARD_VALUE[card]].append(card)
    if len(by_value[1]) + 2 * len(by_value[2]) + 3 * len(by_value[3]) < amount:
        raise ValueError(f"gold {[*by_value[3], *by_value[2], *by_value[1]]} cannot cover {amount}")
    best: tuple[int, int] | None = None
    best_counts = (0, 0, 0)
    for threes in range(len(by_value[3]) + 1):  # only the count of each value matters
        for twos in range(len(by_value[2]) + 1):
            covered = 3 * threes + 2 * twos
            ones = max(0, amount - covered)
            if ones > len(by_value[1]):
                continue
            key = (covered + ones, threes + twos + ones)
            if best is None or key < best:
                best, best_counts = key, (threes, twos, ones)
    threes, twos, ones = best_counts
    return by_value[3][:threes] + by_value[2][:twos] + by_value[1][:ones]


def bid(state: State, amount: int) -> bool:
    state.high_bid = amount
    state.high_bidder = state.current_player
    return _next_turn(state)


def pass_(state: State) -> bool:
    state.passed[state.current_player] = True
    return _next_turn(state)


def _next_turn(state: State) -> bool:
    """Bidding goes round until all but the high bidder passed (RULES §5.3-5)."""
    following = _next_bidder(state, state.current_player)
    if following == NO_SEAT:
        return _discard_unsold(state)
    if following == state.high_bidder:
        state.payment.clear()
        state.payment_value = 0
        state.decision = DECISION_PAY
        state.current_player = state.high_bidder
        return True
    state.current_player = following
    return True


def pay_legal_actions(state: State) -> list[int]:
    """Payment cards that can still lead to a complete payment, plus REFUSE unless ``strict_bids``.

    A gold card is paid with exactly ``bid`` cards of any kind; anything else with gold
    cards worth at least ``bid``. If the hand cannot complete the payment only REFUSE is
    left: the winner "cannot pay" and takes the penalty (RULES §5).
    """
    hand = state.hands[state.current_player]
    refuse = [] if state.strict_bids else [REFUSE]
    if IS_GOLD[state.auction_card]:
        if len(hand) < state.high_bid - len(state.payment):
            return refuse
        return sorted([PAY_BASE + card for card in hand]) + refuse
    golds = [card for card in hand if IS_GOLD[card]]
    coins = 0
    for card in golds:
        coins += CARD_VALUE[card]
    if coins < state.high_bid - state.payment_value:
        return refuse
    return sorted([PAY_BASE + card for card in golds]) + refuse


def pay(state: State, card: int) -> bool:
    """Add ``card`` to the payment; once covered, the winner takes the auctioned card."""
    seat = state.current_player
    remove_card(state.hands[seat], state.hand_rows[seat], card)
    state.payment.append(card)
    if IS_GOLD[state.auction_card]:  # paid with that many cards of any kind
        if len(state.payment) < state.high_bid:
            return True
    else:  # paid with gold worth at least the bid
        state.payment_value += CARD_VALUE[card]
        if state.payment_value < state.high_bid:
            return True
    if payment_face_up(state.auction_card):
        for paid in state.payment:
            discard_face_up(state, paid)
        # A card may be publicly known in another hand too, if it moved there in a penalty.
        for public, row in zip(state.public_hands, state.public_hand_rows):
            for paid in state.payment:
                if row[paid]:
                    remove_card(public, row, paid)
    else:  # the others learn how many cards, not which (RULES §5, §7)
        discard_face_down(state, seat, state.payment)
        state.public_at_last_loss[seat] = tuple(state.public_hands[seat])
    state.payment.clear()
    state.payment_value = 0
    won = state.auction_card
    state.auction_card = NO_CARD
    if IS_CHURCH[won]:
        church.acquire(state, seat, won, RESUME_AUCTIONING)
        return True
    enter_hand_publicly(state, seat, won)
    return advance(state)


def refuse(state: State) -> bool:
    """The high bidder defaults: picked cards go back, the penalty applies, and the card is
    auctioned again without the defaulter (RULES §5, Penalty)."""
    seat = state.current_player
    hand = state.hands[seat]
    hand_row = state.hand_rows[seat]
    for card in state.payment:
        add_card(hand, hand_row, card)
    state.payment.clear()
    state.payment_value = 0
    if state.explicit_chance:
        state.chance.append((CHANCE_PENALTY, ()))  # each card it loses is a random event of its own
        return _next_penalty_pick(state)
    moved: list[int] = []  # the cards it loses, as they are picked
    rng = state.rng
    for _ in range(penalty_size(state)):
        if not hand:
            break
        _lose_card(state, seat, uniform_index(rng, len(hand)), moved)  # a uniform pick, cheaper than integers()
    state.chance.append((CHANCE_PENALTY, tuple(moved)))
    return _end_penalty(state, seat, moved)


def penalty_size(state: State) -> int:
    """The cards a penalty takes from a hand that has them: one for each other seat, or with
    "medieval bluffs" one card discarded blind (RULES §5)."""
    return 1 if state.bluffs else state.num_players - 1


def _next_penalty_pick(state: State) -> bool:
    """With explicit chance: await the next card the defaulter (still the high bidder) loses, or
    end the penalty once it has lost them all or has none left."""
    seat = state.high_bidder
    moved = state.chance[-1][1]
    if state.hands[seat] and len(moved) < penalty_size(state):
        await_chance(state, CHANCE_PENALTY_PICK)
        return True
    return _end_penalty(state, seat, moved)


def penalty_pick(state: State, card: int) -> bool:
    """The random event of a penalty with explicit chance: the defaulter loses ``card``."""
    state.chance_kind = NO_CHANCE
    seat = state.high_bidder
    kind, recorded = state.chance[-1]
    moved = list(recorded)
    _lose_card(state, seat, state.hands[seat].index(card), moved)
    state.chance[-1] = (kind, tuple(moved))
    return _next_penalty_pick(state)


def _lose_card(state: State, seat: int, index: int, moved: list[int]) -> None:
    """The card at ``index`` of the defaulter's hand, picked blindly, goes to the next seat to the
    left that has not had one, or with "medieval bluffs" to the discard face down (RULES §5; who
    saw it: :func:`~biblios_env.engine.visibility.record_penalty_move`)."""
    hand = state.hands[seat]
    if state.bluffs:
        card = pop_card(hand, state.hand_rows[seat], index)
        discard_face_down(state, seat, (card,))
    else:
        receiver = (seat + len(moved) + 1) % state.num_players
        card = move_card(hand, state.hand_rows[seat], index, state.hands[receiver], state.hand_rows[receiver])
        record_penalty_move(state, seat, receiver, card)
    moved.append(card)


def _end_penalty(state: State, seat: int, moved: Sequence[int]) -> bool:
    """The defaulter is excluded from this card's bidding, which reopens; a seat that lost cards
    unseen keeps a record of what the table knew of its hand then (RULES §7)."""
    if moved:
        state.public_at_last_loss[seat] = tuple(state.public_hands[seat])
    state.excluded[seat] = True
    return open_bidding(state)
