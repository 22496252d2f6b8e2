"""What the replay page draws at one step, for one perspective: a *scene*, a JSON-ready dict.

Two perspectives, one scene format, so the page draws them alike:

* :func:`table_scene`, the whole table, is built from the full :class:`State`: every hand, the
  card being placed, the kept card, the auction pile's cards, a payment in progress, every
  face-down discard (as :func:`biblios_env.text.full_table_text` shows a spectator). Only the
  draw pile's and the auction pile's order and the cards removed at setup stay out: nobody at
  the table sees those.
* :func:`seat_scene`, one seat's knowledge, is built from that seat's
  :class:`~biblios_env.engine.views.PlayerView` alone (RULES §7; the view asks
  :mod:`biblios_env.engine.visibility`), so it cannot show what the seat does not know: a card
  it does not know is only counted, and the page draws it face down.

Seats are absolute in both (a view's relative seats are turned back). Card lists are sorted by
card id, which orders them by category and letter, then gold by value, then church cards.
"""

from __future__ import annotations

from typing import Any, Final

from biblios_env.cards import CARD_VALUE, IS_GOLD
from biblios_env.engine.state import NO_CARD, NO_SEAT, Decision, Phase, State
from biblios_env.engine.views import PlayerView

Scene = dict[str, Any]
#: The fields of every scene, in the order the page's data packs them.
SCENE_FIELDS: Final = (
    "phase", "dice", "drawPile", "toAct", "hands", "common", "auctionPile", "gift", "auction", "church", "discard",
)  # fmt: skip
#: What the seat to act is doing, by decision: the page's "next" line.
DECISION_WORDS: Final = {
    Decision.PLACE: "places a drawn card",
    Decision.TAKE: "takes a card from the common area",
    Decision.CHURCH: "resolves a church card",
    Decision.BID: "bids or passes",
    Decision.PAY: "pays",
}


def _hand(
    cards: list[int], hidden: int = 0, maybe: list[int] | None = None, private: set[int] | None = None
) -> dict[str, Any]:
    """A hand as drawn: ``cards`` face up, ``hidden`` cards face down, the cards the viewer saw
    enter it that may have left it unseen since (``maybe``), and which of ``cards`` the other
    players do not know are there (``private``). Empty entries are left out (the page reads a
    missing ``hidden`` as 0 and a missing list as empty): they are most of a scene."""
    hand: dict[str, Any] = _pile(cards, hidden)
    if maybe:
        hand["maybe"] = sorted(maybe)
    if private:
        hand["private"] = sorted(private)
    return hand


def _pile(cards: list[int] | tuple[int, ...], hidden: int = 0) -> dict[str, Any]:
    """Cards face up and a number face down (left out when 0)."""
    pile: dict[str, Any] = {"cards": sorted(cards)}
    if hidden:
        pile["hidden"] = hidden
    return pile


def table_scene(state: State) -> Scene:
    """The whole table at this moment: everything but the piles' order and the removed cards."""
    gift = None
    if state.phase == Phase.GIFT:
        gift = {
            "active": state.active_player,
            "drawn": None if state.drawn_card == NO_CARD else state.drawn_card,
            "drawnHidden": False,
            "kept": None if state.kept_card == NO_CARD else state.kept_card,
            "keptHidden": False,
            "quota": state.quota[:],
        }
    return _scene(
        state.phase,
        state.decision,
        state.current_player,
        state.dice,
        len(state.draw_pile),
        [_hand(hand, private=set(hand) - set(public)) for hand, public in zip(state.hands, state.public_hands)],
        state.common_area,
        _pile(state.auction_pile),
        gift,
        _auction(state.auction_card, state.high_bid, state.high_bidder, state.passed, state.excluded, state.payment),
        _church(state.church_card, state.church_owner),
        {"faceUp": sorted(state.public_discard), "faceDown": [_pile(cards) for cards in state.private_discard]},
    )


def seat_scene(view: PlayerView) -> Scene:
    """What ``view.seat`` knows at this moment, from its view alone."""
    n, seat = view.num_players, view.seat

    def absolute(relative: int) -> int:
        return NO_SEAT if relative == NO_SEAT else (seat + relative) % n

    def by_seat(per_relative: list[Any]) -> list[Any]:
        """A per-relative-seat list reordered by absolute seat."""
        return [per_relative[(other - seat) % n] for other in range(n)]

    own = _hand(view.hand, private=set(view.hand) - set(view.own_public_cards))
    hands = [own] + [_opponent_hand(view, relative) for relative in range(1, n)]
    current = absolute(view.current_player)
    gift = None
    if view.phase == Phase.GIFT:
        placing = view.decision == Decision.PLACE
        gift = {
            "active": absolute(view.active_player),
            "drawn": None if view.drawn_card == NO_CARD else view.drawn_card,
            "drawnHidden": placing and view.drawn_card == NO_CARD,  # someone else places a card unseen
            "kept": None if view.kept_card == NO_CARD else view.kept_card,
            "keptHidden": view.hidden_kept,
            "quota": list(view.quota),
        }
    own_down = list(view.own_face_down_discard)
    face_down = [_pile(own_down)] + [_pile([], view.face_down_counts[r]) for r in range(1, n)]
    return _scene(
        view.phase,
        view.decision,
        current,
        list(view.dice),
        view.draw_pile_size,
        by_seat(hands),
        list(view.common_area),
        _pile(view.own_auction_cards, view.auction_pile_size - len(view.own_auction_cards)),
        gift,
        _auction(
            view.auction_card,
            view.high_bid,
            absolute(view.high_bidder),
            by_seat(list(view.passed)),
            by_seat(list(view.excluded)),
            view.payment_cards,
        ),
        _church(view.church_card, current),
        {"faceUp": sorted(view.public_discard), "faceDown": by_seat(face_down)},
    )


def _opponent_hand(view: PlayerView, relative: int) -> dict[str, Any]:
    """Another seat's hand as the viewer knows it: the cards it saw enter that hand (RULES §7),
    face up if they are certainly still there, listed apart if the seat has since lost cards
    unseen (a face-down payment or a penalty) and they may be gone; the rest face down."""
    seen = view.opponent_cards[relative - 1]
    may_be_gone = set(view.public_at_last_loss[relative]) if view.public_at_last_loss else set()
    certain = [card for card in seen if card not in may_be_gone]
    maybe = [card for card in seen if card in may_be_gone]
    return _hand(certain, view.hand_sizes[relative] - len(certain), maybe)


def _auction(
    card: int, high_bid: int, high_bidder: int, passed: list[bool], excluded: list[bool], payment: list[int]
) -> dict[str, Any] | None:
    """The card under auction: the high bid, who passed, who defaulted on it, the payment picked so
    far (as the viewer sees it: only the payer sees a payment in progress)."""
    if card == NO_CARD:
        return None
    picked = len(payment) if IS_GOLD[card] else sum(CARD_VALUE[paid] for paid in payment)
    return {
        "card": card,
        "unit": "cards" if IS_GOLD[card] else "gold",  # what a bid counts (RULES §5)
        "highBid": high_bid,
        "highBidder": high_bidder,
        "passed": [seat for seat, flag in enumerate(passed) if flag and not excluded[seat]],
        "excluded": [seat for seat, flag in enumerate(excluded) if flag],
        "payment": sorted(payment),
        "picked": picked,  # of the high bid, by the payment picked so far
    }


def _church(card: int, owner: int) -> dict[str, Any] | None:
    return None if card == NO_CARD else {"card": card, "owner": owner}


def _scene(
    phase: int,
    decision: int,
    current: int,
    dice: list[int],
    draw_pile: int,
    hands: list[dict[str, Any]],
    common: list[int],
    auction_pile: dict[str, Any],
    gift: dict[str, Any] | None,
    auction: dict[str, Any] | None,
    church: dict[str, Any] | None,
    discard: dict[str, Any],
) -> Scene:
    """One scene dict: the one list of its keys (:data:`SCENE_FIELDS`), for both perspectives."""
    to_act = None
    if current != NO_SEAT and phase != Phase.END:
        to_act = {
            "seat": current,
            "decision": Decision(decision).name.lower(),
            "doing": DECISION_WORDS[Decision(decision)],
        }
    return {
        "phase": phase,
        "dice": dice[:],
        "drawPile": draw_pile,
        "toAct": to_act,
        "hands": hands,
        "common": sorted(common),
        "auctionPile": auction_pile,
        "gift": gift,
        "auction": auction,
        "church": church,
        "discard": discard,
    }
