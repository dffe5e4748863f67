"""spieltisch agents: the agent protocol (:mod:`.base`), scripted baselines, neural policies."""

import spieltisch.envs  # noqa: F401  (first: it points numba's cache, before any kernel)
from spieltisch.agents.base import Agent, RandomAgent, legal_actions_of

__all__ = ["Agent", "RandomAgent", "legal_actions_of"]
