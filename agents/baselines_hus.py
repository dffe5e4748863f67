"""Hus baselines: ``greedy`` and ``alphabeta`` (see :mod:`.baselines_mancala`)."""

from __future__ import annotations

from spieltisch.agents.baselines_mancala import HUS_AGENTS

AGENTS = dict(HUS_AGENTS)
