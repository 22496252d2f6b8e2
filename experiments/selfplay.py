"""Training data from games: a teacher labels the decisions of learner seats, in parallel.

Each game seats a *learner* (the behaviour policy being trained, e.g. the current network, or
the teacher itself) at one or every seat and opponents at the others, all built from agent
specs (``experiments.match``). At every decision of a learner seat a :class:`LabellingAgent`
asks the *teacher* (a search agent, or a heuristic for the first round) for its move and
records the observation counts, the legal-action mask and that move; the game then goes on
with the teacher's move with probability ``teacher_share`` and with the learner's otherwise
(DAgger: the teacher labels the positions the learner itself reaches). When the game ends
every recorded decision gets the seat's final win share as its value target.

Games are independent, so :func:`generate` spreads them over a parallel runner's workers
(:mod:`experiments.parallel`: local processes or Ray); a game's seed and its agents' seeds
derive from the run seed and the game index, so the data do not depend on the backend or the
number of workers.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import partial

import numpy as np

from agents.heuristics import ValueAgent
from biblios_env.agent_interface import Agent, AgentObservation
from biblios_env.observations import OBSERVATION_SIZE, observation_counts
from experiments.match import AgentSpec, build_agent, parse_agent_spec, play_game
from experiments.network_training import MASK_BYTES, Samples
from experiments.parallel import LOCAL, Runner, batches_of
from experiments.stats import win_shares
from experiments.tournament import derive_seed

#: Purpose keys of derived seeds (see experiments.tournament.derive_seed).
_GAME, _AGENT, _CHOICE = 11, 12, 13


class LabellingAgent:
    """Plays a learner seat: records the teacher's move at each decision (and, with ``proposer``,
    the move the ``value`` heuristic proposes there), plays the teacher's move with probability
    ``teacher_share`` and the learner's otherwise."""

    def __init__(
        self, learner: Agent | None, teacher: Agent, teacher_share: float, proposer: Agent | None = None
    ) -> None:
        self.learner, self.teacher, self.teacher_share, self.proposer = learner, teacher, teacher_share, proposer
        self.name = teacher.name if learner is None else learner.name
        self.counts: list[np.ndarray] = []
        self.masks: list[np.ndarray] = []
        self.actions: list[int] = []
        self.proposals: list[int] = []
        self.rng = random.Random(0)

    def start_game(self, seat: int, num_players: int, seed: int | None = None) -> None:
        self.teacher.start_game(seat, num_players, seed)
        if self.learner is not None:
            self.learner.start_game(seat, num_players, None if seed is None else seed + 1)
        if self.proposer is not None:
            self.proposer.start_game(seat, num_players, None if seed is None else seed + 2)
        self.rng = random.Random(seed)

    def act(self, observation: AgentObservation) -> int:
        label = self.teacher.act(observation)
        if len(observation.legal_actions) > 1:  # forced moves teach nothing
            self.counts.append(observation_counts(observation.vector))
            self.masks.append(np.packbits(observation.action_mask.astype(bool)))
            self.actions.append(label)
            self.proposals.append(-1 if self.proposer is None else self.proposer.act(observation))
        if self.learner is None or self.rng.random() < self.teacher_share:
            return label
        return self.learner.act(observation)


@dataclass(frozen=True)
class SelfPlayConfig:
    """What to play: player counts (cycled over games), the teacher and learner specs, and the
    opponents (drawn per seat with their weights)."""

    players: tuple[int, ...]
    teacher: AgentSpec
    learner: AgentSpec | None = None  # None: the teacher plays its own moves
    teacher_share: float = 1.0
    opponents: tuple[tuple[AgentSpec, float], ...] = ()  # empty: every seat is a learner seat
    seed: int = 0
    penalty: str = "standard"
    label_every_seat: bool = field(default=False)  # with opponents: also label their decisions
    proposals: bool = False  # record the value heuristic's move at every labelled decision

    def __post_init__(self) -> None:
        if not self.players:
            raise ValueError("players must name at least one player count")
        if not 0.0 <= self.teacher_share <= 1.0:
            raise ValueError(f"teacher_share must be in [0, 1], got {self.teacher_share!r}")
        if any(weight <= 0 for _, weight in self.opponents):
            raise ValueError("opponent weights must be positive")


def _proposer(config: SelfPlayConfig) -> Agent | None:
    return ValueAgent() if config.proposals else None


def _opponent(config: SelfPlayConfig, rng: random.Random) -> AgentSpec:
    specs, weights = zip(*config.opponents, strict=True)
    return rng.choices(specs, weights=weights)[0]


def play_recorded(config: SelfPlayConfig, game: int) -> Samples:
    """Play game number ``game`` of the run and return its labelled decisions."""
    num_players = config.players[game % len(config.players)]
    seed = derive_seed(config.seed, _GAME, game)
    rng = random.Random(derive_seed(config.seed, _CHOICE, game))
    learner_seat = rng.randrange(num_players)
    agents: list[Agent] = []
    labelled: dict[int, LabellingAgent] = {}
    for seat in range(num_players):
        if config.opponents and seat != learner_seat:
            agent = build_agent(_opponent(config, rng))
            if config.label_every_seat:
                agent = labelled[seat] = LabellingAgent(None, agent, 1.0, _proposer(config))
            agents.append(agent)
            continue
        learner = None if config.learner is None else build_agent(config.learner)
        labelled[seat] = LabellingAgent(learner, build_agent(config.teacher), config.teacher_share, _proposer(config))
        agents.append(labelled[seat])
    result = play_game(
        agents, seed, agent_seeds=[derive_seed(config.seed, _AGENT, game, seat) for seat in range(num_players)],
        penalty=config.penalty,
    )  # fmt: skip
    shares = win_shares(result.winners, num_players)
    parts = []
    for seat, agent in labelled.items():
        rows = len(agent.actions)
        if not rows:
            continue
        parts.append(
            Samples(
                np.stack(agent.counts),
                np.stack(agent.masks),
                np.array(agent.actions, np.int16),
                np.full(rows, shares[seat], np.float32),
                np.full(rows, num_players, np.int8),
                np.full(rows, game, np.int64),
                np.array(agent.proposals, np.int16),
            )
        )
    return Samples.concatenate(parts) if parts else empty_samples()


def empty_samples() -> Samples:
    """No samples (a game whose learner seat never had a real choice)."""
    return Samples(
        np.zeros((0, OBSERVATION_SIZE), np.uint8), np.zeros((0, MASK_BYTES), np.uint8), np.zeros(0, np.int16),
        np.zeros(0, np.float32), np.zeros(0, np.int8), np.zeros(0, np.int64), np.zeros(0, np.int16),
    )  # fmt: skip


def generate(
    config: SelfPlayConfig,
    games: Sequence[int],
    *,
    runner: Runner | None = None,
    progress: Callable[[int], None] | None = None,
) -> Samples:
    """Play the games numbered ``games`` on ``runner`` (default: in this process), in batches;
    ``progress(n)`` after each batch of ``n`` finished games. The samples are in the order of
    ``games`` whatever the backend, the workers or their timing."""
    games = list(games)
    runner = runner or Runner(LOCAL, 1)
    size = max(1, min(8, len(games) // (runner.workers * 4)))
    parts: dict[int, list[Samples]] = {}

    def record(index: int, samples: list[Samples]) -> None:
        parts[index] = samples
        if progress is not None:
            progress(len(samples))

    runner.run(
        partial(play_recorded, config),
        batches_of(games, size),
        record,
        describe=lambda game: f"game {game} (seed {derive_seed(config.seed, _GAME, game)})",
    )
    ordered = [samples for index in sorted(parts) for samples in parts[index]]
    return Samples.concatenate(ordered) if ordered else empty_samples()


def spec(text: str) -> AgentSpec:
    """An agent spec from its text (``"ismcts:iterations=60"``)."""
    return parse_agent_spec(text)


__all__ = ["LabellingAgent", "SelfPlayConfig", "empty_samples", "generate", "play_recorded", "spec"]
