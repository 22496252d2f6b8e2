"""Tournament outputs as tables: a tournament's ``--out`` folder read into pandas DataFrames.

:func:`read_tournament` reads what ``python -m experiments.tournament --out DIR`` writes:
``summary``, ``pairwise`` and ``seats`` as the harness writes them, ``games`` and ``players``
as documented in :mod:`experiments.records` (``tournament_games``, ``tournament_players``).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

import numpy as np
import pandas as pd

from experiments.records.columns import CATEGORY_SLUGS, table_frame

#: The list-valued columns of games.csv (space-separated in the file).
_TOURNAMENT_LISTS: Final = ("agent_seeds", "vp", "winners", "category_winners", "dice", "decisions", "seconds")


@dataclass
class TournamentRecords:
    """A tournament's output folder as tables (see :func:`read_tournament`)."""

    config: dict[str, Any]
    summary: pd.DataFrame  # summary.csv: one row per agent (experiments.tournament.report.SUMMARY_COLUMNS)
    games: pd.DataFrame  # tournament_games
    players: pd.DataFrame  # tournament_players
    pairwise: pd.DataFrame  # pairwise.csv: row agent's win share against the column agent
    seats: pd.DataFrame  # seat, win_rate (from results.json)


def _split(text: Any, kind: type) -> list[Any]:
    if isinstance(text, float) and np.isnan(text):
        return []
    return [kind(item) for item in str(text).split()]


def tournament_tables(game_rows: pd.DataFrame) -> tuple[pd.DataFrame, pd.DataFrame]:
    """games.csv rows (as read by pandas) -> the tidy ``tournament_games`` and ``tournament_players``."""
    games = game_rows.copy()
    for column in _TOURNAMENT_LISTS:
        if column in games:
            kind = float if column == "seconds" else int
            games[column] = pd.Series([_split(text, kind) for text in games[column]], index=games.index, dtype=object)
    games["agents"] = pd.Series([str(text).split(" | ") for text in games["agents"]], index=games.index, dtype=object)
    games["game_id"] = pd.Series([f"game-{int(index):06d}" for index in games["index"]], dtype="string")
    games["num_players"] = games["agents"].map(len).astype("int64")
    sole = [winners[0] if len(winners) == 1 else None for winners in games["winners"]]
    games["winner"] = pd.Series(sole, index=games.index, dtype="Int64")
    games["winner_agent"] = pd.Series(
        [None if seat is None else agents[seat] for seat, agents in zip(sole, games["agents"])],
        index=games.index,
        dtype="string",
    )
    games["shared_win"] = games["winners"].map(len) > 1
    for category, slug in enumerate(CATEGORY_SLUGS):
        games[f"dice_{slug}"] = games["dice"].map(lambda dice, c=category: dice[c]).astype("int64")
    for category, slug in enumerate(CATEGORY_SLUGS):
        games[f"category_winner_{slug}"] = (
            games["category_winners"].map(lambda winners, c=category: winners[c]).astype("int64")
        )
    rows = []
    for game in games.itertuples(index=False):
        for seat, agent in enumerate(game.agents):
            won = seat in game.winners
            rows.append(
                {
                    "game_id": game.game_id, "index": game.index, "deal": game.deal, "seat": seat, "agent": agent,
                    "vp": game.vp[seat], "won": won, "win_share": 1 / len(game.winners) if won else 0.0,
                }
            )  # fmt: skip
    return games, table_frame("tournament_players", rows)


def read_tournament(out_dir: str | Path) -> TournamentRecords:
    """Read a tournament's ``--out`` folder: games.csv (or the games in results.json), summary.csv,
    pairwise.csv and results.json, whichever are there (games are required)."""
    out = Path(out_dir)
    results_path = out / "results.json"
    document: dict[str, Any] = {}
    if results_path.exists():
        try:
            document = json.loads(results_path.read_text())
        except (OSError, json.JSONDecodeError) as error:
            raise ValueError(f"cannot read tournament results {results_path}: {error}") from error
    if (out / "games.csv").exists():
        game_rows = pd.read_csv(out / "games.csv", dtype={"agents": str, "seconds": str})
    elif document.get("games"):
        game_rows = pd.DataFrame(document["games"])
    else:
        raise FileNotFoundError(f"{out} has neither games.csv nor games in results.json: not a tournament output")
    games, players = tournament_tables(game_rows)
    summary_path, pairwise_path = out / "summary.csv", out / "pairwise.csv"
    summary = pd.read_csv(summary_path) if summary_path.exists() else pd.DataFrame(document.get("agents", []))
    pairwise = pd.read_csv(pairwise_path, index_col="agent") if pairwise_path.exists() else pd.DataFrame()
    seat_rates = document.get("seat_win_rates") or []
    seats = pd.DataFrame({"seat": range(len(seat_rates)), "win_rate": seat_rates})
    return TournamentRecords(document.get("config", {}), summary, games, players, pairwise, seats)


__all__ = ["TournamentRecords", "read_tournament", "tournament_tables"]
