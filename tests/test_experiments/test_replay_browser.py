"""The replay page in a real browser: headless Chromium (Debian's ``chromium`` package, which
``.ci/run`` installs) opens the file from disk, steps through the game with the keyboard and
switches perspective; the test reads the rendered text at several steps for the whole table and
for one seat (which must not show another seat's hidden cards), checks that nothing overflows a
laptop or a phone screen, and that the page requests nothing but itself.

One browser for the module. Set ``BIBLIOS_REPLAY_SCREENSHOTS`` to a folder (``docs/images``) to
keep the screenshots the test takes (the ones in ``docs/replay.md`` come from here).
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from browser import RENDERED_TEXT, chromium
from replay_helpers import hidden_from, page_scene, save_game

from biblios_env.cards import CARD_KIND, CATEGORY_NAMES, Kind, card_name
from biblios_env.engine.state import Phase
from experiments.replay import page_data, read_saved_game, save_page, walk

LAPTOP = {"width": 1280, "height": 800}
PHONE = {"width": 390, "height": 844}
SCREENSHOTS = os.environ.get("BIBLIOS_REPLAY_SCREENSHOTS")


@dataclass(frozen=True)
class Replay:
    """A saved 4-player game, its page, the page's data and the hidden cards of each seat by step."""

    url: str
    data: dict[str, Any]
    hidden: list[list[set[int]]]  # [step][seat]
    phases: list[int]


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    with chromium("replay page") as launched:
        yield launched


@pytest.fixture(scope="module")
def replay(tmp_path_factory: pytest.TempPathFactory) -> Replay:
    folder = tmp_path_factory.mktemp("replay")
    notes = {"annotations": {"40": {"agent": "value", "limit": 3}}}
    log = save_game(folder / "four.json", ["random", "value", "random", "hoarder"], 5, metadata=notes)
    saved = read_saved_game(log)
    page = save_page(saved, folder / "four.html")
    hidden, phases = [], []
    for _, state in walk(saved, []):
        hidden.append([hidden_from(state, seat) for seat in range(saved.num_players)])
        phases.append(state.phase)
    return Replay(page.as_uri(), page_data(saved), hidden, phases)


@pytest.fixture
def page(browser: Any, replay: Replay) -> Iterator[Any]:
    """The page at its first step on a laptop screen; afterwards, it must have requested only itself
    and logged no error."""
    context = browser.new_context(viewport=LAPTOP)
    tab = context.new_page()
    requests: list[str] = []
    errors: list[str] = []
    tab.on("request", lambda request: requests.append(request.url))
    tab.on("pageerror", lambda error: errors.append(str(error)))
    tab.on("console", lambda message: errors.append(message.text) if message.type == "error" else None)
    tab.goto(replay.url)
    yield tab
    context.close()
    assert requests == [replay.url]
    assert not errors


def told(lines: list[dict[str, Any]]) -> str:
    """A narration as the page should render it, whitespace collapsed."""
    text = []
    for line in lines:
        parts = []
        for part in line["parts"]:
            if isinstance(part, str):
                parts.append(part)
            elif isinstance(part, int):
                parts.append(card_name(part))
            elif isinstance(part, list):
                parts.append(", ".join(map(card_name, part)))
            else:
                parts.append(CATEGORY_NAMES[part["category"]])
        text.append("".join(parts))
    return " ".join(" ".join(text).split())


def narration(tab: Any) -> str:
    return " ".join(tab.inner_text("#narration").split())


def go_to(tab: Any, replay: Replay, target: int) -> None:
    """Home, then Page Down to the last landmark before ``target``, then → to it: keys only."""
    tab.keyboard.press("Home")
    step = 0
    for mark in sorted({mark["step"] for mark in replay.data["marks"]}):
        if step < mark <= target:
            tab.keyboard.press("PageDown")
            step = mark
    for _ in range(target - step):
        tab.keyboard.press("ArrowRight")
    assert tab.input_value("#slider") == str(target)


def hidden_names(replay: Replay, step: int, seat: int) -> set[str]:
    """The names of the category cards hidden from ``seat`` at ``step`` (category card names are unique)."""
    return {card_name(card) for card in replay.hidden[step][seat] if CARD_KIND[card] == Kind.CATEGORY}


def shoot(tab: Any, name: str, tmp_path: Path) -> None:
    tab.screenshot(path=str(tmp_path / name))
    if SCREENSHOTS:
        tab.screenshot(path=str(Path(SCREENSHOTS) / name))


# ----------------------------------------------------------------------------- tests
def test_the_keyboard_steps_through_every_decision_with_its_narration(page: Any, replay: Replay) -> None:
    data, last = replay.data, len(replay.data["steps"]) - 1
    assert narration(page) == told(data["narrations"][data["steps"][0]["lines"][0]])
    for step in range(1, 6):
        page.keyboard.press("ArrowRight")
        assert narration(page) == told(data["narrations"][data["steps"][step]["lines"][0]])
        assert page.inner_text("#where").startswith(f"Decision {step} of {last}")
    page.keyboard.press("ArrowLeft")
    assert page.input_value("#slider") == "4"
    marks = sorted({mark["step"] for mark in data["marks"]})
    page.keyboard.press("PageDown")
    assert page.input_value("#slider") == str(next(step for step in marks if step > 4))
    auctions = next(mark["step"] for mark in data["marks"] if mark["kind"] == "auction")
    go_to(page, replay, auctions)
    assert "Auction 1 of " in narration(page) and page.is_visible("#focus .tile.big")
    page.keyboard.press("End")
    assert page.input_value("#slider") == str(last)
    score = page.inner_text("#score")
    assert "final score" in score.lower() and re.search(r"wins\.|Shared win", score)
    page.keyboard.press("Home")
    assert narration(page).startswith("Gift turn 1: player_0 (random) draws")


def test_a_seat_view_shows_only_what_the_seat_knows(page: Any, replay: Replay, tmp_path: Path) -> None:
    """At a gift turn, in the auctions and at the end: seat 1's view names none of the category cards
    hidden from it, the whole table's names them; switching keeps the step."""
    gifts = [step for step, phase in enumerate(replay.phases) if phase == Phase.GIFT and hidden_names(replay, step, 1)]
    auctions = [step for step, phase in enumerate(replay.phases) if phase == Phase.AUCTION]
    steps = [gifts[len(gifts) // 2], auctions[len(auctions) // 2], len(replay.phases) - 1]
    for step in steps:
        go_to(page, replay, step)
        hidden = hidden_names(replay, step, 1)
        assert hidden
        page.keyboard.press("t")
        table = page.evaluate(RENDERED_TEXT)
        assert hidden <= {name for name in hidden if name in table}, step  # the whole table shows them all
        page.keyboard.press("1")
        assert page.get_attribute('#perspectives button[data-view="2"]', "aria-pressed") == "true"
        seat = page.evaluate(RENDERED_TEXT)
        assert "player_1 (value)'s view" in seat and page.input_value("#slider") == str(step)
        assert not {name for name in hidden if name in seat}, step
        assert narration(page) == told(replay.data["narrations"][replay.data["steps"][step]["lines"][2]])
        if step == steps[0]:
            shoot(page, "replay-seat.png", tmp_path)
    page.click('#perspectives button[data-view="0"]')
    assert page.get_attribute('#perspectives button[data-view="0"]', "aria-pressed") == "true"


def test_agent_notes_are_shown_to_the_table_and_the_acting_seat(page: Any, replay: Replay) -> None:
    go_to(page, replay, 41)  # after action 40
    seat = replay.data["steps"][41]["seat"]
    assert "limit" in page.inner_text("#notes") and page.is_visible("#notes")
    page.keyboard.press(str(seat))
    assert page.is_visible("#notes")
    page.keyboard.press(str((seat + 1) % 4))
    assert not page.is_visible("#notes")


def test_the_page_fits_a_laptop_and_a_phone(browser: Any, replay: Replay, tmp_path: Path) -> None:
    """No horizontal scrolling at 1280x800 or 390x844, for the whole table and a seat, through the game."""
    bid = next(  # an auction under way with a few bids and passes
        index
        for index, step in enumerate(replay.data["steps"])
        if len(step["bids"]) >= 3
        and (page_scene(replay.data, step["scenes"][0])["toAct"] or {}).get("decision") == "bid"
    )
    for name, viewport in (("laptop", LAPTOP), ("phone", PHONE)):
        context = browser.new_context(viewport=viewport)
        tab = context.new_page()
        for step in (0, 60, bid, len(replay.phases) - 1):
            for view in ("table", "2"):
                tab.goto(f"{replay.url}#step={step}&view={view}")
                width = tab.evaluate("document.documentElement.scrollWidth")
                assert width <= viewport["width"], (name, step, view, width)
                if (name, step, view) == ("laptop", bid, "table"):
                    shoot(tab, "replay-table.png", tmp_path)
                if (name, step, view) == ("phone", bid, "2"):
                    shoot(tab, "replay-phone.png", tmp_path)
        context.close()


def test_the_next_line_names_the_viewers_own_seat_in_the_third_person(page: Any, replay: Replay) -> None:
    """From player_0's view, at the deal: "Next: player_0 (you) places ...", never "You (player_0) places"."""
    go_to(page, replay, 0)
    page.keyboard.press("0")
    line = page.inner_text("#next")
    page.click('#perspectives button[data-view="0"]')
    assert line.startswith("Next: player_0 (you) ") and "You (" not in line, line
