"""User mistakes in the benchmarks, ``spieltisch train --ray`` and the RLlib / sb3 examples are
usage errors with a message (exit status 2), found before any work starts, not tracebacks."""

from __future__ import annotations

import argparse
import importlib
import sys
import time
from pathlib import Path

import pytest
from spieltisch.train.cli import main as cli

ROOT = Path(__file__).resolve().parents[1]
BENCHMARKS = ROOT / "benchmarks"


def _benchmark(name: str, monkeypatch):
    monkeypatch.syspath_prepend(str(BENCHMARKS))  # the scripts import their _common
    return importlib.import_module(name)


def test_positive_int(monkeypatch):
    common = _benchmark("_common", monkeypatch)
    assert common.positive_int("3") == 3
    for bad in ("0", "-2", "x"):
        with pytest.raises(argparse.ArgumentTypeError):
            common.positive_int(bad)


@pytest.mark.parametrize(
    ("script", "args", "message"),
    [
        ("bench_ppo", ["--rounds", "0"], "must be at least 1"),  # was: empty median
        ("bench_hilo", ["--batch", "0"], "must be at least 1"),
        ("bench_mancala", ["--rounds", "0"], "must be at least 1"),
        ("bench_alphazero", ["--games", "0"], "must be at least 1"),
        ("bench_alphazero", ["--checkpoint", "/nonexistent/net"], "does not exist"),
        ("arena_baselines", ["--games", "chess"], "invalid choice"),  # was: KeyError
        ("backgammon_bearoff", ["--agent", "bogus"], "unknown agent 'bogus'"),
    ],
)
def test_benchmark_bad_arguments_are_usage_errors(script, args, message, monkeypatch, capsys):
    module = _benchmark(script, monkeypatch)
    monkeypatch.setattr(sys, "argv", [f"{script}.py", *args])
    with pytest.raises(SystemExit) as exit_info:
        module.main()
    assert exit_info.value.code == 2
    assert message in capsys.readouterr().err


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--game", "chess"], "invalid choice"),  # was: a ConfigError traceback
        (["--workers", "0"], "must be at least 1"),
        (["--games", "2", "--workers", "4"], "cannot be split over 4 workers"),
    ],
)
def test_bench_ray_bad_arguments_are_usage_errors(args, message, monkeypatch, capsys):
    pytest.importorskip("ray")
    module = _benchmark("bench_ray", monkeypatch)
    monkeypatch.setattr(sys, "argv", ["bench_ray.py", *args])
    with pytest.raises(SystemExit) as exit_info:
        module.main()
    assert exit_info.value.code == 2
    assert message in capsys.readouterr().err


def test_train_ray_without_ray_installed_is_a_usage_error(tmp_path, monkeypatch, capsys):
    monkeypatch.setitem(sys.modules, "ray", None)  # as if the ray extra were not installed
    run_dir = tmp_path / "run"
    argv = ["train", str(ROOT / "configs/kalaha_ppo.yaml"), "--ray", "--set", f"run_dir={run_dir}"]
    assert cli(argv) == 2
    assert "--ray needs Ray: pip install" in capsys.readouterr().err
    assert not run_dir.exists()  # the empty run_dir made for it is removed again


def test_an_unreachable_ray_address_fails_at_once():
    # ray.init itself retried 127.0.0.1:1 for minutes, printing only Ray's warnings
    from spieltisch.train.ray_rollouts import check_reachable

    start = time.perf_counter()
    with pytest.raises(ValueError, match=r"no Ray cluster at 127\.0\.0\.1:1"):
        check_reachable("127.0.0.1:1")
    assert time.perf_counter() - start < 6
    check_reachable("ray://head:10001")  # client addresses are left to Ray


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--seat", "abc"], "invalid literal"),
        (["--seat", "5"], "seat must be 0..1"),
        (["--opponent", "bogus"], "unknown agent 'bogus'"),
        (["-o", "pitz=4"], "did you mean 'pits'"),
        (["--steps", "0"], "at least 1"),
    ],
)
def test_sb3_example_bad_arguments_are_usage_errors(args, message, capsys):
    from spieltisch.train.examples.sb3_maskable_ppo import main

    with pytest.raises(SystemExit) as exit_info:
        main(args)  # (before any training)
    assert exit_info.value.code == 2
    assert message in capsys.readouterr().err


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["-o", "pitz=4"], "did you mean 'pits'"),  # was: 80 lines from RLlib's env runner
        (["--address", "head:6379", "--num-cpus", "2"], "--num-cpus sizes the local"),
        (["--eval-games", "0"], "at least 1"),
    ],
)
def test_rllib_example_bad_arguments_fail_before_ray_starts(args, message, monkeypatch, capsys):
    from spieltisch.train.examples import rllib_pettingzoo

    monkeypatch.setitem(sys.modules, "ray", None)  # any use of Ray would fail differently
    with pytest.raises(SystemExit) as exit_info:
        rllib_pettingzoo.main(args)
    assert exit_info.value.code == 2
    assert message in capsys.readouterr().err


def _failing_import(monkeypatch, module: str, missing: str):
    """``import module`` (and its submodules) raises ModuleNotFoundError for ``missing``, as if
    that package were not installed."""
    import builtins

    real_import = builtins.__import__

    def fake_import(name, *args, **kwargs):
        if name == module or name.startswith(module + "."):
            raise ModuleNotFoundError(f"No module named {missing!r}", name=missing)
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", fake_import)


@pytest.mark.parametrize(
    ("example", "module", "extra"),
    [("sb3_maskable_ppo", "sb3_contrib", "sb3"), ("rllib_pettingzoo", "ray", "rllib")],
)
def test_an_example_without_its_extra_names_the_extra(example, module, extra, monkeypatch, capsys):
    # was: a ModuleNotFoundError traceback (sb3: from inside train(); RLlib: `import ray`)
    examples = importlib.import_module(f"spieltisch.train.examples.{example}")
    monkeypatch.setitem(sys.modules, module, None)  # as if the extra were not installed
    args = ["-o", "pits=4", "-o", "seeds=3", "--eval-games", "1"]
    assert examples.main(args) == 2
    out, err = capsys.readouterr()
    lines = err.strip().splitlines()
    assert len(lines) == 1 and out == ""
    assert f'pip install "spieltisch[{extra}]"' in lines[0]
    assert f"no module '{module}" in lines[0]  # ('ray' or 'ray.rllib')


@pytest.mark.parametrize(
    ("example", "module"),
    [("sb3_maskable_ppo", "sb3_contrib"), ("rllib_pettingzoo", "ray")],
)
def test_an_example_without_a_dependency_of_its_extra_names_the_extra(
    example, module, monkeypatch, capsys
):
    # the package imports, but something it needs does not (e.g. a dependency of ray[rllib])
    examples = importlib.import_module(f"spieltisch.train.examples.{example}")
    _failing_import(monkeypatch, module, "some_dependency")
    extra = "sb3" if example.startswith("sb3") else "rllib"
    assert examples.main(["-o", "pits=4", "-o", "seeds=3"]) == 2
    err = capsys.readouterr().err
    assert "no module 'some_dependency'" in err and f'pip install "spieltisch[{extra}]"' in err


def test_the_sb3_example_without_torch_says_to_install_torch(monkeypatch, capsys):
    from spieltisch.train.examples import sb3_maskable_ppo

    _failing_import(monkeypatch, "sb3_contrib", "torch")
    assert sb3_maskable_ppo.main(["-o", "pits=4", "-o", "seeds=3"]) == 2
    err = capsys.readouterr().err
    assert "needs torch" in err and "install torch first" in err
