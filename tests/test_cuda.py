"""The learners on a GPU (issue 21): PPO, Gumbel AlphaZero and backgammon's AlphaZero with
``device=cuda`` give the same run as on the CPU, up to floating-point rounding: the same games
(integer records equal), the same weights, optimizer moments and search targets (floats close).

These tests need a CUDA device and are skipped without one (CI has none: run them where a GPU is
present, ``pytest tests/test_cuda.py``). Without a GPU the device-agnostic paths are still
tested: tests/test_train_ppo.py runs the CUDA learner's copy path on the CPU, and
tests/test_alphazero.py the torch evaluator that a GPU search uses."""

from __future__ import annotations

import pytest
import test_alphazero  # these three: the trainers' own tests, for their small runs
import test_backgammon_alphazero
import test_train_ppo
import torch
from spieltisch.agents.neural.checkpoint import load_checkpoint
from spieltisch.train import alphazero, alphazero_backgammon
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


def both_devices(run, tmp_path, *extra: str) -> None:
    """``run`` (a test module's runner: tmp_path, run name, overrides) on the CPU and on the GPU:
    the same steps and iterations, the same last checkpoint."""
    cpu = run(tmp_path, "cpu", *extra, "device=cpu")
    gpu = run(tmp_path, "cuda", *extra, "device=cuda")
    assert gpu["global_step"] == cpu["global_step"] and gpu["iteration"] == cpu["iteration"] >= 3
    assert_same_run(tmp_path / "cpu", tmp_path / "cuda")


def test_ppo_learner_on_cuda_equals_the_cpu_run(tmp_path) -> None:
    both_devices(test_train_ppo._run, tmp_path, "stop_after_iterations=4")


def test_alphazero_on_cuda_equals_the_cpu_run(tmp_path) -> None:
    """Training and the search's network evaluations on the GPU (the torch evaluator)."""

    def run(tmp_path, name, *extra):
        return alphazero.train(test_alphazero.config(tmp_path, name, *extra))

    both_devices(run, tmp_path, "stop_after_iterations=3", "checkpoint_interval=1")


def test_backgammon_alphazero_on_cuda_equals_the_cpu_run(tmp_path) -> None:
    def run(tmp_path, name, *extra):
        cfg = test_backgammon_alphazero.config(tmp_path, name, *extra)
        return alphazero_backgammon.train(cfg, log=test_backgammon_alphazero.quiet)

    both_devices(run, tmp_path, "stop_after_iterations=3", "checkpoint_interval=1")
