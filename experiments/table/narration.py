"""The narration of every move in words, as one viewer could see it (RULES §7): the one home of
the sentences that tell a game.

The terminal game (:mod:`experiments.play.session`) tells its player each move as their seat saw
it; the replay (:mod:`experiments.replay`) tells a saved game as any seat saw it, or as the whole
table did (every hidden card named). Which moves are seen face up is asked of
:mod:`biblios_env.engine.visibility`, never decided here.

A narration is a list of :class:`Line` s made of parts: text, a card, several cards, a category.
So each front end draws cards its own way: :func:`print_lines` prints the terminal's coloured
text, the replay page draws card tiles from the same parts.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Final

from rich.console import Console
from rich.rule import Rule
from rich.text import Text

from biblios_env.actions import AUCTION, BID_BASE, CHURCH_DECLINE, COMMON, KEEP, PASS, PAY_BASE, REFUSE, TAKE_BASE
from biblios_env.cards import CARD_VALUE, IS_GOLD, NUM_CATEGORIES
from biblios_env.engine.state import CHANCE_PENALTY, NO_CARD, Decision, Phase, State
from biblios_env.engine.visibility import payment_face_up, penalty_card_seen, placement_face_up
from experiments.table.cards import card_text, cards_text, category_text


@dataclass(frozen=True, slots=True)
class CardPart:
    """One card, named in full (``Monks 3 (E)``)."""

    card: int


@dataclass(frozen=True, slots=True)
class CardsPart:
    """Several cards in id order, comma-separated (a payment)."""

    cards: tuple[int, ...]


@dataclass(frozen=True, slots=True)
class CategoryPart:
    """A category's name (a die that a church card changed)."""

    category: int


Part = str | CardPart | CardsPart | CategoryPart

#: The headings that mark the course of a game (the terminal draws them as rules across the screen).
GIFT_TURN_HEADING: Final = "gift turn"
AUCTIONS_HEADING: Final = "auctions"
AUCTION_HEADING: Final = "auction"


@dataclass(frozen=True, slots=True)
class Line:
    """One sentence of the narration. ``style`` is a rich style (``"dim"`` for an unsold card,
    ``"bold red"`` for a penalty); ``heading`` is empty, or the landmark the line starts: a
    :data:`GIFT_TURN_HEADING`, the auctions' start (:data:`AUCTIONS_HEADING`) or an :data:`AUCTION_HEADING`."""

    parts: tuple[Part, ...]
    style: str = ""
    heading: str = ""

    @property
    def plain(self) -> str:
        """The line as plain text, cards by their names."""
        return "".join(_plain(part) for part in self.parts)


def _plain(part: Part) -> str:
    text = _part_text(part)
    return text if isinstance(text, str) else text.plain


def _part_text(part: Part) -> Text | str:
    """A part as the terminal shows it: cards and categories in their colours."""
    if isinstance(part, CardPart):
        return card_text(part.card)
    if isinstance(part, CardsPart):
        return cards_text(part.cards)
    if isinstance(part, CategoryPart):
        return category_text(part.category)
    return part


def print_lines(console: Console, lines: Iterable[Line]) -> None:
    """Print a narration as the terminal game does: a heading as a rule across the screen, a
    sentence as coloured text."""
    for line in lines:
        if line.heading:
            console.print(_rule(line))
        else:
            console.print(Text.assemble(*map(_part_text, line.parts), style=line.style), highlight=False)


def _rule(line: Line) -> Rule:
    if all(isinstance(part, str) for part in line.parts):
        return Rule(line.plain)  # a plain title takes the rule's own title style
    return Rule(Text.assemble(*map(_part_text, line.parts)))


@dataclass(frozen=True, slots=True)
class Before:
    """What the narration of a move needs from the position before it."""

    seat: int
    decision: int
    drawn_card: int
    auction_card: int
    church_card: int
    phase: int
    active_player: int
    high_bid: int
    payment: tuple[int, ...]
    dice: tuple[int, ...]
    penalty_moves: int
    chance_events: int

    @classmethod
    def of(cls, state: State) -> Before:
        return cls(
            state.current_player,
            state.decision,
            state.drawn_card,
            state.auction_card,
            state.church_card,
            state.phase,
            state.active_player,
            state.high_bid,
            tuple(state.payment),
            tuple(state.dice),
            len(state.penalty_moves),
            len(state.chance),
        )


class Narrator:
    """Tells the moves of one game as ``viewer`` sees them: a seat (its own moves as "You ...",
    the others' hidden cards unnamed) or ``None``, the whole table, which sees every card.

    ``name(seat)`` names a seat in the sentences (``"You"`` or ``"player_1 (value)"``). The
    narrator counts the gift turns and auctions, so it must be told every move of the game, in order.
    """

    def __init__(self, viewer: int | None, name: Callable[[int], str]) -> None:
        self.viewer = viewer
        self.name = name
        self.gift_turn = 0
        self.auction_number = 0
        self.auctions_total = 0

    def subject(self, seat: int, you: str, other: str) -> str:
        """``"You keep"`` / ``"player_1 (value) keeps"``."""
        return f"You {you}" if seat == self.viewer else f"{self.name(seat)} {other}"

    def _sees(self, seat: int) -> bool:
        """Whether the viewer sees what ``seat`` alone knows: it is that seat, or the whole table."""
        return self.viewer is None or seat == self.viewer

    def opening(self, state: State) -> list[Line]:
        """What is told before the first move: the first gift turn."""
        return self._turn(state)

    def tell(self, before: Before, state: State, action: int, forced: bool) -> list[Line]:
        """The lines telling ``action``, applied to the position ``before`` and leading to ``state``;
        ``forced`` when it was the only legal action."""
        seat, decision = before.seat, before.decision
        note = " (forced)" if forced and self._sees(seat) else ""
        lines: list[Line] = []
        if decision == Decision.PLACE:
            lines.append(self._place(seat, before.drawn_card, action, note))
        elif decision == Decision.TAKE:
            card = action - TAKE_BASE
            lines.append(Line((self.subject(seat, "take ", "takes "), CardPart(card), f" from the common area{note}")))
        elif decision == Decision.CHURCH:
            lines.append(self._church(seat, before.church_card, action, before.dice, state, note))
        elif decision == Decision.BID:
            words = ("pass", "passes") if action == PASS else (f"bid {action - BID_BASE}", f"bids {action - BID_BASE}")
            lines.append(Line((self.subject(seat, words[0], words[1]) + note,)))
        elif decision == Decision.PAY:
            lines += self._pay(before, state, action, note)
        if decision == Decision.BID and state.auction_card != before.auction_card:
            lines.append(Line(("Nobody bids: ", CardPart(before.auction_card), " is discarded."), style="dim"))
        lines += self._new_turn_or_auction(before, state)
        return lines

    def _new_turn_or_auction(self, before: Before, state: State) -> list[Line]:
        """The headings a move may lead to: the end of the gifts, the next gift turn, the next auction."""
        lines: list[Line] = []
        if before.phase == Phase.GIFT and state.phase != Phase.GIFT:
            self.auctions_total = self.auction_number + len(state.auction_pile) + (state.auction_card != NO_CARD)
            lines.append(
                Line((f"The draw pile is empty: {self.auctions_total} cards go to auction",), heading=AUCTIONS_HEADING)
            )
        next_turn = state.active_player != before.active_player
        if state.phase == Phase.GIFT and state.decision == Decision.PLACE and next_turn:
            lines += self._turn(state)
        if state.phase == Phase.AUCTION and state.auction_card not in (NO_CARD, before.auction_card):
            self.auction_number += 1
            reveals = self.subject(state.active_player, "reveal ", "reveals ")
            title = f"Auction {self.auction_number} of {self.auctions_total}: "
            lines.append(Line((title, reveals, CardPart(state.auction_card)), heading=AUCTION_HEADING))
        return lines

    def _turn(self, state: State) -> list[Line]:
        if state.phase != Phase.GIFT:
            return []
        self.gift_turn += 1
        draws = state.num_players + 1
        who = "your gift turn" if state.active_player == self.viewer else f"{self.name(state.active_player)} draws"
        pile = len(state.draw_pile) + 1  # the first card is drawn already
        return [
            Line((f"Gift turn {self.gift_turn}: {who} ({draws} cards; draw pile {pile})",), heading=GIFT_TURN_HEADING)
        ]

    def _place(self, seat: int, card: int, slot: int, note: str) -> Line:
        if seat == self.viewer:
            where = {KEEP: "keep ", AUCTION: "put on the auction pile: ", COMMON: "put in the common area: "}[slot]
            return Line(("You ", where, CardPart(card), note))
        if placement_face_up(slot, card) or self.viewer is None:  # the common area, a kept church card (RULES §7)
            where = {KEEP: "", AUCTION: " on the auction pile", COMMON: " in the common area"}[slot]
            return Line((self.name(seat), " keeps " if slot == KEEP else " puts ", CardPart(card), where + note))
        if slot == KEEP:
            return Line((f"{self.name(seat)} keeps a card face down",))
        return Line((f"{self.name(seat)} puts a card face down on the auction pile",))

    def _church(self, seat: int, card: int, action: int, dice: tuple[int, ...], state: State, note: str) -> Line:
        if action == CHURCH_DECLINE:
            return Line((self.subject(seat, "decline ", "declines "), CardPart(card), note))
        changes: list[Part] = []
        for category in range(NUM_CATEGORIES):
            if dice[category] != state.dice[category]:
                changes += [", "] if changes else []
                changes += [CategoryPart(category), f" {dice[category]} → {state.dice[category]}"]
        return Line((self.subject(seat, "resolve ", "resolves "), CardPart(card), ": ", *changes, note))

    def _pay(self, before: Before, state: State, action: int, note: str) -> list[Line]:
        seat, card, high_bid = before.seat, before.auction_card, before.high_bid
        if action == REFUSE:
            return self._penalty(before, state, note)
        payment = (*before.payment, action - PAY_BASE)
        if state.decision == Decision.PAY and state.current_player == seat:  # payment not complete yet
            if not self._sees(seat):
                return []
            picked = len(payment) if IS_GOLD[card] else sum(CARD_VALUE[c] for c in payment)
            pick = (self.subject(seat, "pick ", "picks "), CardPart(action - PAY_BASE))
            return [Line((*pick, f" ({picked} of {high_bid}){note}"))]
        paid: tuple[Part, ...]
        if not payment_face_up(card) and not self._sees(seat):
            paid = (f"{len(payment)} card(s) face down",)
        elif IS_GOLD[card]:
            paid = (CardsPart(payment),)
        else:
            paid = (CardsPart(payment), f" ({sum(CARD_VALUE[c] for c in payment)} gold)")
        takes = " and take " if seat == self.viewer else " and takes "
        return [Line((self.subject(seat, "pay ", "pays "), *paid, takes, CardPart(card), f" (bid {high_bid}){note}"))]

    def _penalty(self, before: Before, state: State, note: str) -> list[Line]:
        seat, card = before.seat, before.auction_card
        if note:
            lines = [Line((self.subject(seat, "cannot pay", "cannot pay") + ": penalty",), style="bold red")]
        else:
            lines = [Line((self.subject(seat, "refuse to pay", "refuses to pay") + ": penalty",), style="bold red")]
        if state.bluffs:
            lost = [cards for kind, cards in state.chance[before.chance_events :] if kind == CHANCE_PENALTY]
            if lost and lost[0]:
                lines.append(self._blind_discard(seat, lost[0][0]))
        for giver, receiver, moved in state.penalty_moves[before.penalty_moves :]:
            lines.append(self._penalty_move(seat, giver, receiver, moved))
        if state.auction_card == card:
            again = f" is auctioned again without {self.name(seat).split(' (')[0]}"
            lines.append(Line(("  ", CardPart(card), again)))
        else:
            lines.append(Line(("  Every bidder has defaulted: ", CardPart(card), " is discarded"), style="dim"))
        return lines

    def _blind_discard(self, seat: int, card: int) -> Line:
        """The "medieval bluffs" penalty: a random card of the defaulter, discarded face down."""
        if seat == self.viewer:
            return Line(("  Your ", CardPart(card), " is discarded face down"))
        if self.viewer is None:
            return Line((f"  A random card of {self.name(seat)} is discarded face down: ", CardPart(card)))
        return Line((f"  A random card of {self.name(seat)} is discarded face down",))

    def _penalty_move(self, seat: int, giver: int, receiver: int, card: int) -> Line:
        """A standard penalty's card moving from the defaulter to another seat."""
        if self.viewer is not None and not penalty_card_seen(self.viewer, giver, receiver):
            return Line((f"  {self.name(receiver)} takes a random card from {self.name(seat)}",))
        if receiver == self.viewer:
            return Line(("  You take ", CardPart(card), f" at random from {self.name(seat)}"))
        if giver == self.viewer:
            return Line((f"  {self.name(receiver)} takes your ", CardPart(card)))
        return Line((f"  {self.name(receiver)} takes ", CardPart(card), f" at random from {self.name(seat)}"))
