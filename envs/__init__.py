"""spieltisch game environments.

Each game is a PettingZoo AEC environment module with ``env(**options)`` and ``raw_env``::

    from spieltisch.envs import kalaha_v0
    env = kalaha_v0.env(render_mode="ansi")

The rules engines (no RL library needed) live in the per-game packages, e.g.
``spieltisch.envs.kalaha.KalahaGame``. The env modules are imported on first use, so that using
an engine alone does not import PettingZoo.
"""

import importlib

ENV_MODULES = ("kalaha_v0", "hus_v0")

__all__ = list(ENV_MODULES)


def __getattr__(name: str):
    if name in ENV_MODULES:
        return importlib.import_module(f"spieltisch.envs.{name}")
    raise AttributeError(f"module 'spieltisch.envs' has no attribute {name!r}")
