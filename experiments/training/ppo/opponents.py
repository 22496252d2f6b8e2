"""MaskablePPO's opponents: its ``--opponents`` mixture, ``SPEC@WEIGHT`` items as every trainer
here takes them (:class:`experiments.training.opponents.Mixture`), as a pool of agent factories for
the Gymnasium wrapper. Each agent spec plays at its weight; ``snapshot`` is the learner's saved
past versions, its weight shared evenly among the snapshots kept. The learner itself (``self`` in
the self-play trainer) is not an opponent here: the environments may step in other processes."""

from __future__ import annotations

import functools
from collections.abc import Sequence
from pathlib import Path
from typing import Final

from agents.ppo_agent import PPOAgent
from biblios_env.agent_interface import Agent
from biblios_env.gym_env import OpponentPool
from experiments.common.match import build_agent, parse_agent_spec
from experiments.training.opponents import SNAPSHOT, Mixture

#: The names of a MaskablePPO mixture besides agent specs.
SPECIAL: Final = (SNAPSHOT,)


def parse_mixture(items: Sequence[str]) -> Mixture:
    """The mixture of ``SPEC@WEIGHT`` items (an :class:`~experiments.common.match.AgentSpecError`,
    a ``ValueError``, naming a bad one)."""
    return Mixture.parse(items, special=SPECIAL)


def spec_factory(spec: str) -> Agent:
    """A fresh agent of ``spec`` (module level, so a pool holding it pickles for SubprocVecEnv)."""
    return build_agent(parse_agent_spec(spec))


def snapshot_factory(path: str, label: str) -> Agent:
    """A snapshot of the learner that samples from its masked policy (the file is loaded once per process)."""
    return PPOAgent(path, deterministic=False, label=label)


def build_pool(mixture: Mixture, snapshots: Sequence[Path]) -> OpponentPool:
    """The opponent pool: each agent spec at its weight, the ``snapshot`` weight shared by the
    snapshots; before the first snapshot, uniform random play if the mixture names nothing else."""
    pool = OpponentPool()
    for name, weight in zip(mixture.names, mixture.weights.tolist(), strict=True):
        if weight <= 0:
            continue
        if name != SNAPSHOT:
            pool.add(functools.partial(spec_factory, name), weight)
        for path in snapshots if name == SNAPSHOT else ():
            pool.add(functools.partial(snapshot_factory, str(path), f"snapshot:{path.stem}"), weight / len(snapshots))
    if len(pool) == 0:
        pool.add(functools.partial(spec_factory, "random"), 1.0)
    return pool


__all__ = ["SPECIAL", "build_pool", "parse_mixture", "snapshot_factory", "spec_factory"]
