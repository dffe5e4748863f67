"""``spieltisch rollout``: a backgammon position's value by rollouts
(:mod:`spieltisch.agents.backgammon.rollout`).

Example::

    spieltisch rollout backgammon --position "4HPwATDgc/ABMA 0 roll" --games 1296

Exit codes: 0 done, 2 bad arguments (position, agent, numbers, game), 1 an agent failed during
the rollout, 130 stopped by Ctrl-C.
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from spieltisch.agents.backgammon.rollout import DEFAULT_AGENT, GAMES_LIMIT, SEED_LIMIT, rollout


def add_parser(subparsers: argparse._SubParsersAction) -> argparse.ArgumentParser:
    p = subparsers.add_parser(
        "rollout",
        help="estimate a backgammon position's value by rollouts (win, gammon, equity, +- s.e.)",
        description=(
            "Roll out a backgammon position: play it to the end many times with an agent and "
            "report, for the player on roll, the probabilities of winning, of gammons and "
            "backgammons for both sides and the cubeless equity, each with its standard error "
            "and 95% interval. Variance reduction: the first roll is stratified over the 36 "
            "rolls (games rounded up to a multiple of 72), and games come in pairs with the "
            "sides' dice exchanged (duplicate dice). The shipped TD net plays many games at "
            "once on the batched engine; other agents play game by game."
        ),
        epilog=(
            'Examples: spieltisch rollout backgammon --position "4HPwATDgc/ABMA 0 roll"; '
            'spieltisch rollout backgammon --position "4HPwATDgc/ABMA 0 31" --agent pubeval '
            '--games 360; spieltisch rollout backgammon --position "4HPwATDgc/ABMA 0 roll" '
            "--truncate 10 --json. Positions: the engine notation '<GNU Backgammon position ID> "
            "<seat on roll> roll' (or the dice to play instead of 'roll'), or a bare position "
            "ID (its player on roll as seat 0). Exit codes: 0 done; 2 bad arguments; 1 an agent "
            "failed; 130 stopped by Ctrl-C."
        ),
    )
    p.add_argument("game", help="the game (rollouts are for backgammon)")
    p.add_argument(
        "--position",
        required=True,
        metavar="TEXT",
        help="the position: '<position ID> <seat on roll> roll', with the dice to play instead "
        "of 'roll' (e.g. '4HPwATDgc/ABMA 0 31'), a bare GNU Backgammon position ID, or "
        "gnubg's 'POSITIONID:MATCHID' (the match ID gives the seat on roll and the dice)",
    )
    p.add_argument(
        "--agent",
        default=DEFAULT_AGENT,
        metavar="NAME",
        help=f"the agent playing both sides (default {DEFAULT_AGENT}, batched); any backgammon "
        "agent name: pubeval, gnubg, greedy, checkpoint:PATH, ... (game by game)",
    )
    p.add_argument(
        "--games",
        type=int,
        default=1296,
        metavar="N",
        help="games to play (default 1296, below 10**7; rounded up to a multiple of 72: 36 "
        "first rolls x pairs of duplicate dice)",
    )
    p.add_argument(
        "--seed",
        type=int,
        default=0,
        metavar="S",
        help="seed of the dice (default 0; same seed, same result)",
    )
    p.add_argument(
        "--truncate",
        type=int,
        default=None,
        metavar="N",
        help="stop each game after N plies and score it with the net's probabilities (TD "
        "value nets only; faster, less variance, the net's bias)",
    )
    p.add_argument(
        "--threads",
        type=int,
        default=1,
        metavar="N",
        help="threads of the batched rollout (default 1; game-by-game agents play on one)",
    )
    p.add_argument("--json", action="store_true", help="print the result as JSON")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    return p


def run(args: argparse.Namespace) -> int:
    if args.game != "backgammon":
        print(
            f"spieltisch rollout: rollouts are for backgammon (only), got {args.game!r}",
            file=sys.stderr,
        )
        return 2
    for name, value, low in (("--games", args.games, 1), ("--seed", args.seed, 0),
                             ("--threads", args.threads, 1)):  # fmt: skip
        if value < low:
            print(
                f"spieltisch rollout: {name} must be at least {low}, got {value}", file=sys.stderr
            )
            return 2
    for name, value, high, text in (("--games", args.games, GAMES_LIMIT, "10**7"),
                                    ("--seed", args.seed, SEED_LIMIT, "2**63")):  # fmt: skip
        if value >= high:
            print(f"spieltisch rollout: {name} must be below {text}, got {value}", file=sys.stderr)
            return 2
    if args.truncate is not None and args.truncate < 1:
        print(
            f"spieltisch rollout: --truncate must be at least 1 ply, got {args.truncate}",
            file=sys.stderr,
        )
        return 2
    bar: Any = None

    def progress(done: int, total: int) -> None:
        nonlocal bar
        if bar is None:
            from tqdm import tqdm

            bar = tqdm(total=total, unit="game", desc="rollout", disable=args.no_progress)
        bar.update(done - bar.n)

    try:
        result = rollout(
            args.position, args.agent, args.games, args.seed, args.truncate,
            threads=args.threads, progress=progress,
        )  # fmt: skip
    except (ValueError, TypeError, ImportError) as err:
        print(f"spieltisch rollout: {err}", file=sys.stderr)
        return 2
    except RuntimeError as err:
        print(f"spieltisch rollout: an agent failed: {err}", file=sys.stderr)
        return 1
    finally:
        if bar is not None:
            bar.close()
    if args.json:  # (the table prints its notes itself)
        for note in result.notes:
            print(f"spieltisch rollout: {note}", file=sys.stderr)
        print(json.dumps(result.to_dict(), indent=2))
    else:
        print(result.to_table())
    return 0
