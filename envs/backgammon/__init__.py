"""Backgammon: rules engine (:mod:`.engine`, kernels in :mod:`.kernels`), batched engine
(:mod:`.batch`), PettingZoo env (:mod:`.env`), GNU Backgammon adapter (:mod:`.gnubg_adapter`)."""

from spieltisch.envs.backgammon.engine import BackgammonGame, BackgammonState, Play

__all__ = ["BackgammonGame", "BackgammonState", "Play"]
