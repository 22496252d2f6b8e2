"""Agents that play Biblios through the :class:`~biblios_env.agent_interface.Agent` interface.

``AGENTS`` maps a short name to a factory; :func:`make_agent` builds one by name with keyword
parameters (the tournament harness and the Gymnasium wrapper's opponents use it):

=========  =====================================================================
name       agent
=========  =====================================================================
random     :class:`~agents.random_agent.RandomAgent`: uniform over legal actions
value      :class:`~agents.heuristics.ValueAgent`: win-probability card values, paced gold bids
hoarder    :class:`~agents.heuristics.HoarderAgent`: specialist, hoards gold, bids late
ismcts     ``agents.search``: the shipped network (or value) corrected by information-set search (imported lazily)
ppo        ``agents.ppo_agent.PPOAgent``: a trained MaskablePPO policy (default: the shipped one; imported lazily)
network    ``agents.network_agent.NetworkAgent``: the shipped policy-and-value network for the player count
=========  =====================================================================

The ``ismcts`` parameters are read here into :class:`~agents.search.options.SearchOptions` (the
names of choices become enums, lists such as ``searched=bid-church`` tuples), and ``mode`` picks
the search: :class:`~agents.search.flat.FlatSearch` or :class:`~agents.search.tree.TreeSearch`.

Numbers given by name are checked against :data:`HEURISTIC_RANGES` (the heuristics) and the
search options' own ranges: an agent spec comes from a command line or a web request, and a value
such as ``aggression=1e308`` or ``nan`` would only fail later, in the middle of a game.
:data:`FILE_PARAMETERS` names the parameters that are files to load (a server checks them).
"""

from __future__ import annotations

# isort: off
# First: importing biblios_env decides which build of the compiled agent modules loads.
import biblios_env  # noqa: F401
# isort: on

import inspect
import math
from collections.abc import Callable
from enum import Enum
from typing import TYPE_CHECKING, Any, Final, TypeVar

from agents.heuristics import HeuristicAgent, HoarderAgent, ValueAgent
from agents.random_agent import RandomAgent
from biblios_env.agent_interface import Agent, AgentObservation

if TYPE_CHECKING:
    from agents.search.options import SearchMode, SearchOptions
    from biblios_env.engine.flow import Decision

#: An enum of a choice of the ``ismcts`` spec.
Choice = TypeVar("Choice", bound=Enum)

#: The values a heuristic agent's numeric parameters may take by name, both ends included (an int
#: where the default is one). Wide enough for any tuning tried; a value outside is a mistake.
HEURISTIC_RANGES: Final[dict[str, tuple[float, float]]] = {
    "gold_value": (0.0, 10.0),
    "auction_share": (0.0, 1.0),
    "denial": (0.0, 10.0),
    "capture": (0.0, 1.0),
    "min_coin_value": (0.0, 100.0),
    "max_coin_value": (0.0, 100.0),
    "placement_samples": (1, 1000),
    "bluff": (0, 66),
    "sigma_base": (0.0, 100.0),
    "sigma_scale": (0.0, 100.0),
    "tie_margin": (0.0, 100.0),
    "rival_weight": (0.0, 10.0),
    "focus": (1, 5),
    "focus_weight": (0.0, 100.0),
    "off_focus_weight": (0.0, 100.0),
    "focus_bonus": (0.0, 100.0),
    "focus_auction_share": (0.0, 1.0),
    "patience": (0.0, 100.0),
    "aggression": (0.0, 10.0),
}
#: The parameters of a registry agent that name a file to load (a policy or network file).
FILE_PARAMETERS: Final[dict[str, tuple[str, ...]]] = {"ppo": ("path",), "network": ("path",)}


def _ismcts(**params: Any) -> Agent:
    from agents.search import search_agent  # imported lazily: search code is heavier
    from agents.search.options import SPEC_DEFAULTS

    _reject_unknown("ismcts", params, list(SPEC_DEFAULTS))
    mode, options, seed = _search_spec(params)
    return search_agent(options, mode, seed)


def _ppo(**params: Any) -> Agent:
    from agents.ppo_agent import PPOAgent  # imported lazily: loads a policy file

    return _construct(PPOAgent, "ppo", params)


def _network(**params: Any) -> Agent:
    from agents.network_agent import NetworkAgent  # imported lazily: loads a network file

    return _construct(NetworkAgent, "network", params)


def _construct(cls: Callable[..., Agent], name: str, params: dict[str, Any]) -> Agent:
    """Build ``cls(**params)``, turning an unknown keyword into a ValueError that names it."""
    if _checks_its_own_parameters(cls):
        _check_ranges(params)
    else:
        _check_keywords(cls, name, params)
    return cls(**params)


def _checks_its_own_parameters(cls: Callable[..., Agent]) -> bool:
    """A heuristic agent validates its keyword parameters itself, naming the full list."""
    return isinstance(cls, type) and issubclass(cls, HeuristicAgent)


def _check_ranges(params: dict[str, Any]) -> None:
    """ValueError naming the first heuristic parameter outside :data:`HEURISTIC_RANGES` (a
    ``rival_weight`` of ``None`` keeps its meaning: one over the number of opponents)."""
    for key, value in params.items():
        if key not in HEURISTIC_RANGES or (key == "rival_weight" and value is None):
            continue
        low, high = HEURISTIC_RANGES[key]
        whole = isinstance(low, int)
        kind = "an int" if whole else "a number"
        number = not isinstance(value, bool) and isinstance(value, int if whole else int | float)
        if not number or not math.isfinite(value) or not low <= value <= high:
            raise ValueError(f"{key} must be {kind} from {low} to {high}, got {value!r}")


def _check_keywords(cls: Callable[..., Agent], name: str, params: dict[str, Any]) -> None:
    """ValueError naming the keywords in ``params`` that ``cls`` does not take (unless it takes any)."""
    signature = inspect.signature(cls)
    if any(p.kind is inspect.Parameter.VAR_KEYWORD for p in signature.parameters.values()):
        return
    _reject_unknown(name, params, [p for p in signature.parameters if p != "self"])


def _reject_unknown(name: str, params: dict[str, Any], known: list[str]) -> None:
    """ValueError naming the keywords in ``params`` that are not ``known``, listing those."""
    unknown = sorted(set(params) - set(known))
    if unknown:
        raise ValueError(f"unknown parameter(s) {unknown} for agent {name!r}; known: {known}")


# ----------------------------------------------------------------------------- the ismcts spec
def _search_spec(params: dict[str, Any]) -> tuple[SearchMode, SearchOptions, Any]:
    """The search, its options and the agent's seed that the ``ismcts`` spec's parameters ask
    for (:data:`agents.search.options.SPEC_DEFAULTS`). The names of choices become enums here,
    and lists such as ``"1-2-4"`` or ``"bid/church"`` tuples; the options check the values."""
    from agents.search.options import OpponentModel, Rollout, SearchMode, SearchOptions

    given = dict(params)
    if "opponent_model" in given:
        given["opponent_model"] = _member("opponent_model", given["opponent_model"], OpponentModel)
    if "bid_raises" in given:
        given["bid_raises"] = _bid_raises(given["bid_raises"])
    if "searched" in given:
        given["searched"] = _searched(given["searched"])
    mode = _member("mode", given.pop("mode", SearchMode.FLAT.value), SearchMode)
    if "rollout" in given:
        given["rollout"] = _member("rollout", given["rollout"], Rollout)
    seed = given.pop("seed", None)
    return mode, SearchOptions(**given), seed


def _member(name: str, value: Any, choices: type[Choice]) -> Choice:
    """The member of ``choices`` that ``value`` names, else ValueError naming the parameter."""
    names = tuple(member.value for member in choices)
    if value not in names:
        raise ValueError(f"{name} must be one of {names}, got {value!r}")
    return choices(value)


def _words(text: str) -> tuple[str, ...]:
    """The parts of a command-line list such as ``"1-2-4"`` or ``"bid/church"``."""
    return tuple(text.replace("-", " ").replace("/", " ").split())


def _bid_raises(bid_raises: Any) -> Any:
    """A spec's raises as a tuple of ints (``"1-2-4"``, or one int); other values as given."""
    if isinstance(bid_raises, str):
        return tuple(int(part) for part in _words(bid_raises))
    if isinstance(bid_raises, int):
        return (bid_raises,)
    return bid_raises


def _searched(searched: Any) -> frozenset[Decision]:
    """The searched decisions named in a spec (``"bid-church"``, or a sequence of names)."""
    from agents.search.options import SEARCHABLE

    if isinstance(searched, str):
        searched = _words(searched)
    unknown = sorted(set(searched) - set(SEARCHABLE))
    if unknown:
        raise ValueError(f"searched must name decisions among {tuple(SEARCHABLE)}, got {unknown}")
    return frozenset(SEARCHABLE[name] for name in searched)


#: Short name -> factory taking the agent's keyword parameters.
AGENTS: dict[str, Callable[..., Agent]] = {
    "random": lambda **params: _construct(RandomAgent, "random", params),
    "value": lambda **params: _construct(ValueAgent, "value", params),
    "hoarder": lambda **params: _construct(HoarderAgent, "hoarder", params),
    "ismcts": _ismcts,
    "ppo": _ppo,
    "network": _network,
}


def make_agent(name: str, **params: Any) -> Agent:
    """The agent registered as ``name``, built with ``params``; ValueError for an unknown name
    or parameter, listing what is known."""
    factory = AGENTS.get(name)
    if factory is None:
        raise ValueError(f"unknown agent {name!r}; known agents: {', '.join(sorted(AGENTS))}")
    return factory(**params)


__all__ = [
    "AGENTS",
    "FILE_PARAMETERS",
    "HEURISTIC_RANGES",
    "Agent",
    "AgentObservation",
    "HeuristicAgent",
    "HoarderAgent",
    "RandomAgent",
    "ValueAgent",
    "make_agent",
]
