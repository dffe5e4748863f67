"""Hus's agents by name, as :mod:`spieltisch.agents.registry` reads them."""

from __future__ import annotations

from spieltisch.agents.mancala.alphabeta import HUS_AGENTS

AGENTS = dict(HUS_AGENTS)
