"""The Kalaha solver against plain exhaustive minimax, the published values, and its database."""

from __future__ import annotations

import functools

import numpy as np
import pytest
from spieltisch.agents.kalaha_solver import KalahaSolver
from spieltisch.envs.kalaha.engine import KalahaGame, KalahaState


# --- reference: plain minimax over the engine's states ------------------------------------------
def final_difference(state: KalahaState, player: int) -> int:
    s = state.stores()
    return s[player] - s[1 - player]


def reference_values(game: KalahaGame):
    """``value(state)``: final store difference under perfect play for the player to move, and
    ``move_values(state)``, by exhaustive minimax (memoised on the position)."""

    @functools.cache
    def value_of(key: tuple) -> int:
        board, player = key
        state = KalahaState(game, np.array(board, dtype=np.int32), player)
        return max(move_values_of(state).values())

    def value(state: KalahaState) -> int:
        if state.is_terminal():
            return final_difference(state, state.current_player)
        return value_of((tuple(state.board.tolist()), state.current_player))

    def move_values_of(state: KalahaState) -> dict[int, int]:
        me = state.current_player
        out = {}
        for a in state.legal_actions():
            c = state.child(a)
            if c.is_terminal():
                out[a] = final_difference(c, me)
            elif c.current_player == me:  # last stone in own store: moves again, no negation
                out[a] = value(c)
            else:
                out[a] = -value(c)
        return out

    return value, move_values_of


def reachable(game: KalahaGame) -> list[KalahaState]:
    """Every non-terminal position reachable from the start (either seat first)."""
    seen: dict[tuple, KalahaState] = {}
    todo = [game.new_initial_state(0), game.new_initial_state(1)]
    while todo:
        s = todo.pop()
        key = (tuple(s.board.tolist()), s.current_player)
        if key in seen or s.is_terminal():
            continue
        seen[key] = s
        todo.extend(s.child(a) for a in s.legal_actions())
    return list(seen.values())


@pytest.mark.parametrize("rules", ["goki", "standard"])
@pytest.mark.parametrize(
    ("pits", "seeds", "db_stones", "id_max_depth"),
    [(3, 2, 0, 0), (3, 2, 12, 4), (4, 2, 0, 6), (4, 2, 5, 0)],
)
def test_solver_matches_minimax_everywhere(pits, seeds, db_stones, id_max_depth, rules, tmp_path):
    game = KalahaGame(pits, seeds, rules)
    value, move_values = reference_values(game)
    solver = KalahaSolver(
        game, db_stones=db_stones, cache_dir=tmp_path, tt_bits=12, id_max_depth=id_max_depth
    )
    states = reachable(game)
    assert len(states) > 100
    for i, state in enumerate(states):
        expected = value(state)
        ref_moves = move_values(state)
        if i % 7 == 0:
            solver.clear()  # also solve from an empty table now and then
        result = solver.solve(state, move_values=i % 3 == 0)
        assert result.value == expected, state.to_text()
        assert result.optimal_moves == sorted(a for a, v in ref_moves.items() if v == expected)
        if result.move_values:
            assert result.move_values == ref_moves, state.to_text()
