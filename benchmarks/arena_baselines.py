"""Every scripted baseline against every other, per game (round robins), with intervals.

Usage::

    python benchmarks/arena_baselines.py [--scale 1.0] [--workers 2] [--games kalaha hus ...]

Writes ``benchmarks/results/arena_baselines.json`` and ``.md`` (one section per game: pairs with
Wilson score intervals and paired mean-reward intervals, Bradley-Terry Elo with bootstrap
intervals). Sizes are modest (the machine is shared); ``--scale`` multiplies the seeds.
"""

from __future__ import annotations

import argparse
import json
import pathlib
import time

from spieltisch.agents.arena import evaluate, machine_info

RESULTS = pathlib.Path(__file__).parent / "results"

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
    ap.add_argument("--games", nargs="+", default=list(PLAN))
    args = ap.parse_args()
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
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / "arena_baselines.md").write_text(text)
    (RESULTS / "arena_baselines.json").write_text(
        json.dumps({"command": cmd, "machine": machine_info(), "games": reports}, indent=2)
    )


if __name__ == "__main__":
    main()
