"""Distributed self-play on Ray (train/ray_rollouts.py) and the RLlib example, on one local Ray
instance with 2 CPUs shared by the whole module (Ray starts slowly)."""

from __future__ import annotations

import json
import os
import signal
import time
from pathlib import Path

import numpy as np
import pytest
import ray
import torch
from spieltisch.agents.arena.match import play_game
from spieltisch.agents.neural.checkpoint import load_checkpoint
from spieltisch.agents.registry import make_agent
from spieltisch.envs import make
from spieltisch.train.cli import main
from spieltisch.train.config import build_config, config_to_dict
from spieltisch.train.ppo import latest_checkpoint, train
from spieltisch.train.ray_rollouts import split_games, train_on_ray

SMALL_KALAHA = {"pits": 4, "seeds": 3}
ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module", autouse=True)
def ray_instance():
    # "local": a fresh instance of this test process (pytest -n runs several), 2 CPUs as in CI
    ray.init(address="local", num_cpus=2, include_dashboard=False, log_to_driver=False)
    yield
    ray.shutdown()


def config(run_dir: Path, **extra):
    sets = {
        "total_steps": 300,
        "num_games": 8,
        "hidden": "[16]",
        "run_dir": str(run_dir),
        "eval_interval": 0,
        "eval_opponents": "[random]",
        "final_eval_games": 16,
        "checkpoint_interval": 1,
        "pool_interval": 1,
        "progress": "false",
        "tensorboard": "false",
        "max_turns": 300,
    }
    sets.update(extra)
    return build_config(
        {"game": "kalaha", "game_options": SMALL_KALAHA}, [f"{k}={v}" for k, v in sets.items()]
    )


def test_split_games_and_cli_errors(capsys) -> None:
    assert split_games(9, 2) == [5, 4] and split_games(8, 2) == [4, 4]
    with pytest.raises(ValueError, match="cannot be split"):
        split_games(1, 2)
    assert main(["train", str(ROOT / "configs/backgammon_td.yaml"), "--ray"]) == 2
    assert "--ray supports algorithms ppo and alphazero only" in capsys.readouterr().err


def test_ray_run_writes_checkpoints_the_arena_loads_in_the_single_machine_format(
    tmp_path,
) -> None:
    # through the command line, as a user runs it (the module's Ray instance is reused)
    cfg = config(tmp_path / "ray")
    sets = [f"{k}={json.dumps(v)}" for k, v in config_to_dict(cfg).items()]
    argv = ["train", str(ROOT / "configs/kalaha_ppo.yaml"), "--ray", "--workers", "2"]
    assert main([*argv, *(x for s in sets for x in ("--set", s))]) == 0
    result = load_checkpoint(tmp_path / "ray" / "final").meta
    assert result["global_step"] >= 300 and "final/win_rate_vs_random" in result["metrics"]
    single = train(config(tmp_path / "single"), log=lambda *a: None)
    assert single["global_step"] >= 300

    # same format and metadata: final policy and training checkpoints
    for name in ("final", None):
        paths = [
            (tmp_path / run / "final") if name else latest_checkpoint(tmp_path / run)
            for run in ("ray", "single")
        ]
        a, b = (load_checkpoint(p) for p in paths)
        assert sorted(a.meta) == sorted(b.meta)
        assert a.meta["format"] == b.meta["format"] and a.meta["kind"] == b.meta["kind"]
        assert sorted(a.meta["config"]) == sorted(b.meta["config"])
        assert sorted(a.meta.get("trainer", {})) == sorted(b.meta.get("trainer", {}))
        assert sorted(a.tensors) == sorted(b.tensors)

    # the arena loads the distributed run's policy
    env = make("kalaha", **SMALL_KALAHA)
    agents = {
        "player_0": make_agent(
            f"checkpoint:{tmp_path / 'ray' / 'final'}", "kalaha", game_options=SMALL_KALAHA
        ),
        "player_1": make_agent("random", "kalaha", seed=1),
    }
    assert play_game(env, agents, seed=0).num_moves > 0


def _kill(pid: int) -> None:
    os.kill(pid, signal.SIGKILL)
    for _ in range(200):  # until the process is gone
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return
        time.sleep(0.05)


def test_a_killed_worker_is_replaced_and_resume_continues_exactly(tmp_path) -> None:
    """Killing a worker process mid-run changes nothing: its games are replayed by a new
    worker with the same seed. A run stopped and resumed equals the uninterrupted run."""
    quiet = {"log": lambda *a: None, "num_workers": 2}

    def stop_after(n: int, **kw):
        return config(tmp_path / kw.pop("name"), total_steps=10**6, stop_after_iterations=n, **kw)

    whole = train_on_ray(stop_after(3, name="w"), **quiet)
    killed: list[int] = []

    def kill_worker(iteration: int, collector) -> None:
        if iteration == 1 and not killed:
            killed.append(collector.pids[0])
            _kill(collector.pids[0])

    first = train_on_ray(stop_after(2, name="k"), on_submit=kill_worker, **quiet)
    assert killed and first["ray"]["worker_failures"] >= 1 and first["iteration"] == 2
    resumed = train_on_ray(stop_after(1, name="k"), resume=True, **quiet)
    assert resumed["iteration"] == whole["iteration"] == 3
    a = load_checkpoint(latest_checkpoint(tmp_path / "w"))
    b = load_checkpoint(latest_checkpoint(tmp_path / "k"))
    assert sorted(a.tensors) == sorted(b.tensors)
    for key in a.tensors:
        assert torch.equal(a.tensors[key], b.tensors[key]), key
    assert a.meta["trainer"] == b.meta["trainer"]


@pytest.mark.parametrize(
    ("game", "options", "iterations"), [("kalaha", SMALL_KALAHA, 2), ("hilo", {}, 1)]
)
def test_rllib_example_runs_a_few_iterations(game, options, iterations) -> None:
    # (HiLo: RLlib's env check stepped an unmasked random action, which our env refuses)
    from spieltisch.train.examples.rllib_pettingzoo import build_algorithm, evaluate_vs_random

    algo = build_algorithm(game, options, batch=200, hidden=(16,), seed=0)
    try:
        for _ in range(iterations):
            result = algo.train()
        assert result["env_runners"]["num_env_steps_sampled_lifetime"] >= 200 * iterations
        ev = evaluate_vs_random(algo, game, options, games=4, seed=0)
        assert np.isclose(ev["win_rate"] + ev["draw_rate"] + ev["loss_rate"], 1.0)
    finally:
        algo.stop()


def test_alphazero_on_ray_survives_a_killed_worker_and_matches_in_process_workers(
    tmp_path,
) -> None:
    """Gumbel AlphaZero through the same collect hook: the search's self-play on 2 Ray workers,
    one killed mid-run, gives the same network as the same workers run in this process."""
    from spieltisch.train.alphazero import train as train_alphazero
    from spieltisch.train.ray_rollouts import SelfPlayWorker, merge_self_play

    def az_config(name: str):
        sets = {
            "run_dir": str(tmp_path / name),
            "num_games": 6,
            "num_simulations": 4,
            "hidden": "[16]",
            "batch_size": 32,
            "total_positions": 10**6,
            "stop_after_iterations": 2,
            "checkpoint_interval": 1,
            "eval_interval": 0,
            "final_eval_games": 4,
            "progress": "false",
            "tensorboard": "false",
        }
        return build_config(
            {"game": "kalaha", "algorithm": "alphazero", "game_options": SMALL_KALAHA},
            [f"{k}={v}" for k, v in sets.items()],
        )

    killed: list[int] = []

    def kill_worker(iteration: int, collector) -> None:
        if iteration == 1 and not killed:
            killed.append(collector.pids[1])
            _kill(collector.pids[1])

    on_ray = train_on_ray(az_config("ray"), num_workers=2, on_submit=kill_worker, log=print)
    assert killed and on_ray["ray"]["worker_failures"] >= 1 and on_ray["iteration"] == 2

    # the same two workers in this process: same seeds from the run's generator, same games
    cfg = az_config("local")
    workers: list[SelfPlayWorker] = []

    def collect(net, state):
        if not workers:
            workers.extend(SelfPlayWorker(cfg, net.arch.to_json(), n) for n in split_games(6, 2))
        weights = net.state_dict()
        seeds = [int(s) for s in state.rng.integers(0, 2**63, size=len(workers))]
        return merge_self_play([w.play(weights, s)[0] for w, s in zip(workers, seeds, strict=True)])

    local = train_alphazero(cfg, log=lambda *a: None, collect=collect)
    assert local["global_step"] == on_ray["global_step"] > 0
    a = load_checkpoint(latest_checkpoint(tmp_path / "ray"))
    b = load_checkpoint(latest_checkpoint(tmp_path / "local"))
    for key in a.tensors:
        assert torch.equal(a.tensors[key], b.tensors[key]), key
