"""The experiments' command lines keep one set of conventions (experiments/common/cli.py): the usage
line names the command as it was run, the epilog says how to run it, every flag has help, and
no help text shows a default that misreads (``--no-progress (default: True)``)."""

from __future__ import annotations

import argparse
import re
import tomllib
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from experiments import openspiel_cfr, play, replay, serve, tournament, train_network, train_ppo, train_rllib
from experiments.benchmarks import efg as efg_benchmark
from experiments.benchmarks import engine as benchmark
from experiments.benchmarks import instructions as instruction_count
from experiments.common.cli import CONSOLE_SCRIPTS, HelpFormatter, add_config_arguments, invocation_note, program_name
from experiments.studies import belief_error, exploitability, learning_curves, openspiel_duel

ROOT = Path(__file__).resolve().parents[2]

#: Every command line of experiments/ whose parser this file checks, by module.
PARSERS: dict[str, Callable[[], argparse.ArgumentParser]] = {
    "experiments.studies.belief_error": belief_error.build_parser,
    "experiments.benchmarks.efg": efg_benchmark.build_parser,
    "experiments.benchmarks.engine": benchmark.build_parser,
    "experiments.benchmarks.instructions": instruction_count.build_parser,
    "experiments.openspiel_cfr": openspiel_cfr.build_parser,
    "experiments.studies.exploitability": exploitability.build_parser,
    "experiments.studies.learning_curves": learning_curves.build_parser,
    "experiments.studies.openspiel_duel": openspiel_duel.build_parser,
    "experiments.play": play.build_parser,
    "experiments.replay": replay.build_parser,
    "experiments.serve": serve.build_parser,
    "experiments.tournament": tournament.build_parser,
    "experiments.train_network": train_network.build_parser,
    "experiments.train_ppo": train_ppo.build_parser,
    "experiments.train_rllib": train_rllib.build_parser,
}


def test_the_console_scripts_are_the_ones_pyproject_installs() -> None:
    scripts = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["scripts"]
    assert {name: target.removesuffix(":main") for name, target in scripts.items()} == {
        script: module for module, script in CONSOLE_SCRIPTS.items()
    }
    assert all(target.endswith(":main") for target in scripts.values())


@pytest.mark.parametrize(
    ("argv0", "module", "expected"),
    [
        ("/venv/bin/biblios-tournament", "experiments.tournament", "biblios-tournament"),
        ("C:/venv/Scripts/biblios-play.exe", "experiments.play", "biblios-play"),
        ("/repo/experiments/tournament.py", "experiments.tournament", "python -m experiments.tournament"),
        ("/venv/bin/biblios-play", "experiments.tournament", "python -m experiments.tournament"),  # another script
        ("/repo/experiments/benchmark.py", "experiments.benchmarks.engine", "python -m experiments.benchmarks.engine"),
    ],
)
def test_the_usage_line_names_the_command_as_it_was_run(
    monkeypatch: pytest.MonkeyPatch, argv0: str, module: str, expected: str
) -> None:
    monkeypatch.setattr("sys.argv", [argv0, "--help"])
    assert program_name(module) == expected
    if module in PARSERS:
        assert PARSERS[module]().format_usage().startswith(f"usage: {expected} ")


@pytest.mark.parametrize("module", sorted(PARSERS))
def test_every_command_line_follows_the_conventions(module: str) -> None:
    parser = PARSERS[module]()
    assert parser.prog == program_name(module)
    assert parser.epilog and invocation_note(module) in parser.epilog
    for action in parser._actions:
        assert action.help, f"{module}: {action.option_strings} has no help text"
    text = " ".join(parser.format_help().split())  # unwrapped, so a default split over lines is seen
    for confusing in ("(default: True)", "(default: False)", "(default: None)", "(default: ["):
        assert confusing not in text, f"{module} help shows {confusing}"


def test_the_invocation_note_names_both_ways_for_a_console_script() -> None:
    assert invocation_note("experiments.play") == (
        "Run as biblios-play (installed with the package) or python -m experiments.play; usage shows the one you ran."
    )
    assert invocation_note("experiments.benchmarks.engine") == "Run as python -m experiments.benchmarks.engine."


def test_the_help_formatter_leaves_out_defaults_that_misread() -> None:
    parser = argparse.ArgumentParser(formatter_class=HelpFormatter)
    parser.add_argument("--games", type=int, default=10, help="games to play")
    parser.add_argument("--no-plot", action="store_true", help="do not draw the plot")
    parser.add_argument("--progress", action=argparse.BooleanOptionalAction, default=True, help="show progress")
    parser.add_argument("--out", help="output folder")
    parser.add_argument("--seed", type=int, default=0, help="seed (default 0)")
    parser.add_argument("--opponents", nargs="+", default=["value", "100%"], help="the others")
    text = " ".join(parser.format_help().split())
    assert "games to play (default: 10)" in text
    assert re.search(r"do not draw the plot(?! \(default)", text)
    assert re.search(r"show progress(?! \(default)", text)
    assert re.search(r"output folder(?! \(default)", text)
    assert "seed (default 0) (default" not in text
    assert "the others (default: value 100%)" in text


def test_a_one_word_list_default_is_shown_as_typed() -> None:
    parser = argparse.ArgumentParser(formatter_class=HelpFormatter)
    parser.add_argument("--layers", type=lambda text: tuple(map(int, text.split(","))), default=(64, 32), help="layers")
    assert "layers (default: 64,32)" in " ".join(parser.format_help().split())


def _default_folder() -> Path:
    return Path("runs/today")


@dataclass(frozen=True)
class _Settings:
    """A config as a command declares one: each field's option in its metadata."""

    games: int = field(default=10, metadata={"help": "games to play", "section": "play"})
    players: tuple[int, ...] = field(default=(2, 3), metadata={"help": "player counts", "choices": (2, 3, 4)})
    layers: tuple[int, ...] = field(
        default=(8, 8),
        metadata={"help": "layers", "type": lambda text: tuple(map(int, text.split(","))), "nargs": None},
    )
    rate: float = field(default=0.5, metadata={"help": "a rate", "section": "learn"})
    data: Path | None = field(default=None, metadata={"help": "a file", "metavar": "FILE"})
    out: Path = field(default_factory=_default_folder, metadata={"help": "output folder (default: dated)"})
    plot: bool = field(default=True, metadata={"help": "draw the plot"})
    progress: bool = field(default=True, metadata={"help": "hide progress (default: shown)", "flag": "--no-progress"})


def test_a_config_declares_its_options_once() -> None:
    """add_config_arguments: a field's name, default, type and help make its option; sections make groups."""
    parser = argparse.ArgumentParser(formatter_class=HelpFormatter)
    add_config_arguments(parser, _Settings)
    assert parser.parse_args([]) == argparse.Namespace(
        games=10, players=[2, 3], layers=(8, 8), rate=0.5, data=None, out=None, plot=True, progress=True
    )
    args = parser.parse_args([
        "--games", "3", "--players", "4", "--layers", "5,6", "--rate", "1e-3", "--data", "d.npz", "--out", "o",
        "--no-plot", "--no-progress",
    ])  # fmt: skip
    assert args == argparse.Namespace(
        games=3, players=[4], layers=(5, 6), rate=1e-3, data=Path("d.npz"), out=Path("o"), plot=False, progress=False
    )
    text = parser.format_help()
    assert [group.title for group in parser._action_groups][-2:] == ["play", "learn"]
    assert "--data FILE" in text and "[--plot | --no-plot]" in text and "[--no-progress]" in text
    flat = " ".join(text.split())
    assert "player counts (default: 2 3)" in flat and "layers (default: 8,8)" in flat
    with pytest.raises(SystemExit):
        parser.parse_args(["--players", "5"])


def test_a_config_field_without_help_is_refused() -> None:
    @dataclass
    class Unhelpful:
        games: int = field(default=1, metadata={"hlep": "a typo"})

    with pytest.raises(TypeError, match=r"Unhelpful\.games"):
        add_config_arguments(argparse.ArgumentParser(), Unhelpful)


def test_the_pre_commit_hooks_run_the_commands_of_the_quality_gate() -> None:
    """.pre-commit-config.yaml and .ci/gate run the same checks: neither can drift alone."""
    text = (ROOT / ".pre-commit-config.yaml").read_text()  # read without a YAML library: no skip

    def values(key: str) -> list[str]:
        return re.findall(rf"^ +-? ?{key}: (.+)$", text, flags=re.MULTILINE)

    entries = values("entry")
    assert len(values("id")) == len(entries)
    assert values("language") == ["system"] * len(entries) and values("pass_filenames") == ["false"] * len(entries)
    gate = [
        line.strip()
        for line in (ROOT / ".ci" / "gate").read_text().splitlines()
        if line.strip().startswith(("ruff", "mypy"))
    ]
    assert entries == gate


def _sigint_argv(module: str, folder: Path) -> list[str]:
    """A run of the console script of ``module`` long enough to be interrupted mid-way."""
    from replay_helpers import save_game

    if module == "experiments.replay":  # steps through a game, waiting for Enter
        return [str(save_game(folder / "game.json", ["value", "random"], 3)), "--no-color"]
    return {
        "experiments.play": ["--players", "2", "--seed", "1"],  # waits for the human's move
        "experiments.serve": ["--port", "0"],  # serves until stopped
        "experiments.tournament": ["--agents", "value", "value", "--deals", "400", "--workers", "1",
                                   "--out", str(folder / "t")],
        "experiments.train_network": ["--players", "2", "--iterations", "0", "--bootstrap-games", "400",
                                      "--workers", "1", "--out", str(folder / "n")],
        "experiments.train_selfplay": ["--players", "2", "--decisions", "100000000", "--num-games", "8",
                                       "--rollout-steps", "8", "--hidden", "16", "--eval-every", "0",
                                       "--out", str(folder / "s")],
    }[module]  # fmt: skip


@pytest.mark.parametrize("module", sorted(CONSOLE_SCRIPTS))
def test_no_console_script_prints_a_traceback_on_sigint(module: str, tmp_path: Path) -> None:
    """Ctrl-C in the middle of every console script's work ends it with a line of text, never a
    traceback (a new console script needs its case in :func:`_sigint_argv`)."""
    import signal
    import subprocess
    import sys
    import time

    command = [sys.executable, "-m", module, *_sigint_argv(module, tmp_path)]
    process = subprocess.Popen(
        command, cwd=ROOT, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    assert process.stdout is not None
    process.stdout.readline()  # it has started its work
    time.sleep(1.5)
    process.send_signal(signal.SIGINT)
    stdout, stderr = process.communicate(timeout=120)
    assert "Traceback" not in stdout + stderr, stderr[-3000:]
    assert process.returncode in (0, 1, 130), (process.returncode, stderr[-3000:])  # done, abandoned, interrupted
