"""Every notebook in ``notebooks/`` runs from top to bottom (with small budgets).

The notebooks read ``SPIELTISCH_NOTEBOOK_FAST=1`` in their first cell and then use tiny training
and evaluation budgets, so this checks that they work, not what they measure.
"""

from __future__ import annotations

from pathlib import Path

import nbclient  # the test extra installs nbclient, nbformat and ipykernel
import nbformat
import pytest

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOKS = sorted((ROOT / "notebooks").glob("*.ipynb"))


def test_every_notebook_is_listed():
    assert {p.name for p in NOTEBOOKS} >= {
        "quickstart.ipynb",
        "train_and_evaluate.ipynb",
        "backgammon.ipynb",
        "hilo.ipynb",
    }


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_notebook_runs(path, monkeypatch, tmp_path):
    monkeypatch.setenv("SPIELTISCH_NOTEBOOK_FAST", "1")
    monkeypatch.setenv("MPLBACKEND", "Agg")
    monkeypatch.setenv("TQDM_DISABLE", "1")
    monkeypatch.setenv("TMPDIR", str(tmp_path))  # training runs land here
    nb = nbformat.read(path, as_version=4)
    if path.stem == "backgammon":  # the shipped agent, not a stand-in
        assert 'AGENT = "pretrained:backgammon"' in nb.cells[1].source
    client = nbclient.NotebookClient(
        nb, timeout=300, kernel_name="python3", resources={"metadata": {"path": str(path.parent)}}
    )
    client.execute()
    errors = [
        out
        for cell in nb.cells
        if cell.cell_type == "code"
        for out in cell.get("outputs", [])
        if out.get("output_type") == "error"
    ]
    assert not errors
