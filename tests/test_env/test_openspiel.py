"""The OpenSpiel game ``python_biblios`` (``biblios_env.openspiel``): OpenSpiel's own checks, the
same game as the PettingZoo env step for step, IS-MCTS playing it, and observers that keep to
what a seat may see."""

from __future__ import annotations

import random

import numpy as np
import pytest
from optional_extras import require

pyspiel = require("pyspiel")
require("biblios_env.openspiel")  # registers python_biblios

import test_leakage as leakage  # noqa: E402  (the leakage harness, applied to the OpenSpiel observers below)

from biblios_env.cards import GOLD_IDS_BY_VALUE, GOLD_VALUES  # noqa: E402
from biblios_env.engine import Game  # noqa: E402
from biblios_env.engine.flow import CHANCE_DRAW, CHANCE_PENALTY_PICK, CHANCE_REMOVAL, CHANCE_REVEAL  # noqa: E402
from biblios_env.engine.setup import setup_rules  # noqa: E402
from biblios_env.openspiel import BibliosState  # noqa: E402
from biblios_env.pettingzoo_env import raw_env  # noqa: E402
from experiments.openspiel_cfr import checkpoints, load_mini, main, solve, tree_size  # noqa: E402

CONFIGS = [(players, penalty) for players in (2, 3, 4) for penalty in ("standard", "bluffs")]


def load(players: int, penalty: str = "standard", **options: object) -> pyspiel.Game:
    return pyspiel.load_game("python_biblios", {"players": players, "penalty": penalty, **options})


@pytest.mark.parametrize(("players", "penalty"), CONFIGS)
def test_openspiel_random_simulations(players: int, penalty: str) -> None:
    pyspiel.random_sim_test(load(players, penalty), num_sims=2, serialize=players == 2, verbose=False)


def test_the_game_type_and_facts_follow_the_parameters() -> None:
    win, vp = load(3), load(3, reward="vp")
    assert win.get_type().utility == pyspiel.GameType.Utility.ZERO_SUM
    assert vp.get_type().utility == pyspiel.GameType.Utility.GENERAL_SUM
    assert win.get_type().chance_mode == pyspiel.GameType.ChanceMode.EXPLICIT_STOCHASTIC
    assert (win.num_players(), win.min_utility(), win.max_utility()) == (3, -1.0, 1.0)
    assert win.num_distinct_actions() == 266 and win.max_chance_outcomes() == 87
    with pytest.raises(ValueError, match="penalty must be one of 'standard', 'bluffs', got 'soft'"):
        load(2, "soft")


def _removals(removed: list[int], players: int, preset: str = "standard") -> list[int]:
    per_value = setup_rules(preset, players).gold_removed_per_value
    golds = [[card for card in removed if card in GOLD_IDS_BY_VALUE[value]][:per_value] for value in GOLD_VALUES]
    first = [card for cards in golds for card in cards]
    return first + [card for card in removed if card not in first]


class Mirror:
    """The OpenSpiel state that follows a seeded engine game: given the seeded game's random
    outcomes as they happen, and its players' actions."""

    def __init__(self, game: Game) -> None:
        config = game.config
        self.game = game
        spiel_game = load(config.num_players, config.penalty, strict_bids=config.strict_bids, preset=config.preset)
        engine = Game.from_config(config, seed=0, auto_forced=False, explicit_chance=True)  # any first player
        self.state = BibliosState(spiel_game, engine)
        self.removals = iter(_removals(game.state.removed, config.num_players, config.preset))

    def feed_chance(self) -> None:
        """Apply the seeded game's outcomes until the OpenSpiel state awaits a player."""
        state, seeded = self.state, self.game.state
        while state.is_chance_node():
            engine = state.game_.state
            kind = engine.chance_kind
            if kind == CHANCE_REMOVAL:
                state.apply_action(next(self.removals))
            elif kind == CHANCE_DRAW:
                state.apply_action(seeded.drawn_card)
            elif kind == CHANCE_REVEAL:
                state.apply_action(seeded.auction_card)
            else:
                assert kind == CHANCE_PENALTY_PICK
                state.apply_action(seeded.chance[-1][1][len(engine.chance[-1][1])])


@pytest.mark.parametrize(
    ("players", "penalty", "preset"), [*[(*config, "standard") for config in CONFIGS], (2, "standard", "mini")]
)
@pytest.mark.parametrize("seed", [0, 1])
def test_openspiel_and_pettingzoo_agree_at_every_step(players: int, penalty: str, preset: str, seed: int) -> None:
    """The PettingZoo env deals from its seed; the OpenSpiel state is given the same random
    outcomes. At every decision both name the same player, legal actions and observations."""
    env = raw_env(players, penalty=penalty, expose_forced=True, preset=preset)
    env.reset(seed=seed)
    game = env.game
    assert game is not None
    mirror = Mirror(game)
    state = mirror.state
    choices = random.Random(seed)
    while not state.is_terminal():
        if state.is_chance_node():
            mirror.feed_chance()
            continue
        player = state.current_player()
        agent = env.agent_selection
        assert agent == f"player_{player}"
        seen = env.observe(agent)
        assert state.legal_actions() == np.flatnonzero(seen["action_mask"]).tolist()
        assert np.array_equal(np.asarray(state.observation_tensor(player), np.float32), seen["observation"])
        action = choices.choice(state.legal_actions())
        state.apply_action(action)
        env.step(action)
    assert all(env.terminations.values())
    assert state.returns() == [env._cumulative_rewards[f"player_{seat}"] for seat in range(players)]


def _random_state(players: int, seed: int, steps: int) -> pyspiel.State:
    state = load(players).new_initial_state()
    choices = random.Random(seed)
    for _ in range(steps):
        if state.is_terminal():
            break
        if state.is_chance_node():
            state.apply_action(choices.choice(state.chance_outcomes())[0])
        else:
            state.apply_action(choices.choice(state.legal_actions()))
    return state


@pytest.mark.parametrize("players", [2, 3, 4])
def test_a_resampled_state_keeps_the_seats_information_and_changes_what_it_cannot_see(players: int) -> None:
    """The leakage check for the observers: only hidden things differ between a state and its
    resamples, and the seat's information state (string and tensor) and observation stay."""
    sampler = random.Random(7)
    changed = 0
    for seed in range(6):
        state = _random_state(players, seed, steps=150 + 40 * seed)
        if state.is_chance_node() or state.is_terminal():
            continue
        seat = state.current_player()
        for _ in range(3):
            other = state.resample_from_infostate(seat, sampler.random)
            assert other.information_state_string(seat) == state.information_state_string(seat)
            assert other.information_state_tensor(seat) == state.information_state_tensor(seat)
            assert other.observation_string(seat) == state.observation_string(seat)
            assert other.legal_actions() == state.legal_actions()
            hidden = [sorted(hand) for other_seat, hand in enumerate(state.game_.state.hands) if other_seat != seat]
            resampled = [sorted(hand) for s, hand in enumerate(other.game_.state.hands) if s != seat]
            changed += hidden != resampled
    assert changed > 0  # the resamples did change what the seat cannot see


def test_openspiels_ismcts_bot_plays_biblios_with_legal_moves() -> None:
    from open_spiel.python.algorithms import ismcts, mcts

    game = load(2)
    evaluator = mcts.RandomRolloutEvaluator(n_rollouts=1, random_state=np.random.RandomState(0))
    bot = ismcts.ISMCTSBot(game, evaluator, uct_c=2.0, max_simulations=3, random_state=np.random.RandomState(1))
    state = game.new_initial_state()
    choices = random.Random(0)
    moves = 0
    while not state.is_terminal():
        if state.is_chance_node():
            state.apply_action(choices.choice(state.chance_outcomes())[0])
        elif state.current_player() == 0:
            action = bot.step(state)
            assert action in state.legal_actions()
            state.apply_action(action)
            moves += 1
        else:
            state.apply_action(choices.choice(state.legal_actions()))
    assert moves > 20 and sum(state.returns()) == 0.0


# --------------------------------------------------------------------------- leakage
def _observers_checked(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Make the leakage harness's observation check also compare the OpenSpiel observers of the
    two games it plays: the seat's information state string and tensor, and its observation
    string, wherever the PettingZoo observation must not differ. Returns a counter of checks."""
    mirrors: dict[int, Mirror] = {}
    checks = [0]
    original = leakage.assert_same_observation

    def synced(env: raw_env) -> BibliosState:
        game = env.game
        assert game is not None
        mirror = mirrors.get(id(game))
        if mirror is None:
            mirror = mirrors[id(game)] = Mirror(Game(**_seeded_options(game)))
        while True:
            mirror.feed_chance()
            done = len(mirror.game.history)
            if done == len(game.history):
                return mirror.state
            action = game.history[done]
            mirror.game.apply(action)
            mirror.state.apply_action(action)

    def checked(first: raw_env, second: raw_env, seat: int, where: str, *, text: bool = True) -> None:
        original(first, second, seat, where, text=text)
        state_a, state_b = synced(first), synced(second)
        assert state_a.information_state_string(seat) == state_b.information_state_string(seat), where
        assert state_a.information_state_tensor(seat) == state_b.information_state_tensor(seat), where
        assert state_a.observation_string(seat) == state_b.observation_string(seat), where
        checks[0] += 1

    monkeypatch.setattr(leakage, "assert_same_observation", checked)
    return checks


def _seeded_options(game: Game) -> dict[str, object]:
    """The arguments that deal ``game`` again (the same seed and deck), forced moves exposed."""
    config = game.config.to_dict()
    return {**config, "seed": game.seed, "deck": list(game.deck) if game.deck_given else None, "auto_forced": False}


@pytest.mark.parametrize(("num_players", "seed", "options"), leakage.CASES[::2], ids=leakage.CASE_IDS[::2])
def test_the_openspiel_observers_pass_the_leakage_harness(
    monkeypatch: pytest.MonkeyPatch, num_players: int, seed: int, options: dict[str, object]
) -> None:
    """A card kept face down, swapped with a removed card: nothing changes for the other seats,
    in the OpenSpiel information states either, through the gift phase and beyond."""
    checks = _observers_checked(monkeypatch)
    leakage.test_removed_card_swapped_with_a_kept_card_is_invisible_to_the_others(num_players, seed, dict(options))
    assert checks[0] > 0


def test_a_planted_leak_in_the_information_state_is_caught(monkeypatch: pytest.MonkeyPatch) -> None:
    """The harness must be able to fail: an information state that shows the removed cards leaks."""
    import biblios_env.openspiel as spiel

    original = spiel.BibliosObserver.string_from

    def leaky(self: spiel.BibliosObserver, state: BibliosState, player: int) -> str:
        return original(self, state, player) + f" removed {state.game_.state.removed}"

    monkeypatch.setattr(spiel.BibliosObserver, "string_from", leaky)
    _observers_checked(monkeypatch)
    num_players, seed, options = leakage.CASES[0]
    with pytest.raises(AssertionError, match="keep swap"):
        leakage.test_removed_card_swapped_with_a_kept_card_is_invisible_to_the_others(num_players, seed, dict(options))


# --------------------------------------------------------------------------- the mini preset: exact methods
def test_the_mini_preset_passes_openspiels_checks() -> None:
    for strict in (False, True):
        game = load(2, preset="mini", strict_bids=strict)
        pyspiel.random_sim_test(game, num_sims=5, serialize=True, verbose=False)
    with pytest.raises(ValueError, match="the 'mini' preset is for 2 players, got 3"):
        load(3, preset="mini")


def test_cfr_on_the_mini_preset_reduces_exploitability() -> None:
    """OpenSpiel's CFR solves the mini game: the average policy's exploitability falls as it learns."""
    rows = list(solve("cfr", 4))
    assert [row.iterations for row in rows] == checkpoints(4) == [1, 2, 4]
    first, last = rows[0].exploitability, rows[-1].exploitability
    assert 0 <= last < first / 2, [row.exploitability for row in rows]
    size = tree_size(load_mini())
    assert size.terminal < size.histories < 3_000 and 0 < size.information_states < size.histories


def test_the_cfr_command_writes_its_table_and_plot(tmp_path: object, capsys: pytest.CaptureFixture[str]) -> None:
    from pathlib import Path

    out = Path(str(tmp_path)) / "cfr"
    assert main(["--iterations", "2", "--solver", "cfr+", "--out", str(out)]) == 0
    lines = (out / "cfr.csv").read_text().splitlines()
    assert lines[0] == "iterations,exploitability,seconds" and len(lines) == 3
    assert (out / "cfr.png").stat().st_size > 1000
    assert "exploitability" in capsys.readouterr().out
