"""Reference check of the arena: GNU Backgammon 0-ply against pubeval, cubeless, gammons counted.

Published: about +0.63 points per game for gnubg 0-ply against pubeval. Usage::

    python benchmarks/arena_reference.py --seeds 2500 --workers 2 [--quick]

plays ``2 * seeds`` games (each seed with both seat orders, the same dice) and writes
``benchmarks/results/arena_gnubg_pubeval.json`` and ``.md``.
"""

from __future__ import annotations

import argparse
import json
import time

from _common import add_run_options, result_path, shrink_if_quick, write_json, write_text
from spieltisch.agents.arena import evaluate

PUBLISHED = 0.63


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--seeds", type=int, default=2500)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--workers", type=int, default=2)
    add_run_options(ap)
    args = ap.parse_args()
    shrink_if_quick(args, seeds=2, workers=1)
    t = time.perf_counter()
    report = evaluate(
        "backgammon", ["gnubg", "pubeval"], args.seeds, args.seed, "pair",
        workers=args.workers, progress=True,
    )  # fmt: skip
    seconds = time.perf_counter() - t
    p = report.pairs[0]
    inside = p.reward_low <= PUBLISHED <= p.reward_high
    text = report.to_markdown() + (
        f"\nPublished reference: +{PUBLISHED} ppg; measured {p.mean_reward:+.3f} "
        f"[{p.reward_low:+.3f}, {p.reward_high:+.3f}] over {p.games} games: "
        f"{'inside' if inside else 'OUTSIDE'} the 95% interval. Wall time {seconds:.0f} s "
        f"({args.workers} workers, machine shared with other jobs).\n"
        f"Command: python benchmarks/arena_reference.py --seeds {args.seeds} "
        f"--seed {args.seed} --workers {args.workers}\n"
    )
    print(text)
    write_json(result_path(args, "arena_gnubg_pubeval.json"), json.loads(report.to_json()))
    write_text(result_path(args, "arena_gnubg_pubeval.md"), text)


if __name__ == "__main__":
    main()
