"""``spieltisch solve``: perfect play for Kalaha (value and optimal moves), and agent accuracy.

Examples::

    spieltisch solve kalaha --pits 6 --seeds 4 --rules goki
    spieltisch solve kalaha --pits 6 --seeds 4 --position "4,4,0,5,5,5/1 4,4,4,4,4,4/0 0"
    spieltisch solve kalaha --pits 6 --seeds 4 --accuracy random --games 20
    spieltisch solve kalaha --seeds 5 --db-stones 26 --tt-bits 27 --time-limit 3600

Exit codes: 0 solved, 2 bad arguments, 3 stopped by ``--time-limit`` or ``--max-nodes`` (the
bounds proven by then are printed), 130 stopped by Ctrl-C (bounds printed too).
"""

from __future__ import annotations

import argparse
import errno
import json
import math
import os
import re
import sys
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from spieltisch.agents.arena.provenance import peak_rss_gib
from spieltisch.agents.files import check_output_path
from spieltisch.agents.kalaha.endgame import EndgameDatabase, default_cache_dir
from spieltisch.agents.kalaha.solver import (
    DEFAULT_TT_BITS,
    KalahaSolver,
    SolveInterrupted,
    SolveKeyboardInterrupt,
    SolveTooDeep,
    default_db_stones,
)
from spieltisch.envs._common.errors import PositionFormatError
from spieltisch.envs.kalaha.engine import RULE_SETS, KalahaGame, KalahaState
from spieltisch.train.cli.eval import non_negative_int, positive_int


def add_parser(subparsers: argparse._SubParsersAction) -> argparse.ArgumentParser:
    p = subparsers.add_parser(
        "solve",
        help="solve a Kalaha position exactly (value, optimal moves), or rate an agent's moves",
        description=(
            "Solve a Kalaha position: the final store difference under perfect play, from the "
            "point of view of the player to move, and the moves that achieve it. With "
            "--accuracy, play games with an agent and report how many of its moves were optimal."
        ),
        epilog=(
            "Examples: 'spieltisch solve kalaha' (Kalah(6,4) goki: +10, seconds once the "
            "endgame database is built, about a minute the first time); 'spieltisch solve "
            "kalaha --db-stones 26 --tt-bits 27 --seeds 5' (Kalah(6,5): much longer, see "
            "docs/solver.md); "
            '\'spieltisch solve kalaha --position "0,0,1,2,0,3/20 1,0,0,2,1,1/17 0" '
            "--move-values'; 'spieltisch solve kalaha --seeds 6 --accuracy pretrained:kalaha "
            "--max-stones 30'. Memory: the database takes C(N+2*PITS, 2*PITS) bytes (6 pits: "
            "20 stones 215 MiB, 22 stones 523 MiB, 24 stones 1.2 GiB, 26 stones 2.5 GiB), "
            "the table "
            "32 * 2**TT_BITS bytes. Techniques and measured times: docs/solver.md. Progress "
            "lines (stderr) every --progress-interval seconds: nodes, nodes per second, the "
            "running MTD(f) pass and the bounds proven so far. Exit codes: 0 solved; 2 bad "
            "arguments (also a position whose lines of play are longer than the solver searches, "
            "1024 moves: only with many stones, e.g. Kalah(30,1000)); 3 stopped by --time-limit "
            "or --max-nodes; 130 stopped by Ctrl-C. A "
            "stopped solve prints the bounds of the value proven by then (with --json: "
            '"finished": false, "lower_bound", "upper_bound").'
        ),
    )
    p.add_argument("game", choices=["kalaha"], help="the game (only Kalaha has a solver)")
    p.add_argument("--pits", type=int, default=6, help="pits per side (default 6)")
    p.add_argument("--seeds", type=int, default=4, help="stones per pit at the start (default 4)")
    p.add_argument("--rules", choices=RULE_SETS, default="goki", help="rule set (default goki)")
    p.add_argument(
        "--position",
        metavar="TEXT",
        help='position in the engine notation, e.g. "4,4,4,4,4,4/0 4,4,4,4,4,4/0 0" '
        "(default: the starting position)",
    )
    p.add_argument(
        "--move-values", action="store_true", help="also compute the exact value of every move"
    )
    p.add_argument(
        "--db-stones",
        type=int,
        default=None,
        help="endgame database: all positions with at most this many stones in the pits, built "
        "once and cached (default: by size, 20 for 6 pits, about a minute to build on 2 cores; "
        "every 2 stones more about halve the search of Kalah(6,4): 26 stones take 2.5 GiB and "
        "about 20 minutes per rule set to build, see docs/solver.md); at most the game's "
        "stones, 2*PITS*SEEDS (or the --position's stones in the pits, when more): more are "
        "refused, as they are never used",
    )
    p.add_argument(
        "--cache-dir",
        default=None,
        help=f"where endgame databases are kept (default {default_cache_dir()})",
    )
    p.add_argument(
        "--no-cache", action="store_true", help="build databases in memory, read/write no files"
    )
    p.add_argument(
        "--tt-bits",
        type=int,
        default=24,
        help=f"transposition table of 2**N entries of 32 bytes (default 24; library default "
        f"{DEFAULT_TT_BITS})",
    )
    p.add_argument(
        "--id-depth",
        type=non_negative_int,
        default=None,
        help="iterative deepening (depth-limited MTD(f)) up to this depth first; 0: none "
        "(default: 24 for positions with more than the database's stones + 30 in the pits, "
        "e.g. Kalah(6,5), where it saves most of the first pass; else none)",
    )
    p.add_argument(
        "--time-limit",
        type=_seconds,
        default=None,
        metavar="SECONDS",
        help="stop the solve after this many seconds (wall clock, the database load not "
        "counted), print the bounds proven so far and exit with code 3 (default: no limit)",
    )
    p.add_argument(
        "--max-nodes",
        type=positive_int,
        default=None,
        metavar="N",
        help="stop the solve after N search nodes (checked every 4096), as --time-limit",
    )
    p.add_argument(
        "--progress-interval",
        type=_seconds,
        default=2.0,
        metavar="SECONDS",
        help="seconds between progress lines while solving (default 2)",
    )
    p.add_argument("--quiet", action="store_true", help="no progress lines")
    p.add_argument("--json", action="store_true", help="print the result as JSON")
    p.add_argument(
        "--accuracy",
        metavar="AGENT",
        help="instead of solving: rate the moves of this registered agent against the solver",
    )
    # (the --accuracy options default to None so that one given without --accuracy is named;
    # ACCURACY_DEFAULTS fills them in)
    p.add_argument(
        "--games",
        type=positive_int,
        default=None,
        help="--accuracy: games per opponent (default 10)",
    )
    p.add_argument(
        "--opponents",
        nargs="*",
        default=None,
        metavar="AGENT",
        help="--accuracy: baseline opponents (default random); self-play is added",
    )
    p.add_argument("--no-self-play", action="store_true", help="--accuracy: skip self-play")
    p.add_argument(
        "--seed",
        type=non_negative_int,
        default=None,
        help="--accuracy: seed of games and agents (default 0)",
    )
    p.add_argument(
        "--max-stones",
        type=non_negative_int,
        default=None,
        metavar="N",
        help="--accuracy: judge only positions with at most N stones left in the pits (for "
        "boards too big to solve from the start, e.g. Kalah(6,6): try 30)",
    )
    p.add_argument(
        "--opening-plies",
        type=non_negative_int,
        default=None,
        metavar="N",
        help="--accuracy: each game starts with N random moves (from the game's seed, not "
        "judged), as the arena's games do, so deterministic agents do not replay the same "
        "games (the report counts the distinct ones); default 0",
    )
    return p


def _checked(
    convert: Callable[[str], Any], kind: str, valid: Callable[[Any], bool], rule: str
) -> Callable[[str], Any]:
    """An argparse ``type``: ``convert`` the text (else "not KIND"), then require ``valid``."""

    def parse(text: str) -> Any:
        try:
            x = convert(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"not {kind}: {text!r}") from None
        if not valid(x):
            raise argparse.ArgumentTypeError(f"must be {rule}, got {text!r}")
        return x

    return parse


_seconds = _checked(
    float,
    "a number of seconds",
    lambda x: math.isfinite(x) and x > 0,
    "a positive number of seconds",
)


def _check_agents(names: list[str], game: KalahaGame) -> None:
    """ValueError unless every agent named can be made for ``game`` (unattended)."""
    from spieltisch.agents.registry import check_agent_name, make_agent

    options = {"pits": game.pits, "seeds": game.seeds, "rules": game.rules}
    for name in names:
        check_agent_name(name, "kalaha", human=False)
        make_agent(name, "kalaha", 0, options)


def _check_cache_dir(path: str | os.PathLike) -> None:
    """ValueError unless endgame databases can be written in ``path`` (made if missing)."""
    folder = Path(path)
    if folder.exists() and not folder.is_dir():
        raise ValueError(
            f"--cache-dir {folder} is a file, not a folder; give another or --no-cache"
        )
    try:
        folder.mkdir(parents=True, exist_ok=True)
        check_output_path(folder / "probe")
    except (OSError, ValueError) as err:
        why = err.strerror if isinstance(err, OSError) else err
        raise ValueError(
            f"--cache-dir {folder}: cannot keep databases there ({why}); give another "
            "folder or --no-cache"
        ) from None


def _check_db_stones(db_stones: int | None, game: KalahaGame, state: KalahaState | None) -> None:
    """ValueError for a --db-stones above every stone count the solve can meet: the game's
    stones (the --position's in its pits, when more). Refused, not lowered: the database files
    serve every board of these pits and rules, and a larger number is more likely a slip (of
    --db-stones or of --seeds) than a wish for levels that are never used."""
    in_pits = 0 if state is None else _stones_in_pits(state)
    most = max(game.total_stones, in_pits)
    if db_stones is not None and db_stones > most:
        where = f"Kalah({game.pits},{game.seeds}) has {game.total_stones} stones"
        if state is not None:
            where += f" and the position {in_pits} in its pits"
        raise ValueError(
            f"--db-stones {db_stones} is more than any position of this solve holds ({where}): "
            f"the database's levels above {most} would never be used; give at most {most}"
        )


#: the solver's parameters, as the options that set them
_OPTIONS = {"tt_bits": "--tt-bits", "db_stones": "--db-stones", "id_max_depth": "--id-depth"}


def _option_words(err: Exception) -> str:
    """A solver's message with its parameters named as the options the user typed."""
    return re.sub(rf"\b({'|'.join(_OPTIONS)})\b", lambda m: _OPTIONS[m[1]], str(err))


#: the --accuracy options' defaults (the parser's are None, to tell a given option apart)
ACCURACY_DEFAULTS = {"games": 10, "opponents": ["random"], "seed": 0, "opening_plies": 0}


def run(args: argparse.Namespace) -> int:
    def say(line: str) -> None:
        if not args.quiet:
            print(line, file=sys.stderr, flush=True)

    solving_only = {
        "--time-limit": args.time_limit is not None,
        "--max-nodes": args.max_nodes is not None,
        "--position": args.position is not None,
        "--move-values": args.move_values,
    }
    accuracy_only = {
        "--games": args.games is not None,
        "--opponents": args.opponents is not None,
        "--no-self-play": args.no_self_play,
        "--seed": args.seed is not None,
        "--max-stones": args.max_stones is not None,
        "--opening-plies": args.opening_plies is not None,
    }
    # options of the other use: named, not ignored
    unused = accuracy_only if not args.accuracy else solving_only
    if given := [name for name, on in unused.items() if on]:
        verb = "applies" if len(given) == 1 else "apply"
        where = (
            "--accuracy AGENT (rating an agent's moves), not to solving a position"
            if not args.accuracy
            else "solving a position, not to --accuracy"
        )
        print(f"spieltisch solve: {' and '.join(given)} {verb} to {where}", file=sys.stderr)
        return 2
    for name, default in ACCURACY_DEFAULTS.items():
        if getattr(args, name) is None:
            setattr(args, name, default)
    try:
        game = KalahaGame(args.pits, args.seeds, args.rules)
        state = game.state_from_text(args.position) if args.position else None
        _check_db_stones(args.db_stones, game, state)
        if args.accuracy:  # before the database is built (a minute or more)
            _check_agents([args.accuracy, *args.opponents], game)
        if not args.no_cache:
            _check_cache_dir(args.cache_dir or default_cache_dir())
    except (ValueError, TypeError, PositionFormatError) as err:
        print(f"spieltisch solve: {err}", file=sys.stderr)
        return 2
    t0 = time.perf_counter()
    files = _database_files(game, args)
    before = _file_stamps(files)
    try:
        solver = KalahaSolver(
            game,
            db_stones=args.db_stones,
            cache_dir=args.cache_dir,
            use_cache=not args.no_cache,
            tt_bits=args.tt_bits,
            id_max_depth=args.id_depth,
            progress=None if args.quiet else say,
            progress_interval=args.progress_interval,
        )
    except ValueError as err:
        print(f"spieltisch solve: {_option_words(err)}", file=sys.stderr)
        return 2
    except (MemoryError, OSError) as err:  # within the machine's memory, not within what is free
        if isinstance(err, OSError) and err.errno != errno.ENOMEM:
            raise
        print(
            "spieltisch solve: cannot allocate the table and the database (out of memory): "
            "give a smaller --tt-bits or --db-stones",
            file=sys.stderr,
        )
        return 2
    database = _database_info(solver, files, before, args, time.perf_counter() - t0)
    say(database.describe())

    if args.accuracy:
        from spieltisch.agents.kalaha.accuracy import move_accuracy

        solver.progress = None
        try:
            report = move_accuracy(
                args.accuracy,
                game,
                games=args.games,
                opponents=args.opponents,
                self_play=not args.no_self_play,
                seed=args.seed,
                solver=solver,
                progress=say,
                max_stones=args.max_stones,
                opening_plies=args.opening_plies,
            )
        except (ValueError, SolveTooDeep) as err:
            print(f"spieltisch solve: {err}", file=sys.stderr)
            return 2
        if args.json:
            peak = peak_rss_gib()
            print(json.dumps({**report.as_dict(), "peak_rss_gib": peak}, indent=2))
        else:
            print(report.summary())
        return 0

    state = state or game.new_initial_state()
    say(f"solving Kalah({game.pits},{game.seeds}) {game.rules}:\n{state}")
    cpu0 = time.process_time()
    try:
        result = solver.solve(
            state,
            move_values=args.move_values,
            time_limit=args.time_limit,
            max_nodes=args.max_nodes,
        )
    except (SolveInterrupted, SolveKeyboardInterrupt) as stop:
        return _stopped(args, solver, state, stop, time.process_time() - cpu0)
    except SolveTooDeep as err:
        print(f"spieltisch solve: {err}", file=sys.stderr)
        return 2
    cpu = time.process_time() - cpu0
    if args.json:
        out = {
            **_json_position(state),
            "value": result.value,
            "optimal_moves": result.optimal_moves,
            "move_values": {str(k): v for k, v in result.move_values.items()},
            "nodes": result.nodes,
            "seconds": result.seconds,
            "cpu_seconds": cpu,
            "finished": True,
            "database_hit": _database_hit(state, solver, result.nodes),
            **_json_sizes(solver, args),
            "database": asdict(database),
        }
        print(json.dumps(out, indent=2))
        return 0
    if state.is_terminal():
        print(f"game over: value {result.value:+d} for seat {state.current_player}")
        return 0
    mover = state.current_player
    if result.value > 0:
        verdict = f"seat {mover} (to move) wins by {result.value}"
    elif result.value < 0:
        verdict = f"seat {mover} (to move) loses by {-result.value}"
    else:
        verdict = "draw"
    print(f"value: {result.value:+d} ({verdict}, perfect play, final store difference)")
    moves = ", ".join(map(str, result.optimal_moves))
    print(f"optimal moves: {moves} (pits from the mover's left)")
    if result.move_values:
        print(
            "move values: "
            + ", ".join(f"{m}: {v:+d}" for m, v in sorted(result.move_values.items()))
        )
    if _database_hit(state, solver, result.nodes):
        print(
            f"solved by the endgame database, no search needed (nodes: 0): it holds the value "
            f"of every position with at most {solver.db_stones} stones in the pits, and this "
            f"one has {_stones_in_pits(state)}"
        )
        print(f"time: {result.seconds:.2f} s ({cpu:.2f} s CPU)")
    else:
        print(f"nodes: {result.nodes:,}  time: {result.seconds:.2f} s ({cpu:.2f} s CPU)")
    print(database.describe())
    return 0


def _stones_in_pits(state: KalahaState) -> int:
    pits = state.game.pits
    return int(state.board[:pits].sum() + state.board[pits + 1 : 2 * pits + 1].sum())


def _database_hit(state: KalahaState, solver: KalahaSolver, nodes: int) -> bool:
    """Whether a solve of ``state`` was a database lookup: no node searched, the position (and
    so each of its moves) within the database."""
    return nodes == 0 and _stones_in_pits(state) <= solver.db_stones


@dataclass
class _DatabaseInfo:
    """Where the endgame database of a solve is and how it was had (``directory`` None:
    ``--no-cache``, in memory only)."""

    stones: int
    directory: str | None
    levels_loaded: int
    levels_built: int
    bytes_on_disk: int
    bytes_in_memory: int
    seconds: float

    def describe(self) -> str:
        what = f"endgame database (every position with at most {self.stones} stones in the pits)"
        took = f"in {self.seconds:.1f} s"
        if self.directory is None:
            return (
                f"{what}: built now {took}, {_size(self.bytes_in_memory)} in memory, not saved "
                "(--no-cache)"
            )
        where = f"{self.directory} ({self.levels_loaded + self.levels_built} files, "
        where += f"{_size(self.bytes_on_disk)})"
        if self.levels_built == 0:
            return f"{what}: loaded from {where} {took}"
        if self.levels_loaded == 0:
            return f"{what}: built now {took} and saved to {where}; later runs load it"
        return (
            f"{what}: {self.levels_loaded} levels loaded and {self.levels_built} built now "
            f"{took}, saved to {where}"
        )


def _database_files(game: KalahaGame, args: argparse.Namespace) -> list[Path]:
    """The files of the database the solver will load or build (one per level)."""
    stones = args.db_stones
    if stones is None:
        stones = default_db_stones(game.pits, game.total_stones)
    directory = Path(args.cache_dir) if args.cache_dir is not None else default_cache_dir()
    return [
        directory / EndgameDatabase.file_name(game.pits, game.rules, n)
        for n in range(max(0, stones) + 1)
    ]


def _file_stamps(files: list[Path]) -> list[tuple[int, int] | None]:
    """(modification time, size) of each file, None where there is none."""
    out: list[tuple[int, int] | None] = []
    for path in files:
        try:
            st = path.stat()
        except OSError:
            out.append(None)
        else:
            out.append((st.st_mtime_ns, st.st_size))
    return out


def _database_info(
    solver: KalahaSolver,
    files: list[Path],
    before: list[tuple[int, int] | None],
    args: argparse.Namespace,
    seconds: float,
) -> _DatabaseInfo:
    """What the solver did with its database files: a level whose file is new or changed was
    built now (a damaged file is rebuilt, with a warning), the others were loaded."""
    memory = int(solver.database.values.nbytes)
    if args.no_cache:
        return _DatabaseInfo(solver.db_stones, None, 0, solver.db_stones + 1, 0, memory, seconds)
    after = _file_stamps(files)
    built = sum(1 for a, b in zip(before, after, strict=True) if a is None or a != b)
    on_disk = sum(stamp[1] for stamp in after if stamp is not None)
    directory = str(files[0].parent)
    loaded = len(files) - built
    return _DatabaseInfo(solver.db_stones, directory, loaded, built, on_disk, memory, seconds)


def _size(nbytes: int) -> str:
    for unit, scale in (("GiB", 2**30), ("MiB", 2**20), ("KiB", 2**10)):
        if nbytes >= scale:
            return f"{nbytes / scale:.1f} {unit}"
    return f"{nbytes} bytes"


def _json_position(state: KalahaState) -> dict:
    game = state.game
    return {
        "position": state.to_text(),
        "pits": game.pits,
        "seeds": game.seeds,
        "rules": game.rules,
    }


def _json_sizes(solver: KalahaSolver, args: argparse.Namespace) -> dict:
    """The database and table sizes, and the peak memory they came to."""
    return {
        "db_stones": solver.db_stones,
        "tt_bits": args.tt_bits,
        "peak_rss_gib": peak_rss_gib(),
    }


def _stopped(
    args: argparse.Namespace,
    solver: KalahaSolver,
    state: KalahaState,
    stop: SolveInterrupted | SolveKeyboardInterrupt,
    cpu: float,
) -> int:
    """Report a solve stopped by a limit or Ctrl-C: the bounds proven; exit code 3 or 130."""
    code = 130 if isinstance(stop, SolveKeyboardInterrupt) else 3
    if args.json:
        out = {
            **_json_position(state),
            "finished": False,
            "stopped_by": stop.reason,
            "value": stop.lower if stop.value_known else None,
            "lower_bound": stop.lower,
            "upper_bound": stop.upper,
            "nodes": stop.nodes,
            "seconds": stop.seconds,
            "cpu_seconds": cpu,
            **_json_sizes(solver, args),
        }
        print(json.dumps(out, indent=2))
        return code
    if stop.reason == "time limit":
        why = f"time limit of {args.time_limit:g} s reached"
    elif stop.reason == "node limit":
        why = f"node limit of {args.max_nodes:,} reached"
    elif stop.reason == "keyboard interrupt":
        why = "interrupted (Ctrl-C)"
    else:
        why = stop.reason
    print(f"not solved: {why}")
    mover = state.current_player
    if stop.value_known:
        print(f"value: {stop.lower:+d} for seat {mover} (to move); the moves were not all tested")
    else:
        print(
            f"proven: {stop.lower:+d} <= value <= {stop.upper:+d} (seat {mover} to move, final "
            "store difference under perfect play)"
        )
    print(f"nodes: {stop.nodes:,}  time: {stop.seconds:.2f} s ({cpu:.2f} s CPU)")
    return code
