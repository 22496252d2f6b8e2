"""One game in the terminal (:class:`TerminalGame`): the loop that asks the human's seat and the
agents in turn, and the narration of every move as the human's seat could see it (RULES §7).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from typing import Final

from rich.console import Console
from rich.rule import Rule
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
    describe,
)
from biblios_env.agent_interface import Agent, AgentObservation
from biblios_env.cards import CARD_VALUE, IS_GOLD, NUM_CATEGORIES
from biblios_env.engine.game import Game
from biblios_env.engine.state import CHANCE_PENALTY, NO_CARD, Decision, Phase
from biblios_env.engine.views import PlayerView, player_view
from biblios_env.engine.visibility import payment_face_up, penalty_card_seen, placement_face_up
from experiments.match import build_agent, parse_agent_spec, seat_observation
from experiments.play.cards import card_text, cards_text, category_text
from experiments.play.menus import HELP, Choice, auto_payment, capacity, menu, parse_answer
from experiments.play.screen import Screen

SUGGESTER: Final = "value"  # the agent behind the "s" (suggest) command

InputFunction = Callable[[str], str]


class LeaveGameError(Exception):
    """The player typed ``q`` or closed the input: the game is abandoned."""


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
        self.screen = Screen(human_seat, labels)
        self.console = console
        self.input_function = input_function
        self.delay = delay
        self.gift_turn = 0
        self.auction_number = 0
        self.auctions_total = 0
        self._suggester: Agent | None = None

    # ------------------------------------------------------------------ names
    def subject(self, seat: int, you: str, other: str) -> str:
        """``"You keep"`` / ``"player_1 (value) keeps"``."""
        return f"You {you}" if seat == self.human else f"{self.screen.name(seat)} {other}"

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
            raise LeaveGameError(f"{self.screen.name(seat)} crashed: {type(error).__name__}: {error}") from error
        if isinstance(action, bool) or not hasattr(action, "__index__") or int(action) not in legal:
            raise LeaveGameError(f"{self.screen.name(seat)} chose {action!r}, which is not a legal action")
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
        who = (
            "your gift turn" if state.active_player == self.human else f"{self.screen.name(state.active_player)} draws"
        )
        pile = len(state.draw_pile) + 1  # the first card is drawn already
        self.console.print(Rule(f"Gift turn {self.gift_turn}: {who} ({draws} cards; draw pile {pile})"))

    def _tell_place(self, seat: int, card: int, slot: int, note: str) -> None:
        if seat == self.human:
            where = {KEEP: "keep ", AUCTION: "put on the auction pile: ", COMMON: "put in the common area: "}[slot]
            self.say("You ", where, card_text(card), note)
        elif placement_face_up(slot, card):  # the common area, or a kept church card (RULES §7)
            self.say(self.screen.name(seat), " keeps " if slot == KEEP else " puts ", card_text(card),
                     "" if slot == KEEP else " in the common area")  # fmt: skip
        elif slot == KEEP:
            self.say(f"{self.screen.name(seat)} keeps a card face down")
        else:
            self.say(f"{self.screen.name(seat)} puts a card face down on the auction pile")

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
                    self.say(f"  A random card of {self.screen.name(seat)} is discarded face down")
        for giver, receiver, moved in state.penalty_moves[moves:]:
            if not penalty_card_seen(self.human, giver, receiver):
                self.say(f"  {self.screen.name(receiver)} takes a random card from {self.screen.name(seat)}")
            elif receiver == self.human:
                self.say("  You take ", card_text(moved), f" at random from {self.screen.name(seat)}")
            else:
                self.say(f"  {self.screen.name(receiver)} takes your ", card_text(moved))
        if state.auction_card == card:
            self.say("  ", card_text(card), f" is auctioned again without {self.screen.name(seat).split(' (')[0]}")
        else:
            self.say("  Every bidder has defaulted: ", card_text(card), " is discarded", style="dim")

    # ------------------------------------------------------------------ asking
    def _ask(self, legal: list[int]) -> list[int]:
        """Show the table and the choices; read input until it names legal actions."""
        view = player_view(self.state, self.human)
        choices = menu(view, legal)
        self.console.print(self.screen.question(view, legal))
        prompt = self.screen.prompt(view, legal)
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
            self.console.print(self.screen.question(view, legal))
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
