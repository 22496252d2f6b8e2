"""Agents that play Biblios through the :class:`~biblios_env.agent_interface.Agent` interface.

``AGENTS`` maps a short name to a factory; :func:`make_agent` builds one by name with keyword
parameters (the tournament harness and the Gymnasium wrapper's opponents use it):

=========  =====================================================================
name       agent
=========  =====================================================================
random     :class:`~agents.random_agent.RandomAgent`: uniform over legal actions
value      :class:`~agents.heuristics.ValueAgent`: win-probability card values, paced gold bids
hoarder    :class:`~agents.heuristics.HoarderAgent`: specialist, hoards gold, bids late
ismcts     ``agents.ismcts.ISMCTSAgent``: information-set Monte Carlo tree search (imported lazily)
ppo        ``agents.ppo_agent.PPOAgent``: a trained MaskablePPO policy (default: the shipped one; imported lazily)
network    ``agents.network_agent.NetworkAgent``: the shipped policy-and-value network for the player count
=========  =====================================================================
"""

from __future__ import annotations

# isort: off
# First: importing biblios_env decides which build of the compiled agent modules loads.
import biblios_env  # noqa: F401
# isort: on

import inspect
from collections.abc import Callable
from typing import Any

from agents.heuristics import HeuristicAgent, HoarderAgent, ValueAgent
from agents.random_agent import RandomAgent
from biblios_env.agent_interface import Agent, AgentObservation


def _ismcts(**params: Any) -> Agent:
    from agents.ismcts import ISMCTSAgent  # imported lazily: search code is heavier

    return _construct(ISMCTSAgent, "ismcts", params)


def _ppo(**params: Any) -> Agent:
    from agents.ppo_agent import PPOAgent  # imported lazily: loads a policy file

    return _construct(PPOAgent, "ppo", params)


def _network(**params: Any) -> Agent:
    from agents.network_agent import NetworkAgent  # imported lazily: loads a network file

    return _construct(NetworkAgent, "network", params)


def _construct(cls: Callable[..., Agent], name: str, params: dict[str, Any]) -> Agent:
    """Build ``cls(**params)``, turning an unknown keyword into a ValueError that names it."""
    if not _checks_its_own_parameters(cls):
        _check_keywords(cls, name, params)
    return cls(**params)


def _checks_its_own_parameters(cls: Callable[..., Agent]) -> bool:
    """A heuristic agent validates its keyword parameters itself, naming the full list."""
    return isinstance(cls, type) and issubclass(cls, HeuristicAgent)


def _check_keywords(cls: Callable[..., Agent], name: str, params: dict[str, Any]) -> None:
    """ValueError naming the keywords in ``params`` that ``cls`` does not take (unless it takes any)."""
    signature = inspect.signature(cls)
    if any(p.kind is inspect.Parameter.VAR_KEYWORD for p in signature.parameters.values()):
        return
    known = [p for p in signature.parameters if p != "self"]
    unknown = sorted(set(params) - set(known))
    if unknown:
        raise ValueError(f"unknown parameter(s) {unknown} for agent {name!r}; known: {known}")


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
    "Agent",
    "AgentObservation",
    "HeuristicAgent",
    "HoarderAgent",
    "RandomAgent",
    "ValueAgent",
    "make_agent",
]
