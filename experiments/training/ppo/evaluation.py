"""Evaluations during PPO training (see :mod:`experiments.training.ppo`): the current policy
against the fixed ``--eval-opponents`` (:func:`experiments.training.evaluation.evaluate`), the rows
of ``eval.csv`` and ``best_policy.npz``."""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, Final

from experiments.common.match import AgentSpec
from experiments.training import evaluation
from experiments.training.evaluation import EVAL_COLUMNS, EVAL_SEED
from experiments.training.ppo.config import PPOConfig
from experiments.training.runs import append_rows, read_rows

#: ``eval.csv``: the training step and the seconds trained, then the shared evaluation columns.
PPO_EVAL_COLUMNS: Final = ("timesteps", "seconds", *EVAL_COLUMNS)


def evaluate(policy: Path, players: int, opponent: str, deals: int, seed: int = EVAL_SEED) -> dict[str, Any]:
    """The policy (deterministic) against ``players - 1`` copies of ``opponent`` with duplicate deals."""
    learner = AgentSpec("ppo", (("path", str(policy)),), label="ppo")
    return evaluation.evaluate(learner, players, opponent, deals, seed)


class Evaluations:
    """The evaluations of one run: each evaluation's rows (appended to ``eval.csv``), its console
    line, and ``best_policy.npz``, the evaluated policy with the best win rate against the first
    ``--eval-opponents`` entry at the first ``--players`` count."""

    def __init__(self, config: PPOConfig, start: float, best: tuple[float, int] = (-1.0, -1)) -> None:
        self.config = config
        self.start = start  # the run's perf_counter at its start: rows say how long it has run
        self.rows: list[dict[str, Any]] = read_rows(config.out / "eval.csv")  # a resumed run's earlier rows
        self.best = best  # (win rate, timesteps)

    def evaluate(self, policy: Path, timesteps: int, record: Callable[[str, float], None]) -> None:
        """Play the evaluation tables of ``policy`` (trained for ``timesteps``); ``record(key,
        value)`` logs each win rate to SB3's logger."""
        seconds = time.perf_counter() - self.start
        parts = []
        for players in self.config.players:
            for opponent in self.config.eval_opponents:
                row = {
                    "timesteps": timesteps,
                    "seconds": round(seconds, 1),
                    **evaluate(policy, players, opponent, self.config.eval_deals),
                }
                self.rows.append(row)
                append_rows(self.config.out / "eval.csv", PPO_EVAL_COLUMNS, [row])
                record(f"eval/{players}p_win_rate_vs_{opponent}", row["win_rate"])
                parts.append(self._summary(row))
                self._keep_if_best(policy, row)
        print(f"[{timesteps:>9,} steps, {seconds / 60:5.1f} min] win rate vs " + " · ".join(parts), flush=True)

    def _summary(self, row: dict[str, Any]) -> str:
        """``value 41.0% [35.2%, 47.1%]`` (with ``/3p`` after the opponent when several counts are trained)."""
        players = "" if len(self.config.players) == 1 else f"/{row['players']}p"
        return f"{row['opponent']}{players} {row['win_rate']:.1%} [{row['ci_low']:.1%}, {row['ci_high']:.1%}]"

    def _keep_if_best(self, policy: Path, row: dict[str, Any]) -> None:
        config = self.config
        first_table = row["opponent"] == config.eval_opponents[0] and row["players"] == config.players[0]
        if first_table and row["win_rate"] > self.best[0]:
            self.best = (row["win_rate"], row["timesteps"])
            (config.out / "best_policy.npz").write_bytes(policy.read_bytes())


__all__ = ["PPO_EVAL_COLUMNS", "Evaluations", "evaluate"]
