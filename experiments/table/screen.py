"""What the player sees: the table drawn from their :class:`~biblios_env.engine.views.PlayerView`,
each question with its choices and prompt, and the final score table.

The table and the question fit an 80x24 terminal with 4 players, so what a question's title
already shows is not repeated, and cards are written as short as their row allows.
"""

from __future__ import annotations

from collections.abc import Sequence

from rich.columns import Columns
from rich.console import Group, RenderableType
from rich.panel import Panel
from rich.table import Table
from rich.text import Text

from biblios_env.actions import PAY_BASE, REFUSE
from biblios_env.cards import CARD_CATEGORY, CARD_LETTER, CARD_VALUE, IS_GOLD, LETTERS, NUM_CATEGORIES
from biblios_env.engine.scoring import category_totals
from biblios_env.engine.state import NO_CARD, NO_SEAT, Decision, Phase, State
from biblios_env.engine.views import PlayerView
from experiments.table.cards import (
    GOLD_STYLE,
    card_row_text,
    card_text,
    cards_text,
    category_text,
    grouped_cards_text,
    short_card_text,
)
from experiments.table.menus import Choice, bid_range, capacity, menu


def _total_text(cards: Sequence[int], category: int) -> str:
    """``"9 (C)"``: the category total and the best tie-break letter, or ``"-"``."""
    totals, letters = category_totals(list(cards))
    if not totals[category]:
        return "-"
    return f"{totals[category]} ({LETTERS[letters[category]]})"


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


class Screen:
    """The table and the questions as the human's seat sees them, and the score table at the end.
    The other seats are named by their agent labels."""

    def __init__(self, human: int, labels: Sequence[str]) -> None:
        self.human = human
        self.labels = list(labels)

    def name(self, seat: int) -> str:
        """``"You"`` or ``"player_1 (value)"``: how the table, the narration and the score name a seat."""
        return "You" if seat == self.human else f"player_{seat} ({self.labels[seat]})"

    # ------------------------------------------------------------------ a question
    def question(self, view: PlayerView, legal: list[int]) -> RenderableType:
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
    def score_table(self, state: State) -> RenderableType:
        """Hands revealed, category totals (the winner's in bold with a star), VP and gold."""
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
