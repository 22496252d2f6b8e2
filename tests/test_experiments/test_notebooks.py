"""The analysis notebooks run top to bottom on small data, and are committed without outputs.

Needs the ``notebooks`` extra (nbclient, nbformat, ipykernel): without it these tests fail
rather than skip, so a CI that forgot the extra cannot pass silently. The strategy notebook
plays a tiny tournament (``BIBLIOS_NB_DEALS``); the training notebook trains a tiny real run
(``BIBLIOS_TRAINING_RUN=tiny``, ``BIBLIOS_NB_TRAIN_STEPS``) and, in a second test, reads a
synthetic one, so neither depends on files outside the test.

After the last cell the tests run one more, :data:`FIGURE_REPORT`: for every figure still open
(the kernel draws with the headless Agg backend, which closes none), its title and the legends
that cover a bar. That is how the tests see what a reader sees on the figures.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]
NOTEBOOKS = sorted((ROOT / "notebooks").glob("*.ipynb"))
EXPECTED = ["01_rules_walkthrough.ipynb", "02_strategy_analysis.ipynb", "03_training_analysis.ipynb"]

FIGURE_REPORT = """
import json as _json

import matplotlib.pyplot as _plt
from matplotlib.container import BarContainer as _BarContainer
from matplotlib.transforms import Bbox as _Bbox


def _legends_over_bars(figure):
    figure.canvas.draw()
    renderer = figure.canvas.get_renderer()
    legends = [*figure.legends, *(axes.get_legend() for axes in figure.axes if axes.get_legend())]
    bars = [
        patch.get_window_extent(renderer)
        for axes in figure.axes
        for container in axes.containers
        if isinstance(container, _BarContainer)
        for patch in container
        if patch.get_width() and patch.get_height()
    ]
    covered = []
    for legend in legends:
        box = legend.get_window_extent(renderer)
        for bar in bars:
            overlap = _Bbox.intersection(box, bar)
            if overlap is not None and overlap.width * overlap.height > 1:
                covered.append(legend.get_title().get_text() or "legend")
                break
    return covered


print(_json.dumps([
    {"title": figure.get_suptitle(), "legends_over_bars": _legends_over_bars(figure)}
    for figure in map(_plt.figure, _plt.get_fignums())
]))
"""


def test_the_three_notebooks_exist() -> None:
    assert [path.name for path in NOTEBOOKS] == EXPECTED


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda path: path.stem)
def test_notebooks_are_committed_without_outputs(path: Path) -> None:
    notebook = json.loads(path.read_text())
    for index, cell in enumerate(notebook["cells"]):
        if cell["cell_type"] == "code":
            assert cell["outputs"] == [], f"{path.name} cell {index} has outputs: clear them before committing"
            assert cell["execution_count"] is None, f"{path.name} cell {index} has an execution count"
    assert path.stat().st_size < 50_000, f"{path.name} is bulky"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda path: path.stem)
def test_notebooks_link_the_rules_in_the_repository(path: Path) -> None:
    """The rules are docs/rules.md (same section numbers as the rulebook audit); nothing outside the repo."""
    text = "".join("".join(cell["source"]) for cell in json.loads(path.read_text())["cells"])
    assert "shared/" not in text and "RULES.md" not in text
    if "§" in text:
        assert "../docs/rules.md" in text, f"{path.name} cites rule sections without linking docs/rules.md"
    for target in re.findall(r"\]\((\.\./[^)#]+)", text):  # relative markdown links lead to a file of the repository
        linked = (path.parent / target).resolve()
        assert linked.is_relative_to(ROOT) and linked.is_file(), f"{path.name} links {target}, which is not in the repo"


def run_notebook(path: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, **environment: str) -> list[dict]:
    """Execute the notebook in a kernel with ``environment``; return the figure report."""
    import ipykernel  # noqa: F401 - the kernel the notebooks run in
    import nbclient
    import nbformat

    # The kernel inherits the environment: small data, a headless backend, no saved results.
    monkeypatch.setenv("BIBLIOS_NB_DEALS", "2")
    monkeypatch.setenv("BIBLIOS_NB_TRAIN_STEPS", "512")
    monkeypatch.setenv("MPLBACKEND", "agg")
    monkeypatch.setenv("TMPDIR", str(tmp_path))  # the tournament and tiny-run folders
    monkeypatch.delenv("BIBLIOS_RESULTS", raising=False)
    for name, value in environment.items():
        monkeypatch.setenv(name, value)
    notebook = nbformat.read(path, as_version=4)
    notebook.cells.append(nbformat.v4.new_code_cell(FIGURE_REPORT))
    client = nbclient.NotebookClient(
        notebook, timeout=180, kernel_name="python3", resources={"metadata": {"path": str(path.parent)}}
    )
    client.execute()  # raises CellExecutionError naming the failing cell
    errors = [out for cell in notebook.cells for out in cell.get("outputs", []) if out.get("output_type") == "error"]
    assert not errors
    report: list[dict[str, Any]] = json.loads(notebook.cells[-1].outputs[-1]["text"])
    return report


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda path: path.stem)
def test_notebook_runs_top_to_bottom(path: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    figures = run_notebook(path, tmp_path, monkeypatch, BIBLIOS_TRAINING_RUN="tiny")
    for figure in figures:
        assert not figure["legends_over_bars"], f"{path.name}: a legend covers bars in {figure}"
    if path.name.startswith("03"):
        titles = [figure["title"] for figure in figures]
        assert titles and all(titles), f"every figure says whose data it shows: {titles}"
        assert not any("SYNTHETIC" in title for title in titles), titles
        assert sum(title.startswith("real run") for title in titles) >= 3, titles  # the tiny run trained here
        assert any("shipped policy" in title for title in titles), titles


def test_training_notebook_marks_synthetic_data_on_every_figure_of_the_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from experiments.records import write_demo_training_run

    demo = write_demo_training_run(tmp_path / "run", updates=8)
    figures = run_notebook(ROOT / "notebooks" / EXPECTED[2], tmp_path, monkeypatch, BIBLIOS_TRAINING_RUN=str(demo))
    titles = [figure["title"] for figure in figures]
    run_figures = [title for title in titles if "shipped policy" not in title]
    assert len(run_figures) >= 3 and all(title.startswith("SYNTHETIC") for title in run_figures), titles
