"""Exact Kalah results by plain minimax, for the search tests on small boards (independent of
the project's solver, which they would otherwise trust)."""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

from spieltisch.envs.kalaha import KalahaGame


def minimax_of(game: KalahaGame) -> tuple[Callable[[str], int], Callable[[Any], dict[int, int]]]:
    """``(value, move_values)`` for ``game``: ``value(text)`` is the result (+1 win, 0 draw, -1
    loss) under perfect play of the position ``text`` for its player to move; ``move_values``
    that of every legal move of a state, for the player to move (an extra turn: no negation)."""

    @functools.cache
    def value(text: str) -> int:
        state = game.state_from_text(text)
        if state.is_terminal():
            return int(state.returns()[state.current_player])
        return max(move_values(state).values())

    def move_values(state: Any) -> dict[int, int]:
        out = {}
        for action in state.legal_actions():
            child = state.clone()
            child.apply(action)
            result = value(child.to_text())
            out[action] = result if child.current_player == state.current_player else -result
        return out

    return value, move_values
