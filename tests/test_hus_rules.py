"""Every rule of docs/rules/hus.md on a concrete position drawn as text.

Diagrams are what ``str(state)`` prints, the board seen from above with seat 0 at the bottom::

    seat 1 row 1 |  seat 1's outer row (its columns 7..0, left to right)
    seat 1 row 2 |  seat 1's inner row (its columns 7..0)
    seat 0 row 2 |  seat 0's inner row (columns 0..7)
    seat 0 row 1 |  seat 0's outer row (columns 0..7)

So every column of the diagram is one physical column. Actions: 0..7 = row 1 columns 0..7,
8..15 = row 2 columns 0..7, from the mover's own left.
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
from spieltisch.envs.hus import HusGame, HusState
from spieltisch.envs.hus.rules import ring_of_action

HUS = HusGame()


def diagram(state) -> str:
    return str(state)


def test_setup():
    state = HUS.new_initial_state()
    assert diagram(state) == (
        "seat 1 row 1 |  2  2  2  2  2  2  2  2\n"
        "seat 1 row 2 |  2  2  2  2  0  0  0  0\n"
        "seat 0 row 2 |  0  0  0  0  2  2  2  2\n"
        "seat 0 row 1 |  2  2  2  2  2  2  2  2\n"
        "seat 0 to move"
    )
    assert state.stones(0) == state.stones(1) == 24
    # every pit with 2 stones: the whole outer row and inner columns 4..7
    assert state.legal_actions() == (0, 1, 2, 3, 4, 5, 6, 7, 12, 13, 14, 15)


def test_sowing_direction_with_relays():
    """Row 1 right to left, up into row 2 at column 0, row 2 left to right, down at column 7."""
    state = HUS.new_initial_state()
    stats = state.apply(15)  # row 2 column 7, 2 stones
    # 2 stones: row 1 columns 7 and 6 (2 -> 3, occupied: relay); 3 stones: columns 5, 4, 3
    # (relay); 3 stones: columns 2, 1, 0 (relay); 3 stones: row 2 columns 0, 1, 2, which were
    # empty: the move ends.
    assert diagram(state) == (
        "seat 1 row 1 |  2  2  2  2  2  2  2  2\n"
        "seat 1 row 2 |  2  2  2  2  0  0  0  0\n"
        "seat 0 row 2 |  1  1  1  0  2  2  2  0\n"
        "seat 0 row 1 |  0  3  3  0  3  3  0  3\n"
        "seat 1 to move"
    )
    assert stats.stones_sown == 11
    assert stats.relay_steps == 3
    assert stats.captures == 0
    assert stats.ended_by == "empty pit"


def test_last_stone_in_an_empty_pit_ends_the_move():
    state = HUS.state_from_text(
        """
        seat 1 row 1 |  2  2  2  2  2  2  2  2
        seat 1 row 2 |  2  2  2  2  0  0  0  0
        seat 0 row 2 |  0  0  0  0  2  2  2  2
        seat 0 row 1 |  2  2  2  2  2  2  2  2
        seat 0 to move
        """
    )
    stats = state.apply(0)  # row 1 column 0: 2 stones into row 2 columns 0 and 1 (both empty)
    assert diagram(state).splitlines()[2:4] == [
        "seat 0 row 2 |  1  1  0  0  2  2  2  2",
        "seat 0 row 1 |  0  2  2  2  2  2  2  2",
    ]
    assert (stats.stones_sown, stats.relay_steps, stats.captures) == (2, 0, 0)


def test_capture_takes_both_opposite_pits_and_sows_on():
    state = HUS.state_from_text(
        """
        seat 1 row 1 |  1  0  3  0  0  0  0  2
        seat 1 row 2 |  0  0  4  0  0  0  0  1
        seat 0 row 2 |  2  0  1  0  0  0  0  0
        seat 0 row 1 |  0  0  0  0  0  0  0  0
        seat 0 to move
        """
    )
    stats = state.apply(8)  # row 2 column 0, 2 stones: into columns 1 and 2
    # Column 2 held a stone: capture its 2 stones with the 4 and 3 opposite (9 stones), sown
    # from column 3: row 2 columns 3..7, then row 1 columns 7, 6, 5, 4 (empty: the move ends).
    assert diagram(state) == (
        "seat 1 row 1 |  1  0  0  0  0  0  0  2\n"
        "seat 1 row 2 |  0  0  0  0  0  0  0  1\n"
        "seat 0 row 2 |  0  1  0  1  1  1  1  1\n"
        "seat 0 row 1 |  0  0  0  0  1  1  1  1\n"
        "seat 1 to move"
    )
    assert (stats.stones_sown, stats.relay_steps, stats.captures) == (11, 0, 1)


def test_no_capture_when_the_opposite_inner_pit_is_empty_even_if_the_outer_is_full():
    state = HUS.state_from_text(
        """
        seat 1 row 1 |  2  0  9  0  0  0  0  0
        seat 1 row 2 |  2  0  0  0  0  0  0  0
        seat 0 row 2 |  2  0  1  0  0  0  0  0
        seat 0 row 1 |  0  0  0  0  0  0  0  0
        seat 0 to move
        """
    )
    stats = state.apply(8)
    # Column 2 lands on 1 stone, but seat 1's inner pit opposite is empty: relay with own 2
    # stones into columns 3 and 4 (empty: the move ends). The 9 stones behind stay.
    assert diagram(state) == (
        "seat 1 row 1 |  2  0  9  0  0  0  0  0\n"
        "seat 1 row 2 |  2  0  0  0  0  0  0  0\n"
        "seat 0 row 2 |  0  1  0  1  1  0  0  0\n"
        "seat 0 row 1 |  0  0  0  0  0  0  0  0\n"
        "seat 1 to move"
    )
    assert (stats.relay_steps, stats.captures) == (1, 0)


def test_no_capture_from_the_outer_row():
    state = HUS.state_from_text(
        """
        seat 1 row 1 |  2  2  2  2  2  2  2  2
        seat 1 row 2 |  2  2  2  2  2  2  2  2
        seat 0 row 2 |  0  0  0  0  0  0  0  0
        seat 0 row 1 |  0  0  1  0  2  0  0  0
        seat 0 to move
        """
    )
    stats = state.apply(4)
    # row 1 column 4: 2 stones into columns 3 and 2; column 2 held a stone but is in row 1, so
    # no capture (whatever lies opposite): relay its 2 stones into columns 1 and 0.
    assert diagram(state).splitlines()[:4] == [
        "seat 1 row 1 |  2  2  2  2  2  2  2  2",
        "seat 1 row 2 |  2  2  2  2  2  2  2  2",
        "seat 0 row 2 |  0  0  0  0  0  0  0  0",
        "seat 0 row 1 |  1  1  0  1  0  0  0  0",
    ]
    assert (stats.relay_steps, stats.captures) == (1, 0)


def test_single_stone_pits_cannot_be_played():
    state = HUS.state_from_text(
        """
        seat 1 row 1 |  2  2  2  2  2  2  2  2
        seat 1 row 2 |  2  2  2  2  2  2  2  2
        seat 0 row 2 |  1  1  1  1  1  1  1  3
        seat 0 row 1 |  1  1  1  1  1  1  1  0
        seat 0 to move
        """
    )
    assert state.legal_actions() == (15,)
    before = state.clone()
    with pytest.raises(IllegalActionError, match=r"holds 1 stone.*2 or more.*legal pits: \[15\]"):
        state.apply(3)
    assert state == before


def test_a_player_with_only_single_stones_loses():
    state = HUS.state_from_text(
        """
        seat 1 row 1 |  2  2  2  2  2  2  2  2
        seat 1 row 2 |  2  2  2  2  2  2  2  2
        seat 0 row 2 |  1  0  1  0  1  0  1  0
        seat 0 row 1 |  1  0  1  0  1  0  1  0
        seat 0 to move
        """
    )
    assert state.is_terminal()
    assert state.legal_actions() == ()
    assert state.winner() == 1
    assert state.returns() == (-1.0, 1.0)
    assert state.points() == 32  # seat 1's stones; seat 0 still has some, so not doubled


def test_a_player_with_no_stones_loses_and_the_winners_points_double():
    state = HUS.state_from_text(
        """
        seat 1 row 1 |  0  0  3  0  0  0  0  0
        seat 1 row 2 |  0  0  4  0  0  0  0  0
        seat 0 row 2 |  2  0  1  0  0  0  0  0
        seat 0 row 1 |  0  0  0  0  0  0  0  0
        seat 0 to move
        """
    )
    state.apply(8)  # captures seat 1's last 7 stones
    assert state.is_terminal()
    assert state.stones(1) == 0
    assert state.winner() == 0
    assert state.points() == 2 * 10
    assert diagram(state).endswith("game over: seat 0 wins with 20 points")
    again = HUS.state_from_text(diagram(state))  # a finished game's diagram reads back
    assert again.is_terminal() and again.winner() == 0 and again.to_text() == state.to_text()
    lines = diagram(state).splitlines()
    start = diagram(HUS.new_initial_state()).splitlines()
    with pytest.raises(PositionFormatError, match="seat 1 can still move"):
        HUS.state_from_text("\n".join([*start[:4], "game over: seat 0 wins"]))
    with pytest.raises(PositionFormatError, match="needs one line"):
        HUS.state_from_text("\n".join([*lines, "seat 0 to move"]))


def reference_move(board: list[int], player: int, action: int, max_sown: int):
    """The never-ending-move rule of the spec, written plainly: remember every event
    (board, landing pit) in a set; stop at the first repeat, or once max_sown stones are sown."""
    b = list(board)
    own, opp = 16 * player, 16 * (1 - player)
    pos = ring_of_action(action)
    stones, b[own + pos] = b[own + pos], 0
    sown = stones
    while stones:
        pos = (pos + 1) % 16
        b[own + pos] += 1
        stones -= 1
    seen = set()
    while b[own + pos] > 1:
        event = (tuple(b), pos)
        if event in seen:
            return b, "repetition", sown
        if sown >= max_sown:
            return b, "limit", sown
        seen.add(event)
        if pos < 8 and b[opp + 7 - pos] > 0:
            stones = b[own + pos] + b[opp + 7 - pos] + b[opp + 8 + pos]
            b[opp + 7 - pos] = b[opp + 8 + pos] = 0
        else:
            stones = b[own + pos]
        b[own + pos] = 0
        sown += stones
        while stones:
            pos = (pos + 1) % 16
            b[own + pos] += 1
            stones -= 1
    return b, "empty pit", sown


NEVER_ENDING = """
    seat 1 row 1 |  5  5  5  5  5  4  4  4
    seat 1 row 2 |  0  0  0  0  0  0  0  0
    seat 0 row 2 |  0  1  0  1  0  1  0  1
    seat 0 row 1 |  1  2  0  2  1  0  1  0
    seat 0 to move
"""


def test_a_constructed_never_ending_move_is_detected_and_ended():
    """11 stones on seat 0's side relay round and round (seat 1's inner row is empty, so no
    capture can change anything): after 128 relays the board and landing pit repeat."""
    state = HUS.state_from_text(NEVER_ENDING)
    board = state.board.tolist()
    stats = state.apply(3)  # row 1 column 3, 2 stones
    assert stats.ended_by == "repetition"
    assert stats.never_ending
    assert stats.relay_steps == 128
    assert stats.stones_sown == 274
    # the move ends before the pick-up, stones as they lie
    assert diagram(state) == (
        "seat 1 row 1 |  5  5  5  5  5  4  4  4\n"
        "seat 1 row 2 |  0  0  0  0  0  0  0  0\n"
        "seat 0 row 2 |  0  1  0  1  0  1  0  1\n"
        "seat 0 row 1 |  1  3  1  0  1  0  1  0\n"
        "seat 1 to move"
    )
    expected, how, sown = reference_move(board, 0, 3, HUS.max_sown)
    assert (state.board.tolist(), stats.ended_by, stats.stones_sown) == (expected, how, sown)


def test_a_never_ending_move_found_in_random_play_repeats_only_after_183670_relays():
    """Found by random play: the first repeat comes after 784,178 stones, beyond the default
    sowing limit of 100,000 stones, which therefore ends the move first."""
    text = "0,0,0,1,4,0,0,0/0,0,0,0,0,0,0,0 1,0,3,2,1,2,13,1/2,1,0,7,2,1,2,5 1"
    exact = HusGame(max_sown=10**7).state_from_text(text)
    stats = exact.apply(14)
    assert (stats.ended_by, stats.relay_steps, stats.stones_sown) == ("repetition", 183670, 784178)
    # the whole move is one cycle back to its first event (2 stones from row 2 column 6 into
    # row 2 column 7 and row 1 column 7), so the board is that event's board
    assert exact.to_text() == "0,0,0,1,4,0,0,0/0,0,0,0,0,0,0,0 1,0,3,2,1,2,13,2/2,1,0,7,2,1,0,6 0"

    limited = HUS.state_from_text(text)
    stats = limited.apply(14)
    assert stats.ended_by == "limit"
    assert 100_000 <= stats.stones_sown < 100_000 + 48
    assert limited.board.sum() == 48


def test_brent_cycle_detection_matches_the_plain_rule_on_random_moves():
    """The kernel finds repeats without storing events; the plain reference stores them all.
    Small sowing limits make moves end by the limit as well as normally."""
    rng = np.random.default_rng(7)
    seen = set()
    for trial in range(1500):
        max_sown = int(rng.choice([50, 300, 2000, 20_000]))
        game = HusGame(max_sown=max_sown)
        own = rng.multinomial(int(rng.integers(4, 40)), np.ones(16) / 16)
        opp = np.zeros(16, dtype=int)
        first = 8 if trial % 2 else 0  # stones only in the outer row: no capture possible
        opp[first:] = rng.multinomial(48 - own.sum(), np.ones(16 - first) / (16 - first))
        board = np.concatenate([own, opp])
        state = HusState(game, board, 0)
        if state.is_terminal():
            continue
        action = int(rng.choice(state.legal_actions()))
        expected, how, sown = reference_move(board.tolist(), 0, action, max_sown)
        stats = state.apply(action)
        assert (state.board.tolist(), stats.ended_by, stats.stones_sown) == (expected, how, sown)
        seen.add(how)
    assert seen == {"empty pit", "limit"}


# Moves that repeat (found by searching random positions): position, action, stones sown up to
# the first repeat.
LOOPS = [
    ("2,0,1,2,3,2,1,0/1,0,1,0,1,0,2,1 5,6,2,4,3,3,3,5/0,0,0,0,0,0,0,0 0", 5, 274),
    ("2,1,2,3,1,2,0,2/1,2,1,0,2,1,2,1 1,5,1,2,4,6,3,3/0,0,0,0,0,0,0,0 0", 7, 818),
    ("1,0,1,2,1,2,3,0/0,3,2,1,3,1,0,1 6,0,3,5,4,5,0,4/0,0,0,0,0,0,0,0 0", 12, 275),
    ("1,0,6,3,2,1,0,1/0,2,1,0,1,0,1,2 3,4,3,7,1,5,3,1/0,0,0,0,0,0,0,0 0", 4, 274),
    ("2,1,2,0,1,0,4,1/1,3,2,1,0,1,0,2 4,3,4,8,2,3,0,3/0,0,0,0,0,0,0,0 0", 6, 2452),
    ("0,1,2,1,4,1,0,1/1,0,1,2,1,3,1,2 0,3,2,4,0,6,4,8/0,0,0,0,0,0,0,0 0", 13, 819),
]


@pytest.mark.parametrize(("text", "action", "sown_at_repeat"), LOOPS)
def test_repetition_and_limit_meet_exactly_as_the_plain_rule_says(text, action, sown_at_repeat):
    """Around the stones sown at the first repeat, the limit and the repetition rule take
    turns: the kernel must agree with the plain reference on either side of the boundary."""
    board = HUS.state_from_text(text).board.tolist()
    for max_sown in (16, sown_at_repeat // 2, sown_at_repeat - 5, sown_at_repeat, 10**6):
        state = HusGame(max_sown=max_sown).state_from_text(text)
        expected, how, sown = reference_move(board, 0, action, max_sown)
        stats = state.apply(action)
        assert (state.board.tolist(), stats.ended_by, stats.stones_sown) == (expected, how, sown)
    assert (how, sown) == ("repetition", sown_at_repeat)


def test_truncation_is_a_draw():
    from spieltisch.envs import hus_v0

    env = hus_v0.env(max_turns=3)
    env.reset(seed=0)
    for _ in range(3):
        observation, *_ = env.last()
        env.step(int(np.flatnonzero(observation["action_mask"])[0]))
    _, reward, terminated, truncated, info = env.last()
    assert truncated and not terminated
    assert reward == 0.0
    assert info["truncated_at_turn"] == 3


# --- bad input, notation, copies -----------------------------------------------------------------


def test_bad_actions_raise_and_change_nothing():
    state = HUS.new_initial_state()
    before = state.clone()
    with pytest.raises(IllegalActionError, match="out of range"):
        state.apply(16)
    for bad in (2.0, "2", None, False):
        with pytest.raises(ActionTypeError):
            state.apply(bad)
    assert state == before


def test_moving_in_a_finished_game_raises():
    state = HUS.state_from_text("1,1,1,1,1,1,1,1/1,1,1,1,1,1,1,1 2,2,2,2,2,2,2,2/2,2,2,2,2,2,2,0 0")
    assert state.is_terminal()
    with pytest.raises(GameOverError):
        state.apply(0)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("2,2,2,2,2,2,2/0,0,0,0,2,2,2,2 2,2,2,2,2,2,2,2/0,0,0,0,2,2,2,2 0", "expected 8 numbers"),
        ("2,2,2,2,2,2,2,2/0,0,0,0,2,2,2,2 2,2,2,2,2,2,2,2/0,0,0,0,2,2,2,2 3", "0 or 1"),
        ("2,2,2,2,2,2,2,2 2,2,2,2,2,2,2,2/0,0,0,0,2,2,2,2 0", "expected 'row 1/row 2'"),
        ("seat 1 row 1 | 2 2\nseat 0 to move", "4 board rows"),
        ("2,2,2,2,2,2,2,a/0,0,0,0,2,2,2,2 2,2,2,2,2,2,2,2/0,0,0,0,2,2,2,2 0", "'a' is not"),
    ],
)
def test_malformed_positions_are_named(text, message):
    with pytest.raises(PositionFormatError, match=message):
        HUS.state_from_text(text)


def test_game_from_env_options():
    """``from_options`` reads the env's rule options, ignores its other options, and names an
    unknown one; the two lists are exactly ``hus_v0.env``'s keyword arguments."""
    import inspect

    from spieltisch.envs.hus import engine
    from spieltisch.envs.hus.env import raw_env

    assert HusGame.from_options({}) == HusGame()
    assert HusGame.from_options({"max_sown": 500, "reward": "points"}) == HusGame(max_sown=500)
    with pytest.raises(ValueError, match=r"unknown Hus option\(s\) \['pits'\]"):
        HusGame.from_options({"pits": 4})
    with pytest.raises(ValueError, match="max_sown must be between"):
        HusGame.from_options({"max_sown": 3})
    env_keywords = set(inspect.signature(raw_env).parameters) | {"illegal_action"}
    assert set(engine.RULE_OPTIONS) | set(engine.PLAY_OPTIONS) == env_keywords


def test_notation_round_trips_and_copies_are_independent():
    rng = np.random.default_rng(1)
    state = HUS.new_initial_state()
    for _ in range(30):
        if state.is_terminal():
            break
        state.apply(int(rng.choice(state.legal_actions())))
        assert HUS.state_from_text(state.to_text()) == state
        if not state.is_terminal():
            assert HUS.state_from_text(str(state)) == state
    for other in (
        state.clone(),
        copy.copy(state),
        copy.deepcopy(state),
        pickle.loads(pickle.dumps(state)),
    ):
        assert other == state
        other.board[0] += 1
        assert other != state


def test_a_position_in_the_wrong_shape_is_refused_with_the_start_as_example():
    from spieltisch.envs.hus.notation import START_EXAMPLE

    assert HusGame().new_initial_state().to_text() == START_EXAMPLE
    with pytest.raises(PositionFormatError, match=re.escape(f"(the start: '{START_EXAMPLE}'")):
        HusGame().state_from_text("2,2/0 1")
