"""Playing one game between agents in any spieltisch env (used by ``play`` and the arena)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from spieltisch.agents.base import Agent


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


def play_game(
    env: Any,
    agents: Mapping[str, Agent],
    seed: int | None = None,
    on_move: Callable[[str, int], None] | None = None,
) -> GameRecord:
    """Play one game of ``env`` (an AEC env) with ``agents[agent_name]`` choosing the moves.

    Each agent gets its seat's observation and, in perfect-information games, a copy of the
    engine state (:meth:`TurnBasedEnv.agent_state`); never hidden information.
    """
    env.reset(seed=seed)
    raw = env.unwrapped
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
        action = agents[agent_name].act(observation, raw.agent_state())
        moves.append((agent_name, action))
        env.step(action)
        if on_move is not None:
            on_move(agent_name, action)
    return GameRecord(rewards=rewards, infos=infos, moves=moves, truncated=truncated)
