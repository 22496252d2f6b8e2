"""The play server against hostile and clumsy clients, in process (Starlette's TestClient): a move
sent twice is played once, a request names no file and no absurd number, a bot that crashes or
overruns ends its game in an error state, logs are private and replaced whole, a game whose creation
was never answered is never resumed; and what the other tests do not pin: the bots are shown their
own seat's view, two requests at once never move the bots twice, the player's requests keep a game
alive, ``--max-games`` counts the unfinished games only, a finished game is not resumed and an
unfinished one's replay page is refused. (``test_serve_process.py`` runs a real server: the slow
bots and the stop.)
"""

from __future__ import annotations

import json
import os
import shutil
import stat
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any, ClassVar

import pytest
from optional_extras import require

require("starlette")
from starlette.testclient import TestClient  # noqa: E402
from test_serve import Seat, new_game, play, settle  # noqa: E402

from agents import HEURISTIC_RANGES  # noqa: E402
from agents.network_agent import SHIPPED_NETWORKS  # noqa: E402
from agents.search import SearchAgent  # noqa: E402
from biblios_env.agent_interface import AgentObservation  # noqa: E402
from biblios_env.engine import Game  # noqa: E402
from biblios_env.engine.log import load_log  # noqa: E402
from biblios_env.engine.views import PlayerView, player_view  # noqa: E402
from experiments.common.match import AgentSpecError, build_agent, parse_agent_spec  # noqa: E402
from experiments.serve import storage  # noqa: E402
from experiments.serve.app import create_app  # noqa: E402
from experiments.serve.checks import NewGame  # noqa: E402
from experiments.serve.errors import HIDDEN_PATH  # noqa: E402
from experiments.serve.games import LiveGame  # noqa: E402
from experiments.serve.specs import BotRules  # noqa: E402
from experiments.serve.storage import DataFolder  # noqa: E402
from experiments.serve.store import GameStore  # noqa: E402

HERE = __name__


@pytest.fixture
def store() -> Iterator[GameStore]:
    held = GameStore(rules=BotRules(import_paths=True))
    yield held
    held.stop()


@pytest.fixture
def client(store: GameStore) -> Iterator[TestClient]:
    with TestClient(create_app(store)) as test_client:
        yield test_client


def body(seat: Seat, action: int) -> dict[str, int]:
    return {"action": action, "moves": seat.view["moves"]}


# ----------------------------------------------------------------------------- a move is applied once
def bid_decision(client: TestClient, seat: Seat) -> Seat:
    """Play the first legal action until the player is asked to bid (PASS is then legal, and will be
    again at the next auction)."""
    while "Bid on" not in (seat.view["question"] or ""):
        play(client, seat, seat.view["legal_actions"][0]["action"])
    return seat


def test_a_move_sent_again_is_refused_with_the_view_now(client: TestClient) -> None:
    game = bid_decision(client, new_game(client, players=2, seat=0, opponents=["random"], seed=3))
    sent = body(game, 90)  # PASS, legal at every bid
    first = client.post(game.path("/actions"), json=sent, headers=game.headers)
    assert first.status_code == 200
    now = settle(client, Seat(game.game_id, game.headers, first.json())).view
    assert 90 in [item["action"] for item in now["legal_actions"]]  # the same action would be legal again
    again = client.post(game.path("/actions"), json=sent, headers=game.headers)
    assert again.status_code == 409 and f"answers move {sent['moves']}" in again.json()["error"]
    assert again.json()["view"] == now
    assert client.get(game.path(), headers=game.headers).json()["moves"] == now["moves"]  # played once


def test_the_same_move_sent_six_times_at_once_is_played_once(client: TestClient, store: GameStore) -> None:
    game = bid_decision(client, new_game(client, players=3, seat=1, opponents=["random", "random"], seed=5))
    sent = body(game, 90)
    start = threading.Barrier(6)
    statuses: list[int] = []

    def send() -> None:
        start.wait()
        statuses.append(client.post(game.path("/actions"), json=sent, headers=game.headers).status_code)

    threads = [threading.Thread(target=send) for _ in range(6)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sorted(statuses) == [200] + [409] * 5
    live = store.games[game.game_id]
    settle(client, Seat(game.game_id, game.headers, {"thinking": True}))
    assert live.game.history[sent["moves"]] == 90
    assert [move for move in decisions(live, 1) if move >= sent["moves"]] == [sent["moves"]]  # played once


def decisions(live: LiveGame, seat: int) -> list[int]:
    """The moves at which ``seat`` decided (a choice among several actions), from the game's history."""
    shadow = Game.from_config(live.game.config, seed=live.game.seed, auto_forced=False)
    moves = []
    for index, action in enumerate(live.game.history):
        if shadow.current_player == seat and len(shadow.legal_actions()) > 1:
            moves.append(index)
        shadow.apply(action)
    return moves


def test_an_action_without_moves_is_a_422(client: TestClient) -> None:
    game = new_game(client, players=2, seat=0, opponents=["random"], seed=1)
    response = client.post(game.path("/actions"), json={"action": 0}, headers=game.headers)
    assert response.status_code == 422 and "moves is missing" in response.json()["error"]


# ----------------------------------------------------------------------------- requests name no file
def created(client: TestClient, opponent: str) -> Any:
    return client.post("/api/games", json={"players": 2, "seat": 0, "opponents": [opponent]})


def server_paths(tmp_path: Path) -> list[str]:
    return [str(tmp_path), str(Path.home()), str(Path.cwd()), str(Path(__file__).resolve().parents[2])]


def test_a_spec_naming_a_file_is_refused_without_a_policy_folder(tmp_path: Path) -> None:
    policy = tmp_path / "policy.npz"
    shutil.copy(SHIPPED_NETWORKS[2], policy)
    with TestClient(create_app(GameStore())) as client:
        for spec in (f"network:path={policy}", "network:path=policy.npz", f"ppo:path={tmp_path}/x.zip"):
            response = created(client, spec)
            assert response.status_code == 422 and "names a file" in response.json()["error"], spec
            assert "--policy-dir" in response.json()["error"]


def test_a_policy_folder_allows_its_npz_files_only(tmp_path: Path) -> None:
    folder = tmp_path / "policies"
    folder.mkdir()
    shutil.copy(SHIPPED_NETWORKS[2], folder / "mine.npz")
    shutil.copy(SHIPPED_NETWORKS[2], tmp_path / "outside.npz")
    (folder / "model.zip").write_bytes(b"PK not really a policy")
    (folder / "escape.npz").symlink_to(tmp_path / "outside.npz")
    store = GameStore(rules=BotRules(policy_dir=folder))
    with TestClient(create_app(store)) as client:
        refused = {
            "network:path=../outside.npz": "inside the server's policy folder",
            f"network:path={tmp_path / 'outside.npz'}": "inside the server's policy folder",
            "network:path=escape.npz": "inside the server's policy folder",
            "ppo:path=model.zip": "a pickle",
            "network:path=missing.npz": "no such file",
        }
        for spec, reason in refused.items():
            response = created(client, spec)
            assert response.status_code == 422 and reason in response.json()["error"], (spec, response.json())
            assert not any(path in response.text for path in server_paths(tmp_path)), response.text
        assert created(client, "network:path=mine.npz").status_code == 201
    store.stop()


def test_no_answer_shows_a_server_path(tmp_path: Path) -> None:
    folder = tmp_path / "policies"
    folder.mkdir()
    (folder / "broken.npz").write_bytes(b"not a network")
    store = GameStore(rules=BotRules(policy_dir=folder))
    with TestClient(create_app(store)) as client:
        response = created(client, "network:path=broken.npz")
    assert response.status_code == 422 and HIDDEN_PATH in response.json()["error"]
    assert not any(path in response.text for path in server_paths(tmp_path)), response.text


# ----------------------------------------------------------------------------- no absurd number
ABSURD = {
    "hoarder:aggression=1e308": "aggression must be a number from 0.0 to 10.0, got 1e+308",
    "value:placement_samples=0": "placement_samples must be an int from 1 to 1000, got 0",
    "value:denial=nan": "denial must be a number from 0.0 to 10.0, got nan",
    "ismcts:time_limit=nan": "time_limit must be a number from 0.001 to 3600.0 or None, got nan",
    "ismcts:iterations=100000000": "iterations must be an int from 1 to 1000000 or None, got 100000000",
    "ismcts:gate=nan": "gate must be a number from 0.0 to inf, got nan",
    "ismcts:bid_raises=1-99": "bid_raises must be an int from 1 to 66, got 99",
}


@pytest.mark.parametrize(("spec", "message"), ABSURD.items())
def test_an_absurd_number_is_refused_naming_its_range(client: TestClient, spec: str, message: str) -> None:
    response = created(client, spec)
    assert response.status_code == 422 and message in response.json()["error"]
    with pytest.raises(AgentSpecError, match=message.replace("+", r"\+")):  # a tournament's spec too
        build_agent(parse_agent_spec(spec))


@pytest.mark.parametrize(
    ("spec", "limit"),
    [
        ("ismcts", 2.0),
        ("ismcts:iterations=1000000", 2.0),
        ("ismcts:time_limit=100", 2.0),
        ("ismcts:time_limit=0.5", 0.5),
    ],
)
def test_a_search_gets_the_bot_seconds_as_its_time_limit(spec: str, limit: float) -> None:
    """A search built for a request stops within ``--bot-seconds`` (or a smaller limit of its own)."""
    bot = BotRules(bot_seconds=2.0).build(spec)
    assert isinstance(bot, SearchAgent) and bot.options.time_limit == limit


def test_every_heuristic_default_lies_in_its_range() -> None:
    from agents.heuristics import HoarderAgent

    for key, default in HoarderAgent.defaults.items():
        if default is not None:
            low, high = HEURISTIC_RANGES[key]
            assert low <= default <= high, key


# ----------------------------------------------------------------------------- a bot's fault ends its game
class CrashingAgent:
    """Plays the first legal action, and raises at its third decision."""

    name = "crashing"

    def start_game(self, seat: int, num_players: int, seed: int | None = None) -> None:
        self.decisions = 0

    def act(self, observation: AgentObservation) -> int:
        self.decisions += 1
        if self.decisions == 3:
            raise ZeroDivisionError(f"no move from {Path(__file__).resolve()}")
        return observation.legal_actions[0]


def test_a_bot_that_raises_ends_its_game_in_an_error_state(tmp_path: Path) -> None:
    store = GameStore(data=DataFolder(tmp_path), rules=BotRules(import_paths=True), max_games=1)
    with TestClient(create_app(store)) as client:
        game = new_game(client, players=2, seat=0, opponents=[f"{HERE}.CrashingAgent"], seed=2)
        while game.view["error"] is None:
            play(client, game, game.view["legal_actions"][0]["action"])
        error = game.view["error"]
        assert "CrashingAgent" in error and "seat 1 crashed" in error and "ZeroDivisionError" in error
        assert HIDDEN_PATH in error and str(tmp_path) not in error
        for _ in range(3):  # every later request answers, none with a 500
            again = client.get(game.path(), headers=game.headers)
            assert again.status_code == 200 and again.json()["error"] == error and not again.json()["your_turn"]
        refused = client.post(game.path("/actions"), json=body(game, 0), headers=game.headers)
        assert refused.status_code == 409 and "stopped by an error" in refused.json()["error"]
        assert client.get(game.path("/hint"), headers=game.headers).status_code == 409
        log = json.loads((tmp_path / "failed" / f"{game.game_id}.json").read_text())
        assert log["metadata"]["serve"]["error"] == error and log["num_actions"] == game.view["moves"]
        assert not (tmp_path / "open" / f"{game.game_id}.json").exists()
        assert new_game(client, players=2, seat=0, opponents=["random"], seed=1)  # its slot is free (max 1)
    store.stop()
    assert GameStore(data=DataFolder(tmp_path)).resume() == []


class SilentAgent:
    """Never chooses until the test lets it (a search that would not stop)."""

    name = "silent"
    release = threading.Event()

    def start_game(self, seat: int, num_players: int, seed: int | None = None) -> None:
        pass

    def act(self, observation: AgentObservation) -> int:
        assert self.release.wait(timeout=60)
        return observation.legal_actions[0]


def test_a_bot_that_overruns_ends_its_game_and_frees_its_slot(tmp_path: Path) -> None:
    SilentAgent.release.clear()
    store = GameStore(data=DataFolder(tmp_path), rules=BotRules(0.1, import_paths=True), max_thinking=1)
    store.thinker.deadline = 0.3  # the test's own deadline: no need to wait the real overrun allowance
    try:
        with TestClient(create_app(store)) as client:
            games = [new_game(client, players=2, seat=1, opponents=[f"{HERE}.SilentAgent"]) for _ in range(2)]
            for game in games:  # one slot: the second bot thought only once the first game had ended
                assert "did not choose within 0.3 s" in game.view["error"]
                assert game.view["moves"] == 0 and not game.view["thinking"]
                assert (tmp_path / "failed" / f"{game.game_id}.json").exists()
    finally:
        SilentAgent.release.set()
        store.stop()


# ----------------------------------------------------------------------------- on disk
def test_the_data_folder_and_every_log_are_private(tmp_path: Path) -> None:
    old = os.umask(0o022)
    try:
        root = tmp_path / "games"
        store = GameStore(data=DataFolder(root))
        with TestClient(create_app(store)) as client:
            playing = new_game(client, players=2, seat=0, opponents=["random"], seed=1)
            finished = new_game(client, players=2, seat=0, opponents=["random"], seed=2)
            while not finished.view["finished"]:
                play(client, finished, finished.view["legal_actions"][0]["action"])
        store.stop()
    finally:
        os.umask(old)
    folders = [root, *(path for path in root.iterdir())]
    assert {stat.S_IMODE(folder.stat().st_mode) for folder in folders} == {0o700}
    logs = [root / "open" / f"{playing.game_id}.json", root / "finished" / f"{finished.game_id}.json"]
    assert [stat.S_IMODE(log.stat().st_mode) for log in logs] == [0o600, 0o600]


def test_a_game_whose_creation_was_never_answered_is_not_resumed(tmp_path: Path) -> None:
    store = GameStore(data=DataFolder(tmp_path))
    store.reserve()
    live, _ = store.new_game(NewGame(2, 1, ("value",), seed=4))  # built; its answer never sent
    store.add(live)
    with live.state_lock:
        store.thinker.start(live)
    while store.thinker.thinking(live):
        threading.Event().wait(0.01)
    assert len(live.game.history) > 0 and not list(tmp_path.rglob("*.json"))  # the bots moved, nothing written
    assert GameStore(data=DataFolder(tmp_path)).resume() == [] and not list(tmp_path.rglob("*.json"))
    store.confirm(live)  # the answer is sent: from now on it is saved
    assert load_log(tmp_path / "open" / f"{live.game_id}.json").history == live.game.history
    store.stop()


def test_a_log_is_replaced_whole_never_written_in_place(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    data = DataFolder(tmp_path)
    data.save("g", {"version": 1})
    target = tmp_path / "open" / "g.json"
    inode = target.stat().st_ino
    data.save("g", {"version": 2})
    assert target.stat().st_ino != inode and json.loads(target.read_text()) == {"version": 2}

    def full_disk(source: object, destination: object) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(storage.os, "replace", full_disk)
    with pytest.raises(OSError, match="No space"):
        data.save("g", {"version": 3})
    assert json.loads(target.read_text()) == {"version": 2} and sorted(os.listdir(tmp_path / "open")) == ["g.json"]


def test_a_restarted_server_does_not_resume_a_finished_game(tmp_path: Path) -> None:
    """The server stopped between writing the finished log and removing the open one."""
    store = GameStore(data=DataFolder(tmp_path))
    with TestClient(create_app(store)) as client:
        game = new_game(client, players=2, seat=0, opponents=["random"], seed=6)
        for _ in range(3):
            play(client, game, game.view["legal_actions"][0]["action"])
        open_log = (tmp_path / "open" / f"{game.game_id}.json").read_text()
        while not game.view["finished"]:
            play(client, game, game.view["legal_actions"][0]["action"])
    store.stop()
    (tmp_path / "open" / f"{game.game_id}.json").write_text(open_log)
    again = GameStore(data=DataFolder(tmp_path))
    assert again.resume() == [] and again.games == {}
    with TestClient(create_app(again)) as client:
        assert client.get(game.path(), headers=game.headers).json() == game.view  # served as finished


# ----------------------------------------------------------------------------- what the other tests did not pin
class RecordingObserver:
    """Plays the first legal action and keeps every view it is shown."""

    name = "recording"
    seen: ClassVar[list[tuple[int, PlayerView]]] = []

    def start_game(self, seat: int, num_players: int, seed: int | None = None) -> None:
        self.seat = seat

    def observe(self, view: PlayerView) -> None:
        RecordingObserver.seen.append((self.seat, view))

    def act(self, observation: AgentObservation) -> int:
        return observation.legal_actions[0]


def test_a_bot_that_follows_the_game_is_shown_its_own_seat_only(client: TestClient, store: GameStore) -> None:
    """An Observer bot sees every move as its own seat does, never as the player's seat (cards included)."""
    RecordingObserver.seen.clear()
    game = new_game(client, players=3, seat=0, opponents=[f"{HERE}.RecordingObserver", "random"], seed=8)
    for _ in range(8):
        play(client, game, game.view["legal_actions"][0]["action"])
    live = store.games[game.game_id]
    shadow = Game.from_config(live.game.config, seed=8, auto_forced=False)
    expected = []
    for action in live.game.history:
        shadow.apply(action)
        expected.append(player_view(shadow.state, 1))
    assert [seat for seat, _ in RecordingObserver.seen] == [1] * len(expected)
    assert [view for _, view in RecordingObserver.seen] == expected


class CountingAgent:
    """Waits for the test's signal, then plays the first legal action; counts its decisions."""

    name = "counting"
    go = threading.Event()
    decisions: ClassVar[list[int]] = []

    def start_game(self, seat: int, num_players: int, seed: int | None = None) -> None:
        pass

    def act(self, observation: AgentObservation) -> int:
        assert self.go.wait(timeout=60)
        CountingAgent.decisions.append(len(observation.legal_actions))
        return observation.legal_actions[0]


def test_two_requests_at_once_never_move_the_bots_twice(client: TestClient, store: GameStore) -> None:
    """Requests that let the bots move while they think start no second bot thread."""
    CountingAgent.go.clear()
    CountingAgent.decisions.clear()
    made = client.post("/api/games", json={"players": 2, "seat": 1, "opponents": [f"{HERE}.CountingAgent"], "seed": 3})
    game = Seat(made.json()["game_id"], {"Authorization": f"Bearer {made.json()['token']}"}, made.json()["view"])
    start = threading.Barrier(4)
    answers: list[int] = []

    def ask() -> None:
        start.wait()
        answers.append(client.get(game.path(), headers=game.headers).status_code)

    threads = [threading.Thread(target=ask) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    CountingAgent.go.set()
    settle(client, game)
    live = store.games[game.game_id]
    assert answers == [200] * 4 and game.view["your_turn"] and live.error is None
    assert len(CountingAgent.decisions) == len(decisions(live, 0)) > 0  # one act per decision of the bot


def test_the_players_own_requests_keep_its_game_from_expiring(tmp_path: Path) -> None:
    now = [0.0]
    store = GameStore(data=DataFolder(tmp_path), idle_seconds=60, clock=lambda: now[0])
    with TestClient(create_app(store)) as client:
        game = new_game(client, players=2, seat=0, opponents=["random"], seed=1)
        for step in range(1, 4):  # asked every 50 s: 150 s in all, never 60 s idle
            now[0] = 50.0 * step
            play(client, game, game.view["legal_actions"][0]["action"])
        now[0] = 150.0 + 59
        assert client.get(game.path(), headers=game.headers).status_code == 200
        now[0] = 209.0 + 61
        assert client.get(game.path(), headers=game.headers).status_code == 404
    store.stop()


def test_max_games_counts_the_unfinished_games_only(tmp_path: Path) -> None:
    store = GameStore(max_games=1, rules=BotRules(import_paths=True))
    with TestClient(create_app(store)) as client:
        finished = new_game(client, players=2, seat=0, opponents=["random"], seed=2)
        refused = created(client, "random")
        assert refused.status_code == 503 and "--max-games 1" in refused.json()["error"]
        while not finished.view["finished"]:
            play(client, finished, finished.view["legal_actions"][0]["action"])
        playing = new_game(client, players=2, seat=0, opponents=["random"], seed=3)  # the finished one counts not
        assert created(client, "random").status_code == 503  # this one does
        assert playing.view["your_turn"] and len(store.games) == 2
    store.stop()


def test_the_replay_page_of_a_game_being_played_is_refused(client: TestClient) -> None:
    """It would show every seat's cards."""
    game = new_game(client, players=2, seat=0, opponents=["random"], seed=4)
    for path in ("/replay", "/log"):
        response = client.get(game.path(path), headers=game.headers)
        assert response.status_code == 409 and "not over yet" in response.json()["error"], path
