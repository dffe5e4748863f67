"""spieltisch game environments.

Each game is a PettingZoo AEC environment module with ``env(**options)`` and ``raw_env``::

    from spieltisch.envs import kalaha_v0
    env = kalaha_v0.env(render_mode="ansi")

or by game name: ``spieltisch.envs.make("kalaha", pits=4)``. The rules engines (no RL library
needed) live in the per-game packages, e.g. ``spieltisch.envs.kalaha.KalahaGame``. The env
modules are imported on first use, so that using an engine alone does not import PettingZoo.
"""

from __future__ import annotations

import importlib
from types import ModuleType
from typing import Any

#: game name -> env module name (the version suffix changes only when behaviour changes)
GAMES = {"kalaha": "kalaha_v0", "hus": "hus_v0", "hilo": "hilo_v0", "backgammon": "backgammon_v0"}

__all__ = ["GAMES", "env_module", "make", "make_gym", *GAMES.values()]


def env_module(game: str) -> ModuleType:
    """The env module of ``game`` (a name of :data:`GAMES`)."""
    if game not in GAMES:
        raise ValueError(f"unknown game {game!r}; games are {sorted(GAMES)}")
    return importlib.import_module(f"spieltisch.envs.{GAMES[game]}")


def make(game: str, **options: Any) -> Any:
    """``env(**options)`` of the game named ``game``, with PettingZoo's standard wrappers."""
    return env_module(game).env(**options)


def make_gym(game: str, opponents: Any = ("random",), seat: int | str = 0, **kwargs: Any) -> Any:
    """A Gymnasium single-agent env: your ``seat`` of ``game`` against ``opponents`` (agent
    names or Agent objects); see :mod:`spieltisch.envs.single_agent`."""
    from spieltisch.envs.single_agent import make_gym as _make_gym

    return _make_gym(game, opponents=opponents, seat=seat, **kwargs)


def __getattr__(name: str) -> ModuleType:
    if name in GAMES.values():
        return importlib.import_module(f"spieltisch.envs.{name}")
    raise AttributeError(f"module 'spieltisch.envs' has no attribute {name!r}")
