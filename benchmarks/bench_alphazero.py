"""Gumbel AlphaZero self-play: throughput, where the time goes, and the memory of a big run.

Run: ``nice -n 10 python benchmarks/bench_alphazero.py [--checkpoint PATH]`` (``--quick``: a smoke
run). Results go to ``benchmarks/results/alphazero_throughput.json`` and ``.md``.

1. **Throughput** on Kalah(6,4) goki: self-play positions (searched moves) per second at each of
   ``--sims`` (default 16 and 64) with ``--games`` parallel games, as
   :func:`spieltisch.train.alphazero.self_play` plays them in training (``--rounds`` rounds of
   whole games, the sizes interleaved so that they see the same machine load). The network is
   ``--checkpoint`` (default: an untrained ``[256, 256]`` MLP, as in the shipped config);
   per wall second and per CPU second of this process (one torch thread). ``--device cuda``
   (or ``auto``: the GPU when there is one) evaluates the network there, the tree and the
   engine staying on the CPU; the device is recorded with the results.
2. **Profile**: the share of the search's time spent in the network (the evaluator: tensors in,
   forward pass, arrays out) and in the tree and the engine (selection, backup, stepping the
   copies, observing), measured by timing every evaluator call inside the same runs.
3. **Memory**: peak resident memory (``ru_maxrss`` of a child process) of one training iteration
   of the shipped Kalah(6,4) config with ``--memory-games`` (1,024) parallel games at
   ``--memory-sims`` (64) simulations: self-play to the end of every game, the replay buffer,
   the learning steps. Target of issue 17: at most 4 GiB.
"""

from __future__ import annotations

import argparse
import os
import platform
import resource
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np
import torch
from _common import add_run_options, positive_int, shrink_if_quick, write_results
from spieltisch.agents.arena.provenance import load_average_text
from spieltisch.agents.neural.checkpoint import CheckpointError, load_checkpoint
from spieltisch.agents.neural.gumbel_search import GumbelSearch, policy_evaluator
from spieltisch.agents.neural.policy import PolicyNet
from spieltisch.train.alphazero import search_config, self_play
from spieltisch.train.config import load_config
from spieltisch.train.ppo import make_arch, make_games, resolve_device

ROOT = Path(__file__).resolve().parents[1]
CONFIG = ROOT / "configs" / "kalaha_6x4_alphazero.yaml"


class TimedEvaluator:
    """The network evaluator, with the seconds spent inside it added up."""

    def __init__(self, evaluate: Any) -> None:
        self.evaluate, self.seconds, self.calls = evaluate, 0.0, 0

    def __call__(self, obs: np.ndarray, mask: np.ndarray) -> Any:
        start = time.perf_counter()
        out = self.evaluate(obs, mask)
        self.seconds += time.perf_counter() - start
        self.calls += 1
        return out


class TimedSearch(GumbelSearch):
    """The search, with the seconds spent in it added up."""

    seconds = 0.0

    def search(self, roots: Any, evaluate: Any, rng: np.random.Generator, **kwargs: Any) -> Any:
        start = time.perf_counter()
        out = super().search(roots, evaluate, rng, **kwargs)
        self.seconds += time.perf_counter() - start
        return out


def throughput(args: argparse.Namespace) -> dict[str, Any]:
    cfg = load_config(str(CONFIG), [f"num_games={args.games}"])
    games = make_games(cfg.game, cfg.game_options, args.games)
    if args.checkpoint:
        net = load_checkpoint(args.checkpoint, "kalaha").policy()
        network = str(args.checkpoint)
    else:
        torch.manual_seed(0)
        net = PolicyNet(make_arch(cfg, games))
        network = f"untrained MLP {cfg.hidden}"
    device = resolve_device(args.device)
    net.eval().to(device)
    torch.set_num_threads(1)
    rng = np.random.default_rng(0)
    runs = {}
    for sims in args.sims:
        search = TimedSearch(search_config(cfg, sims, cfg.gumbel_scale))
        evaluate = TimedEvaluator(policy_evaluator(net, games.num_players, device))
        runs[sims] = {"search": search, "evaluate": evaluate, "positions": 0, "wall": 0.0}
        runs[sims]["cpu"] = 0.0
        self_play(cfg, games, search, evaluate, rng)  # warm-up: numba compiles
        search.seconds, evaluate.seconds, evaluate.calls = 0.0, 0.0, 0
    for _ in range(args.rounds):
        for run in runs.values():
            wall, cpu = time.perf_counter(), time.process_time()
            positions, _ = self_play(cfg, games, run["search"], run["evaluate"], rng)
            run["wall"] += time.perf_counter() - wall
            run["cpu"] += time.process_time() - cpu
            run["positions"] += len(positions["value"])
    rows = {}
    for sims, run in runs.items():
        search_s, net_s = run["search"].seconds, run["evaluate"].seconds
        rows[str(sims)] = {
            "simulations": sims,
            "games": args.games,
            "positions": run["positions"],
            "wall_s": run["wall"],
            "cpu_s": run["cpu"],
            "positions_per_s": run["positions"] / run["wall"],
            "positions_per_cpu_s": run["positions"] / run["cpu"],
            "search_share_of_selfplay": search_s / run["wall"],
            "network_share_of_search": net_s / search_s,
            "tree_and_engine_share_of_search": 1.0 - net_s / search_s,
            "network_calls": run["evaluate"].calls,
        }
    name = torch.cuda.get_device_name(device) if device.startswith("cuda") else "cpu"
    return {"network": network, "device": device, "device_name": name, "rows": rows}


def memory(args: argparse.Namespace) -> dict[str, Any]:
    """One training iteration of the shipped config in a child process; its peak RSS."""
    run_dir = Path(args.tmp) / "bench_alphazero_memory"
    sets = [
        f"num_games={args.memory_games}",
        f"num_simulations={args.memory_sims}",
        f"run_dir={run_dir}",
        "stop_after_iterations=1",
        "eval_interval=0",
        "checkpoint_interval=1",
        "progress=false",
        "tensorboard=false",
    ]
    code = (
        "import sys; from spieltisch.train.config import load_config; "
        "from spieltisch.train.alphazero import train; "
        f"r = train(load_config({str(CONFIG)!r}, sys.argv[1:]), overwrite=True, log=lambda *a: None); "
        "print(r['global_step'])"
    )
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    out = subprocess.run(
        [sys.executable, "-c", code, *sets], capture_output=True, text=True, check=True
    )
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return {
        "games": args.memory_games,
        "simulations": args.memory_sims,
        "positions": int(out.stdout.split()[-1]),
        "peak_rss_gib": after.ru_maxrss / 2**20,  # kilobytes on Linux
        "wall_s": time.perf_counter() - start,
        "cpu_s": (after.ru_utime + after.ru_stime) - (before.ru_utime + before.ru_stime),
        "target_gib": 4.0,
    }


def markdown(results: dict[str, Any]) -> str:
    t, m = results["throughput"], results["memory"]
    lines = [
        "# Gumbel AlphaZero self-play: throughput, profile, memory",
        "",
        f"Machine: {results['machine']}; load average at the end {results['load_average']}. "
        "One torch thread; the sizes were run interleaved.",
        "",
        f"## Throughput and profile (Kalah(6,4) goki, network: {t['network']}, evaluated on "
        f"{t.get('device_name', 'cpu')})",
        "",
        "| simulations | games | positions | positions/s | positions/CPU s | network share "
        "of search | tree + engine share | search share of self-play |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for row in t["rows"].values():
        lines.append(
            f"| {row['simulations']} | {row['games']} | {row['positions']:,} | "
            f"{row['positions_per_s']:,.0f} | {row['positions_per_cpu_s']:,.0f} | "
            f"{row['network_share_of_search']:.0%} | "
            f"{row['tree_and_engine_share_of_search']:.0%} | "
            f"{row['search_share_of_selfplay']:.0%} |"
        )
    lines += [
        "",
        "## Memory of one training iteration",
        "",
        f"{m['games']:,} parallel games at {m['simulations']} simulations "
        f"({m['positions']:,} positions, {m['wall_s']:.0f} s wall, {m['cpu_s']:.0f} CPU s): "
        f"peak RSS **{m['peak_rss_gib']:.2f} GiB** (target at most {m['target_gib']:.0f} GiB: "
        f"{'met' if m['peak_rss_gib'] <= m['target_gib'] else 'missed'}).",
        "",
        f"Command: `{results['command']}`",
        "",
    ]
    return "\n".join(lines)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--checkpoint", type=Path, help="the network (default: untrained)")
    ap.add_argument("--sims", type=positive_int, nargs="+", default=[16, 64])
    ap.add_argument("--games", type=positive_int, default=128)
    ap.add_argument("--rounds", type=positive_int, default=3)
    ap.add_argument("--device", default="cpu", help="the network's: cpu, cuda or auto")
    ap.add_argument("--memory-games", type=positive_int, default=1024)
    ap.add_argument("--memory-sims", type=positive_int, default=64)
    ap.add_argument("--tmp", default=os.environ.get("TMPDIR", "/tmp"))
    add_run_options(ap)
    args = ap.parse_args()
    if args.checkpoint is not None:  # a wrong path is a usage error, not a traceback
        try:
            load_checkpoint(args.checkpoint)
        except CheckpointError as err:
            ap.error(str(err))
    shrink_if_quick(args, sims=[2, 4], games=4, rounds=1, memory_games=4, memory_sims=2)
    results = {
        "throughput": throughput(args),
        "memory": memory(args),
        "machine": f"{platform.platform()}, {os.cpu_count()} CPUs, torch {torch.__version__}",
        "load_average": load_average_text(),
        "command": "python benchmarks/bench_alphazero.py " + " ".join(sys.argv[1:]),
    }
    print(markdown(results))
    write_results(args, "alphazero_throughput", results, markdown(results))


if __name__ == "__main__":
    main()
