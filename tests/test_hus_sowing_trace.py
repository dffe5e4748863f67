"""HusState.sowing_trace: a Hus move step by step, as the move kernel itself writes it.

Positions are drawn as in tests/test_hus_rules.py (what ``str(state)`` prints, seat 0 at the
bottom). Actions and the steps' pits: 0..7 = row 1 columns 0..7, 8..15 = row 2 columns 0..7, from
the mover's own left.
"""

from __future__ import annotations

import json

import numpy as np
import pytest
from spieltisch.envs._common.errors import GameOverError, IllegalActionError
from spieltisch.envs.hus import HusGame, HusState, SowingStep, SowingTrace
from spieltisch.envs.hus.rules import (
    TRACE_COLUMNS,
    TRACE_KIND,
    action_of_ring,
    play_pit,
    ring_of_action,
)

HUS = HusGame()


def rows_of(board: np.ndarray) -> list[str]:
    """The four board lines of the diagram of ``board``."""
    return str(HusState(HUS, board, 0)).splitlines()[:4]


def check_trace(state: HusState, action: int, trace: SowingTrace) -> None:
    """Every invariant of a trace, against ``state.apply(action)`` on a copy."""
    after = state.clone()
    stats = after.apply(action)
    assert trace.stats == stats
    assert trace.player == state.current_player
    assert np.array_equal(trace.board, after.board)
    expected_steps = 1 + stats.stones_sown + stats.relay_steps + stats.captures
    assert trace.truncated == (expected_steps > len(trace.steps))
    if not trace.truncated:
        assert len(trace.steps) == expected_steps
        assert np.array_equal(trace.steps[-1].board, after.board)
        assert trace.steps[-1].hand == 0
    own = 16 * state.current_player
    total = int(state.board.sum())
    previous, hand, pit = state.board, 0, -1
    kinds = {"pickup": 0, "sow": 0, "capture": 0, "relay": 0}
    for i, step in enumerate(trace.steps):
        kinds[step.kind] += 1
        board = step.board
        assert board.shape == (32,)
        assert int(board.sum()) + step.hand == total  # stones on the board + in hand
        assert (board >= 0).all()
        diff = board.astype(np.int64) - previous
        ring = ring_of_action(step.pit)
        if step.kind == "sow":
            # one stone from the hand into the next pit of the mover's ring
            assert hand > 0
            assert ring == (ring_of_action(pit) + 1) % 16
            assert step.hand == hand - 1
            assert np.flatnonzero(diff).tolist() == [own + ring]
            assert diff[own + ring] == 1
        else:
            # stones taken into an empty hand: the first pick-up, or a landing in an occupied pit
            assert hand == 0
            assert (i == 0) == (step.kind == "pickup")
            if i > 0:
                assert step.pit == pit  # the pit the last stone fell into
                assert previous[own + ring] >= 2
            assert board[own + ring] == 0
            assert (diff <= 0).all()
            assert step.hand == -int(diff.sum())
            taken = np.flatnonzero(diff).tolist()
            if step.kind == "capture":
                # the landing pit (row 2) and the opponent's inner and outer pit opposite it
                opp = 16 * (1 - state.current_player)
                assert ring < 8
                assert previous[opp + 7 - ring] > 0
                assert set(taken) <= {own + ring, opp + 7 - ring, opp + 8 + ring}
                assert opp + 7 - ring in taken
            else:
                assert taken == [own + ring]
        previous, hand, pit = board, step.hand, step.pit
    if not trace.truncated:
        assert kinds["sow"] == stats.stones_sown
        assert kinds["relay"] == stats.relay_steps
        assert kinds["capture"] == stats.captures
        assert kinds["pickup"] == 1


def unchanged(state: HusState):
    return (state.to_text(), state.move_number, state.last_move, state._bits, state.board.copy())


def test_a_short_move():
    """Row 1 column 0 at the start: 2 stones into row 2 columns 0 and 1, both empty."""
    state = HUS.new_initial_state()
    trace = state.sowing_trace(0)
    assert [(s.kind, s.pit, s.hand) for s in trace.steps] == [
        ("pickup", 0, 2),
        ("sow", 8, 1),
        ("sow", 9, 0),
    ]
    assert rows_of(trace.steps[0].board) == [
        "seat 1 row 1 |  2  2  2  2  2  2  2  2",
        "seat 1 row 2 |  2  2  2  2  0  0  0  0",
        "seat 0 row 2 |  0  0  0  0  2  2  2  2",
        "seat 0 row 1 |  0  2  2  2  2  2  2  2",
    ]
    assert rows_of(trace.steps[1].board)[2:] == [
        "seat 0 row 2 |  1  0  0  0  2  2  2  2",
        "seat 0 row 1 |  0  2  2  2  2  2  2  2",
    ]
    assert rows_of(trace.steps[2].board)[2:] == [
        "seat 0 row 2 |  1  1  0  0  2  2  2  2",
        "seat 0 row 1 |  0  2  2  2  2  2  2  2",
    ]
    assert not trace.truncated
    assert trace.player == 0
    assert trace.steps[1].sides() == (
        [0, 2, 2, 2, 2, 2, 2, 2, 1, 0, 0, 0, 2, 2, 2, 2],
        [2, 2, 2, 2, 2, 2, 2, 2, 0, 0, 0, 0, 2, 2, 2, 2],
    )
    assert isinstance(trace.steps[0], SowingStep)
    # the trace is the sequence of its steps
    assert len(trace) == 3
    assert list(trace) == list(trace.steps)
    assert trace[-1] is trace.steps[-1]
    assert json.loads(json.dumps(trace[2].as_dict())) == {
        "kind": "sow",
        "pit": 9,
        "hand": 0,
        "sides": [
            [0, 2, 2, 2, 2, 2, 2, 2, 1, 1, 0, 0, 2, 2, 2, 2],
            [2, 2, 2, 2, 2, 2, 2, 2, 0, 0, 0, 0, 2, 2, 2, 2],
        ],
    }
    check_trace(state, 0, trace)


def test_relays_step_by_step():
    """Row 2 column 7 at the start (tests/test_hus_rules.py follows the same move): three relays
    round the ring, then the last stone falls into an empty pit."""
    state = HUS.new_initial_state()
    trace = state.sowing_trace(15)
    assert [(s.kind, s.pit, s.hand) for s in trace.steps] == [
        ("pickup", 15, 2),
        ("sow", 7, 1),  # row 1 column 7
        ("sow", 6, 0),  # row 1 column 6 held 2 stones: relay
        ("relay", 6, 3),
        ("sow", 5, 2),
        ("sow", 4, 1),
        ("sow", 3, 0),
        ("relay", 3, 3),
        ("sow", 2, 2),
        ("sow", 1, 1),
        ("sow", 0, 0),
        ("relay", 0, 3),
        ("sow", 8, 2),  # up into row 2 at column 0
        ("sow", 9, 1),
        ("sow", 10, 0),  # empty: the move ends
    ]
    assert rows_of(trace.steps[3].board)[2:] == [  # after the first relay pick-up
        "seat 0 row 2 |  0  0  0  0  2  2  2  0",
        "seat 0 row 1 |  2  2  2  2  2  2  0  3",
    ]
    assert rows_of(trace.steps[-1].board)[2:] == [
        "seat 0 row 2 |  1  1  1  0  2  2  2  0",
        "seat 0 row 1 |  0  3  3  0  3  3  0  3",
    ]
    check_trace(state, 15, trace)


def test_a_capture_is_its_own_step():
    state = HUS.state_from_text(
        """
        seat 1 row 1 |  1  0  3  0  0  0  0  2
        seat 1 row 2 |  0  0  4  0  0  0  0  1
        seat 0 row 2 |  2  0  1  0  0  0  0  0
        seat 0 row 1 |  0  0  0  0  0  0  0  0
        seat 0 to move
        """
    )
    trace = state.sowing_trace(8)
    assert [(s.kind, s.pit, s.hand) for s in trace.steps[:4]] == [
        ("pickup", 8, 2),
        ("sow", 9, 1),
        ("sow", 10, 0),  # row 2 column 2 held a stone, opposite 4 and 3: capture
        ("capture", 10, 9),
    ]
    assert rows_of(trace.steps[3].board) == [
        "seat 1 row 1 |  1  0  0  0  0  0  0  2",
        "seat 1 row 2 |  0  0  0  0  0  0  0  1",
        "seat 0 row 2 |  0  1  0  0  0  0  0  0",
        "seat 0 row 1 |  0  0  0  0  0  0  0  0",
    ]
    assert [s.kind for s in trace.steps[4:]] == ["sow"] * 9
    assert [s.pit for s in trace.steps[4:]] == [11, 12, 13, 14, 15, 7, 6, 5, 4]
    check_trace(state, 8, trace)


def test_seat_1_moves_in_its_own_pits():
    state = HUS.new_initial_state(first_player=1)
    trace = state.sowing_trace(0)
    assert trace.player == 1
    assert [(s.kind, s.pit) for s in trace.steps] == [("pickup", 0), ("sow", 8), ("sow", 9)]
    assert trace.steps[-1].sides()[1][8:10] == [1, 1]
    check_trace(state, 0, trace)


def test_the_state_does_not_change():
    state = HUS.new_initial_state()
    state.apply(15)
    before = unchanged(state)
    for action in state.legal_actions():
        state.sowing_trace(action)
        now = unchanged(state)
        assert now[:4] == before[:4]
        assert np.array_equal(now[4], before[4])


NEVER_ENDING = """
    seat 1 row 1 |  5  5  5  5  5  4  4  4
    seat 1 row 2 |  0  0  0  0  0  0  0  0
    seat 0 row 2 |  0  1  0  1  0  1  0  1
    seat 0 row 1 |  1  2  0  2  1  0  1  0
    seat 0 to move
"""


def test_a_move_ended_by_a_repetition_ends_where_apply_ends():
    """tests/test_hus_rules.py: 128 relays, 274 stones, then the board and landing pit repeat;
    the move stops before that pick-up (the kernel's cycle search walks on past it)."""
    state = HUS.state_from_text(NEVER_ENDING)
    trace = state.sowing_trace(3)
    assert trace.stats.ended_by == "repetition"
    assert len(trace.steps) == 1 + 274 + 128
    assert not trace.truncated
    assert trace.steps[-1].kind == "sow"
    assert rows_of(trace.steps[-1].board)[2:] == [
        "seat 0 row 2 |  0  1  0  1  0  1  0  1",
        "seat 0 row 1 |  1  3  1  0  1  0  1  0",
    ]
    check_trace(state, 3, trace)


def test_the_kernel_clears_the_rows_its_cycle_search_wrote_past_the_end():
    state = HUS.state_from_text(NEVER_ENDING)
    board = state.board.copy()
    trace = np.zeros((5000, TRACE_COLUMNS), dtype=board.dtype)
    _, sown, relays = play_pit(board, 0, 3, HUS.max_sown, trace)
    assert (sown, relays) == (274, 128)
    assert (trace[:403, TRACE_KIND] > 0).all()
    assert not trace[403:].any()


def test_a_move_ended_by_the_sowing_limit_is_cut_and_still_ends_where_apply_ends():
    """tests/test_hus_rules.py: this move would first repeat after 784,178 stones; the sowing
    limit (100,000) ends it first. The trace keeps its first max_steps steps."""
    state = HUS.state_from_text(
        "0,0,0,1,4,0,0,0/0,0,0,0,0,0,0,0 1,0,3,2,1,2,13,1/2,1,0,7,2,1,2,5 1"
    )
    trace = state.sowing_trace(14, max_steps=500)
    assert trace.stats.ended_by == "limit"
    assert trace.truncated
    assert len(trace.steps) == 500
    check_trace(state, 14, trace)  # the board after the move is apply's all the same

    whole = state.sowing_trace(14, max_steps=200_000)
    assert not whole.truncated
    assert [(s.kind, s.pit, s.hand) for s in whole.steps[:500]] == [
        (s.kind, s.pit, s.hand) for s in trace.steps
    ]
    check_trace(state, 14, whole)


@pytest.mark.parametrize("max_sown", [16, 137, 274, 275, 10**6])
def test_limit_and_repetition_meet_as_apply_says(max_sown):
    """Around the first repeat (274 stones) the limit and the repetition rule take turns."""
    text = "2,0,1,2,3,2,1,0/1,0,1,0,1,0,2,1 5,6,2,4,3,3,3,5/0,0,0,0,0,0,0,0 0"
    state = HusGame(max_sown=max_sown).state_from_text(text)
    trace = state.sowing_trace(5)
    assert trace.stats.never_ending
    assert not trace.truncated
    check_trace(state, 5, trace)


def test_bad_input_raises_as_apply_does():
    state = HUS.new_initial_state()
    with pytest.raises(IllegalActionError):
        state.sowing_trace(8)  # row 2 column 0 is empty
    with pytest.raises(TypeError):
        state.sowing_trace(0, max_steps=2.5)
    with pytest.raises(ValueError, match="max_steps"):
        state.sowing_trace(0, max_steps=0)
    finished = HUS.state_from_text(
        "1,1,1,1,1,1,1,1/0,0,0,0,0,0,0,0 2,2,2,2,2,2,2,2/2,2,2,2,2,2,2,2 0"
    )
    assert finished.is_terminal()
    with pytest.raises(GameOverError):
        finished.sowing_trace(0)


def test_one_step_only():
    state = HUS.new_initial_state()
    trace = state.sowing_trace(15, max_steps=1)
    assert trace.truncated
    assert [(s.kind, s.pit, s.hand) for s in trace.steps] == [("pickup", 15, 2)]
    check_trace(state, 15, trace)


def test_action_of_ring_inverts_ring_of_action():
    assert [action_of_ring(ring_of_action(a)) for a in range(16)] == list(range(16))


def test_random_games_trace_every_move_to_apply_s_board():
    """300 random games, every move traced before it is played."""
    rng = np.random.default_rng(2024)
    moves = 0
    for game_index in range(300):
        state = HUS.new_initial_state(first_player=game_index % 2)
        while not state.is_terminal() and state.move_number < 300:
            action = int(rng.choice(state.legal_actions()))
            trace = state.sowing_trace(action)
            check_trace(state, action, trace)
            state.apply(action)
            assert np.array_equal(trace.board, state.board)
            moves += 1
    assert moves > 5000


def test_random_positions_with_small_sowing_limits():
    """Random positions (as the Brent test of tests/test_hus_rules.py draws them) where moves
    end by the limit, by a repetition or normally."""
    rng = np.random.default_rng(11)
    seen = set()
    for trial in range(400):
        game = HusGame(max_sown=int(rng.choice([16, 50, 300, 2000])))
        own = rng.multinomial(int(rng.integers(4, 40)), np.ones(16) / 16)
        opp = np.zeros(16, dtype=int)
        first = 8 if trial % 2 else 0  # stones only in the outer row: no capture possible
        opp[first:] = rng.multinomial(48 - own.sum(), np.ones(16 - first) / (16 - first))
        state = HusState(game, np.concatenate([own, opp]), 0)
        if state.is_terminal():
            continue
        action = int(rng.choice(state.legal_actions()))
        trace = state.sowing_trace(action, max_steps=3000)
        check_trace(state, action, trace)
        seen.add(trace.stats.ended_by)
    assert {"empty pit", "limit"} <= seen
