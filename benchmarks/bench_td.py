"""TD(lambda) backgammon training throughput, side by side in one run: the compiled trainer
(:func:`spieltisch.train.td.train_games`, one thread) against the plain numpy learner of the same
algorithm and net (:mod:`spieltisch.train.td_reference`, the peer).

    python benchmarks/bench_td.py [--hidden 80] [--rounds 3] [--seconds 10]
        [--out benchmarks/results/bench_td.json] [--quick]

Both learn from the same initial weights (seed 0) with the same step size and lambda, in
interleaved rounds of ``--seconds`` each, and keep learning across rounds (each its own copy of
the net). Each rate is the best round (the least disturbed by other processes); the medians and
the rates per CPU-second (less sensitive to a shared machine) are recorded too. The average
plays per game is recorded for each, since game length depends on what the net has learnt.
Target (issue #6): at least 40,000 training games per hour on 2 cores; published pure-numpy
TD implementations reach about 20,000.

Where the time goes (:func:`where_the_time_goes`, issue 21): the shipped 80-hidden net
(``pretrained:backgammon``) plays ``--profile-games`` greedy 1-ply games without learning, in a
compiled loop that does what the trainer does to choose a play (roll, generate, the afterstate
boards, the net's value of each); the rules alone then replay the very same games (same dice,
the recorded plays); and the trainer learns from copies of the same weights with the same dice.
Per play: the rules' share, the net's share in choosing the play (the difference of the first
two), and learning's (the trainer's time less the net's games'; its games part from the others'
after the first update, with about the same length). Interleaved rounds, the medians recorded.
"""

from __future__ import annotations

import argparse
import statistics
import time
from pathlib import Path

import numba
import numpy as np
from _common import add_run_options, result_path, shrink_if_quick, write_json
from spieltisch.agents.arena.provenance import machine_info
from spieltisch.agents.backgammon import td_value as tv
from spieltisch.envs.backgammon import rules as k
from spieltisch.train import td
from spieltisch.train import td_reference as ref

#: plays recorded per profiled game at most (a backgammon game has about 55-65)
MAX_PLAYS_PER_GAME = 1000


@numba.njit(nogil=True)
def _roll_and_list(s, rng, ws, boards):
    """The trainer's first step: roll with ``rng``, generate the plays, their afterstate boards
    into ``boards``. Returns the number of plays."""
    d1, d2 = k.dice_of(s, rng.integers(0, 180))
    k.put_dice(s, d1, d2)
    k.generate(s, ws, False)
    k.play_boards(s, ws, boards)
    return s[k.M_NPLAYS]


@numba.njit(nogil=True)
def _net_games(W1, b1, W2, b2, rW1, rb1, rW2, rb2, initial, n_games, rng, ws, chosen):
    """Greedy 1-ply games as the trainer chooses its plays, without learning; ``chosen`` gets
    every play's index. Returns (plays, afterstates valued)."""
    boards = np.zeros((k.MAX_PLAYS, k.BOARD_SIZE), dtype=np.int32)
    x = np.zeros(W1.shape[0])
    nz = np.zeros(W1.shape[0], dtype=np.int64)
    h, rh, y = np.zeros(b1.shape[0]), np.zeros(rb1.shape[0]), np.zeros(tv.NUM_OUTPUTS)
    plays = afterstates = 0
    for _ in range(n_games):
        s = initial.copy()
        while s[k.M_PHASE] != k.PH_OVER and plays < chosen.shape[0]:
            n = _roll_and_list(s, rng, ws, boards)
            bi = tv.best_afterstate(
                W1, b1, W2, b2, rW1, rb1, rW2, rb2, boards, n, s[k.M_TURN], x, nz, h, rh, y
            )
            chosen[plays] = bi
            plays += 1
            afterstates += n
            k.play(s, bi, ws)
    return plays, afterstates


@numba.njit(nogil=True)
def _replay_games(initial, n_games, rng, ws, chosen):
    """The games of :func:`_net_games` again (same ``rng`` seed, its ``chosen`` plays): the
    rules' part of each play alone. Returns the plays."""
    boards = np.zeros((k.MAX_PLAYS, k.BOARD_SIZE), dtype=np.int32)
    plays = 0
    for _ in range(n_games):
        s = initial.copy()
        while s[k.M_PHASE] != k.PH_OVER and plays < chosen.shape[0]:
            _roll_and_list(s, rng, ws, boards)
            k.play(s, chosen[plays], ws)
            plays += 1
    return plays


def where_the_time_goes(games: int, rounds: int, lr: float, lam: float) -> dict:
    """Per play of the trainer: the rules, the net choosing the play, learning (module
    docstring), with the shipped 80-hidden net; medians of ``rounds`` interleaved rounds."""
    _, params, _ = tv.load_td_net("pretrained:backgammon")
    net = tv.net_arrays(params)
    initial, ws = td.initial_vector(), k.new_workspace()
    chosen = np.zeros(games * MAX_PLAYS_PER_GAME, dtype=np.int64)
    per_play: dict[str, list[float]] = {"rules": [], "net_choosing": [], "learning": []}
    plays_per_game = []
    for r in range(rounds + 1):  # round 0 compiles
        seed = 1000 + r
        t = time.process_time()
        plays, afterstates = _net_games(
            *net, initial, games, np.random.default_rng(seed), ws, chosen
        )
        net_games = time.process_time() - t
        t = time.process_time()
        replayed = _replay_games(initial, games, np.random.default_rng(seed), ws, chosen)
        rules = time.process_time() - t
        assert replayed == plays, (replayed, plays)
        learner = [a.copy() for a in net]
        stats = np.zeros((games, 5))
        t = time.process_time()
        td.train_games_net(
            *learner, initial, games, 0, lr, lr, 1, lam, np.random.default_rng(seed), ws, stats
        )
        trainer = time.process_time() - t
        trainer_plays = int(stats[:, td.ST_MOVES].sum())
        if r == 0:
            continue
        per_play["rules"].append(rules / plays)
        per_play["net_choosing"].append((net_games - rules) / plays)
        per_play["learning"].append(trainer / trainer_plays - net_games / plays)
        plays_per_game.append((plays / games, trainer_plays / games, afterstates / plays))
    us = {part: 1e6 * statistics.median(v) for part, v in per_play.items()}
    total = sum(us.values())
    result = {
        "net": "pretrained:backgammon (80 hidden)",
        "games_per_round": games,
        "rounds": rounds,
        "us_per_play": us,
        "share": {part: v / total for part, v in us.items()},
        "plays_per_game_net_games": statistics.median(p[0] for p in plays_per_game),
        "plays_per_game_trainer": statistics.median(p[1] for p in plays_per_game),
        "afterstates_per_play": statistics.median(p[2] for p in plays_per_game),
        "cpu_time": "process CPU seconds, one thread",
    }
    print(
        f"where the time goes, per play ({total:.1f} us): "
        + ", ".join(f"{p} {v:.2f} us ({v / total:.0%})" for p, v in us.items())
        + f"; {result['afterstates_per_play']:.1f} afterstates valued per play"
    )
    return result


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--hidden", type=int, default=80)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--seconds", type=float, default=10.0)
    ap.add_argument("--lr", type=float, default=0.1)
    ap.add_argument("--lam", type=float, default=0.7)
    ap.add_argument("--out", type=Path, help="default: bench_td.json in --results-dir")
    ap.add_argument("--profile-games", type=int, default=2000, help="games per profile round")
    add_run_options(ap)
    args = ap.parse_args()
    shrink_if_quick(args, hidden=8, rounds=1, seconds=0.2, profile_games=5)

    arch = tv.TDArch(hidden=args.hidden)
    fast = tv.init_params(arch, np.random.default_rng(0))
    slow = {n: a.copy() for n, a in fast.items()}
    rng_fast, rng_slow = np.random.default_rng(1), np.random.default_rng(1)
    initial, ws = td.initial_vector(), k.new_workspace()

    def run_fast(n: int) -> int:
        stats = np.zeros((n, 5))
        td.train_games(
            fast["W1"], fast["b1"], fast["W2"], fast["b2"], initial, n, 0,
            args.lr, args.lr, 1, args.lam, rng_fast, ws, stats,
        )  # fmt: skip
        return int(stats[:, td.ST_MOVES].sum())

    def run_slow(n: int) -> int:
        return int(ref.train_games_numpy(slow, n, args.lr, args.lam, rng_slow).sum())

    run_fast(2)  # compile (cached afterwards)
    run_slow(1)
    rounds: dict[str, list[dict[str, float]]] = {"numba": [], "numpy": []}
    for r in range(args.rounds):
        for name, run, chunk in (("numba", run_fast, 200), ("numpy", run_slow, 2)):
            games = moves = 0
            t0, c0 = time.perf_counter(), time.process_time()
            while time.perf_counter() - t0 < args.seconds:
                moves += run(chunk)
                games += chunk
            wall, cpu = time.perf_counter() - t0, time.process_time() - c0
            row = {
                "games": games,
                "wall_s": wall,
                "cpu_s": cpu,
                "games_per_hour": 3600 * games / wall,
                "games_per_cpu_hour": 3600 * games / max(cpu, 1e-9),
                "plays_per_game": moves / games,
            }
            rounds[name].append(row)
            print(
                f"round {r + 1} {name:6s} {row['games_per_hour']:>10,.0f} games/h "
                f"({row['games_per_cpu_hour']:>10,.0f} per CPU-hour), "
                f"{row['plays_per_game']:.1f} plays/game"
            )
    summary = {}
    for name, rows in rounds.items():
        summary[name] = {
            "best_games_per_hour": max(r["games_per_hour"] for r in rows),
            "median_games_per_hour": statistics.median(r["games_per_hour"] for r in rows),
            "best_games_per_cpu_hour": max(r["games_per_cpu_hour"] for r in rows),
            "median_plays_per_game": statistics.median(r["plays_per_game"] for r in rows),
        }
    ratio = summary["numba"]["best_games_per_hour"] / summary["numpy"]["best_games_per_hour"]
    ratio_cpu = (
        summary["numba"]["best_games_per_cpu_hour"] / summary["numpy"]["best_games_per_cpu_hour"]
    )
    print(
        f"numba {summary['numba']['best_games_per_hour']:,.0f} games/h, numpy "
        f"{summary['numpy']['best_games_per_hour']:,.0f} games/h: x{ratio:.1f} "
        f"(per CPU-hour x{ratio_cpu:.1f}); target >= 40,000 games/h on 2 cores"
    )
    result = {
        "benchmark": "td_training_throughput",
        "command": "python benchmarks/bench_td.py "
        + " ".join(f"--{a} {getattr(args, a)}" for a in ("hidden", "rounds", "seconds"))
        + f" --profile-games {args.profile_games}",
        "net": arch.to_json(),
        "lr": args.lr,
        "lam": args.lam,
        "threads": 1,
        "summary": summary,
        "ratio_numba_over_numpy": ratio,
        "ratio_per_cpu_hour": ratio_cpu,
        "target_games_per_hour": 40_000,
        "rounds": rounds,
        "where_the_time_goes": where_the_time_goes(
            args.profile_games, max(args.rounds, 3), args.lr, args.lam
        ),
        "machine": machine_info(),
        "note": "one trainer thread; timings on a shared 2-core machine are noisy (see load)",
    }
    write_json(args.out or result_path(args, "bench_td.json"), result)


if __name__ == "__main__":
    main()
