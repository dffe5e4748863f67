"""Kalaha and Hus speed, side by side with their peers in one run, plus a soak of random games.

    python benchmarks/bench_mancala.py            # full run (several minutes)
    python benchmarks/bench_mancala.py --quick    # a smoke run (writes nothing)

Measured (random legal moves everywhere, contenders interleaved round by round so they share the
machine's conditions):

* Kalaha ``standard`` 6 x 4 through the single-game Python API (``legal_actions`` + ``apply``)
  against OpenSpiel's ``mancala`` through pyspiel (same rules: see tests/test_kalaha_openspiel.py);
* the batched Kalaha engine on the same rules: stepped from Python (``step`` with
  ``sample_random_actions``, what training does) and as compiled random rollouts
  (``play_random``) on 1 and 2 threads;
* the kernel limit: the compiled move kernels alone in one loop (no Python, no batch, one core),
  as nanoseconds per move and the games per second one core could play that way; every
  contender's share of that limit is printed beside it;
* AEC steps per second of ``kalaha_v0`` and ``hus_v0`` against PettingZoo's ``connect_four_v3``;
* Hus games per second, single, batched and as compiled rollouts on 1 and 2 threads (Hus has
  no OpenSpiel peer), mean moves per game, the longest move seen;
* a soak: many random games per game through the batched engines, with stone conservation,
  masks against the board, and termination checked after every move.

Results go to ``benchmarks/results/mancala.json`` and ``.md``.
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from pathlib import Path

import numba
import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import add_run_options, interleaved, positive_int, write_results
from spieltisch.agents.arena.provenance import machine_info
from spieltisch.envs import hus_v0, kalaha_v0
from spieltisch.envs._common.batch import pick_from_bits
from spieltisch.envs.hus import HusGame
from spieltisch.envs.hus.batch import HusBatch
from spieltisch.envs.kalaha import KalahaGame
from spieltisch.envs.kalaha.batch import KalahaBatch
from spieltisch.envs.kalaha.rules import legal_bits as kalaha_legal_bits
from spieltisch.envs.kalaha.rules import sow
from spieltisch.envs.kalaha.rules import unpack_move as kalaha_unpack

HUS_MAX_TURNS = 1000


def kalaha_single(game: KalahaGame, games: int, rng: random.Random) -> int:
    for _ in range(games):
        state = game.new_initial_state()
        while not state.is_terminal():
            state.apply(rng.choice(state.legal_actions()))
    return games


def openspiel_single(peer, games: int, rng: random.Random) -> int:
    for _ in range(games):
        state = peer.new_initial_state()
        while not state.is_terminal():
            state.apply_action(rng.choice(state.legal_actions()))
    return games


def batch_games(batch, rng: np.random.Generator, max_steps: int) -> tuple[int, int]:
    """Play every game of ``batch`` to its end (or ``max_steps``); returns (games, moves)."""
    batch.reset()
    moves = steps = 0
    while not batch.terminal.all() and steps < max_steps:
        moves += int((~batch.terminal).sum())
        batch.step(batch.sample_random_actions(rng))
        steps += 1
    return batch.num_games, moves


@numba.njit(cache=True)
def _kalaha_kernel_loop(initial, first_player, uniforms, empty_capture):
    """Random games played one after another with the move kernel alone; returns (games, moves)
    when the uniform numbers run out (the unfinished last game is not counted)."""
    board = initial.copy()
    player = first_player
    bits = kalaha_legal_bits(board, player)
    games = counted = 0
    for i in range(uniforms.shape[0]):
        player, over, bits = kalaha_unpack(
            sow(board, player, pick_from_bits(bits, uniforms[i]), empty_capture)
        )
        if over:
            games += 1
            counted = i + 1
            board[:] = initial
            player = first_player
            bits = kalaha_legal_bits(board, player)
    return games, counted


def kalaha_kernel_limit(game: KalahaGame, moves: int, rng: np.random.Generator) -> dict:
    """The compiled kernel's cost per move and the games per second it allows on one core."""
    uniforms = rng.random(moves)
    initial = game.new_initial_state().board.copy()
    _kalaha_kernel_loop(initial, 0, uniforms[:1000], game.empty_capture)  # compile
    best = float("inf")
    for _ in range(5):
        t0 = time.perf_counter()
        games, counted = _kalaha_kernel_loop(initial, 0, uniforms, game.empty_capture)
        best = min(best, time.perf_counter() - t0)
    ns_per_move = best / moves * 1e9
    per_game = counted / games
    return {
        "ns_per_move": ns_per_move,
        "moves_per_game": per_game,
        "games_per_second_one_core": 1e9 / (ns_per_move * per_game),
    }


def rollout_games(batch, rng: np.random.Generator, max_moves: int | None = None) -> int:
    """Every game of ``batch`` played to its end (or ``max_moves``) by the compiled rollouts;
    returns the games."""
    batch.reset()
    batch.play_random(rng, max_moves)
    return batch.num_games


def aec_steps(env, steps: int, rng: np.random.Generator) -> int:
    """``steps`` AEC steps with random legal actions (resetting finished games)."""
    done = 0
    env.reset(seed=int(rng.integers(1 << 30)))
    while done < steps:
        for _agent in env.agent_iter():
            observation, _, terminated, truncated, _ = env.last()
            if terminated or truncated:
                env.step(None)
                continue
            env.step(int(rng.choice(np.flatnonzero(observation["action_mask"]))))
            done += 1
            if done >= steps:
                break
        env.reset(seed=int(rng.integers(1 << 30)))
    return steps


def hus_single(game: HusGame, games: int, rng: random.Random, stats: dict) -> int:
    for _ in range(games):
        state = game.new_initial_state()
        while not state.is_terminal() and state.move_number < HUS_MAX_TURNS:
            move = state.apply(rng.choice(state.legal_actions()))
            if move.stones_sown > stats["longest_move_stones"]:
                stats["longest_move_stones"] = move.stones_sown
                stats["longest_move_relays"] = move.relay_steps
            stats["never_ending_moves"] += move.never_ending
        stats["moves"] += state.move_number
        stats["games"] += 1
    return games


def soak_kalaha(game: KalahaGame, games: int, batch_size: int, seed: int) -> dict:
    rng = np.random.default_rng(seed)
    batch = KalahaBatch(game, batch_size)
    pits = game.pits
    played = moves = 0
    while played < games:
        batch.reset()
        steps = 0
        while not batch.terminal.all():
            live = ~batch.terminal
            mover = batch.current_player[:, None]
            own = np.where(mover == 0, batch.boards[:, :pits], batch.boards[:, pits + 1 : -1])
            assert np.array_equal(batch.legal_mask[live], (own[live] > 0).astype(np.int8))
            moves += int(live.sum())
            batch.step(batch.sample_random_actions(rng))
            assert (batch.boards.sum(axis=1) == game.total_stones).all(), "stones not conserved"
            steps += 1
            assert steps <= game.total_stones * (2 * pits + 1), "a Kalaha game did not end"
        finished = batch.boards[:, pits] + batch.boards[:, -1]
        assert (finished == game.total_stones).all(), "stones left on the board at the end"
        played += batch_size
    return {"games": played, "moves": moves, "violations": 0}


def soak_hus(game: HusGame, games: int, batch_size: int, seed: int) -> dict:
    rng = np.random.default_rng(seed)
    batch = HusBatch(game, batch_size)
    played = moves = truncated = never_ending = 0
    longest = 0
    while played < games:
        batch.reset()
        steps = 0
        while not batch.terminal.all() and steps < HUS_MAX_TURNS:
            live = ~batch.terminal
            # legal pits recomputed from the board, through the env's observation (the mover's
            # 16 pits in action order come first)
            own_pits = batch.observe()[0][:, :16]
            assert np.array_equal(batch.legal_mask[live], (own_pits[live] >= 2).astype(np.int8))
            moves += int(live.sum())
            batch.step(batch.sample_random_actions(rng))
            assert (batch.boards.sum(axis=1) == 48).all(), "stones not conserved"
            never_ending += int((batch.last_move[live, 3] > 0).sum())
            longest = max(longest, int(batch.last_move[:, 0].max()))
            steps += 1
        truncated += int((~batch.terminal).sum())
        played += batch_size
    return {
        "games": played,
        "moves": moves,
        "truncated_at_max_turns": truncated,
        "never_ending_moves": never_ending,
        "longest_move_stones": longest,
        "violations": 0,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=positive_int, default=10, help="interleaved timing rounds")
    parser.add_argument("--soak-games", type=positive_int, default=100_000, help="games per soak")
    add_run_options(parser)
    args = parser.parse_args()
    rounds = 1 if args.quick else args.rounds
    soak_games = 64 if args.quick else args.soak_games
    scale = 0.01 if args.quick else 1.0
    import pyspiel
    from pettingzoo.classic import connect_four_v3

    results: dict = {"machine": machine_info()}
    py_rng = random.Random(0)
    np_rng = np.random.default_rng(0)

    print("Kalaha standard 6x4, random games, single-game Python API vs OpenSpiel mancala")
    kalaha = KalahaGame(pits=6, seeds=4, rules="standard")
    peer = pyspiel.load_game("mancala")
    kalaha_single(kalaha, 50, py_rng)  # warm-up: load compiled kernels
    batch = KalahaBatch(kalaha, 4096)
    batch_games(batch, np_rng, 10_000)
    n_rollouts = 2048 if args.quick else 65_536
    rollouts = {threads: KalahaBatch(kalaha, n_rollouts, threads=threads) for threads in (1, 2)}
    for b in rollouts.values():
        rollout_games(b, np_rng)  # warm-up: compile, start the threads
    limit = kalaha_kernel_limit(kalaha, int(20_000_000 * scale), np_rng)
    results["kalaha_kernel_limit"] = limit
    n_single = int(2000 * scale)
    timing = interleaved(
        {
            "spieltisch_single": lambda: kalaha_single(kalaha, n_single, py_rng),
            "openspiel": lambda: openspiel_single(peer, n_single, py_rng),
            "spieltisch_batched_4096": lambda: batch_games(batch, np_rng, 10_000)[0],
            **{
                f"spieltisch_rollouts_{t}_thread{'s' * (t > 1)}": (
                    lambda b=b: rollout_games(b, np_rng)
                )
                for t, b in rollouts.items()
            },
        },
        rounds,
    )
    base = timing["openspiel"]["per_second"]
    results["kalaha_games_per_second"] = {
        name: {
            **t,
            "ratio_to_openspiel": t["per_second"] / base,
            "share_of_one_core_kernel_limit": t["per_second"] / limit["games_per_second_one_core"],
        }
        for name, t in timing.items()
    }
    print(
        f"  kernel limit: {limit['ns_per_move']:.1f} ns per move, {limit['moves_per_game']:.1f} "
        f"moves per game: {limit['games_per_second_one_core']:,.0f} games/s on one core"
    )
    for name, t in results["kalaha_games_per_second"].items():
        print(
            f"  {name:30s} {t['per_second']:>12,.0f} games/s   {t['ratio_to_openspiel']:6.2f}x"
            f"   {t['share_of_one_core_kernel_limit']:6.1%} of the one-core limit"
        )

    print("AEC steps per second with random legal actions vs connect_four_v3")
    envs = {
        "kalaha_v0": kalaha_v0.env(),
        "hus_v0": hus_v0.env(),
        "connect_four_v3": connect_four_v3.env(),
    }
    for env in envs.values():
        aec_steps(env, 200, np_rng)
    n_steps = int(20_000 * scale)
    timing = interleaved(
        {name: (lambda e=e: aec_steps(e, n_steps, np_rng)) for name, e in envs.items()}, rounds
    )
    base = timing["connect_four_v3"]["per_second"]
    results["aec_steps_per_second"] = {
        name: {**t, "ratio_to_connect_four": t["per_second"] / base} for name, t in timing.items()
    }
    for name, t in results["aec_steps_per_second"].items():
        print(
            f"  {name:26s} {t['per_second']:>12,.0f} steps/s   {t['ratio_to_connect_four']:6.2f}x"
        )

    print("Hus random games: single-game API and batched")
    hus = HusGame()
    stats = {
        "games": 0,
        "moves": 0,
        "longest_move_stones": 0,
        "longest_move_relays": 0,
        "never_ending_moves": 0,
    }
    hus_single(hus, 20, py_rng, stats)
    hus_batch = HusBatch(hus, 4096)
    batch_games(hus_batch, np_rng, HUS_MAX_TURNS)
    hus_rollouts = {threads: HusBatch(hus, n_rollouts // 4, threads=threads) for threads in (1, 2)}
    for b in hus_rollouts.values():
        rollout_games(b, np_rng, HUS_MAX_TURNS)  # warm-up: compile, start the threads
    n_hus = int(1000 * scale)
    timing = interleaved(
        {
            "spieltisch_single": lambda: hus_single(hus, n_hus, py_rng, stats),
            "spieltisch_batched_4096": lambda: batch_games(hus_batch, np_rng, HUS_MAX_TURNS)[0],
            **{
                f"spieltisch_rollouts_{t}_thread{'s' * (t > 1)}": (
                    lambda b=b: rollout_games(b, np_rng, HUS_MAX_TURNS)
                )
                for t, b in hus_rollouts.items()
            },
        },
        rounds,
    )
    results["hus"] = {
        "games_per_second": {name: t for name, t in timing.items()},
        "mean_moves_per_game": stats["moves"] / stats["games"],
        "longest_move_stones_sown": stats["longest_move_stones"],
        "longest_move_relay_steps": stats["longest_move_relays"],
        "never_ending_moves": stats["never_ending_moves"],
        "games_in_statistics": stats["games"],
    }
    for name, t in timing.items():
        print(f"  {name:26s} {t['per_second']:>12,.0f} games/s")
    print(
        f"  mean moves per game {results['hus']['mean_moves_per_game']:.1f}, longest move "
        f"{stats['longest_move_stones']:,} stones sown ({stats['longest_move_relays']:,} relays), "
        f"{stats['never_ending_moves']} never-ending moves in {stats['games']:,} games"
    )

    print(f"Soak: {soak_games:,} random games per game, invariants checked after every move")
    results["soak"] = {
        "kalaha_goki_6x6": soak_kalaha(KalahaGame(), soak_games, 4096, 1),
        "kalaha_standard_6x4": soak_kalaha(kalaha, soak_games, 4096, 2),
        "hus": soak_hus(hus, soak_games, 4096, 3),
    }
    for name, s in results["soak"].items():
        print(f"  {name:26s} {s}")

    k = results["kalaha_games_per_second"]
    a = results["aec_steps_per_second"]
    h = results["hus"]
    md = f"""# Kalaha and Hus benchmark

Measured by `python benchmarks/bench_mancala.py` on {results["machine"]["cpu"]} ({results["machine"]["cpu_count"]} cores), {results["machine"]["date"]}, git {results["machine"]["git_revision"]}; load average at start {results["machine"]["load_average"]}. Contenders interleaved over {rounds} rounds.

| Kalaha standard 6x4, random games | games/s | vs OpenSpiel | share of the one-core kernel limit |
|---|---:|---:|---:|
| spieltisch, single game (Python API) | {k["spieltisch_single"]["per_second"]:,.0f} | {k["spieltisch_single"]["ratio_to_openspiel"]:.2f}x | {k["spieltisch_single"]["share_of_one_core_kernel_limit"]:.1%} |
| spieltisch, batched (4096 games), stepped from Python | {k["spieltisch_batched_4096"]["per_second"]:,.0f} | {k["spieltisch_batched_4096"]["ratio_to_openspiel"]:.2f}x | {k["spieltisch_batched_4096"]["share_of_one_core_kernel_limit"]:.1%} |
| spieltisch, compiled rollouts (`play_random`), 1 thread | {k["spieltisch_rollouts_1_thread"]["per_second"]:,.0f} | {k["spieltisch_rollouts_1_thread"]["ratio_to_openspiel"]:.2f}x | {k["spieltisch_rollouts_1_thread"]["share_of_one_core_kernel_limit"]:.1%} |
| spieltisch, compiled rollouts (`play_random`), 2 threads | {k["spieltisch_rollouts_2_threads"]["per_second"]:,.0f} | {k["spieltisch_rollouts_2_threads"]["ratio_to_openspiel"]:.2f}x | {k["spieltisch_rollouts_2_threads"]["share_of_one_core_kernel_limit"]:.1%} |
| OpenSpiel `mancala` (pyspiel) | {k["openspiel"]["per_second"]:,.0f} | 1.00x | {k["openspiel"]["share_of_one_core_kernel_limit"]:.1%} |

Kernel limit (`sow` alone in one compiled loop, one core): {results["kalaha_kernel_limit"]["ns_per_move"]:.1f} ns per move, {results["kalaha_kernel_limit"]["moves_per_game"]:.1f} moves per game, {results["kalaha_kernel_limit"]["games_per_second_one_core"]:,.0f} games/s.

| AEC env, random legal actions | steps/s | vs connect_four_v3 |
|---|---:|---:|
| `kalaha_v0` | {a["kalaha_v0"]["per_second"]:,.0f} | {a["kalaha_v0"]["ratio_to_connect_four"]:.2f}x |
| `hus_v0` | {a["hus_v0"]["per_second"]:,.0f} | {a["hus_v0"]["ratio_to_connect_four"]:.2f}x |
| PettingZoo `connect_four_v3` | {a["connect_four_v3"]["per_second"]:,.0f} | 1.00x |

| Hus, random games | games/s |
|---|---:|
| single game (Python API) | {h["games_per_second"]["spieltisch_single"]["per_second"]:,.0f} |
| batched (4096 games), stepped from Python | {h["games_per_second"]["spieltisch_batched_4096"]["per_second"]:,.0f} |
| compiled rollouts (`play_random`), 1 thread | {h["games_per_second"]["spieltisch_rollouts_1_thread"]["per_second"]:,.0f} |
| compiled rollouts (`play_random`), 2 threads | {h["games_per_second"]["spieltisch_rollouts_2_threads"]["per_second"]:,.0f} |

Hus: {h["mean_moves_per_game"]:.1f} moves per game on average; longest move {h["longest_move_stones_sown"]:,} stones sown ({h["longest_move_relay_steps"]:,} relay steps); {h["never_ending_moves"]} never-ending moves in {h["games_in_statistics"]:,} games.

Soak (random games through the batched engines, every invariant checked after every move; any violation aborts the run):

| game | games | moves | notes |
|---|---:|---:|---|
| Kalaha goki 6x6 | {results["soak"]["kalaha_goki_6x6"]["games"]:,} | {results["soak"]["kalaha_goki_6x6"]["moves"]:,} | all ended, 0 violations |
| Kalaha standard 6x4 | {results["soak"]["kalaha_standard_6x4"]["games"]:,} | {results["soak"]["kalaha_standard_6x4"]["moves"]:,} | all ended, 0 violations |
| Hus | {results["soak"]["hus"]["games"]:,} | {results["soak"]["hus"]["moves"]:,} | {results["soak"]["hus"]["truncated_at_max_turns"]} truncated at {HUS_MAX_TURNS} moves, {results["soak"]["hus"]["never_ending_moves"]} never-ending moves, longest move {results["soak"]["hus"]["longest_move_stones"]:,} stones, 0 violations |
"""
    print()
    print(md)
    write_results(args, "mancala", results, md)


if __name__ == "__main__":
    main()
