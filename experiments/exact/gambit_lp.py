"""The exact equilibrium of an exported tree by Gambit's sequence-form linear program.

CFR-family solvers converge to an equilibrium; a two-player zero-sum game also has one that a
linear program over the players' sequences finds outright (Koller, Megiddo and von Stengel).
:func:`lp_equilibrium` runs ``pygambit``'s LP on the ``.efg`` text of
:func:`biblios_env.openspiel.efg_text`, turns its profile into an OpenSpiel tabular policy and
measures it with OpenSpiel's best responses: two independent codes then agree (or not) on the
game value and on the equilibrium, which is what ``experiments.openspiel_cfr`` reports beside its
CFR runs.

Why the profile is rebuilt rather than read off: Gambit's LP can leave every action of an
information set at probability 0 (one of ``mini``'s 694), and the payoffs Gambit computes for
such a profile are not the game's (on ``mini`` it reports +0.875 for a game worth 5/6). Those
sets are filled with the uniform action, and OpenSpiel's exploitability of the filled profile
is the check: it is 0, up to rounding, only if the result is an exact equilibrium.
"""

from __future__ import annotations

import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

#: Gambit's LP builds a dense tableau over the two players' sequences: ``mini`` (1,673 histories,
#: 902 sequences) solves in about 20 s; ``small`` (880,514 histories, 304,773 sequences) would
#: need a matrix of some 10^10 entries. The LP runs on trees up to this many histories.
LP_MAX_HISTORIES = 20_000


@dataclass(frozen=True, slots=True)
class LpSolution:
    """What the LP found, measured by OpenSpiel on the loaded ``.efg`` game."""

    #: The first player's expected return under the LP's equilibrium.
    value: float
    #: OpenSpiel's exploitability of that profile (0 at an exact equilibrium, up to rounding).
    exploitability: float
    #: Seconds the LP took (Gambit reading the file included).
    seconds: float
    #: Information sets at which the LP gave every action probability 0 (filled uniformly).
    empty_information_sets: int
    #: Information sets in the profile (both players).
    information_sets: int


def gambit_available() -> bool:
    """Whether ``pygambit`` imports (the ``gambit`` extra)."""
    try:
        import pygambit  # noqa: F401
    except ImportError:
        return False
    return True


def lp_equilibrium(text: str, game: Any) -> tuple[Any, LpSolution]:
    """The sequence-form LP's equilibrium of the ``.efg`` ``text`` (floating point) as a
    ``pyspiel.TabularPolicy`` of ``game`` (``pyspiel.load_efg_game(text)``), and its measures."""
    import pygambit
    import pyspiel

    start = time.perf_counter()
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "game.efg"
        path.write_text(text)
        gambit_game = pygambit.read_efg(str(path))
    profile = pygambit.nash.lp_solve(gambit_game, rational=False).equilibrium
    seconds = time.perf_counter() - start
    table: dict[str, list[tuple[int, float]]] = {}
    empty = 0
    for player_behaviour in profile:
        for history, mixed_action in player_behaviour:
            state = _replay(game, [step.action for step in history])
            player = state.current_player()
            weights = [
                (action, max(0.0, float(mixed_action[state.action_to_string(player, action)])))
                for action in state.legal_actions()
            ]
            total = sum(weight for _, weight in weights)
            if total <= 0:
                empty += 1
                weights, total = [(action, 1.0) for action, _ in weights], float(len(weights))
            table[state.information_state_string()] = [(action, weight / total) for action, weight in weights]
    policy = pyspiel.TabularPolicy(table)
    value = float(pyspiel.expected_returns(game.new_initial_state(), policy, -1, True)[0])
    return policy, LpSolution(value, pyspiel.exploitability(game, policy), seconds, empty, len(table))


def _replay(game: Any, labels: list[str]) -> Any:
    """The state of ``game`` reached by the actions (chance outcomes included) with ``labels``:
    Gambit names an information set by a history through one of its members."""
    state = game.new_initial_state()
    for label in labels:
        player = state.current_player()
        matching = [action for action in state.legal_actions() if state.action_to_string(player, action) == label]
        if len(matching) != 1:
            raise ValueError(f"Gambit's history step {label!r} names {len(matching)} actions of the loaded game")
        state.apply_action(matching[0])
    return state
