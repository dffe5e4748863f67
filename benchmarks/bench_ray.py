"""Rollout throughput of Ray rollout workers against single-process self-play, and the learner.

    python benchmarks/bench_ray.py [--game kalaha] [--games 256] [--rounds 3] [--quick]

Measures, interleaved round by round so every contender sees the same machine load:

* **single**: ``play_iteration`` in this process (what ``spieltisch train`` does);
* **ray_1**, **ray_2**, ...: the same iteration split over 1, 2, ... Ray rollout workers
  (``train/ray_rollouts.py``), including the weight broadcast and the transfer of the experience;

each as games/s, moves/s (all seats) and learner decisions/s. Then the **learner**: a few real
PPO iterations of ``train()`` on one machine, where the update time is the iteration time less
the playing time. From these: the expected iteration time with W workers on free cores,
``play / W + ray_overhead + update``, and the worker count beyond which the learner's update
takes longer than the rollouts (the bottleneck). Results go to ``benchmarks/results/ray_<game>.{json,md}``.
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time
from typing import Any

import numpy as np
import torch
from _common import add_run_options, positive_int, shrink_if_quick, write_results
from spieltisch.agents.arena.provenance import load_average, load_average_text, machine_info
from spieltisch.envs import GAMES
from spieltisch.train.config import build_config
from spieltisch.train.ppo import (
    Rollout,
    TrainerState,
    make_arch,
    make_games,
    play_iteration,
    pool_opponents,
)
from spieltisch.train.ray_rollouts import RayCollector, init_ray


def bench_config(game: str, games: int, run_dir: str) -> Any:
    options = {"pits": 6, "seeds": 6} if game == "kalaha" else {}
    return build_config(
        {"game": game, "game_options": options},
        [
            f"num_games={games}",
            f"run_dir={run_dir}",
            "progress=false",
            "tensorboard=false",
            "eval_interval=0",
            "checkpoint_interval=1000",
            "final_eval_games=2",
            "total_steps=1000000000",
        ],
    )


class LocalCollector:
    """``play_iteration`` in this process, as ``train()`` does without ``collect``."""

    def __init__(self, cfg: Any) -> None:
        self.cfg = cfg
        self.games = make_games(cfg.game, cfg.game_options, cfg.num_games)

    def __call__(self, net: Any, state: TrainerState) -> Rollout:
        opponents = pool_opponents(net.arch, state.pool, [])
        return play_iteration(self.cfg, self.games, net, opponents, state.rng)


class Timed:
    """Wraps a collector: records (start time, seconds, rollout sizes) of every call."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.calls: list[dict[str, float]] = []

    def __call__(self, net: Any, state: TrainerState) -> Rollout:
        t0 = time.perf_counter()
        r = self.inner(net, state)
        self.calls.append(
            {
                "start": t0,
                "seconds": time.perf_counter() - t0,
                "games": r.games_played,
                "moves": r.moves_played,
                "decisions": len(r.actions),
                # Ray: the slowest worker's own playing time (the rest is Ray's overhead)
                "worker_seconds": max(getattr(self.inner, "play_seconds", [0.0])),
            }
        )
        return r


def rates(calls: list[dict[str, float]]) -> dict[str, float]:
    s = sum(c["seconds"] for c in calls)
    return {
        "seconds": s,
        "iterations": len(calls),
        "games_per_s": sum(c["games"] for c in calls) / s,
        "moves_per_s": sum(c["moves"] for c in calls) / s,
        "decisions_per_s": sum(c["decisions"] for c in calls) / s,
        "seconds_per_iteration": s / len(calls),
        "overhead_seconds_per_iteration": (s - sum(c["worker_seconds"] for c in calls)) / len(calls)
        if calls[0]["worker_seconds"]
        else 0.0,
    }


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--game", default="kalaha", choices=sorted(GAMES))
    p.add_argument("--games", type=positive_int, default=256, help="games per iteration")
    p.add_argument(
        "--rounds", type=positive_int, default=3, help="timed rounds (after one warm-up)"
    )
    p.add_argument("--workers", type=positive_int, nargs="+", default=[1, 2])
    p.add_argument("--learner-iterations", type=positive_int, default=4)
    p.add_argument("--note", default="", help="a note stored with the results (machine load)")
    add_run_options(p)
    args = p.parse_args()
    shrink_if_quick(args, games=8, rounds=1, workers=[1], learner_iterations=1)
    if args.games < max(args.workers):  # each worker needs a game (else a traceback from Ray)
        p.error(f"--games {args.games} cannot be split over {max(args.workers)} workers")
    torch.set_num_threads(1)
    load_before = load_average()

    with tempfile.TemporaryDirectory() as tmp:
        cfg = bench_config(args.game, args.games, tmp)
        torch.manual_seed(0)
        games = make_games(cfg.game, cfg.game_options, 1)
        from spieltisch.agents.neural.policy import PolicyNet

        net = PolicyNet(make_arch(cfg, games))
        state = TrainerState(
            net=net,
            optimizer=torch.optim.Adam(net.parameters()),
            rng=np.random.default_rng(0),
            pool=[None, {k: v.clone() for k, v in net.state_dict().items()}],
        )
        # logical CPUs for every worker of every contender (they play one after another)
        init_ray(None, num_cpus=max(os.cpu_count() or 1, sum(args.workers)))
        contenders: dict[str, Timed] = {"single": Timed(LocalCollector(cfg))}
        for w in args.workers:
            contenders[f"ray_{w}"] = Timed(RayCollector(cfg, w, log=lambda *a: None))
        for name, c in contenders.items():  # warm-up: actors start, numba and torch load
            c(net, state)
            c.calls.clear()
            print(f"warmed up {name}", flush=True)
        for r in range(args.rounds):
            for name, c in contenders.items():
                c(net, state)
                print(f"round {r} {name}: {c.calls[-1]['seconds']:.2f} s", flush=True)
        rollout = {name: rates(c.calls) for name, c in contenders.items()}
        for c in contenders.values():
            if isinstance(c.inner, RayCollector):
                c.inner.shutdown()

        # the learner: real PPO iterations on one machine; update = iteration - play
        from spieltisch.train.ppo import train

        timed = Timed(LocalCollector(cfg))
        cfg.stop_after_iterations = args.learner_iterations + 1
        train(cfg, log=lambda *a: None, collect=timed)
        starts = [c["start"] for c in timed.calls]
        iteration_s = np.diff(starts)  # start to start: play + update (+ bookkeeping)
        play_s = np.array([c["seconds"] for c in timed.calls[:-1]])
        update_s = float(np.median(iteration_s - play_s))
        learner = {
            "update_seconds_per_iteration": update_s,
            "play_seconds_per_iteration": float(np.median(play_s)),
            "decisions_per_iteration": float(np.mean([c["decisions"] for c in timed.calls])),
            "update_decisions_per_s": float(
                np.mean([c["decisions"] for c in timed.calls]) / update_s
            ),
        }
    import ray

    ray.shutdown()

    single = rollout["single"]
    play = single["seconds_per_iteration"]
    eff = {}
    for w in args.workers:
        speedup = single["seconds_per_iteration"] / rollout[f"ray_{w}"]["seconds_per_iteration"]
        eff[w] = speedup / w
        rollout[f"ray_{w}"]["speedup_vs_single"] = speedup
        rollout[f"ray_{w}"]["efficiency_per_worker"] = speedup / w
    # Model for free cores: a worker plays its share as fast as one process plays all of it
    # divided by W, plus Ray's measured overhead (broadcast, transfer, scheduling).
    overhead = float(
        np.median([rollout[f"ray_{w}"]["overhead_seconds_per_iteration"] for w in args.workers])
    )
    cores = os.cpu_count() or 1
    projection = {
        str(w): {
            "rollout_seconds": play / w + overhead,
            "rollout_speedup": play / (play / w + overhead),
            "iteration_seconds": play / w + overhead + update_s,
            "decisions_per_s": learner["decisions_per_iteration"]
            / (play / w + overhead + update_s),
        }
        for w in (1, 2, 4, 8, 16, 32)
    }
    bottleneck_workers = play / max(update_s - overhead, 1e-9)
    results = {
        "benchmark": "ray_rollouts",
        "game": args.game,
        "games_per_iteration": args.games,
        "hidden": cfg.hidden,
        "rounds": args.rounds,
        "machine": machine_info(),
        "load_average_before": load_before,
        "load_average_after": load_average(),
        "note": args.note,
        "rollout": rollout,
        "learner": learner,
        "ray_overhead_seconds_per_iteration": overhead,
        "projection_1_learner_W_workers": projection,
        "learner_bottleneck_from_workers": bottleneck_workers,
    }
    rows = "\n".join(
        f"| {name} | {r['games_per_s']:.1f} | {r['moves_per_s']:.0f} | {r['decisions_per_s']:.0f} "
        f"| {r['seconds_per_iteration']:.2f} | {r.get('speedup_vs_single', 1.0):.2f} "
        f"| {r['overhead_seconds_per_iteration']:.2f} |"
        for name, r in rollout.items()
    )
    proj = "\n".join(
        f"| {w} | {v['rollout_seconds']:.2f} | {v['rollout_speedup']:.1f} "
        f"| {v['iteration_seconds']:.2f} | {v['decisions_per_s']:.0f} |"
        for w, v in projection.items()
    )
    if bottleneck_workers < 1:
        bottleneck_text = (
            "The learner's update is the bottleneck already with one worker: playing an "
            f"iteration takes {play:.2f} s in one process, the update {update_s:.2f} s."
        )
    else:
        bottleneck_text = (
            f"The learner's update becomes the bottleneck from about **{bottleneck_workers:.1f} "
            "workers** on (a worker's playing time below the update time)."
        )
    md = f"""# Ray rollout workers vs single-process self-play ({args.game}, {args.games} games/iteration)

Machine: {cores} CPU cores; load average before {load_average_text(load_before)}, after {load_average_text()}. {args.note}
Network {cfg.hidden}, one torch thread per process. Rollout = one PPO iteration's games played
to the end (ray: including weight broadcast and experience transfer), interleaved over
{args.rounds} rounds after a warm-up.

| rollouts by | games/s | moves/s | learner decisions/s | s/iteration | speedup | Ray overhead s/iteration |
|---|---|---|---|---|---|---|
{rows}

Learner (one process): PPO update {update_s:.2f} s per iteration of
{learner["decisions_per_iteration"]:.0f} decisions ({learner["update_decisions_per_s"]:.0f}
decisions/s); playing the same iteration in one process takes {learner["play_seconds_per_iteration"]:.2f} s.

Expected with W workers on free cores (one core each) and one learner, from the measured
parts: rollout = play / W + Ray overhead ({overhead:.2f} s), iteration = rollout + update.
Each added core speeds up the playing part linearly; Ray's overhead and the update do not
shrink.

| W | rollout s | rollout speedup | s/iteration | learner decisions/s |
|---|---|---|---|---|
{proj}

{bottleneck_text} Beyond that point more workers shorten only the playing part; the update
(one process, synchronous PPO) bounds the run at {learner["update_decisions_per_s"]:.0f}
decisions/s unless the learner gets more threads (`torch_threads`) or a GPU.
"""
    print(md)
    write_results(args, f"ray_{args.game}", results, md)


if __name__ == "__main__":
    main()
