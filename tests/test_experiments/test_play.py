"""The terminal game (experiments.play), driven by scripted input: complete games against agents,
bad input answered with messages (never a crash), EOF and quitting, the saved log, and the
parsing of answers."""

from __future__ import annotations

import io
import itertools
import re
import textwrap
from collections.abc import Callable
from pathlib import Path

import pytest
from rich.console import Console
from scenarios import FORBIDDEN_TOMES, auction_game, card, gold

from agents import make_agent
from agents.random_agent import RandomAgent
from biblios_env import actions as act
from biblios_env.agent_interface import AgentObservation
from biblios_env.cards import CARD_VALUE, CATEGORY_NAMES
from biblios_env.engine import Game
from biblios_env.engine.log import load_log
from biblios_env.engine.state import Decision
from biblios_env.engine.views import PlayerView, player_view
from experiments.common.match import build_agent, parse_agent_spec
from experiments.play import TerminalGame, auto_payment, build_parser, main, menu, parse_answer

BAD_INPUTS = ["", "   ", "banana", "99", "-3", "1.5", "0 0", "h", "t", "s", "q", "n"]  # "q" then "n": stay


class Script:
    """A scripted player: the first option at every question, with bad input sprinkled in.

    Auction answers alternate between passing and bidding the minimum; over-bids are confirmed
    every other time, so both the penalty and a refused confirmation happen.
    """

    def __init__(self, bad_every: int = 7, limit: int = 5000, save_as: str = "") -> None:
        self.prompts: list[str] = []
        self.bad = itertools.cycle(BAD_INPUTS)
        self.bad_every = bad_every
        self.limit = limit
        self.save_as = save_as
        self.confirmations = 0

    def __call__(self, prompt: str) -> str:
        self.prompts.append(prompt)
        count = len(self.prompts)
        if count > self.limit:
            raise AssertionError(f"the game asked more than {self.limit} questions: stuck on {prompt!r}")
        if prompt.startswith("Save the game log"):
            return self.save_as
        if "anyway?" in prompt or prompt.startswith("Leave the game"):
            self.confirmations += 1
            return "y" if "anyway?" in prompt and self.confirmations % 2 else "n"
        if count % self.bad_every == 0:
            return next(self.bad)
        if prompt.startswith("Your bid"):
            return "+" if count % 3 else "p"
        if prompt.startswith("Your choice") and ", a to pay" in prompt and count % 2:
            return "a"
        return "1"


def run(argv: list[str], script: Callable[[str], str]) -> tuple[int, str]:
    buffer = io.StringIO()
    console = Console(file=buffer, width=120, color_system=None)
    code = main(argv, input_function=script, console=console)
    return code, buffer.getvalue()


@pytest.mark.parametrize(
    ("argv", "seat"),
    [
        (["--opponents", "value", "random", "--seed", "3"], 0),
        (["--opponents", "hoarder", "--seed", "4", "--seat", "1", "--penalty", "bluffs"], 1),
        (["--opponents", "random", "--players", "4", "--seed", "5", "--seat", "2", "--strict-bids"], 2),
    ],
)
def test_a_complete_game_with_scripted_input(argv: list[str], seat: int, tmp_path: Path) -> None:
    script = Script()
    log_path = tmp_path / "game.json"
    code, output = run([*argv, "--save-log", str(log_path)], script)
    assert code == 0, output[-2000:]
    assert "Final score" in output and re.search(r"(You win!|wins\.|Shared win)", output)
    for category in ("Monks", "Pigments", "Holy Books", "Manuscripts", "Forbidden Tomes"):
        assert re.search(rf"^{category} \(die \d\): (You|player_\d \(\w+\)|nobody)$", output, re.M)
    game = load_log(log_path)  # the saved log replays to the same finished game
    assert game.is_over
    assert "Traceback" not in output
    assert any(prompt.startswith("Your bid") for prompt in script.prompts)


def test_bad_input_gets_a_helpful_message_and_the_question_again() -> None:
    script = Script(bad_every=2)
    code, output = run(["--opponents", "value", "--seed", "8"], script)
    assert code == 0
    assert "Please type one of the choices (h for help)." in output
    assert "'banana' is not a choice: type 1" in output
    assert re.search(r"There is no choice (99|-3): type 1", output)
    assert "Please type one choice, not 2." in output
    assert "Commands at any question:" in output  # h
    assert "The value heuristic would play:" in output  # s
    assert re.search(r"Please type a bid amount|is not a bid: type an amount from \d+ to 66", output)


def test_the_opponents_moves_are_told_without_their_hidden_cards() -> None:
    code, output = run(["--opponents", "value", "hoarder", "--seed", "9"], Script())
    assert code == 0
    told = [line for line in output.splitlines() if line.startswith("player_")]
    assert any("keeps a card face down" in line for line in told)
    assert any("puts a card face down on the auction pile" in line for line in told)
    for line in told:
        if " keeps " in line:
            assert "face down" in line or "Church" in line, line  # only a church card kept is public
        assert "on the auction pile:" not in line, line


def test_input_closed_leaves_the_game_gracefully(tmp_path: Path) -> None:
    def closed(prompt: str) -> str:
        raise EOFError

    log_path = tmp_path / "partial.json"
    code, output = run(["--seed", "1", "--save-log", str(log_path)], closed)
    assert code == 1 and "Game abandoned (input closed)." in output
    assert not load_log(log_path).is_over  # the partial game is saved and replays


def test_quitting_asks_for_confirmation() -> None:
    answers = iter(["q", "n", "q", "yes"])
    code, output = run(["--seed", "2"], lambda prompt: next(answers))
    assert code == 1 and "Game abandoned (the player left)." in output


def test_the_log_can_be_saved_at_the_end(tmp_path: Path) -> None:
    script = Script(save_as=str(tmp_path / "folder" / "end.json"))
    code, output = run(["--opponents", "random", "--seed", "6"], script)
    assert code == 0 and "Game log saved to" in output
    assert load_log(tmp_path / "folder" / "end.json").is_over


def test_bad_arguments_are_reported_by_argparse(capsys: pytest.CaptureFixture[str]) -> None:
    for argv, message in [
        (["--opponents", "nope"], "unknown agent 'nope'"),
        (["--seat", "3"], "--seat must be a seat"),
        (["--opponents", "value", "value", "value", "value"], "2 to 4 players"),
        (["--opponents", "value", "value", "--players", "2"], "do not fit"),
    ]:
        with pytest.raises(SystemExit) as exit_info:
            run(argv, lambda prompt: "1")
        assert exit_info.value.code == 2
        assert message in capsys.readouterr().err


# ----------------------------------------------------------------------------- answers
def _auction_view(bid: int = 0):
    tomes_2 = card(FORBIDDEN_TOMES, "H")
    game = auction_game(3, [[], [gold(2), gold(3), gold(1)]], [tomes_2], first_player=0)
    if bid:
        game.apply(act.bid(bid))
    return game


def test_bids_are_typed_as_amounts_with_shortcuts() -> None:
    game = _auction_view(bid=2)  # seat 1 bid 2; seat 2 to act
    view = player_view(game.state, game.current_player)
    legal = game.legal_actions()
    cases = {"p": (act.PASS,), "pass": (act.PASS,), "+": (act.bid(3),), "5": (act.bid(5),), "b 7": (act.bid(7),)}
    for text, actions in cases.items():
        assert parse_answer(text, view, legal, []).actions == actions, text
    assert "bid at least 3" in parse_answer("2", view, legal, []).error
    assert "Bids go up to 66" in parse_answer("67", view, legal, []).error
    assert "is not a bid" in parse_answer("lots", view, legal, []).error
    assert parse_answer("h", view, legal, []).command == "help"


def test_payment_menu_auto_pay_and_several_cards_at_once() -> None:
    game = _auction_view()
    for action in [act.bid(1), act.PASS, act.bid(3), act.bid(4), act.PASS]:
        game.apply(action)
    assert game.state.decision == Decision.PAY and game.current_player == 1
    view = player_view(game.state, 1)
    legal = game.legal_actions()
    choices = menu(view, legal)
    assert choices[-1].key == "r" and choices[-1].action == act.REFUSE
    assert parse_answer("1 2", view, legal, choices).actions == (choices[0].action, choices[1].action)
    assert parse_answer("1 1", view, legal, choices).error == "Each card can be picked only once."
    assert parse_answer("a", view, legal, choices).command == "auto"
    paid = auto_payment(view)
    coins = sum(CARD_VALUE[c] for c in paid)
    golds = sorted(CARD_VALUE[c] for c in view.hand if CARD_VALUE[c] and c >= 45)
    best = min(sum(s) for r in range(1, len(golds) + 1) for s in itertools.combinations(golds, r) if sum(s) >= 4)
    assert coins == best  # the fewest coins that cover the bid of 4


class CrashingAgent:
    name = "crash"

    def start_game(self, seat: int, num_players: int, seed: int | None = None) -> None:
        pass

    def act(self, observation) -> int:
        raise RuntimeError("boom")


def test_a_crashing_agent_ends_the_game_with_a_message(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("experiments.play.cli.build_agent", lambda spec: CrashingAgent())
    code, output = run(["--seed", "3", "--seat", "1"], lambda prompt: "1")
    assert code == 1 and "crashed: RuntimeError: boom" in output


class Watcher(RandomAgent):
    """A random agent that follows the game (an :class:`~biblios_env.agent_interface.Observer`)."""

    def __init__(self) -> None:
        super().__init__()
        self.views: list[PlayerView] = []

    def observe(self, view: PlayerView) -> None:
        self.views.append(view)


def test_an_agent_that_follows_the_game_is_shown_every_move_as_in_a_tournament(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """The terminal game feeds observers as the tournament and the server do: its own seat's
    view after every action, whoever chose it (the human's moves and the forced ones too)."""
    watchers: list[Watcher] = []

    def watcher(spec: object) -> Watcher:
        watchers.append(Watcher())
        return watchers[-1]

    monkeypatch.setattr("experiments.play.cli.build_agent", watcher)
    log_path = tmp_path / "game.json"
    code, output = run(["--opponents", "random", "--seed", "3", "--save-log", str(log_path)], Script())
    assert code == 0, output[-2000:]
    (seen,) = watchers
    game = load_log(log_path)
    assert len(seen.views) == len(game.history)  # one view per action
    assert {view.seat for view in seen.views} == {1}  # its own seat's
    assert seen.views[-1] == player_view(game.state, 1)  # the last shows the finished table


def test_bid_without_an_amount_says_what_to_type() -> None:
    game = _auction_view(bid=2)  # the high bid is 2: seat 2 may bid 3 to 66
    view = player_view(game.state, game.current_player)
    legal = game.legal_actions()
    for text in ("bid", "b", " BID "):
        error = parse_answer(text, view, legal, []).error
        assert error == "bid needs an amount: bid N with N from 3 to 66 (+ for 3, p to pass).", text
    assert parse_answer("bid 4", view, legal, []).actions == (act.bid(4),)
    assert parse_answer("b4", view, legal, []).actions == (act.bid(4),)
    assert "'banana' is not a bid" in parse_answer("banana", view, legal, []).error


# ----------------------------------------------------------------------------- command line
def test_every_option_has_help() -> None:
    for action in build_parser()._actions:
        assert action.help, f"{action.option_strings} has no help text"


def test_the_agent_spec_example_in_the_help_builds_an_agent() -> None:
    epilog = build_parser().epilog or ""
    examples = re.findall(r"e\.g\. ([\w:=.,]+?)\)", epilog)
    assert examples, epilog
    for example in examples:
        build_agent(parse_agent_spec(example))  # AgentSpecError for a parameter the agent does not take


# ----------------------------------------------------------------------------- the screen at 80x24
TERMINAL_WIDTH, TERMINAL_HEIGHT = 80, 24


def screen_lines(session: TerminalGame, seat: int, legal: list[int]) -> list[str]:
    """What the player sees when asked: the table, the choices and the prompt, at 80 columns."""
    buffer = io.StringIO()
    console = Console(file=buffer, width=TERMINAL_WIDTH, color_system=None)
    view = player_view(session.state, seat)
    console.print(session.screen.question(view, legal))
    prompt = session.screen.prompt(view, legal)
    return [*buffer.getvalue().splitlines(), *textwrap.wrap(prompt, TERMINAL_WIDTH)]


def four_player_screens(seeds: range, every: int = 1):
    """Decisions with a choice in 4-player games of the value heuristic, each seen by its own seat:
    every ``every``-th of them and every payment (the tallest question: a hand of choices)."""
    labels = ["value"] * 4
    for seed in seeds:
        game = Game(4, seed=seed, auto_forced=False)
        agents = [make_agent("value") for _ in range(4)]
        for seat, agent in enumerate(agents):
            agent.start_game(seat, 4, seed=seed * 10 + seat)
        sessions = [
            TerminalGame(game, seat, {}, labels, console=Console(file=io.StringIO()), input_function=input)
            for seat in range(4)
        ]
        for count in itertools.count():
            if game.is_over:
                break
            seat, legal = game.current_player, game.legal_actions()
            if len(legal) > 1 and (count % every == 0 or game.state.decision == Decision.PAY):
                yield player_view(game.state, seat), screen_lines(sessions[seat], seat, legal)
            game.apply(agents[seat].act(AgentObservation(player_view(game.state, seat), list(legal))))


def check_screens_fit(seeds: range, every: int) -> None:
    """Every screen is at most 80 wide and 24 tall, with each category's row and die on it."""
    tallest: list[str] = []
    decisions = set()
    for view, lines in four_player_screens(seeds, every):
        decisions.add(view.decision)
        tallest = max(tallest, lines, key=len)
        assert max(len(line) for line in lines) <= TERMINAL_WIDTH, "\n".join(lines)
        for category, name in enumerate(CATEGORY_NAMES):
            assert any(re.match(rf"│ {name}\s+{view.dice[category]}\s", line) for line in lines), (name, lines)
    assert decisions == {Decision.PLACE, Decision.TAKE, Decision.CHURCH, Decision.BID, Decision.PAY}
    assert len(tallest) <= TERMINAL_HEIGHT, "\n".join(tallest)


def test_a_four_player_screen_fits_80_by_24_with_the_dice() -> None:
    """At 80x24 the whole question (table, choices, prompt) stays on screen: the dice must not scroll away."""
    check_screens_fit(range(1), every=4)


@pytest.mark.slow
def test_every_four_player_screen_of_twenty_games_fits_80_by_24() -> None:
    """About 40 s of CPU: every decision of 20 games."""
    check_screens_fit(range(20), every=1)
