"""TD(lambda) self-play over afterstates for backgammon, TD-Gammon style (read top to bottom).

The learner is a value network over afterstates (:mod:`spieltisch.agents.backgammon.td_value`: 198
inputs from the mover's view, ``hidden`` sigmoid units, 5 sigmoid outputs = the mover's
win / gammon / backgammon probabilities; with ``features: true`` 17 hand-designed inputs more,
and with ``race_hidden > 0`` a second network for race positions, each afterstate valued by the
network of its class, see :func:`train_games_net`). One game of training:

1. Start from the opening position; roll the dice from the run's generator (the engine's chance
   kernels, :mod:`spieltisch.envs.backgammon.rules`).
2. **Choose a play.** The engine's play generator lists every distinct legal play of the roll
   (whole plays, compulsory-play rules included) and the board after each; the net values each
   afterstate for the mover; the player on turn takes the one of highest equity (greedy, no
   exploration: the dice explore, as in TD-Gammon). A play that bears off the last checker is
   valued by its exact result. Both seats use the same net.
3. **TD error.** Let ``y_t`` be the outputs of the chosen afterstate ``x_t`` (in its mover's
   view). The previous afterstate ``x_{t-1}`` was the opponent's, so its target is ``y_t`` seen
   from the other side, ``F(y_t) = (1 - y0, y3, y4, y1, y2)``: ``delta = F(y_t) - y_{t-1}``.
   At the end of the game ``y_t`` is the exact result.
4. **Update with eligibility traces**, one trace per output: ``w += lr * sum_o delta_o e_o``.
   Then ``e <- lambda * L e + grad y_t`` where ``L`` is the linear part of ``F`` (it negates
   the win trace and swaps the gammon traces of the two sides), so each past afterstate's trace
   is kept in the view of the current one. This is the backward view of the lambda-return with
   the perspective switching every move; for ``lambda = 1`` it sums to a Monte-Carlo update
   towards the final result of every afterstate. Traces start at zero every game.

Everything of one game runs in one compiled kernel (:func:`train_games`) calling the engine's
kernels and the net's kernels; Python (:class:`TDTrainer`, driven by the shared run loop of
:mod:`spieltisch.train.run_loop`) only hands it chunks of games, logs, evaluates and
checkpoints. Because traces are reset every game, the trainer's whole state between games is
the weights, the generator and the counters: a checkpoint is exact, and ``--resume`` continues
as if the run had not stopped (and the chunking never changes the result).

Every ``eval_interval`` games the current weights play ``eval_opponent`` (``pubeval``) in the
arena (seats swapped, paired dice) and the points per game with its 95% interval go to
TensorBoard; the final evaluation is written next to the final checkpoint (``final_eval.json``).
"""

from __future__ import annotations

import platform
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numba
import numpy as np
from spieltisch.agents.arena.provenance import git_revision
from spieltisch.agents.arena.report import interval_text
from spieltisch.agents.backgammon import td_value as tv
from spieltisch.agents.neural.checkpoint import CheckpointError, save_checkpoint
from spieltisch.envs.backgammon import rules as k
from spieltisch.envs.backgammon.engine import BackgammonGame
from spieltisch.train.config import RESUMABLE_RUN_KEYS, TDConfig, config_to_dict
from spieltisch.train.run_files import checkpoint_dir, load_training_checkpoint
from spieltisch.train.run_loop import Evaluation, StateTrainer, run

#: config keys that may differ between a run and its resumption (they leave the steps so far
#: alone; a new total also sets where a learning-rate schedule ends, from the resume point on)
RESUMABLE_CHANGES = {
    *RESUMABLE_RUN_KEYS,
    "total_games",
    "stop_after_games",
    "eval_workers",
    "chunk_games",
}
#: the run's statistics per game returned by the kernel (columns of ``stats``)
ST_MOVES, ST_DELTA2, ST_STEPS, ST_POINTS0, ST_GAMMON = range(5)
MAX_MOVES = 10_000  # safety net: a game still running after this many plays is abandoned


# ----------------------------------------------------------------------------------------------
# The compiled learner
# ----------------------------------------------------------------------------------------------
@numba.njit(cache=True, nogil=True)
def _td_update(W1, b1, W2, b2, eW1, eb1, eW2, eb2, active, delta, lr, lam, decay):
    """``w += lr * sum_o delta_o e_o``; then (``decay``) ``e <- lam * L e`` (the gradient is added
    by the caller). One pass over the trace rows in use."""
    hidden = b1.shape[0]
    d0, d1, d2, d3, d4 = delta[0], delta[1], delta[2], delta[3], delta[4]
    for i in range(W1.shape[0]):
        if not active[i]:
            continue
        for j in range(hidden):
            a0 = eW1[0, i, j]
            a1 = eW1[1, i, j]
            a2 = eW1[2, i, j]
            a3 = eW1[3, i, j]
            a4 = eW1[4, i, j]
            W1[i, j] += lr * (d0 * a0 + d1 * a1 + d2 * a2 + d3 * a3 + d4 * a4)
            if decay:
                eW1[0, i, j] = -lam * a0
                eW1[1, i, j] = lam * a3
                eW1[2, i, j] = lam * a4
                eW1[3, i, j] = lam * a1
                eW1[4, i, j] = lam * a2
    for j in range(hidden):
        a0, a1, a2, a3, a4 = eb1[0, j], eb1[1, j], eb1[2, j], eb1[3, j], eb1[4, j]
        b1[j] += lr * (d0 * a0 + d1 * a1 + d2 * a2 + d3 * a3 + d4 * a4)
        if decay:
            eb1[0, j] = -lam * a0
            eb1[1, j] = lam * a3
            eb1[2, j] = lam * a4
            eb1[3, j] = lam * a1
            eb1[4, j] = lam * a2
    for o in range(tv.NUM_OUTPUTS):
        for j in range(hidden):
            a0, a1, a2 = eW2[0, o, j], eW2[1, o, j], eW2[2, o, j]
            a3, a4 = eW2[3, o, j], eW2[4, o, j]
            W2[o, j] += lr * (d0 * a0 + d1 * a1 + d2 * a2 + d3 * a3 + d4 * a4)
            if decay:
                eW2[0, o, j] = -lam * a0
                eW2[1, o, j] = lam * a3
                eW2[2, o, j] = lam * a4
                eW2[3, o, j] = lam * a1
                eW2[4, o, j] = lam * a2
        a0, a1, a2, a3, a4 = eb2[0, o], eb2[1, o], eb2[2, o], eb2[3, o], eb2[4, o]
        b2[o] += lr * (d0 * a0 + d1 * a1 + d2 * a2 + d3 * a3 + d4 * a4)
        if decay:
            eb2[0, o] = -lam * a0
            eb2[1, o] = lam * a3
            eb2[2, o] = lam * a4
            eb2[3, o] = lam * a1
            eb2[4, o] = lam * a2


@numba.njit(cache=True, nogil=True)
def _add_gradient(W2, x, nz, n_nz, h, y, eW1, eb1, eW2, eb2, active):
    """``e += grad y`` at the last forward pass (only the rows of the active inputs of W1)."""
    hidden = h.shape[0]
    for o in range(tv.NUM_OUTPUTS):
        c = y[o] * (1.0 - y[o])
        eb2[o, o] += c
        for j in range(hidden):
            eW2[o, o, j] += c * h[j]
    for t in range(n_nz):
        active[nz[t]] = True
    for o in range(tv.NUM_OUTPUTS):
        c = y[o] * (1.0 - y[o])
        for j in range(hidden):
            g = c * W2[o, j] * h[j] * (1.0 - h[j])
            eb1[o, j] += g
            for t in range(n_nz):
                i = nz[t]
                eW1[o, i, j] += g * x[i]


@numba.njit(cache=True, nogil=True)
def train_games(
    W1, b1, W2, b2, initial, n_games, first_game, lr0, lr1, decay_games, lam, rng, ws, stats
):
    """:func:`train_games_net` for a net without a race network."""
    rW1, rb1, rW2, rb2 = tv.no_race_net(W1)
    train_games_net(
        W1, b1, W2, b2, rW1, rb1, rW2, rb2, initial, n_games, first_game, lr0, lr1,
        decay_games, lam, rng, ws, stats,
    )  # fmt: skip


@numba.njit(cache=True, nogil=True)
def train_games_net(
    W1, b1, W2, b2, rW1, rb1, rW2, rb2, initial, n_games, first_game, lr0, lr1, decay_games,
    lam, rng, ws, stats,
):  # fmt: skip
    """Play ``n_games`` self-play games from the state vector ``initial`` and learn from each
    (steps 1-4 of the module docstring). Games are numbered from ``first_game`` (for the
    learning-rate schedule: linear from ``lr0`` to ``lr1`` over ``decay_games`` games, then
    ``lr1``). Dice come from ``rng``; ``ws`` is the engine's play-generator workspace
    (:func:`kernels.new_workspace`). Writes one row of ``stats`` per game.

    Every afterstate is valued by the network of its class (:func:`td_value.evaluate_afterstate`;
    ``rW1``...: the race network, empty for a net without one). Each network has its own
    eligibility traces; the TD error of every step updates both through their traces, so the
    target crosses from the contact network to the race network as a game becomes a race."""
    hidden = b1.shape[0]
    rhidden = rb1.shape[0]
    n_in = W1.shape[0]
    no = tv.NUM_OUTPUTS
    boards = np.zeros((k.MAX_PLAYS, k.BOARD_SIZE), dtype=np.int32)
    eW1 = np.zeros((no, n_in, hidden))
    eb1 = np.zeros((no, hidden))
    eW2 = np.zeros((no, no, hidden))
    eb2 = np.zeros((no, no))
    active = np.zeros(n_in, dtype=np.bool_)
    reW1 = np.zeros((no, n_in, rhidden))
    reb1 = np.zeros((no, rhidden))
    reW2 = np.zeros((no, no, rhidden))
    reb2 = np.zeros((no, no))
    ractive = np.zeros(n_in, dtype=np.bool_)
    x = np.zeros(n_in)
    nz = np.zeros(n_in, dtype=np.int64)
    h = np.zeros(hidden)
    rh = np.zeros(rhidden)
    y = np.zeros(no)
    fy = np.zeros(no)
    prev = np.zeros(no)
    delta = np.zeros(no)
    n_nz = 0
    for g in range(n_games):
        gi = first_game + g
        lr = lr1
        if gi < decay_games:
            lr = lr0 + (lr1 - lr0) * gi / decay_games
        s = initial.copy()
        eW1[:] = 0.0
        eb1[:] = 0.0
        eW2[:] = 0.0
        eb2[:] = 0.0
        active[:] = False
        used_main = False
        used_race = False
        have_prev = False
        moves = 0
        d2sum = 0.0
        steps = 0
        while moves < MAX_MOVES:
            # 1. roll
            d1, dd = k.dice_of(s, rng.integers(0, 180))
            k.put_dice(s, d1, dd)
            k.generate(s, ws, False)
            mover = s[k.M_TURN]
            n = s[k.M_NPLAYS]
            k.play_boards(s, ws, boards)
            # 2. the afterstate of highest equity
            bi = tv.best_afterstate(
                W1, b1, W2, b2, rW1, rb1, rW2, rb2, boards, n, mover, x, nz, h, rh, y
            )
            row = boards[bi]
            cls, n_nz = tv.evaluate_afterstate(
                W1, b1, W2, b2, rW1, rb1, rW2, rb2, row, mover, x, nz, h, rh, y
            )
            final = cls == tv.CLASS_FINAL
            # 3./4. TD error of the previous afterstate, update, traces
            if have_prev:
                tv.flip(y, fy)
                for o in range(no):
                    delta[o] = fy[o] - prev[o]
                    d2sum += delta[o] * delta[o]
                steps += 1
                if used_main:
                    _td_update(
                        W1, b1, W2, b2, eW1, eb1, eW2, eb2, active, delta, lr, lam, not final
                    )
                if used_race:
                    _td_update(
                        rW1, rb1, rW2, rb2, reW1, reb1, reW2, reb2, ractive, delta, lr, lam,
                        not final,
                    )  # fmt: skip
            k.play(s, bi, ws)
            moves += 1
            if final:
                break
            if not have_prev:
                have_prev = True
            if cls == tv.CLASS_RACE:
                if not used_race:
                    used_race = True
                    reW1[:] = 0.0
                    reb1[:] = 0.0
                    reW2[:] = 0.0
                    reb2[:] = 0.0
                    ractive[:] = False
                _add_gradient(rW2, x, nz, n_nz, rh, y, reW1, reb1, reW2, reb2, ractive)
            else:
                used_main = True
                _add_gradient(W2, x, nz, n_nz, h, y, eW1, eb1, eW2, eb2, active)
            for o in range(no):
                prev[o] = y[o]
        stats[g, ST_MOVES] = moves
        stats[g, ST_DELTA2] = d2sum
        stats[g, ST_STEPS] = steps
        pts = s[k.M_POINTS] if s[k.M_PHASE] == k.PH_OVER else 0
        stats[g, ST_POINTS0] = pts if s[k.M_WINNER] == 0 else -pts
        stats[g, ST_GAMMON] = 1.0 if s[k.M_RESULT] >= k.RESULT_GAMMON else 0.0


def initial_vector() -> np.ndarray:
    """The engine's state vector of a new game (before the opening roll), no cube."""
    return BackgammonGame().new_initial_state().s.copy()


# ----------------------------------------------------------------------------------------------
# Trainer state and checkpoints
# ----------------------------------------------------------------------------------------------
@dataclass
class TDState:
    """Everything a resumed run needs besides the config."""

    params: dict[str, np.ndarray]
    rng: np.random.Generator
    games: int = 0
    moves: int = 0
    #: games of earlier stages behind the starting weights (init_from)
    earlier_games: int = 0
    metrics: dict[str, float] = field(default_factory=dict)
    evals: list[dict[str, Any]] = field(default_factory=list)
    #: seconds spent so far over all resumptions: training (wall, CPU), evaluations (wall)
    seconds: dict[str, float] = field(
        default_factory=lambda: {"train_wall": 0.0, "train_cpu": 0.0, "eval_wall": 0.0}
    )


def env_version() -> str:
    from spieltisch.envs import GAMES

    return GAMES["backgammon"]


def td_net_meta(
    cfg: Any,
    arch: tv.TDArch,
    kind: str,
    counters: dict[str, Any],
    metrics: dict[str, float],
    seconds: dict[str, float],
) -> dict[str, Any]:
    """The metadata of a checkpoint of a TD value net (``kind``: training or policy), the same
    for every trainer of one (TD, rollout targets, backgammon AlphaZero): what was trained and
    how, the run's ``counters`` (iteration, global_step, games, ...), its latest ``metrics`` and
    ``seconds``, and the versions it ran with."""
    return {
        "kind": kind,
        "game": cfg.game,
        "env_version": env_version(),
        "game_options": dict(cfg.game_options),
        "arch": arch.to_json(),
        "algorithm": cfg.algorithm,
        **counters,
        "config": config_to_dict(cfg),
        "git_revision": git_revision(),
        "metrics": dict(metrics),
        "seconds": dict(seconds),
        "numba_version": numba.__version__,
        "numpy_version": np.__version__,
        "python": platform.python_version(),
    }


def checkpoint_meta(cfg: TDConfig, state: TDState, kind: str) -> dict[str, Any]:
    counters = {
        "iteration": state.games,
        "global_step": state.games,
        "games": state.games,
        "games_total": state.earlier_games + state.games,
        "init_from": cfg.init_from,
        "moves": state.moves,
    }
    return td_net_meta(cfg, arch_of(cfg), kind, counters, state.metrics, state.seconds)


def arch_of(cfg: TDConfig) -> tv.TDArch:
    """The network architecture of a config (``hidden``, ``features``, ``race_hidden``)."""
    return tv.TDArch.make(cfg.hidden, cfg.features, cfg.race_hidden)


def _tensors(params: dict[str, np.ndarray]) -> dict[str, Any]:
    import torch

    return {f"model.{n}": torch.from_numpy(np.ascontiguousarray(a)) for n, a in params.items()}


def save_trainer(path: Path, cfg: TDConfig, state: TDState) -> None:
    """A training checkpoint (also loadable as an agent): weights, counters, generator state."""
    meta = checkpoint_meta(cfg, state, "training")
    meta["trainer"] = {"rng": state.rng.bit_generator.state, "evals": state.evals}
    save_checkpoint(path, meta, _tensors(state.params))


def restore_trainer(path: Path, cfg: TDConfig, state: TDState) -> None:
    ckpt = load_training_checkpoint(path, cfg, RESUMABLE_CHANGES)
    meta = ckpt.meta
    try:
        arch = tv.TDArch.from_json(meta["arch"])
        state.params = tv.params_from_tensors(arch, ckpt.tensors, str(path))
    except (KeyError, TypeError, ValueError) as err:
        raise CheckpointError(f"{path}: bad TD value net: {err}") from err
    state.rng.bit_generator.state = meta["trainer"]["rng"]
    state.evals = list(meta["trainer"].get("evals", []))
    state.games = int(meta["games"])
    state.earlier_games = int(meta.get("games_total", state.games)) - state.games
    state.moves = int(meta["moves"])
    state.metrics = dict(meta.get("metrics", {}))
    state.seconds.update(meta.get("seconds", {}))


# ----------------------------------------------------------------------------------------------
# Evaluation (the arena)
# ----------------------------------------------------------------------------------------------
def ppg_interval(ev: dict[str, Any], label: str = " ") -> str:
    """The 95% interval of an :func:`arena_eval` result's points per game as text after the
    number, as the arena's report writes it (:func:`~spieltisch.agents.arena.report.
    interval_text`: none from one seed, its 2 games with the seats swapped)."""
    return interval_text(ev["ppg_low"], ev["ppg_high"], ev["games"] // 2, label)


def arena_eval(
    checkpoint: Path, opponent: str, games: int, seed: int, workers: int = 1, params: str = ""
) -> dict[str, Any]:
    """``checkpoint:<path>`` (followed by ``params``, e.g. ``":sims=16"``) against ``opponent``
    in the arena: ``games // 2`` seeds, seats swapped, paired dice. Returns points per game with
    its 95% interval, win rate, gammons."""
    from spieltisch.agents.arena import evaluate

    seeds = max(1, games // 2)
    report = evaluate(
        "backgammon", [f"checkpoint:{checkpoint}{params}", opponent], seeds=seeds, seed=seed,
        workers=workers,
    )  # fmt: skip
    p = report.pairs[0]
    return {
        "opponent": opponent,
        "games": p.games,
        "arena_seed": seed,
        "ppg": p.mean_reward,
        "ppg_low": p.reward_low,
        "ppg_high": p.reward_high,
        "win_rate": p.win_rate,
        "wins": p.wins,
        "losses": p.losses,
        "win_low": p.win_low,
        "win_high": p.win_high,
        "gammon_won_rate": p.extra.get("gammon_won_rate"),
        "gammon_lost_rate": p.extra.get("gammon_lost_rate"),
    }


def checkpoint_evaluation(
    trainer: Any, num_games: int, seed: int, progress_key: str, progress: int, where: str
) -> Evaluation:
    """An evaluation during a run of a trainer of TD value nets (TD, rollout targets): its
    current net saved as a training checkpoint (the arena plays files) and played against
    ``cfg.eval_opponent`` (:func:`arena_eval`); the result, with ``progress_key: progress``,
    joins ``trainer.state.evals``, its time ``state.seconds["eval_wall"]``. The score is the
    points per game; ``where`` starts the log line (``"game 20000"``)."""
    cfg, state = trainer.cfg, trainer.state
    path = checkpoint_dir(Path(cfg.run_dir)) / trainer.checkpoint_name()
    trainer.save(path)
    started = time.perf_counter()
    ev = arena_eval(path, cfg.eval_opponent, num_games, seed, cfg.eval_workers)
    state.seconds["eval_wall"] += time.perf_counter() - started
    ev[progress_key] = progress
    state.evals.append(ev)
    metrics = {f"eval/{key}": ev[key] for key in ("ppg", "ppg_low", "ppg_high", "win_rate")}
    line = (
        f"{where}: vs {cfg.eval_opponent} {ev['ppg']:+.3f} ppg{ppg_interval(ev)} over "
        f"{ev['games']} games"
    )
    return Evaluation(metrics, score=ev["ppg"], line=line)


# ----------------------------------------------------------------------------------------------
# The trainer (driven by the run loop)
# ----------------------------------------------------------------------------------------------
class TDTrainer(StateTrainer):
    """TD(lambda) for :func:`spieltisch.train.run_loop.run`: a round and a progress unit are one
    game; a step plays up to ``chunk_games`` games in the compiled trainer. With ``resume`` the
    weights come from the run's checkpoint, so ``init_from`` is not read."""

    unit = "game"
    bar_smoothing = 0.05
    resumable_keys = frozenset(RESUMABLE_CHANGES)
    #: the arena evaluates a checkpoint file; saved again afterwards, it records the evaluation
    checkpoint_on_evaluation = True

    def __init__(self, cfg: TDConfig, resume: bool = False, log: Any = print) -> None:
        self.cfg = cfg
        rng = np.random.default_rng(cfg.seed)
        params = tv.init_params(arch_of(cfg), rng, cfg.init_scale)
        self.state = TDState(params=params, rng=rng)
        if cfg.init_from and not resume:
            games = self._start_from(cfg.init_from)
            log(f"initialised from {cfg.init_from} ({games} games)")
        self.initial = initial_vector()
        self.workspace = k.new_workspace()

    def _start_from(self, name: str) -> int:
        """Take the weights of the TD net ``name`` (a checkpoint's path or a shipped net: a
        second stage of training); returns the self-play games behind it."""
        arch, params, games = tv.load_td_net(name)
        if arch != arch_of(self.cfg):
            raise CheckpointError(
                f"init_from {name}: its network is {arch}, the config's {arch_of(self.cfg)}"
            )
        self.state.params = params
        self.state.earlier_games = games
        return games

    # --- where the run stands (the state is what a checkpoint holds) ---
    @property
    def rounds(self) -> int:
        return self.state.games

    @property
    def units(self) -> int:
        return self.state.games

    @property
    def total_units(self) -> int:
        return self.cfg.total_games

    @property
    def stop_after_rounds(self) -> int | None:
        return self.cfg.stop_after_games

    def position(self) -> str:
        return f"game {self.state.games}"

    def summary(self) -> dict[str, Any]:
        state = self.state
        return {
            "games": state.games,
            "iteration": state.games,
            "global_step": state.games,
            "seconds": dict(state.seconds),
        }

    # --- a chunk of games ---
    def step(self, max_rounds: int) -> dict[str, float]:
        """Play and learn from up to ``chunk_games`` games (chunking does not change the result:
        traces are per game, the generator is sequential)."""
        cfg, state, p = self.cfg, self.state, self.state.params
        n = min(cfg.chunk_games, cfg.total_games - state.games, max_rounds)
        stats = np.zeros((n, 5))
        t0, c0 = time.perf_counter(), time.process_time()
        train_games_net(
            *tv.net_arrays(p), self.initial, n, state.games,
            cfg.lr, cfg.lr_final, cfg.lr_decay_games, cfg.lam, state.rng, self.workspace, stats,
        )  # fmt: skip
        elapsed = time.perf_counter() - t0
        state.seconds["train_wall"] += elapsed
        state.seconds["train_cpu"] += time.process_time() - c0
        state.games += n
        state.moves += int(stats[:, ST_MOVES].sum())
        steps = max(1.0, stats[:, ST_STEPS].sum())
        return {
            "loss/td_error_rms": float(np.sqrt(stats[:, ST_DELTA2].sum() / (5 * steps))),
            "throughput/games_per_s": n / max(elapsed, 1e-9),
            "throughput/games_per_hour": 3600 * n / max(elapsed, 1e-9),
            "charts/moves_per_game": float(stats[:, ST_MOVES].mean()),
            "charts/gammon_rate": float(stats[:, ST_GAMMON].mean()),
            "charts/lr": cfg.lr_final
            if state.games >= cfg.lr_decay_games
            else cfg.lr + (cfg.lr_final - cfg.lr) * state.games / cfg.lr_decay_games,
        }

    def postfix(self, metrics: dict[str, float]) -> dict[str, str]:
        post = {"td_rms": f"{metrics['loss/td_error_rms']:.3f}"}
        if self.state.evals:
            post["ppg"] = f"{self.state.evals[-1]['ppg']:+.3f}"
        return post

    # --- evaluations (the arena plays checkpoint files) ---
    def evaluate(self, num_games: int, seed: int) -> Evaluation:
        """The current weights against ``eval_opponent``; the score is the points per game."""
        state = self.state
        return checkpoint_evaluation(
            self, num_games, seed, "training_games", state.games, f"game {state.games}"
        )

    def final_evaluation(
        self, final: Path, best: Path | None, num_games: int, seed: int
    ) -> Evaluation:
        """The final weights (the checkpoint ``final``) against ``eval_opponent``, unless
        ``final_eval_games`` is 0."""
        report: dict[str, Any] = {"training_games": self.state.games}
        metrics: dict[str, float] = {}
        if num_games:
            ev = arena_eval(final, self.cfg.eval_opponent, num_games, seed, self.cfg.eval_workers)
            report.update(ev)
            metrics = {f"final/{key}": ev[key] for key in ("ppg", "ppg_low", "ppg_high")}
            metrics["final/win_rate"] = ev["win_rate"]
        return Evaluation(metrics, report=report)

    @property
    def opponent_names(self) -> list[str]:
        return [self.cfg.eval_opponent]

    def report_lines(self, report: dict[str, Any]) -> list[str]:
        """The final weights against ``eval_opponent``: points per game with its interval."""
        if "ppg" not in report:
            return ["No final evaluation (final_eval_games: 0)."]
        return [
            f"Final evaluation: {report['games']:,} games against {report['opponent']} (seats "
            f"swapped, paired dice): {report['ppg']:+.3f} points per game"
            f"{ppg_interval(report, ', 95% interval ')}; "
            f"{report['win_rate']:.1%} of the games won"
        ]

    # --- checkpoints ---
    def checkpoint_name(self) -> str:
        return f"games_{self.state.games:09d}"

    def save(self, path: Path) -> None:
        save_trainer(path, self.cfg, self.state)

    def restore(self, path: Path) -> None:
        restore_trainer(path, self.cfg, self.state)

    def save_policy(self, path: Path) -> None:
        save_checkpoint(
            path, checkpoint_meta(self.cfg, self.state, "policy"), _tensors(self.state.params)
        )


def train(
    cfg: TDConfig, resume: bool = False, log: Any = print, overwrite: bool = False
) -> dict[str, Any]:
    """Run (or resume) a TD(lambda) training run; returns the final metrics (see
    :func:`spieltisch.train.run_loop.run`, also for ``overwrite``)."""
    if cfg.game_options.get("cube", False):
        raise ValueError("TD training plays without the doubling cube (game_options.cube)")
    return run(TDTrainer(cfg, resume, log), resume, log, overwrite)
