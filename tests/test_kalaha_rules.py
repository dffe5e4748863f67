"""Every rule of docs/rules/kalaha.md on a concrete position drawn as text.

Diagrams are what ``str(state)`` prints: seat 1's row on top (its pits run right to left, since
its left is seat 0's right), seat 1's store left, seat 0's store right.
"""

from __future__ import annotations

import copy
import pickle
import re

import numpy as np
import pytest
from spieltisch.envs._common.errors import (
    ActionTypeError,
    GameOverError,
    IllegalActionError,
    PositionFormatError,
)
from spieltisch.envs.kalaha import KalahaGame

GOKI = KalahaGame(pits=6, seeds=6, rules="goki")
STANDARD = KalahaGame(pits=6, seeds=6, rules="standard")


def test_setup_six_stones_per_pit_and_empty_stores():
    state = GOKI.new_initial_state()
    assert str(state) == (
        "seat 1:      6   6   6   6   6   6\n"
        "stores:   0                          0\n"
        "seat 0:      6   6   6   6   6   6\n"
        "seat 0 to move"
    )
    assert state.legal_actions() == (0, 1, 2, 3, 4, 5)
    assert state.board.sum() == 72


def test_sowing_goes_counter_clockwise_into_own_store_and_on_to_the_opponent():
    state = GOKI.new_initial_state()
    state.apply(3)  # 6 stones: pits 4, 5, store, then seat 1's pits 0, 1, 2
    assert str(state) == (
        "seat 1:      6   6   6   7   7   7\n"
        "stores:   0                          1\n"
        "seat 0:      6   6   6   0   7   7\n"
        "seat 1 to move"
    )


def test_last_stone_in_own_store_gives_another_move():
    state = GOKI.state_from_text(
        """
        seat 1:      6   6   6   6   6   6
        stores:   0                          0
        seat 0:      6   6   4   6   6   6
        seat 0 to move
        """
    )
    state.apply(2)  # 4 stones: pits 3, 4, 5 and the store
    assert state.current_player == 0
    assert state.to_text() == "6,6,0,7,7,7/1 6,6,6,6,6,6/0 0"
    state.apply(5)  # 7 stones: store, then six of seat 1's pits: the turn passes
    assert state.current_player == 1


def test_extra_moves_repeat_any_number_of_times():
    state = GOKI.state_from_text("0,0,0,0,2,1/0 1,1,1,1,1,1/0 0")
    state.apply(5)  # 1 stone into the store
    assert state.current_player == 0
    state.apply(4)  # 2 stones: pit 5 and the store
    assert state.current_player == 0
    assert state.to_text() == "0,0,0,0,0,1/2 1,1,1,1,1,1/0 0"


def test_capture_takes_own_stone_and_the_opposite_pit():
    state = GOKI.state_from_text(
        """
        seat 1:      1   5   1   1   1   1
        stores:   0                          0
        seat 0:      1   0   0   0   0   3
        seat 0 to move
        """
    )
    # Pit 0's single stone lands in the empty pit 1, right below seat 1's pit 4 (5 stones).
    state.apply(0)
    assert str(state) == (
        "seat 1:      1   0   1   1   1   1\n"
        "stores:   0                          6\n"
        "seat 0:      0   0   0   0   0   3\n"
        "seat 1 to move"
    )


@pytest.mark.parametrize(
    ("game", "expected"),
    [
        # goki (the manual): the stone goes to the store even though the opposite pit is empty
        (GOKI, "0,0,0,0,0,3/1 1,1,1,1,0,1/0 1"),
        # standard: no capture, the stone stays in pit 1
        (STANDARD, "0,1,0,0,0,3/0 1,1,1,1,0,1/0 1"),
    ],
)
def test_empty_capture_only_under_goki(game, expected):
    state = game.state_from_text(
        """
        seat 1:      1   0   1   1   1   1
        stores:   0                          0
        seat 0:      1   0   0   0   0   3
        seat 0 to move
        """
    )
    state.apply(0)
    assert state.to_text() == expected
    assert state.current_player == 1


def test_no_capture_on_the_opponents_side():
    state = GOKI.state_from_text("1,0,0,0,0,2/0 0,1,1,1,1,1/0 0")
    state.apply(5)  # the store, then seat 1's empty pit 0: nothing is captured there
    assert state.to_text() == "1,0,0,0,0,0/1 1,1,1,1,1,1/0 1"


def test_sowing_skips_the_opponents_store_and_can_capture_in_the_emptied_start_pit():
    # 13 stones go once round the 13 pits that are not seat 1's store, ending in the start pit.
    state = GOKI.state_from_text("0,0,13,0,0,0/0 2,2,2,2,2,2/5 0")
    state.apply(2)
    # every other pit got one stone; the 13th lands in pit 2 (now 1 stone) facing seat 1's pit 3
    # (2 + 1 = 3 stones): capture 1 + 3 into the store (1 + 4 = 5).
    assert state.to_text() == "1,1,0,1,1,1/5 3,3,3,0,3,3/5 1"
    assert state.board.sum() == 13 + 12 + 5


def test_game_ends_when_a_side_is_empty_and_the_other_side_sweeps_its_stones():
    state = GOKI.state_from_text(
        """
        seat 1:      0   2   0   3   0   1
        stores:  30                          35
        seat 0:      0   0   0   0   0   1
        seat 0 to move
        """
    )
    state.apply(5)  # the last stone goes to the store: seat 0's pits are all empty
    assert state.is_terminal()
    assert state.stores() == (36, 36)
    assert state.returns() == (0.0, 0.0)
    assert state.legal_actions() == ()
    assert str(state).endswith("game over: a draw, 36 to 36")


def test_winner_has_most_stones():
    state = GOKI.state_from_text("0,0,0,0,0,1/40 0,0,0,0,1,0/30 0")
    state.apply(5)
    assert state.is_terminal()
    assert state.stores() == (41, 31)
    assert state.returns() == (1.0, -1.0)
    assert state.winner() == 0


def test_game_can_end_by_the_opponent_running_out():
    # Seat 0 captures seat 1's last stones: seat 1's side is empty, seat 0 sweeps its own pits.
    state = GOKI.state_from_text("1,0,0,0,3,0/20 0,0,0,0,5,0/40 0")
    state.apply(0)  # lands in the empty pit 1, opposite seat 1's pit 4
    assert state.is_terminal()
    assert state.to_text() == "0,0,0,0,0,0/29 0,0,0,0,0,0/40 1 end"


def test_parameters_give_other_board_sizes():
    small = KalahaGame(pits=4, seeds=3, rules="standard")
    state = small.new_initial_state()
    assert state.to_text() == "3,3,3,3/0 3,3,3,3/0 0"
    assert state.board.sum() == 24
    assert state.legal_actions() == (0, 1, 2, 3)


# --- bad input ----------------------------------------------------------------------------------


def test_illegal_actions_raise_and_change_nothing():
    state = GOKI.state_from_text("0,6,6,6,6,6/0 6,6,6,6,6,6/0 0")
    before = state.clone()
    with pytest.raises(IllegalActionError, match=r"pit 0 is empty.*legal pits: \[1, 2, 3, 4, 5\]"):
        state.apply(0)
    with pytest.raises(IllegalActionError, match="out of range"):
        state.apply(6)
    with pytest.raises(IllegalActionError, match="out of range"):
        state.apply(-1)
    for bad in (1.0, "1", None, True, np.array([1, 2])):
        with pytest.raises(ActionTypeError):
            state.apply(bad)
    assert state == before
    assert state.move_number == 0
    state.apply(np.int64(1))  # numpy integers are fine
    assert state.move_number == 1


def test_moving_in_a_finished_game_raises():
    state = GOKI.state_from_text("0,0,0,0,0,0/36 0,0,0,0,0,0/36 0 end")
    with pytest.raises(GameOverError, match="game is over"):
        state.apply(0)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("6,6,6,6,6/0 6,6,6,6,6,6/0 0", "expected 6 pits, got 5"),
        ("6,6,6,6,6,x/0 6,6,6,6,6,6/0 0", "'x' is not a non-negative whole number"),
        ("6,6,6,6,6,6/0 6,6,6,6,6,6/0 2", "player to move must be 0 or 1"),
        ("6,6,6,6,6,6 6,6,6,6,6,6/0 0", "expected 'pit,pit,.../store'"),
        ("6,6,6,6,6,6/0", "expected 'PITS/STORE PITS/STORE PLAYER"),
        ("6,6,6,6,6,6,0/6,6,6,6,6,6,0 0", re.escape("(e.g. '3,3,3,3,3,3/0 3,3,3,3,3,3/0 0':")),
        ("0,0,0,0,0,0/36 6,6,6,6,6,6/0 0", "write 'end'"),
        ("6,6,6,6,6,-1/0 6,6,6,6,6,6/0 0", "'-1' is not a non-negative whole number"),
        ("seat 1: 1 2 3\nstores: 0 0\nseat 0: 1 2 3 4 5 6\nseat 0 to move", "needs 6 numbers"),
        ("seat 1: 1 2 3 4 5 6\nseat 0: 1 2 3 4 5 6\nseat 0 to move", "no line 'stores: ...'"),
    ],
)
def test_malformed_positions_are_named(text, message):
    with pytest.raises(PositionFormatError, match=message):
        GOKI.state_from_text(text)


def test_bad_parameters_are_named():
    with pytest.raises(ValueError, match="rules must be one of"):
        KalahaGame(rules="oware")
    with pytest.raises(ValueError, match="pits must be between"):
        KalahaGame(pits=0)
    with pytest.raises(TypeError, match="seeds must be an integer"):
        KalahaGame(seeds=2.5)


def test_game_from_env_options():
    """``from_options`` reads the env's rule options, ignores its other options, and names an
    unknown one; the two lists are exactly ``kalaha_v0.env``'s keyword arguments."""
    import inspect

    from spieltisch.envs.kalaha import engine
    from spieltisch.envs.kalaha.env import raw_env

    assert KalahaGame.from_options({}) == KalahaGame()
    options = {"pits": 4, "seeds": 3, "rules": "standard", "reward": "score", "max_turns": 9}
    assert KalahaGame.from_options(options) == KalahaGame(pits=4, seeds=3, rules="standard")
    with pytest.raises(ValueError, match=r"unknown Kalaha option\(s\) \['pit'\]"):
        KalahaGame.from_options({"pit": 4})
    with pytest.raises(ValueError, match="rules must be one of"):
        KalahaGame.from_options({"rules": "oware"})
    env_keywords = set(inspect.signature(raw_env).parameters) | {"illegal_action"}
    assert set(engine.RULE_OPTIONS) | set(engine.PLAY_OPTIONS) == env_keywords


# --- notation, copies ---------------------------------------------------------------------------


def test_text_and_diagram_round_trip_on_random_positions():
    rng = np.random.default_rng(0)
    for _ in range(200):
        state = GOKI.new_initial_state()
        for _ in range(int(rng.integers(0, 40))):
            if state.is_terminal():
                break
            state.apply(int(rng.choice(state.legal_actions())))
        assert GOKI.state_from_text(state.to_text()) == state
        assert GOKI.state_from_text(str(state)) == state


def test_diagram_keeps_pits_apart_with_a_thousand_stones():
    big = KalahaGame(pits=3, seeds=1000)
    state = big.state_from_text("1000,0,1999/1 1000,1000,1000/0 1")
    assert str(state).splitlines() == [
        "seat 1:    1000 1000 1000",
        "stores:   0                 1",
        "seat 0:    1000    0 1999",
        "seat 1 to move",
    ]  # (they ran together: "   100010001000")
    assert big.state_from_text(str(state)) == state


def test_clone_copy_and_pickle_are_independent_and_equal():
    state = GOKI.new_initial_state()
    state.apply(2)
    for other in (
        state.clone(),
        copy.copy(state),
        copy.deepcopy(state),
        pickle.loads(pickle.dumps(state)),
    ):
        assert other == state
        assert other.legal_actions() == state.legal_actions()
        other.apply(other.legal_actions()[0])
        assert other != state
    assert state.to_text() == "6,6,0,7,7,7/1 7,7,6,6,6,6/0 1"
