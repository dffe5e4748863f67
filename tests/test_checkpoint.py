"""Checkpoints: round trip, atomic files, clear errors for damaged or mismatched files."""

from __future__ import annotations

import json

import pytest
import torch
from spieltisch.agents.neural.checkpoint import (
    CheckpointError,
    average_checkpoints,
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


def _policy_checkpoint(path, seed: int, hidden: int = 8, game: str = "kalaha") -> PolicyNet:
    torch.manual_seed(seed)
    arch = PolicyArch(observation_size=10, num_actions=4, hidden=(hidden,), observation_scale=3.0)
    net = PolicyNet(arch)
    meta = {"game": game, "game_options": {}, "arch": arch.to_json(), "games": seed}
    tensors = {f"model.{k}": v for k, v in net.state_dict().items()}
    tensors["optim.step"] = torch.tensor([seed], dtype=torch.float32)  # training state: dropped
    save_checkpoint(path, meta, tensors)
    return net


def test_average_of_checkpoints_is_the_mean_of_their_weights(tmp_path) -> None:
    nets = [_policy_checkpoint(tmp_path / f"c{i}", seed=i) for i in range(3)]
    meta, tensors = average_checkpoints([tmp_path / f"c{i}" for i in range(3)])
    assert set(tensors) == {f"model.{k}" for k in nets[0].state_dict()}  # no optimizer state
    for key, value in nets[0].state_dict().items():
        mean = sum(net.state_dict()[key].double() for net in nets) / 3
        torch.testing.assert_close(tensors[f"model.{key}"], mean.float(), rtol=0, atol=1e-7)
        assert tensors[f"model.{key}"].dtype == value.dtype
    assert meta["kind"] == "policy" and meta["games"] == 2  # the last checkpoint's metadata
    sources = meta["averaged_from"]
    assert [s["games"] for s in sources] == [0, 1, 2]
    assert sources[1]["weights_sha256"] == load_checkpoint(tmp_path / "c1").meta["weights_sha256"]
    save_checkpoint(tmp_path / "avg", meta, tensors)
    played = load_checkpoint(tmp_path / "avg", "kalaha").policy()  # loads as a policy
    assert torch.equal(played.state_dict()["trunk.0.weight"], tensors["model.trunk.0.weight"])


def test_average_refuses_checkpoints_of_different_networks(tmp_path) -> None:
    _policy_checkpoint(tmp_path / "a", seed=0)
    _policy_checkpoint(tmp_path / "b", seed=1, hidden=9)
    _policy_checkpoint(tmp_path / "c", seed=2, game="hus")
    with pytest.raises(CheckpointError, match=r"arch .* differs"):
        average_checkpoints([tmp_path / "a", tmp_path / "b"])
    with pytest.raises(CheckpointError, match="game 'hus' differs"):
        average_checkpoints([tmp_path / "a", tmp_path / "c"])
    with pytest.raises(CheckpointError, match="at least one"):
        average_checkpoints([])
    with pytest.raises(CheckpointError, match="does not exist"):
        average_checkpoints([tmp_path / "a", tmp_path / "missing"])
