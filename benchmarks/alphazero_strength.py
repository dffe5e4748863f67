"""Strength of a Gumbel AlphaZero network: arena matches with and without search, and (Kalah(6,4))
the share of solver-optimal moves.

Run (one board at a time; ``--quick``: a smoke run)::

    nice -n 10 python benchmarks/alphazero_strength.py --board kalaha_6x4 \\
        --agent pretrained:kalaha --match 0 alphabeta:depth=4 --match 32 alphabeta:depth=8 \\
        --match 0 pretrained:kalaha:algo=ppo

Results go to ``benchmarks/results/alphazero_strength_<board>[_<tag>].json`` and ``.md``.

* **Matches** (``--match SIMS OPPONENT``, repeatable) are played on the batched engine so that
  the searching side searches all games at once (one network call per simulation step for
  every game): ``--games`` games per match, half with the network in each seat. Games come in pairs from one seed: both games
  of a pair open with the same ``--opening-plies`` uniformly random moves (Kalaha and Hus have
  no chance, so without them two deterministic players would repeat one game), then the seats
  are swapped. Seeds start at ``--seed`` (default 7,000,000: far from the seeds the training
  runs evaluate with, which count up from the config's ``seed``). The score is wins plus half
  the draws, with a 95% interval over the per-pair means.
* **Accuracy** (Kalah(6,4) goki only): games against ``--accuracy-opponents`` (both seats) until
  at least ``--accuracy-moves`` of the agent's moves were judged by the exact solver
  (:func:`spieltisch.agents.kalaha.accuracy.move_accuracy`): the share of optimal moves and the
  mean loss in stones per move. ``--accuracy-max-stones N`` judges only positions with at most
  N stones in the pits; ``--quick`` judges endgames (14 stones) with a 10-stone database.
"""

from __future__ import annotations

import argparse
import math
import shlex
import sys
import time
from typing import Any

import numpy as np
from _common import add_run_options, shrink_if_quick, write_results
from spieltisch.agents.arena.provenance import load_average, machine_info
from spieltisch.agents.arena.stats import mean_interval
from spieltisch.agents.neural.gumbel_search import (
    GumbelSearch,
    Outcome,
    SearchConfig,
    policy_evaluator,
)
from spieltisch.agents.registry import make_agent
from spieltisch.train.opponents import ScriptedOpponent
from spieltisch.train.ppo import make_games

BOARDS = {
    "kalaha_6x4": ("kalaha", {"pits": 6, "seeds": 4, "rules": "goki"}),
    "kalaha": ("kalaha", {"pits": 6, "seeds": 6, "rules": "goki"}),
    "hus": ("hus", {}),
}


def match(
    game: str,
    options: dict[str, Any],
    net: Any,
    sims: int,
    opponent: ScriptedOpponent,
    pairs: int,
    seed: int,
    opening_plies: int,
    max_turns: int = 1000,
    outcome: Outcome | None = None,
) -> dict[str, Any]:
    """``pairs`` pairs of games of the network (with ``sims`` simulations, 0: its most likely
    move) against ``opponent``; see the module docstring. ``outcome``: how the network's
    search values finished games (as it was trained; default the game's result)."""
    rng = np.random.default_rng(seed)
    opponent.reseed(rng)
    games = make_games(game, options, 2 * pairs)
    games.reset(seed=rng)
    for _ in range(opening_plies):  # the same random moves in both games of a pair
        _, mask = games.observe()
        first = mask[0::2] != 0
        picks = np.array([rng.choice(np.flatnonzero(row)) for row in first])
        games.step(np.repeat(picks, 2))
    seat = np.arange(games.num_games) % 2
    evaluate = policy_evaluator(net, games.num_players)
    search = GumbelSearch(SearchConfig(num_simulations=max(sims, 1), gumbel_scale=0.0), outcome)
    start = time.perf_counter()
    for _ in range(max_turns):
        if games.terminal.all():
            break
        obs, mask = games.observe()
        mover = games.current_player.copy()
        active = ~games.terminal
        mine = np.flatnonzero(active & (mover == seat))
        theirs = np.flatnonzero(active & (mover != seat))
        actions = np.zeros(games.num_games, dtype=np.int64)
        if mine.size and sims > 0:
            actions[mine] = search.search(games, evaluate, rng, rows=mine).action[mine]
        elif mine.size:
            logits, _ = evaluate(obs[mine], mask[mine])
            actions[mine] = np.argmax(np.where(mask[mine] != 0, logits, -np.inf), axis=1)
        if theirs.size:
            actions[theirs] = opponent.actions(
                games, theirs, obs[theirs], mask[theirs], mover[theirs], rng
            )
        games.step(actions)
    result = games.returns()[np.arange(games.num_games), seat]
    score = np.where(result > 0, 1.0, np.where(result == 0, 0.5, 0.0))
    mean, low, high = mean_interval(score.reshape(pairs, 2).mean(axis=1))
    return {
        "games": int(games.num_games),
        "wins": int((result > 0).sum()),
        "draws": int((result == 0).sum()),
        "losses": int((result < 0).sum()),
        "unfinished": int((~games.terminal).sum()),
        "score": mean,
        "score_low": low,
        "score_high": high,
        "seconds": time.perf_counter() - start,
    }


def accuracy(agent: str, sims: int, args: argparse.Namespace) -> dict[str, Any]:
    from spieltisch.agents.kalaha.accuracy import move_accuracy
    from spieltisch.agents.kalaha.solver import KalahaSolver
    from spieltisch.envs.kalaha.engine import KalahaGame

    board = KalahaGame(6, 4, "goki")
    solver = KalahaSolver(board, db_stones=args.db_stones)
    name = with_sims(agent, sims)
    total: dict[str, Any] = {"moves": 0, "optimal": 0, "total_loss": 0, "games": 0}
    seed, start = args.seed, time.perf_counter()
    while total["moves"] < args.accuracy_moves:
        report = move_accuracy(
            name, board, games=args.accuracy_games, opponents=args.accuracy_opponents,
            self_play=False, seed=seed, solver=solver, max_stones=args.accuracy_max_stones,
        )  # fmt: skip
        for key in total:
            total[key] += getattr(report.total, key)
        seed += args.accuracy_games
    total["optimal_share"] = total["optimal"] / total["moves"]
    total["mean_loss"] = total["total_loss"] / total["moves"]
    total["seconds"] = time.perf_counter() - start
    return total


def markdown(results: dict[str, Any]) -> str:
    lines = [
        f"# Gumbel AlphaZero strength: {results['board']}",
        "",
        f"Agent `{results['agent']}`; seeds from {results['seed']}, {results['opening_plies']} "
        f"random opening plies per pair of games. Machine: {results['machine']}.",
        "",
        "| simulations | opponent | games | wins | draws | losses | score [95% interval] |",
        "|---|---|---|---|---|---|---|",
    ]
    for row in results["matches"]:
        lines.append(
            f"| {row['sims']} | {row['opponent']} | {row['games']} | {row['wins']} | "
            f"{row['draws']} | {row['losses']} | {row['score']:.3f} "
            f"[{row['score_low']:.3f}, {row['score_high']:.3f}] |"
        )
    if results["accuracy"]:
        lines += [
            "",
            "## Solver-judged moves (Kalah(6,4) goki)",
            "",
            "| simulations | moves judged | optimal | mean loss (stones/move) |",
            "|---|---|---|---|",
        ]
        for row in results["accuracy"]:
            lines.append(
                f"| {row['sims']} | {row['moves']:,} | {row['optimal_share']:.1%} | "
                f"{row['mean_loss']:.3f} |"
            )
        lines.append(f"\nOpponents of these games: {results['accuracy_opponents']} (both seats).")
        if results.get("accuracy_max_stones") is not None:
            lines.append(
                f"Judged: positions with at most {results['accuracy_max_stones']} stones in the pits."
            )
    lines += ["", f"Command: `{results['command']}`", ""]
    return "\n".join(lines)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--board", choices=sorted(BOARDS), default="kalaha_6x4")
    ap.add_argument("--agent", default=None, help="default: pretrained:<game>")
    ap.add_argument(
        "--match",
        nargs=2,
        action="append",
        metavar=("SIMS", "OPPONENT"),
        help="a match of the network with SIMS simulations (0: raw) against OPPONENT; "
        "repeatable (default: 0 and 32 against alphabeta:depth=4)",
    )
    ap.add_argument("--accuracy-sims", type=int, nargs="+", default=[0, 32])
    ap.add_argument("--games", type=int, default=1000, help="games per match")
    ap.add_argument("--seed", type=int, default=7_000_000)
    ap.add_argument("--opening-plies", type=int, default=2)
    ap.add_argument("--accuracy-moves", type=int, default=2000, help="0: no accuracy")
    ap.add_argument("--accuracy-games", type=int, default=40)
    ap.add_argument("--accuracy-opponents", nargs="+", default=["random", "alphabeta:depth=4"])
    ap.add_argument(
        "--accuracy-max-stones", type=int, default=None,
        help="judge only positions with at most this many stones in the pits (default: all)",
    )  # fmt: skip
    ap.add_argument(
        "--db-stones", type=int, default=None,
        help="the solver's endgame database size (default: the solver's, 20 stones, built once)",
    )  # fmt: skip
    ap.add_argument("--tag", default="", help="results file suffix (several runs of a board)")
    add_run_options(ap)
    args = ap.parse_args()
    args.match = args.match or [["0", "alphabeta:depth=4"], ["32", "alphabeta:depth=4"]]
    # --quick judges endgame positions only: a small database solves them at once, where the
    # default one took 293 s to build and use on an Intel Xeon CI runner
    shrink_if_quick(args, games=4, match=[["0", "random"], ["2", "random"]], accuracy_moves=20,
                    accuracy_games=2, accuracy_sims=[0, 2], accuracy_opponents=["random"],
                    accuracy_max_stones=14, db_stones=10)  # fmt: skip
    if args.accuracy_max_stones is not None and args.accuracy_max_stones < 1:
        ap.error(f"--accuracy-max-stones must be at least 1, got {args.accuracy_max_stones}")
    game, options = BOARDS[args.board]
    agent = args.agent or f"pretrained:{game}"
    searcher = make_agent(with_sims(agent, 1), game, game_options=options)
    net, outcome = searcher.net.eval(), searcher.search.outcome
    matches = []
    for sims_text, opponent_name in args.match:
        sims = int(sims_text)
        opponent = ScriptedOpponent(opponent_name, game, options)
        pairs = max(1, math.ceil(args.games / 2))
        row = match(
            game, options, net, sims, opponent, pairs, args.seed, args.opening_plies,
            outcome=outcome,
        )  # fmt: skip
        matches.append({"sims": sims, "opponent": opponent_name, **row})
        print(matches[-1], flush=True)
    rows = []
    if args.board == "kalaha_6x4" and args.accuracy_moves > 0:
        for sims in args.accuracy_sims:
            rows.append({"sims": sims, **accuracy(agent, sims, args)})
            print(rows[-1], flush=True)
    results = {
        "board": args.board,
        "agent": agent,
        "seed": args.seed,
        "opening_plies": args.opening_plies,
        "matches": matches,
        "accuracy": rows,
        "accuracy_opponents": args.accuracy_opponents,
        "accuracy_max_stones": args.accuracy_max_stones,
        "tag": args.tag,
        "machine": machine_info(),
        "load_average": load_average(),
        "command": "python benchmarks/alphazero_strength.py " + " ".join(reproducing_args()),
    }
    print(markdown(results))
    name = f"alphazero_strength_{args.board}" + (f"_{args.tag}" if args.tag else "")
    write_results(args, name, results, markdown(results))


def reproducing_args() -> list[str]:
    """This run's arguments without ``--results-dir DIR`` (where it wrote is not how)."""
    args, out = sys.argv[1:], []
    skip = False
    for arg in args:
        if skip:
            skip = False
        elif arg == "--results-dir":
            skip = True
        elif not arg.startswith("--results-dir="):
            out.append(shlex.quote(arg))
    return out


def with_sims(agent: str, sims: int) -> str:
    """``agent`` with the parameter ``sims`` added (``pretrained:kalaha:algo=ppo`` ->
    ``pretrained:kalaha:algo=ppo,sims=N``)."""
    last = agent.rsplit(":", 1)[-1]
    return f"{agent},sims={sims}" if "=" in last else f"{agent}:sims={sims}"


if __name__ == "__main__":
    main()
