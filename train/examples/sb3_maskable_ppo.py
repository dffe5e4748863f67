"""sb3-contrib MaskablePPO on a spieltisch game through the Gymnasium wrapper.

::

    pip install "spieltisch[sb3]"
    python -m spieltisch.train.examples.sb3_maskable_ppo --game kalaha -o pits=4 -o seeds=3 \\
        --opponent random --steps 20000 --save runs/sb3_kalaha

Trains one seat (``--seat``, default: drawn at each reset) against a fixed opponent (any arena
agent name or ``checkpoint:<path>``), then plays ``--eval-games`` games with the deterministic
(greedy, masked) policy against the same opponent and prints the win/draw/loss rates as JSON.
The action masks reach MaskablePPO through ``env.action_masks()``.
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

import numpy as np
from spieltisch.agents.gym_env import make_gym
from spieltisch.envs import GAMES
from spieltisch.envs._common.options import add_option_argument, parse_options
from spieltisch.train.examples import missing_requirement


def evaluate(model: Any, env: Any, games: int, seed: int) -> dict[str, float]:
    """Deterministic masked policy against the env's opponents: win/draw/loss rates."""
    results = []
    for g in range(games):
        obs, _ = env.reset(seed=seed + g)
        done, reward = False, 0.0
        while not done:
            action, _ = model.predict(obs, action_masks=env.action_masks(), deterministic=True)
            obs, reward, terminated, truncated, _ = env.step(int(action))
            done = terminated or truncated
        results.append(reward)
    r = np.asarray(results)
    return {
        "win_rate": float((r > 0).mean()),
        "draw_rate": float((r == 0).mean()),
        "loss_rate": float((r < 0).mean()),
        "games": float(games),
    }


def train(
    game: str,
    game_options: dict[str, Any],
    opponent: str = "random",
    seat: int | str = "random",
    steps: int = 20_000,
    seed: int = 0,
    n_steps: int = 512,
    net: tuple[int, ...] = (64, 64),
    lr: float = 1e-3,
    verbose: int = 0,
) -> Any:
    """A MaskablePPO model trained for ``steps`` of your seat's decisions."""
    import torch
    from sb3_contrib import MaskablePPO

    torch.set_num_threads(1)
    env = make_gym(game, opponents=[opponent], seat=seat, seed=seed, **game_options)
    model = MaskablePPO(
        "MlpPolicy",
        env,
        n_steps=n_steps,
        batch_size=min(128, n_steps),
        learning_rate=lr,
        gamma=1.0,  # episodic games, reward only at the end
        ent_coef=0.01,
        policy_kwargs={"net_arch": list(net)},
        seed=seed,
        verbose=verbose,
    )
    model.learn(total_timesteps=steps)
    return model


PROG = "python -m spieltisch.train.examples.sb3_maskable_ppo"


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(
        prog=PROG,
        description=__doc__.split("\n\n")[0],
    )
    p.add_argument("--game", default="kalaha", choices=sorted(GAMES))
    add_option_argument(p)
    p.add_argument("--opponent", default="random", help="arena agent name (default: random)")
    p.add_argument("--seat", default="random", help="0, 1, ... or 'random' (default)")
    p.add_argument("--steps", type=int, default=20_000, help="training steps (your decisions)")
    p.add_argument("--n-steps", type=int, default=512, help="rollout length per update")
    p.add_argument("--lr", type=float, default=1e-3)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--eval-games", type=int, default=200)
    p.add_argument("--save", default=None, help="save the model here (sb3 .zip)")
    p.add_argument("--verbose", type=int, default=0)
    args = p.parse_args(argv)
    try:
        options = parse_options(args.option)
    except ValueError as err:
        p.error(str(err))
    if args.steps < 1 or args.eval_games < 1 or args.n_steps < 2:
        p.error("--steps and --eval-games must be at least 1, --n-steps at least 2")
    try:  # a wrong seat, opponent or game option is a usage error, found before training
        seat = args.seat if args.seat == "random" else int(args.seat)
        make_gym(args.game, opponents=[args.opponent], seat=seat, **options).close()
    except (TypeError, ValueError) as err:
        p.error(str(err))
    missing = missing_requirement(PROG, ("sb3_contrib",), "sb3-contrib", "sb3")
    if missing is not None:  # (was: a ModuleNotFoundError traceback from inside train())
        print(missing, file=sys.stderr)
        return 2
    model = train(
        args.game,
        options,
        args.opponent,
        seat,
        args.steps,
        args.seed,
        args.n_steps,
        lr=args.lr,
        verbose=args.verbose,
    )
    if args.save:
        model.save(args.save)
    env = make_gym(args.game, opponents=[args.opponent], seat=seat, **options)
    result = evaluate(model, env, args.eval_games, seed=10_000 + args.seed)
    print(json.dumps({"game": args.game, "opponent": args.opponent, **result}, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
