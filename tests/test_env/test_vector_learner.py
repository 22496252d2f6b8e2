"""The bookkeeping of the batched learner games (:class:`biblios_env.vector.learner.LearnerGames`)
and of their checkpoints, pinned against what the ended game itself says.

* A game that ends reports its own learner seat, opponents, final VP, winners and reward, though
  its slot is dealt anew (new seat, new opponents) in the same step; its final observation is
  encoded for its learner's seat.
* A checkpoint is restored only into games with every option the same.
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from biblios_env.agent_interface import AgentObservation
from biblios_env.observations import encode_state
from biblios_env.vector import VectorGame
from biblios_env.vector.learner import LearnerGames


class Numbered:
    """A per-game random opponent whose name says which game and seat it was made for."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.rng = np.random.default_rng(0)

    def start_game(self, seat: int, num_players: int, seed: int | None = None) -> None:
        self.rng = np.random.default_rng(seed)

    def act(self, observation: AgentObservation) -> int:
        return int(self.rng.choice(observation.legal_actions))


def test_an_ended_game_reports_itself_though_its_slot_is_dealt_anew() -> None:
    counter = itertools.count()

    def source(num_players: int, rng: np.random.Generator) -> list[Numbered]:
        game = next(counter)
        return [Numbered(f"game{game}-{offset}") for offset in range(num_players - 1)]

    learner = LearnerGames(6, 3, source, seed=11)
    learner.reset()
    rng = np.random.default_rng(2)
    ended = reseated = 0
    while ended < 12:
        seats = learner.learner_seat.copy()
        names = [list(names) for names in learner.opponent_names]
        actions = np.argmax(rng.random(learner.action_mask.shape) * learner.action_mask, axis=1)
        learner.step(actions)
        for slot in np.flatnonzero(learner.terminated).tolist():
            ended += 1
            seat = int(seats[slot])
            game = learner.games.finished_game(slot)
            assert game is not None and game.is_over
            winners = list(game.state.winners)
            assert learner.results[slot] == {
                "learner_seat": seat,
                "vp": list(game.state.vp),
                "winners": winners,
                "is_success": seat in winners,
                "opponents": names[slot],
            }
            # The win reward (3 players): the winners share +1, the losers -1.
            expected = 1 / len(winners) if seat in winners else -1 / (3 - len(winners))
            assert learner.rewards[slot] == pytest.approx(expected)
            assert np.array_equal(learner.final_observation(slot), encode_state(game.state, seat))
            assert learner.opponent_names[slot] != names[slot]  # the new game's opponents
            reseated += int(learner.learner_seat[slot] != seat)
    assert reseated > 0  # the new seat differs at least once: a report read after reseating would show


@pytest.mark.parametrize(
    "option",
    [{"penalty": "bluffs"}, {"strict_bids": True}, {"reward": "vp"}, {"first_player": 1}, {"expose_forced": True}],
)
def test_a_checkpoint_is_restored_only_with_every_option_the_same(option: dict[str, object]) -> None:
    checkpoint = VectorGame(2, 2, seed=3, **option).checkpoint()  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="the checkpoint's"):
        VectorGame(2, 2, seed=3).restore(checkpoint)
    VectorGame(2, 2, seed=3, **option).restore(checkpoint)  # type: ignore[arg-type]


def test_a_checkpoint_of_another_preset_is_refused() -> None:
    checkpoint = VectorGame(2, 2, seed=3, preset="small").checkpoint()
    with pytest.raises(ValueError, match="the checkpoint's config is"):
        VectorGame(2, 2, seed=3).restore(checkpoint)
