"""Strength against training CPU time, several runs side by side (AlphaZero and PPO).

    python benchmarks/plot_strength_cpu.py --title "Kalah(6,4)" --name kalaha_6x4 \\
        --curve "Gumbel AlphaZero" runs/az_6x4 4200 --curve PPO runs/ppo_6x4 600 \\
        [--metric eval/score_vs_alphabeta:depth=4]

Each ``--curve LABEL RUN_DIR CPU_SECONDS`` reads the run's TensorBoard evaluations (``metric``:
the score of the network's most likely move against an opponent, 200 games each in the shipped
configs) and places each at the training CPU time it had used: the run's measured CPU seconds
(``/usr/bin/time``, all processes of the run) times the share of its steps done by then (work
per step is about constant within a run, so this is close; the evaluations' own time is spread
in too). ``--checkpoint LABEL PATH CPU_SECONDS`` (repeatable) instead evaluates a saved network
here (``--games`` games with 2 random opening moves each, seats alternating, as the trainers'
evaluations do) and places it at the given CPU seconds: for runs whose logged evaluations were
made differently, or whose checkpoints are all that is left. ``--previous FILE OLD NEW``
(repeatable) carries the curve ``OLD`` of an earlier results file of this script over as
``NEW``: points of runs whose folders are gone. Writes ``docs/images/strength_cpu_<name>.png`` and the points to
``benchmarks/results/strength_cpu_<name>.json`` (``--quick``: a smoke run on a tiny run made
here, written only to ``--results-dir``).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from _common import add_run_options, result_path, write_json

ROOT = Path(__file__).resolve().parents[1]


def read_curve(run_dir: Path, metric: str, cpu_seconds: float) -> list[dict[str, float]]:
    """(CPU seconds, steps, value) of every evaluation of ``metric`` in ``run_dir``'s logs."""
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    points: dict[int, float] = {}
    for events in sorted((run_dir / "tb").glob("events.out.tfevents.*")):
        acc = EventAccumulator(str(events), size_guidance={"scalars": 0})
        acc.Reload()
        if metric in acc.Tags()["scalars"]:
            for event in acc.Scalars(metric):
                points[event.step] = event.value  # a resumed run repeats steps: keep the last
    if not points:
        raise SystemExit(f"{run_dir}: no {metric!r} in its TensorBoard logs")
    last = _final_step(run_dir) or max(points)
    return [
        {"cpu_seconds": cpu_seconds * step / last, "step": step, "value": value}
        for step, value in sorted(points.items())
    ]


def evaluate_checkpoint(path: Path, metric: str, games: int, seed: int) -> dict[str, float]:
    """The ``metric`` (``eval/score_vs_<opponent>``) of the network at ``path``, measured here
    as the trainers measure it (:func:`spieltisch.train.ppo.evaluate_against`)."""
    from types import SimpleNamespace

    from spieltisch.agents.neural.checkpoint import load_checkpoint
    from spieltisch.train.ppo import evaluate_against, make_opponent

    ckpt = load_checkpoint(path)
    cfg = SimpleNamespace(game=ckpt.game, game_options=ckpt.game_options, max_turns=1000)
    opponent = make_opponent(metric.removeprefix("eval/score_vs_"), cfg)
    result = evaluate_against(cfg, ckpt.policy(), opponent, games, seed)
    return {"step": int(ckpt.meta["global_step"]), "value": result["score"], "games": games}


def _final_step(run_dir: Path) -> int | None:
    """The steps of the finished run (its ``final`` policy), None if it has none."""
    meta = run_dir / "final.json"
    return int(json.loads(meta.read_text())["global_step"]) if meta.exists() else None


def plot(curves: dict[str, list[dict[str, float]]], title: str, metric: str, path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import matplotlib.ticker

    fig, ax = plt.subplots(figsize=(7, 4.2))
    for label, points in curves.items():
        ax.plot(
            [p["cpu_seconds"] / 60 for p in points],
            [p["value"] for p in points],
            marker="o",
            markersize=3,
            label=label,
        )
    ax.set_xscale("log")  # runs differ by orders of magnitude in budget
    # plain minute labels at 1-2-5 steps (the default log labels crowd on a short range)
    ax.xaxis.set_major_locator(matplotlib.ticker.LogLocator(base=10, subs=(1.0, 2.0, 5.0)))
    ax.xaxis.set_major_formatter(matplotlib.ticker.FuncFormatter(lambda v, _: f"{v:g}"))
    ax.xaxis.set_minor_formatter(matplotlib.ticker.NullFormatter())
    ax.set_xlabel("training CPU minutes (log scale; 2-core machine)")
    ax.set_ylabel(metric.removeprefix("eval/").replace("_", " "))
    ax.set_ylim(0, 1)
    ax.axhline(0.5, color="grey", linewidth=0.8, linestyle=":")
    ax.set_title(f"{title}: strength of the raw network against training CPU time")
    ax.grid(alpha=0.3)
    ax.legend(loc="best", fontsize="small", framealpha=0.8)
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=110)
    plt.close(fig)
    print(f"wrote {path}")


def tiny_run(where: Path) -> Path:
    """A few seconds of PPO training with evaluations, for --quick."""
    run = where / "tiny"
    sets = ["game_options.pits=4", "total_steps=600", "num_games=8", "hidden=[16]",
            "eval_interval=1", "eval_games=4", "final_eval_games=2", "pool_baselines=[]",
            "eval_opponents=[random]", "progress=false", f"run_dir={run}"]  # fmt: skip
    subprocess.run(
        [sys.executable, "-m", "spieltisch.train.cli", "train", "configs/kalaha_ppo.yaml",
         *(x for s in sets for x in ("--set", s))],
        cwd=ROOT, check=True, capture_output=True,
    )  # fmt: skip
    return run


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--title", default="")
    ap.add_argument("--name", default="quick")
    ap.add_argument(
        "--curve",
        nargs=3,
        action="append",
        default=[],
        metavar=("LABEL", "RUN_DIR", "CPU_SECONDS"),
    )
    ap.add_argument(
        "--checkpoint",
        nargs=3,
        action="append",
        default=[],
        metavar=("LABEL", "PATH", "CPU_SECONDS"),
    )
    ap.add_argument(
        "--previous",
        nargs=3,
        action="append",
        default=[],
        metavar=("FILE", "OLD_LABEL", "NEW_LABEL"),
        help="carry a curve of an earlier strength_cpu_<name>.json over, relabelled",
    )
    ap.add_argument("--games", type=int, default=400, help="--checkpoint: evaluation games")
    ap.add_argument("--seed", type=int, default=9_000_000, help="--checkpoint: evaluation seed")
    ap.add_argument("--metric", default="eval/score_vs_alphabeta:depth=4")
    add_run_options(ap)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        if args.quick:
            run = tiny_run(Path(tmp))
            args.curve = [["PPO (tiny)", str(run), "10"]]
            args.checkpoint = [["PPO (tiny, evaluated here)", str(run / "final"), "10"]]
            args.metric, args.games = "eval/score_vs_random", 4
        curves = {
            label: read_curve(Path(run), args.metric, float(cpu)) for label, run, cpu in args.curve
        }
        for label, path, cpu in args.checkpoint:
            point = evaluate_checkpoint(Path(path), args.metric, args.games, args.seed)
            curves.setdefault(label, []).append({"cpu_seconds": float(cpu), **point})
    for file, old, new in args.previous:
        earlier = json.loads(Path(file).read_text())
        if earlier.get("metric") != args.metric or old not in earlier.get("curves", {}):
            raise SystemExit(f"{file}: no curve {old!r} of {args.metric!r}")
        curves.setdefault(new, []).extend(earlier["curves"][old])
    for points in curves.values():
        points.sort(key=lambda p: p["cpu_seconds"])
    results: dict[str, Any] = {
        "title": args.title,
        "metric": args.metric,
        "curves": curves,
        "sources": {"runs": args.curve, "checkpoints": args.checkpoint, "previous": args.previous},
        "command": "python benchmarks/plot_strength_cpu.py " + " ".join(sys.argv[1:]),
    }
    out = result_path(args, f"strength_cpu_{args.name}.json")
    write_json(out, results)
    image = (
        ROOT / "docs" / "images" / f"strength_cpu_{args.name}.png"
        if out is not None and not args.quick
        else (out.with_suffix(".png") if out is not None else None)
    )
    if image is not None:
        plot(curves, args.title, args.metric, image)


if __name__ == "__main__":
    main()
