"""Checkpoints: weights in safetensors, everything else as JSON; loading never runs code.

A checkpoint is two files next to each other::

    step_000100.safetensors   tensors: "model.<name>" (the policy), and in training checkpoints
                              also "optim.<...>" and "pool.<i>.<name>" (past policies)
    step_000100.json          metadata: format, game, env version, rules options, architecture,
                              training step, config, git revision, metrics, trainer state

Both are written atomically (a temporary file, then ``os.replace``), the JSON last, so a file
pair whose JSON exists is complete. The JSON records the SHA-256 of the weights file, so a
damaged or swapped weights file is found before use.
"""

from __future__ import annotations

import hashlib
import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import torch
from safetensors import SafetensorError
from safetensors.torch import load_file, save_file
from spieltisch.agents.files import write_atomic, write_text_atomic
from spieltisch.agents.neural.policy import NeuralAgent, PolicyArch, PolicyNet

FORMAT = "spieltisch-checkpoint"
FORMAT_VERSION = 1


class CheckpointError(ValueError):
    """A checkpoint is missing, damaged, or does not fit what it is loaded for."""


@dataclass
class Checkpoint:
    """A loaded checkpoint: metadata plus tensors (CPU)."""

    meta: dict[str, Any]
    tensors: dict[str, torch.Tensor] = field(repr=False)
    path: Path | None = None

    @property
    def game(self) -> str:
        return self.meta["game"]

    @property
    def game_options(self) -> dict[str, Any]:
        return dict(self.meta.get("game_options", {}))

    def policy(self) -> PolicyNet:
        """The policy network with its weights."""
        try:
            arch = PolicyArch.from_json(self.meta["arch"])
        except (KeyError, TypeError, ValueError) as err:
            raise CheckpointError(f"{self._where()}: bad architecture record: {err}") from err
        net = PolicyNet(arch)
        state = {k[6:]: v for k, v in self.tensors.items() if k.startswith("model.")}
        try:
            net.load_state_dict(state, strict=True)
        except RuntimeError as err:
            raise CheckpointError(
                f"{self._where()}: weights do not fit the recorded architecture: {err}"
            ) from err
        return net.eval()

    def agent(self, seed: int | None = None, greedy: bool = True) -> NeuralAgent:
        return NeuralAgent(self.policy(), seed=seed, greedy=greedy)

    def _where(self) -> str:
        return f"checkpoint {self.path}" if self.path else "checkpoint"


def _sha256(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def paths_of(path: str | os.PathLike) -> tuple[Path, Path]:
    """``(weights, metadata)`` paths of a checkpoint named with or without a suffix."""
    p = Path(path)
    if p.suffix in (".safetensors", ".json"):
        p = p.with_suffix("")
    return p.with_suffix(".safetensors"), p.with_suffix(".json")


def save_checkpoint(
    path: str | os.PathLike, meta: dict[str, Any], tensors: dict[str, torch.Tensor]
) -> Path:
    """Write ``tensors`` and ``meta`` atomically; returns the weights path."""
    weights, meta_path = paths_of(path)
    weights.parent.mkdir(parents=True, exist_ok=True)
    flat = {k: v.detach().cpu().contiguous() for k, v in tensors.items()}
    write_atomic(weights, lambda tmp: save_file(flat, tmp))
    full = {"format": FORMAT, "format_version": FORMAT_VERSION, **meta}
    full["weights_sha256"] = _sha256(weights)
    text = json.dumps(full, indent=2, sort_keys=True)
    write_text_atomic(meta_path, text + "\n")
    return weights


def load_checkpoint(path: str | os.PathLike, game: str | None = None) -> Checkpoint:
    """Read a checkpoint; raises :class:`CheckpointError` naming what is wrong.

    ``game``, if given, must match the checkpoint's game.
    """
    weights, meta_path = paths_of(path)
    if not meta_path.exists():
        raise CheckpointError(f"checkpoint metadata {meta_path} does not exist")
    if not weights.exists():
        raise CheckpointError(f"checkpoint weights {weights} do not exist")
    try:
        meta = json.loads(meta_path.read_text())
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as err:
        raise CheckpointError(f"checkpoint metadata {meta_path} is damaged: {err}") from err
    if not isinstance(meta, dict) or meta.get("format") != FORMAT:
        raise CheckpointError(f"{meta_path} is not a spieltisch checkpoint")
    if meta.get("format_version") != FORMAT_VERSION:
        raise CheckpointError(
            f"{meta_path} has format version {meta.get('format_version')}, "
            f"this spieltisch reads version {FORMAT_VERSION}"
        )
    if meta.get("weights_sha256") != _sha256(weights):
        raise CheckpointError(
            f"checkpoint weights {weights} are damaged or do not belong to {meta_path} "
            "(SHA-256 mismatch)"
        )
    try:
        tensors = load_file(str(weights))
    except (SafetensorError, OSError, ValueError) as err:
        raise CheckpointError(f"checkpoint weights {weights} are damaged: {err}") from err
    if game is not None and meta.get("game") != game:
        raise CheckpointError(
            f"checkpoint {weights} is for game {meta.get('game')!r}, not {game!r}"
        )
    return Checkpoint(meta=meta, tensors=tensors, path=weights)


def load_agent(
    path: str | os.PathLike, game: str | None = None, seed: int | None = None, greedy: bool = True
) -> NeuralAgent:
    """The policy of a checkpoint as an agent (for the arena and user code)."""
    return load_checkpoint(path, game).agent(seed=seed, greedy=greedy)
