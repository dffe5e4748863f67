"""Draw the README's pictures: every game's ``rgb_array`` rendering after a few random moves.

Usage: ``python docs/make_images.py`` (writes docs/images/<game>.png).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
from PIL import Image
from spieltisch.envs import GAMES, make

MOVES = {"kalaha": 5, "hus": 6, "backgammon": 6, "hilo": 12}


def main() -> None:
    out = Path(__file__).resolve().parent / "images"
    out.mkdir(exist_ok=True)
    rng = np.random.default_rng(1)
    for game in GAMES:
        env = make(game, render_mode="rgb_array")
        env.reset(seed=1)
        for _ in range(MOVES.get(game, 5)):
            observation, *_ = env.last()
            env.step(int(rng.choice(np.flatnonzero(observation["action_mask"]))))
        path = out / f"{game}.png"
        Image.fromarray(env.render()).save(path, optimize=True)
        print(f"wrote {path}")


if __name__ == "__main__":
    main()
