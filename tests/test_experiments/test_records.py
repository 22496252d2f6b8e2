"""Game records as tables (experiments.records): documented columns, worked examples reproduced
as rows, invariants over real games, corrupt logs, tournament outputs and training runs."""

from __future__ import annotations

import json
import re
from collections import Counter
from pathlib import Path
from types import ModuleType

import pandas as pd
import pytest
from scenarios import (
    CHURCH_ONE_DOWN,
    CHURCH_TWO_DOWN,
    FORBIDDEN_TOMES,
    MANUSCRIPTS,
    auction_game,
    card,
    gold,
    make_deck,
)

import experiments.records as records
from agents import make_agent
from biblios_env import actions as act
from biblios_env.cards import CARD_VALUE, CATEGORY_NAMES, IS_CHURCH, IS_GOLD
from biblios_env.engine import Game
from biblios_env.engine.config import GameConfig
from biblios_env.engine.log import GameLogError, to_log
from biblios_env.engine.setup import GIFT_TURNS
from experiments.common.match import parse_agent_spec, play_game
from experiments.records import (
    CATEGORY_SLUGS,
    COLUMNS,
    LOG_TABLES,
    GameRecords,
    column_names,
    columns_markdown,
    read_log,
    read_logs,
    read_tournament,
    read_training_run,
    records_from_log,
    training_run_label,
    write_demo_training_run,
)
from experiments.tournament import TournamentConfig, run_tournament, write_results

A, B, C = 0, 1, 2

# (players, penalty, agent lineup, game seed): random players default a lot, heuristics buy a lot.
GAMES = [
    (2, "standard", ("value", "random"), 11),
    (3, "standard", ("hoarder", "random", "value"), 12),
    (4, "bluffs", ("random", "value", "random", "hoarder"), 13),
    (3, "bluffs", ("random", "random", "random"), 14),
]


ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def log_folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("logs")
    for index, (players, penalty, lineup, seed) in enumerate(GAMES):
        agents = [make_agent(name) for name in lineup]
        play_game(agents, seed, agent_seeds=list(range(players)), labels=list(lineup),
                  game_config=GameConfig(players, penalty),
                  log_path=folder / f"game-{index}.json")  # fmt: skip
    return folder


@pytest.fixture(scope="module")
def game_records(log_folder: Path) -> GameRecords:
    return read_logs(log_folder)


# ----------------------------------------------------------------------------- documented columns
def test_the_documented_columns_table_is_generated_from_the_schema() -> None:
    page = (ROOT / "docs" / "records.md").read_text()
    match = re.search(r"<!-- generated: columns_markdown\(\) -->\n(.*?)\n<!-- end generated -->", page, re.S)
    assert match, "docs/records.md has no generated columns table"
    assert match.group(1) == columns_markdown()


def test_every_table_has_exactly_the_documented_columns_and_dtypes(game_records: GameRecords) -> None:
    for table in LOG_TABLES:
        frame = game_records[table]
        assert list(frame.columns) == column_names(table), table
        assert len(frame) > 0, table
        for name, dtype, _ in COLUMNS[table]:
            assert str(frame[name].dtype) == dtype, (table, name, frame[name].dtype)


def test_empty_tables_keep_their_columns(tmp_path: Path) -> None:
    empty = read_logs(tmp_path)
    for table in LOG_TABLES:
        assert list(empty[table].columns) == column_names(table) and empty[table].empty
    with pytest.raises(KeyError, match="tables: games"):
        empty["nope"]


# ----------------------------------------------------------------------------- worked examples (RULES §8)
def test_auction_row_reproduces_the_rulebook_auction() -> None:
    """A reveals Forbidden Tomes 2; B bids 1, C passes, A bids 3, B bids 4, A passes; B pays Gold 2 + Gold 3."""
    tomes_2, gold_2, gold_3 = card(FORBIDDEN_TOMES, "H"), gold(2), gold(3)
    game = auction_game(3, [[], [gold_2, gold_3]], [tomes_2], first_player=A)
    for action in [act.bid(1), act.PASS, act.bid(3), act.bid(4), act.PASS, act.pay(gold_2), act.pay(gold_3)]:
        game.apply(action)
    tables = records_from_log(to_log(game, agents=["a", "b", "c"]), game_id="example")
    row = tables.auctions.iloc[0]
    assert (row.card, row.active_player, row.outcome, row.winner, row.winner_agent) == (tomes_2, A, "sold", B, "b")
    assert row.bid_sequence == "1:1 2:pass 0:3 1:4 0:pass"
    assert (row.bids, row.price, row.gold_paid, row.overpaid) == (3, 4, 5, 1)  # no change given
    assert row.cards_paid == [gold_2, gold_3] and row.num_cards_paid == 2
    assert (row.kind, row.category, row.defaults) == ("category", "Forbidden Tomes", 0)
    bids = tables.bids[tables.bids.auction == 0]
    assert list(zip(bids.seat, bids.action, bids.amount.astype(object).where(bids.amount.notna(), None))) == [
        (B, "bid", 1), (C, "pass", None), (A, "bid", 3), (B, "bid", 4), (A, "pass", None)
    ]  # fmt: skip
    assert list(bids.high_bid_before) == [0, 1, 1, 3, 4]
    assert not tables.games.finished.iloc[0] and tables.games.vp.iloc[0] == []


def test_church_rows_reproduce_the_rulebook_church_card() -> None:
    """Seat B keeps "-1 to two dice" as its first placement and lowers Holy Books 2->1 and Pigments 3->2."""
    filler = [card(MANUSCRIPTS, letter) for letter in "ABCDEF"]
    top = [CHURCH_ONE_DOWN[0], *filler[:3], CHURCH_TWO_DOWN[0], *filler[3:]]
    game = Game(3, seed=0, deck=make_deck(3, top))
    for action in [act.KEEP, act.church_one(2, -1), act.AUCTION, act.take(filler[1]), act.KEEP, act.church_two(2, 1)]:
        game.apply(action)
    church = records_from_log(to_log(game)).church
    assert list(church.seat) == [A, B] and list(church.route) == ["kept", "kept"]
    assert list(church.card) == [CHURCH_ONE_DOWN[0], CHURCH_TWO_DOWN[0]]
    second = church.iloc[1]
    assert second.dice_before == [3, 3, 2, 3, 3] and second.dice_after == [3, 2, 1, 3, 3]
    assert second.categories == ["Pigments", "Holy Books"] and second.delta == -1 and not second.declined
    assert second.resolution == "DICE Pigments & Holy Books" and second.phase == "gift" and second.gift_turn == 1
    assert pd.isna(second.auction)


# ----------------------------------------------------------------------------- invariants over real games
def test_games_and_players_agree_with_the_logs(log_folder: Path, game_records: GameRecords) -> None:
    games, players = game_records.games.set_index("game_id"), game_records.players
    assert sorted(games.index) == [f"game-{index}" for index in range(len(GAMES))]
    for index, (num_players, penalty, lineup, seed) in enumerate(GAMES):
        log = json.loads((log_folder / f"game-{index}.json").read_text())
        row = games.loc[f"game-{index}"]
        assert (row.seed, row.num_players, row.penalty, row.agents) == (seed, num_players, penalty, list(lineup))
        assert row.finished and row.vp == log["result"]["vp"] and row.winners == log["result"]["winners"]
        assert row.actions == len(log["actions"])
        seats = players[players.game_id == f"game-{index}"]
        assert list(seats.vp) == row.vp and list(seats.agent) == list(lineup)
        assert seats.win_share.sum() == pytest.approx(1.0)
        assert row.gift_turns == GIFT_TURNS[num_players]
        # VP = the dice of the categories won (RULES §6)
        dice = [row[f"dice_{slug}"] for slug in CATEGORY_SLUGS]
        winners = [row[f"category_winner_{slug}"] for slug in CATEGORY_SLUGS]
        assert row.vp == [sum(d for d, w in zip(dice, winners) if w == seat) for seat in range(num_players)]
        assert list(seats.categories_won) == [winners.count(seat) for seat in range(num_players)]


def test_gift_tables_count_every_placement_and_take(game_records: GameRecords) -> None:
    for game in game_records.games.itertuples():
        placements = game_records.placements[game_records.placements.game_id == game.game_id]
        takes = game_records.takes[game_records.takes.game_id == game.game_id]
        n = game.num_players
        assert len(placements) == game.gift_turns * (n + 1) and len(takes) == game.gift_turns * (n - 1)
        per_turn = placements.groupby("gift_turn").slot.value_counts().unstack(fill_value=0)
        assert (per_turn[["keep", "auction"]] == 1).all(axis=None) and (per_turn["common"] == n - 1).all()
        assert placements.groupby("gift_turn").draw.apply(list).tolist() == [list(range(1, n + 2))] * game.gift_turns
        assert set(takes.card) == set(placements[placements.slot == "common"].card)
        assert (takes.seat != takes.active_player).all() and (takes.choices == n - takes.pick).all()
        assert game.auctions == (placements.slot == "auction").sum()


def test_auction_rows_add_up(game_records: GameRecords) -> None:
    auctions, bids = game_records.auctions, game_records.bids
    assert set(auctions.outcome) <= {"sold", "unsold", "defaulted"}
    assert Counter(auctions.outcome)["sold"] > 0 and auctions.defaults.sum() > 0  # random players default
    sold = auctions[auctions.outcome == "sold"]
    assert sold.winner.notna().all() and sold.price.ge(1).all()
    coins = sold[sold.kind != "gold"]
    assert all(all(IS_GOLD[c] for c in paid) for paid in coins.cards_paid)
    assert (coins.gold_paid == [sum(CARD_VALUE[c] for c in paid) for paid in coins.cards_paid]).all()
    assert (coins.gold_paid >= coins.price).all() and (coins.overpaid == coins.gold_paid - coins.price).all()
    golds = sold[sold.kind == "gold"]
    assert (golds.cards_paid.map(len) == 0).all() and (golds.num_cards_paid == golds.price).all()
    unsold = auctions[auctions.outcome != "sold"]
    assert unsold.winner.isna().all() and unsold.price.isna().all()
    assert (auctions[auctions.outcome == "defaulted"].defaults > 0).all()
    assert (auctions.defaults == auctions.defaulters.map(len)).all()
    assert auctions.placed_by.notna().all()
    per_auction = bids.groupby(["game_id", "auction"])
    counted = per_auction.action.apply(lambda a: int((a == "bid").sum()))
    assert (auctions.set_index(["game_id", "auction"]).bids == counted).all()
    # every default reopens the bidding, unless every player has defaulted (the card is then discarded)
    players = auctions.game_id.map(game_records.games.set_index("game_id").num_players)
    expected = auctions.defaults - (auctions.defaults == players)
    assert (per_auction["round"].max() == expected.set_axis(counted.index)).all()
    assert (bids[bids.action == "bid"].amount > bids[bids.action == "bid"].high_bid_before).all()


def test_church_rows_replay_the_dice(game_records: GameRecords) -> None:
    church, games = game_records.church, game_records.games.set_index("game_id")
    assert set(church.route) <= {"kept", "taken", "won"} and church.card.map(IS_CHURCH.__getitem__).all()
    for game_id, rows in church.groupby("game_id", sort=False):
        dice = [3] * 5
        for row in rows.itertuples():
            assert row.dice_before == dice
            changed = [CATEGORY_NAMES[c] for c in range(5) if row.dice_after[c] != dice[c]]
            assert sorted(changed) == sorted(row.categories)
            assert all(row.dice_after[c] - dice[c] == row.delta for c in range(5) if row.dice_after[c] != dice[c])
            dice = row.dice_after
        assert dice == [games.loc[game_id, f"dice_{slug}"] for slug in CATEGORY_SLUGS]
    won = church[church.route == "won"]
    auctions = game_records.auctions.set_index(["game_id", "auction"])
    for row in won.itertuples():
        assert auctions.loc[(row.game_id, row.auction)].card == row.card
        assert auctions.loc[(row.game_id, row.auction)].winner == row.seat


def test_category_rows_follow_the_scoring(game_records: GameRecords) -> None:
    categories, games = game_records.categories, game_records.games.set_index("game_id")
    assert len(categories) == 5 * len(games)
    for row in categories.itertuples():
        game = games.loc[row.game_id]
        slug = CATEGORY_SLUGS[CATEGORY_NAMES.index(row.category)]
        assert row.winner == game[f"category_winner_{slug}"] and row.die == game[f"dice_{slug}"]
        assert row.winner_total >= row.runner_up_total
        assert row.won_by_game_winner == (not game.shared_win and row.winner == game.winner)
        if row.decisive:
            others = [vp for seat, vp in enumerate(game.vp) if seat != game.winner]
            assert row.won_by_game_winner and game.vp[game.winner] - row.die <= max(others)


# ----------------------------------------------------------------------------- bad logs
def test_corrupt_logs_raise_game_log_error_naming_the_file(log_folder: Path, tmp_path: Path) -> None:
    log = json.loads((log_folder / "game-0.json").read_text())
    log["actions"][5] = 265
    with pytest.raises(GameLogError, match="action #5 does not replay"):
        records_from_log(log)
    bad = tmp_path / "bad" / "broken.json"
    bad.parent.mkdir()
    bad.write_text("{not json")
    with pytest.raises(GameLogError, match=r"broken\.json"):
        read_logs(bad.parent)
    edited = dict(log, actions=json.loads((log_folder / "game-0.json").read_text())["actions"])
    edited["result"] = {"vp": [99, 0], "winners": [0]}
    (tmp_path / "edited.json").write_text(json.dumps(edited))
    with pytest.raises(GameLogError, match=r"edited\.json: game log result"):
        read_log(tmp_path / "edited.json")
    with pytest.raises(FileNotFoundError):
        read_logs(tmp_path / "missing")


# ----------------------------------------------------------------------------- tournaments
def test_tournament_outputs_as_tables_agree_with_its_logs(tmp_path: Path) -> None:
    config = TournamentConfig(agents=tuple(parse_agent_spec(s) for s in ("value", "random")), num_players=2, deals=2)
    result = run_tournament(config, workers=1, progress=False, log_dir=tmp_path / "logs")
    write_results(result, tmp_path, plot=False)
    tournament = read_tournament(tmp_path)
    games, players = tournament.games, tournament.players
    assert len(games) == 4 and len(players) == 8 and tournament.config["num_players"] == 2
    assert list(players.columns) == column_names("tournament_players")
    assert set(column_names("tournament_games")) <= set(games.columns)
    assert games.vp.map(type).eq(list).all() and games.agents.iloc[0] in (["value", "random"], ["random", "value"])
    assert players.groupby("game_id").win_share.sum().round(9).eq(1).all()
    assert list(tournament.seats.seat) == [0, 1] and set(tournament.summary.agent) == {"value", "random"}
    assert tournament.pairwise.loc["value", "random"] == pytest.approx(1 - tournament.pairwise.loc["random", "value"])
    from_logs = read_logs(tmp_path / "logs").games.set_index("game_id")
    for game in games.itertuples():
        logged = from_logs.loc[game.game_id]
        assert (logged.vp, logged.winners, logged.agents) == (game.vp, game.winners, game.agents)
        assert [logged[f"dice_{slug}"] for slug in CATEGORY_SLUGS] == game.dice
    with pytest.raises(FileNotFoundError, match="not a tournament output"):
        read_tournament(tmp_path / "logs")


# ----------------------------------------------------------------------------- training runs
def test_training_run_demo_round_trips(tmp_path: Path) -> None:
    run = read_training_run(write_demo_training_run(tmp_path / "run", updates=8))
    assert run.config["synthetic"] is True
    assert "timesteps" in run.progress and run.progress.timesteps.is_monotonic_increasing
    assert set(records.EVALUATION_COLUMNS) <= set(run.evaluations.columns)
    assert set(run.evaluations.opponent) == {"random", "value", "hoarder"}
    assert run.evaluations.win_rate.between(0, 1).all()
    assert list(run.episodes.columns) == ["reward", "length", "time", "timesteps"]
    keys = list(zip(run.evaluations.timesteps, run.evaluations.players, run.evaluations.opponent))
    assert len(keys) == len(set(keys))  # one row per step, players and opponent, as train_ppo writes


def test_the_demo_run_uses_the_training_scripts_default_reward(tmp_path: Path) -> None:
    from experiments.train_ppo import build_parser

    run = read_training_run(write_demo_training_run(tmp_path / "run", updates=8))
    assert run.config["settings"]["reward"] == build_parser().get_default("reward") == "vp"
    assert run.episodes.reward.min() < -1  # VP differences, not the +-1 of the "win" reward


def test_training_run_label_says_what_the_data_is(tmp_path: Path) -> None:
    demo = read_training_run(write_demo_training_run(tmp_path / "demo", updates=8))
    assert demo.synthetic and training_run_label(demo).startswith("SYNTHETIC demo data")
    real = tmp_path / "ppo-7"
    real.mkdir()
    pd.DataFrame({"timesteps": [0, 512], "opponent": ["value"] * 2, "win_rate": [0.1, 0.2]}).to_csv(
        real / "eval.csv", index=False
    )
    assert training_run_label(read_training_run(real)) == "real run ppo-7: 512 steps"
    (real / "training.json").write_text(json.dumps({"timesteps": 600, "settings": {"reward": "vp"}}))
    run = read_training_run(real)
    assert not run.synthetic and training_run_label(run) == "real run ppo-7: 600 steps, reward 'vp'"


def test_episodes_of_several_monitor_files_are_read_in_time_order(tmp_path: Path) -> None:
    """train_ppo writes one Monitor file per environment: the episodes interleave in time."""
    (tmp_path / "monitor").mkdir()
    pd.DataFrame({"timesteps": [0], "opponent": ["value"], "win_rate": [0.0]}).to_csv(tmp_path / "eval.csv")
    for index, times in enumerate(([1.0, 3.0], [2.0, 4.0])):
        with (tmp_path / "monitor" / f"env_{index}.monitor.csv").open("w") as handle:
            handle.write('#{"t_start": 0.0}\n')
            pd.DataFrame({"r": [index, index], "l": [10, 20], "t": times}).to_csv(handle, index=False)
    episodes = read_training_run(tmp_path).episodes
    assert list(episodes.time) == [1.0, 2.0, 3.0, 4.0]
    assert list(episodes.reward) == [0, 1, 0, 1]
    assert list(episodes.timesteps) == [10, 20, 40, 60]


def test_training_run_errors_name_the_problem(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError, match="not a training run"):
        read_training_run(tmp_path)
    pd.DataFrame({"step": [1], "win_rate": [0.5]}).to_csv(tmp_path / "eval.csv", index=False)
    with pytest.raises(ValueError, match=r"lacks the column\(s\) \['opponent'\]"):
        read_training_run(tmp_path)


def test_records_is_only_a_facade_over_the_modules_that_do_the_work() -> None:
    """``experiments.records`` re-exports the public names of its four modules and defines
    nothing of its own (the package docstring, the column table, is its only content)."""
    from experiments.records import columns, games, tournament, training

    homes = (columns, games, tournament, training)
    public = {
        name
        for name, value in vars(records).items()
        if not name.startswith("_") and name != "annotations" and not isinstance(value, ModuleType)
    }
    assert public == set(records.__all__)
    for name in records.__all__:
        assert any(getattr(home, name, None) is getattr(records, name) for home in homes), name
