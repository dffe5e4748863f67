"""Speed of this tree against an earlier git revision, measured side by side in one run.

Checks a refactor for slowdowns: the same probes (batched random games of every game, the
single-game Kalaha API, a short PPO run on Kalaha, a short TD(lambda) run on backgammon) run in
fresh processes, alternating between the base revision (checked out into a temporary git
worktree and imported from there) and this tree, for ``--rounds`` interleaved rounds; the median
of each is reported with the ratio current / base (above 1: this tree is faster).

    python benchmarks/compare_revisions.py --base 929c16a --rounds 5

The probes only use what both trees offer (engine constructors, ``step``,
``sample_random_actions``, ``play_random``, ``build_config`` and the trainers' ``train``), so a
base from before the batched-game protocol works too. Each probe first runs once per tree untimed, so that
numba's compile cache is warm in both.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from _common import add_run_options, shrink_if_quick, write_results
from spieltisch.agents.arena.provenance import load_average, load_average_text, machine_info

ROOT = Path(__file__).resolve().parents[1]

# Each probe is a Python snippet that prints one number: work units per second.
PROBES: dict[str, tuple[str, str]] = {
    "kalaha_batch": (
        "Kalah(6,4) random games/s, batch of 1024",
        """
from spieltisch.envs.kalaha import KalahaGame
from spieltisch.envs.kalaha.batch import KalahaBatch
rng = np.random.default_rng(0)
b = KalahaBatch(KalahaGame(pits=6, seeds=4), 1024)
t = time.perf_counter(); games = 0
while time.perf_counter() - t < SECONDS:
    b.reset()
    while not b.terminal.all():
        b.step(b.sample_random_actions(rng))
    games += 1024
print(games / (time.perf_counter() - t))
""",
    ),
    "hus_batch": (
        "Hus random games/s, batch of 256",
        """
from spieltisch.envs.hus import HusGame
from spieltisch.envs.hus.batch import HusBatch
rng = np.random.default_rng(0)
b = HusBatch(HusGame(), 256)
t = time.perf_counter(); games = 0
while time.perf_counter() - t < SECONDS:
    b.reset()
    for _ in range(1000):
        if b.terminal.all():
            break
        b.step(b.sample_random_actions(rng))
    games += 256
print(games / (time.perf_counter() - t))
""",
    ),
    "backgammon_batch": (
        "backgammon random games/s (whole plays), batch of 512, 1 thread",
        """
from spieltisch.envs.backgammon import BackgammonGame
from spieltisch.envs.backgammon.batch import BackgammonBatch
b = BackgammonBatch(BackgammonGame(), 512, seed=0, threads=1)
t = time.perf_counter(); games = 0
while time.perf_counter() - t < SECONDS:
    b.reset(games=None)
    b.play_random()
    games += 512
print(games / (time.perf_counter() - t))
""",
    ),
    "hilo_batch": (
        "HiLo (2 players) random games/s, batch of 256",
        """
from spieltisch.envs.hilo import HiLoGame
from spieltisch.envs.hilo.batch import HiLoBatch
rng = np.random.default_rng(0)
b = HiLoBatch(HiLoGame(), 256, seed=0)
t = time.perf_counter(); games = 0
while time.perf_counter() - t < SECONDS:
    b.reset(seed=int(rng.integers(1 << 30)))
    for _ in range(3000):
        if b.terminal.all():
            break
        b.step(b.sample_random_actions(rng))
    games += 256
print(games / (time.perf_counter() - t))
""",
    ),
    "kalaha_single": (
        "Kalah(6,4) moves/s through the single-game API (legal_actions, apply)",
        """
from spieltisch.envs.kalaha import KalahaGame
rng = np.random.default_rng(0)
game = KalahaGame(pits=6, seeds=4)
t = time.perf_counter(); moves = 0
while time.perf_counter() - t < SECONDS:
    s = game.new_initial_state()
    while not s.is_terminal():
        legal = s.legal_actions()
        s.apply(legal[int(rng.integers(len(legal)))])
        moves += 1
print(moves / (time.perf_counter() - t))
""",
    ),
    "ppo_kalaha": (
        "PPO self-play on Kalaha 6x6, environment steps/s (train(), 256 games, no scripted "
        "opponents, no evaluation; start-up not timed)",
        """
import tempfile, yaml
from spieltisch.train.config import build_config
from spieltisch.train.ppo import train
steps = int(30000 * SECONDS)
with tempfile.TemporaryDirectory() as d:
    cfg = build_config(yaml.safe_load(open(CONFIGS + "/kalaha_ppo.yaml")), [
        f"total_steps={steps}", f"run_dir={d}/run", "eval_interval=0", "final_eval_games=0",
        "checkpoint_interval=100000", "progress=false", "tensorboard=false",
        "pool_baselines=[]", "eval_opponents=[random]"])
    t = time.perf_counter()
    train(cfg, log=lambda *a, **k: None)
    print(steps / (time.perf_counter() - t))
""",
    ),
    "td_backgammon": (
        "TD(lambda) backgammon training games/s (train(), 80 hidden, no evaluation; start-up "
        "not timed)",
        """
import tempfile, yaml
from spieltisch.train.config import build_config
from spieltisch.train.td import train
games = int(250 * SECONDS)
with tempfile.TemporaryDirectory() as d:
    cfg = build_config(yaml.safe_load(open(CONFIGS + "/backgammon_td.yaml")), [
        f"total_games={games}", f"run_dir={d}/run", "eval_interval=0", "final_eval_games=0",
        "checkpoint_interval=100000", "chunk_games=100", "progress=false", "tensorboard=false"])
    t = time.perf_counter()
    train(cfg, log=lambda *a, **k: None)
    print(games / (time.perf_counter() - t))
""",
    ),
}


def tree_of(base: str, workdir: Path) -> Path:
    """A worktree of ``base`` (``workdir/tree``) and a folder that maps ``spieltisch.<pkg>`` to
    its folders, to put on PYTHONPATH (returned)."""
    tree = workdir / "tree"
    subprocess.run(
        ["git", "-C", str(ROOT), "worktree", "add", "--detach", str(tree), base],
        check=True,
        capture_output=True,
    )
    shim = workdir / "shim" / "spieltisch"
    shim.mkdir(parents=True)
    for package in ("envs", "agents", "train"):
        (shim / package).symlink_to(tree / package)
    return shim.parent


def run_probe(code: str, seconds: float, pythonpath: str | None, configs: Path) -> float:
    header = (
        "import sys, time, subprocess\nimport numpy as np\n"
        f"SECONDS = {seconds}\nCONFIGS = {str(configs)!r}\n"
    )
    env = dict(os.environ)
    if pythonpath:
        env["PYTHONPATH"] = pythonpath
    else:
        env.pop("PYTHONPATH", None)
    done = subprocess.run(
        [sys.executable, "-c", header + code],
        check=True,
        capture_output=True,
        text=True,
        env=env,
        cwd=tempfile.gettempdir(),  # not the repository: imports come from the tree chosen
    )
    return float(done.stdout.strip().splitlines()[-1])


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("--base", default="HEAD~1", help="the git revision to compare against")
    p.add_argument("--rounds", type=int, default=5, help="interleaved rounds (median reported)")
    p.add_argument("--seconds", type=float, default=4.0, help="time per probe and round")
    p.add_argument("--probes", nargs="+", choices=sorted(PROBES), default=sorted(PROBES))
    p.add_argument("--note", default="", help="a note stored with the results (machine load)")
    add_run_options(p)
    args = p.parse_args()
    # a smoke run compares the tree with its own HEAD (present even in a shallow clone)
    shrink_if_quick(args, base="HEAD", rounds=1, seconds=0.3, probes=["kalaha_single"])
    base_rev = subprocess.run(
        ["git", "-C", str(ROOT), "rev-parse", "--short", args.base],
        check=True,
        capture_output=True,
        text=True,
    ).stdout.strip()
    load_before = load_average()
    started = time.time()
    with tempfile.TemporaryDirectory() as tmp:
        shim = tree_of(args.base, Path(tmp))
        trees = {
            "base": (str(shim), Path(tmp) / "tree" / "configs"),
            "current": (None, ROOT / "configs"),
        }
        samples: dict[str, dict[str, list[float]]] = {name: {} for name in args.probes}
        try:
            for name in args.probes:
                for path, configs in trees.values():  # warm numba's cache in both
                    run_probe(PROBES[name][1], 0.2, path, configs)
            for r in range(args.rounds):
                for name in args.probes:
                    order = ("base", "current") if r % 2 == 0 else ("current", "base")
                    for tree in order:
                        path, configs = trees[tree]
                        rate = run_probe(PROBES[name][1], args.seconds, path, configs)
                        samples[name].setdefault(tree, []).append(rate)
                print(f"round {r + 1}/{args.rounds} done", flush=True)
        finally:
            subprocess.run(
                ["git", "-C", str(ROOT), "worktree", "remove", "--force", str(Path(tmp) / "tree")],
                capture_output=True,
            )
    rows = []
    for name in args.probes:
        base = statistics.median(samples[name]["base"])
        current = statistics.median(samples[name]["current"])
        rows.append(
            {
                "probe": name,
                "what": PROBES[name][0],
                "base": base,
                "current": current,
                "ratio": current / base,
                "samples": samples[name],
            }
        )
        print(
            f"{name:18s} base {base:12,.1f}  current {current:12,.1f}  ratio {current / base:.3f}"
        )
    result = {
        "base": base_rev,
        "rounds": args.rounds,
        "seconds_per_probe": args.seconds,
        "rows": rows,
        "wall_seconds": time.time() - started,
        "load_average_at_start": load_before,
        "note": args.note,
        "machine": machine_info(),
    }
    lines = [
        "# Speed against an earlier revision",
        "",
        f"Command: `python benchmarks/compare_revisions.py --base {args.base} --rounds "
        f"{args.rounds} --seconds {args.seconds}`; base `{base_rev}`, current "
        f"`{result['machine'].get('git_revision')}`; medians of {args.rounds} interleaved "
        f"rounds; load average at start {load_average_text(load_before)}. {args.note}",
        "",
        "| probe | what | base | current | current / base |",
        "|---|---|---:|---:|---:|",
    ]
    lines += [
        f"| {r['probe']} | {r['what']} | {r['base']:,.1f} | {r['current']:,.1f} | "
        f"{r['ratio']:.3f} |"
        for r in rows
    ]
    write_results(args, "compare_revisions", result, "\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
