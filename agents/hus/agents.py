"""Hus's agents by name, as :mod:`spieltisch.agents.registry` reads them."""

from __future__ import annotations

from spieltisch.agents.mancala.alphabeta import HUS_AGENTS

AGENTS = dict(HUS_AGENTS)

#: random opening moves the arena plays for the table by default: the game has no chance, so
#: deterministic agents would otherwise repeat one game from every seed
OPENING_PLIES = 2
