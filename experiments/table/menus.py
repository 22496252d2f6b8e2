"""The questions of the terminal game: the numbered choices of each decision (:func:`menu`) and
what a line of input means for it (:func:`parse_answer`), bids typed as amounts included.

Reading input never raises: bad input becomes an :class:`Answer` with a message, and the
question is asked again.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Final

from rich.text import Text

from biblios_env.actions import AUCTION, BID_BASE, COMMON, KEEP, PASS, PAY_BASE, REFUSE, TAKE_BASE, church_changes
from biblios_env.cards import CARD_VALUE, IS_GOLD, gold_value
from biblios_env.engine.auctions import bid_capacity, cheapest_cover
from biblios_env.engine.state import Decision
from biblios_env.engine.views import PlayerView
from experiments.table.cards import card_text, category_text

HELP: Final = """Commands at any question:
  a number   the numbered choice (in an auction: the amount you bid)
  p          pass (auction)          +   bid the minimum (auction)
  r          refuse to pay           a   pay automatically, fewest coins (paying gold for a card)
  s          suggest a move (the value heuristic)
  t          show the table again    h   this help       q   leave the game
When paying, several numbers at once pick several cards ("1 3")."""


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
