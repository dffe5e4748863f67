"""The Kalaha endgame database builder against plain exhaustive minimax on every arrangement."""

from __future__ import annotations

import functools
import itertools

import numpy as np
import pytest
from spieltisch.agents.kalaha.endgame import (
    UNKNOWN,
    EndgameDatabase,
    binomial_table,
    child_position,
    level_offsets,
    rank_board,
    row_groups,
)
from spieltisch.envs.kalaha.engine import KalahaGame, KalahaState
from spieltisch.envs.kalaha.rules import BOARD_DTYPE


def exhaustive_value(game: KalahaGame):
    """Final store difference under perfect play for the player to move, by plain minimax over
    the engine's states (memoised on the board)."""

    @functools.cache
    def value(board: tuple, me: int) -> int:
        state = KalahaState(game, np.array(board, dtype=np.int32), me)
        if state.is_terminal():
            s = state.stores()
            return s[me] - s[1 - me]
        best = -1000
        for a in state.legal_actions():
            c = state.child(a)
            v = value(tuple(c.board.tolist()), c.current_player)
            best = max(best, v if c.current_player == me else -v)
        return best

    return value


def arrangements(pits: int, stones: int):
    """Every board (mover's view, stores empty) with at most ``stones`` stones in the pits."""
    for cells in itertools.product(range(stones + 1), repeat=2 * pits):
        if sum(cells) <= stones:
            yield [*cells[:pits], 0, *cells[pits:], 0]


def _terminal_value(board: list[int], pits: int) -> int | None:
    """The engine ends a game as soon as one side is empty: such boards are scored directly."""
    mine, theirs = sum(board[:pits]), sum(board[pits + 1 : 2 * pits + 1])
    return mine - theirs if mine == 0 or theirs == 0 else None


@pytest.mark.parametrize("rules", ["goki", "standard"])
@pytest.mark.parametrize(("pits", "stones"), [(3, 7), (4, 5)])
def test_every_database_entry_matches_minimax(pits, stones, rules):
    db = EndgameDatabase.load_or_build(pits, rules, stones, use_cache=False)
    binom = binomial_table(stones, pits)
    offsets = level_offsets(binom, stones, pits)
    assert db.values.size == offsets[stones + 1]
    assert not (db.values == UNKNOWN).any()
    value = exhaustive_value(KalahaGame(pits, 1, rules))
    seen = set()
    for board in arrangements(pits, stones):
        r = rank_board(np.array(board, dtype=BOARD_DTYPE), pits, binom, offsets)
        seen.add(r)
        expected = _terminal_value(board, pits)
        if expected is None:
            expected = value(tuple(board), 0)
        assert db.values[r] == expected, (board, rules)
    assert seen == set(range(db.values.size))  # the ranks are a bijection


def test_same_level_children_lie_further_right():
    """The builder's order: a move that banks nothing passes the turn and only moves the mover's
    stones to the right, so the child's weight (sum of every stone's place in its row) is larger."""
    pits = 4
    c = np.zeros(2 * pits + 2, dtype=BOARD_DTYPE)
    checked = 0
    for board in arrangements(pits, 5):
        b = np.array(board, dtype=BOARD_DTYPE)
        weight = sum(k * (b[k] + b[pits + 1 + k]) for k in range(pits))
        for i in range(pits):
            if b[i] == 0:
                continue
            _, kind, entered = child_position(b, c, pits, i, False)
            if kind != 0 and entered == 0:
                assert kind == 2  # the turn passed
                child_weight = sum(k * (c[k] + c[pits + 1 + k]) for k in range(pits))
                assert child_weight > weight
                checked += 1
    assert checked > 500


def test_row_groups_partition_the_rows():
    rows, starts = row_groups(5, 3)
    assert rows.shape == (56, 3)  # C(5 + 3, 3) rows of 3 pits with at most 5 stones
    for a in range(6):
        for w in range(starts.shape[1] - 1):
            group = rows[starts[a, w] : starts[a, w + 1]]
            assert (group.sum(axis=1) == a).all()
            assert (group @ np.arange(3) == w).all()
