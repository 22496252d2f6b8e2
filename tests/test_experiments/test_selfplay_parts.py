"""The self-play trainer's parts, each against a hand-computed expectation: the per-seat GAE and
Monte-Carlo returns (one game, both seats, a game's end, a truncated game, a slot dealt again,
samples carried across rollouts), the sparse observation rows, the opponent pool's snapshots and
seating, what counts as a network decision, and the evaluation schedule."""

from __future__ import annotations

import csv
from pathlib import Path

import numpy as np
import pytest
from optional_extras import require

from experiments.training.rollout import Rollout, returns_and_advantages
from experiments.training.tensors import SparseRows

require("torch")


def _rollout(decisions: list[tuple[int, int, int, float]], steps: int, ended: dict[int, tuple[float, ...]]) -> Rollout:
    """A rollout of 2-player games: ``decisions`` are (step, slot, seat, value); ``ended`` maps a
    step to the rewards of slot 0's game ending there."""
    count = len(decisions)
    slots = max((slot for _, slot, _, _ in decisions), default=0) + 1
    terminated = np.zeros((steps, slots), bool)
    rewards = np.zeros((steps, slots, 2), np.float32)
    for step, reward in ended.items():
        terminated[step, 0] = True
        rewards[step, 0] = reward
    empty = SparseRows(
        np.zeros(count, np.int64), np.zeros(count, np.int64), np.zeros(0, np.int64), np.zeros(0, np.float32)
    )
    return Rollout(
        observations=empty,
        masks=np.ones((count, 266), np.int8),
        actions=np.zeros(count, np.int64),
        log_probs=np.zeros(count, np.float32),
        values=np.array([value for *_, value in decisions], np.float32),
        slots=np.array([slot for _, slot, _, _ in decisions], np.int64),
        seats=np.array([seat for _, _, seat, _ in decisions], np.int64),
        steps=np.array([step for step, *_ in decisions], np.int64),
        terminated=terminated,
        rewards=rewards,
    )


#: One 2-player game: seat 0 at steps 0 and 2, seat 1 at steps 1 and 3; it ends at step 3, seat 0 winning.
GAME = [(0, 0, 0, 0.5), (1, 0, 1, 0.3), (2, 0, 0, 0.6), (3, 0, 1, 0.4)]


def test_gae_follows_each_seat_to_its_own_next_decision() -> None:
    """By hand (gamma 1, lambda 0.5), backwards: step 3, seat 1: delta 0 + 0 - 0.4 = -0.4; step 2,
    seat 0: delta 1 + 0 - 0.6 = 0.4; step 1, seat 1: delta 0 + 0.4 - 0.3 = 0.1, advantage
    0.1 + 0.5 * -0.4 = -0.1; step 0, seat 0: delta 0 + 0.6 - 0.5 = 0.1, advantage 0.1 + 0.5 * 0.4 = 0.3."""
    returns, advantages, valid = returns_and_advantages(
        _rollout(GAME, 4, {3: (1.0, 0.0)}), np.zeros((1, 2), np.float32), 1.0, 0.5, monte_carlo=False
    )
    np.testing.assert_allclose(advantages, [0.3, -0.1, 0.4, -0.4], atol=1e-6)
    np.testing.assert_allclose(returns, [0.8, 0.2, 1.0, 0.0], atol=1e-6)
    assert valid.all()


def test_monte_carlo_returns_are_each_seats_final_reward_discounted_over_its_own_decisions() -> None:
    returns, _, valid = returns_and_advantages(
        _rollout(GAME, 4, {3: (1.0, 0.0)}), np.zeros((1, 2), np.float32), 0.9, 0.95, monte_carlo=True
    )
    np.testing.assert_allclose(returns, [0.9, 0.0, 1.0, 0.0], atol=1e-6)
    assert valid.all()


def test_a_truncated_game_is_bootstrapped_from_each_seats_own_value_and_is_not_valid() -> None:
    """No end within the rollout: seat 1 (step 1) takes the bootstrap 0.2, seat 0 (step 0) 0.7."""
    rollout = _rollout(GAME[:2], 2, {})
    returns, advantages, valid = returns_and_advantages(
        rollout, np.array([[0.7, 0.2]], np.float32), 1.0, 0.5, monte_carlo=False
    )
    np.testing.assert_allclose(advantages, [0.2, -0.1], atol=1e-6)
    np.testing.assert_allclose(returns, [0.7, 0.2], atol=1e-6)
    assert not valid.any()


def test_nothing_of_the_next_game_in_a_slot_flows_back_into_the_game_that_ended() -> None:
    """Seat 1 decides at step 0 and its game ends there (seat 1 wins); the slot's new game has
    seat 1 deciding at step 1 (value 0.9, bootstrap 0.8). Step 0 sees only its own reward."""
    rollout = _rollout([(0, 0, 1, 0.5), (1, 0, 1, 0.9)], 2, {0: (0.0, 1.0)})
    returns, advantages, _ = returns_and_advantages(
        rollout, np.full((1, 2), 0.8, np.float32), 1.0, 0.5, monte_carlo=False
    )
    np.testing.assert_allclose(advantages, [0.5, -0.1], atol=1e-6)
    np.testing.assert_allclose(returns, [1.0, 0.8], atol=1e-6)


def test_carried_samples_get_their_return_when_their_game_ends_in_a_later_rollout() -> None:
    """DMC keeps the decisions of a game still running: in the next rollout (its steps shifted
    before the first) they are valid once the game ends, with its final reward; the carry does
    not grow without end."""
    first = _rollout(GAME[:2], 2, {})
    _, _, valid = returns_and_advantages(first, np.zeros((1, 2), np.float32), 1.0, 0.95, monte_carlo=True)
    carry = first.carried(~valid, steps=2)
    assert carry.steps.tolist() == [-2, -1] and len(carry.terminated) == 0
    second = _rollout([(0, 0, 0, 0.6), (1, 0, 1, 0.4)], 2, {1: (1.0, 0.0)}).after(carry)
    returns, _, valid = returns_and_advantages(second, np.zeros((1, 2), np.float32), 1.0, 0.95, monte_carlo=True)
    assert valid.all()
    np.testing.assert_allclose(returns, [1.0, 0.0, 1.0, 0.0], atol=1e-6)
    assert len(second.carried(~valid, steps=2)) == 0


def test_a_rollout_survives_its_checkpoint_form() -> None:
    rollout = _rollout(GAME, 4, {3: (1.0, 0.0)})
    rollout.masks[1, 7] = 0
    back = Rollout.unpacked(rollout.packed())
    np.testing.assert_array_equal(back.masks, rollout.masks)
    np.testing.assert_array_equal(back.values, rollout.values)
    assert back.observations.columns.dtype == rollout.observations.columns.dtype


def test_sparse_rows_are_the_scaled_observations_and_take_and_join_in_order() -> None:
    from biblios_env.observations import OBSERVATION_SCALE
    from biblios_env.vector import VectorGame
    from experiments.training.tensors import torch_module

    torch = torch_module()
    games = VectorGame(5, 3, seed=4)
    games.reset()
    counts = games.observation_counts().copy()
    dense = counts * OBSERVATION_SCALE
    np.testing.assert_allclose(games.batch.observation, dense, rtol=1e-6)  # the env's own scaling
    rows = SparseRows.of(torch, counts)
    np.testing.assert_allclose(rows.tensor(torch).to_dense(torch).numpy(), dense, rtol=1e-6)
    picked = rows.take(np.array([3, 0, 3]))
    np.testing.assert_allclose(picked.tensor(torch).to_dense(torch).numpy(), dense[[3, 0, 3]], rtol=1e-6)
    joined = SparseRows.concatenate([picked, rows.take(np.array([1]))])
    np.testing.assert_allclose(joined.tensor(torch).to_dense(torch).numpy(), dense[[3, 0, 3, 1]], rtol=1e-6)
    gaps = counts.copy()
    gaps[[0, 2]] = 0  # rows with no entry, first and inside, keep their place
    sparse = SparseRows.of(torch, gaps)
    assert sparse.lengths.tolist() == [0, int((counts[1] != 0).sum()), 0, *(counts[3:] != 0).sum(axis=1).tolist()]
    np.testing.assert_allclose(sparse.tensor(torch).to_dense(torch).numpy(), gaps * OBSERVATION_SCALE, rtol=1e-6)
    assert len(SparseRows.of(torch, counts[:0])) == 0 and len(SparseRows.of(torch, counts[:0]).columns) == 0


def _pool(pool_size: int, opponents: tuple[str, ...] = ("snapshot@1",)):  # type: ignore[no-untyped-def]
    from biblios_env.vector import VectorGame
    from experiments.training.networks import TorchNetwork
    from experiments.training.opponents import BatchedOpponentPool, Mixture
    from experiments.training.tensors import torch_module

    games = VectorGame(4, 2, seed=3)
    games.reset()
    network = TorchNetwork((8,), value_hidden=4, sparse_input=True)
    return BatchedOpponentPool(
        Mixture.parse(opponents), games, network, pool_size, seed=5, torch=torch_module()
    ), network


def test_a_full_pool_drops_its_oldest_snapshot() -> None:
    pool, network = _pool(pool_size=2)
    first_layer = next(iter(network.modules.state_dict()))
    for mark in (1.0, 2.0, 3.0):
        with pool.torch.no_grad():
            network.modules.state_dict()[first_layer].fill_(mark)
        pool.snapshot(network)
    kept = [float(snapshot[first_layer].flatten()[0]) for snapshot in pool.snapshots]
    assert kept == [2.0, 3.0]
    played = [float(next(iter(net.modules.state_dict().values())).flatten()[0]) for net in pool.snapshot_networks]
    assert played == [2.0, 3.0], "the networks that play are the snapshots kept"


def test_the_network_holds_one_seat_and_the_mixture_the_others() -> None:
    from experiments.training.opponents import AGENT_BASE, LEARNER, SNAPSHOT_BASE, UNIFORM

    pool, network = _pool(pool_size=2, opponents=("random@1", "value@1"))
    for slot in range(4):
        pool.seat_players(slot)
    assert ((pool.owners == LEARNER).sum(axis=1) == 1).all()
    assert (pool.owners[np.arange(4), pool.anchor] == LEARNER).all()
    others = pool.owners[pool.owners != LEARNER]
    assert set(others.tolist()) <= {UNIFORM, AGENT_BASE + 1}
    pool, _ = _pool(pool_size=2, opponents=("snapshot@1",))
    pool.seat_players(0)
    assert (pool.owners[0] == LEARNER).all(), "no snapshot yet: the network itself"
    pool.snapshot(network)
    pool.seat_players(0)
    assert sorted(pool.owners[0].tolist()) == [LEARNER, SNAPSHOT_BASE]


def test_a_decision_counts_once_and_only_the_networks(tmp_path: Path) -> None:
    """Against random opponents only, every sample is the anchor seat's, and the counter grows by
    the samples taken: not by the batched steps, nor by the opponents' moves."""
    from experiments.training import selfplay
    from experiments.training.selfplay import Args
    from experiments.training.selfplay_state import start

    args = Args(out=tmp_path / "run", num_games=4, hidden=(8,), opponents=("random@1",), eval_every=0,
                tensorboard=False, learner="thread")  # fmt: skip
    run = start(args, resume=False, command=selfplay.MODULE)
    anchors = run.pool.anchor.copy()
    rollout = selfplay.collect(run, 6)
    assert run.counters["decisions"] == len(rollout) > 0
    still_first_game = run.games.games_dealt[rollout.slots] == 1
    assert (rollout.seats[still_first_game] == anchors[rollout.slots[still_first_game]]).all()
    assert len(rollout) < 4 * 6, "the opponents' moves are not samples"


def test_the_evaluations_follow_their_schedule(tmp_path: Path) -> None:
    """An evaluation after the first update at or past each ``eval_every`` decisions since the last
    one, and one at the end: replayed from progress.csv, the decisions of eval.csv are exactly those."""
    from experiments.training.selfplay import Args, train

    args = Args(out=tmp_path / "run", decisions=700, num_games=8, rollout_steps=8, hidden=(8,), minibatch=32,
                eval_every=200, eval_deals=1, tensorboard=False, opponents=("random@1",), log_seconds=1e9)  # fmt: skip
    train(args)
    with (args.out / "progress.csv").open() as handle:
        progress = [int(row["decisions"]) for row in csv.DictReader(handle)]
    with (args.out / "eval.csv").open() as handle:
        evaluated = [int(row["decisions"]) for row in csv.DictReader(handle)]
    expected, last = [], 0
    for decisions in progress:
        if decisions - last >= 200:
            expected.append(decisions)
            last = decisions
    if last < progress[-1]:
        expected.append(progress[-1])
    assert evaluated == expected and len(expected) >= 3


@pytest.mark.parametrize("algo", ["ppo", "dmc"])
def test_the_learning_rule_is_chosen_once(algo: str) -> None:
    from experiments.training.selfplay import Args
    from experiments.training.updates import DMC, PPO, learning_rule

    rule = learning_rule(algo, Args(algo=algo))
    assert isinstance(rule, DMC if algo == "dmc" else PPO)
    assert rule.monte_carlo == (algo == "dmc") and rule.epochs == (1 if algo == "dmc" else Args().epochs)


@pytest.mark.parametrize("hidden", [(16,), (32, 16)])
def test_the_snapshots_stacked_give_each_row_its_own_networks_logits(hidden: tuple[int, ...]) -> None:
    """One forward for the whole pool (the pool plays its snapshots so) equals each snapshot's own
    forward on its rows, whichever rows each has (one network has none here)."""
    from biblios_env.vector import VectorGame
    from experiments.training.networks import TorchNetwork
    from experiments.training.tensors import StackedNetworks, torch_module

    torch = torch_module()
    torch.manual_seed(0)
    networks = [TorchNetwork(hidden, value_hidden=4, sparse_input=True) for _ in range(4)]
    games = VectorGame(12, 3, seed=8)
    games.reset()
    rows = SparseRows.of(torch, games.observation_counts().copy())
    which = np.array([2, 0, 2, 3, 3, 0, 2, 2, 0, 3, 0, 2])  # network 1 plays no row
    stacked = StackedNetworks(torch, networks).logits(rows.tensor(torch), which)
    with torch.no_grad():
        for index, network in enumerate(networks):
            mine = np.flatnonzero(which == index)
            if len(mine):
                own, _ = network.forward(rows.take(mine).tensor(torch))
                np.testing.assert_allclose(stacked[mine].numpy(), own.numpy(), rtol=1e-5, atol=1e-5)


def _legal_rows() -> tuple[np.ndarray, np.ndarray]:
    """Four rows of logits over the 266 actions and their masks: one legal action, two, five with
    unequal logits, and all 266 (the illegal entries' logits are large, to be ignored)."""
    rng = np.random.default_rng(5)
    logits = rng.normal(0, 1, (4, 266)).astype(np.float32) + 5.0
    masks = np.zeros((4, 266), np.int8)
    masks[0, 17] = 1
    masks[1, [3, 200]] = 1
    masks[2, [0, 9, 40, 41, 265]] = 1
    logits[2, [0, 9, 40, 41, 265]] = [0.0, 1.0, 2.0, -1.0, 0.5]
    masks[3] = 1
    return logits, masks


def test_the_legal_draw_follows_each_rows_softmax_over_its_legal_actions() -> None:
    """Gumbel-max over the legal entries alone draws each legal action with its softmax
    probability among the legal ones (20,000 draws a row, within 4.5 binomial deviations) and
    never an illegal one; the log-probabilities are the masked log-softmax PPO's loss computes."""
    from experiments.training.tensors import masked_logits, sample_legal, torch_module

    torch = torch_module()
    torch.manual_seed(0)
    logits, masks = _legal_rows()
    draws = 20_000
    many_logits = torch.from_numpy(np.repeat(logits, draws, axis=0))
    actions, log_probs = sample_legal(torch, many_logits, np.repeat(masks, draws, axis=0))
    expected = torch.log_softmax(masked_logits(torch, torch.from_numpy(logits), torch.from_numpy(masks)), dim=1)
    for row in range(4):
        mine = actions[row * draws : (row + 1) * draws]
        assert masks[row, mine].all(), f"row {row} drew an illegal action"
        probability = expected[row].exp().numpy()
        frequency = np.bincount(mine, minlength=266) / draws
        deviation = np.sqrt(probability * (1 - probability) / draws)
        assert np.all(np.abs(frequency - probability) <= 4.5 * deviation + 1e-12), row
        np.testing.assert_allclose(log_probs[row * draws : (row + 1) * draws], expected[row].numpy()[mine], atol=1e-5)
    assert (actions[:draws] == 17).all()


def test_the_legal_draw_is_torchs_generator_and_refuses_rows_it_cannot_draw() -> None:
    """The draws come from torch's generator (a checkpoint keeps its state, so a resumed run draws
    what the uninterrupted one did); a row without a legal action, or with logits that are not
    finite, is an error naming the row, never a substituted move."""
    from experiments.training.tensors import draw_legal, torch_module

    torch = torch_module()
    logits, masks = _legal_rows()
    tensor = torch.from_numpy(np.repeat(logits, 50, axis=0))
    torch.manual_seed(11)
    first = draw_legal(torch, tensor, np.repeat(masks, 50, axis=0))
    torch.manual_seed(11)
    assert np.array_equal(first, draw_legal(torch, tensor, np.repeat(masks, 50, axis=0)))
    empty = masks.copy()
    empty[2] = 0
    with pytest.raises(ValueError, match=r"rows \[2\] have no legal action"):
        draw_legal(torch, torch.from_numpy(logits), empty)
    broken = logits.copy()
    broken[1, 200] = np.nan
    with pytest.raises(FloatingPointError, match=r"rows \[1\]"):
        draw_legal(torch, torch.from_numpy(broken), masks)
    with pytest.raises(ValueError, match=r"logits of shape \(4, 265\) for masks of shape \(4, 266\)"):
        draw_legal(torch, torch.from_numpy(logits[:, 1:]), masks)
    assert len(draw_legal(torch, torch.from_numpy(logits[:0]), masks[:0])) == 0
