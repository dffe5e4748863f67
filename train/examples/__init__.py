"""Runnable examples with other RL libraries: ``python -m spieltisch.train.examples.<name> --help``.

* ``sb3_maskable_ppo``: sb3-contrib's MaskablePPO on the Gymnasium wrapper (``make_gym``);
* ``rllib_pettingzoo``: Ray RLlib PPO on the PettingZoo env through RLlib's ``PettingZooEnv``
  with an action-masking RLModule.
"""

from __future__ import annotations

import importlib


def missing_requirement(
    prog: str, modules: tuple[str, ...], library: str, extra: str
) -> str | None:
    """None if ``modules`` import; else the one line an example prints instead of an import
    traceback: the ``extra`` that installs ``library`` (torch, which no extra pins, first)."""
    for module in modules:
        try:
            importlib.import_module(module)
        except ImportError as err:
            missing = err.name or str(err)
            if missing == "torch":
                return (
                    f"{prog}: needs torch, which is not installed: install torch first (see the "
                    f'README), then pip install "spieltisch[{extra}]"'
                )
            return (
                f"{prog}: needs {library}, which is not installed (no module {missing!r}): "
                f'pip install "spieltisch[{extra}]" (in a checkout: pip install -e ".[{extra}]")'
            )
    return None
