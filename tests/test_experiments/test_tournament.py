"""The tournament harness: agent specs, statistics against hand computations, duplicate-deal
schedules, determinism across worker counts, outputs, replayable logs and the command line."""

from __future__ import annotations

import csv
import json
import math
import random
import re
from pathlib import Path

import pytest

from biblios_env.engine import Game
from biblios_env.engine.log import load_log
from experiments.common.match import AgentError, AgentSpec, AgentSpecError, build_agent, parse_agent_spec, play_game
from experiments.common.stats import (
    CI_CLUSTER,
    CI_WILSON_DEALS,
    Z_95,
    Outcome,
    agent_stats,
    finishing_ranks,
    openskill_ratings,
    pairwise_win_shares,
    seat_win_rates,
    wilson_interval,
)
from experiments.tournament import (
    ROUND_ROBIN,
    TournamentConfig,
    TournamentResult,
    main,
    run_tournament,
    seat_orders,
    write_results,
)


class UniformAgent:
    """A tiny local agent (uniform over legal actions) so these tests need no agent registry."""

    name = "uniform"

    def __init__(self, patience: int = 0) -> None:
        self.patience = patience
        self.rng = random.Random(0)

    def start_game(self, seat: int, num_players: int, seed: int | None = None) -> None:
        self.rng = random.Random(seed)

    def act(self, observation) -> int:
        return self.rng.choice(observation.legal_actions)


class IllegalAgent(UniformAgent):
    def act(self, observation) -> int:
        return max(observation.legal_actions) + 1000


class CrashingAgent(UniformAgent):
    def act(self, observation) -> int:
        raise KeyError("no plan")


UNIFORM = f"{__name__}.UniformAgent"  # an import-path spec, importable by worker processes too


def uniform_specs(*params: str) -> tuple[AgentSpec, ...]:
    return tuple(parse_agent_spec(f"{UNIFORM}:{text}" if text else UNIFORM) for text in params)


# ----------------------------------------------------------------------------- agent specs
@pytest.mark.parametrize(
    ("text", "name", "params"),
    [
        ("random", "random", ()),
        ("value:aggression=1.2", "value", (("aggression", 1.2),)),
        (
            "ismcts:iterations=500, bluff=true,mode=fast",
            "ismcts",
            (("iterations", 500), ("bluff", True), ("mode", "fast")),
        ),
        ("pkg.mod.Bot:x=none", "pkg.mod.Bot", (("x", None),)),
    ],
)
def test_agent_spec_parses_name_and_typed_params(text: str, name: str, params: tuple) -> None:
    spec = parse_agent_spec(text)
    assert (spec.name, spec.params, spec.label) == (name, params, text)


@pytest.mark.parametrize("text", ["", "value:", "value:aggression", "value:a=1,a=2", "va lue", "value:1x=2", ":a=1"])
def test_agent_spec_rejects_bad_syntax(text: str) -> None:
    with pytest.raises(AgentSpecError, match="agent"):
        parse_agent_spec(text)


def test_agent_spec_unknown_name_suggests_close_match() -> None:
    with pytest.raises(AgentSpecError, match=r"unknown agent 'randm' \(did you mean 'random'\?\)"):
        build_agent(parse_agent_spec("randm"))


def test_agent_spec_bad_params_name_the_agent_and_accepted_params() -> None:
    with pytest.raises(AgentSpecError, match=r"UniformAgent:patiance=2.*accepts: patience=0"):
        build_agent(parse_agent_spec(f"{UNIFORM}:patiance=2"))
    with pytest.raises(AgentSpecError, match="cannot import module"):
        build_agent(parse_agent_spec("no_such_module.Bot"))


def test_registry_agents_build_with_params() -> None:
    import agents

    assert {"random", "value", "hoarder"} <= set(agents.AGENTS)
    build_agent(parse_agent_spec("random"))
    with pytest.raises(AgentSpecError, match="random:x=1"):
        build_agent(parse_agent_spec("random:x=1"))


# ----------------------------------------------------------------------------- statistics by hand
# Two agents, four duplicate deals, each played in both seatings (A first, then B first).
# Seats are (A, B) in the first game of a deal and (B, A) in the second.
HAND_GAMES = [
    Outcome(0, ("A", "B"), (10, 5), (0,)),  # A wins
    Outcome(0, ("B", "A"), (6, 9), (1,)),  # A wins            -> deal 0: A 2 wins, VP 19; B 0, VP 11
    Outcome(1, ("A", "B"), (8, 4), (0,)),  # A wins
    Outcome(1, ("B", "A"), (7, 3), (0,)),  # B wins            -> deal 1: A 1, VP 11; B 1, VP 11
    Outcome(2, ("A", "B"), (6, 6), (0, 1)),  # shared: 1/2 each
    Outcome(2, ("B", "A"), (9, 5), (0,)),  # B wins            -> deal 2: A 0.5, VP 11; B 1.5, VP 15
    Outcome(3, ("A", "B"), (2, 12), (1,)),  # B wins
    Outcome(3, ("B", "A"), (10, 4), (0,)),  # B wins           -> deal 3: A 0, VP 6; B 2, VP 22
]


def test_statistics_match_hand_computation() -> None:
    rows = {row.agent: row for row in agent_stats(HAND_GAMES)}
    a, b = rows["A"], rows["B"]
    assert (a.games, a.deals, a.wins, b.wins) == (8, 4, 3.5, 4.5)
    # Win rate: 3.5 / 8. Cluster residuals s_g - p * n_g = 2 - 0.875, 1 - 0.875, 0.5 - 0.875, 0 - 0.875.
    assert a.win_rate.estimate == 0.4375
    se = math.sqrt(4 / 3 * (1.125**2 + 0.125**2 + 0.375**2 + 0.875**2) / 8**2)  # = 0.21348...
    assert se == pytest.approx(0.213478, abs=1e-6)
    assert a.win_rate.method == CI_CLUSTER
    assert (a.win_rate.low, a.win_rate.high) == pytest.approx((0.4375 - 1.959964 * se, 0.4375 + 1.959964 * se))
    assert (a.win_rate.low, a.win_rate.high) == pytest.approx((0.019091, 0.855909), abs=1e-6)
    # B's residuals are A's negated, so the same standard error around 4.5 / 8.
    assert (b.win_rate.low, b.win_rate.high) == pytest.approx((0.5625 - 1.959964 * se, 0.5625 + 1.959964 * se))
    # Wilson over the 8 games: centre (p + z²/2n) / (1 + z²/n), half-width z / (1 + z²/n) * sqrt(p(1-p)/n + z²/4n²).
    z2 = 1.959964**2
    centre = (0.4375 + z2 / 16) / (1 + z2 / 8)
    half = 1.959964 / (1 + z2 / 8) * math.sqrt(0.4375 * 0.5625 / 8 + z2 / 256)
    assert (a.wilson.low, a.wilson.high) == pytest.approx((centre - half, centre + half))
    assert (a.wilson.low, a.wilson.high) == pytest.approx((0.174497, 0.741053), abs=1e-5)
    # Mean VP: A 47 / 8; residuals 19 - 11.75, 11 - 11.75, 11 - 11.75, 6 - 11.75.
    assert a.mean_vp.estimate == 5.875
    vp_se = math.sqrt(4 / 3 * (7.25**2 + 0.75**2 + 0.75**2 + 5.75**2) / 8**2)
    assert (a.mean_vp.low, a.mean_vp.high) == pytest.approx((5.875 - 1.959964 * vp_se, 5.875 + 1.959964 * vp_se))
    assert b.mean_vp.estimate == 59 / 8
    # Seat 0 won 1 + 0 + 1 + 1 + 0.5 + 1 + 0 + 1 of the 8 games.
    assert seat_win_rates(HAND_GAMES) == [5.5 / 8, 2.5 / 8]
    assert pairwise_win_shares(HAND_GAMES) == {"A": {"B": 0.4375}, "B": {"A": 0.5625}}
    # Best first.
    assert [row.agent for row in agent_stats(HAND_GAMES)] == ["B", "A"]


def test_statistics_degenerate_interval_falls_back_to_wilson_over_deals() -> None:
    # A wins all 6 games of 3 deals: no spread between deals, so Wilson with 3 trials (one per deal),
    # whose lower bound at p = 1 is 1 / (1 + z²/3).
    games = [
        Outcome(deal, seats, (9, 1) if seats[0] == "A" else (1, 9), (0,) if seats[0] == "A" else (1,))
        for deal in range(3)
        for seats in (("A", "B"), ("B", "A"))
    ]
    a = {row.agent: row for row in agent_stats(games)}["A"]
    assert a.win_rate.method == CI_WILSON_DEALS
    assert (a.win_rate.estimate, a.win_rate.high) == (1.0, 1.0)
    assert a.win_rate.low == pytest.approx(1 / (1 + 1.959964**2 / 3))
    assert a.wilson.low == pytest.approx(1 / (1 + 1.959964**2 / 6))  # over the 6 games


def test_wilson_interval_known_value_and_z() -> None:
    assert pytest.approx(1.959964, abs=1e-6) == Z_95
    interval = wilson_interval(5, 10)  # textbook: 5/10 -> [0.2366, 0.7634]
    assert (interval.low, interval.high) == pytest.approx((0.2366, 0.7634), abs=1e-4)


@pytest.mark.parametrize(
    ("vp", "winners", "ranks"),
    [
        ((5, 9), (1,), [1, 0]),
        ((9, 9), (0,), [0, 1]),  # VP tie broken by the rules: still ranked
        ((5, 9, 9, 3), (1,), [2, 0, 1, 3]),
        ((4, 4, 2), (0, 1), [0, 0, 1]),  # shared win
    ],
)
def test_finishing_ranks_put_winners_first_then_vp(vp, winners, ranks) -> None:
    assert finishing_ranks(vp, winners) == ranks


def test_openskill_ratings_order_agents_and_are_reproducible() -> None:
    ratings = openskill_ratings(HAND_GAMES)
    assert ratings["B"].mu > 25 > ratings["A"].mu
    assert ratings == openskill_ratings(HAND_GAMES)
    assert ratings["A"].ordinal == ratings["A"].mu - 3 * ratings["A"].sigma


# ----------------------------------------------------------------------------- duplicate deals
@pytest.mark.parametrize(
    ("players", "seatings", "games_per_deal"),
    [(2, "cyclic", 2), (3, "cyclic", 3), (4, "cyclic", 4), (3, "all", 6), (4, "all", 24)],
)
def test_seat_orders_put_every_agent_in_every_seat(players: int, seatings: str, games_per_deal: int) -> None:
    orders = seat_orders(players, seatings)
    assert len(orders) == len(set(orders)) == games_per_deal
    for seat in range(players):
        counts = [sum(order[seat] == position for order in orders) for position in range(players)]
        assert len(set(counts)) == 1  # each lineup position sits in each seat equally often


def test_duplicate_deals_reuse_the_seed_with_permuted_seats() -> None:
    config = TournamentConfig(uniform_specs("", "patience=1", "patience=2"), num_players=3, deals=4, seed=7)
    tasks = config.schedule()
    assert [task.index for task in tasks] == list(range(12))
    deal_seeds = {task.deal: task.seed for task in tasks}
    assert len(set(deal_seeds.values())) == 4  # a new deal is a new seed
    for deal in range(4):
        games = [task for task in tasks if task.deal == deal]
        assert {task.seed for task in games} == {deal_seeds[deal]}
        assert sorted(task.lineup for task in games) == [(0, 1, 2), (1, 2, 0), (2, 0, 1)]
    # The same seed deals the same deck, whoever sits where.
    decks = {Game(3, seed=task.seed).deck for task in tasks if task.deal == 0}
    assert len(decks) == 1
    # Agent seeds come from the tournament seed and the game index, and differ per seat and game.
    agent_seeds = [seed for task in tasks for seed in task.agent_seeds]
    assert len(set(agent_seeds)) == len(agent_seeds)
    assert TournamentConfig(config.agents, num_players=3, deals=4, seed=7).schedule() == tasks
    assert TournamentConfig(config.agents, num_players=3, deals=4, seed=8).schedule()[0].seed != tasks[0].seed


def test_round_robin_tables_replay_the_same_deals() -> None:
    config = TournamentConfig(uniform_specs("", "patience=1", "patience=2"), mode=ROUND_ROBIN, deals=2)
    tasks = config.schedule()
    assert config.tables() == [(0, 1), (0, 2), (1, 2)]
    assert len(tasks) == 2 * 3 * 2
    for deal in range(2):
        assert len({task.seed for task in tasks if task.deal == deal}) == 1
        assert sorted(task.lineup for task in tasks if task.deal == deal) == [
            (0, 1),
            (0, 2),
            (1, 0),
            (1, 2),
            (2, 0),
            (2, 1),
        ]


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"num_players": 3}, "3-player head-to-head needs 3 agents"),
        ({"mode": ROUND_ROBIN, "num_players": 4}, "needs at least 4 agents"),
        ({"deals": 0}, "deals must be a positive int"),
        ({"seatings": "random"}, "seatings must be one of"),
        ({"penalty": "harsh"}, "penalty must be one of"),
        ({"seed": -1}, "seed must be a non-negative int"),
    ],
)
def test_config_rejects_bad_settings(kwargs: dict, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        TournamentConfig(uniform_specs("", "patience=1"), **kwargs)


def test_round_robin_rejects_repeated_agents() -> None:
    with pytest.raises(ValueError, match="distinct agents"):
        TournamentConfig(uniform_specs("", "", "patience=1"), mode=ROUND_ROBIN)


# ----------------------------------------------------------------------------- running
def test_short_tournament_is_identical_for_any_worker_count_and_writes_results(tmp_path) -> None:
    config = TournamentConfig(uniform_specs("", "patience=1"), deals=3, seed=11)
    one = run_tournament(config, workers=1, progress=False)
    two = run_tournament(config, workers=2, progress=False)
    assert [record.index for record in one.records] == list(range(6))
    assert one.records == two.records  # GameResult equality ignores the timings
    assert [record.result.seed for record in one.records][::2] == [record.result.seed for record in one.records][1::2]
    assert one.agents == two.agents and one.ratings == two.ratings
    paths = write_results(two, tmp_path)
    assert sorted(path.name for path in paths) == sorted(
        ["summary.csv", "games.csv", "pairwise.csv", "results.json", "winrate.png"]
    )
    with (tmp_path / "summary.csv").open() as handle:
        summary = list(csv.DictReader(handle))
    assert {row["agent"] for row in summary} == {UNIFORM, f"{UNIFORM}:patience=1"}
    assert sum(float(row["wins"]) for row in summary) == pytest.approx(6)
    with (tmp_path / "games.csv").open() as handle:
        games = list(csv.DictReader(handle))
    assert [int(row["seed"]) for row in games] == [record.result.seed for record in one.records]
    document = json.loads((tmp_path / "results.json").read_text())
    assert document["config"]["deals"] == 3 and len(document["games"]) == 6
    assert document["agents"][0]["win_rate"] == one.agents[0].win_rate.estimate
    assert (tmp_path / "winrate.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_a_preset_deals_its_cards_in_every_game(tmp_path) -> None:
    config = TournamentConfig(uniform_specs("", "patience=1"), deals=2, seed=3, preset="small")
    result = run_tournament(config, workers=1, progress=False, log_dir=tmp_path)
    assert config.to_json()["preset"] == "small" and len(result.records) == 4
    for record in result.records:
        game = load_log(tmp_path / f"game-{record.index:06d}.json")
        assert game.config.preset == "small" and tuple(game.state.vp) == record.result.vp
    with pytest.raises(ValueError, match="preset"):
        TournamentConfig(uniform_specs("", "patience=1"), num_players=3, preset="small")


def test_saved_logs_replay_to_the_recorded_results(tmp_path) -> None:
    config = TournamentConfig(uniform_specs("", "patience=1"), deals=2, seed=3, penalty="bluffs")
    result = run_tournament(config, workers=1, progress=False, log_dir=tmp_path)
    for record in result.records:
        path = tmp_path / f"game-{record.index:06d}.json"
        game = load_log(path)  # replays and checks every chance outcome and the result
        assert game.is_over and game.seed == record.result.seed and game.config.penalty == "bluffs"
        assert tuple(game.state.vp) == record.result.vp and tuple(game.state.winners) == record.result.winners
        metadata = json.loads(path.read_text())["metadata"]
        assert metadata["agents"] == list(record.result.agents)
        assert metadata["agent_seeds"] == list(record.result.agent_seeds)
        assert (metadata["game_index"], metadata["deal"], metadata["tournament_seed"]) == (record.index, record.deal, 3)


def test_only_games_reproduces_single_games() -> None:
    config = TournamentConfig(uniform_specs("", "patience=1"), deals=3, seed=5)
    full = run_tournament(config, workers=1, progress=False)
    again = run_tournament(config, workers=1, progress=False, only_games=[4, 1])
    assert again.records == [full.records[1], full.records[4]]
    with pytest.raises(ValueError, match=r"games 0\.\.5"):
        run_tournament(config, workers=1, progress=False, only_games=[6])


def test_play_game_reports_an_illegal_action_or_a_crash_with_its_game() -> None:
    with pytest.raises(AgentError, match=r"agent 'cheat' in seat 0 \(game seed 9\).*not legal"):
        play_game([IllegalAgent(), UniformAgent()], 9, labels=["cheat", "fair"])
    with pytest.raises(AgentError, match=r"agent 'fair' in seat 1 crashed \(game seed 9, .*KeyError: 'no plan'"):
        play_game([UniformAgent(), CrashingAgent()], 9, labels=["cheat", "fair"])


@pytest.mark.parametrize("workers", [1, 2])
def test_tournament_names_the_game_an_agent_broke(workers: int) -> None:
    config = TournamentConfig((parse_agent_spec(f"{__name__}.IllegalAgent"), parse_agent_spec(UNIFORM)), deals=2)
    with pytest.raises(AgentError, match=r"game \d \(deal \d, seed \d+\): agent '.*IllegalAgent'"):
        run_tournament(config, workers=workers, progress=False)


def test_command_line_runs_and_prints_the_summary(tmp_path, capsys) -> None:
    code = main(
        [
            "--agents",
            UNIFORM,
            f"{UNIFORM}:patience=1",
            UNIFORM,
            "--games",
            "3",
            "--workers",
            "1",
            "--out",
            str(tmp_path),
            "--no-progress",
            "--no-plot",
        ]
    )
    output = capsys.readouterr().out
    assert code == 0
    assert "head-to-head, 3 players: 3 games (1 deals x 3 seatings)" in output
    assert "Only 1 deals" in output and "Seat win rates: seat 0" in output
    assert (tmp_path / "summary.csv").exists() and not (tmp_path / "winrate.png").exists()


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--agents", "randm", "random"], "unknown agent 'randm'"),
        (["--agents", "random:x", "random"], "bad agent parameter 'x'"),
        (["--agents", "random", "random", "random", "random", "random"], "5 agents cannot share one table"),
        (["--agents", "random", "random", "--mode", "round-robin"], "distinct agents"),
        (["--agents", "random", "random", "--games", "0"], "expected a positive integer"),
        (["--players", "2"], "--agents is required"),
    ],
)
def test_command_line_rejects_bad_arguments(argv: list[str], message: str, capsys) -> None:
    with pytest.raises(SystemExit) as exit_info:
        main([*argv, "--no-progress"])
    assert exit_info.value.code == 2
    assert message in capsys.readouterr().err


# ----------------------------------------------------------------------------- help and documentation
_SPEC_EXAMPLE = re.compile(r"\b(random|value|hoarder|ismcts|ppo):([a-z_]+=[^\s`\"')]+)")


def spec_examples(text: str) -> list[str]:
    """Every registry-agent spec with parameters written in ``text`` (``hoarder:aggression=1.2``)."""
    return [f"{name}:{params.rstrip('.,;')}" for name, params in _SPEC_EXAMPLE.findall(text)]


def documented_texts() -> dict[str, str]:
    from experiments import tournament
    from experiments.common import match

    parser = tournament.build_parser()
    return {
        "tournament docstring": tournament.__doc__ or "",
        "tournament --help": parser.format_help(),
        "tournament --list-agents": tournament.agent_list(),
        "match docstring": match.__doc__ or "",
        "parse_agent_spec docstring": match.parse_agent_spec.__doc__ or "",
    }


def test_every_documented_agent_spec_example_builds() -> None:
    """The help's old example ``value:aggression=1.2`` was rejected (aggression is a hoarder parameter)."""
    found = 0
    for where, text in documented_texts().items():
        for example in spec_examples(text):
            found += 1
            try:
                build_agent(parse_agent_spec(example))
            except AgentSpecError as error:
                raise AssertionError(f"{where}: example {example!r} does not build: {error}") from error
    assert found >= 5


def test_the_docs_agent_spec_examples_use_real_parameters() -> None:
    """The README's and docs/' examples may name files that do not exist here (``ppo:path=FILE``),
    so only the parameter names are checked, against what --list-agents shows."""
    from experiments.common.match import describe_agent

    root = Path(__file__).resolve().parents[2]
    documents = [root / "README.md", *sorted((root / "docs").glob("*.md"))]
    examples = [example for document in documents for example in spec_examples(document.read_text())]
    assert examples
    for example in examples:
        name, _, params = example.partition(":")
        known = {parameter.partition("=")[0] for parameter in describe_agent(name).parameters or ()}
        for key in re.findall(r"([a-z_]+)=", params):
            assert key in known, f"README example {example!r}: {name} has no parameter {key!r} (it has {sorted(known)})"


def test_every_command_line_option_has_honest_help() -> None:
    """Each option has help text; each one with a default says what it is; flags do not claim
    ``(default: True)`` (a ``--no-x`` flag is off by default)."""
    import argparse

    from experiments.tournament import build_parser

    for action in build_parser()._actions:
        if isinstance(action, argparse._HelpAction):
            continue
        name = "/".join(action.option_strings)
        assert action.help and action.help != argparse.SUPPRESS, f"{name} has no help text"
        assert "%(default)" not in action.help and "(default: True)" not in action.help, name
        if action.default not in (None, False):
            assert "default" in action.help, f"{name} does not say its default {action.default!r}"


def test_list_agents_shows_whole_descriptions_and_parameters(capsys) -> None:
    """Before: one docstring line per agent, cut mid-sentence, and no parameters."""
    from agents import HoarderAgent, ValueAgent

    assert main(["--list-agents"]) == 0
    output = " ".join(capsys.readouterr().out.split())
    assert "seeded by start_game (the same seed gives the same choices). It bids and refuses at random" in output
    for cls in (ValueAgent, HoarderAgent):
        first_paragraph = " ".join(cls.__doc__.split("\n\n")[0].split())
        assert first_paragraph in output
        for key in cls.defaults:
            assert f"{key}=" in output
    assert "aggression=1.3" in output and "iterations=60" in output


# ----------------------------------------------------------------------------- the win-rate plot
def fake_result(num_agents: int, long_labels: bool) -> TournamentResult:
    """A 2-player round-robin result, without playing, in which the agent with the higher number
    always wins: agent k wins k / (num_agents - 1) of its games (the best all, the worst none)."""
    from experiments.common.match import GameResult
    from experiments.tournament import GameRecord

    names = [("pkg.module.VeryLongAgentName:depth=" if long_labels else "agent") + str(k) for k in range(num_agents)]
    specs = tuple(parse_agent_spec(name) for name in names)
    config = TournamentConfig(specs, mode=ROUND_ROBIN, deals=4)
    records = []
    for task in config.schedule():
        first, second = task.lineup
        winner = 0 if first > second else 1
        result = GameResult(task.seed, (names[first], names[second]), task.agent_seeds, (5, 3) if winner == 0 else
                            (3, 5), (winner,), (0,) * 5, (3,) * 5, 100, (50, 50), (0.0, 0.0))  # fmt: skip
        records.append(GameRecord(task.index, task.table, task.deal, task.seating, result))
    return TournamentResult(config, records)


@pytest.mark.parametrize("long_labels", [False, True], ids=["short", "long"])
@pytest.mark.parametrize("num_agents", [2, 3, 5, 8])
def test_win_rate_plot_draws_nothing_over_the_bars(num_agents: int, long_labels: bool) -> None:
    """Texts and the legend overlap no bar, no interval and no other text, and stay in the figure."""
    from matplotlib.transforms import Bbox

    from experiments.tournament import win_rate_figure

    result = fake_result(num_agents, long_labels)
    rates = [row.win_rate.estimate for row in result.agents]
    assert max(rates) == 1.0 and min(rates) == 0.0  # the extremes where labels used to collide
    figure = win_rate_figure(result)
    figure.canvas.draw()
    renderer = figure.canvas.get_renderer()
    axes = figure.axes[0]
    shapes = [patch.get_window_extent(renderer) for patch in axes.patches]  # the bars
    shapes += [line.get_window_extent(renderer) for line in axes.lines]  # interval caps, the fair-share line
    for collection in axes.collections:  # the intervals
        shapes += [Bbox(axes.transData.transform(segment)) for segment in collection.get_segments()]
    texts = [text for text in axes.texts] + [axes.title, axes.xaxis.label]
    texts += [label for label in axes.get_yticklabels() + axes.get_xticklabels() if label.get_text()]
    boxes = [text.get_window_extent(renderer) for text in texts] + [
        legend.get_window_extent(renderer) for legend in figure.legends
    ]
    assert len(figure.legends) == 1
    inside = figure.bbox
    for index, box in enumerate(boxes):
        assert inside.x0 <= box.x0 and box.x1 <= inside.x1 and inside.y0 <= box.y0 and box.y1 <= inside.y1, box
        assert not any(box.overlaps(shape) for shape in shapes), f"text or legend #{index} lies over a bar"
        assert not any(box.overlaps(other) for other in boxes[index + 1 :]), f"text or legend #{index} overlaps another"
