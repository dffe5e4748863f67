"""Rollout targets for the backgammon evaluator (``algorithm: rollout``), read top to bottom.

A TD value net (:mod:`spieltisch.agents.backgammon.td_value`, e.g. one trained by
:mod:`spieltisch.train.td`) is improved by supervised learning on what rollouts with it say,
the way GNU Backgammon's evaluators were trained (on positions rolled out, not on one game's
result). One iteration:

1. :func:`~spieltisch.agents.backgammon.rollout.self_play_afterstates`: the current net plays
   itself (1-ply greedy, dice from the run's generator) and every afterstate is kept with
   probability ``sample_prob`` until ``positions_per_iteration`` are in hand.
2. :func:`~spieltisch.agents.backgammon.rollout.rollout_positions`: each is rolled out with the
   current net for both sides, ``rollout_games`` games with the variance reduction of
   :mod:`~spieltisch.agents.backgammon.rollout` (36 stratified first rolls, duplicate dice in
   pairs) and, with ``truncate`` T, each game stopped after T plies and scored by the net's own
   probabilities there (less variance, the net's bias at the horizon). The rollout's five
   probabilities for the player on roll, turned to the view of the afterstate's mover
   (:func:`~spieltisch.agents.backgammon.td_value.flip`), are the afterstate's **target** ``t``.
3. The positions and targets join the data (the last ``replay_size``).
4. :func:`fit_samples`: ``fit_passes * positions_per_iteration`` samples drawn uniformly from the
   data, one plain SGD step each on the squared error of the five sigmoid outputs,
   ``L = 1/2 sum_o (y_o - t_o)^2``, in the network of the sample's class (contact or race, as
   the net values it), the step size falling linearly from ``lr`` to ``lr_final`` over
   ``total_positions``.

Checkpoints hold the net, the data and the generator, so ``--resume`` continues exactly as an
uninterrupted run. Every ``eval_interval`` iterations the net plays ``eval_opponent`` in the
arena (points per game, seats swapped, paired dice); keep-best keeps the best net. Policy
checkpoints are TD checkpoints: ``checkpoint:PATH`` (and ``:ply=2``) plays them.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numba
import numpy as np
from spieltisch.agents.backgammon import td_value as tv
from spieltisch.agents.backgammon.cube import flip
from spieltisch.agents.backgammon.rollout import rollout_positions, self_play_afterstates
from spieltisch.agents.neural.checkpoint import CheckpointError, save_checkpoint
from spieltisch.envs.backgammon import rules as k
from spieltisch.train.config import RESUMABLE_RUN_KEYS, RolloutConfig
from spieltisch.train.run_files import load_training_checkpoint
from spieltisch.train.run_loop import Evaluation, IterationTrainer, run
from spieltisch.train.td import arena_eval, checkpoint_evaluation, ppg_interval, td_net_meta

#: config keys that may differ between a run and its resumption (they leave the steps so far
#: alone; a new total also sets where a learning-rate schedule ends, from the resume point on)
RESUMABLE_CHANGES = {
    *RESUMABLE_RUN_KEYS,
    "total_positions",
    "stop_after_iterations",
    "eval_workers",
    "eval_opponent",
    "keep_best",
    "rollout_threads",
}


# ----------------------------------------------------------------------------------------------
# The compiled learner
# ----------------------------------------------------------------------------------------------
@numba.njit(cache=True, nogil=True)
def _sgd_step(W1, b1, W2, b2, x, nz, n_nz, h, y, target, lr):
    """One SGD step of ``1/2 sum_o (y_o - target_o)^2`` at the last forward pass."""
    hidden = h.shape[0]
    c = np.empty(tv.NUM_OUTPUTS)
    for o in range(tv.NUM_OUTPUTS):
        c[o] = (target[o] - y[o]) * y[o] * (1.0 - y[o])  # minus dL/dz of output o
    for j in range(hidden):
        g = 0.0
        for o in range(tv.NUM_OUTPUTS):
            g += c[o] * W2[o, j]
        g *= h[j] * (1.0 - h[j])
        b1[j] += lr * g
        for t in range(n_nz):
            i = nz[t]
            W1[i, j] += lr * g * x[i]
    for o in range(tv.NUM_OUTPUTS):
        b2[o] += lr * c[o]
        for j in range(hidden):
            W2[o, j] += lr * c[o] * h[j]


@numba.njit(cache=True, nogil=True)
def fit_samples(W1, b1, W2, b2, rW1, rb1, rW2, rb2, boards, movers, targets, order, lr):
    """Step 4: for each sample ``order[t]`` in turn, the net of its class (as
    :func:`~spieltisch.agents.backgammon.td_value.evaluate_afterstate` picks it) takes one SGD
    step towards its target. Returns the mean squared error before each step."""
    n_in = W1.shape[0]
    x = np.zeros(n_in)
    nz = np.zeros(n_in, dtype=np.int64)
    h = np.zeros(b1.shape[0])
    rh = np.zeros(rb1.shape[0])
    y = np.zeros(tv.NUM_OUTPUTS)
    total = 0.0
    for t in range(order.shape[0]):
        i = order[t]
        cls, n_nz = tv.evaluate_afterstate(
            W1, b1, W2, b2, rW1, rb1, rW2, rb2, boards[i], movers[i], x, nz, h, rh, y
        )
        for o in range(tv.NUM_OUTPUTS):
            total += (y[o] - targets[i, o]) ** 2
        if cls == tv.CLASS_RACE:
            _sgd_step(rW1, rb1, rW2, rb2, x, nz, n_nz, rh, y, targets[i], lr)
        elif cls == tv.CLASS_CONTACT:
            _sgd_step(W1, b1, W2, b2, x, nz, n_nz, h, y, targets[i], lr)
    return total / max(1, order.shape[0] * tv.NUM_OUTPUTS)


def mover_targets(on_roll: np.ndarray) -> np.ndarray:
    """Rollout probabilities of the player on roll ``(n, 5)`` in the view of the seat that
    made the afterstate: ``(1 - w, lose gammon, lose backgammon, win gammon, win backgammon)``."""
    return np.array([flip(row) for row in on_roll]).reshape(-1, tv.NUM_OUTPUTS)


# ----------------------------------------------------------------------------------------------
# The data
# ----------------------------------------------------------------------------------------------
class RolloutData:
    """The last ``capacity`` rolled-out afterstates: board, mover, target (and the equity's
    standard error of the rollout, for the logs)."""

    FIELDS = ("boards", "movers", "targets", "se")

    def __init__(self, capacity: int) -> None:
        self.capacity = capacity
        self.boards = np.zeros((capacity, k.BOARD_SIZE), dtype=np.int32)
        self.movers = np.zeros(capacity, dtype=np.int64)
        self.targets = np.zeros((capacity, tv.NUM_OUTPUTS))
        self.se = np.zeros(capacity)
        self.size = 0
        self.next = 0

    def add(self, boards: np.ndarray, movers: np.ndarray, targets: np.ndarray, se: np.ndarray):
        slots = (self.next + np.arange(len(movers))) % self.capacity
        for name, values in zip(self.FIELDS, (boards, movers, targets, se), strict=True):
            getattr(self, name)[slots] = values
        self.next = int((self.next + len(movers)) % self.capacity)
        self.size = min(self.capacity, self.size + len(movers))

    def tensors(self) -> dict[str, Any]:
        import torch

        return {
            f"data.{n}": torch.from_numpy(getattr(self, n)[: self.size].copy()) for n in self.FIELDS
        }

    def load(self, tensors: dict[str, Any], size: int, next_slot: int) -> None:
        for name in self.FIELDS:
            getattr(self, name)[:size] = tensors[f"data.{name}"].numpy()
        self.size, self.next = size, next_slot


# ----------------------------------------------------------------------------------------------
# The trainer (driven by the run loop)
# ----------------------------------------------------------------------------------------------
@dataclass
class RolloutState:
    """Everything a resumed run needs besides the config (``global_step``: positions rolled
    out and learnt from)."""

    params: dict[str, np.ndarray]
    rng: np.random.Generator
    data: RolloutData
    arch: tv.TDArch
    iteration: int = 0
    global_step: int = 0
    #: games of the TD training behind init_from (its metadata's games_total)
    earlier_games: int = 0
    metrics: dict[str, float] = field(default_factory=dict)
    best_score: float = -1e9
    evals: list[dict[str, Any]] = field(default_factory=list)
    seconds: dict[str, float] = field(
        default_factory=lambda: {"rollout_wall": 0.0, "fit_wall": 0.0, "cpu": 0.0, "eval_wall": 0.0}
    )


def _tensors(params: dict[str, np.ndarray]) -> dict[str, Any]:
    import torch

    return {f"model.{n}": torch.from_numpy(np.ascontiguousarray(a)) for n, a in params.items()}


class RolloutTrainer(IterationTrainer):
    """Rollout-target training for :func:`spieltisch.train.run_loop.run`: a round is one
    iteration (steps 1-4 of the module docstring), the progress units are rolled-out
    positions. With ``resume`` the weights come from the run's checkpoint."""

    unit = "pos"
    bar_smoothing = 0.1
    resumable_keys = frozenset(RESUMABLE_CHANGES)
    checkpoint_on_evaluation = True

    def __init__(self, cfg: RolloutConfig) -> None:
        self.cfg = cfg
        arch, params, games = tv.load_td_net(cfg.init_from)
        #: the fixed net whose 2-ply values are the targets (None: the trained net's own)
        self.teacher = tv.load_td_net(cfg.teacher)[1] if cfg.teacher is not None else None
        self.state = RolloutState(
            params, np.random.default_rng(cfg.seed), RolloutData(cfg.replay_size), arch,
            earlier_games=games,
        )  # fmt: skip

    @property
    def total_units(self) -> int:
        return self.cfg.total_positions

    def position(self) -> str:
        return f"iteration {self.state.iteration}, position {self.state.global_step}"

    def lr(self) -> float:
        """The step size now: linear from lr to lr_final over total_positions."""
        cfg = self.cfg
        done = min(self.state.global_step / cfg.total_positions, 1.0)
        return cfg.lr + (cfg.lr_final - cfg.lr) * done

    # --- one iteration ---
    def step(self, max_rounds: int) -> dict[str, float]:
        cfg, state = self.cfg, self.state
        n = min(cfg.positions_per_iteration, cfg.total_positions - state.global_step)
        t0, c0 = time.perf_counter(), time.process_time()
        positions = self_play_afterstates(
            state.params, n, cfg.sample_prob, state.rng, threads=cfg.rollout_threads
        )
        boards = np.stack([p.s[: k.BOARD_SIZE] for p in positions]).astype(np.int32)
        movers = np.array([1 - p.turn for p in positions], dtype=np.int64)
        if cfg.target == "ply2":  # exact over the dice: no sampling error
            judge = state.params if self.teacher is None else self.teacher
            targets, se = tv.outputs_2ply(judge, boards, movers), np.zeros(n)
        else:
            seeds = state.rng.integers(0, 2**62, size=n)
            on_roll, se = rollout_positions(
                positions, state.params, cfg.rollout_games, seeds, cfg.truncate,
                threads=cfg.rollout_threads,
            )  # fmt: skip
            targets = mover_targets(on_roll)
        t1 = time.perf_counter()
        state.data.add(boards, movers, targets, se)
        samples = round(cfg.fit_passes * n)
        order = state.rng.integers(0, state.data.size, size=samples)
        lr = self.lr()
        data = state.data
        mse = fit_samples(
            *tv.net_arrays(state.params), data.boards, data.movers, data.targets, order, lr
        )
        t2 = time.perf_counter()
        state.seconds["rollout_wall"] += t1 - t0
        state.seconds["fit_wall"] += t2 - t1
        state.seconds["cpu"] += time.process_time() - c0
        state.iteration += 1
        state.global_step += n
        races = float(np.mean([bool(tv.tf.is_race(b)) for b in boards]))
        return {
            "loss/mse": float(mse),
            "rollout/equity_se": float(np.mean(se)),
            "rollout/race_share": races,
            "throughput/positions_per_s": n / max(t2 - t0, 1e-9),
            "charts/lr": lr,
        }

    def postfix(self, metrics: dict[str, float]) -> dict[str, str]:
        post = {"mse": f"{metrics['loss/mse']:.4f}"}
        if self.state.evals:
            post["ppg"] = f"{self.state.evals[-1]['ppg']:+.3f}"
        return post

    # --- evaluations (the arena plays checkpoint files) ---
    def evaluate(self, num_games: int, seed: int) -> Evaluation:
        step = self.state.global_step
        return checkpoint_evaluation(self, num_games, seed, "positions", step, f"position {step}")

    def final_evaluation(
        self, final: Path, best: Path | None, num_games: int, seed: int
    ) -> Evaluation:
        """The final net (and the best, if kept) against ``eval_opponent``."""
        report: dict[str, Any] = {"positions": self.state.global_step}
        metrics: dict[str, float] = {}
        if num_games:
            for name, path in (("final", final), ("best", best)):
                if path is None:
                    continue
                ev = arena_eval(
                    path, self.cfg.eval_opponent, num_games, seed, self.cfg.eval_workers
                )
                report[name] = ev
                metrics.update({f"{name}/{key}": ev[key] for key in ("ppg", "win_rate")})
        return Evaluation(metrics, report=report)

    @property
    def opponent_names(self) -> list[str]:
        return [self.cfg.eval_opponent]

    def report_lines(self, report: dict[str, Any]) -> list[str]:
        lines = []
        for name in ("final", "best"):
            ev = report.get(name)
            if ev:
                lines.append(
                    f"{name.capitalize()} net: {ev['games']:,} games against {ev['opponent']} "
                    f"(seats swapped, paired dice): {ev['ppg']:+.3f} points per game"
                    f"{ppg_interval(ev, ', 95% interval ')}; "
                    f"{ev['win_rate']:.1%} won"
                )
        return lines or ["No final evaluation (final_eval_games: 0)."]

    # --- checkpoints ---
    def checkpoint_name(self) -> str:
        return f"position_{self.state.global_step:012d}"

    def _meta(self, kind: str) -> dict[str, Any]:
        cfg, state = self.cfg, self.state
        counters = {
            "iteration": state.iteration,
            "global_step": state.global_step,
            "positions": state.global_step,
            "games_total": state.earlier_games,
            "init_from": cfg.init_from,
        }
        return td_net_meta(cfg, state.arch, kind, counters, state.metrics, state.seconds)

    def save(self, path: Path) -> None:
        state = self.state
        meta = self._meta("training")
        meta["trainer"] = {
            "rng": state.rng.bit_generator.state,
            "evals": state.evals,
            "best_score": state.best_score,
            "data_size": state.data.size,
            "data_next": state.data.next,
        }
        save_checkpoint(path, meta, {**_tensors(state.params), **state.data.tensors()})

    def restore(self, path: Path) -> None:
        state = self.state
        ckpt = load_training_checkpoint(path, self.cfg, RESUMABLE_CHANGES)
        meta = ckpt.meta
        try:
            state.arch = tv.TDArch.from_json(meta["arch"])
            model = {n: t for n, t in ckpt.tensors.items() if n.startswith("model.")}
            state.params = tv.params_from_tensors(state.arch, model, str(path))
            trainer = meta["trainer"]
            state.data.load(ckpt.tensors, int(trainer["data_size"]), int(trainer["data_next"]))
        except (KeyError, TypeError, ValueError) as err:
            raise CheckpointError(f"{path}: bad rollout-training checkpoint: {err}") from err
        state.rng.bit_generator.state = trainer["rng"]
        state.evals = list(trainer.get("evals", []))
        state.best_score = float(trainer.get("best_score", -1e9))
        state.iteration = int(meta["iteration"])
        state.global_step = int(meta["global_step"])
        state.earlier_games = int(meta.get("games_total", 0))
        state.metrics = dict(meta.get("metrics", {}))
        state.seconds.update(meta.get("seconds", {}))

    def save_policy(self, path: Path) -> None:
        save_checkpoint(path, self._meta("policy"), _tensors(self.state.params))


def train(
    cfg: RolloutConfig, resume: bool = False, log: Any = print, overwrite: bool = False
) -> dict[str, Any]:
    """Run (or resume) rollout-target training; returns the final metrics (see
    :func:`spieltisch.train.run_loop.run`, also for ``overwrite``)."""
    trainer = RolloutTrainer(cfg)
    if not resume:
        log(f"improving {cfg.init_from} ({trainer.state.earlier_games} TD games behind it)")
    return run(trainer, resume, log, overwrite)
