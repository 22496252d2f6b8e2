"""The docs cannot drift: generated tables in docs/environment.md match the code, the Python
examples of the README and the guides run, the README stays
an entry point, and the rules document (docs/rules.md) is the one every "RULES §N" reference in
the repository points into."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

from biblios_env.actions import table_markdown
from biblios_env.cards import (
    CARD_CHURCH,
    CARD_VALUE,
    CARDS_PER_CATEGORY,
    CATEGORY_NAMES,
    CHURCH_IDS,
    GOLD_IDS_BY_VALUE,
    LETTERS,
)
from biblios_env.observations import layout_markdown

ROOT = Path(__file__).resolve().parents[2]
README = (ROOT / "README.md").read_text()
#: The page with the generated action table and observation layout.
ENVIRONMENT = (ROOT / "docs" / "environment.md").read_text()
#: The documents whose ```python examples run, in this order (the game-records example of
#: docs/experiments.md reads the tournament its example before wrote). docs/frameworks.md's
#: examples need the RL frameworks: tests/test_experiments/test_frameworks.py runs them.
EXAMPLE_DOCUMENTS = ("README.md", "docs/environment.md", "docs/experiments.md", "docs/training.md")
#: The README is the entry point, not the manual: it stays under this many characters.
README_LIMIT = 15_000
RULES_PATH = ROOT / "docs" / "rules.md"
RULES = RULES_PATH.read_text()

#: The section titles of the rules; docstrings name sections by them ("Phase 2, the auctions
#: (RULES §5)", "Church cards (RULES §4)", "The worked examples of RULES §8").
SECTION_TITLES = {
    1: "Components and canonical card ids",
    2: "Setup",
    3: "Phase 1 — Gifts",
    4: "Church cards",
    5: "Phase 2 — Auctions",
    6: "End of the game and scoring",
    7: "What each player knows",
    8: "Worked examples",
}
#: A section heading of docs/rules.md: "## §5. Phase 2 — Auctions".
SECTION_HEADING = re.compile(r"^## §(\d+)\. (.+)$", re.M)
#: A reference into the rules: "§5", "§5.3" (step 3 of §5's numbered list), as in "RULES §5.3-5".
SECTION_REFERENCE = re.compile(r"§\s*(\d+)(?:\.(\d+))?")
#: A link or path to the rules outside the repository (the shared folder beside the clone).
OUTSIDE_LINK = re.compile(r"(?:\.\./|/work/)shared\b|\bshared/(?:RULES|seeds|STYLE)")
TEXT_SUFFIXES = (".py", ".md", ".ipynb", ".toml", ".txt", ".cfg", ".json", ".yml", ".yaml", "")
ASSUMPTION_MARKER = "**Assumption:**"


def _generated_block(source: str) -> str:
    match = re.search(rf"<!-- generated: {re.escape(source)} -->\n(.*?)\n<!-- end generated -->", ENVIRONMENT, re.S)
    assert match, f"docs/environment.md has no generated block for {source}"
    return match.group(1)


def _repository_text_files() -> list[Path]:
    """The text files a clone has: tracked ones and new ones that .gitignore does not exclude."""
    listed = subprocess.run(
        ["git", "ls-files", "--cached", "--others", "--exclude-standard", "-z"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    paths = [ROOT / name for name in listed.split("\0") if name]
    return [path for path in paths if path.is_file() and path.suffix in TEXT_SUFFIXES]


def _rules_sections() -> dict[int, str]:
    """Section number -> its text, from docs/rules.md."""
    headings = list(SECTION_HEADING.finditer(RULES))
    ends = [heading.start() for heading in headings[1:]] + [len(RULES)]
    return {int(heading.group(1)): RULES[heading.end() : end] for heading, end in zip(headings, ends)}


def test_the_action_table_of_the_docs_matches_the_code() -> None:
    assert _generated_block("biblios_env.actions.table_markdown()") == table_markdown()


def test_the_observation_layout_of_the_docs_matches_the_code() -> None:
    assert _generated_block("biblios_env.observations.layout_markdown()") == layout_markdown()


@pytest.mark.parametrize("document", EXAMPLE_DOCUMENTS)
def test_the_python_examples_run(document: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Every ```python block of ``document`` runs as written, in order, in a scratch folder (they
    save files, and the game-records example reads the tournament the example before it wrote).
    The MaskablePPO example trains 128 steps: a few seconds, so it stays in the default run."""
    blocks = re.findall(r"```python\n(.*?)```", (ROOT / document).read_text(), re.S)
    assert blocks
    monkeypatch.chdir(tmp_path)
    for index, block in enumerate(blocks):
        exec(compile(block, f"{document} python block {index}", "exec"), {})


def test_the_readme_is_an_entry_point() -> None:
    """Short enough to read in a few minutes, with a link to every guide in docs/."""
    assert len(README) < README_LIMIT, f"README.md has {len(README):,} characters (limit {README_LIMIT:,})"
    unlinked = [page.name for page in sorted((ROOT / "docs").glob("*.md")) if f"(docs/{page.name})" not in README]
    assert not unlinked, f"README.md links to no {unlinked}"


def test_rules_document_has_sections_1_to_8_with_their_titles() -> None:
    found = {int(number): title.strip() for number, title in SECTION_HEADING.findall(RULES)}
    assert found == SECTION_TITLES
    assert [int(number) for number, _ in SECTION_HEADING.findall(RULES)] == sorted(SECTION_TITLES)


def test_every_rules_reference_points_at_a_section_that_exists() -> None:
    """Every "§N" in the code, tests, notebooks and docs is a section of docs/rules.md, and every
    "§N.M" a step of that section's numbered list."""
    sections = _rules_sections()
    wrong = []
    for path in _repository_text_files():
        for line_number, line in enumerate(path.read_text().splitlines(), start=1):
            for section, step in SECTION_REFERENCE.findall(line):
                where = f"{path.relative_to(ROOT)}:{line_number}: §{section}{'.' + step if step else ''}"
                if int(section) not in sections:
                    wrong.append(f"{where} (no such section; the rules have §1..§{max(sections)})")
                elif step and not re.search(rf"^\s*{step}\. ", sections[int(section)], re.M):
                    wrong.append(f"{where} (§{section} has no step {step})")
    assert not wrong, "rules references that lead nowhere:\n" + "\n".join(wrong)


def test_no_file_links_to_the_shared_folder_outside_the_repository() -> None:
    """A clone must be complete: README, docs, notebooks and code link to docs/rules.md, not to
    a rules file beside the repository (this test's own patterns excepted)."""
    this_file = Path(__file__).resolve()
    outside = [
        f"{path.relative_to(ROOT)}:{line_number}: {line.strip()[:100]}"
        for path in _repository_text_files()
        if path.resolve() != this_file
        for line_number, line in enumerate(path.read_text().splitlines(), start=1)
        if OUTSIDE_LINK.search(line)
    ]
    assert not outside, "links to files outside the repository:\n" + "\n".join(outside)


def test_relative_links_in_the_markdown_docs_resolve() -> None:
    broken = []
    for document in [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]:
        for target in re.findall(r"\]\(([^)#\s]+)[^)]*\)", document.read_text()):
            if "://" not in target and not (document.parent / target).exists():
                broken.append(f"{document.relative_to(ROOT)}: {target}")
    assert not broken, f"broken links: {broken}"
    assert "](docs/rules.md)" in README


def _card_value_rows() -> list[str]:
    """The rules' table of category-card values by letter, built from biblios_env.cards."""
    rows = []
    for category, name in enumerate(CATEGORY_NAMES):
        first = category * CARDS_PER_CATEGORY
        values = [CARD_VALUE[first + letter] for letter in range(len(LETTERS))]
        cells = " | ".join(str(value) for value in values)
        rows.append(f"| {name} | {first}–{first + CARDS_PER_CATEGORY - 1} | {cells} | {sum(values)} |")
    return rows


def _gold_and_church_rows() -> list[str]:
    rows = [
        f"| {ids[0]}–{ids[-1]} | gold | worth {value} gold ({len(ids)} cards) |"
        for value, ids in GOLD_IDS_BY_VALUE.items()
    ]
    effects = ["+1 to one die", "−1 to one die", "+1 to two different dice", "−1 to two different dice"]
    effects.append("+1 or −1 to one die (the owner chooses)")
    for effect, text in enumerate(effects):
        ids = [card for card in CHURCH_IDS if CARD_CHURCH[card] == effect]
        span = f"{ids[0]}–{ids[-1]}" if len(ids) > 1 else str(ids[0])
        rows.append(f"| {span} | church | {text} |")
    return rows


def test_rules_card_tables_match_the_card_table_of_the_code() -> None:
    header = "| category | ids | " + " | ".join(LETTERS) + " | total |"
    missing = [row for row in [header, *_card_value_rows(), *_gold_and_church_rows()] if row not in RULES]
    assert not missing, "docs/rules.md §1 disagrees with biblios_env.cards:\n" + "\n".join(missing)


def test_readme_rules_decisions_point_at_marked_assumptions() -> None:
    """Each engine decision the README lists cites a section of docs/rules.md that marks
    assumptions, and every marker is written the same way."""
    sections = _rules_sections()
    decisions = README.split("## Rules decisions", 1)[1].split("\n## ", 1)[0]
    cited = [int(number) for number in re.findall(r"RULES §(\d+)\)", decisions)]
    assert len(cited) == decisions.count("\n- ")
    unmarked = [number for number in cited if ASSUMPTION_MARKER not in sections[number]]
    assert not unmarked, f"README's rules decisions cite sections without an assumption: {unmarked}"
    markers = set(re.findall(r"\*\*Assumptions?\b[^*]*\*\*", RULES))
    assert markers == {ASSUMPTION_MARKER, "**Assumptions.**"}, f"assumption markers written differently: {markers}"


def test_the_readme_training_examples_are_the_measured_quick_runs() -> None:
    """The README's training examples are the quick commands of the durations script, each
    measured (command, date, machine) in docs/durations.md and within the README's limit; every
    row is the measurement of the script's command of that name."""
    from experiments.benchmarks.durations import COMMANDS, DOCUMENT, QUICK_LIMIT, read_table

    block = README.split("## Reinforcement learning", 1)[1]
    code = re.search(r"```bash\n(.+?)```", block, re.S).group(1)  # type: ignore[union-attr]
    examples = {line.strip() for line in code.splitlines() if line.startswith("python")}
    quick = {command.command: command for command in COMMANDS if command.quick}
    assert examples == set(quick), examples ^ set(quick)
    rows = read_table(DOCUMENT.read_text())
    assert set(quick.values()) <= {command for command in COMMANDS if command.key in rows}, "an example is not measured"
    assert set(rows) <= {command.key for command in COMMANDS}, "a row of no command of the script"
    for command in COMMANDS:
        if command.key not in rows:  # a full-size run not measured yet (the test suite measures itself last)
            continue
        _, text, seconds, _memory, measured, machine = rows[command.key]
        assert text == f"`{command.command}`", f"{command.key}: measured with another command"
        assert re.fullmatch(r"\d{4}-\d\d-\d\d", measured) and "Python" in machine, rows[command.key]
        if command.quick:
            assert float(seconds) <= QUICK_LIMIT, f"{command.key} took {seconds} s"


def test_every_duration_in_the_docs_names_where_it_was_measured() -> None:
    """A paragraph of the README or docs/ that says how many minutes or hours something takes
    points at its measurement: docs/durations.md, or the training runs' own records (docs/policies.md,
    which quotes them, is one)."""
    duration = re.compile(r"\b\d+(?:[.,]\d+)? ?(?:minutes|min|hours?)\b")
    records = ("durations.md", "policies.md")
    unsourced = [
        f"{path.name}: {paragraph[:120]!r}"
        for path in [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
        if path.name not in records
        for paragraph in path.read_text().split("\n\n")
        if duration.search(paragraph) and not any(source in paragraph for source in records)
    ]
    assert not unsourced, unsourced
