"""The Kalaha solver against plain exhaustive minimax, the published values, and its database."""

from __future__ import annotations

import functools
import json
import math
import os
import pickle
import re
import signal
import threading
import time
import warnings

import numpy as np
import pytest
from spieltisch.agents.kalaha import endgame as kalaha_endgame
from spieltisch.agents.kalaha.endgame import HEADER_SIZE, EndgameDatabase
from spieltisch.agents.kalaha.solver import (
    KalahaSolver,
    SolveInterrupted,
    SolveKeyboardInterrupt,
)
from spieltisch.envs.kalaha.engine import KalahaGame, KalahaState


# --- reference: plain minimax over the engine's states ------------------------------------------
def final_difference(state: KalahaState, player: int) -> int:
    s = state.stores()
    return s[player] - s[1 - player]


def reference_values(game: KalahaGame):
    """``value(state)``: final store difference under perfect play for the player to move, and
    ``move_values(state)``, by exhaustive minimax (memoised on the position)."""

    @functools.cache
    def value_of(key: tuple) -> int:
        return max(move_values_of_key(key).values())

    def value(state: KalahaState) -> int:
        if state.is_terminal():
            return final_difference(state, state.current_player)
        return value_of((tuple(state.board.tolist()), state.current_player))

    @functools.cache
    def move_values_of_key(key: tuple) -> dict[int, int]:
        board, me = key
        state = KalahaState(game, np.array(board, dtype=np.int32), me)
        out = {}
        for a in state.legal_actions():
            c = state.child(a)
            if c.is_terminal():
                out[a] = final_difference(c, me)
            elif c.current_player == me:  # last stone in own store: moves again, no negation
                out[a] = value(c)
            else:
                out[a] = -value(c)
        return out

    def move_values_of(state: KalahaState) -> dict[int, int]:
        return move_values_of_key((tuple(state.board.tolist()), state.current_player))

    return value, move_values_of


def reachable(game: KalahaGame) -> list[KalahaState]:
    """Every non-terminal position reachable from the start (either seat first)."""
    seen: dict[tuple, KalahaState] = {}
    todo = [game.new_initial_state(0), game.new_initial_state(1)]
    while todo:
        s = todo.pop()
        key = (tuple(s.board.tolist()), s.current_player)
        if key in seen or s.is_terminal():
            continue
        seen[key] = s
        todo.extend(s.child(a) for a in s.legal_actions())
    return list(seen.values())


def check_positions(solver, game, states, move_values_every=3, clear_every=7):
    value, move_values = reference_values(game)
    for i, state in enumerate(states):
        expected = value(state)
        ref_moves = move_values(state)
        if i % clear_every == 0:
            solver.clear()  # also solve from an empty table now and then
        result = solver.solve(state, move_values=i % move_values_every == 0)
        assert result.value == expected, state.to_text()
        assert result.optimal_moves == sorted(a for a, v in ref_moves.items() if v == expected)
        if result.move_values:
            assert result.move_values == ref_moves, state.to_text()


@pytest.mark.parametrize("rules", ["goki", "standard"])
@pytest.mark.parametrize(
    ("db_stones", "id_max_depth", "near_margin"), [(0, 0, 4), (0, 6, 0), (3, 0, 2), (12, 4, 4)]
)
def test_solver_matches_minimax_on_every_position_3x2(
    db_stones, id_max_depth, near_margin, rules, tmp_path
):
    game = KalahaGame(3, 2, rules)
    solver = KalahaSolver(
        game,
        db_stones=db_stones,
        cache_dir=tmp_path,
        tt_bits=10,
        id_max_depth=id_max_depth,
        near_margin=near_margin,
        near_bits=6,
    )
    states = reachable(game)
    assert len(states) > 3000  # both seats first
    check_positions(solver, game, states)


@pytest.mark.parametrize("rules", ["goki", "standard"])
def test_solver_matches_minimax_on_every_position_4x2(rules, tmp_path):
    game = KalahaGame(4, 2, rules)
    solver = KalahaSolver(game, db_stones=5, cache_dir=tmp_path, tt_bits=12, id_max_depth=4)
    states = reachable(game)
    assert len(states) > 250_000
    check_positions(solver, game, states, move_values_every=10, clear_every=101)
    # the search alone (no database), on a sample
    plain = KalahaSolver(game, db_stones=0, cache_dir=tmp_path, tt_bits=14)
    check_positions(plain, game, states[::50], move_values_every=2)


def test_values_from_the_start_and_text_input(tmp_path):
    game = KalahaGame(4, 2, "goki")
    value, move_values = reference_values(game)
    solver = KalahaSolver(game, db_stones=4, cache_dir=tmp_path, tt_bits=12)
    start = game.new_initial_state()
    assert solver.value(start) == value(start)
    assert solver.value(start.to_text()) == value(start)
    assert solver.move_values(start) == move_values(start)
    # stores do not change what is left to win: the value shifts by their difference
    s = game.state_from_text("1,0,2,1/5 0,1,1,0/3 1")
    shifted = game.state_from_text("1,0,2,1/1 0,1,1,0/9 1")
    assert solver.value(shifted) == solver.value(s) + 10
    # a finished game: its store difference, no moves
    over = game.state_from_text("0,0,0,0/9 0,0,0,0/7 1 end")
    assert solver.value(over) == -2
    assert solver.solve(over).optimal_moves == []
    with pytest.raises(ValueError, match="pits"):
        solver.value(KalahaGame(3, 2, "goki").new_initial_state())
    with pytest.raises(ValueError, match="rules"):
        solver.value(KalahaGame(4, 2, "standard").new_initial_state())


def test_extra_turn_is_not_negated(tmp_path):
    """Pit 3 of "1,0,0,1/0 ..." ends in the mover's store: the mover moves again."""
    game = KalahaGame(4, 2, "standard")
    solver = KalahaSolver(game, db_stones=0, use_cache=False, tt_bits=10)
    s = game.state_from_text("1,0,0,1/0 0,0,2,0/0 0")
    assert s.child(3).current_player == 0
    value, move_values = reference_values(game)
    assert solver.move_values(s) == move_values(s)
    assert solver.value(s) == value(s)


# --- bigger boards -----------------------------------------------------------------------------
# Kalah(6,4) from a cold start: the 18-stone database built in memory (about 20 s on two cores),
# then the search (about 20 s goki, 50 s standard). The published values (Irving, Donkers &
# Uiterwijk 2000; see shared/spec/kalaha.md); Kalah(6,5) is reproduced by
# benchmarks/bench_kalaha_solver.py (minutes with a 26-stone database).
KALAH_6_4_PUBLISHED = {"goki": 10, "standard": 8}


@pytest.mark.parametrize("rules", ["goki", "standard"])
def test_kalah_6_4_reproduces_the_published_value(rules):
    game = KalahaGame(6, 4, rules)
    solver = KalahaSolver(game, db_stones=18, use_cache=False, tt_bits=22)
    result = solver.solve(game.new_initial_state())
    assert result.value == KALAH_6_4_PUBLISHED[rules]
    assert result.optimal_moves == [2]  # the third pit from the mover's left, both rule sets
    if rules == "goki":  # the perfect agent as first player, with the same solver (and table)
        from spieltisch.agents.arena.match import play_game
        from spieltisch.agents.kalaha.perfect import PerfectAgent
        from spieltisch.agents.registry import make_agent
        from spieltisch.envs import make

        env = make("kalaha", pits=6, seeds=4, rules=rules, reward="score")
        for g, opponent in enumerate(["alphabeta:depth=4", "random"]):
            agents = {
                "player_0": PerfectAgent(game, seed=g, solver=solver),
                "player_1": make_agent(opponent, "kalaha", seed=g, game_options={"seeds": 4}),
            }
            record = play_game(env, agents, seed=g)
            assert record.rewards["player_0"] >= result.value, (opponent, record)


# Kalah(6,3): two differently configured solvers (small vs larger database, with and without
# iterative deepening) must agree; the values are the ones this solver found.
KALAH_6_3 = {"goki": (2, [4]), "standard": (2, [4])}


@pytest.fixture(scope="module")
def db_dir(tmp_path_factory):
    return tmp_path_factory.mktemp("egdb")


@pytest.mark.parametrize("rules", ["goki", "standard"])
def test_kalah_6_3_value(rules, db_dir):
    game = KalahaGame(6, 3, rules)
    start = game.new_initial_state()
    big = KalahaSolver(game, db_stones=12, cache_dir=db_dir, tt_bits=20)
    small = KalahaSolver(game, db_stones=6, cache_dir=db_dir, tt_bits=18, id_max_depth=8)
    expected_value, expected_moves = KALAH_6_3[rules]
    result = big.solve(start)
    assert (result.value, result.optimal_moves) == (expected_value, expected_moves)
    assert small.value(start) == expected_value
    # the second seat to move first: the same value (the board is symmetric)
    assert big.value(game.new_initial_state(1)) == expected_value


# --- the endgame database files ----------------------------------------------------------------
def _no_building(*args, **kwargs):
    raise AssertionError("the database was rebuilt although a valid file exists")


def test_database_files_round_trip(tmp_path, monkeypatch):
    db = EndgameDatabase.load_or_build(3, "standard", 8, tmp_path)
    files = sorted(p.name for p in tmp_path.iterdir())
    assert files == [EndgameDatabase.file_name(3, "standard", n) for n in range(9)]
    monkeypatch.setattr(kalaha_endgame, "_build_level", _no_building)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        again = EndgameDatabase.load_or_build(3, "standard", 8, tmp_path)
    np.testing.assert_array_equal(again.values, db.values)
    # a smaller database reads the same files
    smaller = EndgameDatabase.load_or_build(3, "standard", 5, tmp_path)
    np.testing.assert_array_equal(smaller.values, db.values[: smaller.values.size])
    # the other rule set has its own files
    monkeypatch.undo()
    other = EndgameDatabase.load_or_build(3, "goki", 8, tmp_path)
    assert not np.array_equal(other.values, db.values)


def _damage_payload(data: bytes) -> bytes:
    b = bytearray(data)
    b[HEADER_SIZE + len(b) // 3] ^= 0x01
    return bytes(b)


def _other_version(data: bytes) -> bytes:
    b = bytearray(data)
    b[8] += 1  # the format version field follows the 8-byte magic
    return bytes(b)


@pytest.mark.parametrize(
    ("damage", "problem"),
    [
        (_damage_payload, "checksum"),
        (lambda d: d[:-7], "size"),
        (lambda d: d + b"\0", "size"),
        (_other_version, "header"),
        (lambda d: b"", "size"),
    ],
)
def test_damaged_database_file_is_rebuilt(damage, problem, tmp_path, monkeypatch):
    good = EndgameDatabase.load_or_build(3, "goki", 8, tmp_path)
    path = tmp_path / EndgameDatabase.file_name(3, "goki", 7)
    original = path.read_bytes()
    path.write_bytes(damage(original))
    with pytest.warns(UserWarning, match=problem):
        again = EndgameDatabase.load_or_build(3, "goki", 8, tmp_path)
    np.testing.assert_array_equal(again.values, good.values)
    assert path.read_bytes() == original  # rewritten
    monkeypatch.setattr(kalaha_endgame, "_build_level", _no_building)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        EndgameDatabase.load_or_build(3, "goki", 8, tmp_path)


def test_solver_trusts_no_damaged_database(tmp_path):
    game = KalahaGame(3, 2, "goki")
    value, _ = reference_values(game)
    KalahaSolver(game, db_stones=12, cache_dir=tmp_path, tt_bits=10)
    path = tmp_path / EndgameDatabase.file_name(3, "goki", 12)
    data = bytearray(path.read_bytes())
    data[HEADER_SIZE:] = bytes(len(data) - HEADER_SIZE)  # every value 0, old checksum
    path.write_bytes(bytes(data))
    with pytest.warns(UserWarning, match="checksum"):
        solver = KalahaSolver(game, db_stones=12, cache_dir=tmp_path, tt_bits=10)
    start = game.new_initial_state()
    assert solver.value(start) == value(start)


def test_default_cache_dir(monkeypatch, tmp_path):
    monkeypatch.setenv("SPIELTISCH_CACHE_DIR", str(tmp_path))
    assert kalaha_endgame.default_cache_dir() == tmp_path / "kalaha_egdb"
    monkeypatch.delenv("SPIELTISCH_CACHE_DIR")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert kalaha_endgame.default_cache_dir() == tmp_path / "xdg" / "spieltisch" / "kalaha_egdb"


def test_hashed_keys_on_boards_too_big_for_exact_keys(tmp_path):
    """Boards whose arrangements outnumber 2**61 use two 64-bit hashes as table keys."""
    game = KalahaGame(3, 2, "goki")
    solver = KalahaSolver(game, db_stones=0, cache_dir=tmp_path, tt_bits=10, id_max_depth=4)
    solver._exact_keys = False  # what a huge board would choose
    solver._ctx = solver._make_context()
    check_positions(solver, game, reachable(game)[::3])
    huge = KalahaSolver(KalahaGame(30, 1000, "goki"), db_stones=0, use_cache=False, tt_bits=8)
    assert not huge._exact_keys


SMALL_6_3 = "0,0,1,1,2,1/14 0,1,0,0,2,1/13 0"  # 9 stones: solved at once


# --- progress and interruption -----------------------------------------------------------------
# Kalah(6,3) with a tiny database needs about 1.2 M nodes (goki) or 3.4 M (standard) from the
# start: enough to stop it part-way after a few thousand nodes.
def small_db_solver(rules: str = "goki", **kwargs) -> KalahaSolver:
    # no iterative deepening unless asked: 36 stones against a 4-stone database would get it by
    # default (more than database + 30 stones), and these tests watch the passes to the end
    kwargs.setdefault("id_max_depth", 0)
    solver = KalahaSolver(
        KalahaGame(6, 3, rules), db_stones=4, use_cache=False, tt_bits=16, **kwargs
    )
    # compile (or load) the kernels now, so that timed solves do not include it
    progress, solver.progress = solver.progress, None
    assert solver.value(SMALL_6_3) == solver.value(SMALL_6_3, max_nodes=1)  # no stop: 9 stones
    solver.progress = progress
    return solver


@pytest.mark.parametrize("id_max_depth", [0, 8, None])
def test_interrupted_solves_keep_the_table_valid(id_max_depth):
    solver = small_db_solver(id_max_depth=id_max_depth)
    start = solver.game.new_initial_state()
    value, moves = KALAH_6_3["goki"]
    for limit in (5_000, 60_000, 400_000):
        with pytest.raises(SolveInterrupted) as info:
            solver.solve(start, max_nodes=limit)
        stop = info.value
        assert stop.reason == "node limit"
        assert stop.lower <= value <= stop.upper
        assert stop.lower >= -36 and stop.upper <= 36
        assert limit <= stop.nodes < limit + 4096  # the limit is looked at every 4096 nodes
        assert "node limit" in str(stop) and "proven" in str(stop)
    # the same solver, its table full of the interrupted solves' results, is still exact
    result = solver.solve(start)
    assert (result.value, result.optimal_moves) == (value, moves)
    assert solver.value(solver.game.new_initial_state(1)) == value


def test_interrupted_while_testing_the_moves():
    value, moves = KALAH_6_3["goki"]
    fresh = small_db_solver()
    start = fresh.game.new_initial_state()
    assert fresh.value(start) == value
    root_nodes = int(fresh.stats[0])
    # the same search again, stopped soon after the root's value is proven
    solver = small_db_solver()
    with pytest.raises(SolveInterrupted) as info:
        solver.solve(start, max_nodes=root_nodes + 4096)
    assert info.value.value_known
    assert info.value.lower == info.value.upper == value
    assert solver.solve(start).optimal_moves == moves


def test_time_limit_stops_a_solve():
    solver = small_db_solver("standard")
    start = solver.game.new_initial_state()
    with pytest.raises(SolveInterrupted) as info:
        solver.solve(start, time_limit=0.05)
    stop = info.value
    assert stop.reason == "time limit"
    assert stop.lower <= KALAH_6_3["standard"][0] <= stop.upper
    assert stop.nodes > 0
    assert stop.seconds < 30  # stopped, not run to the end (the search takes seconds)
    assert solver.value(start) == KALAH_6_3["standard"][0]


def test_progress_lines_during_a_pass():
    lines: list[str] = []
    solver = small_db_solver(progress=lines.append, progress_interval=0.01)
    result = solver.solve(solver.game.new_initial_state())
    assert result.value == 2
    reports = [line for line in lines if re.match(r"  \d+\.\d s: [\d,]+ nodes \(", line)]
    # the first pass (value >= 0?) alone takes a good part of a second: reported while it runs
    during = [r for r in reports if "pass 1 (to the end): value >= +0?" in r]
    assert during, lines
    assert "proven: -36 <= value <= +36" in during[0]
    counts = [int(re.search(r"([\d,]+) nodes", r).group(1).replace(",", "")) for r in reports]
    assert counts == sorted(counts) and counts[-1] > 0
    assert any(re.search(r"[\d,]+/s\)", r) for r in reports)  # nodes per second
    # every proven bound is reported (at the latest at the end), then the result
    assert any(line.startswith("  to the end: value >= +2, nodes ") for line in lines)
    assert any(line.startswith("  to the end: value <= +2, nodes ") for line in lines)
    assert lines[-1].startswith("  solved: value +2, nodes ")
    # a solve that is stopped says so last
    lines.clear()
    solver.clear()
    with pytest.raises(SolveInterrupted):
        solver.solve(solver.game.new_initial_state(), max_nodes=1, progress_interval=1)
    assert re.match(
        r"  stopped \(node limit\): proven -36 <= value <= \+36, nodes [\d,]+, ", lines[-1]
    )


def assert_search_stopped(solver: KalahaSolver) -> None:
    """No search runs on after the solve was stopped (the node counter stands still)."""
    nodes = int(solver.stats[0])
    time.sleep(0.1)
    assert int(solver.stats[0]) == nodes


def test_ctrl_c_stops_the_solve_and_keeps_the_solver_usable():
    """Ctrl-C arrives in the calling thread while it waits for the worker: the same as a
    KeyboardInterrupt raised by the progress callback."""
    pressed = []

    def progress(line: str) -> None:
        if not pressed and re.match(r"  \d", line):
            pressed.append(line)
            raise KeyboardInterrupt

    solver = small_db_solver(progress=progress, progress_interval=0.01)
    start = solver.game.new_initial_state()
    with pytest.raises(SolveKeyboardInterrupt) as info:
        solver.solve(start)
    stop = info.value
    assert isinstance(stop, KeyboardInterrupt) and not isinstance(stop, Exception)
    assert stop.reason == "keyboard interrupt"
    assert isinstance(stop.__cause__, KeyboardInterrupt)
    assert stop.lower <= 2 <= stop.upper
    assert solver._stop[0] != 0  # the worker was told to stop...
    assert_search_stopped(solver)
    result = solver.solve(start)  # ...and the flag is reset for the next solve
    assert (result.value, result.optimal_moves) == KALAH_6_3["goki"]


def test_sigint_during_a_solve():
    """A real SIGINT while the calling thread waits for the worker."""
    solver = small_db_solver("standard")  # 3.4 M nodes: seconds
    start = solver.game.new_initial_state()
    armed = [True]

    def handler(signum, frame):
        if armed[0]:  # only while the solve runs: a late signal must not end the test session
            armed[0] = False
            raise KeyboardInterrupt

    previous = signal.signal(signal.SIGINT, handler)
    timer = threading.Timer(0.2, os.kill, (os.getpid(), signal.SIGINT))
    try:
        timer.start()
        with pytest.raises(SolveKeyboardInterrupt) as info:
            solver.solve(start)
    finally:
        timer.cancel()
        armed[0] = False
        timer.join()
        signal.signal(signal.SIGINT, previous)
    assert info.value.lower <= KALAH_6_3["standard"][0] <= info.value.upper
    assert info.value.seconds < 30
    assert_search_stopped(solver)
    assert solver.value(start) == KALAH_6_3["standard"][0]


def test_limits_are_checked():
    game = KalahaGame(3, 2, "goki")
    solver = KalahaSolver(game, db_stones=0, use_cache=False, tt_bits=8)
    start = game.new_initial_state()
    for bad in (0, -1.0, math.nan, math.inf):
        with pytest.raises(ValueError, match="time_limit must be a positive, finite number"):
            solver.solve(start, time_limit=bad)
        with pytest.raises(ValueError, match="progress_interval"):
            solver.value(start, progress_interval=bad)
        with pytest.raises(ValueError, match="progress_interval"):
            KalahaSolver(game, db_stones=0, use_cache=False, tt_bits=8, progress_interval=bad)
    for bad in ("1", True, [1]):
        with pytest.raises(TypeError, match="time_limit must be a number of seconds"):
            solver.value(start, time_limit=bad)
    with pytest.raises(ValueError, match="max_nodes must be at least 1"):
        solver.solve(start, max_nodes=0)
    with pytest.raises(TypeError, match="max_nodes must be an integer"):
        solver.solve(start, max_nodes=1.5)
    # generous limits change nothing; small positions are solved in the calling thread
    assert solver.value(start, time_limit=60, max_nodes=10**9) == solver.value(start)
    # the exceptions survive pickling (worker processes)
    for kind in (SolveInterrupted, SolveKeyboardInterrupt):
        e = pickle.loads(pickle.dumps(kind("time limit", -3, 5, 4096, 1.5)))
        assert (type(e), e.reason, e.lower, e.upper, e.nodes, e.seconds) == (
            kind,
            "time limit",
            -3,
            5,
            4096,
            1.5,
        )


def test_cli_time_limit_and_node_limit(capsys):
    from spieltisch.train.cli import main

    args = ["solve", "kalaha", "--pits", "6", "--seeds", "3", "--db-stones", "4", "--no-cache"]
    args += ["--tt-bits", "16"]
    assert main([*args, "--rules", "standard", "--time-limit", "0.05", "--json"]) == 3
    captured = capsys.readouterr()
    out = json.loads(captured.out)
    assert out["finished"] is False and out["stopped_by"] == "time limit"
    assert out["lower_bound"] <= 2 <= out["upper_bound"]
    assert "stopped (time limit)" in captured.err  # progress lines on stderr

    assert main([*args, "--max-nodes", "5000", "--progress-interval", "0.5", "--quiet"]) == 3
    captured = capsys.readouterr()
    assert "not solved: node limit of 5,000 reached" in captured.out
    assert "proven: -36 <= value <= +36" in captured.out
    assert captured.err == ""

    for bad in (["--time-limit", "0"], ["--time-limit", "soon"], ["--max-nodes", "0"]):
        with pytest.raises(SystemExit) as info:
            main([*args, *bad])
        assert info.value.code == 2
        assert bad[0] in capsys.readouterr().err
    assert main([*args, "--accuracy", "random", "--time-limit", "5"]) == 2
    assert "not to --accuracy" in capsys.readouterr().err
    # the --accuracy options without --accuracy were silently ignored
    for idle in (["--games", "50"], ["--opponents", "greedy"], ["--no-self-play"], ["--seed", "3"]):
        assert main([*args, *idle]) == 2
        err = capsys.readouterr().err
        assert f"{idle[0]} applies to --accuracy AGENT" in err, err


@pytest.mark.parametrize(
    ("extra", "code", "words"),
    [
        # checked after the database was built once (35 s for Kalah(5,4))
        (["--accuracy", "foo"], 2, "unknown agent 'foo'"),
        (["--accuracy", "random", "--opponents", "alphabeta:depth=x"], 2, "must be integers"),
        (["--accuracy", "human"], 2, "agent 'human' cannot play here"),  # a HumanQuit traceback
        (["--accuracy", "random", "--position", "3,3,3,3/0 3,3,3,3/0 0"], 2, "--position applies"),
        (["--accuracy", "random", "--move-values"], 2, "--move-values applies"),  # ignored
        (
            ["--accuracy", "random", "--games", "0"],
            2,
            "--games: expected an integer of at least 1",
        ),  # nan%
        (
            ["--accuracy", "random", "--max-stones", "-1"],
            2,
            "--max-stones: expected an integer of at least 0",
        ),
        (["--cache-dir", "/proc/x"], 2, "cannot keep databases there"),  # 'saved' 0 bytes
        (["--cache-dir", "{file}"], 2, "is a file, not a folder"),
    ],
)
def test_cli_refuses_bad_accuracy_runs_and_cache_folders_before_building(
    extra, code, words, tmp_path, capsys, monkeypatch
):
    import spieltisch.train.cli.solve as solve_cli
    from spieltisch.train.cli import main

    (tmp_path / "file").write_text("mine")
    monkeypatch.setattr(solve_cli, "KalahaSolver", lambda *a, **k: pytest.fail("built"))
    args = ["solve", "kalaha", "--pits", "4", "--seeds", "3", "--quiet"]
    extra = [x.format(file=tmp_path / "file") for x in extra]
    try:
        assert main([*args, *extra]) == code
    except SystemExit as exit_info:  # argparse's refusals
        assert exit_info.code == code
    assert words in capsys.readouterr().err
    assert (tmp_path / "file").read_text() == "mine"


def test_cli_accuracy_json_records_the_moves_and_the_memory(tmp_path, capsys):
    from spieltisch.train.cli import main

    args = ["solve", "kalaha", "--pits", "4", "--seeds", "2", "--db-stones", "4", "--quiet"]
    args += ["--tt-bits", "12", "--cache-dir", str(tmp_path), "--json"]
    assert main([*args, "--accuracy", "random", "--games", "2", "--opponents", "random"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["agent"] == "random" and data["total"]["moves"] > 0
    assert 0.01 < data["peak_rss_gib"] < 64


def test_cli_says_where_its_database_is_and_what_a_database_hit_is(tmp_path, capsys):
    from spieltisch.train.cli import main

    args = ["solve", "kalaha", "--pits", "4", "--seeds", "2", "--db-stones", "6", "--quiet"]
    args += ["--tt-bits", "16", "--cache-dir", str(tmp_path)]
    assert main(args) == 0  # 16 stones in the pits: a search
    out = capsys.readouterr().out
    assert "built now in " in out and f"and saved to {tmp_path} (7 files, " in out
    assert "later runs load it" in out and "nodes: " in out and "no search needed" not in out
    size = sum(f.stat().st_size for f in tmp_path.iterdir())
    assert len(list(tmp_path.iterdir())) == 7 and size > 0
    # 5 stones in the pits: the database holds the answer
    assert main([*args, "--position", "1,0,1,0/5 2,0,0,1/3 0", "--move-values"]) == 0
    out = capsys.readouterr().out
    assert f"loaded from {tmp_path} (7 files, " in out and "built now" not in out
    assert "solved by the endgame database, no search needed (nodes: 0)" in out
    assert "at most 6 stones in the pits, and this one has 5" in out
    assert main([*args, "--position", "1,0,1,0/5 2,0,0,1/3 0", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["database_hit"] is True and data["nodes"] == 0
    assert 0.01 < data["peak_rss_gib"] < 64  # the memory it came to, in GiB
    database = data["database"]
    assert database["directory"] == str(tmp_path)
    assert (database["levels_loaded"], database["levels_built"]) == (7, 0)
    assert database["bytes_on_disk"] == size
    assert main([*args, "--no-cache"]) == 0
    assert "not saved (--no-cache)" in capsys.readouterr().out


def test_iterative_deepening_by_default_only_far_above_the_database():
    """``id_max_depth=None``: depth-limited passes first only for positions with more than the
    database's stones + 30 in the pits (Kalah(6,3): 36 stones)."""
    far: list[str] = []
    solver = small_db_solver(id_max_depth=None, progress=far.append, progress_interval=0.01)
    assert solver.value(solver.game.new_initial_state()) == KALAH_6_3["goki"][0]
    assert any("(depth " in line for line in far)
    near: list[str] = []
    solver = KalahaSolver(
        KalahaGame(6, 3, "goki"), db_stones=8, use_cache=False, tt_bits=16, id_max_depth=None
    )
    solver.progress, solver.progress_interval = near.append, 0.01
    assert solver.value(solver.game.new_initial_state()) == KALAH_6_3["goki"][0]
    assert near and not any("(depth " in line for line in near)
    with pytest.raises(ValueError, match="id_max_depth"):
        KalahaSolver(KalahaGame(3, 2), db_stones=0, use_cache=False, tt_bits=8, id_max_depth=-1)
