"""Kalaha: rules kernels (:mod:`.rules`), engine (:mod:`.engine`), text notation
(:mod:`.notation`), pictures (:mod:`.draw`), batched engine (:mod:`.batch`), PettingZoo env
(:mod:`.env`)."""

from spieltisch.envs.kalaha.engine import KalahaGame, KalahaState

__all__ = ["KalahaGame", "KalahaState"]
