"""Kalaha baselines: ``greedy`` and ``alphabeta`` (see :mod:`.baselines_mancala`)."""

from __future__ import annotations

from spieltisch.agents.baselines_mancala import KALAHA_AGENTS

AGENTS = dict(KALAHA_AGENTS)
