"""The play server (``experiments.serve``): its JSON API through Starlette's TestClient, a real
server on the loopback for the restart and the load, and the leakage harness applied to its answers.

Whole games for 2, 3 and 4 players end with a log that replays; every bad input gets its 4xx and
changes nothing; a watched game of bots only moves one decision at a time; a slow bot holds up only
its own game; a server restarted on its data folder goes on with every game; and pairs of games that
differ only in a card the player's seat cannot see give that seat the very same answers (a planted
leak in the view builder is caught).
"""

from __future__ import annotations

import dataclasses
import json
import random
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from optional_extras import require

require("starlette")
from starlette.testclient import TestClient  # noqa: E402
from test_env import test_leakage as leakage  # noqa: E402  (the leakage harness, applied to the server's answers)

from agents import ValueAgent  # noqa: E402
from biblios_env.actions import BID_BASE, PASS  # noqa: E402
from biblios_env.agent_interface import AgentObservation  # noqa: E402
from biblios_env.cards import IS_CHURCH  # noqa: E402
from biblios_env.engine import Game  # noqa: E402
from biblios_env.engine.log import load_log, replay  # noqa: E402
from biblios_env.engine.state import Decision, State  # noqa: E402
from biblios_env.engine.views import PlayerView, player_view  # noqa: E402
from experiments import replay as replay_command  # noqa: E402
from experiments.benchmarks.serve import Client, GameRecord, run_load, running_server  # noqa: E402
from experiments.common.match import registry  # noqa: E402
from experiments.serve import views  # noqa: E402
from experiments.serve.app import MAX_BODY, create_app  # noqa: E402
from experiments.serve.checks import NEW_GAME_FIELDS, NewGame  # noqa: E402
from experiments.serve.labels import legal_labels  # noqa: E402
from experiments.serve.specs import BotRules  # noqa: E402
from experiments.serve.storage import DataFolder  # noqa: E402
from experiments.serve.store import GameStore  # noqa: E402
from experiments.table.scenes import SCENE_FIELDS  # noqa: E402

#: The keys every VIEW has (docs/serve.md).
VIEW_KEYS = {
    "game_id", "players", "seat", "names", "autoplay", "moves", "finished", "thinking", "error", "your_turn",
    "question", "can_pay", "legal_actions", "table", "bids", "landmark", "narration", "scores", "score",
}  # fmt: skip


@pytest.fixture
def store() -> GameStore:
    return GameStore()


@pytest.fixture
def client(store: GameStore) -> Iterator[TestClient]:
    with TestClient(create_app(store)) as test_client:
        yield test_client


@dataclass
class Seat:
    """A game as its player holds it: the id, the token's header and the last VIEW."""

    game_id: str
    headers: dict[str, str]
    view: dict[str, Any]

    def path(self, rest: str = "") -> str:
        return f"/api/games/{self.game_id}{rest}"


def new_game(client: TestClient, **request: Any) -> Seat:
    response = client.post("/api/games", json=request)
    assert response.status_code == 201, response.text
    made = response.json()
    seat = Seat(made["game_id"], {"Authorization": f"Bearer {made['token']}"}, made["view"])
    return settle(client, seat)


#: The longest the tests wait for bots to finish moving (a bot thread that never ends is a failure).
SETTLE_SECONDS = 20.0


def settle(client: TestClient, seat: Seat) -> Seat:
    """Ask for the view again while the bots think (each GET waits for them a while on the server)."""
    deadline = time.monotonic() + SETTLE_SECONDS
    while seat.view["thinking"]:
        assert time.monotonic() < deadline, f"the bots were still moving after {SETTLE_SECONDS:g} s"
        response = client.get(seat.path(), headers=seat.headers)
        assert response.status_code == 200, response.text
        seat.view = response.json()
    return seat


def play(client: TestClient, seat: Seat, action: int) -> dict[str, Any]:
    """The player's action, answering the view it holds; the view once the bots are done."""
    body = {"action": action, "moves": seat.view["moves"]}
    response = client.post(seat.path("/actions"), json=body, headers=seat.headers)
    assert response.status_code == 200, response.text
    seat.view = response.json()
    return settle(client, seat).view


def check_view(view: dict[str, Any], players: int, seat: int) -> None:
    """What every VIEW holds, whatever the moment."""
    assert set(view) == VIEW_KEYS
    assert (view["players"], view["seat"], len(view["names"])) == (players, seat, players)
    assert set(view["table"]) == set(SCENE_FIELDS) and len(view["table"]["hands"]) == players
    assert view["your_turn"] == bool(view["legal_actions"]) == (view["question"] is not None)
    assert all(isinstance(item["label"], str) and item["label"] for item in view["legal_actions"])
    assert (view["scores"] is None) == (view["score"] is None) == (not view["finished"])


# ----------------------------------------------------------------------------- whole games
@pytest.mark.parametrize(
    ("players", "seat", "opponents"),
    [(2, 1, ["value"]), (3, 0, ["random", "value"]), (4, 2, ["value", "random", "hoarder"])],
)
def test_a_whole_game_through_the_api_ends_with_a_log_that_replays(
    client: TestClient, tmp_path: Path, players: int, seat: int, opponents: list[str]
) -> None:
    game = new_game(client, players=players, seat=seat, opponents=opponents, seed=players)
    rng = random.Random(players)
    decisions = 0
    while not game.view["finished"]:
        check_view(game.view, players, seat)
        assert game.view["your_turn"] and game.view["table"]["toAct"]["seat"] == seat
        before = game.view["moves"]
        play(client, game, rng.choice(game.view["legal_actions"])["action"])
        assert game.view["moves"] > before and game.view["narration"]  # your move, told, then the bots'
        decisions += 1
    view = game.view
    check_view(view, players, seat)
    assert decisions > 20 and view["legal_actions"] == [] and len(view["scores"]) == players
    assert [row["vp"] for row in view["score"]["rows"]] == view["scores"]
    log = client.get(game.path("/log"), headers=game.headers).json()
    assert list(replay(log).state.vp) == view["scores"] and log["num_actions"] == view["moves"]
    assert log["metadata"]["agents"] == [*opponents[:seat], "human", *opponents[seat:]]
    path = tmp_path / "game.json"
    path.write_text(json.dumps(log))
    assert replay_command.main([str(path), "--html", str(tmp_path / "game.html")]) == 0  # the replay opens it
    page = client.get(game.path("/replay"), headers=game.headers)
    assert page.status_code == 200 and "<title>Biblios replay</title>" in page.text
    assert f'"openView":{seat + 1}' in page.text  # it opens on the player's seat


def test_the_labels_are_the_terminal_games_words() -> None:
    """Bids read ``pass`` / ``bid N``; a placement reads as the terminal game's menu line."""
    game = Game(3, seed=4)
    view = player_view(game.state, game.current_player)
    labels = legal_labels(view, game.legal_actions())
    assert [item["label"].split(":")[0] for item in labels] == ["keep it", "auction pile", "common area"]
    while game.state.decision != Decision.BID:
        game.apply(game.legal_actions()[-1])
    bids = legal_labels(player_view(game.state, game.current_player), game.legal_actions())
    assert bids[0] == {"action": PASS, "label": "pass"}
    assert bids[1] == {"action": BID_BASE + 1, "label": "bid 1"}


def test_the_hint_is_what_value_would_play(client: TestClient, store: GameStore) -> None:
    game = new_game(client, players=2, seat=0, opponents=["random"], seed=9)
    for _ in range(6):
        hint = client.get(game.path("/hint"), headers=game.headers).json()
        live = store.games[game.game_id]
        value = ValueAgent()
        value.start_game(0, 2, seed=0)
        legal = live.game.legal_actions()
        assert hint["action"] == value.act(AgentObservation(player_view(live.game.state, 0), legal))
        assert {"action": hint["action"], "label": hint["label"]} in game.view["legal_actions"]
        play(client, game, hint["action"])


def test_a_game_of_bots_only_is_watched_one_decision_at_a_time(client: TestClient) -> None:
    game = new_game(client, players=3, seat=1, opponents=["random", "value"], autoplay="random", seed=2)
    assert game.view["autoplay"] and game.view["moves"] == 0 and not game.view["your_turn"]
    steps = 0
    while not game.view["finished"]:
        moves = game.view["moves"]
        response = client.post(game.path("/step"), headers=game.headers)
        assert response.status_code == 200, response.text
        game.view = response.json()
        settle(client, game)
        check_view(game.view, 3, 1)
        assert game.view["moves"] > moves and game.view["legal_actions"] == []
        steps += 1
    assert steps > 30 and client.get(game.path("/log"), headers=game.headers).status_code == 200
    assert client.post(game.path("/step"), headers=game.headers).status_code == 409


# ----------------------------------------------------------------------------- bad input
def test_an_unknown_game_is_a_404(client: TestClient) -> None:
    for method, path in (("GET", ""), ("POST", "/actions"), ("GET", "/log"), ("GET", "/hint"), ("POST", "/step")):
        response = client.request(method, f"/api/games/nosuchgame{path}", json={"action": 0})
        assert response.status_code == 404 and "no game 'nosuchgame'" in response.json()["error"]
    assert client.get("/api/games/../../etc/passwd").status_code == 404
    assert client.get("/no/such/page").json()["error"].startswith("GET /no/such/page")
    assert client.delete("/api/games").status_code == 405


def test_a_missing_or_wrong_token_is_a_403_and_changes_nothing(client: TestClient) -> None:
    game = new_game(client, players=2, seat=0, opponents=["value"], seed=1)
    other = new_game(client, players=2, seat=0, opponents=["value"], seed=1)
    action = {"action": game.view["legal_actions"][0]["action"], "moves": game.view["moves"]}
    bare = {"Authorization": game.headers["Authorization"].removeprefix("Bearer ")}
    for headers in ({}, {"Authorization": "Bearer nope"}, other.headers, bare):
        for method, path, body in (("GET", "", None), ("POST", "/actions", action), ("GET", "/hint", None)):
            response = client.request(method, game.path(path), json=body, headers=headers)
            assert response.status_code == 403 and "token" in response.json()["error"], (headers, path)
    assert client.get(game.path(), headers=game.headers).json() == game.view


def test_an_illegal_or_malformed_action_is_a_422_naming_the_legal_ones(client: TestClient) -> None:
    game = new_game(client, players=3, seat=0, opponents=["value", "random"], seed=3)
    legal, moves = game.view["legal_actions"], game.view["moves"]
    illegal = next(action for action in range(300) if action not in {item["action"] for item in legal})
    for body in ({"action": illegal, "moves": moves}, {"action": str(legal[0]["action"]), "moves": moves},
                 {"action": True, "moves": moves}, {"move": 1}, {"action": 1, "moves": moves, "also": 2},
                 {"action": legal[0]["action"]}, {"action": legal[0]["action"], "moves": str(moves)},
                 [legal[0]["action"]], "keep"):  # fmt: skip
        response = client.post(game.path("/actions"), json=body, headers=game.headers)
        assert response.status_code == 422, body
        answer = response.json()
        assert answer["legal_actions"] == legal and str(legal[0]["action"]) in answer["error"], body
    response = client.post(game.path("/actions"), content=b"{not json", headers=game.headers | _JSON)
    assert response.status_code == 422 and "not JSON" in response.json()["error"]
    assert client.get(game.path(), headers=game.headers).json() == game.view  # nothing changed


_JSON = {"Content-Type": "application/json"}


def test_an_action_out_of_turn_is_a_409(client: TestClient) -> None:
    watched = new_game(client, players=2, seat=0, opponents=["random"], autoplay="random", seed=5)
    response = client.post(watched.path("/actions"), json={"action": 0, "moves": 0}, headers=watched.headers)
    assert response.status_code == 409 and "bots play every seat" in response.json()["error"]
    assert client.get(watched.path("/hint"), headers=watched.headers).status_code == 409
    assert client.get(watched.path("/log"), headers=watched.headers).status_code == 409  # not over: no log yet
    game = new_game(client, players=2, seat=1, opponents=["random"], seed=5)
    assert client.post(game.path("/step"), headers=game.headers).status_code == 409  # you play your seat
    rng = random.Random(5)
    while not game.view["finished"]:
        play(client, game, rng.choice(game.view["legal_actions"])["action"])
    body = {"action": 0, "moves": game.view["moves"]}
    response = client.post(game.path("/actions"), json=body, headers=game.headers)
    assert response.status_code == 409 and "the game is over" in response.json()["error"]


def test_an_unknown_agent_or_option_is_a_422_naming_the_choices(client: TestClient, store: GameStore) -> None:
    good = {"players": 3, "seat": 0, "opponents": ["value", "random"]}
    cases: list[tuple[dict[str, Any], str]] = [
        ({**good, "opponents": ["value", "nobody"]}, "unknown agent 'nobody'"),
        ({**good, "opponents": ["value", "value:nerve=3"]}, "unknown parameter"),
        ({**good, "opponents": ["value", "os.system:command=true"]}, "is an import path"),
        ({**good, "autoplay": "valu"}, "did you mean 'value'"),
        ({**good, "colour": "red"}, "unknown field(s) ['colour']"),
        ({**good, "penalty": "harsh"}, "penalty must be one of standard, bluffs"),
        ({**good, "players": 5}, "players must be 2, 3 or 4"),
        ({**good, "seat": 3}, "seat must be a seat of the 3-player game, 0..2, got 3"),
        ({**good, "opponents": ["value"]}, "a list of 2 agent spec(s)"),
        ({**good, "seed": -1}, "seed must be a non-negative integer"),
        ({**good, "strict_bids": "yes"}, "strict_bids must be true or false"),
        ({"players": 2, "seat": 0}, "missing: opponents"),
        ([1, 2], "a new game is a JSON object"),
    ]
    for body, message in cases:
        response = client.post("/api/games", json=body)
        assert response.status_code == 422, body
        assert message in response.json()["error"], (body, response.json())
    agents = client.post("/api/games", json=cases[0][0]).json()["choices"]
    assert agents == sorted(registry())
    assert client.post("/api/games", json=cases[4][0]).json()["choices"] == list(NEW_GAME_FIELDS)
    assert store.games == {} and store.starting == 0  # nothing was created
    new_game(client, **good)  # and the server goes on serving


def test_an_oversized_body_is_a_413_and_a_body_not_sent_as_json_a_415(client: TestClient) -> None:
    big = json.dumps({"players": 2, "seat": 0, "opponents": ["value"], "pad": "x" * MAX_BODY})
    response = client.post("/api/games", content=big, headers=_JSON)
    assert response.status_code == 413 and f"at most {MAX_BODY}" in response.json()["error"]
    streamed = client.post("/api/games", content=iter([big[:100].encode(), big[100:].encode()]), headers=_JSON)
    assert streamed.status_code == 413  # sent in chunks, without a length
    plain = client.post("/api/games", content=b'{"players": 2}', headers={"Content-Type": "text/plain"})
    assert plain.status_code == 415 and "Content-Type: application/json" in plain.json()["error"]


def test_the_open_games_are_limited_and_idle_games_expire(tmp_path: Path) -> None:
    now = [0.0]
    store = GameStore(data=DataFolder(tmp_path), max_games=1, idle_seconds=60, clock=lambda: now[0])
    with TestClient(create_app(store)) as client:
        first = new_game(client, players=2, seat=0, opponents=["random"], seed=1)
        refused = client.post("/api/games", json={"players": 2, "seat": 0, "opponents": ["random"]})
        assert refused.status_code == 503 and "--max-games 1" in refused.json()["error"]
        now[0] = 59.0
        assert client.get(first.path(), headers=first.headers).status_code == 200  # asked: not idle
        now[0] = 59.0 + 61
        second = new_game(client, players=2, seat=0, opponents=["random"], seed=2)  # the first expired
        response = client.get(first.path(), headers=first.headers)
        assert response.status_code == 404 and "expired after 60 s idle" in response.json()["error"]
        assert (tmp_path / "expired" / f"{first.game_id}.json").exists()  # kept, not resumed
        assert [path.stem for path in (tmp_path / "open").glob("*.json")] == [second.game_id]


# ----------------------------------------------------------------------------- bots off the event loop
GATE = threading.Event()


class GatedAgent:
    """A bot that thinks until the test opens its gate: a slow search, without the CPU it would take."""

    name = "gated"

    def start_game(self, seat: int, num_players: int, seed: int | None = None) -> None:
        pass

    def act(self, observation: AgentObservation) -> int:
        assert GATE.wait(timeout=60), "the test never opened the gate"
        return observation.legal_actions[0]


def test_a_slow_bot_holds_up_nobody() -> None:
    """While one game's bot thinks, its creation answers at once ("thinking"), and another game is
    created and played; once the bot has moved, the slow game's view says it is the player's turn."""
    GATE.clear()
    store = GameStore(rules=BotRules(import_paths=True))
    with TestClient(create_app(store)) as client:
        try:
            slow = client.post("/api/games", json={"players": 2, "seat": 1, "opponents": [f"{__name__}.GatedAgent"]})
            assert slow.status_code == 201 and slow.json()["view"]["thinking"]
            assert not slow.json()["view"]["your_turn"] and slow.json()["view"]["legal_actions"] == []
            game = new_game(client, players=2, seat=0, opponents=["value"], seed=7)
            for _ in range(5):
                play(client, game, game.view["legal_actions"][0]["action"])
            made = slow.json()
            waiting = Seat(made["game_id"], {"Authorization": f"Bearer {made['token']}"}, made["view"])
            assert client.get(waiting.path(), headers=waiting.headers).json()["thinking"]  # still thinking
        finally:
            GATE.set()
        assert settle(client, waiting).view["your_turn"]


# ----------------------------------------------------------------------------- nothing lost
def test_a_restarted_server_goes_on_with_every_unfinished_game(tmp_path: Path) -> None:
    """A real server on the loopback, saving into a data folder: every move is in the open game's log;
    stopped (Ctrl-C) and started again, it shows the same views, and the games finish."""
    data = tmp_path / "games"
    requests = [
        {"players": 2, "seat": 1, "opponents": ["value"], "seed": 11},
        {"players": 3, "seat": 0, "opponents": ["random", "value"], "seed": 12},
    ]
    tokens: list[str] = []
    views: list[dict[str, Any]] = []
    with running_server(data, max_games=5) as port:
        for index, request in enumerate(requests):
            client = Client(port, GameRecord(index))
            made = client.call("create", "POST", "/api/games", request)
            client.token = made["token"]
            view = settled(client, made["view"])
            for _ in range(4):
                view = settled(client, client.call("action", "POST", view_path(view, "/actions"), first_move(view)))
                log = data / "open" / f"{view['game_id']}.json"
                load_log(log)  # written whole: it replays
                assert json.loads(log.read_text())["num_actions"] == view["moves"]  # after every move
            tokens.append(client.token)
            views.append(view)
    assert not list(data.rglob("*.tmp")) and len(list((data / "open").glob("*.json"))) == 2
    with running_server(data, max_games=5) as port:
        for index, (token, view) in enumerate(zip(tokens, views)):
            client = Client(port, GameRecord(index))
            client.token = token
            assert client.call("view", "GET", view_path(view)) == view  # the same game, the same news
            while not view["finished"]:
                view = settled(client, client.call("action", "POST", view_path(view, "/actions"), first_move(view)))
            log = client.call("log", "GET", view_path(view, "/log"))
            assert list(replay(log).state.vp) == view["scores"]
            assert json.loads((data / "finished" / f"{view['game_id']}.json").read_text()) == log
    assert not list((data / "open").glob("*.json"))


def settled(client: Client, view: dict[str, Any]) -> dict[str, Any]:
    """The view once the bots are done (a real server's client asks again while they think)."""
    while view["thinking"]:
        view = client.call("view", "GET", view_path(view))
    return view


def view_path(view: dict[str, Any], rest: str = "") -> str:
    return f"/api/games/{view['game_id']}{rest}"


def first_legal(view: dict[str, Any]) -> int:
    return view["legal_actions"][0]["action"]


def first_move(view: dict[str, Any]) -> dict[str, int]:
    """The body playing the first legal action of ``view``."""
    return {"action": first_legal(view), "moves": view["moves"]}


def test_a_watched_game_and_a_finished_one_come_back_from_the_data_folder(tmp_path: Path) -> None:
    """The watched game is resumed at start; the finished one is read again when asked for."""
    with TestClient(create_app(GameStore(data=DataFolder(tmp_path)))) as client:
        watched = new_game(client, players=3, seat=2, opponents=["random", "value"], autoplay="value", seed=4)
        for _ in range(5):
            watched.view = client.post(watched.path("/step"), headers=watched.headers).json()
            settle(client, watched)
        finished = new_game(client, players=2, seat=0, opponents=["random"], seed=4)
        while not finished.view["finished"]:
            play(client, finished, first_legal(finished.view))
    store = GameStore(data=DataFolder(tmp_path))
    assert store.resume() == [] and list(store.games) == [watched.game_id]
    with TestClient(create_app(store)) as client:
        for game in (watched, finished):
            assert client.get(game.path(), headers=game.headers).json() == game.view
        stepped = Seat(
            watched.game_id, watched.headers, client.post(watched.path("/step"), headers=watched.headers).json()
        )
        assert settle(client, stepped).view["moves"] > watched.view["moves"]
        log = client.get(finished.path("/log"), headers=finished.headers).json()
        assert list(replay(log).state.vp) == finished.view["scores"]


def test_a_log_that_cannot_be_resumed_is_named_and_kept(tmp_path: Path) -> None:
    data = DataFolder(tmp_path)
    broken = tmp_path / "open" / "broken.json"
    broken.write_text('{"format": "biblios-game-log"')
    store = GameStore(data=data)
    (problem,) = store.resume()
    assert str(broken) in problem and "not resumed" in problem
    assert broken.exists() and store.games == {}


# ----------------------------------------------------------------------------- the load
def test_five_games_at_once_against_a_real_server() -> None:
    """The smoke version of ``python -m experiments.benchmarks.serve`` (50 games: docs/serve.md)."""
    report = run_load(5, seed=1)
    assert report.failures == []
    assert all(record.scores is not None for record in report.records)
    assert len(report.times("action")) > 5 * 20


# ----------------------------------------------------------------------------- one seat's view
def start_pair(
    store: GameStore, client: TestClient, players: int, seat: int, seed: int, decks: list[list[int]]
) -> list[Seat]:
    """Two games of the same seating and seed, dealt from ``decks``, with ``random`` bots: seeded alike, they
    pick the same place in the same list of legal actions, so the games go alike until a bot's legal
    actions differ (the harness plays both games with the same actions the same way)."""
    seats = []
    for deck in decks:
        store.reserve()
        live, token = store.new_game(NewGame(players, seat, ("random",) * (players - 1), seed), deck=deck)
        store.add(live)
        seat_ = Seat(live.game_id, {"Authorization": f"Bearer {token}"}, {})
        seat_.view = client.get(seat_.path(), headers=seat_.headers).json()
        seats.append(seat_)
    return seats


def revealed(states: tuple[State, State], seat: int, differing: set[int]) -> bool:
    """Whether a card that differs between the games is where ``seat`` may see it (the harness's test)."""
    first, second = states
    differing |= leakage.differing_cards(first, second)
    if set(first.auction_contributions[seat]) != set(second.auction_contributions[seat]):
        return True
    return bool(differing & (leakage.maybe_visible(first, seat) | leakage.maybe_visible(second, seat)))


def compare_pair(store: GameStore, client: TestClient, pair: list[Seat], seat: int, seed: int) -> tuple[int, int]:
    """Play both games alike through the API (the same random legal actions for the seat; the bots move
    on the server), comparing the seat's answers while every differing card is hidden from it at every
    position passed. Returns the answers compared, and those compared once a differing card was dealt."""
    lives = [store.games[game.game_id] for game in pair]
    shadows = [Game.from_config(live.game.config, seed=live.game.seed, deck=list(live.game.deck), auto_forced=False)
               for live in lives]  # fmt: skip
    rng = random.Random(seed)
    differing: set[int] = set()
    compared = dealt = 0
    while lives[0].game.history == lives[1].game.history:  # else a bot that saw the difference chose otherwise
        for action in [*lives[0].game.history[len(shadows[0].history) :], None]:
            if revealed((shadows[0].state, shadows[1].state), seat, differing):
                return compared, dealt
            if action is not None:
                for shadow in shadows:
                    shadow.apply(action)
        first, second = ({key: value for key, value in game.view.items() if key != "game_id"} for game in pair)
        if first["finished"]:
            break  # the hands are scored in the open
        assert first == second, f"seat {seat}'s answers differ at move {first['moves']}"
        compared += 1
        places = leakage.locations(shadows[0].state)
        dealt += any(places[card][0] not in ("draw pile", "removed") for card in differing)
        action = rng.choice(first["legal_actions"])["action"]
        for game in pair:
            play(client, game, action)
    return compared, dealt


def hidden_card_pairs(store: GameStore, client: TestClient, players: int, seed: int) -> int:
    """Pairs whose decks differ in a card player_0 draws first (a removed card in its place), compared
    from player_1's seat; the answers compared once that card was in player_0's hands, in all."""
    deck = list(Game(players, seed=seed).deck)
    dealt_in_all = 0
    for position in range(players + 1):  # player_0's first gift turn draws these
        card = deck[position]
        if IS_CHURCH[card]:
            continue
        other = leakage.swapped_deck(deck, card, leakage.valid_replacements(deck, card, players)[0])
        pair = start_pair(store, client, players, 1, seed, [deck, other])
        dealt_in_all += compare_pair(store, client, pair, 1, seed + position)[1]
        if dealt_in_all >= 5:
            break
    return dealt_in_all


@pytest.mark.parametrize("players", [2, 3, 4])
def test_a_card_the_seat_cannot_see_changes_none_of_its_answers(
    client: TestClient, store: GameStore, players: int
) -> None:
    assert hidden_card_pairs(store, client, players, seed=20 + players) >= 5


def test_the_order_of_the_draw_pile_changes_none_of_the_answers(client: TestClient, store: GameStore) -> None:
    """The undrawn cards reordered from the 41st on: every answer is the same until one of them shows."""
    deck = list(Game(3, seed=8).deck)
    tail = deck[40:]
    random.Random(8).shuffle(tail)
    pair = start_pair(store, client, 3, 2, 8, [deck, deck[:40] + tail])
    compared, _ = compare_pair(store, client, pair, 2, 8)
    assert compared >= 10


def test_a_planted_leak_in_the_view_builder_is_caught(
    client: TestClient, store: GameStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Control: a view that shows the opponents' whole hands must fail the pair comparison."""

    def leaky_view(state: State, seat: int) -> PlayerView:
        view = player_view(state, seat)
        n = state.num_players
        everything = [tuple(sorted(state.hands[(seat + offset) % n])) for offset in range(1, n)]
        return dataclasses.replace(view, opponent_cards=everything)

    monkeypatch.setattr(views, "player_view", leaky_view)
    with pytest.raises(AssertionError, match="answers differ"):
        hidden_card_pairs(store, client, 3, seed=23)
