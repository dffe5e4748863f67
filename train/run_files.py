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

from spieltisch.agents.neural.checkpoint import Checkpoint, CheckpointError, load_checkpoint
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


def record_checkpoint(ckpt_dir: Path, name: str, keep: int) -> None:
    """Point ``latest.txt`` at the just-saved checkpoint ``name`` and delete all but the newest
    ``keep`` checkpoints with the same prefix (``step_``, ``games_``)."""
    write_text_atomic(ckpt_dir / "latest.txt", name + "\n")
    prefix = name.rsplit("_", 1)[0]
    for old in sorted(ckpt_dir.glob(f"{prefix}_*.json"))[:-keep]:
        old.unlink()  # the JSON first: a pair without it is never loaded
        old.with_suffix(".safetensors").unlink(missing_ok=True)


def load_training_checkpoint(path: Path, cfg: Any, resumable: set[str]) -> Checkpoint:
    """The training checkpoint at ``path`` for resuming a run of ``cfg``; raises
    :class:`CheckpointError` if it holds no trainer state or was written with config values
    that change learning (keys outside ``resumable``)."""
    ckpt = load_checkpoint(path, cfg.game)
    meta = ckpt.meta
    if meta.get("kind") != "training" or "trainer" not in meta:
        raise CheckpointError(f"{path} is not a training checkpoint (no trainer state)")
    saved = meta["config"]
    now = config_to_dict(cfg)
    changed = sorted(k for k in now if k not in resumable and saved.get(k, now[k]) != now[k])
    if changed:
        raise CheckpointError(
            f"cannot resume {path}: config keys {changed} differ from the run's "
            f"({', '.join(f'{k}={saved.get(k)!r}' for k in changed)})"
        )
    return ckpt


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
