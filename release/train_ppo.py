"""Train a self-play PPO agent, evaluate it in the arena, record the result, optionally ship it.

    python release/train_ppo.py configs/kalaha_ppo.yaml --opponents random alphabeta:depth=4 \
        --seeds 500 [--set key=value ...] [--policy best] [--search 4] [--ship]

Runs ``spieltisch train`` in-process (timed: wall and CPU seconds), evaluates the run's
``final`` (or ``best``) policy with the arena (``spieltisch eval`` pairs: swapped seats, paired
seeds, random openings in Kalaha and Hus; for more than two players a table of the policy
against each ``--opponents`` agent in every other seat), prints the results and writes
``benchmarks/results/<name>_ppo_train.json`` (``--results-dir``; command, training time,
machine, metrics).
``--search N`` also evaluates the policy with N plies of search over its value head
(``checkpoint:<path>:search=N``). ``--ship`` copies the policy to ``agents/pretrained/<name>``
with the evaluation and the reproducing command in its metadata; where an agent of another
algorithm is shipped under that name (the AlphaZero defaults), it is left alone and the policy
goes beside it as ``<name>_ppo`` (``pretrained:<game>:algo=ppo``, the name its rows use).
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
    parser.add_argument(
        "--opponents", nargs="+", default=["random"],
        help="arena opponents (more than two players: each in every other seat)",
    )  # fmt: skip
    parser.add_argument("--seeds", type=int, default=250, help="arena seeds per opponent")
    parser.add_argument("--skip-training", action="store_true", help="evaluate an existing run")
    parser.add_argument(
        "--train-seconds", type=float, help="with --skip-training: the run's measured wall time"
    )
    parser.add_argument("--train-cpu-seconds", type=float, help="with --skip-training")
    parser.add_argument("--policy", choices=("final", "best"), default="final")
    parser.add_argument("--search", type=int, help="also evaluate with this search depth")
    parser.add_argument("--ship", action="store_true", help="copy the policy to agents/pretrained")
    parser.add_argument(
        "--results-dir",
        type=Path,
        default=ROOT / "benchmarks" / "results",
        help="where the results file is written (and read by --ship-recorded)",
    )
    parser.add_argument(
        "--pretrained-dir", type=Path, default=ROOT / "agents" / "pretrained", help="for --ship"
    )
    parser.add_argument(
        "--ship-recorded",
        action="store_true",
        help="ship the policy of the recorded results file without training or evaluating again",
    )
    args = parser.parse_args(argv)

    from spieltisch.agents.arena import evaluate, machine_info
    from spieltisch.agents.arena.evaluation import check_table_counts
    from spieltisch.agents.files import write_text_atomic
    from spieltisch.agents.neural.agents import pretrained_name
    from spieltisch.agents.neural.checkpoint import CheckpointError, load_checkpoint
    from spieltisch.agents.registry import check_agent_name, make_agent
    from spieltisch.train.config import ConfigError, config_to_dict, load_config
    from spieltisch.train.ppo import train
    from spieltisch.train.run_files import RunDirError

    try:
        cfg = load_config(args.config, args.overrides)
    except ConfigError as err:
        parser.error(str(err))
    if cfg.algorithm != "ppo":
        parser.error(f"{args.config} is a config of algorithm {cfg.algorithm}, not ppo")
    name = pretrained_name(cfg.game, cfg.game_options)
    out = args.results_dir / f"{name}_ppo_train.json"
    if args.ship_recorded:
        if not out.is_file():
            parser.error(f"--ship-recorded: no recorded results {out}")
        result = json.loads(out.read_text())
        path = Path(result["resolved_config"]["run_dir"]) / result["policy"]
        try:
            ckpt = load_checkpoint(path, cfg.game)
        except CheckpointError as err:
            parser.error(str(err))
        ship(ckpt, result, args.pretrained_dir / ship_stem(args.pretrained_dir, name))
        return 0
    # what the evaluation after training needs, checked before the training
    try:
        check_table_counts(args.seeds, 0, 0, 1)
        if args.search is not None and args.search < 1:
            raise ValueError(f"--search must be at least 1, got {args.search}")
        for opponent in args.opponents:  # an unknown name, a bad parameter, a missing file
            check_agent_name(opponent, cfg.game, human=False)
            make_agent(opponent, cfg.game, seed=0, game_options=dict(cfg.game_options))
    except ValueError as err:
        parser.error(str(err))
    # run_dir only says where the run is written: the reproducing command leaves it out
    learning = [o for o in args.overrides if not o.startswith("run_dir=")]
    command = "spieltisch train " + " ".join(
        [shlex.quote(args.config), *(f"--set {shlex.quote(o)}" for o in learning)]
    )
    train_seconds, train_cpu = args.train_seconds, args.train_cpu_seconds
    if not args.skip_training:
        start, cpu_start = time.perf_counter(), time.process_time()
        try:
            train(cfg)
        except RunDirError as err:  # before any training
            parser.error(f"{err} (with this script: --skip-training evaluates the run there)")
        train_seconds = time.perf_counter() - start
        train_cpu = time.process_time() - cpu_start
    final = Path(cfg.run_dir) / args.policy
    try:
        ckpt = load_checkpoint(final, cfg.game)
    except CheckpointError as err:
        parser.error(str(err))
    players = int(cfg.game_options.get("num_players", 2))
    evaluation: dict[str, dict] = {}
    stem = ship_stem(args.pretrained_dir, name)  # the rows name the agent as shipped
    shipped = f"pretrained:{cfg.game}" + (":algo=ppo" if stem != name else "")
    variants = [("", f"checkpoint:{final}", shipped)]
    if args.search:
        variants.append(
            (
                f"search{args.search}_",
                f"checkpoint:{final}:search={args.search}",
                shipped + ("," if stem != name else ":") + f"search={args.search}",
            )
        )
    for label, me, shipped_name in variants:
        for opponent in args.opponents:
            start = time.perf_counter()
            if players > 2:
                report = evaluate(
                    cfg.game, [me] + [opponent] * (players - 1), seeds=args.seeds,
                    options=dict(cfg.game_options), mode="table", workers=1,
                )  # fmt: skip
                row = json.loads(report.to_json())["table"][0]
                result_row = {k: v for k, v in row.items() if k != "agent"}
            else:
                report = evaluate(
                    cfg.game, [me, opponent], seeds=args.seeds, options=dict(cfg.game_options),
                    opening_plies=2 if cfg.game in ("kalaha", "hus") else 0, workers=1,
                )  # fmt: skip
                pair = json.loads(report.to_json())["pairs"][0]
                result_row = {k: v for k, v in pair.items() if k not in ("agent", "extra")}
            result_row["agent"] = shipped_name
            result_row["opponent"] = opponent
            if players > 2:
                result_row["opponents"] = [opponent] * (players - 1)
            if cfg.game == "hilo":  # coins or wins: the table says which
                result_row["reward"] = cfg.game_options.get("reward", "win")
            result_row["seconds"] = round(time.perf_counter() - start, 1)
            evaluation[f"{label}vs_{opponent}"] = result_row
            print(report.to_markdown())
    result = {
        "config": args.config,
        "command": command,
        "train_seconds_wall": train_seconds,
        "train_seconds_cpu": train_cpu,
        "policy": args.policy,
        "cpu_count": os.cpu_count(),
        "note": "machine shared with other jobs while training; wall time is noisy",
        "global_step": ckpt.meta["global_step"],
        "training_metrics": ckpt.meta["metrics"],
        "evaluation": evaluation,
        "evaluation_command": (
            f"spieltisch eval {cfg.game} --agents checkpoint:{final}[:search=N] OPPONENT "
            f"--seeds {args.seeds} --workers 1"
        ),
        "evaluation_seeds": args.seeds,
        "evaluation_options": {k: v for k, v in cfg.game_options.items() if k != "reward"},
        "resolved_config": config_to_dict(cfg),
        "machine": machine_info(),
    }
    out.parent.mkdir(parents=True, exist_ok=True)
    write_text_atomic(out, json.dumps(result, indent=2, default=str) + "\n")
    print(f"wrote {out}")
    if args.ship:
        ship(ckpt, result, args.pretrained_dir / stem)
    return 0


def ship_stem(pretrained: Path, name: str) -> str:
    """The file a PPO policy ships as: ``name`` (``pretrained:<game>``), unless an agent of
    another algorithm is shipped under it (an AlphaZero default), which ``--ship`` must not
    replace: then ``<name>_ppo`` beside it, the agent ``pretrained:<game>:algo=ppo``."""
    sidecar = pretrained / f"{name}.json"
    if sidecar.exists() and json.loads(sidecar.read_text()).get("algorithm") != "ppo":
        return f"{name}_ppo"
    return name


def ship(ckpt, result: dict, dest: Path) -> None:
    """Copy the evaluated policy to ``dest`` (``agents/pretrained/<name>``) with its recorded
    evaluation and the commands that reproduce it in the metadata."""
    from spieltisch.agents.neural.checkpoint import save_checkpoint

    game = ckpt.meta["game"]
    beside = dest.name.endswith("_ppo")  # (see ship_stem)
    agent = f"pretrained:{game}:algo=ppo[,search=N]" if beside else f"pretrained:{game}[:search=N]"
    meta = {
        k: v
        for k, v in ckpt.meta.items()
        if k not in ("format", "format_version", "weights_sha256")
    }
    meta["evaluation"] = result["evaluation"]
    meta["reproduce"] = {
        "train": result["command"],
        "policy": result["policy"],
        "train_seconds_wall": result["train_seconds_wall"],
        "train_seconds_cpu": result["train_seconds_cpu"],
        "evaluate": (
            f"spieltisch eval {game} --agents {agent} OPPONENT "
            f"--seeds {result['evaluation_seeds']}"
            + (" --opening-plies 2" if game in ("kalaha", "hus") else "")
            + "".join(f" --option {k}={v}" for k, v in result["evaluation_options"].items())
        ),
        "benchmark": f"python release/train_ppo.py {result['config']} ...",
    }
    save_checkpoint(dest, meta, ckpt.tensors)
    print(f"shipped {dest}.safetensors")


if __name__ == "__main__":
    sys.exit(main())
