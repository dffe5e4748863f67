"""Agents by name, as the command line, the arena and configs refer to them.

``make_agent("random", game="kalaha", seed=0)``. Every game has ``random``; game-specific agents
come from each game's agent table :data:`GAME_AGENT_TABLE`, a module that defines
``AGENTS: dict[str, AgentFactory]`` (a factory is ``(game_options, seed) -> Agent``).

Agent names with parameters: ``NAME:KEY=VALUE,KEY=VALUE``, e.g. ``alphabeta:depth=6`` or
``alphabeta:time=0.5`` or ``gnubg:plies=1``. Values are read as YAML scalars (``6`` is an int,
``0.5`` a float, ``true`` a bool, anything else a string; the parser is
:func:`spieltisch.envs._common.options.parse_key_value`). The parameters are passed to the
factory as keyword arguments, ``factory(game_options, seed, **params)``; a factory that takes
none is called without them (and a name with parameters for it is an error).

:func:`check_agent_name` is the one check of a name (the command line, configs and the arena
use it), and its error lists the valid agents. Each table also holds the game's defaults for
play, read here: ``OPENING_PLIES`` (:func:`opening_plies`) and, for a game with hidden
information, ``HUMAN_VIEW_OPTION`` (:func:`human_view_options`).
"""

from __future__ import annotations

import importlib
import inspect
import os
from collections.abc import Callable, Mapping
from types import MappingProxyType
from typing import Any

from spieltisch.agents.base import Agent, RandomAgent, build_named, parse_agent_name
from spieltisch.envs import GAMES, check_options

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


def _table(game: str) -> Any:
    """The game's agent table module, ``agents/<game>/agents.py``."""
    if game not in GAMES:  # (an import error named a module instead of the games)
        raise ValueError(f"unknown game {game!r}; games are {sorted(GAMES)}")
    return importlib.import_module(GAME_AGENT_TABLE.format(game=game))


def agent_factories(game: str) -> dict[str, AgentFactory]:
    """All agents available for ``game``, by name."""
    from spieltisch.agents.human import human_factory

    factories: dict[str, AgentFactory] = {"random": _random, "human": human_factory(game)}
    factories.update(_table(game).AGENTS)
    return factories


def opening_plies(game: str) -> int:
    """Random opening moves the arena plays for the table by default: the game table's
    ``OPENING_PLIES`` (games without chance need some, or deterministic agents repeat one game)."""
    return int(_table(game).OPENING_PLIES)


def human_view_options(game: str, seat: int) -> dict[str, Any]:
    """Env options that show a person playing ``seat`` only what that seat knows: the game
    table's ``HUMAN_VIEW_OPTION`` set to the seat (hidden-information games), else none."""
    option = getattr(_table(game), "HUMAN_VIEW_OPTION", None)
    return {option: seat} if option else {}


def agent_names(game: str) -> list[str]:
    return sorted(agent_factories(game))


def check_agent_name(spec: str, game: str, *, human: bool = True, prefixed: bool = True) -> str:
    """The base name of the agent ``spec`` (``"alphabeta:depth=6"`` -> ``"alphabeta"``); raises
    ValueError listing the agents of ``game`` if there is none of that name.

    ``human=False`` rejects ``human`` (unattended play: training, configs). Prefixed names
    (``pretrained:kalaha``, ``checkpoint:PATH``, see :data:`PREFIX_AGENT_MODULES`) pass here
    and are checked when loaded; ``prefixed=False`` rejects them.
    """
    prefix, sep, _ = spec.partition(":")
    if prefixed and sep and prefix in PREFIX_AGENT_MODULES:
        return prefix
    known = set(agent_factories(game))
    if not human:
        known.discard("human")
    if sep and prefix in PREFIX_AGENT_MODULES:  # (read as parameters, they got odd errors)
        raise ValueError(f"{spec}: {prefix}: agents are not taken here; agents are {sorted(known)}")
    base = parse_agent_name(spec)[0]
    if base == "human" and not human:
        raise ValueError(
            "agent 'human' cannot play here (unattended games); a person plays with "
            f"'spieltisch play'; agents are {sorted(known)}"
        )
    if base not in known:
        prefixes = ", pretrained:<game> (shipped) and checkpoint:<path> (a trained policy)"
        raise ValueError(
            f"unknown agent {base!r} for {game}; agents are {sorted(known)}"
            + (prefixes if prefixed else "")
        )
    return base


def check_agent_parameters(base: str, factory: AgentFactory, params: dict[str, Any]) -> None:
    """ValueError when ``params`` names a parameter that ``factory`` (``factory(options, seed,
    **params)``) does not declare; factories taking ``**kwargs`` check their own."""
    declared = list(inspect.signature(factory).parameters.values())[2:]
    if any(p.kind is inspect.Parameter.VAR_KEYWORD for p in declared):
        return
    names = [p.name for p in declared]
    unknown = sorted(set(params) - set(names))
    if unknown:
        takes = f"takes {', '.join(names)}" if names else "takes no parameters"
        raise ValueError(f"agent {base!r} {takes}; got {unknown}")


def make_agent(
    name: str,
    game: str,
    seed: int | None = None,
    game_options: dict[str, Any] | None = None,
    *,
    checkpoint_root: str | os.PathLike | None = None,
) -> Agent:
    """The agent called ``name`` (with parameters: ``NAME:KEY=VALUE,...``) for ``game``; raises
    ValueError naming the problem (an unknown name lists the agents that exist, see
    :func:`check_agent_name`). ``checkpoint_root``: the folder ``checkpoint:PATH`` must lie in
    (PATH is then relative to it; ``..`` or links out of it are refused), for programs that
    load agents named by other people; None (the default) allows any path."""
    if game_options:  # (a misspelt or mistyped option reached the agent, which ignored it)
        check_options(game, game_options)
    prefix, sep, value = name.partition(":")
    if sep and prefix in PREFIX_AGENT_MODULES:
        module = importlib.import_module(PREFIX_AGENT_MODULES[prefix])
        return module.make_prefixed_agent(
            prefix, value, game, seed, dict(game_options or {}), checkpoint_root
        )
    base = check_agent_name(name, game)
    params = parse_agent_name(name)[1]
    factory = agent_factories(game)[base]
    if not params:
        return factory(dict(game_options or {}), seed)
    check_agent_parameters(base, factory, params)
    try:
        return build_named(base, factory, dict(game_options or {}), seed, **params)
    except TypeError as err:  # the names were checked above: a value of the wrong type
        raise ValueError(f"agent {base!r}: bad parameter values {params}: {err}") from err
