"""A run's learning curves as a picture: ``run_dir/curves.png``, drawn from its TensorBoard logs
(``run_dir/tb``) after every evaluation and at the end of the run, so a long run can be looked
at without starting TensorBoard.

Two panels against the run's progress units (positions, steps or games):

* **evaluations**: every periodic evaluation against each opponent, as the trainer logs it: the
  score (wins + draws / 2, ``eval/score_vs_<opponent>``) or, for backgammon, points per game
  (``eval/ppg``, ``eval/ppg_vs_<opponent>``) with its 95% interval as a band where logged;
* **losses**: the trainer's ``loss/*`` curves (entropies and KL divergences left out: they are
  not losses), on a log scale.
"""

from __future__ import annotations

import os
from pathlib import Path

CURVES = "curves.png"

#: the trainers' progress units (their progress bars' abbreviations) spelt out
UNITS = {"pos": "positions", "step": "steps", "game": "games"}
YLABELS = {"score": "score (wins + draws / 2)", "ppg": "points per game"}


def read_scalars(tb_dir: Path) -> dict[str, tuple[list[int], list[float]]]:
    """Every scalar curve of a TensorBoard log directory: ``{tag: (steps, values)}`` (the last
    value of a step that was logged twice, e.g. across a resumed run's purge)."""
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    events = EventAccumulator(str(tb_dir), size_guidance={"scalars": 0})
    events.Reload()
    curves = {}
    for tag in events.Tags()["scalars"]:
        by_step = {e.step: e.value for e in events.Scalars(tag)}
        steps = sorted(by_step)
        curves[tag] = (steps, [by_step[s] for s in steps])
    return curves


def _interval_tags(tag: str) -> tuple[str, str]:
    """The tags of an evaluation's interval bounds (``eval/ppg`` -> ``eval/ppg_low``,
    ``eval/ppg_vs_gnubg`` -> ``eval/ppg_low_vs_gnubg``)."""
    head, sep, tail = tag.partition("_vs_")
    return f"{head}_low{sep}{tail}", f"{head}_high{sep}{tail}"


def evaluation_tags(tags: list[str]) -> list[str]:
    """The evaluation curves worth a line: the score or points per game against each opponent
    (not their intervals' bounds, which are bands, nor the mean over the opponents)."""
    return sorted(
        t
        for t in tags
        if t.startswith(("eval/score", "eval/ppg"))
        and not t.startswith(("eval/ppg_low", "eval/ppg_high"))
    )


def loss_tags(tags: list[str]) -> list[str]:
    return sorted(t for t in tags if t.startswith("loss/") and not t.endswith(("entropy", "kl")))


def plot_curves(run_dir: Path, unit: str) -> Path | None:
    """Draw ``run_dir/curves.png`` from ``run_dir/tb`` (written atomically: a reader never sees
    half a file); ``unit`` names the x axis. Returns the path, or None when the run has no logs
    (``tensorboard: false``) or nothing to draw yet."""
    tb_dir = Path(run_dir) / "tb"
    if not tb_dir.is_dir():
        return None
    curves = read_scalars(tb_dir)
    evaluations, losses = evaluation_tags(list(curves)), loss_tags(list(curves))
    if not evaluations and not losses:
        return None
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, (top, bottom) = plt.subplots(2, 1, figsize=(8, 7), sharex=True)
    for tag in evaluations:
        steps, values = curves[tag]
        (line,) = top.plot(steps, values, marker="o", markersize=3, label=tag[5:])
        low, high = (curves.get(t) for t in _interval_tags(tag))
        if low and high and low[0] == steps and high[0] == steps:
            top.fill_between(steps, low[1], high[1], color=line.get_color(), alpha=0.15)
    kinds = {"score" if tag.startswith("eval/score") else "ppg" for tag in evaluations}
    top.set_ylabel(YLABELS.get(kinds.pop(), "evaluation") if len(kinds) == 1 else "evaluation")
    top.set_title(f"{Path(run_dir).name}: evaluations and losses")
    if evaluations:
        top.legend(fontsize=8)
    else:
        top.text(0.5, 0.5, "no evaluation yet", ha="center", transform=top.transAxes)
    top.grid(alpha=0.3)
    for tag in losses:
        steps, values = curves[tag]
        bottom.plot(steps, values, label=tag[5:])
    if losses and all(v > 0 for tag in losses for v in curves[tag][1]):
        bottom.set_yscale("log")
    bottom.set_ylabel("loss")
    bottom.set_xlabel(UNITS.get(unit, unit))
    if losses:
        bottom.legend(fontsize=8)
    bottom.grid(alpha=0.3)
    fig.tight_layout()
    path = Path(run_dir) / CURVES
    partial = path.with_name(f".{CURVES}.partial")
    fig.savefig(partial, dpi=100, format="png")
    plt.close(fig)
    os.replace(partial, path)
    return path
