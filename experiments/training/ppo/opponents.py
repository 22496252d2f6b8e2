"""The opponents of the learner in self-play: the heuristics and a growing pool of its own snapshots.

``--opponents`` sets the mixture, e.g. ``value=0.6,hoarder=0.1,random=0.05,self=0.25``:
``self`` is the total weight of the snapshots, shared evenly among them.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from pathlib import Path
from typing import Final

from agents import make_agent
from agents.ppo_agent import PPOAgent
from biblios_env.agent_interface import Agent
from biblios_env.gym_env import OpponentPool

#: The name of the snapshot pool in a mixture.
SELF: Final = "self"


def heuristic_factory(name: str) -> Agent:
    """A fresh registry agent (module level, so a pool holding it pickles for SubprocVecEnv)."""
    return make_agent(name)


def snapshot_factory(path: str, label: str) -> Agent:
    """A snapshot of the learner that samples from its masked policy (the file is loaded once per process)."""
    return PPOAgent(path, deterministic=False, label=label)


def parse_mixture(text: str) -> dict[str, float]:
    """``"value=0.4,self=0.6"`` -> {"value": 0.4, "self": 0.6}; names are registry agents or ``self``."""
    mixture: dict[str, float] = {}
    for item in text.split(","):
        name, equals, weight = (part.strip() for part in item.partition("="))
        if not equals:
            raise ValueError(f"bad opponent mixture item {item!r}: expected name=weight")
        try:
            value = float(weight)
        except ValueError:
            raise ValueError(f"bad weight {weight!r} for opponent {name!r}") from None
        if not value >= 0:
            raise ValueError(f"opponent weight must be >= 0, got {name}={weight}")
        if name != SELF:
            make_agent(name)  # ValueError naming the known agents
        mixture[name] = value
    if sum(mixture.values()) <= 0:
        raise ValueError(f"the opponent mixture {text!r} has no positive weight")
    return mixture


def build_pool(mixture: dict[str, float], snapshots: Sequence[Path]) -> OpponentPool:
    """The opponent pool: each heuristic at its weight, the ``self`` weight shared by the snapshots."""
    pool = OpponentPool()
    for name, weight in mixture.items():
        if name != SELF and weight > 0:
            pool.add(functools.partial(heuristic_factory, name), weight)
    if snapshots and mixture.get(SELF, 0.0) > 0:
        share = mixture[SELF] / len(snapshots)
        for path in snapshots:
            pool.add(functools.partial(snapshot_factory, str(path), f"snapshot:{path.stem}"), share)
    return pool


__all__ = ["SELF", "build_pool", "heuristic_factory", "parse_mixture", "snapshot_factory"]
