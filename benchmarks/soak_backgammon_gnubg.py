"""Soak test: our backgammon move generator against GNU Backgammon's on many positions.

    python benchmarks/soak_backgammon_gnubg.py [--positions 100000] [--seed 7]
        [--out benchmarks/results/backgammon_gnubg_soak.json] [--quick]

Positions come from random games (uniform over the distinct legal plays, fixed seed); for each
position and each of the 21 distinct rolls, the set of positions after our legal plays must equal
``gnubg_nn.moves``. The CI test does the same on 5,000 positions
(``tests/test_backgammon_gnubg.py``). Prints and writes the counts, the time, and the machine.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

from _common import add_run_options, result_path, shrink_if_quick, write_json
from spieltisch.agents.arena.provenance import machine_info as machine
from spieltisch.envs.backgammon import BackgammonGame
from spieltisch.envs.backgammon import gnubg_adapter as ga
from spieltisch.envs.backgammon import rules as k


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--positions", type=int, default=100_000)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument(
        "--out", type=Path, help="default: backgammon_gnubg_soak.json in --results-dir"
    )
    add_run_options(parser)
    args = parser.parse_args(argv)
    shrink_if_quick(args, positions=100)
    start = time.perf_counter()
    boards, turns = ga.random_positions(args.positions, args.seed, BackgammonGame())
    collected = time.perf_counter() - start
    bear_off = int(((boards[:, k.OFF] + boards[:, k.SIDE + k.OFF]) > 0).sum())
    on_bar = int(((boards[:, k.BAR] + boards[:, k.SIDE + k.BAR]) > 0).sum())
    try:
        stats = ga.compare_with_gnubg(boards, turns)
        verdict = "all equal"
    except AssertionError as err:
        print(f"MISMATCH: {err}", file=sys.stderr)
        stats, verdict = {}, f"mismatch: {str(err).splitlines()[0]}"
    elapsed = time.perf_counter() - start
    result = {
        "what": "legal plays (resulting positions) vs gnubg_nn.moves, 21 rolls per position",
        "seed": args.seed,
        "verdict": verdict,
        **stats,
        "positions_with_checkers_off": bear_off,
        "positions_with_checkers_on_the_bar": on_bar,
        "seconds": round(elapsed, 1),
        "seconds_collecting_positions": round(collected, 1),
        "machine": machine(),
    }
    print(json.dumps(result, indent=2))
    write_json(args.out or result_path(args, "backgammon_gnubg_soak.json"), result)
    return 0 if verdict == "all equal" else 1


if __name__ == "__main__":
    sys.exit(main())
