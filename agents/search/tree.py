"""Single-observer IS-MCTS for the searched decisions: the ``ismcts`` agent's ``mode=tree``
(:class:`TreeSearch`).

Single-observer IS-MCTS (Cowling, Powley & Whitehouse 2012, "Information Set Monte Carlo Tree
Search", IEEE TCIAIG 4(2)): each iteration determinizes, **selects** down one tree shared by all
determinizations with UCB1 (counting a move's *availability*, how often it was legal when its
node was visited, instead of the node's visits, because moves that depend on hidden cards are
not always there), **expands** one new move (at the root any untried move, deeper the rollout
policy's move first), rolls out (:mod:`agents.search.common`) and **backs up** the rewards for
the player who made each move. A node is reached by the moves made so far and what the searcher
observes after each (the decision and player to act, the card under auction, a church card
being resolved, its own drawn card, the common area it takes from); opponents' hidden choices
are never branched on (a face-down payment is one abstract move), so the tree does not leak
hidden cards. The most visited root move is played.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from typing import Any

from mypy_extensions import mypyc_attr

from agents.heuristics import HeuristicAgent
from agents.rollout_policy import RolloutPolicy
from agents.search.common import PAY_MOVE, SearchAgent
from agents.search.evaluators import Rollouts
from agents.search.options import SearchOptions
from biblios_env.actions import REFUSE
from biblios_env.agent_interface import Agent, AgentObservation
from biblios_env.engine import rules
from biblios_env.engine.flow import DECISION_NONE, DECISION_PAY
from biblios_env.engine.state import State
from biblios_env.engine.visibility import decision_key


class _Node:
    """One information set of the searcher: per move key ``[visits, reward sum, availability]``,
    and the children reached by ``(move key, what the searcher observed next)``."""

    __slots__ = ("children", "stats")

    def __init__(self) -> None:
        self.stats: dict[int, list[float]] = {}
        self.children: dict[tuple[Any, ...], _Node] = {}


@mypyc_attr(allow_interpreted_subclasses=True)
class TreeSearch(SearchAgent):
    """The value heuristic, corrected by information-set Monte Carlo tree search (module doc).

    Args:
        options: how it searches (``None``: the defaults); it reads ``exploration`` besides the
            options of every search.
        seed: seeds the agent's generator when ``start_game`` gets no seed.
        heuristic, policy, proposer, rollouts: the heuristic, the rollout policy, the proposer
            and the rollouts (:class:`SearchAgent`; ``None``: the defaults).
    """

    def __init__(
        self,
        options: SearchOptions | None = None,
        seed: int | None = None,
        *,
        heuristic: HeuristicAgent | None = None,
        policy: RolloutPolicy | None = None,
        proposer: Callable[[int], Agent | None] | None = None,
        rollouts: Callable[[int], Rollouts] | None = None,
    ) -> None:
        super().__init__(options, seed, heuristic=heuristic, policy=policy, proposer=proposer, rollouts=rollouts)
        self.exploration = self.options.exploration

    def search(self, observation: AgentObservation, moves: list[tuple[int, int]], default: int) -> int:
        """Run IS-MCTS from the observation; return the most visited root move's action (the
        tree finds the moves on its own determinizations)."""
        view = observation.view
        start = time.perf_counter()
        deadline = self.deadline(start)
        root = _Node()
        root_actions: dict[int, int] = {}
        simulated = 0
        iteration = 0
        while self.budget_left(iteration, deadline):
            iteration += 1
            state = self.determinization(view)
            path, steps = self.tree_walk(state, root, root_actions, view.seat)
            simulated += steps + self.playout(state)
            rewards = self.rewards(state)
            for entry, player in path:
                entry[0] += 1
                entry[1] += rewards[player]
        self.record_search(iteration, simulated, start)
        return _most_visited(root, root_actions, observation.legal_actions)

    def tree_walk(
        self, state: State, root: _Node, root_actions: dict[int, int], observer: int
    ) -> tuple[list[tuple[list[float], int]], int]:
        """One descent of the tree on the determinization ``state``: select with UCB1 while every
        move of the node was tried, expand one untried move, and stop there (or at the end of the
        game). Returns the statistics entries passed with the seat that moved at each, and the
        decisions applied; the first action of each root move key is noted in ``root_actions``."""
        node = root
        path: list[tuple[list[float], int]] = []
        moves: list[tuple[int, int]] | None = self.moves(state)
        simulated = 0
        while moves is not None:
            move, expanded = self.select(node, moves, state, node is root)
            key, action = move
            if node is root:
                root_actions.setdefault(key, action)
            path.append((node.stats[key], state.current_player))
            rules.apply(state, action)
            moves, steps = self.advance(state)
            simulated += 1 + steps
            if expanded or moves is None:
                break
            child_key = (key, decision_key(state, observer))
            child = node.children.get(child_key)
            if child is None:
                child = node.children[child_key] = _Node()
            node = child
        return path, simulated

    def select(
        self, node: _Node, moves: list[tuple[int, int]], state: State, at_root: bool
    ) -> tuple[tuple[int, int], bool]:
        """The move to play at ``node`` and whether it is a new (expanded) one: counts each
        move's availability, then an untried move if any (at the root at random, deeper the
        rollout policy's move first when the rollouts follow the policy), else the best UCB1."""
        stats = node.stats
        untried = []
        best_score, best = -math.inf, moves[0]
        for move in moves:
            entry = stats.get(move[0])
            if entry is None:
                entry = stats[move[0]] = [0, 0.0, 0]
            entry[2] += 1
            visits = entry[0]
            if not visits:
                untried.append(move)
            elif not untried:
                score = entry[1] / visits + self.exploration * math.sqrt(math.log(entry[2]) / visits)
                if score > best_score:
                    best_score, best = score, move
        if not untried:
            return best, False
        move = untried[self.rng.randrange(len(untried))]
        if self.rollouts.uses_policy and not at_root:
            preferred = self.policy_key(state)
            move = next((m for m in untried if m[0] == preferred), move)
        return move, True

    def policy_key(self, state: State) -> int:
        """The move key of the rollout policy's choice."""
        self.policy.reset()
        action = self.policy.action(state)
        return PAY_MOVE if state.decision == DECISION_PAY and action != REFUSE else action

    def advance(self, state: State) -> tuple[list[tuple[int, int]] | None, int]:
        """Apply single-move decisions; return the next decision's moves (``None`` at the end
        of the game) and how many decisions were applied."""
        steps = 0
        while state.decision != DECISION_NONE:
            moves = self.moves(state)
            if len(moves) > 1:
                return moves, steps
            rules.apply(state, moves[0][1])
            steps += 1
        return None, steps


def _most_visited(root: _Node, root_actions: dict[int, int], legal: list[int]) -> int:
    """The action of the most visited root move that is legal (ties: the higher mean reward,
    then the higher key); the first legal action if no root move is."""
    ranked = sorted(
        ((entry[0], entry[1] / entry[0] if entry[0] else 0.0, key) for key, entry in root.stats.items()),
        reverse=True,
    )
    for _visits, _mean, key in ranked:
        action = root_actions.get(key)
        if action is not None and action in legal:
            return action
    return legal[0]


__all__ = ["TreeSearch"]
