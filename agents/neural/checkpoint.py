"""Checkpoints: weights in safetensors, everything else as JSON; loading never runs code.

A checkpoint is two files next to each other::

    step_000100.safetensors   tensors: "model.<name>" (the policy), and in training checkpoints
                              also "optim.<...>" and "pool.<i>.<name>" (past policies)
    step_000100.json          metadata: format, game, env version, rules options, architecture,
                              training step, config, git revision, metrics, trainer state

Both are written atomically (a temporary file, then ``os.replace``), the JSON last, so a file
pair whose JSON exists is complete. The JSON records the SHA-256 of the weights file, so a
damaged or swapped weights file is found before use.

Loading never runs code from a file: the metadata is JSON, the weights safetensors (no pickle),
and the weights are read once, checked against the recorded SHA-256 and parsed from those same
bytes. An agent is built only from tensors that fit its recorded architecture exactly (a missing,
extra or misshapen ``model.`` tensor is refused before any network is built). ``root`` confines
a load to one folder (see :func:`load_checkpoint`).
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
from safetensors.torch import load as load_tensors
from safetensors.torch import save_file
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

    @property
    def value_margin(self) -> tuple[float, float]:
        """``(margin_weight, margin_scale)`` of the run that trained the value head (Gumbel
        AlphaZero on Kalaha; ``(0.0, 1.0)``, the game's result alone, for every other run):
        a search with the network values finished games the same way (``game_outcome``)."""
        config = self.meta.get("config", {})
        return float(config.get("margin_weight", 0.0)), float(config.get("margin_scale", 1.0))

    @property
    def search_settings(self) -> dict[str, Any]:
        """The Gumbel search settings the run trained with (``max_considered``, ``c_visit``,
        ``c_scale`` of an AlphaZero config; empty for other runs): a play-time search uses
        them, as the run's own evaluations did."""
        config = self.meta.get("config", {})
        kinds = {"max_considered": int, "c_visit": float, "c_scale": float}
        try:
            return {key: kind(config[key]) for key, kind in kinds.items() if key in config}
        except (TypeError, ValueError) as err:
            raise CheckpointError(f"{self._where()}: bad search settings: {err}") from err

    def policy(self) -> PolicyNet:
        """The policy network with its weights; raises :class:`CheckpointError` unless the
        ``model.`` tensors are exactly those of the recorded architecture."""
        try:
            arch = PolicyArch.from_json(self.meta["arch"])
        except (KeyError, TypeError, ValueError) as err:
            raise CheckpointError(f"{self._where()}: bad architecture record: {err}") from err
        state = {k[6:]: v for k, v in self.tensors.items() if k.startswith("model.")}
        # Compare the shapes before building: the record alone must not size a network (a
        # hidden layer of 10**9 units). A trunk layer has a weight and a bias, a residual block
        # two layers, the heads two tensors each.
        tensor_count = 2 * len(arch.hidden) + 4 * arch.residual_blocks + 4
        expected: dict[str, tuple[int, ...]] = {}
        if len(state) == tensor_count:
            with torch.device("meta"):  # shapes only, no memory
                expected = {k: tuple(v.shape) for k, v in PolicyNet(arch).state_dict().items()}
        found = {k: tuple(v.shape) for k, v in state.items()}
        if found != expected:
            wrong = sorted(
                k for k in found.keys() | expected.keys() if found.get(k) != expected.get(k)
            )
            raise CheckpointError(
                f"{self._where()}: weights do not fit the recorded architecture {arch}: "
                f"{len(found)} model tensors for {tensor_count}; missing, extra or "
                f"misshapen: {wrong[:6]}"
            )
        net = PolicyNet(arch)
        try:
            net.load_state_dict(state, strict=True)
        except RuntimeError as err:  # e.g. a tensor of a type no weight can take
            raise CheckpointError(f"{self._where()}: weights cannot be loaded: {err}") from err
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
    """``(weights, metadata)`` paths of a checkpoint named with or without a suffix; raises
    :class:`CheckpointError` for a path that names no file (``/``, ``..``)."""
    p = Path(path)
    if p.suffix in (".safetensors", ".json"):
        p = p.with_suffix("")
    if p.name in ("", ".", ".."):
        raise CheckpointError(
            f"a checkpoint is named by its file stem (e.g. runs/kalaha_ppo/best), got {str(path)!r}"
        )
    return p.with_suffix(".safetensors"), p.with_suffix(".json")


def _check_inside(files: tuple[Path, ...], root: str | os.PathLike) -> None:
    """Raise :class:`CheckpointError` unless every file, links followed, lies inside ``root``."""
    try:
        base = Path(root).resolve()
        real = [f.resolve() for f in files]
    except (OSError, RuntimeError, ValueError) as err:  # a link loop, a NUL byte in the name
        raise CheckpointError(f"cannot resolve checkpoint path {files[0]}: {err}") from err
    for file, resolved in zip(files, real, strict=True):
        if not resolved.is_relative_to(base):
            raise CheckpointError(
                f"checkpoint file {file} lies outside {base}, the folder checkpoints are loaded "
                "from here ('..' and links leading out of it are refused)"
            )


#: metadata entries and the JSON type each must have
_META_TYPES = {"game": str, "game_options": dict, "arch": dict}


def _save_tensors(tensors: dict[str, torch.Tensor], path: Path) -> None:
    """safetensors' ``save_file``, its write errors (a full disk) as OSError, as every other
    write of a run raises them (the trainer then says the complete checkpoints are kept)."""
    try:
        save_file(tensors, path)
    except SafetensorError as err:
        raise OSError(f"cannot write {path}: {err}") from err


def save_checkpoint(
    path: str | os.PathLike, meta: dict[str, Any], tensors: dict[str, torch.Tensor]
) -> Path:
    """Write ``tensors`` and ``meta`` atomically; returns the weights path."""
    weights, meta_path = paths_of(path)
    weights.parent.mkdir(parents=True, exist_ok=True)
    flat = {k: v.detach().cpu().contiguous() for k, v in tensors.items()}
    write_atomic(weights, lambda tmp: _save_tensors(flat, tmp))
    full = {"format": FORMAT, "format_version": FORMAT_VERSION, **meta}
    full["weights_sha256"] = _sha256(weights)
    text = json.dumps(full, indent=2, sort_keys=True)
    write_text_atomic(meta_path, text + "\n")
    return weights


def load_checkpoint(
    path: str | os.PathLike, game: str | None = None, *, root: str | os.PathLike | None = None
) -> Checkpoint:
    """Read a checkpoint; raises :class:`CheckpointError` naming what is wrong.

    ``game``, if given, must match the checkpoint's game. ``root``, if given, is the folder
    checkpoints may be loaded from (for a service that loads checkpoints named by its users):
    a relative ``path`` is taken inside it, and a file that lies outside it once ``..`` and
    symbolic links are resolved is refused.
    """
    if root is not None:
        path = Path(root) / path
    weights, meta_path = paths_of(path)
    if root is not None:
        _check_inside((meta_path, weights), root)
    if not meta_path.is_file():
        if Path(path).is_dir():  # a run folder, named instead of a checkpoint in it
            named = [
                p.stem for p in sorted(Path(path).glob("*.json")) if p.stem in ("best", "final")
            ]
            hint = f" (e.g. {Path(path) / named[0]})" if named else ""
            raise CheckpointError(
                f"{path} is a folder; name a checkpoint in it, without a suffix{hint}"
            )
        what = "is not a file" if meta_path.exists() else "does not exist"
        raise CheckpointError(f"checkpoint metadata {meta_path} {what}")
    if not weights.is_file():
        raise CheckpointError(f"checkpoint weights {weights} do not exist")
    try:
        meta = json.loads(meta_path.read_text())
    except (OSError, UnicodeDecodeError, json.JSONDecodeError, RecursionError) as err:
        raise CheckpointError(f"checkpoint metadata {meta_path} is damaged: {err}") from err
    if not isinstance(meta, dict) or meta.get("format") != FORMAT:
        raise CheckpointError(f"{meta_path} is not a spieltisch checkpoint")
    if meta.get("format_version") != FORMAT_VERSION:
        raise CheckpointError(
            f"{meta_path} has format version {meta.get('format_version')}, "
            f"this spieltisch reads version {FORMAT_VERSION}"
        )
    for key, kind in _META_TYPES.items():
        if (key in meta or key == "game") and not isinstance(meta.get(key), kind):
            raise CheckpointError(
                f"{meta_path}: {key!r} must be a JSON {'string' if kind is str else 'object'}, "
                f"got {meta.get(key)!r}"
            )
    try:
        data = weights.read_bytes()  # hashed and parsed from the same bytes
    except OSError as err:
        raise CheckpointError(f"cannot read checkpoint weights {weights}: {err}") from err
    if meta.get("weights_sha256") != hashlib.sha256(data).hexdigest():
        raise CheckpointError(
            f"checkpoint weights {weights} are damaged or do not belong to {meta_path} "
            "(SHA-256 mismatch)"
        )
    try:
        tensors = load_tensors(data)
    except (SafetensorError, ValueError) as err:
        raise CheckpointError(f"checkpoint weights {weights} are damaged: {err}") from err
    if game is not None and meta.get("game") != game:
        raise CheckpointError(
            f"checkpoint {weights} is for game {meta.get('game')!r}, not {game!r}"
        )
    return Checkpoint(meta=meta, tensors=tensors, path=weights)


def average_checkpoints(paths: list[str | os.PathLike]) -> tuple[dict[str, Any], dict]:
    """``(meta, tensors)`` of a network whose weights are the mean of those of the checkpoints
    at ``paths`` (weight averaging over the checkpoints of one run, as stochastic weight
    averaging: the mean of the iterates of SGD's last stretch, where each alone wanders around
    the minimum by the step size). Every checkpoint must be of the same game, rules options and
    architecture with the same ``model.`` tensors; only those are kept (no optimizer state: the
    result plays, it does not resume). The metadata is the last checkpoint's, with
    ``averaged_from`` naming each source (path, self-play games, weights' SHA-256). Raises
    :class:`CheckpointError` saying which checkpoint does not fit."""
    if not paths:
        raise CheckpointError("averaging needs at least one checkpoint")
    loaded = [load_checkpoint(path) for path in paths]
    first = loaded[0]
    names = sorted(key for key in first.tensors if key.startswith("model."))
    for path, ckpt in zip(paths, loaded, strict=True):
        for key in ("game", "game_options", "arch"):
            if ckpt.meta.get(key) != first.meta.get(key):
                raise CheckpointError(
                    f"{path}: its {key} {ckpt.meta.get(key)!r} differs from {paths[0]}'s "
                    f"{first.meta.get(key)!r}; only checkpoints of one network can be averaged"
                )
        mine = sorted(key for key in ckpt.tensors if key.startswith("model."))
        shapes = [(ckpt.tensors[k].shape, ckpt.tensors[k].dtype) for k in mine]
        if mine != names or shapes != [
            (first.tensors[k].shape, first.tensors[k].dtype) for k in names
        ]:
            raise CheckpointError(f"{path}: its model tensors differ from {paths[0]}'s")
    tensors = {}
    for key in names:
        total = torch.zeros_like(first.tensors[key], dtype=torch.float64)
        for ckpt in loaded:
            total += ckpt.tensors[key].to(torch.float64)
        tensors[key] = (total / len(loaded)).to(first.tensors[key].dtype)
    meta = {
        key: value
        for key, value in loaded[-1].meta.items()
        if key not in ("format", "format_version", "weights_sha256", "trainer")
    }
    meta["kind"] = "policy"  # a network to play, not a state to resume
    meta["averaged_from"] = [
        {
            "path": str(path),
            "games": ckpt.meta.get("games_total", ckpt.meta.get("games")),
            "weights_sha256": ckpt.meta["weights_sha256"],
        }
        for path, ckpt in zip(paths, loaded, strict=True)
    ]
    return meta, tensors


def load_agent(
    path: str | os.PathLike,
    game: str | None = None,
    seed: int | None = None,
    greedy: bool = True,
    *,
    root: str | os.PathLike | None = None,
) -> NeuralAgent:
    """The policy of a checkpoint as an agent (for the arena and user code); ``root`` as for
    :func:`load_checkpoint`."""
    return load_checkpoint(path, game, root=root).agent(seed=seed, greedy=greedy)
