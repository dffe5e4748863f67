"""Every scripted baseline against every other, per game (round robins), with intervals.

Usage::

    python benchmarks/arena_baselines.py [--scale 1.0] [--workers 2] [--games kalaha hus ...] [--quick]

Writes ``benchmarks/results/arena_baselines.json`` and ``.md`` (one section per game: pairs with
Wilson score intervals and paired mean-reward intervals, Bradley-Terry Elo with bootstrap
intervals). Sizes are modest (the machine is shared); ``--scale`` multiplies the seeds
(``--quick``: one seed, one worker, HiLo and backgammon only).
"""

from __future__ import annotations

import argparse
import json
import time

from _common import add_run_options, result_path, shrink_if_quick, write_json, write_text
from spieltisch.agents.arena import evaluate, machine_info

#: game -> (agents, seeds, opening plies)
PLAN = {
    "kalaha": (["random", "greedy", "alphabeta:depth=2", "alphabeta:depth=4",
                "alphabeta:depth=6"], 50, 2),
    "hus": (["random", "greedy", "alphabeta:depth=2", "alphabeta:depth=4"], 30, 2),
    "hilo": (["random", "greedy", "heuristic"], 20, 0),
    "backgammon": (["random", "greedy", "pubeval", "gnubg"], 100, 0),
}  # fmt: skip


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--scale", type=float, default=1.0)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--games", nargs="+", default=list(PLAN), choices=list(PLAN))
    add_run_options(ap)
    args = ap.parse_args()
    # Kalaha's and Hus's baselines are alpha-beta searches, which compile for half a minute
    shrink_if_quick(args, scale=0.0, workers=1, games=["hilo", "backgammon"])
    sections = []
    reports = {}
    for game in args.games:
        agents, seeds, opening = PLAN[game]
        seeds = max(1, round(seeds * args.scale))
        t = time.perf_counter()
        report = evaluate(
            game, agents, seeds, args.seed, "round-robin", opening_plies=opening,
            workers=args.workers, progress=True,
        )  # fmt: skip
        seconds = time.perf_counter() - t
        sections.append(report.to_markdown() + f"\n({seconds:.0f} s)\n")
        reports[game] = json.loads(report.to_json())
        print(sections[-1], flush=True)
    cmd = (
        f"python benchmarks/arena_baselines.py --scale {args.scale} --workers {args.workers} "
        f"--seed {args.seed} --games {' '.join(args.games)}"
    )
    text = (
        "# Baselines against each other\n\nCommand: `" + cmd + "` (machine shared with other "
        "jobs). Each seed is played once per seat order with the same chance events (dice, deal);"
        " Kalaha and Hus start with random opening plies (the same for both orders).\n\n"
        + "\n".join(sections)
    )
    write_text(result_path(args, "arena_baselines.md"), text)
    write_json(
        result_path(args, "arena_baselines.json"),
        {"command": cmd, "machine": machine_info(), "games": reports},
    )


if __name__ == "__main__":
    main()
