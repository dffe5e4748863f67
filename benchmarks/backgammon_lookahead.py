"""A backgammon value net at each lookahead against pubeval and GNU Backgammon at equal lookahead.

Usage::

    python benchmarks/backgammon_lookahead.py [--agent pretrained:backgammon] [--plies 1 2 3]
        [--pubeval-games 5000 1000] [--gnubg-games 2000 1000] [--seed 300000] [--workers 2]
        [--three-ply keep=4,reply_keep=2] [--append [--extend]]

For each ``ply`` N of the agent (``AGENT:ply=N``; ply 2 searches the ``keep`` best plays one
roll deeper, ply 3 two rolls deeper with move filtering at both levels, ``--three-ply``'s
parameters; see ``agents/backgammon/td_value.py``) arena matches, seats swapped with paired
dice: against ``pubeval``, against ``gnubg`` (0-ply) and, for N > 1, against
``gnubg:plies=N-1`` (GNU Backgammon's N-1 ply is the same lookahead: its 0-ply is our 1-ply). Writes ``benchmarks/results/backgammon_lookahead.json`` and
``.md`` (points per game and wins with 95% intervals, seconds); the README's table is generated
from it (``python docs/make_tables.py``). ``--append`` keeps the rows recorded; with
``--extend``, a match measured on the seeds that follow its recorded row's (``--seed`` where
they ended) extends that row to the games of both, exactly as one longer run would have given.
"""

from __future__ import annotations

import argparse
import json
import math
import re
import time
from pathlib import Path
from typing import Any

from _common import add_run_options, result_path, shrink_if_quick, write_json, write_text
from spieltisch.agents.arena import evaluate, machine_info, stats


def with_ply(agent: str, ply: int, extra: str = "") -> str:
    """``agent`` with the parameter ``ply=N`` (and ``extra`` parameters after it): after a
    comma where a ``pretrained:`` name has parameters already
    (``pretrained:backgammon:algo=td_features,ply=2``), else after a colon."""
    has_params = agent.startswith("pretrained:") and agent.count(":") >= 2
    return f"{agent}{',' if has_params else ':'}ply={ply}" + (f",{extra}" if extra else "")


def match(
    agent: str,
    opponent: str,
    games: int,
    seed: int,
    workers: int,
    progress: bool = False,
    journal_dir: Path | None = None,
) -> dict:
    """``agent`` against ``opponent``: ``games // 2`` seeds, each played in both seat orders
    (``progress``: the arena's progress bar on stderr; ``journal_dir``: each match's games
    recorded in a file there as they end, so that a killed run continues, see the arena's
    journal)."""
    started = time.perf_counter()
    journal = None
    if journal_dir is not None:
        name = re.sub(r"[^A-Za-z0-9_.=-]+", "_", f"{agent}_vs_{opponent}")
        journal = journal_dir / f"{name}.jsonl"
    report = evaluate("backgammon", [agent, opponent], seeds=max(1, games // 2), seed=seed,
                      workers=workers, progress=progress, journal=journal)  # fmt: skip
    p = report.pairs[0]
    return {
        "agent": agent,
        "opponent": opponent,
        "games": p.games,
        "seed": seed,
        "ppg": p.mean_reward,
        "ppg_low": p.reward_low,
        "ppg_high": p.reward_high,
        "win_rate": p.win_rate,
        "win_low": p.win_low,
        "win_high": p.win_high,
        "seconds": time.perf_counter() - started,
    }


def extend_row(earlier: dict[str, Any], later: dict[str, Any]) -> dict[str, Any]:
    """One row of the games of ``earlier`` and ``later``, two rows of one match (agent,
    opponent) whose seeds follow each other (``later`` starts where ``earlier`` ended): the
    games of one longer run, with its exact statistics. The arena's points-per-game interval
    is the normal interval over per-seed means (2 games each), so the union's mean and sample
    deviation follow from each part's count, mean and interval; the wins are counted."""
    if (earlier["agent"], earlier["opponent"]) != (later["agent"], later["opponent"]):
        raise ValueError(f"--extend: {later['agent']} vs {later['opponent']} is another match")
    if later["seed"] != earlier["seed"] + earlier["games"] // 2:
        raise ValueError(
            f"--extend: the recorded {earlier['agent']} vs {earlier['opponent']} row ends at "
            f"seed {earlier['seed'] + earlier['games'] // 2}, this run starts at {later['seed']}"
        )
    parts = [
        (r["games"] // 2, r["ppg"], (r["ppg_high"] - r["ppg_low"]) / 2) for r in (earlier, later)
    ]
    n = sum(k for k, _, _ in parts)
    mean = sum(k * m for k, m, _ in parts) / n
    # each part's sample deviation from its interval half-width: half = z s / sqrt(k)
    squares = sum(
        (k - 1) * (half * math.sqrt(k) / stats.Z95) ** 2 + k * (m - mean) ** 2
        for k, m, half in parts
    )
    half = stats.Z95 * math.sqrt(squares / (n - 1)) / math.sqrt(n)
    games = earlier["games"] + later["games"]
    wins = round(earlier["win_rate"] * earlier["games"]) + round(later["win_rate"] * later["games"])
    win_low, win_high = stats.wilson(wins, games)
    return {
        **earlier,
        "games": games,
        "ppg": mean,
        "ppg_low": mean - half,
        "ppg_high": mean + half,
        "win_rate": wins / games,
        "win_low": win_low,
        "win_high": win_high,
        "seconds": earlier["seconds"] + later["seconds"],
        "command": f"{earlier['command']} && {later['command']}",
    }


def merge_recorded(
    earlier: dict[str, Any], rows: list[dict], runs: list[dict]
) -> tuple[list[dict], list[dict]]:
    """``--append``: the recorded rows with this run's (a row measured again, same agent,
    opponent and ply, replaces the recorded one in place; new ones go last), and the runs
    whose command some row still names."""
    earlier_runs = earlier.get("runs") or [
        {"command": earlier["command"], "machine": earlier["machine"]}
    ]
    for row in earlier["rows"]:
        row.setdefault("command", earlier_runs[0]["command"])

    def key(row: dict) -> tuple:
        return row["agent"], row["opponent"], row["ply"]

    measured = {key(r): r for r in rows}
    recorded = {key(r) for r in earlier["rows"]}
    merged = [measured.get(key(r), r) for r in earlier["rows"]]
    merged += [r for r in rows if key(r) not in recorded]
    commands = {c for r in merged for c in r["command"].split(" && ")}  # an extended row: 2
    new_commands = {run["command"] for run in runs}
    kept = [r for r in earlier_runs if r["command"] in commands - new_commands]
    return merged, kept + runs


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--agent", default="pretrained:backgammon",
                    help="a TD value net: pretrained:backgammon[:algo=X], checkpoint:PATH")  # fmt: skip
    ap.add_argument("--plies", type=int, nargs="+", default=[1, 2])
    ap.add_argument("--pubeval-games", type=int, nargs="+", default=[5000, 1000],
                    help="games against pubeval for each ply (the last repeats; 0: not played)")  # fmt: skip
    ap.add_argument("--gnubg-games", type=int, nargs="+", default=[2000, 2000],
                    help="games against gnubg 0-ply for each ply (0: not played)")  # fmt: skip
    ap.add_argument("--equal-games", type=int, nargs="+", default=[200],
                    help="games against gnubg:plies=N-1 for each ply N > 1 (0: not played)")  # fmt: skip
    ap.add_argument("--three-ply", default="keep=4,reply_keep=2",
                    help="the ply=3 agent's move filters (agents/backgammon/td_value.py)")  # fmt: skip
    ap.add_argument("--seed", type=int, default=300_000, help="first arena seed")
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--append", action="store_true",
                    help="keep the rows already recorded (another agent's) and add these; a "
                    "row measured again replaces its recorded one")  # fmt: skip
    ap.add_argument("--extend", action="store_true",
                    help="with --append: a row measured again on the seeds that follow its "
                    "recorded ones (--seed where they ended) extends it to the games of both")  # fmt: skip
    ap.add_argument("--no-progress", action="store_true", help="no progress bar per match")
    ap.add_argument("--journal-dir", type=Path,
                    help="record each match's games in a file in this folder as they end: the "
                    "same command run again after a kill plays only the games not recorded "
                    "(a row's seconds are then this run's)")  # fmt: skip
    add_run_options(ap)
    args = ap.parse_args()
    shrink_if_quick(args, plies=[1], pubeval_games=[4], gnubg_games=[4], equal_games=[2], workers=1)
    if any(n not in (1, 2, 3) for n in args.plies):
        ap.error("--plies: the agent looks 1, 2 or 3 plies ahead")
    if args.journal_dir is not None:
        args.journal_dir.mkdir(parents=True, exist_ok=True)
    if args.extend and not args.append:
        ap.error("--extend extends recorded rows: give --append too")
    if min(args.pubeval_games + args.gnubg_games + args.equal_games) < 0:
        ap.error("game counts must be 0 (not played) or more")
    rows = []
    for i, ply in enumerate(args.plies):
        agent = with_ply(args.agent, ply, args.three_ply if ply == 3 else "")
        opponents = [("pubeval", args.pubeval_games, i), ("gnubg", args.gnubg_games, i)]
        if ply > 1:  # GNU Backgammon looking as far ahead
            opponents.append((f"gnubg:plies={ply - 1}", args.equal_games, i - 1))
        for opponent, counts, at in opponents:
            games = counts[min(max(at, 0), len(counts) - 1)]
            if games == 0:  # e.g. one opponent measured again, with --append
                continue
            row = match(
                agent, opponent, games, args.seed, args.workers, not args.no_progress,
                args.journal_dir,
            )  # fmt: skip
            row["ply"] = ply
            rows.append(row)
            print(
                f"{agent} vs {opponent}: {row['ppg']:+.3f} ppg [{row['ppg_low']:+.3f}, "
                f"{row['ppg_high']:+.3f}], {row['win_rate']:.1%} won, {row['games']} games, "
                f"{row['seconds']:.0f} s",
                flush=True,
            )
    cmd = (
        f"python benchmarks/backgammon_lookahead.py --agent {args.agent} --plies "
        f"{' '.join(map(str, args.plies))} --pubeval-games "
        f"{' '.join(map(str, args.pubeval_games))} --gnubg-games "
        f"{' '.join(map(str, args.gnubg_games))} --equal-games "
        f"{' '.join(map(str, args.equal_games))} --seed {args.seed} --workers {args.workers}"
        + (f" --three-ply {args.three_ply}" if 3 in args.plies else "")
        + (" --append" if args.append else "")
        + (" --extend" if args.extend else "")
    )
    machine = machine_info()
    runs = [{"command": cmd, "machine": machine}]
    for row in rows:
        row["command"] = cmd
    json_path = result_path(args, "backgammon_lookahead.json")
    if args.append and json_path is not None and json_path.exists():
        earlier = json.loads(json_path.read_text())
        if args.extend:
            recorded = {(r["agent"], r["opponent"]): r for r in earlier["rows"]}
            rows = [
                extend_row(recorded[r["agent"], r["opponent"]], r)
                if (r["agent"], r["opponent"]) in recorded
                else r
                for r in rows
            ]
        rows, runs = merge_recorded(earlier, rows, runs)
    lines = [
        "# Backgammon: the value net at each lookahead\n",
        "Arena matches, each seed played in both seat orders with the same dice; 95% intervals. "
        "GNU Backgammon at equal lookahead: its N-1 ply (`gnubg` is 0-ply) against our "
        "`ply=N`. Commands:\n",
        *[f"- `{run['command']}`" for run in runs],
        "",
        "| agent | opponent | games | points per game [95%] | wins [95%] | seconds |",
        "|---|---|---:|---|---|---:|",
    ]
    for r in rows:
        lines.append(
            f"| `{r['agent']}` | `{r['opponent']}` | {r['games']:,} | {r['ppg']:+.3f} "
            f"[{r['ppg_low']:+.3f}, {r['ppg_high']:+.3f}] | {r['win_rate']:.1%} "
            f"[{r['win_low']:.1%}, {r['win_high']:.1%}] | {r['seconds']:.0f} |"
        )
    write_text(result_path(args, "backgammon_lookahead.md"), "\n".join(lines) + "\n")
    write_json(json_path, {"command": runs[-1]["command"], "machine": machine, "runs": runs,
                           "rows": rows})  # fmt: skip


if __name__ == "__main__":
    main()
