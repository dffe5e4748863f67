"""TD(lambda) backgammon training throughput, side by side in one run: the compiled trainer
(:func:`spieltisch.train.td.train_games`, one thread) against the plain numpy learner of the same
algorithm and net (:mod:`spieltisch.train.td_reference`, the peer).

    python benchmarks/bench_td.py [--hidden 80] [--rounds 3] [--seconds 10]
        [--out benchmarks/results/bench_td.json] [--quick]

Both learn from the same initial weights (seed 0) with the same step size and lambda, in
interleaved rounds of ``--seconds`` each, and keep learning across rounds (each its own copy of
the net). Each rate is the best round (the least disturbed by other processes); the medians and
the rates per CPU-second (less sensitive to a shared machine) are recorded too. The average
plays per game is recorded for each, since game length depends on what the net has learnt.
Target (issue #6): at least 40,000 training games per hour on 2 cores; published pure-numpy
TD implementations reach about 20,000.
"""

from __future__ import annotations

import argparse
import statistics
import time
from pathlib import Path

import numpy as np
from _common import add_run_options, result_path, shrink_if_quick, write_json
from spieltisch.agents.arena.provenance import machine_info
from spieltisch.agents.backgammon import td_value as tv
from spieltisch.envs.backgammon import rules as k
from spieltisch.train import td
from spieltisch.train import td_reference as ref


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--hidden", type=int, default=80)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--seconds", type=float, default=10.0)
    ap.add_argument("--lr", type=float, default=0.1)
    ap.add_argument("--lam", type=float, default=0.7)
    ap.add_argument("--out", type=Path, help="default: bench_td.json in --results-dir")
    add_run_options(ap)
    args = ap.parse_args()
    shrink_if_quick(args, hidden=8, rounds=1, seconds=0.2)

    arch = tv.TDArch(hidden=args.hidden)
    fast = tv.init_params(arch, np.random.default_rng(0))
    slow = {n: a.copy() for n, a in fast.items()}
    rng_fast, rng_slow = np.random.default_rng(1), np.random.default_rng(1)
    initial, ws = td.initial_vector(), k.new_workspace()

    def run_fast(n: int) -> int:
        stats = np.zeros((n, 5))
        td.train_games(
            fast["W1"], fast["b1"], fast["W2"], fast["b2"], initial, n, 0,
            args.lr, args.lr, 1, args.lam, rng_fast, ws, stats,
        )  # fmt: skip
        return int(stats[:, td.ST_MOVES].sum())

    def run_slow(n: int) -> int:
        return int(ref.train_games_numpy(slow, n, args.lr, args.lam, rng_slow).sum())

    run_fast(2)  # compile (cached afterwards)
    run_slow(1)
    rounds: dict[str, list[dict[str, float]]] = {"numba": [], "numpy": []}
    for r in range(args.rounds):
        for name, run, chunk in (("numba", run_fast, 200), ("numpy", run_slow, 2)):
            games = moves = 0
            t0, c0 = time.perf_counter(), time.process_time()
            while time.perf_counter() - t0 < args.seconds:
                moves += run(chunk)
                games += chunk
            wall, cpu = time.perf_counter() - t0, time.process_time() - c0
            row = {
                "games": games,
                "wall_s": wall,
                "cpu_s": cpu,
                "games_per_hour": 3600 * games / wall,
                "games_per_cpu_hour": 3600 * games / max(cpu, 1e-9),
                "plays_per_game": moves / games,
            }
            rounds[name].append(row)
            print(
                f"round {r + 1} {name:6s} {row['games_per_hour']:>10,.0f} games/h "
                f"({row['games_per_cpu_hour']:>10,.0f} per CPU-hour), "
                f"{row['plays_per_game']:.1f} plays/game"
            )
    summary = {}
    for name, rows in rounds.items():
        summary[name] = {
            "best_games_per_hour": max(r["games_per_hour"] for r in rows),
            "median_games_per_hour": statistics.median(r["games_per_hour"] for r in rows),
            "best_games_per_cpu_hour": max(r["games_per_cpu_hour"] for r in rows),
            "median_plays_per_game": statistics.median(r["plays_per_game"] for r in rows),
        }
    ratio = summary["numba"]["best_games_per_hour"] / summary["numpy"]["best_games_per_hour"]
    ratio_cpu = (
        summary["numba"]["best_games_per_cpu_hour"] / summary["numpy"]["best_games_per_cpu_hour"]
    )
    print(
        f"numba {summary['numba']['best_games_per_hour']:,.0f} games/h, numpy "
        f"{summary['numpy']['best_games_per_hour']:,.0f} games/h: x{ratio:.1f} "
        f"(per CPU-hour x{ratio_cpu:.1f}); target >= 40,000 games/h on 2 cores"
    )
    result = {
        "benchmark": "td_training_throughput",
        "command": "python benchmarks/bench_td.py "
        + " ".join(f"--{a} {getattr(args, a)}" for a in ("hidden", "rounds", "seconds")),
        "net": arch.to_json(),
        "lr": args.lr,
        "lam": args.lam,
        "threads": 1,
        "summary": summary,
        "ratio_numba_over_numpy": ratio,
        "ratio_per_cpu_hour": ratio_cpu,
        "target_games_per_hour": 40_000,
        "rounds": rounds,
        "machine": machine_info(),
        "note": "one trainer thread; timings on a shared 2-core machine are noisy (see load)",
    }
    write_json(args.out or result_path(args, "bench_td.json"), result)


if __name__ == "__main__":
    main()
