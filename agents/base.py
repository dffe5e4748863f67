"""The agent protocol used everywhere: the arena, training, the command line and user code.

An agent is asked for a move with what its seat may know::

    action = agent.act(observation, state)

* ``observation``: the env's observation dict for the agent's seat, ``{"observation": ...,
  "action_mask": ...}`` (``action_mask[a] == 1`` for legal ``a``).
* ``state``: for perfect-information games (Kalaha, Hus, Backgammon) a *copy* of the engine
  state, so search agents can look ahead; ``None`` for hidden-information games (HiLo), where
  an agent must work from the observation alone (or from the engine's information-set
  sampling, which never reveals hidden cards).

It returns a legal action (an ``int``). ``reset(seed)`` is called before each game so that agents
with randomness are reproducible. Agents never receive hidden information.
"""

from __future__ import annotations

from typing import Any

import numpy as np


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
