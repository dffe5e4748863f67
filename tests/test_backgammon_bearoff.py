"""The one-sided bear-off database (``spieltisch.agents.backgammon.bearoff``): its index, drawn
positions worked out by hand, exact two-sided expectimax on small bear-offs (computed here by
a plain memoised recursion over the engine's plays), bad input, and the TD agents'
``bearoff=true``."""

from __future__ import annotations

import functools
import itertools

import numpy as np
import pytest
from spieltisch.agents.backgammon import bearoff as bo
from spieltisch.agents.backgammon import td_value as tv
from spieltisch.agents.backgammon.rollout import rollout
from spieltisch.agents.registry import make_agent
from spieltisch.envs.backgammon import BackgammonGame
from spieltisch.envs.backgammon import rules as k
from spieltisch.envs.backgammon.notation import sides_to_position_id

GAME = BackgammonGame()


def board_of(mover: tuple[int, ...], other: tuple[int, ...]) -> np.ndarray:
    """Seat 0 with ``mover``'s checkers on its points 1..6, seat 1 with ``other``'s, the rest of
    each side's 15 borne off."""
    board = np.zeros(k.BOARD_SIZE, dtype=np.int32)
    for seat, counts in ((0, mover), (1, other)):
        board[k.SIDE * seat : k.SIDE * seat + 6] = counts
        board[k.SIDE * seat + k.OFF] = k.CHECKERS - sum(counts)
    return board


def index_of(counts: tuple[int, ...]) -> int:
    return bo.side_index(board_of(counts, (1, 0, 0, 0, 0, 0)), 0, bo._BINOM)


@functools.cache
def win_to_roll(board_bytes: bytes, seat: int) -> float:
    """Exact chance that ``seat``, about to roll, wins: expectimax over the 21 rolls, each
    side's play the one that maximises its own chance (the reference)."""
    board = np.frombuffer(board_bytes, dtype=np.int32)
    total = 0.0
    for (d1, d2), weight in zip(bo.ROLLS, bo.ROLL_WEIGHTS, strict=True):
        state = GAME.state_to_roll(board, seat)
        state.set_dice(int(d1), int(d2))
        best = 0.0
        for play in state.legal_plays():
            after = np.asarray(play.state.board, dtype=np.int32).tobytes()
            best = max(best, 1.0 if play.state.is_terminal() else 1 - win_to_roll(after, 1 - seat))
        total += weight * best
    return total


SMALL_SIDES = [c for c in itertools.product(range(4), repeat=6) if 1 <= sum(c) <= 3]


def test_the_index_numbers_every_position_once() -> None:
    counts = bo._side_counts()
    assert bo.NUM_POSITIONS == 54_264
    assert len({tuple(c) for c in counts}) == bo.NUM_POSITIONS
    assert counts.sum(axis=1).max() == k.CHECKERS
    assert index_of((0, 0, 0, 0, 0, 0)) == 0
    for i in (1, 777, 54_263):
        assert index_of(tuple(int(c) for c in counts[i])) == i


def test_the_distributions_are_probabilities() -> None:
    db = bo.database()
    assert np.allclose(db.off.sum(axis=1), 1.0)
    assert np.allclose(db.off_tail[:, 0], 1.0)
    assert np.allclose(db.first_tail[:, 0], 1.0)
    assert (np.diff(db.off_tail, axis=1) <= 1e-15).all()  # tails never rise
    assert not db.off.flags.writeable


def test_drawn_positions_worked_out_by_hand() -> None:
    db = bo.database()
    # One checker on the 6-point: off in one roll unless the roll is 1-1, 2-1, 3-1, 4-1 or 3-2
    # (9 of 36), and always in the second.
    six = index_of((0, 0, 0, 0, 0, 1))
    assert db.off[six, 1] == pytest.approx(27 / 36)
    assert db.mean_off[six] == pytest.approx(1.25)
    # Two on the 1-point: any roll (no double needed).
    assert db.off[index_of((2, 0, 0, 0, 0, 0)), 1] == pytest.approx(1.0)
    # Fifteen on the 6-point: the first checker comes off in one roll with a 6 (11 of 36),
    # 5-1, 4-2, 3-3 or 2-2 (6 of 36); 4-3 only moves one down (the others are still behind).
    all_six = index_of((0, 0, 0, 0, 0, 15))
    assert 1 - db.first_tail[all_six, 2] == pytest.approx(17 / 36)
    # Fifteen anywhere need at least 8 rolls (a double bears off at most four).
    assert db.off_tail[index_of((3, 3, 3, 2, 2, 2)), 4] == pytest.approx(1.0)


def test_a_gammon_drawn_by_hand() -> None:
    # Seat 0 has played and keeps one checker on its 1-point: it bears it off with any roll
    # next turn. Seat 1, to roll, has all 15 on its 6-point: it cannot win, and is gammoned
    # unless it bears one off now (17 of 36).
    board = board_of((1, 0, 0, 0, 0, 0), (0, 0, 0, 0, 0, 15))
    outputs, exact = bo.afterstate_outputs(board[None], 0)
    assert exact.tolist() == [True]
    assert outputs[0] == pytest.approx([1.0, 19 / 36, 0.0, 0.0, 0.0])
    assert bo.to_roll_outputs(board, 1) == pytest.approx([0.0, 0.0, 0.0, 19 / 36, 0.0])


def test_win_chances_equal_exact_expectimax_on_small_bearoffs() -> None:
    # Up to two checkers a side the one-sided play is the best play: exact. With three it
    # can differ a little from playing for the win (the largest gap over all 6,889 pairs of
    # sides is 0.00136).
    rng = np.random.default_rng(0)
    two = [c for c in SMALL_SIDES if sum(c) <= 2]
    for mover, other in itertools.product(two, two):
        board = board_of(mover, other)
        assert bo.to_roll_outputs(board, 0)[0] == pytest.approx(
            win_to_roll(board.tobytes(), 0), abs=1e-12
        )
    picks = rng.choice(len(SMALL_SIDES) ** 2, 120, replace=False)
    for i in picks:
        mover, other = SMALL_SIDES[i // len(SMALL_SIDES)], SMALL_SIDES[i % len(SMALL_SIDES)]
        board = board_of(mover, other)
        exact = win_to_roll(board.tobytes(), 0)
        assert bo.to_roll_outputs(board, 0)[0] == pytest.approx(exact, abs=2e-3)
        # the same position as an afterstate of seat 1's play, seat 0 to roll
        assert bo.afterstate_outputs(board[None], 1)[0][0, 0] == pytest.approx(1 - exact, abs=2e-3)


def test_boards_that_are_not_bearoffs() -> None:
    start = np.asarray(GAME.new_initial_state().board, dtype=np.int32)
    won = board_of((0, 0, 0, 0, 0, 0), (0, 0, 0, 2, 0, 0))
    on_bar = board_of((1, 0, 0, 0, 0, 0), (1, 0, 0, 0, 0, 0))
    on_bar[k.SIDE + k.BAR] = 1
    on_bar[k.SIDE + k.OFF] -= 1
    assert not bo.is_bearoff(start) and not bo.is_bearoff(won) and not bo.is_bearoff(on_bar)
    outputs, exact = bo.afterstate_outputs(np.stack([start, won, on_bar]), 0)
    assert exact.tolist() == [False, True, False]
    assert outputs[1].tolist() == [1.0, 0.0, 0.0, 0.0, 0.0]  # a single game: seat 1 has 13 off
    assert not outputs[[0, 2]].any()
    # A won game outside a bear-off keeps its exact result: seat 1 on the bar is backgammoned.
    backgammoned = board_of((0, 0, 0, 0, 0, 0), (0, 0, 0, 0, 0, 0))
    backgammoned[k.SIDE + k.BAR] = k.CHECKERS
    backgammoned[k.SIDE + k.OFF] = 0
    outputs, exact = bo.afterstate_outputs(backgammoned[None], 0)
    assert exact.tolist() == [True]
    assert outputs[0].tolist() == [1.0, 1.0, 1.0, 0.0, 0.0]
    with pytest.raises(ValueError, match="not a bear-off"):
        bo.to_roll_outputs(start, 0)
    with pytest.raises(ValueError, match="seat must be 0 or 1"):
        bo.to_roll_outputs(board_of((1, 0, 0, 0, 0, 0), (1, 0, 0, 0, 0, 0)), 2)
    with pytest.raises(ValueError, match="mover must be 0 or 1"):
        bo.afterstate_outputs(start[None], True)
    with pytest.raises(ValueError, match="rows of 52 cells"):
        bo.afterstate_outputs(start[:40][None], 0)


def rolled(mover: tuple[int, ...], other: tuple[int, ...], dice: str):
    own = np.zeros(25, dtype=np.int8)
    opp = np.zeros(25, dtype=np.int8)
    own[:6], opp[:6] = mover, other
    return GAME.state_from_text(f"{sides_to_position_id(opp, own)} 0 {dice}")


def test_the_agent_values_bearoff_plays_exactly() -> None:
    name = "pretrained:backgammon:algo=td_long"
    plain, exact = make_agent(name, "backgammon"), make_agent(f"{name},bearoff=true", "backgammon")
    state = rolled((0, 2, 1, 3, 2, 4), (3, 2, 2, 2, 3, 3), "61")
    boards = np.asarray(state.play_boards(), dtype=np.int32)
    outputs, _ = bo.afterstate_outputs(boards, 0)
    expected = [tv.equity(y) for y in outputs]
    assert exact.play_values(state) == pytest.approx(expected, abs=1e-12)
    assert plain.play_values(state) != pytest.approx(expected, abs=1e-12)  # the net's estimates
    assert exact.position_probabilities(GAME.state_to_roll(boards[0], 1)) == pytest.approx(
        bo.to_roll_outputs(boards[0], 1)
    )
    # Outside a bear-off the option changes nothing.
    contact = GAME.state_from_text("4HPwATDgc/ABMA 0 31")
    assert exact.play_values(contact) == pytest.approx(plain.play_values(contact), abs=0)
    for ply in (2, 3):
        deep = make_agent(f"{name},ply={ply},keep=2,bearoff=true", "backgammon")
        assert deep.play_values(state) == pytest.approx(expected, abs=1e-12)


def test_bad_bearoff_parameters() -> None:
    with pytest.raises(ValueError, match="bearoff must be true or false"):
        make_agent("pretrained:backgammon:bearoff=1", "backgammon")
    with pytest.raises(ValueError, match="'bearoff' is an option of the lookahead"):
        make_agent("pretrained:backgammon:bearoff=true,sims=8", "backgammon")
    with pytest.raises(ValueError, match="are for TD value nets"):
        make_agent("pretrained:kalaha:bearoff=true", "kalaha")


def test_rollouts_of_a_bearoff_agent_use_the_database() -> None:
    agent = "pretrained:backgammon:algo=td_long,bearoff=true"
    board = board_of((0, 1, 1, 2, 0, 1), (1, 0, 2, 0, 1, 0))
    start = GAME.state_to_roll(board, 0)
    # Truncated after one ply: the exact average over the 36 rolls of the database's value of
    # the play the agent picks (its best by the database), standard error 0.
    expected = 0.0
    for (d1, d2), weight in zip(bo.ROLLS, bo.ROLL_WEIGHTS, strict=True):
        state = start.clone()
        state.set_dice(int(d1), int(d2))
        outputs, exact = bo.afterstate_outputs(state.play_boards(), 0)
        assert exact.all()
        expected += weight * max(tv.equity(y) for y in outputs)
    one_ply = rollout(start, agent, games=144, seed=3, truncate=1)
    assert not one_ply.batched  # played as the agent plays, game by game
    assert one_ply.equity.mean == pytest.approx(expected, abs=1e-12)
    assert one_ply.equity.se == pytest.approx(0.0, abs=1e-12)
    # Played out: within the standard error of the exact two-sided value.
    full = rollout(start, agent, games=432, seed=3)
    exact_win = win_to_roll(board.tobytes(), 0)
    assert abs(full.win.mean - exact_win) <= 3 * full.win.se + 2e-3
