"""HiLo speed: random games per second (single-game API and batched engine, 2 and 4 players) and
AEC steps per second of ``hilo_v0`` next to PettingZoo's ``connect_four_v3``, in one run.

    python benchmarks/bench_hilo.py [--seconds 3] [--rounds 5] [--batch 4096]
        [--out results/hilo.json] [--quick]

Random agents everywhere (uniform over the legal actions). The AEC envs and their peer run in
interleaved rounds (each round measures every env once, in turn), and the ratios are of the
medians over the rounds, so that a disturbance by other processes hits all of them alike; the
engine's own rates (no peer) are measured once. Prints the numbers and writes them, every round
included, with the machine's description and load average to JSON.
"""

from __future__ import annotations

import argparse
import os
import time
from pathlib import Path

import numpy as np
from _common import (
    add_run_options,
    command_line,
    interleaved,
    positive_int,
    result_path,
    shrink_if_quick,
    write_json,
)
from spieltisch.agents.arena.provenance import load_average
from spieltisch.agents.arena.provenance import machine_info as machine
from spieltisch.envs.hilo import HiLoGame
from spieltisch.envs.hilo.batch import HiLoBatch


def single_games(num_players: int, seconds: float, seed: int = 0) -> dict:
    """Random games through the single-game API (legal_actions + apply), for ``seconds``."""
    game = HiLoGame(num_players)
    rng = np.random.default_rng(seed)
    uniforms = rng.random(1 << 16)
    u = 0
    games = moves = 0
    # warm up (compilation is cached on disk, but the first call still loads it)
    game.new_initial_state(0)
    start = time.perf_counter()
    while time.perf_counter() - start < seconds:
        state = game.new_initial_state(rng)
        while not state.is_terminal():
            legal = state.legal_actions()
            state.apply(legal[int(uniforms[u] * len(legal))])
            u = (u + 1) & 0xFFFF
            moves += 1
        games += 1
    elapsed = time.perf_counter() - start
    return {
        "games": games,
        "seconds": elapsed,
        "games_per_s": games / elapsed,
        "actions_per_s": moves / elapsed,
        "actions_per_game": moves / games,
    }


def batched_games(num_players: int, num_games: int, seconds: float, seed: int = 0) -> dict:
    """Random games in the batched engine: deal ``num_games``, step until all end, repeat."""
    game = HiLoGame(num_players)
    rng = np.random.default_rng(seed)
    HiLoBatch(game, 8, seed=0).step(np.full(8, 26))  # warm up
    games = steps = 0
    start = time.perf_counter()
    while time.perf_counter() - start < seconds:
        batch = HiLoBatch(game, num_games, seed=rng)
        while not batch.terminal.all():
            batch.step(batch.sample_random_actions(rng))
            steps += 1
        games += num_games
    elapsed = time.perf_counter() - start
    return {
        "games": games,
        "batch_size": num_games,
        "seconds": elapsed,
        "games_per_s": games / elapsed,
        "batch_steps_per_s": steps / elapsed,
    }


def aec_steps(make_env, seconds: float, seed: int = 0) -> dict:
    """AEC steps per second with random legal actions (``last()`` + ``step()`` per action)."""
    env = make_env()
    rng = np.random.default_rng(seed)
    steps = games = 0
    start = time.perf_counter()
    while time.perf_counter() - start < seconds:
        env.reset(seed=int(rng.integers(2**31)))
        for agent in env.agent_iter():
            obs, reward, termination, truncation, info = env.last()
            if termination or truncation:
                env.step(None)
                continue
            legal = np.flatnonzero(obs["action_mask"])
            env.step(int(legal[int(rng.integers(len(legal)))]))
            steps += 1
            del agent, reward, info
        games += 1
    elapsed = time.perf_counter() - start
    return {"steps": steps, "games": games, "seconds": elapsed, "steps_per_s": steps / elapsed}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seconds", type=float, default=3.0, help="time per measurement")
    parser.add_argument(
        "--rounds", type=positive_int, default=5, help="interleaved rounds of the AEC envs"
    )
    parser.add_argument("--batch", type=positive_int, default=4096, help="games per batch")
    parser.add_argument("--out", type=Path, help="default: hilo.json in --results-dir")
    add_run_options(parser)
    args = parser.parse_args()
    shrink_if_quick(args, seconds=0.05, batch=64, rounds=1)

    os.environ.setdefault("PYGAME_HIDE_SUPPORT_PROMPT", "1")
    try:
        from pettingzoo.classic import connect_four_v3
    except ModuleNotFoundError as err:  # PettingZoo's classic envs import pygame for rendering
        raise SystemExit(
            f"connect_four_v3 needs {err.name}: pip install 'pettingzoo[classic]'"
        ) from None
    from spieltisch.envs import hilo_v0

    results: dict = {
        "command": command_line(__file__, None),
        "machine": machine(),
        "seconds_per_measurement": args.seconds,
        "rounds": args.rounds,
    }
    for n in (2, 4):
        r = single_games(n, args.seconds)
        results[f"single_{n}p"] = r
        print(
            f"single-game API, {n} players: {r['games_per_s']:9.1f} games/s "
            f"({r['actions_per_s']:,.0f} actions/s, {r['actions_per_game']:.1f} actions/game)"
        )
        r = batched_games(n, args.batch, args.seconds)
        results[f"batched_{n}p"] = r
        print(f"batched ({args.batch} games), {n} players: {r['games_per_s']:9.1f} games/s")

    envs = {
        "hilo_v0_2p": lambda: hilo_v0.env(num_players=2),
        "hilo_v0_4p": lambda: hilo_v0.env(num_players=4),
        "connect_four_v3": lambda: connect_four_v3.env(),
    }
    aec: dict = interleaved(
        {name: lambda make_env=make_env: aec_steps(make_env, args.seconds)["steps"]
         for name, make_env in envs.items()},
        args.rounds,
    )  # fmt: skip
    for name, measured in aec.items():
        print(f"AEC {name:16s}: {measured['per_second']:10,.0f} steps/s "
              f"(median of {args.rounds} rounds)")  # fmt: skip
    peer = aec["connect_four_v3"]["per_second"]
    aec["ratio_hilo_2p_to_connect_four"] = aec["hilo_v0_2p"]["per_second"] / peer
    aec["ratio_hilo_4p_to_connect_four"] = aec["hilo_v0_4p"]["per_second"] / peer
    results["aec"] = aec
    print(
        f"ratio hilo_v0 / connect_four_v3: 2 players {aec['ratio_hilo_2p_to_connect_four']:.2f}x, "
        f"4 players {aec['ratio_hilo_4p_to_connect_four']:.2f}x (target >= 2x)"
    )
    results["machine"]["load_average_after"] = load_average()
    write_json(args.out or result_path(args, "hilo.json"), results)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
