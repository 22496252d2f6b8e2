"""The batched games behind Gymnasium's ``VectorEnv`` and Stable-Baselines3's ``VecEnv``.

Neither library ships a checker for vectorized environments, so this file checks their contracts
itself: spaces that contain what is returned, shapes and dtypes, masks that are the learner's legal
actions, the learner's own reward, reproducible seeds, opponents batched or per game, an opponent's
fault named; and that sb3-contrib's ``MaskablePPO`` trains through the SB3 adapter unchanged (both
policies). Gymnasium's autoreset modes and info layout have their own file,
``test_vector_gymnasium_conventions.py``.
"""

from __future__ import annotations

import numpy as np
import pytest
from gymnasium.vector import AutoresetMode

from agents import make_agent
from biblios_env.agent_interface import UniformBatchAgent
from biblios_env.engine.game import IllegalActionError
from biblios_env.gym_env import OpponentError, OpponentPool
from biblios_env.observations import OBSERVATION_SCALE
from biblios_env.vector.gymnasium_env import BibliosVectorEnv


def legal_actions(masks: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    return np.argmax(rng.random(masks.shape) * masks, axis=1)


def test_the_gymnasium_vector_env_keeps_its_contract() -> None:
    env = BibliosVectorEnv(6, 3, seed=1, autoreset_mode=AutoresetMode.SAME_STEP)
    observation, info = env.reset(seed=4)
    assert env.observation_space.contains(observation)
    rng = np.random.default_rng(0)
    finished = 0
    while finished < 8:
        masks = env.action_masks()
        assert masks.dtype == bool and masks.shape == (6, 266) and masks.any(axis=1).all()
        assert np.array_equal(masks, info["action_mask"])
        observation, reward, terminated, truncated, info = env.step(legal_actions(masks, rng))
        assert env.observation_space.contains(observation)
        assert reward.shape == (6,) and reward.dtype == np.float32
        assert not truncated.any()
        assert (reward[~terminated] == 0).all()
        for slot in np.flatnonzero(terminated):
            finished += 1
            final = info["final_info"]
            assert info["_final_obs"][slot] and info["final_obs"][slot].shape == (1134,)
            seat, winners = final["learner_seat"][slot], final["winners"][slot]
            won = seat in winners
            assert final["is_success"][slot] == won
            assert (reward[slot] > 0) == (won and len(winners) < 3)
            assert final["opponents"][slot] == ["uniform", "uniform"]


def test_the_learner_sees_its_own_seat_and_seeds_replay() -> None:
    first = BibliosVectorEnv(4, 4, seed=2)
    second = BibliosVectorEnv(4, 4, seed=99)
    observation, _ = first.reset(seed=7)
    again, _ = second.reset(seed=7)
    assert np.array_equal(observation, again)
    learner = first.learner
    for slot in range(4):
        assert learner.games.batch.current_player[slot] == learner.learner_seat[slot]
    fixed = BibliosVectorEnv(3, 2, learner_seat=1, seed=0)
    fixed.reset()
    assert fixed.learner.learner_seat.tolist() == [1, 1, 1]


def test_per_game_and_batched_opponents_play_together() -> None:
    pool = OpponentPool([(lambda: make_agent("value"), 1.0), (lambda: make_agent("hoarder"), 1.0)])
    shared = UniformBatchAgent(0)
    pool.add(lambda: shared, 1.0)
    env = BibliosVectorEnv(5, 3, pool, seed=3)
    env.reset()
    rng = np.random.default_rng(1)
    names: set[str] = set()
    for _ in range(400):
        _, _, terminated, _, info = env.step(legal_actions(env.action_masks(), rng))
        for slot in np.flatnonzero(terminated):
            names.update(info["opponents"][slot])  # the ended game's, on the step that ends it
    assert names == {"value", "hoarder", "uniform"}


def test_an_illegal_learner_action_is_refused_before_any_game_changes() -> None:
    env = BibliosVectorEnv(3, 2, seed=0)
    observation, _ = env.reset()
    actions = legal_actions(env.action_masks(), np.random.default_rng(0))
    actions[1] = int(np.flatnonzero(~env.action_masks()[1])[0])
    with pytest.raises(IllegalActionError, match="game 1: action"):
        env.step(actions)
    assert np.array_equal(env.learner.observation, observation)


def test_an_opponents_fault_names_it() -> None:
    class Broken:
        name = "broken"

        def act_batch(self, observations: np.ndarray, action_masks: np.ndarray) -> np.ndarray:
            raise ZeroDivisionError("no")

    env = BibliosVectorEnv(2, 2, Broken(), learner_seat=1, seed=0)
    with pytest.raises(OpponentError, match="batch opponent 'broken' raised in act_batch"):
        env.reset()


def test_bad_options_are_named() -> None:
    with pytest.raises(ValueError, match=r"learner_seat must be None or a seat in 0\.\.1, got 2"):
        BibliosVectorEnv(2, 2, learner_seat=2)
    with pytest.raises(ValueError, match="opponents must be None, a batch agent"):
        BibliosVectorEnv(2, 2, opponents=3)  # type: ignore[arg-type]
    env = BibliosVectorEnv(2, 2)
    with pytest.raises(RuntimeError, match=r"call reset\(\) before step\(\)"):
        env.step(np.zeros(2, int))
    with pytest.raises(ValueError, match="seed must be one int"):
        env.reset(seed=[1, 2])


# ----------------------------------------------------------------------------- Stable-Baselines3
@pytest.mark.parametrize(("policy", "dict_observation"), [("MultiInputPolicy", True), ("MlpPolicy", False)])
def test_maskable_ppo_trains_through_the_sb3_adapter(policy: str, dict_observation: bool) -> None:
    sb3_contrib = pytest.importorskip("sb3_contrib")
    from stable_baselines3.common.vec_env import VecMonitor

    from biblios_env.vector.sb3 import BibliosVecEnv

    vec_env = VecMonitor(BibliosVecEnv(16, 2, seed=0, dict_observation=dict_observation, reward="vp"))
    model = sb3_contrib.MaskablePPO(policy, vec_env, n_steps=64, batch_size=256, n_epochs=1, seed=0, device="cpu")
    model.learn(total_timesteps=2048)
    assert model.num_timesteps >= 2048
    assert len(model.ep_info_buffer) > 0  # games finished, with their returns logged by VecMonitor
    observation = vec_env.reset()
    masks = np.stack(vec_env.env_method("action_masks"))
    actions, _ = model.predict(observation, action_masks=masks, deterministic=True)
    assert masks[np.arange(16), actions].all()


def test_the_sb3_adapter_reports_each_game_as_sb3_expects() -> None:
    from biblios_env.vector.sb3 import BibliosVecEnv

    vec_env = BibliosVecEnv(4, 3, seed=1)
    vec_env.seed(5)
    observation = vec_env.reset()
    assert vec_env.observation_space.contains({key: value[0] for key, value in observation.items()})
    assert vec_env.has_attr("action_masks")
    rng = np.random.default_rng(0)
    ended = 0
    while ended < 3:
        vec_env.step_async(legal_actions(np.stack(vec_env.env_method("action_masks")), rng))
        _observation, _rewards, dones, infos = vec_env.step_wait()
        for slot in np.flatnonzero(dones):
            ended += 1
            assert {"vp", "winners", "is_success", "learner_seat", "terminal_observation"} <= set(infos[slot])
    with pytest.raises(AttributeError, match="answer only env_method"):
        vec_env.env_method("render")


def test_a_network_opponent_acts_for_all_its_games_in_one_call() -> None:
    from agents.network_agent import NetworkAgent

    calls: list[int] = []

    class Counting(NetworkAgent):
        def act_batch(self, observations: np.ndarray, action_masks: np.ndarray) -> np.ndarray:
            calls.append(len(observations))
            return super().act_batch(observations, action_masks)

    env = BibliosVectorEnv(16, 2, Counting(), learner_seat=0, seed=0)
    env.reset()
    rng = np.random.default_rng(0)
    for _ in range(20):
        env.step(legal_actions(env.action_masks(), rng))
    assert max(calls) > 1  # several games in one forward
    assert sum(calls) >= 20


@pytest.mark.parametrize("opponent", [None, UniformBatchAgent()], ids=["default", "batch_agent"])
def test_a_game_with_no_opponent_to_move_is_untouched_by_the_opponents_stepping(
    monkeypatch: pytest.MonkeyPatch, opponent: UniformBatchAgent | None
) -> None:
    """After the learner's move, the SB3 adapter steps only the games where an opponent is to act:
    a game where the learner is to act again keeps the history, rows and observation its move left
    (the default opponent's compiled loop and a batch agent's rounds alike). Over a few steps both
    kinds of game occur, so the check is never vacuous."""
    from biblios_env.vector.sb3 import BibliosVecEnv

    vec_env = BibliosVecEnv(8, 2, opponent, learner_seat=0, seed=3, dict_observation=False)
    vec_env.reset()
    games = vec_env.learner.games
    learner_step = games.step
    after_learner: dict[int, tuple[list[int], np.ndarray, np.ndarray]] = {}

    def recording(actions: np.ndarray, active: np.ndarray | None = None, eager: bool = True) -> object:
        batch = learner_step(actions, active, eager=eager)
        if not after_learner and active is None:  # the learner's move (opponents' rounds come after)
            for slot in np.flatnonzero((batch.current_player == 0) & ~batch.terminated).tolist():
                rows = (games.observation_counts()[slot].copy(), batch.action_mask[slot].copy())
                after_learner[slot] = (list(games.game(slot).history), *rows)
        return batch

    monkeypatch.setattr(games, "step", recording)
    rng = np.random.default_rng(0)
    untouched = moved = 0
    for _ in range(12):
        after_learner.clear()
        before = [len(games.game(slot).history) for slot in range(8)]
        observations, _, dones, _ = vec_env.step(legal_actions(vec_env.action_masks(), rng))
        observation = np.asarray(observations)  # dict_observation=False: the plain array
        for slot, (history, counts, mask) in after_learner.items():
            assert games.game(slot).history == history
            assert np.array_equal(games.observation_counts()[slot], counts)
            assert np.array_equal(games.batch.action_mask[slot], mask)
            assert np.array_equal(observation[slot], counts * OBSERVATION_SCALE)
        untouched += len(after_learner)
        moved += sum(
            len(games.game(slot).history) > before[slot] + 1
            for slot in range(8)
            if slot not in after_learner and not dones[slot]
        )
    assert untouched > 0 and moved > 0


def test_a_batch_agent_that_reads_no_observations_is_handed_none() -> None:
    """``reads_observations = False`` (the uniform agent) hands the agent an empty array, so the
    positions where only it acts are never encoded; any other batch agent gets the rows of its
    games, equal to the observation the learner would see there."""
    from biblios_env.agent_interface import NO_OBSERVATIONS

    shown: dict[str, list[np.ndarray]] = {"masks only": [], "reads": []}

    class MasksOnly(UniformBatchAgent):
        def act_batch(self, observations: np.ndarray, action_masks: np.ndarray) -> np.ndarray:
            shown["masks only"].append(observations)
            return super().act_batch(observations, action_masks)

    class Reads(UniformBatchAgent):
        reads_observations = True

        def act_batch(self, observations: np.ndarray, action_masks: np.ndarray) -> np.ndarray:
            shown["reads"].append(observations.copy())
            assert len(observations) == len(action_masks)
            return super().act_batch(observations, action_masks)

    for agent in (MasksOnly(1), Reads(1)):
        env = BibliosVectorEnv(6, 3, agent, learner_seat=0, seed=5)
        env.reset()
        rng = np.random.default_rng(1)
        for _ in range(10):
            env.step(legal_actions(env.action_masks(), rng))
    assert shown["masks only"] and all(observations is NO_OBSERVATIONS for observations in shown["masks only"])
    assert shown["reads"] and all(len(observations) > 0 and observations.any() for observations in shown["reads"])
