"""Determinization: sample a full :class:`State` consistent with one seat's information set.

Search agents for imperfect-information games (IS-MCTS, determinized UCT) need complete game
states that the searching seat cannot tell apart from the real one. :func:`sample_state` builds
one from a :class:`~biblios_env.engine.views.PlayerView` alone — it never sees the real state —
by exact card counting: the deck composition is public (RULES §1), so the cards whose place the
viewer does not know are a known set, and they are dealt to the places the viewer cannot see.

What the viewer knows where (RULES §7) stays put: its hand, the card it is placing or kept, its
own cards on the auction pile (at their positions when auctions follow the placed order), its
face-down discards, the common area, the card under auction, the church card, its own payment
in progress, public discards. Every other card is dealt, respecting everything public:

* **Known opponent cards.** A card publicly seen entering an opponent's hand (taken from the
  common area, won at auction), or given to that opponent in a penalty by the viewer, is in
  that opponent's hand — unless the opponent has since lost cards unseen (face-down payments
  for gold cards, penalties, blind discards). Public cards
  acquired after the opponent's last unseen loss are certain. The others may be gone: each
  independently of order, as if the opponent's current hand slots and its unseen-loss slots
  were equally likely to hold it (sampling without replacement). A card that left goes to one of
  the opponent's own loss slots: its face-down discards or the hand of the player who received
  a penalty card from it. Such cards never go back to the draw pile,
  the auction pile or the removed cards.
* **Never-seen cards** fill every remaining hidden slot uniformly at random: opponents' hand
  slots and face-down discards, the card an opponent is placing or has kept
  face down, the removed cards, the draw pile and the other players' cards on the auction pile —
  except that a church card never stays in a hand (RULES §4), so unseen church cards are dealt
  only to the removed cards, the piles and the card an opponent is placing.
  The setup rule that 2 (3) players remove two (one) gold cards of each value (RULES §2) is
  respected exactly: the required gold cards are dealt to the removed pile first, from the
  never-seen gold of each value, which reproduces the setup's distribution.

Simplifications (documented, not contradicted by any view): opponents are assumed to choose
their kept cards, face-down payments and so on independently of the cards' identities (the
usual IS-MCTS assumption), a card that changed hands twice unseen is placed after its first
move only, and an opponent's payment in progress is sampled as not yet begun (paying is one act,
RULES §5: the cards picked so far are in that opponent's hand as far as the viewer can tell).
The sampled state carries a fresh random generator, so its future chance events (auction
shuffle, penalty picks) are new too.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from typing import Final

import numpy as np

from biblios_env.cards import CARD_VALUE, GOLD_IDS_BY_VALUE, IS_CHURCH, IS_GOLD, gold_value
from biblios_env.engine.flow import (
    DECISION_BID,
    DECISION_CHURCH,
    DECISION_PAY,
    DECISION_PLACE,
    DECISION_TAKE,
    PHASE_AUCTION,
    PHASE_GIFT,
    RESUME_AUCTIONING,
    RESUME_PLACING,
    RESUME_TAKING,
)
from biblios_env.engine.game import Game
from biblios_env.engine.setup import setup_rules
from biblios_env.engine.state import NO_CARD, NO_SEAT, PenaltyMove, State
from biblios_env.engine.views import PlayerView
from biblios_env.engine.visibility import penalty_move, record_penalty_move

_HAND, _FACE_DOWN = 0, 1
_STRICT_TRIES: Final = 200


class InconsistentViewError(ValueError):
    """A view that no real game state could produce (card counts that do not add up)."""


def sample_state(view: PlayerView, rng: np.random.Generator | random.Random) -> State:
    """A full game state that ``view.seat`` cannot tell from the real one (see the module doc).

    ``player_view(sample_state(view, rng), view.seat) == view`` always holds. The same ``view``
    and an ``rng`` in the same state give the same sample; the sample gets its own fresh
    ``numpy`` generator (drawn from ``rng``) for the chance events still to come.
    """
    shuffle_rng = random.Random(int(rng.integers(1 << 63))) if isinstance(rng, np.random.Generator) else rng
    return _Sampler(view, shuffle_rng).build(np.random.default_rng(shuffle_rng.getrandbits(63)))


def sample_game(view: PlayerView, rng: np.random.Generator | random.Random) -> Game:
    """:func:`sample_state` wrapped in a :class:`Game` (validated ``apply``, cached legal actions).

    The game's ``deck`` (the draw pile as dealt) is unknown for a sampled position and left empty.
    """
    state = sample_state(view, rng)
    return Game.from_state(state, seed=int(state.rng.integers(1 << 62)))


@dataclass(slots=True)
class _Sample:
    """The sampled position as it is put together, by absolute seat."""

    hands: list[list[int]]
    face_down: list[list[int]]  # face-down discards (face-down payments and blind discards)
    hand_room: list[int]  # hand slots still to fill with never-seen cards
    face_down_room: list[int]  # face-down discards still to fill with never-seen cards
    sent: list[list[tuple[int, int]]]  # per giver: (receiver, card) moved by a penalty in the sample
    removed: list[int] = field(default_factory=list)
    draw_pile: list[int] = field(default_factory=list)
    auction_pile: list[int] = field(default_factory=list)
    contributions: list[list[int]] = field(default_factory=list)  # each seat's cards in the auction pile
    drawn_card: int = NO_CARD
    kept_card: int = NO_CARD
    penalty_moves: list[PenaltyMove] = field(default_factory=list)


class _Sampler:
    """One sampling run; seats are converted from the view's relative seats to absolute ones."""

    def __init__(self, view: PlayerView, rng: random.Random) -> None:
        self.view = view
        self.rng = rng
        self.n = n = view.num_players
        self.me = me = view.seat
        self.setup = setup_rules(view.preset, n)  # the cards in the box and the setup's counts
        self.opponents = [self.seat(relative) for relative in range(1, n)]
        # What the view says about each seat, by absolute seat.
        self.hand_sizes = [view.hand_sizes[(seat - me) % n] for seat in range(n)]
        self.face_down_counts = [
            view.face_down_counts[(seat - me) % n] if view.face_down_counts else 0 for seat in range(n)
        ]
        self.public_at_last_loss = [
            set(view.public_at_last_loss[(seat - me) % n]) if view.public_at_last_loss else set() for seat in range(n)
        ]
        # Hidden places outside the hands: the card an opponent is placing, the others' auction cards.
        self.placing_hidden = view.phase == PHASE_GIFT and view.decision == DECISION_PLACE and view.current_player != 0
        self.auction_hidden = view.auction_pile_size - len(view.own_auction_cards)

    def seat(self, relative: int) -> int:
        return NO_SEAT if relative == NO_SEAT else (self.me + relative) % self.n

    # ------------------------------------------------------------------ what the viewer knows
    def known_cards(self) -> set[int]:
        """Cards whose place the viewer knows exactly."""
        view = self.view
        known = set(view.hand)
        known.update(view.common_area)
        known.update(view.own_auction_cards)
        known.update(view.public_discard)
        known.update(view.own_face_down_discard)
        known.update(view.payment_cards)
        for card in (view.drawn_card, view.kept_card, view.auction_card, view.church_card):
            if card != NO_CARD:
                known.add(card)
        return known

    def known_owners(self, known: set[int]) -> tuple[dict[int, int], set[int], list[int], list[list[int]]]:
        """Cards known to be in (or to have left unseen from) an opponent's hand, from the view's
        public cards and penalty record: ``(card -> seat, cards the viewer gave in penalties,
        cards each seat lost in penalties, per giver the receivers other than the viewer)``."""
        view, me = self.view, self.me
        owner: dict[int, int] = {}
        for relative in range(1, self.n):
            seat = self.seat(relative)
            for card in view.opponent_cards[relative - 1]:
                if card not in known:
                    owner[card] = seat
        given_by_viewer: set[int] = set()
        losses = [0] * self.n
        penalty_slots: list[list[int]] = [[] for _ in range(self.n)]
        for giver, receiver, card in view.penalty_moves:
            giver, receiver = self.seat(giver), self.seat(receiver)
            if giver == me and card != NO_CARD and card not in known:
                owner[card] = receiver
                given_by_viewer.add(card)
            elif receiver != me:
                penalty_slots[giver].append(receiver)
            losses[giver] += 1
        return owner, given_by_viewer, losses, penalty_slots

    # ------------------------------------------------------------------ the sample
    def build(self, state_rng: np.random.Generator) -> State:
        known = self.known_cards()
        owner, given_by_viewer, losses, penalty_slots = self.known_owners(known)
        sample = self.keep_or_lose(owner, given_by_viewer, losses, penalty_slots)
        sample.removed, fresh, churches = self.never_seen(known.union(owner))
        self.check_counts(sample, fresh, churches)
        others_in_auction = self.deal_never_seen(sample, fresh, churches)
        sample.auction_pile, sample.contributions = self.auction_pile(
            list(self.view.own_auction_cards), others_in_auction
        )
        sample.face_down[self.me] = list(self.view.own_face_down_discard)
        sample.penalty_moves = self.penalty_moves(sample.sent, sample.hands, owner)
        return self.state(sample, state_rng)

    def keep_or_lose(
        self, owner: dict[int, int], given_by_viewer: set[int], losses: list[int], penalty_slots: list[list[int]]
    ) -> _Sample:
        """Put each card known to have been in an opponent's hand: certainly there if it came in
        after the seat's last unseen loss, else in the hand or lost, like drawing without
        replacement over the seat's hand slots and loss slots (see the module docstring)."""
        rng, me = self.rng, self.me
        certain: list[list[int]] = [[] for _ in range(self.n)]
        uncertain: list[list[int]] = [[] for _ in range(self.n)]
        for card in sorted(owner):
            seat = owner[card]
            if card in given_by_viewer:
                may_be_gone = bool(self.face_down_counts[seat] or losses[seat])
            else:
                may_be_gone = card in self.public_at_last_loss[seat]
            (uncertain if may_be_gone else certain)[seat].append(card)
        hands: list[list[int]] = [[] for _ in range(self.n)]
        hands[me] = list(self.view.hand)
        hand_room = [0] * self.n
        gone: list[tuple[int, int]] = []  # (seat it left, card)
        for seat in self.opponents:
            hands[seat] = certain[seat][:]
            room = self.hand_sizes[seat] - len(certain[seat])
            if room < 0:
                raise InconsistentViewError(
                    f"seat {seat} holds {self.hand_sizes[seat]} cards but {len(certain[seat])} are known to be in hand"
                )
            departures = self.face_down_counts[seat] + len(penalty_slots[seat])
            cards = uncertain[seat]
            rng.shuffle(cards)
            for card in cards:
                if room and (not departures or rng.random() * (room + departures) < room):
                    hands[seat].append(card)
                    room -= 1
                else:
                    gone.append((seat, card))
                    departures = max(departures - 1, 0)
            hand_room[seat] = room
        face_down_room = self.face_down_counts[:]
        face_down_room[me] = 0
        sample = _Sample(hands, [[] for _ in range(self.n)], hand_room, face_down_room, [[] for _ in range(self.n)])
        for seat, card in gone:
            self.place_lost_card(sample, seat, card, penalty_slots)
        return sample

    def place_lost_card(self, sample: _Sample, seat: int, card: int, penalty_slots: list[list[int]]) -> None:
        """A card that left ``seat``'s hand unseen goes to one of its loss slots: its face-down
        discards or the hand of a seat that received a penalty card from it."""
        options: list[tuple[int, int]] = []
        options.extend((_FACE_DOWN, seat) for _ in range(sample.face_down_room[seat]))
        options.extend((_HAND, receiver) for receiver in penalty_slots[seat] if sample.hand_room[receiver])
        via_penalty = True
        if not options:  # a card that moved on more than once: any place an opponent's card can be
            via_penalty = False
            options = [(_FACE_DOWN, other) for other in self.opponents if sample.face_down_room[other]]
            options += [(_HAND, other) for other in self.opponents if sample.hand_room[other]]
        if not options:
            raise InconsistentViewError(f"no place left for card {card}, known to have been in seat {seat}'s hand")
        place, target = options[self.rng.randrange(len(options))]
        if place == _FACE_DOWN:
            sample.face_down[target].append(card)
            sample.face_down_room[target] -= 1
        else:
            sample.hands[target].append(card)
            sample.hand_room[target] -= 1
            if via_penalty:
                penalty_slots[seat].remove(target)
                sample.sent[seat].append((target, card))

    def never_seen(self, placed: set[int]) -> tuple[list[int], list[int], list[int]]:
        """The cards nobody has placed yet: ``(removed so far, others shuffled, church cards)``.

        The setup's gold removals are dealt first (RULES §2), from the never-seen gold of each
        value. Church cards are kept apart: they never stay in a hand (RULES §4), so an unseen
        one is among the removed cards, in a pile or the card an opponent is placing.
        """
        n, rng = self.n, self.rng
        fresh = [card for card in self.setup.cards if card not in placed]
        removed: list[int] = []
        per_value = self.setup.gold_removed_per_value
        if per_value:
            for value, ids in GOLD_IDS_BY_VALUE.items():
                candidates = [card for card in ids if card not in placed]
                if len(candidates) < per_value:
                    raise InconsistentViewError(
                        f"setup for {n} players removed {per_value} gold cards of value {value}, "
                        f"but only {len(candidates)} are unseen"
                    )
                removed.extend(rng.sample(candidates, per_value))
            taken = set(removed)
            fresh = [card for card in fresh if card not in taken]
        churches = [card for card in fresh if IS_CHURCH[card]]
        fresh = [card for card in fresh if not IS_CHURCH[card]]
        rng.shuffle(fresh)
        return removed, fresh, churches

    def check_counts(self, sample: _Sample, fresh: list[int], churches: list[int]) -> None:
        """The never-seen cards must fill the hidden places exactly (else the view is not a real one)."""
        view = self.view
        needed = (
            sum(sample.hand_room)
            + sum(sample.face_down_room)
            + self.placing_hidden
            + bool(view.hidden_kept)
            + self.setup.removed_count
            - len(sample.removed)
            + view.draw_pile_size
            + self.auction_hidden
        )
        if needed != len(fresh) + len(churches) or self.auction_hidden < 0:
            raise InconsistentViewError(
                f"{len(fresh) + len(churches)} unseen cards for {needed} hidden places: "
                "the view's card counts do not add up"
            )
        if sum(sample.hand_room) + sum(sample.face_down_room) + bool(view.hidden_kept) > len(fresh):
            raise InconsistentViewError("more hidden hand places than unseen cards that are not church cards")

    def deal_never_seen(self, sample: _Sample, fresh: list[int], churches: list[int]) -> list[int]:
        """Deal the shuffled never-seen cards to every hidden place; church cards only join for
        the places they may be in (the removed cards, the piles, the card being placed).
        Returns the other players' cards for the auction pile."""
        view, rng = self.view, self.rng
        bidder, coins_needed = self.strict_bidder(sample.hands)
        if bidder != NO_SEAT and sample.hand_room[bidder]:
            sample.hands[bidder].extend(self.deal_strict_bidder(fresh, sample.hand_room[bidder], coins_needed))
            sample.hand_room[bidder] = 0
        deal = fresh.pop
        for seat in self.opponents:
            sample.hands[seat].extend(deal() for _ in range(sample.hand_room[seat]))
            sample.face_down[seat].extend(deal() for _ in range(sample.face_down_room[seat]))
            rng.shuffle(sample.hands[seat])
        sample.kept_card = deal() if view.hidden_kept else view.kept_card
        fresh.extend(churches)
        rng.shuffle(fresh)
        sample.drawn_card = deal() if self.placing_hidden else view.drawn_card
        sample.removed.extend(deal() for _ in range(self.setup.removed_count - len(sample.removed)))
        sample.removed.sort()
        sample.draw_pile = [deal() for _ in range(view.draw_pile_size)]
        return [deal() for _ in range(self.auction_hidden)]

    def strict_bidder(self, hands: list[list[int]]) -> tuple[int, int]:
        """With ``strict_bids`` a bid is capped at what the bidder can pay (RULES §5 option), so an
        opponent's standing high bid on a non-gold card shows they hold that much gold:
        ``(seat, coins still missing from its known cards)``, or ``(NO_SEAT, 0)``."""
        view = self.view
        if not view.strict_bids or view.decision not in (DECISION_BID, DECISION_PAY):
            return NO_SEAT, 0
        if view.high_bidder in (NO_SEAT, 0) or view.auction_card == NO_CARD or IS_GOLD[view.auction_card]:
            return NO_SEAT, 0
        seat = self.seat(view.high_bidder)
        missing = view.high_bid - view.payment_value - gold_value(hands[seat])
        return (seat, missing) if missing > 0 else (NO_SEAT, 0)

    def deal_strict_bidder(self, fresh: list[int], count: int, coins: int) -> list[int]:
        """``count`` never-seen cards worth at least ``coins`` in gold, removed from ``fresh``:
        rejection sampling (the exact conditional), then a greedy fallback for rare cases."""
        rng = self.rng
        chosen: list[int] | None = None
        for _ in range(_STRICT_TRIES):
            picks = rng.sample(range(len(fresh)), count)
            if sum(CARD_VALUE[fresh[i]] for i in picks if IS_GOLD[fresh[i]]) >= coins:
                chosen = picks
                break
        if chosen is None:
            golds = sorted((i for i in range(len(fresh)) if IS_GOLD[fresh[i]]), key=lambda i: -CARD_VALUE[fresh[i]])
            chosen = []
            for i in golds:
                if coins <= 0 or len(chosen) == count:
                    break
                chosen.append(i)
                coins -= CARD_VALUE[fresh[i]]
            rest = [i for i in range(len(fresh)) if i not in set(chosen)]
            chosen += rng.sample(rest, count - len(chosen))
        cards = [fresh[i] for i in chosen]
        for i in sorted(chosen, reverse=True):
            fresh[i] = fresh[-1]
            fresh.pop()
        rng.shuffle(fresh)
        return cards

    def auction_pile(self, own: list[int], others: list[int]) -> tuple[list[int], list[list[int]]]:
        """The auction pile (top card last) and each seat's cards in it.

        During the gifts, and during the auctions when they follow the placed order, the pile
        holds one card per gift turn in placement order (the card placed first is on top), so
        every card's owner is public. After a shuffle only the viewer's own cards have known owners.
        """
        view, n, me, rng = self.view, self.n, self.me, self.rng
        first = self.seat(view.first_player)
        size = view.auction_pile_size
        if view.phase == PHASE_GIFT or view.auction_order_placed:
            placed = size if view.phase == PHASE_GIFT else self.setup.gift_turns  # cards put on the pile in all
            owners = [(first + turn) % n for turn in range(placed - size, placed)]  # top of the pile first
            own_places = [index for index, seat in enumerate(owners) if seat == me]
            if len(own_places) == len(own):
                return self.placed_pile(own, others, owners, own_places)
        contributions: list[list[int]] = [[] for _ in range(n)]
        # Shuffled (or an unexpected layout): own cards at random places, owners of the rest drawn
        # from the turns each opponent took.
        pile = own + others
        rng.shuffle(pile)
        labels = [(first + turn) % n for turn in range(self.setup.gift_turns)]
        labels = [seat for seat in labels if seat != me]
        owners = (
            rng.sample(labels, len(others))
            if len(others) <= len(labels)
            else [labels[rng.randrange(len(labels))] for _ in others]
        )
        for card, seat in zip(others, owners, strict=True):
            contributions[seat].append(card)
        contributions[me] = own[:]
        return pile, contributions

    def placed_pile(
        self, own: list[int], others: list[int], owners: list[int], own_places: list[int]
    ) -> tuple[list[int], list[list[int]]]:
        """The pile in placement order: the viewer's cards where it placed them, the others' cards
        in the rest. ``owners`` and ``own_places`` run from the top of the pile."""
        size = len(owners)
        pile = [NO_CARD] * size  # top card first here, reversed at the end
        for index, card in zip(own_places, own, strict=True):
            pile[index] = card
        # The others' cards fill the free places top down during the gifts and bottom up during the
        # auctions: the order this sampler has always dealt them in, so samples replay exactly.
        order = range(size) if self.view.phase == PHASE_GIFT else range(size - 1, -1, -1)
        dealt = iter(others)
        for index in order:
            if pile[index] == NO_CARD:
                pile[index] = next(dealt)
        contributions: list[list[int]] = [[] for _ in range(self.n)]
        for index, seat in enumerate(owners):
            if seat != self.me:
                contributions[seat].append(pile[index])  # in placement order, like the engine's
        contributions[self.me] = own[:]
        return pile[::-1], contributions

    def penalty_moves(
        self, sent: list[list[tuple[int, int]]], hands: list[list[int]], owner: dict[int, int]
    ) -> list[PenaltyMove]:
        """The penalty record, with a plausible card where the viewer does not know it: a card the
        sample sent that way, else one of the receiver's cards the viewer knows nothing about."""
        moves = []
        for giver, receiver, card in self.view.penalty_moves:
            giver, receiver = self.seat(giver), self.seat(receiver)
            if card == NO_CARD:
                match = next((entry for entry in sent[giver] if entry[0] == receiver), None)
                if match is not None:
                    sent[giver].remove(match)
                    card = match[1]
                else:
                    candidates = [card for card in hands[receiver] if card not in owner] or hands[receiver]
                    card = candidates[self.rng.randrange(len(candidates))] if candidates else NO_CARD
            moves.append(penalty_move(giver, receiver, card))
        return moves

    def state(self, sample: _Sample, state_rng: np.random.Generator) -> State:
        """The sampled position as a :class:`State`: the view's public facts plus the sample."""
        view, n, me = self.view, self.n, self.me
        relative = [(seat - me) % n for seat in range(n)]  # relative[seat] is the view's index of seat
        state = State(
            n,
            state_rng,
            first_player=self.seat(view.first_player),
            bluffs=view.bluffs,
            strict_bids=view.strict_bids,
            auction_order_placed=view.auction_order_placed,
            preset=view.preset,
        )
        state.phase = view.phase
        state.decision = view.decision
        state.current_player = self.seat(view.current_player)
        state.active_player = self.seat(view.active_player)
        state.dice = list(view.dice)
        state.hands = sample.hands
        state.draw_pile = sample.draw_pile
        state.auction_pile = sample.auction_pile
        state.common_area = list(view.common_area)
        state.public_discard = list(view.public_discard)
        state.private_discard = sample.face_down
        state.discard = state.public_discard + [card for cards in sample.face_down for card in cards]
        state.removed = sample.removed
        state.drawn_card = sample.drawn_card
        state.kept_card = sample.kept_card
        state.quota = list(view.quota)
        self.set_church_and_taker(state)
        state.church_card = view.church_card
        state.auction_card = view.auction_card
        state.high_bid = view.high_bid
        state.high_bidder = self.seat(view.high_bidder)
        state.passed = [view.passed[relative[seat]] for seat in range(n)]
        state.excluded = [view.excluded[relative[seat]] for seat in range(n)]
        state.payment = list(view.payment_cards)
        state.payment_value = view.payment_value
        state.public_hands[me] = list(view.own_public_cards)
        for seat in self.opponents:
            state.public_hands[seat] = list(view.opponent_cards[relative[seat] - 1])
        state.auction_contributions = sample.contributions
        if view.public_at_last_loss:
            state.public_at_last_loss = [tuple(view.public_at_last_loss[relative[seat]]) for seat in range(n)]
        state.init_derived()  # indicator rows from the lists above
        state.penalty_moves = []
        for giver, receiver, card in sample.penalty_moves:  # the record, and each seat's view of it
            record_penalty_move(state, giver, receiver, card)
        return state

    def set_church_and_taker(self, state: State) -> None:
        """Who resolves the church card, where play resumes after it, and who is taking: the view
        does not say, but the rules do (RULES §3, §4)."""
        view = self.view
        church_owner = state.current_player if view.decision == DECISION_CHURCH else NO_SEAT
        if view.phase == PHASE_AUCTION:
            resume = RESUME_AUCTIONING
        else:
            # The active player never takes from the common area, so a church card held by
            # anyone else during the gifts was taken from it (RULES §3, §4).
            resume = RESUME_PLACING if church_owner in (NO_SEAT, state.active_player) else RESUME_TAKING
        taking = view.decision == DECISION_TAKE or (church_owner != NO_SEAT and resume == RESUME_TAKING)
        state.taker = state.current_player if taking else NO_SEAT
        state.church_owner = church_owner
        state.church_resume = resume


def unseen_cards(view: PlayerView) -> list[int]:
    """The cards whose place ``view.seat`` does not know exactly, ascending (card counting)."""
    sampler = _Sampler(view, random.Random(0))
    return sorted(set(sampler.setup.cards) - sampler.known_cards())


__all__ = ["InconsistentViewError", "sample_game", "sample_state", "unseen_cards"]
