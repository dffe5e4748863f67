"""Checkpoints: round trip, atomic files, clear errors for damaged or mismatched files."""

from __future__ import annotations

import json

import pytest
import torch
from spieltisch.agents.neural.checkpoint import (
    CheckpointError,
    load_checkpoint,
    paths_of,
    save_checkpoint,
)
from spieltisch.agents.neural.policy import PolicyArch, PolicyNet


def _save(tmp_path, **meta_extra):
    torch.manual_seed(0)
    arch = PolicyArch(observation_size=10, num_actions=4, hidden=(8,), observation_scale=3.0)
    net = PolicyNet(arch)
    meta = {"game": "kalaha", "game_options": {"pits": 4, "seeds": 3}, "arch": arch.to_json()}
    meta.update(meta_extra)
    tensors = {f"model.{k}": v for k, v in net.state_dict().items()}
    save_checkpoint(tmp_path / "ck", meta, tensors)
    return net


def test_round_trip(tmp_path) -> None:
    net = _save(tmp_path)
    ckpt = load_checkpoint(tmp_path / "ck.safetensors", game="kalaha")
    loaded = ckpt.policy()
    for (k, a), (_, b) in zip(net.state_dict().items(), loaded.state_dict().items(), strict=True):
        assert torch.equal(a, b), k
    assert ckpt.meta["format"] == "spieltisch-checkpoint"
    assert ckpt.game_options == {"pits": 4, "seeds": 3}
    # no temporary files are left behind
    assert sorted(p.name for p in tmp_path.iterdir()) == ["ck.json", "ck.safetensors"]


def test_damaged_weights_fail_clearly(tmp_path) -> None:
    _save(tmp_path)
    weights, _ = paths_of(tmp_path / "ck")
    data = bytearray(weights.read_bytes())
    data[len(data) // 2] ^= 0xFF
    weights.write_bytes(bytes(data))
    with pytest.raises(CheckpointError, match="damaged"):
        load_checkpoint(tmp_path / "ck")


def test_truncated_weights_fail_clearly(tmp_path) -> None:
    _save(tmp_path)
    weights, meta_path = paths_of(tmp_path / "ck")
    weights.write_bytes(weights.read_bytes()[:100])
    with pytest.raises(CheckpointError, match="damaged"):
        load_checkpoint(tmp_path / "ck")
    # even with a matching hash, garbage is reported as damaged, not a crash
    import hashlib

    meta = json.loads(meta_path.read_text())
    meta["weights_sha256"] = hashlib.sha256(weights.read_bytes()).hexdigest()
    meta_path.write_text(json.dumps(meta))
    with pytest.raises(CheckpointError, match="damaged"):
        load_checkpoint(tmp_path / "ck")


def test_damaged_or_missing_metadata_fails_clearly(tmp_path) -> None:
    _save(tmp_path)
    _, meta_path = paths_of(tmp_path / "ck")
    meta_path.write_text("{not json")
    with pytest.raises(CheckpointError, match=r"metadata .* is damaged"):
        load_checkpoint(tmp_path / "ck")
    meta_path.write_text(json.dumps({"hello": 1}))
    with pytest.raises(CheckpointError, match="not a spieltisch checkpoint"):
        load_checkpoint(tmp_path / "ck")
    meta_path.unlink()
    with pytest.raises(CheckpointError, match="does not exist"):
        load_checkpoint(tmp_path / "ck")


def test_mismatches_fail_clearly(tmp_path) -> None:
    _save(tmp_path)
    with pytest.raises(CheckpointError, match="for game 'kalaha', not 'hus'"):
        load_checkpoint(tmp_path / "ck", game="hus")
    _save(
        tmp_path,
        arch={"observation_size": 10, "num_actions": 5, "hidden": [8], "observation_scale": 1.0},
    )
    with pytest.raises(CheckpointError, match="do not fit the recorded architecture"):
        load_checkpoint(tmp_path / "ck").policy()
