"""Ray RLlib PPO on a spieltisch PettingZoo env, with action masking (RLlib's new API stack).

::

    pip install "spieltisch[rllib]"
    python -m spieltisch.train.examples.rllib_pettingzoo --game kalaha -o pits=4 -o seeds=3 \\
        --iterations 20

The AEC env goes through RLlib's own ``PettingZooEnv`` wrapper. Every seat maps to one shared
policy ("shared"), so the agent learns by self-play (the observation is always the mover's
view). The policy is RLlib's ``ActionMaskingTorchRLModule``, which expects the observation dict
keys ``"observations"`` and ``"action_mask"``; :class:`RLlibKeys` renames the env's
``"observation"`` accordingly (and makes the mask float32). After training, the greedy policy
plays ``--eval-games`` games against ``random`` and the result is printed as JSON.
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

import numpy as np
from gymnasium import spaces
from pettingzoo.utils import BaseWrapper
from spieltisch.envs import GAMES, check_options, make
from spieltisch.envs._common.options import add_option_argument, parse_options
from spieltisch.train.examples import missing_requirement

POLICY = "shared"


class RLlibKeys(BaseWrapper):
    """The env's observation dict as RLlib's action-masking RLModule reads it:
    ``{"observations": <vector>, "action_mask": <float32 0/1>}``."""

    def observation_space(self, agent: str) -> spaces.Space:
        inner = self.env.observation_space(agent)
        n = inner["action_mask"].shape[0]
        return spaces.Dict(
            {
                "observations": inner["observation"],
                "action_mask": spaces.Box(0.0, 1.0, shape=(n,), dtype=np.float32),
            }
        )

    def observe(self, agent: str) -> dict[str, np.ndarray]:
        obs = self.env.observe(agent)
        return {
            "observations": obs["observation"],
            "action_mask": obs["action_mask"].astype(np.float32),
        }


def make_rllib_env(config: dict[str, Any]) -> Any:
    """The RLlib env of ``config = {"game": ..., **game_options}`` (the function RLlib calls)."""
    from ray.rllib.env.wrappers.pettingzoo_env import PettingZooEnv

    options = dict(config)
    game = options.pop("game")
    return PettingZooEnv(RLlibKeys(make(game, **options)))


def build_algorithm(
    game: str,
    game_options: dict[str, Any],
    batch: int = 1000,
    hidden: tuple[int, ...] = (64, 64),
    lr: float = 1e-3,
    seed: int = 0,
    env_runners: int = 0,
) -> Any:
    """A PPO ``Algorithm`` with one shared action-masking policy for every seat."""
    from ray.rllib.algorithms.ppo import PPOConfig
    from ray.rllib.core.rl_module.multi_rl_module import MultiRLModuleSpec
    from ray.rllib.core.rl_module.rl_module import RLModuleSpec
    from ray.rllib.examples.rl_modules.classes.action_masking_rlm import (
        ActionMaskingTorchRLModule,
    )
    from ray.tune.registry import register_env

    env_name = f"spieltisch_{game}"
    register_env(env_name, make_rllib_env)
    config = (
        PPOConfig()
        # RLlib's env check steps an action drawn from the whole action space, mask unseen: our
        # envs refuse an illegal one, so the check failed (Hus, backgammon, HiLo) as "not the
        # gymnasium-style API". The masking module only samples legal actions.
        .environment(env_name, env_config={"game": game, **game_options}, disable_env_checking=True)
        .framework("torch")
        .env_runners(num_env_runners=env_runners, num_envs_per_env_runner=1)
        .multi_agent(
            policies={POLICY},
            policy_mapping_fn=lambda agent_id, episode, **kwargs: POLICY,
        )
        .rl_module(
            rl_module_spec=MultiRLModuleSpec(
                rl_module_specs={
                    POLICY: RLModuleSpec(
                        module_class=ActionMaskingTorchRLModule,
                        model_config={"head_fcnet_hiddens": list(hidden)},
                    )
                }
            )
        )
        .training(
            train_batch_size_per_learner=batch,
            minibatch_size=min(256, batch),
            num_epochs=4,
            lr=lr,
            gamma=1.0,
            entropy_coeff=0.01,
        )
        .debugging(seed=seed)
    )
    return config.build_algo()


def evaluate_vs_random(
    algo: Any, game: str, game_options: dict[str, Any], games: int, seed: int
) -> dict[str, float]:
    """The shared policy (greedy, masked) against ``random``, half the games in each seat."""
    import torch
    from ray.rllib.core.columns import Columns

    module = algo.get_module(POLICY)
    env = RLlibKeys(make(game, **game_options))
    rng = np.random.default_rng(seed)
    results = []
    for g in range(games):
        env.reset(seed=seed + g)
        me = env.possible_agents[g % len(env.possible_agents)]
        for agent in env.agent_iter():
            obs, reward, term, trunc, _ = env.last()
            if term or trunc:
                if agent == me:
                    results.append(reward)
                env.step(None)
                continue
            legal = np.flatnonzero(obs["action_mask"])
            if agent != me:
                env.step(int(rng.choice(legal)))
                continue
            batch = {Columns.OBS: {k: torch.from_numpy(v)[None] for k, v in obs.items()}}
            with torch.no_grad():
                logits = module.forward_inference(batch)[Columns.ACTION_DIST_INPUTS][0]
            env.step(int(legal[int(logits[legal].argmax())]))
    r = np.asarray(results)
    return {
        "win_rate": float((r > 0).mean()),
        "draw_rate": float((r == 0).mean()),
        "loss_rate": float((r < 0).mean()),
        "games": float(games),
    }


PROG = "python -m spieltisch.train.examples.rllib_pettingzoo"


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(
        prog=PROG,
        description=__doc__.split("\n\n")[0],
    )
    p.add_argument("--game", default="kalaha", choices=sorted(GAMES))
    add_option_argument(p)
    p.add_argument("--iterations", type=int, default=20, help="algo.train() calls")
    p.add_argument("--batch", type=int, default=1000, help="env steps per iteration")
    p.add_argument("--lr", type=float, default=1e-3)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--env-runners", type=int, default=0, help="0: sample in the driver")
    p.add_argument("--num-cpus", type=int, default=None, help="CPUs of the local Ray instance")
    p.add_argument("--address", default=None, help="an existing Ray cluster (default: local)")
    p.add_argument("--eval-games", type=int, default=100)
    args = p.parse_args(argv)
    try:
        options = parse_options(args.option)
    except ValueError as err:
        p.error(str(err))
    if args.iterations < 1 or args.batch < 1 or args.eval_games < 1:
        p.error("--iterations, --batch and --eval-games must be at least 1")
    if args.address and args.num_cpus is not None:  # it would be silently ignored
        p.error("--num-cpus sizes the local Ray instance; a cluster (--address) has its own")
    try:  # a wrong game option: a usage error now, not a traceback from RLlib's env runner
        check_options(args.game, options)
    except ValueError as err:
        p.error(str(err))
    missing = missing_requirement(PROG, ("ray.rllib", "torch"), "Ray RLlib", "rllib")
    if missing is not None:  # (was: a ModuleNotFoundError traceback from `import ray`)
        print(missing, file=sys.stderr)
        return 2

    import ray

    ray.init(
        address=args.address or "local",
        num_cpus=None if args.address else args.num_cpus,
        include_dashboard=False,
        ignore_reinit_error=True,
    )
    try:
        algo = build_algorithm(
            args.game, options, args.batch, lr=args.lr, seed=args.seed, env_runners=args.env_runners
        )
        for i in range(args.iterations):
            result = algo.train()
            runners = result.get("env_runners", {})
            print(
                json.dumps(
                    {
                        "iteration": i + 1,
                        "env_steps": runners.get("num_env_steps_sampled_lifetime"),
                        "episodes": runners.get("num_episodes_lifetime"),
                        "episode_len_mean": runners.get("episode_len_mean"),
                    }
                ),
                flush=True,
            )
        ev = evaluate_vs_random(algo, args.game, options, args.eval_games, seed=10_000)
        print(json.dumps({"game": args.game, "opponent": "random", **ev}, indent=2))
        algo.stop()
    finally:
        ray.shutdown()
    return 0


if __name__ == "__main__":
    sys.exit(main())
