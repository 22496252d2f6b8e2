"""The Gymnasium ``VectorEnv`` adapter behaves as Gymnasium 1.x's own vector envs do.

Code written for ``gymnasium.vector.SyncVectorEnv`` must run on ``BibliosVectorEnv`` with only the
constructor changed: the autoreset modes (``NEXT_STEP`` by default, ``SAME_STEP`` on request), the
infos laid out as ``VectorEnv._add_info`` lays them out (compared key by key, dtype by dtype, mask
by mask with a ``SyncVectorEnv`` of the one-game wrapper), Gymnasium's own vector wrappers, and a
CleanRL ``ppo.py``-shaped training loop.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from gymnasium.vector import AutoresetMode, SyncVectorEnv
from gymnasium.wrappers import vector as vector_wrappers

from biblios_env.engine.game import IllegalActionError
from biblios_env.gym_env import BibliosGymEnv
from biblios_env.vector.gymnasium_env import BibliosVectorEnv

#: Keys of every game's info at every reset and step, and those the step that ends a game adds.
EVERY_STEP_KEYS = {"learner_seat", "num_players", "opponents", "action_mask"}
RESULT_KEYS = {"vp", "winners", "is_success", "forfeit"}


def random_legal_actions(masks: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """A random legal action per game; any action in a game with none (one game's env after its end)."""
    choosable = masks | ~masks.any(axis=1, keepdims=True)
    return np.argmax(rng.random(masks.shape) * choosable, axis=1)


# ----------------------------------------------------------------------------- autoreset modes
def test_next_step_is_the_default_autoreset_mode_and_gymnasiums_names_are_accepted() -> None:
    default = BibliosVectorEnv(2, 2, seed=0)
    assert default.metadata["autoreset_mode"] is AutoresetMode.NEXT_STEP
    assert default.autoreset_mode is AutoresetMode.NEXT_STEP
    same_step = BibliosVectorEnv(2, 2, seed=0, autoreset_mode="SameStep")
    assert same_step.metadata["autoreset_mode"] is AutoresetMode.SAME_STEP
    assert default.metadata["autoreset_mode"] is AutoresetMode.NEXT_STEP  # each env has its own metadata
    assert BibliosVectorEnv(2, 2, autoreset_mode="NextStep").autoreset_mode is AutoresetMode.NEXT_STEP
    assert BibliosVectorEnv(2, 2, autoreset_mode=AutoresetMode.SAME_STEP).autoreset_mode is AutoresetMode.SAME_STEP


@pytest.mark.parametrize("mode", [AutoresetMode.DISABLED, "Disabled", "same_step", 1])
def test_an_unsupported_autoreset_mode_is_refused_naming_it(mode: Any) -> None:
    accepted = r"AutoresetMode\.NEXT_STEP \('NextStep'\), AutoresetMode\.SAME_STEP \('SameStep'\)"
    with pytest.raises(ValueError, match=rf"autoreset_mode must be one of {accepted}, got {mode!r}"):
        BibliosVectorEnv(2, 2, autoreset_mode=mode)


# ----------------------------------------------------------------------------- the infos' layout
def layout(infos: dict[str, Any]) -> dict[str, Any]:
    """Per key: the dtype and shape of its array and the types an object array holds; each mask's values."""
    described: dict[str, Any] = {}
    for key, value in infos.items():
        if isinstance(value, dict):
            described[key] = layout(value)
        elif key.startswith("_"):
            described[key] = (value.dtype, value.tolist())
        else:
            held = {type(item).__name__ for item in value if item is not None} if value.dtype == object else None
            described[key] = (value.dtype, value.shape, held)
    return described


def layouts_by_situation(envs: Any, steps: int) -> dict[tuple[tuple[bool, ...], tuple[bool, ...]], Any]:
    """The infos' layout of the first step of each situation: (the games that end, those that ended the step before)."""
    seen: dict[tuple[tuple[bool, ...], tuple[bool, ...]], Any] = {}
    _, infos = envs.reset(seed=3)
    seen[((), ())] = layout(infos)
    rng = np.random.default_rng(0)
    before = (False,) * envs.num_envs
    for _ in range(steps):
        _, _, terminated, _, infos = envs.step(random_legal_actions(infos["action_mask"], rng))
        situation = (tuple(terminated.tolist()), before)
        seen.setdefault(situation, layout(infos))
        before = situation[0]
    return seen


@pytest.mark.parametrize("mode", [AutoresetMode.NEXT_STEP, AutoresetMode.SAME_STEP])
def test_the_infos_are_laid_out_as_a_sync_vector_env_of_the_gymnasium_wrapper_lays_them_out(
    mode: AutoresetMode,
) -> None:
    reference = SyncVectorEnv([lambda: BibliosGymEnv(2) for _ in range(2)], autoreset_mode=mode)
    expected = layouts_by_situation(reference, 300)
    actual = layouts_by_situation(BibliosVectorEnv(2, 2, seed=0, autoreset_mode=mode), 300)
    ends, waits, on = ((True, False), (False, False)), ((False, False), (True, False)), ((False,) * 2, (False,) * 2)
    assert {((), ()), ends, waits, on} <= expected.keys() & actual.keys()  # the situations compared below
    for situation in expected.keys() & actual.keys():
        assert actual[situation] == expected[situation], situation
    ended = actual[ends]
    if mode is AutoresetMode.SAME_STEP:
        assert ended["_final_info"][1] == [True, False] and ended["_final_obs"][1] == [True, False]
        assert set(ended["final_info"]) - {f"_{key}" for key in ended["final_info"]} >= RESULT_KEYS
        assert not RESULT_KEYS & set(ended)
    else:
        assert "final_info" not in ended and "final_obs" not in ended
        assert ended["_is_success"][1] == [True, False]


def test_same_step_final_info_is_a_dict_of_arrays_with_the_ended_games_results() -> None:
    env = BibliosVectorEnv(3, 2, learner_seat=0, seed=1, autoreset_mode=AutoresetMode.SAME_STEP)
    _, infos = env.reset(seed=1)
    rng = np.random.default_rng(0)
    terminated = np.zeros(3, bool)
    while not terminated.any():
        _, reward, terminated, _, infos = env.step(random_legal_actions(infos["action_mask"], rng))
    final_info = infos["final_info"]
    assert reward.tolist() == [0.0, 0.0, 1.0]
    assert infos["_final_info"].tolist() == terminated.tolist() == [False, False, True]
    assert set(final_info) == {key for name in EVERY_STEP_KEYS | RESULT_KEYS for key in (name, f"_{name}")}
    assert all(final_info[f"_{name}"].tolist() == [False, False, True] for name in EVERY_STEP_KEYS | RESULT_KEYS)
    assert final_info["is_success"].tolist() == [False, False, True]
    assert final_info["learner_seat"].tolist() == [0, 0, 0] and final_info["num_players"].tolist() == [0, 0, 2]
    assert final_info["opponents"].tolist() == [None, None, ["uniform"]]
    assert final_info["vp"].tolist() == [None, None, [9, 6]]
    assert final_info["winners"].tolist() == [None, None, [0]]
    assert not final_info["action_mask"].any() and not final_info["forfeit"].any()
    assert infos["final_obs"][2].shape == (1134,) and infos["final_obs"][0] is None
    assert infos["_action_mask"].all() and infos["action_mask"][2].any()  # the new game's first decision


# ----------------------------------------------------------------------------- next-step autoreset
def test_next_step_returns_the_final_observation_then_starts_the_new_game_ignoring_the_action() -> None:
    """The same seeded games in both modes: up to the first end they are the same games, so the
    next-step env's final observation is the same-step env's ``final_obs``, and its next step shows
    the new game the same-step env dealt at once, unstepped whatever action it was given."""
    next_step = BibliosVectorEnv(3, 2, seed=1)
    same_step = BibliosVectorEnv(3, 2, seed=1, autoreset_mode=AutoresetMode.SAME_STEP)
    _, infos = next_step.reset(seed=1)
    same_step.reset(seed=1)
    rng = np.random.default_rng(0)
    steps = 0
    terminated = np.zeros(3, bool)
    while not terminated.any():
        actions = random_legal_actions(infos["action_mask"], rng)
        observation, reward, terminated, _, infos = next_step.step(actions)
        same_observation, same_reward, _, _, same_infos = same_step.step(actions)
        steps += 1
    assert (steps, terminated.tolist(), reward.tolist()) == (74, [False, True, False], [0.0, 1.0, 0.0])
    assert np.array_equal(reward, same_reward)
    assert np.array_equal(observation[1], same_infos["final_obs"][1])  # the ended game's last observation
    assert not np.array_equal(observation[1], same_observation[1])
    assert infos["is_success"].tolist() == [False, True, False] and infos["_is_success"].tolist() == [
        False,
        True,
        False,
    ]
    assert next_step.action_masks()[1].all() and infos["action_mask"][1].all()  # any action: it is ignored

    actions = random_legal_actions(infos["action_mask"], rng)
    actions[1] = int(np.flatnonzero(~same_infos["action_mask"][1])[0])  # illegal in the new game, and ignored
    observation, reward, terminated, truncated, infos = next_step.step(actions)
    assert reward[1] == 0.0 and not terminated[1] and not truncated[1]
    assert np.array_equal(observation[1], same_observation[1])  # the new game's first decision, not stepped
    assert np.array_equal(infos["action_mask"][1], same_infos["action_mask"][1])
    assert infos["learner_seat"][1] == same_infos["learner_seat"][1]
    assert not infos.get("_is_success", np.zeros(3, bool)).any()
    assert not next_step.waiting_reset.any()


def test_a_single_game_waits_one_step_for_its_reset() -> None:
    env = BibliosVectorEnv(1, 2, seed=0)
    _, infos = env.reset(seed=0)
    rng = np.random.default_rng(0)
    terminated = np.zeros(1, bool)
    while not terminated[0]:
        _, _, terminated, _, infos = env.step(random_legal_actions(infos["action_mask"], rng))
    observation, reward, terminated, _, infos = env.step(np.array([0]))  # every game waits: none is stepped
    assert reward.tolist() == [0.0] and terminated.tolist() == [False]
    assert np.array_equal(observation, env.learner.observation) and infos["action_mask"][0].sum() < 266


def test_an_illegal_action_raises_before_any_game_changes_while_a_game_waits() -> None:
    env = BibliosVectorEnv(3, 2, seed=1)
    _, infos = env.reset(seed=1)
    rng = np.random.default_rng(0)
    terminated = np.zeros(3, bool)
    while not terminated.any():
        _, _, terminated, _, infos = env.step(random_legal_actions(infos["action_mask"], rng))
    observation = env.learner.observation.copy()
    actions = random_legal_actions(infos["action_mask"], rng)
    actions[2] = int(np.flatnonzero(~infos["action_mask"][2])[0])
    with pytest.raises(IllegalActionError, match="game 2: action"):
        env.step(actions)
    assert np.array_equal(env.learner.observation, observation)
    assert env.waiting_reset.tolist() == [False, True, False]  # the reset is still to come


# ----------------------------------------------------------------------------- Gymnasium's wrappers
# Gymnasium 1.2's Box warns when it compares float32 bounds with float64's range (DtypeObservation to float64).
@pytest.mark.filterwarnings("ignore:overflow encountered in cast:RuntimeWarning")
def test_gymnasiums_vector_wrappers_run_on_it_unmodified() -> None:
    """Observation wrappers (which refuse same-step autoreset) and the episode statistics, whose
    lengths and returns are the learner's decisions and reward in each game."""
    as_float64 = vector_wrappers.DtypeObservation(BibliosVectorEnv(4, 2, learner_seat=0, seed=2), np.float64)
    normalize = vector_wrappers.NormalizeObservation(vector_wrappers.FlattenObservation(as_float64))
    envs = vector_wrappers.RecordEpisodeStatistics(normalize)
    observation, infos = envs.reset(seed=2)
    assert observation.dtype == np.float64 and observation.shape == (4, 1134)
    rng = np.random.default_rng(0)
    decisions, returns = np.zeros(4, int), np.zeros(4)
    waiting = np.zeros(4, bool)
    episodes: list[tuple[int, int, float]] = []
    for _ in range(200):
        observation, reward, terminated, _, infos = envs.step(random_legal_actions(infos["action_mask"], rng))
        decisions[~waiting] += 1
        returns[~waiting] += reward[~waiting]
        if terminated.any():
            assert infos["_episode"].tolist() == terminated.tolist()
            assert infos["episode"]["l"][terminated].tolist() == decisions[terminated].tolist()
            assert infos["episode"]["r"][terminated].tolist() == returns[terminated].tolist()
            slots = np.flatnonzero(terminated).tolist()
            episodes += [(slot, int(decisions[slot]), float(returns[slot])) for slot in slots]
            decisions[terminated], returns[terminated] = 0, 0.0
        waiting = terminated
    assert observation.dtype == np.float64 and np.isfinite(observation).all()
    assert normalize.obs_rms.count == pytest.approx(4 * 201, abs=0.01)  # the reset and every step
    assert episodes == [
        (0, 70, 1.0), (2, 76, 1.0), (1, 78, -1.0), (3, 80, 1.0), (0, 81, -1.0), (1, 83, -1.0), (2, 89, -1.0),
        (3, 99, -1.0),
    ]  # fmt: skip
    assert envs.episode_count == len(episodes)


# ----------------------------------------------------------------------------- a CleanRL-style loop
def test_a_cleanrl_ppo_shaped_loop_trains_on_it_unmodified() -> None:
    """CleanRL's ``ppo.py`` structure (rollout buffers, GAE, clipped update) with a tiny MLP and
    invalid-action masking, the masks read from ``infos``; only the env constructor is ours."""
    torch = pytest.importorskip("torch")
    from torch import nn

    num_envs, num_steps, num_iterations, update_epochs, num_minibatches = 8, 64, 2, 2, 4
    gamma, gae_lambda, clip_coef, ent_coef, vf_coef, max_grad_norm = 0.99, 0.95, 0.2, 0.01, 0.5, 0.5
    batch_size = num_envs * num_steps
    minibatch_size = batch_size // num_minibatches
    torch.manual_seed(0)
    shuffler = np.random.default_rng(0)

    envs = vector_wrappers.RecordEpisodeStatistics(BibliosVectorEnv(num_envs, 2, seed=0))  # the only change

    class Agent(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            size = int(np.prod(envs.single_observation_space.shape))
            self.critic = nn.Sequential(nn.Linear(size, 32), nn.Tanh(), nn.Linear(32, 1))
            self.actor = nn.Sequential(nn.Linear(size, 32), nn.Tanh(), nn.Linear(32, int(envs.single_action_space.n)))

        def get_value(self, x: Any) -> Any:
            return self.critic(x)

        def get_action_and_value(self, x: Any, mask: Any, action: Any = None) -> tuple[Any, Any, Any, Any]:
            logits = torch.where(mask, self.actor(x), torch.tensor(-1e8))
            probs = torch.distributions.Categorical(logits=logits)
            if action is None:
                action = probs.sample()
            return action, probs.log_prob(action), probs.entropy(), self.critic(x)

    agent = Agent()
    optimizer = torch.optim.Adam(agent.parameters(), lr=2.5e-4, eps=1e-5)
    obs = torch.zeros((num_steps, num_envs, *envs.single_observation_space.shape))
    masks = torch.zeros((num_steps, num_envs, int(envs.single_action_space.n)), dtype=torch.bool)
    actions = torch.zeros((num_steps, num_envs, *envs.single_action_space.shape))
    logprobs, rewards, dones, values = (torch.zeros((num_steps, num_envs)) for _ in range(4))

    global_step = 0
    episodic_returns: list[float] = []
    losses: list[float] = []
    next_obs_array, infos = envs.reset(seed=0)
    next_obs, next_mask = torch.Tensor(next_obs_array), torch.as_tensor(infos["action_mask"])
    next_done = torch.zeros(num_envs)
    for _iteration in range(num_iterations):
        for step in range(num_steps):
            global_step += num_envs
            obs[step], masks[step], dones[step] = next_obs, next_mask, next_done
            with torch.no_grad():
                action, logprob, _, value = agent.get_action_and_value(next_obs, next_mask)
                values[step] = value.flatten()
            actions[step], logprobs[step] = action, logprob
            next_obs_array, reward, terminations, truncations, infos = envs.step(action.numpy())
            rewards[step] = torch.tensor(reward).view(-1)
            next_obs, next_mask = torch.Tensor(next_obs_array), torch.as_tensor(infos["action_mask"])
            next_done = torch.Tensor(np.logical_or(terminations, truncations))
            if "episode" in infos:
                episodic_returns += infos["episode"]["r"][infos["_episode"]].tolist()

        with torch.no_grad():
            next_value = agent.get_value(next_obs).reshape(1, -1)
            advantages = torch.zeros_like(rewards)
            lastgaelam = 0
            for t in reversed(range(num_steps)):
                if t == num_steps - 1:
                    nextnonterminal, nextvalues = 1.0 - next_done, next_value
                else:
                    nextnonterminal, nextvalues = 1.0 - dones[t + 1], values[t + 1]
                delta = rewards[t] + gamma * nextvalues * nextnonterminal - values[t]
                advantages[t] = lastgaelam = delta + gamma * gae_lambda * nextnonterminal * lastgaelam
            returns = advantages + values

        b_obs = obs.reshape((-1, *envs.single_observation_space.shape))
        b_masks = masks.reshape(batch_size, -1)
        b_logprobs, b_actions = logprobs.reshape(-1), actions.reshape(-1)
        b_advantages, b_returns = advantages.reshape(-1), returns.reshape(-1)
        b_inds = np.arange(batch_size)
        for _epoch in range(update_epochs):
            shuffler.shuffle(b_inds)
            for start in range(0, batch_size, minibatch_size):
                mb_inds = b_inds[start : start + minibatch_size]
                _, newlogprob, entropy, newvalue = agent.get_action_and_value(
                    b_obs[mb_inds], b_masks[mb_inds], b_actions.long()[mb_inds]
                )
                ratio = (newlogprob - b_logprobs[mb_inds]).exp()
                mb_advantages = b_advantages[mb_inds]
                mb_advantages = (mb_advantages - mb_advantages.mean()) / (mb_advantages.std() + 1e-8)
                pg_loss = torch.max(
                    -mb_advantages * ratio, -mb_advantages * torch.clamp(ratio, 1 - clip_coef, 1 + clip_coef)
                ).mean()
                v_loss = 0.5 * ((newvalue.view(-1) - b_returns[mb_inds]) ** 2).mean()
                loss = pg_loss - ent_coef * entropy.mean() + v_loss * vf_coef
                optimizer.zero_grad()
                loss.backward()
                nn.utils.clip_grad_norm_(agent.parameters(), max_grad_norm)
                optimizer.step()
                losses.append(loss.item())

    assert global_step == num_iterations * num_steps * num_envs
    assert len(losses) == num_iterations * update_epochs * num_minibatches and np.isfinite(losses).all()
    assert len(episodic_returns) >= num_envs  # every game ended at least once in 128 decisions
    assert set(episodic_returns) <= {-1.0, 0.0, 1.0}
    assert envs.episode_count == len(episodic_returns)


def test_the_cleanrl_style_example_of_the_docs_runs(capsys: pytest.CaptureFixture[str]) -> None:
    """The guide's example runs as written and reports each ended game once (a game's first step is
    step 0, so the game ending on step 72 took 73 decisions)."""
    guide = (Path(__file__).resolve().parents[2] / "docs" / "vector.md").read_text()
    blocks = re.findall(r"```python\n(.*?)```", guide.split("### Gymnasium: autoreset modes and infos", 1)[1], re.S)
    assert len(blocks) == 1
    exec(compile(blocks[0], "docs/vector.md Gymnasium example", "exec"), {})
    printed = capsys.readouterr().out.splitlines()
    assert len(printed) == 16
    assert printed[0] == "step 72, game 5: return 1.0, 73 decisions"
