"""Train a self-play PPO agent, evaluate it in the arena, record the result (and optionally ship it).

    python benchmarks/train_ppo.py configs/kalaha_ppo.yaml --opponents random alphabeta:depth=4 \
        --seeds 250 [--set key=value ...] [--ship]

Runs ``spieltisch train`` in-process (timed), evaluates ``run_dir/final`` with the arena
(``spieltisch eval`` pairs: swapped seats, paired seeds, random openings), prints the results and
writes ``benchmarks/results/<config>_train.json`` (command, training time, machine, metrics).
``--ship`` copies the policy to ``agents/pretrained/<game>.safetensors`` (+ ``.json``) with the
evaluation and the reproducing command in its metadata.
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("config")
    parser.add_argument("--set", action="append", default=[], dest="overrides")
    parser.add_argument("--opponents", nargs="+", default=["random"])
    parser.add_argument("--seeds", type=int, default=250, help="arena seeds per opponent")
    parser.add_argument("--skip-training", action="store_true", help="evaluate an existing run")
    parser.add_argument(
        "--train-seconds", type=float, help="with --skip-training: the run's measured wall time"
    )
    parser.add_argument("--ship", action="store_true", help="copy the policy to agents/pretrained")
    args = parser.parse_args(argv)

    from spieltisch.agents.arena import evaluate, machine_info
    from spieltisch.agents.checkpoint import load_checkpoint, save_checkpoint
    from spieltisch.train.config import config_to_dict, load_config
    from spieltisch.train.ppo import train

    cfg = load_config(args.config, args.overrides)
    command = "spieltisch train " + " ".join(
        [shlex.quote(args.config), *(f"--set {shlex.quote(o)}" for o in args.overrides)]
    )
    train_seconds = args.train_seconds
    if not args.skip_training:
        start = time.perf_counter()
        train(cfg)
        train_seconds = time.perf_counter() - start
    final = Path(cfg.run_dir) / "final"
    ckpt = load_checkpoint(final, cfg.game)
    evaluation = {}
    for opponent in args.opponents:
        report = evaluate(
            cfg.game,
            [f"checkpoint:{final}", opponent],
            seeds=args.seeds,
            options=dict(cfg.game_options),
            opening_plies=2 if cfg.game in ("kalaha", "hus") else 0,
            workers=1,
        )
        pair = json.loads(report.to_json())["pairs"][0]
        evaluation[f"vs_{opponent}"] = {
            k: v for k, v in pair.items() if k not in ("agent", "extra")
        }
        print(report.to_markdown())
    result = {
        "config": args.config,
        "command": command,
        "train_seconds_wall": train_seconds,
        "cpu_count": os.cpu_count(),
        "note": "machine shared with other jobs while training; wall time is noisy",
        "global_step": ckpt.meta["global_step"],
        "training_metrics": ckpt.meta["metrics"],
        "evaluation": evaluation,
        "evaluation_command": (
            f"spieltisch eval {cfg.game} --agents checkpoint:{final} OPPONENT "
            f"--seeds {args.seeds} --workers 1"
        ),
        "resolved_config": config_to_dict(cfg),
        "machine": machine_info(),
    }
    out = ROOT / "benchmarks" / "results" / f"{Path(args.config).stem}_train.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(result, indent=2, default=str) + "\n")
    print(f"wrote {out}")
    if args.ship:
        meta = {
            k: v
            for k, v in ckpt.meta.items()
            if k not in ("format", "format_version", "weights_sha256")
        }
        meta["evaluation"] = evaluation
        meta["reproduce"] = {"train": command, "train_seconds_wall": train_seconds}
        dest = ROOT / "agents" / "pretrained" / cfg.game
        save_checkpoint(dest, meta, ckpt.tensors)
        print(f"shipped {dest}.safetensors")
    return 0


if __name__ == "__main__":
    sys.exit(main())
