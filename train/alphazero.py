"""Gumbel AlphaZero: self-play with search in the loop (``algorithm: alphazero``).

Danihelka et al., "Policy improvement by planning with Gumbel" (ICLR 2022), on the batched
engines. One iteration, read top to bottom:

1. :func:`self_play`: ``num_games`` games in parallel, every move of every game searched by
   :class:`~spieltisch.agents.neural.gumbel_search.GumbelSearch` (``num_simulations`` per move,
   Gumbel noise at the root for exploration) and played as the search chose. Each position is
   recorded with its **policy target**, the search's improved policy
   ``pi' = softmax(logits + sigma(completedQ))``, and, once its game has ended, its **value
   target** ``z``: the final result of the player who moved there (a game cut off at
   ``max_turns`` counts 0; Kalaha with ``margin_weight`` w: ``(1 - w) * result + w *
   clip(margin / margin_scale, -1, 1)``, the search valuing finished leaves the same way;
   ``td_steps`` n > 0: the search's root value of the position n moves later, for the same
   player, when the game was still on then, see :func:`value_targets`). With
   ``policy_improvement: alphabeta`` (Kalaha, Hus; expert iteration) the compiled alpha-beta
   over the network's value head searches instead and makes the policy targets
   (:class:`~spieltisch.agents.neural.value_search.AlphaBetaImprovement`).
2. The positions go into a replay buffer of the last ``replay_size`` positions.
3. :func:`alphazero_loss` on minibatches drawn from the buffer, ``ceil(sample_reuse * new /
   batch_size)`` Adam steps::

       L = -sum_a pi'(a) log p_theta(a | s)  +  value_weight * (v_theta(s) - z)^2

   averaged over the minibatch (``weight_decay``: Adam's L2 penalty).

The network is the same policy-value MLP as PPO's (:class:`~spieltisch.agents.neural.policy.
PolicyNet`), so its checkpoints are agents: ``checkpoint:PATH`` plays the raw network,
``checkpoint:PATH:sims=N`` searches ``N`` simulations per move. Evaluations during the run play
the network (``eval_simulations`` > 0: with that much search) against ``eval_opponents`` on the
batched engine. Checkpoints hold the network, the optimizer, the replay buffer and the
generator, so a resumed run continues exactly as an uninterrupted one.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import torch
from spieltisch.agents.neural.agents import load_network
from spieltisch.agents.neural.checkpoint import CheckpointError, load_checkpoint, save_checkpoint
from spieltisch.agents.neural.determinized_search import InformationSetSearch
from spieltisch.agents.neural.gumbel_search import (
    GumbelSearch,
    Outcome,
    SearchConfig,
    game_outcome,
    policy_evaluator,
)
from spieltisch.agents.neural.policy import PolicyArch, PolicyNet
from spieltisch.agents.neural.value_search import AlphaBetaImprovement
from spieltisch.envs import perfect_information
from spieltisch.envs._common.batch import BatchedGame, sample_legal_actions
from spieltisch.train.config import RESUMABLE_RUN_KEYS, AlphaZeroConfig
from spieltisch.train.opponents import ScriptedOpponent, opponent_actions, scripted_opponents
from spieltisch.train.ppo import (
    checkpoint_meta,
    evaluate_against,
    evaluation_table,
    make_arch,
    make_games,
    make_opponent,
    resolve_device,
)
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

#: config keys that may differ between a run and its resumption (they leave the steps so far
#: alone; a new total also sets where a learning-rate schedule ends, from the resume point on)
RESUMABLE_CHANGES = {
    *RESUMABLE_RUN_KEYS,
    "total_positions",
    "stop_after_iterations",
    "eval_opponents",
    "eval_simulations",
    "keep_best",
    "device",
}


def cosine_lr(lr: float, lr_final: float | None, done: int, total: int) -> float:
    """The learning rate after ``done`` of ``total`` positions: ``lr`` if ``lr_final`` is None,
    else ``lr_final + (lr - lr_final) * (1 + cos(pi * min(done / total, 1))) / 2``."""
    if lr_final is None:
        return lr
    progress = min(done / max(total, 1), 1.0)
    return lr_final + (lr - lr_final) * 0.5 * (1.0 + math.cos(math.pi * progress))


def search_config(cfg: AlphaZeroConfig, sims: int, gumbel_scale: float) -> SearchConfig:
    """The search settings of a config with ``sims`` simulations and root noise ``gumbel_scale``
    (self-play: the config's own; evaluation: no noise)."""
    return SearchConfig(sims, cfg.max_considered, gumbel_scale, cfg.c_visit, cfg.c_scale)


def value_outcome(cfg: AlphaZeroConfig) -> Outcome:
    """What a finished game is worth to each seat under ``cfg`` (``margin_weight``): the value
    target of self-play and the exact leaf value of its search."""
    return game_outcome(cfg.margin_weight, cfg.margin_scale)


def make_search(
    cfg: AlphaZeroConfig, sims: int, gumbel_scale: float
) -> GumbelSearch | InformationSetSearch:
    """The search of self-play (the config's noise) or of evaluations (``gumbel_scale`` 0):
    of the real position, or for a hidden-information game of ``cfg.determinizations`` states
    drawn from the mover's information set. Both answer ``search(games, evaluate, rng)``."""
    config = search_config(cfg, sims, gumbel_scale)
    if perfect_information(cfg.game):
        return GumbelSearch(config, value_outcome(cfg))
    return InformationSetSearch(
        config, cfg.determinizations, lambda n: make_games(cfg.game, cfg.game_options, n)
    )


def self_play_search(
    cfg: AlphaZeroConfig, net: PolicyNet
) -> GumbelSearch | InformationSetSearch | AlphaBetaImprovement:
    """The search of self-play, which makes the policy targets (``policy_improvement``): the
    Gumbel search with the config's noise, or the alpha-beta over ``net``'s value head (read
    at each search, so it follows the training)."""
    if cfg.policy_improvement == "alphabeta":
        margin = (cfg.margin_weight, cfg.margin_scale)
        return AlphaBetaImprovement(
            net, cfg.game, cfg.game_options, cfg.alphabeta_depth, margin, cfg.alphabeta_q_scale
        )
    return make_search(cfg, cfg.num_simulations, cfg.gumbel_scale)


def initial_weights(cfg: AlphaZeroConfig, arch: PolicyArch) -> dict[str, torch.Tensor]:
    """The weights of ``init_checkpoint``, a network of the config's game, rules options and
    architecture ``arch``; raises :class:`CheckpointError` naming what differs."""
    name = cfg.init_checkpoint
    try:
        ckpt = load_network(name, cfg.game_options, cfg.game)
    except CheckpointError as err:
        raise CheckpointError(f"init_checkpoint {err}") from err
    net = ckpt.policy()
    differ = [
        f"{key} {getattr(net.arch, key)!r} (the config gives {getattr(arch, key)!r})"
        for key in arch.__dataclass_fields__
        if getattr(net.arch, key) != getattr(arch, key)
    ]
    if differ:
        raise CheckpointError(
            f"init_checkpoint {name}: its network differs from the config's: {'; '.join(differ)}"
        )
    return net.state_dict()


# ----------------------------------------------------------------------------------------------
# Replay buffer
# ----------------------------------------------------------------------------------------------
class ReplayBuffer:
    """The last ``capacity`` positions: observation, legal mask, policy and value targets
    (``value_outputs`` per position, the mover's first)."""

    FIELDS = ("obs", "mask", "policy", "value")

    def __init__(
        self, capacity: int, obs_size: int, num_actions: int, value_outputs: int = 1
    ) -> None:
        self.capacity = capacity
        self.obs = np.zeros((capacity, obs_size), dtype=np.float32)
        self.mask = np.zeros((capacity, num_actions), dtype=np.int8)
        self.policy = np.zeros((capacity, num_actions), dtype=np.float32)
        self.value = np.zeros((capacity, value_outputs), dtype=np.float32)
        self.size = 0
        self.next = 0  # the slot the next position goes to

    def add(self, positions: dict[str, np.ndarray]) -> None:
        count = len(positions["value"])
        slots = (self.next + np.arange(count)) % self.capacity
        for name in self.FIELDS:
            getattr(self, name)[slots] = positions[name]  # the newest win where slots repeat
        self.next = int((self.next + count) % self.capacity)
        self.size = min(self.capacity, self.size + count)

    def sample(self, batch_size: int, rng: np.random.Generator) -> dict[str, np.ndarray]:
        rows = rng.integers(0, self.size, size=batch_size)
        return {name: getattr(self, name)[rows] for name in self.FIELDS}

    def tensors(self) -> dict[str, torch.Tensor]:
        """The filled part, for a checkpoint."""
        return {
            f"replay.{n}": torch.from_numpy(getattr(self, n)[: self.size].copy())
            for n in self.FIELDS
        }

    def load(self, tensors: dict[str, torch.Tensor], size: int, next_slot: int) -> None:
        for name in self.FIELDS:
            stored = getattr(self, name)
            # checkpoints before per-seat values stored the mover's value as one column
            stored[:size] = tensors[f"replay.{name}"].numpy().reshape(size, *stored.shape[1:])
        self.size, self.next = size, next_slot


# ----------------------------------------------------------------------------------------------
# Self-play
# ----------------------------------------------------------------------------------------------
def self_play(
    cfg: AlphaZeroConfig,
    games: BatchedGame,
    search: GumbelSearch | InformationSetSearch | AlphaBetaImprovement,
    evaluate: Any,
    rng: np.random.Generator,
    baselines: list[ScriptedOpponent] | None = None,
) -> tuple[dict[str, np.ndarray], dict[str, float]]:
    """Play every game of ``games`` to the end with the search; returns the positions with their
    targets (``obs``, ``mask``, ``policy``, ``value``) and statistics. Each position is learnt
    from as its mover observed it (HiLo: what that seat may know). With ``pool_prob`` a share of
    the games seats a baseline (``baselines``, default: built from ``pool_baselines``) in every
    seat but one random learner seat; the baseline's moves are not learnt from."""
    games.reset(seed=rng)
    # random opening moves (opening_plies): drawn only when asked for, so runs without them
    # draw the same numbers as before the option existed
    opening = None
    if cfg.opening_plies:
        opening = rng.integers(0, cfg.opening_plies + 1, size=games.num_games)
    pool = baseline_games(cfg, games, rng, baselines)
    rec: dict[str, list[np.ndarray]] = {"obs": [], "mask": [], "policy": [], "game": [], "seat": []}
    root_values, root_entropy, root_vectors = [], [], []
    for move in range(cfg.max_turns):
        active = ~games.terminal
        if not active.any():
            break
        obs, mask = games.observe()
        mover = games.current_player.copy()
        # random opening moves and the baselines' moves are played, not searched or learnt from
        opening_now = opening is not None and move < opening.max()
        in_opening = active & (move < opening) if opening_now else np.zeros_like(active)
        active &= ~in_opening
        if pool is not None:
            by_baseline = np.flatnonzero(active & pool.game & (mover != pool.learner_seat))
            active[by_baseline] = False
        result = search.search(games, evaluate, rng, rows=np.flatnonzero(active))
        action = result.action
        if opening_now:
            action = np.where(in_opening, sample_legal_actions(mask, rng), action)
        if pool is not None:
            action[by_baseline] = opponent_actions(
                pool.opponents,
                pool.opponent[by_baseline],
                games,
                by_baseline,
                obs[by_baseline],
                mask[by_baseline],
                mover[by_baseline],
                rng,
            )
        rows = np.flatnonzero(active)
        rec["obs"].append(obs[rows])
        rec["mask"].append(mask[rows])
        rec["policy"].append(result.policy[rows].astype(np.float32))
        rec["game"].append(rows)
        rec["seat"].append(mover[rows])
        root_values.append(result.root_value[rows, mover[rows]])
        root_vectors.append(result.root_value[rows])
        p = result.policy[rows]
        root_entropy.append(-(p * np.log(np.where(p > 0, p, 1.0))).sum(axis=1))
        games.step(action)
    final = value_outcome(cfg)(games)  # games cut off at max_turns: 0 for every seat
    game_of, seat_of = np.concatenate(rec["game"]), np.concatenate(rec["seat"])
    positions = {
        "obs": np.concatenate(rec["obs"]).astype(np.float32),
        "mask": np.concatenate(rec["mask"]).astype(np.int8),
        "policy": np.concatenate(rec["policy"]),
        "value": value_targets(
            final,
            rec["game"],
            seat_of,
            np.concatenate(root_vectors),
            cfg.td_steps,
            games.num_players if cfg.value_per_seat else 1,
        ),
    }
    stats = {
        "selfplay/positions": float(len(game_of)),
        "selfplay/games": float(games.num_games),
        "selfplay/game_length": float(len(game_of) / games.num_games),
        "selfplay/unfinished_games": float((~games.terminal).sum()),
        "search/root_value": float(np.mean(np.concatenate(root_values))),
        "search/policy_entropy": float(np.mean(np.concatenate(root_entropy))),
    }
    if pool is not None:
        stats.update(pool.stats(final))
    return positions, stats


@dataclass
class BaselineGames:
    """Which self-play games seat a baseline (``pool_prob``): ``game[i]``, the learner's seat
    in it and the index of its baseline in ``opponents``."""

    opponents: list[ScriptedOpponent]
    game: np.ndarray
    learner_seat: np.ndarray
    opponent: np.ndarray

    def stats(self, final: np.ndarray) -> dict[str, float]:
        """The count of baseline games and the learner's mean result in them (``final``: what
        each game is worth to each seat)."""
        rows = np.flatnonzero(self.game)
        stats = {"selfplay/baseline_games": float(len(rows))}
        if len(rows):
            result = final[rows, self.learner_seat[rows]]
            stats["selfplay/baseline_result"] = float(result.mean())
        return stats


def baseline_games(
    cfg: AlphaZeroConfig,
    games: BatchedGame,
    rng: np.random.Generator,
    baselines: list[ScriptedOpponent] | None = None,
) -> BaselineGames | None:
    """Draw this iteration's baseline games (None without ``pool_prob``: nothing is drawn, so
    such runs draw the numbers they drew before the option existed). The baselines are reseeded
    from ``rng``, so a resumed run replays their moves."""
    if cfg.pool_prob == 0:
        return None
    opponents = scripted_opponents(cfg) if baselines is None else baselines
    for baseline in opponents:
        baseline.reseed(rng)
    n = games.num_games
    return BaselineGames(
        opponents,
        game=rng.random(n) < cfg.pool_prob,
        learner_seat=rng.integers(0, games.num_players, size=n),
        opponent=rng.integers(0, len(opponents), size=n),
    )


def value_targets(
    final: np.ndarray,
    rows_per_move: list[np.ndarray],
    seat: np.ndarray,
    root_value: np.ndarray,
    td_steps: int,
    outputs: int = 1,
) -> np.ndarray:
    """The value targets of every recorded position, in recording order, ``[positions,
    outputs]``: the final result ``final[game, seat]`` of its mover (and with ``outputs`` k > 1
    of the next k - 1 seats in turn order after it), or with ``td_steps`` n > 0 the search's
    root values for those seats of the same game's position n moves later
    (``root_value[position, seat]``) when the game was still on then.

    ``rows_per_move[t]``: the games recorded at move ``t``, so the positions of move t follow
    those of move t-1. A game is recorded at every searched move from its first (after its
    random opening, ``opening_plies``) until it ends, so "n moves later" is move t + n in the
    same game. Against a pool opponent (``pool_prob``) the opponent's moves are not recorded:
    a position whose move t + n is one of them keeps the final result as its target."""
    game = np.concatenate(rows_per_move)
    seats = (seat[:, None] + np.arange(outputs)) % final.shape[1]  # the mover's first
    target = final[game[:, None], seats].astype(np.float32)
    if td_steps == 0:
        return target
    num_games = final.shape[0]
    position_at = np.full((len(rows_per_move), num_games), -1, dtype=np.int64)
    start = 0
    for move, rows in enumerate(rows_per_move):
        position_at[move, rows] = start + np.arange(len(rows))
        start += len(rows)
    move_of = np.repeat(np.arange(len(rows_per_move)), [len(r) for r in rows_per_move])
    later_move = move_of + td_steps
    later = np.full(len(game), -1, dtype=np.int64)
    inside = later_move < len(rows_per_move)
    later[inside] = position_at[later_move[inside], game[inside]]
    bootstrapped = later >= 0
    target[bootstrapped] = root_value[later[bootstrapped, None], seats[bootstrapped]]
    return target


SelfPlay = tuple[dict[str, np.ndarray], dict[str, float]]


def merge_self_play(parts: list[SelfPlay]) -> SelfPlay:
    """The self-play of several workers (:func:`self_play` each) as one: positions in worker
    order, counts summed, per-position means weighted by positions."""
    positions = {name: np.concatenate([p[name] for p, _ in parts]) for name in ReplayBuffer.FIELDS}
    weights = np.array([s["selfplay/positions"] for _, s in parts])
    stats = {
        key: float(sum(s[key] for _, s in parts))
        for key in ("selfplay/positions", "selfplay/games", "selfplay/unfinished_games")
    }
    stats["selfplay/game_length"] = stats["selfplay/positions"] / stats["selfplay/games"]
    if any("selfplay/baseline_games" in s for _, s in parts):
        counts = np.array([s["selfplay/baseline_games"] for _, s in parts])
        stats["selfplay/baseline_games"] = float(counts.sum())
        if counts.sum():
            results = [s.get("selfplay/baseline_result", 0.0) for _, s in parts]
            stats["selfplay/baseline_result"] = float(np.average(results, weights=counts))
    for key in ("search/root_value", "search/policy_entropy"):
        stats[key] = float(np.average([s[key] for _, s in parts], weights=weights))
    return positions, stats


# ----------------------------------------------------------------------------------------------
# Learning
# ----------------------------------------------------------------------------------------------
def alphazero_loss(
    net: PolicyNet, batch: dict[str, torch.Tensor], value_weight: float
) -> tuple[torch.Tensor, dict[str, float]]:
    """``L = -sum_a pi'(a) log p(a|s) + value_weight * (v(s) - z)^2`` (minibatch mean) and its
    parts (a per-seat value head: the squared errors averaged over its seats); the policy's
    entropy is reported too."""
    logits, values = net.forward_seats(batch["obs"], batch["mask"])
    log_p = torch.log_softmax(logits, dim=-1)
    policy_loss = -(batch["policy"] * log_p).sum(-1).mean()
    if batch["value"].shape != values.shape:  # broadcasting would mix rows silently
        raise ValueError(f"value targets {tuple(batch['value'].shape)} != {tuple(values.shape)}")
    value_loss = ((values - batch["value"]) ** 2).mean()
    with torch.no_grad():
        entropy = -(log_p.exp() * log_p).sum(-1).mean()
    loss = policy_loss + value_weight * value_loss
    return loss, {
        "loss/policy": policy_loss.item(),
        "loss/value": value_loss.item(),
        "loss/policy_entropy": entropy.item(),
    }


# ----------------------------------------------------------------------------------------------
# The trainer (driven by the run loop)
# ----------------------------------------------------------------------------------------------
@dataclass
class AlphaZeroState:
    """Everything a resumed run needs besides the config (names as the shared checkpoint
    metadata expects: ``global_step`` counts self-play positions)."""

    net: PolicyNet
    optimizer: torch.optim.Adam
    rng: np.random.Generator
    replay: ReplayBuffer
    iteration: int = 0
    global_step: int = 0
    metrics: dict[str, float] = field(default_factory=dict)
    best_score: float = -1.0


class AlphaZeroTrainer(IterationTrainer):
    """Gumbel AlphaZero for :func:`spieltisch.train.run_loop.run`: a round is one iteration
    (steps 1-3 of the module docstring), the progress units are self-play positions."""

    unit = "pos"
    bar_smoothing = 0.1
    resumable_keys = frozenset(RESUMABLE_CHANGES)

    def __init__(
        self,
        cfg: AlphaZeroConfig,
        collect: Callable[[PolicyNet, Any], SelfPlay] | None = None,
        resume: bool = False,
        log: Any = print,
    ) -> None:
        torch.set_num_threads(cfg.torch_threads)
        torch.manual_seed(cfg.seed)
        self.cfg = cfg
        self.collect = collect
        self.device = resolve_device(cfg.device)
        self.games = make_games(cfg.game, cfg.game_options, cfg.num_games)
        net = PolicyNet(make_arch(cfg, self.games))
        if cfg.init_checkpoint and not resume:  # resumed: the run's checkpoint has the weights
            net.load_state_dict(initial_weights(cfg, net.arch))
            log(f"initialised from {cfg.init_checkpoint}")
        net = net.to(self.device)
        optimizer = torch.optim.Adam(net.parameters(), lr=cfg.lr, weight_decay=cfg.weight_decay)
        arch = net.arch
        replay = ReplayBuffer(
            cfg.replay_size, arch.observation_size, arch.num_actions, arch.value_outputs
        )
        self.state = AlphaZeroState(net, optimizer, np.random.default_rng(cfg.seed), replay)
        self.search = self_play_search(cfg, net)
        self.baselines = scripted_opponents(cfg)
        self.eval_opponents = {name: make_opponent(name, cfg) for name in cfg.eval_opponents}

    # --- where the run stands ---
    @property
    def total_units(self) -> int:
        return self.cfg.total_positions

    def position(self) -> str:
        return f"iteration {self.state.iteration}, position {self.state.global_step}"

    @property
    def opponent_names(self) -> list[str]:
        return list(self.cfg.eval_opponents)

    def report_lines(self, report: dict[str, Any]) -> list[str]:
        sims = self.cfg.eval_simulations
        player = (
            f"the network with {sims} simulations" if sims else "the network's most probable move"
        )
        return evaluation_table(report, self.cfg.eval_opponents, player)

    def postfix(self, metrics: dict[str, float]) -> dict[str, str]:
        post = {"loss": f"{metrics['loss/policy']:.3f}"}
        if "eval/mean_score" in metrics:
            post["eval"] = f"{metrics['eval/mean_score']:.2f}"
        return post

    # --- one iteration ---
    def step(self, max_rounds: int) -> dict[str, float]:
        cfg, state = self.cfg, self.state
        t0 = time.perf_counter()
        state.net.eval()
        if self.collect is None:
            evaluate = policy_evaluator(state.net, self.games.num_players, self.device)
            positions, metrics = self_play(
                cfg, self.games, self.search, evaluate, state.rng, self.baselines
            )
        else:  # Ray rollout workers (spieltisch.train.ray_rollouts)
            positions, metrics = self.collect(state.net, state)
        t_play = time.perf_counter() - t0
        state.replay.add(positions)
        new = len(positions["value"])
        updates = math.ceil(cfg.sample_reuse * new / cfg.batch_size)
        state.net.train()
        lr = cosine_lr(cfg.lr, cfg.lr_final, state.global_step, cfg.total_positions)
        for group in state.optimizer.param_groups:
            group["lr"] = lr
        sums: dict[str, float] = {}
        for _ in range(updates):
            sample = state.replay.sample(cfg.batch_size, state.rng)
            batch = {k: torch.from_numpy(v).to(self.device) for k, v in sample.items()}
            loss, parts = alphazero_loss(state.net, batch, cfg.value_weight)
            state.optimizer.zero_grad()
            loss.backward()
            state.optimizer.step()
            for k, v in parts.items():
                sums[k] = sums.get(k, 0.0) + v
        state.net.eval()
        metrics.update({k: v / updates for k, v in sums.items()})
        state.iteration += 1
        state.global_step += new
        elapsed = time.perf_counter() - t0
        metrics["throughput/positions_per_s"] = new / elapsed
        metrics["throughput/selfplay_share"] = t_play / elapsed
        metrics["charts/updates"] = float(updates)
        metrics["charts/learning_rate"] = lr
        metrics["charts/replay_size"] = float(state.replay.size)
        return metrics

    # --- evaluations ---
    def _evaluate(self, net: PolicyNet, num_games: int, seed: int) -> dict[str, dict[str, float]]:
        sims = self.cfg.eval_simulations
        choose = None
        if sims > 0:
            search = make_search(self.cfg, sims, 0.0)
            evaluate = policy_evaluator(net, self.games.num_players, self.device)

            def choose(games: BatchedGame, rows: np.ndarray, obs, mask, rng) -> np.ndarray:
                return search.search(games, evaluate, rng, rows=rows).action[rows]

        return {
            name: evaluate_against(self.cfg, net, opponent, num_games, seed, choose)
            for name, opponent in self.eval_opponents.items()
        }

    def evaluate(self, num_games: int, seed: int) -> Evaluation:
        metrics: dict[str, float] = {}
        for name, ev in self._evaluate(self.state.net.cpu(), num_games, seed).items():
            metrics[f"eval/win_rate_vs_{name}"] = ev["win_rate"]
            metrics[f"eval/score_vs_{name}"] = ev["score"]
        self.state.net.to(self.device)
        scores = [v for k, v in metrics.items() if k.startswith("eval/score_vs_")]
        metrics["eval/mean_score"] = float(np.mean(scores))
        line = f"{self.position()}: " + ", ".join(
            f"{k.removeprefix('eval/score_vs_')} {v:.3f}"
            for k, v in metrics.items()
            if k.startswith("eval/score_vs_")
        )
        return Evaluation(metrics, score=metrics["eval/mean_score"], line=line)

    def final_evaluation(
        self, final: Path, best: Path | None, num_games: int, seed: int
    ) -> Evaluation:
        state = self.state
        report: dict[str, Any] = {
            "action_selection": (
                f"gumbel_search:sims={self.cfg.eval_simulations}"
                if self.cfg.eval_simulations
                else "argmax"
            ),
            "global_step": state.global_step,
            "iteration": state.iteration,
        }
        metrics: dict[str, float] = {}
        if num_games == 0:  # final_eval_games: 0 asks for none (not one game per seat)
            return Evaluation(metrics, report=report)
        for name, ev in self._evaluate(state.net.cpu(), num_games, seed).items():
            report[f"vs_{name}"] = ev
            metrics[f"final/score_vs_{name}"] = ev["score"]
        state.net.to(self.device)
        if best is not None:
            kept = load_checkpoint(best, self.cfg.game)
            report["best"] = {
                "global_step": kept.meta["global_step"],
                **{f"vs_{k}": v for k, v in self._evaluate(kept.policy(), num_games, seed).items()},
            }
        return Evaluation(metrics, report=report)

    # --- checkpoints ---
    def checkpoint_name(self) -> str:
        return f"position_{self.state.global_step:012d}"

    def _tensors(self) -> dict[str, torch.Tensor]:
        return {f"model.{k}": v.cpu() for k, v in self.state.net.state_dict().items()}

    def save_policy(self, path: Path) -> None:
        save_checkpoint(path, checkpoint_meta(self.cfg, self.state, "policy"), self._tensors())

    def save(self, path: Path) -> None:
        state = self.state
        tensors = self._tensors()
        optim, param_groups = optimizer_tensors(state.optimizer)
        tensors.update(optim)
        tensors.update(state.replay.tensors())
        meta = checkpoint_meta(self.cfg, state, "training")
        meta["trainer"] = {
            "optimizer_param_groups": param_groups,
            "rng": state.rng.bit_generator.state,
            "best_score": best_score_to_json(state.best_score),
            "replay_size": state.replay.size,
            "replay_next": state.replay.next,
        }
        save_checkpoint(path, meta, tensors)

    def restore(self, path: Path) -> None:
        state = self.state
        ckpt = load_training_checkpoint(path, self.cfg, RESUMABLE_CHANGES)
        meta, trainer = ckpt.meta, ckpt.meta["trainer"]
        state.net.load_state_dict(ckpt.policy().state_dict())
        state.net.to(self.device)
        restore_optimizer(state.optimizer, ckpt.tensors, trainer["optimizer_param_groups"])
        state.replay.load(ckpt.tensors, int(trainer["replay_size"]), int(trainer["replay_next"]))
        state.rng.bit_generator.state = trainer["rng"]
        state.iteration = int(meta["iteration"])
        state.global_step = int(meta["global_step"])
        state.metrics = dict(meta.get("metrics", {}))
        state.best_score = best_score_from_json(trainer.get("best_score", -1.0))


def train(
    cfg: AlphaZeroConfig,
    resume: bool = False,
    log: Any = print,
    overwrite: bool = False,
    collect: Callable[[PolicyNet, Any], SelfPlay] | None = None,
) -> dict[str, Any]:
    """Run (or resume) a Gumbel AlphaZero run; returns the final metrics (see
    :func:`spieltisch.train.run_loop.run`, also for ``overwrite``). ``collect(net, state)``, if
    given, plays each iteration's self-play instead of :func:`self_play` here (the Ray rollout
    workers of :mod:`spieltisch.train.ray_rollouts`). Backgammon has its own trainer (a TD
    value net searched over chance nodes): :func:`spieltisch.train.alphazero_backgammon.train`."""
    if cfg.game == "backgammon":
        if collect is not None:
            raise ValueError("backgammon's AlphaZero plays its games itself (no collect)")
        from spieltisch.train.alphazero_backgammon import train as train_backgammon

        return train_backgammon(cfg, resume, log, overwrite)
    return run(AlphaZeroTrainer(cfg, collect, resume, log), resume, log, overwrite)
