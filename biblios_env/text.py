"""Readable text of a game: the table shown by ``render()`` and by the terminal tools.

Built from one seat's :class:`PlayerView`, so a rendered table never shows another
player's hidden cards.
"""

from __future__ import annotations

from collections.abc import Callable

import gymnasium

from biblios_env.actions import describe
from biblios_env.cards import CATEGORY_NAMES, card_name, gold_value
from biblios_env.engine.game import Game
from biblios_env.engine.state import NO_CARD, NO_SEAT, Decision, Phase
from biblios_env.engine.views import PlayerView, player_view

_PHASE_TITLES = ("Gifts", "Auctions", "Game over")


def cards_text(cards: list[int]) -> str:
    """``"Monks 2 (A) [#0], Gold 3 [#67]"``, or ``"-"`` for no cards."""
    return ", ".join(f"{card_name(card)} [#{card}]" for card in sorted(cards)) or "-"


def table_text(view: PlayerView, legal_actions: list[int] | None = None) -> str:
    """The table as seen from ``view.seat``: dice, common area, auction, and the viewer's hand."""
    n, seat = view.num_players, view.seat

    def absolute(relative: int) -> str:
        return "-" if relative == NO_SEAT else f"player_{(seat + relative) % n}"

    lines = [f"== Biblios, {n} players — {_PHASE_TITLES[view.phase]} — viewed by player_{seat} =="]
    lines.append("Dice: " + "  ".join(f"{name} {die}" for name, die in zip(CATEGORY_NAMES, view.dice)))
    lines.append(
        f"Draw pile: {view.draw_pile_size}  Auction pile: {view.auction_pile_size}  "
        + "  ".join(f"player_{(seat + r) % n}: {size} cards" for r, size in enumerate(view.hand_sizes))
    )
    if view.phase == Phase.GIFT:
        lines.append(f"Active player: {absolute(view.active_player)}; placements left keep/auction/common: "
                     f"{'/'.join(map(str, view.quota))}")
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
        lines.append("Legal: " + ", ".join(f"{a}={describe(a)}" for a in legal_actions[:12])
                     + (f", ... ({len(legal_actions) - 12} more)" if len(legal_actions) > 12 else ""))
    return "\n".join(lines)


def game_text(game: Game, viewer: int) -> str:
    """The table seen by seat ``viewer``, with the legal actions while the game runs and the
    final VP and winners once it is over."""
    text = table_text(player_view(game.state, viewer), None if game.is_over else game.legal_actions())
    if game.is_over:
        state = game.state
        text += f"\nFinal VP: {state.vp}; winners: {', '.join(f'player_{seat}' for seat in state.winners)}"
    return text


def render(text_of: Callable[[], str], render_mode: str | None) -> str | None:
    """The environments' ``render()``: ``"ansi"`` returns the text, ``"human"`` prints it, and
    without a render mode Gymnasium's warning is logged (the text is not even built)."""
    if render_mode is None:
        gymnasium.logger.warn("render() called without a render_mode; pass render_mode='ansi' or 'human'.")
        return None
    text = text_of()
    if render_mode == "human":
        print(text)
        return None
    return text
