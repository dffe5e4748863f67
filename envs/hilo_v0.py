"""``hilo_v0``: HiLo – Dein Königreich as a PettingZoo AEC environment (documented in
:mod:`.hilo.env`)."""

from spieltisch.envs.hilo.env import __doc__, env, raw_env  # noqa: F401

__all__ = ["env", "raw_env"]
