"""What a search agent is told: :class:`SearchOptions`, the enums of its choices, and the
parameters of the ``ismcts`` agent spec.

Code builds the options directly (``FlatSearch(SearchOptions(iterations=200))``); the agent
registry (:mod:`agents`) reads an agent spec such as ``ismcts:iterations=200,searched=bid-church``
into them and picks the search by the spec's ``mode``. The options check their values, so a bad
one is a ValueError naming it whichever way it was given.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from enum import Enum
from typing import Any, Final

from agents.belief import BELIEFS, PlainBelief
from biblios_env.engine.flow import Decision


class SearchMode(Enum):
    """Which search corrects the heuristic at the searched decisions (the spec's ``mode``)."""

    FLAT = "flat"  # flat Monte Carlo over the candidate moves, gated (agents.search.flat): the default
    TREE = "tree"  # information-set Monte Carlo tree search with UCB1 (agents.search.tree)


class Rollout(Enum):
    """How a simulation plays on after the searched move."""

    AUTO = "auto"  # NETWORK at the player counts of NETWORK_ROLLOUTS, POLICY at the others: the default
    POLICY = "policy"  # the rollout policy for every seat, a fast imitation of the value heuristic
    NETWORK = "network"  # the shipped network for the searching seat, the rollout policy for the others
    RANDOM = "random"  # uniform over the searched moves


class OpponentModel(Enum):
    """How the flat search models the other bidders on the card under auction: by the rollout
    policy, or by the ``value`` heuristic's own bid limit computed from each seat's view of the
    determinization (exact against ``value`` given the sample; see
    :meth:`~agents.search.flat.FlatSearch.bidding_sample`)."""

    POLICY = "policy"
    VALUE = "value"


#: The decisions that can be searched, by the names the spec's ``searched`` uses.
SEARCHABLE: Final = {
    "place": Decision.PLACE,
    "take": Decision.TAKE,
    "bid": Decision.BID,
    "pay": Decision.PAY,
    "church": Decision.CHURCH,
}

#: The agents that can propose the move a search must beat (``proposer``): the ``value``
#: heuristic, the shipped ``network`` for the game's player count, or ``auto``: the network at the
#: counts of :data:`NETWORK_PROPOSES`, ``value`` at the others.
PROPOSERS: Final = ("auto", "value", "network")
#: The player counts at which the shipped network beats ``value`` on fresh deals, so that a
#: search correcting it is the stronger search (docs/results.md: at 2 players the search over the
#: network won 59.0 % against ``value``, over ``value`` 53.2 %, on the same 500 deals; at 3, with
#: ``network_3p.npz``, and at 4 with ``network_4p.npz``, see there).
NETWORK_PROPOSES: Final = frozenset({2, 3, 4})
#: The player counts at which ``rollout=auto`` lets the network play the searching seat in the
#: rollouts (:mod:`agents.search.network_rollouts`): where that was measured to beat rollouts by
#: the policy alone (docs/results.md).
NETWORK_ROLLOUTS: Final = frozenset({2})
#: The parameters of the ``ismcts`` agent spec, in the order ``--list-agents`` shows them, with
#: their defaults as a spec writes them. Each sets the option of its name, except ``mode`` (the
#: search, a :class:`SearchMode` value) and ``seed`` (the agent's seed). The search agents carry
#: this table as their ``defaults``, which is where ``--list-agents`` reads an agent's parameters.
SPEC_DEFAULTS: Final[dict[str, Any]] = {
    "iterations": 60,
    "time_limit": None,
    "searched": ("bid",),
    "gate": 1.5,
    "mode": SearchMode.FLAT.value,
    "exploration": 0.7,
    "bid_raises": (1,),
    "margin_weight": 0.25,
    "rollout": Rollout.AUTO.value,
    "horizon": None,
    "temperature": 2.0,
    "search_refuse": False,
    "seed": None,
    "policy": None,
    "opponent_model": OpponentModel.POLICY.value,
    "consistency_tries": 3,
    "decisive": 0.0,
    "min_iterations": 20,
    "belief": PlainBelief.name,
    "belief_weights": False,
    "proposer": "auto",
}


@dataclass(frozen=True, slots=True)
class SearchOptions:
    """How a search agent searches (the search modules' docs say what each option does there).

    Attributes:
        iterations: determinizations per searched decision (flat: each plays out every
            candidate move; tree: one tree walk each); ``None`` for no cap (then
            ``time_limit`` must be set).
        time_limit: seconds of thinking per searched decision; ``None`` for no time cap.
        searched: the decisions searched (see :data:`SEARCHABLE`); the others are the heuristic's.
        gate: the flat search plays its best move instead of the heuristic's only when the paired
            advantage exceeds ``gate`` standard errors (0: always the best mean).
        exploration: UCB1 exploration constant of the tree search (rewards in about [-0.25, 1.25]).
        bid_raises: raises over the high bid searched as bids, besides PASS (kept ascending and
            distinct).
        margin_weight: weight of ``tanh(VP margin / 5)`` added to the win share.
        rollout: how the simulations play on (:class:`Rollout`; ``auto``: the network plays the
            searching seat at the player counts of :data:`NETWORK_ROLLOUTS`).
        horizon: end rollouts after this many gift turns / auctions and score the position
            with :meth:`RolloutPolicy.evaluate` (``None``: play to the end of the game; network
            rollouts always do, so ``rollout=network`` takes no horizon).
        temperature: VP lead that :meth:`RolloutPolicy.evaluate` maps to tanh's knee.
        search_refuse: also search REFUSE at the start of a payment.
        policy: keyword parameters of the :class:`RolloutPolicy` (``None``: its defaults).
        opponent_model: how the flat search models the other bidders (:class:`OpponentModel`).
        consistency_tries: samples the ``value`` opponent model draws to find one whose bid
            limits agree with the bidding so far.
        decisive: the flat search stops early once the best move's paired advantage is this
            many standard errors beyond the gate either way (0: no early stop).
        min_iterations: rounds the flat search plays before it may stop early.
        belief: how the determinizations deal the opponents' hidden cards, by the name of a belief
            of :mod:`agents.belief`: ``none`` the sampler alone (uniform over the unseen cards),
            ``bids`` weighted by what the opponents' bids reveal.
        belief_weights: the flat search plays the belief's states as drawn and weights each by the
            belief in its means and its gate (the evidence counted as the effective number of
            states), instead of states resampled by those weights, which repeat.
        proposer: the agent that plays every decision not searched and proposes the move the
            search must beat at one that is (:data:`PROPOSERS`): the ``value`` heuristic, the
            shipped ``network`` for the game's player count (the search then corrects the
            network; its rollouts and opponent models stay the heuristic's), or ``auto``, the
            stronger of the two at that count (:data:`NETWORK_PROPOSES`).
    """

    iterations: int | None = 60
    time_limit: float | None = None
    searched: frozenset[Decision] = frozenset({Decision.BID})
    gate: float = 1.5
    exploration: float = 0.7
    bid_raises: tuple[int, ...] = (1,)
    margin_weight: float = 0.25
    rollout: Rollout = Rollout.AUTO
    horizon: int | None = None
    temperature: float = 2.0
    search_refuse: bool = False
    policy: Mapping[str, float] | None = None
    opponent_model: OpponentModel = OpponentModel.POLICY
    consistency_tries: int = 3
    decisive: float = 0.0
    min_iterations: int = 20
    belief: str = PlainBelief.name
    belief_weights: bool = False
    proposer: str = "auto"

    def __post_init__(self) -> None:
        """Check every option (ValueError naming the first bad one) and store numbers as their
        types (``iterations=2.0`` is 2)."""
        self._set("decisive", _not_negative("decisive", self.decisive, "standard errors (0: no early stop)"))
        self._set("min_iterations", _at_least("min_iterations", self.min_iterations, 2, "an int >= 2"))
        self._set("consistency_tries", _at_least("consistency_tries", self.consistency_tries, 1, "a positive int"))
        iterations, time_limit = _budget(self.iterations, self.time_limit)
        self._set("iterations", iterations)
        self._set("time_limit", time_limit)
        self._set("bid_raises", _bid_raises(self.bid_raises))
        self._set("gate", _not_negative("gate", self.gate, "standard errors"))
        if self.horizon is not None:
            self._set("horizon", _at_least("horizon", self.horizon, 1, "a positive int or None"))
            if self.rollout is Rollout.NETWORK:
                raise ValueError(
                    f"rollout=network plays to the end of the game: it takes no horizon (got {self.horizon})"
                )
        self._set("exploration", float(self.exploration))
        self._set("margin_weight", float(self.margin_weight))
        self._set("temperature", float(self.temperature))
        self._set("search_refuse", bool(self.search_refuse))
        self._set("belief_weights", bool(self.belief_weights))
        if not isinstance(self.belief, str) or self.belief not in BELIEFS:
            raise ValueError(f"belief must be one of {tuple(BELIEFS)}, got {self.belief!r}")
        if self.proposer not in PROPOSERS:
            raise ValueError(f"proposer must be one of {PROPOSERS}, got {self.proposer!r}")

    def _set(self, name: str, value: object) -> None:
        object.__setattr__(self, name, value)


def _at_least(name: str, value: Any, minimum: int, expected: str) -> int:
    """``value`` as an int of at least ``minimum``, else ValueError naming it (``expected`` says
    what was wanted); bools are refused."""
    if isinstance(value, bool) or int(value) < minimum:
        raise ValueError(f"{name} must be {expected}, got {value!r}")
    return int(value)


def _not_negative(name: str, value: Any, unit: str) -> float:
    """``value`` as a float of at least 0, else ValueError naming it (``unit`` says in what)."""
    if float(value) < 0:
        raise ValueError(f"{name} must be >= 0 {unit}, got {value!r}")
    return float(value)


def _budget(iterations: Any, time_limit: Any) -> tuple[int | None, float | None]:
    """The search budget: an iteration cap and/or seconds per searched decision (at least one)."""
    if iterations is None and time_limit is None:
        raise ValueError("the search needs a budget: iterations, time_limit or both")
    if iterations is not None:
        iterations = _at_least("iterations", iterations, 1, "a positive int or None")
    if time_limit is not None and float(time_limit) <= 0:
        raise ValueError(f"time_limit must be a positive number of seconds or None, got {time_limit!r}")
    return iterations, None if time_limit is None else float(time_limit)


def _bid_raises(bid_raises: Iterable[int]) -> tuple[int, ...]:
    """The searched raises over the high bid, ascending and distinct (all positive)."""
    raises = tuple(sorted({int(raise_) for raise_ in bid_raises}))
    if not raises or raises[0] < 1:
        raise ValueError(f"bid_raises must be positive ints, got {bid_raises!r}")
    return raises


__all__ = [
    "NETWORK_PROPOSES",
    "NETWORK_ROLLOUTS",
    "PROPOSERS",
    "SEARCHABLE",
    "SPEC_DEFAULTS",
    "OpponentModel",
    "Rollout",
    "SearchMode",
    "SearchOptions",
]
