"""The columns of the game-record tables: one schema (name, dtype, meaning) for every table.

The readers build their DataFrames through :func:`table_frame`, so every table has exactly the
documented columns and dtypes; :func:`columns_markdown` renders the schema for the docstring of
:mod:`experiments.records` (``tests/test_experiments/test_records.py`` checks that they agree).
"""

from __future__ import annotations

from typing import Any, Final

import pandas as pd

from biblios_env.cards import CATEGORY_NAMES, Kind
from biblios_env.engine.state import Resume

#: Category slugs used as column suffixes, in Scriptorium order.
CATEGORY_SLUGS: Final = tuple(name.lower().replace(" ", "_") for name in CATEGORY_NAMES)
KIND_NAMES: Final = {Kind.CATEGORY: "category", Kind.GOLD: "gold", Kind.CHURCH: "church"}
SLOT_NAMES: Final = ("keep", "auction", "common")
ROUTES: Final = {Resume.PLACING: "kept", Resume.TAKING: "taken", Resume.AUCTIONING: "won"}
UNKNOWN_AGENT: Final = "unknown"


def _per_category(prefix: str, dtype: str, meaning: str) -> list[tuple[str, str, str]]:
    return [(f"{prefix}{slug}", dtype, meaning) for slug in CATEGORY_SLUGS]


_GAME_ID = ("game_id", "string", "see games")
_CARD = [
    ("card", "int64", "card id"),
    ("card_name", "string", "card name"),
    ("kind", "string", '"category", "gold" or "church"'),
    ("category", "string", "category name; NA for gold and church cards"),
    ("value", "int64", "card value (see placements)"),
]

#: Every table's columns in order: ``(name, dtype, meaning)``. ``experiments.records``' docstring shows them.
COLUMNS: Final[dict[str, list[tuple[str, str, str]]]] = {
    "games": [
        ("game_id", "string", "log file path (relative to the folder read) without .json, or game-INDEX, or seed-SEED"),
        ("seed", "int64", "the game seed"),
        ("num_players", "int64", "2, 3 or 4"),
        ("penalty", "string", '"standard" or "bluffs" (RULES §5)'),
        ("strict_bids", "bool", "bids limited to what the bidder can pay"),
        ("first_player", "int64", "the seat that starts both phases"),
        ("agents", "object", 'list: agent label per seat (log metadata "agents"; "unknown" without it)'),
        ("finished", "bool", "the log reaches the end of the game"),
        ("vp", "object", "list: victory points per seat (empty if unfinished)"),
        ("winners", "object", "list: winning seats (several when they share the win)"),
        ("winner", "Int64", "the sole winner; NA when the win is shared or the game unfinished"),
        ("winner_agent", "string", "the sole winner's agent label; NA otherwise"),
        ("shared_win", "bool", "more than one winner"),
        ("gift_turns", "int64", "gift turns played"),
        ("auctions", "int64", "cards revealed in the auction phase"),
        ("actions", "int64", "actions in the log, forced ones included"),
        *_per_category("dice_", "int64", "final die of each category"),
        *_per_category("category_winner_", "int64", "category winner's seat, -1: nobody"),
    ],
    "players": [
        _GAME_ID,
        ("seat", "int64", "the seat"),
        ("agent", "string", "the seat's agent label"),
        ("vp", "Int64", "victory points (NA if unfinished)"),
        ("won", "bool", "the seat is among the winners"),
        ("win_share", "float64", "1/k for each of k winners, else 0"),
        ("gold", "int64", "coins of the gold cards in hand at the end (first tie-break)"),
        ("hand_size", "int64", "cards in hand at the end"),
        ("categories_won", "int64", "categories this seat won"),
        *_per_category("total_", "int64", "the seat's card values per category at the end"),
    ],
    "categories": [
        _GAME_ID,
        ("category", "string", 'category name, e.g. "Holy Books"'),
        ("die", "int64", "the category's final die = VP for its winner"),
        ("winner", "int64", "seat that won the category, -1 for nobody"),
        ("winner_agent", "string", "its agent label; NA for nobody"),
        ("winner_total", "int64", "the category winner's total (0 for nobody)"),
        ("runner_up_total", "int64", "the best total among the other seats"),
        ("won_by_game_winner", "bool", "the category went to the game's sole winner"),
        ("decisive", "bool", "won by the sole winner, who without its die would not have more VP than the runner-up"),
    ],
    "placements": [
        _GAME_ID,
        ("step", "int64", "index of the action in the log"),
        ("gift_turn", "int64", "gift turn, 0-based"),
        ("active_player", "int64", "the seat placing the card"),
        ("agent", "string", "its agent label"),
        ("draw", "int64", "position of the card in the turn, 1..N+1"),
        ("card", "int64", "card id (RULES §1)"),
        ("card_name", "string", 'e.g. "Monks 3 (E)", "Gold 2"'),
        ("kind", "string", '"category", "gold" or "church"'),
        ("category", "string", "category name; NA for gold and church cards"),
        ("value", "int64", "points of a category card, coins of a gold card, 0 for church cards"),
        ("slot", "string", '"keep", "auction" or "common"'),
        ("forced", "bool", "it was the only legal placement"),
    ],
    "takes": [
        _GAME_ID,
        ("step", "int64", "index of the action in the log"),
        ("gift_turn", "int64", "gift turn, 0-based"),
        ("active_player", "int64", "the seat whose gift turn it is"),
        ("seat", "int64", "the seat taking the card"),
        ("agent", "string", "its agent label"),
        ("pick", "int64", "order of this take in the turn, 1..N-1"),
        *_CARD,
        ("choices", "int64", "cards in the common area to choose from"),
        ("forced", "bool", "only one card was left"),
    ],
    "church": [
        _GAME_ID,
        ("step", "int64", "index of the resolving action in the log"),
        ("seat", "int64", "the seat that acquired the church card"),
        ("agent", "string", "its agent label"),
        ("card", "int64", "card id (78..86)"),
        ("card_name", "string", 'e.g. "Church -1 to two dice"'),
        ("route", "string", 'how it was acquired: "kept" (own gift turn), "taken" (common area) or "won" (auction)'),
        ("phase", "string", '"gift" or "auction"'),
        ("gift_turn", "Int64", "gift turn (NA in the auction phase)"),
        ("auction", "Int64", "the auction it was won in (NA in the gift phase)"),
        ("resolution", "string", 'the action\'s description, e.g. "DIE Monks +1", "CHURCH_DECLINE"'),
        ("declined", "bool", "discarded without effect"),
        ("categories", "object", "list: names of the categories whose die changed"),
        ("delta", "int64", "the change of each of those dice: +1, -1, or 0 when declined"),
        ("dice_before", "object", "list: the five dice before"),
        ("dice_after", "object", "list: the five dice after"),
        ("forced", "bool", "declining was the only legal action"),
    ],
    "auctions": [
        _GAME_ID,
        ("auction", "int64", "order of the card in the auction phase, 0-based"),
        ("step", "int64", "index in the log of the card's first bid or pass"),
        ("active_player", "int64", "the seat revealing the card"),
        ("placed_by", "Int64", "the seat that put the card on the auction pile (hidden during play)"),
        *_CARD,
        ("bids", "int64", "bids made on the card (passes not counted), over every round"),
        ("bid_sequence", "string", 'e.g. "1:1 2:pass 0:3 1:4 0:pass" (seat:bid); rounds after a default follow " / "'),
        ("outcome", "string", '"sold", "unsold" (nobody bid) or "defaulted" (not sold after a default; discarded)'),
        ("winner", "Int64", "the seat that paid and took the card; NA otherwise"),
        ("winner_agent", "string", "its agent label; NA otherwise"),
        ("price", "Int64", "the winning bid: gold for non-gold cards, a card count for gold cards"),
        ("defaults", "int64", "winners who refused or could not pay (each took the penalty)"),
        ("defaulters", "object", "list: those seats, in order"),
        ("penalty_cards", "int64", 'cards moved (or discarded, "medieval bluffs") by those penalties'),
        ("cards_paid", "object", "list: gold cards paid for a non-gold card (public); empty for a gold card"),
        ("num_cards_paid", "Int64", "cards paid; NA unless sold"),
        ("gold_paid", "Int64", "coins paid for a non-gold card (no change given); NA for a gold card or unless sold"),
        ("overpaid", "Int64", "gold_paid - price"),
    ],
    "bids": [
        _GAME_ID,
        ("step", "int64", "index of the action in the log"),
        ("auction", "int64", "see auctions"),
        ("round", "int64", "0, then +1 after each default on the same card"),
        ("order", "int64", "position of this bid or pass in its round, 0-based"),
        ("seat", "int64", "the bidder"),
        ("agent", "string", "its agent label"),
        ("action", "string", '"bid" or "pass"'),
        ("amount", "Int64", "the bid; NA for a pass"),
        ("high_bid_before", "int64", "the highest bid before this one (0 for none)"),
        ("forced", "bool", "passing was the only legal action"),
    ],
    "tournament_games": [
        ("index .. seconds", "", "games.csv's columns; its space-separated ones as lists"),
        ("game_id", "string", "game-INDEX, the stem of the log --save-logs writes"),
        ("num_players", "int64", "seats in the game"),
        ("winner", "Int64", "the sole winner; NA when shared"),
        ("winner_agent", "string", "its agent label"),
        ("shared_win", "bool", "more than one winner"),
        *_per_category("dice_", "int64", "final dice"),
        *_per_category("category_winner_", "int64", "category winners, -1: nobody"),
    ],
    "tournament_players": [
        ("game_id", "string", "game-INDEX"),
        ("index", "int64", "the game's index in the schedule"),
        ("deal", "int64", "the deal (game seed) it replays"),
        ("seat", "int64", "the seat"),
        ("agent", "string", "the seat's agent label"),
        ("vp", "int64", "victory points"),
        ("won", "bool", "the seat is among the winners"),
        ("win_share", "float64", "1/k for each of k winners, else 0"),
    ],
}

#: The tables of :class:`~experiments.records.games.GameRecords`, in order.
LOG_TABLES: Final = ("games", "players", "categories", "placements", "takes", "church", "auctions", "bids")


def columns_markdown() -> str:
    """The documented columns as a Markdown table; per-category columns are folded into one row."""
    lines = ["| table | column | dtype | meaning |", "|---|---|---|---|"]
    for table, columns in COLUMNS.items():
        index = 0
        while index < len(columns):
            name, dtype, meaning = columns[index]
            if name.endswith(CATEGORY_SLUGS[0]):
                prefix = name[: -len(CATEGORY_SLUGS[0])]
                name = f"{prefix}<category>"
                meaning = f"{meaning} (one per category)"
                index += len(CATEGORY_SLUGS)
            else:
                index += 1
            lines.append(f"| {table} | {name} | {dtype} | {meaning} |")
    return "\n".join(lines)


def column_names(table: str) -> list[str]:
    """The exact columns of a table (without the pass-through games.csv columns of tournament_games)."""
    return [name for name, dtype, _ in COLUMNS[table] if dtype]


def table_frame(table: str, rows: list[dict[str, Any]]) -> pd.DataFrame:
    """A DataFrame with exactly the documented columns and dtypes, even when there are no rows."""
    columns = [(name, dtype) for name, dtype, _ in COLUMNS[table] if dtype]
    frame = pd.DataFrame(rows, columns=[name for name, _ in columns])
    for name, dtype in columns:
        if dtype == "object":
            frame[name] = pd.Series(list(frame[name]), index=frame.index, dtype=object)
        else:
            frame[name] = frame[name].astype(dtype)
    return frame
