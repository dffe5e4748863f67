"""Helpers for the trainers' tests."""

from __future__ import annotations

from pathlib import Path

from spieltisch.train.run_files import POINTER, checkpoint_dir, latest_checkpoint


def lose_newest_checkpoint(run_dir: Path) -> None:
    """Delete the newest checkpoint of ``run_dir`` and the pointer to it, as if the run had been
    killed before writing it (a run stopped by ``stop_after_iterations`` writes one on stop)."""
    newest = latest_checkpoint(run_dir)
    assert newest is not None
    for suffix in (".json", ".safetensors"):
        newest.with_suffix(suffix).unlink()
    (checkpoint_dir(run_dir) / POINTER).unlink()
