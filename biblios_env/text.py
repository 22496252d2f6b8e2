"""Readable text of a game: the table shown by ``render()`` and by the terminal tools.

Two views of the table, one render path (:func:`game_text`):

- a seat's view (:func:`table_text`), built from that seat's :class:`PlayerView`, so it
  never shows another player's hidden cards (RULES §7) — what a player may look at;
- the full table (:func:`full_table_text`, ``viewer="table"``), built from the whole state:
  every hand, the drawn and kept cards, a payment in progress — what a spectator watching
  bots wants, and never something to show a player.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final, Literal

from biblios_env.actions import describe
from biblios_env.cards import CATEGORY_NAMES, card_name, gold_value
from biblios_env.engine.game import Game
from biblios_env.engine.state import NO_CARD, NO_SEAT, Decision, Phase, State
from biblios_env.engine.views import PlayerView, player_view

_PHASE_TITLES = ("Gifts", "Auctions", "Game over")
#: The viewer of :func:`game_text` that sees everything (``render_view="table"``).
FULL_TABLE: Final = "table"
#: Whose table :func:`game_text` shows: a seat, or :data:`FULL_TABLE`.
Viewer = int | Literal["table"]
_LEGAL_SHOWN: Final = 12


def cards_text(cards: Sequence[int]) -> str:
    """``"Monks 2 (A) [#0], Gold 3 [#67]"``, or ``"-"`` for no cards."""
    return ", ".join(f"{card_name(card)} [#{card}]" for card in sorted(cards)) or "-"


def _dice_line(dice: Sequence[int]) -> str:
    return "Dice: " + "  ".join(f"{name} {die}" for name, die in zip(CATEGORY_NAMES, dice))


def _piles_line(draw_pile_size: int, auction_pile_size: int, hand_sizes: dict[int, int]) -> str:
    """The pile sizes and every hand's size, by absolute seat."""
    return f"Draw pile: {draw_pile_size}  Auction pile: {auction_pile_size}  " + "  ".join(
        f"player_{seat}: {size} cards" for seat, size in hand_sizes.items()
    )


def _quota_line(active_player: str, quota: Sequence[int]) -> str:
    return f"Active player: {active_player}; placements left keep/auction/common: {'/'.join(map(str, quota))}"


def _legal_line(legal_actions: list[int]) -> str:
    shown = ", ".join(f"{action}={describe(action)}" for action in legal_actions[:_LEGAL_SHOWN])
    more = f", ... ({len(legal_actions) - _LEGAL_SHOWN} more)" if len(legal_actions) > _LEGAL_SHOWN else ""
    return "Legal: " + shown + more


def table_text(view: PlayerView, legal_actions: list[int] | None = None) -> str:
    """The table as seen from ``view.seat``: dice, common area, auction, and the viewer's hand."""
    n, seat = view.num_players, view.seat

    def absolute(relative: int) -> str:
        return "-" if relative == NO_SEAT else f"player_{(seat + relative) % n}"

    lines = [f"== Biblios, {n} players — {_PHASE_TITLES[view.phase]} — viewed by player_{seat} =="]
    lines.append(_dice_line(view.dice))
    hand_sizes = {(seat + relative) % n: size for relative, size in enumerate(view.hand_sizes)}
    lines.append(_piles_line(view.draw_pile_size, view.auction_pile_size, hand_sizes))
    if view.phase == Phase.GIFT:
        lines.append(_quota_line(absolute(view.active_player), view.quota))
        if view.drawn_card != NO_CARD:
            lines.append(f"Drawn card: {cards_text([view.drawn_card])}")
        if view.kept_card != NO_CARD:
            lines.append(f"Kept this turn: {cards_text([view.kept_card])}")
    lines.append(f"Common area: {cards_text(view.common_area)}")
    if view.auction_card != NO_CARD:
        passed = [absolute(r) for r, flag in enumerate(view.passed) if flag]
        lines.append(
            f"Auction: {cards_text([view.auction_card])}, high bid {view.high_bid} by "
            f"{absolute(view.high_bidder)}; passed: {', '.join(passed) or '-'}"
        )
        if view.decision == Decision.PAY and view.high_bidder == 0:  # only the payer sees a payment in progress
            lines.append(f"Payment so far: {view.payment_count} card(s) {cards_text(view.payment_cards)}")
        elif view.decision == Decision.PAY:
            lines.append(f"{absolute(view.high_bidder)} is paying")
    if view.church_card != NO_CARD:
        lines.append(f"Church card to resolve: {cards_text([view.church_card])}")
    lines.append(f"Hand of player_{seat} ({gold_value(view.hand)} gold): {cards_text(view.hand)}")
    if view.current_player != NO_SEAT:
        lines.append(f"To act: {absolute(view.current_player)} ({Decision(view.decision).name})")
    if legal_actions is not None:
        lines.append(_legal_line(legal_actions))
    return "\n".join(lines)


def full_table_text(state: State, legal_actions: list[int] | None = None) -> str:
    """The whole table for a spectator: everything :func:`table_text` shows, plus every hand,
    the drawn and kept cards and a payment in progress, whoever they belong to.

    Omniscient on purpose (it reveals what RULES §7 hides from the players), so it is built
    from the state, not from a view. Only the order of the draw pile and of the auction pile,
    and the cards removed at setup, stay out: nobody at a real table sees those either.
    """
    n = state.num_players

    def seat_name(seat: int) -> str:
        return "-" if seat == NO_SEAT else f"player_{seat}"

    lines = [f"== Biblios, {n} players — {_PHASE_TITLES[state.phase]} — full table (every hand shown) =="]
    lines.append(_dice_line(state.dice))
    hand_sizes = {seat: len(hand) for seat, hand in enumerate(state.hands)}  # picked payment cards shown apart
    lines.append(_piles_line(len(state.draw_pile), len(state.auction_pile), hand_sizes))
    if state.phase == Phase.GIFT:
        lines.append(_quota_line(seat_name(state.active_player), state.quota))
        if state.drawn_card != NO_CARD:
            lines.append(f"Drawn card: {cards_text([state.drawn_card])}")
        if state.kept_card != NO_CARD:
            lines.append(f"Kept this turn by {seat_name(state.active_player)}: {cards_text([state.kept_card])}")
    lines.append(f"Common area: {cards_text(state.common_area)}")
    if state.auction_card != NO_CARD:
        passed = [seat_name(seat) for seat, flag in enumerate(state.passed) if flag]
        lines.append(
            f"Auction: {cards_text([state.auction_card])}, high bid {state.high_bid} by "
            f"{seat_name(state.high_bidder)}; passed: {', '.join(passed) or '-'}"
        )
        if state.decision == Decision.PAY:
            lines.append(
                f"{seat_name(state.high_bidder)} is paying; so far {len(state.payment)} card(s) "
                f"{cards_text(state.payment)}"
            )
    if state.church_card != NO_CARD:
        lines.append(f"Church card to resolve by {seat_name(state.church_owner)}: {cards_text([state.church_card])}")
    for seat, hand in enumerate(state.hands):
        lines.append(f"Hand of player_{seat} ({gold_value(hand)} gold): {cards_text(hand)}")
    if state.current_player != NO_SEAT:
        lines.append(f"To act: {seat_name(state.current_player)} ({Decision(state.decision).name})")
    if legal_actions is not None:
        lines.append(_legal_line(legal_actions))
    return "\n".join(lines)


def game_text(game: Game, viewer: Viewer) -> str:
    """The table seen by seat ``viewer`` (or the full table for ``viewer="table"``), with the
    legal actions while the game runs and the final VP and winners once it is over."""
    legal = None if game.is_over else game.legal_actions()
    if viewer == FULL_TABLE:
        text = full_table_text(game.state, legal)
    else:
        text = table_text(player_view(game.state, viewer), legal)
    if game.is_over:
        state = game.state
        text += f"\nFinal VP: {state.vp}; winners: {', '.join(f'player_{seat}' for seat in state.winners)}"
    return text
