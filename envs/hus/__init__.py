"""Hus: rules kernels (:mod:`.rules`), engine (:mod:`.engine`), text notation
(:mod:`.notation`), pictures (:mod:`.draw`), batched engine (:mod:`.batch`), PettingZoo env
(:mod:`.env`)."""

from spieltisch.envs.hus.engine import HusGame, HusState, MoveStats, SowingStep, SowingTrace

__all__ = ["HusGame", "HusState", "MoveStats", "SowingStep", "SowingTrace"]
