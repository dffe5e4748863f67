"""Kalah play-time searches compared on one set of solver-judged positions.

Run::

    nice -n 10 python benchmarks/kalaha_search_positions.py

``spieltisch solve --accuracy`` judges each agent in its own games, so two agents are compared on
different positions and the difference between them drowns in which games were played. This
script judges every agent on the *same* positions: the positions where ``--source`` moved in
games against ``random`` and ``alphabeta:depth=4`` (``--games`` each, seats alternating, 2 random
opening plies, seeds from ``--seed``; positions with a single legal move left out). The solver
gives every legal move of each position its loss (stones of final margin against the best move),
so each agent's choice is judged exactly; the difference from the first agent is paired position
by position, with a 95% interval. Each agent is reset before every position (no transposition
table carried over). Results go to ``benchmarks/results/kalaha_search_positions.json`` and
``.md``; ``--quick`` judges two baselines on Kalah(4,3).
"""

from __future__ import annotations

import argparse
import time
from typing import Any

import numpy as np
from _common import add_run_options, command_line, shrink_if_quick, write_results
from spieltisch.agents.arena.match import play_game
from spieltisch.agents.arena.provenance import machine_info
from spieltisch.agents.arena.stats import mean_interval
from spieltisch.agents.kalaha.accuracy import MoveRecorder, judge_move
from spieltisch.agents.kalaha.solver import KalahaSolver
from spieltisch.agents.registry import make_agent
from spieltisch.envs import make
from spieltisch.envs.kalaha.engine import KalahaGame, KalahaState

OPPONENTS = ("random", "alphabeta:depth=4")
AGENTS = [
    "pretrained:kalaha",
    *(f"pretrained:kalaha:search={depth}" for depth in (6, 7, 8, 9, 10)),
]


def move_losses(solver: KalahaSolver, state: KalahaState) -> dict[int, int]:
    """The loss of every legal move of ``state`` (0 for the optimal ones), from the solver."""
    return {action: judge_move(solver, state, action)[1] for action in state.legal_actions()}


def position_set(args: Any, options: dict[str, Any]) -> list[tuple[dict, KalahaState, dict]]:
    """(observation, state, losses per move) of every position where the source agent chose."""
    solver = KalahaSolver(KalahaGame(**options))
    env = make("kalaha", **options)
    positions = []
    for opponent in args.opponents:
        for g in range(args.games):
            seed = args.seed + 1000 * g
            source = MoveRecorder(
                make_agent(args.source, "kalaha", seed=seed, game_options=options)
            )
            other = make_agent(opponent, "kalaha", seed=seed + 1, game_options=options)
            seats = [source, other] if g % 2 == 0 else [other, source]
            agents = dict(zip(env.possible_agents, seats, strict=True))
            play_game(env, agents, seed=seed, opening_plies=args.opening_plies)
            positions += [
                (obs, st, move_losses(solver, st))
                for obs, st, _ in source.record
                if len(st.legal_actions()) > 1
            ]
        print(f"positions after the games against {opponent}: {len(positions)}", flush=True)
    return positions


def judge(name: str, positions: list, options: dict[str, Any]) -> dict[str, Any]:
    """Whether ``name``'s move was optimal and what it lost, position by position."""
    agent = make_agent(name, "kalaha", seed=0, game_options=options)
    optimal, losses = [], []
    cpu = time.process_time()
    for observation, state, move_loss in positions:
        agent.reset(0)
        loss = move_loss[int(agent.act(observation, state.clone()))]
        optimal.append(float(loss == 0))
        losses.append(float(loss))
    cpu = time.process_time() - cpu
    row = {
        "agent": name,
        "optimal_share": float(np.mean(optimal)),
        "mean_loss": float(np.mean(losses)),
        "cpu_ms_per_position": 1000 * cpu / len(positions),
    }
    print(f"{name}: {row['optimal_share']:.1%} optimal, loss {row['mean_loss']:.3f}", flush=True)
    return row | {"_optimal": optimal}


def markdown(results: dict[str, Any]) -> str:
    first = results["rows"][0]["agent"]
    lines = [
        "# Kalah play-time searches on one set of solver-judged positions",
        "",
        results["note"] + ".",
        "",
        f"| agent | optimal moves | mean loss (stones/move) | optimal minus `{first}` [95%] "
        "| CPU ms per move |",
        "|---|---:|---:|---|---:|",
    ]
    for r in results["rows"]:
        diff = r["optimal_minus_first"]
        lines.append(
            f"| `{r['agent']}` | {r['optimal_share']:.1%} | {r['mean_loss']:.3f} | "
            f"{diff[0]:+.1%} [{diff[1]:+.1%}, {diff[2]:+.1%}] | {r['cpu_ms_per_position']:.1f} |"
        )
    lines += ["", f"Run: `{results['command']}`", ""]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--agents", nargs="+", default=AGENTS, help="the agents judged")
    ap.add_argument("--source", default="pretrained:kalaha:search=6", help="plays the games")
    ap.add_argument("--opponents", nargs="+", default=list(OPPONENTS))
    ap.add_argument("--games", type=int, default=40, help="games against each opponent")
    ap.add_argument("--seed", type=int, default=9_000_000)
    ap.add_argument("--opening-plies", type=int, default=2)
    ap.add_argument("--pits", type=int, default=6)
    ap.add_argument("--seeds", type=int, default=4, help="stones per pit")
    ap.add_argument("--note", default="", help="added to the report (e.g. the machine's load)")
    add_run_options(ap)
    args = ap.parse_args(argv)
    baselines = ["alphabeta:depth=1", "alphabeta:depth=3"]
    shrink_if_quick(args, games=1, pits=4, seeds=3, source="alphabeta:depth=2", agents=baselines)
    options = {"pits": args.pits, "seeds": args.seeds, "rules": "goki"}
    positions = position_set(args, options)
    rows = [judge(name, positions, options) for name in args.agents]
    first = np.array(rows[0]["_optimal"])
    for row in rows:  # paired position by position with the first agent
        row["optimal_minus_first"] = list(mean_interval(np.array(row.pop("_optimal")) - first))
    note = (
        f"Kalah({args.pits},{args.seeds}) goki; {len(positions):,} positions (a choice of at "
        f"least two moves) where `{args.source}` moved in {args.games} games against each of "
        f"{', '.join(args.opponents)} (seats alternating, {args.opening_plies} random opening "
        f"plies, seeds from {args.seed:,}); every agent judged on every position by the solver"
    ) + (f"; {args.note}" if args.note else "")
    results = {
        "note": note,
        "machine": machine_info(),
        "positions": len(positions),
        "rows": rows,
        "command": command_line(__file__, argv),
    }
    write_results(args, "kalaha_search_positions", results, markdown(results))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
