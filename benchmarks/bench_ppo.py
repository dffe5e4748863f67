"""PPO throughput end to end: a Kalaha 6x6 run of the default config, environment steps per
second, with the update on 1 and on 2 torch threads (``update_threads``), interleaved rounds.

    python benchmarks/bench_ppo.py            # 5 rounds of the whole default run per contender
    python benchmarks/bench_ppo.py --quick    # a smoke run (writes nothing)

Each round times ``train()`` of ``configs/kalaha_ppo.yaml`` in this process (its pool opponents
included; no evaluations, no checkpoints inside the timed steps) for every contender in turn;
the median over rounds is reported with the share of the last iteration spent in the update.
``--device cuda`` adds a contender with the learner on the GPU (``device: cuda``; ``auto``: when
there is one), the games and the playing copy of the network staying on the CPU. Then a
profile on one thread says where the time goes (:func:`where_the_time_goes`): the collection's
parts and the update's costliest torch operators. Results go to
``benchmarks/results/ppo_throughput.json`` and ``.md``.
"""

from __future__ import annotations

import argparse
import cProfile
import pstats
import statistics
import sys
import tempfile
import time
from pathlib import Path

import torch
import yaml

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import add_run_options, positive_int, write_results
from spieltisch.agents.arena.provenance import machine_info
from spieltisch.train.config import build_config
from spieltisch.train.ppo import (
    PPOTrainer,
    play_iteration,
    pool_opponents,
    ppo_update,
    resolve_device,
    train,
)
from torch.profiler import ProfilerActivity, profile

CONFIG = Path(__file__).resolve().parents[1] / "configs" / "kalaha_ppo.yaml"


def one_run(steps: int, update_threads: int, device: str = "cpu") -> dict[str, float]:
    """Steps per second of one run (start-up included, as a user sees it) and the share of
    the last iteration that went to the update."""
    with tempfile.TemporaryDirectory() as folder:
        cfg = build_config(
            yaml.safe_load(CONFIG.read_text()),
            [
                f"total_steps={steps}",
                f"run_dir={folder}/run",
                f"update_threads={update_threads}",
                f"device={device}",
                "eval_interval=0",
                "final_eval_games=0",
                "checkpoint_interval=100000",
                "progress=false",
                "tensorboard=false",
            ],
        )
        start = time.perf_counter()
        result = train(cfg, log=lambda *a, **k: None)
        seconds = time.perf_counter() - start
    return {
        "steps": float(result["global_step"]),
        "seconds": seconds,
        "steps_per_second": result["global_step"] / seconds,
        "update_share": float(result["metrics"].get("throughput/update_share", float("nan"))),
    }


#: the collection's parts (function name, file it is defined in) that the profile reports
COLLECTION_PARTS = {
    "learner's network (policy_step)": ("policy_step", "opponents.py"),
    "opponents, all (opponent_actions)": ("opponent_actions", "opponents.py"),
    "scripted baselines (act_boards)": ("act_boards", "alphabeta.py"),
    "engine: step": ("step", "batch.py"),
    "engine: observe": ("observe", "batch.py"),
    "advantages (gae)": ("gae", "ppo.py"),
}


def where_the_time_goes(iterations: int) -> dict:
    """One-thread profile of the default config after a warm-up iteration, the pool full of
    snapshots (``pool_size``, as in most of a run's iterations): the collection's
    parts (cProfile, cumulative seconds over ``iterations`` iterations' games) and the update's
    ten costliest torch operators (self CPU time over as many updates)."""
    with tempfile.TemporaryDirectory() as folder:
        cfg = build_config(
            yaml.safe_load(CONFIG.read_text()),
            [f"run_dir={folder}/run", "update_threads=1", "progress=false", "tensorboard=false"],
        )
        trainer = PPOTrainer(cfg)
        trainer.step(1)  # warm-up
        state = trainer.state
        # the pool full, as through most of a default run (a snapshot joins every pool_interval)
        snapshot = {k: v.detach().clone() for k, v in trainer.actor.state_dict().items()}
        state.pool = [None] * cfg.pool_random + [snapshot] * cfg.pool_size
        trainer.opponents = pool_opponents(state.net.arch, state.pool, trainer.baselines)
        collector = cProfile.Profile()
        rollouts = []
        start = time.process_time()
        for _ in range(iterations):
            collector.enable()
            rollouts.append(
                play_iteration(cfg, trainer.games, trainer.actor, trainer.opponents, state.rng)
            )
            collector.disable()
        collect_seconds = time.process_time() - start
        cumulative: dict[tuple[str, str], float] = {}
        own: dict[tuple[str, str], float] = {}
        for (file, _line, name), row in pstats.Stats(collector).stats.items():
            key = (name, Path(file).name)  # summed over classes (several opponents' actions)
            cumulative[key] = cumulative.get(key, 0.0) + row[3]
            own[key] = own.get(key, 0.0) + row[2]
        parts = {label: cumulative.get(key, 0.0) for label, key in COLLECTION_PARTS.items()}
        parts["the loop's own lines (play_iteration)"] = own.get(("play_iteration", "ppo.py"), 0)
        with profile(activities=[ProfilerActivity.CPU]) as prof:
            start = time.process_time()
            for rollout in rollouts:
                ppo_update(state.net, state.optimizer, rollout, cfg, state.rng)
            update_seconds = time.process_time() - start
    steps = sum(len(r.actions) for r in rollouts)
    averages = prof.key_averages()
    ops = sorted(averages, key=lambda e: e.self_cpu_time_total, reverse=True)[:10]
    total_self = sum(e.self_cpu_time_total for e in averages)
    return {
        "iterations": iterations,
        "learner_steps": steps,
        "collection_us_per_step_profiled": 1e6 * collect_seconds / steps,
        "update_us_per_step_profiled": 1e6 * update_seconds / steps,
        "collection_parts_share": {k: v / collect_seconds for k, v in parts.items()},
        "update_operators_share": {e.key: e.self_cpu_time_total / total_self for e in ops},
    }


def profile_lines(p: dict) -> list[str]:
    lines = [
        "",
        f"## Where the time goes (one thread, {p['iterations']} iterations, "
        f"{p['learner_steps']:,} learner steps, under the profilers)",
        "",
        f"Collection {p['collection_us_per_step_profiled']:.1f} us per learner step (cProfile, "
        "cumulative time of each part; the parts overlap where one calls another):",
        "",
        "| part of the collection | share |",
        "|---|---:|",
        *(f"| {k} | {v:.0%} |" for k, v in p["collection_parts_share"].items()),
        "",
        f"Update {p['update_us_per_step_profiled']:.1f} us per learner step; its ten costliest "
        "torch operators (self CPU time):",
        "",
        "| operator | share of the update |",
        "|---|---:|",
        *(f"| `{k}` | {v:.1%} |" for k, v in p["update_operators_share"].items()),
    ]
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=positive_int, default=5, help="interleaved rounds")
    parser.add_argument(
        "--steps",
        type=positive_int,
        default=yaml.safe_load(CONFIG.read_text())["total_steps"],
        help="steps per run (default: the config's whole run, its pool filling as it would)",
    )
    parser.add_argument(
        "--device", default="cpu", help="cpu; cuda (or auto: if present) adds a GPU learner"
    )
    add_run_options(parser)
    args = parser.parse_args()
    rounds, steps = (1, 3_000) if args.quick else (args.rounds, args.steps)
    results: dict = {"machine": machine_info(), "config": str(CONFIG.name), "steps": steps}
    contenders = {"update_threads=1": (1, "cpu"), "update_threads=2": (2, "cpu")}
    gpu = resolve_device(args.device)
    if gpu != "cpu":
        contenders[f"learner on {torch.cuda.get_device_name(gpu)}"] = (1, gpu)
    results["gpu"] = torch.cuda.get_device_name(gpu) if gpu != "cpu" else None
    one_run(min(steps, 20_000), 1)  # warm-up: numba caches, torch
    runs: dict[str, list[dict[str, float]]] = {name: [] for name in contenders}
    for r in range(rounds):
        for name, (threads, device) in contenders.items():
            runs[name].append(one_run(steps, threads, device))
            print(f"round {r + 1}: {name}: {runs[name][-1]['steps_per_second']:,.0f} steps/s")
    summary = {
        name: {
            "median_steps_per_second": statistics.median(x["steps_per_second"] for x in rows),
            "median_update_share": statistics.median(x["update_share"] for x in rows),
            "rounds": rows,
        }
        for name, rows in runs.items()
    }
    results["contenders"] = summary
    lines = [
        "# PPO throughput, Kalaha 6x6 (configs/kalaha_ppo.yaml)",
        "",
        f"Measured by `python benchmarks/bench_ppo.py` on {results['machine']['cpu']} "
        f"({results['machine']['cpu_count']} cores), {results['machine']['date']}, git "
        f"{results['machine']['git_revision']}; load average at start "
        f"{results['machine']['load_average']}. {steps:,} steps per run, start-up included, "
        f"median of {rounds} interleaved rounds.",
        "",
        "| update | steps/s | update's share of an iteration |",
        "|---|---:|---:|",
    ]
    for name, s in summary.items():
        lines.append(
            f"| {name} | {s['median_steps_per_second']:,.0f} | {s['median_update_share']:.0%} |"
        )
    results["profile"] = where_the_time_goes(1 if args.quick else 5)
    lines += profile_lines(results["profile"])
    md = "\n".join(lines) + "\n"
    print()
    print(md)
    write_results(args, "ppo_throughput", results, md)


if __name__ == "__main__":
    main()
