"""``backgammon_v0``: Backgammon as a PettingZoo AEC environment (documented in
:mod:`.backgammon.env`)."""

from spieltisch.envs.backgammon.env import __doc__, env, raw_env  # noqa: F401

__all__ = ["env", "raw_env"]
