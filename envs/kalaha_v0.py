"""``kalaha_v0``: Kalaha as a PettingZoo AEC environment (documented in :mod:`.kalaha.env`)."""

from spieltisch.envs.kalaha.env import __doc__, env, raw_env  # noqa: F401

__all__ = ["env", "raw_env"]
