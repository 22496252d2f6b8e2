"""The play page in a real browser: headless Chromium (Debian's ``chromium``, as the replay page's
browser test drives it) against a server on the loopback. A game is set up in the page and played to
the end by clicking; along the way the page names none of the cards hidden from the player's seat
(decided from the server's full state, RULES §7), the hint marks the move ``value`` would play, and at
the end the final score shows and the replay link opens the game's replay page on the player's seat.
A watched game of bots only moves by itself and pauses. The page asks nothing of any other origin.
"""

from __future__ import annotations

import contextlib
import random
import threading
from collections.abc import Iterator
from typing import Any

import pytest
from browser import RENDERED_TEXT, chromium
from optional_extras import require
from replay_helpers import hidden_from

require("starlette")
import uvicorn  # noqa: E402

from biblios_env.cards import CARD_KIND, Kind, card_name  # noqa: E402
from experiments.serve.app import create_app  # noqa: E402
from experiments.serve.cli import LOOPBACK_NAMES, listening_socket  # noqa: E402
from experiments.serve.storage import DataFolder  # noqa: E402
from experiments.serve.store import GameStore  # noqa: E402

LAPTOP = {"width": 1280, "height": 800}


@contextlib.contextmanager
def serving(store: GameStore) -> Iterator[str]:
    """The app on 127.0.0.1 and a free port, in a thread of this process (so the test can read the
    games' full state); yields the page's address and stops the server afterwards."""
    sock = listening_socket("127.0.0.1", 0)
    app = create_app(store, allowed_hosts=LOOPBACK_NAMES)
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning", access_log=False, lifespan="off"))
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{sock.getsockname()[1]}/"
    finally:
        server.should_exit = True
        thread.join(timeout=30)


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    with chromium("play page") as launched:
        yield launched


@contextlib.contextmanager
def page_at(browser: Any, url: str) -> Iterator[Any]:
    """A tab at ``url``; afterwards it must have asked nothing of another origin and logged no error."""
    context = browser.new_context(viewport=LAPTOP)
    tab = context.new_page()
    requests: list[str] = []
    errors: list[str] = []
    tab.on("request", lambda request: requests.append(request.url))
    tab.on("pageerror", lambda error: errors.append(str(error)))
    tab.on("console", lambda message: errors.append(message.text) if message.type == "error" else None)
    tab.goto(url)
    yield tab
    context.close()
    assert all(request.startswith((url, "blob:")) for request in requests), requests
    assert not errors


def hidden_names(store: GameStore, seat: int) -> set[str]:
    """The names of the category cards hidden from ``seat`` in the one game ``store`` holds."""
    (live,) = store.games.values()
    return {card_name(card) for card in hidden_from(live.game.state, seat) if CARD_KIND[card] == Kind.CATEGORY}


def move_count(tab: Any) -> str:
    return str(tab.inner_text("#where strong"))


#: The page is ready for the player: a move to click, or the final scores.
READY_FOR_INPUT = (
    "() => document.querySelector('#actions button:not([disabled])') !== null"
    " || !document.querySelector('#final').hidden"
)


def test_a_game_set_up_and_played_to_the_end_by_clicking(browser: Any, tmp_path: Any) -> None:
    store = GameStore(data=DataFolder(tmp_path))
    with serving(store) as url, page_at(browser, url) as tab:
        assert "saved on the server after every move" in tab.inner_text("#storage-note")
        tab.select_option("#players", "2")
        tab.select_option("#seat", "1")
        tab.fill("#opponent-inputs input", "random")
        tab.fill("#seed", "6")
        tab.click("#start")
        tab.wait_for_selector("#game:not([hidden]) #actions button")
        assert "you are player_1 (human)" in tab.inner_text("#where")
        assert store.games and next(iter(store.games.values())).seating.labels == ("random", "human")

        tab.click("#hint")
        tab.wait_for_selector("#actions button.hinted")
        hinted = tab.inner_text("#actions button.hinted")
        assert tab.inner_text("#hint-text") == f"The value heuristic would play: {hinted}"

        rng = random.Random(6)
        clicks = 0
        while True:
            # The move count changes when the player's move is shown; the bots' answers may still
            # be on their way (the page polls while they think): wait for buttons or the end.
            tab.wait_for_function(READY_FOR_INPUT)
            if not tab.is_hidden("#final"):
                break
            if clicks % 10 == 0:  # the seat's view names none of the cards hidden from it
                shown = tab.evaluate(RENDERED_TEXT)
                assert not {name for name in hidden_names(store, 1) if name in shown}, clicks
            buttons = tab.locator("#actions button:not([disabled])")  # a bid you cannot pay is disabled
            before = move_count(tab)
            buttons.nth(rng.randrange(buttons.count())).click()
            tab.wait_for_function(
                "before => document.querySelector('#where strong').textContent !== before", arg=before
            )
            clicks += 1
        assert clicks > 10 and tab.is_hidden("#actions button")
        (live,) = store.games.values()
        scores = tab.inner_text("#final-scores")
        assert all(f"{name}: {vp} VP" in scores for name, vp in zip(live.names, live.game.state.vp))
        assert "final score" in tab.inner_text("#score").lower()

        tab.wait_for_selector("#replay-link[href^='blob:']")
        with tab.expect_popup() as opened:
            tab.click("#replay-link")
        replay = opened.value
        replay.wait_for_selector("#perspectives button")
        assert replay.title().startswith("Biblios replay")
        assert replay.get_attribute('#perspectives button[data-view="2"]', "aria-pressed") == "true"  # your seat


def test_a_watched_game_moves_by_itself_and_pauses(browser: Any) -> None:
    store = GameStore()
    with serving(store) as url, page_at(browser, url) as tab:
        assert "memory only" in tab.inner_text("#storage-note")
        tab.select_option("#players", "3")
        tab.check("#watch")
        tab.click("#start")
        tab.wait_for_selector("#game:not([hidden])")
        tab.select_option("#speed", "100")
        tab.wait_for_function("() => /Move ([3-9]|\\d\\d)/.test(document.querySelector('#where strong').textContent)")
        assert tab.is_hidden("#actions button") and "played by a bot" in tab.inner_text("#where")
        tab.click("#pause")
        tab.wait_for_timeout(300)  # a step under way lands
        paused = move_count(tab)
        tab.wait_for_timeout(500)
        assert move_count(tab) == paused and tab.inner_text("#pause") == "Go on"
        tab.click("#pause")
        tab.wait_for_function("before => document.querySelector('#where strong').textContent !== before", arg=paused)


PHONE = {"width": 390, "height": 844}


def to_bidding(tab: Any) -> None:
    """Click the first move until the page asks for a bid."""
    while "Bid on" not in tab.inner_text("#question"):
        before = move_count(tab)
        tab.locator("#actions button:not([disabled])").first.click()
        tab.wait_for_function("before => document.querySelector('#where strong').textContent !== before", arg=before)
        tab.wait_for_selector("#actions button")


@pytest.mark.parametrize("viewport", [LAPTOP, PHONE], ids=["laptop", "phone"])
def test_the_bid_control_and_the_resume_link(browser: Any, viewport: dict[str, int]) -> None:
    """Bids you cannot pay are disabled and marked, in a list that keeps the hand in view on a phone;
    the question says what refusing to pay costs; the resume link goes on with the game in a fresh tab,
    opened or pasted, and the token never travels in a query."""
    store = GameStore()
    with serving(store) as url:
        context = browser.new_context(viewport=viewport)
        tab = context.new_page()
        requests: list[str] = []
        tab.on("request", lambda request: requests.append(request.url))
        tab.goto(url)
        tab.select_option("#players", "2")
        tab.fill("#opponent-inputs input", "random")
        tab.fill("#seed", "3")
        tab.click("#start")
        tab.wait_for_selector("#game:not([hidden]) #actions button")
        to_bidding(tab)
        (live,) = store.games.values()
        can_pay = int(tab.inner_text("#question").split("you can pay ")[1].split(".")[0])
        assert "Refusing to pay costs a penalty" in tab.inner_text("#question")
        options = tab.locator("#bid-amount option")
        labels = options.all_inner_texts()
        assert len(labels) > 12 and tab.locator("#actions button").count() == 2  # pass, and one bid button
        for index, label in enumerate(labels):
            amount = int(label.split()[1])
            disabled = options.nth(index).is_disabled()
            assert disabled == (amount > can_pay) == label.endswith("(you cannot pay)"), label
        controls, seats = tab.locator("#actions").bounding_box(), tab.locator("#seats").bounding_box()
        assert controls["height"] < 120 and seats["y"] - (controls["y"] + controls["height"]) < 400  # the hand is near

        link = tab.get_attribute("#resume-link", "href")
        assert link and f"#game={live.game_id}&token=" in link
        moves = move_count(tab)
        context.close()
        assert not any("token" in request.split("#")[0] for request in requests), requests

        for how in ("opened", "pasted"):
            fresh = browser.new_context(viewport=viewport)
            again = fresh.new_page()
            if how == "opened":
                again.goto(link)
            else:
                again.goto(url)
                again.fill("#resume-input", link)
                again.click("#resume-button")
            again.wait_for_selector("#game:not([hidden]) #actions button")
            assert move_count(again) == moves and again.get_attribute("#resume-link", "href") == link, how
            fresh.close()
    store.stop()
