"""The game's options in one frozen, self-checking record (``biblios_env.engine.config``), and the
places that read them from it: the game, its log and the environments."""

from __future__ import annotations

import dataclasses
import json

import numpy as np
import pytest

from biblios_env.engine import Game
from biblios_env.engine.config import AUCTION_ORDERS, PENALTIES, GameConfig
from biblios_env.engine.log import game_digest, replay, to_log


def test_defaults_are_the_rules_two_player_game() -> None:
    config = GameConfig()
    assert config.to_dict() == {
        "num_players": 2, "penalty": "standard", "strict_bids": False, "first_player": 0, "auction_order": "shuffle",
        "preset": "standard",
    }  # fmt: skip
    assert not config.bluffs and not config.auction_order_placed


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"num_players": 5}, "num_players must be 2, 3 or 4, got 5"),
        ({"num_players": 3.0}, "num_players must be 2, 3 or 4, got 3.0"),
        ({"penalty": "harsh"}, "penalty must be one of 'standard', 'bluffs', got 'harsh'"),
        ({"strict_bids": 1}, "strict_bids must be True or False, got 1"),
        ({"num_players": 3, "first_player": 3}, "first_player must be an int in 0..2 for 3 players, got 3"),
        ({"auction_order": "random"}, "auction_order must be one of 'shuffle', 'placed', got 'random'"),
        ({"preset": "tiny"}, "preset must be one of 'standard', 'mini', 'small', got 'tiny'"),
        ({"num_players": 3, "preset": "mini"}, "the 'mini' preset is for 2 players, got 3"),
    ],
)
def test_a_bad_option_is_named_with_what_was_expected(options: dict[str, object], message: str) -> None:
    with pytest.raises(ValueError, match=f"^{message}$".replace("(", r"\(").replace(")", r"\)")):
        GameConfig(**options)  # type: ignore[arg-type]


def test_it_is_frozen_and_holds_plain_json_values() -> None:
    config = GameConfig(np.int64(3), "bluffs", np.bool_(True), np.int32(2))  # type: ignore[arg-type]
    assert [type(value) for value in config.to_dict().values()] == [int, str, bool, int, str, str]
    assert json.loads(json.dumps(config.to_dict())) == config.to_dict()
    with pytest.raises(dataclasses.FrozenInstanceError):
        config.penalty = "standard"  # type: ignore[misc]
    with pytest.raises(ValueError, match="penalty must be one of"):
        dataclasses.replace(config, penalty="none")


def test_dict_round_trip_and_unknown_names() -> None:
    config = GameConfig(4, "bluffs", first_player=1, auction_order="placed")
    assert GameConfig.from_dict(config.to_dict()) == config
    assert GameConfig.from_dict({"num_players": 3}) == GameConfig(3)
    with pytest.raises(ValueError, match=r"unknown game option\(s\) 'seats'; the options are \['num_players'"):
        GameConfig.from_dict({"seats": 3})


@pytest.mark.parametrize("penalty", PENALTIES)
@pytest.mark.parametrize("auction_order", AUCTION_ORDERS)
def test_a_game_keeps_its_config_and_from_config_plays_the_same_game(penalty: str, auction_order: str) -> None:
    config = GameConfig(3, penalty, True, 2, auction_order)
    game = Game(3, seed=5, penalty=penalty, strict_bids=True, first_player=2, auction_order=auction_order)
    same = Game.from_config(config, seed=5)
    assert game.config == same.config == config
    for twin in (game, same):
        while not twin.is_over:
            twin.apply(twin.legal_actions()[-1])
    assert game_digest(game) == game_digest(same)
    assert GameConfig.from_state(game.state) == config
    assert Game.from_state(game.state.clone(), seed=1).config == config


def test_from_config_takes_only_a_config() -> None:
    with pytest.raises(TypeError, match=r"config must be a GameConfig, got \{'num_players': 3\}"):
        Game.from_config({"num_players": 3})  # type: ignore[arg-type]


def test_the_log_stores_the_config_fields_and_reads_them_back() -> None:
    game = Game(4, seed=3, penalty="bluffs", first_player=3)
    game.apply(game.legal_actions()[0])
    log = to_log(game)
    assert list(log["config"]) == list(GameConfig.names())
    assert replay(log).config == game.config
    log["config"]["strict_bids"] = 0
    with pytest.raises(ValueError, match="game log config 'strict_bids' must be a small bool, got 0"):
        replay(log)


def test_the_environment_checks_its_options_when_made() -> None:
    from biblios_env.pettingzoo_env import raw_env

    with pytest.raises(ValueError, match="penalty must be one of 'standard', 'bluffs', got 'soft'"):
        raw_env(3, penalty="soft")
    env = raw_env(3, penalty="bluffs", first_player=1)
    assert env.game_config == GameConfig(3, "bluffs", first_player=1)
    env.reset(seed=2, options={"auction_order": "placed", "first_player": 2})
    assert env.game is not None and env.game.config == GameConfig(3, "bluffs", False, 2, "placed")
    env.reset(seed=2)
    assert env.game is not None and env.game.config == env.game_config
