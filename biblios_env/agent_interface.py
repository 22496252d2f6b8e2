"""The one interface every agent implements, and what an agent is shown at a decision.

It lives in the environment package (not in ``agents/``) because the environments call
agents too: the Gymnasium wrapper's opponents and the tournament harness both hand an
:class:`AgentObservation` to an :class:`Agent`. An agent sees one seat's information set
(a :class:`PlayerView`, or its encoding) and the legal actions — never the full state.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from typing import Protocol, TypeVar, runtime_checkable

import numpy as np

from biblios_env.actions import NUM_ACTIONS
from biblios_env.engine.views import PlayerView
from biblios_env.observations import OBSERVATION_SIZE, encode


class AgentObservation:
    """One decision as the acting seat sees it.

    ``view`` and ``legal_actions`` are always there; the flat ``vector`` and the
    ``action_mask`` (what a neural policy consumes) are built on first use, so agents
    that do not need them cost nothing.
    """

    __slots__ = ("_mask", "_vector", "legal_actions", "view")

    def __init__(self, view: PlayerView, legal_actions: list[int], vector: np.ndarray | None = None) -> None:
        self.view = view
        self.legal_actions = legal_actions
        self._vector = vector
        self._mask: np.ndarray | None = None

    @property
    def vector(self) -> np.ndarray:
        """The observation vector of :mod:`biblios_env.observations` (float32)."""
        if self._vector is None:
            self._vector = encode(self.view)
        return self._vector

    @property
    def action_mask(self) -> np.ndarray:
        """1 for each legal action id (int8, length 266)."""
        if self._mask is None:
            mask = np.zeros(NUM_ACTIONS, dtype=np.int8)
            mask[self.legal_actions] = 1
            self._mask = mask
        return self._mask


@runtime_checkable
class Agent(Protocol):
    """A player. ``start_game`` is called once per game before its first decision."""

    name: str

    def start_game(self, seat: int, num_players: int, seed: int | None = None) -> None:
        """A new game begins; ``seed`` seeds the agent's own randomness (reproducible tournaments)."""
        ...

    def act(self, observation: AgentObservation) -> int:
        """Choose one of ``observation.legal_actions``."""
        ...


@runtime_checkable
class Observer(Protocol):
    """An agent that also follows the game between its own decisions (optional).

    The experiments' game loops (the tournament's, the server's and the terminal game's, through
    one helper, ``experiments.common.match.show_views``) call ``observe`` with the seat's view
    after every action they apply, whoever chose it, so the agent
    sees each opponent's bid, not only the table as it stands when its own turn comes round. An
    agent must still play well where nobody calls it (``act`` always gets the current view).
    """

    def observe(self, view: PlayerView) -> None:
        """The table after an action, as the agent's seat sees it."""
        ...


@runtime_checkable
class BatchAgent(Protocol):
    """A policy that acts for many games at once from their observation vectors and masks (a
    network: one forward for all the games where it is to act). The batched games
    (:mod:`biblios_env.vector`) call it with the rows of every game where it plays the acting
    seat; it keeps nothing between calls, so one object serves any number of games and seats.
    An agent that chooses from the masks alone says so with a class attribute
    ``reads_observations = False`` (:func:`reads_observations`): it is then handed
    :data:`NO_OBSERVATIONS`, and the positions where only it acts are never encoded."""

    name: str

    def act_batch(self, observations: np.ndarray, action_masks: np.ndarray) -> np.ndarray:
        """One legal action id per row: ``observations`` ``(k, 1134)`` float32, ``action_masks``
        ``(k, 266)`` int8; returns ``(k,)`` integers."""
        ...


#: The observations handed to a batch agent that does not read them: an empty, read-only array.
NO_OBSERVATIONS = np.zeros((0, OBSERVATION_SIZE), np.float32)
NO_OBSERVATIONS.flags.writeable = False


def reads_observations(agent: object) -> bool:
    """Whether the batched games must hand the batch agent ``agent`` its observations (unless its
    class sets ``reads_observations = False``)."""
    return bool(getattr(agent, "reads_observations", True))


class UniformBatchAgent:
    """Uniformly random legal actions for a batch, from its own seeded generator (the batched
    games' default opponent)."""

    name = "uniform"
    #: It draws from the masks alone: the batched games hand it no observations (an empty
    #: ``(0, 1134)`` array) and so never encode the positions where only it acts.
    reads_observations = False

    def __init__(self, seed: int | None = None) -> None:
        self.rng = np.random.default_rng(seed)

    def act_batch(self, observations: np.ndarray, action_masks: np.ndarray) -> np.ndarray:
        noise = self.rng.random(action_masks.shape, dtype=np.float32)
        return np.argmax(noise * action_masks, axis=1)


class UniformRandomAgent:
    """A uniformly random legal action, from its own generator seeded by :meth:`start_game` (the
    same seed gives the same choices). It lives beside the interface because both layers need
    it: the Gymnasium wrapper's default opponent (the env layer cannot import ``agents``) and the
    ``random`` agent of the registry are this class under their own names."""

    name = "uniform"

    def __init__(self) -> None:
        self.rng = random.Random(0)

    def start_game(self, seat: int, num_players: int, seed: int | None = None) -> None:
        self.rng = random.Random(seed)

    def act(self, observation: AgentObservation) -> int:
        legal = observation.legal_actions
        return legal[self.rng.randrange(len(legal))]


#: What plays the other seats beside a learner: :class:`Agent` in the Gymnasium env, also
#: :class:`BatchAgent` in the batched games.
Opponent = TypeVar("Opponent")
#: Where a learner's opponents come from: called once per game with the game's player count and
#: the env's generator, it returns the agents of the other seats, the learner's left neighbour
#: first (``OpponentSource[Agent]``, ``OpponentSource[Agent | BatchAgent]``).
OpponentSource = Callable[[int, np.random.Generator], Sequence[Opponent]]
