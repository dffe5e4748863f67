"""Checkpoint safety (issue 22): a checkpoint whose metadata or weights file is replaced by a
pickle, cut short, given extra tensors or tensors of other shapes, or that lies outside the folder
it may be loaded from, is refused with a CheckpointError (a ValueError through ``make_agent``),
and no code from a file is ever run."""

from __future__ import annotations

import hashlib
import json
import pickle
import re
from pathlib import Path

import numpy as np
import pytest
import torch
from safetensors.torch import save_file
from spieltisch.agents.backgammon import td_value
from spieltisch.agents.neural.checkpoint import (
    CheckpointError,
    load_agent,
    load_checkpoint,
    paths_of,
    save_checkpoint,
)
from spieltisch.agents.neural.policy import PolicyArch, PolicyNet
from spieltisch.agents.registry import make_agent

ROOT = Path(__file__).resolve().parents[1]


class Bait:
    """Unpickling this creates the file ``marker`` (as a hostile pickle would run its code)."""

    def __init__(self, marker: Path) -> None:
        self.marker = marker

    def __reduce__(self) -> tuple:
        return (open, (str(self.marker), "w"))


def _policy_checkpoint(folder: Path, name: str = "ck") -> Path:
    """A small Kalaha policy checkpoint that ``checkpoint:PATH`` plays; returns its stem."""
    torch.manual_seed(0)
    arch = PolicyArch(observation_size=14, num_actions=6, hidden=(8,), observation_scale=6.0)
    tensors = {f"model.{k}": v for k, v in PolicyNet(arch).state_dict().items()}
    meta = {"game": "kalaha", "game_options": {}, "arch": arch.to_json()}
    save_checkpoint(folder / name, meta, tensors)
    return folder / name


def _td_checkpoint(folder: Path) -> Path:
    """A small TD value net checkpoint (backgammon)."""
    arch = td_value.TDArch(hidden=4)
    params = td_value.init_params(arch, np.random.default_rng(0))
    tensors = {f"model.{k}": torch.from_numpy(v) for k, v in params.items()}
    meta = {"game": "backgammon", "game_options": {}, "arch": arch.to_json()}
    save_checkpoint(folder / "td", meta, tensors)
    return folder / "td"


def _rehash(stem: Path) -> None:
    """Record the weights file's current SHA-256 in the metadata, as a forger would."""
    weights, meta_path = paths_of(stem)
    meta = json.loads(meta_path.read_text())
    meta["weights_sha256"] = hashlib.sha256(weights.read_bytes()).hexdigest()
    meta_path.write_text(json.dumps(meta))


def _refused(stem: Path, game: str, match: str) -> None:
    """Every way of loading ``stem`` refuses it with an error matching ``match``."""
    with pytest.raises(CheckpointError, match=match):
        ckpt = load_checkpoint(stem, game)
        if td_value.is_td_checkpoint(ckpt.meta):
            td_value.agent_from_checkpoint(ckpt)
        else:
            ckpt.policy()
    with pytest.raises(ValueError, match=match):
        make_agent(f"checkpoint:{stem}", game)


@pytest.fixture
def marker(tmp_path: Path) -> Path:
    """The file a bait creates; the bait is checked to work, so its absence proves something."""
    proof = tmp_path / "proof"
    pickle.loads(pickle.dumps(Bait(proof))).close()
    assert proof.exists(), "the bait does not run code when unpickled"
    return tmp_path / "marker"


@pytest.mark.parametrize("kind", ["policy", "td"])
@pytest.mark.parametrize("rehash", [False, True], ids=["hash-left", "hash-forged"])
@pytest.mark.parametrize("writer", ["pickle", "torch.save"])
def test_weights_replaced_by_a_pickle_are_refused_and_never_run(
    tmp_path, marker, kind, rehash, writer
) -> None:
    stem = _policy_checkpoint(tmp_path) if kind == "policy" else _td_checkpoint(tmp_path)
    weights, _ = paths_of(stem)
    if writer == "pickle":
        weights.write_bytes(pickle.dumps(Bait(marker)))
    else:
        torch.save({"model.trunk.0.weight": Bait(marker)}, weights)
    if rehash:
        _rehash(stem)
    game = "kalaha" if kind == "policy" else "backgammon"
    _refused(stem, game, "SHA-256 mismatch" if not rehash else "damaged")
    with pytest.raises(CheckpointError):
        load_agent(stem, game)
    assert not marker.exists(), "code from the weights file was run"


def test_metadata_replaced_by_a_pickle_is_refused_and_never_run(tmp_path, marker) -> None:
    stem = _policy_checkpoint(tmp_path)
    _, meta_path = paths_of(stem)
    meta_path.write_bytes(pickle.dumps(Bait(marker)))
    _refused(stem, "kalaha", "metadata .* is damaged")
    meta_path.write_bytes(pickle.dumps(Bait(marker), protocol=0))  # the text protocol
    _refused(stem, "kalaha", "damaged|not a spieltisch checkpoint")
    assert not marker.exists(), "code from the metadata file was run"


@pytest.mark.parametrize("which", ["metadata", "weights"])
@pytest.mark.parametrize("keep", [0, 1, 40, 0.5, -2])  # -2: all but "}\n" or the last bytes
def test_truncated_files_are_refused(tmp_path, which, keep) -> None:
    stem = _policy_checkpoint(tmp_path)
    weights, meta_path = paths_of(stem)
    path = meta_path if which == "metadata" else weights
    data = path.read_bytes()
    path.write_bytes(data[: int(len(data) * keep) if isinstance(keep, float) else keep])
    if which == "weights":
        _rehash(stem)  # even with a matching hash, a cut-off file is damaged
    _refused(stem, "kalaha", "damaged|not a spieltisch checkpoint")


def test_extra_model_tensors_are_refused(tmp_path) -> None:
    stem = _policy_checkpoint(tmp_path)
    ckpt = load_checkpoint(stem)
    save_checkpoint(stem, ckpt.meta, {**ckpt.tensors, "model.trunk.9.weight": torch.zeros(2, 2)})
    _refused(stem, "kalaha", r"do not fit .*trunk\.9\.weight")
    stem = _td_checkpoint(tmp_path)
    ckpt = load_checkpoint(stem)
    save_checkpoint(stem, ckpt.meta, {**ckpt.tensors, "model.W3": torch.zeros(2)})
    _refused(stem, "backgammon", r"model\.W3.* not part of a TD value net")


def test_training_state_tensors_are_not_loaded_into_an_agent(tmp_path) -> None:
    """Tensors outside ``model.`` (optimizer state, past policies) belong to training
    checkpoints; an agent uses exactly the ``model.`` tensors."""
    stem = _policy_checkpoint(tmp_path)
    ckpt = load_checkpoint(stem)
    save_checkpoint(stem, ckpt.meta, {**ckpt.tensors, "optim.0.exp_avg": torch.zeros(3)})
    net = load_checkpoint(stem, "kalaha").policy()
    assert set(net.state_dict()) == {k[6:] for k in ckpt.tensors}


@pytest.mark.parametrize("kind", ["policy", "td"])
def test_tensors_of_other_shapes_or_missing_are_refused(tmp_path, kind) -> None:
    stem = _policy_checkpoint(tmp_path) if kind == "policy" else _td_checkpoint(tmp_path)
    game, name = (
        ("kalaha", "model.trunk.0.weight") if kind == "policy" else ("backgammon", "model.W1")
    )
    ckpt = load_checkpoint(stem)
    tensors = dict(ckpt.tensors)
    tensors[name] = torch.zeros(3, 3)
    save_checkpoint(stem, ckpt.meta, tensors)
    _refused(stem, game, "do not fit|has shape")
    del tensors[name]
    save_checkpoint(stem, ckpt.meta, tensors)
    _refused(stem, game, "do not fit|missing")


def test_an_architecture_record_never_sizes_a_network_alone(tmp_path) -> None:
    """A record of a huge network with the small weights is refused before anything is built."""
    stem = _policy_checkpoint(tmp_path)
    ckpt = load_checkpoint(stem)
    save_checkpoint(
        stem, {**ckpt.meta, "arch": {**ckpt.meta["arch"], "hidden": [10**9]}}, ckpt.tensors
    )
    _refused(stem, "kalaha", "do not fit the recorded architecture")


def test_weights_written_raw_by_safetensors_still_need_the_metadata(tmp_path) -> None:
    """A weights file without its metadata (or with metadata of another file) is refused."""
    stem = _policy_checkpoint(tmp_path)
    weights, meta_path = paths_of(stem)
    save_file({"model.trunk.0.weight": torch.ones(8, 14)}, str(weights))
    _refused(stem, "kalaha", "SHA-256 mismatch")
    meta_path.unlink()
    _refused(stem, "kalaha", "does not exist")


# --- the folder checkpoints are loaded from ----------------------------------------------------
@pytest.fixture
def folders(tmp_path: Path) -> tuple[Path, Path]:
    """``(root, outside)``: a checkpoint ``root/inside/ck`` and one outside the root."""
    root, outside = tmp_path / "root", tmp_path / "outside"
    (root / "inside").mkdir(parents=True)
    outside.mkdir()
    _policy_checkpoint(root / "inside")
    _policy_checkpoint(outside)
    return root, outside


def test_a_path_inside_the_root_loads(folders) -> None:
    root, _ = folders
    assert load_checkpoint("inside/ck", "kalaha", root=root).game == "kalaha"
    assert load_checkpoint(root / "inside" / "ck.json", root=root).game == "kalaha"
    assert load_checkpoint("inside/../inside/ck", root=root).game == "kalaha"
    (root / "link").symlink_to(root / "inside")  # a link that stays inside is fine
    assert load_checkpoint("link/ck", root=root).game == "kalaha"
    agent = make_agent("checkpoint:inside/ck", "kalaha", checkpoint_root=root)
    assert agent.name == "checkpoint:inside/ck"


@pytest.mark.parametrize("path", ["../outside/ck", "inside/../../outside/ck", "ABSOLUTE"])
def test_a_path_leading_out_of_the_root_is_refused(folders, path) -> None:
    root, outside = folders
    path = str(outside / "ck") if path == "ABSOLUTE" else path
    with pytest.raises(CheckpointError, match="lies outside"):
        load_checkpoint(path, "kalaha", root=root)
    with pytest.raises(ValueError, match="lies outside"):
        make_agent(f"checkpoint:{path}", "kalaha", checkpoint_root=root)
    assert load_checkpoint(outside / "ck", "kalaha").game == "kalaha"  # no root: any path


@pytest.mark.parametrize("linked", ["folder", "metadata", "weights"])
def test_a_link_leading_out_of_the_root_is_refused(folders, linked) -> None:
    root, outside = folders
    if linked == "folder":
        (root / "escape").symlink_to(outside)
        path = "escape/ck"
    else:
        suffix = ".json" if linked == "metadata" else ".safetensors"
        (root / "inside" / f"ck{suffix}").unlink()
        (root / "inside" / f"ck{suffix}").symlink_to(outside / f"ck{suffix}")
        path = "inside/ck"
    with pytest.raises(CheckpointError, match="lies outside"):
        load_checkpoint(path, "kalaha", root=root)


@pytest.mark.parametrize("path", ["/", "..", "", "inside/"])
def test_a_path_that_names_no_file_is_refused(folders, path) -> None:
    root, _ = folders
    with pytest.raises(CheckpointError):
        load_checkpoint(path, root=root)
    with pytest.raises(CheckpointError):
        load_checkpoint(path)


# --- nothing executable is ever read -----------------------------------------------------------
#: calls that can run code from a file's contents
UNSAFE = re.compile(
    r"\btorch\.load\(|\bpickle\.loads?\(|\bUnpickler\(|allow_pickle\s*=\s*True|\byaml\.load\(|"
    r"\byaml\.unsafe_load|\bmarshal\.loads?\(|\bdill\b|\bcloudpickle\.loads?\(|\bjoblib\.load\("
)


def test_no_library_code_reads_files_with_a_code_running_loader() -> None:
    offenders = [
        f"{path.relative_to(ROOT)}:{number}: {line.strip()}"
        for package in ("envs", "agents", "train")
        for path in sorted((ROOT / package).rglob("*.py"))
        for number, line in enumerate(path.read_text().splitlines(), 1)
        if UNSAFE.search(line)
    ]
    assert not offenders, "loaders that can run code from a file:\n" + "\n".join(offenders)
    assert UNSAFE.search("x = torch.load(path)") and UNSAFE.search("yaml.load(text)")
    # the one YAML loader of the library (it reads 1e-3 as a number) is a safe one
    import yaml
    from spieltisch.envs._common import options

    assert issubclass(options._Loader, yaml.SafeLoader)
    with pytest.raises(yaml.YAMLError):
        options.load_yaml("!!python/object/apply:os.system ['true']")


def test_a_network_relabelled_for_another_game_is_refused(tmp_path) -> None:
    """A Kalaha network whose record says Hus loaded, then forfeited every game (and exported
    as a Hus model of 6 actions): its sizes are checked against the game it names."""
    from spieltisch.agents.neural.agents import load_network

    source = Path(__file__).resolve().parents[1] / "agents" / "pretrained" / "kalaha_ppo"
    meta = json.loads(source.with_suffix(".json").read_text())
    meta["game"], meta["game_options"] = "hus", {}
    (tmp_path / "k.json").write_text(json.dumps(meta))
    (tmp_path / "k.safetensors").write_bytes(source.with_suffix(".safetensors").read_bytes())
    message = r"14 inputs and 6 actions, but hus with \{\} has 32 and 16"
    with pytest.raises(ValueError, match=message):
        make_agent(f"checkpoint:{tmp_path}/k", "hus")
    with pytest.raises(CheckpointError, match=message):
        load_network(f"checkpoint:{tmp_path}/k")
