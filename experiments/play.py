"""Play Biblios in the terminal against any mix of agents: ``python -m experiments.play``.

    python -m experiments.play                                   # you against the value heuristic
    python -m experiments.play --opponents value hoarder         # 3 players
    python -m experiments.play --opponents random --players 4 --seat 2 --seed 7 --save-log game.json

You see exactly what your seat may see (RULES §7): the table is drawn from your
:class:`~biblios_env.engine.views.PlayerView`, and the other players' moves are told as the
table would see them (a card kept or put on the auction pile stays face down). The table and
the question fit an 80x24 terminal with 4 players (a card in its category's row is its value and
letter, ``3F``; in a payment, ``5:3F`` means type 5 to pay that card). Every
decision lists its choices, numbered, with their meaning; in an auction type the amount
you bid (``+`` bids the minimum, ``p`` passes). ``h`` shows the commands, ``s`` asks the
value heuristic for a suggestion, ``t`` shows the table again, ``q`` leaves the game. Bad
input gets a message and the question again; closing the input (Ctrl-D) leaves the game.
At the end the hands are revealed with the score table and its category winners, and the
game can be saved as a replayable log (:func:`biblios_env.engine.log.load_log`).

For tests and other front ends, :func:`main` and :class:`TerminalGame` take the input
function and the rich ``Console`` to use.
"""

from __future__ import annotations

import argparse
import itertools
import re
import secrets
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from rich.columns import Columns
from rich.console import Console, Group, RenderableType
from rich.panel import Panel
from rich.rule import Rule
from rich.table import Table
from rich.text import Text

from biblios_env.actions import (
    AUCTION,
    BID_BASE,
    CHURCH_DECLINE,
    COMMON,
    KEEP,
    PASS,
    PAY_BASE,
    REFUSE,
    TAKE_BASE,
    church_changes,
    describe,
)
from biblios_env.agent_interface import Agent, AgentObservation
from biblios_env.cards import (
    CARD_CATEGORY,
    CARD_LETTER,
    CARD_VALUE,
    CATEGORY_NAMES,
    IS_CHURCH,
    IS_GOLD,
    LETTERS,
    NUM_CATEGORIES,
    card_name,
    gold_value,
)
from biblios_env.engine.auctions import bid_capacity, cheapest_cover
from biblios_env.engine.game import PENALTIES, Game
from biblios_env.engine.log import save_log
from biblios_env.engine.scoring import category_totals
from biblios_env.engine.state import CHANCE_PENALTY, NO_CARD, NO_SEAT, Decision, Phase
from biblios_env.engine.views import PlayerView, player_view
from biblios_env.engine.visibility import payment_face_up, penalty_card_seen, placement_face_up
from experiments.cli import invocation_note, program_name, seed_value
from experiments.match import AgentSpecError, build_agent, parse_agent_spec, seat_observation
from experiments.tournament import AGENT, derive_seed

#: Colours of the categories (RULES §1: brown, blue, green, orange, red), gold and church cards.
CATEGORY_STYLES: Final = ("orange4", "dodger_blue1", "green3", "dark_orange", "red1")
GOLD_STYLE: Final = "bold gold1"
CHURCH_STYLE: Final = "magenta"
HUMAN: Final = "human"
SUGGESTER: Final = "value"  # the agent behind the "s" (suggest) command

InputFunction = Callable[[str], str]

HELP: Final = """Commands at any question:
  a number   the numbered choice (in an auction: the amount you bid)
  p          pass (auction)          +   bid the minimum (auction)
  r          refuse to pay           a   pay automatically, fewest coins (paying gold for a card)
  s          suggest a move (the value heuristic)
  t          show the table again    h   this help       q   leave the game
When paying, several numbers at once pick several cards ("1 3")."""


class LeaveGameError(Exception):
    """The player typed ``q`` or closed the input: the game is abandoned."""


# ----------------------------------------------------------------------------- card text
def card_text(card: int) -> Text:
    """A card's name in its colour: categories in their colours, gold yellow, church magenta."""
    if IS_GOLD[card]:
        style = GOLD_STYLE
    elif IS_CHURCH[card]:
        style = CHURCH_STYLE
    else:
        style = CATEGORY_STYLES[CARD_CATEGORY[card]]
    return Text(card_name(card), style=style)


def cards_text(cards: Sequence[int], empty: str = "-") -> Text:
    """Cards in id order (category, then gold, then church), comma-separated."""
    if not cards:
        return Text(empty, style="dim")
    return Text(", ").join(card_text(card) for card in sorted(cards))


def short_card_text(card: int) -> Text:
    """A card as short as its table row allows: ``3F`` (value and letter) under its category, ``2``
    under Gold, the full name for a church card."""
    if IS_GOLD[card]:
        return Text(str(CARD_VALUE[card]), style=GOLD_STYLE)
    if IS_CHURCH[card]:
        return card_text(card)
    return Text(f"{CARD_VALUE[card]}{LETTERS[CARD_LETTER[card]]}", style=CATEGORY_STYLES[CARD_CATEGORY[card]])


def grouped_cards_text(cards: Sequence[int], empty: str = "-") -> Text:
    """Cards grouped by their row, short: ``Pigments 2B 2D · Gold 1 3 · Church +1 to two dice``."""
    if not cards:
        return Text(empty, style="dim")
    groups: dict[str, tuple[Text | None, list[Text]]] = {}
    for card in sorted(cards):  # ids run category by category (letters in order), then gold, then church
        heading = None if IS_CHURCH[card] else card_row_text(card)  # a church card's name says it all
        key = "church" if heading is None else heading.plain
        groups.setdefault(key, (heading, []))[1].append(short_card_text(card))
    lines = [Text(" ").join([heading, *items] if heading else items) for heading, items in groups.values()]
    return Text(" · ").join(lines)


def card_row_text(card: int) -> Text:
    """The table row a card belongs to: its category, Gold or Church."""
    if IS_GOLD[card]:
        return Text("Gold", style=GOLD_STYLE)
    if IS_CHURCH[card]:
        return Text("Church", style=CHURCH_STYLE)
    return category_text(CARD_CATEGORY[card])


def category_text(category: int) -> Text:
    return Text(CATEGORY_NAMES[category], style=CATEGORY_STYLES[category])


def _total_text(cards: Sequence[int], category: int) -> str:
    """``"9 (C)"``: the category total and the best tie-break letter, or ``"-"``."""
    totals, letters = category_totals(list(cards))
    if not totals[category]:
        return "-"
    return f"{totals[category]} ({LETTERS[letters[category]]})"


# ----------------------------------------------------------------------------- choices
@dataclass(frozen=True, slots=True)
class Choice:
    """One line of the menu: what to type, the action it plays and what it means."""

    key: str
    action: int
    meaning: Text


def _die_change(dice: Sequence[int], category: int, delta: int) -> Text:
    text = category_text(category)
    text.append(f" {dice[category]} → {dice[category] + delta}")
    return text


def _numbered(actions: Sequence[int], meaning: Callable[[int], Text]) -> list[Choice]:
    """Choices ``1``, ``2``, ... in the order of ``actions``."""
    return [Choice(str(number), action, meaning(action)) for number, action in enumerate(actions, start=1)]


def _place_choices(view: PlayerView, legal: Sequence[int]) -> list[Choice]:
    """Where the drawn card may go (RULES §3): keep, auction pile or common area."""
    meanings = {
        KEEP: "keep it: it joins your hand at the end of your turn",
        AUCTION: "auction pile: face down, auctioned in phase 2",
        COMMON: f"common area: face up, the others take from it ({view.quota[COMMON]} left)",
    }
    return _numbered(legal, lambda action: Text(meanings[action]))


def _take_choices(view: PlayerView, legal: Sequence[int]) -> list[Choice]:
    """The common-area cards that may be taken."""
    return _numbered(legal, lambda action: card_text(action - TAKE_BASE))


def _church_choices(view: PlayerView, legal: Sequence[int]) -> list[Choice]:
    """The die changes a church card offers, or declining it."""

    def meaning(action: int) -> Text:
        changes = church_changes(action, view.church_card)
        if not changes:
            return Text("decline: discard it without effect")
        if len(changes) == 1:
            ((category, delta),) = changes
            return _die_change(view.dice, category, delta)
        # both dice move by the same step, named in the question's title: the pair is enough
        (first, _), (second, _) = changes
        return Text.assemble(category_text(first), " & ", category_text(second))

    return _numbered(legal, meaning)


def _pay_choices(view: PlayerView, legal: Sequence[int]) -> list[Choice]:
    """The cards that may be paid, numbered, then ``r`` to refuse when refusing is allowed."""
    choices = _numbered([action for action in legal if action != REFUSE], lambda action: card_text(action - PAY_BASE))
    if REFUSE in legal:
        choices.append(Choice("r", REFUSE, Text("refuse to pay: take the penalty", style="bold red")))
    return choices


_MENUS: Final[dict[int, Callable[[PlayerView, Sequence[int]], list[Choice]]]] = {
    Decision.PLACE: _place_choices,
    Decision.TAKE: _take_choices,
    Decision.CHURCH: _church_choices,
    Decision.PAY: _pay_choices,
}


def menu(view: PlayerView, legal: Sequence[int]) -> list[Choice]:
    """The numbered choices of a decision (bids are typed as amounts instead, see :func:`parse_answer`)."""
    choices = _MENUS.get(view.decision)
    return [] if choices is None else choices(view, legal)


@dataclass(frozen=True, slots=True)
class Answer:
    """What the player's input means: actions to play in order, a command, or an error message."""

    actions: tuple[int, ...] = ()
    command: str = ""  # "help", "table", "suggest", "quit", "auto"
    error: str = ""


_COMMANDS: Final = {"h": "help", "?": "help", "help": "help", "t": "table", "table": "table", "s": "suggest",
                    "suggest": "suggest", "hint": "suggest", "q": "quit", "quit": "quit", "exit": "quit"}  # fmt: skip


def parse_answer(text: str, view: PlayerView, legal: Sequence[int], choices: Sequence[Choice]) -> Answer:
    """Read one line of input for the current decision; never raises for bad input."""
    text = text.strip().lower()
    if not text:
        if view.decision == Decision.BID:
            return Answer(error="Please type a bid amount, + for the minimum, or p to pass (h for help).")
        return Answer(error="Please type one of the choices (h for help).")
    if text in _COMMANDS:
        return Answer(command=_COMMANDS[text])
    if view.decision == Decision.BID:
        return _parse_bid(text, view, legal)
    if view.decision == Decision.PAY and text in ("a", "auto"):
        return Answer(command="auto")
    by_key = {choice.key: choice.action for choice in choices}
    words = text.replace(",", " ").split()
    if len(words) > 1 and view.decision != Decision.PAY:
        return Answer(error=f"Please type one choice, not {len(words)}.")
    actions = []
    for word in words:
        if word in by_key:
            actions.append(by_key[word])
            continue
        numbered = [choice.key for choice in choices if choice.key.isdigit()]
        keys = {0: "", 1: "1", 2: "1 or 2"}.get(len(numbered), f"1 to {len(numbered)}")
        extra = " or r" if "r" in by_key else ""
        if word.lstrip("-").isdigit():
            return Answer(error=f"There is no choice {word}: type {keys}{extra} (h for help).")
        return Answer(error=f"{word!r} is not a choice: type {keys}{extra} (h for help).")
    if len(set(actions)) != len(actions):
        return Answer(error="Each card can be picked only once.")
    return Answer(actions=tuple(actions))


def bid_range(view: PlayerView, legal: Sequence[int]) -> tuple[int, int]:
    """The lowest and highest amount the viewer may bid now (the highest is below the lowest when
    no bid is left, e.g. under strict bids with too little gold)."""
    return view.high_bid + 1, max((action - BID_BASE for action in legal if action != PASS), default=0)


def _parse_bid(text: str, view: PlayerView, legal: Sequence[int]) -> Answer:
    low, high = bid_range(view, legal)
    if text in ("p", "pass", "0"):
        return Answer(actions=(PASS,))
    if text in ("+", "m", "min"):
        text = str(low)
    spelled = re.fullmatch(r"b(?:id)?\s*(\d*)", text)  # "bid 7", "b7"; "banana" is not a bid word
    if spelled:
        text = spelled.group(1)
        if not text:
            return Answer(error=f"bid needs an amount: bid N with N from {low} to {high} (+ for {low}, p to pass).")
    if not text.isdigit():
        return Answer(error=f"{text!r} is not a bid: type an amount from {low} to {high}, + for {low}, or p to pass.")
    amount = int(text)
    if amount < low:
        if view.high_bid:
            return Answer(error=f"The high bid is {view.high_bid}: bid at least {low}, or p to pass.")
        return Answer(error="Bids start at 1 (or p to pass).")
    if amount > high:
        if high < low:
            return Answer(error="You cannot bid any more on this card: p to pass.")
        reason = "what you can pay (strict bids)" if view.strict_bids else "all the gold in the game"
        return Answer(error=f"Bids go up to {high}, {reason}.")
    return Answer(actions=(BID_BASE + amount,))


def _cards_by_row(choices: Sequence[Choice]) -> Table:
    """Payment choices one row per category, then gold (``5: 2B``: type 5 to pay Pigments 2 (B)):
    a hand of any size takes at most six rows."""
    rows: dict[str, tuple[Text, list[Text]]] = {}
    for choice in choices:
        card = choice.action - PAY_BASE
        row = card_row_text(card)
        item = Text.assemble((f"{choice.key}:", "bold"), short_card_text(card))
        rows.setdefault(row.plain, (row, []))[1].append(item)
    grid = Table.grid(padding=(0, 2))
    grid.add_column(no_wrap=True)
    grid.add_column()
    for name, items in rows.values():
        grid.add_row(name, Text("  ").join(items))
    return grid


def _payment_text(view: PlayerView) -> Text:
    """``You bid 5 gold, picked 3: Gold 1, Gold 2. No change is given.`` (a gold card is paid in cards)."""
    if IS_GOLD[view.auction_card]:
        line = Text(f"You bid {view.high_bid} cards, picked {view.payment_count}")
    else:
        line = Text(f"You bid {view.high_bid} gold, picked {view.payment_value}")
    if view.payment_cards:
        line.append_text(Text.assemble(": ", grouped_cards_text(view.payment_cards)))
    line.append("." if IS_GOLD[view.auction_card] else ". No change is given.")
    return line


def capacity(view: PlayerView) -> int:
    """The most the viewer could pay for the card under auction: coins, or cards for a gold card."""
    return bid_capacity(view.hand, view.auction_card)


def auto_payment(view: PlayerView) -> list[int]:
    """Gold cards from hand covering what is left of the bid with the fewest coins, then the
    fewest cards, lowest values first (empty if the hand cannot cover it or the card under
    auction is gold)."""
    if IS_GOLD[view.auction_card]:
        return []
    owed = view.high_bid - view.payment_value
    golds = [card for card in view.hand if IS_GOLD[card]]
    if gold_value(golds) < owed:
        return []
    return sorted(cheapest_cover(golds, owed), key=CARD_VALUE.__getitem__)


# ----------------------------------------------------------------------------- the game
class TerminalGame:
    """One game in the terminal: the human's seat asks ``input_function``, the others their agents."""

    def __init__(
        self,
        game: Game,
        human_seat: int,
        agents: dict[int, Agent],
        labels: Sequence[str],
        *,
        console: Console,
        input_function: InputFunction,
        delay: float = 0.0,
    ) -> None:
        if game.auto_forced:
            raise ValueError("TerminalGame narrates forced moves itself: build the Game with auto_forced=False")
        self.game = game
        self.state = game.state
        self.human = human_seat
        self.agents = agents
        self.labels = list(labels)
        self.console = console
        self.input_function = input_function
        self.delay = delay
        self.gift_turn = 0
        self.auction_number = 0
        self.auctions_total = 0
        self._suggester: Agent | None = None

    # ------------------------------------------------------------------ names
    def name(self, seat: int) -> str:
        return "You" if seat == self.human else f"player_{seat} ({self.labels[seat]})"

    def subject(self, seat: int, you: str, other: str) -> str:
        """``"You keep"`` / ``"player_1 (value) keeps"``."""
        return f"You {you}" if seat == self.human else f"{self.name(seat)} {other}"

    def say(self, *parts: str | Text, style: str = "") -> None:
        self.console.print(Text.assemble(*parts, style=style), highlight=False)

    # ------------------------------------------------------------------ the loop
    def play(self) -> None:
        """Play to the end; raises :class:`LeaveGameError` when the player leaves."""
        game, state = self.game, self.state
        self._announce_turn()
        while not game.is_over:
            seat = state.current_player
            legal = game.legal_actions()
            if len(legal) == 1:
                actions = [legal[0]]
            elif seat == self.human:
                actions = self._ask(legal)
            else:
                actions = [self._agent_action(seat, legal)]
                if self.delay:
                    time.sleep(self.delay)
            for index, action in enumerate(actions):
                if index and (state.decision != Decision.PAY or state.current_player != seat):
                    break  # a multi-card payment completed early
                if action not in game.legal_actions():
                    break
                self._apply(action, forced=len(game.legal_actions()) == 1)

    def _agent_action(self, seat: int, legal: list[int]) -> int:
        """The agent's choice; an agent that crashes or plays illegally ends the game with a message."""
        try:
            action = self.agents[seat].act(seat_observation(self.game))
        except Exception as error:  # an agent bug must not lose the player's game without a word
            raise LeaveGameError(f"{self.name(seat)} crashed: {type(error).__name__}: {error}") from error
        if isinstance(action, bool) or not hasattr(action, "__index__") or int(action) not in legal:
            raise LeaveGameError(f"{self.name(seat)} chose {action!r}, which is not a legal action")
        return int(action)

    def _apply(self, action: int, forced: bool) -> None:
        """Apply one action and tell the table what it could see of it."""
        state = self.state
        seat, decision = state.current_player, state.decision
        before_card = {"drawn": state.drawn_card, "auction": state.auction_card, "church": state.church_card}
        before_phase, before_active = state.phase, state.active_player
        high_bid, payment = state.high_bid, state.payment[:]
        dice = state.dice[:]
        moves, events = len(state.penalty_moves), len(state.chance)
        self.game.apply(action)
        note = " (forced)" if forced and seat == self.human else ""
        if decision == Decision.PLACE:
            self._tell_place(seat, before_card["drawn"], action, note)
        elif decision == Decision.TAKE:
            card = action - TAKE_BASE
            self.say(self.subject(seat, "take ", "takes "), card_text(card), f" from the common area{note}")
        elif decision == Decision.CHURCH:
            self._tell_church(seat, before_card["church"], action, dice, note)
        elif decision == Decision.BID:
            words = ("pass", "passes") if action == PASS else (f"bid {action - BID_BASE}", f"bids {action - BID_BASE}")
            self.say(self.subject(seat, words[0], words[1]) + note)
        elif decision == Decision.PAY:
            self._tell_pay(seat, before_card["auction"], action, high_bid, payment, moves, events, note)
        if decision == Decision.BID and state.auction_card != before_card["auction"]:
            self.say("Nobody bids: ", card_text(before_card["auction"]), " is discarded.", style="dim")
        if before_phase == Phase.GIFT and state.phase != Phase.GIFT:
            self.auctions_total = self.auction_number + len(state.auction_pile) + (state.auction_card != NO_CARD)
            self.console.print(Rule(f"The draw pile is empty: {self.auctions_total} cards go to auction"))
        if state.phase == Phase.GIFT and state.decision == Decision.PLACE and state.active_player != before_active:
            self._announce_turn()
        if state.phase == Phase.AUCTION and state.auction_card not in (NO_CARD, before_card["auction"]):
            self.auction_number += 1
            self.console.print(
                Rule(
                    Text.assemble(
                        f"Auction {self.auction_number} of {self.auctions_total}: ",
                        self.subject(state.active_player, "reveal ", "reveals "),
                        card_text(state.auction_card),
                    )
                )
            )

    def _announce_turn(self) -> None:
        state = self.state
        if state.phase != Phase.GIFT:
            return
        self.gift_turn += 1
        draws = state.num_players + 1
        who = "your gift turn" if state.active_player == self.human else f"{self.name(state.active_player)} draws"
        pile = len(state.draw_pile) + 1  # the first card is drawn already
        self.console.print(Rule(f"Gift turn {self.gift_turn}: {who} ({draws} cards; draw pile {pile})"))

    def _tell_place(self, seat: int, card: int, slot: int, note: str) -> None:
        if seat == self.human:
            where = {KEEP: "keep ", AUCTION: "put on the auction pile: ", COMMON: "put in the common area: "}[slot]
            self.say("You ", where, card_text(card), note)
        elif placement_face_up(slot, card):  # the common area, or a kept church card (RULES §7)
            self.say(self.name(seat), " keeps " if slot == KEEP else " puts ", card_text(card),
                     "" if slot == KEEP else " in the common area")  # fmt: skip
        elif slot == KEEP:
            self.say(f"{self.name(seat)} keeps a card face down")
        else:
            self.say(f"{self.name(seat)} puts a card face down on the auction pile")

    def _tell_church(self, seat: int, card: int, action: int, dice: list[int], note: str) -> None:
        if action == CHURCH_DECLINE:
            self.say(self.subject(seat, "decline ", "declines "), card_text(card), note)
            return
        changed = [category for category in range(NUM_CATEGORIES) if dice[category] != self.state.dice[category]]
        changes = Text(", ").join(
            Text.assemble(category_text(c), f" {dice[c]} → {self.state.dice[c]}") for c in changed
        )
        self.say(self.subject(seat, "resolve ", "resolves "), card_text(card), ": ", changes, note)

    def _tell_pay(
        self, seat: int, card: int, action: int, high_bid: int, payment: list[int], moves: int, events: int, note: str
    ) -> None:
        state = self.state
        if action == REFUSE:
            self._tell_penalty(seat, card, moves, events, note)
            return
        payment = [*payment, action - PAY_BASE]
        if state.decision == Decision.PAY and state.current_player == seat:  # payment not complete yet
            if seat == self.human:
                picked = len(payment) if IS_GOLD[card] else sum(CARD_VALUE[c] for c in payment)
                self.say("You pick ", card_text(action - PAY_BASE), f" ({picked} of {high_bid}){note}")
            return
        if not payment_face_up(card) and seat != self.human:
            paid = Text(f"{len(payment)} card(s) face down")
        else:
            paid = cards_text(payment)
            if not IS_GOLD[card]:
                paid.append(f" ({sum(CARD_VALUE[c] for c in payment)} gold)")
        self.say(self.subject(seat, "pay ", "pays "), paid, " and take " if seat == self.human else " and takes ",
                 card_text(card), f" (bid {high_bid}){note}")  # fmt: skip

    def _tell_penalty(self, seat: int, card: int, moves: int, events: int, note: str) -> None:
        state = self.state
        if note and seat == self.human:
            self.say("You cannot pay: penalty", style="bold red")
        else:
            self.say(self.subject(seat, "refuse to pay", "refuses to pay") + ": penalty", style="bold red")
        if state.bluffs:
            lost = [cards for kind, cards in state.chance[events:] if kind == CHANCE_PENALTY]
            if lost and lost[0]:
                if seat == self.human:
                    self.say("  Your ", card_text(lost[0][0]), " is discarded face down")
                else:
                    self.say(f"  A random card of {self.name(seat)} is discarded face down")
        for giver, receiver, moved in state.penalty_moves[moves:]:
            if not penalty_card_seen(self.human, giver, receiver):
                self.say(f"  {self.name(receiver)} takes a random card from {self.name(seat)}")
            elif receiver == self.human:
                self.say("  You take ", card_text(moved), f" at random from {self.name(seat)}")
            else:
                self.say(f"  {self.name(receiver)} takes your ", card_text(moved))
        if state.auction_card == card:
            self.say("  ", card_text(card), f" is auctioned again without {self.name(seat).split(' (')[0]}")
        else:
            self.say("  Every bidder has defaulted: ", card_text(card), " is discarded", style="dim")

    # ------------------------------------------------------------------ asking
    def _ask(self, legal: list[int]) -> list[int]:
        """Show the table and the choices; read input until it names legal actions."""
        view = player_view(self.state, self.human)
        choices = menu(view, legal)
        self.console.print(self.screen(view, legal))
        prompt = self.prompt(view, legal)
        while True:
            answer = parse_answer(self._read(prompt), view, legal, choices)
            if answer.error:
                self.say(answer.error, style="yellow")
            elif answer.command:
                actions = self._command(answer.command, view, legal, choices)
                if actions:
                    return actions
            elif self._bid_confirmed(view, answer.actions):
                return list(answer.actions)

    def _command(self, command: str, view: PlayerView, legal: list[int], choices: Sequence[Choice]) -> list[int]:
        """Carry out a command typed at a question; the actions it answers with (only ``auto``
        answers: the cheapest payment), or none to ask again."""
        if command == "help":
            self.console.print(HELP, highlight=False, markup=False)
        elif command == "table":
            self.console.print(self.screen(view, legal))
        elif command == "suggest":
            action = self._suggest(view, legal)
            self.say("The value heuristic would play: ", self._action_text(action, choices), style="cyan")
        elif command == "quit":
            if self._confirm("Leave the game? [y/N] "):
                raise LeaveGameError("the player left")
        elif command == "auto":
            cards = auto_payment(view)
            if cards:
                return [PAY_BASE + card for card in cards]
            self.say("Cannot pay automatically here: pick the cards, or r to refuse.", style="yellow")
        return []

    def _bid_confirmed(self, view: PlayerView, actions: Sequence[int]) -> bool:
        """False when the player declines a bid above what they can pay (RULES §5: the winner who
        cannot pay takes the penalty); True for every other answer."""
        if view.decision != Decision.BID or actions[0] == PASS:
            return True
        amount = actions[0] - BID_BASE
        can_pay = capacity(view)
        unit = "card(s) in hand" if IS_GOLD[view.auction_card] else "gold"
        return amount <= can_pay or self._confirm(
            f"You have only {can_pay} {unit}: if you win you cannot pay and take the penalty. "
            f"Bid {amount} anyway? [y/N] "
        )

    def _read(self, prompt: str) -> str:
        """One line of input; closing the input leaves the game."""
        try:
            return self.input_function(prompt)
        except EOFError:
            raise LeaveGameError("input closed") from None

    def _confirm(self, prompt: str) -> bool:
        return self._read(prompt).strip().lower() in ("y", "yes")

    def _suggest(self, view: PlayerView, legal: list[int]) -> int:
        if self._suggester is None:
            self._suggester = build_agent(parse_agent_spec(SUGGESTER))
            self._suggester.start_game(self.human, self.state.num_players, seed=0)
        return int(self._suggester.act(AgentObservation(view, list(legal))))

    @staticmethod
    def _action_text(action: int, choices: Sequence[Choice]) -> Text:
        for choice in choices:
            if choice.action == action:
                return Text.assemble(f"{choice.key}: ", choice.meaning)
        if action == PASS:
            return Text("p (pass)")
        if BID_BASE < action < PAY_BASE:
            return Text(f"bid {action - BID_BASE}")
        return Text(describe(action))

    def screen(self, view: PlayerView, legal: list[int]) -> RenderableType:
        """What a question shows above its prompt: the table as the player sees it, then the choices."""
        return Group(self.table(view), self._choices_panel(view, legal, menu(view, legal)))

    def prompt(self, view: PlayerView, legal: list[int]) -> str:
        """The input prompt of a question: what to type."""
        choices = menu(view, legal)
        if view.decision == Decision.BID:
            low, high = bid_range(view, legal)
            return f"Your bid ({low}-{high}, + for {low}, p to pass): "
        numbers = [choice.key for choice in choices if choice.key.isdigit()]
        extra = ", r to refuse" if any(choice.key == "r" for choice in choices) else ""
        if view.decision == Decision.PAY:
            extra += "" if IS_GOLD[view.auction_card] else ", a to pay automatically"
        span = f"1-{numbers[-1]}" if len(numbers) > 1 else (numbers[0] if numbers else "")
        return f"Your choice ({span}{extra}): " if span else f"Your choice ({extra.lstrip(', ')}): "

    def _choices_panel(self, view: PlayerView, legal: list[int], choices: Sequence[Choice]) -> Panel:
        """The question: the title names the card, the choices are set in columns to keep it short."""
        decision = view.decision
        if decision == Decision.PLACE:
            title = Text.assemble("Where does ", card_text(view.drawn_card), " go?")
        elif decision == Decision.TAKE:
            title = Text("Take one card from the common area")
        elif decision == Decision.CHURCH:
            title = Text.assemble("Resolve ", card_text(view.church_card))
        else:
            title = Text.assemble("Bid on " if decision == Decision.BID else "Pay for ", card_text(view.auction_card))
        lines: list[RenderableType] = []
        if decision == Decision.BID:
            unit = "cards from your hand (any kind)" if IS_GOLD[view.auction_card] else "gold"
            low, high = bid_range(view, legal)
            lines.append(Text(f"A bid is paid in {unit}; you can pay {capacity(view)}."))
            lines.append(Text(f"p  pass (no more bids on this card) · +  bid {low} · N  bid N from {low} to {high}"))
        elif decision == Decision.PAY:
            cards = [choice for choice in choices if choice.action != REFUSE]
            lines += [_payment_text(view), _cards_by_row(cards)]
            lines += [Text.assemble(" r  ", choice.meaning) for choice in choices if choice.action == REFUSE]
        else:
            items = [Text.assemble(f"{choice.key:>2}  ", choice.meaning) for choice in choices]
            lines.append(Columns(items, padding=(0, 3), column_first=True))
        return Panel(Group(*lines), title=title, title_align="left")

    # ------------------------------------------------------------------ the table
    def table(self, view: PlayerView) -> RenderableType:
        """The table as the player sees it, short enough that a 4-player table and its question fit an
        80x24 terminal: a status line; per category its die, your cards, your total and the totals of
        the cards you saw each other player get (RULES §7); gold and hand sizes; then the common area,
        the gift turn or the auction. What the question's title already shows is not repeated."""
        asked = view.current_player == 0  # relative seat 0 is the viewer: the question is theirs
        parts: list[RenderableType] = [self._grid(view)]
        if view.phase == Phase.GIFT:
            parts.append(self._gift_text(view))
            if view.drawn_card != NO_CARD and not (asked and view.decision == Decision.PLACE):
                parts.append(Text.assemble(("You drew: ", "bold"), card_text(view.drawn_card)))
        if view.auction_card != NO_CARD and not (asked and view.decision == Decision.PAY):
            parts.append(self._auction_text(view))
        if view.own_auction_cards:
            parts.append(Text.assemble("Yours to auction: ", grouped_cards_text(view.own_auction_cards)))
        if view.church_card != NO_CARD and not (asked and view.decision == Decision.CHURCH):
            parts.append(Text.assemble(("Church card: ", "bold"), card_text(view.church_card)))
        return Panel(
            Group(*parts),
            title=self._status_text(view),
            title_align="left",
            subtitle="other players: totals of the cards you saw them get",
            border_style="blue",
        )

    def _seat(self, view: PlayerView, relative: int) -> int:
        return (view.seat + relative) % view.num_players

    def _short_name(self, seat: int) -> str:
        """``"You"`` or ``"player_1"``: the table's columns name the agents once, its lines need not."""
        return "You" if seat == self.human else f"player_{seat}"

    def _status_text(self, view: PlayerView) -> Text:
        phase = ("Gifts", "Auctions", "Game over")[view.phase]
        starter = self._seat(view, view.first_player)
        starts = "you start" if starter == self.human else f"player_{starter} starts"
        return Text.assemble(
            (f"{view.num_players} players · {phase}", "bold"),
            f" · {starts} · draw pile {view.draw_pile_size} · auction pile {view.auction_pile_size}",
        )

    def _grid(self, view: PlayerView) -> Table:
        """One row per category (die, your cards as value and letter, totals), then gold and hand sizes;
        one column per player, headed by name and agent, the player to act in bold."""
        n = view.num_players
        grid = Table(box=None, pad_edge=False, collapse_padding=True, show_edge=False, header_style="bold")
        grid.add_column("", no_wrap=True)
        grid.add_column("Die", justify="center", no_wrap=True)
        grid.add_column("Your cards")
        for relative in range(n):
            seat = self._seat(view, relative)
            header = Text(self._short_name(seat) + ("" if seat == self.human else f"\n{self.labels[seat]}"))
            header.stylize("bold" if relative == view.current_player else "not bold")
            grid.add_column(header, justify="right", no_wrap=True, max_width=12, overflow="ellipsis")
        seen = [view.hand, *view.opponent_cards]
        for category in range(NUM_CATEGORIES):
            own = sorted((card for card in view.hand if CARD_CATEGORY[card] == category), key=CARD_LETTER.__getitem__)
            cards = Text(" ").join(map(short_card_text, own))
            grid.add_row(
                category_text(category),
                Text(str(view.dice[category]), style="bold"),
                cards if own else Text("-", style="dim"),
                *(_total_text(cards_seen, category) for cards_seen in seen),
            )
        golds = sorted((card for card in view.hand if IS_GOLD[card]), key=CARD_VALUE.__getitem__)
        gold_cards = Text(" ").join(map(short_card_text, golds)) if golds else Text("-", style="dim")
        gold_totals = [str(sum(CARD_VALUE[card] for card in cards_seen if IS_GOLD[card])) for cards_seen in seen]
        grid.add_row(Text("Gold", style=GOLD_STYLE), "", gold_cards, *gold_totals)
        grid.add_row("Cards in hand", "", "", *map(str, view.hand_sizes))
        return grid

    def _gift_text(self, view: PlayerView) -> Text:
        """Whose gift turn, the card you kept this turn, the common area. The placements left are in
        the placing question's choices (keep and auction once each, the common area says how often)."""
        line = Text(f"Gift turn: {self._short_name(self._seat(view, view.active_player))}")
        if view.kept_card != NO_CARD:
            line.append_text(Text.assemble(" · you kept ", card_text(view.kept_card)))
        line.append_text(Text.assemble(" · common area: ", cards_text(view.common_area, "empty")))
        return line

    def _auction_text(self, view: PlayerView) -> Text:
        bidder = "no bid yet"
        if view.high_bidder != NO_SEAT:
            bidder = f"high bid {view.high_bid} by {self._short_name(self._seat(view, view.high_bidder))}"
        line = Text.assemble(("Auction: ", "bold"), card_text(view.auction_card), f" · {bidder}")
        passed = [r for r, flag in enumerate(view.passed) if flag and not view.excluded[r]]
        excluded = [r for r, flag in enumerate(view.excluded) if flag]
        for heading, seats in (("passed", passed), ("defaulted", excluded)):
            if seats:
                line.append(f" · {heading}: " + ", ".join(self._short_name(self._seat(view, r)) for r in seats))
        return line

    # ------------------------------------------------------------------ the end
    def score_table(self) -> RenderableType:
        """Hands revealed, category totals (the winner's in bold with a star), VP and gold."""
        state = self.state
        n = state.num_players
        table = Table(title="Final score", header_style="bold")
        table.add_column("Player")
        for category in range(NUM_CATEGORIES):
            table.add_column(Text.assemble(category_text(category), f"\ndie {state.dice[category]}"), justify="right")
        table.add_column("VP", justify="right")
        table.add_column("Gold", justify="right")
        table.add_column("")
        for seat in range(n):
            totals, letters = category_totals(state.hands[seat])
            row: list[RenderableType] = [self.name(seat)]
            for category in range(NUM_CATEGORIES):
                if not totals[category]:
                    row.append(Text("-", style="dim"))
                    continue
                cell = f"{totals[category]} ({LETTERS[letters[category]]})"
                won = state.category_winners[category] == seat
                row.append(Text(f"★ {cell}" if won else cell, style="bold" if won else ""))
            gold = sum(CARD_VALUE[card] for card in state.hands[seat] if IS_GOLD[card])
            row += [Text(str(state.vp[seat]), style="bold"), str(gold)]
            row.append(Text("winner", style="bold green") if seat in state.winners else "")
            table.add_row(*row)
        lines: list[RenderableType] = [table, Text("★ won the category: its die in VP (RULES §6)", style="dim")]
        for category in range(NUM_CATEGORIES):
            winner = state.category_winners[category]
            who = "nobody" if winner == NO_SEAT else self.name(winner)
            lines.append(Text.assemble(category_text(category), f" (die {state.dice[category]}): {who}"))
        lines.append(Text("Hands:", style="bold"))
        for seat in range(n):
            cards = sorted(state.hands[seat], key=lambda c: (CARD_CATEGORY[c] < 0, CARD_CATEGORY[c], CARD_LETTER[c], c))
            lines.append(Text.assemble(f"  {self.name(seat)}: ", cards_text(cards, "no cards")))
        winners = state.winners
        if len(winners) == 1:
            verdict = "You win!" if winners[0] == self.human else f"{self.name(winners[0])} wins."
        else:
            verdict = "Shared win: " + ", ".join(self.name(seat) for seat in winners) + "."
        lines.append(Text(verdict, style="bold green" if self.human in winners else "bold"))
        return Group(*lines)


# ----------------------------------------------------------------------------- command line


def _delay(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        value = -1.0
    if not 0 <= value <= 60:
        raise argparse.ArgumentTypeError(f"expected seconds from 0 to 60, got {text!r}")
    return value


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog=program_name("experiments.play"),
        description="Play Biblios in the terminal against agents.",
        epilog="Agent specs as in the tournament: NAME or NAME:key=value,... (e.g. hoarder:aggression=1.2). "
        + invocation_note("experiments.play"),
    )
    parser.add_argument("--opponents", nargs="+", metavar="SPEC", default=["value"],
                        help="the other players' agents, filling the other seats in order (default value)")  # fmt: skip
    parser.add_argument("--players", type=int, choices=(2, 3, 4),
                        help="players (default: you + the opponents; opponents repeat to fill the seats)")  # fmt: skip
    parser.add_argument("--seat", type=int, default=0, help="your seat, 0 starts (default 0)")
    parser.add_argument("--seed", type=seed_value, help="the deal's seed (default: random, shown at the start)")
    parser.add_argument("--penalty", choices=PENALTIES, default="standard", help="penalty rule (RULES §5)")
    parser.add_argument("--strict-bids", action="store_true", help="only allow bids you can pay")
    parser.add_argument("--save-log", type=Path, metavar="PATH", help="save the game as a replayable log")
    parser.add_argument("--delay", type=_delay, default=0.0, help="seconds to pause after each opponent move")
    parser.add_argument("--no-color", action="store_true", help="plain text without colours")
    return parser


def _default_input(console: Console) -> InputFunction:
    return lambda prompt: console.input(Text(prompt, style="bold cyan"))


def _save(game: Game, path: Path, console: Console, metadata: dict) -> bool:
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        save_log(game, path, **metadata)
    except OSError as error:
        console.print(Text(f"Could not save the game log to {path}: {error}", style="red"))
        return False
    console.print(Text(f"Game log saved to {path} (replay: biblios_env.engine.log.load_log)."))
    return True


def _player_count(parser: argparse.ArgumentParser, args: argparse.Namespace) -> int:
    """The table's size: ``--players``, or you and the opponents; a parser error when they do not fit."""
    opponents = len(args.opponents)
    players: int = args.players or opponents + 1
    if players not in (2, 3, 4):
        parser.error(f"a game has 2 to 4 players: {opponents} opponents and you make {players}")
    if opponents > players - 1:
        parser.error(f"{opponents} opponents do not fit a {players}-player game")
    if not 0 <= args.seat < players:
        parser.error(f"--seat must be a seat of the {players}-player game: 0..{players - 1}, got {args.seat}")
    return players


@dataclass(frozen=True, slots=True)
class Seating:
    """Who sits where: the agents of the other seats, every seat's label and agent seed."""

    agents: dict[int, Agent]
    labels: list[str]
    agent_seeds: list[int | None]


def _seat_opponents(parser: argparse.ArgumentParser, args: argparse.Namespace, players: int, seed: int) -> Seating:
    """Build the opponents in the other seats, in order, repeating ``--opponents`` to fill them;
    a parser error names a bad spec."""
    agents: dict[int, Agent] = {}
    labels = [HUMAN] * players
    agent_seeds: list[int | None] = [None] * players
    opponent_seats = [seat for seat in range(players) if seat != args.seat]
    try:
        for seat, text in zip(opponent_seats, itertools.cycle(args.opponents)):
            spec = parse_agent_spec(text)
            agents[seat] = build_agent(spec)
            labels[seat] = spec.label
            agent_seeds[seat] = derive_seed(seed, AGENT, seat)
    except AgentSpecError as error:
        parser.error(str(error))
    return Seating(agents, labels, agent_seeds)


def _welcome(session: TerminalGame, game: Game, seed: int) -> Panel:
    players, human = game.state.num_players, session.human
    opponents = ", ".join(session.name(seat) for seat in range(players) if seat != human)
    return Panel(
        Text(
            f"Biblios, {players} players. You are player_{human}"
            + (" and start." if human == game.config["first_player"] else ".")
            + f" Opponents: {opponents}.\n"
            f"Seed {seed} (replay this deal with --seed {seed}). Type h at any question for help."
        ),
        title="Welcome",
    )


def _offer_save(game: Game, read: InputFunction, console: Console, metadata: dict) -> None:
    """Ask for a file name until the log is saved or the player skips (Enter, Ctrl-D)."""
    while True:
        try:
            answer = read("Save the game log? Type a file name, or press Enter to skip: ").strip()
        except (EOFError, KeyboardInterrupt):
            return
        if not answer or _save(game, Path(answer).expanduser(), console, metadata):
            return


def main(
    argv: Sequence[str] | None = None,
    *,
    input_function: InputFunction | None = None,
    console: Console | None = None,
) -> int:
    """Run the terminal game; returns 0 after a finished game, 1 when the player left, 2 for bad arguments."""
    parser = build_parser()
    args = parser.parse_args(argv)
    if console is None:
        console = Console(no_color=args.no_color, highlight=False)
    read = input_function or _default_input(console)
    players = _player_count(parser, args)
    seed = args.seed if args.seed is not None else secrets.randbits(32)
    seating = _seat_opponents(parser, args, players, seed)
    game = Game(players, seed=seed, penalty=args.penalty, strict_bids=args.strict_bids, auto_forced=False)
    for seat, agent in seating.agents.items():
        agent.start_game(seat, players, seed=seating.agent_seeds[seat])
    session = TerminalGame(
        game, args.seat, seating.agents, seating.labels, console=console, input_function=read, delay=args.delay
    )
    console.print(_welcome(session, game, seed))
    metadata = {
        "agents": seating.labels,
        "agent_seeds": seating.agent_seeds,
        "human_seat": args.seat,
        "program": "experiments.play",
    }
    try:
        session.play()
    except (LeaveGameError, KeyboardInterrupt) as reason:
        console.print(Text(f"\nGame abandoned ({reason or 'interrupted'}).", style="bold"))
        if args.save_log:
            _save(game, args.save_log, console, metadata)
        return 1
    console.print(session.score_table())
    if args.save_log:
        _save(game, args.save_log, console, metadata)
    else:
        _offer_save(game, read, console, metadata)
    return 0


if __name__ == "__main__":
    sys.exit(main())
