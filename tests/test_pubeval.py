"""pubeval with its weights as data scores and plays exactly like GNU Backgammon's pubeval."""

from __future__ import annotations

import numpy as np
import pytest
from spieltisch.agents import pubeval
from spieltisch.agents.baselines_backgammon import _apply_gnubg_moves, _play_index_of_board
from spieltisch.agents.registry import make_agent
from spieltisch.envs.backgammon import BackgammonGame
from spieltisch.envs.backgammon import gnubg_adapter as ga

gnubg_nn = pytest.importorskip("gnubg_nn", reason="gnubg-nn is installed by the test extra")


def test_weights_are_data_with_tesauros_published_contact_weights():
    w = pubeval.weights()
    assert w["race"].shape == w["contact"].shape == (122,)
    # the first published contact weights of Tesauro's pubeval
    assert w["contact"][:5].tolist() == [0.25696, -0.66937, -1.66135, -2.02487, -2.53398]


def test_scores_and_race_test_equal_gnubg_on_random_positions():
    boards, _ = ga.random_positions(1500, 99)  # not the positions the weights were fitted on
    for board in boards:
        for mover_seat in (0, 1):
            g = ga.board_to_gnubg(board, 1 - mover_seat)  # the mover is not on roll
            mover, opponent = np.array(g[0]), np.array(g[1])
            assert float(pubeval.score(mover, opponent)) == pytest.approx(
                gnubg_nn.pub_eval_score(g), abs=1e-4
            )
            if gnubg_nn.classify(g) != gnubg_nn.c_over:
                race = gnubg_nn.classify(g) <= gnubg_nn.c_race
                assert bool(pubeval.is_race(mover, opponent)) == race


def test_the_agent_chooses_the_same_plays_as_gnubg():
    game = BackgammonGame()
    agent = make_agent("pubeval", "backgammon", seed=0)
    rng = np.random.default_rng(3)
    boards, turns = ga.random_positions(300, 5)
    compared = 0
    for board, turn in zip(boards, turns, strict=True):
        roll = (int(rng.integers(1, 7)), int(rng.integers(1, 7)))
        state = game.state_from_position_id(
            gnubg_nn.position_id(ga.board_to_gnubg(board, turn)), roll
        )
        if state.num_plays() <= 1:
            continue
        moves = list(gnubg_nn.pub_best_move(ga.to_gnubg_board(state), *roll))
        expected = _play_index_of_board(state, _apply_gnubg_moves(ga.to_gnubg_board(state), moves))
        assert agent.choose_play(state) == expected
        compared += 1
    assert compared > 200
