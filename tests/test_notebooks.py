"""Every notebook in ``notebooks/`` runs from top to bottom (with small budgets).

The notebooks read ``SPIELTISCH_NOTEBOOK_FAST=1`` in their first cell and then use tiny training
and evaluation budgets, so this checks that they work, not what they measure.
"""

from __future__ import annotations

import subprocess
import sys
import warnings
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


def _tiny_backgammon_checkpoint(tmp_path: Path) -> str:
    """A backgammon policy trained for a few seconds, standing in for ``pretrained:backgammon``
    while that is not shipped (the notebook itself always names ``pretrained:backgammon``)."""
    run_dir = tmp_path / "backgammon_run"
    overrides = [f"run_dir={run_dir}", "total_steps=2000", "num_games=16", "progress=false",
                 "tensorboard=false", "eval_interval=0", "final_eval_games=2"]  # fmt: skip
    command = [sys.executable, "-m", "spieltisch.train.cli", "train", "configs/backgammon_ppo.yaml"]
    for o in overrides:
        command += ["--set", o]
    subprocess.run(command, check=True, cwd=ROOT, capture_output=True, timeout=300)
    return f"checkpoint:{run_dir / 'final'}"


def _override_parameters(nb, assignments: dict[str, str]) -> None:
    """Insert a cell after the one tagged ``parameters`` (papermill's convention)."""
    index = next(
        i for i, c in enumerate(nb.cells) if "parameters" in c.get("metadata", {}).get("tags", [])
    )
    source = "\n".join(f"{k} = {v!r}" for k, v in assignments.items())
    nb.cells.insert(index + 1, nbformat.v4.new_code_cell(source))


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_notebook_runs(path, monkeypatch, tmp_path):
    monkeypatch.setenv("SPIELTISCH_NOTEBOOK_FAST", "1")
    monkeypatch.setenv("MPLBACKEND", "Agg")
    monkeypatch.setenv("TQDM_DISABLE", "1")
    nb = nbformat.read(path, as_version=4)
    if path.stem == "backgammon":
        assert 'AGENT = "pretrained:backgammon"' in nb.cells[1].source
        if not (ROOT / "agents" / "pretrained" / "backgammon.safetensors").exists():
            warnings.warn(
                "pretrained:backgammon is not shipped yet: the backgammon notebook ran with a "
                "tiny stand-in checkpoint",
                stacklevel=1,
            )
            _override_parameters(nb, {"AGENT": _tiny_backgammon_checkpoint(tmp_path)})
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
