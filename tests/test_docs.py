"""The docs cannot drift: generated tables in the README match the code, its Python examples
run, and CI runs the README's test command."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from biblios_env.actions import table_markdown
from biblios_env.observations import layout_markdown

ROOT = Path(__file__).resolve().parent.parent
README = (ROOT / "README.md").read_text()


def _generated_block(source: str) -> str:
    match = re.search(rf"<!-- generated: {re.escape(source)} -->\n(.*?)\n<!-- end generated -->", README, re.S)
    assert match, f"README has no generated block for {source}"
    return match.group(1)


def test_readme_action_table_matches_the_code() -> None:
    assert _generated_block("biblios_env.actions.table_markdown()") == table_markdown()


def test_readme_observation_layout_matches_the_code() -> None:
    assert _generated_block("biblios_env.observations.layout_markdown()") == layout_markdown()


def test_ci_runs_exactly_the_readme_test_command() -> None:
    test_section = README.split("## Test", 1)[1]
    command = re.search(r"```bash\n(.+?)\n```", test_section, re.S).group(1).strip()  # type: ignore[union-attr]
    ci_commands = [line.strip() for line in (ROOT / ".ci" / "run").read_text().splitlines()]
    assert ci_commands[-1] == command


def test_readme_python_examples_run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Every ```python block of the README runs as written (in a scratch folder: they save files)."""
    blocks = re.findall(r"```python\n(.*?)```", README, re.S)
    assert blocks
    monkeypatch.chdir(tmp_path)
    for index, block in enumerate(blocks):
        exec(compile(block, f"README.md python block {index}", "exec"), {})
