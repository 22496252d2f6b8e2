"""What a search agent is told: :class:`SearchOptions`, the enums of its choices, and the
parameters of the ``ismcts`` agent spec.

Code builds the options directly (``FlatSearch(SearchOptions(iterations=200))``); the agent
registry (:mod:`agents`) reads an agent spec such as ``ismcts:iterations=200,searched=bid-church``
into them and picks the search by the spec's ``mode``. The options check their values against
:data:`OPTION_RANGES`, so a bad one (out of range, ``nan``) is a ValueError naming it and its range
whichever way it was given.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from enum import Enum
from typing import Any, Final

from agents.belief import BELIEFS, PlainBelief
from biblios_env.actions import MAX_BID
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

#: The values each numeric option may take, both ends included (an int where the ends are ints):
#: wide enough for any study, narrow enough that a typo (``iterations=100000000``, ``nan``) is
#: refused before a search starts. ``gate`` may also be ``inf`` (the heuristic's move, always).
OPTION_RANGES: Final[dict[str, tuple[float, float]]] = {
    "iterations": (1, 1_000_000),
    "time_limit": (0.001, 3600.0),
    "gate": (0.0, math.inf),
    "exploration": (0.0, 100.0),
    "bid_raises": (1, MAX_BID),
    "margin_weight": (0.0, 100.0),
    "horizon": (1, 1000),
    "temperature": (0.001, 1000.0),
    "consistency_tries": (1, 1000),
    "decisive": (0.0, 100.0),
    "min_iterations": (2, 1_000_000),
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
        """Check every option (ValueError naming the first bad one and its range) and store numbers
        as their types (``iterations=2.0`` is 2)."""
        for name in ("decisive", "min_iterations", "consistency_tries", "gate", "exploration", "margin_weight",
                     "temperature"):  # fmt: skip
            self._set(name, _within(name, getattr(self, name)))
        if self.iterations is None and self.time_limit is None:
            raise ValueError("the search needs a budget: iterations, time_limit or both")
        for name in ("iterations", "time_limit", "horizon"):  # None: no cap
            if getattr(self, name) is not None:
                self._set(name, _within(name, getattr(self, name), "or None"))
        self._set("bid_raises", _bid_raises(self.bid_raises))
        if self.horizon is not None and self.rollout is Rollout.NETWORK:
            raise ValueError(f"rollout=network plays to the end of the game: it takes no horizon (got {self.horizon})")
        self._set("search_refuse", bool(self.search_refuse))
        self._set("belief_weights", bool(self.belief_weights))
        if self.belief is None:  # an agent spec reads the word "none" as None
            self._set("belief", PlainBelief.name)
        if not isinstance(self.belief, str) or self.belief not in BELIEFS:
            raise ValueError(f"belief must be one of {tuple(BELIEFS)}, got {self.belief!r}")
        if self.proposer not in PROPOSERS:
            raise ValueError(f"proposer must be one of {PROPOSERS}, got {self.proposer!r}")

    def _set(self, name: str, value: object) -> None:
        object.__setattr__(self, name, value)


def _within(name: str, value: Any, alternative: str = "") -> float:
    """``value`` as the type of its :data:`OPTION_RANGES` range (int or float) if it lies inside,
    else ValueError naming the option and the range (``alternative`` names another accepted value)."""
    low, high = OPTION_RANGES[name]
    whole = isinstance(low, int)
    kind = "an int" if whole else "a number"
    expected = f"{name} must be {kind} from {low} to {high}{' ' + alternative if alternative else ''}"
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise ValueError(f"{expected}, got {value!r}")
    if not low <= value <= high or (whole and value != int(value)):
        raise ValueError(f"{expected}, got {value!r}")
    return int(value) if whole else float(value)


def _bid_raises(bid_raises: Iterable[int]) -> tuple[int, ...]:
    """The searched raises over the high bid, ascending and distinct (each from 1 to MAX_BID)."""
    raises = tuple(sorted({int(_within("bid_raises", raise_)) for raise_ in bid_raises}))
    if not raises:
        raise ValueError(f"bid_raises must name at least one raise, got {bid_raises!r}")
    return raises


__all__ = [
    "NETWORK_PROPOSES",
    "NETWORK_ROLLOUTS",
    "OPTION_RANGES",
    "PROPOSERS",
    "SEARCHABLE",
    "SPEC_DEFAULTS",
    "OpponentModel",
    "Rollout",
    "SearchMode",
    "SearchOptions",
]
