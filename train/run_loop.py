"""The run loop every trainer shares: resume, checkpoints, evaluations, keep-best, logs, the end.

A trainer (:mod:`spieltisch.train.ppo`, :mod:`spieltisch.train.td`) says how to advance, save,
restore and evaluate itself by subclassing :class:`Trainer`; :func:`run` does the bookkeeping
around it, the same for every algorithm (the shared keys of
:class:`~spieltisch.train.config.RunConfig` drive it):

1. **Setup.** One directory holds one run: without ``resume`` a ``run_dir`` that holds another
   run's files is an error naming the choices, unless ``overwrite`` (those files are removed
   first; :func:`~spieltisch.train.run_files.check_run_dir`). With ``resume`` the config must
   match the run's (``config.resolved.json``) except in the trainer's
   :attr:`~Trainer.resumable_keys`, and the trainer restores the newest complete training
   checkpoint (the one ``checkpoints/latest.txt`` names, or the newest complete one if a kill
   left that incomplete); the run continues from there. ``run_dir/checkpoints`` is created; the
   config as run goes to ``run_dir/config.resolved.json``; a TensorBoard writer
   (``run_dir/tb``) and a tqdm bar (its total is ``total_units``, never run past) are opened if
   the config asks for them.
2. **Rounds.** The trainer advances in *rounds* (PPO: iterations, TD: games):
   ``checkpoint_interval``, ``eval_interval`` and the trainer's stop-after limit (stop as if
   killed, for tests) count rounds. The run ends when the trainer's *units* (PPO: learner
   steps, TD: games; the progress bar counts these) reach ``total_units``.
3. **After each step**: every ``eval_interval`` rounds the trainer evaluates itself
   (``eval_games``, seed ``seed * 1000 + 7``); if it keeps its best policy and the evaluation's
   score beats the best so far, the policy is saved as ``run_dir/best``. The evaluation's line
   is printed above the bar (or logged); the step's and the evaluation's metrics go to
   TensorBoard and become the trainer's ``metrics`` (saved with every checkpoint). Every
   ``checkpoint_interval`` rounds and at the end a training checkpoint is written and recorded
   in ``latest.txt`` (all but the newest ``keep_checkpoints`` are deleted).
4. **The end** (``total_units`` reached): the policy is saved as ``run_dir/final`` and evaluated
   (``final_eval_games``, seed ``seed * 1000 + 11``; ``run_dir/best`` too, if kept), saved again
   so that its metadata records that evaluation, and the evaluation is written to
   ``run_dir/final_eval.json``; the result's ``summary`` says in words how the best and the
   final policy did, where every file is, and how to evaluate and play the result
   (``spieltisch train`` prints it). A run stopped early ends without this.

**The trainer contract.** A new trainer subclasses :class:`Trainer`: it sets the class
attributes, keeps ``cfg`` (its config, a ``RunConfig``), ``metrics`` (the latest metrics) and,
if it keeps its best policy, ``best_score``; it implements the properties ``rounds``, ``units``
and ``total_units`` and the methods :meth:`~Trainer.step` (advance at most ``max_rounds``
rounds, return the metrics), :meth:`~Trainer.save` / :meth:`~Trainer.restore` (a training
checkpoint that resumes the run exactly, ``metrics`` and ``best_score`` included),
:meth:`~Trainer.save_policy` (a policy checkpoint: best and final), :meth:`~Trainer.evaluate`
and :meth:`~Trainer.final_evaluation`, :meth:`~Trainer.checkpoint_name`,
:meth:`~Trainer.position` and :meth:`~Trainer.summary`; it may name its
:attr:`~Trainer.resumable_keys` and describe its final evaluation (:meth:`~Trainer.report_lines`,
:attr:`~Trainer.opponent_names`). Its ``train(cfg, resume, log, overwrite)`` builds it and
returns ``run(trainer, resume, log, overwrite)``.
"""

from __future__ import annotations

import json
import math
import shlex
import time
from abc import ABC, abstractmethod
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from spieltisch.agents.files import write_text_atomic
from spieltisch.agents.neural.checkpoint import CheckpointError
from spieltisch.envs import make_batch
from spieltisch.train.config import RESUMABLE_RUN_KEYS, RunConfig
from spieltisch.train.run_files import (
    RESOURCES,
    ResourceLedger,
    check_resumed_config,
    check_run_dir,
    checkpoint_dir,
    complete_checkpoints,
    latest_checkpoint,
    record_checkpoint,
    remove_leftover_temporaries,
    run_dir_lock,
    session_clock,
    write_resolved_config,
)


def eval_seed(cfg: RunConfig) -> int:
    """The seed of every evaluation during the run (the same games each time)."""
    return cfg.seed * 1000 + 7


def final_eval_seed(cfg: RunConfig) -> int:
    """The seed of the final evaluation."""
    return cfg.seed * 1000 + 11


def best_score_to_json(score: float) -> float | None:
    """``best_score`` as checkpoint metadata: None for -inf (no evaluation since the
    opponents changed), which strict JSON readers cannot read as a number."""
    return score if math.isfinite(score) else None


def best_score_from_json(value: Any) -> float:
    """The inverse of :func:`best_score_to_json`."""
    return -math.inf if value is None else float(value)


@dataclass
class Evaluation:
    """What a trainer's evaluation returns to the run loop."""

    metrics: dict[str, float]
    """scalars for TensorBoard and the trainer's metrics (``eval/...`` during the run,
    ``final/...`` at the end)"""
    score: float | None = None
    """higher is better: keep-best keeps the policy of the highest score (None: no ranking)"""
    report: dict[str, Any] = field(default_factory=dict)
    """the final evaluation's record, written to run_dir/final_eval.json"""
    line: str | None = None
    """a line for the log, if the trainer reports its evaluations"""


class Trainer(ABC):
    """One training algorithm as :func:`run` drives it (see the module docstring)."""

    unit: str = "step"
    """name of a progress unit (the progress bar's unit)"""
    bar_smoothing: float = 0.3
    """tqdm's smoothing of the speed shown"""
    checkpoint_on_evaluation: bool = False
    """also write a checkpoint after every evaluation (it records the evaluation)"""
    resumable_keys: frozenset[str] = RESUMABLE_RUN_KEYS
    """config keys that may differ between a run and its resumption (they leave the steps so
    far alone; a new total also moves where a learning-rate schedule ends); any other
    difference refuses the resume"""

    cfg: RunConfig
    metrics: dict[str, float]
    """the latest metrics (saved with every checkpoint)"""
    best_score: float
    """the best evaluation score so far (only read if :attr:`keep_best`)"""
    built_at: tuple[float, float]
    """:func:`~.run_files.session_clock` when construction began (set by ``__new__``, so every
    trainer's ``__init__`` counts in the resource ledger: kernels compiled, nets loaded)"""

    def __new__(cls, *args: Any, **kwargs: Any) -> Trainer:
        trainer = super().__new__(cls)
        trainer.built_at = session_clock()
        return trainer

    @property
    @abstractmethod
    def rounds(self) -> int:
        """Rounds done in the whole run (resumptions included)."""

    @property
    @abstractmethod
    def units(self) -> int:
        """Progress units done in the whole run."""

    @property
    @abstractmethod
    def total_units(self) -> int:
        """The run ends when :attr:`units` reaches this."""

    @property
    def stop_after_rounds(self) -> int | None:
        """Stop (as if killed) after this many rounds in this process (None: never)."""
        return None

    @property
    def keep_best(self) -> bool:
        """Save the policy of the best evaluation score as ``run_dir/best``."""
        return False

    @abstractmethod
    def step(self, max_rounds: int) -> dict[str, float]:
        """Advance by at least one and at most ``max_rounds`` rounds (the loop's next
        checkpoint, evaluation or stop is that far); returns the step's metrics."""

    @abstractmethod
    def evaluate(self, num_games: int, seed: int) -> Evaluation:
        """Evaluate the current policy (during the run)."""

    @abstractmethod
    def final_evaluation(
        self, final: Path, best: Path | None, num_games: int, seed: int
    ) -> Evaluation:
        """Evaluate the final policy (saved at ``final``) and the best one (at ``best``, None if
        not kept) at the end of the run; the report goes to final_eval.json."""

    @abstractmethod
    def checkpoint_name(self) -> str:
        """File name (without suffix) of a training checkpoint now, e.g. ``step_0000012800``."""

    @abstractmethod
    def save(self, path: Path) -> None:
        """Write a training checkpoint from which :meth:`restore` resumes exactly: its metadata
        at ``<path>.json``, other files (weights) with the same stem (old checkpoints are deleted
        by that file name)."""

    @abstractmethod
    def restore(self, path: Path) -> None:
        """Continue from the training checkpoint at ``path`` (raise ``CheckpointError`` if it
        does not fit the config)."""

    @abstractmethod
    def save_policy(self, path: Path) -> None:
        """Write a policy checkpoint (an agent: the best and the final policy), its metadata at
        ``<path>.json``."""

    @abstractmethod
    def position(self) -> str:
        """Where the run stands, for log lines: ``iteration 4, step 1200``."""

    @abstractmethod
    def summary(self) -> dict[str, Any]:
        """The counters that start the result of :func:`run`."""

    def postfix(self, metrics: dict[str, float]) -> dict[str, str]:
        """What the progress bar shows next to the speed."""
        return {}

    def report_lines(self, report: dict[str, Any]) -> list[str]:
        """The final evaluation's ``report`` in words, for the summary at the end of the run."""
        return []

    @property
    def opponent_names(self) -> list[str]:
        """Agents the summary's example ``spieltisch eval`` plays the trained policy against."""
        return ["random"]


class CurveDrawer:
    """Draws ``run_dir/curves.png`` (:func:`spieltisch.train.curves.plot_curves`) after an
    evaluation, at most once every ``interval`` seconds, and at the end of the run (or of a
    session stopped early, if an evaluation since the last picture is missing from it). A
    picture that cannot be drawn is reported once and never stops the run."""

    def __init__(self, run_dir: Path, log: Any, interval: float = 60.0) -> None:
        self.run_dir, self.log, self.interval = run_dir, log, interval
        self.last = -math.inf
        self.failed = False
        self.behind = False  # an evaluation was skipped by the interval

    def draw(self, unit: str, at_end: bool = False) -> None:
        now = time.monotonic()
        if self.failed or (not at_end and now - self.last < self.interval):
            self.behind = not self.failed
            return
        self.last, self.behind = now, False
        try:
            from spieltisch.train.curves import plot_curves

            plot_curves(self.run_dir, unit)
        except Exception as err:  # a picture is not worth a run
            self.failed = True
            self.log(f"warning: could not draw {self.run_dir / 'curves.png'}: {err}")


def open_logs(
    run_dir: Path, cfg: RunConfig, total: int, done: int, unit: str, smoothing: float
) -> tuple[Any, Any]:
    """``(writer, bar)``: a TensorBoard writer continuing at ``done`` (None unless
    ``cfg.tensorboard``) and a progress bar over ``total`` (None unless ``cfg.progress``)."""
    writer = None
    if cfg.tensorboard:
        from torch.utils.tensorboard import SummaryWriter

        # Events after the checkpoint at ``done`` are dropped (a killed run logged them; the
        # resumed one logs them again); those at ``done`` were logged before it was saved.
        writer = SummaryWriter(str(run_dir / "tb"), purge_step=done + 1 if done else None)
    bar = None
    if cfg.progress:
        from tqdm import tqdm

        # the last step may overshoot the total (PPO: whole iterations); the bar stops at it
        bar = tqdm(total=total, initial=min(done, total), unit=unit, smoothing=smoothing)
    return writer, bar


class StateTrainer(Trainer):
    """A trainer whose progress lives in ``self.state`` (what its checkpoints hold): the run
    loop's ``metrics`` and ``best_score`` are read from and written to it."""

    state: Any

    @property  # type: ignore[override]
    def metrics(self) -> dict[str, float]:
        return self.state.metrics

    @metrics.setter
    def metrics(self, metrics: dict[str, float]) -> None:
        self.state.metrics = metrics

    @property  # type: ignore[override]
    def best_score(self) -> float:
        return self.state.best_score

    @best_score.setter
    def best_score(self, score: float) -> None:
        self.state.best_score = score


class IterationTrainer(StateTrainer):
    """A :class:`StateTrainer` whose rounds are iterations (``state.iteration``) and whose units
    are ``state.global_step``, stopped early by ``cfg.stop_after_iterations`` and keeping its
    best policy if ``cfg.keep_best`` (PPO, Gumbel AlphaZero)."""

    @property
    def rounds(self) -> int:
        return self.state.iteration

    @property
    def units(self) -> int:
        return self.state.global_step

    @property
    def stop_after_rounds(self) -> int | None:
        return self.cfg.stop_after_iterations  # type: ignore[attr-defined]

    @property
    def keep_best(self) -> bool:
        return self.cfg.keep_best  # type: ignore[attr-defined]

    def summary(self) -> dict[str, Any]:
        return {"iteration": self.state.iteration, "global_step": self.state.global_step}


def rounds_to_boundary(trainer: Trainer, rounds_here: int) -> int:
    """Rounds the next step may take: up to the next checkpoint, evaluation or stop."""
    cfg = trainer.cfg
    limit = cfg.checkpoint_interval - trainer.rounds % cfg.checkpoint_interval
    if cfg.eval_interval:
        limit = min(limit, cfg.eval_interval - trainer.rounds % cfg.eval_interval)
    if trainer.stop_after_rounds is not None:
        limit = min(limit, trainer.stop_after_rounds - rounds_here)
    return limit


def run(
    trainer: Trainer,
    resume: bool = False,
    log: Callable[[str], Any] = print,
    overwrite: bool = False,
) -> dict[str, Any]:
    """Run (or resume) ``trainer``'s run to the end or to its stop-after limit; returns its
    :meth:`~Trainer.summary`, the final evaluation (``final_eval``) and its ``summary`` in
    words (both at the end only) and the latest ``metrics``. ``overwrite`` removes another run's
    files from ``run_dir`` first (without it they are an error). One process at a time trains in
    a run directory (:func:`~spieltisch.train.run_files.run_dir_lock`)."""
    run_dir = Path(trainer.cfg.run_dir)
    run_dir.mkdir(parents=True, exist_ok=True)
    with run_dir_lock(run_dir):
        return _run_locked(trainer, resume, log, overwrite)


def _resume(trainer: Trainer, run_dir: Path, log: Callable[[str], Any]) -> bool:
    """Restore the newest checkpoint that loads (a damaged one is named and passed over for the
    one before it), after checking the config against the run's. Returns whether the run is
    finished (its final evaluation written): then nothing is resumed, and nothing said here."""
    path = latest_checkpoint(run_dir, warn=log)
    if path is None:
        raise CheckpointError(f"--resume: no checkpoint in {checkpoint_dir(run_dir)}")
    recorded = check_resumed_config(run_dir, cfg := trainer.cfg, trainer.resumable_keys) or {}
    candidates = [path] + [p for p in complete_checkpoints(run_dir) if p != path]
    for i, candidate in enumerate(candidates):
        try:
            trainer.restore(candidate)
            break
        except CheckpointError as err:
            if i == len(candidates) - 1 or "damaged" not in str(err).lower():
                raise
            log(f"warning: {err}; trying the checkpoint before it, {candidates[i + 1].name}")
    if trainer.units >= trainer.total_units and (run_dir / "final_eval.json").exists():
        return True  # (it said "resumed from" and then "nothing to resume")
    log(f"resumed from {candidate} at {trainer.position()}")
    if left := remove_leftover_temporaries(run_dir):
        log(f"removed {len(left)} temporary file(s) of writes the killed run did not finish")
    opponents = [k for k in ("eval_opponents", "eval_opponent") if hasattr(cfg, k)]
    if trainer.keep_best and any(
        recorded.get(k, getattr(cfg, k)) != getattr(cfg, k) for k in opponents
    ):
        # scores against other opponents do not compare: 'best' would stay where it was
        trainer.best_score = -math.inf
        log("the evaluation opponents changed: the best policy is chosen afresh from here")
    return False


def _run_locked(
    trainer: Trainer, resume: bool, log: Callable[[str], Any], overwrite: bool
) -> dict[str, Any]:
    cfg = trainer.cfg
    run_dir = Path(cfg.run_dir)
    ckpt_dir = checkpoint_dir(run_dir)
    check_run_dir(run_dir, resume, overwrite, log)
    if resume and _resume(trainer, run_dir, log):  # finished: not evaluated again
        finished = run_dir / "final_eval.json"
        return {
            **trainer.summary(),
            "metrics": dict(trainer.metrics),
            "summary": f"The run in {run_dir} is finished (its final evaluation: {finished}); "
            "nothing to resume.",
        }
    ckpt_dir.mkdir(parents=True, exist_ok=True)
    write_resolved_config(run_dir, cfg)
    ledger = ResourceLedger(
        run_dir, resume, trainer.units, trainer.unit, warn=log, started=trainer.built_at
    )
    writer, bar = open_logs(
        run_dir, cfg, trainer.total_units, trainer.units, trainer.unit, trainer.bar_smoothing
    )

    curves = CurveDrawer(run_dir, log)
    stop_after = trainer.stop_after_rounds
    rounds_here = 0
    while trainer.units < trainer.total_units:
        rounds_before = trainer.rounds
        metrics = trainer.step(rounds_to_boundary(trainer, rounds_here))
        rounds_here += trainer.rounds - rounds_before
        done = trainer.units >= trainer.total_units
        stopping = stop_after is not None and rounds_here >= stop_after
        evaluated = bool(cfg.eval_interval) and trainer.rounds % cfg.eval_interval == 0
        if evaluated:
            evaluation = trainer.evaluate(cfg.eval_games, eval_seed(cfg))
            metrics.update(evaluation.metrics)
            if evaluation.line is not None and bar is not None:
                bar.write(evaluation.line)  # a line above the bar, which stays intact
            elif evaluation.line is not None:
                log(evaluation.line)
        trainer.metrics = {k: float(v) for k, v in metrics.items()}
        if (
            evaluated
            and trainer.keep_best
            and evaluation.score is not None
            and evaluation.score > trainer.best_score
        ):
            trainer.best_score = evaluation.score
            trainer.save_policy(run_dir / "best")
        if writer is not None:
            for key, value in metrics.items():
                writer.add_scalar(key, value, trainer.units)
            writer.flush()
            if evaluated:
                curves.draw(trainer.unit)
        if bar is not None:
            bar.update(min(trainer.units, trainer.total_units) - bar.n)
            bar.set_postfix(trainer.postfix(metrics))
        if (
            trainer.rounds % cfg.checkpoint_interval == 0
            or done
            or stopping  # (the stop-after limit: --resume goes on from here)
            or (evaluated and trainer.checkpoint_on_evaluation)
        ):
            name = trainer.checkpoint_name()
            # the ledger first: a kill between the checkpoint and the ledger lost the time up
            # to the checkpoint a resume starts from (a kill before the pointer moves counts
            # the work it redoes twice, which it cost)
            ledger.record(trainer.units)
            trainer.save(ckpt_dir / name)
            record_checkpoint(ckpt_dir, name, cfg.keep_checkpoints)
        if stopping and not done:
            break

    if bar is not None:
        bar.close()
    if curves.behind and trainer.units < trainer.total_units:  # stopped early (stop_after_*)
        curves.draw(trainer.unit, at_end=True)  # (it showed only the first evaluation)
    result = trainer.summary()
    if trainer.units >= trainer.total_units:
        final = run_dir / "final"
        trainer.save_policy(final)  # some trainers evaluate the file (the arena loads it)
        best = run_dir / "best"
        kept = best if trainer.keep_best and best.with_suffix(".json").exists() else None
        evaluation = trainer.final_evaluation(
            final, kept, cfg.final_eval_games, final_eval_seed(cfg)
        )
        trainer.metrics.update(evaluation.metrics)
        trainer.save_policy(final)  # again: its metadata records the final evaluation
        if writer is not None:
            for key, value in evaluation.metrics.items():
                writer.add_scalar(key, value, trainer.units)
            writer.flush()
            curves.draw(trainer.unit, at_end=True)
        write_text_atomic(
            run_dir / "final_eval.json", json.dumps(evaluation.report, indent=2) + "\n"
        )
        result["final_eval"] = evaluation.report
        result["resources"] = ledger.record(trainer.units)
        result["summary"] = end_summary(trainer, evaluation.report, kept, result["resources"])
    if writer is not None:
        writer.close()
    result["metrics"] = dict(trainer.metrics)
    result["position"] = trainer.position()  # (in the trainer's own units: games, positions)
    return result


def end_summary(
    trainer: Trainer,
    report: dict[str, Any],
    best: Path | None,
    resources: dict[str, Any],
) -> str:
    """The end of a finished run in words: the trainer's final evaluation, what the run cost
    (``resources``: the :class:`~spieltisch.train.run_files.ResourceLedger`'s contents), where
    the run's files are, and the commands that evaluate and play the trained policy (``best`` if
    kept, else ``final``)."""
    cfg = trainer.cfg
    run_dir = Path(cfg.run_dir)
    lines = [f"Training finished at {trainer.position()}.", *trainer.report_lines(report)]
    total = resources["total"]
    sessions = f" over {total['sessions']} sessions" if total["sessions"] > 1 else ""
    lines.append(
        f"Cost{sessions}: {total['wall_seconds']:,.0f} s wall, {total['cpu_seconds']:,.0f} "
        f"CPU-s, peak memory {total['peak_rss_gib']:.2f} GiB"
    )
    lines += ["", f"Files (run directory {run_dir}):"]
    if best is not None:
        lines.append(f"  best policy      {best}.safetensors (+ .json)")
    lines.append(f"  final policy     {run_dir / 'final'}.safetensors (+ .json)")
    lines.append(f"  final evaluation {run_dir / 'final_eval.json'}")
    lines.append(f"  resources        {run_dir / RESOURCES} (wall, CPU, memory, load)")
    lines.append(f"  checkpoints      {checkpoint_dir(run_dir)} (latest.txt names the newest)")
    lines.append(f"  resolved config  {run_dir / 'config.resolved.json'}")
    if cfg.tensorboard:
        lines.append(f"  TensorBoard      {run_dir / 'tb'} (tensorboard --logdir {run_dir / 'tb'})")
        if (run_dir / "curves.png").exists():
            lines.append(f"  curves           {run_dir / 'curves.png'} (evaluations and losses)")
    agent = shlex.quote(f"checkpoint:{best if best is not None else run_dir / 'final'}")
    options = "".join(f" -o {shlex.quote(f'{k}={v}')}" for k, v in cfg.game_options.items())
    opponents = [shlex.quote(name) for name in trainer.opponent_names]
    seats = make_batch(cfg.game, 1, **cfg.game_options).num_players
    lines += ["", "Evaluate it against baselines, watch it play, play it yourself:"]
    if seats == 2:
        mode = " --mode one-vs-all" if len(opponents) > 1 else ""
        lines.append(
            f"  spieltisch eval {cfg.game}{options} --agents {agent} {' '.join(opponents)}{mode}"
        )
    else:  # a table of that many seats, the others all one opponent
        lines += [
            f"  spieltisch eval {cfg.game}{options} --agents {agent}{f' {name}' * (seats - 1)}"
            for name in opponents
        ]
    lines += [
        f"  spieltisch play {cfg.game}{options} --agents {agent}{f' {opponents[0]}' * (seats - 1)}",
        f"  spieltisch play {cfg.game}{options} --agents human{f' {agent}' * (seats - 1)}",
    ]
    return "\n".join(lines)
