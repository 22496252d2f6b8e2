"""Information-set Monte Carlo search over the shipped network or the ``value`` heuristic: the
agents behind the ``ismcts`` agent spec.

* :mod:`agents.search.options`: :class:`SearchOptions`, the enums of its choices, and the
  parameters of the ``ismcts`` spec;
* :mod:`agents.search.common`: :class:`SearchAgent`, what both searches share (the heuristic
  default, determinizations, searched moves, rollouts, rewards, budget);
* :mod:`agents.search.flat`: :class:`FlatSearch`, flat Monte Carlo gated by the heuristic (the
  default);
* :mod:`agents.search.tree`: :class:`TreeSearch`, information-set Monte Carlo tree search;
* :mod:`agents.search.evaluators`: what a search is given to value a move, as OpenSpiel's MCTS is
  given an evaluator: the proposer and the :class:`~agents.search.evaluators.Rollouts` (policy,
  network or random), and the defaults the options ask for;
* :mod:`agents.search.network_rollouts`: rollouts in which the shipped network plays the searching
  seat (``rollout=network``, the default at 2 players), stepped together.

Build one with ``FlatSearch(SearchOptions(iterations=200), seed=1)``, or by its
:class:`SearchMode` with :func:`search_agent`.
"""

from __future__ import annotations

from agents.search.common import SearchAgent
from agents.search.evaluators import Rollouts, default_proposer, default_rollouts
from agents.search.flat import FlatSearch
from agents.search.options import OpponentModel, Rollout, SearchMode, SearchOptions
from agents.search.tree import TreeSearch


def search_agent(
    options: SearchOptions | None = None, mode: SearchMode = SearchMode.FLAT, seed: int | None = None
) -> SearchAgent:
    """The search agent of ``mode`` with ``options`` (``None``: the defaults) and ``seed``, given
    the proposer and the rollouts its options ask for."""
    options = SearchOptions() if options is None else options
    search = FlatSearch if mode is SearchMode.FLAT else TreeSearch
    return search(options, seed, proposer=default_proposer(options), rollouts=default_rollouts(options))


__all__ = [
    "FlatSearch",
    "OpponentModel",
    "Rollout",
    "Rollouts",
    "SearchAgent",
    "SearchMode",
    "SearchOptions",
    "TreeSearch",
    "search_agent",
]
