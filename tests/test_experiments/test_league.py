"""The self-play trainer's league (``exploiter@W`` in ``--opponents``) on tiny runs.

* Every ``--exploiter-every`` decisions a round trains the exploiter ``--exploiter-decisions`` more
  against the network as it is then (``exploiter/target.npz``), and its weights play the
  ``exploiter`` seats of the pool; before the first round the network plays them itself.
* A run stopped inside a round, and resumed, finishes the round and then logs what the
  uninterrupted run logs, the exploiter's own run included; the main run's draws do not depend
  on the round.
* Only the self-play trainer knows the name: MaskablePPO refuses it.
"""

from __future__ import annotations

import csv
from pathlib import Path

import numpy as np
import pytest
from optional_extras import require
from ray_cluster import two_node_cluster

require("torch")

from agents.network import NumpyNetwork  # noqa: E402
from experiments.training import league  # noqa: E402
from experiments.training.opponents import EXPLOITER_OWNER  # noqa: E402
from experiments.training.selfplay import Args, Run, train  # noqa: E402
from experiments.training.stopping import StopRequest  # noqa: E402

TINY = {"num_games": 8, "rollout_steps": 8, "hidden": (16,), "minibatch": 32, "eval_every": 0,
        "tensorboard": False, "snapshot_every": 10**9, "log_seconds": 1e9,
        "opponents": ("self@0.4", "exploiter@0.4", "random@0.2"), "exploiter_every": 400,
        "exploiter_decisions": 300}  # fmt: skip
COMPARED = ("update", "decisions", "games", "policy_loss", "value_loss", "entropy", "win_share")


def _progress(folder: Path) -> list[dict[str, str]]:
    with (folder / "progress.csv").open(newline="") as handle:
        return list(csv.DictReader(handle))


def _same_rows(first: list[dict[str, str]], second: list[dict[str, str]]) -> None:
    assert len(first) == len(second)
    for a, b in zip(first, second, strict=True):
        for column in COMPARED:
            assert float(a[column]) == pytest.approx(float(b[column]), rel=1e-4, abs=1e-6), (column, a["update"])


def test_the_exploiter_trains_in_rounds_against_the_network_and_plays_its_seats(tmp_path: Path) -> None:
    args = Args(out=tmp_path / "run", decisions=1500, **TINY)  # type: ignore[arg-type]
    run = train(args)
    rows = _progress(args.out)
    # A round starts before the update after which 400 decisions have passed since the last one.
    expected_rounds, last, round_at = 0, 0, []
    for row in rows[:-1]:
        if int(row["decisions"]) - last >= 400:
            expected_rounds, last = expected_rounds + 1, int(row["decisions"])
            round_at.append(last)
    assert expected_rounds == 3 and run.counters["exploiter_rounds"] == 3
    assert run.counters["last_exploiter"] == round_at[-1]
    folder = league.exploiter_folder(args.out)
    exploiter_rows = _progress(folder)
    trained = int(exploiter_rows[-1]["decisions"])
    assert 3 * 300 <= trained < 3 * 300 + 200  # each round to the next multiple of 300, one update past at most
    # Each round continues the exploiter: its updates are numbered on, never restarted.
    assert [int(row["update"]) for row in exploiter_rows] == list(range(1, len(exploiter_rows) + 1))
    # The last target is the network as it was at the last round.
    assert NumpyNetwork.load(folder / "target.npz").metadata["decisions"] == round_at[-1]
    # The pool plays the exploiter's final weights.
    exploiter = Run(league.exploiter_args(args, 3))
    exploiter.load(folder / "checkpoint.pt")
    for name, value in exploiter.network.modules.state_dict().items():
        assert np.array_equal(value.numpy(), run.pool.exploiter.modules.state_dict()[name].numpy()), name
    assert (run.pool.owners == EXPLOITER_OWNER).any()  # games dealt after a round seat it


def test_before_the_first_round_the_network_plays_the_exploiter_seats_then_the_exploiter() -> None:
    import torch

    from biblios_env.vector import VectorGame
    from experiments.training.networks import TorchNetwork
    from experiments.training.opponents import LEARNER, BatchedOpponentPool, Mixture

    games = VectorGame(16, 2, seed=3)
    games.reset()
    network = TorchNetwork((8,), value_hidden=4, sparse_input=True)
    pool = BatchedOpponentPool(Mixture.parse(["exploiter@1"]), games, network, 1, seed=5, torch=torch)
    for slot in range(16):
        pool.seat_players(slot)
    assert set(pool.owners[np.arange(16), 1 - pool.anchor].tolist()) == {LEARNER}
    pool.set_exploiter(network.modules.state_dict())
    for slot in range(16):
        pool.seat_players(slot)
    others = pool.owners[np.arange(16), 1 - pool.anchor]
    assert set(others.tolist()) == {EXPLOITER_OWNER} and pool.owner_name(EXPLOITER_OWNER) == "exploiter"
    rows = np.flatnonzero(pool.owners[np.arange(16), games.batch.current_player] == EXPLOITER_OWNER)
    actions = np.full(16, -1)
    pool.actions(rows, np.full(len(rows), EXPLOITER_OWNER), actions)
    assert len(rows) > 0 and all(games.batch.action_mask[row, actions[row]] for row in rows)
    assert pool.state()["exploiter"] is not None  # the checkpoint keeps it


class StopInsideRound(StopRequest):
    """The round's stop, asking to stop once the exploiter has ``decisions`` (as Ctrl-C would)."""

    def __init__(self, decisions: int) -> None:
        super().__init__()
        self.decisions = decisions

    def after_update(self, run: Run) -> None:
        if run.counters["decisions"] >= self.decisions:
            self.requested = True


def test_a_run_stopped_inside_a_round_resumes_to_the_uninterrupted_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    whole = Args(out=tmp_path / "whole", decisions=1500, **TINY)  # type: ignore[arg-type]
    train(whole)
    parts = Args(out=tmp_path / "parts", decisions=1500, **TINY)  # type: ignore[arg-type]
    with monkeypatch.context() as patch:
        patch.setattr(league, "StopRequest", lambda: StopInsideRound(400))  # in the second round (300 to 600)
        stopped = train(parts)
    assert stopped.counters["exploiter_rounds"] == 1  # the second round was not counted
    exploiter_rows = _progress(league.exploiter_folder(parts.out))
    assert 300 < int(exploiter_rows[-1]["decisions"]) < 600
    train(parts, resume=True)
    _same_rows(_progress(whole.out), _progress(parts.out))
    _same_rows(_progress(league.exploiter_folder(whole.out)), _progress(league.exploiter_folder(parts.out)))


def test_maskable_ppo_has_no_exploiter() -> None:
    from experiments.training.opponents import FACTORY_POOL_NAMES, Mixture

    with pytest.raises(ValueError, match="'exploiter' is not an opponent of this trainer"):
        Mixture.parse(["value@0.5", "exploiter@0.5"], special=FACTORY_POOL_NAMES)


def test_a_league_on_a_two_node_ray_cluster_runs_stops_and_resumes_to_the_uninterrupted_run(
    tmp_path: Path,
) -> None:
    """``--backend ray``: the exploiter trains in a Ray actor while the network trains on, its
    round joining the pool at the next round's start; a run stopped with a round in flight sends
    it again on resume and logs what the uninterrupted run logs."""

    class StopAfterUpdates(StopRequest):
        def after_update(self, run: Run) -> None:
            self.requested = self.requested or run.counters["updates"] >= 9  # round 1 in flight (sent at 415)

    with two_node_cluster() as ray:
        settings = {**TINY, "backend": "ray"}
        whole = Args(out=tmp_path / "whole", decisions=1500, **settings)  # type: ignore[arg-type]
        finished = train(whole)
        assert finished.counters["exploiter_rounds"] == finished.counters["exploiter_sent"] == 3
        trained = int(_progress(league.exploiter_folder(whole.out))[-1]["decisions"])
        assert 3 * 300 <= trained < 3 * 300 + 200  # the last round, in flight at the end, was waited for
        parts = Args(out=tmp_path / "parts", decisions=1500, **settings)  # type: ignore[arg-type]
        stopped = train(parts, stop=StopAfterUpdates())
        assert stopped.counters["exploiter_sent"] == 1 and stopped.counters["exploiter_rounds"] == 0
        assert not (league.exploiter_folder(parts.out) / "checkpoint.pt").exists()  # the round in flight was dropped
        train(parts, resume=True)
        _same_rows(_progress(whole.out), _progress(parts.out))
        _same_rows(_progress(league.exploiter_folder(whole.out)), _progress(league.exploiter_folder(parts.out)))
        assert ray.is_initialized()  # a Ray the caller started is left running
