"""PPO: a smoke run of the training script (train, save, reload, play legal games), the policy
file against the torch policy it came from, masking at every decision, and the shipped policy."""

from __future__ import annotations

import argparse
import csv
import dataclasses
import json
import re
from pathlib import Path

import numpy as np
import pytest

from agents import RandomAgent, ValueAgent, make_agent
from agents.network import NumpyNetwork
from agents.ppo_agent import (
    DEFAULT_POLICY,
    PPOAgent,
    export_policy,
    load_policy,
    read_policy_file,
    write_policy_file,
)
from biblios_env.actions import NUM_ACTIONS
from biblios_env.agent_interface import AgentObservation
from biblios_env.engine import Game
from biblios_env.engine.views import player_view
from biblios_env.observations import OBSERVATION_SIZE
from experiments.common.cli import HelpFormatter
from experiments.common.match import play_game
from experiments.records import read_training_run
from experiments.training.evaluation import plot_learning_curve
from experiments.training.opponents import FACTORY_POOL_NAMES, Mixture, factory_pool
from experiments.training.ppo.cli import build_parser, config_from_arguments, main
from experiments.training.ppo.config import PPOConfig
from experiments.training.ppo.evaluation import evaluate
from experiments.training.ppo.warm_start import network_arch
from experiments.training.teacher_games import collect_demonstrations


@pytest.fixture(scope="module")
def trained(tmp_path_factory):
    """A tiny run of the training script: a warm start (cloning, one DAgger round), two PPO updates,
    snapshots, evaluations, every output."""
    out = tmp_path_factory.mktemp("ppo")
    main([
        "--total-steps", "2048", "--n-envs", "2", "--n-steps", "512", "--n-epochs", "2", "--hidden", "32", "32",
        "--snapshot-every", "1024", "--eval-every", "1024", "--eval-deals", "2", "--eval-opponents", "value", "random",
        "--checkpoint-every", "1024", "--players", "2", "3", "--seed", "3", "--out", str(out), "--no-progress",
        "--bc-games", "4", "--bc-epochs", "1", "--dagger-rounds", "1", "--dagger-games", "2", "--dagger-epochs", "1",
        "--workers", "1", "--bc-data", str(out / "demonstrations.npz"),
    ])  # fmt: skip
    return out


def test_smoke_run_writes_every_output(trained):
    for name in (
        "final_model.zip",
        "policy.npz",
        "best_policy.npz",
        "eval.csv",
        "learning_curve.png",
        "training.json",
        "progress.csv",
    ):
        assert (trained / name).is_file(), name
    assert len(list((trained / "pool").glob("snapshot_*.npz"))) >= 3
    assert list((trained / "checkpoints").glob("ppo_*_steps.zip"))
    info = json.loads((trained / "training.json").read_text())
    assert info["timesteps"] >= 2048 and info["steps_per_second"] > 0
    assert info["command"].startswith("python -m experiments.train_ppo")
    rows = (trained / "eval.csv").read_text().splitlines()
    assert rows[0].startswith("timesteps,seconds,players,opponent")
    assert len(info["warm_start"]["rounds"]) == 2  # cloning, then one DAgger round
    episodes = read_training_run(trained).episodes  # every env's Monitor file, for the training notebook
    assert len(list((trained / "monitor").glob("env_*.monitor.csv"))) == 2
    assert len(episodes) > 0 and {"reward", "length", "time"} <= set(episodes.columns)


def test_one_evaluation_row_per_step_players_and_opponent(trained):
    """Rollouts are 2 envs x 512 steps: evaluations at the start, after the first update (1024 steps)
    and at the end (2048), each for 2 and 3 players against 2 opponents. An evaluation inside the
    last rollout used to write a second, different row for the final step."""
    with (trained / "eval.csv").open() as handle:
        rows = list(csv.DictReader(handle))
    keys = [(int(row["timesteps"]), int(row["players"]), row["opponent"]) for row in rows]
    assert len(keys) == len(set(keys)), sorted(keys)
    assert sorted({steps for steps, _, _ in keys}) == [0, 1024, 2048]
    assert len(keys) == 3 * 2 * 2


def test_the_final_evaluation_is_of_the_saved_final_policy(trained):
    info = json.loads((trained / "training.json").read_text())
    assert len(info["final_eval"]) == 2 * 2  # one row per player count and opponent
    for row in info["final_eval"]:
        again = evaluate(trained / "policy.npz", row["players"], row["opponent"], row["deals"])
        assert (again["win_rate"], again["mean_vp"]) == (row["win_rate"], row["mean_vp"])


@pytest.mark.parametrize("name", ["final_model.zip", "policy.npz"])
@pytest.mark.parametrize("deterministic", [True, False])
def test_saved_policy_reloads_and_plays_complete_legal_games(trained, name, deterministic):
    agent = PPOAgent(trained / name, deterministic=deterministic)
    for players, seed in ((2, 0), (3, 1), (4, 2)):
        lineup = [agent, *[ValueAgent() for _ in range(players - 1)]]
        result = play_game(lineup, seed, agent_seeds=list(range(players)))  # raises on an illegal action
        assert result.decisions[0] > 20


def test_dagger_keeps_only_the_learners_decisions_labelled_by_the_teacher(trained):
    learner = load_policy(trained / "policy.npz")
    data = collect_demonstrations("value", 3, (2, 3), "win", seed=0, learner=learner)
    teacher_only = collect_demonstrations("value", 3, (2, 3), "win", seed=0)
    assert 0 < len(data["actions"]) < len(teacher_only["actions"]) / 1.5
    assert data["observations"].dtype == np.float16 and data["observations"].shape[1] == OBSERVATION_SIZE
    assert data["masks"][np.arange(len(data["actions"])), data["actions"]].all()  # every label is legal there
    assert set(np.unique(data["returns"])) <= {-1.0, -0.5, 0.0, 0.5, 1.0}


def test_training_can_start_from_a_saved_model(trained, tmp_path):
    main(["--init", str(trained / "final_model.zip"), "--hidden", "32", "32", "--total-steps", "256", "--n-envs", "1",
          "--n-steps", "256", "--eval-every", "0", "--eval-deals", "1", "--eval-opponents", "random",
          "--checkpoint-every", "0", "--out", str(tmp_path), "--no-progress"])  # fmt: skip
    info = json.loads((tmp_path / "training.json").read_text())
    assert info["warm_start"] == {"init": str(trained / "final_model.zip")}


def test_policy_file_plays_exactly_like_the_torch_policy(trained):
    """The numpy player of policy.npz reproduces MaskablePPO.predict(..., action_masks=...)."""
    zipped, exported = load_policy(trained / "final_model.zip"), load_policy(trained / "policy.npz")
    game, observations = Game(3, seed=5), []
    chooser = np.random.default_rng(0)
    while not game.is_over:
        view = player_view(game.state, game.current_player)
        observations.append(AgentObservation(view, list(game.legal_actions())))
        game.apply(int(chooser.choice(game.legal_actions())))
    import torch

    batch = np.stack([o.vector for o in observations])
    with torch.no_grad():
        features = zipped.policy.extract_features(torch.as_tensor(batch), zipped.policy.pi_features_extractor)
        expected = zipped.policy.action_net(zipped.policy.mlp_extractor.forward_actor(features)).numpy()
    np.testing.assert_allclose(exported.logits(batch), expected, rtol=1e-4, atol=1e-4)
    for observation in observations:
        action, _ = zipped.predict(
            observation.vector, deterministic=True, action_masks=observation.action_mask.astype(bool)
        )
        assert exported.choose(observation.vector, observation.action_mask, True, chooser) == int(action)


def rigged_policy(favourite: int) -> NumpyNetwork:
    """A policy that loves one action above all others, legal or not."""
    head_bias = np.zeros(NUM_ACTIONS, np.float32)
    head_bias[favourite] = 1e4
    return NumpyNetwork(
        [],
        [
            (np.zeros((4, OBSERVATION_SIZE), np.float32), np.zeros(4, np.float32)),
            (np.zeros((NUM_ACTIONS, 4), np.float32), head_bias),
        ],
        metadata={"hidden_layers": [4]},
    )


@pytest.mark.parametrize("deterministic", [True, False])
def test_the_mask_is_applied_at_every_decision(deterministic):
    agent = PPOAgent.from_policy(rigged_policy(244), deterministic)
    result = play_game([agent, RandomAgent()], seed=4, agent_seeds=[0, 1])  # REFUSE (244) is rarely legal
    assert result.decisions[0] > 20
    probabilities = agent.policy.probabilities(
        np.zeros(OBSERVATION_SIZE, np.float32), np.eye(NUM_ACTIONS, dtype=np.int8)[3]
    )
    assert probabilities[3] == 1.0 and probabilities.sum() == 1.0
    with pytest.raises(ValueError, match="allows no action"):
        agent.policy.choose(
            np.zeros(OBSERVATION_SIZE, np.float32), np.zeros(NUM_ACTIONS, np.int8), deterministic, agent.rng
        )


def test_stochastic_play_is_reproducible_from_the_seed(trained):
    def actions(seed: int) -> tuple[int, ...]:
        result = play_game(
            [PPOAgent(trained / "policy.npz", deterministic=False), RandomAgent()], 9, agent_seeds=[seed, 0]
        )
        return (*result.vp, result.actions)

    assert actions(1) == actions(1)


def test_policy_file_round_trip_and_errors(trained, tmp_path):
    policy = read_policy_file(trained / "policy.npz")
    assert policy.metadata["hidden_layers"] == [32, 32] and policy.value_kind == "return"
    actor = OBSERVATION_SIZE * 32 + 32 + 32 * 32 + 32 + 32 * NUM_ACTIONS + NUM_ACTIONS
    critic = OBSERVATION_SIZE * 32 + 32 + 32 * 32 + 32 + 32 + 1
    assert policy.num_parameters == actor + critic
    half = export_policy(load_policy(trained / "final_model.zip").policy, tmp_path / "half.npz", dtype="float16")
    assert half.stat().st_size < (trained / "policy.npz").stat().st_size
    with pytest.raises(ValueError, match="no policy file"):
        PPOAgent(tmp_path / "missing.npz")
    with pytest.raises(ValueError, match=r"\.npz policy file or a \.zip"):
        PPOAgent(tmp_path / "policy.pt")
    np.savez(tmp_path / "other.npz", meta=np.array(json.dumps({"format": "something else"})))
    with pytest.raises(ValueError, match="not a biblios-network"):
        read_policy_file(tmp_path / "other.npz")


def test_policy_file_keeps_weights_and_metadata(tmp_path):
    policy = rigged_policy(7)
    policy.metadata["note"] = "rigged"
    for dtype in ("float32", "float16"):
        again = read_policy_file(write_policy_file(policy, tmp_path / f"rigged_{dtype}.npz", dtype))
        assert again.metadata["note"] == "rigged" and again.metadata["hidden_layers"] == [4]
        vector = np.ones(OBSERVATION_SIZE, np.float32)
        np.testing.assert_allclose(again.logits(vector), policy.logits(vector), rtol=1e-3)


def parse_mixture(items):
    return Mixture.parse(items, special=FACTORY_POOL_NAMES)


def test_opponent_mixture_and_pool():
    mixture = parse_mixture(["value@0.5", "snapshot@0.5"])
    pool = factory_pool(mixture, [DEFAULT_POLICY, DEFAULT_POLICY])
    assert len(pool) == 3 and pool.weights == [0.5, 0.25, 0.25]
    assert len(factory_pool(mixture, [])) == 1
    only_snapshots = factory_pool(parse_mixture(["snapshot@1"]), [])  # random play until the first snapshot
    assert len(only_snapshots) == 1 and only_snapshots(2, np.random.default_rng(0))[0].name == "random"
    for bad, named in ((["value"], "SPEC@WEIGHT"), (["value@x"], "value@x"), (["nobody@1"], "nobody"),
                       (["value@-1"], "value@-1"), (["value@0"], "no positive weight"),
                       (["value=0.5,self=0.5"], "write value@0.5 self@0.5"), (["self@1"], "'snapshot'"),
                       ("value@1", "one per argument")):  # fmt: skip
        with pytest.raises(ValueError, match=named):
            parse_mixture(bad)


def test_the_learning_curve_is_drawn_without_switching_the_callers_matplotlib_backend(tmp_path):
    """A notebook that trains in its kernel keeps its inline figures (the plot used to force Agg)."""
    import matplotlib

    rows = [
        {"timesteps": steps, "players": 2, "opponent": "value", "win_rate": 0.4, "ci_low": 0.3, "ci_high": 0.5}
        for steps in (0, 100)
    ]
    before = matplotlib.get_backend()
    matplotlib.use("svg")
    try:
        assert plot_learning_curve(rows, "timesteps", tmp_path / "curve.png", "test", "steps").stat().st_size > 1000
        assert matplotlib.get_backend() == "svg"
    finally:
        matplotlib.use(before)


# ----------------------------------------------------------------------------- command line
def test_every_option_has_help_and_no_false_default():
    parser = build_parser()
    for action in parser._actions:
        assert action.help, f"{action.option_strings} has no help text"
    text = parser.format_help()
    assert "(default: None)" not in text
    assert not re.search(r"--no-progress\s+[^\n]*\(default: True\)", text)  # the flag's own default is off
    assert re.search(r"--progress, --no-progress\s+show a progress bar", text)
    assert build_parser().parse_args([]).progress is True
    assert build_parser().parse_args(["--no-progress"]).progress is False
    assert build_parser().parse_args([]).hidden == [128, 128]


def test_the_help_formatter_shows_defaults_only_where_they_are_true():
    """``--quiet (default: False)`` reads as a claim about the flag; ``(default: None)`` says nothing."""
    parser = argparse.ArgumentParser(formatter_class=HelpFormatter)
    parser.add_argument("--quiet", action="store_true", help="say less")
    parser.add_argument("--no-plot", dest="plot", action="store_false", help="no plot")
    parser.add_argument("--out", help="output folder")
    parser.add_argument("--size", type=int, default=3, help="a size")
    parser.add_argument("--rate", type=float, default=0.5, help="a rate (default: half)")
    text = parser.format_help()
    assert "(default: False)" not in text and "(default: True)" not in text and "(default: None)" not in text
    assert "a size (default: 3)" in text and "a rate (default: half)\n" in text


# ----------------------------------------------------------------------------- the shipped policy
def test_shipped_policy_is_small_and_documented():
    assert DEFAULT_POLICY.is_file(), f"{DEFAULT_POLICY} is missing"
    assert DEFAULT_POLICY.stat().st_size < 1_500_000
    meta = read_policy_file(DEFAULT_POLICY).metadata
    assert meta["trained_by"].startswith("python -m experiments.train_ppo")
    assert (DEFAULT_POLICY.parent / "README.md").is_file() and (DEFAULT_POLICY.parent / "ppo_2p.json").is_file()


@pytest.mark.parametrize("players", [2, 3, 4])
def test_shipped_policy_plays_legal_games_through_the_registry(players):
    agent = make_agent("ppo")
    assert agent.name == "ppo" and agent.path == DEFAULT_POLICY
    for seed in range(2):
        lineup = [agent, make_agent("value"), *[RandomAgent() for _ in range(players - 2)]]
        play_game(lineup, seed, agent_seeds=list(range(players)))
    with pytest.raises(ValueError, match="unknown parameter"):
        make_agent("ppo", colour="red")


def test_shipped_policy_decides_fast():
    """Opponents drawn from the pool must not slow training: numpy inference is well under a millisecond."""
    import time

    policy = load_policy(DEFAULT_POLICY)
    vector, mask = np.zeros(OBSERVATION_SIZE, np.float32), np.ones(NUM_ACTIONS, np.int8)
    rng = np.random.default_rng(0)
    start = time.perf_counter()
    for _ in range(200):
        policy.choose(vector, mask, False, rng)
    assert (time.perf_counter() - start) / 200 < 0.005  # loose: CI machines are slow and shared


@pytest.mark.slow
def test_longer_training_from_scratch_beats_random(tmp_path):
    """About 2 minutes: PPO from scratch, 60k steps against random opponents, beats random."""
    main([
        "--total-steps", "60000", "--bc-games", "0", "--learning-rate", "3e-4", "--ent-coef", "0.01",
        "--reward", "win", "--opponents", "random@1", "--eval-every", "0", "--eval-deals", "50",
        "--eval-opponents", "random", "--checkpoint-every", "0", "--out", str(tmp_path), "--no-progress",
    ])  # fmt: skip
    info = json.loads((tmp_path / "training.json").read_text())
    assert info["final_eval"][0]["win_rate"] > 0.7


def test_the_command_line_and_ppo_config_have_the_same_settings_and_defaults():
    """One field per flag, in the same order, with the flag's default: a flag added to one and
    not the other, or a default changed in one place only, fails here."""
    parser = build_parser()
    flags = [action.dest for action in parser._actions if action.dest not in ("help", "resume")]
    assert flags == [field.name for field in dataclasses.fields(PPOConfig)]
    defaults = config_from_arguments(parser.parse_args([]))
    assert dataclasses.replace(defaults, out=Path("x")) == PPOConfig(out=Path("x"))
    assert defaults.out.parent == Path("runs") and defaults.out.name.startswith("ppo-")
    assert "--init-network" in parser.format_help()


def test_ppo_config_settings_are_what_training_json_recorded_from_the_namespace():
    argv = ["--out", "runs/x", "--players", "2", "3", "--hidden", "32", "16", "--bc-data", "d.npz", "--no-progress"]
    args = build_parser().parse_args(argv)
    recorded = {key: str(value) if isinstance(value, Path) else value for key, value in vars(args).items()}
    del recorded["resume"]  # the command's, not a setting of the run
    assert recorded["total_steps"] is None  # not given: a new run takes the settings' default
    recorded["total_steps"] = PPOConfig.total_steps
    settings = config_from_arguments(args).settings()
    assert json.dumps(settings) == json.dumps(recorded)  # same keys, order and values as before PPOConfig
    assert settings["players"] == [2, 3] and settings["hidden"] == [32, 16] and settings["progress"] is False


def test_a_network_that_reads_the_heuristics_proposal_cannot_start_ppo():
    """The PPO policy sees the Gymnasium observation only, so a network that also reads the
    ``value`` heuristic's proposed move would be fed the wrong inputs: it is refused by name."""
    from agents.network import INPUTS

    rng = np.random.default_rng(0)

    def layer(inputs: int, outputs: int) -> tuple[np.ndarray, np.ndarray]:
        return rng.normal(0, 0.1, (outputs, inputs)).astype(np.float32), np.zeros(outputs, np.float32)

    def network(inputs: str) -> NumpyNetwork:
        trunk = [layer(INPUTS[inputs], 16)]
        return NumpyNetwork(trunk, [layer(16, NUM_ACTIONS)], [layer(16, 4), layer(4, 1)], inputs=inputs)

    assert network_arch(network("observation")) == {"pi": [16], "vf": [16, 4]}
    with pytest.raises(ValueError, match=r"reads 'observation\+value'"):
        network_arch(network("observation+value"))


def test_an_exception_mid_training_leaves_no_worker_process(tmp_path, monkeypatch):
    """The subprocess environments are closed when training fails half-way (not left running)."""
    import multiprocessing

    from experiments.training.ppo import training

    def failing_callback(*_: object) -> None:
        raise RuntimeError("failed mid-training")

    monkeypatch.setattr(training, "build_callback", failing_callback)
    arguments = ["--total-steps", "256", "--n-envs", "2", "--vec", "subproc", "--n-steps", "64", "--hidden", "8"]
    arguments += ["--bc-games", "0", "--eval-every", "0", "--checkpoint-every", "0", "--out", str(tmp_path / "run")]
    before = set(multiprocessing.active_children())
    with pytest.raises(RuntimeError, match="failed mid-training"):
        main([*arguments, "--no-progress"])
    assert set(multiprocessing.active_children()) - before == set()
