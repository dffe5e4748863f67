"""Kalaha's agents by name, as :mod:`spieltisch.agents.registry` reads them."""

from __future__ import annotations

from spieltisch.agents.kalaha.perfect import AGENTS as PERFECT_AGENTS
from spieltisch.agents.mancala.alphabeta import KALAHA_AGENTS

AGENTS = {**PERFECT_AGENTS, **KALAHA_AGENTS}
