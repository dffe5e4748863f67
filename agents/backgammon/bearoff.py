"""Exact bear-off values: a one-sided bear-off database over the engine's own plays.

When both sides have all their checkers in their home boards (none on the bar, none outside
points 1..6) the game is a pure race of two independent bear-offs. For one side, the position
is its checkers on its points 1..6 (up to 15 of them; the rest borne off): ``C(21, 6) = 54,264``
positions. For each one the database holds

* the distribution of the number of rolls needed to bear off every checker, playing each roll
  so as to minimise the expected number of rolls (the one-sided rule of GNU Backgammon's
  bear-off databases), and
* with all 15 checkers still on the board, the distribution of the number of rolls to bear off
  the first one (playing each roll to minimise its expectation): what saving the gammon takes.

The plays of every roll are the engine's (:func:`.rules.set_dice`, :func:`.rules.play_boards`),
so the bear-off rules are not written again here. The table is built once per process (about
1.1M play generations, a few seconds) by :func:`database`.

**Values.** After the mover's play, with the opponent to roll (an afterstate, as the value
networks see it), the opponent's rolls ``n_o`` and the mover's ``n_m`` are independent and the
opponent rolls first, so the opponent wins exactly when ``n_o <= n_m``:

    P(mover wins)        = 1 - sum_n P(n_o = n) P(n_m >= n)
    P(mover wins gammon) = sum_n P(n_m = n) P(f_o > n)    (opponent has all 15 on the board;
                                                          f_o its rolls to the first one off)
    P(mover loses gammon) = sum_n P(n_o = n) P(f_m >= n)   (mover has all 15 on the board)

and no backgammon is possible (the loser's checkers are all in its own home board). The two
sides' plays are each chosen for the fewest rolls, not for the race against this opponent, so
a value is exact for those plays and an approximation otherwise (the tests compare it with exact
two-sided expectimax on small positions). :func:`afterstate_outputs` and
:func:`to_roll_outputs` give the five outputs in the order of the value networks
(:mod:`.td_value`); the TD agents use them with ``bearoff=true``.
"""

from __future__ import annotations

import functools
from math import comb
from typing import NamedTuple

import numba
import numpy as np
from spieltisch.agents.backgammon.td_value import result_outputs
from spieltisch.envs.backgammon import rules as k

POINTS = 6
#: one-sided positions: up to 15 checkers on 6 points (stars and bars: 6 bars among 21 places)
NUM_POSITIONS = comb(k.CHECKERS + POINTS, POINTS)
#: entries of each distribution (rolls 0..MAX_ROLLS - 1); the build checks that no probability
#: falls beyond
MAX_ROLLS = 48

#: the 21 distinct rolls (high die first) and their chances in 36
ROLLS = np.array([(a, b) for a in range(1, 7) for b in range(1, a + 1)], dtype=np.int64)
ROLL_WEIGHTS = np.array([1.0 if a == b else 2.0 for a, b in ROLLS]) / 36.0

_BINOM = np.array([[comb(n, r) for r in range(POINTS + 1)] for n in range(k.CHECKERS + POINTS)])


class BearoffDatabase(NamedTuple):
    """The one-sided tables, indexed by :func:`side_index`: ``off[i, n]`` = P(all borne off
    in exactly ``n`` rolls), ``off_tail[i, n]`` = P(more than ``n - 1`` rolls, i.e. >= ``n``);
    ``first_tail[i, n]`` = P(the first checker needs >= ``n`` rolls) (all zero but
    ``first_tail[i, 0]`` for a side with fewer than 15 checkers: one is already off);
    ``mean_off`` the expected rolls."""

    off: np.ndarray
    off_tail: np.ndarray
    first_tail: np.ndarray
    mean_off: np.ndarray


@numba.njit(cache=True, nogil=True)
def side_index(board, base, binom):
    """The database index of the side whose 26 cells start at ``board[base]`` (only its points
    1..6 are read): the rank of its stars-and-bars string, ``sum_j C(j + c_1 + .. + c_(j+1),
    j + 1)``."""
    index = 0
    total = 0
    for j in range(POINTS):
        total += board[base + j]
        index += binom[j + total, j + 1]
    return index


@numba.njit(cache=True, nogil=True)
def is_bearoff(board):
    """True when both sides have every checker not yet borne off on their points 1..6 (and
    neither has borne them all off)."""
    for side in range(2):
        base = k.SIDE * side
        if board[base + k.OFF] == k.CHECKERS:
            return False
        for j in range(POINTS, k.OFF):
            if board[base + j] != 0:
                return False
    return True


@numba.njit(cache=True)
def _build(counts, order, binom, rolls, weights, off, first, mean_off, mean_first, ws, boards):
    """Fill the tables position by position in ``order`` (fewer pips first: every play bears
    off or moves a checker down, so its result comes earlier); ``ws`` and ``boards`` are the
    play generator's workspace and the plays' boards."""
    s = np.zeros(k.STATE_SIZE, dtype=np.int32)
    for idx in order:
        total = 0
        for j in range(POINTS):
            total += counts[idx, j]
        if total == 0:
            off[idx, 0] = 1.0
            first[idx, 0] = 1.0
            continue
        for r in range(rolls.shape[0]):
            # The side on turn is seat 0; seat 1 waits on its own 1-point (the mover's 24-point),
            # where it cannot block a bear-off.
            s[:] = 0
            for j in range(POINTS):
                s[j] = counts[idx, j]
            s[k.OFF] = k.CHECKERS - total
            s[k.SIDE] = k.CHECKERS
            s[k.M_TURN] = 0
            s[k.M_PLAYER] = 0
            s[k.M_PHASE] = k.PH_ROLL
            s[k.M_WINNER] = -1
            k.set_dice(s, rolls[r, 0], rolls[r, 1], ws)
            n = s[k.M_NPLAYS]
            k.play_boards(s, ws, boards)
            best = -1
            best_first = -1
            for p in range(n):
                child = side_index(boards[p], 0, binom)
                if best < 0 or mean_off[child] < mean_off[best]:
                    best = child
                if best_first < 0 or mean_first[child] < mean_first[best_first]:
                    best_first = child
            w = weights[r]
            for m in range(1, off.shape[1]):
                off[idx, m] += w * off[best, m - 1]
            if total == k.CHECKERS:
                for m in range(1, first.shape[1]):
                    first[idx, m] += w * first[best_first, m - 1]
        if total < k.CHECKERS:
            first[idx, 0] = 1.0
        for m in range(off.shape[1]):
            mean_off[idx] += m * off[idx, m]
            mean_first[idx] += m * first[idx, m]


def _side_counts() -> np.ndarray:
    """Every one-sided position's checker counts on points 1..6, at its :func:`side_index`."""
    counts = np.zeros((NUM_POSITIONS, POINTS), dtype=np.int64)
    board = np.zeros(k.SIDE, dtype=np.int64)

    def place(point: int, left: int) -> None:
        if point == POINTS:
            counts[side_index(board, 0, _BINOM)] = board[:POINTS]
            return
        for c in range(left + 1):
            board[point] = c
            place(point + 1, left - c)
        board[point] = 0

    place(0, k.CHECKERS)
    return counts


def _tail(dist: np.ndarray) -> np.ndarray:
    """``tail[:, n]`` = P(N >= n) of distributions ``dist[:, n]`` = P(N = n)."""
    return np.ascontiguousarray(np.cumsum(dist[:, ::-1], axis=1)[:, ::-1])


@functools.cache
def database() -> BearoffDatabase:
    """The one-sided bear-off database (built on first use; read-only arrays)."""
    counts = _side_counts()
    pips = counts @ np.arange(1, POINTS + 1)
    order = np.argsort(pips, kind="stable").astype(np.int64)
    off = np.zeros((NUM_POSITIONS, MAX_ROLLS))
    first = np.zeros((NUM_POSITIONS, MAX_ROLLS))
    mean_off = np.zeros(NUM_POSITIONS)
    mean_first = np.zeros(NUM_POSITIONS)
    boards = np.zeros((k.MAX_PLAYS, k.BOARD_SIZE), dtype=np.int32)
    _build(
        counts, order, _BINOM, ROLLS, ROLL_WEIGHTS, off, first, mean_off, mean_first,
        k.new_workspace(), boards,
    )  # fmt: skip
    if off[:, -1].max() > 0.0:
        raise AssertionError(f"a bear-off needs more than {MAX_ROLLS - 1} rolls")
    tables = BearoffDatabase(off, _tail(off), _tail(first), mean_off)
    for a in tables:
        a.flags.writeable = False
    return tables


@numba.njit(cache=True, nogil=True)
def _race_outputs(board, first, binom, off, off_tail, first_tail, y):
    """The five outputs for seat ``first``, about to roll in the bear-off ``board``: it wins
    when it needs no more rolls than the other seat; a gammon when the loser has not borne off
    a checker by then."""
    a = side_index(board, k.SIDE * first, binom)
    b = side_index(board, k.SIDE * (1 - first), binom)
    a_all_on = board[k.SIDE * first + k.OFF] == 0
    b_all_on = board[k.SIDE * (1 - first) + k.OFF] == 0
    win = 0.0
    win_gammon = 0.0
    lose_gammon = 0.0
    for n in range(1, off.shape[1]):
        win += off[a, n] * off_tail[b, n]  # a's n-th roll comes before b's
        if b_all_on:
            win_gammon += off[a, n] * first_tail[b, n]
        if a_all_on and n + 1 < off.shape[1]:
            lose_gammon += off[b, n] * first_tail[a, n + 1]
    y[0] = win
    y[1] = win_gammon
    y[2] = 0.0
    y[3] = lose_gammon
    y[4] = 0.0


@numba.njit(cache=True, nogil=True)
def _afterstate_outputs(boards, mover, binom, off, off_tail, first_tail, done, out):
    """``out[p]``: the mover's outputs of bear-off afterstate ``boards[p]`` (the opponent to
    roll first, its outputs seen from the mover), or of the won game when the mover has borne
    off every checker; ``done[p]`` False (``out[p]`` untouched) for a board that is neither."""
    y = np.zeros(5)
    for p in range(boards.shape[0]):
        row = boards[p]
        done[p] = True
        if row[k.SIDE * mover + k.OFF] == k.CHECKERS:
            result_outputs(row, mover, out[p])
        elif is_bearoff(row):
            _race_outputs(row, 1 - mover, binom, off, off_tail, first_tail, y)
            out[p, 0] = 1.0 - y[0]
            out[p, 1] = y[3]
            out[p, 2] = y[4]
            out[p, 3] = y[1]
            out[p, 4] = y[2]
        else:
            done[p] = False


def _checked_boards(boards: np.ndarray) -> np.ndarray:
    rows = np.ascontiguousarray(boards, dtype=np.int32)
    if rows.ndim != 2 or rows.shape[1] < k.BOARD_SIZE:
        raise ValueError(f"boards must be rows of {k.BOARD_SIZE} cells, got shape {rows.shape}")
    return rows


def _checked_seat(seat: object, what: str) -> int:
    if isinstance(seat, bool) or seat not in (0, 1):
        raise ValueError(f"{what} must be 0 or 1, got {seat!r}")
    return int(seat)


def afterstate_outputs(boards: np.ndarray, mover: int) -> tuple[np.ndarray, np.ndarray]:
    """``(outputs, exact)`` for afterstate ``boards`` (rows of 52 cells or more) after
    ``mover``'s play, the opponent to roll: ``outputs[p]`` the five outputs in
    :mod:`.td_value`'s order (the mover's chances to win, win a gammon, win a backgammon, lose a
    gammon, lose a backgammon) wherever ``exact[p]``: the board is a bear-off (:func:`is_bearoff`)
    or the mover has won (its exact result); zeros elsewhere."""
    rows = _checked_boards(boards)
    mover = _checked_seat(mover, "mover")
    db = database()
    out = np.zeros((len(rows), 5))
    exact = np.zeros(len(rows), dtype=np.bool_)
    _afterstate_outputs(rows, mover, _BINOM, db.off, db.off_tail, db.first_tail, exact, out)
    return out, exact


def to_roll_outputs(board: np.ndarray, seat: int) -> np.ndarray:
    """The five outputs for ``seat``, about to roll in the bear-off ``board`` (52 cells); raises
    ValueError unless :func:`is_bearoff`."""
    row = _checked_boards(np.asarray(board).reshape(1, -1))[0]
    seat = _checked_seat(seat, "seat")
    if not is_bearoff(row):
        raise ValueError("not a bear-off: both sides need every checker on their points 1..6")
    db = database()
    y = np.zeros(5)
    _race_outputs(row, seat, _BINOM, db.off, db.off_tail, db.first_tail, y)
    return y
