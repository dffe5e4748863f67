"""Differential test: Kalaha with ``rules="standard"``, 6 pits x 4 stones, plays exactly like
OpenSpiel's ``mancala`` (the peer of the benchmark), move by move, over many random games."""

from __future__ import annotations

import numpy as np
import pytest
from spieltisch.envs.kalaha import KalahaGame

pyspiel = pytest.importorskip("pyspiel", reason="open-spiel is installed by the test extra")


def openspiel_board(state) -> list[int]:
    """OpenSpiel's board (0: seat 1's store, 1-6: seat 0's pits, 7: seat 0's store, 8-13: seat
    1's pits) in our layout (seat 0's pits and store, then seat 1's)."""
    t = [int(v) for v in state.observation_tensor(0)[:14]]
    return t[1:8] + t[8:14] + [t[0]]


def test_standard_rules_match_openspiel_mancala_move_by_move():
    game = KalahaGame(pits=6, seeds=4, rules="standard")
    peer = pyspiel.load_game("mancala")
    rng = np.random.default_rng(0)
    for _ in range(300):
        ours, theirs = game.new_initial_state(), peer.new_initial_state()
        while not ours.is_terminal():
            assert not theirs.is_terminal()
            assert ours.current_player == theirs.current_player()
            offset = 1 if ours.current_player == 0 else 8
            assert [a - offset for a in theirs.legal_actions()] == list(ours.legal_actions())
            action = int(rng.choice(ours.legal_actions()))
            ours.apply(action)
            theirs.apply_action(action + offset)
            board = openspiel_board(theirs)
            if ours.is_terminal():
                # OpenSpiel leaves the last stones in the pits; we sweep them into the stores.
                board = [0] * 6 + [sum(board[0:7])] + [0] * 6 + [sum(board[7:14])]
            assert ours.board.tolist() == board
        assert theirs.is_terminal()
        assert ours.returns() == tuple(theirs.returns())
