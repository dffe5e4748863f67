"""Helpers for the trainers' tests."""

from __future__ import annotations

from pathlib import Path

from spieltisch.train.run_files import POINTER, checkpoint_dir, latest_checkpoint


def lose_newest_checkpoint(run_dir: Path) -> None:
    """Delete the newest checkpoint of ``run_dir`` and point at the one before, as if the run
    had been killed before writing it (a run stopped by ``stop_after_iterations`` writes one on
    stop)."""
    newest = latest_checkpoint(run_dir)
    assert newest is not None
    for part in newest.parent.glob(f"{newest.name}.*"):  # its metadata, weights, ...
        part.unlink()
    before = latest_checkpoint(run_dir)  # (the newest complete one left)
    assert before is not None
    (checkpoint_dir(run_dir) / POINTER).write_text(before.name + "\n")
