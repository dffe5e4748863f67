"""Backgammon: rules kernels (:mod:`.rules`), engine (:mod:`.engine`), text notation and
diagram (:mod:`.notation`), pictures (:mod:`.draw`), batched engine (:mod:`.batch`), PettingZoo
env (:mod:`.env`), GNU Backgammon adapter (:mod:`.gnubg_adapter`)."""

from spieltisch.envs.backgammon.engine import BackgammonGame, BackgammonState, Play

__all__ = ["BackgammonGame", "BackgammonState", "Play"]
