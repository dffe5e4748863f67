"""``spieltisch train``: self-play training from a config file."""

from __future__ import annotations

import argparse
import glob
import os
import shlex
import sys
from pathlib import Path

from spieltisch.train.config import ConfigError, load_config


def add_parser(subparsers: argparse._SubParsersAction) -> argparse.ArgumentParser:
    p = subparsers.add_parser(
        "train",
        help="train a self-play agent from a config file",
        description=(
            "Train a self-play agent. Example: spieltisch train configs/kalaha_ppo.yaml "
            "--set total_steps=100000 --set lr=1e-3. Writes checkpoints, TensorBoard logs, "
            "the resolved config, the best and the final policy and a final evaluation to the "
            "config's run_dir, and ends with a summary: the evaluation, where the files are and "
            "how to evaluate and play the result. A run_dir holds one run: one that holds "
            "another is an error (continue it with --resume, start over with --overwrite, or "
            "pick another with --set run_dir=DIR). The config's 'algorithm' picks the "
            "trainer: ppo (any game), alphazero (Gumbel AlphaZero: kalaha, hus, hilo, and "
            "backgammon with the dice as chance nodes: configs/backgammon_alphazero.yaml), td "
            "(backgammon, TD(lambda) over afterstates: configs/backgammon_td.yaml) or rollout "
            "(backgammon, a TD value net trained on rollouts with itself: "
            "configs/backgammon_rollout.yaml)."
        ),
    )
    p.add_argument("config", help="YAML config file (see configs/)")
    p.add_argument(
        "--set",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        dest="overrides",
        help="override a config value (YAML syntax; dotted keys for game_options.pits)",
    )
    start = p.add_mutually_exclusive_group()
    start.add_argument(
        "--resume",
        action="store_true",
        help="continue the run in run_dir from its newest complete checkpoint, bit for bit (the "
        "config may differ only in keys that leave the steps so far alone, e.g. "
        "eval_interval; a new total_steps / total_positions / total_games extends or ends the "
        "run early, and a learning-rate schedule then runs over the new total from where "
        "the run is)",
    )
    start.add_argument(
        "--overwrite",
        action="store_true",
        help="start over in a run_dir that holds another run: remove that run's files "
        "(checkpoints, best, final, final_eval.json, config.resolved.json, TensorBoard logs, "
        "curves.png) first",
    )
    p.add_argument(
        "--ray",
        nargs="?",
        const="local",
        default=None,
        metavar="ADDRESS",
        help="PPO and AlphaZero: play the games on Ray rollout workers; without ADDRESS a "
        "local Ray instance, else a running cluster (HOST:6379 or 'auto'); see docs/scaling.md",
    )
    p.add_argument(
        "--workers",
        type=int,
        default=None,
        help="with --ray: rollout workers (default: the cluster's CPUs less one, at least 1)",
    )
    return p


def run(args: argparse.Namespace) -> int:
    # (here, not at the top: every command's parser is built for `spieltisch --help`, which
    # took 2 s importing torch through this module)
    from spieltisch.agents.neural.checkpoint import CheckpointError

    try:
        cfg = load_config(args.config, args.overrides)
    except ConfigError as err:
        print(f"spieltisch train: {err}", file=sys.stderr)
        if not os.path.exists(args.config):  # point to the shipped configs
            shipped = sorted(glob.glob(os.path.join("configs", "*.yaml")))
            print(f"spieltisch train: configs here: {shipped or 'none (run from the repository)'}",
                  file=sys.stderr)  # fmt: skip
        return 2
    if cfg.algorithm == "td":
        from spieltisch.train.td import train
    elif cfg.algorithm == "rollout":
        from spieltisch.train.rollout_targets import train
    elif cfg.algorithm == "alphazero":  # backgammon's has its own trainer, behind this train
        from spieltisch.train.alphazero import train
    else:
        from spieltisch.train.ppo import train
    if args.workers is not None and (args.ray is None or args.workers < 1):
        print(
            "spieltisch train: --workers counts Ray's rollout workers: give it with --ray, "
            "at least 1",
            file=sys.stderr,
        )
        return 2
    if args.ray is not None:
        if cfg.algorithm not in ("ppo", "alphazero"):
            print(
                "spieltisch train: --ray supports algorithms ppo and alphazero only",
                file=sys.stderr,
            )
            return 2
        if cfg.algorithm == "alphazero" and cfg.game == "backgammon":
            print(
                "spieltisch train: --ray is not supported for backgammon's AlphaZero (its "
                "self-play runs in this process; drop --ray)",
                file=sys.stderr,
            )
            return 2
        from functools import partial

        from spieltisch.train.ray_rollouts import train_on_ray

        train = partial(train_on_ray, address=args.ray, num_workers=args.workers)

    run_dir = Path(cfg.run_dir)
    made = not run_dir.exists()  # (removed again if the run fails before writing anything)
    try:  # a run_dir that cannot be made fails here, not with a traceback from the trainer
        run_dir.mkdir(parents=True, exist_ok=True)
    except OSError as err:
        print(
            f"spieltisch train: cannot make run_dir {cfg.run_dir}: {err.strerror or err}",
            file=sys.stderr,
        )
        return 2

    def remove_if_empty() -> None:  # a run that failed before writing anything leaves no dir
        if made and run_dir.is_dir() and not any(run_dir.iterdir()):
            run_dir.rmdir()

    def what_is_left(when: str) -> str:
        """What a stopped run leaves and the command that goes on from it: --resume only where
        a complete checkpoint exists (it was promised for runs that had written none)."""
        from spieltisch.train.run_files import complete_checkpoints, run_files

        again = f"spieltisch train {shlex.quote(args.config)}"
        kept = complete_checkpoints(run_dir) if run_dir.is_dir() else []
        if kept:
            return (
                f"the run's complete checkpoints are kept in {cfg.run_dir} (newest: "
                f"{kept[0].name}); continue{when} with: {again} --resume (and the same --set "
                "options)"
            )
        remove_if_empty()
        left = f"no checkpoint was written in {cfg.run_dir}, so there is nothing to resume"
        if run_dir.is_dir() and run_files(run_dir):  # a new run there is refused without it
            left += f"; start it over{when} with: {again} --overwrite (and the same --set options)"
        return left

    try:
        result = train(cfg, resume=args.resume, overwrite=args.overwrite)
    except (CheckpointError, ValueError) as err:
        print(f"spieltisch train: {err}", file=sys.stderr)
        remove_if_empty()
        return 2
    except OSError as err:
        # The disk filled up, Ray's connection broke, a worker failed: say what, and offer
        # --resume only where a complete checkpoint is there to resume from.
        after = what_is_left(" once the cause is mended")
        print(f"spieltisch train: {type(err).__name__}: {err}; {after}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print(f"\nspieltisch train: interrupted; {what_is_left('')}", file=sys.stderr)
        return 130
    if "summary" in result:
        print(result["summary"])
    else:
        print(
            f"stopped at {result['position']}; "
            f"continue with: spieltisch train {shlex.quote(args.config)} --resume (and the "
            "same --set options)"
        )
    return 0
