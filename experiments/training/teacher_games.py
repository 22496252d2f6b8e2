"""Games in which a teacher labels the decisions of learner seats: the training data of expert
iteration (:mod:`experiments.training.expert_iteration`) and of PPO's warm start by behaviour
cloning and DAgger (:mod:`experiments.training.ppo.warm_start`).

One pipeline plays them. At every decision of a learner seat a :class:`LabellingAgent` asks the
*teacher* (a search agent, or a heuristic) for its move and records the observation, the
legal-action mask and that move in the game's :class:`LabelledDecisions`; the game then goes on
with the teacher's move with probability ``teacher_share`` and with the learner's otherwise
(DAgger: the teacher labels the positions the learner itself reaches; without a learner it is
behaviour cloning). Games are independent, so :func:`play_games` spreads them over a parallel
runner's workers (:mod:`experiments.common.parallel`: local processes or Ray); a game's seed and its
agents' seeds derive from the run seed and the game, so the data do not depend on the backend or
the number of workers.

The two trainers seat, seed and keep their games differently:

* **Expert iteration** (:class:`SelfPlayConfig`, :func:`generate`): the *learner* (the behaviour
  policy being trained, e.g. the current network, or the teacher itself) at one or every seat,
  and opponents drawn per seat with their weights, all built from agent specs
  (:mod:`experiments.common.match`); seeds derived from the run seed and the game number; forced moves
  are not kept (they teach nothing); every decision gets the seat's final win share as its value
  target; the data are :class:`~experiments.training.networks.Samples`, a game's grouped by seat.
* **PPO's warm start** (:func:`collect_demonstrations`): the teacher in every seat, every seat
  labelled (behaviour cloning), or one seat played by the policy being trained, sampling its
  masked policy (DAgger); seeds drawn from a generator per run, then one per game; every
  decision is kept, in the order played, with the seat's final reward (the env's ``reward``
  option) as its return; the data are the arrays of :data:`DEMONSTRATION_KEYS`.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import partial
from typing import Final, TypeVar

import numpy as np

from agents.heuristics import ValueAgent
from agents.network import NumpyNetwork
from biblios_env.actions import NUM_ACTIONS
from biblios_env.agent_interface import Agent, AgentObservation
from biblios_env.engine.config import GameConfig
from biblios_env.engine.scoring import rewards
from biblios_env.observations import OBSERVATION_SIZE, observation_counts
from experiments.common.match import AgentSpec, GameResult, build_agent, parse_agent_spec, play_game
from experiments.common.parallel import LOCAL, Runner, batches_of
from experiments.common.seeds import TEACHER_AGENT, TEACHER_CHOICE, TEACHER_GAME, derive_seed
from experiments.common.stats import win_shares
from experiments.training.networks import Samples

Item = TypeVar("Item")
Data = TypeVar("Data")

#: The arrays of PPO's demonstrations (and of its ``--bc-data`` file).
DEMONSTRATION_KEYS: Final = ("observations", "masks", "actions", "returns")


# ----------------------------------------------------------------------------- one labelled game
@dataclass
class LabelledDecisions:
    """The decisions a game's teachers labelled, in the order they were made, and the two forms
    the trainers keep them in."""

    seats: list[int] = field(default_factory=list)
    vectors: list[np.ndarray] = field(default_factory=list)  # the observation (float32)
    masks: list[np.ndarray] = field(default_factory=list)  # the legal-action mask (int8)
    labels: list[int] = field(default_factory=list)  # the teacher's move
    proposals: list[int] = field(default_factory=list)  # the value heuristic's move (-1: not asked)

    def record(self, seat: int, observation: AgentObservation, label: int, proposal: int) -> None:
        self.seats.append(seat)
        self.vectors.append(observation.vector.copy())
        self.masks.append(observation.action_mask.copy())
        self.labels.append(label)
        self.proposals.append(proposal)

    def _stacked(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The seats, observations and masks as arrays (of no rows when nothing was labelled)."""
        if not self.labels:
            return (
                np.zeros(0, np.int64),
                np.zeros((0, OBSERVATION_SIZE), np.float32),
                np.zeros((0, NUM_ACTIONS), np.int8),
            )
        return np.array(self.seats, np.int64), np.stack(self.vectors), np.stack(self.masks)

    def samples(self, result: GameResult, game: int) -> Samples:
        """Expert iteration's samples of game number ``game``: grouped by seat (in seat order), each
        decision's value target the seat's final win share."""
        seats, vectors, masks = self._stacked()
        order = np.argsort(seats, kind="stable")
        num_players = len(result.agents)
        shares = np.array(win_shares(result.winners, num_players), np.float32)
        return Samples(
            observation_counts(vectors[order]),
            np.packbits(masks[order].astype(bool), axis=1),
            np.array(self.labels, np.int16)[order],
            shares[seats[order]],
            np.full(len(order), num_players, np.int8),
            np.full(len(order), game, np.int64),
            np.array(self.proposals, np.int16)[order],
        )

    def demonstrations(self, result: GameResult, reward: str) -> dict[str, np.ndarray]:
        """PPO's demonstrations: in the order played, the observation as float16 (exact for its 0/1
        pieces), the mask, the teacher's action and the seat's final reward as its return."""
        seats, vectors, masks = self._stacked()
        outcome = np.array(rewards(reward, result.vp, result.winners), np.float32)
        return {
            "observations": vectors.astype(np.float16),
            "masks": masks.astype(bool),
            "actions": np.array(self.labels, np.int64),
            "returns": outcome[seats],
        }


class LabellingAgent:
    """Plays a learner seat: records the teacher's move at each decision (and, with ``proposer``,
    the move the ``value`` heuristic proposes there) in ``decisions``, then plays the teacher's
    move with probability ``teacher_share`` and the learner's otherwise (always the teacher's
    without a learner). A forced move (one legal action) is recorded only with ``forced_moves``."""

    def __init__(
        self,
        teacher: Agent,
        decisions: LabelledDecisions,
        *,
        learner: Agent | None = None,
        teacher_share: float = 1.0,
        proposer: Agent | None = None,
        forced_moves: bool = False,
    ) -> None:
        self.teacher, self.decisions, self.learner, self.proposer = teacher, decisions, learner, proposer
        self.teacher_share, self.forced_moves = teacher_share, forced_moves
        self.name = teacher.name if learner is None else learner.name
        self.seat = -1
        self.rng = random.Random(0)

    def start_game(self, seat: int, num_players: int, seed: int | None = None) -> None:
        self.seat = seat
        self.teacher.start_game(seat, num_players, seed)
        if self.learner is not None:
            self.learner.start_game(seat, num_players, None if seed is None else seed + 1)
        if self.proposer is not None:
            self.proposer.start_game(seat, num_players, None if seed is None else seed + 2)
        self.rng = random.Random(seed)

    def act(self, observation: AgentObservation) -> int:
        label = self.teacher.act(observation)
        if self.forced_moves or len(observation.legal_actions) > 1:
            proposal = -1 if self.proposer is None else self.proposer.act(observation)
            self.decisions.record(self.seat, observation, label, proposal)
        if self.learner is None or self.rng.random() < self.teacher_share:
            return label
        return self.learner.act(observation)


def play_games(
    play: Callable[[Item], Data],
    games: Sequence[Item],
    *,
    describe: Callable[[Item], str],
    runner: Runner | None = None,
    progress: Callable[[int], None] | None = None,
    kept: dict[int, Data] | None = None,
) -> list[Data]:
    """``play(game)`` for each of ``games`` on ``runner`` (default: in this process), in batches;
    ``progress(n)`` after each batch of ``n`` finished games; ``describe(game)`` names a game whose
    worker died. The results are in the order of ``games`` whatever the backend, the workers or
    their timing.

    ``kept`` holds the results by position in ``games``: the games already in it (kept from a
    stopped run) are not played again, and each game is put in it as its batch returns, so that
    after a Ctrl-C (KeyboardInterrupt, raised by the runner once the batches in flight are in)
    it holds every finished game, for the caller to save."""
    runner = runner or Runner(LOCAL, 1)
    kept = {} if kept is None else kept
    todo = [position for position in range(len(games)) if position not in kept]
    size = max(1, min(8, len(todo) // (runner.workers * 4)))

    def record(index: int, results: list[Data]) -> None:
        start = index * size  # a batch cut short returns its first games
        kept.update(zip(todo[start : start + len(results)], results, strict=True))
        if progress is not None:
            progress(len(results))

    runner.run(play, batches_of([games[position] for position in todo], size), record, describe=describe)
    return [kept[position] for position in range(len(games))]


# ----------------------------------------------------------------------------- expert iteration
@dataclass(frozen=True)
class SelfPlayConfig:
    """Expert iteration's games: player counts (cycled over games), the teacher and learner specs,
    and the opponents (drawn per seat with their weights)."""

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
    rng = random.Random(derive_seed(config.seed, TEACHER_CHOICE, game))
    learner_seat = rng.randrange(num_players)
    decisions = LabelledDecisions()
    agents: list[Agent] = []
    for seat in range(num_players):
        if config.opponents and seat != learner_seat:
            agent = build_agent(_opponent(config, rng))
            if config.label_every_seat:
                agent = LabellingAgent(agent, decisions, proposer=_proposer(config))
            agents.append(agent)
            continue
        learner = None if config.learner is None else build_agent(config.learner)
        agents.append(
            LabellingAgent(
                build_agent(config.teacher), decisions, learner=learner, teacher_share=config.teacher_share,
                proposer=_proposer(config),
            )
        )  # fmt: skip
    result = play_game(
        agents, derive_seed(config.seed, TEACHER_GAME, game), game_config=GameConfig(num_players, config.penalty),
        agent_seeds=[derive_seed(config.seed, TEACHER_AGENT, game, seat) for seat in range(num_players)],
    )  # fmt: skip
    return decisions.samples(result, game)


def generate(
    config: SelfPlayConfig,
    games: Sequence[int],
    *,
    runner: Runner | None = None,
    progress: Callable[[int], None] | None = None,
    kept: dict[int, Samples] | None = None,
) -> Samples:
    """Play the games numbered ``games`` (see :func:`play_games`, also for ``kept``, by position
    in ``games``); their samples, in that order."""
    samples = play_games(
        partial(play_recorded, config),
        list(games),
        describe=lambda game: f"game {game} (seed {derive_seed(config.seed, TEACHER_GAME, game)})",
        runner=runner,
        progress=progress,
        kept=kept,
    )
    return Samples.concatenate(samples) if samples else Samples.empty()


# ----------------------------------------------------------------------------- PPO's warm start
class _SamplingLearner:
    """The DAgger learner of a demonstration game: samples its masked policy with the game's
    seeding generator, the one that gave every seat its seed and chose the learner's seat."""

    name = "learner"

    def __init__(self, policy: NumpyNetwork, rng: np.random.Generator) -> None:
        self.policy, self.rng = policy, rng

    def start_game(self, seat: int, num_players: int, seed: int | None = None) -> None:
        """Nothing to seed: the generator is the game's, already seeded."""

    def act(self, observation: AgentObservation) -> int:
        return self.policy.choose(observation.vector, observation.action_mask, False, self.rng)


def _demonstration_game(
    game: tuple[int, int, int], teacher: str, reward: str, learner: NumpyNetwork | None
) -> dict[str, np.ndarray]:
    """One game of :func:`collect_demonstrations` (a module function, so the runner's workers run
    it): ``game`` is (players, game seed, agents' seed). The agents' seed seeds the generator that
    gives each seat its seed, then (DAgger) chooses the learner's seat and draws its samples."""
    count, game_seed, agent_seed = game
    spec = parse_agent_spec(teacher)
    teachers = [build_agent(spec) for _ in range(count)]
    seeder = np.random.default_rng(agent_seed)
    agent_seeds = [int(seeder.integers(2**63)) for _ in range(count)]
    learner_seat = int(seeder.integers(count)) if learner is not None else -1
    decisions = LabelledDecisions()
    agents: list[Agent] = []
    for seat, agent in enumerate(teachers):
        if learner is None:
            agents.append(LabellingAgent(agent, decisions, forced_moves=True))
        elif seat == learner_seat:
            sampler = _SamplingLearner(learner, seeder)
            agents.append(LabellingAgent(agent, decisions, learner=sampler, teacher_share=0.0, forced_moves=True))
        else:
            agents.append(agent)
    return decisions.demonstrations(play_game(agents, game_seed, agent_seeds=agent_seeds), reward)


def collect_demonstrations(
    teacher: str,
    games: int,
    players: Sequence[int],
    reward: str,
    seed: int,
    learner: NumpyNetwork | None = None,
    runner: Runner | None = None,
    progress: Callable[[int], None] | None = None,
    kept: dict[int, dict[str, np.ndarray]] | None = None,
) -> dict[str, np.ndarray]:
    """Decisions labelled by ``teacher`` (an agent spec): observation (float16), mask, the teacher's
    action and the final reward of the deciding seat (the env's ``reward`` option).

    Without ``learner`` the teacher plays every seat and every decision is kept (behaviour
    cloning). With ``learner`` (DAgger) the learner plays one random seat by sampling from its
    masked policy against the teacher, and only the learner's decisions are kept, each labelled
    with what the teacher would have played there: the states the learner really reaches.
    The games are played on ``runner`` (default: in this process); the decisions come in game
    order whatever the backend and the number of workers; ``progress(n)`` after each batch of
    ``n`` finished games; ``kept``: the games finished before, by number (see :func:`play_games`).
    """
    rng = np.random.default_rng(seed)
    seeds = [
        (players[index % len(players)], int(rng.integers(2**63)), int(rng.integers(2**63))) for index in range(games)
    ]
    parts = play_games(
        partial(_demonstration_game, teacher=teacher, reward=reward, learner=learner),
        seeds,
        describe=lambda game: f"a {game[0]}-player game (seed {game[1]}, agents' seed {game[2]})",
        runner=runner,
        progress=progress,
        kept=kept,
    )
    return {key: np.concatenate([part[key] for part in parts]) for key in DEMONSTRATION_KEYS}


__all__ = [
    "DEMONSTRATION_KEYS",
    "LabelledDecisions",
    "LabellingAgent",
    "SelfPlayConfig",
    "collect_demonstrations",
    "generate",
    "play_games",
    "play_recorded",
]
