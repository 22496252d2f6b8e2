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

from biblios_env.cards import GOLD_IDS_BY_VALUE, GOLD_VALUES  # noqa: E402
from biblios_env.engine.flow import CHANCE_DRAW, CHANCE_PENALTY_PICK, CHANCE_REMOVAL, CHANCE_REVEAL  # noqa: E402
from biblios_env.engine.setup import GOLD_REMOVED_PER_VALUE  # noqa: E402
from biblios_env.pettingzoo_env import raw_env  # noqa: E402

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


def _removals(removed: list[int], players: int) -> list[int]:
    per_value = GOLD_REMOVED_PER_VALUE[players]
    golds = [[card for card in removed if card in GOLD_IDS_BY_VALUE[value]][:per_value] for value in GOLD_VALUES]
    first = [card for cards in golds for card in cards]
    return first + [card for card in removed if card not in first]


@pytest.mark.parametrize(("players", "penalty"), CONFIGS)
@pytest.mark.parametrize("seed", [0, 1])
def test_openspiel_and_pettingzoo_agree_at_every_step(players: int, penalty: str, seed: int) -> None:
    """The PettingZoo env deals from its seed; the OpenSpiel state is given the same random
    outcomes. At every decision both name the same player, legal actions and observations."""
    env = raw_env(players, penalty=penalty, expose_forced=True)
    env.reset(seed=seed)
    game = env.game
    assert game is not None
    state = load(players, penalty).new_initial_state()
    removals = iter(_removals(game.state.removed, players))
    choices = random.Random(seed)
    while not state.is_terminal():
        if state.is_chance_node():
            engine = state.game_.state
            kind = engine.chance_kind
            if kind == CHANCE_REMOVAL:
                state.apply_action(next(removals))
            elif kind == CHANCE_DRAW:
                state.apply_action(game.state.drawn_card)
            elif kind == CHANCE_REVEAL:
                state.apply_action(game.state.auction_card)
            else:
                assert kind == CHANCE_PENALTY_PICK
                state.apply_action(game.state.chance[-1][1][len(engine.chance[-1][1])])
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
