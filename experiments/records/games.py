"""Game logs as tables: replay a log action by action and record every event as rows.

:func:`records_from_log` validates a log by replaying it (a corrupt or inconsistent log raises
:class:`~biblios_env.engine.log.GameLogError`), then steps through its actions on a fresh game
and records the eight tables of :class:`GameRecords`; :func:`read_log` and :func:`read_logs`
read log files. The columns are documented in :mod:`experiments.records`.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any

import pandas as pd

from biblios_env.actions import (
    AUCTION,
    BID_BASE,
    CHURCH_DECLINE,
    PASS,
    PAY_BASE,
    REFUSE,
    TAKE_BASE,
    church_changes,
    describe,
)
from biblios_env.cards import CARD_CATEGORY, CARD_KIND, CARD_VALUE, CATEGORY_NAMES, IS_GOLD, Kind, card_name, gold_value
from biblios_env.engine.game import PHASE_NAMES, Game
from biblios_env.engine.log import GameLogError, replay
from biblios_env.engine.scoring import category_totals
from biblios_env.engine.state import CHANCE_PENALTY, Decision, Phase, Resume
from experiments.records.columns import (
    CATEGORY_SLUGS,
    KIND_NAMES,
    LOG_TABLES,
    ROUTES,
    SLOT_NAMES,
    UNKNOWN_AGENT,
    table_frame,
)

Row = dict[str, Any]
Rows = dict[str, list[Row]]


@dataclass
class GameRecords:
    """The tables of one or many games (see :mod:`experiments.records` for every column)."""

    games: pd.DataFrame
    players: pd.DataFrame
    categories: pd.DataFrame
    placements: pd.DataFrame
    takes: pd.DataFrame
    church: pd.DataFrame
    auctions: pd.DataFrame
    bids: pd.DataFrame

    def __getitem__(self, table: str) -> pd.DataFrame:
        if table not in LOG_TABLES:
            raise KeyError(f"no table {table!r}; tables: {', '.join(LOG_TABLES)}")
        return getattr(self, table)

    def tables(self) -> dict[str, pd.DataFrame]:
        return {table: getattr(self, table) for table in LOG_TABLES}

    @classmethod
    def empty(cls) -> GameRecords:
        return cls(**{table: table_frame(table, []) for table in LOG_TABLES})

    @classmethod
    def concat(cls, parts: Iterable[GameRecords]) -> GameRecords:
        """One set of tables from many games (rows in the given order)."""
        parts = list(parts)
        if not parts:
            return cls.empty()
        return cls(
            **{
                item.name: pd.concat([getattr(part, item.name) for part in parts], ignore_index=True)
                for item in fields(cls)
            }
        )


def _card_facts(card: int) -> Row:
    category = CARD_CATEGORY[card]
    return {
        "card": card,
        "card_name": card_name(card),
        "kind": KIND_NAMES[Kind(CARD_KIND[card])],
        "category": CATEGORY_NAMES[category] if category >= 0 else None,
        "value": CARD_VALUE[card],
    }


def _default_game_id(log: dict[str, Any]) -> str:
    metadata = log.get("metadata") or {}
    if isinstance(metadata, dict) and isinstance(metadata.get("game_index"), int):
        return f"game-{metadata['game_index']:06d}"
    return f"seed-{log.get('seed')}"


def _agent_labels(log: dict[str, Any], num_players: int) -> list[str]:
    metadata = log.get("metadata") or {}
    agents = metadata.get("agents") if isinstance(metadata, dict) else None
    if isinstance(agents, list) and len(agents) == num_players:
        return [str(agent) for agent in agents]
    return [UNKNOWN_AGENT] * num_players


class _Auction:
    """The auction of one card while it runs."""

    def __init__(self, index: int, step: int, active: int, card: int, placed_by: int | None) -> None:
        self.index, self.step, self.active, self.card, self.placed_by = index, step, active, card, placed_by
        self.rounds: list[list[str]] = [[]]
        self.bids = 0
        self.payment: list[int] = []
        self.defaulters: list[int] = []
        self.penalty_cards = 0

    def row(self, game_id: str, agents: list[str], sold: bool, price: int, winner: int) -> Row:
        """The auctions table's row once the card is sold, unsold or discarded after defaults."""
        gold_card = IS_GOLD[self.card]
        outcome = "sold" if sold else "defaulted" if self.defaulters else "unsold"
        rounds = [" ".join(bid_round) for bid_round in self.rounds if bid_round]
        paid = self.payment if sold else []
        return {
            "game_id": game_id, "auction": self.index, "step": self.step, "active_player": self.active,
            "placed_by": self.placed_by, **_card_facts(self.card), "bids": self.bids,
            "bid_sequence": " / ".join(rounds), "outcome": outcome,
            "winner": winner if sold else None, "winner_agent": agents[winner] if sold else None,
            "price": price if sold else None, "defaults": len(self.defaulters), "defaulters": self.defaulters[:],
            "penalty_cards": self.penalty_cards,
            "cards_paid": [] if gold_card else paid[:],
            "num_cards_paid": len(paid) if sold else None,
            "gold_paid": sum(CARD_VALUE[card] for card in paid) if sold and not gold_card else None,
            "overpaid": sum(CARD_VALUE[card] for card in paid) - price if sold and not gold_card else None,
        }  # fmt: skip


class _LogReader:
    """Steps through one log's actions on a fresh game, one method per kind of decision."""

    def __init__(self, log: dict[str, Any], game_id: str | None) -> None:
        replay(log, auto_forced=False)  # validates config, deck, every action, chance events and result
        config = log["config"]
        deck = log["chance"]["deck"] if log["deck_given"] else None
        self.log = log
        self.game = Game(**config, seed=log["seed"], deck=deck, auto_forced=False)
        self.state = self.game.state
        self.game_id = game_id if game_id is not None else _default_game_id(log)
        self.agents = _agent_labels(log, self.state.num_players)
        self.rows: Rows = {table: [] for table in LOG_TABLES}
        self.placed_by: dict[int, int] = {}  # who put each card on the auction pile
        self.gift_turn, self.pick, self.auction_count = -1, 0, 0
        self.current: _Auction | None = None
        self.last_auction = -1  # the auction a won church card came from

    def read(self) -> Rows:
        """Every table's rows for the log."""
        record = {
            Decision.PLACE: self.place,
            Decision.TAKE: self.take,
            Decision.CHURCH: self.church,
            Decision.BID: self.bid,
            Decision.PAY: self.pay,
        }
        for step, action in enumerate(self.log["actions"]):
            state = self.state
            decision = state.decision
            forced = len(self.game.legal_actions()) == 1
            record[Decision(decision)](step, action, forced)
            high_bid, high_bidder, events = state.high_bid, state.high_bidder, len(state.chance)
            self.game.apply(action)
            if decision == Decision.CHURCH:
                self.rows["church"][-1]["dice_after"] = state.dice[:]
            if self.current is not None:
                self.after_auction_action(self.current, decision, action, high_bid, high_bidder, events)
        self.finish()
        return self.rows

    def base(self, step: int) -> Row:
        seat = self.state.current_player
        return {"game_id": self.game_id, "step": step, "seat": seat, "agent": self.agents[seat]}

    # ------------------------------------------------------------------ one row per decision
    def place(self, step: int, action: int, forced: bool) -> None:
        state, n = self.state, self.state.num_players
        if sum(state.quota) == n + 1:
            self.gift_turn += 1
            self.pick = 0
        card = state.drawn_card
        seat = state.current_player
        if action == AUCTION:
            self.placed_by[card] = seat
        self.rows["placements"].append(
            {
                "game_id": self.game_id, "step": step, "gift_turn": self.gift_turn, "active_player": seat,
                "agent": self.agents[seat], "draw": n + 2 - sum(state.quota), **_card_facts(card),
                "slot": SLOT_NAMES[action], "forced": forced,
            }
        )  # fmt: skip

    def take(self, step: int, action: int, forced: bool) -> None:
        self.pick += 1
        state = self.state
        self.rows["takes"].append(
            {
                **self.base(step), "gift_turn": self.gift_turn, "active_player": state.active_player,
                "pick": self.pick, **_card_facts(action - TAKE_BASE), "choices": len(state.common_area),
                "forced": forced,
            }
        )  # fmt: skip

    def church(self, step: int, action: int, forced: bool) -> None:
        state = self.state
        changes = church_changes(action, state.church_card)
        in_gift = state.phase == Phase.GIFT
        self.rows["church"].append(
            {
                **self.base(step), "card": state.church_card, "card_name": card_name(state.church_card),
                "route": ROUTES[Resume(state.church_resume)], "phase": PHASE_NAMES[state.phase],
                "gift_turn": self.gift_turn if in_gift else None, "auction": None if in_gift else self.last_auction,
                "resolution": describe(action), "declined": action == CHURCH_DECLINE,
                "categories": [CATEGORY_NAMES[category] for category, _ in changes],
                "delta": changes[0][1] if changes else 0, "dice_before": state.dice[:], "forced": forced,
            }
        )  # fmt: skip

    def bid(self, step: int, action: int, forced: bool) -> None:
        state = self.state
        if self.current is None:
            card = state.auction_card
            self.current = _Auction(self.auction_count, step, state.active_player, card, self.placed_by.get(card))
            self.auction_count += 1
        current = self.current
        bid_round = current.rounds[-1]
        amount = None if action == PASS else action - BID_BASE
        self.rows["bids"].append(
            {
                "game_id": self.game_id, "step": step, "auction": current.index, "round": len(current.rounds) - 1,
                "order": len(bid_round), "seat": state.current_player, "agent": self.agents[state.current_player],
                "action": "pass" if amount is None else "bid", "amount": amount,
                "high_bid_before": state.high_bid, "forced": forced,
            }
        )  # fmt: skip
        bid_round.append(f"{state.current_player}:{'pass' if amount is None else amount}")
        current.bids += amount is not None

    def pay(self, step: int, action: int, forced: bool) -> None:
        current = self.current
        if current is None:
            return
        if action == REFUSE:
            current.defaulters.append(self.state.current_player)
            current.payment = []
        else:
            current.payment.append(action - PAY_BASE)

    def after_auction_action(
        self, current: _Auction, decision: int, action: int, high_bid: int, high_bidder: int, events: int
    ) -> None:
        """Count a default's penalty cards; close the auction once its card is gone."""
        state = self.state
        if action == REFUSE and decision == Decision.PAY:
            for kind, cards in state.chance[events:]:
                if kind == CHANCE_PENALTY:
                    current.penalty_cards += len(cards)
            current.rounds.append([])
        if state.auction_card != current.card or state.phase == Phase.END:
            sold = decision == Decision.PAY and action != REFUSE
            self.rows["auctions"].append(current.row(self.game_id, self.agents, sold, high_bid, high_bidder))
            self.last_auction = current.index
            self.current = None

    # ------------------------------------------------------------------ the result
    def finish(self) -> None:
        """The games, players and categories rows, from the position the log reached."""
        game, state = self.game, self.state
        n, finished, agents, game_id = state.num_players, game.is_over, self.agents, self.game_id
        vp = state.vp[:] if finished else []
        winners = state.winners[:] if finished else []
        sole = winners[0] if len(winners) == 1 else None
        category_winners = state.category_winners[:] if finished else [-1] * len(CATEGORY_NAMES)
        games_row: Row = {
            "game_id": game_id, "seed": game.seed, "num_players": n, "penalty": game.config.penalty,
            "strict_bids": game.config.strict_bids, "first_player": game.config.first_player, "agents": agents,
            "finished": finished, "vp": vp, "winners": winners, "winner": sole,
            "winner_agent": None if sole is None else agents[sole], "shared_win": len(winners) > 1,
            "gift_turns": self.gift_turn + 1, "auctions": self.auction_count, "actions": len(self.log["actions"]),
        }  # fmt: skip
        for slug, die, category_winner in zip(CATEGORY_SLUGS, state.dice, category_winners):
            games_row[f"dice_{slug}"] = die
            games_row[f"category_winner_{slug}"] = category_winner
        self.rows["games"].append(games_row)
        totals = [category_totals(hand)[0] for hand in state.hands]
        for seat in range(n):
            row: Row = {
                "game_id": game_id, "seat": seat, "agent": agents[seat], "vp": vp[seat] if finished else None,
                "won": seat in winners, "win_share": 1 / len(winners) if seat in winners else 0.0,
                "gold": gold_value(state.hands[seat]), "hand_size": len(state.hands[seat]),
                "categories_won": category_winners.count(seat),
            }  # fmt: skip
            for slug, total in zip(CATEGORY_SLUGS, totals[seat]):
                row[f"total_{slug}"] = total
            self.rows["players"].append(row)
        for category, name in enumerate(CATEGORY_NAMES):
            self.rows["categories"].append(self.category_row(category, name, totals, vp, sole, category_winners))

    def category_row(
        self, category: int, name: str, totals: list[list[int]], vp: list[int], sole: int | None, winners: list[int]
    ) -> Row:
        n, die, winner = self.state.num_players, self.state.dice[category], winners[category]
        others = [totals[seat][category] for seat in range(n) if seat != winner]
        decisive = False
        if sole is not None and winner == sole:
            runner_up_vp = max((vp[seat] for seat in range(n) if seat != sole), default=0)
            decisive = vp[sole] - die <= runner_up_vp
        return {
            "game_id": self.game_id, "category": name, "die": die, "winner": winner,
            "winner_agent": self.agents[winner] if winner >= 0 else None,
            "winner_total": totals[winner][category] if winner >= 0 else 0,
            "runner_up_total": max(others, default=0),
            "won_by_game_winner": sole is not None and winner == sole, "decisive": decisive,
        }  # fmt: skip


def records_from_log(log: dict[str, Any], game_id: str | None = None) -> GameRecords:
    """The tables of one game log (a dict as written by ``save_log``).

    The log is first replayed and checked by :func:`biblios_env.engine.log.replay`, so a
    malformed or inconsistent log raises :class:`GameLogError` naming the problem.
    """
    return _records(_LogReader(log, game_id).read())


def _records(rows: Rows) -> GameRecords:
    return GameRecords(**{table: table_frame(table, rows[table]) for table in LOG_TABLES})


def _read_json(path: Path) -> dict[str, Any]:
    try:
        return json.loads(path.read_text())
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as error:
        raise GameLogError(f"cannot read game log {path}: {error}") from error


def read_log(path: str | Path, game_id: str | None = None) -> GameRecords:
    """The tables of one game log file; ``game_id`` defaults to the file name without ``.json``."""
    return _records(_rows_from_file(Path(path), game_id))


def _rows_from_file(path: Path, game_id: str | None) -> Rows:
    log = _read_json(path)
    try:
        return _LogReader(log, game_id if game_id is not None else path.stem).read()
    except GameLogError as error:
        raise GameLogError(f"{path}: {error}") from error


def read_logs(source: str | Path | Iterable[str | Path], pattern: str = "*.json") -> GameRecords:
    """The tables of many games: a folder (its files matching ``pattern``, searched recursively,
    in name order) or an iterable of log files. Game ids are paths relative to the folder
    without ``.json`` (file names for an iterable). A corrupt log raises GameLogError naming it."""
    if isinstance(source, str | Path):
        folder = Path(source)
        if not folder.is_dir():
            raise FileNotFoundError(f"no folder of game logs at {folder}")
        paths = sorted(folder.rglob(pattern))
        ids = [str(path.relative_to(folder).with_suffix("")) for path in paths]
    else:
        paths = [Path(path) for path in source]
        ids = [path.stem for path in paths]
    rows: Rows = {table: [] for table in LOG_TABLES}
    for path, game_id in zip(paths, ids):  # tables are built once at the end: far faster than concat
        for table, table_rows in _rows_from_file(path, game_id).items():
            rows[table].extend(table_rows)
    return _records(rows)


__all__ = ["GameRecords", "read_log", "read_logs", "records_from_log"]
