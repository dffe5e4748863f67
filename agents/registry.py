"""Agents by name, as the command line, the arena and configs refer to them.

``make_agent("random", game="kalaha", seed=0)``. Every game has ``random``; game-specific agents
come from the modules listed in :data:`GAME_AGENT_MODULES`, each of which defines
``AGENTS: dict[str, AgentFactory]`` (a factory is ``(game_options, seed) -> Agent``).
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from types import MappingProxyType
from typing import Any

from spieltisch.agents.base import Agent, RandomAgent

AgentFactory = Callable[[dict[str, Any], int | None], Agent]

#: game name -> modules whose ``AGENTS`` dict adds agents for that game
GAME_AGENT_MODULES: Mapping[str, tuple[str, ...]] = MappingProxyType(
    {"kalaha": ("spieltisch.agents.kalaha_agents",)}
)


def _random(options: dict[str, Any], seed: int | None) -> Agent:
    return RandomAgent(seed)


def agent_factories(game: str) -> dict[str, AgentFactory]:
    """All agents available for ``game``, by name."""
    factories: dict[str, AgentFactory] = {"random": _random}
    for module_name in GAME_AGENT_MODULES.get(game, ()):
        factories.update(importlib.import_module(module_name).AGENTS)
    return factories


def agent_names(game: str) -> list[str]:
    return sorted(agent_factories(game))


def make_agent(
    name: str, game: str, seed: int | None = None, game_options: dict[str, Any] | None = None
) -> Agent:
    """The agent called ``name`` for ``game``; raises naming the agents that exist."""
    factories = agent_factories(game)
    if name not in factories:
        raise ValueError(f"unknown agent {name!r} for {game}; agents are {sorted(factories)}")
    return factories[name](dict(game_options or {}), seed)
