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

import json
import logging
from pathlib import Path

from spieltisch.agents.files import write_atomic

CURVES = "curves.png"

#: the trainers' progress units (their progress bars' abbreviations) spelt out
UNITS = {"pos": "positions", "step": "steps", "game": "games"}
YLABELS = {"score": "score (wins + draws / 2)", "ppg": "points per game"}


def read_scalars(tb_dir: Path) -> dict[str, tuple[list[int], list[float]]]:
    """Every scalar curve of a TensorBoard log directory: ``{tag: (steps, values)}`` (the last
    value of a step that was logged twice, e.g. across a resumed run's purge); a tag whose
    points were all purged is left out."""
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    events = EventAccumulator(str(tb_dir), size_guidance={"scalars": 0})
    # a resumed run's writer purges what the killed one logged past its checkpoint, which the
    # reader announces as a "TensorFlow restart" on stderr: expected here, not news
    quiet = logging.getLogger("tensorboard")
    level = quiet.level
    quiet.setLevel(logging.ERROR)
    try:
        events.Reload()
    finally:
        quiet.setLevel(level)
    curves = {}
    for tag in events.Tags()["scalars"]:
        by_step = {e.step: e.value for e in events.Scalars(tag)}
        if not by_step:  # every point purged (a run killed before its first checkpoint)
            continue
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
    # (PPO's clip fraction is no loss either: a share, often 0, which ruled out the log scale)
    not_losses = ("entropy", "kl", "clip_fraction")
    return sorted(t for t in tags if t.startswith("loss/") and not t.endswith(not_losses))


def run_unit(run_dir: Path) -> str:
    """The progress unit of a finished or running run, as its trainer counts it (recorded in
    its resource ledger, ``resources.json``, at each checkpoint), spelt out; ``progress``
    before its first checkpoint."""
    from spieltisch.train.run_files import RESOURCES

    try:
        sessions = json.loads((Path(run_dir) / RESOURCES).read_text())["sessions"]
        unit = sessions[-1]["unit"]
    except (OSError, ValueError, KeyError, IndexError):
        return "progress"
    return UNITS.get(unit, unit)


def plot_curves(run_dir: Path, unit: str) -> Path | None:
    """Draw ``run_dir/curves.png`` from ``run_dir/tb`` (written atomically: a reader never sees
    half a file); ``unit`` names the x axis. Returns the path, or None when the run has no logs
    (``tensorboard: false``) or nothing to draw yet."""
    if not (Path(run_dir) / "tb").is_dir():
        return None
    return plot_runs([Path(run_dir)], UNITS.get(unit, unit), Path(run_dir) / CURVES)


def plot_runs(run_dirs: list[Path], unit: str, out: Path) -> Path | None:
    """The evaluations and losses of one run or of several side by side (each line labelled
    with its run's folder name, or its path where two folders share a name) into the picture
    ``out`` (PNG, or the format its suffix names: ``.svg``, ``.pdf``), written atomically;
    ``unit`` names the x axis. Returns ``out``, or None when none of the runs logged anything
    to draw. Raises ValueError naming a run without TensorBoard logs."""
    logs = {}
    for run_dir in run_dirs:
        tb_dir = Path(run_dir) / "tb"
        if not tb_dir.is_dir() and any(Path(run_dir).glob("events.out.tfevents.*")):
            raise ValueError(f"{run_dir} holds TensorBoard logs: give its run directory (above)")
        if not tb_dir.is_dir():
            raise ValueError(f"{run_dir}: no TensorBoard logs ({tb_dir}; tensorboard: false?)")
        logs[Path(run_dir)] = read_scalars(tb_dir)
    if not any(evaluation_tags(list(c)) or loss_tags(list(c)) for c in logs.values()):
        return None
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    several = len(logs) > 1
    # each run's lines are labelled with its folder's name, or the path given where two runs'
    # folders have one name (runs/a/run, runs/b/run): the legend told them apart by nothing
    names = [d.name for d in logs]
    names = [n if names.count(n) == 1 else str(d) for n, d in zip(names, logs, strict=True)]
    fig, (top, bottom) = plt.subplots(2, 1, figsize=(8, 7), sharex=True)
    kinds, positive = set(), True
    styles = ("-", "--", ":", "-.")
    for number, (name, curves) in enumerate(zip(names, logs.values(), strict=True)):
        prefix = f"{name}: " if several else ""
        # several runs: one colour per run, a line style per curve; one run: a colour per curve
        look = {"color": f"C{number % 10}"} if several else {}
        for k, tag in enumerate(evaluation_tags(list(curves))):
            steps, values = curves[tag]
            label = prefix + tag.removeprefix("eval/")
            style = {**look, "linestyle": styles[k % len(styles)]} if several else {}
            (line,) = top.plot(steps, values, marker="o", markersize=3, label=label, **style)
            low, high = (curves.get(t) for t in _interval_tags(tag))
            if low and high and low[0] == steps and high[0] == steps:
                top.fill_between(steps, low[1], high[1], color=line.get_color(), alpha=0.15)
            kinds.add("score" if tag.startswith("eval/score") else "ppg")
        for k, tag in enumerate(loss_tags(list(curves))):
            steps, values = curves[tag]
            style = {**look, "linestyle": styles[k % len(styles)]} if several else {}
            if len(steps) == 1:  # a line through one point draws nothing
                style["marker"] = "o"
            bottom.plot(steps, values, label=prefix + tag.removeprefix("loss/"), **style)
            positive = positive and all(v > 0 for v in values)
    only = kinds.pop() if len(kinds) == 1 else None
    top.set_ylabel(YLABELS.get(only, "evaluation"))
    top.set_title(f"{', '.join(names)}: evaluations and losses")
    if top.lines:
        top.legend(fontsize=8)
    else:
        top.text(0.5, 0.5, "no evaluation yet", ha="center", transform=top.transAxes)
    top.grid(alpha=0.3)
    if bottom.lines:
        if positive:
            bottom.set_yscale("log")
        bottom.legend(fontsize=8)
    bottom.set_ylabel("loss")
    bottom.set_xlabel(unit)
    bottom.grid(alpha=0.3)
    fig.tight_layout()
    # the format from out's suffix (the temporary file's is .tmp): --out compare.svg wrote PNG
    kind = Path(out).suffix.lower().lstrip(".") or "png"
    try:
        write_atomic(out, lambda tmp: fig.savefig(tmp, dpi=100, format=kind))
    finally:
        plt.close(fig)
    return Path(out)
