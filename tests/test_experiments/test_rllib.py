"""RLlib on the project: the env adapter under RLlib's env check and PettingZoo's api_test, the
masked module, ``python -m experiments.train_rllib`` (files, resume, refused settings, a stop on
forfeits) and its checkpoint playing legal games through the tournament.

Needs the ``rllib`` extra. Without it the module is skipped on a developer's machine, but in CI
(``CI=true``) the import must succeed: a CI that forgot the extra must fail, not pass silently.
The module starts one small Ray (two CPUs) for all its tests and stops it at the end; the
training runs are tiny (256 env steps an iteration, no env runner), about a minute in all on
two cores.
"""

# ruff: noqa: E402  (the framework imports follow the require() that skips without them)

from __future__ import annotations

import csv
import dataclasses
import json
import re
import shutil
import subprocess
import sys
import warnings
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest
from optional_extras import require

require("ray.rllib")  # a skip without the extra (a failure in CI): the imports below need it

import ray
import torch
from gymnasium import spaces
from pettingzoo.test import api_test
from ray.rllib.core.columns import Columns
from ray.rllib.env.wrappers.pettingzoo_env import PettingZooEnv
from ray.rllib.utils.pre_checks.env import check_multiagent_environments

import biblios_env
from biblios_env.actions import NUM_ACTIONS
from biblios_env.agent_interface import AgentObservation
from experiments.common.match import AgentSpec, AgentSpecError, build_agent
from experiments.tournament import TournamentConfig, run_tournament
from experiments.training import rllib
from experiments.training.rllib import support as rllib_support
from experiments.training.rllib.support import ActionMaskingTorchRLModule, RLlibAgent, RLlibObservations, make_rllib_env

#: RLlib registers its env wrapper with Gymnasium again at every algorithm it builds.
pytestmark = pytest.mark.filterwarnings("ignore:.*Overriding environment rllib-multi-agent-env-v0:UserWarning")

ROOT = Path(__file__).resolve().parents[2]
PLAYER_COUNTS = (2, 3, 4)
#: A tiny run: a few hundred env steps an iteration, sampled in this process, one evaluation.
TINY = [
    "--players", "2", "--num-env-runners", "0", "--train-batch", "256", "--minibatch-size", "64", "--epochs", "1",
    "--hidden", "32", "--eval-deals", "2", "--eval-every", "2", "--seed", "3", "--no-progress",
]  # fmt: skip
AGENT = f"{RLlibAgent.__module__}.{RLlibAgent.__qualname__}"


def rows(path: Path) -> list[dict[str, str]]:
    with path.open(newline="") as handle:
        return list(csv.DictReader(handle))


@pytest.fixture(scope="module")
def ray_started() -> Iterator[None]:
    """One local Ray for the module (``address="local"``: never a cluster named by RAY_ADDRESS);
    ``train_rllib`` uses the Ray it finds running and leaves it running."""
    ray.init(address="local", num_cpus=2, include_dashboard=False)
    yield
    ray.shutdown()


@pytest.fixture(scope="module")
def run(ray_started: None, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A two-iteration run, made once for the tests that read it."""
    out = tmp_path_factory.mktemp("rllib") / "run"
    assert rllib.main([*TINY, "--iterations", "2", "--out", str(out)]) == 0
    return out


# ----------------------------------------------------------------------------- the env adapter
@pytest.mark.parametrize("num_players", PLAYER_COUNTS)
def test_the_env_passes_rllibs_env_check_with_unmasked_actions(num_players: int) -> None:
    """RLlib's check steps ``action_space.sample()``, almost never legal: with forfeits it passes
    whatever id is drawn (seeded draws, so the run is the same every time)."""
    for seed in range(20):
        env = make_rllib_env({"num_players": num_players})
        for agent in env.possible_agents:
            env.get_action_space(agent).seed(seed)
        check_multiagent_environments(env)


def test_without_forfeit_rllibs_env_check_fails() -> None:
    """Why the adapter forfeits: the same check on the env as it raises by default."""
    env = PettingZooEnv(RLlibObservations(biblios_env.env(2)))
    env.get_action_space("player_0").seed(0)  # draws 226, a payment: illegal at the first decision
    with pytest.raises(ValueError, match="new gymnasium-style API") as error:
        check_multiagent_environments(env)
    assert isinstance(error.value.__cause__, biblios_env.IllegalActionError)


def test_a_forfeit_reaches_rllib_as_a_finished_episode_for_every_seat() -> None:
    env = make_rllib_env({"num_players": 3})
    observations, _ = env.reset(seed=1)
    (agent,) = observations
    _, rewards, terminated, truncated, infos = env.step({agent: NUM_ACTIONS - 1})
    assert terminated == {"player_0": True, "player_1": True, "player_2": True, "__all__": True}
    assert not truncated["__all__"]
    assert rewards == {agent: -1.0, **{other: 0.0 for other in rewards if other != agent}}
    assert all(info["forfeit"] and info["forfeited_by"] == agent for info in infos.values())


@pytest.mark.parametrize("num_players", PLAYER_COUNTS)
def test_the_renamed_observations_keep_values_and_pass_pettingzoos_api_test(num_players: int) -> None:
    plain, renamed = biblios_env.env(num_players), RLlibObservations(biblios_env.env(num_players))
    plain.reset(seed=4)
    renamed.reset(seed=4)
    agent = renamed.agent_selection
    observation = renamed.observe(agent)
    assert set(observation) == {"observations", "action_mask"} and observation["action_mask"].dtype == np.int8
    np.testing.assert_array_equal(observation["observations"], plain.observe(agent)["observation"])
    np.testing.assert_array_equal(observation["action_mask"], plain.observe(agent)["action_mask"])
    assert renamed.observation_space(agent).contains(observation)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # api_test's own warnings about dict observations
        api_test(RLlibObservations(biblios_env.env(num_players, illegal_action="forfeit")), num_cycles=400)


def test_the_rllib_env_always_forfeits() -> None:
    with pytest.raises(ValueError, match=r"always forfeits.*got illegal_action='raise'"):
        make_rllib_env({"num_players": 2, "illegal_action": "raise"})


def test_the_masked_module_needs_the_masked_observation_space() -> None:
    with pytest.raises(ValueError, match=r"'observations' and 'action_mask'.*RLlibObservations"):
        ActionMaskingTorchRLModule(
            observation_space=spaces.Box(0, 1, (4,)), action_space=spaces.Discrete(NUM_ACTIONS), model_config={}
        )


# ----------------------------------------------------------------------------- training
def test_a_run_writes_settings_progress_strength_and_checkpoints(run: Path) -> None:
    recorded = json.loads((run / rllib.RUN_FILE).read_text())
    assert recorded["layout"] == biblios_env.LAYOUT_FINGERPRINT
    assert recorded["settings"]["players"] == 2 and recorded["settings"]["train_batch"] == 256
    progress = rows(run / rllib.PROGRESS_FILE)
    assert [int(row["iteration"]) for row in progress] == [1, 2]
    assert tuple(progress[0]) == rllib.PROGRESS_COLUMNS
    assert 256 <= int(progress[0]["env_steps"]) < int(progress[1]["env_steps"])
    assert 0 < float(progress[0]["seconds"]) < float(progress[1]["seconds"])
    assert all(row["forfeits"] == "0" for row in progress)
    strength = rows(run / rllib.STRENGTH_FILE)
    assert [(row["iteration"], row["opponent"]) for row in strength] == [("2", "random"), ("2", "value")]
    for row in strength:
        assert row["games"] == "4" and row["deals"] == "2"
        assert 0 <= float(row["ci_low"]) <= float(row["win_rate"]) <= float(row["ci_high"]) <= 1
    checkpoints = sorted(path.name for path in (run / rllib.CHECKPOINTS).iterdir())
    assert checkpoints == ["iteration_000002"]  # evaluated every 2 iterations; no partial one left


def test_the_checkpoint_plays_legal_games_in_a_tournament(run: Path) -> None:
    """Games through the tournament harness: an illegal move would fail the run."""
    checkpoint = rllib.checkpoint_path(run, 2)
    learner = AgentSpec(AGENT, (("checkpoint", str(checkpoint)),))
    for players in (2, 3):  # one policy, any player count: the observation is padded to 4 seats
        lineup = (learner, *[AgentSpec("random")] * (players - 1))
        result = run_tournament(TournamentConfig(lineup, num_players=players, deals=1), workers=1, progress=False)
        assert not result.failures and len(result.records) == players
        assert all(record.result.decisions[record.result.agents.index(learner.label)] > 0 for record in result.records)


def test_the_agent_sees_what_the_env_showed_the_policy(run: Path) -> None:
    """At every decision of a game the agent's input is the env's observation and mask, and its
    move is the policy's greedy choice on that observation."""
    agent = RLlibAgent(rllib.checkpoint_path(run, 2))
    env = RLlibObservations(biblios_env.env(2))
    env.reset(seed=5)
    for _ in range(60):
        seat_agent = env.agent_selection
        observed = env.observe(seat_agent)
        legal = [int(action) for action in np.flatnonzero(observed["action_mask"])]
        decision = AgentObservation(env.unwrapped.view(seat_agent), legal)
        np.testing.assert_array_equal(decision.vector, observed["observations"])
        np.testing.assert_array_equal(decision.action_mask, observed["action_mask"])
        batch = {Columns.OBS: {key: torch.from_numpy(value)[None] for key, value in observed.items()}}
        with torch.no_grad():
            logits = agent.module.forward_inference(batch)[Columns.ACTION_DIST_INPUTS][0]
        action = agent.act(decision)
        assert action == int(torch.argmax(logits)) and action in legal
        env.step(action)


def test_the_agent_names_a_folder_without_a_checkpoint(tmp_path: Path) -> None:
    with pytest.raises(AgentSpecError, match=f"holds no RLlib policy 'shared'.*{tmp_path.name}"):
        build_agent(AgentSpec(AGENT, (("checkpoint", str(tmp_path)),)))


def test_resume_adds_iterations_from_the_last_checkpoint(run: Path, tmp_path: Path) -> None:
    resumed = tmp_path / "run"
    shutil.copytree(run, resumed)
    with (resumed / rllib.PROGRESS_FILE).open("a") as handle:  # an iteration after the checkpoint, lost
        handle.write("3,768,9.9,1,0.0,150.0,0,2.0,0.0,0.0\n")
    assert rllib.main([*TINY, "--iterations", "3", "--resume", str(resumed)]) == 0
    progress = rows(resumed / rllib.PROGRESS_FILE)
    assert [int(row["iteration"]) for row in progress] == [1, 2, 3]
    assert int(progress[2]["env_steps"]) > int(progress[1]["env_steps"])  # the counters were restored
    assert float(progress[2]["seconds"]) != 9.9
    assert rllib.last_checkpoint(resumed) == (3, rllib.checkpoint_path(resumed, 3))
    assert [row["iteration"] for row in rows(resumed / rllib.STRENGTH_FILE)] == ["2", "2", "3", "3"]


def test_a_stopped_run_saves_its_iteration_and_resumes_with_its_own_settings(
    ray_started: None, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A stop (Ctrl-C's handler, asked here after the first iteration) saves that iteration's
    checkpoint and prints the resume line; ``--resume DIR`` alone continues with the run's settings."""
    from experiments.training.rllib.cli import build_parser
    from experiments.training.stopping import StopRequest

    class StopAfterFirst(StopRequest):
        def after_update(self, progress: object) -> None:
            self.requested = True

    out = tmp_path / "run"
    parsed = build_parser().parse_args([*TINY, "--iterations", "3", "--out", str(out)])
    settings = {f.name: getattr(parsed, f.name) for f in dataclasses.fields(rllib.RLlibConfig)}
    config = rllib.RLlibConfig(**{**settings, "hidden": tuple(parsed.hidden)})
    assert rllib.train(config, progress=False, stop=StopAfterFirst()) == rllib.checkpoint_path(out, 1)
    assert f"resume with: python -m experiments.train_rllib --resume {out}" in capsys.readouterr().out
    assert rllib.last_checkpoint(out) == (1, rllib.checkpoint_path(out, 1))
    assert rllib.main(["--resume", str(out), "--no-progress"]) == 0
    assert [int(row["iteration"]) for row in rows(out / rllib.PROGRESS_FILE)] == [1, 2, 3]


@pytest.mark.parametrize(
    ("change", "named"),
    [(["--seed", "4"], "seed 3 in the run, 4 now"), (["--hidden", "16"], "hidden [32] in the run, [16] now")],
)
def test_resume_refuses_other_settings_naming_them(
    run: Path, change: list[str], named: str, capsys: pytest.CaptureFixture[str]
) -> None:
    before = sorted(path.name for path in run.rglob("*"))
    with pytest.raises(SystemExit) as exit_status:
        rllib.main([*TINY, *change, "--iterations", "3", "--resume", str(run)])
    assert exit_status.value.code == 2
    assert named in capsys.readouterr().err
    assert sorted(path.name for path in run.rglob("*")) == before


def test_a_run_stopped_before_its_first_checkpoint_starts_again(tmp_path: Path) -> None:
    config = rllib.RLlibConfig(out=tmp_path / "run", iterations=3)
    assert rllib.prepare_run(config, resume=False) == 0
    (config.out / rllib.PROGRESS_FILE).write_text("iteration,env_steps\n1,4000\n")
    with pytest.raises(rllib.RunFolderError, match="before its first checkpoint; start it again with --out"):
        rllib.check_run_folder(config, resume=True)
    assert rllib.prepare_run(config, resume=False) == 0
    assert rows(config.out / rllib.PROGRESS_FILE) == []


def test_another_programs_run_folder_is_left_alone(tmp_path: Path) -> None:
    (tmp_path / rllib.RUN_FILE).write_text('{"format": "biblios-tournament-run"}')
    with pytest.raises(rllib.RunFolderError, match=r"already holds a run of another program .*not a trainer's run"):
        rllib.check_run_folder(rllib.RLlibConfig(out=tmp_path), resume=False)
    with pytest.raises(rllib.RunFolderError, match=r"is not a run of experiments\.train_rllib"):
        rllib.check_run_folder(rllib.RLlibConfig(out=tmp_path), resume=True)


def test_a_forfeit_during_training_stops_the_run(
    ray_started: None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """With the masking switched off, the policy plays illegal actions: the forfeits are counted
    and the run stops at the first iteration, with no checkpoint (the module runs in this process)."""
    monkeypatch.setattr(rllib_support, "_masked", lambda outputs, mask: outputs)
    out = tmp_path / "run"
    assert rllib.main([*TINY, "--iterations", "2", "--eval-deals", "0", "--out", str(out)]) == 1
    assert re.search(r"error: iteration 1: [0-9]+ episode\(s\) ended in a forfeit", capsys.readouterr().err)
    (progress,) = rows(out / rllib.PROGRESS_FILE)
    assert int(progress["forfeits"]) > 0
    assert rllib.last_checkpoint(out) is None


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        (["--ray-address", "10.0.0.5:6379"], "--ray-address 10.0.0.5:6379 needs --backend ray"),
        (["--backend", "dask"], "invalid choice: 'dask'"),
        (["--eval-every", "0"], "expected a positive integer, got 0"),
    ],
)
def test_bad_command_lines_are_refused_before_ray_starts(
    arguments: list[str],
    message: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.delenv("RAY_ADDRESS", raising=False)
    with pytest.raises(SystemExit):
        rllib.main([*arguments, "--out", str(tmp_path / "run")])
    assert message in capsys.readouterr().err
    assert not (tmp_path / "run").exists()


def test_without_rllib_the_command_names_the_extra(tmp_path: Path) -> None:
    script = (
        "import sys\n"
        "sys.modules['ray'] = None  # as if Ray were not installed\n"
        "from experiments.train_rllib import main\n"
        f"main(['--out', {str(tmp_path / 'run')!r}])\n"
    )
    finished = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert finished.returncode == 2
    assert "needs RLlib and torch, the 'rllib' extra" in finished.stderr
    assert 'pip install -e ".[rllib]"' in finished.stderr
