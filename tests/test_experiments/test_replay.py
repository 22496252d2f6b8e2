"""The replay of saved games (experiments.replay): the page's data for the whole table and for
each seat (a seat never sees another's hidden cards), the narration shared with the terminal
game, the self-contained HTML file, bad logs, agent annotations, the terminal stepper and the
tournament's ``--replay-html``. The page in a real browser: test_replay_browser.py."""

from __future__ import annotations

import io
import itertools
import json
import re
import tomllib
from fnmatch import fnmatch
from pathlib import Path
from typing import Any

import pytest
from replay_helpers import hidden_from, page_scene, save_game, scene_cards
from rich.console import Console

from agents import make_agent
from biblios_env import actions as act
from biblios_env.engine.config import GameConfig
from biblios_env.engine.log import GameLogError, load_log
from biblios_env.engine.setup import GIFT_TURNS
from biblios_env.engine.state import NO_CARD, Phase
from biblios_env.engine.views import player_view
from experiments.common.match import parse_agent_spec, play_game
from experiments.play import main as play_main
from experiments.replay import main, page_data, page_html, read_saved_game, walk
from experiments.table.narration import Line
from experiments.table.scenes import seat_scene
from experiments.tournament import TournamentConfig, run_tournament
from experiments.tournament import main as tournament_main

ROOT = Path(__file__).resolve().parents[2]
DATA_SCRIPT = re.compile(r'<script type="application/json" id="game-data">(.*?)</script>', re.S)


@pytest.fixture(scope="module")
def games(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """Three seeded games: 2 players, 3 players with the "medieval bluffs" penalty, 4 players."""
    folder = tmp_path_factory.mktemp("games")
    return {
        "two": save_game(folder / "two.json", ["value", "hoarder"], 3),
        "bluffs": save_game(folder / "bluffs.json", ["random", "value", "random"], 4, penalty="bluffs"),
        "four": save_game(folder / "four.json", ["random", "value", "random", "hoarder"], 5),
    }


def run(argv: list[str], answers: list[str] | None = None) -> tuple[int, str]:
    """The command line with scripted keys (Enter when they run out) and its terminal output."""
    buffer = io.StringIO()
    keys = iter(answers or [])
    code = main(argv, input_function=lambda prompt: next(keys, ""), console=Console(file=buffer, width=200))
    return code, buffer.getvalue()


# ----------------------------------------------------------------------------- what each seat sees
@pytest.mark.parametrize("name", ["two", "bluffs", "four"])
def test_a_seat_never_sees_another_seats_hidden_cards_on_the_page(name: str, games: dict[str, Path]) -> None:
    """At every step of the page's data, a seat's scene and narration name no card hidden from it
    (decided from the full state and RULES §7 by the test), while the whole table shows every hand."""
    saved = read_saved_game(games[name])
    data = page_data(saved)
    table_showed_hidden = False
    for (_, state), step in zip(walk(saved, []), data["steps"], strict=True):
        table = set(scene_cards(page_scene(data, step["scenes"][0])))
        for seat in range(saved.num_players):
            hidden = hidden_from(state, seat)
            shown = set(scene_cards(page_scene(data, step["scenes"][seat + 1])))
            assert not shown & hidden, (step, seat, shown & hidden)
            told = set(_cards_told(data["narrations"][step["lines"][seat + 1]]))
            assert not told & hidden, (step, seat, data["narrations"][step["lines"][seat + 1]])
            table_showed_hidden |= bool(hidden & table)
        assert {card for hand in state.hands for card in hand} <= table
    assert table_showed_hidden


def _cards_told(lines: list[dict[str, Any]]) -> list[int]:
    """The cards a narration names (a card is an int part, a payment a list of ints)."""
    cards: list[int] = []
    for line in lines:
        for part in line["parts"]:
            cards += [part] if isinstance(part, int) else part if isinstance(part, list) else []
    return cards


def test_a_seat_scene_counts_the_cards_it_cannot_see(games: dict[str, Path]) -> None:
    """Hidden cards are drawn face down: every hand, the auction pile and the face-down discards
    have their true sizes in every seat's scene."""
    saved = read_saved_game(games["four"])
    for _, state in itertools.islice(walk(saved, []), 0, None, 7):
        for seat in range(saved.num_players):
            scene = seat_scene(player_view(state, seat))
            payer = state.high_bidder if state.payment else -1
            for other, hand in enumerate(scene["hands"]):
                picked = len(state.payment) if other == payer and other != seat else 0
                assert len(hand["cards"]) + hand.get("hidden", 0) == len(state.hands[other]) + picked
            pile = scene["auctionPile"]
            assert len(pile["cards"]) + pile.get("hidden", 0) == len(state.auction_pile)
            for other, discarded in enumerate(scene["discard"]["faceDown"]):
                assert len(discarded["cards"]) + discarded.get("hidden", 0) == len(state.private_discard[other])


def test_the_narration_is_the_terminal_games(tmp_path: Path) -> None:
    """A game played in the terminal and saved: the replay tells the human's seat the same lines,
    in the same order, as the terminal did."""
    log = tmp_path / "played.json"
    buffer = io.StringIO()
    answers = itertools.cycle(["1", "p", "2", "+", "1", "1"])
    code = play_main(
        ["--opponents", "random", "random", "--seed", "21", "--seat", "1", "--save-log", str(log)],
        input_function=lambda prompt: "" if prompt.startswith("Save") else next(answers),
        console=Console(file=buffer, width=300, color_system=None),
    )
    assert code == 0
    printed = [line.rstrip() for line in buffer.getvalue().splitlines()]
    position = 0
    told = 0
    for step, _ in walk(read_saved_game(log), [1]):
        for line in step.lines[1]:
            position = next(index for index in range(position, len(printed)) if _printed(line, printed[index])) + 1
            told += 1
    assert told > 200
    assert '"player_1 (human)"' in page_html(read_saved_game(log))  # a played game's log makes a page too


def _printed(line: Line, text: str) -> bool:
    """Whether the terminal's ``text`` is ``line``: a heading is a rule with its title inside."""
    return line.plain in text if line.heading else text == line.plain


def test_the_timeline_marks_the_phases_every_gift_turn_and_every_auction(games: dict[str, Path]) -> None:
    saved = read_saved_game(games["four"])
    data = page_data(saved)
    kinds = [mark["kind"] for mark in data["marks"]]
    game = load_log(games["four"])
    assert kinds.count("turn") == GIFT_TURNS[4]
    assert kinds.count("phase") == 3  # the deal, the auctions, the final score
    auctions = [mark for mark in data["marks"] if mark["kind"] == "auction"]
    assert auctions and all(re.match(rf"Auction {n} of {len(auctions)}: ", mark["label"]) for n, mark in
                            enumerate((mark for mark in auctions), start=1))  # fmt: skip
    assert data["marks"][-1] == {"step": len(game.history), "kind": "phase", "label": "Game over: the final score"}
    steps = [mark["step"] for mark in data["marks"]]
    assert steps == sorted(steps) and len(data["steps"]) == len(game.history) + 1
    score = data["score"]
    assert score["winners"] == game.state.winners and [row["vp"] for row in score["rows"]] == game.state.vp


def test_each_step_lists_the_bids_on_the_card_so_far(games: dict[str, Path]) -> None:
    """What a bidder knew: the bids and passes on this card, in order; a new card or a re-auction
    after a penalty starts afresh."""
    data = page_data(read_saved_game(games["four"]))
    steps = data["steps"]
    for before, step in itertools.pairwise(steps):
        action = step["action"]
        if act.BID_BASE <= action < act.PAY_BASE:
            amount = None if action == act.PASS else action - act.BID_BASE
            card_changed = step["bids"] == []  # the last pass discarded the card unsold
            assert card_changed or step["bids"] == [*before["bids"], [step["seat"], amount]]
        elif action == act.REFUSE:
            assert step["bids"] == []
    assert sum(step["action"] == act.REFUSE for step in steps) > 0
    assert max(len(step["bids"]) for step in steps) >= 3


# ----------------------------------------------------------------------------- the page file
def test_the_page_is_one_self_contained_file(
    games: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "new folder" / "four.html"  # the folder is created
    assert run([str(games["four"]), "--html", str(out)])[0] == 0
    assert f"Replay page written to {out} (" in capsys.readouterr().out
    html = out.read_text(encoding="utf-8")
    assert "<!-- replay:" not in html  # every slot filled
    outside_data = DATA_SCRIPT.sub("", html)
    for fetching in ("http:", "https:", "src=", "<link", "@import", "url(", "fetch(", "XMLHttpRequest", "import("):
        assert fetching not in outside_data, fetching
    assert "default-src 'none'" in html  # and the browser is told to fetch nothing
    data = json.loads(DATA_SCRIPT.search(html).group(1))
    assert data == {**page_data(read_saved_game(games["four"])), "openView": 0}


def test_the_page_escapes_what_could_end_its_script(tmp_path: Path) -> None:
    label = "</script><script>alert('x')</script> & <!--"
    log = save_game(tmp_path / "odd.json", ["random", "random"], 2, labels=[label, "random"])
    html = page_html(read_saved_game(log))
    assert "</script><script>alert" not in html and "<!--" not in DATA_SCRIPT.search(html).group(1)
    assert len(re.findall(r"</script>", html)) == 2  # the data's and the script's own
    data = json.loads(DATA_SCRIPT.search(html).group(1))
    assert data["names"][0] == f"player_0 ({label})"


def test_the_title_names_the_options_of_the_game(tmp_path: Path) -> None:
    """A game of the mini preset says so, and a standard game does not name its preset."""
    mini = tmp_path / "mini.json"
    play_game(
        [make_agent("value"), make_agent("random")],
        3,
        game_config=GameConfig(2, strict_bids=True, preset="mini"),
        log_path=mini,
    )
    title = page_data(read_saved_game(mini))["title"]
    assert title == "2 players · seed 3 · standard penalty · strict bids · mini preset"
    standard = save_game(tmp_path / "standard.json", ["random", "random"], 2)
    assert page_data(read_saved_game(standard))["title"] == "2 players · seed 2 · standard penalty"


def test_a_four_player_page_stays_small(games: dict[str, Path]) -> None:
    """Scenes, their pieces and sentences are stored once each: a 4-player game's page is well under 1 MB."""
    saved = read_saved_game(games["four"])
    html = page_html(saved)
    data = page_data(saved)
    assert len(data["scenes"]) < 5 * len(data["steps"])  # some scenes are shared between steps
    assert len(html.encode()) < 1_000_000, len(html.encode())


def test_the_page_files_are_package_data() -> None:
    """The template, style and script ship with the package (the page is built from them)."""
    globs = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["package-data"]["experiments"]
    for path in (ROOT / "experiments" / "replay").iterdir():
        if path.suffix in (".html", ".css", ".js"):
            assert any(fnmatch(f"replay/{path.name}", glob) for glob in globs), path.name


# ----------------------------------------------------------------------------- bad input
def _bad_logs(tmp_path: Path, good: Path) -> dict[str, Path]:
    log = json.loads(good.read_text())
    edited = dict(log, actions=[*log["actions"][:-1], (log["actions"][-1] + 1)])
    paths = {"missing": tmp_path / "nowhere.json", "not json": tmp_path / "text.json", "edited": tmp_path / "e.json"}
    paths["not json"].write_text("{not json")
    paths["edited"].write_text(json.dumps(edited))
    return paths


def test_a_bad_log_gets_load_logs_error_and_nothing_is_written(
    games: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    for kind, path in _bad_logs(tmp_path, games["two"]).items():
        with pytest.raises(GameLogError) as expected:
            load_log(path)
        out = tmp_path / kind / "page.html"
        code, _ = run([str(path), "--html", str(out)])
        assert code == 1, kind
        assert capsys.readouterr().err == f"error: GameLogError: {expected.value}\n", kind
        assert not out.parent.exists(), kind
        assert run([str(path)])[0] == 1  # the terminal stepper refuses it alike
        assert capsys.readouterr().err == f"error: GameLogError: {expected.value}\n", kind


def test_bad_arguments_are_named(games: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_info:
        run([str(games["two"]), "--seat", "2", "--html", str(tmp_path / "x.html")])
    assert exit_info.value.code == 2
    assert "--seat must be a seat of this 2-player game: 0..1, got 2" in capsys.readouterr().err
    assert not (tmp_path / "x.html").exists()
    folder = tmp_path / "a folder"
    folder.mkdir()
    assert run([str(games["two"]), "--html", str(folder)])[0] == 1
    assert "cannot write the replay page" in capsys.readouterr().err


# ----------------------------------------------------------------------------- annotations
def test_agent_annotations_are_shown_beside_their_decision(tmp_path: Path) -> None:
    notes = {"0": {"agent": "ismcts", "visits": {"keep": 40, "common": 12}}, "5": {"value": 0.25}}
    log = save_game(tmp_path / "notes.json", ["value", "random"], 7, metadata={"annotations": notes})
    saved = read_saved_game(log)
    shown = {"1": [["agent", "ismcts"], ["visits", "keep 40, common 12"]], "6": [["value", "0.25"]]}
    assert page_data(saved)["annotations"] == shown  # by step: the one after the action
    code, output = run([str(log), "--seat", "0"], ["", "", "", "q"])  # seat 0 starts: the first action is its
    assert code == 0 and "agent notes: agent: ismcts · visits: keep 40, common 12" in output
    assert "agent notes" not in run([str(log), "--seat", "1"], ["", "", "", "q"])[1]  # not seat 0's own notes


@pytest.mark.parametrize(
    ("annotations", "message"),
    [
        ([1, 2], "must map action positions to objects, got list"),
        ({"first": {}}, "key 'first' must be an action position"),
        ({"99999": {}}, "key '99999' must be an action position"),
        ({"3": "good move"}, r"\['3'\] must be an object of named values, got str"),
    ],
)
def test_malformed_annotations_are_named(tmp_path: Path, annotations: Any, message: str) -> None:
    log = save_game(tmp_path / "bad.json", ["random", "random"], 1, metadata={"annotations": annotations})
    with pytest.raises(GameLogError, match=message):
        read_saved_game(log)


# ----------------------------------------------------------------------------- the terminal stepper
def test_the_terminal_steps_with_enter_shows_the_table_and_quits(games: dict[str, Path]) -> None:
    code, output = run([str(games["four"])], ["", "t", "n", "what", "", "q"])
    assert code == 0
    assert "Gift turn 1: player_0 (random) draws (5 cards; draw pile 80)" in output
    assert "full table (every hand shown)" in output  # t
    assert "Gift turn 2: player_1 (value) draws" in output  # n went on to the next gift turn
    assert "'what' is not a key here." in output
    assert "Gift turn 3" not in output and "Final score" not in output  # q stopped it


def test_the_terminal_tells_a_whole_game_from_a_seat(games: dict[str, Path]) -> None:
    saved = read_saved_game(games["bluffs"])
    code, output = run([str(games["bluffs"]), "--seat", "2"], ["n"] * 200)
    assert code == 0 and "Final score" in output
    assert "You keep " in output and "player_0 (random) keeps a card face down" in output
    assert output.count("[") < 2 * len(saved.actions)  # n skipped ahead


# ----------------------------------------------------------------------------- the tournament
def test_the_tournament_writes_pages_for_the_first_games(tmp_path: Path) -> None:
    config = TournamentConfig(tuple(map(parse_agent_spec, ["value", "random"])), deals=3, seed=4)
    run_tournament(config, workers=1, progress=False, out_dir=tmp_path / "run", replay_html=2)
    assert sorted(path.name for path in (tmp_path / "run" / "replays").iterdir()) == [
        "game-000000.html", "game-000000.json", "game-000001.html", "game-000001.json",
    ]  # fmt: skip
    logs = tmp_path / "logs"
    run_tournament(config, workers=2, progress=False, out_dir=tmp_path / "only", log_dir=logs, only_games=[3, 5],
                   replay_html=1)  # fmt: skip
    assert [path.name for path in (tmp_path / "only" / "replays").iterdir()] == ["game-000003.html"]
    assert sorted(path.name for path in logs.iterdir()) == ["game-000003.json", "game-000005.json"]
    with pytest.raises(ValueError, match="needs out_dir"):
        run_tournament(config, progress=False, replay_html=1)


def test_resuming_writes_the_pages_of_games_finished_before(tmp_path: Path) -> None:
    config = TournamentConfig(tuple(map(parse_agent_spec, ["value", "random"])), deals=2, seed=4)
    run_tournament(config, workers=1, progress=False, out_dir=tmp_path, log_dir=tmp_path / "logs")
    assert not (tmp_path / "replays").exists()
    run_tournament(config, workers=1, progress=False, out_dir=tmp_path, log_dir=tmp_path / "logs", resume=True,
                   replay_html=3)  # fmt: skip
    assert sorted(path.name for path in (tmp_path / "replays").iterdir()) == [
        "game-000000.html", "game-000001.html", "game-000002.html",
    ]  # fmt: skip


def test_the_tournament_command_line_says_where_the_pages_are(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["--agents", "random", "random", "--games", "2", "--workers", "1", "--no-plot", "--no-progress"]
    assert tournament_main([*argv, "--out", str(tmp_path), "--replay-html", "1"]) == 0
    assert f"Replay pages in {tmp_path / 'replays'}/" in capsys.readouterr().out
    assert (tmp_path / "replays" / "game-000000.html").exists()


def test_no_card_is_ever_named_by_its_placeholder(games: dict[str, Path]) -> None:
    """Scenes use null for "no card", never the engine's -1."""
    data = page_data(read_saved_game(games["bluffs"]))
    for index in range(len(data["scenes"])):
        assert NO_CARD not in set(scene_cards(page_scene(data, index)))
    assert page_scene(data, data["steps"][-1]["scenes"][0])["phase"] == Phase.END
