"""Self-play PPO with action masks over the batched engines (CleanRL style: read top to bottom).

One iteration:

1. **Seat the learner.** Every one of ``num_games`` games starts anew. With probability
   ``pool_prob`` (and a non-empty pool) a game is a *pool game*: the learner plays one uniformly
   drawn seat, every other seat is played by one opponent drawn uniformly from the pool (past
   snapshots of the learner, plus the uniformly random policy if ``pool_random``). All other
   games are *self-play games*: the learner plays every seat.
2. **Play the games to the end** (or ``max_turns``, a draw), all games in parallel: the learner's
   moves are sampled from its masked policy; its decisions are recorded with the seat that
   made them.
3. **Advantages.** Each (game, seat) sequence of the learner's decisions is one episode of that
   player: reward 0 until its last decision, which gets the final reward of the seat;
   :func:`gae` over those decisions (the value is always the mover's expected final reward).
   Moves of other seats in between are part of the environment, so double moves (Kalaha) need
   no special case.
4. **PPO update** (:func:`ppo_update`): clipped ratio loss, (clipped) value loss, entropy bonus,
   global gradient clipping, ``update_epochs`` passes in ``num_minibatches`` shuffled
   minibatches.
5. Every ``pool_interval`` iterations the current policy joins the pool. The run loop
   (:mod:`spieltisch.train.run_loop`, driving :class:`PPOTrainer`) evaluates the greedy policy
   against ``eval_opponents`` every ``eval_interval`` iterations and saves the whole trainer
   state (model, optimizer, pool, generator, counters) every ``checkpoint_interval``, so that
   ``--resume`` continues exactly as if the run had not stopped.

Because an iteration plays whole games, a checkpoint between iterations holds no running games.
All randomness comes from one numpy generator (seeded by ``seed``) and the torch seed (the
initial weights); evaluations use their own generators so they do not change training.
"""

from __future__ import annotations

import copy
import platform
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import torch
from spieltisch.agents.arena.provenance import git_revision
from spieltisch.agents.neural.checkpoint import load_checkpoint, save_checkpoint
from spieltisch.agents.neural.policy import (
    ArrayPolicy,
    PolicyArch,
    PolicyNet,
    blas_threads,
)
from spieltisch.envs import make_batch
from spieltisch.envs._common.batch import BatchedGame
from spieltisch.train.config import RESUMABLE_RUN_KEYS, PPOConfig, config_to_dict
from spieltisch.train.opponents import (
    Opponent,
    PolicyPool,
    RandomOpponent,
    ScriptedOpponent,
    opponent_actions,
    policy_step,
    random_step,
    scripted_opponents,
)
from spieltisch.train.run_files import (
    latest_checkpoint,  # noqa: F401  (re-exported: tests find a run's checkpoint here)
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
    "total_steps",
    "stop_after_iterations",
    "eval_opponents",
    "keep_best",
    "device",
}


def env_version(game: str) -> str:
    from spieltisch.envs import GAMES

    return GAMES[game]


# ----------------------------------------------------------------------------------------------
# Trainer state
# ----------------------------------------------------------------------------------------------
@dataclass
class TrainerState:
    """Everything a resumed run needs besides the config."""

    net: PolicyNet
    optimizer: torch.optim.Adam
    rng: np.random.Generator
    #: past policies: a state_dict, or None for the uniformly random policy
    pool: list[dict[str, torch.Tensor] | None] = field(default_factory=list)
    iteration: int = 0
    global_step: int = 0
    metrics: dict[str, float] = field(default_factory=dict)
    #: best mean evaluation score so far (the policy is in run_dir/best)
    best_score: float = -1.0


def resolve_device(name: str) -> str:
    """``cpu``, ``cuda`` (an error if no CUDA device is present) or ``auto`` (CUDA if present)."""
    if name == "auto":
        return "cuda" if torch.cuda.is_available() else "cpu"
    if name == "cuda" and not torch.cuda.is_available():
        raise ValueError("device: cuda was asked for, but torch finds no CUDA device")
    return name


def playing_copy(net: PolicyNet, device: str) -> PolicyNet:
    """The network the games are played with, on the CPU: ``net`` itself for a CPU learner,
    else a copy (see ``PPOTrainer.actor``)."""
    return net if device == "cpu" else copy.deepcopy(net)


def make_arch(cfg: PPOConfig, games: BatchedGame) -> PolicyArch:
    return PolicyArch(
        observation_size=int(np.prod(games.observation_shape)),
        num_actions=games.num_actions,
        hidden=tuple(cfg.hidden),
        observation_scale=games.observation_scale,
        residual_blocks=getattr(cfg, "residual_blocks", 0),  # AlphaZero's configs have them
        count_bins=getattr(cfg, "count_bins", 0),
        value_outputs=games.num_players if getattr(cfg, "value_per_seat", False) else 1,
        features=getattr(cfg, "features", ""),
    )


def checkpoint_meta(cfg: PPOConfig, state: TrainerState, kind: str) -> dict[str, Any]:
    return {
        "kind": kind,
        "game": cfg.game,
        "env_version": env_version(cfg.game),
        "game_options": dict(cfg.game_options),
        "arch": state.net.arch.to_json(),
        "algorithm": cfg.algorithm,
        "iteration": state.iteration,
        "global_step": state.global_step,
        "config": config_to_dict(cfg),
        "git_revision": git_revision(),
        "metrics": dict(state.metrics),
        "torch_version": torch.__version__,
        "python": platform.python_version(),
    }


def save_trainer(path: Path, cfg: PPOConfig, state: TrainerState) -> None:
    """A training checkpoint: model + optimizer + pool tensors, counters and rng in JSON."""
    tensors = {f"model.{k}": v.cpu() for k, v in state.net.state_dict().items()}
    optim, param_groups = optimizer_tensors(state.optimizer)
    tensors.update(optim)
    pool_kinds = []
    for i, member in enumerate(state.pool):
        pool_kinds.append("random" if member is None else "policy")
        for k, v in (member or {}).items():
            tensors[f"pool.{i}.{k}"] = v
    meta = checkpoint_meta(cfg, state, "training")
    meta["trainer"] = {
        "optimizer_param_groups": param_groups,
        "pool": pool_kinds,
        "rng": state.rng.bit_generator.state,
        "best_score": best_score_to_json(state.best_score),
    }
    save_checkpoint(path, meta, tensors)


def restore_trainer(path: Path, cfg: PPOConfig, state: TrainerState) -> None:
    ckpt = load_training_checkpoint(path, cfg, RESUMABLE_CHANGES)
    meta = ckpt.meta
    state.net.load_state_dict(ckpt.policy().state_dict())
    trainer = meta["trainer"]
    restore_optimizer(state.optimizer, ckpt.tensors, trainer["optimizer_param_groups"])
    state.pool = []
    for i, kind in enumerate(trainer["pool"]):
        if kind == "random":
            state.pool.append(None)
        else:
            prefix = f"pool.{i}."
            state.pool.append(
                {k[len(prefix) :]: v for k, v in ckpt.tensors.items() if k.startswith(prefix)}
            )
    state.rng.bit_generator.state = trainer["rng"]
    state.iteration = int(meta["iteration"])
    state.global_step = int(meta["global_step"])
    state.metrics = dict(meta.get("metrics", {}))
    state.best_score = best_score_from_json(trainer.get("best_score", -1.0))


# ----------------------------------------------------------------------------------------------
# Playing
# ----------------------------------------------------------------------------------------------
def make_games(game: str, options: dict[str, Any], num_games: int) -> BatchedGame:
    """``num_games`` parallel games of ``game`` on its batched engine: the one place where the
    PPO trainer, its evaluations and its Ray rollout workers get their games.

    Games are scored by who won (each engine's default; HiLo's ``reward: coins`` is kept as a
    denser signal): backgammon is played for ``reward="win"``, so a gammon counts as one win and
    the value head predicts the chance to win, and without the cube, which self-play does not
    learn."""
    options = dict(options)
    if game == "backgammon":
        if options.get("cube"):
            raise ValueError("self-play training supports backgammon without the cube only")
        options["reward"] = "win"
    return make_batch(game, num_games, seed=0, **options)


@dataclass
class Rollout:
    """The learner's decisions of one iteration, one row each, with their advantages."""

    obs: np.ndarray
    mask: np.ndarray
    actions: np.ndarray
    logp: np.ndarray
    values: np.ndarray
    advantages: np.ndarray
    returns: np.ndarray
    games_played: int
    moves_played: int
    learner_results: np.ndarray  # final reward of the learner seat in pool games


def gae(
    rewards: np.ndarray, values: np.ndarray, episode_end: np.ndarray, gamma: float, lam: float
) -> np.ndarray:
    """Generalized advantage estimates (Schulman et al. 2016, "High-Dimensional Continuous
    Control Using Generalized Advantage Estimation", section 3) of episodes laid out one after
    the other, each in time order; ``episode_end[t]`` marks the last step of an episode, after
    which the value is 0 (the episode's game is over)::

        delta_t = r_t + gamma * V(s_{t+1}) - V(s_t)
        A_t     = sum_{l >= 0} (gamma * lam)^l * delta_{t+l}     (up to the episode's end)
                = delta_t + gamma * lam * A_{t+1}

    Returns the advantages (float64); ``advantages + values`` are the lambda-returns, the value
    targets."""
    next_value = np.where(episode_end, 0.0, np.roll(values, -1))
    delta = rewards + gamma * next_value - values
    advantages = np.zeros_like(delta)
    carry = 0.0
    for t in range(len(delta) - 1, -1, -1):
        carry = delta[t] + (0.0 if episode_end[t] else gamma * lam * carry)
        advantages[t] = carry
    return advantages


def play_iteration(
    cfg: PPOConfig,
    games: BatchedGame,
    net: PolicyNet,
    opponents: list[Opponent],
    rng: np.random.Generator,
) -> Rollout:
    n, players = games.num_games, games.num_players
    # 1. seat the learner
    games.reset(seed=rng)
    pool_game = (rng.random(n) < cfg.pool_prob) & (len(opponents) > 0)
    opponent = rng.integers(0, max(len(opponents), 1), size=n)
    learner_seat = rng.integers(0, players, size=n)

    # 2. play all games to the end
    acting = ArrayPolicy([net])  # the forward pass in numpy: small batches, many turns
    rec_obs, rec_mask, rec_act, rec_logp, rec_val, rec_game, rec_seat = [], [], [], [], [], [], []
    moves = 0
    with blas_threads(1):  # numpy's small products: see blas_threads
        for _ in range(cfg.max_turns):
            terminal = games.terminal
            if terminal.all():
                break
            obs, mask = games.observe()
            mover = games.current_player.copy()
            active = ~terminal
            learner = active & (~pool_game | (mover == learner_seat))
            actions = np.zeros(n, dtype=np.int64)
            idx = np.flatnonzero(learner)
            if idx.size:
                a, lp, v = policy_step(acting, obs[idx], mask[idx], rng, greedy=False)
                actions[idx] = a
                rec_obs.append(obs[idx])
                rec_mask.append(mask[idx])
                rec_act.append(a)
                rec_logp.append(lp)
                rec_val.append(v)
                rec_game.append(idx)
                rec_seat.append(mover[idx])
            sel = np.flatnonzero(active & ~learner)
            if sel.size:
                actions[sel] = opponent_actions(
                    opponents, opponent[sel], games, sel, obs[sel], mask[sel], mover[sel], rng
                )
            games.step(actions)
            moves += int(active.sum())
    final = games.returns()  # games cut off at max_turns are draws: 0 for every seat

    # 3. advantages: GAE over each (game, seat) sequence of learner decisions, an episode each
    game_of = np.concatenate(rec_game)
    seat_of = np.concatenate(rec_seat)
    values = np.concatenate(rec_val).astype(np.float64)
    key = game_of * players + seat_of
    order = np.argsort(key, kind="stable")  # each sequence contiguous, in time order
    sorted_key = key[order]
    episode_end = np.ones(len(order), dtype=bool)
    episode_end[:-1] = sorted_key[1:] != sorted_key[:-1]
    # reward 0 until a player's last decision, which gets the seat's final result
    rewards = np.where(episode_end, final[game_of[order], seat_of[order]], 0.0)
    advantages = np.empty(len(order))
    advantages[order] = gae(rewards, values[order], episode_end, cfg.gamma, cfg.gae_lambda)
    in_pool = pool_game
    return Rollout(
        obs=np.concatenate(rec_obs),
        mask=np.concatenate(rec_mask),
        actions=np.concatenate(rec_act),
        logp=np.concatenate(rec_logp).astype(np.float32),
        values=values.astype(np.float32),
        advantages=advantages.astype(np.float32),
        returns=(advantages + values).astype(np.float32),
        games_played=n,
        moves_played=moves,
        learner_results=final[np.flatnonzero(in_pool), learner_seat[in_pool]],
    )


#: ``(games, rows, obs, mask, rng) -> actions``: how an evaluated player moves in ``rows``
Chooser = Callable[[BatchedGame, np.ndarray, np.ndarray, np.ndarray, np.random.Generator], Any]


#: random opening moves of every evaluation game: Kalaha and Hus have no chance, so two
#: deterministic players (the greedy network, an alpha-beta search) would repeat a few games
OPENING_PLIES = {"kalaha": 2, "hus": 2}


def evaluate_against(
    cfg: Any,
    net: PolicyNet,
    opponent: Opponent,
    num_games: int,
    seed: int,
    choose: Chooser | None = None,
) -> dict[str, float]:
    """The greedy policy (or ``choose``, e.g. a search) against ``opponent`` on the batched
    engine, in every seat in turn (``num_games`` rounded to a multiple of the seats), each game
    of Kalaha and Hus after :data:`OPENING_PLIES` uniformly random moves;
    win/draw/loss rates, the score (wins + draws / 2) and the mean reward of the policy.
    ``cfg`` is any trainer config with ``game``, ``game_options`` and ``max_turns``."""
    rng = np.random.default_rng(seed)
    if isinstance(opponent, ScriptedOpponent):
        opponent.reseed(rng)
    options = {k: v for k, v in cfg.game_options.items() if k != "reward"}  # results: wins
    players = make_games(cfg.game, options, 1).num_players
    per_seat = max(1, num_games // players)
    games = make_games(cfg.game, options, per_seat * players)
    games.reset(seed=rng)
    for _ in range(OPENING_PLIES.get(cfg.game, 0)):  # distinct games without chance
        _, mask = games.observe()
        games.step(random_step(mask, rng))
    seat = np.arange(games.num_games) % players
    acting = ArrayPolicy([net]) if choose is None else None
    with blas_threads(1):
        for _ in range(cfg.max_turns):
            terminal = games.terminal
            if terminal.all():
                break
            obs, mask = games.observe()
            mover = games.current_player.copy()
            actions = np.zeros(games.num_games, dtype=np.int64)
            active = ~terminal
            mine = np.flatnonzero(active & (mover == seat))
            theirs = np.flatnonzero(active & (mover != seat))
            if mine.size and choose is not None:
                actions[mine] = choose(games, mine, obs[mine], mask[mine], rng)
            elif mine.size:
                actions[mine] = policy_step(acting, obs[mine], mask[mine], rng, greedy=True)[0]
            if theirs.size:
                actions[theirs] = opponent.actions(
                    games, theirs, obs[theirs], mask[theirs], mover[theirs], rng
                )
            games.step(actions)
    r = games.returns()[np.arange(games.num_games), seat]
    return {
        "win_rate": float((r > 0).mean()),
        "draw_rate": float((r == 0).mean()),
        "loss_rate": float((r < 0).mean()),
        "score": float((r > 0).mean() + 0.5 * (r == 0).mean()),
        "mean_reward": float(r.mean()),
        "games": float(games.num_games),
    }


def evaluate_vs_random(
    cfg: PPOConfig, net: PolicyNet, num_games: int, seed: int
) -> dict[str, float]:
    """:func:`evaluate_against` the uniformly random policy."""
    return evaluate_against(cfg, net, RandomOpponent(), num_games, seed)


def make_opponent(name: str, cfg: PPOConfig) -> Opponent:
    """An evaluation or pool opponent by arena agent name (``random`` is batched)."""
    if name == "random":
        return RandomOpponent()
    return ScriptedOpponent(name, cfg.game, dict(cfg.game_options))


def pool_opponents(
    arch: PolicyArch, pool: list[dict[str, torch.Tensor] | None], baselines: list[Opponent]
) -> list[Opponent]:
    """The opponents of pool games: each pool member (a snapshot's weights, or None for the
    random policy), then the scripted baselines."""
    nets = []
    for member in pool:
        if member is not None:
            nets.append(PolicyNet(arch))
            nets[-1].load_state_dict(member)
    snapshots = iter(PolicyPool(nets).members() if nets else [])
    members = [RandomOpponent() if m is None else next(snapshots) for m in pool]
    return members + baselines


# ----------------------------------------------------------------------------------------------
# Learning
# ----------------------------------------------------------------------------------------------
@contextmanager
def torch_threads(count: int) -> Iterator[None]:
    """torch's intra-op threads set to ``count`` inside the block, restored after it."""
    before = torch.get_num_threads()
    torch.set_num_threads(count)
    try:
        yield
    finally:
        torch.set_num_threads(before)


def ppo_update(
    net: PolicyNet,
    optimizer: torch.optim.Optimizer,
    batch: Rollout,
    cfg: PPOConfig,
    rng: np.random.Generator,
) -> dict[str, float]:
    """The PPO update (Schulman et al. 2017, "Proximal Policy Optimization Algorithms"):
    ``update_epochs`` passes over ``batch``, each in ``num_minibatches`` minibatches shuffled with
    ``rng``; one optimizer step per minibatch on ::

        L = L_clip + vf_coef * L_value - ent_coef * mean entropy of pi

        ratio   = pi(a | s) / pi_old(a | s)
        L_clip  = -mean(min(ratio * A, clip(ratio, 1 - clip_coef, 1 + clip_coef) * A))
        L_value = 0.5 * mean((V(s) - R)^2)

    with ``A`` the advantages (normalised per minibatch if ``norm_adv``) and ``R`` the returns.
    With ``clip_vloss`` the value loss is PPO2's clipped one, ``0.5 * mean(max((V - R)^2,
    (V_old + clip(V - V_old, -clip_coef, clip_coef) - R)^2))``. The gradient's global norm is
    clipped to ``max_grad_norm``; with ``target_kl`` the passes stop after one whose last
    minibatch's approximate KL exceeds it. Returns the mean losses, approximate KL
    (``mean((ratio - 1) - log ratio)``) and clip fraction over the minibatches."""
    device = next(net.parameters()).device  # the learner's (the rollout is on the CPU)
    whole = [
        torch.from_numpy(x).to(device)
        for x in (batch.obs, batch.mask, batch.actions, batch.logp, batch.advantages,
                  batch.returns, batch.values)
    ]  # fmt: skip
    size = len(batch.actions)
    mb_size = max(1, size // cfg.num_minibatches)
    stats: dict[str, list[float]] = {k: [] for k in ("pg", "v", "ent", "kl", "clip")}
    for _epoch in range(cfg.update_epochs):
        perm = torch.from_numpy(rng.permutation(size)).to(device)
        # shuffled once per pass, so that each minibatch is a slice (one gather per pass)
        b_obs, b_mask, b_act, b_logp, b_adv, b_ret, b_val = (x[perm] for x in whole)
        for start in range(0, size - mb_size + 1, mb_size):
            mb = slice(start, start + mb_size)
            logits, value = net(b_obs[mb], b_mask[mb])
            logp_all = torch.log_softmax(logits, dim=-1)
            new_logp = logp_all.gather(1, b_act[mb, None]).squeeze(1)
            entropy = -(logp_all.exp() * logp_all).sum(-1)
            log_ratio = new_logp - b_logp[mb]
            ratio = log_ratio.exp()
            with torch.no_grad():
                approx_kl = ((ratio - 1) - log_ratio).mean()
                stats["clip"].append(((ratio - 1).abs() > cfg.clip_coef).float().mean().item())
            adv = b_adv[mb]
            if cfg.norm_adv and mb_size > 1:
                adv = (adv - adv.mean()) / (adv.std() + 1e-8)
            pg_loss = torch.max(
                -adv * ratio, -adv * ratio.clamp(1 - cfg.clip_coef, 1 + cfg.clip_coef)
            ).mean()
            if cfg.clip_vloss:
                v_clipped = b_val[mb] + (value - b_val[mb]).clamp(-cfg.clip_coef, cfg.clip_coef)
                v_loss = (
                    0.5 * torch.max((value - b_ret[mb]) ** 2, (v_clipped - b_ret[mb]) ** 2).mean()
                )
            else:
                v_loss = 0.5 * ((value - b_ret[mb]) ** 2).mean()
            ent = entropy.mean()
            loss = pg_loss - cfg.ent_coef * ent + cfg.vf_coef * v_loss
            optimizer.zero_grad()
            loss.backward()
            torch.nn.utils.clip_grad_norm_(net.parameters(), cfg.max_grad_norm)
            optimizer.step()
            for k, x in (("pg", pg_loss), ("v", v_loss), ("ent", ent), ("kl", approx_kl)):
                stats[k].append(x.item())
        if cfg.target_kl is not None and stats["kl"][-1] > cfg.target_kl:
            break
    return {
        "loss/policy": float(np.mean(stats["pg"])),
        "loss/value": float(np.mean(stats["v"])),
        "loss/entropy": float(np.mean(stats["ent"])),
        "loss/approx_kl": float(np.mean(stats["kl"])),
        "loss/clip_fraction": float(np.mean(stats["clip"])),
    }


def evaluation_table(report: dict[str, Any], names: list[str], player: str) -> list[str]:
    """A final evaluation report (as :func:`evaluate_against` rows under ``vs_<name>``, the kept
    best under ``best``) as a table: the best (if kept) and the final policy against each
    opponent; ``player`` says how the evaluated policy chose its moves."""
    if not names:
        return []
    if f"vs_{names[0]}" not in report:
        return ["No final evaluation (final_eval_games: 0)."]
    rows = [("best", report["best"])] if "best" in report else []
    rows.append(("final", report))
    games = report[f"vs_{names[0]}"]["games"]
    lines = [
        f"Final evaluation ({games:,.0f} games per opponent, {player}; score = wins + draws/2):",
        f"  {'policy':<7}{'step':>12}  {'opponent':<24}{'score':>7}{'won':>8}{'drawn':>8}"
        f"{'lost':>8}",
    ]
    for label, rec in rows:
        for name in names:
            ev = rec[f"vs_{name}"]
            lines.append(
                f"  {label:<7}{rec['global_step']:>12,}  {name:<24}{ev['score']:>7.3f}"
                f"{ev['win_rate']:>8.1%}{ev['draw_rate']:>8.1%}{ev['loss_rate']:>8.1%}"
            )
    return lines


# ----------------------------------------------------------------------------------------------
# The trainer (driven by the run loop)
# ----------------------------------------------------------------------------------------------
class PPOTrainer(IterationTrainer):
    """Self-play PPO for :func:`spieltisch.train.run_loop.run`: a round is one iteration (steps
    1-5 of the module docstring), the progress units are learner steps.

    ``collect(net, state)``, if given, plays each iteration's games instead of
    :func:`play_iteration` here (the Ray rollout workers of
    :mod:`spieltisch.train.ray_rollouts`)."""

    unit = "step"
    bar_smoothing = 0.1
    resumable_keys = frozenset(RESUMABLE_CHANGES)

    def __init__(
        self, cfg: PPOConfig, collect: Callable[[PolicyNet, TrainerState], Rollout] | None = None
    ) -> None:
        torch.set_num_threads(cfg.torch_threads)
        torch.manual_seed(cfg.seed)
        self.cfg = cfg
        self.collect = collect
        self.games = make_games(cfg.game, cfg.game_options, cfg.num_games)
        self.device = resolve_device(cfg.device)
        net = PolicyNet(make_arch(cfg, self.games))
        #: the network that plays (games, pool snapshots, evaluations, saved policies): on the
        #: CPU, where the games are; the learner itself when that is on the CPU too, else a copy
        #: refreshed after every update
        self.actor = playing_copy(net, self.device)
        net.to(self.device)
        # fused: one kernel for all parameters (the update is most of a PPO iteration)
        optimizer = torch.optim.Adam(net.parameters(), lr=cfg.lr, eps=1e-5, fused=True)
        self.state = TrainerState(net=net, optimizer=optimizer, rng=np.random.default_rng(cfg.seed))
        if cfg.pool_random:
            self.state.pool.append(None)
        self.baselines: list[Opponent] = scripted_opponents(cfg)
        self.eval_opponents = {name: make_opponent(name, cfg) for name in cfg.eval_opponents}
        self.opponents = pool_opponents(net.arch, self.state.pool, self.baselines)
        #: the mean score of this process's latest evaluation (shown by the progress bar)
        self.last_eval: float | None = None

    # --- where the run stands (the state is what a checkpoint holds) ---
    @property
    def total_units(self) -> int:
        return self.cfg.total_steps

    def position(self) -> str:
        return f"iteration {self.state.iteration}, step {self.state.global_step}"

    # --- one iteration ---
    def step(self, max_rounds: int) -> dict[str, float]:
        """One iteration (indivisible: ``max_rounds`` is at least 1)."""
        cfg, state = self.cfg, self.state
        t0 = time.perf_counter()
        for baseline in self.baselines:
            baseline.reseed(state.rng)
        if cfg.anneal_lr:
            frac = 1.0 - state.global_step / cfg.total_steps
            state.optimizer.param_groups[0]["lr"] = frac * cfg.lr

        # 1.-3. play the games, advantages
        if self.collect is None:
            rollout = play_iteration(cfg, self.games, self.actor, self.opponents, state.rng)
        else:
            rollout = self.collect(self.actor, state)
        t_play = time.perf_counter() - t0

        # 4. PPO update (on update_threads: the games are idle meanwhile)
        t_update = time.perf_counter()
        with torch_threads(cfg.update_threads or cfg.torch_threads):
            metrics = ppo_update(state.net, state.optimizer, rollout, cfg, state.rng)
        self._sync_actor()
        t_update = time.perf_counter() - t_update
        size = len(rollout.actions)
        state.iteration += 1
        state.global_step += size
        elapsed = time.perf_counter() - t0
        metrics["throughput/learner_steps_per_s"] = size / elapsed
        metrics["throughput/moves_per_s"] = rollout.moves_played / max(t_play, 1e-9)
        metrics["throughput/update_share"] = t_update / elapsed
        metrics["charts/lr"] = state.optimizer.param_groups[0]["lr"]
        metrics["charts/pool_size"] = float(len(state.pool))
        if rollout.learner_results.size:
            metrics["charts/pool_game_score"] = float(rollout.learner_results.mean())

        # 5. the pool
        if state.iteration % cfg.pool_interval == 0:
            snapshot = {k: v.detach().clone() for k, v in self.actor.state_dict().items()}
            policies = [m for m in state.pool if m is not None] + [snapshot]
            state.pool = ([None] if cfg.pool_random else []) + policies[-cfg.pool_size :]
            self.opponents = pool_opponents(state.net.arch, state.pool, self.baselines)
        return metrics

    def _sync_actor(self) -> None:
        """The playing copy takes the learner's weights (nothing to do when they are one)."""
        if self.actor is not self.state.net:
            self.actor.load_state_dict(self.state.net.state_dict())

    def postfix(self, metrics: dict[str, float]) -> dict[str, str]:
        post = {"ent": f"{metrics['loss/entropy']:.2f}"}
        if self.last_eval is not None:
            post["eval"] = f"{self.last_eval:.2f}"
        return post

    # --- evaluations ---
    def evaluate(self, num_games: int, seed: int) -> Evaluation:
        """The greedy policy against each of ``eval_opponents``; the score is the mean."""
        metrics: dict[str, float] = {}
        scores = []
        played = num_games
        for name, opponent in self.eval_opponents.items():
            ev = evaluate_against(self.cfg, self.actor, opponent, num_games, seed)
            played = int(ev["games"])  # (rounded to a multiple of the seats)
            metrics[f"eval/win_rate_vs_{name}"] = ev["win_rate"]
            metrics[f"eval/draw_rate_vs_{name}"] = ev["draw_rate"]
            metrics[f"eval/score_vs_{name}"] = ev["score"]
            scores.append(ev["score"])
        metrics["eval/mean_score"] = self.last_eval = float(np.mean(scores))
        parts = [f"vs {n} {metrics[f'eval/score_vs_{n}']:.3f}" for n in self.eval_opponents]
        line = (
            f"{self.position()}: score (wins + draws/2, {played} games per opponent) "
            f"{', '.join(parts)}; mean {metrics['eval/mean_score']:.3f}"
        )
        return Evaluation(metrics, score=metrics["eval/mean_score"], line=line)

    def final_evaluation(
        self, final: Path, best: Path | None, num_games: int, seed: int
    ) -> Evaluation:
        state = self.state
        report: dict[str, Any] = {
            "action_selection": "argmax",  # the policy's most probable legal move, no sampling
            "global_step": state.global_step,
            "iteration": state.iteration,
        }
        metrics: dict[str, float] = {}
        if num_games == 0:  # final_eval_games: 0 asks for none (not one game per seat)
            return Evaluation(metrics, report=report)
        for name, opponent in self.eval_opponents.items():
            ev = evaluate_against(self.cfg, self.actor, opponent, num_games, seed)
            report[f"vs_{name}"] = ev
            metrics[f"final/win_rate_vs_{name}"] = ev["win_rate"]
            metrics[f"final/score_vs_{name}"] = ev["score"]
        if best is not None:
            kept = load_checkpoint(best, self.cfg.game)
            report["best"] = {
                "global_step": kept.meta["global_step"],
                **{
                    f"vs_{name}": evaluate_against(
                        self.cfg, kept.policy(), opponent, num_games, seed
                    )
                    for name, opponent in self.eval_opponents.items()
                },
            }
        return Evaluation(metrics, report=report)

    @property
    def opponent_names(self) -> list[str]:
        return list(self.cfg.eval_opponents)

    def report_lines(self, report: dict[str, Any]) -> list[str]:
        return evaluation_table(report, self.cfg.eval_opponents, "the policy's most probable move")

    # --- checkpoints ---
    def checkpoint_name(self) -> str:
        return f"step_{self.state.global_step:010d}"

    def save(self, path: Path) -> None:
        save_trainer(path, self.cfg, self.state)

    def restore(self, path: Path) -> None:
        restore_trainer(path, self.cfg, self.state)
        self._sync_actor()
        self.opponents = pool_opponents(self.state.net.arch, self.state.pool, self.baselines)

    def save_policy(self, path: Path) -> None:
        tensors = {f"model.{k}": v for k, v in self.actor.state_dict().items()}
        save_checkpoint(path, checkpoint_meta(self.cfg, self.state, "policy"), tensors)


def train(
    cfg: PPOConfig,
    resume: bool = False,
    log: Callable[[str], Any] = print,
    collect: Callable[[PolicyNet, TrainerState], Rollout] | None = None,
    overwrite: bool = False,
) -> dict[str, Any]:
    """Run (or resume) a PPO training run; returns the final metrics (see
    :func:`spieltisch.train.run_loop.run`, also for ``overwrite``). ``collect``: see
    :class:`PPOTrainer`."""
    return run(PPOTrainer(cfg, collect), resume, log, overwrite)
