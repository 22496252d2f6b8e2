"""The RL framework examples (``experiments/frameworks``) and every claim ``docs/frameworks.md``
makes about TorchRL, Tianshou, SuperSuit, PettingZoo's conversions and Gymnasium's checker.

Each framework is an optional extra. A test that needs one skips when it is missing, except in
CI (``CI=true``), where the import must succeed: a CI that forgot an extra fails loudly rather
than passing on skipped tests. The runs are short (a few hundred env steps, one or two training
iterations); the examples' default command lines run only with ``-m slow``.
"""

from __future__ import annotations

import importlib
import importlib.metadata
import math
import re
import subprocess
import sys
import warnings
from collections.abc import Callable, Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

import numpy as np
import pytest
from gymnasium import spaces
from gymnasium.utils.env_checker import check_env
from optional_extras import require
from pettingzoo.test import api_test, parallel_api_test
from pettingzoo.utils.conversions import aec_to_parallel, turn_based_aec_to_parallel

from biblios_env import IllegalActionError
from biblios_env.actions import NUM_ACTIONS
from biblios_env.gym_env import BibliosGymEnv
from biblios_env.pettingzoo_env import env as biblios_env
from experiments.common.cli import invocation_note, program_name

ROOT = Path(__file__).resolve().parents[2]

# TorchRL 0.14.1 deprecates its own weight updaters as it defines them, when torchrl.collectors
# is imported: nothing here uses them, and nothing a user can change.
pytestmark = pytest.mark.filterwarnings(r"ignore:Creating \w+WeightUpdater which inherits:DeprecationWarning")

#: What ``reset`` warns for the key PettingZoo's checkers probe it with, ``{"options": 1}``: the
#: one warning the strict checker runs let through (``tests/test_env/test_pettingzoo_env.py`` pins its text).
PROBE_WARNING = r"ignoring unknown reset option\(s\) \['options'\]"
#: The examples, with the framework each needs.
EXAMPLES = [("torchrl_example", "torchrl"), ("tianshou_example", "tianshou"), ("supersuit_example", "supersuit")]


@pytest.fixture(scope="module")
def torch_single_thread() -> Iterator[ModuleType]:
    """One torch thread, as the examples run (small networks on 2 cores); restored afterwards."""
    torch = require("torch")
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield torch
    torch.set_num_threads(threads)


def assert_final_rewards(rewards: list[float], scheme: str) -> None:
    """The final rewards of one game as the reward scheme says (``biblios_env.engine.scoring``):
    ``"win"`` sums to zero (winners share +1, the others -1); ``"vp"`` is own VP minus the best
    other, so the leader's margin is exactly the runner-up's deficit."""
    if scheme == "win":
        assert math.isclose(sum(rewards), 0.0, abs_tol=1e-6), rewards
        assert all(value != 0.0 for value in rewards) or all(value == 0.0 for value in rewards), rewards
    else:
        best, second = sorted(rewards, reverse=True)[:2]
        assert best == -second, rewards


# ============================================================================ the docs' versions
@pytest.mark.parametrize("package", ["torchrl", "tensordict", "tianshou", "supersuit"])
def test_the_docs_name_the_installed_version(package: str) -> None:
    """docs/frameworks.md's table of versions tested names the versions the extras pin, the ones
    these tests run with."""
    require(package)
    row = next(line for line in (ROOT / "docs" / "frameworks.md").read_text().splitlines() if f"| {package}" in line)
    assert importlib.metadata.version(package) in row, row


# ============================================================================ missing frameworks
@pytest.mark.parametrize(("example", "framework"), EXAMPLES)
def test_an_example_without_its_framework_names_the_extra_to_install(
    example: str, framework: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each extra is named after its framework (pyproject.toml), so the message names both."""
    module = f"experiments.frameworks.{example}"
    # "import framework" and "from framework.sub import x" now fail, even if loaded before
    for name in [framework, *(name for name in sys.modules if name.startswith(f"{framework}."))]:
        monkeypatch.setitem(sys.modules, name, None)
    monkeypatch.delitem(sys.modules, module, raising=False)
    with pytest.raises(ModuleNotFoundError, match=re.escape(f'pip install -e ".[{framework}]"')) as raised:
        importlib.import_module(module)
    assert str(raised.value).startswith(f"{module} needs the '{framework}' extra")


# ============================================================================ TorchRL
@pytest.fixture(scope="module")
def torchrl_example(torch_single_thread: ModuleType) -> ModuleType:
    require("torchrl")
    return importlib.import_module("experiments.frameworks.torchrl_example")


#: (players, reward, steps): long enough for a game to end (2 players: about 135-190 steps,
#: 4 players: about 330-390).
TORCHRL_ROLLOUTS = [(2, "win", 300), (4, "vp", 450)]


@pytest.fixture(scope="module", params=TORCHRL_ROLLOUTS, ids=lambda case: f"{case[0]}p-{case[1]}")
def torchrl_rollout(request: pytest.FixtureRequest, torchrl_example: ModuleType) -> tuple[Any, str]:
    """A masked random rollout through TorchRL's wrapper (the env raises on an illegal action)."""
    num_players, reward, steps = request.param
    importlib.import_module("torch").manual_seed(0)  # the rollout samples the action spec with torch
    env = torchrl_example.make_env(num_players, seed=0, reward=reward)
    return env.rollout(steps, break_when_any_done=False), reward


def test_torchrl_rollout_acts_for_one_seat_a_step_and_only_legally(
    torchrl_rollout: tuple[Any, str], torchrl_example: ModuleType
) -> None:
    rollout, _ = torchrl_rollout
    acting = rollout[torchrl_example.ACTING]
    assert (acting.sum(-1) == 1).all()
    chosen = rollout[torchrl_example.ACTION].unsqueeze(-1)
    legal = rollout[torchrl_example.ACTION_MASK].gather(-1, chosen).squeeze(-1)
    assert legal[acting].all()
    assert rollout[torchrl_example.ACTION_MASK][acting].sum(-1).min() >= 1


def test_torchrl_marks_only_the_last_mover_at_a_game_end_where_every_seat_is_paid(
    torchrl_rollout: tuple[Any, str], torchrl_example: ModuleType
) -> None:
    """The gotcha the example's credit exists for (docs/frameworks.md, TorchRL)."""
    rollout, reward = torchrl_rollout
    ends = torchrl_example.game_ends(rollout)
    assert ends, "no game ended in the rollout"
    for end in ends:
        assert sum(end.acting) == 1
        assert_final_rewards(end.rewards, reward)


def test_torchrl_credit_gives_each_seat_its_own_final_reward_at_its_own_decisions(
    torchrl_rollout: tuple[Any, str], torchrl_example: ModuleType
) -> None:
    rollout, _ = torchrl_rollout
    done = rollout[torchrl_example.DONE].squeeze(-1)
    returns, ended = torchrl_example.returns_to_go(rollout[torchrl_example.REWARD].squeeze(-1), done)
    acting = rollout[torchrl_example.ACTING]
    start = 0
    for end in torchrl_example.game_ends(rollout):
        for seat, final in enumerate(end.rewards):
            decisions = acting[start : end.step + 1, seat]
            assert decisions.any(), f"seat {seat} never decided"
            assert (returns[start : end.step + 1, seat][decisions] == final).all()
        assert ended[start : end.step + 1].all()
        start = end.step + 1
    assert not ended[start:].any()  # the game still running at the end is left out


def test_returns_to_go_sum_each_seats_rewards_to_the_end_of_its_game(torchrl_example: ModuleType) -> None:
    torch = importlib.import_module("torch")
    rewards = torch.tensor([[0.0, 0.0], [0.0, 0.0], [1.0, -1.0], [0.0, 0.0], [0.5, 0.0]])
    done = torch.tensor([False, False, True, False, False])
    returns, ended = torchrl_example.returns_to_go(rewards, done)
    assert returns.tolist() == [[1.0, -1.0]] * 3 + [[0.5, 0.0]] * 2
    assert ended.tolist() == [True, True, True, False, False]


def test_torchrl_training_loss_is_finite_and_changes_the_policy(torchrl_example: ModuleType) -> None:
    torch = importlib.import_module("torch")
    torch.manual_seed(1)
    env = torchrl_example.make_env(2, seed=1)
    policy = torchrl_example.make_policy(env)
    before = [parameter.detach().clone() for parameter in policy.parameters()]
    (result,) = torchrl_example.train(env, policy, iterations=1, batch_steps=256)
    assert result.games >= 1 and result.decisions > 0
    assert result.loss is not None and math.isfinite(result.loss)
    assert any(not torch.equal(old, new) for old, new in zip(before, policy.parameters()))


def test_torchrl_wrapper_passes_its_spec_check_and_requires_use_mask(torchrl_example: ModuleType) -> None:
    from torchrl.envs import PettingZooWrapper
    from torchrl.envs.utils import check_env_specs

    check_env_specs(torchrl_example.make_env(3, seed=2))
    with (
        warnings.catch_warnings(),
        pytest.raises(ValueError, match=re.escape("For AEC environments you need to set use_mask=True")),
    ):
        warnings.filterwarnings("ignore", message="PettingZoo in TorchRL is tested", category=UserWarning)
        PettingZooWrapper(biblios_env(2))


def test_torchrl_drops_the_terminal_infos(torchrl_rollout: tuple[Any, str]) -> None:
    """The info spec comes from the empty infos of a reset, so the end's vp/winners never arrive."""
    rollout, _ = torchrl_rollout
    assert not [key for key in rollout.keys(True, True) if "info" in key]


def test_torchrl_0_14_names_and_warnings(torchrl_example: ModuleType) -> None:
    """What the docs quote: the collector's new name, the version warning of the wrapper, and the
    warning a collector gives without ``auto_register_policy_transforms``."""
    from torchrl.collectors import Collector
    from torchrl.envs import PettingZooWrapper

    with pytest.raises(
        ImportError, match=re.escape("cannot import name 'SyncDataCollector' from 'torchrl.collectors'")
    ):
        from torchrl.collectors import SyncDataCollector  # noqa: F401
    with pytest.warns(UserWarning, match=re.escape("PettingZoo in TorchRL is tested using version == 1.24.3")):
        PettingZooWrapper(biblios_env(2), use_mask=True)
    env = torchrl_example.make_env(2)
    with pytest.warns(FutureWarning, match=re.escape("The env passed to Collector is missing transforms")):
        Collector(env, torchrl_example.make_policy(env), frames_per_batch=16, total_frames=16).shutdown()


def test_torchrl_example_command_line(torchrl_example: ModuleType, capsys: pytest.CaptureFixture[str]) -> None:
    torchrl_example.main(["--steps", "200", "--train-iterations", "0", "--seed", "4"])
    output = capsys.readouterr().out
    assert output.startswith("random rollout: 200 steps")
    assert "games ended: 1" in output and "marked as acting" in output


# ============================================================================ Tianshou
@pytest.fixture(scope="module")
def tianshou_example(torch_single_thread: ModuleType) -> ModuleType:
    require("tianshou")
    return importlib.import_module("experiments.frameworks.tianshou_example")


#: (players, reward, steps), as for TorchRL.
TIANSHOU_ROLLOUTS = [(2, "win", 300), (3, "vp", 400)]


@pytest.fixture(scope="module", params=TIANSHOU_ROLLOUTS, ids=lambda case: f"{case[0]}p-{case[1]}")
def tianshou_rollout(request: pytest.FixtureRequest, tianshou_example: ModuleType) -> tuple[Any, int, str]:
    """A masked random rollout through Tianshou's wrapper. Its random algorithm draws from
    numpy's global generator, so that is seeded here."""
    num_players, reward, steps = request.param
    np.random.seed(0)
    buffer, stats = tianshou_example.random_rollout(num_players, steps, seed=0, reward=reward)
    assert stats.n_collected_steps == steps == len(buffer)
    return buffer, num_players, reward


def test_tianshou_rollout_acts_only_legally_and_ends_games(
    tianshou_rollout: tuple[Any, int, str], tianshou_example: ModuleType
) -> None:
    buffer, _, reward = tianshou_rollout
    size = len(buffer)
    masks = np.asarray(buffer.obs.mask[:size], dtype=bool)
    assert masks[np.arange(size), buffer.act[:size]].all()
    ends = tianshou_example.game_ends(buffer)
    assert ends, "no game ended in the rollout"
    for end in ends:
        assert_final_rewards(end.rewards, reward)
    # obs_next is the next mover's observation: another seat's wherever the turn passes
    assert (buffer.obs_next.agent_id[:size] != buffer.obs.agent_id[:size]).any()


def _games(buffer: Any, ends: list[Any]) -> Iterator[tuple[slice, Any]]:
    """The transitions of each finished game, with its end."""
    start = 0
    for end in ends:
        yield slice(start, end.transition + 1), end
        start = end.transition + 1


def test_tianshou_one_step_rewards_reach_only_the_last_mover(
    tianshou_rollout: tuple[Any, int, str], tianshou_example: ModuleType
) -> None:
    """The gotcha (docs/frameworks.md, Tianshou): the reward column of a seat's *own*
    transitions holds its final reward only if it made the game's last move."""
    buffer, num_players, _ = tianshou_rollout
    agents = [f"player_{seat}" for seat in range(num_players)]
    for game, end in _games(buffer, tianshou_example.game_ends(buffer)):
        actors, rewards = buffer.obs.agent_id[game], buffer.rew[game]
        for seat, agent in enumerate(agents):
            own = rewards[actors == agent, seat].sum()
            assert own == (end.rewards[seat] if agent == end.actor else 0.0)


def test_tianshou_whole_game_returns_credit_every_seat_with_its_final_reward(
    tianshou_rollout: tuple[Any, int, str], tianshou_example: ModuleType
) -> None:
    """The fix: the self-play DQN's targets for every transition of a finished game are that
    transition's seat's final reward (computed by Tianshou's own multi-agent preprocessing)."""
    buffer, num_players, reward = tianshou_rollout
    env = tianshou_example.make_env(num_players, reward)
    algorithm = tianshou_example.make_selfplay_dqn(env, num_players)
    ends = tianshou_example.game_ends(buffer)
    finished = np.arange(ends[-1].transition + 1)
    expected = np.zeros(len(finished))
    for game, end in _games(buffer, ends):
        seats = [env.agent_idx[agent] for agent in buffer.obs.agent_id[game]]
        expected[game] = np.asarray(end.rewards)[seats]
    processed = algorithm._preprocess_batch(buffer[finished], buffer, finished)
    for agent in env.agents:
        own = np.flatnonzero(buffer.obs.agent_id[finished] == agent)
        assert len(own) > 0
        np.testing.assert_allclose(processed[agent].returns.numpy().ravel(), expected[own])


def test_tianshou_training_loss_is_finite_and_changes_the_network(tianshou_example: ModuleType) -> None:
    torch = importlib.import_module("torch")
    np.random.seed(1)
    torch.manual_seed(1)
    env = tianshou_example.make_env(2)
    algorithm = tianshou_example.make_selfplay_dqn(env, 2)
    before = [parameter.detach().clone() for parameter in algorithm.parameters()]
    (game,) = tianshou_example.train(algorithm, 2, iterations=1, seed=1)
    assert game.steps > 0 and math.isfinite(game.loss)
    assert_final_rewards(game.returns, "win")
    assert any(not torch.equal(old, new) for old, new in zip(before, algorithm.parameters()))


def test_tianshou_example_command_line(tianshou_example: ModuleType, capsys: pytest.CaptureFixture[str]) -> None:
    tianshou_example.main(["--steps", "200", "--train-iterations", "0", "--seed", "4"])
    output = capsys.readouterr().out
    assert output.startswith("random rollout: 200 steps")
    assert "games ended: 1" in output


# ============================================================================ SuperSuit
@pytest.fixture(scope="module")
def supersuit_example() -> ModuleType:
    require("supersuit")
    return importlib.import_module("experiments.frameworks.supersuit_example")


def _supersuit() -> Any:
    return importlib.import_module("supersuit")


def _api_test(env: Any) -> None:
    """PettingZoo's ``api_test`` as it ships: its warnings about ``Dict`` observations allowed."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        api_test(env, num_cycles=200)


#: Wrappers that apply to the masked ``Dict`` observation as it is.
WORK_ON_THE_DICT: dict[str, Callable[[Any], Any]] = {
    "pad_action_space_v0": lambda env: _supersuit().pad_action_space_v0(env),
    "clip_reward_v0": lambda env: _supersuit().clip_reward_v0(env, -1, 1),
    "reward_lambda_v0": lambda env: _supersuit().reward_lambda_v0(env, lambda reward: reward / 2),
    "action_lambda_v1": lambda env: _supersuit().action_lambda_v1(env, lambda action, space: action, lambda s: s),
    "observation_lambda_v0 (with a space function)": lambda env: _supersuit().observation_lambda_v0(
        env, lambda observation, space: observation, lambda space: space
    ),
}


@pytest.mark.parametrize("name", WORK_ON_THE_DICT)
def test_supersuit_wrapper_works_on_the_dict_observation(name: str, supersuit_example: ModuleType) -> None:
    make = WORK_ON_THE_DICT[name]
    wrapped = make(biblios_env(2))
    decisions, final = supersuit_example.play_aec(wrapped, seed=0)
    assert decisions > 0 and set(final) == set(wrapped.possible_agents)
    assert math.isclose(sum(final.values()), 0.0, abs_tol=1e-9)
    _api_test(make(biblios_env(2)))


#: Wrappers that cannot take the ``Dict`` observation: the error each raises, as it starts.
FAIL_ON_THE_DICT: dict[str, tuple[Callable[[Any], Any], type[Exception], str]] = {
    "pad_observations_v0": (
        lambda env: _supersuit().pad_observations_v0(env),
        AssertionError,
        "homogenization only supports Discrete and Box spaces",
    ),
    "agent_indicator_v0": (
        lambda env: _supersuit().agent_indicator_v0(env),
        AssertionError,
        "agent_indicator space must be 1d, 2d, or 3d Box or Discrete, was Dict(",
    ),
    "flatten_v0": (lambda env: _supersuit().flatten_v0(env), AttributeError, "'Dict' object has no attribute 'low'"),
    "normalize_obs_v0": (
        lambda env: _supersuit().normalize_obs_v0(env),
        AttributeError,
        "'Dict' object has no attribute 'low'",
    ),
    "dtype_v0": (
        lambda env: _supersuit().dtype_v0(env, np.float32),
        AttributeError,
        "'Dict' object has no attribute 'low'",
    ),
    "frame_stack_v1": (
        lambda env: _supersuit().frame_stack_v1(env, 2),
        AssertionError,
        "Stacking is currently only allowed for Box and Discrete observation spaces",
    ),
    "frame_stack_v2": (
        lambda env: _supersuit().frame_stack_v2(env, 2),
        AssertionError,
        "Stacking is currently only allowed for Box and Discrete observation spaces",
    ),
    "observation_lambda_v0 (without a space function)": (
        lambda env: _supersuit().observation_lambda_v0(env, lambda observation, space: observation),
        AttributeError,
        "'Dict' object has no attribute 'low'",
    ),
    "black_death_v3 (on the AEC env)": (
        lambda env: _supersuit().black_death_v3(env),
        AssertionError,
        "Converting from an AEC environment to a Parallel environment with the to_parallel wrapper is not",
    ),
    "black_death_v3 (on turn_based_aec_to_parallel)": (
        lambda env: _supersuit().black_death_v3(turn_based_aec_to_parallel(env)).reset(seed=0),
        AssertionError,
        "observation sapces for black death must be Box spaces, is Dict(",  # sic
    ),
    "pettingzoo_env_to_vec_env_v1 (on the AEC env)": (
        lambda env: _supersuit().pettingzoo_env_to_vec_env_v1(env),
        AssertionError,
        "pettingzoo_env_to_vec_env takes in a pettingzoo ParallelEnv",
    ),
}


@pytest.mark.parametrize("name", FAIL_ON_THE_DICT)
def test_supersuit_wrapper_cannot_take_the_dict_observation(name: str, supersuit_example: ModuleType) -> None:
    make, error, message = FAIL_ON_THE_DICT[name]
    with pytest.raises(error, match="^" + re.escape(message)):
        make(biblios_env(2))


#: Wrappers that build and play but feed the env actions its mask did not allow: they repeat a
#: seat's earlier action, or show it an earlier (or all-ones) mask.
BREAK_THE_MASK: dict[str, Callable[[Any], Any]] = {
    "sticky_actions_v0": lambda env: _supersuit().sticky_actions_v0(env, 0.25),
    "frame_skip_v0": lambda env: _supersuit().frame_skip_v0(env, 2),
    "delay_observations_v0": lambda env: _supersuit().delay_observations_v0(env, 2),
}


@pytest.mark.parametrize("name", BREAK_THE_MASK)
def test_supersuit_wrapper_that_replays_actions_or_delays_masks_makes_illegal_moves(
    name: str, supersuit_example: ModuleType
) -> None:
    with pytest.raises(IllegalActionError, match="is not legal for seat"):
        supersuit_example.play_aec(BREAK_THE_MASK[name](biblios_env(2)), seed=0)


#: ``Box``-only wrappers, applied after :func:`strip_mask`.
AFTER_STRIP_MASK: dict[str, Callable[[Any], Any]] = {
    "flatten_v0": lambda env: _supersuit().flatten_v0(env),
    "normalize_obs_v0": lambda env: _supersuit().normalize_obs_v0(env),
    "dtype_v0": lambda env: _supersuit().dtype_v0(env, np.float16),
    "frame_stack_v2": lambda env: _supersuit().frame_stack_v2(env, 2),
    "pad_observations_v0": lambda env: _supersuit().pad_observations_v0(env),
    "agent_indicator_v0": lambda env: _supersuit().agent_indicator_v0(env),
}


@pytest.mark.parametrize("name", AFTER_STRIP_MASK)
def test_box_only_wrappers_work_once_the_mask_is_stripped_but_api_test_then_fails(
    name: str, supersuit_example: ModuleType
) -> None:
    make = AFTER_STRIP_MASK[name]
    wrapped = make(supersuit_example.strip_mask(biblios_env(2)))
    assert isinstance(wrapped.observation_space("player_0"), spaces.Box)
    decisions, final = supersuit_example.play_aec(wrapped, seed=0)  # the mask read from the unwrapped env
    assert decisions > 0 and math.isclose(sum(final.values()), 0.0, abs_tol=1e-9)
    with pytest.raises(IllegalActionError, match="is not legal for seat"):  # api_test samples unmasked actions
        _api_test(make(supersuit_example.strip_mask(biblios_env(2))))


# ============================================================================ PettingZoo conversions
@pytest.mark.parametrize("num_players", [2, 3, 4])
def test_turn_based_aec_to_parallel_plays_whole_games_and_passes_parallel_api_test(
    num_players: int, supersuit_example: ModuleType
) -> None:
    steps, rewards = supersuit_example.play_parallel(supersuit_example.parallel_env(num_players), seed=0)
    assert set(rewards) == {f"player_{seat}" for seat in range(num_players)}
    assert_final_rewards(list(rewards.values()), "win")
    # the same game as through the AEC loop with the same random choices: one step per decision
    assert (steps, rewards) == supersuit_example.play_aec(biblios_env(num_players), seed=0)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        warnings.filterwarnings("ignore", message=PROBE_WARNING, category=UserWarning)
        parallel_api_test(supersuit_example.parallel_env(num_players), num_cycles=1000)


def test_turn_based_aec_to_parallel_uses_only_the_acting_seats_action(supersuit_example: ModuleType) -> None:
    """Every other seat's mask is all zeros and its action is ignored, even an illegal one."""
    env = supersuit_example.parallel_env(3)
    observations, _ = env.reset(seed=5)
    rng = np.random.default_rng(5)
    while env.agents:
        deciding = [agent for agent in env.agents if observations[agent]["action_mask"].any()]
        assert len(deciding) == 1
        (agent,) = deciding
        actions = dict.fromkeys(env.agents, NUM_ACTIONS - 1)  # never legal at a gift turn's start
        actions[agent] = int(rng.choice(np.flatnonzero(observations[agent]["action_mask"])))
        observations, *_ = env.step(actions)


def test_aec_to_parallel_refuses_the_env() -> None:
    with pytest.raises(AssertionError, match="^" + re.escape("Converting from an AEC environment to a Parallel")):
        aec_to_parallel(biblios_env(2))


def test_supersuit_vector_env_pays_every_seat_slot_at_the_game_end(supersuit_example: ModuleType) -> None:
    vector = supersuit_example.vector_env(2, copies=2)
    assert vector.num_envs == 4
    observations, _ = vector.reset(seed=0)
    assert {key: value.shape for key, value in observations.items()} == {
        "action_mask": (4, NUM_ACTIONS),
        "observation": (4, vector.observation_space["observation"].shape[0]),
    }
    endings = supersuit_example.play_vector(vector, steps=400, seed=0)
    assert endings
    for row in endings:
        for copy in (row[:2], row[2:]):  # a copy whose game ended pays both seats, zero-sum
            assert (copy != 0).all() or (copy == 0).all()
            assert math.isclose(copy.sum(), 0.0, abs_tol=1e-6)


def test_supersuit_example_command_line(supersuit_example: ModuleType, capsys: pytest.CaptureFixture[str]) -> None:
    supersuit_example.main(["--players", "3", "--steps", "300"])
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].startswith("frame_stack_v2(strip_mask(env)): observation (2268,)")
    assert lines[1].startswith("turn_based_aec_to_parallel(env): ")


# ============================================================================ Gymnasium
def test_gymnasium_check_env_fails_on_the_gym_wrapper_by_default() -> None:
    """It steps unmasked random actions: with ``illegal_action="raise"`` the env raises."""
    with pytest.raises(IllegalActionError, match="is not legal for seat"):
        check_env(BibliosGymEnv(), skip_render_check=True)


@pytest.mark.parametrize("num_players", [2, (2, 3, 4)])
def test_gymnasium_check_env_passes_with_forfeit(num_players: int | tuple[int, ...]) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        check_env(BibliosGymEnv(num_players, illegal_action="forfeit"), skip_render_check=True)


# ============================================================================ command lines
@pytest.mark.parametrize(("example", "framework"), EXAMPLES)
def test_the_command_lines_follow_the_experiments_conventions(example: str, framework: str) -> None:
    """The conventions tests/test_experiments/test_cli.py checks for the other commands (experiments/common/cli.py)."""
    require(framework)
    module = f"experiments.frameworks.{example}"
    parser = importlib.import_module(module).build_parser()
    assert parser.prog == program_name(module)
    assert parser.epilog and invocation_note(module) in parser.epilog
    for action in parser._actions:
        assert action.help, f"{module}: {action.option_strings} has no help text"
    text = " ".join(parser.format_help().split())
    for confusing in ("(default: True)", "(default: False)", "(default: None)", "(default: ["):
        assert confusing not in text
    with pytest.raises(SystemExit):
        parser.parse_args(["--steps", "0"])  # "expected a positive integer, got 0"


# ============================================================================ the page itself
def test_the_docs_python_blocks_run_in_order() -> None:
    """docs/frameworks.md's ```python blocks, run one after another in one namespace."""
    for framework in ("torchrl", "tianshou", "supersuit"):
        require(framework)
    page = (ROOT / "docs" / "frameworks.md").read_text()
    blocks = re.findall(r"^```python\n(.*?)^```$", page, re.S | re.M)
    assert len(blocks) == 6
    namespace: dict[str, Any] = {}
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message="PettingZoo in TorchRL is tested", category=UserWarning)
        for block in blocks:
            exec(compile(block, "docs/frameworks.md", "exec"), namespace)
    assert namespace["rollout"].batch_size[0] == 300
    assert namespace["observations"]["action_mask"].shape == (8, NUM_ACTIONS)
    assert namespace["legal"].any()


# ============================================================================ the commands, whole
@pytest.mark.slow
@pytest.mark.parametrize(("example", "framework"), EXAMPLES)
def test_example_runs_with_its_defaults(example: str, framework: str) -> None:
    require(framework)
    finished = subprocess.run(
        [sys.executable, "-m", f"experiments.frameworks.{example}"], cwd=ROOT, capture_output=True, text=True
    )
    assert finished.returncode == 0, finished.stderr
    assert "games ended" in finished.stdout
