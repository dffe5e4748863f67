"""The learners on a GPU (issue 21): PPO, Gumbel AlphaZero and backgammon's AlphaZero with
``device=cuda`` give the same run as on the CPU, up to floating-point rounding: the same games
(integer records equal), the same weights, optimizer moments and search targets (floats close).

These tests need a CUDA device and are skipped without one (CI has none: run them where a GPU is
present, ``pytest tests/test_cuda.py``). Without a GPU the device-agnostic paths are still
tested: tests/test_train_ppo.py runs the CUDA learner's copy path on the CPU, and
tests/test_alphazero.py the torch evaluator that a GPU search uses."""

from __future__ import annotations

import pytest
import torch
from spieltisch.agents.neural.checkpoint import load_checkpoint
from spieltisch.train import alphazero, alphazero_backgammon, ppo
from spieltisch.train.config import build_config
from spieltisch.train.run_files import latest_checkpoint

pytestmark = pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")

# float32 rounding differs between the CPU and the GPU kernels; a few Adam steps turn a gradient
# that is almost zero into a step of up to the learning rate, hence the absolute tolerance
TOLERANCE = {"rtol": 1e-3, "atol": 2e-3}


def assert_same_run(cpu_dir, gpu_dir) -> None:
    """The latest checkpoints of two runs: the same tensors, integers equal, floats close."""
    a = load_checkpoint(latest_checkpoint(cpu_dir)).tensors
    b = load_checkpoint(latest_checkpoint(gpu_dir)).tensors
    assert sorted(a) == sorted(b)
    for name in a:
        if a[name].is_floating_point():
            torch.testing.assert_close(b[name], a[name], **TOLERANCE, msg=name)
        else:
            assert torch.equal(a[name], b[name]), name


def both_devices(run, tmp_path) -> tuple[dict, dict]:
    return run(tmp_path / "cpu", "device=cpu"), run(tmp_path / "cuda", "device=cuda")


def test_ppo_learner_on_cuda_equals_the_cpu_run(tmp_path) -> None:
    def run(run_dir, device):
        cfg = build_config(
            {"game": "kalaha", "game_options": {"pits": 4, "seeds": 3}},
            [
                f"run_dir={run_dir}",
                "total_steps=4000",
                "num_games=8",
                "hidden=[32]",
                "eval_interval=2",
                "eval_games=8",
                "final_eval_games=8",
                "checkpoint_interval=2",
                "pool_interval=1",
                "progress=false",
                "tensorboard=false",
                device,
            ],
        )
        return ppo.train(cfg)

    cpu, gpu = both_devices(run, tmp_path)
    assert gpu["global_step"] == cpu["global_step"] and gpu["iteration"] == cpu["iteration"] >= 4
    assert_same_run(tmp_path / "cpu", tmp_path / "cuda")


def test_alphazero_on_cuda_equals_the_cpu_run(tmp_path) -> None:
    """Training and the search's network evaluations on the GPU (the torch evaluator)."""

    def run(run_dir, device):
        cfg = build_config(
            {
                "game": "kalaha",
                "algorithm": "alphazero",
                "game_options": {"pits": 4, "seeds": 3, "rules": "goki"},
            },
            [
                f"run_dir={run_dir}",
                "num_games=16",
                "num_simulations=8",
                "hidden=[32]",
                "batch_size=64",
                "total_positions=100000",
                "stop_after_iterations=3",
                "checkpoint_interval=1",
                "eval_interval=0",
                "final_eval_games=4",
                "progress=false",
                "tensorboard=false",
                device,
            ],
        )
        return alphazero.train(cfg)

    cpu, gpu = both_devices(run, tmp_path)
    assert gpu["global_step"] == cpu["global_step"] and gpu["iteration"] == cpu["iteration"] == 3
    assert_same_run(tmp_path / "cpu", tmp_path / "cuda")


def test_backgammon_alphazero_on_cuda_equals_the_cpu_run(tmp_path) -> None:
    def run(run_dir, device):
        cfg = build_config(
            {"game": "backgammon", "algorithm": "alphazero"},
            [
                f"run_dir={run_dir}",
                "hidden=[8]",
                "num_games=4",
                "num_simulations=2",
                "batch_size=16",
                "sample_reuse=1.0",
                "total_positions=100000",
                "stop_after_iterations=3",
                "checkpoint_interval=1",
                "eval_interval=0",
                "final_eval_games=0",
                "progress=false",
                "tensorboard=false",
                device,
            ],
        )
        return alphazero_backgammon.train(cfg, log=lambda *_: None)

    cpu, gpu = both_devices(run, tmp_path)
    assert gpu["global_step"] == cpu["global_step"] and gpu["iteration"] == cpu["iteration"] == 3
    assert_same_run(tmp_path / "cpu", tmp_path / "cuda")
