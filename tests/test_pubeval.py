"""pubeval with its weights as data scores and plays exactly like GNU Backgammon's pubeval."""

from __future__ import annotations

import numpy as np
import pytest
from spieltisch.agents.backgammon import pubeval
from spieltisch.agents.backgammon.baselines import _apply_gnubg_moves, _play_index_of_board
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


def test_a_won_position_scores_like_gnubg():
    mover, opponent = np.zeros(25, dtype=int), np.zeros(25, dtype=int)
    opponent[3] = 2
    g = [mover.tolist(), opponent.tolist()]
    assert float(pubeval.score(mover, opponent)) == gnubg_nn.pub_eval_score(g) == pubeval.WON


def test_resulting_positions_of_every_play_score_like_gnubg():
    """The positions the agent compares are those after a play, games just won included."""
    game = BackgammonGame()
    rng = np.random.default_rng(8)
    boards, turns = ga.random_positions(400, 17)
    for board, turn in zip(boards, turns, strict=True):
        roll = (int(rng.integers(1, 7)), int(rng.integers(1, 7)))
        position_id = gnubg_nn.position_id(ga.board_to_gnubg(board, turn))
        state = game.state_from_position_id(position_id, roll)
        after = state.play_boards()
        mover = after[:, 26 * turn : 26 * turn + 25]
        opponent = after[:, 26 * (1 - turn) : 26 * (1 - turn) + 25]
        expected = [
            gnubg_nn.pub_eval_score([m.tolist(), o.tolist()])
            for m, o in zip(mover, opponent, strict=True)
        ]
        assert np.allclose(pubeval.score(mover, opponent), expected, atol=1e-4)


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


def test_the_agent_plays_like_gnubg_through_whole_games():
    """Every decision of 30 random games, including the plays that break contact (a pubeval
    player weighs them with the weights of the position before its move, like gnubg)."""
    game = BackgammonGame()
    agent = make_agent("pubeval", "backgammon", seed=0)
    rng = np.random.default_rng(1)
    decisions = 0
    for _ in range(30):
        state = game.new_initial_state()
        while not state.is_terminal():
            if state.is_chance_node():
                state.roll_dice(rng)
                continue
            if state.num_plays() > 1:
                board = ga.to_gnubg_board(state)
                moves = list(gnubg_nn.pub_best_move(board, *ga._whole_roll(state)))
                expected = _play_index_of_board(state, _apply_gnubg_moves(board, moves))
                assert agent.choose_play(state) == expected, state.to_text()
                decisions += 1
            state.apply_play(int(rng.integers(state.num_plays())))
    assert decisions > 1000


def test_an_agent_whose_move_was_not_played_answers_the_position_it_is_shown() -> None:
    # asked for a move, then another legal move played (an advisor, an exploration move): the
    # agent answered the next question from its stale plan where that move was still legal
    from spieltisch.agents.registry import make_agent
    from spieltisch.envs import make

    agent = make_agent("pubeval", "backgammon", seed=0)
    asked = differed = 0
    for seed in range(4):
        env = make("backgammon")
        env.reset(seed=seed)
        rng = np.random.default_rng(seed)
        for name in env.agent_iter():
            observation, _, over, cut, _ = env.last()
            if over or cut:
                env.step(None)
                continue
            chosen = agent.act(observation, env.unwrapped.state.clone())
            others = [a for a in np.flatnonzero(observation["action_mask"]) if a != chosen]
            env.step(int(rng.choice(others)) if others else chosen)
            if (
                env.agents
                and env.agent_selection == name
                and env.observe(name)["action_mask"].sum() > 1
            ):
                again = env.observe(name)
                fresh = make_agent("pubeval", "backgammon", seed=0)
                asked += 1
                state = env.unwrapped.state
                differed += agent.act(again, state.clone()) != fresh.act(again, state.clone())
    assert asked > 100 and differed == 0
