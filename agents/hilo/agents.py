"""HiLo's agents by name, as :mod:`spieltisch.agents.registry` reads them."""

from __future__ import annotations

from spieltisch.agents.hilo.heuristic import AGENTS as HEURISTIC_AGENTS

AGENTS = dict(HEURISTIC_AGENTS)
