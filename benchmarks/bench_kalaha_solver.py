"""Benchmark of the Kalaha solver: published values, time and nodes; agents' move accuracy.

Run: ``nice -n 10 python benchmarks/bench_kalaha_solver.py`` (add ``--boards 6,4`` to skip
Kalah(6,5), which takes much longer; ``--quick``: a smoke run on Kalah(4,3) with small databases).
Results go to ``benchmarks/results/kalaha_solver.json`` and a readable ``kalaha_solver.md`` next
to it.

1. Solves the starting position of Kalah(6,4) and Kalah(6,5) under both rule sets with
   ``spieltisch solve --time-limit`` in a child process (a solve stopped by the limit reports
   the bounds it proved, which are recorded) and compares with the published values (Irving,
   Donkers & Uiterwijk 2000; ``shared/spec/kalaha.md``): goki (empty capture) 10 and 12,
   standard 8 and 10. Each board is solved once per endgame database size in ``--db-stones``
   (default 22; ``--db-stones 22 24 26`` shows what the database buys). The databases are read
   from the cache directory; build them first (``spieltisch solve kalaha --db-stones 26`` or
   any solve) so that their build time is not counted. Rows of runs made in parallel (one rule
   set each, ``--output`` to separate files) are combined with ``--merge``.
2. Plays the ``perfect`` agent as first player on Kalah(6,4) (``--perfect-board``) against
   ``random`` and a greedy baseline: it must never lose (its margin is at least the game value).
3. Move accuracy (share of optimal moves, mean loss per move) on Kalah(6,4) goki positions from
   games against ``random`` and self-play of ``random``, ``greedy`` and ``alphabeta`` at depths
   2 to 8 (``--agents``; all positions, or those with at most ``--accuracy-max-stones`` stones
   left), and of the shipped ``pretrained:kalaha`` on Kalah(6,6) goki (what it was trained on)
   in positions with at most ``--max-stones`` stones left.

Memory: each solve's table, database and process are planned before it starts
(:func:`planned_gib`); a solve that would need more than ``--max-memory-gib`` (default 4 GiB,
issue 21's bound for a benchmark) is skipped and listed. Each row records the solve process's
peak memory.

There is no peer solver to run side by side (OpenSpiel has no Kalah solver); the reference is the
published values. Timings on a shared machine are noisy: CPU seconds are recorded too.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import platform
import resource
import subprocess
import sys
import threading
import time
from pathlib import Path

import numba
import numpy as np
from _common import add_run_options, result_path, shrink_if_quick, write_json, write_text
from spieltisch.agents.arena.match import play_game
from spieltisch.agents.arena.provenance import load_average
from spieltisch.agents.base import Agent
from spieltisch.agents.kalaha.accuracy import move_accuracy
from spieltisch.agents.kalaha.endgame import database_entries, default_cache_dir
from spieltisch.agents.kalaha.perfect import PerfectAgent
from spieltisch.agents.kalaha.solver import (
    DEFAULT_NEAR_BITS,
    DEFAULT_NEAR_MARGIN,
    TABLE_ROW_BYTES,
    KalahaSolver,
    table_bytes,
)
from spieltisch.agents.registry import make_agent
from spieltisch.envs import make
from spieltisch.envs.kalaha.engine import KalahaGame

PUBLISHED = {(6, 4, "goki"): 10, (6, 4, "standard"): 8, (6, 5, "goki"): 12, (6, 5, "standard"): 10}
ACCURACY_AGENTS = (
    "random",
    "greedy",
    "alphabeta:depth=2",
    "alphabeta:depth=4",
    "alphabeta:depth=6",
    "alphabeta:depth=8",
)


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
    if args.output is None:  # a --quick run without --results-dir writes nothing
        return
    data = {"machine": machine(), "settings": settings(args), **results}
    write_json(args.output, data)  # with the peak memory (the solver processes' included)
    write_text(args.output.with_suffix(".md"), markdown(data))


def machine() -> dict:
    return {
        "platform": platform.platform(),
        "python": platform.python_version(),
        "cpu_count": os.cpu_count(),
        "numba": numba.__version__,
        "numpy": np.__version__,
        "load_average": load_average(),
    }


def settings(args: argparse.Namespace) -> dict:
    return {
        "db_stones": args.db_stones,
        "tt_bits": args.tt_bits,
        "tt_bits_large": args.tt_bits_large,
        "max_memory_gib": args.max_memory_gib,
        "time_limit_s": args.time_limit,
        "nice": os.nice(0),
        "accuracy_games": args.accuracy_games,
        **({"note": args.note} if args.note else {}),
    }


#: seconds a solve process may take beyond its time limit to read its database (26 stones:
#: 2.5 GiB with its checksum) before it is killed
LOAD_ALLOWANCE_S = 300


#: what a solve process holds besides its table and database (Python, numba, numpy): a Kalah(6,5)
#: solve with a 2**27 table and the 22-stone database peaked at 4.90 GiB, 0.36 above those two
PROCESS_BASE_GIB = 0.4


def planned_gib(pits: int, db_stones: int, table_bits: int) -> float:
    """The memory a solve will hold once its table is touched: the table (``2**table_bits``
    rows and the near region, as :class:`KalahaSolver` sizes them), the database (one byte an
    entry) and
    :data:`PROCESS_BASE_GIB`."""
    table = table_bytes(table_bits, DEFAULT_NEAR_BITS, DEFAULT_NEAR_MARGIN)
    return (table + database_entries(db_stones, pits)) / 2**30 + PROCESS_BASE_GIB


def tt_bits(args: argparse.Namespace, pits: int, seeds: int) -> int:
    """Table size for a board: ``--tt-bits``, or ``--tt-bits-large`` above 48 stones."""
    return args.tt_bits if 2 * pits * seeds <= 48 else args.tt_bits_large


def solve_in_subprocess(
    args: argparse.Namespace, pits: int, seeds: int, rules: str, db_stones: int
) -> dict:
    """``spieltisch solve --json --time-limit`` in a child process: it stops itself at the limit
    and reports the bounds proven by then (killed only if it overruns by a minute)."""
    cmd = [
        sys.executable, "-m", "spieltisch.train.cli", "solve", "kalaha",
        "--pits", str(pits), "--seeds", str(seeds), "--rules", rules,
        "--db-stones", str(db_stones), "--tt-bits", str(tt_bits(args, pits, seeds)),
        "--time-limit", str(args.time_limit), "--progress-interval", str(args.progress_interval),
        "--json",
    ]  # fmt: skip
    if args.id_depth is not None:
        cmd += ["--id-depth", str(args.id_depth)]
    if args.cache_dir:
        cmd += ["--cache-dir", str(args.cache_dir)]
    usage0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)

    stdout: list[str] = []

    def pump() -> None:
        for line in proc.stderr:
            print("   ", line.rstrip(), flush=True)

    def collect() -> None:
        stdout.append(proc.stdout.read())

    # one reader per pipe (communicate() would read stderr too, splitting the progress lines)
    readers = [threading.Thread(target=f, daemon=True) for f in (pump, collect)]
    for reader in readers:
        reader.start()
    try:
        proc.wait(timeout=args.time_limit + 60 + LOAD_ALLOWANCE_S)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
    for reader in readers:
        reader.join(5)
    out = "".join(stdout)
    wall = time.perf_counter() - t0
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (usage.ru_utime - usage0.ru_utime) + (usage.ru_stime - usage0.ru_stime)
    row: dict = {
        "board": f"Kalah({pits},{seeds})",
        "rules": rules,
        "finished": False,
        "process_seconds": round(wall, 1),
        "process_cpu_seconds": round(cpu, 1),
        "db_stones": db_stones,
        "tt_bits": tt_bits(args, pits, seeds),
        "id_depth": "auto" if args.id_depth is None else args.id_depth,
    }
    try:
        result = json.loads(out)
    except json.JSONDecodeError:
        result = None
    if result is not None:
        row["peak_rss_gib"] = result.get("peak_rss_gib")
    if result is None:
        row.update(value=None, note=f"the solve process failed (exit code {proc.returncode})")
    elif result["finished"]:
        row.update(
            finished=True,
            value=result["value"],
            optimal_first_moves=result["optimal_moves"],
            nodes=result["nodes"],
            seconds=round(result["seconds"], 3),
            cpu_seconds=round(result["cpu_seconds"], 3),
            nodes_per_cpu_second=round(result["nodes"] / max(result["cpu_seconds"], 1e-9)),
        )
    else:
        row.update(
            value=None,
            proven_lower_bound=result["lower_bound"],
            proven_upper_bound=result["upper_bound"],
            nodes=result["nodes"],
            seconds=round(result["seconds"], 3),
            cpu_seconds=round(result["cpu_seconds"], 3),
            note=f"stopped by the time limit of {args.time_limit:g} s (wall clock)",
        )
    published = PUBLISHED.get((pits, seeds, rules))
    row["published_value"] = published
    row["matches_published"] = (
        None if row["value"] is None or published is None else row["value"] == published
    )
    if row["value"] is None and result is not None and published is not None:
        lo, hi = row["proven_lower_bound"], row["proven_upper_bound"]
        row["bounds_contain_published"] = lo <= published <= hi
    return row


def _signed(x: int | None) -> str:
    return "-" if x is None else f"{x:+d}"


def _row_key(row: dict) -> tuple:
    return row["board"], row["rules"], row.get("db_stones")


def solve_boards(args: argparse.Namespace, results: dict) -> None:
    """Adds a row per board and rule set to ``results["solve"]``, saving after each."""
    rows = results["solve"]
    results["skipped"] = []  # this run's: a kept file's earlier skips are not carried on
    for board in args.boards:
        pits, seeds = map(int, board.split(","))
        for rules in args.rules:
            row = None
            for db_stones in args.db_stones:
                print(f"Kalah({pits},{seeds}) {rules}: database up to {db_stones} stones")
                bits = tt_bits(args, pits, seeds)
                need = planned_gib(pits, db_stones, bits)
                if need > args.max_memory_gib:
                    why = (
                        f"Kalah({pits},{seeds}) {rules} not solved: it would hold about "
                        f"{need:.1f} GiB (table 2^{bits} x {TABLE_ROW_BYTES} B, "
                        f"{db_stones}-stone database), over --max-memory-gib {args.max_memory_gib:g}"
                    )
                    print(f"  {why}")
                    results["skipped"].append(why)
                    continue
                row = solve_in_subprocess(args, pits, seeds, rules, db_stones)
                row["planned_gib"] = round(need, 2)
                # unfinished attempts are kept apart: "solve" holds complete rows only
                (rows if row["value"] is not None else results["not_reached"]).append(row)
                print(f"  {row}")
                save(args, results)  # partial results survive an interrupted run
            if args.perfect_games and board == args.perfect_board and row is not None:
                game = KalahaGame(pits, seeds, rules)
                solver = KalahaSolver(
                    game, db_stones=min(args.db_stones), cache_dir=args.cache_dir, tt_bits=22
                )
                row["perfect_first_player"] = perfect_games(solver, args.perfect_games)
                del solver
                save(args, results)


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
    solver = KalahaSolver(
        game, db_stones=min(args.db_stones), cache_dir=args.cache_dir, tt_bits=args.tt_bits
    )
    rows = []
    for name in args.agents:
        report = move_accuracy(
            name, game, games=args.accuracy_games, opponents=["random"], solver=solver, seed=1,
            max_stones=args.accuracy_max_stones,
        )  # fmt: skip
        print(report.summary())
        rows.append(report.as_dict())
    return rows


def accuracy_pretrained(args: argparse.Namespace) -> dict | None:
    """The shipped agent plays Kalah(6,6) goki (what it was trained on), which cannot be solved
    from the start here: its moves are judged in positions with at most ``--max-stones`` stones
    left in the pits (the same 6-pit database serves every seed count)."""
    if "pretrained:kalaha" not in args.pretrained:
        return None
    game = KalahaGame(6, 6, "goki")
    solver = KalahaSolver(
        game, db_stones=min(args.db_stones), cache_dir=args.cache_dir, tt_bits=args.tt_bits
    )
    report = move_accuracy(
        "pretrained:kalaha",
        game,
        games=args.accuracy_games,
        opponents=["random", "alphabeta:depth=4"],
        solver=solver,
        seed=1,
        max_stones=args.max_stones,
    )
    print(report.summary())
    out = report.as_dict()
    weights = Path(__file__).parents[1] / "agents" / "pretrained" / "kalaha.safetensors"
    if weights.exists():
        out["weights_sha256"] = hashlib.sha256(weights.read_bytes()).hexdigest()
    return out


def markdown(data: dict) -> str:
    """The results as a readable page (next to the JSON)."""
    m = data["machine"]
    lines = [
        "# Kalaha solver benchmark",
        "",
        f"Machine: {m['platform']}, {m['cpu_count']} CPUs, Python {m['python']}, numba "
        f"{m['numba']}; load average at the end {', '.join(f'{x:.1f}' for x in m['load_average'])}"
        " (a shared machine: wall times are inflated, CPU times are the better measure). "
        f"Settings of the last run: {data['settings']}. Written by `benchmarks/bench_kalaha_solver.py`.",
        "",
        "## Solving the starting position",
        "",
        "| board | rules | value | published | database, table | nodes | solve s | solve CPU s "
        "| nodes/CPU s | process s (CPU s) | peak memory | note |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in data.get("solve", []) + data.get("not_reached", []):
        sizes = f"{r.get('db_stones', '?')} stones, 2^{r.get('tt_bits', '?')}"
        peak = r.get("peak_rss_gib")
        peak = "not recorded" if peak is None else f"{peak:.2f} GiB"
        if r["value"] is not None:
            lines.append(
                f"| {r['board']} | {r['rules']} | {r['value']:+d} | {_signed(r['published_value'])} | "
                f"{sizes} | {r['nodes']:,} | {r['seconds']:.1f} | {r['cpu_seconds']:.1f} | "
                f"{r['nodes_per_cpu_second']:,} | {r['process_seconds']} "
                f"({r['process_cpu_seconds']}) | {peak} | optimal first moves "
                f"{r['optimal_first_moves']} |"
            )
        else:
            lo, hi = r.get("proven_lower_bound"), r.get("proven_upper_bound")
            proven = []
            if lo is not None:
                proven.append(f">= {lo:+d}")
            if hi is not None:
                proven.append(f"<= {hi:+d}")
            nodes = r.get("nodes", r.get("nodes_at_last_bound"))
            seconds, cpu = r.get("seconds"), r.get("cpu_seconds")
            rate = f"{round(nodes / cpu):,}" if nodes and cpu else "-"
            lines.append(
                f"| {r['board']} | {r['rules']} | not reached"
                f"{': proven ' + ', '.join(proven) if proven else ' (no bound proven)'} "
                f"| {_signed(r['published_value'])} | {sizes} | {f'{nodes:,}' if nodes else '-'} | "
                f"{f'{seconds:.1f}' if seconds else '-'} | {f'{cpu:.1f}' if cpu else '-'} | "
                f"{rate} | {r['process_seconds']} ({r['process_cpu_seconds']}) | {peak} | "
                f"{r['note']} |"
            )
    if data.get("skipped"):
        lines += ["", *(f"- {why}" for why in data["skipped"])]
    acc = data.get("accuracy_kalah_6_4_goki", [])
    pre = data.get("accuracy_pretrained_kalah_6_6_goki")
    if acc or pre:
        lines += [
            "",
            "## Move accuracy against perfect play",
            "",
            "| agent | board | positions judged | moves | optimal | mean loss (stones/move) |",
            "|---|---|---|---|---|---|",
        ]
        for r in acc + ([pre] if pre else []):
            g, t = r["game"], r["total"]
            which = "all" if r.get("max_stones") is None else f"<= {r['max_stones']} stones left"
            lines.append(
                f"| {r['agent']} | Kalah({g['pits']},{g['seeds']}) {g['rules']} | {which} | "
                f"{t['moves']} | {100 * t['optimal_share']:.1f}% | {t['mean_loss']:.2f} |"
            )
        lines.append("")
        lines.append(
            "Games against `random` (both seats) and self-play; the shipped agent also against "
            "`alphabeta:depth=4`. Loss = game value given away by the move (0 when optimal)."
        )
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--boards", nargs="+", default=["6,4", "6,5"], help="PITS,SEEDS ...")
    p.add_argument("--rules", nargs="+", default=["goki", "standard"])
    p.add_argument(
        "--db-stones",
        type=int,
        nargs="+",
        default=[22],
        help="endgame database sizes: each board is solved with each (default 22)",
    )
    p.add_argument("--tt-bits", type=int, default=25, help="table: 2**N entries of 32 bytes")
    p.add_argument(
        "--tt-bits-large", type=int, default=26, help="the same for boards of more than 48 stones"
    )
    p.add_argument(
        "--max-memory-gib",
        type=float,
        default=4.0,
        help="skip a solve whose table and database would need more (default 4: issue 21's "
        "bound for a benchmark; the recorded Kalah(6,5) rows with 26- and 28-stone databases "
        "and 2^27 tables were run above it)",
    )
    p.add_argument("--time-limit", type=float, default=1200, help="seconds (wall) per solve (1200)")
    p.add_argument(
        "--id-depth",
        type=int,
        default=None,
        help="iterative deepening to this depth before the search to the end (default: the "
        "solver's choice, see spieltisch solve --help)",
    )
    p.add_argument(
        "--progress-interval", type=float, default=10.0, help="seconds between progress lines"
    )
    p.add_argument(
        "--merge",
        nargs="*",
        type=Path,
        default=[],
        help="result files of other runs (e.g. the two rule sets of Kalah(6,5) solved in "
        "parallel): their solve rows replace those of the same board, rules and database",
    )
    p.add_argument("--cache-dir", default=None, help=f"default {default_cache_dir()}")
    p.add_argument("--perfect-games", type=int, default=2, help="per opponent")
    p.add_argument("--perfect-board", default="6,4", help="PITS,SEEDS of the perfect agent's games")
    p.add_argument(
        "--agents",
        nargs="*",
        default=list(ACCURACY_AGENTS),
        help="accuracy on Kalah(6,4) goki: agent names",
    )
    p.add_argument(
        "--pretrained",
        nargs="*",
        default=["pretrained:kalaha"],
        help="accuracy of the shipped agent on Kalah(6,6) goki (pass nothing to skip)",
    )
    p.add_argument("--max-stones", type=int, default=30, help="Kalah(6,6): judged positions")
    p.add_argument(
        "--accuracy-max-stones", type=int, help="Kalah(6,4): judged positions (default all)"
    )
    p.add_argument("--accuracy-games", type=int, default=4, help="per opponent")
    p.add_argument("--skip-solve", action="store_true", help="solve nothing")
    p.add_argument(
        "--keep",
        action="store_true",
        help="start from the results on file: new solve rows replace those of the same board "
        "and rules, accuracy is replaced only if measured",
    )
    p.add_argument("--skip-accuracy", action="store_true")
    p.add_argument("--output", type=Path, help="default: kalaha_solver.json in --results-dir")
    p.add_argument("--note", default="", help="recorded with the settings")
    add_run_options(p)
    args = p.parse_args(argv)
    # no alpha-beta agents in a quick run: their search compiles for half a minute
    shrink_if_quick(
        args, boards=["4,3"], rules=["goki"], db_stones=[8], tt_bits=16, time_limit=60,
        perfect_games=1, perfect_board="4,3", agents=["random"], accuracy_games=1,
        accuracy_max_stones=10, pretrained=[],
    )  # fmt: skip
    args.output = args.output or result_path(args, "kalaha_solver.json")

    t0 = time.perf_counter()
    results: dict = {"solve": [], "not_reached": [], "skipped": []}
    if args.keep and args.output is not None and args.output.exists():
        old = json.loads(args.output.read_text())
        results.update({k: v for k, v in old.items() if k not in ("machine", "settings")})
    for other in args.merge:
        merged = json.loads(other.read_text())
        for key in ("solve", "not_reached"):
            new_rows = merged.get(key, [])
            keys = {_row_key(r) for r in new_rows}
            for k in ("solve", "not_reached"):
                results[k] = [r for r in results.get(k, []) if _row_key(r) not in keys]
            results[key] += new_rows
    if not args.skip_solve:
        done = {
            (f"Kalah({b})", r, d) for b in args.boards for r in args.rules for d in args.db_stones
        }
        for key in ("solve", "not_reached"):
            results[key] = [r for r in results.get(key, []) if _row_key(r) not in done]
        solve_boards(args, results)
    save(args, results)
    if not args.skip_accuracy:
        if args.agents:
            results["accuracy_kalah_6_4_goki"] = accuracy(args)
            save(args, results)
        pre = accuracy_pretrained(args)
        if pre is not None:
            results["accuracy_pretrained_kalah_6_6_goki"] = pre
    results["total_seconds"] = round(time.perf_counter() - t0, 1)
    save(args, results)
    if args.output is not None:
        print(f"wrote {args.output} and {args.output.with_suffix('.md')}")
    bad = [r for r in results["solve"] if r["matches_published"] is False]
    lost = [
        r for r in results["solve"] for v in r.get("perfect_first_player", {}).values() if v["lost"]
    ]
    if bad or lost:
        print("MISMATCH with the published values or a lost game", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
