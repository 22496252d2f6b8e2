"""Game logs: every game is its config, seed, chance outcomes and actions as JSON,
replays exactly, and any malformed or inconsistent log raises GameLogError naming the problem.
"""

from __future__ import annotations

import copy
import json
import random
from pathlib import Path
from typing import Any, Final

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from biblios_env.actions import PASS, PAY_BASE, REFUSE
from biblios_env.cards import CARD_VALUE, IS_GOLD
from biblios_env.engine import Decision, Game
from biblios_env.engine import log as game_log
from biblios_env.engine.log import (
    ACTION_LAYOUT,
    LOG_VERSION,
    GameLogError,
    game_digest,
    load_log,
    replay,
    save_log,
    to_log,
)

PLAYER_COUNTS: Final = (2, 3, 4)
PENALTIES: Final = ("standard", "bluffs")


# --------------------------------------------------------------------------- helpers
def choose(rng: random.Random, game: Game, wild: bool) -> int:
    """A legal action; ``wild`` bids anything (many penalties), otherwise play is thrifty."""
    legal = game.legal_actions()
    if wild or len(legal) == 1:
        return rng.choice(legal)
    if game.state.decision == Decision.BID:
        return PASS if rng.random() < 0.5 else legal[min(len(legal) - 1, 1 + int(rng.expovariate(0.8)))]
    if game.state.decision == Decision.PAY and len(legal) > 1 and rng.random() < 0.9:
        return rng.choice([action for action in legal if action != REFUSE])
    return rng.choice(legal)


def play(game: Game, seed: int, *, wild: bool = False, stop: int | None = None) -> Game:
    """Play ``game`` on with random legal actions, to the end or to ``stop`` decisions."""
    rng = random.Random(seed)
    while not game.is_over and (stop is None or len(game.history) < stop):
        game.apply(choose(rng, game, wild))
    return game


def through_json(log: dict[str, Any]) -> dict[str, Any]:
    return json.loads(json.dumps(log, allow_nan=False))


def assert_same_game(replayed: Game, original: Game) -> None:
    assert replayed.snapshot() == original.snapshot()
    assert replayed.history == original.history
    assert replayed.state.chance == original.state.chance
    assert replayed.legal_actions() == original.legal_actions()
    assert replayed.config == original.config and replayed.seed == original.seed
    assert replayed.deck == original.deck


def assert_log_error(log: Any, *fragments: str) -> str:
    """``replay(log)`` raises GameLogError whose message holds every fragment (case-insensitive)."""
    with pytest.raises(GameLogError) as error:
        replay(log)
    message = str(error.value)
    for fragment in fragments:
        assert fragment.lower() in message.lower(), f"{fragment!r} not named in: {message}"
    return message


def _finished(num_players: int, penalty: str, seed: int, *, wild: bool, **config: Any) -> Game:
    return play(Game(num_players, seed=seed, penalty=penalty, **config), seed, wild=wild)


# --------------------------------------------------------------------------- round trips
@pytest.mark.parametrize("wild", [False, True], ids=["thrifty", "wild"])
@pytest.mark.parametrize("penalty", PENALTIES)
@pytest.mark.parametrize("num_players", PLAYER_COUNTS)
def test_finished_game_round_trips_through_json(num_players: int, penalty: str, wild: bool) -> None:
    for seed in range(6):
        game = _finished(num_players, penalty, 100 * seed + num_players, wild=wild, first_player=seed % num_players)
        log = to_log(game, agents=["random"] * num_players, note="round trip")
        assert log["result"] == {"vp": game.state.vp, "winners": game.state.winners}
        text = json.dumps(log, allow_nan=False)
        replayed = replay(json.loads(text))
        assert_same_game(replayed, game)
        assert replayed.is_over
        assert json.dumps(to_log(replayed, agents=["random"] * num_players, note="round trip")) == text


@pytest.mark.parametrize("num_players", PLAYER_COUNTS)
def test_round_trip_of_every_config_option(num_players: int) -> None:
    """strict bids, a later first player, the placed auction order and a given deck all replay."""
    deck = list(Game(num_players, seed=3).deck)
    random.Random(num_players).shuffle(deck)
    for options in (
        {"strict_bids": True},
        {"first_player": num_players - 1, "penalty": "bluffs"},
        {"auction_order": "placed"},
        {"deck": deck, "auction_order": "placed", "first_player": 1},
        {"deck": deck, "penalty": "bluffs", "strict_bids": True},
    ):
        game = play(Game(num_players, seed=11, **options), 5, wild=True)
        log = through_json(to_log(game))
        assert log["deck_given"] == ("deck" in options)
        replayed = replay(log)
        assert_same_game(replayed, game)
        assert replayed.deck_given == game.deck_given
        assert to_log(replayed) == log


@pytest.mark.parametrize("penalty", PENALTIES)
@pytest.mark.parametrize("num_players", PLAYER_COUNTS)
def test_save_and_load_log(tmp_path: Path, num_players: int, penalty: str) -> None:
    game = _finished(num_players, penalty, 7, wild=True)
    path = save_log(game, tmp_path / "game.json", agents="random")
    assert path == tmp_path / "game.json"
    assert json.loads(path.read_text()) == through_json(to_log(game, agents="random"))
    assert_same_game(load_log(path), game)
    assert_same_game(load_log(str(path)), game)


@pytest.mark.parametrize("penalty", PENALTIES)
@pytest.mark.parametrize("num_players", PLAYER_COUNTS)
def test_partial_log_replays_to_the_same_position_and_plays_on_alike(num_players: int, penalty: str) -> None:
    """A log of an unfinished game replays to the same position, with the same generator
    state: continuing both with the same actions meets the same chance events."""
    full = _finished(num_players, penalty, 21, wild=True)
    assert any(kind == "penalty" for kind, _ in full.state.chance)
    length = len(full.history)
    for cut in (0, 1, 7, length // 3, length // 2, length - 2):
        game = Game(num_players, seed=21, penalty=penalty)
        while len(game.history) < cut:
            game.apply(full.history[len(game.history)])
        log = through_json(to_log(game))
        assert "result" not in log
        replayed = replay(log)
        assert_same_game(replayed, game)
        assert not replayed.is_over
        play(game, cut, wild=True)
        play(replayed, cut, wild=True)
        assert_same_game(replayed, game)


def test_partial_log_of_a_game_with_exposed_forced_decisions() -> None:
    """With ``auto_forced=False`` a position at a forced decision replays to that position."""
    game = Game(3, seed=8, auto_forced=False)
    play(game, 8, stop=40)
    while len(game.legal_actions()) != 1:
        game.apply(game.legal_actions()[0])
    replayed = replay(through_json(to_log(game)), auto_forced=False)
    assert_same_game(replayed, game)
    assert replayed.auto_forced is False


# --------------------------------------------------------------------------- corruption
@pytest.fixture(scope="module")
def base_game() -> Game:
    """A finished 3-player game with penalties, auctions and church cards."""
    for seed in range(50):
        game = _finished(3, "standard", seed, wild=True)
        kinds = [kind for kind, _ in game.state.chance]
        if kinds.count("penalty") >= 3:
            return game
    raise AssertionError("no game with three penalties found")


@pytest.fixture()
def log(base_game: Game) -> dict[str, Any]:
    return through_json(to_log(base_game, agents="random"))


def test_base_log_replays(log: dict[str, Any], base_game: Game) -> None:
    assert_same_game(replay(log), base_game)


@pytest.mark.parametrize(
    ("field", "value", "named"),
    [
        ("format", "chess-pgn", "format"),
        ("format", None, "format"),
        ("version", LOG_VERSION + 1, "version"),
        ("version", 0, "version"),
        ("version", "1", "version"),
        ("action_layout", 266, "action_layout"),
        ("action_layout", None, "action_layout"),
        ("seed", "21", "seed"),
        ("seed", -1, "seed"),
        ("seed", 2.0, "seed"),
        ("seed", True, "seed"),
        ("config", [], "config"),
        ("chance", [], "chance"),
        ("actions", {}, "actions"),
        ("actions", "0 1 2", "actions"),
    ],
)
def test_wrong_top_level_value_is_rejected(log: dict[str, Any], field: str, value: Any, named: str) -> None:
    log[field] = value
    assert_log_error(log, named)


@pytest.mark.parametrize(
    "key",
    [
        *("format", "version", "action_layout", "config", "seed"),
        *("deck_given", "chance", "actions", "num_actions", "digest"),
    ],
)
def test_missing_top_level_key_is_named(log: dict[str, Any], key: str) -> None:
    """Every entry ``to_log`` writes (but the optional result and metadata) must be there."""
    del log[key]
    assert_log_error(log, key)


@pytest.mark.parametrize("key", ["deck", "removed", "events"])
def test_missing_chance_key_is_named(log: dict[str, Any], key: str) -> None:
    del log["chance"][key]
    assert_log_error(log, key)


def test_log_that_is_not_an_object_is_rejected() -> None:
    for value in ([], "log", 3, None):
        assert_log_error(value, "object")


@pytest.mark.parametrize("key", ["num_players", "penalty", "strict_bids", "first_player", "auction_order"])
def test_missing_config_key_is_named(key: str) -> None:
    """A config without one of its keys must not silently replay under a default rule."""
    game = play(
        Game(3, seed=4, penalty="bluffs", strict_bids=True, first_player=2, auction_order="placed"), 4, wild=True
    )
    log = through_json(to_log(game))
    del log["config"][key]
    assert_log_error(log, key)


def test_unknown_config_key_is_named(log: dict[str, Any]) -> None:
    log["config"]["speed"] = "fast"
    assert_log_error(log, "unknown", "speed")


@pytest.mark.parametrize(
    ("key", "value"),
    [
        ("num_players", 5),
        ("num_players", "3"),
        ("penalty", "harsh"),
        ("strict_bids", "yes"),
        ("first_player", 3),
        ("first_player", -1),
        ("auction_order", "random"),
    ],
)
def test_invalid_config_value_is_named(log: dict[str, Any], key: str, value: Any) -> None:
    log["config"][key] = value
    assert_log_error(log, key)


def test_other_seed_is_rejected(log: dict[str, Any]) -> None:
    log["seed"] += 1
    assert_log_error(log, "deck", "seed")


def test_tampered_deck_is_rejected(log: dict[str, Any]) -> None:
    deck = log["chance"]["deck"]
    deck[0], deck[5] = deck[5], deck[0]
    assert_log_error(log, "deck")


def test_tampered_deck_with_deck_given_is_rejected(base_game: Game) -> None:
    """With a given deck the deck is the input: swapping in a removed card changes the removal,
    and a reordered deck replays to another game whose result or events differ."""
    game = play(Game(3, seed=2, deck=list(base_game.deck)), 2, wild=True)
    log = through_json(to_log(game))
    swapped = copy.deepcopy(log)
    deck, removed = swapped["chance"]["deck"], swapped["chance"]["removed"]
    index = next(i for i, card in enumerate(deck) if not IS_GOLD[card])
    other = next(card for card in removed if not IS_GOLD[card])
    deck[index] = other
    assert_log_error(swapped, "removed")
    reordered = copy.deepcopy(log)
    reordered["chance"]["deck"].reverse()
    with pytest.raises(GameLogError):
        replay(reordered)
    invalid = copy.deepcopy(log)
    invalid["chance"]["deck"][1] = invalid["chance"]["deck"][0]
    assert_log_error(invalid, "deck", "duplicate")


def test_tampered_removed_list_is_rejected(log: dict[str, Any]) -> None:
    removed = log["chance"]["removed"]
    removed[0] = log["chance"]["deck"][0]
    assert_log_error(log, "removed")


def test_reordered_removed_list_is_rejected(log: dict[str, Any]) -> None:
    log["chance"]["removed"].reverse()
    assert_log_error(log, "removed")


def _illegal_at(log: dict[str, Any], index: int) -> int:
    """An action id that is not legal at decision ``index`` of the logged game."""
    game = Game(**log["config"], seed=log["seed"], auto_forced=False)
    for action in log["actions"][:index]:
        game.apply(action)
    legal = set(game.legal_actions())
    return next(action for action in (265, 244, 90, 0, 3, 157, 130) if action not in legal)


@pytest.mark.parametrize("where", [0, 0.3, 0.6, 0.95, 1.0])
def test_action_changed_to_an_illegal_one_names_its_index(log: dict[str, Any], where: float) -> None:
    index = min(int(where * len(log["actions"])), len(log["actions"]) - 1)
    bad = _illegal_at(log, index)
    log["actions"][index] = bad
    assert_log_error(log, f"action #{index}", f"action {bad}")


@pytest.mark.parametrize("value", ["3", 3.0, None, True, [3], {"action": 3}])
def test_non_int_action_names_its_index(log: dict[str, Any], value: Any) -> None:
    index = len(log["actions"]) // 2
    log["actions"][index] = value
    assert_log_error(log, f"action #{index}", "int")


def test_extra_action_after_the_end_names_its_index(log: dict[str, Any]) -> None:
    """Padding is a count mismatch; with the count edited too, the extra action itself is named."""
    index = len(log["actions"])
    log["actions"].append(0)
    assert_log_error(log, f"says it holds {index} actions", f"has {index + 1}")
    log["num_actions"] += 1
    assert_log_error(log, f"action #{index}", "game is over")


@pytest.mark.parametrize("drop", [1, 2, 100])
def test_truncated_actions_are_reported_as_a_count_mismatch(log: dict[str, Any], drop: int) -> None:
    """A finished game's log that lost its last actions says so, whatever else no longer matches."""
    length = len(log["actions"])
    del log["actions"][-drop:]
    assert_log_error(log, f"says it holds {length} actions", f"has {length - drop}")


@pytest.mark.parametrize(
    "tamper",
    ["drop_last", "drop_first", "extra", "duplicate", "penalty_card", "auction_order", "kind", "empty"],
)
def test_tampered_chance_events_are_rejected(log: dict[str, Any], tamper: str) -> None:
    events = log["chance"]["events"]
    penalty = next(event for event in events if event[0] == "penalty" and event[1])
    if tamper == "drop_last":
        events.pop()
    elif tamper == "drop_first":
        events.pop(0)
    elif tamper == "extra":
        events.append(["penalty", [1]])
    elif tamper == "duplicate":
        events.append(copy.deepcopy(events[-1]))
    elif tamper == "penalty_card":
        penalty[1][0] = (penalty[1][0] + 1) % 87
    elif tamper == "auction_order":
        events[0][1].reverse()
    elif tamper == "kind":
        penalty[0] = "gift"
    else:
        events.clear()
    assert_log_error(log, "events")


@pytest.mark.parametrize("tamper", ["vp", "winners", "empty", "not_a_dict", "on_unfinished"])
def test_tampered_result_is_rejected(log: dict[str, Any], tamper: str) -> None:
    result = log["result"]
    if tamper == "vp":
        result["vp"][0] += 1
    elif tamper == "winners":
        result["winners"] = [seat for seat in range(3) if seat not in result["winners"]] or [0, 1]
    elif tamper == "empty":
        log["result"] = {}
    elif tamper == "not_a_dict":
        log["result"] = "player_0 won"
    else:
        log["actions"] = log["actions"][:50]
        log["num_actions"] = 50
        log["chance"]["events"] = []
    assert_log_error(log, "result")


# --------------------------------------------------------------------------- edits that still replay
def _replays_through(log: dict[str, Any], index: int, action: int) -> bool:
    """Whether the logged actions, with ``action`` at ``index``, are all legal (the edit replays)."""
    game = Game(**log["config"], seed=log["seed"], auto_forced=False)
    for position, logged in enumerate(log["actions"]):
        chosen = action if position == index else logged
        if chosen not in game.legal_actions():
            return False
        game.apply(chosen)
    return True


def _same_value_payment_edits(log: dict[str, Any]) -> list[tuple[int, int]]:
    """(index, other action) pairs: a logged payment card swapped for another gold card of the
    same value that was also payable then, such that the rest of the game still replays."""
    game = Game(**log["config"], seed=log["seed"], auto_forced=False)
    edits = []
    for index, action in enumerate(log["actions"]):
        if PAY_BASE <= action < REFUSE:
            card = action - PAY_BASE
            for other in game.legal_actions():
                twin = other - PAY_BASE
                same_value = PAY_BASE <= other < REFUSE and IS_GOLD[twin] and CARD_VALUE[twin] == CARD_VALUE[card]
                if same_value and other != action and _replays_through(log, index, other):
                    edits.append((index, other))
        game.apply(action)
    return edits


def test_paying_with_another_gold_card_of_the_same_value_is_rejected() -> None:
    """The issue's example: such a log replays legally, with the same chance events and result,
    into a different game; the digest of the replayed game tells it apart."""
    edits = []
    for seed in range(20):
        log = through_json(to_log(_finished(3, "standard", seed, wild=False)))
        edits = _same_value_payment_edits(log)
        if edits:
            break
    assert edits, "no game with a same-value payment swap found"
    for index, other in edits[:5]:
        edited = copy.deepcopy(log)
        edited["actions"][index] = other
        assert_log_error(edited, "digest", "not the recorded one")


def test_swapping_two_payment_picks_is_rejected() -> None:
    """Paying the same cards in another order reaches a similar position by another path."""
    for seed in range(30):
        log = through_json(to_log(_finished(3, "standard", seed, wild=False)))
        actions = log["actions"]
        pairs = [
            i
            for i in range(len(actions) - 1)
            if PAY_BASE <= actions[i] < REFUSE and PAY_BASE <= actions[i + 1] < REFUSE and actions[i] != actions[i + 1]
        ]
        for index in pairs:
            edited = copy.deepcopy(log)
            edited["actions"][index], edited["actions"][index + 1] = actions[index + 1], actions[index]
            try:
                replay(edited)
            except GameLogError as error:
                assert "digest" in str(error) or "does not replay" in str(error)
                continue
            raise AssertionError(f"swapped payment picks #{index}, #{index + 1} replayed without an error")
        if pairs:
            return
    raise AssertionError("no game with two payment picks in a row found")


@pytest.mark.parametrize("num_players", PLAYER_COUNTS)
def test_any_other_legal_last_action_of_a_partial_log_is_rejected(num_players: int) -> None:
    """A partial log's last action can be changed to any other legal one and still replay: the
    digest must tell every such game from the recorded one (a few also change a chance event)."""
    changed = by_digest = 0
    for stop in range(20, 200, 12):
        game = play(Game(num_players, seed=num_players, auto_forced=False), num_players, wild=True, stop=stop)
        log = through_json(to_log(game))
        before = Game(num_players, seed=num_players, auto_forced=False)
        for action in log["actions"][:-1]:
            before.apply(action)
        for other in before.legal_actions():
            if other != log["actions"][-1]:
                edited = copy.deepcopy(log)
                edited["actions"][-1] = other
                by_digest += "digest" in assert_log_error(edited)
                changed += 1
    assert changed > 10 and by_digest > changed / 2


def test_digest_tampering_is_named(log: dict[str, Any]) -> None:
    log["digest"] = "0" * 64
    assert_log_error(log, "digest")
    log["digest"] = 12
    assert_log_error(log, "digest", "str")


def test_digest_covers_the_position_and_the_generator(base_game: Game) -> None:
    """Games that made the same moves share a digest; another move or another generator state does not."""
    assert game_digest(base_game) == game_digest(replay(through_json(to_log(base_game))))
    partial = play(Game(3, seed=6), 6, stop=40)
    other = partial.clone()
    assert game_digest(other) == game_digest(partial)
    other.state.rng.random()  # the same position, but the generator has moved on
    assert game_digest(other) != game_digest(partial)


def test_old_version_log_gets_a_clear_error(log: dict[str, Any]) -> None:
    log["version"] = 1
    del log["digest"]
    assert_log_error(log, "version 1", "older format", "versions [2, 3, 4]")


# --------------------------------------------------------------------------- the action layout
def test_log_records_the_action_layout(base_game: Game) -> None:
    log = to_log(base_game)
    assert log["version"] == LOG_VERSION == 4
    assert log["action_layout"] == ACTION_LAYOUT
    assert ACTION_LAYOUT.startswith("actions-266-")


def test_log_for_another_action_layout_is_refused_naming_both(log: dict[str, Any]) -> None:
    """Checked before any action is replayed: under another table the ids mean other moves."""
    log["action_layout"] = "actions-266-000000000000"
    assert_log_error(log, "action layout", "actions-266-000000000000", ACTION_LAYOUT, "CHANGELOG.md")


def test_version_2_log_without_an_action_layout_still_replays(log: dict[str, Any], base_game: Game) -> None:
    """Logs written before the layout was recorded stay readable: their digest checks them."""
    log["version"] = 2
    del log["action_layout"], log["config"]["preset"]
    assert_same_game(replay(log), base_game)


def test_version_3_log_has_no_preset_and_replays_as_the_standard_game(log: dict[str, Any], base_game: Game) -> None:
    """The preset option came with version 4: an older log was dealt from the standard cards."""
    assert log["config"]["preset"] == "standard"
    log["version"] = 3
    del log["config"]["preset"]
    assert_same_game(replay(log), base_game)


@pytest.mark.parametrize(("version", "change"), [(3, "keep the preset"), (4, "drop the preset")])
def test_the_config_keys_are_those_of_the_log_version(log: dict[str, Any], version: int, change: str) -> None:
    log["version"] = version
    if change == "drop the preset":
        del log["config"]["preset"]
        assert_log_error(log, "config must have exactly the keys", "missing: ['preset']")
    else:
        assert_log_error(log, "config must have exactly the keys", "unknown: [\"'preset'\"]")


def test_a_mini_preset_game_replays_from_its_log() -> None:
    game = play(Game(2, seed=8, preset="mini", strict_bids=True), 8)
    log = through_json(to_log(game))
    assert log["config"]["preset"] == "mini"
    assert_same_game(replay(log), game)


def test_version_2_log_is_still_checked_by_its_digest(log: dict[str, Any]) -> None:
    log["version"] = 2
    del log["action_layout"], log["config"]["preset"]
    log["digest"] = "0" * 64
    assert_log_error(log, "digest")


@pytest.mark.parametrize(
    "change",
    ["swap two meanings", "one action more", "another table text"],
)
def test_action_layout_changes_with_the_action_table(monkeypatch: pytest.MonkeyPatch, change: str) -> None:
    """The fingerprint covers what every id means, how many ids there are and the documented table."""
    if change == "swap two meanings":
        meanings = {game_log.describe(0): game_log.describe(1), game_log.describe(1): game_log.describe(0)}
        original = game_log.describe
        monkeypatch.setattr(game_log, "describe", lambda action: meanings.get(original(action), original(action)))
    elif change == "one action more":
        original = game_log.describe
        monkeypatch.setattr(game_log, "NUM_ACTIONS", game_log.NUM_ACTIONS + 1)
        monkeypatch.setattr(game_log, "describe", lambda action: "NEW" if action == 266 else original(action))
    else:
        monkeypatch.setattr(game_log, "table_markdown", lambda: "| ids | meaning |")
    assert game_log._action_layout() != ACTION_LAYOUT


# --------------------------------------------------------------------------- pathological values
HUGE: Final = 10**5000  # more digits than Python turns into text by default (sys.get_int_max_str_digits)


def deeply_nested(depth: int = 100_000) -> list:
    nested: list = []
    for _ in range(depth):
        nested = [nested]
    return nested


def _set(log: dict[str, Any], path: tuple, value: Any) -> None:
    parent = log
    for step in path[:-1]:
        parent = parent[step]
    parent[path[-1]] = value


PATHS: Final = [
    ("format",),
    ("version",),
    ("seed",),
    ("deck_given",),
    ("num_actions",),
    ("digest",),
    ("result",),
    ("config", "num_players"),
    ("config", "penalty"),
    ("config", "first_player"),
    ("chance", "deck"),
    ("chance", "removed"),
    ("chance", "events"),
    ("chance", "deck", 0),
    ("chance", "events", 0),
    ("actions",),
    ("actions", 3),
]


@pytest.mark.parametrize("path", PATHS, ids=lambda path: "-".join(map(str, path)))
@pytest.mark.parametrize("value", [HUGE, -HUGE, "deep"], ids=["huge", "minus_huge", "deep"])
def test_huge_numbers_and_deep_nesting_raise_game_log_error(log: dict[str, Any], path: tuple, value: Any) -> None:
    """A 5,000-digit number or a 100,000-deep list anywhere: GameLogError, not ValueError or RecursionError."""
    _set(log, path, deeply_nested() if value == "deep" else value)
    message = assert_log_error(log)
    assert len(message) < 1000


def test_huge_number_in_a_log_file_raises_game_log_error(tmp_path: Path, log: dict[str, Any]) -> None:
    path = tmp_path / "huge.json"
    text = json.dumps(log)
    path.write_text(text.replace(f'"seed": {log["seed"]}', '"seed": ' + "9" * 5000))
    with pytest.raises(GameLogError, match="cannot read"):
        load_log(path)


def test_deeply_nested_log_file_raises_game_log_error(tmp_path: Path) -> None:
    path = tmp_path / "deep.json"
    path.write_text('{"format": ' + "[" * 100_000 + "]" * 100_000 + "}")
    with pytest.raises(GameLogError, match="nested too deeply"):
        load_log(path)


# --------------------------------------------------------------------------- files
def test_load_log_rejects_text_that_is_not_json(tmp_path: Path) -> None:
    for name, text in (("broken.json", "{ not json"), ("empty.json", ""), ("truncated.json", '{"format": "bib')):
        path = tmp_path / name
        path.write_text(text)
        with pytest.raises(GameLogError, match="cannot read"):
            load_log(path)


def test_load_log_rejects_json_that_is_not_a_log(tmp_path: Path) -> None:
    path = tmp_path / "list.json"
    path.write_text("[1, 2, 3]")
    with pytest.raises(GameLogError, match="object"):
        load_log(path)
    path.write_text('{"format": "something else"}')
    with pytest.raises(GameLogError, match="format"):
        load_log(path)


def test_load_log_rejects_a_missing_file(tmp_path: Path) -> None:
    with pytest.raises(GameLogError, match="cannot read"):
        load_log(tmp_path / "nowhere.json")


def test_load_log_rejects_a_binary_file(tmp_path: Path) -> None:
    """Bytes that are not UTF-8 text are not JSON either: GameLogError, not UnicodeDecodeError."""
    path = tmp_path / "binary.json"
    path.write_bytes(b"\xff\xfe\x00\x81 not a log \x9c")
    with pytest.raises(GameLogError, match="cannot read"):
        load_log(path)


# --------------------------------------------------------------------------- fuzzing
def _pathological(name: str) -> Any:
    """Built on draw: hypothesis cannot show a 5,000-digit int when it describes its strategies."""
    return HUGE if name == "huge" else deeply_nested(3000)


_JSON_VALUES = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-3, 300)
    | st.sampled_from([2**63, -(2**40)])
    | st.sampled_from(["huge", "deep"]).map(_pathological)
    | st.floats(-5, 5)
    | st.text(max_size=6),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=4), inner, max_size=2),
    max_leaves=4,
)


def _paths(value: Any, path: tuple = ()) -> list[tuple]:
    """Every path (keys and indices) into a JSON value; long lists are sampled sparsely."""
    found = [path]
    if isinstance(value, dict):
        for key, inner in value.items():
            found += _paths(inner, (*path, key))
    elif isinstance(value, list):
        indices = range(len(value)) if len(value) <= 12 else sorted({0, 1, len(value) // 2, len(value) - 1})
        for index in indices:
            found += _paths(value[index], (*path, index))
    return found


@pytest.fixture(scope="module")
def fuzz_games() -> list[Game]:
    finished = play(Game(2, seed=31, strict_bids=True, first_player=1, penalty="bluffs"), 31, wild=True)
    partial = play(Game(3, seed=32), 32, wild=True, stop=300)
    return [finished, partial]


@settings(max_examples=200, deadline=None, derandomize=True, suppress_health_check=list(HealthCheck))
@given(data=st.data())
def test_any_corruption_raises_game_log_error_or_replays_the_same_game(
    fuzz_games: list[Game], data: st.DataObject
) -> None:
    """Fuzzing: change, delete or add one value anywhere in a log. Replay must raise
    GameLogError (no other exception) or rebuild exactly the logged game."""
    game = data.draw(st.sampled_from(fuzz_games))
    log = through_json(to_log(game))
    path = data.draw(st.sampled_from(_paths(log)))
    operation = data.draw(st.sampled_from(["replace", "delete", "insert"]))
    if not path:
        log = data.draw(_JSON_VALUES)
    else:
        parent = log
        for step in path[:-1]:
            parent = parent[step]
        last = path[-1]
        if operation == "delete":
            del parent[last]
        elif operation == "insert" and isinstance(parent, list):
            parent.insert(last, data.draw(_JSON_VALUES))
        elif operation == "insert":
            parent[data.draw(st.text(min_size=1, max_size=5))] = data.draw(_JSON_VALUES)
        else:
            parent[last] = data.draw(_JSON_VALUES)
    try:
        replayed = replay(log)
    except GameLogError as error:
        assert str(error)
        return
    assert_same_game(replayed, game)


def test_action_count_mismatch_is_rejected() -> None:
    """A partial log that lost its last action would replay to an earlier position; the
    recorded action count makes that truncation detectable."""
    game = play(Game(3, seed=11), seed=11, stop=120)
    log = through_json(to_log(game))
    log["actions"].pop()
    assert_log_error(log, "120 actions", "119")
