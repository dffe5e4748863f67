"""Backgammon's agents by name, as :mod:`spieltisch.agents.registry` reads them."""

from __future__ import annotations

from spieltisch.agents.backgammon.baselines import AGENTS as BASELINE_AGENTS

AGENTS = dict(BASELINE_AGENTS)

#: random opening moves the arena plays for the table by default: none, the dice vary the games
OPENING_PLIES = 0
