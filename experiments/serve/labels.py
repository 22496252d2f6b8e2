"""What the player's seat is asked, in words: each legal action's label and the question's line, in
the terminal game's words (its menus, :mod:`experiments.table.menus`, and its bid words), from the
seat's own view; a payment's question says what refusing costs (RULES §5, the game's penalty)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Final

from biblios_env.actions import BID_BASE, PASS
from biblios_env.cards import IS_GOLD
from biblios_env.engine.config import BLUFFS, STANDARD
from biblios_env.engine.state import Decision
from biblios_env.engine.views import PlayerView
from experiments.table.cards import card_text
from experiments.table.menus import capacity, menu


def legal_labels(view: PlayerView, legal: Sequence[int]) -> list[dict[str, Any]]:
    """``[{"action": id, "label": words}, ...]`` for the seat to act, in the order of ``legal``: a
    bid as ``bid N`` or ``pass``, every other action as its line of the terminal game's menu."""
    if view.decision == Decision.BID:
        return [{"action": action, "label": _bid_words(action)} for action in legal]
    meanings = {choice.action: choice.meaning.plain for choice in menu(view, legal)}
    return [{"action": action, "label": meanings[action]} for action in legal]


def _bid_words(action: int) -> str:
    return "pass" if action == PASS else f"bid {action - BID_BASE}"


#: What refusing to pay costs, by the game's penalty (RULES §5).
REFUSAL_COST: Final = {
    STANDARD: "each other player takes a random card from your hand, and you may not bid on this card again",
    BLUFFS: "you discard a random card from your hand, face down, and may not bid on this card again",
}


def question(view: PlayerView, penalty: str | None = STANDARD) -> str:
    """The decision in front of the seat in one line, naming the card it is about (as the terminal
    game's question titles do); a bid's and a payment's say what refusing to pay costs under the
    game's ``penalty`` (``None``: a game whose bids are all payable, where nobody refuses)."""
    decision = view.decision
    if decision == Decision.PLACE:
        return f"Where does {card_text(view.drawn_card).plain} go?"
    if decision == Decision.TAKE:
        return "Take one card from the common area."
    if decision == Decision.CHURCH:
        return f"Resolve {card_text(view.church_card).plain}: change dice, or decline."
    card = card_text(view.auction_card).plain
    unit = "cards from your hand" if IS_GOLD[view.auction_card] else "gold"
    refusal = "" if penalty is None else f" Refusing to pay costs a penalty: {REFUSAL_COST[penalty]}."
    if decision == Decision.BID:
        return f"Bid on {card}: a bid is paid in {unit}; you can pay {capacity(view)}.{refusal}"
    picked = view.payment_count if IS_GOLD[view.auction_card] else view.payment_value
    return f"Pay for {card}: your bid is {view.high_bid} ({unit}), {picked} picked so far; one card at a time.{refusal}"
