"""Faults inside the single-agent wrapper: an opponent that raises, plays an illegal action
or is interrupted must stop the episode loudly (naming the opponent, its seat and the game
seed) and the wrapper must refuse further steps until ``reset()`` — otherwise the game is
left on the opponent's turn and the learner's next action is applied to the opponent's
decision."""

from __future__ import annotations

import re
from typing import Any

import numpy as np
import pytest

from biblios_env.actions import NUM_ACTIONS
from biblios_env.agent_interface import AgentObservation
from biblios_env.engine import IllegalActionError
from biblios_env.gym_env import BibliosGymEnv, OpponentError, UniformRandomOpponent


class FaultyOpponent(UniformRandomOpponent):
    """Random legal moves, then one fault at its ``fault_at``-th decision (counted over its life)."""

    name = "faulty"

    def __init__(self, fault_at: int, fault: Any) -> None:
        super().__init__()
        self.fault_at = fault_at
        self.fault = fault
        self.decisions = 0

    def act(self, observation: AgentObservation) -> int:
        self.decisions += 1
        if self.decisions == self.fault_at:
            if isinstance(self.fault, BaseException):
                raise self.fault
            return self.fault  # an illegal action
        return super().act(observation)


class FailsToStart(UniformRandomOpponent):
    name = "broken-start"

    def start_game(self, seat: int, num_players: int, seed: int | None = None) -> None:
        raise OSError("policy file missing")


#: fault -> (what the opponent does, what the error says it did, the cause it quotes)
FAULTS = {
    "raises": (ZeroDivisionError("division by zero"), "raised in act()", "ZeroDivisionError: division by zero"),
    "illegal-id": (NUM_ACTIONS, "played an illegal action", "IllegalActionError: action must be an int in 0..265"),
    "float": (1.5, "played an illegal action", "IllegalActionError: action 1.5 is not an action id"),
    "none": (None, "played an illegal action", "IllegalActionError: action None is not an action id"),
}


def play_until_fault(env: BibliosGymEnv) -> OpponentError:
    """Masked legal actions from the lowest id until an opponent's fault surfaces from step()."""
    env.reset(seed=7)
    for _ in range(400):
        try:
            env.step(int(np.flatnonzero(env.action_masks())[0]))
        except OpponentError as error:
            return error
    raise AssertionError("the opponent never failed")


def assert_refuses_steps_until_reset(env: BibliosGymEnv, opponent_seat: int) -> None:
    game = env.env.game
    assert game.current_player == opponent_seat, "the game is left on the opponent's turn"
    history = list(game.history)
    assert not env.action_masks().any(), "no learner decision is pending"
    for action in [*game.legal_actions()[:3], 0]:  # even an action legal for the opponent's decision
        with pytest.raises(RuntimeError, match=r"stopped|interrupted|did not finish") as refused:
            env.step(action)
        assert "call reset()" in str(refused.value)
        assert game.history == history, "the learner's action was not applied to the opponent's decision"


@pytest.mark.parametrize("fault", list(FAULTS), ids=list(FAULTS))
def test_an_opponent_fault_in_step_names_opponent_seat_and_seed_and_stops_the_episode(fault: str) -> None:
    bad_action, what, cause = FAULTS[fault]
    env = BibliosGymEnv(3, [UniformRandomOpponent(), FaultyOpponent(6, bad_action)], learner_seat=0)
    error = play_until_fault(env)
    seed = env.env.game.seed
    message = str(error)
    assert message.startswith(f"opponent 'faulty' in seat 2 {what} (game seed {seed}, 3 players"), message
    assert f"learner in seat 0): {cause}" in message, message
    assert_refuses_steps_until_reset(env, opponent_seat=2)
    with pytest.raises(RuntimeError, match=re.escape(message)):
        env.step(0)  # the refusal repeats the cause
    env.set_opponents([UniformRandomOpponent(), UniformRandomOpponent()])
    env.reset(seed=1)
    assert env.action_masks().any()
    env.step(int(np.flatnonzero(env.action_masks())[0]))  # a new episode plays normally


def test_an_illegal_opponent_action_is_chained_to_the_engine_error() -> None:
    env = BibliosGymEnv(2, FaultyOpponent(3, NUM_ACTIONS), learner_seat=0)
    error = play_until_fault(env)
    assert isinstance(error.__cause__, IllegalActionError)
    assert f"got {NUM_ACTIONS}" in str(error)


def test_an_opponent_fault_inside_reset_stops_the_episode() -> None:
    """Learner in seat 1: seat 0's opponent moves first, inside reset()."""
    env = BibliosGymEnv(2, FaultyOpponent(1, RuntimeError("bad weights")), learner_seat=1)
    with pytest.raises(OpponentError, match=r"opponent 'faulty' in seat 0 raised in act\(\) \(game seed \d+") as error:
        env.reset(seed=3)
    assert f"game seed {env.env.game.seed}," in str(error.value)
    assert isinstance(error.value.__cause__, RuntimeError)
    assert_refuses_steps_until_reset(env, opponent_seat=0)


def test_an_opponent_failing_to_start_stops_the_episode() -> None:
    env = BibliosGymEnv(2, FailsToStart(), learner_seat=0)
    with pytest.raises(OpponentError, match=r"opponent 'broken-start' in seat 1 raised in start_game\(\)"):
        env.reset(seed=0)
    with pytest.raises(RuntimeError, match=r"call reset\(\)"):
        env.step(0)


def test_an_interrupted_opponent_turn_also_stops_the_episode() -> None:
    """A KeyboardInterrupt (Ctrl-C in a notebook) is not swallowed, and the env does not go on."""
    env = BibliosGymEnv(2, FaultyOpponent(4, KeyboardInterrupt()), learner_seat=0)
    env.reset(seed=7)
    with pytest.raises(KeyboardInterrupt):
        for _ in range(400):
            env.step(int(np.flatnonzero(env.action_masks())[0]))
    assert_refuses_steps_until_reset(env, opponent_seat=1)


def test_a_failed_reset_is_not_mistaken_for_the_previous_episode() -> None:
    """A reset that fails half-way (a deck that does not fit the drawn player count) must not
    leave the previous episode steppable against a switched game."""
    env = BibliosGymEnv((2, 3), learner_seat=0)
    env.reset(seed=0, options={"num_players": 2})
    env.step(int(np.flatnonzero(env.action_masks())[0]))
    with pytest.raises(ValueError, match="deck"):
        env.reset(seed=0, options={"num_players": 3, "deck": list(range(60))})
    with pytest.raises(RuntimeError, match=r"the last reset\(\) did not finish; call reset\(\)"):
        env.step(0)
    env.reset(seed=0)
    env.step(int(np.flatnonzero(env.action_masks())[0]))
