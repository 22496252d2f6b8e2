"""CFR, CFR+ and DCFR over an exported tree as numpy arrays (``experiments.exact.numpy_cfr``).

The solvers must be OpenSpiel's, update for update: on the ``mini`` preset's tree their average
policies' exploitabilities after 1, 2, 4 and 8 iterations are OpenSpiel's (C++ CFR and CFR+,
Python DCFR) to rounding, and the numpy best response measures any policy as
``pyspiel.exploitability`` does. A hand-written tree checks the reader and the answers without
OpenSpiel.
"""

from __future__ import annotations

import re

import numpy as np
import pytest
from optional_extras import require

from experiments.exact.numpy_cfr import VARIANTS, EfgTree, TreeCFR

#: Matching pennies with unequal stakes (both heads pays the first player 2, both tails 1, a
#: mismatch costs 1), after a coin the first player sees and that changes nothing; the second
#: player sees neither the coin nor the first player's choice. Each plays heads with probability
#: 2/5 at the equilibrium, and the value is 1/5.
PENNIES = """EFG 2 R "pennies after a coin" { "Player 1" "Player 2" }
""
c "" 1 "" { "heads" 1/2 "tails" 1/2 } 0
p "" 1 1 "" { "H" "T" } 0
p "" 2 1 "" { "H" "T" } 0
t "" 1 "" { 2.0 -2.0 }
t "" 2 "" { -1.0 1.0 }
p "" 2 1 "" { "H" "T" } 0
t "" 2 "" { -1.0 1.0 }
t "" 3 "" { 1.0 -1.0 }
p "" 1 2 "" { "H" "T" } 0
p "" 2 1 "" { "H" "T" } 0
t "" 1 "" { 2 -2 }
t "" 2 "" { -1 1 }
p "" 2 1 "" { "H" "T" } 0
t "" 2 "" { -1 1 }
t "" 3 "" { 1 -1 }
"""


#: The first player moves, then moves again without remembering the first move: both of its
#: second-move histories are one information set.
FORGETFUL = """EFG 2 R "forgetful" { "Player 1" "Player 2" }
""
p "" 1 1 "" { "L" "R" } 0
p "" 1 2 "" { "l" "r" } 0
t "" 1 "" { 1 -1 }
t "" 2 "" { -1 1 }
p "" 1 2 "" { "l" "r" } 0
t "" 2 "" { -1 1 }
t "" 1 "" { 1 -1 }
"""


def first_action_everywhere(tree: EfgTree) -> np.ndarray:
    policy = np.zeros(tree.num_sequences)
    policy[tree.infoset_start] = 1.0
    return policy


def test_the_reader_builds_the_tree_and_its_sequences() -> None:
    tree = EfgTree(PENNIES)
    assert (tree.num_players, tree.num_histories, int(tree.terminal.sum())) == (2, 15, 8)
    assert [(infoset.player, infoset.key, infoset.actions) for infoset in tree.information_sets] == [
        (0, "0-0-1-", (0, 1)),
        (0, "0-0-2-", (0, 1)),
        (1, "1-1-1-", (0, 1)),
    ]
    assert tree.num_sequences == 6 and tree.sequence_range == [(0, 4), (4, 6)]
    assert sorted(tree.chance[(tree.mover == -1) & (tree.parent >= 0)]) == [0.5, 0.5]


def test_values_and_exploitability_of_simple_policies() -> None:
    tree = EfgTree(PENNIES)
    uniform = tree.normalise(np.zeros(tree.num_sequences))
    assert np.allclose(uniform, 0.5)
    assert tree.expected_payoffs(uniform) == pytest.approx([0.25, -0.25])
    # Against a fair coin each seat's best reply gains 0.25: heads for the first, tails for the second.
    assert tree.nash_conv(uniform) == pytest.approx(0.5) and tree.exploitability(uniform) == pytest.approx(0.25)
    # Both always play heads: the second player gains 3 by switching to tails.
    heads = first_action_everywhere(tree)
    assert tree.expected_payoffs(heads) == pytest.approx([2.0, -2.0])
    assert tree.exploitability(heads) == pytest.approx(1.5)
    equilibrium = np.tile([0.4, 0.6], 3)
    assert tree.exploitability(equilibrium) == pytest.approx(0.0, abs=1e-12)
    assert tree.expected_payoffs(equilibrium)[0] == pytest.approx(0.2)


@pytest.mark.parametrize("variant", VARIANTS)
def test_each_variant_solves_the_pennies(variant: str) -> None:
    solver = TreeCFR(EfgTree(PENNIES), variant)
    exploitabilities = []
    for _ in range(200):
        solver.iterate()
        exploitabilities.append(solver.tree.exploitability(solver.average_policy()))
    assert exploitabilities[-1] < 0.01 < exploitabilities[0], exploitabilities[::20]
    assert solver.tree.expected_payoffs(solver.average_policy())[0] == pytest.approx(0.2, abs=0.02)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ('EFG 2 R "empty" { "A" "B" }\n""\n', "no 'p', 'c' or 't' node lines"),
        (PENNIES.replace('p "" 2 1 "" { "H" "T" } 0\nt "" 2', 'p "" 2 1 "" { "T" "H" } 0\nt "" 2'), "lists other"),
        (PENNIES.replace('p "" 1 2 "" { "H" "T" } 0', 'p "" 1 2 "" { "H" "T" } 5 "" { 1 -1 }'), "non-terminal"),
        ("\n".join(PENNIES.splitlines()[:-1]), "ends before"),
        (PENNIES.replace('t "" 2 "" { -1 1 }\nt "" 3', 't "" 9 "" { }\nt "" 3'), "no payoff for each player"),
        (PENNIES.replace('c "" 1', 'x "" 1'), "not a node"),
        (FORGETFUL, "does not have perfect recall"),
    ],
)
def test_a_tree_it_cannot_read_is_a_clear_error(text: str, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        EfgTree(text)


def test_an_unknown_variant_is_refused() -> None:
    with pytest.raises(ValueError, match=re.escape("unknown CFR variant 'cfr++'; expected one of cfr, cfr+, dcfr")):
        TreeCFR(EfgTree(PENNIES), "cfr++")


@pytest.fixture(scope="module")
def mini() -> tuple[EfgTree, object]:
    """The mini preset's tree as arrays, and as OpenSpiel's C++ game."""
    require("pyspiel")
    from experiments.openspiel_cfr import load_tree

    text, game = load_tree("mini")
    return EfgTree(text), game


class TestAgainstOpenSpiel:
    def test_the_tree_has_the_games_information_states(self, mini: tuple[EfgTree, object]) -> None:
        import pyspiel

        tree, game = mini
        keys = {infoset.key for infoset in tree.information_sets}
        table = tree.tabular(tree.normalise(np.zeros(tree.num_sequences)))
        assert set(table) == keys and len(keys) == 694
        assert pyspiel.exploitability(game, pyspiel.TabularPolicy(table)) == pytest.approx(
            pyspiel.exploitability(game, pyspiel.UniformRandomPolicy(game)), abs=1e-12
        )

    def test_the_best_response_is_openspiels(self, mini: tuple[EfgTree, object]) -> None:
        import pyspiel

        tree, game = mini
        rng = np.random.default_rng(7)
        for _ in range(5):
            policy = tree.normalise(rng.random(tree.num_sequences) ** 4)
            expected = pyspiel.exploitability(game, pyspiel.TabularPolicy(tree.tabular(policy)))
            assert tree.exploitability(policy) == pytest.approx(expected, abs=1e-12)

    @pytest.mark.parametrize("variant", VARIANTS)
    def test_each_variant_is_openspiels_update_for_update(self, mini: tuple[EfgTree, object], variant: str) -> None:
        import pyspiel

        tree, game = mini
        if variant == "dcfr":
            from open_spiel.python.algorithms.discounted_cfr import DCFRSolver
            from open_spiel.python.policy import python_policy_to_pyspiel_policy

            reference = DCFRSolver(game)

            def average() -> object:
                return python_policy_to_pyspiel_policy(reference.average_policy())

        else:
            reference = pyspiel.CFRSolver(game) if variant == "cfr" else pyspiel.CFRPlusSolver(game)
            average = reference.average_policy
        ours = TreeCFR(tree, variant)
        for iteration in range(1, 9):
            ours.iterate()
            reference.evaluate_and_update_policy()
            if iteration in (1, 2, 4, 8):
                expected = pyspiel.exploitability(game, average())
                assert tree.exploitability(ours.average_policy()) == pytest.approx(expected, abs=1e-12), iteration
