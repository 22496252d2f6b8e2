"""Exploring starts (``--exploring-starts N``): in each game the learner's first decision at or
after a step drawn from 0..N-1 is a uniformly random legal move, a training sample with the
uniform probability as its behaviour probability. Each piece against a hand-computed expectation:
when the move is due, that it is made once a game, the moves' distribution and log-probabilities,
a game dealt anew, the checkpoint, and the samples of a real rollout."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from optional_extras import require

from experiments.training.exploring import ExploringStarts


def _masks(*legal: list[int]) -> np.ndarray:
    masks = np.zeros((len(legal), 266), np.int8)
    for row, actions in enumerate(legal):
        masks[row, actions] = 1
    return masks


def test_the_move_is_due_at_the_drawn_step_or_the_learners_next_decision_and_made_once() -> None:
    starts = ExploringStarts(5, 3, seed=1)
    starts.due[:] = [0, 2, 2]
    slots = np.array([0, 1, 2])
    exploring, moves, log_probs = starts.moves(slots, _masks([4, 9], [1], [3]))
    assert exploring.tolist() == [True, False, False]  # step 0: only slot 0 is due
    assert moves.tolist()[0] in (4, 9) and log_probs.tolist() == pytest.approx([-np.log(2)])
    starts.advance(np.zeros(3, bool))
    starts.advance(np.zeros(3, bool))  # step 2: slots 1 and 2 due; the learner acts in slot 2 only
    exploring, moves, _ = starts.moves(np.array([0, 2]), _masks([4, 9], [3, 5, 7]))
    assert exploring.tolist() == [False, True] and moves.tolist()[0] in (3, 5, 7)
    starts.advance(np.zeros(3, bool))  # step 3: slot 1's learner acts for the first time since due
    exploring, _, log_probs = starts.moves(np.array([1, 2]), _masks([1, 2, 3], [3, 5, 7]))
    assert exploring.tolist() == [True, False] and log_probs.tolist() == pytest.approx([-np.log(3)])
    assert starts.made.tolist() == [True, True, True] and starts.steps.tolist() == [3, 3, 3]


def test_a_game_dealt_anew_starts_over_with_a_new_due_step() -> None:
    starts = ExploringStarts(4, 2, seed=3)
    starts.moves(np.array([0, 1]), _masks([1], [2]))  # due steps drawn in 0..3: maybe made
    for _ in range(4):
        starts.advance(np.zeros(2, bool))
    starts.moves(np.array([0, 1]), _masks([1], [2]))
    assert starts.made.all()
    starts.advance(np.array([False, True]))
    assert starts.steps.tolist() == [5, 0] and starts.made.tolist() == [True, False]
    assert 0 <= starts.due[1] < 4


def test_the_moves_are_uniform_over_the_legal_ones() -> None:
    starts = ExploringStarts(1, 3000, seed=5)
    masks = np.repeat(_masks([0, 7, 265]), 3000, axis=0)
    exploring, moves, log_probs = starts.moves(np.arange(3000), masks)
    assert exploring.all() and set(moves.tolist()) == {0, 7, 265}
    counts = np.bincount(moves, minlength=266)[[0, 7, 265]]
    assert (abs(counts - 1000) < 120).all()  # ~6 standard deviations of a binomial(3000, 1/3)
    assert np.allclose(log_probs, -np.log(3))


def test_the_checkpoint_continues_exactly() -> None:
    first, second = ExploringStarts(6, 4, seed=9), ExploringStarts(6, 4, seed=0)
    first.advance(np.array([True, False, True, False]))
    second.restore(first.state())
    masks = _masks([1, 2, 3], [4, 5], [6], [7, 8, 9, 10])
    for _ in range(8):
        a, b = first.moves(np.arange(4), masks), second.moves(np.arange(4), masks)
        assert all(np.array_equal(x, y) for x, y in zip(a, b, strict=True))
        ended = np.array([False, True, False, False])
        first.advance(ended)
        second.advance(ended)
    assert first.state() == second.state()


def test_a_window_of_no_steps_is_refused() -> None:
    with pytest.raises(ValueError, match="at least one step"):
        ExploringStarts(0, 2, seed=0)


def test_a_rollout_explores_once_a_game_with_the_uniform_behaviour_probability(tmp_path: Path) -> None:
    """With a window of one step, the network's first decision in each game is the random move:
    its sample's log-probability is the uniform one, the others' the policy's (the policy skewed
    so that the two differ)."""
    require("torch")
    from experiments.training import selfplay
    from experiments.training.selfplay import Args
    from experiments.training.selfplay_state import start

    args = Args(out=tmp_path / "run", num_games=4, hidden=(8,), opponents=("random@1",), eval_every=0,
                tensorboard=False, exploring_starts=1, learner="thread")  # fmt: skip
    run = start(args, resume=False, command=selfplay.MODULE)
    with run.torch.no_grad():
        run.actor.policy.bias[:] = run.torch.arange(266, dtype=run.torch.float32) * 0.05
    rollout = selfplay.collect(run, 12)
    first = np.zeros(len(rollout), bool)
    seen: set[tuple[int, int]] = set()
    for row, (slot, step) in enumerate(zip(rollout.slots.tolist(), rollout.steps.tolist(), strict=True)):
        game = (slot, int(rollout.terminated[:step, slot].sum()))  # the games of the slot that ended before
        first[row] = game not in seen
        seen.add(game)
    uniform = -np.log(rollout.masks.sum(axis=1))
    choice = rollout.masks.sum(axis=1) > 1
    assert first.sum() >= 4 and (first & choice).any() and (~first & choice).any()
    assert np.allclose(rollout.log_probs[first], uniform[first])
    assert not np.isclose(rollout.log_probs[~first & choice], uniform[~first & choice]).any()
    assert (rollout.masks[np.arange(len(rollout)), rollout.actions] == 1).all()
    assert run.exploring is not None and run.exploring.made.all()
