"""Hand-designed input features of the TD backgammon evaluator with features
(:mod:`spieltisch.agents.backgammon.td_value`, encoding ``tesauro198+features-v1``), and the
race test that picks its contact or race network. Numba kernels over a board of 52 cells (or a
whole state vector), cheap enough for every candidate play.

Board geometry: side ``a``'s point ``i`` (0..23, pip ``i + 1``, moving towards 0) is at
``board[SIDE * a + i]``; the same point seen by the other side ``b`` is its point ``23 - i``.
``b`` moves the other way in ``a``'s view (from low to high ``i``); its bar checkers enter at
``a``'s point ``-1``. A point is *made* (blocked) with 2 or more checkers.

Features (``NUM_FEATURES = 17``) after the 198 raw inputs; ``x[198 + 8 s + f]`` for the mover
(``s = 0``) and its opponent (``s = 1``), the side to roll next:

=====  =========================================================================================
``f``  feature of side ``s`` (the *other* side is the opponent of ``s``)
=====  =========================================================================================
0      blots (points with exactly one checker of ``s``) / 5
1      shots: rolls (of 36) with which the other side hits at least one blot of ``s`` / 36.
       Direct (one die) and indirect shots (both dice, doubles up to 4 steps) from every point
       of the other side behind the blot (its bar included), an intermediate landing point
       blocked by a made point of ``s`` stops that path. Approximations: the other side's
       checkers on the bar are not forced to enter first, and a hit needing its bar checker to
       enter and move on counts as if it were free. For the mover (``s = 0``) these are the
       opponent's immediate shots; for the opponent, the mover's shots next turn on the
       current board.
2      longest prime (consecutive made points of ``s``, anywhere) / 6
3      home-board points made (``s``'s points 1-6) / 6
4      anchors: points made by ``s`` in the other side's home board / 3
5      checkers back: checkers of ``s`` in the other side's home board or on the bar / 5
6      checkers of ``s`` outside its home board (bar included) / 15
7      escapes: rolls (of 36) with which ``s``'s rearmost checker can move past the other side's
       furthest made point within the 12 points in front of it (landing on an open point,
       intermediate points open; 1 if no such point, or no checker left behind) / 36
=====  =========================================================================================

``x[214]``: (opponent's pip count - mover's pip count) / 50 (bar = 25 pips; the raw inputs
already hold both pip counts / 100). Checkers borne off are raw inputs 97 and 195.

A position is a **race** (:func:`is_race`) when no more contact is possible: every checker of
each side has passed every checker of the other (``a``'s rearmost pip + ``b``'s rearmost pip
<= 25, the bar counting as pip 25, a side with no checker left on the board as 0).
"""

from __future__ import annotations

import numba
from spieltisch.envs.backgammon import rules as k

NUM_FEATURES = 17
FEATURES_PER_SIDE = 8


@numba.njit(cache=True, nogil=True)
def rearmost_pip(board, seat):
    """Pip of ``seat``'s rearmost checker (25 on the bar, 0 when none is left on the board)."""
    base = k.SIDE * seat
    if board[base + k.BAR] > 0:
        return 25
    for i in range(23, -1, -1):
        if board[base + i] > 0:
            return i + 1
    return 0


@numba.njit(cache=True, nogil=True)
def is_race(board):
    """True when no more contact is possible (see the module docstring)."""
    return rearmost_pip(board, 0) + rearmost_pip(board, 1) <= 25


@numba.njit(cache=True, nogil=True)
def _count_rolls(mask):
    """Rolls (of 36) in a mask over the 21 distinct rolls (doubles count 1, others 2)."""
    total = 0
    r = 0
    for d1 in range(1, 7):
        for d2 in range(d1, 7):
            if (mask >> r) & 1:
                total += 1 if d1 == d2 else 2
            r += 1
    return total


@numba.njit(cache=True, nogil=True)
def shots(board, a):
    """Rolls (of 36) with which the other side hits at least one blot of side ``a``."""
    base_a = k.SIDE * a
    base_b = k.SIDE * (1 - a)
    mask = 0
    full = (1 << 21) - 1
    for i in range(24):
        if board[base_a + i] != 1:
            continue
        for j in range(-1, i):
            cnt = board[base_b + k.BAR] if j < 0 else board[base_b + 23 - j]
            if cnt == 0:
                continue
            dist = i - j
            r = 0
            for d1 in range(1, 7):
                for d2 in range(d1, 7):
                    if not (mask >> r) & 1:
                        ok = False
                        if d1 == d2:
                            pos = j
                            for _m in range(4):
                                pos += d1
                                if pos == i:
                                    ok = True
                                    break
                                if pos > i or board[base_a + pos] >= 2:
                                    break
                        elif d1 == dist or d2 == dist:
                            ok = True
                        elif d1 + d2 == dist:
                            ok = board[base_a + j + d1] < 2 or board[base_a + j + d2] < 2
                        if ok:
                            mask |= 1 << r
                    r += 1
            if mask == full:
                return 36
    return _count_rolls(mask)


@numba.njit(cache=True, nogil=True)
def _open_for(board, base_b, q):
    """Can side ``a`` land on its point ``q`` (``q < 0``: past the end of the board)?"""
    return q < 0 or board[base_b + 23 - q] < 2


@numba.njit(cache=True, nogil=True)
def escapes(board, a):
    """Rolls (of 36) with which side ``a``'s rearmost checker passes the other side's furthest
    made point within 12 points in front of it (36 when there is none)."""
    base_b = k.SIDE * (1 - a)
    pip = rearmost_pip(board, a)
    if pip == 0:
        return 36
    p = pip - 1  # a's point (24: the bar)
    far = 0
    for d in range(1, 13):
        q = p - d
        if q < 0:
            break
        if board[base_b + 23 - q] >= 2:
            far = d
    if far == 0:
        return 36
    mask = 0
    r = 0
    for d1 in range(1, 7):
        for d2 in range(d1, 7):
            ok = False
            if d1 == d2:
                dist = 0
                for _m in range(4):
                    dist += d1
                    if not _open_for(board, base_b, p - dist):
                        break
                    if dist > far:
                        ok = True
                        break
            else:
                o1 = _open_for(board, base_b, p - d1)
                o2 = _open_for(board, base_b, p - d2)
                direct = (d1 > far and o1) or (d2 > far and o2)
                both = d1 + d2 > far and (o1 or o2) and _open_for(board, base_b, p - d1 - d2)
                ok = direct or both
            if ok:
                mask |= 1 << r
            r += 1
    return _count_rolls(mask)


@numba.njit(cache=True, nogil=True)
def side_features(board, a, out, at):
    """The 8 features of side ``a`` into ``out[at:at + 8]``; returns ``a``'s pip count."""
    base_a = k.SIDE * a
    blots = 0
    prime = 0
    run = 0
    home = 0
    anchors = 0
    back = board[base_a + k.BAR]
    outside = board[base_a + k.BAR]
    pips = 25 * board[base_a + k.BAR]
    for i in range(24):
        n = board[base_a + i]
        pips += n * (i + 1)
        if n == 1:
            blots += 1
        if n >= 2:
            run += 1
            if run > prime:
                prime = run
            if i < 6:
                home += 1
            elif i >= 18:
                anchors += 1
        else:
            run = 0
        if i >= 18:
            back += n
        if i >= 6:
            outside += n
    out[at] = blots / 5.0
    out[at + 1] = shots(board, a) / 36.0 if blots > 0 else 0.0
    out[at + 2] = prime / 6.0
    out[at + 3] = home / 6.0
    out[at + 4] = anchors / 3.0
    out[at + 5] = back / 5.0
    out[at + 6] = outside / 15.0
    out[at + 7] = escapes(board, a) / 36.0
    return pips


@numba.njit(cache=True, nogil=True)
def features(board, mover, out, at):
    """All ``NUM_FEATURES`` features of ``board`` seen by ``mover`` into ``out[at:]``."""
    pm = side_features(board, mover, out, at)
    po = side_features(board, 1 - mover, out, at + FEATURES_PER_SIDE)
    out[at + 2 * FEATURES_PER_SIDE] = (po - pm) / 50.0
