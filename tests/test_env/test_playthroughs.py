"""Golden playthroughs: every file in ``tests/playthroughs/`` regenerates exactly.

A failure prints the unified diff between the golden file and what this code produces, so
the reviewer sees exactly which views, observations, legal actions or outcomes a change
alters. A behaviour-preserving change (a refactor, a speed-up) must leave every file as it
is; a deliberate change in behaviour regenerates them with
``python -m biblios_env.playthrough --update`` and, if observations, legal actions or the
rules changed, bumps the env version (``CHANGELOG.md``).
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Final

import pytest

from biblios_env import actions
from biblios_env.engine import Game
from biblios_env.playthrough import (
    CONFIGURATIONS,
    DEFAULT_DIRECTORY,
    Configuration,
    check,
    coverage,
    golden_path,
    main,
    playthrough,
    recorded_actions_of,
    stale_files,
)

#: Lines of a failing diff shown in the test report (the full diff: ``--check``).
_DIFF_LINES_SHOWN: Final = 300
_IDS: Final = [config.name for config in CONFIGURATIONS]


def _shortened(diff: str) -> str:
    lines = diff.splitlines()
    if len(lines) <= _DIFF_LINES_SHOWN:
        return diff
    hidden = len(lines) - _DIFF_LINES_SHOWN
    return "\n".join(lines[:_DIFF_LINES_SHOWN]) + (
        f"\n... {hidden} more diff lines: run `python -m biblios_env.playthrough --check` for all of them"
    )


def _finished_game(config: Configuration) -> Game:
    """The golden game, rebuilt from the actions its file records."""
    game = Game.from_config(config.game, seed=config.seed)
    for action in recorded_actions_of(golden_path(config).read_text()):
        game.apply(action)
    return game


def _smallest() -> Configuration:
    """The configuration with the smallest golden file: the cheapest one to regenerate."""
    return min(CONFIGURATIONS, key=lambda candidate: golden_path(candidate).stat().st_size)


@pytest.mark.parametrize("config", CONFIGURATIONS, ids=_IDS)
def test_playthrough_regenerates_exactly(config: Configuration) -> None:
    diff = check(config)
    assert not diff, (
        f"the {config.name} playthrough changed: if the change is meant, run `python -m biblios_env.playthrough "
        f"--update` and see CHANGELOG.md on bumping the env version\n{_shortened(diff)}"
    )


def test_every_golden_file_belongs_to_a_configuration() -> None:
    assert not stale_files(), f"golden files no configuration writes: {stale_files()}"


def test_update_writes_what_check_replays() -> None:
    """``--update`` chooses the actions afresh; it must choose the recorded ones, or the files
    would change on the next update without any change in behaviour (the smallest game only)."""
    config = _smallest()
    assert playthrough(config) == golden_path(config).read_text()


@pytest.mark.parametrize("config", CONFIGURATIONS, ids=_IDS)
def test_golden_game_exercises_every_rule(config: Configuration) -> None:
    """Each file shows a whole game to its scores (RULES §6) with a penalty (§5), church cards
    resolved, one of them with a die at 1 or 6 (the bounds of §4), and a gold card auctioned and
    paid for (§5); strict bids leave no way to default."""
    game = _finished_game(config)
    assert game.is_over
    exercised = coverage(game)
    if config.game.strict_bids:
        assert exercised.penalties == 0
    else:
        assert exercised.penalties >= 1 and exercised.penalties_chosen >= 1
    assert exercised.church_changes >= 1 and exercised.church_at_bound >= 1
    assert exercised.gold_card_auctions >= 1
    assert exercised.payments >= 1 and exercised.gold_card_payments >= 1


def test_configurations_cover_every_player_count_and_penalty_variant() -> None:
    combinations = {
        (config.game.num_players, config.game.penalty) for config in CONFIGURATIONS if not config.game.strict_bids
    }
    assert combinations == {(n, penalty) for n in (2, 3, 4) for penalty in ("standard", "bluffs")}
    assert any(config.game.strict_bids for config in CONFIGURATIONS)
    assert {config.game.first_player for config in CONFIGURATIONS} > {0}
    assert len({config.name for config in CONFIGURATIONS}) == len(CONFIGURATIONS)


def test_golden_files_stay_small() -> None:
    sizes = {path.name: path.stat().st_size for path in DEFAULT_DIRECTORY.glob("*.txt")}
    assert max(sizes.values()) < 450_000, sizes


# ----------------------------------------------------------------------------- the checker itself
@pytest.fixture()
def golden_copy(tmp_path: Path) -> Path:
    folder = tmp_path / "playthroughs"
    shutil.copytree(DEFAULT_DIRECTORY, folder)
    return folder


def test_an_edited_golden_line_shows_in_the_diff(golden_copy: Path) -> None:
    config = _smallest()
    path = golden_path(config, golden_copy)
    text = path.read_text()
    path.write_text(text.replace("Dice: Monks 3", "Dice: Monks 5", 1))
    diff = check(config, golden_copy)
    assert "-Dice: Monks 5" in diff and "+Dice: Monks 3" in diff
    assert len([line for line in diff.splitlines() if line.startswith(("-", "+"))]) == 4  # 2 file names, 2 lines


def test_a_recorded_action_that_is_illegal_stops_the_replay_and_says_so(golden_copy: Path) -> None:
    config = _smallest()
    path = golden_path(config, golden_copy)
    text = path.read_text()
    first = text.index("\naction: ") + 1
    line_end = text.index("\n", first)
    path.write_text(text[:first] + f"action: {actions.REFUSE} REFUSE to pay" + text[line_end:])
    diff = check(config, golden_copy)
    assert f"+!! recorded action {actions.REFUSE} is not legal" in diff


def test_recorded_actions_that_end_early_are_reported(golden_copy: Path) -> None:
    config = _smallest()
    path = golden_path(config, golden_copy)
    text = path.read_text()
    path.write_text(text[: text.index("### step 5:")])
    assert "+!! the recorded actions end here, before the game does (5 recorded)" in check(config, golden_copy)


def test_missing_and_stale_files_are_named(golden_copy: Path) -> None:
    config = _smallest()
    golden_path(config, golden_copy).rename(golden_copy / "renamed.txt")
    assert "missing" in check(config, golden_copy)
    assert stale_files(golden_copy) == [golden_copy / "renamed.txt"]


def test_command_line_check_exits_1_with_the_diff(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    config = _smallest()
    path = golden_path(config, tmp_path)
    path.write_text(golden_path(config).read_text().replace("Draw pile:", "Draw pile :", 1))
    assert main(["--check", "--directory", str(tmp_path)]) == 1  # the other files are missing: named, not replayed
    output = capsys.readouterr().out
    assert "-Draw pile :" in output and "+Draw pile:" in output
    assert output.count(" is missing") == len(CONFIGURATIONS) - 1


def test_all_seats_shows_the_other_seats_in_full_where_the_golden_file_has_digests() -> None:
    config = _smallest()
    golden = golden_path(config).read_text()
    full = playthrough(config, recorded_actions_of(golden), all_seats=True)
    steps = golden.count("other seats' views and observations (digests)")
    assert steps == golden.count("### step ") and "(digests):" not in full
    other_seats = config.game.num_players - 1
    assert full.count("\nview of player_") == steps * other_seats
    assert full.count("\nobservation of player_") == steps * other_seats
