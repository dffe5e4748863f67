"""Every rule of docs/rules/backgammon.md on a concrete position, with its exact legal plays.

Positions are GNU Backgammon position IDs; each one is also built from a readable list of points
(``X`` = the player on roll, ``O`` = the opponent, points from each one's own view) so the test
shows what it is, and its diagram is printed by ``str(state)`` on failure. A play is summarised
by what it changes, independent of the order its moves were found in: the mover's points that
lose a checker ``>`` the points that gain one (25 = bar, 0 = off), then ``*p`` for a hit on the
mover's point ``p``; e.g. ``"13>8*10"`` is 13/10*/8.
"""

from __future__ import annotations

import copy
import pickle

import numpy as np
import pytest
from spieltisch.envs._common.errors import (
    ActionTypeError,
    GameOverError,
    IllegalActionError,
    PositionFormatError,
)
from spieltisch.envs.backgammon import BackgammonGame, BackgammonState
from spieltisch.envs.backgammon import rules as k
from spieltisch.envs.backgammon.engine import action_of, describe_action
from spieltisch.envs.backgammon.notation import START_POSITION_ID, sides_to_position_id

GAME = BackgammonGame()
CUBE = BackgammonGame(cube=True)


def position_id(x: dict[int, int], o: dict[int, int], x_bar: int = 0, o_bar: int = 0) -> str:
    """The position ID with X on roll (points from each player's own view)."""

    def side(points: dict[int, int], bar: int) -> np.ndarray:
        a = np.zeros(25, dtype=int)
        for p, c in points.items():
            a[p - 1] = c
        a[24] = bar
        return a

    return sides_to_position_id(side(o, o_bar), side(x, x_bar))


def summary(state: BackgammonState, after: BackgammonState) -> str:
    """What a play changed, from the mover's (``state.turn``'s) view (see the module doc)."""
    me, op = state.turn, 1 - state.turn
    before_me, after_me = state.side(me), after.side(me)
    froms, tos = [], []
    for i in range(26):
        point = 0 if i == k.OFF else i + 1  # bar = 25, off = 0
        delta = int(after_me[i]) - int(before_me[i])
        froms += [point] * max(0, -delta)
        tos += [point] * max(0, delta)
    hits = [
        24 - j for j in range(24) if state.side(op)[j] == 1 and after.side(op)[j] == 0
    ]  # opponent index j = mover's point 24 - j
    text = "+".join(map(str, sorted(froms, reverse=True))) + ">"
    text += "+".join(map(str, sorted(tos, reverse=True)))
    return text + "".join(f"*{h}" for h in sorted(hits, reverse=True))


def plays_of(state: BackgammonState) -> set[str]:
    plays = state.legal_plays()
    summaries = [summary(state, p.state) for p in plays]
    assert len(set(summaries)) == len(summaries), "two plays with the same result"
    return set(summaries)


def moves_of(state: BackgammonState) -> set[str]:
    return {describe_action(a) for a in state.legal_actions()}


# --- setup, opening roll ---------------------------------------------------------------------
def test_start_position_and_its_diagram():
    state = GAME.new_initial_state()
    assert state.position_id() == START_POSITION_ID == "4HPwATDgc/ABMA"
    assert state.to_text() == "4HPwATDgc/ABMA 0 open"
    assert state.is_chance_node() and state.current_player == -1
    assert str(state) == "\n".join(
        [
            "+13-14-15-16-17-18------19-20-21-22-23-24-+",
            "| X           O    |   | O              X |",
            "| X           O    |   | O              X |",
            "| X           O    |   | O                |",
            "| X                |   | O                |",
            "| X                |   | O                |",
            "|                  |BAR|                  |  bar: X 0, O 0",
            "| O                |   | X                |",
            "| O                |   | X                |",
            "| O           X    |   | X                |",
            "| O           X    |   | X              O |",
            "| O           X    |   | X              O |",
            "+12-11-10--9--8--7-------6--5--4--3--2--1-+",
            "borne off: X (seat 0) 0, O (seat 1) 0",
            "opening roll to come",
        ]
    )
    assert state.pip_counts() == (167, 167)


@pytest.mark.parametrize(("d0", "d1", "starter"), [(3, 1, 0), (1, 3, 1), (6, 5, 0), (2, 6, 1)])
def test_opening_roll_higher_die_starts_and_plays_both_dice(d0, d1, starter):
    state = GAME.new_initial_state()
    state.set_dice(d0, d1)
    assert state.current_player == starter == state.turn
    assert state.dice() == tuple(sorted((d0, d1), reverse=True))
    assert state.rolled() == (d0, d1)


def test_opening_roll_cannot_be_a_tie_and_random_openings_never_are():
    state = GAME.new_initial_state()
    with pytest.raises(IllegalActionError, match="tie"):
        state.set_dice(4, 4)
    assert state.is_chance_node()
    rng = np.random.default_rng(0)
    starters = set()
    for _ in range(200):
        s = GAME.new_initial_state()
        d0, d1 = s.roll_dice(rng)
        assert d0 != d1 and len(s.dice()) == 2
        starters.add(s.current_player)
    assert starters == {0, 1}


def test_opening_31_has_16_plays_and_7_first_moves():
    state = GAME.state_from_text("4HPwATDgc/ABMA 0 31")
    assert moves_of(state) == {"24/21", "13/10", "8/5", "6/3", "24/23", "8/7", "6/5"}
    assert plays_of(state) == {
        "24+24>23+21", "24>20", "24+8>21+7", "24+6>21+5",
        "24+13>23+10", "13>9", "13+8>10+7", "13+6>10+5",
        "24+8>23+5", "8+8>7+5", "8+6>5+5", "8>4",
        "24+6>23+3", "8+6>7+3", "6+6>5+3", "6>2",
    }  # fmt: skip


# --- moving, hitting ---------------------------------------------------------------------------
def test_both_dice_may_move_one_checker_and_a_hit_on_the_intermediate_stop_counts():
    # O has a blot on X's 10 point (O's 15). 13/10*/8 and 13/11/8 end on the same X
    # checkers but differ for O: two plays.
    pid = position_id({6: 5, 8: 3, 13: 5, 24: 2}, {6: 5, 8: 3, 13: 4, 15: 1, 24: 2})
    assert pid == "4HPwBDDgc/ABMA"
    state = GAME.state_from_position_id(pid, "32")
    plays = plays_of(state)
    assert {"13>8*10", "13>8"} <= plays
    assert "13+8>10+6*10" in plays  # the hit with the 3 alone, the 2 elsewhere
    hit = next(p for p in state.legal_plays() if summary(state, p.state) == "13>8*10")
    assert hit.notation == "13/10 10/8"
    assert hit.state.side(1)[k.BAR] == 1 and hit.state.side(1)[14] == 0
    plain = next(p for p in state.legal_plays() if summary(state, p.state) == "13>8")
    assert plain.notation == "13/11 11/8" and plain.state.side(1)[14] == 1


def test_a_closed_point_blocks_landing_and_the_intermediate_stop():
    # O holds X's 11 point (O's 14) and X's 9 point (O's 16): 13 can go neither 2 nor 4.
    pid = position_id({6: 5, 8: 3, 13: 5, 24: 2}, {6: 5, 8: 3, 13: 1, 14: 2, 16: 2, 24: 2})
    state = GAME.state_from_position_id(pid, "22")
    assert "13/11" not in moves_of(state)
    assert not any(p.startswith("13") for p in plays_of(state))


# --- the bar ------------------------------------------------------------------------------------
def test_entering_against_a_closed_board_is_impossible_the_only_action_is_pass():
    pid = position_id({6: 5, 8: 3, 13: 6}, {1: 2, 2: 2, 3: 2, 4: 2, 5: 2, 6: 2, 13: 3}, x_bar=1)
    assert pid == "27YBBwDgc/ADQA"
    for roll in ("61", "55", "21"):
        state = GAME.state_from_position_id(pid, roll)
        assert state.legal_actions() == (k.PASS,)
        plays = state.legal_plays()
        assert len(plays) == 1 and plays[0].actions == () and plays[0].notation == "pass"
        assert np.array_equal(plays[0].state.board, state.board)
        state.apply(k.PASS)
        assert state.turn == 1 and state.is_chance_node()
        assert state.side(0)[k.BAR] == 1  # nothing moved


def test_checkers_on_the_bar_enter_first_only_on_open_points():
    # Two X checkers on the bar; O holds its points 1, 2, 4, 5, 6: only a 3 enters (bar/22).
    pid = position_id({6: 5, 8: 3, 13: 5}, {1: 2, 2: 2, 4: 2, 5: 2, 6: 2, 11: 5}, x_bar=2)
    assert pid == "m23wAQDgc/ABYA"
    state = GAME.state_from_position_id(pid, "63")
    assert moves_of(state) == {"bar/22"}  # the 6 cannot enter; nothing else may move
    assert plays_of(state) == {"25>22"}  # one checker still on the bar: the 6 is lost
    state.apply(action_of(25, 3))
    assert state.turn == 1 and state.is_chance_node()  # the turn ended by itself
    # 3-3: both enter, then two more 3s anywhere (but not from 22 to 19, O's 6 point).
    state = GAME.state_from_position_id(pid, "33")
    assert moves_of(state) == {"bar/22"}
    assert all(p.startswith("25+25") for p in plays_of(state))
    assert "25+25+22+22>19+19+22+22" not in plays_of(state)


# --- bearing off ------------------------------------------------------------------------------
def test_bearing_off_with_higher_dice_only_from_the_highest_point():
    # X: one checker on 3, one on 2, 13 off. 6-5: both bear off (the 6 from the 3 point, then
    # the 5 from the 2 point, now the highest); the 2 point cannot go first with a higher die.
    pid = position_id({3: 1, 2: 1}, {19: 15})
    assert pid == "AAD8/wEKAAAAAA"
    state = GAME.state_from_position_id(pid, "65")
    assert moves_of(state) == {"3/off"}  # with the 6 or the 5
    assert state.legal_actions() == (action_of(3, 5), action_of(3, 6))
    assert plays_of(state) == {"3+2>0+0"}
    state.apply(action_of(3, 6))
    assert moves_of(state) == {"2/off"}
    state.apply(action_of(2, 5))
    assert state.is_terminal() and state.winner() == 0


def test_bearing_off_may_be_replaced_by_a_move_inside_the_home_board():
    # X: 5 point and 2 point. 6-4: 6 bears off the 5 (highest), 4 then bears off the 2; or
    # 5/1 with the 4 first, after which the 6 bears off the 2 (now highest) and the 1 stays.
    pid = position_id({5: 1, 2: 1}, {19: 15})
    assert pid == "AAD8/wEiAAAAAA"
    state = GAME.state_from_position_id(pid, "64")
    assert plays_of(state) == {"5+2>0+0", "5+2>1+0"}
    assert moves_of(state) == {"5/off", "5/1"}


def test_no_bearing_off_while_a_checker_is_outside_the_home_board():
    # X: one checker on 8, fourteen on the 1 point. 6-1: 1/off first is not allowed (8 is
    # outside); 8/2 brings everybody home and then the 1 bears off, or 8/7/1.
    pid = position_id({8: 1, 1: 14}, {19: 15})
    state = GAME.state_from_position_id(pid, "61")
    assert moves_of(state) == {"8/2", "8/7"}
    assert plays_of(state) == {"8+1>2+0", "8>1"}


# --- compulsory play ----------------------------------------------------------------------------
def test_only_one_die_playable_the_higher_one_must_be_played():
    # X: one checker on 13, fourteen on the 1 point (cannot bear off: 13 is not home).
    # O holds X's 2 point. 6-5: 13/7 or 13/8, but 7/2 and 8/2 are blocked: only one die can
    # be played, and it must be the 6.
    pid = position_id({13: 1, 1: 14}, {23: 2, 1: 13})
    assert pid == "/x8AABj/PwAEAA"
    state = GAME.state_from_position_id(pid, "65")
    assert moves_of(state) == {"13/7"}
    assert plays_of(state) == {"13>7"}
    state.apply(action_of(13, 6))
    assert state.turn == 1  # the 5 is lost


def test_only_the_lower_die_playable_then_it_is_played():
    # As above, but O also holds X's 7 point: the 6 cannot be played at all.
    pid = position_id({13: 1, 1: 14}, {23: 2, 18: 2, 1: 11})
    assert pid == "/wcAMBj/PwAEAA"
    state = GAME.state_from_position_id(pid, "65")
    assert moves_of(state) == {"13/8"}
    assert plays_of(state) == {"13>8"}


def test_both_dice_must_be_played_when_possible():
    # X: 13 and fourteen on the 1 point; O holds X's 9 point. 4-2: 13/9 is blocked, but
    # 13/11/7 uses both dice, so 13/11 alone (leaving the 4) is not a legal play.
    pid = position_id({13: 1, 1: 14}, {16: 2, 1: 13})
    state = GAME.state_from_position_id(pid, "42")
    assert plays_of(state) == {"13>7"}
    assert moves_of(state) == {"13/11"}  # 13/9 with the 4 first is blocked


def test_a_double_that_can_only_be_partly_played():
    # X: 13 and fourteen on the 1 point; O holds X's 4 point. 3-3: 13/10/7, then 7/4 is
    # blocked and nothing else may move: two of the four 3s are played.
    pid = position_id({13: 1, 1: 14}, {21: 2, 1: 13})
    assert pid == "/x8AAAb/PwAEAA"
    state = GAME.state_from_position_id(pid, "33")
    assert plays_of(state) == {"13>7"}
    assert state.s[k.M_MAXDEPTH] == 2
    assert moves_of(state) == {"13/10"}
    state.apply(action_of(13, 3))
    assert state.dice() == (3, 3, 3) and moves_of(state) == {"10/7"}
    state.apply(action_of(10, 3))
    assert state.turn == 1 and state.is_chance_node()  # two 3s are lost


def test_a_double_played_as_far_as_possible_four_moves():
    # 6-6 from the start: 18/12 and 7/1 land on O's points, 8/2 cannot go on (not all home).
    state = GAME.state_from_text("4HPwATDgc/ABMA 0 6666")
    assert state.s[k.M_MAXDEPTH] == 4
    assert moves_of(state) == {"24/18", "13/7", "8/2"}
    assert plays_of(state) == {
        "24+24+13+13>18+18+7+7", "24+24+13+8>18+18+7+2", "24+24+8+8>18+18+2+2",
        "24+13+13+13>18+7+7+7", "24+13+13+8>18+7+7+2", "24+13+8+8>18+7+2+2",
        "24+8+8+8>18+2+2+2", "13+13+13+13>7+7+7+7", "13+13+13+8>7+7+7+2",
        "13+13+8+8>7+7+2+2", "13+8+8+8>7+2+2+2",
    }  # fmt: skip


# --- winning and scoring ------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("o", "o_off", "result", "points"),
    [
        ({6: 14}, 1, "single", 1),  # O bore off one checker
        ({6: 15}, 0, "gammon", 2),  # none off, none in X's home board or on the bar
        ({6: 14, 20: 1}, 0, "backgammon", 3),  # none off and one in X's home board
        ({6: 14}, 0, "backgammon", 3),  # none off and one on the bar (below)
    ],
)
def test_single_gammon_backgammon(o, o_off, result, points):
    o_bar = 15 - o_off - sum(o.values())
    pid = position_id({1: 1}, o, o_bar=o_bar)
    state = GAME.state_from_position_id(pid, "21")
    # Either die would bear the last checker off, but then the other cannot be played:
    # only one die can be used, so it must be the higher one.
    assert state.legal_actions() == (action_of(1, 2),)
    state.apply(action_of(1, 2))
    assert state.is_terminal()
    assert state.win_type() == result and state.points() == points
    assert state.returns() == (points, -points)
    assert state.legal_actions() == () and not state.legal_mask().any()
    with pytest.raises(GameOverError):
        state.apply(0)
    with pytest.raises(GameOverError):
        state.roll_dice(np.random.default_rng(0))
    over = GAME.state_from_text(state.to_text())
    assert over == state and over.win_type() == result


def test_the_game_ends_as_soon_as_the_last_checker_is_off_even_with_dice_left():
    pid = position_id({1: 1}, {6: 15})
    state = GAME.state_from_position_id(pid, "22")
    state.apply(action_of(1, 2))
    assert state.is_terminal() and state.dice() == ()
    assert state.to_text().endswith(" 0 over")


# --- the doubling cube ------------------------------------------------------------------------
def test_cube_double_take_then_drop():
    state = CUBE.state_from_text("4HPwATDgc/ABMA 0 cube cube=1")
    assert state.legal_actions() == (k.ROLL, k.DOUBLE) and state.current_player == 0
    state.apply(k.DOUBLE)
    assert state.current_player == 1 and state.legal_actions() == (k.TAKE, k.DROP)
    assert state.to_text() == "4HPwATDgc/ABMA 0 take cube=1"
    state.apply(k.TAKE)
    assert state.cube() == (2, 1) and state.current_player == 0 and state.is_chance_node()
    state.set_dice(3, 1)
    state.apply_play(0)
    # Seat 1 owns the cube: it may redouble before rolling.
    assert state.current_player == 1 and state.legal_actions() == (k.ROLL, k.DOUBLE)
    state.apply(k.DOUBLE)
    state.apply(k.DROP)
    assert state.is_terminal() and state.winner() == 1
    assert state.win_type() == "dropped" and state.points() == 2  # the cube before the double
    assert state.to_text().endswith(" 1 drop cube=2@1")


def test_cube_owner_cannot_be_doubled_by_the_other_and_the_cube_multiplies_points():
    state = CUBE.state_from_text(f"{position_id({1: 1}, {6: 15})} 0 roll cube=4@1")
    state.set_dice(2, 1)
    state.apply(action_of(1, 2))
    assert state.win_type() == "gammon" and state.points() == 8
    # After seat 0's turn, seat 1 (the owner) may double; seat 0 never while seat 1 owns it.
    state = CUBE.state_from_text("4HPwATDgc/ABMA 0 31 cube=2@1")
    state.apply_play(0)
    assert state.phase == k.PH_CUBE and state.current_player == 1
    state = CUBE.state_from_text("4HPwATDgc/ABMA 1 31 cube=2@1")
    state.apply_play(0)
    assert state.phase == k.PH_ROLL and state.current_player == 0
    with pytest.raises(PositionFormatError, match="may not double"):
        CUBE.state_from_text("4HPwATDgc/ABMA 0 cube cube=2@1")


def test_no_double_beyond_max_cube():
    game = BackgammonGame(cube=True, max_cube=4)
    state = game.state_from_text("4HPwATDgc/ABMA 1 31 cube=4@0")
    state.apply_play(0)
    assert state.phase == k.PH_ROLL  # seat 0 owns a 4-cube = max_cube: no more doubling


# --- notation --------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "text",
    [
        "4HPwATDgc/ABMA 0 open",
        "4HPwATDgc/ABMA 1 roll",
        "4HPwATDgc/ABMA 0 31",
        "4HPwATDgc/ABMA 1 6666",
        "4HPwATDgc/ABMA 1 66",
        "4HPwATDgc/ABMA 0 5",
        "27YBBwDgc/ADQA 0 61",
        "AAD8/wEKAAAAAA 1 65",
        "4P8HAAIBAAAAAA 0 21",
    ],
)
def test_text_round_trips(text):
    state = GAME.state_from_text(text)
    assert state.to_text() == text
    assert GAME.state_from_text(state.to_text()) == state


@pytest.mark.parametrize(
    "text",
    [
        "4HPwATDgc/ABMA 0 cube cube=1",
        "4HPwATDgc/ABMA 1 take cube=2@1",
        "4HPwATDgc/ABMA 0 31 cube=16@0",
        "4HPwATDgc/ABMA 1 roll cube=1",
    ],
)
def test_cube_text_round_trips(text):
    assert CUBE.state_from_text(text).to_text() == text


def test_every_state_of_random_cube_games_round_trips_through_text():
    # Random players double and drop often: a dropped game once read back with the doubler,
    # not the dropper, as the seat that acted last.
    rng = np.random.default_rng(7)
    endings = set()
    for _ in range(60):
        state = CUBE.new_initial_state()
        while not state.is_terminal():
            if state.is_chance_node():
                state.roll_dice(rng)
            else:
                legal = [a for a in state.legal_actions() if a != k.DOUBLE or rng.random() < 0.1]
                state.apply(legal[rng.integers(len(legal))])
            again = CUBE.state_from_text(state.to_text())
            assert again == state, state.to_text()
            assert again.current_player == state.current_player
        endings.add(state.win_type())
    assert {"dropped", "single"} <= endings


def test_position_id_follows_gnubg():
    gnubg = pytest.importorskip("gnubg_nn")
    from spieltisch.envs.backgammon.gnubg_adapter import to_gnubg_board

    for text in ("4HPwATDgc/ABMA 0 31", "m23wAQDgc/ABYA 0 63", "/x8AABj/PwAEAA 1 65"):
        state = GAME.state_from_text(text)
        board = to_gnubg_board(state)
        assert gnubg.position_id(board) == state.position_id()
        assert [list(s) for s in gnubg.board_from_position_id(state.position_id())] == board


@pytest.mark.parametrize(
    ("text", "match"),
    [
        ("", "expected"),
        ("4HPwATDgc/ABMA 0", "expected"),
        ("4HPwATDgc/ABM 0 31", "14 characters"),
        ("4HPwATDgc/AB#A 0 31", "14 characters"),
        ("4HPwATDgc/ABMA 2 31", "seat on turn"),
        ("4HPwATDgc/ABMA 0 71", "1..6"),
        ("4HPwATDgc/ABMA 0 321", "two different dice"),
        ("4HPwATDgc/ABMA 0 33333", "two different dice"),
        ("4HPwATDgc/ABMA 0 maybe", "expected dice"),
        ("4HPwATDgc/ABMA 0 over", "has not borne off"),
        ("4HPwATDgc/ABMA 1 open", "nobody is on turn"),
        ("4HPwATDgc/ABMA 0 cube", "doubling cube"),
        ("4HPwATDgc/ABMA 0 31 cube=2@0", "no doubling cube"),
        ("//////////AAAA 0 31", "checkers"),
        ("AAD8/wEKAAAAAA 0 roll", None),
    ],
)
def test_bad_position_text_is_rejected_with_a_clear_error(text, match):
    if match is None:
        GAME.state_from_text(text)  # a valid control case
        return
    with pytest.raises(PositionFormatError, match=match):
        GAME.state_from_text(text)


def test_positions_with_both_players_on_one_point_or_too_many_checkers_are_rejected():
    both = sides_to_position_id(np.array([0] * 23 + [1, 0]), np.array([1] + [0] * 24))
    with pytest.raises(PositionFormatError, match="same point"):
        GAME.state_from_text(f"{both} 0 roll")
    with pytest.raises(PositionFormatError, match="must be a string"):
        GAME.state_from_text(42)  # type: ignore[arg-type]
    with pytest.raises(PositionFormatError, match="cube value"):
        CUBE.state_from_text("4HPwATDgc/ABMA 0 roll cube=3@0")
    with pytest.raises(PositionFormatError, match="centred"):
        CUBE.state_from_text("4HPwATDgc/ABMA 0 roll cube=2")
    with pytest.raises(PositionFormatError, match="game is over"):
        GAME.state_from_text(f"{position_id({}, {6: 15})} 1 roll")


# --- bad input, engine API ---------------------------------------------------------------------
def test_illegal_moves_raise_and_change_nothing():
    state = GAME.state_from_text("4HPwATDgc/ABMA 0 31")
    before = state.clone()
    for action, error in [
        (action_of(13, 2), IllegalActionError),  # no die 2
        (action_of(12, 1), IllegalActionError),  # no checker on 12
        (k.PASS, IllegalActionError),  # a move is possible
        (k.DOUBLE, IllegalActionError),  # no cube in this game
        (-1, IllegalActionError),
        (1.0, ActionTypeError),
        ("13/10", ActionTypeError),
        (None, ActionTypeError),
        (True, ActionTypeError),
    ]:
        with pytest.raises(error):
            state.apply(action)  # type: ignore[arg-type]
        assert state == before and state.s.tobytes() == before.s.tobytes()
    with pytest.raises(IllegalActionError, match=r"legal actions: 30 \(6/5\)"):
        state.apply(action_of(13, 2))
    state.apply(np.int64(action_of(8, 3)))  # numpy integers are accepted
    assert state.dice() == (1,)


def test_chance_nodes_reject_moves_and_decisions_reject_dice():
    state = GAME.new_initial_state()
    with pytest.raises(IllegalActionError, match="not been rolled"):
        state.apply(0)
    with pytest.raises(IllegalActionError, match=r"1\.\.6"):
        state.set_dice(0, 3)
    with pytest.raises(ActionTypeError):
        state.set_dice(2.5, 3)  # type: ignore[arg-type]
    with pytest.raises(IllegalActionError, match="no plays"):
        state.apply_play(0)
    state.set_dice(5, 2)
    with pytest.raises(IllegalActionError, match="no dice to roll"):
        state.set_dice(1, 2)
    with pytest.raises(IllegalActionError, match="out of range"):
        state.apply_play(99)
    with pytest.raises(ActionTypeError):
        state.apply_play("0")  # type: ignore[arg-type]
    assert state.to_text() == "4HPwATDgc/ABMA 0 52"


def test_clone_pickle_copy_and_equality():
    state = GAME.state_from_text("4HPwATDgc/ABMA 0 31")
    twin = pickle.loads(pickle.dumps(state))
    assert twin == state and hash(twin) == hash(state)
    assert twin.legal_actions() == state.legal_actions()
    assert [p.notation for p in twin.legal_plays()] == [p.notation for p in state.legal_plays()]
    for other in (state.clone(), copy.copy(state), copy.deepcopy(state)):
        assert other == state
        other.apply_play(0)
        assert other != state
    assert state.to_text() == "4HPwATDgc/ABMA 0 31"
    assert pickle.loads(pickle.dumps(GAME)) == GAME
    assert BackgammonGame(cube=True) != GAME


def test_a_play_stepped_move_by_move_equals_the_whole_play():
    state = GAME.state_from_text("4HPwATDgc/ABMA 0 6666")
    for index, play in enumerate(state.legal_plays()):
        stepped = state.clone()
        for action in play.actions:
            assert stepped.legal_mask()[action] == 1
            stepped.apply(action)
        whole = state.clone()
        whole.apply_play(index)
        assert stepped == whole == play.state


def test_game_parameters_are_checked():
    with pytest.raises(TypeError):
        BackgammonGame(cube=1)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="power of 2"):
        BackgammonGame(cube=True, max_cube=48)
    with pytest.raises(TypeError):
        BackgammonGame(max_cube="64")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="needs the doubling cube"):
        BackgammonGame(max_cube=8)  # a cube limit on a cubeless game is a mistake, said so
    assert GAME.num_actions == 151 and CUBE.num_actions == 155


def test_dice_rolls_follow_the_seeded_generator_and_are_uniform():
    def rolls(seed: int) -> list[tuple[int, int]]:
        rng = np.random.default_rng(seed)
        out = []
        state = GAME.state_from_text("4HPwATDgc/ABMA 0 roll")
        for _ in range(3600):
            probe = state.clone()
            out.append(probe.roll_dice(rng))
        return out

    first = rolls(7)
    assert first == rolls(7) and first != rolls(8)
    counts = np.zeros((7, 7))
    for d1, d2 in first:
        counts[d1, d2] += 1
    assert counts[1:, 1:].min() > 50 and counts[1:, 1:].max() < 150  # ~100 each
    # Any numpy bit generator works (MT19937's raw output is only 32 bits wide).
    for bits in (np.random.MT19937(1), np.random.Philox(1), np.random.SFC64(1)):
        rng = np.random.Generator(bits)
        seen = {GAME.state_from_text("4HPwATDgc/ABMA 0 roll").roll_dice(rng) for _ in range(2000)}
        assert len(seen) == 36


def test_states_of_one_game_may_be_played_in_several_threads_at_once():
    # The play generator's workspace was one per game: a thread's plays were overwritten by
    # another's between num_plays() and apply_play() (8 of 24 such games went astray).
    import sys
    import threading

    game = BackgammonGame()

    def play(seed: int, out: dict, start: threading.Barrier) -> None:
        rng = np.random.default_rng(seed)
        state = game.new_initial_state()
        trace = []
        start.wait()
        while not state.is_terminal():
            if state.is_chance_node():
                trace.append(state.roll_dice(rng))
                continue
            boards = state.play_boards()
            i = int(rng.integers(state.num_plays()))
            trace.append(boards[i].tobytes())
            state.apply_play(i)
        out[seed] = (trace, state.to_text())

    seeds = range(8)
    alone: dict = {}
    for seed in seeds:
        play(seed, alone, threading.Barrier(1))
    interval = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)  # switch threads as often as possible
    try:
        together: dict = {}
        start = threading.Barrier(len(seeds))
        threads = [threading.Thread(target=play, args=(s, together, start)) for s in seeds]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
    finally:
        sys.setswitchinterval(interval)
    assert together == alone
