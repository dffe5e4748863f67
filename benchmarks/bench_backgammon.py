"""Backgammon speed, side by side in one run: random games per second through our engine's Python
API, through OpenSpiel's ``backgammon`` (pyspiel) and through a loop around GNU Backgammon's own
move generator (``gnubg_nn.moves``); our batched engine on 2 threads; and the time per call of
legal-play generation against gnubg's (CPU time, best of interleaved passes).

    python benchmarks/bench_backgammon.py [--seconds 3] [--rounds 5] [--batch 2048]
        [--out benchmarks/results/backgammon.json] [--quick]

Every contender plays uniformly random games: ours and the gnubg loop choose uniformly among
the distinct legal plays (resulting positions) of each roll, OpenSpiel among its legal actions
(each a move of up to two checkers, so a turn may take two actions); each uses its own dice
(ours: ``roll_dice`` from a seeded numpy generator, gnubg: ``gnubg_nn.roll``, OpenSpiel: its
chance outcomes). The choices come from one precomputed table of uniform numbers in every
loop, so no loop pays more than the others for randomness. The contenders run in interleaved
rounds; each rate is the best round (the least disturbed by other processes), the medians are
recorded too, and rates per CPU-second (less sensitive to other processes on a shared machine;
for the 2-thread batch they add up both threads). The batched engine is measured two ways:
stepping (one decision per game per call, in steady state: finished games are restarted at
once) and ``play_random`` (random rollouts: every game to its end in one call, one batch
reset between the calls).

The kernel limit: the compiled rules alone in one loop on one core (no Python, no batch: one
state, roll, generate the plays, pick one, play it, restart at the end; numbers from a table),
as microseconds per decision and the games per second one core could play that way; every
contender's share of it is printed beside it. Targets (issue 21), on the medians of the
interleaved rounds: Python API >= 2x the faster peer, batched ``play_random`` on 2 threads
>= 10x that peer, and >= 1.8x from 1 to 2 threads.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

import numba
import numpy as np
from _common import add_run_options, result_path, shrink_if_quick, write_json
from spieltisch.agents.arena.provenance import machine_info as machine
from spieltisch.envs.backgammon import BackgammonGame
from spieltisch.envs.backgammon import gnubg_adapter as ga
from spieltisch.envs.backgammon import rules as k
from spieltisch.envs.backgammon.batch import BackgammonBatch, _random_decision
from spieltisch.envs.backgammon.notation import sides_to_position_id

TABLE = 1 << 16


def timed(run_one, seconds: float) -> dict:
    """Call ``run_one()`` (plays one game, returns its decision count) for ``seconds``."""
    games = decisions = 0
    start = time.perf_counter()
    cpu = time.process_time()
    while time.perf_counter() - start < seconds:
        decisions += run_one()
        games += 1
    wall = time.perf_counter() - start
    return {
        "games": games,
        "games_per_s": games / wall,
        "games_per_cpu_s": games / max(time.process_time() - cpu, 1e-9),
        "decisions_per_game": decisions / games,
    }


# --- random games, one at a time ---------------------------------------------------------------
def ours_plays(seed: int):
    """Our Python API, a whole play per turn: roll_dice, num_plays, apply_play."""
    game = BackgammonGame()
    rng = np.random.default_rng(seed)
    table = np.random.default_rng(seed + 1).random(TABLE).tolist()
    pos = [0]

    def one() -> int:
        state = game.new_initial_state()
        u = pos[0]
        while not state.is_terminal():
            if state.is_chance_node():
                state.roll_dice(rng)
            state.apply_play(int(table[u] * state.num_plays()))
            u = (u + 1) & (TABLE - 1)
        pos[0] = u
        return state.num_turns()

    return one


def ours_checker_moves(seed: int):
    """Our Python API one checker move at a time (as the env): legal_actions, apply."""
    game = BackgammonGame()
    rng = np.random.default_rng(seed)
    table = np.random.default_rng(seed + 1).random(TABLE).tolist()
    pos = [0]

    def one() -> int:
        state = game.new_initial_state()
        u = pos[0]
        steps = 0
        while not state.is_terminal():
            if state.is_chance_node():
                state.roll_dice(rng)
            legal = state.legal_actions()
            state.apply(legal[int(table[u] * len(legal))])
            u = (u + 1) & (TABLE - 1)
            steps += 1
        pos[0] = u
        return steps

    return one


def gnubg_loop(seed: int):
    """Random games with gnubg's move generator: gnubg_nn.roll, gnubg_nn.moves, pick a key,
    board_from_position_key, swap sides."""
    g = ga.gnubg()
    g.set.seed(seed)
    start = [list(side) for side in g.board_from_position_id("4HPwATDgc/ABMA")]
    table = np.random.default_rng(seed + 1).random(TABLE).tolist()
    pos = [0]

    def one() -> int:
        board = [start[0][:], start[1][:]]
        u = pos[0]
        turns = 0
        while True:
            d1, d2 = g.roll()
            keys = g.moves(board, d1, d2)
            turns += 1
            if keys:
                after = g.board_from_position_key(keys[int(table[u] * len(keys))])
                u = (u + 1) & (TABLE - 1)
                if sum(after[1]) == 0:  # the mover has borne off everything
                    break
                board = [list(after[1]), list(after[0])]
            else:
                board = [board[1], board[0]]
        pos[0] = u
        return turns

    return one


def openspiel_loop(seed: int):
    """Random games with OpenSpiel's backgammon: legal_actions / chance_outcomes,
    apply_action."""
    import pyspiel

    game = pyspiel.load_game("backgammon")
    table = np.random.default_rng(seed + 1).random(TABLE).tolist()
    pos = [0]

    def one() -> int:
        state = game.new_initial_state()
        u = pos[0]
        steps = 0
        while not state.is_terminal():
            x = table[u]
            u = (u + 1) & (TABLE - 1)
            if state.is_chance_node():
                outcomes = state.chance_outcomes()
                chosen = outcomes[-1][0]
                for action, p in outcomes:
                    x -= p
                    if x < 0:
                        chosen = action
                        break
                state.apply_action(chosen)
            else:
                legal = state.legal_actions()
                state.apply_action(legal[int(x * len(legal))])
                steps += 1
        pos[0] = u
        return steps

    return one


# --- the batched engine -----------------------------------------------------------------------
def batch_playouts(num_games: int, threads: int, seconds: float, seed: int) -> dict:
    """Rounds of ``num_games`` random games played to the end with ``play_random`` (random
    rollouts: each thread plays whole games, no per-step barrier) until ``seconds`` pass, on one
    batch put back to the start with ``reset`` before each round, as a rollout loop reuses its
    batch (its worker threads started once)."""
    game = BackgammonGame()
    batch = BackgammonBatch(game, num_games, seed=seed, threads=threads)
    batch.play_random()  # warm up (loads the compiled code, starts the threads)
    games = 0
    start = time.perf_counter()
    cpu = time.process_time()
    while time.perf_counter() - start < seconds:
        batch.reset()
        batch.play_random()
        games += num_games
    wall = time.perf_counter() - start
    batch.close()
    return {
        "games": games,
        "games_per_s": games / wall,
        "games_per_cpu_s": games / max(time.process_time() - cpu, 1e-9),
    }


def batch_games(num_games: int, threads: int, seconds: float, mode: str, seed: int) -> dict:
    """The batched engine in steady state for ``seconds``: every step each unfinished game
    makes one random decision (``mode`` "plays": ``step_random_plays``, a whole play per turn;
    "moves": ``step`` with ``sample_random_actions``, one checker move per step), and finished
    games are counted and restarted (``reset(games=terminal)``), as a self-play loop would."""
    game = BackgammonGame()
    rng = np.random.default_rng(seed)
    batch = BackgammonBatch(game, num_games, seed=rng, threads=threads)
    batch.step_random_plays()  # warm up (loads the compiled code)
    batch.step(batch.sample_random_actions(rng))
    batch.reset()
    games = steps = 0
    start = time.perf_counter()
    cpu = time.process_time()
    while time.perf_counter() - start < seconds:
        if mode == "plays":
            batch.step_random_plays()
        else:
            batch.step(batch.sample_random_actions(rng))
        steps += 1
        done = batch.terminal
        if done.any():
            games += int(done.sum())
            batch.reset(games=done)
    wall = time.perf_counter() - start
    return {
        "games": games,
        "games_per_s": games / wall,
        "games_per_cpu_s": games / max(time.process_time() - cpu, 1e-9),
        "steps": steps,
    }


# --- legal-play generation per call ----------------------------------------------------------
@numba.njit(cache=True)
def _generate_all(vectors, pairs, ws):
    s = np.empty(vectors.shape[1], dtype=np.int32)
    total = 0
    for i in range(pairs.shape[0]):
        s[:] = vectors[pairs[i, 0]]
        total += k.set_dice(s, pairs[i, 1], pairs[i, 2], ws) >> 5 & 8191
    return total


@numba.njit(cache=True)
def _kernel_games(initial, uniforms, rolls, ws):
    """Random cubeless games on one state, as ``play_random`` plays each game (dice put
    without generating, then its own random decision, one generation each); returns (games,
    decisions)."""
    s = initial.copy()
    games = decisions = 0
    for i in range(uniforms.shape[0]):
        if s[k.M_PHASE] <= k.PH_ROLL:
            d1, d2 = k.dice_of(s, rolls[i])
            k.put_dice(s, d1, d2)
        _random_decision(s, uniforms[i], ws)
        decisions += 1
        if s[k.M_PHASE] == k.PH_OVER:
            s[:] = initial
            games += 1
    return games, decisions


def kernel_limit(decisions: int, seed: int) -> dict:
    """The compiled rules' cost per decision and the games per second one core allows."""
    rng = np.random.default_rng(seed)
    uniforms = rng.random(decisions)
    rolls = rng.integers(0, 180, size=decisions)
    initial = BackgammonGame().new_initial_state().s.copy()
    ws = k.new_workspace()
    _kernel_games(initial, uniforms[:1000], rolls[:1000], ws)  # compile
    best = float("inf")
    for _ in range(5):
        t = time.process_time()
        games, counted = _kernel_games(initial, uniforms, rolls, ws)
        best = min(best, time.process_time() - t)
    per_decision = best / decisions
    per_game = counted / max(games, 1)
    return {
        "us_per_decision": per_decision * 1e6,
        "decisions_per_game": per_game,
        "games_per_second_one_core": 1.0 / (per_decision * per_game),
    }


def generation(num_positions: int, seed: int, seconds: float) -> dict:
    """Per-call time of legal-play generation on mixed random positions and rolls."""
    game = BackgammonGame()
    boards, turns = ga.random_positions(num_positions, seed, game)
    states = []
    for board, turn in zip(boards, turns, strict=True):
        not_on_roll, on_roll = ga.board_to_gnubg(board, int(turn))
        pid = sides_to_position_id(np.array(not_on_roll), np.array(on_roll))
        states.append(game.state_from_text(f"{pid} {int(turn)} roll"))
    rng = np.random.default_rng(seed)
    rolls = [ga.ROLLS[i] for i in rng.integers(0, 21, size=len(states))]  # mixed rolls
    gboards = [ga.to_gnubg_board(s) for s in states]
    g = ga.gnubg()

    def ours_api() -> int:
        n = 0
        for state, (d1, d2) in zip(states, rolls, strict=True):
            c = state.clone()
            c.set_dice(d1, d2)  # generates the plays (and the mask)
            n += c.num_plays()
        return n

    def ours_api_boards() -> int:
        n = 0
        for state, (d1, d2) in zip(states, rolls, strict=True):
            c = state.clone()
            c.set_dice(d1, d2)
            n += len(c.play_boards())  # the resulting boards as a numpy array
        return n

    def gnubg_api() -> int:
        n = 0
        for board, (d1, d2) in zip(gboards, rolls, strict=True):
            n += len(g.moves(board, d1, d2))
        return n

    vectors = np.array([s.s for s in states])
    pairs = np.array([(i, d1, d2) for i, (d1, d2) in enumerate(rolls)], dtype=np.int64)
    ws = k.new_workspace()
    _generate_all(vectors[:2], pairs[:2], ws)

    def ours_compiled() -> int:
        return int(_generate_all(vectors, pairs, ws))

    contenders = {
        "ours_python_api": ours_api,
        "ours_python_api_boards": ours_api_boards,
        "ours_compiled_loop": ours_compiled,
        "gnubg_moves": gnubg_api,
    }
    # Interleaved passes over all positions; per contender the best pass, in CPU time (one
    # thread each, so CPU time is the time the call took, whatever else the machine runs).
    best = dict.fromkeys(contenders, float("inf"))
    plays = dict.fromkeys(contenders, 0)
    start = time.perf_counter()
    while time.perf_counter() - start < seconds * len(contenders):
        for name, fn in contenders.items():
            t = time.process_time()
            plays[name] = fn()
            best[name] = min(best[name], time.process_time() - t)
    return {
        name: {
            "us_per_call": best[name] / len(states) * 1e6,
            "plays_per_call": plays[name] / len(states),
        }
        for name in contenders
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seconds", type=float, default=3.0, help="per contender and round")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--batch", type=int, default=2048, help="games in the batch")
    parser.add_argument("--threads", type=int, default=2, help="threads of the batched engine")
    parser.add_argument("--positions", type=int, default=3000, help="for the generation timing")
    parser.add_argument("--out", type=Path, help="default: backgammon.json in --results-dir")
    add_run_options(parser)
    parser.add_argument("--kernel-decisions", type=int, default=3_000_000)
    args = parser.parse_args(argv)
    shrink_if_quick(args, seconds=0.05, rounds=1, batch=64, positions=50, kernel_decisions=20_000)
    numba.set_num_threads(min(args.threads, numba.config.NUMBA_NUM_THREADS))

    limit = kernel_limit(args.kernel_decisions, 2)
    contenders = {
        "ours_python_api_plays": ours_plays(0),
        "ours_python_api_checker_moves": ours_checker_moves(0),
        "gnubg_moves_loop": gnubg_loop(0),
        "openspiel_pyspiel": openspiel_loop(0),
    }
    for one in contenders.values():  # warm up (numba loads its cached code on first use)
        one()
    rounds: dict[str, list[dict]] = {name: [] for name in contenders}
    rounds[f"batch_{args.threads}_threads_plays"] = []
    rounds[f"batch_{args.threads}_threads_checker_moves"] = []
    rounds["batch_1_thread_plays"] = []
    rounds[f"batch_{args.threads}_threads_play_random"] = []
    rounds["batch_1_thread_play_random"] = []
    for r in range(args.rounds):
        for name, one in contenders.items():
            rounds[name].append(timed(one, args.seconds))
        rounds[f"batch_{args.threads}_threads_plays"].append(
            batch_games(args.batch, args.threads, args.seconds, "plays", r)
        )
        rounds[f"batch_{args.threads}_threads_checker_moves"].append(
            batch_games(args.batch, args.threads, args.seconds, "moves", r)
        )
        rounds["batch_1_thread_plays"].append(batch_games(args.batch, 1, args.seconds, "plays", r))
        rounds[f"batch_{args.threads}_threads_play_random"].append(
            batch_playouts(args.batch, args.threads, args.seconds, r)
        )
        rounds["batch_1_thread_play_random"].append(batch_playouts(args.batch, 1, args.seconds, r))
        print(f"round {r + 1}/{args.rounds} done", file=sys.stderr)

    games = {}
    for name, results in rounds.items():
        rates = [x["games_per_s"] for x in results]
        games[name] = {
            "games_per_s_best": max(rates),
            "games_per_s_median": statistics.median(rates),
            "games_per_cpu_s_best": max(x["games_per_cpu_s"] for x in results),
            "rounds": results,
        }
    # Ratios of the medians of the interleaved rounds (the best rounds are recorded too).
    peer_name = max(
        ("gnubg_moves_loop", "openspiel_pyspiel"), key=lambda n: games[n]["games_per_s_median"]
    )
    peer = games[peer_name]["games_per_s_median"]
    ratios = {name: g["games_per_s_median"] / peer for name, g in games.items()}
    for g in games.values():
        g["share_of_one_core_kernel_limit"] = (
            g["games_per_s_median"] / limit["games_per_second_one_core"]
        )
    gen = generation(args.positions, 1, args.seconds)
    gen_ratio = gen["gnubg_moves"]["us_per_call"] / gen["ours_python_api"]["us_per_call"]
    many = f"batch_{args.threads}_threads_play_random"
    scaling = (
        games[many]["games_per_s_median"]
        / games["batch_1_thread_play_random"]["games_per_s_median"]
    )
    targets = {
        "python_api_vs_faster_peer": {"target": 2.0, "measured": ratios["ours_python_api_plays"]},
        f"{many}_vs_faster_peer": {"target": 10.0, "measured": ratios[many]},
        f"play_random_1_to_{args.threads}_threads": {"target": 1.8, "measured": scaling},
    }
    for t in targets.values():
        t["met"] = t["measured"] >= t["target"]
    result = {
        "benchmark": "backgammon random games and legal-play generation",
        "seconds_per_round": args.seconds,
        "rounds": args.rounds,
        "batch_size": args.batch,
        "faster_peer": peer_name,
        "games": games,
        "ratio_to_faster_peer": ratios,
        "kernel_limit": limit,
        "generation_per_call": gen,
        "generation_speedup_vs_gnubg": gen_ratio,
        "targets": targets,
        "machine": machine(),
    }
    print(f"faster peer: {peer_name} ({peer:.0f} games/s, median)")
    print(
        f"  kernel limit: {limit['us_per_decision']:.2f} us per decision, "
        f"{limit['decisions_per_game']:.1f} decisions per game: "
        f"{limit['games_per_second_one_core']:,.0f} games/s on one core"
    )
    for name, g in games.items():
        print(
            f"  {name:40s} {g['games_per_s_median']:9.0f} games/s (best "
            f"{g['games_per_s_best']:.0f})  x{ratios[name]:.2f}  "
            f"{g['share_of_one_core_kernel_limit']:6.1%} of the one-core limit"
        )
    for name, x in gen.items():
        print(f"  generation {name:28s} {x['us_per_call']:7.2f} us/call")
    print(f"  generation: ours (Python API) {gen_ratio:.2f}x faster than gnubg_nn.moves")
    for name, t in targets.items():
        print(f"  target {name}: >= {t['target']}x, measured {t['measured']:.2f}x, met: {t['met']}")
    print(f"  load average: {result['machine']['load_average']}")
    write_json(args.out or result_path(args, "backgammon.json"), result)
    return 0


if __name__ == "__main__":
    sys.exit(main())
