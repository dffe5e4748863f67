"""Gumbel AlphaZero for backgammon: self-play with the chance-node search in the loop
(``algorithm: alphazero``, ``game: backgammon``).

The Kalaha / Hus / HiLo trainer (:mod:`spieltisch.train.alphazero`) learns a policy-value MLP
over a fixed action space. Backgammon's actions are whole plays, as many as a roll allows, and
its search (:class:`~spieltisch.agents.backgammon.chance_search.ChanceSearch`, dice as explicit
chance nodes) takes its priors and leaf values from one **afterstate value net**, the TD net of
:mod:`spieltisch.agents.backgammon.td_value` (198 inputs from the mover's view, ``hidden``
sigmoid units, 5 sigmoid outputs: the mover's win / gammon / backgammon probabilities and its
gammon / backgammon losses; equity ``u = 2 y0 - 1 + y1 + y2 - y3 - y4``). That is the network
trained here, parameter for parameter (``W1``, ``b1``, ``W2``, ``b2``), so its checkpoints are TD
checkpoints: ``checkpoint:PATH`` plays the net 1-ply, ``checkpoint:PATH:sims=N`` searches. One
iteration, read top to bottom:

1. :func:`self_play`: ``num_games`` cubeless games in parallel, played to the end, every move of
   every game searched by ``ChanceSearch`` (``num_simulations``, root Gumbel noise of scale
   ``gumbel_scale``, the prior ``softmax(u(b) / temperature)`` over the plays' afterstates
   ``b``) and played as the search chose. Each *decision* is recorded with the afterstate boards
   of all its plays, the search's improved policy ``pi'`` over them (``softmax(logit +
   sigma(completedQ))``), the play made and, once the game is over, its **outcome** ``z`` seen
   from the mover: the five indicators ``(won, won a gammon or more, won a backgammon, lost a
   gammon or more, lost a backgammon)``. A game still running after ``max_turns`` moves is
   dropped (it has no outcome).
2. The decisions go into a replay buffer of the last ``replay_size`` decisions
   (:class:`DecisionReplay`: boards as int8 rows, encoded when sampled).
3. :func:`backgammon_alphazero_loss` on minibatches of ``batch_size`` decisions drawn from the
   buffer, ``ceil(sample_reuse * new / batch_size)`` Adam steps. With ``y(b)`` the net's five
   outputs of afterstate ``b``, ``b*`` the play made, ``T`` the search's temperature::

       L_value  = sum_{i=0..4} BCE(y_i(b*), z_i)        (binary cross-entropy per output)
       L_policy = -sum_b pi'(b) log softmax_b(u(b) / T)  (over the decision's plays)
       L = value_weight * L_value + policy_weight * L_policy

   averaged over the minibatch's decisions (``L_value`` over those whose play made did not end
   the game: a play that bears off the last checker is valued exactly, as in the search, and
   has no output to learn). The value loss is Monte-Carlo learning of the outcome; the policy
   loss moves the net's *differences* of equity between a position's plays towards the
   search's improved policy (softmax is shift-invariant, so it leaves the level to the value
   loss): the one value net learns the improved policy that its own priors feed. With
   ``reward: win`` the equity is ``2 y0 - 1`` (what the search maximises then).

The network is a torch mirror (:class:`TDNet`, float64) of :func:`td_value.forward` over
:func:`td_value.encode_inputs`; the search evaluates with the numba kernels on a copy of the
weights taken at the start of each iteration. ``init_checkpoint`` starts from a TD net
(``pretrained:backgammon`` or a path): a stage of search training after TD(lambda). Checkpoints
hold the net, Adam's state, the replay buffer and the generator, so ``--resume`` continues bit
for bit. Evaluations play the checkpoint (1-ply, or ``eval_simulations`` with search) against
``eval_opponents`` in the arena (:func:`spieltisch.train.td.arena_eval`: seats swapped, paired
dice); the mean points per game ranks them for ``keep_best``.
"""

from __future__ import annotations

import math
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numba
import numpy as np
import torch
from spieltisch.agents.backgammon import td_value as tv
from spieltisch.agents.backgammon.chance_search import CUBELESS, ChanceSearch, td_evaluator
from spieltisch.agents.neural.checkpoint import CheckpointError, load_checkpoint, save_checkpoint
from spieltisch.envs.backgammon import rules as k
from spieltisch.envs.backgammon.batch import BackgammonBatch
from spieltisch.train.alphazero import RESUMABLE_CHANGES, cosine_lr, resolve_device, search_config
from spieltisch.train.config import AlphaZeroConfig
from spieltisch.train.run_files import (
    load_training_checkpoint,
    optimizer_tensors,
    restore_optimizer,
)
from spieltisch.train.run_loop import (
    Evaluation,
    IterationTrainer,
    best_score_from_json,
    best_score_to_json,
    run,
)
from spieltisch.train.td import arena_eval, ppg_interval, td_net_meta

#: the five value targets of a decision: the outcome for its mover
NUM_TARGETS = tv.NUM_OUTPUTS


# ----------------------------------------------------------------------------------------------
# The network: a torch mirror of td_value.forward
# ----------------------------------------------------------------------------------------------
class TDNet(torch.nn.Module):
    """The TD value net in torch (float64): ``y = sigmoid(W2 sigmoid(x W1 + b1) + b2)`` for
    rows ``x`` of :func:`encode_afterstates`; the parameters have the TD checkpoint's names and
    shapes (``W1`` (inputs, hidden), ``b1``, ``W2`` (5, hidden), ``b2``)."""

    def __init__(self, params: dict[str, np.ndarray]) -> None:
        super().__init__()
        if "rb1" in params:
            raise ValueError("the AlphaZero trainer trains nets without a race network")
        for name in tv.PARAM_NAMES:
            value = torch.from_numpy(np.array(params[name], dtype=np.float64))
            self.register_parameter(name, torch.nn.Parameter(value))

    def logits(self, x: torch.Tensor) -> torch.Tensor:
        """The five outputs before their sigmoid."""
        h = torch.sigmoid(x @ self.W1 + self.b1)
        return h @ self.W2.T + self.b2

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.sigmoid(self.logits(x))

    def numpy_params(self) -> dict[str, np.ndarray]:
        """A copy of the weights for the numba kernels (the search's evaluator, the agent)."""
        return {n: getattr(self, n).detach().cpu().numpy().copy() for n in tv.PARAM_NAMES}


@numba.njit(cache=True, nogil=True)
def _encode_rows(boards, movers, x, final, exact, possible):
    """Row ``p``: the inputs of afterstate ``boards[p]`` for ``movers[p]`` into ``x[p]`` and
    0 in ``possible[p]`` for the outputs the position rules out, or, if that mover has borne
    off every checker, ``final[p]`` and the exact outputs into ``exact[p]`` (as
    :func:`td_value.evaluate_afterstate`)."""
    n_in = x.shape[1]
    nz = np.zeros(n_in, dtype=np.int64)
    row = np.zeros(n_in)
    for p in range(boards.shape[0]):
        m = movers[p]
        if boards[p, k.SIDE * m + k.OFF] == k.CHECKERS:
            final[p] = True
            tv.result_outputs(boards[p], m, exact[p])
            continue
        possible[p, :] = 1.0
        tv.rule_out_results(boards[p], m, possible[p])
        tv.encode_inputs(boards[p], m, row, nz)
        for i in range(n_in):
            x[p, i] = row[i]


def encode_afterstates(
    boards: np.ndarray, movers: np.ndarray, inputs: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """``(x, final, exact, possible)`` of afterstate ``boards`` (rows of 52 cells) for their
    ``movers``: the net's dense inputs ``(n, inputs)`` (zero rows where final), whether the
    mover has borne off every checker, for those rows the exact outputs ``(n, 5)``, and for the
    others 1 for each output the position allows, 0 for those it rules out
    (:func:`td_value.rule_out_results`): the net's outputs are ``sigmoid(z) * possible``."""
    n = len(boards)
    x = np.zeros((n, inputs))
    final = np.zeros(n, dtype=np.bool_)
    exact = np.zeros((n, NUM_TARGETS))
    possible = np.zeros((n, NUM_TARGETS))
    _encode_rows(
        np.ascontiguousarray(boards, dtype=np.int8),
        np.ascontiguousarray(movers, dtype=np.int64), x, final, exact, possible,
    )  # fmt: skip
    return x, final, exact, possible


def equity_of(y: torch.Tensor, win_only: bool) -> torch.Tensor:
    """The mover's value of outputs ``y`` (..., 5): equity, or ``2 y0 - 1`` (``reward: win``)."""
    if win_only:
        return 2.0 * y[..., 0] - 1.0
    return 2.0 * y[..., 0] - 1.0 + y[..., 1] + y[..., 2] - y[..., 3] - y[..., 4]


# ----------------------------------------------------------------------------------------------
# Replay buffer of decisions (a variable number of plays each)
# ----------------------------------------------------------------------------------------------
class DecisionReplay:
    """The last ``capacity`` decisions: per decision its number of plays (``counts``), mover,
    play made (``chosen``, an index into its plays) and outcome (``target``, five 0/1 for the
    mover); per play its afterstate board (int8) and improved-policy weight. Decisions are kept
    in play order, oldest first."""

    DECISION_FIELDS = ("counts", "mover", "chosen", "target")
    PLAY_FIELDS = ("boards", "policy")
    FIELDS = DECISION_FIELDS + PLAY_FIELDS

    def __init__(self, capacity: int) -> None:
        self.capacity = capacity
        self.counts = np.zeros(0, dtype=np.int64)
        self.mover = np.zeros(0, dtype=np.int8)
        self.chosen = np.zeros(0, dtype=np.int64)
        self.target = np.zeros((0, NUM_TARGETS), dtype=np.int8)
        self.boards = np.zeros((0, k.BOARD_SIZE), dtype=np.int8)
        self.policy = np.zeros(0, dtype=np.float32)
        self.starts = np.zeros(0, dtype=np.int64)

    @property
    def size(self) -> int:
        return len(self.counts)

    def add(self, decisions: dict[str, np.ndarray]) -> None:
        """Append ``decisions`` (the fields of :attr:`FIELDS`), then drop the oldest decisions
        beyond the capacity."""
        for name in self.FIELDS:
            old = getattr(self, name)
            setattr(self, name, np.concatenate([old, decisions[name].astype(old.dtype)]))
        drop = self.size - self.capacity
        if drop > 0:
            cut = int(self.counts[:drop].sum())
            for name in self.DECISION_FIELDS:
                setattr(self, name, getattr(self, name)[drop:].copy())
            for name in self.PLAY_FIELDS:
                setattr(self, name, getattr(self, name)[cut:].copy())
        self._index()

    def _index(self) -> None:
        self.starts = np.concatenate([[0], np.cumsum(self.counts)[:-1]]).astype(np.int64)

    def sample(self, batch_size: int, rng: np.random.Generator) -> dict[str, np.ndarray]:
        """``batch_size`` decisions drawn uniformly (with replacement): their plays' ``boards``,
        ``policy``, ``movers`` and ``segment`` (the decision's row in the minibatch), and per
        decision the flat index of the play made (``chosen``) and its ``target``."""
        rows = rng.integers(0, self.size, size=batch_size)
        counts = self.counts[rows]
        first = np.cumsum(counts) - counts  # each decision's first play in the minibatch
        plays = np.repeat(self.starts[rows] - first, counts) + np.arange(int(counts.sum()))
        return {
            "boards": self.boards[plays],
            "policy": self.policy[plays],
            "movers": np.repeat(self.mover[rows].astype(np.int64), counts),
            "segment": np.repeat(np.arange(batch_size), counts),
            "chosen": first + self.chosen[rows],
            "target": self.target[rows],
        }

    def tensors(self) -> dict[str, torch.Tensor]:
        """The buffer, for a checkpoint."""
        return {f"replay.{n}": torch.from_numpy(getattr(self, n).copy()) for n in self.FIELDS}

    def load(self, tensors: dict[str, torch.Tensor]) -> None:
        for name in self.FIELDS:
            setattr(self, name, tensors[f"replay.{name}"].numpy().copy())
        self._index()


# ----------------------------------------------------------------------------------------------
# Self-play
# ----------------------------------------------------------------------------------------------
def outcome_targets(states: np.ndarray, movers: np.ndarray) -> np.ndarray:
    """``(n, 5)`` int8: the finished games' results (state vectors) seen from ``movers``."""
    won = states[:, k.M_WINNER] == movers
    result = states[:, k.M_RESULT]
    gammon = result >= k.RESULT_GAMMON
    backgammon = result >= k.RESULT_BACKGAMMON
    out = np.stack([won, won & gammon, won & backgammon, ~won & gammon, ~won & backgammon], 1)
    return out.astype(np.int8)


def self_play(
    cfg: AlphaZeroConfig,
    batch: BackgammonBatch,
    search: ChanceSearch,
    evaluate: Any,
    rng: np.random.Generator,
) -> tuple[dict[str, np.ndarray], dict[str, float]]:
    """Play every game of ``batch`` (reset from ``rng``) to the end with the search; returns the
    decisions of the finished games (:class:`DecisionReplay`'s fields) and statistics."""
    batch.reset(seed=rng)
    rec: dict[str, list[np.ndarray]] = {
        n: [] for n in ("counts", "mover", "chosen", "boards", "policy", "game")
    }
    root_value, entropy, prior_entropy, changed = [], [], [], []
    for _ in range(cfg.max_turns):
        if batch.terminal.all():
            break
        offsets, boards, _ = batch.legal_plays()
        result = search.search(batch, evaluate, rng)
        counts = np.diff(offsets)
        rows = np.flatnonzero(counts > 0)
        mover = batch.current_player
        starts = offsets[rows]
        chosen = result.play[rows]
        rec["counts"].append(counts[rows])
        rec["mover"].append(mover[rows])
        rec["chosen"].append(chosen)
        rec["boards"].append(boards)
        rec["policy"].append(result.policy.astype(np.float32))
        rec["game"].append(rows)
        root_value.append(result.root_value[rows, mover[rows]])
        p, q = result.policy, result.prior
        entropy.append(np.add.reduceat(-p * np.log(np.where(p > 0, p, 1.0)), starts))
        prior_entropy.append(np.add.reduceat(-q * np.log(np.where(q > 0, q, 1.0)), starts))
        changed.append(q[starts + chosen] < np.maximum.reduceat(q, starts))
        batch.step_plays(np.maximum(result.play, 0))
    game_of = np.concatenate(rec["game"])
    keep = batch.terminal[game_of]  # games cut off at max_turns have no outcome
    counts = np.concatenate(rec["counts"])
    mover = np.concatenate(rec["mover"])
    play_keep = np.repeat(keep, counts)
    decisions = {
        "counts": counts[keep],
        "mover": mover[keep].astype(np.int8),
        "chosen": np.concatenate(rec["chosen"])[keep],
        "target": outcome_targets(batch.states[game_of[keep]], mover[keep]),
        "boards": np.concatenate(rec["boards"])[play_keep],
        "policy": np.concatenate(rec["policy"])[play_keep],
    }
    finished = batch.terminal
    points = np.abs(batch.points()[:, 0])
    stats = {
        "selfplay/positions": float(keep.sum()),
        "selfplay/games": float(finished.sum()),
        "selfplay/unfinished_games": float((~finished).sum()),
        "selfplay/game_length": float(len(game_of) / batch.num_games),
        "selfplay/plays_per_decision": float(counts.mean()),
        "selfplay/gammon_rate": float((points[finished] >= 2).mean()) if finished.any() else 0.0,
        "search/root_value": float(np.mean(np.concatenate(root_value))),
        "search/policy_entropy": float(np.mean(np.concatenate(entropy))),
        "search/prior_entropy": float(np.mean(np.concatenate(prior_entropy))),
        "search/changed_play": float(np.mean(np.concatenate(changed))),
    }
    return decisions, stats


# ----------------------------------------------------------------------------------------------
# Learning
# ----------------------------------------------------------------------------------------------
def minibatch_tensors(
    sample: dict[str, np.ndarray], inputs: int, device: str
) -> dict[str, torch.Tensor]:
    """A :meth:`DecisionReplay.sample` with its afterstates encoded, as tensors on ``device``."""
    x, final, exact, possible = encode_afterstates(sample["boards"], sample["movers"], inputs)
    arrays = {
        "x": x,
        "final": final,
        "exact": exact,
        "possible": possible,
        "policy": sample["policy"].astype(np.float64),
        "segment": sample["segment"],
        "chosen": sample["chosen"],
        "target": sample["target"].astype(np.float64),
    }
    return {name: torch.from_numpy(a).to(device) for name, a in arrays.items()}


def backgammon_alphazero_loss(
    net: TDNet,
    batch: dict[str, torch.Tensor],
    temperature: float,
    value_weight: float,
    policy_weight: float,
    win_only: bool = False,
) -> tuple[torch.Tensor, dict[str, float]]:
    """``L = value_weight * L_value + policy_weight * L_policy`` of the module docstring
    (minibatch means) and its parts; ``loss/policy_kl`` is ``L_policy`` less the entropy of
    ``pi'`` (0 when the net's softmax equals the target)."""
    final, segment = batch["final"], batch["segment"]
    num = int(batch["target"].shape[0])
    z = net.logits(batch["x"])
    y = torch.where(final[:, None], batch["exact"], torch.sigmoid(z) * batch["possible"])
    logit = equity_of(y, win_only) / temperature
    top = torch.full((num,), -torch.inf, dtype=logit.dtype, device=logit.device)
    top = top.scatter_reduce(0, segment, logit.detach(), reduce="amax")
    shifted = logit - top[segment]
    total = torch.zeros(num, dtype=logit.dtype, device=logit.device)
    total = total.index_add(0, segment, shifted.exp())
    log_p = shifted - total.log()[segment]
    pi = batch["policy"]
    policy_loss = -(pi * log_p).sum() / num
    chosen = batch["chosen"][~final[batch["chosen"]]]  # plays made that did not end the game
    if len(chosen):
        value_loss = (
            torch.nn.functional.binary_cross_entropy_with_logits(
                z[chosen], batch["target"][~final[batch["chosen"]]], reduction="none"
            )
            .sum(1)
            .mean()
        )
    else:
        value_loss = z.sum() * 0.0
    loss = value_weight * value_loss + policy_weight * policy_loss
    with torch.no_grad():
        target_entropy = -(pi * torch.log(torch.where(pi > 0, pi, 1.0))).sum() / num
        v = y[chosen]
        brier = ((v - batch["target"][~final[batch["chosen"]]]) ** 2).sum(1).mean()
    return loss, {
        "loss/total": loss.item(),
        "loss/value": value_loss.item(),
        "loss/policy": policy_loss.item(),
        "loss/policy_kl": (policy_loss - target_entropy).item(),
        "loss/value_squared_error": brier.item() if len(chosen) else 0.0,
    }


# ----------------------------------------------------------------------------------------------
# Starting weights
# ----------------------------------------------------------------------------------------------
def initial_net(cfg: AlphaZeroConfig, rng: np.random.Generator) -> tuple[tv.TDArch, dict, int]:
    """``(arch, params, games)``: the net the run starts from: ``init_checkpoint``'s (its
    ``hidden`` must be the config's) with the games it was trained on, or a fresh one with
    ``hidden[0]`` units and TD's initial weights (uniform in [-0.1, 0.1], zero biases)."""
    hidden = cfg.hidden[0]
    if cfg.init_checkpoint is None:
        arch = tv.TDArch(hidden)
        return arch, tv.init_params(arch, rng), 0
    name = cfg.init_checkpoint
    try:
        arch, params, games = tv.load_td_net(name)
    except CheckpointError as err:
        raise CheckpointError(f"init_checkpoint {err}") from err
    if arch.race_hidden:
        raise CheckpointError(
            f"init_checkpoint {name}: it has a race network; this trainer trains one network"
        )
    if arch.hidden != hidden:
        raise CheckpointError(
            f"init_checkpoint {name}: its net has {arch.hidden} hidden units, the config's "
            f"hidden is {cfg.hidden} (set hidden: [{arch.hidden}])"
        )
    return arch, params, games


# ----------------------------------------------------------------------------------------------
# The trainer (driven by the run loop)
# ----------------------------------------------------------------------------------------------
@dataclass
class BackgammonAlphaZeroState:
    """Everything a resumed run needs besides the config (``global_step`` counts decisions)."""

    arch: tv.TDArch
    net: TDNet
    optimizer: torch.optim.Adam
    rng: np.random.Generator
    replay: DecisionReplay
    iteration: int = 0
    global_step: int = 0
    games: int = 0
    #: games behind the starting weights (init_checkpoint's own training)
    earlier_games: int = 0
    metrics: dict[str, float] = field(default_factory=dict)
    best_score: float = -math.inf
    #: seconds over all resumptions: self-play and learning (wall, CPU), evaluations (wall)
    seconds: dict[str, float] = field(
        default_factory=lambda: {"train_wall": 0.0, "train_cpu": 0.0, "eval_wall": 0.0}
    )


class BackgammonAlphaZeroTrainer(IterationTrainer):
    """Gumbel AlphaZero for backgammon for :func:`spieltisch.train.run_loop.run`: a round is one
    iteration (steps 1-3 of the module docstring), the progress units are searched decisions.
    With ``resume`` the weights come from the run's checkpoint (``init_checkpoint`` is not
    read)."""

    unit = "pos"
    bar_smoothing = 0.1
    resumable_keys = frozenset(RESUMABLE_CHANGES)

    def __init__(self, cfg: AlphaZeroConfig, resume: bool = False, log: Any = print) -> None:
        torch.set_num_threads(cfg.torch_threads)
        torch.manual_seed(cfg.seed)
        self.cfg = cfg
        self.device = resolve_device(cfg.device)
        self.win_only = cfg.game_options.get("reward", "points") == "win"
        rng = np.random.default_rng(cfg.seed)
        if resume:  # the weights (and their architecture) come from the run's checkpoint
            arch, earlier = tv.TDArch(cfg.hidden[0]), 0
            params = tv.init_params(arch, rng)
        else:
            arch, params, earlier = initial_net(cfg, rng)
            if cfg.init_checkpoint:
                log(f"initialised from {cfg.init_checkpoint} ({earlier} games)")
        net, optimizer = self._net(params)
        self.state = BackgammonAlphaZeroState(
            arch, net, optimizer, rng, DecisionReplay(cfg.replay_size), earlier_games=earlier
        )
        self.batch = BackgammonBatch(
            CUBELESS, cfg.num_games, threads=1, reward=cfg.game_options.get("reward", "points")
        )
        self.search = ChanceSearch(
            search_config(cfg, cfg.num_simulations, cfg.gumbel_scale), cfg.temperature
        )

    def _net(self, params: dict[str, np.ndarray]) -> tuple[TDNet, torch.optim.Adam]:
        net = TDNet(params).to(self.device)
        opt = torch.optim.Adam(net.parameters(), lr=self.cfg.lr, weight_decay=self.cfg.weight_decay)
        return net, opt

    # --- where the run stands ---
    @property
    def total_units(self) -> int:
        return self.cfg.total_positions

    def position(self) -> str:
        state = self.state
        return f"iteration {state.iteration}, position {state.global_step} ({state.games} games)"

    def summary(self) -> dict[str, Any]:
        state = self.state
        return {
            "iteration": state.iteration,
            "global_step": state.global_step,
            "games": state.games,
            "seconds": dict(state.seconds),
        }

    @property
    def opponent_names(self) -> list[str]:
        return list(self.cfg.eval_opponents)

    def postfix(self, metrics: dict[str, float]) -> dict[str, str]:
        post = {}
        if "loss/value" in metrics:  # no learning yet while the buffer is empty
            post["v"] = f"{metrics['loss/value']:.3f}"
            post["kl"] = f"{metrics['loss/policy_kl']:.3f}"
        if "eval/mean_ppg" in metrics:
            post["ppg"] = f"{metrics['eval/mean_ppg']:+.3f}"
        return post

    # --- one iteration ---
    def step(self, max_rounds: int) -> dict[str, float]:
        cfg, state = self.cfg, self.state
        t0, c0 = time.perf_counter(), time.process_time()
        evaluate = td_evaluator(state.net.numpy_params(), "win" if self.win_only else "points")
        decisions, metrics = self_play(cfg, self.batch, self.search, evaluate, state.rng)
        t_play = time.perf_counter() - t0
        state.replay.add(decisions)
        new = len(decisions["counts"])
        updates = math.ceil(cfg.sample_reuse * max(new, 1) / cfg.batch_size)
        lr = cosine_lr(cfg.lr, cfg.lr_final, state.global_step, cfg.total_positions)
        for group in state.optimizer.param_groups:
            group["lr"] = lr
        sums: dict[str, float] = {}
        for _ in range(updates if state.replay.size else 0):
            sample = state.replay.sample(cfg.batch_size, state.rng)
            batch = minibatch_tensors(sample, state.arch.inputs, self.device)
            loss, parts = backgammon_alphazero_loss(
                state.net, batch, cfg.temperature, cfg.value_weight, cfg.policy_weight,
                self.win_only,
            )  # fmt: skip
            state.optimizer.zero_grad()
            loss.backward()
            state.optimizer.step()
            for key, value in parts.items():
                sums[key] = sums.get(key, 0.0) + value
        metrics.update({key: value / max(updates, 1) for key, value in sums.items()})
        state.iteration += 1
        state.global_step += new
        state.games += int(metrics["selfplay/games"])
        elapsed = time.perf_counter() - t0
        state.seconds["train_wall"] += elapsed
        state.seconds["train_cpu"] += time.process_time() - c0
        metrics["throughput/positions_per_s"] = new / elapsed
        metrics["throughput/games_per_hour"] = 3600 * metrics["selfplay/games"] / elapsed
        metrics["throughput/selfplay_share"] = t_play / elapsed
        metrics["charts/updates"] = float(updates)
        metrics["charts/learning_rate"] = lr
        metrics["charts/replay_size"] = float(state.replay.size)
        return metrics

    # --- evaluations (the arena plays checkpoint files) ---
    def _player(self) -> str:
        sims = self.cfg.eval_simulations
        return f":sims={sims}" if sims else ""

    def _arena(self, path: Path, num_games: int, seed: int) -> dict[str, dict[str, Any]]:
        return {
            name: arena_eval(path, name, num_games, seed, params=self._player())
            for name in self.cfg.eval_opponents
        }

    def evaluate(self, num_games: int, seed: int) -> Evaluation:
        """The current net against every ``eval_opponents``; the score is the mean points per
        game."""
        t_eval = time.perf_counter()
        with tempfile.TemporaryDirectory() as tmp:
            path = Path(tmp) / "policy"
            self.save_policy(path)
            evals = self._arena(path, num_games, seed)
        self.state.seconds["eval_wall"] += time.perf_counter() - t_eval
        metrics: dict[str, float] = {}
        for name, ev in evals.items():
            for key in ("ppg", "ppg_low", "ppg_high", "win_rate"):
                metrics[f"eval/{key}_vs_{name}"] = ev[key]
        metrics["eval/mean_ppg"] = float(np.mean([ev["ppg"] for ev in evals.values()]))
        line = f"{self.position()}: " + ", ".join(
            f"vs {name} {ev['ppg']:+.3f} ppg{ppg_interval(ev)}" for name, ev in evals.items()
        )
        return Evaluation(metrics, score=metrics["eval/mean_ppg"], line=line)

    def final_evaluation(
        self, final: Path, best: Path | None, num_games: int, seed: int
    ) -> Evaluation:
        state = self.state
        sims = self.cfg.eval_simulations
        report: dict[str, Any] = {
            "player": f"checkpoint:PATH{self._player()}" if sims else "checkpoint:PATH (1-ply)",
            "iteration": state.iteration,
            "global_step": state.global_step,
            "games": state.games,
        }
        metrics: dict[str, float] = {}
        if not num_games:
            return Evaluation(metrics, report=report)
        for name, ev in self._arena(final, num_games, seed).items():
            report[f"vs_{name}"] = ev
            metrics[f"final/ppg_vs_{name}"] = ev["ppg"]
            metrics[f"final/win_rate_vs_{name}"] = ev["win_rate"]
        if best is not None:
            kept = load_checkpoint(best, "backgammon")
            report["best"] = {
                "global_step": kept.meta["global_step"],
                **{f"vs_{k}": v for k, v in self._arena(best, num_games, seed).items()},
            }
        return Evaluation(metrics, report=report)

    def report_lines(self, report: dict[str, Any]) -> list[str]:
        names = self.cfg.eval_opponents
        if f"vs_{names[0]}" not in report:
            return ["No final evaluation (final_eval_games: 0)."]
        rows = [("best", report["best"])] if "best" in report else []
        rows.append(("final", report))
        lines = [
            f"Final evaluation ({report[f'vs_{names[0]}']['games']:,} games per opponent, seats "
            f"swapped, paired dice; {report['player']}):"
        ]
        for label, rec in rows:
            for name in names:
                ev = rec[f"vs_{name}"]
                lines.append(
                    f"  {label:<6} position {rec['global_step']:>10,}  vs {name:<22} "
                    f"{ev['ppg']:+.3f} ppg{ppg_interval(ev)}, "
                    f"{ev['win_rate']:.1%} won"
                )
        return lines

    # --- checkpoints ---
    def checkpoint_name(self) -> str:
        return f"position_{self.state.global_step:012d}"

    def _meta(self, kind: str) -> dict[str, Any]:
        cfg, state = self.cfg, self.state
        counters = {
            "iteration": state.iteration,
            "global_step": state.global_step,
            "games": state.games,
            "games_total": state.earlier_games + state.games,
            "init_checkpoint": cfg.init_checkpoint,
        }
        meta = td_net_meta(cfg, state.arch, kind, counters, state.metrics, state.seconds)
        meta["torch_version"] = torch.__version__
        return meta

    def _tensors(self) -> dict[str, torch.Tensor]:
        return {f"model.{n}": getattr(self.state.net, n).detach().cpu() for n in tv.PARAM_NAMES}

    def save_policy(self, path: Path) -> None:
        save_checkpoint(path, self._meta("policy"), self._tensors())

    def save(self, path: Path) -> None:
        state = self.state
        tensors = self._tensors()
        optim, param_groups = optimizer_tensors(state.optimizer)
        tensors.update(optim)
        tensors.update(state.replay.tensors())
        meta = self._meta("training")
        meta["trainer"] = {
            "optimizer_param_groups": param_groups,
            "rng": state.rng.bit_generator.state,
            "best_score": best_score_to_json(state.best_score),
            "earlier_games": state.earlier_games,
        }
        save_checkpoint(path, meta, tensors)

    def restore(self, path: Path) -> None:
        state = self.state
        ckpt = load_training_checkpoint(path, self.cfg, RESUMABLE_CHANGES)
        meta, trainer = ckpt.meta, ckpt.meta["trainer"]
        try:
            state.arch = tv.TDArch.from_json(meta["arch"])
            params = tv.params_from_tensors(state.arch, ckpt.tensors, str(path))
        except (KeyError, TypeError, ValueError) as err:
            raise CheckpointError(f"{path}: bad TD value net: {err}") from err
        state.net, state.optimizer = self._net(params)
        restore_optimizer(state.optimizer, ckpt.tensors, trainer["optimizer_param_groups"])
        state.replay.load(ckpt.tensors)
        state.rng.bit_generator.state = trainer["rng"]
        state.iteration = int(meta["iteration"])
        state.global_step = int(meta["global_step"])
        state.games = int(meta["games"])
        state.earlier_games = int(trainer.get("earlier_games", 0))
        state.metrics = dict(meta.get("metrics", {}))
        state.seconds.update(meta.get("seconds", {}))
        state.best_score = best_score_from_json(trainer.get("best_score"))


def train(
    cfg: AlphaZeroConfig, resume: bool = False, log: Any = print, overwrite: bool = False
) -> dict[str, Any]:
    """Run (or resume) a Gumbel AlphaZero run for backgammon; returns the final metrics (see
    :func:`spieltisch.train.run_loop.run`, also for ``overwrite``)."""
    if cfg.game != "backgammon":
        raise ValueError(f"this trainer trains backgammon, not {cfg.game!r}")
    return run(BackgammonAlphaZeroTrainer(cfg, resume, log), resume, log, overwrite)
