"""The files of a run directory, in one place for all trainers (the run loop,
:mod:`spieltisch.train.run_loop`, writes them).

``run_dir/config.resolved.json`` (the config as run) and ``run_dir/checkpoints/latest.txt`` (the
name of the newest training checkpoint, written after the checkpoint itself so a crash never
points at a half-written file).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from spieltisch.agents.files import write_text_atomic
from spieltisch.agents.neural.checkpoint import Checkpoint, CheckpointError, load_checkpoint
from spieltisch.train.config import config_to_dict


def checkpoint_dir(run_dir: Path) -> Path:
    """Where the training checkpoints of ``run_dir`` go."""
    return run_dir / "checkpoints"


def latest_checkpoint(run_dir: Path) -> Path | None:
    """The newest training checkpoint of ``run_dir`` (without suffix), or None."""
    pointer = checkpoint_dir(run_dir) / "latest.txt"
    if not pointer.exists():
        return None
    return checkpoint_dir(run_dir) / pointer.read_text().strip()


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
