"""HiLo PPO learns: a short seeded run against the random policy gains coins over random.

Win rate against random is too blunt for a run this short (untrained 0.49, 30-60k self-play
steps 0.50-0.535), so the measure is the greedy policy's mean coins reward against random
(own coins minus the opponent's), over the same seeded deals before and after training. The
run is set up to learn fast rather than well: every game against the random policy
(``pool_prob=1``, no snapshots join the pool), a small net, many passes over each iteration's
data (8 epochs x 8 minibatches), no entropy bonus, a shorter GAE horizon (lambda 0.8) and no
clipping of the value loss (the coins targets lie far outside the value head's tanh range
[-1, 1]).

Measured (100k steps, 400 evaluation games, standard error about 0.17 coins), training
seeds 0 / 1 / 2 / 3 / 4: untrained +0.08 / -0.08 / -0.14 / -0.19 / +0.16 coins, trained
+0.93 / +2.08 / +1.65 / +0.70 / +1.91. With learning disabled (``lr=1e-12``) seed 0 stays at
+0.08 -> +0.08, and the test fails. The test costs about 45 s CPU (25-35 s the run).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import torch
from spieltisch.agents.neural.checkpoint import load_checkpoint
from spieltisch.agents.neural.policy import PolicyNet
from spieltisch.train.config import PPOConfig, build_config
from spieltisch.train.opponents import policy_step, random_step
from spieltisch.train.ppo import make_arch, make_games, train

OPTIONS = {"num_players": 2, "reward": "coins"}


def coins_vs_random(net: PolicyNet, num_games: int, seed: int) -> float:
    """Mean coins reward (own minus the opponent's) of the greedy ``net`` against the random
    policy, in each seat in turn; the deals and random moves come from ``seed``."""
    rng = np.random.default_rng(seed)
    games = make_games("hilo", OPTIONS, num_games)
    games.reset(seed=rng)
    seat = np.arange(num_games) % 2
    for _ in range(2000):
        terminal = games.terminal
        if terminal.all():
            break
        obs, mask = games.observe()
        mover = games.current_player
        actions = np.zeros(num_games, dtype=np.int64)
        mine = np.flatnonzero(~terminal & (mover == seat))
        theirs = np.flatnonzero(~terminal & (mover != seat))
        if mine.size:
            actions[mine] = policy_step(net, obs[mine], mask[mine], rng, greedy=True)[0]
        if theirs.size:
            actions[theirs] = random_step(mask[theirs], rng)
        games.step(actions)
    assert games.terminal.all()
    return float(games.returns()[np.arange(num_games), seat].mean())


def learning_config(tmp_path: Path, **extra: object) -> PPOConfig:
    sets: dict[str, object] = {
        "seed": 0,
        "total_steps": 100_000,
        "num_games": 64,
        "hidden": "[64]",
        "lr": 0.001,
        "anneal_lr": "false",
        "update_epochs": 8,
        "num_minibatches": 8,
        "ent_coef": 0.0,
        "gae_lambda": 0.8,
        "clip_vloss": "false",
        "pool_prob": 1.0,
        "pool_random": "true",
        "pool_interval": 100_000,  # no snapshots: the random policy is the only opponent
        "eval_interval": 0,
        "eval_opponents": "[random]",
        "final_eval_games": 2,
        "checkpoint_interval": 100_000,
        "max_turns": 500,
        "run_dir": str(tmp_path / "run"),
        "progress": "false",
        "tensorboard": "false",
    }
    sets.update(extra)
    return build_config(
        {"game": "hilo", "game_options": OPTIONS}, [f"{k}={v}" for k, v in sets.items()]
    )


def test_hilo_learner_gains_coins_against_random(tmp_path) -> None:
    """A broken learner fails this (with ``lr=1e-12`` the gain is 0.00 coins)."""
    cfg = learning_config(tmp_path)
    torch.manual_seed(cfg.seed)  # the same initial weights as train() draws
    untrained = PolicyNet(make_arch(cfg, make_games("hilo", OPTIONS, 1)))
    before = coins_vs_random(untrained, 400, seed=123)
    train(cfg, log=lambda *args: None)
    trained = load_checkpoint(tmp_path / "run" / "final").policy()
    after = coins_vs_random(trained, 400, seed=123)
    # measured before +0.08, after +0.93 (seed 0); +2.08 and +1.65 with seeds 1 and 2 (AMD EPYC);
    # after +0.48 with seed 0 on an Intel Xeon (float results differ by CPU, so does training)
    assert after >= 0.3, (before, after)
    assert after - before >= 0.3, (before, after)
