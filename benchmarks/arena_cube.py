"""Cubeful money play: agents with Janowski's cube decisions against the same agents without.

Usage::

    python benchmarks/arena_cube.py [--seeds 1000] [--seed 600000] [--workers 1] [--quick]

Each pair plays ``--seeds`` seeds x both seat orders of backgammon with the doubling cube
(``-o cube=true``: money play, rewards = points x cube), the same dice for both orders of a
seed. Pairs: ``gnubg`` (0-ply, ``cube=janowski``, cube life 0.68) against ``gnubg:cube=never``
(never doubles, always takes), ``pretrained:backgammon`` likewise, ``gnubg`` against itself with
cube life 0 and 1, ``gnubg`` against ``pretrained:backgammon``, both with the cube, and the
shipped nets against ``pubeval``, which decides by the same formulas from probabilities fitted to
its own self-play results (``agents/data/pubeval_cube.json``), and against
``pubeval:cube=never`` (never doubles, always takes; the comparison recorded before pubeval had
probabilities). Writes
``benchmarks/results/backgammon_cube.json`` and ``.md``: mean points per game with a paired
interval (one seed = one paired observation) and how often each side doubled, took and dropped.
"""

from __future__ import annotations

import argparse
import json
import time

from _common import add_run_options, result_path, shrink_if_quick, write_json, write_text
from spieltisch.agents.arena import evaluate, machine_info

PAIRS = [
    ("gnubg", "gnubg:cube=never"),
    ("pretrained:backgammon", "pretrained:backgammon:cube=never"),
    # the cube life: both sides double and take by Janowski, with different x
    ("gnubg", "gnubg:cube_life=0.0"),
    ("gnubg", "gnubg:cube_life=1.0"),
    # different checker play, both with the cube
    ("gnubg", "pretrained:backgammon"),
    # issue 19's target: cubeful money play against pubeval with the same cube rule, from
    # pubeval's own probabilities; and what pubeval's cube use is worth to itself
    ("pretrained:backgammon", "pubeval"),
    ("pretrained:backgammon:algo=td_long", "pubeval"),
    ("pubeval", "pubeval:cube=never"),
    ("pretrained:backgammon", "pubeval:cube=never"),
]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--seeds", type=int, default=1000)
    ap.add_argument("--seed", type=int, default=600_000, help="first seed (fresh: not a test's)")
    ap.add_argument("--workers", type=int, default=1)
    add_run_options(ap)
    args = ap.parse_args()
    shrink_if_quick(args, seeds=1, workers=1)
    sections, reports = [], {}
    for agent, opponent in PAIRS:
        t = time.perf_counter()
        report = evaluate(
            "backgammon", [agent, opponent], args.seeds, args.seed, "pair",
            options={"cube": True}, workers=args.workers, progress=True,
        )  # fmt: skip
        seconds = time.perf_counter() - t
        sections.append(report.to_markdown() + f"\n({seconds:.0f} s)\n")
        reports[f"{agent} vs {opponent}"] = json.loads(report.to_json())
        print(sections[-1], flush=True)
    cmd = (
        f"python benchmarks/arena_cube.py --seeds {args.seeds} --seed {args.seed} "
        f"--workers {args.workers}"
    )
    text = (
        "# Cube decisions in money play\n\nCommand: `" + cmd + "` (machine shared with other "
        "jobs). Backgammon with the doubling cube (money play, no Jacoby rule; rewards are "
        "points x cube). Each seed is played once per seat order with the same dice. The agent "
        "with `cube=janowski` (the default) doubles and takes by Janowski's formulas with cube "
        "life 0.68 (`agents/backgammon/cube.py`); `cube=never` never doubles and always takes. "
        "The mean reward is points per game of the first agent. Against `cube=never` (same "
        "checker play, never drops) each seed's two games are the same game up to the cube, so "
        "W / L split evenly and the difference in points is the cube's alone.\n\n"
        + "\n".join(sections)
    )
    write_text(result_path(args, "backgammon_cube.md"), text)
    write_json(
        result_path(args, "backgammon_cube.json"),
        {"command": cmd, "machine": machine_info(), "pairs": reports},
    )


if __name__ == "__main__":
    main()
