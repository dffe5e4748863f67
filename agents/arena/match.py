"""Playing one game between agents in any spieltisch env (used by ``play`` and the arena)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from spieltisch.agents.base import Agent, InformationSet


@dataclass
class GameRecord:
    """The outcome of one game: final rewards and infos per agent, the moves, the turn count."""

    rewards: dict[str, float]
    infos: dict[str, dict[str, Any]]
    moves: list[tuple[str, int]] = field(default_factory=list)
    truncated: bool = False

    @property
    def num_moves(self) -> int:
        return len(self.moves)


def agent_input(raw: Any, agent_name: str, rng: np.random.Generator) -> Any:
    """The ``state`` argument for ``agent_name``'s :meth:`Agent.act`: a copy of the engine state
    in perfect-information games, an :class:`InformationSet` of its seat where the engine can
    sample consistent states (HiLo), else None. ``rng`` draws the information set's stand-in."""
    if raw.perfect_information:
        return raw.agent_state()
    state = getattr(raw, "state", None)
    if state is not None and hasattr(state, "sample_consistent"):
        return InformationSet(state, raw.seat_of(agent_name), rng)
    return None


def play_game(
    env: Any,
    agents: Mapping[str, Agent],
    seed: int | None = None,
    on_move: Callable[[str, int], None] | None = None,
    opening_plies: int = 0,
    reset: bool = True,
) -> GameRecord:
    """Play one game of ``env`` (an AEC env) with ``agents[agent_name]`` choosing the moves.

    Each agent gets its seat's observation and what :func:`agent_input` gives it (a copy of the
    engine state in perfect-information games, an information set in HiLo); never hidden
    information. ``opening_plies``: the first plies are random legal moves made by the table
    (drawn from a generator seeded by ``seed``, the same whoever sits where), to vary the games
    of deterministic agents. ``reset=False``: the env has been reset already.
    """
    if reset:
        env.reset(seed=seed)
    raw = env.unwrapped
    side_rng = np.random.default_rng([0 if seed is None else seed, 7])
    opening_left = opening_plies
    rewards = {a: 0.0 for a in env.possible_agents}
    infos: dict[str, dict[str, Any]] = {}
    moves: list[tuple[str, int]] = []
    truncated = False
    for agent_name in env.agent_iter():
        observation, reward, termination, truncation, info = env.last()
        rewards[agent_name] = reward
        if termination or truncation:
            infos[agent_name] = info
            truncated = truncated or truncation
            env.step(None)
            continue
        if opening_left > 0:
            opening_left -= 1
            action = int(side_rng.choice(np.flatnonzero(observation["action_mask"])))
        else:
            action = agents[agent_name].act(observation, agent_input(raw, agent_name, side_rng))
        moves.append((agent_name, action))
        env.step(action)
        if on_move is not None:
            on_move(agent_name, action)
    return GameRecord(rewards=rewards, infos=infos, moves=moves, truncated=truncated)
