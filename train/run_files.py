"""What every training run writes to its run directory, in one place for all trainers.

``run_dir/config.resolved.json`` (the config as run), ``run_dir/checkpoints/latest.txt`` (the
name of the newest training checkpoint, written after the checkpoint itself so a crash never
points at a half-written file), TensorBoard logs in ``run_dir/tb`` and a tqdm progress bar.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from spieltisch.train.config import config_to_dict


def write_text_atomic(path: Path, text: str) -> None:
    """Write ``text`` to a temporary file, then rename it over ``path`` (atomic on POSIX)."""
    tmp = path.with_name(f".{path.name}.tmp")
    tmp.write_text(text)
    os.replace(tmp, path)


def latest_checkpoint(run_dir: Path) -> Path | None:
    """The newest training checkpoint of ``run_dir`` (without suffix), or None."""
    pointer = run_dir / "checkpoints" / "latest.txt"
    if not pointer.exists():
        return None
    return run_dir / "checkpoints" / pointer.read_text().strip()


def write_resolved_config(run_dir: Path, cfg: Any) -> None:
    write_text_atomic(
        run_dir / "config.resolved.json", json.dumps(config_to_dict(cfg), indent=2) + "\n"
    )


def open_logs(
    run_dir: Path, cfg: Any, total: int, done: int, unit: str, smoothing: float
) -> tuple[Any, Any]:
    """``(writer, bar)``: a TensorBoard writer continuing at ``done`` (None unless
    ``cfg.tensorboard``) and a progress bar over ``total`` (None unless ``cfg.progress``)."""
    writer = None
    if cfg.tensorboard:
        from torch.utils.tensorboard import SummaryWriter

        writer = SummaryWriter(str(run_dir / "tb"), purge_step=done or None)
    bar = None
    if cfg.progress:
        from tqdm import tqdm

        bar = tqdm(total=total, initial=done, unit=unit, smoothing=smoothing)
    return writer, bar
