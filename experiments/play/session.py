"""One game in the terminal (:class:`TerminalGame`): the loop that asks the human's seat and the
agents in turn, and tells every move as the human's seat could see it (RULES §7; the sentences
are :mod:`experiments.table.narration`'s).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from typing import Final

from rich.console import Console
from rich.text import Text

from biblios_env.actions import BID_BASE, PASS, PAY_BASE, describe, is_action_id
from biblios_env.agent_interface import Agent, AgentObservation
from biblios_env.cards import IS_GOLD
from biblios_env.engine.game import Game
from biblios_env.engine.state import Decision
from biblios_env.engine.views import PlayerView, player_view
from experiments.common.match import build_agent, parse_agent_spec, seat_observation, show_views
from experiments.table.menus import HELP, Choice, auto_payment, capacity, menu, parse_answer
from experiments.table.narration import Before, Narrator, print_lines
from experiments.table.screen import Screen

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
        self.narrator = Narrator(human_seat, self.screen.name)
        self._suggester: Agent | None = None

    def say(self, *parts: str | Text, style: str = "") -> None:
        self.console.print(Text.assemble(*parts, style=style), highlight=False)

    # ------------------------------------------------------------------ the loop
    def play(self) -> None:
        """Play to the end; raises :class:`LeaveGameError` when the player leaves."""
        game, state = self.game, self.state
        print_lines(self.console, self.narrator.opening(state))
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
        if not is_action_id(action) or int(action) not in legal:
            raise LeaveGameError(f"{self.screen.name(seat)} chose {action!r}, which is not a legal action")
        return int(action)

    def _apply(self, action: int, forced: bool) -> None:
        """Apply one action and tell the table what it could see of it."""
        before = Before.of(self.state)
        self.game.apply(action)
        show_views(self.game, self.agents, self._observer_fault)
        print_lines(self.console, self.narrator.tell(before, self.state, action, forced))

    def _observer_fault(self, seat: int, error: BaseException) -> Exception:
        return LeaveGameError(f"{self.screen.name(seat)} crashed observing the game: {type(error).__name__}: {error}")

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
