"""``spieltisch eval``: the evaluation arena on the command line (:mod:`..agents.arena`)."""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable

from spieltisch.agents.arena import AgentFailure, evaluate, plot
from spieltisch.agents.arena.match import FIRST_MOVE_SECONDS
from spieltisch.agents.arena.report import forfeit_summary
from spieltisch.agents.files import check_output_path, check_plot_format
from spieltisch.agents.registry import opening_plies
from spieltisch.envs import GAMES
from spieltisch.envs._common.options import add_option_argument, parse_options

# The default move time limit of `spieltisch eval` (seconds; docs/arena.md, "Time limits").
DEFAULT_MOVE_TIME_LIMIT = 60.0


def time_limit_argument(text: str) -> float | None:
    """A ``--move-time-limit`` value: positive seconds, or 0 for no limit."""
    try:
        seconds = float(text)
    except ValueError:
        seconds = float("nan")
    if not seconds >= 0 or seconds == float("inf"):
        raise argparse.ArgumentTypeError(f"expected seconds >= 0 (0: no limit), got {text!r}")
    return seconds or None


def int_at_least(least: int) -> Callable[[str], int]:
    """An argparse ``type``: an integer of at least ``least``."""

    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            value = least - 1
        if value < least:
            raise argparse.ArgumentTypeError(
                f"expected an integer of at least {least}, got {text!r}"
            )
        return value

    return parse


#: an integer argument of at least 0 (a seed), and of at least 1 (a count)
non_negative_int = int_at_least(0)
positive_int = int_at_least(1)


def first_move_time_argument(text: str) -> float:
    """A ``--first-move-time-limit`` value: positive seconds (a first move always has a limit
    while the others do; 0 read as "no limit" was taken as the default)."""
    seconds = time_limit_argument(text)
    if seconds is None:
        raise argparse.ArgumentTypeError(
            f"expected seconds > 0 (--move-time-limit 0 turns the limits off), got {text!r}"
        )
    return seconds


def add_first_move_time_limit_argument(p: argparse.ArgumentParser) -> None:
    """``--first-move-time-limit`` (``spieltisch eval`` and ``play``): the limit of each agent's
    first move, which may compile or load."""
    p.add_argument(
        "--first-move-time-limit",
        type=first_move_time_argument,
        default=None,
        metavar="SECONDS",
        help="seconds for each agent's first move, which may compile or load (default "
        f"{FIRST_MOVE_SECONDS:g}, or the move time limit if larger)",
    )


def add_parser(subparsers: argparse._SubParsersAction) -> argparse.ArgumentParser:
    p = subparsers.add_parser(
        "eval",
        help="evaluate agents against each other (win rates, intervals, ratings)",
        description=(
            "Play agents against each other with swapped seats and paired chance, and report "
            "win/draw/loss, mean reward and 95% intervals (ratings for round robins). "
            "Example: spieltisch eval kalaha --agents alphabeta:depth=4 greedy --seeds 100"
        ),
    )
    p.add_argument("game", choices=sorted(GAMES), help="the game")
    p.add_argument(
        "--agents",
        nargs="+",
        required=True,
        metavar="AGENT",
        help="agent names: NAME or NAME:KEY=VALUE,... (e.g. alphabeta:depth=6), "
        "pretrained:GAME[:algo=ALGO] (a shipped agent; algo= one shipped beside the default, "
        "e.g. pretrained:hus:algo=ppo), checkpoint:PATH; an unknown name lists the game's agents",
    )
    p.add_argument(
        "--mode",
        default=None,
        choices=("pair", "round-robin", "one-vs-all", "table"),
        help="pair (2 agents, default), round-robin (default for 3+ agents), "
        "one-vs-all (the first against each other), table (HiLo with 3-4 players, the default "
        "there; every distinct seat order, repeated agents pooled)",
    )
    p.add_argument(
        "--seeds",
        type=int,
        default=100,
        help="seeds per pairing; each seed is played once per seat order (default 100)",
    )
    p.add_argument(
        "--seed", type=int, default=0, help="first seed (default 0; results reproduce from it)"
    )
    p.add_argument(
        "--opening-plies",
        type=int,
        default=None,
        help="random opening moves by the table, the same in every seat order (default: the "
        "game's, 2 for kalaha and hus, which have no chance, 0 otherwise)",
    )
    p.add_argument(
        "--workers",
        type=int,
        default=max(1, (os.cpu_count() or 1)),
        help="worker processes (default: the number of CPUs)",
    )
    p.add_argument(
        "--move-time-limit",
        type=time_limit_argument,
        default=DEFAULT_MOVE_TIME_LIMIT,
        metavar="SECONDS",
        help="seconds an agent may take for one move, wall-clock (default "
        f"{DEFAULT_MOVE_TIME_LIMIT:g}; 0: no limit); an agent over it, or one that raises or "
        "plays an illegal action, loses that game by forfeit and the evaluation goes on; the "
        "report counts each agent's forfeits. Games run in worker processes that are killed at "
        "the limit, so use at most one worker per core (docs/arena.md, 'Time limits and forfeits')",
    )
    add_first_move_time_limit_argument(p)
    p.add_argument(
        "--fail-fast",
        action="store_true",
        help="stop with an error (exit status 1) at the first game an agent forfeits",
    )
    add_option_argument(p)
    p.add_argument("--json", metavar="PATH", help="write the report as JSON")
    p.add_argument("--markdown", metavar="PATH", help="write the report as a Markdown table")
    p.add_argument("--plot", metavar="PATH", help="write a plot (PNG)")
    p.add_argument(
        "--journal",
        metavar="PATH",
        help="record every game in this file as it ends (JSON lines); the same command run "
        "again with it plays only the games not recorded, so a killed evaluation continues "
        "where it stopped (more --seeds extend it; a journal of other games is refused)",
    )
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    return p  # fmt: skip


def run(args: argparse.Namespace) -> int:
    try:
        options = parse_options(args.option)
        for path in (args.json, args.markdown, args.plot):  # before the games, not after
            if path is not None:
                check_output_path(path)
        if args.plot is not None:
            check_plot_format(args.plot)
        opening = args.opening_plies
        if opening is None:
            opening = opening_plies(args.game)
        report = evaluate(
            args.game, args.agents, args.seeds, args.seed, args.mode, options, opening,
            args.workers, progress=not args.no_progress, move_time_limit=args.move_time_limit,
            first_move_time_limit=args.first_move_time_limit, fail_fast=args.fail_fast,
            journal=args.journal,
        )  # fmt: skip
    except AgentFailure as err:
        print(f"spieltisch eval: an agent failed: {err}", file=sys.stderr)
        return 1
    except (ValueError, TypeError, ImportError) as err:
        print(f"spieltisch eval: {err}", file=sys.stderr)
        return 2
    text = report.to_markdown()
    print(text)
    if (note := forfeit_summary(report)) is not None:
        print(f"spieltisch eval: {note}", file=sys.stderr)
    if args.json:
        with open(args.json, "w") as f:
            f.write(report.to_json())
    if args.markdown:
        with open(args.markdown, "w") as f:
            f.write(text)
    if args.plot:
        plot(report, args.plot)
    return 0
