"""CFR, CFR+ and DCFR over a whole exported game tree held as numpy arrays.

OpenSpiel's C++ solvers walk the tree one history at a time, cloning a state at each step: on the
``small`` preset's tree (about 880,000 histories) one CFR+ iteration takes about 0.6 s, so a
thousand take ten minutes, and its DCFR is a Python solver that does not fit in 24 GB there. The
tree itself never changes between iterations, so this module reads the ``.efg`` text once
(:func:`biblios_env.openspiel.efg_text` writes it) into flat arrays, one entry per history,
ordered by depth, and runs each iteration as a few whole-array operations per level: reach
probabilities down the levels, values up them (``np.add.reduceat`` over each node's children,
which the depth order keeps contiguous), and every information set's regrets at once
(``np.bincount`` over the edges' sequence numbers).

The updates are OpenSpiel's own (``open_spiel/python/algorithms/cfr.py`` and
``discounted_cfr.py``): alternating updates, player 1 then player 2 in each iteration, each pass
against the other seat's newest policy; CFR+ floors the regrets at 0 and weights iteration ``t``'s
policy by ``t`` in the average; DCFR(α, β, γ) scales the positive regrets by ``t^α / (t^α + 1)``,
the negative ones by ``t^β / (t^β + 1)`` and iteration ``t``'s policy by ``t^γ``. So after the
same number of iterations the average policies are OpenSpiel's, up to floating-point rounding
(the tests compare their exploitabilities on ``mini``).

The tree must have perfect recall (every history in an information set has the same own-action
past), as Biblios' exports do: a player's reach of an information set is read at one of its
histories.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from fractions import Fraction
from typing import Final

import numpy as np
from numpy.typing import NDArray

#: The variants, as :class:`TreeCFR` takes them.
VARIANTS: Final = ("cfr", "cfr+", "dcfr")
#: DCFR's recommended discounts (Brown and Sandholm 2019; OpenSpiel's ``DCFRSolver`` defaults).
DCFR_ALPHA: Final = 1.5
DCFR_BETA: Final = 0.0
DCFR_GAMMA: Final = 2.0

_TOKEN = re.compile(r'"(?:[^"\\]|\\.)*"|[{}]|[^\s{}"]+')
_CHANCE: Final = -1


def _number(token: str) -> float:
    return float(Fraction(token)) if "/" in token else float(token)


@dataclass(frozen=True, slots=True)
class InformationSet:
    """One information set of the tree: its player (0-based), the key OpenSpiel's ``efg_game``
    gives it, and the game's action ids of its actions, in the order of its sequences."""

    player: int
    key: str
    actions: tuple[int, ...]


class _FileOrder:
    """The tree as the file lists it (depth first), read one node line at a time."""

    def __init__(self, count: int, num_players: int) -> None:
        self.num_players = num_players
        self.parent = np.full(count, -1, np.int64)
        self.depth = np.zeros(count, np.int64)
        self.mover = np.full(count, _CHANCE, np.int64)
        self.chance = np.ones(count)
        self.position = np.full(count, -1, np.int64)  # a player's move: the action's position at its parent
        self.payoff = np.zeros((count, num_players))
        self.terminal = np.zeros(count, bool)
        self.infoset_of_node = np.full(count, -1, np.int64)  # numbered as first met
        self.keys: dict[tuple[int, int], int] = {}
        #: Per information set, as first met: player, number in the file, action labels.
        self.infosets: list[tuple[int, int, list[str]]] = []
        self.outcomes: dict[str, list[float]] = {}
        #: The nodes whose children are still being read: [node, children left, next child's position].
        self.stack: list[list[int]] = []
        self.chance_of_open: list[list[float] | None] = []  # per open node: chance's probabilities

    def node(self, index: int, line: str) -> None:
        self._attach(index)
        tokens = _TOKEN.findall(line)
        open_brace, close_brace = tokens.index("{"), tokens.index("}")
        inside = tokens[open_brace + 1 : close_brace]
        if tokens[0] == "t":
            self._terminal(index, tokens[2], inside, line)
            return
        if tokens[close_brace + 1 :] not in ([], ["0"]):
            raise ValueError(f"payoffs at a non-terminal node are not supported: {line!r}")
        if not inside:
            raise ValueError(f"node on line {index + 1} has no children: {line!r}")
        if tokens[0] == "c":
            probabilities = [_number(token) for token in inside[1::2]]
            self.stack.append([index, len(probabilities), 0])
            self.chance_of_open.append(probabilities)
            return
        player, number = int(tokens[2]) - 1, int(tokens[3])
        labels = [token[1:-1] for token in inside]
        infoset = self.keys.setdefault((player, number), len(self.keys))
        if infoset == len(self.infosets):
            self.infosets.append((player, number, labels))
        elif self.infosets[infoset][2] != labels:
            raise ValueError(f"information set {number} of player {player + 1} lists other actions: {line!r}")
        self.infoset_of_node[index] = infoset
        self.stack.append([index, len(labels), 0])
        self.chance_of_open.append(None)

    def _attach(self, index: int) -> None:
        """Make ``index`` the next child of the innermost open node."""
        if not self.stack:
            if index:
                raise ValueError(f"line {index + 1} of the tree is outside the root's subtree")
            return
        node, _, position = self.stack[-1]
        self.parent[index] = node
        self.depth[index] = self.depth[node] + 1
        probabilities = self.chance_of_open[-1]
        if probabilities is None:
            self.mover[index] = self.infosets[self.infoset_of_node[node]][0]
            self.position[index] = position
        else:
            self.chance[index] = probabilities[position]
        self.stack[-1][1] -= 1
        self.stack[-1][2] += 1
        while self.stack and self.stack[-1][1] == 0:
            self.stack.pop()
            self.chance_of_open.pop()

    def _terminal(self, index: int, outcome: str, inside: list[str], line: str) -> None:
        values = [_number(token) for token in inside] if inside else self.outcomes.get(outcome)
        if values is None or len(values) != self.num_players:
            raise ValueError(f"terminal node on line {index + 1} has no payoff for each player: {line!r}")
        self.outcomes.setdefault(outcome, values)
        self.terminal[index] = True
        self.payoff[index] = values


class EfgTree:
    """A Gambit ``.efg`` game tree (the subset Biblios' exports use: payoffs at terminal nodes
    only) as arrays over its histories, sorted by depth.

    ``parent[n]`` is the history before ``n`` (-1 at the root); ``mover[n]`` who moved into it
    (-1 for chance); ``chance[n]`` that chance outcome's probability (1 after a player's move);
    ``sequence[n]`` the sequence (information set and action) a player's move into it was (-1
    after chance); ``payoff[n]`` each player's payoff at a terminal history. Sequences are
    numbered information set by information set, player 1's first.
    """

    def __init__(self, text: str) -> None:
        lines = self._node_lines(text)
        header = text.split("{", 1)[1].split("}", 1)[0]
        self.num_players = len(_TOKEN.findall(header))
        read = _FileOrder(len(lines), self.num_players)
        for index, line in enumerate(lines):
            read.node(index, line)
        if read.stack:
            raise ValueError("the tree ends before every node's children are listed")
        self._number_sequences(read.infosets)
        # Each move's sequence: its parent's information set, at the child's position.
        moved = read.position >= 0
        sequence = np.full(len(lines), -1, np.int64)
        sequence[moved] = self.first_sequence[read.infoset_of_node[read.parent[moved]]] + read.position[moved]
        self._sort_by_depth(read, sequence)

    @staticmethod
    def _node_lines(text: str) -> list[str]:
        """The node lines after the header (``EFG 2 R "title" { players }`` and a quoted comment)."""
        lines = [line for line in text.splitlines() if line.strip()]
        if not lines or not lines[0].startswith("EFG 2 R"):
            raise ValueError("not an .efg game tree: it must start with 'EFG 2 R' (a tree with real numbers)")
        first = 1
        if first < len(lines) and lines[first].lstrip().startswith('"'):  # the comment, perhaps several lines
            while first < len(lines) and not (lines[first].rstrip().endswith('"') and lines[first].strip() != '"'):
                first += 1
            first += 1
        nodes = lines[first:]
        if not nodes:
            raise ValueError("not an .efg game tree: no 'p', 'c' or 't' node lines")
        for line in nodes:
            if line[:2] not in ("p ", "c ", "t "):
                raise ValueError(f"not a node of an .efg tree (expected a 'p', 'c' or 't' line): {line!r}")
        return nodes

    def _number_sequences(self, found: list[tuple[int, int, list[str]]]) -> None:
        """Order the information sets by player (then first appearance), number their sequences,
        and give each action OpenSpiel's ``efg_game`` id (player labels numbered as first met)."""
        action_ids: dict[str, int] = {}
        for _, _, labels in found:
            for label in labels:
                action_ids.setdefault(label, len(action_ids))
        order = sorted(range(len(found)), key=lambda infoset: (found[infoset][0], infoset))
        rank = np.empty(len(found), np.int64)
        rank[order] = np.arange(len(found))
        self._remap = rank  # first-appearance number -> player-major number
        self.information_sets = [
            InformationSet(
                found[infoset][0],
                f"{found[infoset][0]}-{found[infoset][0]}-{found[infoset][1]}-",
                tuple(action_ids[label] for label in found[infoset][2]),
            )
            for infoset in order
        ]
        sizes = np.array([len(infoset.actions) for infoset in self.information_sets], np.int64)
        #: Per information set (player-major numbering): its first sequence.
        self.infoset_start = np.concatenate([[0], np.cumsum(sizes)[:-1]])
        self.first_sequence = np.zeros(len(found), np.int64)  # by first-appearance number
        self.first_sequence[order] = self.infoset_start
        #: Per sequence: its information set (player-major numbering).
        self.infoset_of_sequence = np.repeat(np.arange(len(found)), sizes)
        self.actions_per_infoset = sizes
        self.num_sequences = int(sizes.sum())
        players = np.array([infoset.player for infoset in self.information_sets], np.int64)
        self.sequence_player = players[self.infoset_of_sequence]

    def _sort_by_depth(self, read: _FileOrder, sequence: NDArray[np.int64]) -> None:
        """Renumber the histories level by level (file order within a level): the children of a
        level's nodes are then contiguous on the next level, in their parents' order."""
        depth, parent, infoset_of_node = read.depth, read.parent, read.infoset_of_node
        order = np.argsort(depth, kind="stable")
        new = np.empty_like(order)
        new[order] = np.arange(len(order))
        self.parent = np.where(parent[order] >= 0, new[np.maximum(parent[order], 0)], -1)
        self.mover = read.mover[order]
        self.chance = read.chance[order]
        self.sequence = sequence[order]
        self.payoff = read.payoff[order]
        self.terminal = read.terminal[order]
        self.num_histories = len(order)
        levels = np.bincount(depth)
        self.level_start = np.concatenate([[0], np.cumsum(levels)])
        #: Per level below the root: (start, end, child-group starts relative to start, the parent of each group).
        self.groups: list[tuple[int, int, NDArray[np.int64], NDArray[np.int64]]] = []
        for level in range(1, len(levels)):
            start, end = int(self.level_start[level]), int(self.level_start[level + 1])
            parents = self.parent[start:end]
            starts = np.concatenate([[0], np.flatnonzero(np.diff(parents)) + 1])
            self.groups.append((start, end, starts, parents[starts]))
        # One history of each information set: a player's own reach is the same at all of them.
        representative = np.full(len(self.information_sets), -1, np.int64)
        player_nodes = np.flatnonzero(infoset_of_node[order] >= 0)
        infosets = self._remap[infoset_of_node[order][player_nodes]]
        representative[infosets[::-1]] = player_nodes[::-1]
        self.representative = representative
        self._check_perfect_recall(player_nodes, infosets)
        #: Per player: the histories a move of that player led to (the edges whose regrets they own).
        self.moves = [np.flatnonzero(self.mover == player) for player in range(self.num_players)]
        #: Per player and sequence: how many of the player's moves come before its information set.
        self.own_moves_before = []
        for player in range(self.num_players):
            count = np.zeros(self.num_histories, np.int64)
            for start, end, _, _ in self.groups:
                count[start:end] = count[self.parent[start:end]] + (self.mover[start:end] == player)
            self.own_moves_before.append(count[self.representative][self.infoset_of_sequence])
        self.sequence_range = [
            (int(np.searchsorted(self.sequence_player, player)), int(np.searchsorted(self.sequence_player, player + 1)))
            for player in range(self.num_players)
        ]

    def _check_perfect_recall(self, player_nodes: NDArray[np.int64], infosets: NDArray[np.int64]) -> None:
        """Refuse a tree where two histories of one information set differ in the mover's last
        move before it (by induction, in all the mover's past): the representative history's
        reach would then be wrong for the others."""
        last_own = np.full((self.num_players, self.num_histories), -1, np.int64)
        for start, end, _, _ in self.groups:
            parents, movers = self.parent[start:end], self.mover[start:end]
            for player in range(self.num_players):
                last_own[player, start:end] = np.where(
                    movers == player, self.sequence[start:end], last_own[player, parents]
                )
        players = np.array([infoset.player for infoset in self.information_sets], np.int64)
        seen = last_own[players[infosets], player_nodes]
        expected = last_own[players[infosets], self.representative[infosets]]
        if (seen != expected).any():
            infoset = self.information_sets[int(infosets[np.argmax(seen != expected)])]
            raise ValueError(
                f"information set {infoset.key!r} of player {infoset.player + 1} joins histories with different "
                "past moves of that player: the tree does not have perfect recall, which these solvers need"
            )

    def values(self, edge_probability: NDArray[np.float64], player: int) -> NDArray[np.float64]:
        """Every history's expected payoff for ``player`` when each edge is taken with
        ``edge_probability``: terminal payoffs summed up the levels."""
        value = np.where(self.terminal, self.payoff[:, player], 0.0)
        for start, end, starts, parents in reversed(self.groups):
            value[parents] = np.add.reduceat(edge_probability[start:end] * value[start:end], starts)
        return value

    def reach(self, edge_probability: NDArray[np.float64]) -> NDArray[np.float64]:
        """Every history's probability of being reached when each edge is taken with ``edge_probability``."""
        reach = np.ones(self.num_histories)
        for start, end, _, _ in self.groups:
            reach[start:end] = reach[self.parent[start:end]] * edge_probability[start:end]
        return reach

    def edge_probability(self, policy: NDArray[np.float64]) -> NDArray[np.float64]:
        """Each edge's probability: chance's, or the policy's probability of the sequence played."""
        probability = self.chance.copy()
        moved = self.sequence >= 0
        probability[moved] = policy[self.sequence[moved]]
        return probability

    def normalise(self, weights: NDArray[np.float64]) -> NDArray[np.float64]:
        """Per information set, ``weights`` as probabilities (uniform where they sum to 0)."""
        totals = np.add.reduceat(weights, self.infoset_start)
        total = totals[self.infoset_of_sequence]
        uniform = 1.0 / self.actions_per_infoset[self.infoset_of_sequence]
        return np.where(total > 0, weights / np.where(total > 0, total, 1.0), uniform)

    def expected_payoffs(self, policy: NDArray[np.float64]) -> NDArray[np.float64]:
        """Each player's expected payoff when every seat plays ``policy`` (one probability per sequence)."""
        reach = self.reach(self.edge_probability(policy))
        return (reach[self.terminal, None] * self.payoff[self.terminal]).sum(axis=0)

    def best_response_value(self, policy: NDArray[np.float64], player: int) -> float:
        """What ``player`` expects from a best response to the other seats' ``policy``.

        A best response at an information set depends on the choices below it, so the
        information sets are settled deepest first, by how many moves of ``player`` precede them
        (perfect recall makes that one number per set): each round values the tree with the
        choices settled so far and, at that round's sets, picks the action whose children are
        worth most, weighted by the others' (and chance's) probability of each history.
        """
        probability = self.edge_probability(policy)
        own = self.mover == player
        others_reach = self.reach(np.where(own, 1.0, probability))
        moves = self.moves[player]
        parents = self.parent[moves]
        low, high = self.sequence_range[player]
        rounds = self.own_moves_before[player][low:high]
        response = policy.copy()
        for depth in range(int(rounds.max(initial=-1)), -1, -1):
            value = self.values(np.where(own, response[np.maximum(self.sequence, 0)], probability), player)
            worth = np.bincount(self.sequence[moves] - low, others_reach[parents] * value[moves], minlength=high - low)
            settled = rounds == depth
            candidates = np.full(self.num_sequences, -np.inf)
            candidates[low:high] = np.where(settled, worth, -np.inf)
            response[low:high] = np.where(settled, self._one_hot_argmax(candidates)[low:high], response[low:high])
        return float(self.values(np.where(own, response[np.maximum(self.sequence, 0)], probability), player)[0])

    def _one_hot_argmax(self, worth: NDArray[np.float64]) -> NDArray[np.float64]:
        """Per information set, 1 at its first best sequence in ``worth`` and 0 elsewhere."""
        best = np.maximum.reduceat(worth, self.infoset_start)[self.infoset_of_sequence]
        first = np.zeros(len(worth), bool)
        is_best = worth == best
        candidates = np.flatnonzero(is_best)
        first[candidates[np.unique(self.infoset_of_sequence[candidates], return_index=True)[1]]] = True
        return first.astype(np.float64)

    def nash_conv(self, policy: NDArray[np.float64]) -> float:
        """The sum over the seats of what a best response gains against ``policy``."""
        on_policy = self.expected_payoffs(policy)
        return sum(self.best_response_value(policy, player) - on_policy[player] for player in range(self.num_players))

    def exploitability(self, policy: NDArray[np.float64]) -> float:
        """OpenSpiel's exploitability: :meth:`nash_conv` over the number of players (0 at an equilibrium)."""
        return self.nash_conv(policy) / self.num_players

    def tabular(self, policy: NDArray[np.float64]) -> dict[str, list[tuple[int, float]]]:
        """``policy`` keyed as OpenSpiel's ``efg_game`` names information states and actions:
        ``pyspiel.TabularPolicy(tree.tabular(policy))`` is a policy of the loaded game."""
        table = {}
        for infoset, first in zip(self.information_sets, self.infoset_start, strict=True):
            probabilities = policy[first : first + len(infoset.actions)]
            table[infoset.key] = list(zip(infoset.actions, map(float, probabilities), strict=True))
        return table


class TreeCFR:
    """CFR (``"cfr"``), CFR+ (``"cfr+"``) or DCFR (``"dcfr"``) over an :class:`EfgTree`.

    ``iterate()`` runs one iteration (a pass per player, alternating); ``average_policy()`` is the
    solution so far, one probability per sequence (``tree.tabular`` names it for OpenSpiel).
    """

    def __init__(self, tree: EfgTree, variant: str = "cfr+") -> None:
        if variant not in VARIANTS:
            raise ValueError(f"unknown CFR variant {variant!r}; expected one of {', '.join(VARIANTS)}")
        self.tree = tree
        self.variant = variant
        self.iterations = 0
        self.regrets = np.zeros(tree.num_sequences)
        self.policy_sums = np.zeros(tree.num_sequences)
        self.policy = tree.normalise(np.zeros(tree.num_sequences))

    def iterate(self) -> None:
        tree = self.tree
        self.iterations += 1
        t = float(self.iterations)
        weight = {"cfr": 1.0, "cfr+": t, "dcfr": t**DCFR_GAMMA}[self.variant]
        for player in range(tree.num_players):
            probability = tree.edge_probability(self.policy)
            own = tree.mover == player
            own_reach = tree.reach(np.where(own, probability, 1.0))
            others_reach = tree.reach(np.where(own, 1.0, probability))
            value = tree.values(probability, player)
            moves = tree.moves[player]
            parents = tree.parent[moves]
            gains = others_reach[parents] * (value[moves] - value[parents])
            low, high = tree.sequence_range[player]
            regrets = self.regrets[low:high]
            regrets += np.bincount(tree.sequence[moves] - low, gains, minlength=high - low)
            reach_of_infoset = own_reach[tree.representative[tree.infoset_of_sequence[low:high]]]
            self.policy_sums[low:high] += weight * reach_of_infoset * self.policy[low:high]
            if self.variant == "cfr+":
                np.maximum(regrets, 0.0, out=regrets)
            elif self.variant == "dcfr":
                positive = t**DCFR_ALPHA / (t**DCFR_ALPHA + 1)
                negative = t**DCFR_BETA / (t**DCFR_BETA + 1)
                regrets *= np.where(regrets >= 0, positive, negative)
            self.policy = tree.normalise(np.maximum(self.regrets, 0.0))

    def average_policy(self) -> NDArray[np.float64]:
        return self.tree.normalise(self.policy_sums)
