"""``hus_v0``: Hus as a PettingZoo AEC environment (documented in :mod:`.hus.env`)."""

from spieltisch.envs.hus.env import __doc__, env, raw_env  # noqa: F401

__all__ = ["env", "raw_env"]
