"""Kalaha: rules engine (:mod:`.engine`), batched engine (:mod:`.batch`), PettingZoo env
(:mod:`.env`)."""

from spieltisch.envs.kalaha.engine import KalahaGame, KalahaState

__all__ = ["KalahaGame", "KalahaState"]
