"""The analysis notebooks run top to bottom on small data, and are committed without outputs.

Needs the ``notebooks`` extra (nbclient, nbformat, ipykernel): without it these tests fail
rather than skip, so a CI that forgot the extra cannot pass silently. The
strategy notebook plays a tiny tournament (``BIBLIOS_NB_DEALS``); the training notebook reads
a small synthetic run (``BIBLIOS_TRAINING_RUN``), so neither depends on files outside the test.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOKS = sorted((ROOT / "notebooks").glob("*.ipynb"))
EXPECTED = ["01_rules_walkthrough.ipynb", "02_strategy_analysis.ipynb", "03_training_analysis.ipynb"]


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
def test_notebook_runs_top_to_bottom(path: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import ipykernel  # noqa: F401 - the kernel the notebooks run in
    import nbclient
    import nbformat

    from experiments.records import write_demo_training_run

    # The kernel inherits the environment: small data, a headless backend, no saved results.
    monkeypatch.setenv("BIBLIOS_NB_DEALS", "2")
    monkeypatch.setenv("MPLBACKEND", "agg")
    monkeypatch.setenv("TMPDIR", str(tmp_path))  # the strategy notebook's tournament folder
    monkeypatch.delenv("BIBLIOS_RESULTS", raising=False)
    monkeypatch.setenv("BIBLIOS_TRAINING_RUN", str(write_demo_training_run(tmp_path / "run", updates=8)))
    notebook = nbformat.read(path, as_version=4)
    client = nbclient.NotebookClient(
        notebook, timeout=120, kernel_name="python3", resources={"metadata": {"path": str(path.parent)}}
    )
    client.execute()  # raises CellExecutionError naming the failing cell
    errors = [out for cell in notebook.cells for out in cell.get("outputs", []) if out.get("output_type") == "error"]
    assert not errors
