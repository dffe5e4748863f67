"""Agents by name, as the command line, the arena and configs refer to them.

``make_agent("random", game="kalaha", seed=0)``. Every game has ``random``; game-specific agents
come from each game's agent table :data:`GAME_AGENT_TABLE`, a module that defines
``AGENTS: dict[str, AgentFactory]`` (a factory is ``(game_options, seed) -> Agent``).

Agent names with parameters: ``NAME:KEY=VALUE,KEY=VALUE``, e.g. ``alphabeta:depth=6`` or
``alphabeta:time=0.5`` or ``gnubg:plies=1``. Values are read as YAML scalars (``6`` is an int,
``0.5`` a float, ``true`` a bool, anything else a string). The parameters are passed to the
factory as keyword arguments, ``factory(game_options, seed, **params)``; a factory that takes
none is called without them (and a name with parameters for it is an error).
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from types import MappingProxyType
from typing import Any

from spieltisch.agents.base import Agent, RandomAgent

AgentFactory = Callable[[dict[str, Any], int | None], Agent]

#: each game's agents: the ``AGENTS`` dict of the game's agent package, ``agents/<game>/agents.py``
GAME_AGENT_TABLE = "spieltisch.agents.{game}.agents"


#: agent-name prefixes whose rest is one value, not KEY=VALUE parameters: ``pretrained:kalaha``
#: (an agent shipped with the package), ``checkpoint:runs/kalaha_ppo/final`` (a trained policy);
#: the module's ``make_prefixed_agent(prefix, value, game, seed, game_options)`` builds them
PREFIX_AGENT_MODULES: Mapping[str, str] = MappingProxyType(
    {
        "pretrained": "spieltisch.agents.neural.agents",
        "checkpoint": "spieltisch.agents.neural.agents",
    }
)


def _random(options: dict[str, Any], seed: int | None) -> Agent:
    return RandomAgent(seed)


def agent_factories(game: str) -> dict[str, AgentFactory]:
    """All agents available for ``game``, by name."""
    from spieltisch.agents.human import human_factory

    factories: dict[str, AgentFactory] = {"random": _random, "human": human_factory(game)}
    factories.update(importlib.import_module(GAME_AGENT_TABLE.format(game=game)).AGENTS)
    return factories


def parse_agent_name(spec: str) -> tuple[str, dict[str, Any]]:
    """``"alphabeta:depth=6,tt_bits=18"`` -> ``("alphabeta", {"depth": 6, "tt_bits": 18})``."""
    import yaml

    name, sep, rest = spec.partition(":")
    params: dict[str, Any] = {}
    if sep:
        for pair in rest.split(","):
            key, eq, value = pair.partition("=")
            key = key.strip()
            if not eq or not key or not key.isidentifier():
                raise ValueError(
                    f"agent parameters are written NAME:KEY=VALUE,KEY=VALUE; got {spec!r}"
                )
            params[key] = yaml.safe_load(value.strip())
    if not name:
        raise ValueError(f"empty agent name in {spec!r}")
    return name, params


def agent_names(game: str) -> list[str]:
    return sorted(agent_factories(game))


def make_agent(
    name: str, game: str, seed: int | None = None, game_options: dict[str, Any] | None = None
) -> Agent:
    """The agent called ``name`` (with parameters: ``NAME:KEY=VALUE,...``) for ``game``; raises
    naming the agents that exist."""
    prefix, sep, value = name.partition(":")
    if sep and prefix in PREFIX_AGENT_MODULES:
        module = importlib.import_module(PREFIX_AGENT_MODULES[prefix])
        return module.make_prefixed_agent(prefix, value, game, seed, dict(game_options or {}))
    factories = agent_factories(game)
    base, params = parse_agent_name(name)
    if base not in factories:
        raise ValueError(
            f"unknown agent {base!r} for {game}; agents are {sorted(factories)}, "
            f"pretrained:<game> (shipped) and checkpoint:<path> (a trained policy)"
        )
    if not params:
        return factories[base](dict(game_options or {}), seed)
    try:
        return factories[base](dict(game_options or {}), seed, **params)
    except TypeError as err:
        raise ValueError(
            f"agent {base!r} does not take parameters {sorted(params)}: {err}"
        ) from err
