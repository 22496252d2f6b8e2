"""The single-agent Gymnasium wrapper: both environment checkers, masks and observations that
agree with the PettingZoo env from the learner's seat, the learner's own reward in every seat,
opponents, seeding and vectorized environments."""

from __future__ import annotations

import random
import re
import warnings

import gymnasium
import numpy as np
import pytest

from agents import RandomAgent, ValueAgent
from biblios_env.actions import NUM_ACTIONS
from biblios_env.agent_interface import AgentObservation
from biblios_env.engine import IllegalActionError
from biblios_env.engine.views import player_view
from biblios_env.gym_env import GYM_ENV_ID, BibliosGymEnv, OpponentPool, UniformRandomOpponent
from biblios_env.observations import encode

CONFIGS = [
    {"num_players": 2},
    {"num_players": (2, 3, 4)},
    {"num_players": 4, "learner_seat": 2, "reward": "vp"},
    {"num_players": 3, "penalty": "bluffs", "strict_bids": True, "expose_forced": True},
]


def play_episode(env: BibliosGymEnv, seed: int, chooser: random.Random) -> tuple[float, dict]:
    """Random masked actions until the end; returns (return, terminal info)."""
    env.reset(seed=seed)
    total, done, info = 0.0, False, {}
    while not done:
        legal = np.flatnonzero(env.action_masks())
        _, reward, done, truncated, info = env.step(int(legal[chooser.randrange(len(legal))]))
        assert not truncated
        total += reward
    return total, info


# ----------------------------------------------------------------------------- conformance
@pytest.mark.parametrize("options", CONFIGS)
def test_gymnasium_checker_passes_with_warnings_as_errors(options):
    from gymnasium.utils.env_checker import check_env

    env = gymnasium.make(GYM_ENV_ID, illegal_action="forfeit", render_mode="ansi", **options).unwrapped
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        check_env(env, skip_render_check=False)


@pytest.mark.parametrize("options", CONFIGS)
def test_sb3_checker_passes_with_warnings_as_errors(options):
    from stable_baselines3.common.env_checker import check_env

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        check_env(BibliosGymEnv(illegal_action="forfeit", **options), warn=True)


def test_registered_with_gymnasium():
    env = gymnasium.make(GYM_ENV_ID, num_players=3)
    observation, info = env.reset(seed=0)
    assert env.observation_space.contains(observation)
    assert info["num_players"] == 3
    assert env.unwrapped.get_wrapper_attr("action_masks")().shape == (NUM_ACTIONS,)


# ----------------------------------------------------------------------------- masks and observations
@pytest.mark.parametrize("options", CONFIGS)
def test_masks_and_observations_agree_with_the_env_from_the_learners_seat(options):
    env = BibliosGymEnv(**options)
    chooser = random.Random(1)
    for seed in range(4):
        observation, info = env.reset(seed=seed)
        done = False
        while True:
            game, seat = env.env.game, env.learner_seat
            assert info["learner_seat"] == seat
            if done:
                assert game.is_over and not env.action_masks().any() and not info["action_mask"].any()
                break
            assert game.current_player == seat  # the env only stops at the learner's decisions
            expected = np.zeros(NUM_ACTIONS, dtype=bool)
            expected[game.legal_actions()] = True
            pettingzoo = env.env.observe(env.env.possible_agents[seat])
            np.testing.assert_array_equal(env.action_masks(), expected)
            np.testing.assert_array_equal(env.action_masks(), pettingzoo["action_mask"].astype(bool))
            np.testing.assert_array_equal(info["action_mask"], expected)
            np.testing.assert_array_equal(observation, encode(player_view(game.state, seat)))
            assert env.observation_space.contains(observation)
            legal = np.flatnonzero(expected)
            observation, _, done, _, info = env.step(int(legal[chooser.randrange(len(legal))]))


def test_action_masks_returns_a_copy():
    env = BibliosGymEnv()
    env.reset(seed=0)
    mask = env.action_masks()
    mask[:] = False
    assert env.action_masks().any()


# ----------------------------------------------------------------------------- rewards
class ScriptedLearner:
    """The value heuristic playing the learner's seat through the wrapper (it reads learner_view())."""

    def __init__(self, env: BibliosGymEnv) -> None:
        self.env = env
        self.agent = ValueAgent()

    def episode(self, seed: int) -> tuple[float, dict]:
        _, info = self.env.reset(seed=seed)
        self.agent.start_game(self.env.learner_seat, info["num_players"], seed=seed)
        total, done = 0.0, False
        while not done:
            legal = [int(a) for a in np.flatnonzero(self.env.action_masks())]
            action = self.agent.act(AgentObservation(self.env.learner_view(), legal))
            _, reward, done, _, info = self.env.step(action)
            total += reward
        return total, info


@pytest.mark.parametrize("num_players", [2, 3, 4])
def test_reward_is_the_learners_own_seats_in_every_seat(num_players):
    """Regression test for the self-play trap of training on another seat's reward: a strong
    scripted learner against random opponents wins (positive return) from every seat, and its
    return always matches its own seat's outcome."""
    for seat in range(num_players):
        env = BibliosGymEnv(num_players, [RandomAgent() for _ in range(num_players - 1)], learner_seat=seat)
        learner = ScriptedLearner(env)
        returns = []
        for seed in range(6):
            total, info = learner.episode(seed)
            assert info["learner_seat"] == seat
            expected = env.env.rewards_of(info["vp"], info["winners"])[seat]
            assert total == expected
            assert (total > 0) == (seat in info["winners"] and len(info["winners"]) < num_players)
            assert info["is_success"] == (seat in info["winners"])
            returns.append(total)
        assert np.mean(returns) > 0.3, f"seat {seat}: returns {returns}"


def test_vp_reward_is_own_vp_minus_best_other():
    env = BibliosGymEnv(3, reward="vp")
    chooser = random.Random(0)
    for seed in range(4):
        total, info = play_episode(env, seed, chooser)
        seat, vp = info["learner_seat"], info["vp"]
        assert total == vp[seat] - max(v for other, v in enumerate(vp) if other != seat)


def test_losing_learner_gets_negative_return_from_every_seat():
    """The mirror image: a random learner against the value heuristic loses from every seat."""
    for seat in range(2):
        env = BibliosGymEnv(2, ValueAgent(), learner_seat=seat)
        chooser = random.Random(seat)
        returns = [play_episode(env, seed, chooser)[0] for seed in range(5)]
        assert np.mean(returns) < 0, f"seat {seat}: {returns}"


# ----------------------------------------------------------------------------- illegal actions
def test_illegal_action_raises_by_default_naming_it():
    env = BibliosGymEnv()
    env.reset(seed=0)
    illegal = int(np.flatnonzero(~env.action_masks())[0])
    with pytest.raises(IllegalActionError, match=str(illegal)):
        env.step(illegal)


def test_illegal_action_forfeits_when_asked():
    env = BibliosGymEnv(illegal_action="forfeit", forfeit_reward=-2.0)
    env.reset(seed=0)
    illegal = int(np.flatnonzero(~env.action_masks())[0])
    _, reward, terminated, truncated, info = env.step(illegal)
    assert (reward, terminated, truncated, info["forfeit"], info["is_success"]) == (-2.0, True, False, True, False)
    assert not env.action_masks().any()
    with pytest.raises(RuntimeError, match="reset"):
        env.step(0)


# ----------------------------------------------------------------------------- opponents and seeding
class SpyAgent(RandomAgent):
    """A random agent that records the seats it was started in and the views it was shown."""

    def __init__(self) -> None:
        super().__init__()
        self.started: list[tuple[int, int]] = []
        self.viewed: set[int] = set()

    def start_game(self, seat, num_players, seed=None):
        super().start_game(seat, num_players, seed)
        self.started.append((seat, num_players))

    def act(self, observation):
        self.viewed.add(observation.view.seat)
        return super().act(observation)


def test_opponents_sit_after_the_learner_and_see_only_their_own_seat():
    spies = [SpyAgent(), SpyAgent(), SpyAgent()]
    env = BibliosGymEnv(4, spies, learner_seat=1)
    play_episode(env, 0, random.Random(0))
    assert [spy.started for spy in spies] == [[(2, 4)], [(3, 4)], [(0, 4)]]
    assert [spy.viewed for spy in spies] == [{2}, {3}, {0}]


def test_learner_seat_is_drawn_per_episode_when_not_fixed():
    env = BibliosGymEnv(3)
    seats = {env.reset(seed=seed)[1]["learner_seat"] for seed in range(30)}
    assert seats == {0, 1, 2}
    fixed = BibliosGymEnv(3, learner_seat=2)
    assert {fixed.reset(seed=seed)[1]["learner_seat"] for seed in range(5)} == {2}


def test_pool_samples_opponents_per_episode_by_weight():
    pool = OpponentPool([(RandomAgent, 1.0), (ValueAgent, 3.0), (UniformRandomOpponent, 0.0)])
    env = BibliosGymEnv(2, pool)
    names = [env.reset(seed=seed)[1]["opponents"][0] for seed in range(200)]
    assert set(names) == {"random", "value"}
    assert 0.65 < names.count("value") / len(names) < 0.85
    env.set_opponents(OpponentPool([(RandomAgent, 1.0)]))
    assert env.reset(seed=0)[1]["opponents"] == ["random"]


def test_seeded_reset_replays_the_same_episode():
    def trace(seed: int) -> list[np.ndarray]:
        env = BibliosGymEnv((2, 3), OpponentPool([(RandomAgent, 1.0), (ValueAgent, 1.0)]))
        observation, _ = env.reset(seed=seed)
        observations, chooser, done = [observation], random.Random(5), False
        while not done:
            legal = np.flatnonzero(env.action_masks())
            observation, _, done, _, _ = env.step(int(legal[chooser.randrange(len(legal))]))
            observations.append(observation)
        return observations

    first, second = trace(11), trace(11)
    assert len(first) == len(second) and all(np.array_equal(a, b) for a, b in zip(first, second))
    assert not all(np.array_equal(a, b) for a, b in zip(first, trace(12)))


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"num_players": 3, "opponents": RandomAgent()}, "2 players only"),
        ({"num_players": 4, "opponents": [RandomAgent(), RandomAgent()]}, "need 3 opponents"),
        ({"opponents": [RandomAgent]}, "Agent protocol"),
        ({"num_players": 3, "opponents": [RandomAgent()] * 2}, "distinct"),
        ({"opponents": 5}, "opponents must be"),
        ({"num_players": 5}, "num_players"),
        ({"num_players": 3.0}, "num_players must be 2, 3 or 4, got 3.0"),
        ({"num_players": (2, 3.0)}, "got 3.0"),
        ({"num_players": "3"}, "got '3'"),
        ({"num_players": ()}, "non-empty"),
        ({"num_players": 3, "learner_seat": 3}, "learner_seat"),
        ({"learner_seat": True}, "got True"),
        ({"learner_seat": 1.0}, "got 1.0"),
        ({"learner_seat": -1}, "got -1"),
        ({"render_view": "all"}, "render_view must be None, 'learner' or 'table', got 'all'"),
        ({"render_view": 0}, "render_view"),
        ({"illegal_action": "ignore"}, "illegal_action"),
        ({"reward": "score"}, "reward"),
    ],
)
def test_bad_arguments_are_rejected_with_a_clear_message(kwargs, message):
    with pytest.raises(ValueError, match=message):
        BibliosGymEnv(**kwargs)


def test_reset_options_are_checked_and_passed_to_the_game():
    env = BibliosGymEnv((2, 3))
    _, info = env.reset(seed=0, options={"num_players": 3, "learner_seat": 2, "first_player": 1})
    assert (info["num_players"], info["learner_seat"], env.env.game.config.first_player) == (3, 2, 1)
    with pytest.raises(ValueError, match="num_players"):
        env.reset(seed=0, options={"num_players": 4})


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"num_players": 3.0}, "num_players must be 2, 3 or 4, got 3.0"),
        ({"num_players": True}, "got True"),
        ({"learner_seat": True}, "learner_seat must be None or a seat, got True"),
        ({"learner_seat": 1.0}, "got 1.0"),
        ({"num_players": 2, "learner_seat": 2}, "learner_seat must be a seat 0..1, got 2"),
        ({"first_player": 1.0}, "first_player"),
    ],
)
def test_bad_reset_options_are_rejected_naming_the_value(options, message):
    with pytest.raises(ValueError, match=re.escape(message)):
        BibliosGymEnv((2, 3)).reset(seed=0, options=options)


def test_unknown_reset_options_are_ignored_with_a_warning_naming_them():
    expected, env = BibliosGymEnv(3), BibliosGymEnv(3)
    expected_observation, _ = expected.reset(seed=4, options={"learner_seat": 1})
    with pytest.warns(UserWarning, match=re.escape("unknown reset option(s) ['colour', 'decks']")):
        observation, info = env.reset(seed=4, options={"decks": [1, 2], "learner_seat": 1, "colour": "red"})
    assert info["learner_seat"] == 1, "the known keys still apply"
    np.testing.assert_array_equal(observation, expected_observation)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        env.reset(seed=4, options={"learner_seat": 1, "num_players": 3, "auction_order": "placed"})


@pytest.mark.parametrize("seed", [1.5, "7", -1, True, [3]])
def test_bad_seeds_are_rejected_naming_the_value_and_change_nothing(seed):
    def trace(reject: bool) -> list[np.ndarray]:
        env = BibliosGymEnv((2, 3))
        env.reset(seed=5)
        if reject:
            with pytest.raises(ValueError, match=re.escape(f"seed must be a non-negative int, got {seed!r}")):
                env.reset(seed=seed)
        return [env.reset()[0] for _ in range(3)]

    assert all(np.array_equal(a, b) for a, b in zip(trace(reject=True), trace(reject=False), strict=True))


def test_numpy_integer_seeds_are_accepted():
    first, _ = BibliosGymEnv(3).reset(seed=np.int64(9))
    second, _ = BibliosGymEnv(3).reset(seed=9)
    np.testing.assert_array_equal(first, second)


# ----------------------------------------------------------------------------- action types
@pytest.mark.parametrize("illegal_action", ["raise", "forfeit"])
@pytest.mark.parametrize("action", [1.7, 1.5, 1.0, True, False, "0", None, np.float64(1), np.array([1]), np.array(1.0)])
def test_non_integer_actions_are_rejected_naming_the_value_in_both_modes(illegal_action, action):
    env = BibliosGymEnv(illegal_action=illegal_action)
    env.reset(seed=0)
    before = (env.env.snapshot(), list(env.env.game.history))
    with pytest.raises(IllegalActionError, match=re.escape(repr(action))) as error:
        env.step(action)
    assert f"0..{NUM_ACTIONS - 1}" in str(error.value)
    assert (env.env.snapshot(), list(env.env.game.history)) == before, "nothing was played"
    legal = int(np.flatnonzero(env.action_masks())[0])
    env.step(legal)  # the episode goes on
    assert env.env.game.history[len(before[1])] == legal


@pytest.mark.parametrize("make", [int, np.int64, np.int32, np.uint8, np.array], ids=lambda make: make.__name__)
def test_integer_actions_of_every_kind_are_played(make):
    env = BibliosGymEnv()
    env.reset(seed=0)
    played = len(env.env.game.history)
    legal = int(np.flatnonzero(env.action_masks())[0])
    env.step(make(legal))
    assert env.env.game.history[played] == legal


@pytest.mark.parametrize("render_view", [None, "learner"])
def test_render_shows_the_learners_seat(render_view):
    env = BibliosGymEnv(3, learner_seat=1, render_mode="ansi", render_view=render_view)
    env.reset(seed=0)
    text = env.render()
    assert "viewed by player_1" in text
    assert [line.split()[2] for line in text.splitlines() if line.startswith("Hand of")] == ["player_1"]


def test_render_view_table_shows_every_hand():
    env = BibliosGymEnv(3, learner_seat=1, render_mode="ansi", render_view="table")
    env.reset(seed=0)
    for _ in range(12):
        env.step(int(np.flatnonzero(env.action_masks())[0]))
    text = env.render()
    assert "full table" in text.splitlines()[0]
    hands = {line.split()[2]: line for line in text.splitlines() if line.startswith("Hand of")}
    assert list(hands) == ["player_0", "player_1", "player_2"]
    for seat, hand in enumerate(env.env.game.state.hands):
        assert hand and all(f"[#{card}]" in hands[f"player_{seat}"] for card in hand)


# ----------------------------------------------------------------------------- vectorized
@pytest.mark.parametrize("vec", ["dummy", "subproc"])
def test_vectorized_envs_give_maskable_ppo_the_right_masks(vec):
    from sb3_contrib.common.maskable.utils import get_action_masks
    from stable_baselines3.common.vec_env import DummyVecEnv, SubprocVecEnv

    factories = [lambda: BibliosGymEnv(2, learner_seat=0), lambda: BibliosGymEnv((3, 4))]
    vec_env = DummyVecEnv(factories) if vec == "dummy" else SubprocVecEnv(factories)
    try:
        vec_env.seed(3)
        vec_env.reset()
        rng = np.random.default_rng(0)
        episodes = 0
        for _ in range(300):
            masks = get_action_masks(vec_env)
            assert masks.shape == (2, NUM_ACTIONS) and masks.any(axis=1).all()
            actions = np.array([rng.choice(np.flatnonzero(mask)) for mask in masks])
            _, _, dones, infos = vec_env.step(actions)  # an illegal action would raise in the worker
            episodes += int(dones.sum())
            for done, info in zip(dones, infos):
                assert done == ("terminal_observation" in info)
        assert episodes >= 2
        vec_env.env_method("set_opponents", OpponentPool([(RandomAgent, 1.0)]))
        vec_env.reset()
        assert vec_env.get_attr("opponent_source")[0] is not None
    finally:
        vec_env.close()
