"""The agent protocol used everywhere: the arena, training, the command line and user code.

An agent is asked for a move with what its seat may know::

    action = agent.act(observation, state)

* ``observation``: the env's observation dict for the agent's seat, ``{"observation": ...,
  "action_mask": ...}`` (``action_mask[a] == 1`` for legal ``a``).
* ``state``: for perfect-information games (Kalaha, Hus, Backgammon) a *copy* of the engine
  state, so search agents can look ahead. For hidden-information games (HiLo) an
  :class:`InformationSet` of the agent's seat instead (see below); ``None`` where the caller
  offers nothing beyond the observation (agents must then work from the observation alone).

Hidden information (HiLo). The real engine state is never handed to an agent, not even wrapped:
an :class:`InformationSet` holds a *stand-in* state, drawn once with the engine's
``sample_consistent(seat, rng)`` from the real one. The stand-in agrees with the real state on
everything the seat knows (``view(seat)``, the observation, the legal moves) and has every
hidden card (face-down cards, the unknown draw pile, another player's drawn card, future
chance) redrawn at random, so nothing hidden can be read from it, even by introspection. Agents
call :meth:`InformationSet.sample` for more consistent states (resampling the stand-in gives
the same distribution as resampling the real state: the sampler keeps exactly what the seat
knows and redraws everything else uniformly) and :meth:`InformationSet.view` for the readable
knowledge. The arena, ``play`` and :func:`spieltisch.agents.arena.match.agent_input` build it; the
stand-in is drawn from a generator of the match, never from the env's own generator, so it does
not change the game's chance events.

It returns a legal action (an ``int``). ``reset(seed)`` is called before each game so that agents
with randomness are reproducible. Agents never receive hidden information.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
from spieltisch.envs._common.options import parse_key_value


class Agent:
    """Base class of agents. Subclasses implement :meth:`act`; ``name`` is the command-line name."""

    name: str = "agent"

    def __init__(self, seed: int | None = None) -> None:
        self.rng = np.random.default_rng(seed)

    def reset(self, seed: int | None = None) -> None:
        """Start a new game; reseed the agent's own generator if ``seed`` is given."""
        if seed is not None:
            self.rng = np.random.default_rng(seed)

    def act(self, observation: dict[str, np.ndarray], state: Any | None = None) -> int:
        raise NotImplementedError

    def __repr__(self) -> str:
        return f"{type(self).__name__}(name={self.name!r})"


def parse_agent_name(spec: str, label: str | None = None) -> tuple[str, dict[str, Any]]:
    """``"alphabeta:depth=6,tt_bits=18"`` -> ``("alphabeta", {"depth": 6, "tt_bits": 18})``;
    errors name the agent ``label`` (default ``spec``)."""
    name, sep, rest = spec.partition(":")
    params: dict[str, Any] = {}
    if sep:
        what = f"the parameters of agent {label or spec!r}"
        for pair in rest.split(","):
            key, value = parse_key_value(pair, what)
            if not key.isidentifier():  # they become keyword arguments
                raise ValueError(f"{what} are named like Python identifiers, got {key!r}")
            if key in params:  # (the last one was kept)
                raise ValueError(f"{what} give {key!r} twice")
            if key == "seed":
                raise ValueError(f"{what}: an agent's seed comes from the arena (its --seed)")
            params[key] = value
    if not name:
        raise ValueError(f"empty agent name in {spec!r}")
    return name, params


def build_named(
    label: str,
    build: Callable[..., Any],
    *args: Any,
    named_already: tuple[type[ValueError], ...] = (),
    **kwargs: Any,
) -> Any:
    """``build(*args, **kwargs)``, its ValueError (a parameter's value refused: "depth must be
    between 1 and 1000", but which agent's depth?) told with the agent ``label`` in front,
    unless the message starts with it already or the error is one of ``named_already`` (errors
    that name their source, as a checkpoint's names its file). (Not ``keep``: that is a
    backgammon agent's parameter, passed on in ``kwargs``.)"""
    try:
        return build(*args, **kwargs)
    except ValueError as err:
        if isinstance(err, named_already) or str(err).startswith(label):
            raise
        raise ValueError(f"{label}: {err}") from err


def legal_actions_of(observation: dict[str, np.ndarray]) -> np.ndarray:
    """The legal actions named by an observation's mask; raises if there are none."""
    legal = np.flatnonzero(observation["action_mask"])
    if legal.size == 0:
        raise ValueError(
            "the observation's action_mask allows no action: it is not this agent's turn"
        )
    return legal


class RandomAgent(Agent):
    """Plays a uniformly random legal action (from its own seeded generator)."""

    name = "random"

    def act(self, observation: dict[str, np.ndarray], state: Any | None = None) -> int:
        return int(self.rng.choice(legal_actions_of(observation)))


class InformationSet:
    """What one seat of a hidden-information game knows, with a sampler of consistent states.

    Built from the real state by the match loop; keeps only a *stand-in* state drawn with
    ``state.sample_consistent(seat, rng)`` (see the module docstring).
    """

    __slots__ = ("_stand_in", "seat")

    def __init__(self, state: Any, seat: int, rng: np.random.Generator) -> None:
        self.seat = int(seat)
        self._stand_in = state.sample_consistent(self.seat, rng)

    def sample(self, rng: np.random.Generator | int | None = None) -> Any:
        """A full engine state consistent with the seat's knowledge, drawn at random (a new
        object each call; safe to play moves on)."""
        return self._stand_in.sample_consistent(self.seat, rng)

    def view(self) -> Any:
        """The seat's knowledge as readable data (the engine's ``view(seat)``)."""
        return self._stand_in.view(self.seat)

    @property
    def current_player(self) -> int:
        return int(self._stand_in.current_player)

    def legal_actions(self) -> tuple[int, ...]:
        return tuple(self._stand_in.legal_actions())
