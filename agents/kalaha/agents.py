"""Kalaha's agents by name, as :mod:`spieltisch.agents.registry` reads them."""

from __future__ import annotations

from spieltisch.agents.kalaha.perfect import AGENTS as PERFECT_AGENTS
from spieltisch.agents.mancala.alphabeta import KALAHA_AGENTS

AGENTS = {**PERFECT_AGENTS, **KALAHA_AGENTS}

#: random opening moves the arena plays for the table by default: the game has no chance, so
#: deterministic agents would otherwise repeat one game from every seed
OPENING_PLIES = 2
