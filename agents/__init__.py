"""spieltisch agents: the agent protocol (:mod:`.base`), scripted baselines, neural policies."""

from spieltisch.agents.base import Agent, RandomAgent, legal_actions_of

__all__ = ["Agent", "RandomAgent", "legal_actions_of"]
