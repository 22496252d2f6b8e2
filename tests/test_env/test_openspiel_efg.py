"""The whole tree of a small preset in Gambit's ``.efg`` format (``biblios_env.openspiel.efg_text``)
is the same game as ``python_biblios``, and the exact-solution command runs OpenSpiel's solvers on it.

The agreement tests walk both games side by side: OpenSpiel's C++ ``efg_game`` loaded from the
export, and the Python game. Along random paths they must have the same player to act, the same
legal actions (by label), the same chance outcomes and probabilities, the same returns, and
information states that map one to one.
"""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import pytest
from optional_extras import require

pyspiel = require("pyspiel")
require("biblios_env.openspiel")  # registers python_biblios

from open_spiel.python import policy as policy_lib  # noqa: E402
from open_spiel.python.algorithms import exploitability as python_exploitability  # noqa: E402

from biblios_env.actions import describe  # noqa: E402
from biblios_env.cards import card_name  # noqa: E402
from biblios_env.openspiel import efg_text  # noqa: E402
from experiments.exact import gambit_lp  # noqa: E402
from experiments.exact.numpy_cfr import EfgTree  # noqa: E402
from experiments.openspiel_cfr import (  # noqa: E402
    PRESET_PARAMETERS,
    SOLVER_NAMES,
    checkpoints,
    efg_tree_size,
    main,
    report_lp,
    solve,
)

MINI = PRESET_PARAMETERS["mini"]
SMALL = PRESET_PARAMETERS["small"]


@pytest.fixture(scope="module")
def mini() -> tuple[str, Any]:
    text = efg_text(MINI)
    return text, pyspiel.load_efg_game(text)


@pytest.fixture(scope="module")
def small() -> tuple[str, Any]:
    text = efg_text(SMALL)  # about 40 s: the whole tree of about 880,000 histories
    return text, pyspiel.load_efg_game(text)


def python_tree(parameters: dict[str, Any]) -> tuple[int, int, list[set[str]]]:
    """Walk ``python_biblios`` itself: histories, terminal histories, each player's information states."""
    game = pyspiel.load_game("python_biblios", parameters)
    histories = terminal = 0
    infosets: list[set[str]] = [set() for _ in range(game.num_players())]
    pending = [game.new_initial_state()]
    while pending:
        state = pending.pop()
        histories += 1
        if state.is_terminal():
            terminal += 1
            continue
        if state.is_chance_node():
            actions = [action for action, _ in state.chance_outcomes()]
        else:
            infosets[state.current_player()].add(state.information_state_string())
            actions = state.legal_actions()
        pending.extend(state.child(action) for action in actions)
    return histories, terminal, infosets


def walk_side_by_side(parameters: dict[str, Any], efg_game: Any, paths: int, seed: int) -> None:
    """Play ``paths`` random games in both games at once and compare them at every node."""
    python_game = pyspiel.load_game("python_biblios", parameters)
    rng = random.Random(seed)
    infoset_of: dict[str, str] = {}  # python information state -> efg information state
    python_of: dict[str, str] = {}
    for _ in range(paths):
        ours, theirs = python_game.new_initial_state(), efg_game.new_initial_state()
        while not ours.is_terminal():
            assert not theirs.is_terminal() and ours.current_player() == theirs.current_player()
            if ours.is_chance_node():
                outcomes = {f"{card_name(card)} [#{card}]": (card, p) for card, p in ours.chance_outcomes()}
                labels = {
                    theirs.action_to_string(pyspiel.PlayerId.CHANCE, a): (a, p) for a, p in theirs.chance_outcomes()
                }
                assert {label: p for label, (_, p) in labels.items()} == pytest.approx(
                    {label: p for label, (_, p) in outcomes.items()}
                )
                label = rng.choice(sorted(outcomes))
                ours.apply_action(outcomes[label][0])
                theirs.apply_action(labels[label][0])
                continue
            player = ours.current_player()
            legal = {describe(action): action for action in ours.legal_actions()}
            efg_legal = {theirs.action_to_string(player, a): a for a in theirs.legal_actions()}
            assert sorted(legal) == sorted(efg_legal)
            ours_infoset, theirs_infoset = ours.information_state_string(), theirs.information_state_string()
            assert infoset_of.setdefault(ours_infoset, theirs_infoset) == theirs_infoset
            assert python_of.setdefault(theirs_infoset, ours_infoset) == ours_infoset
            label = rng.choice(sorted(legal))
            ours.apply_action(legal[label])
            theirs.apply_action(efg_legal[label])
        assert theirs.is_terminal() and ours.returns() == theirs.returns()


def test_the_mini_export_has_the_python_games_tree(mini: tuple[str, Any]) -> None:
    """Every history and each player's information states, counted in both games."""
    text, efg_game = mini
    histories, terminal, infosets = python_tree(MINI)
    size = efg_tree_size(text)
    assert (size.histories, size.terminal) == (histories, terminal) == (1_673, 360)
    assert size.information_states == tuple(len(states) for states in infosets)
    assert efg_game.num_players() == 2 and efg_game.get_type().utility == pyspiel.GameType.Utility.ZERO_SUM
    walk_side_by_side(MINI, efg_game, paths=100, seed=1)


def test_the_small_export_is_the_python_game_along_random_paths(small: tuple[str, Any]) -> None:
    text, efg_game = small
    size = efg_tree_size(text)
    assert 10**5 < size.histories < 10**6 and all(10**4 < count < 10**6 for count in size.information_states)
    walk_side_by_side(SMALL, efg_game, paths=300, seed=2)


def test_a_wrong_export_is_caught(mini: tuple[str, Any]) -> None:
    """The side-by-side walk fails on a tree whose payoffs or information sets differ."""
    text, _ = mini
    swapped = (
        text.replace("{ 1.0 -1.0 }", "{ X }").replace("{ -1.0 1.0 }", "{ 1.0 -1.0 }").replace("{ X }", "{ -1.0 1.0 }")
    )
    with pytest.raises(AssertionError):
        walk_side_by_side(MINI, pyspiel.load_efg_game(swapped), paths=50, seed=1)
    lines = text.splitlines()
    nodes: dict[str, list[int]] = {}  # player 1's information set number -> its lines
    for index, line in enumerate(lines):
        if line.startswith('p "" 1 '):
            nodes.setdefault(line.split()[3], []).append(index)
    actions = {number: lines[where[0]].split("{")[1] for number, where in nodes.items()}
    shared, moved = next(  # a node moved into another information set with the same actions
        (a, b) for a in nodes for b in nodes if a != b and len(nodes[b]) > 1 and actions[a] == actions[b]
    )
    index = nodes[moved][0]
    lines[index] = lines[index].replace(f'p "" 1 {moved} ', f'p "" 1 {shared} ', 1)
    with pytest.raises(AssertionError):
        walk_side_by_side(MINI, pyspiel.load_efg_game("\n".join(lines)), paths=200, seed=1)


def test_the_uniform_policys_exploitability_is_the_same_in_both_games(mini: tuple[str, Any]) -> None:
    """C++ on the export, OpenSpiel's Python best response on ``python_biblios``."""
    _, efg_game = mini
    python_game = pyspiel.load_game("python_biblios", MINI)
    on_efg = pyspiel.exploitability(efg_game, pyspiel.UniformRandomPolicy(efg_game))
    on_python = python_exploitability.exploitability(python_game, policy_lib.UniformRandomPolicy(python_game))
    assert on_efg == pytest.approx(on_python, abs=1e-9) and on_efg > 0.1


def test_a_tree_too_large_to_export_is_refused() -> None:
    with pytest.raises(ValueError, match="more than 1,000 histories: too large to export"):
        efg_text({"players": 2, "preset": "small"}, max_histories=1_000)


def test_cfr_plus_on_the_small_tree_still_has_work_after_30_iterations(small: tuple[str, Any]) -> None:
    """The preset was chosen so that CFR+ is still exploitable by more than 0.01 after 30
    iterations; the numpy CFR+ on the same tree's arrays takes the same steps."""
    text, efg_game = small
    rows = list(solve("cfr+", efg_game, 30))
    assert [row.iterations for row in rows] == checkpoints(30)
    assert rows[-1].exploitability > 0.01 and rows[-1].exploitability < rows[0].exploitability / 10
    tree = EfgTree(text)
    assert (tree.num_histories, len(tree.information_sets)) == (880_514, 69_484 + 75_642)
    arrays = list(solve("numpy-cfr+", efg_game, 30, tree=tree))
    assert [row.exploitability for row in arrays] == pytest.approx([row.exploitability for row in rows], abs=1e-9)
    # The values agree less closely: where an information set's actions are worth the same, CFR+'s
    # regrets are 0 up to rounding, and the two summation orders round differently (regret
    # matching then puts all weight on an action with a regret of 1e-17, or spreads it evenly).
    assert arrays[-1].value == pytest.approx(rows[-1].value, abs=1e-4)


@pytest.mark.parametrize("solver", SOLVER_NAMES)
def test_every_solver_reduces_exploitability_on_mini(mini: tuple[str, Any], solver: str) -> None:
    rows = list(solve(solver, mini[1], 8, tree=EfgTree(mini[0])))
    assert 0 <= rows[-1].exploitability < rows[0].exploitability, [row.exploitability for row in rows]


def test_the_cfr_command_writes_its_table_plot_and_tree(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """(The sequence-form LP, 20 s, is tested by itself below; here it is off.)"""
    monkeypatch.setattr(gambit_lp, "LP_MAX_HISTORIES", 1_000)
    out, efg = tmp_path / "cfr", tmp_path / "mini.efg"
    solvers = ["--solver", "cfr+", "--solver", "mccfr", "--solver", "numpy-dcfr"]
    assert main([*solvers, "--iterations", "2", "--out", str(out), "--efg", str(efg)]) == 0
    lines = (out / "cfr.csv").read_text().splitlines()
    assert lines[0] == "solver,iterations,exploitability,seconds" and len(lines) == 7
    assert {line.split(",")[0] for line in lines[1:]} == {"cfr+", "mccfr", "numpy-dcfr"}
    assert (out / "cfr.png").stat().st_size > 1000
    assert pyspiel.load_efg_game(efg.read_text()).num_players() == 2
    printed = capsys.readouterr().out
    assert "1,673 histories" in printed and "game value for player 1" in printed
    assert "no sequence-form LP: 1,673 histories (Gambit's dense LP runs up to 1,000)" in printed


def test_the_sequence_form_lp_finds_the_equilibrium_cfr_plus_converges_to(
    mini: tuple[str, Any], capsys: pytest.CaptureFixture[str]
) -> None:
    """Two independent solvers on the exported tree: Gambit's LP profile is an exact equilibrium
    by OpenSpiel's best responses, and its value is the one CFR+ converges to."""
    require("pygambit")
    text, game = mini
    cfr_plus = list(solve("cfr+", game, 256))[-1]
    lp = report_lp(text, game, efg_tree_size(text), cfr_plus)
    assert lp is not None and lp.information_sets == 694
    assert abs(lp.exploitability) < 1e-9, lp
    assert abs(lp.value - cfr_plus.value) <= 2 * cfr_plus.exploitability, (lp, cfr_plus)
    assert "agrees with cfr+'s value" in capsys.readouterr().out


def test_the_efg_benchmark_measures_the_mini_preset(tmp_path: Path) -> None:
    from experiments.benchmarks import efg as benchmark

    out = tmp_path / "efg.json"
    assert benchmark.main(["--preset", "mini", "--iterations", "2", "--out", str(out)]) == 0
    (row,) = json.loads(out.read_text())["presets"]
    assert row["histories"] == 1_673 and row["speedup"] > 1
    assert row["numpy_cfr_plus_seconds_per_iteration"] > 0 and row["numpy_speedup_over_cpp_cfr_plus"] > 0


def test_the_exploitability_study_builds_each_agents_policy(mini: tuple[str, Any], tmp_path: Path) -> None:
    """``random`` as a table is the uniform policy exactly; a deterministic agent's table picks at
    every information set the action the agent picks there."""
    from biblios_env.agent_interface import AgentObservation
    from biblios_env.engine import player_view
    from experiments.common.match import build_agent, parse_agent_spec
    from experiments.studies import exploitability as study

    game, tables = study.agent_policies("mini", ["random", "value"])
    assert len(tables["value"]) == sum(efg_tree_size(mini[0]).information_states)
    uniform = pyspiel.exploitability(game, pyspiel.UniformRandomPolicy(game))
    results = {row.spec: row for row in study.measure(game, tables, pyspiel.UniformRandomPolicy(game))}
    assert results["random"].exploitability == pytest.approx(uniform, abs=1e-12)
    value = build_agent(parse_agent_spec("value"))
    python_game = pyspiel.load_game("python_biblios", MINI)
    rng = random.Random(3)
    for _ in range(20):  # along random paths, the table's choice is the agent's
        ours, theirs = python_game.new_initial_state(), game.new_initial_state()
        while not ours.is_terminal():
            if ours.is_chance_node():
                card = rng.choice([card for card, _ in ours.chance_outcomes()])
                ours.apply_action(card)
                theirs.apply_action(
                    next(a for a, _ in theirs.chance_outcomes() if f"[#{card}]" in theirs.action_to_string(-1, a))
                )
                continue
            seat = ours.current_player()
            value.start_game(seat, 2, seed=0)
            chosen = value.act(AgentObservation(player_view(ours.game_.state, seat), ours.legal_actions()))
            (picked,) = [a for a, p in tables["value"][theirs.information_state_string()] if p == 1.0]
            assert theirs.action_to_string(seat, picked) == describe(chosen)
            action = rng.choice(ours.legal_actions())
            ours.apply_action(action)
            theirs.apply_action(
                next(a for a in theirs.legal_actions() if theirs.action_to_string(seat, a) == describe(action))
            )
    out = tmp_path / "table.csv"
    assert (
        study.main(["--preset", "mini", "--agents", "random", "hoarder", "--cfr-iterations", "20", "--out", str(out)])
        == 0
    )
    rows = out.read_text().splitlines()
    assert rows[0].startswith("agent,exploitability") and [row.split(",")[0] for row in rows[1:]] == [
        "random",
        "hoarder",
    ]


def test_dcfr_is_refused_on_a_tree_too_large_for_it(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Asked for, it is a clear error; in the default list it is skipped with a note."""
    from experiments import openspiel_cfr

    monkeypatch.setattr(openspiel_cfr, "DCFR_MAX_HISTORIES", 1_000)
    monkeypatch.setattr(gambit_lp, "LP_MAX_HISTORIES", 1_000)
    assert main(["--solver", "dcfr", "--iterations", "1"]) == 2
    assert "dcfr (OpenSpiel's Python solver) needs more memory" in capsys.readouterr().err
    assert main(["--iterations", "1"]) == 0
    printed = capsys.readouterr().out
    assert "skipping dcfr" in printed and "  dcfr " not in printed and "   cfr " in printed
