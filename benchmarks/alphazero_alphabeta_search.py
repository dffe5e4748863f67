"""The shipped AlphaZero networks with alpha-beta over their value head (``search=N``).

Run::

    nice -n 10 python benchmarks/alphazero_alphabeta_search.py

Each row is one ``spieltisch eval`` match (1,000 games: ``--seeds`` seeds from ``--seed``, both
seat orders, 2 random opening plies per seed) of a network playing with ``search=N``: the
compiled alpha-beta of the ``alphabeta`` baseline, N plies, with the network's value head at the
horizon instead of the store difference (agents/neural/value_search.py). Kalah(6,4) is also
judged by the solver (``spieltisch solve --accuracy``, every move of ``--accuracy-games`` games
against each of ``random`` and ``alphabeta:depth=4``). The commands run as they are recorded, so
each row reproduces from its ``command``. Results go to
``benchmarks/results/alphazero_alphabeta_search.json`` and ``.md``; ``--quick`` plays the first
match on 1 seed and skips the solver (which builds its endgame database first, half a minute).
"""

from __future__ import annotations

import argparse
import json
import shlex
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from _common import (
    add_run_options,
    command_line,
    result_path,
    shrink_if_quick,
    write_results,
)
from spieltisch.agents.arena.provenance import machine_info

#: (game, options, agent, opponent): the networks with search against the strongest baseline
#: each target names, and for comparison the PPO network with the same search and the Hus
#: baseline searching two plies deeper
MATCHES = [
    ("kalaha", "-o seeds=4", "pretrained:kalaha:search=6", "alphabeta:depth=8"),
    ("hus", "", "pretrained:hus:search=6", "alphabeta:depth=6"),
    ("hus", "", "pretrained:hus:search=8", "alphabeta:depth=6"),
    ("hus", "", "alphabeta:depth=8", "alphabeta:depth=6"),  # what 2 plies more of the baseline give
    ("kalaha", "-o seeds=4", "pretrained:kalaha:algo=ppo,search=6", "alphabeta:depth=8"),
]
ACCURACY_AGENT = "pretrained:kalaha:search=6"


def run_json(command: str) -> dict[str, Any]:
    """Run a ``spieltisch`` command line; its JSON result (``--json``: to a file for ``eval``,
    to stdout for ``solve``)."""
    words = shlex.split(command)[1:]  # without the leading "spieltisch"
    argv = [sys.executable, "-m", "spieltisch.train.cli", *words]
    with tempfile.TemporaryDirectory() as tmp:
        report = Path(tmp) / "report.json"
        if words[0] == "eval":
            argv += ["--json", str(report), "--no-progress"]
        else:
            argv += ["--json", "--quiet"]
        done = subprocess.run(argv, check=True, stdout=subprocess.PIPE, text=True)
        return json.loads(report.read_text() if report.exists() else done.stdout)


def match_row(game: str, options: str, agent: str, opponent: str, args: Any) -> dict[str, Any]:
    command = (
        f"spieltisch eval {game} {options} --agents {agent} {opponent} --seeds {args.seeds} "
        f"--seed {args.seed} --opening-plies 2 --workers 1"
    ).replace("  ", " ")
    print(command, flush=True)
    pair = run_json(command)["pairs"][0]
    keep = ("games", "wins", "draws", "losses", "score", "score_low", "score_high")
    keep += ("win_rate", "win_low", "win_high")
    seed_outcomes = ("seeds_won_every_order", "seeds_split", "seeds_lost_every_order")
    return {
        "kind": "match",
        "agent": agent,
        "opponent": opponent,
        **{k: pair[k] for k in keep},
        **{k: pair["extra"][k] for k in seed_outcomes},
        "command": command,
    }


def accuracy_row(args: Any, opening_plies: int) -> dict[str, Any]:
    command = (
        f"spieltisch solve kalaha --pits 6 --seeds 4 --accuracy {ACCURACY_AGENT} "
        f"--games {args.accuracy_games} --opponents random alphabeta:depth=4 --no-self-play "
        f"--seed {args.seed}" + (f" --opening-plies {opening_plies}" if opening_plies else "")
    )
    print(command, flush=True)
    result = run_json(command)
    total = result["total"]
    return {
        "kind": "accuracy",
        "agent": ACCURACY_AGENT,
        "opening_plies": opening_plies,
        "distinct_games": result["distinct_games"],
        "moves": total["moves"],
        "optimal_share": total["optimal_share"],
        "mean_loss": total["mean_loss"],
        "games": total["games"],
        "by_opponent": result["by_opponent"],
        "command": command + " --json",
    }


def kept_rows(
    args: Any, matches: list[dict], accuracy: list[dict]
) -> tuple[list[dict], list[dict]]:
    """The rows of the existing results file, with those this run played replaced (in the
    order of ``MATCHES``)."""
    path = result_path(args, "alphazero_alphabeta_search.json")
    old = json.loads(path.read_text()) if path is not None and path.exists() else {}
    by_pair = {(m["agent"], m["opponent"]): m for m in old.get("matches", [])}
    by_pair |= {(m["agent"], m["opponent"]): m for m in matches}
    order = [(agent, opponent) for _, _, agent, opponent in MATCHES]
    return [by_pair[p] for p in order if p in by_pair], accuracy or old.get("accuracy", [])


def markdown(results: dict[str, Any]) -> str:
    lines = [
        "# The AlphaZero networks with alpha-beta search (`search=N`)",
        "",
        results["note"] + ".",
        "",
        "Seeds: how each seed's two seat orders went for the agent, won both / split / lost "
        "both; where the seat decides most games, only won minus lost moves the score from 0.5.",
        "",
        "| agent | opponent | games | W / D / L | wins [95%] | score [95%] | seeds won / split / "
        "lost |",
        "|---|---|---:|---|---|---|---|",
    ]
    for m in results["matches"]:
        seeds = (
            f"{m['seeds_won_every_order']} / {m['seeds_split']} / {m['seeds_lost_every_order']}"
            if "seeds_split" in m
            else "—"
        )
        lines.append(
            f"| `{m['agent']}` | `{m['opponent']}` | {m['games']:,} | "
            f"{m['wins']} / {m['draws']} / {m['losses']} | "
            f"{m['win_rate']:.1%} [{m['win_low']:.1%}, {m['win_high']:.1%}] | "
            f"{m['score']:.3f} [{m['score_low']:.3f}, {m['score_high']:.3f}] | {seeds} |"
        )
    if results["accuracy"]:
        lines += [
            "",
            "Kalah(6,4) judged by the solver (every move of the games against `random` and "
            "`alphabeta:depth=4`, both seats):",
            "",
            "| agent | opening plies | distinct games (random; depth 4) | moves | optimal | "
            "mean loss (stones/move) |",
            "|---|---:|---|---:|---:|---:|",
        ]
        for a in results["accuracy"]:
            distinct = a.get("distinct_games", {})
            games = a.get("games", 0) // 2
            lines.append(
                f"| `{a['agent']}` | {a.get('opening_plies', 0)} | "
                f"{distinct.get('random', '?')} / {distinct.get('alphabeta:depth=4', '?')} of "
                f"{games} each | {a['moves']:,} | {a['optimal_share']:.1%} | "
                f"{a['mean_loss']:.2f} |"
            )
    commands = [row["command"] for row in results["matches"] + results["accuracy"]]
    lines += ["", "Commands:", ""] + [f"- `{c}`" for c in commands]
    lines += ["", f"Run: `{results['command']}`", ""]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seeds", type=int, default=500, help="seeds per match (2 games each)")
    ap.add_argument("--seed", type=int, default=7_000_000)
    ap.add_argument("--accuracy-games", type=int, default=80, help="0: no solver judgement")
    ap.add_argument(
        "--accuracy-opening-plies", type=int, nargs="+", default=[0, 2],
        help="one solver row per value: random opening plies of its games (0: the agents' own "
        "games, which deterministic agents repeat; 2: varied, as the arena's)",
    )  # fmt: skip
    ap.add_argument("--note", default="", help="added to the report (e.g. the machine's load)")
    ap.add_argument(
        "--games", nargs="+", choices=sorted({m[0] for m in MATCHES}), default=None,
        help="play only these games' rows (and the solver's only with kalaha); the other rows "
        "of the results file are kept as they are (their commands reproduce them)",
    )  # fmt: skip
    add_run_options(ap)
    args = ap.parse_args(argv)
    shrink_if_quick(args, seeds=1, accuracy_games=0)
    played = [m for m in MATCHES if args.games is None or m[0] in args.games]
    played = played[:1] if args.quick else played
    matches = [match_row(*m, args) for m in played]
    judged = args.accuracy_games > 0 and (args.games is None or "kalaha" in args.games)
    accuracy = (
        [accuracy_row(args, plies) for plies in args.accuracy_opening_plies] if judged else []
    )
    if args.games is not None:
        matches, accuracy = kept_rows(args, matches, accuracy)
    note = (
        "the shipped AlphaZero networks (pretrained:kalaha -o seeds=4, pretrained:hus; and for "
        "comparison the PPO network of Kalah(6,4), pretrained:kalaha:algo=ppo, and the Hus "
        "baseline at depth 8) playing with "
        "search=N: the compiled alpha-beta of the alphabeta baseline, N plies, with the "
        "network's value head at the horizon instead of the store difference "
        f"(agents/neural/value_search.py); {2 * args.seeds:,}-game matches on seeds from "
        f"{args.seed:,}, 2 random opening plies per seed, both seat orders"
    ) + (f"; {args.note}" if args.note else "")
    results = {
        "note": note,
        "machine": machine_info(),
        "matches": matches,
        "accuracy": accuracy,
        "command": command_line(__file__, argv),
    }
    write_results(args, "alphazero_alphabeta_search", results, markdown(results))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
