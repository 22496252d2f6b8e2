"""The single-agent Gymnasium wrapper: both environment checkers, masks and observations that
agree with the PettingZoo env from the learner's seat, the learner's own reward in every seat,
opponents, seeding and vectorized environments."""

from __future__ import annotations

import random
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
        ({"num_players": 3, "learner_seat": 3}, "learner_seat"),
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
    assert (info["num_players"], info["learner_seat"], env.env.game.config["first_player"]) == (3, 2, 1)
    with pytest.raises(ValueError, match="unknown reset option"):
        env.reset(seed=0, options={"colour": "red"})
    with pytest.raises(ValueError, match="num_players"):
        env.reset(seed=0, options={"num_players": 4})


def test_render_shows_the_learners_seat():
    env = BibliosGymEnv(3, learner_seat=1, render_mode="ansi")
    env.reset(seed=0)
    assert "viewed by player_1" in env.render()


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
