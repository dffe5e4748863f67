"""Differential test against GNU Backgammon's move generator (the ``gnubg-nn`` package).

For 5,000 positions reached by random play (fixed seed) and each of the 21 distinct rolls, the
set of positions after our legal plays must equal gnubg's (``gnubg_nn.moves``). The larger run
(100,000 positions) is ``benchmarks/soak_backgammon_gnubg.py``.
"""

from __future__ import annotations

import pytest
from spieltisch.envs.backgammon import BackgammonGame
from spieltisch.envs.backgammon import rules as k

gnubg = pytest.importorskip("gnubg_nn")

from spieltisch.envs.backgammon import gnubg_adapter as ga  # noqa: E402

GAME = BackgammonGame()


def test_legal_plays_equal_gnubg_on_5000_random_positions_and_all_21_rolls():
    boards, turns = ga.random_positions(5000, seed=2024, game=GAME)
    stats = ga.compare_with_gnubg(boards, turns)
    assert stats["pairs"] == 5000 * 21
    # The sample is not trivial: blocked rolls, bear-offs and big doubles all occur.
    assert stats["no_move_pairs"] > 100 and stats["max_plays"] > 200
    bear_off = sum(b[k.OFF] + b[k.SIDE + k.OFF] > 0 for b in boards)
    on_bar = sum(b[k.BAR] + b[k.SIDE + k.BAR] > 0 for b in boards)
    assert bear_off > 300 and on_bar > 500


def test_hand_made_positions_agree_with_gnubg():
    hand_made = ["27YBBwDgc/ADQA", "m23wAQDgc/ABYA", "4HPwBDDgc/ABMA", "AAD8/wEKAAAAAA"]
    hand_made += ["AAD8/wEiAAAAAA", "/x8AABj/PwAEAA", "/wcAMBj/PwAEAA", "/x8AAAb/PwAEAA"]
    for pid in hand_made:
        for roll in ga.ROLLS:
            state = GAME.state_from_position_id(pid, roll)
            mine = {row.tobytes() for row in ga.play_keys(state)}
            theirs = {row.tobytes() for row in ga.gnubg_play_keys(state)}
            assert mine == theirs, (pid, roll)


def test_board_conversion_both_ways():
    state = GAME.state_from_text("m23wAQDgc/ABYA 1 63")
    board = ga.to_gnubg_board(state)
    assert gnubg.position_id(board) == state.position_id()
    back = ga.from_gnubg_board(board, seat=1, dice=(6, 3))
    assert back == state
    assert ga.bytes_to_key(ga.key_to_bytes(gnubg.key_of_board(board))) == gnubg.key_of_board(board)
    with pytest.raises(ValueError, match="25"):
        ga.from_gnubg_board([[0] * 24, [0] * 25])


def test_best_play_and_evaluation_for_a_0_ply_opponent():
    state = GAME.state_from_text("4HPwATDgc/ABMA 0 31")
    index = ga.best_play_index(state)
    assert state.legal_plays()[index].notation in ("8/5 6/5", "6/5 8/5")  # the standard 31
    actions = ga.best_actions(state)
    for action in actions:
        state.apply(action)
    assert state.turn == 1
    # A pass position: the only "play" is to pass.
    closed = GAME.state_from_position_id("27YBBwDgc/ADQA", (6, 1))
    assert ga.best_actions(closed) == (k.PASS,)
    win, *_ = ga.evaluate(GAME.state_from_text("4HPwATDgc/ABMA 0 roll"))
    assert 0.45 < win < 0.6
    assert ga.equity(GAME.state_from_text("AAD8/wEKAAAAAA 0 roll")) > 1.5  # a sure gammon
    with pytest.raises(ValueError, match="whole roll"):
        ga.best_play_index(GAME.state_from_text("4HPwATDgc/ABMA 0 3"))
