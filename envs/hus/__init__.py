"""Hus: rules engine (:mod:`.engine`), batched engine (:mod:`.batch`), PettingZoo env
(:mod:`.env`)."""

from spieltisch.envs.hus.engine import HusGame, HusState, MoveStats

__all__ = ["HusGame", "HusState", "MoveStats"]
