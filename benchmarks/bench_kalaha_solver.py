"""Benchmark of the Kalaha solver: published values, time and nodes; agents' move accuracy.

Run: ``python benchmarks/bench_kalaha_solver.py`` (add ``--boards 6,4`` to skip Kalah(6,5), which
takes much longer). Results go to ``benchmarks/results/kalaha_solver.json``.

1. Solves the starting position of Kalah(6,4) and Kalah(6,5) under both rule sets and compares
   with the published values (Irving, Donkers & Uiterwijk 2000; ``shared/spec/kalaha.md``):
   goki (empty capture) 10 and 12, standard 8 and 10. The endgame database is loaded from the
   cache directory (built and timed separately on the first run).
2. Plays the ``perfect`` agent as first player on Kalah(6,4) against ``random`` and a greedy
   baseline: it must never lose (its margin is at least the game value).
3. Move accuracy (share of optimal moves, mean loss per move) of agents on Kalah(6,4) positions
   from games against ``random`` and self-play: by default every registered Kalaha agent except
   ``perfect`` (so agents added later are included), or those named with ``--agents``.

There is no peer solver to run side by side (OpenSpiel has no Kalah solver); the reference is the
published values. Timings on a shared machine are noisy: CPU seconds are recorded too.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import time
from pathlib import Path

import numba
import numpy as np
from spieltisch.agents.base import Agent
from spieltisch.agents.kalaha_accuracy import move_accuracy
from spieltisch.agents.kalaha_agents import PerfectAgent
from spieltisch.agents.kalaha_endgame import default_cache_dir
from spieltisch.agents.kalaha_solver import KalahaSolver, default_db_stones
from spieltisch.agents.match import play_game
from spieltisch.agents.registry import agent_names, make_agent
from spieltisch.envs import make
from spieltisch.envs.kalaha.engine import KalahaGame

PUBLISHED = {(6, 4, "goki"): 10, (6, 4, "standard"): 8, (6, 5, "goki"): 12, (6, 5, "standard"): 10}
RESULTS = Path(__file__).parent / "results" / "kalaha_solver.json"


class Greedy(Agent):
    """Best immediate store difference (extra turn +0.5); first such pit on ties."""

    name = "greedy (benchmark)"

    def act(self, observation, state=None):
        me = state.current_player

        def score(a: int) -> float:
            c = state.child(a)
            s = c.stores()
            again = c.current_player == me and not c.is_terminal()
            return s[me] - s[1 - me] + (0.5 if again else 0.0)

        return max(state.legal_actions(), key=score)


def save(args: argparse.Namespace, results: dict) -> None:
    args.output.parent.mkdir(parents=True, exist_ok=True)
    args.output.write_text(json.dumps({"machine": machine(), **results}, indent=2) + "\n")


def machine() -> dict:
    return {
        "platform": platform.platform(),
        "python": platform.python_version(),
        "cpu_count": os.cpu_count(),
        "numba": numba.__version__,
        "numpy": np.__version__,
        "load_average": os.getloadavg(),
    }


def solve_boards(args: argparse.Namespace) -> list[dict]:
    rows = []
    for board in args.boards:
        pits, seeds = map(int, board.split(","))
        for rules in args.rules:
            game = KalahaGame(pits, seeds, rules)
            db = args.db_stones if args.db_stones is not None else default_db_stones(pits)
            t0 = time.perf_counter()
            c0 = time.process_time()
            solver = KalahaSolver(
                game, db_stones=db, cache_dir=args.cache_dir, tt_bits=args.tt_bits, progress=print
            )
            db_seconds = time.perf_counter() - t0
            db_cpu = time.process_time() - c0
            print(f"Kalah({pits},{seeds}) {rules}: database up to {db} stones ({db_seconds:.2f} s)")
            c0 = time.process_time()
            result = solver.solve(game.new_initial_state())
            cpu = time.process_time() - c0
            published = PUBLISHED.get((pits, seeds, rules))
            row = {
                "board": f"Kalah({pits},{seeds})",
                "rules": rules,
                "value": result.value,
                "published_value": published,
                "matches_published": published is None or result.value == published,
                "optimal_first_moves": result.optimal_moves,
                "nodes": result.nodes,
                "seconds": round(result.seconds, 3),
                "cpu_seconds": round(cpu, 3),
                "nodes_per_cpu_second": round(result.nodes / max(cpu, 1e-9)),
                "db_stones": db,
                "db_load_or_build_seconds": round(db_seconds, 3),
                "db_load_or_build_cpu_seconds": round(db_cpu, 3),
                "tt_bits": args.tt_bits,
            }
            rows.append(row)
            print(
                f"  value {result.value:+d} (published {published:+d}), optimal first moves "
                f"{result.optimal_moves}, {result.nodes:,} nodes, {result.seconds:.2f} s "
                f"({cpu:.2f} s CPU)"
                if published is not None
                else f"  value {result.value:+d}, {result.nodes:,} nodes, {result.seconds:.2f} s"
            )
            save(args, {"solve": rows})  # partial results survive an interrupted run
            solver.progress = None
            if args.perfect_games and (pits, seeds) == (6, 4):
                row["perfect_first_player"] = perfect_games(solver, args.perfect_games)
            del solver
    return rows


def perfect_games(solver: KalahaSolver, games: int) -> dict:
    """``perfect`` as first player against random and greedy: margins (must be >= the value)."""
    game = solver.game
    env = make("kalaha", pits=game.pits, seeds=game.seeds, rules=game.rules, reward="score")
    out = {}
    for name in ("random", "greedy"):
        margins = []
        for g in range(games):
            me = PerfectAgent(game, seed=g, solver=solver)
            other = make_agent("random", "kalaha", seed=g) if name == "random" else Greedy()
            record = play_game(env, {"player_0": me, "player_1": other}, seed=g)
            margins.append(int(record.rewards["player_0"]))
        out[name] = {"games": games, "margins": margins, "lost": sum(m < 0 for m in margins)}
        print(f"  perfect (first) vs {name}: margins {margins}")
    return out


def accuracy(args: argparse.Namespace) -> list[dict]:
    game = KalahaGame(6, 4, "goki")
    # every scripted agent except the solver itself and the person at the keyboard
    names = args.agents or [n for n in agent_names("kalaha") if n not in ("perfect", "human")]
    solver = KalahaSolver(game, cache_dir=args.cache_dir, tt_bits=args.tt_bits)
    rows = []
    for name in names:
        report = move_accuracy(
            name, game, games=args.accuracy_games, opponents=["random"], solver=solver, seed=1
        )
        print(report.summary())
        rows.append(report.as_dict())
    return rows


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--boards", nargs="+", default=["6,4", "6,5"], help="PITS,SEEDS ...")
    p.add_argument("--rules", nargs="+", default=["goki", "standard"])
    p.add_argument("--db-stones", type=int, default=None, help="default: the library's")
    p.add_argument("--tt-bits", type=int, default=24)
    p.add_argument("--cache-dir", default=None, help=f"default {default_cache_dir()}")
    p.add_argument("--perfect-games", type=int, default=4, help="per opponent, on Kalah(6,4)")
    p.add_argument("--agents", nargs="*", default=None, help="accuracy: agent names")
    p.add_argument("--accuracy-games", type=int, default=10, help="per opponent")
    p.add_argument("--skip-accuracy", action="store_true")
    p.add_argument("--output", type=Path, default=RESULTS)
    args = p.parse_args(argv)

    t0 = time.perf_counter()
    results = {"solve": solve_boards(args)}
    save(args, results)
    if not args.skip_accuracy:
        results["accuracy_kalah_6_4_goki"] = accuracy(args)
    results["total_seconds"] = round(time.perf_counter() - t0, 1)
    save(args, results)
    print(f"wrote {args.output}")
    ok = all(r["matches_published"] for r in results["solve"])
    lost = [
        r for r in results["solve"] for v in r.get("perfect_first_player", {}).values() if v["lost"]
    ]
    if not ok or lost:
        print("MISMATCH with the published values or a lost game", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
