"""Evaluate a TD(lambda) backgammon checkpoint in the arena, record the result, optionally ship it.

    python release/train_td.py runs/backgammon_td/checkpoints/games_000200000 \
        --pubeval-seeds 2500 --gnubg-seeds 150 --train-command "spieltisch train ..." \
        [--train-wall S --train-cpu S] [--workers 1] [--ship]

The checkpoint (a training or final checkpoint of ``spieltisch train configs/backgammon_td.yaml``)
plays ``pubeval`` and ``gnubg`` (0-ply) with the arena: ``--*-seeds`` seeds, both seat orders
each, paired dice; points per game with the 95% interval. Writes
``benchmarks/results/backgammon_td_train.json`` (checkpoint, training games and time, command,
results, machine). ``--ship`` copies the weights to ``agents/pretrained/backgammon`` with the
evaluation and the reproducing commands in its metadata (``pretrained:backgammon``; with
``--ship-as backgammon_<X>`` to ``agents/pretrained/backgammon_<X>``, the agent
``pretrained:backgammon:algo=<X>`` beside the default one).
Training time: the run's ledger (``run_dir/resources.json``: wall, CPU, peak memory, load, the
commands of every session) and the checkpoint's own record (``seconds``), unless
``--train-wall/--train-cpu`` are given (for runs that predate those records).

For another net than the shipped one (e.g. the evaluator with features,
``configs/backgammon_td_features.yaml``): ``--out`` names its results file, ``--name`` the agent
spec its recorded commands use, ``--target`` the target it is measured against, and
``--baseline pretrained:backgammon`` also plays that agent on the same seeds (same dice) for a
side-by-side comparison (``baseline`` in the results).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


#: the fields of a run's final_eval.json that --pubeval-from reads
PUBEVAL_RESULT_FIELDS = ("opponent", "games", "arena_seed", "training_games")


def read_pubeval_result(path: str, meta: dict) -> dict:
    """The pubeval result in the run's ``final_eval.json`` at ``path``, checked to be of the
    checkpoint whose metadata is ``meta``; ValueError naming what is wrong."""
    try:
        done = json.loads(Path(path).read_text())
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as err:
        raise ValueError(f"--pubeval-from {path}: cannot read it as JSON ({err})") from err
    missing = [k for k in PUBEVAL_RESULT_FIELDS if k not in done] if isinstance(done, dict) else []
    if not isinstance(done, dict) or missing:
        what = f"no {', '.join(missing)}" if missing else "not a JSON object"
        raise ValueError(f"--pubeval-from {path}: not a run's final_eval.json ({what})")
    if done["opponent"] != "pubeval" or done["training_games"] != meta.get("games"):
        raise ValueError(f"--pubeval-from {path} is not a pubeval result of this checkpoint")
    if "wins" not in done and "win_rate" not in done:
        raise ValueError(f"--pubeval-from {path}: no wins or win_rate")
    return done


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("checkpoint")
    parser.add_argument("--pubeval-seeds", type=int, default=2500)
    parser.add_argument("--gnubg-seeds", type=int, default=150)
    parser.add_argument("--seed", type=int, default=2026, help="first arena seed")
    parser.add_argument("--workers", type=int, default=1)
    parser.add_argument("--train-command", default="spieltisch train configs/backgammon_td.yaml")
    parser.add_argument("--train-wall", type=float, help="training wall seconds (all runs)")
    parser.add_argument("--train-cpu", type=float, help="training CPU seconds (all runs)")
    parser.add_argument(
        "--pubeval-from",
        help="take the pubeval result from this final_eval.json of the run (same checkpoint) "
        "instead of playing it again",
    )
    parser.add_argument(
        "--earlier-games",
        type=int,
        help="self-play games of earlier stages behind the checkpoint's starting weights "
        "(default: its games_total record)",
    )
    parser.add_argument("--note", default="")
    parser.add_argument(
        "--name", default="pretrained:backgammon", help="agent spec in the recorded commands"
    )
    parser.add_argument(
        "--target", default="+0.35 points per game against pubeval over >= 5,000 games, "
        "<= 3 h training",
    )  # fmt: skip
    parser.add_argument("--baseline", help="also evaluate this agent on the same seeds")
    parser.add_argument("--ship", action="store_true", help="copy to agents/pretrained")
    parser.add_argument(
        "--ship-as", default="backgammon",
        help="file name in agents/pretrained for --ship: backgammon is pretrained:backgammon, "
        "backgammon_<X> is pretrained:backgammon:algo=<X> (a net beside the default one)",
    )  # fmt: skip
    parser.add_argument(
        "--pretrained-dir", type=Path, default=ROOT / "agents" / "pretrained", help="for --ship"
    )
    parser.add_argument("--out", default=str(ROOT / "benchmarks/results/backgammon_td_train.json"))
    args = parser.parse_args(argv)

    from spieltisch.agents.arena import evaluate
    from spieltisch.agents.arena.provenance import machine_info
    from spieltisch.agents.files import check_output_path, write_text_atomic
    from spieltisch.agents.neural.checkpoint import (
        CheckpointError,
        load_checkpoint,
        paths_of,
        save_checkpoint,
    )
    from spieltisch.agents.registry import make_agent
    from spieltisch.train.run_files import run_resources

    # everything the end needs, checked before the evaluation (minutes to hours)
    for flag, least in (("pubeval_seeds", 0), ("gnubg_seeds", 0), ("seed", 0), ("workers", 1)):
        if getattr(args, flag) < least:  # (0 seeds: that match is not played)
            name = flag.replace("_", "-")
            parser.error(f"--{name} must be at least {least}, got {getattr(args, flag)}")
    if args.ship_as != "backgammon" and not (
        args.ship_as.startswith("backgammon_")
        and args.ship_as.removeprefix("backgammon_").replace("_", "").isalnum()
    ):
        parser.error(f"--ship-as must be backgammon or backgammon_<X>, got {args.ship_as}")
    out = Path(args.out)
    try:
        if out.parent.exists():  # (a missing folder is made)
            check_output_path(out)
        if args.baseline:
            make_agent(args.baseline, "backgammon", seed=0)
        ckpt = load_checkpoint(args.checkpoint, "backgammon")
        done = read_pubeval_result(args.pubeval_from, ckpt.meta) if args.pubeval_from else None
    except (CheckpointError, ValueError) as err:  # (a CheckpointError is a ValueError)
        parser.error(str(err))
    path = paths_of(args.checkpoint)[0].with_suffix("")
    evaluation: dict[str, dict] = {}
    if done is not None:
        seeds = done["games"] // 2
        if "wins" not in done:  # older runs: no draws in backgammon, so the rate gives them
            done["wins"] = round(done["win_rate"] * done["games"])
            done["losses"] = done["games"] - done["wins"]
        evaluation["vs_pubeval"] = {
            **{key: v for key, v in done.items() if key != "training_games"},
            "source": args.pubeval_from,
            "command": (
                f"spieltisch eval backgammon --agents pretrained:backgammon pubeval "
                f"--seeds {seeds} --seed {done['arena_seed']}"
            ),
        }
        args.pubeval_seeds = 0
    baseline: dict[str, dict] = {}
    players = [(f"checkpoint:{path}", args.name, evaluation)]
    if args.baseline:
        players.append((args.baseline, args.baseline, baseline))
    for (spec, name, results), (opponent, seeds) in (
        (player, match)
        for player in players
        for match in (("pubeval", args.pubeval_seeds), ("gnubg", args.gnubg_seeds))
    ):
        if seeds <= 0:
            continue
        t0 = time.perf_counter()
        report = evaluate(
            "backgammon", [spec, opponent], seeds=seeds, seed=args.seed,
            workers=args.workers, progress=True,
        )  # fmt: skip
        p = report.pairs[0]
        results[f"vs_{opponent}"] = {
            "agent": name,
            "opponent": opponent,
            "games": p.games,
            "ppg": p.mean_reward,
            "ppg_low": p.reward_low,
            "ppg_high": p.reward_high,
            "win_rate": p.win_rate,
            "win_low": p.win_low,
            "win_high": p.win_high,
            "wins": p.wins,
            "losses": p.losses,
            **{key: value for key, value in p.extra.items() if not key.endswith("_ci")},
            "arena_seed": args.seed,
            "seconds": time.perf_counter() - t0,
            "command": (
                f"spieltisch eval backgammon --agents {name} {opponent} "
                f"--seeds {seeds} --seed {args.seed}"
            ),
        }
        print(
            f"{name} vs {opponent}: {p.mean_reward:+.3f} ppg "
            f"[{p.reward_low:+.3f}, {p.reward_high:+.3f}], win rate {p.win_rate:.3f}, "
            f"{p.games} games"
        )
    stage_games = int(ckpt.meta.get("games", 0))
    total_games = int(ckpt.meta.get("games_total", stage_games))
    if args.earlier_games is not None:
        total_games = stage_games + args.earlier_games
    seconds = dict(ckpt.meta.get("seconds", {}))
    resources = run_resources(path)
    if resources is not None:
        seconds["train_wall"] = resources["total"]["wall_seconds"]
        seconds["train_cpu"] = resources["total"]["cpu_seconds"]
        seconds["peak_rss_gib"] = resources["total"]["peak_rss_gib"]
    if args.train_wall is not None:
        seconds["train_wall"] = args.train_wall
    if args.train_cpu is not None:
        seconds["train_cpu"] = args.train_cpu
    result = {
        "checkpoint": str(path),
        "training_games": total_games,
        "training_games_last_stage": stage_games,
        "training_seconds": seconds,
        "resources": resources,
        "train_command": args.train_command,
        "config": ckpt.meta.get("config"),
        "git_revision_of_checkpoint": ckpt.meta.get("git_revision"),
        "evaluation": evaluation,
        "target": args.target,
        "note": args.note,
        "machine": machine_info(),
    }
    if baseline:
        result["baseline"] = {"agent": args.baseline, "evaluation": baseline}
    out.parent.mkdir(parents=True, exist_ok=True)
    write_text_atomic(out, json.dumps(result, indent=2, default=str) + "\n")
    print(f"wrote {out}")
    if args.ship:
        meta = {
            key: value
            for key, value in ckpt.meta.items()
            if key not in ("format", "format_version", "weights_sha256", "trainer")
        }
        meta["kind"] = "policy"
        meta["games"] = meta["games_total"] = total_games  # all stages
        meta["games_last_stage"] = stage_games
        meta["evaluation"] = evaluation
        meta["reproduce"] = {
            "train": args.train_command,
            "checkpoint": path.name,
            "training_games": total_games,
            "train_seconds_wall": seconds.get("train_wall"),
            "train_seconds_cpu": seconds.get("train_cpu"),
            "evaluate": [e["command"] for e in evaluation.values()],
            "note": args.note,
        }
        tensors = {key: v for key, v in ckpt.tensors.items() if key.startswith("model.")}
        dest = args.pretrained_dir / args.ship_as
        save_checkpoint(dest, meta, tensors)
        print(f"shipped {dest}.safetensors")
    return 0


if __name__ == "__main__":
    sys.exit(main())
