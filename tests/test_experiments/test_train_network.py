"""The expert-iteration training command (experiments.train_network) and its parts: a smoke run
of the whole command with a tiny budget, a resume from its checkpoint that finishes the run
exactly as an uninterrupted one does, labelled self-play data, and the network's torch/numpy
round trip."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import numpy as np
import pytest
from interrupts import interrupt, run_module
from optional_extras import require

from agents.network import NumpyNetwork
from biblios_env.actions import NUM_ACTIONS
from biblios_env.observations import OBSERVATION_SCALE
from experiments import train_network
from experiments.common.match import parse_agent_spec
from experiments.common.parallel import Runner
from experiments.training.networks import Samples, TorchNetwork, fit, from_numpy, to_numpy
from experiments.training.teacher_games import SelfPlayConfig, generate

ROOT = Path(__file__).resolve().parents[2]
TINY = [
    "--players", "2", "3", "--iterations", "1", "--bootstrap-games", "3", "--games", "1",
    "--teacher", "ismcts:iterations=2", "--hidden", "16", "--epochs", "1", "--bootstrap-epochs", "1",
    "--eval-deals", "1", "--eval-opponents", "value", "random", "--workers", "1", "--no-progress",
]  # fmt: skip


def test_selfplay_labels_the_teachers_moves_and_the_final_win_share() -> None:
    config = SelfPlayConfig(players=(2, 3), teacher=parse_agent_spec("value"), seed=3)
    samples = generate(config, range(4))
    assert len(samples) > 100 and set(samples.players.tolist()) == {2, 3}
    masks = np.unpackbits(samples.masks, axis=1, count=NUM_ACTIONS).astype(bool)
    assert masks[np.arange(len(samples)), samples.actions].all(), "every label is a legal action"
    assert (masks.sum(axis=1) > 1).all(), "forced moves are not recorded"
    for game in np.unique(samples.games):
        values = set(samples.values[samples.games == game].tolist())
        assert values <= {0.0, 0.5, 1 / 3, 1.0}
    again = generate(config, range(4), runner=Runner(workers=2))
    np.testing.assert_array_equal(again.counts, samples.counts)  # the same data on any number of workers


def test_dagger_games_follow_the_learner_where_the_teacher_does_not_play() -> None:
    """With teacher_share 0 the learner (random) plays; the labels are still the teacher's."""
    config = SelfPlayConfig(
        players=(2,), teacher=parse_agent_spec("value"), learner=parse_agent_spec("random"), teacher_share=0.0,
        opponents=((parse_agent_spec("value"), 1.0),), seed=4,
    )  # fmt: skip
    samples = generate(config, range(2))
    assert 20 < len(samples) < 200  # one learner seat per game, not every seat


def test_torch_and_numpy_networks_agree(tmp_path) -> None:
    torch = require("torch")
    config = SelfPlayConfig(players=(2,), teacher=parse_agent_spec("value"), seed=5)
    samples = generate(config, range(3))
    network = TorchNetwork((24, 12), value_hidden=8)
    report = fit(network, samples, epochs=1, held_out=0.34)
    assert 0.0 <= report.agreement <= 1.0
    exported = NumpyNetwork.load(to_numpy(network, {"players": [2]}).save(tmp_path / "n.npz"))
    x = samples.counts[:5].astype(np.float32) * OBSERVATION_SCALE
    with torch.no_grad():
        logits, value = network.forward(torch.from_numpy(x))
    np.testing.assert_allclose(exported.logits(x), logits.numpy(), rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(exported.predict_value(x), torch.sigmoid(value).numpy(), rtol=1e-4, atol=1e-5)
    back = from_numpy(exported)
    with torch.no_grad():
        np.testing.assert_allclose(back.forward(torch.from_numpy(x))[0].numpy(), logits.numpy(), rtol=1e-5, atol=1e-5)


def test_samples_round_trip(tmp_path) -> None:
    samples = generate(SelfPlayConfig(players=(2,), teacher=parse_agent_spec("random"), seed=6), range(1))
    samples.save(tmp_path / "s.npz")
    again = Samples.load(tmp_path / "s.npz")
    np.testing.assert_array_equal(again.actions, samples.actions)
    np.testing.assert_array_equal(again.counts, samples.counts)


def test_the_training_command_runs_and_resumes(tmp_path, capsys) -> None:
    """The whole recipe with a tiny budget; then a run interrupted after its bootstrap and resumed
    ends with the same networks and evaluations as the uninterrupted one."""
    require("torch")
    whole = tmp_path / "whole"
    assert train_network.main([*TINY, "--out", str(whole)]) == 0
    for name in ("run.json", "state.json", "eval.csv", "strength.png", "network_0.npz", "network_1.npz",
                 "best_network.npz", "data/iteration_0.npz", "data/iteration_1.npz"):  # fmt: skip
        assert (whole / name).is_file(), name
    rows = list(csv.DictReader((whole / "eval.csv").open()))
    assert {(r["iteration"], r["players"], r["opponent"]) for r in rows} == {
        (i, p, o) for i in ("0", "1") for p in ("2", "3") for o in ("value", "random")
    }
    network = NumpyNetwork.load(whole / "best_network.npz")
    assert network.metadata["players"] == [2, 3]
    assert network.metadata["settings"] == json.loads((whole / "run.json").read_text())["settings"]

    # Run in two chunks: the bootstrap alone, then resumed for one more iteration.
    parted = tmp_path / "parted"
    assert train_network.main([*TINY, "--out", str(parted), "--iterations", "0"]) == 0
    with pytest.raises(SystemExit):
        train_network.main(["--resume", str(parted), "--seed", "9"])
    assert "may be given, not --seed" in capsys.readouterr().err
    assert train_network.main(["--resume", str(parted), "--iterations", "1", "--workers", "1", "--no-progress"]) == 0
    assert json.loads((parted / "state.json").read_text())["completed"] == 1
    first = NumpyNetwork.load(whole / "network_1.npz")
    second = NumpyNetwork.load(parted / "network_1.npz")
    for (w1, b1), (w2, b2) in zip(first.trunk + first.policy, second.trunk + second.policy, strict=True):
        np.testing.assert_array_equal(w1, w2)
        np.testing.assert_array_equal(b1, b2)

    def results(run) -> list[dict[str, str]]:  # everything but the timings
        return [
            {k: v for k, v in row.items() if k != "ms_per_decision"}
            for row in csv.DictReader((run / "eval.csv").open())
        ]

    assert results(parted) == results(whole)
    with pytest.raises(SystemExit):
        train_network.main([*TINY, "--out", str(whole)])
    assert "already holds a run" in capsys.readouterr().err


def test_the_best_network_is_chosen_against_value_or_else_the_first_opponent(tmp_path) -> None:
    """A run evaluated without ``value`` picks its best iteration against its first opponent
    (it used to stop at the end of its first iteration, finding no ``value`` rows)."""
    from experiments.training.expert_iteration import EVAL_FILE, ITERATION_EVAL_COLUMNS, best_iteration, yardstick
    from experiments.training.runs import append_rows

    rates = {(0, "random"): 0.6, (1, "random"): 0.9, (0, "hoarder"): 0.5, (1, "hoarder"): 0.2}
    rows = [
        {"iteration": i, "players": 2, "opponent": o, "win_rate": rate, "deals": 1} for (i, o), rate in rates.items()
    ]
    append_rows(tmp_path / EVAL_FILE, ITERATION_EVAL_COLUMNS, rows)
    assert yardstick(("random", "value")) == "value"
    assert yardstick(("hoarder", "random")) == "hoarder"
    assert best_iteration(tmp_path, yardstick(("hoarder", "random"))) == 0
    assert best_iteration(tmp_path, "random") == 1


def test_a_network_reading_the_heuristics_proposal_trains_and_plays(tmp_path) -> None:
    """--inputs observation+value: the data record the value heuristic's move at every decision,
    and the trained network's agent computes it from its own view to play legal moves."""
    require("torch")
    out = tmp_path / "hint"
    assert train_network.main([*TINY, "--out", str(out), "--iterations", "0", "--inputs", "observation+value"]) == 0
    samples = Samples.load(out / "data" / "iteration_0.npz")
    masks = np.unpackbits(samples.masks, axis=1, count=NUM_ACTIONS).astype(bool)
    assert masks[np.arange(len(samples)), samples.proposals].all(), "every proposal is a legal move"
    network = NumpyNetwork.load(out / "network_0.npz")
    assert network.inputs == "observation+value" and network.input_size == 1134 + NUM_ACTIONS
    from agents.network_agent import NetworkAgent
    from agents.random_agent import RandomAgent
    from experiments.common.match import play_game

    result = play_game([NetworkAgent(out / "network_0.npz"), RandomAgent(), RandomAgent()], seed=3)
    assert sum(result.decisions) > 50


def test_sigint_stops_with_the_resume_line_and_resume_finishes(tmp_path) -> None:
    """Ctrl-C during the bootstrap's games: exit status 0, the line that resumes, no traceback;
    ``--resume`` then plays the bootstrap again and finishes."""
    require("torch")
    out = tmp_path / "run"
    module = "experiments.train_network"
    games = out / "state.json"  # written when the run starts its first phase's games... after the plan
    interrupt(module, [*TINY, "--iterations", "0", "--bootstrap-games", "300", "--out", str(out)],
              ready=lambda: (out / "run.json").exists())  # fmt: skip
    assert not (out / "network_0.npz").exists() and not games.exists()
    refused = run_module(module, ["--resume", str(out), "--bootstrap-games", "3"])
    assert refused.returncode == 2 and "not --bootstrap-games" in refused.stderr
    resumed = run_module(module, ["--resume", str(out), "--no-progress"])
    assert resumed.returncode == 0, resumed.stderr
    assert json.loads((out / "state.json").read_text())["completed"] == 0
