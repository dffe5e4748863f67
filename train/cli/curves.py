"""``spieltisch curves``: the learning curves of one training run or of several side by side
(:mod:`spieltisch.train.curves`), drawn from their TensorBoard logs.

Example::

    spieltisch curves runs/hus_alphazero runs/hus_ppo --out hus.png

Exit codes: 0 drawn, 2 bad arguments (a folder without logs, an output that cannot be written),
1 nothing to draw yet.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path


def add_parser(subparsers: argparse._SubParsersAction) -> argparse.ArgumentParser:
    p = subparsers.add_parser(
        "curves",
        help="draw the learning curves of training runs (evaluations and losses) as a PNG",
        description=(
            "Draw the learning curves of one training run, or of several side by side, from "
            "their TensorBoard logs (run_dir/tb): the periodic evaluations against each "
            "opponent (scores, or backgammon's points per game with their 95% interval) and "
            "the losses, against the runs' progress (steps, games or positions). A run draws "
            "its own run_dir/curves.png as it goes; this draws any run, a running one too, "
            "and compares runs."
        ),
        epilog=(
            "Examples: spieltisch curves runs/kalaha_ppo; spieltisch curves runs/a runs/b "
            "--out compare.png. Exit codes: 0 drawn; 2 bad arguments; 1 nothing to draw yet."
        ),
    )
    p.add_argument("run_dirs", nargs="+", metavar="RUN_DIR", help="training run directories")
    p.add_argument(
        "--out",
        metavar="PATH",
        help="the picture to write, PNG or the format its suffix names (.svg, .pdf; default: "
        "RUN_DIR/curves.png for one run, curves.png here for several)",
    )
    return p


def run(args: argparse.Namespace) -> int:
    from spieltisch.agents.files import check_output_path, check_plot_format
    from spieltisch.train.curves import CURVES, plot_runs, run_unit

    run_dirs = [Path(d) for d in args.run_dirs]
    for run_dir in run_dirs:
        if not run_dir.is_dir():
            print(f"spieltisch curves: no run directory {run_dir}", file=sys.stderr)
            return 2
    default = run_dirs[0] / CURVES if len(run_dirs) == 1 else Path(CURVES)
    out = Path(args.out) if args.out else default
    try:
        check_output_path(out)
        check_plot_format(out)
    except ValueError as err:
        print(f"spieltisch curves: {err}", file=sys.stderr)
        return 2
    units = sorted({run_unit(d) for d in run_dirs})
    try:
        drawn = plot_runs(run_dirs, " / ".join(units), out)
    except ValueError as err:
        print(f"spieltisch curves: {err}", file=sys.stderr)
        return 2
    if drawn is None:
        print("spieltisch curves: nothing logged to draw yet", file=sys.stderr)
        return 1
    print(f"wrote {drawn}")
    return 0
