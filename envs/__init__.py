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
import os
from pathlib import Path
from types import ModuleType
from typing import Any

from spieltisch.envs._common import numba_cache

# before any kernel is defined: a cache that follows every change of the kernels' sources
numba_cache.configure(Path(__file__).resolve().parent.parent)
# before torch loads MKL: MKL's own allocator deadlocked in arena workers forked from a process
# whose threads had used it (a network agent's move hung until its time limit and was scored as
# a forfeit: 2-3 of 8 repeated HiLo evaluations with workers=2); without it 0 of 12 hung, at
# the same speed. A value you set is kept; torch imported before spieltisch keeps MKL's default.
os.environ.setdefault("MKL_DISABLE_FAST_MM", "1")

#: game name -> env module name (the version suffix changes only when behaviour changes)
GAMES = {"kalaha": "kalaha_v0", "hus": "hus_v0", "hilo": "hilo_v0", "backgammon": "backgammon_v0"}

#: game name -> its batched engine class in ``envs/<game>/batch.py``
BATCHES = {
    "kalaha": "KalahaBatch",
    "hus": "HusBatch",
    "hilo": "HiLoBatch",
    "backgammon": "BackgammonBatch",
}

__all__ = [
    "BATCHES",
    "GAMES",
    "env_module",
    "make",
    "make_batch",
    "check_options",
    "options_with_defaults",
    "perfect_information",
    "reward_bounds",
    *GAMES.values(),
]


def env_module(game: str) -> ModuleType:
    """The env module of ``game`` (a name of :data:`GAMES`)."""
    if game not in GAMES:
        raise ValueError(f"unknown game {game!r}; games are {sorted(GAMES)}")
    return importlib.import_module(f"spieltisch.envs.{GAMES[game]}")


def perfect_information(game: str) -> bool:
    """Whether every player of ``game`` sees the whole state (False for HiLo's hidden cards):
    the env's own ``perfect_information`` flag."""
    return bool(env_module(game).raw_env.perfect_information)


def options_with_defaults(game: str, options: dict[str, Any]) -> dict[str, Any]:
    """``options`` with every env option not given set to its default (``raw_env``'s), so that
    ``{}`` and ``{"pits": 6}`` compare equal for Kalaha; unknown names are kept as given."""
    import inspect

    parameters = inspect.signature(env_module(game).raw_env.__init__).parameters
    defaults = {
        name: p.default
        for name, p in parameters.items()
        if p.default is not inspect.Parameter.empty
    }
    return {**defaults, **options}


def reward_bounds(game: str, options: dict[str, Any]) -> tuple[float, float] | None:
    """The least and the greatest reward a seat can get in one game of ``game`` with
    ``options`` (the env's defaults for the rest), or None where no fixed bound is set here
    (Kalaha's ``score``, Hus's ``points``, HiLo's ``coins``, backgammon's points with the
    cube). A mean reward's interval is clipped to these bounds."""
    given = options_with_defaults(game, options)
    if given.get("reward") == "win":  # +1 / -1 / 0, HiLo's shared wins between
        return (-1.0, 1.0)
    if game == "backgammon" and not given.get("cube"):  # single, gammon, backgammon
        return (-3.0, 3.0)
    return None


def check_options(game: str, options: dict[str, Any]) -> None:
    """Raises ValueError saying what is wrong if ``options`` are not env options of ``game``
    (the env's own checks: an unknown name, a wrong type, a value out of range)."""
    try:
        env_module(game).env(**options)  # (env() names unknown options, with "did you mean")
    except (TypeError, ValueError) as err:
        raise ValueError(str(err)) from err


def make(game: str, /, **options: Any) -> Any:
    """``env(**options)`` of the game named ``game``, with PettingZoo's standard wrappers."""
    return env_module(game).env(**options)


def make_batch(game: str, num_games: int, /, seed: Any = None, **options: Any) -> Any:
    """``num_games`` games of ``game`` as a batched engine (a
    :class:`~spieltisch.envs._common.batch.BatchedGame`), with the env's rule ``options``."""
    if game not in BATCHES:
        raise ValueError(f"unknown game {game!r}; games are {sorted(BATCHES)}")
    module = importlib.import_module(f"spieltisch.envs.{game}.batch")
    return getattr(module, BATCHES[game]).from_options(dict(options), num_games, seed)


def __getattr__(name: str) -> ModuleType:
    if name in GAMES.values():
        return importlib.import_module(f"spieltisch.envs.{name}")
    raise AttributeError(f"module 'spieltisch.envs' has no attribute {name!r}")
