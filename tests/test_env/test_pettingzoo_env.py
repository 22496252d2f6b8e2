"""The PettingZoo AEC environment (``biblios_env.pettingzoo_env``): PettingZoo's own
conformance suites, then the public contract — agents and spaces, masks,
rewards and terminal infos, ``snapshot()``, reset options, constructor checks,
``strict_bids`` / ``expose_forced``, determinism, illegal actions and ``state()``.
"""

from __future__ import annotations

import functools
import importlib
import inspect
import json
import re
import warnings
from collections.abc import Callable
from typing import Any

import numpy as np
import pettingzoo
import pytest
from gymnasium import spaces
from pettingzoo.test import api_test, render_test, seed_test
from scenarios import two_player_split_deck

import biblios_env
from biblios_env import IllegalActionError, gym_env, raw_env
from biblios_env.actions import NUM_ACTIONS, REFUSE, describe
from biblios_env.cards import CARD_VALUE, GOLD_IDS_BY_VALUE, IS_GOLD, NUM_CARDS, card_name
from biblios_env.engine.scoring import score
from biblios_env.engine.state import Decision
from biblios_env.observations import MAX_PLAYERS, OBSERVATION_SIZE
from biblios_env.pettingzoo_env import FORFEIT_REWARD, ILLEGAL_ACTIONS

PLAYER_COUNTS = (2, 3, 4)
SNAPSHOT_KEYS = {
    "num_players",
    "phase",
    "dice",
    "current_player",
    "hands",
    "draw_pile",
    "auction_pile",
    "common_area",
    "in_play",
    "discard",
    "removed",
}
SNAPSHOT_CARD_LISTS = ("draw_pile", "auction_pile", "common_area", "in_play", "discard", "removed")
DECK_SIZE = {2: 60, 3: 72, 4: 80}


# ----------------------------------------------------------------- helpers


def random_game(
    env: Any,
    seed: int,
    *,
    on_step: Callable[[Any, str, dict], None] | None = None,
    options: dict[str, Any] | None = None,
) -> tuple[dict[str, float], dict[str, dict]]:
    """Play one game with uniformly random legal actions (seeded); return the terminal
    rewards and infos each agent sees through ``last()``."""
    env.reset(seed=seed, options=options)
    rng = np.random.default_rng(seed)
    rewards: dict[str, float] = {}
    infos: dict[str, dict] = {}
    for agent in env.agent_iter():
        observation, reward, terminated, truncated, info = env.last()
        if terminated or truncated:
            rewards[agent], infos[agent] = reward, info
            env.step(None)
            continue
        if on_step is not None:
            on_step(env, agent, observation)
        env.step(int(rng.choice(np.flatnonzero(observation["action_mask"]))))
    return rewards, infos


def lowest_legal_game(env: Any, options: dict[str, Any] | None = None, seed: int = 0) -> dict[str, float]:
    """Play one game always choosing the lowest legal action id; return the terminal rewards."""
    env.reset(seed=seed, options=options)
    rewards: dict[str, float] = {}
    for agent in env.agent_iter():
        observation, reward, terminated, truncated, _ = env.last()
        if terminated or truncated:
            rewards[agent] = reward
            env.step(None)
        else:
            env.step(int(np.flatnonzero(observation["action_mask"])[0]))
    return rewards


# Seat 0: Monks A-I (25), Holy Books A-I (11), two Gold 3. Seat 1: Pigments A-I (25), nine
# Gold 1 and two Gold 2. Removed: Gold 1 #54-55, Gold 2 #59-66, Gold 3 #69-77, church #79-86.
HAND_0 = [*range(0, 9), *range(18, 27), 67, 68]
HAND_1 = [*range(9, 18), *range(45, 54), 56, 57]
AUCTIONED = [36, 58, *range(27, 36), *range(37, 45), 78]
SPLIT_DECK = two_player_split_deck(HAND_0, HAND_1, AUCTIONED)


def valid_deck(num_players: int, seed: int = 0) -> list[int]:
    """A draw pile setup could deal (top first), taken from a seeded game."""
    return list(biblios_env.Game(num_players, seed=seed).deck)


# ----------------------------------------------------------------- PettingZoo conformance


#: What ``reset`` warns for the key PettingZoo's ``api_test`` probes it with, ``{"options": 1}``.
API_TEST_PROBE_WARNING = (
    "ignoring unknown reset option(s) ['options']; this env reads ['deck', 'auction_order', 'first_player']"
)


@pytest.mark.parametrize("illegal_action", ILLEGAL_ACTIONS)
@pytest.mark.parametrize("num_players", PLAYER_COUNTS)
def test_api_test_passes_with_warnings_as_errors(
    num_players: int, illegal_action: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    # api_test warns "Observation is not a NumPy array" and "Observation space ... should be
    # Box or Discrete" for every dict observation {"observation", "action_mask"} unless the
    # env's name is on its allowlists of PettingZoo's own classic envs that use that
    # convention (connect_four_v3, chess_v6, ...). The issue requires that convention, so
    # biblios_v1 joins those lists. api_test's first call, reset(options={"options": 1}),
    # only checks that reset takes options: the env ignores that unknown key with a warning,
    # which is let through by its exact text; every other warning is an error.
    api_test_module = importlib.import_module("pettingzoo.test.api_test")
    monkeypatch.setattr(api_test_module, "env_obs_dicts", [*api_test_module.env_obs_dicts, "biblios_v1"])
    monkeypatch.setattr(api_test_module, "env_obs_space", [*api_test_module.env_obs_space, "biblios_v1"])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        warnings.filterwarnings("ignore", message=re.escape(API_TEST_PROBE_WARNING) + r"\Z", category=UserWarning)
        # 150 cycles are enough for a whole game (2 players: ~150 steps; 4 players: ~350), so the
        # end-of-game checks (agents removed, terminal rewards) run too.
        api_test(biblios_env.env(num_players, illegal_action=illegal_action), num_cycles=150)


@pytest.mark.parametrize("num_players", PLAYER_COUNTS)
def test_api_test_passes_as_pettingzoo_ships_it(num_players: int) -> None:
    """Exactly what a user runs: no allowlists patched, no wrapper, default arguments (its
    own warnings about dict observations are allowed here, errors are not)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        api_test(biblios_env.env(num_players=num_players))


@pytest.mark.parametrize("preset", ["mini", "small"])
def test_api_test_passes_on_the_small_presets(preset: str) -> None:
    """The two-player games for exact methods are the same environment: PettingZoo's checks pass."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        api_test(biblios_env.env(num_players=2, preset=preset), num_cycles=100)
    with pytest.raises(ValueError, match=f"the '{preset}' preset is for 2 players, got 3"):
        biblios_env.env(num_players=3, preset=preset)


def test_the_api_test_probe_warning_is_the_one_reset_gives() -> None:
    """The strict api_test run lets exactly this warning through: it must stay the real text."""
    with pytest.warns(UserWarning) as caught:
        biblios_env.env(2).reset(seed=0, options={"options": 1})
    assert [str(warning.message) for warning in caught] == [API_TEST_PROBE_WARNING]


@pytest.mark.parametrize("num_players", PLAYER_COUNTS)
def test_seed_test(num_players: int) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        seed_test(functools.partial(biblios_env.env, num_players), num_cycles=150)


@pytest.mark.parametrize("num_players", PLAYER_COUNTS)
def test_render_test(num_players: int, capsys: pytest.CaptureFixture[str]) -> None:
    render_test(
        functools.partial(biblios_env.env, num_players),
        custom_tests={"ansi": lambda text: isinstance(text, str) and "Dice" in text},
    )
    assert "Dice" in capsys.readouterr().out  # "human" printed the same table


def test_registered_in_pettingzoo_registry() -> None:
    assert biblios_env.ENV_ID == "biblios/Biblios-v1"
    env = pettingzoo.make("aec", biblios_env.ENV_ID, num_players=3)
    assert isinstance(env, pettingzoo.AECEnv)
    assert isinstance(env.unwrapped, raw_env)
    assert env.unwrapped.num_players == 3
    env.reset(seed=1)
    assert env.agents == ["player_0", "player_1", "player_2"]
    assert env.metadata["name"] == "biblios_v1"


def test_metadata() -> None:
    metadata = raw_env.metadata
    assert metadata["name"] == "biblios_v1"
    assert set(metadata["render_modes"]) == {"ansi", "human"}
    assert biblios_env.env(2).metadata["name"] == "biblios_v1"


# ----------------------------------------------------------------- agents and spaces


@pytest.mark.parametrize("num_players", PLAYER_COUNTS)
def test_agents_and_spaces(num_players: int) -> None:
    env = biblios_env.env(num_players)
    names = [f"player_{seat}" for seat in range(num_players)]
    assert env.possible_agents == names
    env.reset(seed=0)
    assert env.agents == names
    assert env.agent_selection == "player_0"
    for agent in names:
        assert env.action_space(agent) == spaces.Discrete(NUM_ACTIONS) == spaces.Discrete(266)
        space = env.observation_space(agent)
        assert isinstance(space, spaces.Dict) and set(space.spaces) == {"observation", "action_mask"}
        assert space["observation"].shape == (OBSERVATION_SIZE,) == (1134,)
        assert space["observation"].dtype == np.float32
        assert space["action_mask"].shape == (266,) and space["action_mask"].dtype == np.int8
        assert env.observation_space(agent) is env.observation_space(agent)
        assert env.action_space(agent) is env.action_space(agent)


@pytest.mark.parametrize("num_players", PLAYER_COUNTS)
def test_masks_are_the_engine_legal_actions_and_zero_for_others(num_players: int) -> None:
    """At every step: each observation is in its space, the actor's mask is exactly the
    engine's legal actions (never empty), every other mask is zeros (also at the end)."""
    env = biblios_env.env(num_players)
    seen = {"steps": 0}

    def check(env: Any, agent: str, observation: dict) -> None:
        game = env.unwrapped.game
        expected = np.zeros(NUM_ACTIONS, dtype=np.int8)
        expected[game.legal_actions()] = 1
        assert expected.any(), "no legal action before the end"
        assert agent == f"player_{game.current_player}"
        for other in env.agents:
            seen_by_other = env.observe(other)
            assert env.observation_space(other).contains(seen_by_other)
            mask = seen_by_other["action_mask"]
            assert mask.dtype == np.int8 and mask.shape == (NUM_ACTIONS,)
            np.testing.assert_array_equal(mask, expected if other == agent else np.zeros(NUM_ACTIONS))
        np.testing.assert_array_equal(observation["action_mask"], expected)
        seen["steps"] += 1

    for seed in (1, 2):
        random_game(env, seed, on_step=check)
        assert env.agents == []
        for agent in env.possible_agents:
            assert not env.unwrapped.observe(agent)["action_mask"].any(), "masks after the end must be zeros"
    assert seen["steps"] > 100


# ----------------------------------------------------------------- rewards and terminal infos


@pytest.mark.parametrize("num_players", PLAYER_COUNTS)
def test_win_rewards_are_zero_sum_and_shared(num_players: int) -> None:
    env = biblios_env.env(num_players)
    for seed in range(4):
        rewards, infos = random_game(env, seed)
        assert set(rewards) == set(env.possible_agents)
        winners = infos["player_0"]["winners"]
        assert sum(rewards.values()) == pytest.approx(0.0)
        for seat, agent in enumerate(env.possible_agents):
            if len(winners) == num_players:
                expected = 0.0
            elif seat in winners:
                expected = 1 / len(winners)
            else:
                expected = -1 / (num_players - len(winners))
            assert rewards[agent] == pytest.approx(expected)
            assert isinstance(rewards[agent], float)


@pytest.mark.parametrize(
    ("vp", "winners", "expected"),
    [
        ([5, 8, 8], [1], [-0.5, 1.0, -0.5]),  # the gold tie-break chose seat 1
        ([5, 8, 8], [1, 2], [-1.0, 0.5, 0.5]),  # still tied: winners share +1
        ([4, 4, 4, 4], [0, 1, 2, 3], [0.0, 0.0, 0.0, 0.0]),  # everybody won: nothing to share
        ([9, 3, 3, 1], [0], [1.0, -1 / 3, -1 / 3, -1 / 3]),
    ],
)
def test_win_rewards_for_shared_wins(vp: list[int], winners: list[int], expected: list[float]) -> None:
    env = raw_env(len(vp))
    assert env.rewards_of(vp, winners) == pytest.approx(expected)
    assert sum(env.rewards_of(vp, winners)) == pytest.approx(0.0)


@pytest.mark.parametrize("num_players", PLAYER_COUNTS)
def test_vp_rewards_are_own_vp_minus_best_other(num_players: int) -> None:
    env = biblios_env.env(num_players, reward="vp")
    for seed in range(3):
        rewards, infos = random_game(env, seed)
        vp = infos["player_0"]["vp"]
        for seat, agent in enumerate(env.possible_agents):
            best_other = max(v for other, v in enumerate(vp) if other != seat)
            assert rewards[agent] == pytest.approx(vp[seat] - best_other)


@pytest.mark.parametrize("num_players", PLAYER_COUNTS)
def test_terminal_infos_carry_vp_winners_and_category_winners(num_players: int) -> None:
    env = biblios_env.env(num_players)
    _, infos = random_game(env, 5)
    snapshot = env.unwrapped.snapshot()
    vp, winners, category_winners = score(snapshot["hands"], snapshot["dice"])
    for agent in env.possible_agents:
        info = infos[agent]
        assert set(info) >= {"vp", "winners", "category_winners"}
        assert info["vp"] == vp == snapshot["vp"]
        assert info["winners"] == winners == snapshot["winners"]
        assert info["category_winners"] == category_winners
        assert len(info["category_winners"]) == 5
        assert all(-1 <= seat < num_players for seat in info["category_winners"])
        json.dumps(info)


def test_known_game_rewards_and_infos() -> None:
    """The split deck, lowest legal action always: seat 0 wins Monks (25 v 0) and Holy Books,
    seat 1 wins Pigments; nobody holds Manuscripts or Forbidden Tomes (all auctioned, all
    passed, discarded); every die stays at 3. VP 6 v 3, seat 0 wins (RULES §6)."""
    options = {"deck": SPLIT_DECK, "auction_order": "placed"}
    env = biblios_env.env(2)
    assert lowest_legal_game(env, options) == {"player_0": 1.0, "player_1": -1.0}
    snapshot = env.unwrapped.snapshot()
    assert snapshot["hands"] == [sorted(HAND_0), sorted(HAND_1)]
    assert snapshot["dice"] == [3, 3, 3, 3, 3]
    assert snapshot["vp"] == [6, 3] and snapshot["winners"] == [0]
    assert snapshot["discard"] == AUCTIONED  # unsold cards are discarded in the order auctioned
    vp_env = biblios_env.env(2, reward="vp")
    assert lowest_legal_game(vp_env, options) == {"player_0": 3.0, "player_1": -3.0}


def test_known_game_terminal_infos() -> None:
    env = biblios_env.env(2)
    env.reset(options={"deck": SPLIT_DECK})
    for _ in env.agent_iter():
        observation, _, terminated, _, info = env.last()
        if terminated:
            assert info["vp"] == [6, 3]
            assert info["winners"] == [0]
            assert info["category_winners"] == [0, 1, 0, -1, -1]
            env.step(None)
        else:
            assert info == {} or "vp" not in info
            env.step(int(np.flatnonzero(observation["action_mask"])[0]))


# ----------------------------------------------------------------- snapshot


def check_snapshot(snapshot: dict[str, Any], num_players: int, over: bool) -> None:
    assert set(snapshot) == (SNAPSHOT_KEYS | {"vp", "winners"} if over else SNAPSHOT_KEYS)
    json.loads(json.dumps(snapshot))  # JSON-ready: no numpy ints, tuples or sets needed
    assert type(snapshot["num_players"]) is int and snapshot["num_players"] == num_players
    assert snapshot["phase"] in (("end",) if over else ("gift", "auction"))
    assert isinstance(snapshot["dice"], list) and len(snapshot["dice"]) == 5
    assert all(type(die) is int and 1 <= die <= 6 for die in snapshot["dice"])
    if over:
        assert snapshot["current_player"] is None
        assert len(snapshot["vp"]) == num_players and all(type(v) is int for v in snapshot["vp"])
        assert all(type(seat) is int and 0 <= seat < num_players for seat in snapshot["winners"])
        assert snapshot["winners"]
    else:
        assert type(snapshot["current_player"]) is int and 0 <= snapshot["current_player"] < num_players
    hands = snapshot["hands"]
    assert isinstance(hands, list) and len(hands) == num_players
    for hand in hands:
        assert isinstance(hand, list) and hand == sorted(hand)
    every_card = [card for hand in hands for card in hand]
    for key in SNAPSHOT_CARD_LISTS:
        assert isinstance(snapshot[key], list), key
        every_card += snapshot[key]
    assert all(type(card) is int for card in every_card)
    assert sorted(every_card) == list(range(NUM_CARDS)), "the card lists must hold all 87 ids exactly once"


@pytest.mark.parametrize("num_players", PLAYER_COUNTS)
def test_snapshot_keys_types_and_all_87_cards_at_every_step(num_players: int) -> None:
    env = biblios_env.env(num_players, penalty="bluffs" if num_players == 3 else "standard")
    phases = set()

    def check(env: Any, agent: str, observation: dict) -> None:
        snapshot = env.unwrapped.snapshot()
        check_snapshot(snapshot, num_players, over=False)
        assert snapshot["current_player"] == env.possible_agents.index(agent)
        phases.add(snapshot["phase"])

    random_game(env, 7, on_step=check)
    check_snapshot(env.unwrapped.snapshot(), num_players, over=True)
    assert phases == {"gift", "auction"}


def test_snapshot_at_the_start_shows_the_drawn_card_in_play() -> None:
    deck = valid_deck(3, seed=5)
    env = raw_env(3)
    env.reset(options={"deck": deck})
    snapshot = env.snapshot()
    assert snapshot["in_play"] == [deck[0]]
    assert snapshot["draw_pile"] == deck[1:]
    assert snapshot["removed"] == sorted(set(range(NUM_CARDS)) - set(deck))
    assert snapshot["hands"] == [[], [], []] and snapshot["phase"] == "gift" and snapshot["dice"] == [3] * 5


# ----------------------------------------------------------------- reset options


@pytest.mark.parametrize("num_players", PLAYER_COUNTS)
def test_deck_option_reproduces_the_given_pile(num_players: int) -> None:
    deck = valid_deck(num_players, seed=3)[::-1]  # any order of a valid set of cards
    env = raw_env(num_players)
    env.reset(seed=99, options={"deck": deck})
    assert list(env.game.deck) == deck
    assert env.snapshot()["draw_pile"] == deck[1:]
    assert env.snapshot()["in_play"] == [deck[0]]
    # The same deck under another seed gives the same deal.
    other = raw_env(num_players)
    other.reset(seed=5, options={"deck": np.array(deck)})
    assert other.snapshot() == env.snapshot()


@pytest.mark.parametrize(
    ("num_players", "make_deck", "fragments"),
    [
        (2, lambda deck: deck[:-1], ["60", "59"]),
        (4, lambda deck: [*deck, next(card for card in range(NUM_CARDS) if card not in deck)], ["80", "81"]),
        (3, lambda deck: [deck[1], *deck[1:]], ["duplicate", "{second}"]),
        (4, lambda deck: [*deck[:-1], 87], ["87"]),
        (4, lambda deck: [*deck[:-1], -1], ["-1"]),
        (3, lambda deck: [*deck[:-1], "Monks"], ["Monks"]),
        (2, lambda deck: "0,1,2", ["str"]),
    ],
    ids=["too-short", "too-long", "duplicate", "unknown-id-87", "unknown-id-negative", "not-an-int", "not-a-list"],
)
def test_bad_deck_option_raises_value_error_naming_the_problem(
    num_players: int, make_deck: Callable[[list[int]], list[Any]], fragments: list[str]
) -> None:
    deck = valid_deck(num_players, seed=1)
    bad = make_deck(deck)
    env = raw_env(num_players)
    with pytest.raises(ValueError) as error:
        env.reset(options={"deck": bad})
    message = str(error.value)
    for fragment in fragments:
        assert fragment.format(second=deck[1]) in message, message


@pytest.mark.parametrize("num_players", [2, 3])
def test_deck_option_rejects_a_removed_set_setup_could_not_produce(num_players: int) -> None:
    """2 players remove two gold cards of each value, 3 players one (RULES §2); a deck
    holding every Gold 2 card leaves too few removed."""
    gold_2 = list(GOLD_IDS_BY_VALUE[2])
    others = [*range(45), *range(78, NUM_CARDS), *GOLD_IDS_BY_VALUE[1], *GOLD_IDS_BY_VALUE[3]]
    deck = gold_2 + others[: DECK_SIZE[num_players] - len(gold_2)]
    env = raw_env(num_players)
    with pytest.raises(ValueError, match="gold") as error:
        env.reset(options={"deck": deck})
    assert "value 2" in str(error.value)


def test_deck_option_accepts_any_removed_set_for_four_players() -> None:
    env = raw_env(4)
    deck = [card for card in range(NUM_CARDS) if card not in GOLD_IDS_BY_VALUE[1][:7]]
    env.reset(options={"deck": deck})
    assert env.snapshot()["removed"] == list(GOLD_IDS_BY_VALUE[1][:7])


def test_auction_order_placed_auctions_in_the_order_placed() -> None:
    env = biblios_env.env(2)
    env.reset(seed=3, options={"deck": SPLIT_DECK, "auction_order": "placed"})
    while env.unwrapped.snapshot()["phase"] == "gift":
        env.step(int(np.flatnonzero(env.observe(env.agent_selection)["action_mask"])[0]))
    first_auction = env.unwrapped.snapshot()
    assert first_auction["in_play"] == [AUCTIONED[0]]
    assert first_auction["auction_pile"] == AUCTIONED[1:], "the auction pile, top first"
    lowest_legal_game(env, {"deck": SPLIT_DECK, "auction_order": "placed"}, seed=3)
    assert env.unwrapped.snapshot()["discard"] == AUCTIONED
    lowest_legal_game(env, {"deck": SPLIT_DECK, "auction_order": "shuffle"}, seed=3)
    shuffled = env.unwrapped.snapshot()["discard"]
    assert sorted(shuffled) == sorted(AUCTIONED) and shuffled != AUCTIONED
    lowest_legal_game(env, {"deck": SPLIT_DECK}, seed=3)
    assert env.unwrapped.snapshot()["discard"] == shuffled, "the default is 'shuffle'"


def test_auction_order_rejects_unknown_values() -> None:
    with pytest.raises(ValueError, match="'sorted'"):
        raw_env(2).reset(options={"auction_order": "sorted"})


def test_reset_options_must_be_a_dict() -> None:
    with pytest.raises(ValueError, match="list"):
        raw_env(2).reset(options=[("first_player", 1)])  # type: ignore[arg-type]


def test_first_player_option_overrides_the_constructor() -> None:
    env = biblios_env.env(3, first_player=2)
    env.reset(seed=0)
    assert env.agent_selection == "player_2"
    env.reset(seed=0, options={"first_player": 1})
    assert env.agent_selection == "player_1"
    assert env.unwrapped.snapshot()["current_player"] == 1
    env.reset(seed=0)
    assert env.agent_selection == "player_2", "an option applies to one reset only"


@pytest.mark.parametrize("bad", [3, -1, "1", 1.0])
def test_first_player_option_rejects_bad_seats(bad: object) -> None:
    with pytest.raises(ValueError, match="first_player"):
        raw_env(3).reset(options={"first_player": bad})


@pytest.mark.parametrize(
    ("options", "unknown"),
    [
        ({"decks": SPLIT_DECK}, ["decks"]),
        ({"first_player": 1, "seed": 1, "first-player": 2}, ["first-player", "seed"]),
        ({"auction_order": "placed", "shuffle": True}, ["shuffle"]),
    ],
    ids=["typo-decks", "two-unknown", "beside-a-known-one"],
)
def test_unknown_reset_options_are_ignored_with_a_warning_naming_them(
    options: dict[str, Any], unknown: list[str]
) -> None:
    """Gymnasium/PettingZoo convention: reset reads the keys it knows and ignores the rest,
    but a typo must not pass silently: one warning names every unknown key."""
    known = {key: value for key, value in options.items() if key in ("deck", "auction_order", "first_player")}
    expected = raw_env(3)
    expected.reset(seed=4, options=known or None)
    env = raw_env(3)
    with pytest.warns(UserWarning) as caught:
        env.reset(seed=4, options=options)
    assert len(caught) == 1
    message = str(caught[0].message)
    assert f"unknown reset option(s) {unknown}" in message, message
    assert "deck" in message and "first_player" in message, "the warning lists the keys the env reads"
    assert env.snapshot() == expected.snapshot(), "the known keys still apply, the unknown ones change nothing"


def test_known_reset_options_do_not_warn() -> None:
    env = raw_env(2)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        env.reset(seed=0, options={"deck": SPLIT_DECK, "auction_order": "placed", "first_player": 1})
        env.reset(seed=0, options={})
        env.reset(seed=0)


@pytest.mark.parametrize("seed", [1.5, "7", -1, True, 2.0, [1]])
@pytest.mark.parametrize("factory", [raw_env, biblios_env.env], ids=["raw_env", "env"])
def test_bad_seeds_raise_value_error_naming_the_seed(seed: object, factory: Callable[..., Any]) -> None:
    with pytest.raises(ValueError, match=rf"seed must be a non-negative int, got {re.escape(repr(seed))}"):
        factory(2).reset(seed=seed)


def test_numpy_integer_seeds_are_accepted() -> None:
    env, expected = raw_env(2), raw_env(2)
    env.reset(seed=np.int64(12))
    expected.reset(seed=12)
    assert env.snapshot() == expected.snapshot()


@pytest.mark.parametrize(
    ("seed", "options"),
    [(1.5, None), ("7", None), (5, {"deck": [1, 2, 3]}), (None, {"deck": [1, 2, 3]}), (5, {"first_player": 9})],
    ids=["float-seed", "str-seed", "bad-deck-seeded", "bad-deck-unseeded", "bad-first-player"],
)
def test_a_rejected_reset_changes_nothing(seed: object, options: dict[str, Any] | None) -> None:
    """Validate first, change state after: the game in progress and the seeds of the unseeded
    resets that follow are those of an env that never saw the rejected call."""

    def after_reset(reject: bool) -> tuple[dict[str, Any], list[dict[str, Any]]]:
        env = raw_env(3)
        env.reset(seed=8)
        env.step(int(np.flatnonzero(env.observe(env.agent_selection)["action_mask"])[0]))
        if reject:
            with pytest.raises(ValueError):
                env.reset(seed=seed, options=options)
        in_progress = env.snapshot()
        later = []
        for _ in range(2):
            env.reset()
            later.append(env.snapshot())
        return in_progress, later

    assert after_reset(reject=True) == after_reset(reject=False)


# ----------------------------------------------------------------- constructor checks


@pytest.mark.parametrize(
    "kwargs",
    [
        {"num_players": 5},
        {"num_players": 1},
        {"reward": "x"},
        {"penalty": "x"},
        {"render_mode": "x"},
        {"first_player": 2},
        {"strict_bids": "yes"},
        {"expose_forced": 1},
        {"num_players": 3.0},
        {"num_players": "3"},
        {"render_view": 2},
        {"render_view": -1},
        {"render_view": "all"},
        {"render_view": True},
        {"render_view": 1.0},
        {"illegal_action": "ignore"},
        {"illegal_action": "Forfeit"},
        {"illegal_action": None},
        {"forfeit_reward": "-1"},
        {"forfeit_reward": float("nan")},
        {"forfeit_reward": float("-inf")},
        {"forfeit_reward": True},
        {"forfeit_reward": None},
    ],
    ids=lambda kwargs: "-".join(f"{key}={value}" for key, value in kwargs.items()),
)
@pytest.mark.parametrize("factory", [raw_env, biblios_env.env], ids=["raw_env", "env"])
def test_bad_constructor_arguments_raise_value_error_naming_the_value(
    kwargs: dict[str, Any], factory: Callable[..., Any]
) -> None:
    ((name, value),) = kwargs.items()
    with pytest.raises(ValueError) as error:
        factory(**kwargs)
    message = str(error.value)
    assert name in message and f"got {value!r}" in message, message


# ----------------------------------------------------------------- strict bids, forced decisions


@pytest.mark.parametrize("num_players", PLAYER_COUNTS)
def test_strict_bids_never_offer_refuse_or_unpayable_bids(num_players: int) -> None:
    env = biblios_env.env(num_players, strict_bids=True)
    counts = {"bid_decisions": 0, "bids_offered": 0}

    def check(env: Any, agent: str, observation: dict) -> None:
        mask = observation["action_mask"]
        assert mask[REFUSE] == 0
        state = env.unwrapped.game.state
        if state.decision == Decision.BID:
            hand = state.hands[state.current_player]
            card = state.auction_card
            can_pay = len(hand) if IS_GOLD[card] else sum(CARD_VALUE[c] for c in hand if IS_GOLD[c])
            bids = np.flatnonzero(mask[91:157]) + 1
            counts["bid_decisions"] += 1
            counts["bids_offered"] += len(bids)
            assert bids.size == 0 or bids.max() <= can_pay, f"bid {bids.max()} offered, only {can_pay} payable"

    for seed in range(3):
        random_game(env, seed, on_step=check)
    assert counts["bid_decisions"] > 10 and counts["bids_offered"] > 10


def test_refuse_is_offered_at_every_payment_by_default() -> None:
    env = biblios_env.env(3)
    payments = []

    def check(env: Any, agent: str, observation: dict) -> None:
        if env.unwrapped.game.state.decision == Decision.PAY:
            payments.append(observation["action_mask"][REFUSE])

    random_game(env, 0, on_step=check)
    assert payments and all(payments)


@pytest.mark.parametrize("num_players", PLAYER_COUNTS)
def test_forced_decisions_are_hidden_by_default_and_shown_with_expose_forced(num_players: int) -> None:
    def single_action_steps(env: Any) -> int:
        singles = []
        random_game(env, 2, on_step=lambda env, agent, obs: singles.append(obs["action_mask"].sum() == 1))
        return sum(singles)

    assert single_action_steps(biblios_env.env(num_players)) == 0
    assert single_action_steps(biblios_env.env(num_players, expose_forced=True)) > 0


# ----------------------------------------------------------------- determinism


@pytest.mark.parametrize("num_players", PLAYER_COUNTS)
def test_same_seed_same_game_through_env(num_players: int) -> None:
    def trajectory(seed: int) -> tuple[list, dict]:
        env = biblios_env.env(num_players)
        steps: list = []
        random_game(env, seed, on_step=lambda env, agent, obs: steps.append((agent, obs["observation"].tobytes())))
        return steps, env.unwrapped.snapshot()

    first, second, other = trajectory(17), trajectory(17), trajectory(18)
    assert first == second
    assert first != other


def test_reset_without_seed_after_a_seeded_reset_is_reproducible() -> None:
    def unseeded_snapshots(play_between: bool) -> list[dict]:
        env = raw_env(3)
        env.reset(seed=8)
        if play_between:
            env.step(int(np.flatnonzero(env.observe(env.agent_selection)["action_mask"])[0]))
        snapshots = []
        for _ in range(2):
            env.reset()
            snapshots.append(env.snapshot())
        return snapshots

    first = unseeded_snapshots(play_between=False)
    assert first == unseeded_snapshots(play_between=True)
    seeded = raw_env(3)
    seeded.reset(seed=8)
    assert first[0] != seeded.snapshot() and first[0] != first[1], "each unseeded reset deals a new game"


# ----------------------------------------------------------------- illegal actions and call order


@pytest.mark.parametrize("steps_before", [0, 5, 40, 120])
@pytest.mark.parametrize("factory", [raw_env, biblios_env.env], ids=["raw_env", "env"])
def test_illegal_action_raises_and_leaves_the_env_unchanged(steps_before: int, factory: Callable[..., Any]) -> None:
    env = factory(3)
    env.reset(seed=4)
    rng = np.random.default_rng(4)
    for _ in range(steps_before):
        env.step(int(rng.choice(np.flatnonzero(env.observe(env.agent_selection)["action_mask"]))))
    agent = env.agent_selection
    mask = env.observe(agent)["action_mask"]
    illegal = int(np.flatnonzero(mask == 0)[0])
    before = (
        env.unwrapped.snapshot(),
        list(env.unwrapped.game.history),
        env.observe(agent)["observation"].copy(),
        dict(env.rewards),
        dict(env.terminations),
    )
    with pytest.raises(IllegalActionError) as error:
        env.step(illegal)
    assert str(illegal) in str(error.value) and describe(illegal) in str(error.value)
    after = (
        env.unwrapped.snapshot(),
        list(env.unwrapped.game.history),
        env.observe(agent)["observation"],
        dict(env.rewards),
        dict(env.terminations),
    )
    assert env.agent_selection == agent
    assert before[0] == after[0] and before[1] == after[1] and before[3:] == after[3:]
    np.testing.assert_array_equal(before[2], after[2])
    np.testing.assert_array_equal(env.observe(agent)["action_mask"], mask)
    env.step(int(np.flatnonzero(mask)[0]))  # the env still plays on


@pytest.mark.parametrize("action", [NUM_ACTIONS, -1, None])
def test_out_of_range_actions_raise_illegal_action_error_on_raw_env(action: object) -> None:
    env = raw_env(2)
    env.reset(seed=0)
    before = env.snapshot()
    with pytest.raises(IllegalActionError, match=str(action)):
        env.step(action)
    assert env.snapshot() == before


def test_illegal_action_error_is_a_value_error_exported_by_the_package() -> None:
    assert issubclass(biblios_env.IllegalActionError, ValueError)


@pytest.mark.parametrize("action", [NUM_ACTIONS, -1, 1.5, 1.0, True, "0", None, np.float32(0), [0]])
def test_bad_actions_through_env_raise_illegal_action_error_naming_the_value_and_range(action: object) -> None:
    """env() has no assert-based bounds wrapper: raw_env's own check names the value."""
    env = biblios_env.env(2)
    env.reset(seed=0)
    before = env.unwrapped.snapshot()
    with pytest.raises(IllegalActionError) as error:
        env.step(action)
    message = str(error.value)
    assert repr(action) in message and f"0..{NUM_ACTIONS - 1}" in message, message
    assert env.unwrapped.snapshot() == before


def test_numpy_integer_actions_are_accepted_by_env() -> None:
    env = biblios_env.env(2)
    env.reset(seed=0)
    legal = int(np.flatnonzero(env.observe(env.agent_selection)["action_mask"])[0])
    env.step(np.int32(legal))
    assert env.unwrapped.game.history[0] == legal


def test_env_wrapper_step_before_reset_raises_a_clear_error() -> None:
    env = biblios_env.env(2)
    with pytest.raises(AssertionError, match="reset"):
        env.step(0)
    with pytest.raises(AssertionError, match="reset"):
        env.observe("player_0")


@pytest.mark.parametrize(
    "call",
    [
        lambda env: env.step(0),
        lambda env: env.observe("player_0"),
        lambda env: env.render(),
        lambda env: env.state(),
        lambda env: env.snapshot(),
    ],
    ids=["step", "observe", "render", "state", "snapshot"],
)
def test_raw_env_before_reset_raises_a_clear_runtime_error(call: Callable[[Any], Any]) -> None:
    with pytest.raises(RuntimeError, match=r"call reset\(\) before"):
        call(raw_env(2, render_mode="ansi"))


def test_raw_env_step_after_close_raises_a_clear_runtime_error() -> None:
    env = raw_env(2)
    env.reset(seed=0)
    env.close()
    with pytest.raises(RuntimeError, match=r"call reset\(\) before step"):
        env.step(0)


# ----------------------------------------------------------------- illegal_action="forfeit"


def play_legal_steps(env: Any, steps: int, seed: int) -> None:
    """Reset with ``seed`` and play ``steps`` seeded random legal actions (the game goes on)."""
    env.reset(seed=seed)
    rng = np.random.default_rng(seed)
    for _ in range(steps):
        env.step(int(rng.choice(np.flatnonzero(env.observe(env.agent_selection)["action_mask"]))))


def an_illegal_id(env: Any, kind: str) -> int | np.int64:
    """An action id the agent to act may not play: a masked one (as a numpy integer, what
    RLlib's env check samples) or one out of range (a Python int)."""
    if kind == "out of range":
        return NUM_ACTIONS
    mask = env.observe(env.agent_selection)["action_mask"]
    return np.int64(np.flatnonzero(mask == 0)[-1])


@pytest.mark.parametrize("kind", ["masked", "out of range"])
@pytest.mark.parametrize("steps_before", [0, 40])
@pytest.mark.parametrize("num_players", PLAYER_COUNTS)
@pytest.mark.parametrize("factory", [raw_env, biblios_env.env], ids=["raw_env", "env"])
def test_forfeit_ends_the_game_with_the_forfeit_reward_for_the_offender_only(
    factory: Callable[..., Any], num_players: int, steps_before: int, kind: str
) -> None:
    env = factory(num_players, illegal_action="forfeit")
    play_legal_steps(env, steps_before, seed=num_players)
    offender = env.agent_selection
    snapshot, history = env.unwrapped.snapshot(), list(env.unwrapped.game.history)
    observations = {agent: env.observe(agent)["observation"].copy() for agent in env.agents}
    env.step(an_illegal_id(env, kind))
    others = [agent for agent in env.possible_agents if agent != offender]
    assert env.rewards == {offender: FORFEIT_REWARD, **{agent: 0.0 for agent in others}}
    assert env.terminations == {agent: True for agent in env.possible_agents}
    assert env.truncations == {agent: False for agent in env.possible_agents}
    expected_info = {"forfeit": True, "forfeited_by": offender, "vp": None, "winners": None, "category_winners": None}
    assert env.infos == {agent: expected_info for agent in env.possible_agents}
    assert env.unwrapped.snapshot() == snapshot and env.unwrapped.game.history == history, "the game as it stood"
    for agent in env.possible_agents:
        observation = env.observe(agent)
        assert not observation["action_mask"].any(), f"{agent} may still act after the forfeit"
        np.testing.assert_array_equal(observation["observation"], observations[agent])
        assert env.observation_space(agent).contains(observation)
    # The AEC loop ends as after a finished game: each agent sees its reward once, steps None, leaves.
    seen = {}
    for agent in env.agent_iter():
        _, reward, terminated, truncated, info = env.last()
        assert terminated and not truncated and info == expected_info
        seen[agent] = reward
        env.step(None)
    assert seen == {offender: FORFEIT_REWARD, **{agent: 0.0 for agent in others}}
    assert env.agents == []


@pytest.mark.parametrize("reward", ["win", "vp"])
def test_forfeit_reward_is_the_option_in_either_reward_mode(reward: str) -> None:
    env = raw_env(3, reward=reward, illegal_action="forfeit", forfeit_reward=-5)
    env.reset(seed=2)
    offender = env.agent_selection
    env.step(NUM_ACTIONS + 7)
    assert env.rewards[offender] == -5.0 and type(env.rewards[offender]) is float
    assert sorted(env._cumulative_rewards.values()) == [-5.0, 0.0, 0.0]


def test_reset_after_a_forfeit_deals_a_fresh_game_with_masks() -> None:
    env = raw_env(2, illegal_action="forfeit")
    env.reset(seed=3)
    env.step(NUM_ACTIONS)
    assert env.forfeited_by == "player_0"
    env.reset(seed=3)
    assert env.forfeited_by is None and env.infos == {"player_0": {}, "player_1": {}}
    assert env.observe(env.agent_selection)["action_mask"].any()
    assert not any(env.terminations.values())


def test_legal_games_play_the_same_in_both_modes() -> None:
    """A masked game never forfeits: the option changes nothing but illegal actions."""
    games = [random_game(biblios_env.env(3, illegal_action=mode), seed=5) for mode in ILLEGAL_ACTIONS]
    assert games[0] == games[1]
    assert "forfeit" not in next(iter(games[1][1].values()))


@pytest.mark.parametrize("action", [1.5, 1.0, True, np.True_, "0", None, np.float32(0), [0]])
def test_non_int_actions_still_raise_in_forfeit_mode(action: object) -> None:
    """Only an int id is a move that can be forfeited; anything else is the caller's bug."""
    env = biblios_env.env(2, illegal_action="forfeit")
    env.reset(seed=0)
    before = env.unwrapped.snapshot()
    with pytest.raises(IllegalActionError) as error:
        env.step(action)
    assert repr(action) in str(error.value)
    assert env.unwrapped.snapshot() == before and env.unwrapped.forfeited_by is None
    assert not any(env.terminations.values())


def test_the_default_still_raises_for_an_illegal_id() -> None:
    for env in (raw_env(2), raw_env(2, illegal_action="raise")):
        env.reset(seed=0)
        with pytest.raises(IllegalActionError, match="is not legal"):
            env.step(np.int64(an_illegal_id(env, "masked")))
        assert env.forfeited_by is None and not any(env.terminations.values())


def test_a_bad_illegal_action_value_names_the_allowed_values() -> None:
    with pytest.raises(ValueError, match=r"illegal_action must be one of 'raise', 'forfeit', got 'ignore'"):
        raw_env(2, illegal_action="ignore")


def test_the_option_is_the_gym_wrappers() -> None:
    """One option, one meaning: the same values and default forfeit reward as the Gym wrapper,
    and a forfeit in the same seat scores the same in both."""
    assert gym_env.ILLEGAL_ACTIONS == ILLEGAL_ACTIONS
    assert inspect.signature(gym_env.BibliosGymEnv).parameters["forfeit_reward"].default == FORFEIT_REWARD
    gym = gym_env.BibliosGymEnv(2, learner_seat=0, illegal_action="forfeit")
    gym.reset(seed=0)
    _, gym_reward, terminated, _, gym_info = gym.step(NUM_ACTIONS)
    pettingzoo_env = raw_env(2, illegal_action="forfeit")
    pettingzoo_env.reset(seed=0)
    pettingzoo_env.step(NUM_ACTIONS)
    assert terminated and gym_info["forfeit"] and pettingzoo_env.infos["player_0"]["forfeit"]
    assert gym_reward == pettingzoo_env.rewards["player_0"] == FORFEIT_REWARD
    assert gym_info["vp"] is pettingzoo_env.infos["player_0"]["vp"] is None


# ----------------------------------------------------------------- render, view, state


def test_render_ansi_returns_the_table_and_human_prints_it(capsys: pytest.CaptureFixture[str]) -> None:
    ansi = raw_env(3, render_mode="ansi")
    ansi.reset(seed=6)
    text = ansi.render()
    assert isinstance(text, str) and "Dice" in text and "player_0" in text
    human = raw_env(3, render_mode="human")
    human.reset(seed=6)
    assert human.render() is None
    assert capsys.readouterr().out.strip() == text.strip()


def test_render_shows_dice_common_area_auction_and_the_viewers_hand() -> None:
    env = biblios_env.env(2, render_mode="ansi")
    env.reset(options={"deck": SPLIT_DECK, "auction_order": "placed"})
    while env.unwrapped.snapshot()["phase"] == "gift":
        env.step(int(np.flatnonzero(env.observe(env.agent_selection)["action_mask"])[0]))
    text = env.render()
    assert env.agent_selection == "player_1"  # bidding starts left of the active player_0
    assert "Dice: Monks 3" in text and "Common area:" in text
    assert f"Auction: {card_name(AUCTIONED[0])} [#{AUCTIONED[0]}]" in text
    hand_line = next(line for line in text.splitlines() if line.startswith("Hand of player_1"))
    assert all(f"[#{card}]" in hand_line for card in HAND_1)
    assert not any(f"[#{card}]" in text for card in HAND_0 if card not in SPLIT_DECK[2::3]), "seat 0's hand is hidden"


def hand_lines(text: str) -> dict[int, str]:
    """The rendered "Hand of player_N" lines, by seat."""
    return {
        int(line.split()[2].removeprefix("player_")): line
        for line in text.splitlines()
        if line.startswith("Hand of player_")
    }


@pytest.mark.parametrize("num_players", PLAYER_COUNTS)
def test_render_view_chooses_whose_table_is_rendered(num_players: int) -> None:
    """One game played on four envs that differ only in render_view: ``None`` and
    ``"current"`` follow the acting seat, a seat stays that seat's view, ``"table"`` shows
    every hand."""
    views = (None, "current", 1, "table")
    envs = {view: biblios_env.env(num_players, render_mode="ansi", render_view=view) for view in views}
    for env in envs.values():
        env.reset(seed=3)
    rng = np.random.default_rng(3)
    seen = {"pay": 0, "steps": 0}
    reference = envs[None]
    while reference.agents:
        state = reference.unwrapped.game.state
        acting = reference.unwrapped.game.current_player
        texts = {view: env.render() for view, env in envs.items()}
        if acting >= 0:
            for view in (None, "current"):
                assert f"viewed by player_{acting} ==" in texts[view].splitlines()[0]
                assert list(hand_lines(texts[view])) == [acting]
        assert "viewed by player_1 ==" in texts[1].splitlines()[0]
        assert list(hand_lines(texts[1])) == [1], "a seat's view shows no other hand"
        table = hand_lines(texts["table"])
        assert "full table" in texts["table"].splitlines()[0] and list(table) == list(range(num_players))
        for seat, hand in enumerate(state.hands):
            assert all(f"[#{card}]" in table[seat] for card in hand), f"player_{seat}'s hand is shown in full"
        if state.decision == Decision.PAY and state.payment:
            seen["pay"] += 1
            payment_line = next(line for line in texts["table"].splitlines() if " is paying; so far " in line)
            assert all(f"[#{card}]" in payment_line for card in state.payment)
        seen["steps"] += 1
        _, _, terminated, truncated, _ = reference.last()
        action = (
            None
            if terminated or truncated
            else int(rng.choice(np.flatnonzero(reference.observe(reference.agent_selection)["action_mask"])))
        )
        for env in envs.values():
            env.step(action)
    assert seen["steps"] > 50 and seen["pay"] > 0, seen
    assert "winners" in envs["table"].render() and "viewed by player_1" in envs[1].render()


def test_render_view_table_shows_the_drawn_card_to_the_spectator() -> None:
    deck = valid_deck(2, seed=2)
    seat_view, table_view = (raw_env(2, render_mode="ansi", render_view=view) for view in (1, "table"))
    for env in (seat_view, table_view):
        env.reset(seed=0, options={"deck": deck})
    assert f"Drawn card: {card_name(deck[0])} [#{deck[0]}]" in table_view.render()
    assert "Drawn card" not in seat_view.render(), "player_0 is drawing: player_1 does not see the card"


def test_render_view_is_checked_against_the_player_count() -> None:
    assert "viewed by player_3" in _rendered(raw_env(4, render_mode="ansi", render_view=np.int64(3)))
    with pytest.raises(ValueError, match=r"render_view must be .* seat in 0\.\.2 for 3 players, got 3"):
        raw_env(3, render_view=3)


def _rendered(env: raw_env) -> str:
    env.reset(seed=0)
    return env.render()


def test_render_at_the_end_shows_the_result() -> None:
    env = biblios_env.env(2, render_mode="ansi")
    random_game(env, 3)
    text = env.render()
    assert isinstance(text, str) and "winner" in text.lower()


def test_view_is_the_agents_information_set() -> None:
    env = raw_env(3)
    env.reset(seed=2)
    view = env.view("player_1")
    assert view.seat == 1 and view.num_players == 3
    assert view.hand == sorted(env.game.state.hands[1])
    with pytest.raises(KeyError, match="player_7"):
        env.view("player_7")


@pytest.mark.parametrize("num_players", PLAYER_COUNTS)
def test_state_matches_state_space_and_holds_every_hidden_hand(num_players: int) -> None:
    env = biblios_env.env(num_players)
    space = env.unwrapped.state_space
    checked = {"steps": 0}

    def check(env: Any, agent: str, observation: dict) -> None:
        checked["steps"] += 1
        if checked["steps"] % 7:
            return
        state = env.state()
        assert state.shape == space.shape and state.dtype == np.float32
        assert space.contains(state)
        snapshot = env.unwrapped.snapshot()
        # Documented layout: seat 0's observation, then hands of seats 0..3 (padded), the draw
        # pile, the auction pile and the removed cards, each as 87 card indicators.
        np.testing.assert_array_equal(state[:OBSERVATION_SIZE], env.observe("player_0")["observation"])
        blocks = state[OBSERVATION_SIZE:].reshape(MAX_PLAYERS + 3, NUM_CARDS)
        hands = [*snapshot["hands"], *([[]] * (MAX_PLAYERS - num_players))]
        for block, cards in zip(blocks, [*hands, snapshot["draw_pile"], snapshot["auction_pile"], snapshot["removed"]]):
            assert sorted(np.flatnonzero(block).tolist()) == sorted(cards)

    random_game(env, 9, on_step=check)
    assert checked["steps"] > 50
