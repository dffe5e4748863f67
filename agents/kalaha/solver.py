"""Perfect play for Kalaha: the exact game-theoretic value of a position and its optimal moves.

**Value convention.** The value of a position is the final store difference under perfect play by
both sides, from the point of view of the player to move::

    value = (mover's store at the end) - (opponent's store at the end)

so the initial position of Kalah(6,4) under ``goki`` rules has value +10 (the first player wins
by 10). A move's value is the same quantity for the player who makes it (the player to move
before the move): the optimal moves are those whose value equals the position's value.

**Technique** (as in Irving, Donkers & Uiterwijk, *Solving Kalah*, 2000):

* Internally positions are the playing pits alone, from the mover's view; the stores only add a
  constant, so a search node's value is the *remaining* gain (``value`` minus the current store
  difference) and a position with ``n`` stones in the pits has a value in ``[-n, n]``, which is
  used as a bound at every node.
* MTD(f): a sequence of null-window alpha-beta searches converging on the exact value;
  optionally after iterative deepening (depth-limited searches, heuristic 0 at the horizon; a
  flag carried up the search tells whether a result used the horizon, results that did not are
  true bounds, so a depth-limited iteration that proves the value ends the search early).
* Enhanced transposition cut-offs, and the table's best move tried before the other children are
  even generated.
* A transposition table (two-slot buckets, deepest-work entry kept, exact keys: the rank of the
  arrangement of stones, see :mod:`.kalaha_endgame`; two independent 64-bit hashes only on
  boards too large for that), on transparent huge pages, with a small separate region for the
  many positions just above the database, which stays in the CPU cache.
* Move ordering: the table's best move, then moves that end in the own store (the mover moves
  again, rightmost first), then by immediate gain; children whose value is known without search
  (game over, endgame database) are evaluated first.
* Endgame databases of all positions with few stones left (:mod:`.kalaha_endgame`).
* Extra turns: when the last stone lands in the mover's store the same player moves again, so
  the child's value is *added* (no negation); when the turn passes it is subtracted.

Every move is played by the engine's numba kernel :func:`~spieltisch.envs.kalaha.rules.sow`;
the rules are not restated here. The search is iterative with explicit stacks (numba cannot cache
recursive functions).

**Progress and interruption.** One numba call (:func:`_solve`) runs the whole schedule of a
solve; big solves run it in a worker thread (the kernels release the GIL) while the calling
thread reports progress from the counters the kernels write into ``KalahaSolver.stats`` and
enforces a time limit. A stop flag, looked at every 4096 nodes, ends the search at once without
storing anything more (every table entry is a complete search's result), and the solve raises
:class:`SolveInterrupted` (time or node limit) or :class:`SolveKeyboardInterrupt` (Ctrl-C) with
the bounds proven so far; the solver stays usable.
"""

from __future__ import annotations

import math
import numbers
import os
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field

import numba
import numpy as np
from spieltisch.agents.kalaha.endgame import (
    MAX_DB_STONES,
    EndgameDatabase,
    binomial_table,
    child_position,
    database_entries,
    huge_page_array,
    level_offsets,
    prefetch,
    rank_board,
)
from spieltisch.envs._common.jit import wait_for
from spieltisch.envs.kalaha.engine import KalahaGame, KalahaState
from spieltisch.envs.kalaha.rules import BOARD_DTYPE

#: default size budget of the endgame database (entries = bytes): 6 pits -> 20 stones (215 MiB,
#: built once in about a minute on two cores and cached)
DEFAULT_DB_ENTRIES = 1 << 28
#: default transposition table size: 2**22 entries of 32 bytes (128 MiB)
DEFAULT_TT_BITS = 22
#: nodes with at most database + this many stones (three quarters of all nodes, each with a small
#: subtree) use a small table region of 2**DEFAULT_NEAR_BITS entries (32 MiB) that mostly stays
#: in the cache; 0 switches it off. Kalah(6,4) goki, database 20: 17% less CPU time for 5% more
#: nodes than one table for all
DEFAULT_NEAR_MARGIN = 4
DEFAULT_NEAR_BITS = 20
#: iterative deepening (``id_max_depth=None``): to this depth, for positions with more than
#: ``db_stones + AUTO_ID_MARGIN`` stones in the pits. Far from the database the first MTD(f)
#: pass to the end, with an empty table and only the static move order, is the expensive one:
#: Kalah(6,5) goki, database 26: without iterative deepening the first pass (value >= 0) took
#: 192 M nodes; depths 2..24 then the proof of value >= +12 took 25 M. Close to it the
#: depth-limited passes cost more than they save: Kalah(6,4) goki, database 26: 1.00 M nodes
#: without, 1.23 M to depth 12, 2.64 M to depth 24
AUTO_ID_DEPTH = 24
AUTO_ID_MARGIN = 30
#: the search's stack, in moves: a line of play longer than this raises :class:`SolveTooDeep`.
#: Reached only with very many stones: Kalah(30,1000) within its first nodes, while in their
#: first 200,000 nodes Kalah(30,100) went 477 moves deep and Kalah(6,200) 237
MAX_PLY = 1024
#: what the kernels raise when a line is longer than MAX_PLY (turned into SolveTooDeep)
_TOO_DEEP = "Kalaha search: position too deep for the stack"
UNLIMITED = 1 << 40  # search depth meaning "to the end of the game"
_TRUE = 255  # depth code of table entries holding true (not horizon-dependent) bounds
_OFF = 1 << 30  # bounds are stored offset by this, 31 bits each
_LOW31 = (1 << 31) - 1

# Frame fields of the explicit search stack.
_ALPHA, _BETA, _A0, _B0, _DEPTH, _LO, _HI, _BEST = 0, 1, 2, 3, 4, 5, 6, 7
_BMOVE, _H, _K1, _K2, _NODES, _CNT, _IDX, _TTMOVE = 8, 9, 10, 11, 12, 13, 14, 15
_PHASE, _N = 16, 17
_NFIELDS = 18
# Fields of a queued child in ``order``: pit | kind << 8, gain, ordering score, key 1 (rank + 1,
# or for a database child its rank), key 2, stones left in its pits.
_OFIELDS = 6
# Progress slots of ``stats``, written by :func:`_solve` at every MTD(f) pass and read by the
# thread that reports progress (see ``KalahaSolver.__init__``).
_S_BETA, _S_LO, _S_HI, _S_DEPTH = 11, 12, 13, 14
_S_PASSES, _S_MOVE, _S_AT, _S_AT_DEPTH = 15, 16, 17, 18
_HIST = 24  # stats[_HIST + n]: nodes entered with n stones in the pits (n capped)
_HIST_MAX = 127
_ETC_MARGIN = 4  # enhanced transposition cut-offs only this many stones above the database
# ``stop[0]``: why the search stops (0: it does not), ``stop[1]``: node count (stats[0]) at which
# it stops by itself. Both are looked at once every _STOP_CHECK + 1 nodes.
_STOP_NONE, _STOP_REQUESTED, _STOP_NODES = 0, 1, 2
_STOP_CHECK = 4095
_NO_NODE_LIMIT = 1 << 62
# positions with at most db_stones + this many stones are solved in the calling thread when
# neither progress reports nor a time limit are asked for (a worker thread costs about 0.3 ms,
# more than most such solves); bigger ones always run in a worker, so that Ctrl-C stops them
_INLINE_MARGIN = 12

ProgressFn = Callable[[str], None]


# ------------------------------------------------------------------------------------------------
# numba kernels
# ------------------------------------------------------------------------------------------------


@numba.njit(cache=True, nogil=True)
def _hash_keys(b: np.ndarray) -> tuple:
    """Two independent 64-bit hashes of a board (used only when ranks would overflow)."""
    h1 = 0x243F6A8885A308D3
    h2 = 0x13198A2E03707344
    for k in range(b.shape[0]):
        x = np.int64(b[k]) + 1
        h1 = (h1 ^ x) * 0x100000001B3
        h1 ^= h1 >> 29
        h2 = (h2 + x) * 0x5851F42D4C957F2D
        h2 ^= h2 >> 31
    if h1 == 0:
        h1 = 1
    return h1, h2


@numba.njit(cache=True, nogil=True)
def _tt_bucket(k1: int, k2: int, mask: int) -> int:
    x = k1 * 0x61C8864680B583EB + k2 * 0x2545F4914F6CDD1D
    x ^= x >> 32
    return (x & mask) & ~1


@numba.njit(cache=True, nogil=True)
def _tt_base(k1: int, k2: int, n: int, tt: np.ndarray, near_stones: int, near_rows: int) -> int:
    """First row of the bucket of a position with ``n`` stones in the pits: positions with at
    most ``near_stones`` stones (just above the database, most of the nodes, each with a small
    subtree) share the small region of ``near_rows`` rows at the end of the table, which stays
    in the cache; the others use the large region before it."""
    if n <= near_stones:
        return tt.shape[0] - near_rows + _tt_bucket(k1, k2, near_rows - 1)
    return _tt_bucket(k1, k2, tt.shape[0] - near_rows - 1)


@numba.njit(cache=True, nogil=True)
def _tt_store(
    tt: np.ndarray,
    base: int,
    k1: int,
    k2: int,
    lo: int,
    hi: int,
    dcode: int,
    move: int,
    work: int,
) -> None:
    slot = -1
    if tt[base, 0] == k1 and tt[base, 1] == k2:
        slot = base
    elif tt[base + 1, 0] == k1 and tt[base + 1, 1] == k2:
        slot = base + 1
    if slot >= 0:
        meta = tt[slot, 3]
        old_d = meta & 255
        if old_d == dcode:  # same kind of result: both bounds hold, intersect them
            packed = tt[slot, 2]
            olo = (packed & _LOW31) - _OFF
            ohi = (packed >> 31) - _OFF
            nlo = max(lo, olo)
            nhi = min(hi, ohi)
            if nlo <= nhi:
                lo = nlo
                hi = nhi
        elif old_d > dcode:  # keep the deeper (or true) bounds, take the newer best move
            if move >= 0:
                tt[slot, 3] = (meta & ~(255 << 8)) | ((move + 1) << 8)
            return
        old_work = (meta >> 16) & 255
        if old_work > work:
            work = old_work
    else:
        if tt[base, 0] == 0 or work >= (tt[base, 3] >> 16) & 255:
            tt[base + 1, 0] = tt[base, 0]
            tt[base + 1, 1] = tt[base, 1]
            tt[base + 1, 2] = tt[base, 2]
            tt[base + 1, 3] = tt[base, 3]
            slot = base
        else:
            slot = base + 1
    tt[slot, 0] = k1
    tt[slot, 1] = k2
    tt[slot, 2] = (lo + _OFF) | ((hi + _OFF) << 31)
    tt[slot, 3] = dcode | ((move + 1) << 8) | (work << 16)


@numba.njit(cache=True, nogil=True)
def _bit_length(x: int) -> int:
    n = 0
    while x > 0:
        x >>= 1
        n += 1
    return n


@numba.njit(cache=True, nogil=True)
def _expand(
    ply: int,
    b: np.ndarray,
    n: int,
    skip: int,
    best: int,
    bmove: int,
    alpha: int,
    beta: int,
    h: int,
    depth: int,
    pits: int,
    empty_capture: bool,
    binom: np.ndarray,
    offsets: np.ndarray,
    db: np.ndarray,
    db_stones: int,
    exact_keys: bool,
    tt: np.ndarray,
    near_stones: int,
    near_rows: int,
    kids: np.ndarray,
    fr: np.ndarray,
    order: np.ndarray,
    stats: np.ndarray,
) -> None:
    """Children of the node at ``ply`` (all legal pits but ``skip``): those whose value is known
    (game over, database) are evaluated at once, the others queued in ``order[ply]`` by score
    (extra turns first, rightmost first; then by immediate gain). Children whose value bounds
    (``gain`` +- the stones left) already decide the window are not searched either. Then
    enhanced transposition cut-offs. Writes the frame's best, best move, h, alpha and the queue
    (count, index).

    Two passes: the first generates every child and prefetches its database entry or table
    bucket, so that these cache misses overlap instead of coming one after the other.
    """
    stats[7] += 1
    cnt = 0
    known = pits  # children with a known value fill order[ply] from the end
    cutoff = False
    for i in range(pits):
        if b[i] == 0 or i == skip:
            continue
        c = kids[ply, i]
        stats[8] += 1
        gain, kind, entered = child_position(b, c, pits, i, empty_capture)
        nc = n - entered  # stones left in the child's pits
        if kind == 0 or nc <= db_stones:
            known -= 1
            order[ply, known, 0] = i | (kind << 8)
            order[ply, known, 1] = gain
            if kind != 0:
                r = rank_board(c, pits, binom, offsets)
                order[ply, known, 3] = r
                prefetch(db, r)
            continue
        # Bounds: the child's remaining value lies in [-nc, nc], so the move is worth between
        # gain - nc and gain + nc. A move whose interval misses the window is settled by that
        # bound (what its search would return at once), without a key, a probe or a node.
        if gain - nc >= beta:  # the move wins the window whatever follows
            best = gain - nc
            bmove = i
            cutoff = True
            stats[6] += 1
            break
        if gain + nc <= alpha:  # it cannot raise alpha
            if gain + nc > best:
                best = gain + nc
                bmove = i
            stats[6] += 1
            continue
        if exact_keys:
            c1 = rank_board(c, pits, binom, offsets) + 1
            c2 = 0
        else:
            c1, c2 = _hash_keys(c)
        prefetch(tt, 4 * _tt_base(c1, c2, nc, tt, near_stones, near_rows))
        # extra turns first (rightmost first), then by immediate gain
        score = (1 << 20) + i if kind == 1 else gain * 64 + i
        # insertion by score, best first
        j = cnt
        while j > 0 and order[ply, j - 1, 2] < score:
            for f in range(_OFIELDS):
                order[ply, j, f] = order[ply, j - 1, f]
            j -= 1
        order[ply, j, 0] = i | (kind << 8)
        order[ply, j, 1] = gain
        order[ply, j, 2] = score
        order[ply, j, 3] = c1
        order[ply, j, 4] = c2
        order[ply, j, 5] = nc
        cnt += 1
    if not cutoff:
        for j in range(known, pits):
            kind = order[ply, j, 0] >> 8
            gain = order[ply, j, 1]
            if kind == 0:
                v = gain
            else:
                stats[1] += 1
                w = np.int64(db[order[ply, j, 3]])
                v = gain + w if kind == 1 else gain - w
            if v > best:
                best = v
                bmove = order[ply, j, 0] & 255
                if v > alpha:
                    alpha = v
                    if alpha >= beta:
                        cutoff = True
                        break
    if not cutoff and cnt > 0 and known < pits:
        # alpha may have risen: drop the moves whose bound cannot reach it now
        kept = 0
        for j in range(cnt):
            gain = order[ply, j, 1]
            nc = order[ply, j, 5]
            if gain + nc <= alpha:
                if gain + nc > best:
                    best = gain + nc
                    bmove = order[ply, j, 0] & 255
                stats[6] += 1
                continue
            if kept != j:
                for f in range(_OFIELDS):
                    order[ply, kept, f] = order[ply, j, f]
            kept += 1
        cnt = kept
    if not cutoff and cnt > 1 and n > db_stones + _ETC_MARGIN:
        # Enhanced transposition cut-off: a child's table bound may already
        # refute this node without searching anything.
        for j in range(cnt):
            i = order[ply, j, 0] & 255
            kind = order[ply, j, 0] >> 8
            gain = order[ply, j, 1]
            c1 = order[ply, j, 3]
            c2 = order[ply, j, 4]
            stats[9] += 1
            cb = _tt_base(c1, c2, order[ply, j, 5], tt, near_stones, near_rows)
            cs = -1
            if tt[cb, 0] == c1 and tt[cb, 1] == c2:
                cs = cb
            elif tt[cb + 1, 0] == c1 and tt[cb + 1, 1] == c2:
                cs = cb + 1
            if cs < 0:
                continue
            cd = tt[cs, 3] & 255
            if not (cd == _TRUE or (depth < _TRUE and cd >= depth - 1)):
                continue
            packed = tt[cs, 2]
            lower = (packed & _LOW31) - _OFF
            upper = (packed >> 31) - _OFF
            bound = gain + lower if kind == 1 else gain - upper  # the move's lower bound
            if bound >= beta:
                best = bound
                bmove = i
                if cd != _TRUE:
                    h = 1
                cutoff = True
                stats[2] += 1
                break
    fr[ply, _BEST] = best
    fr[ply, _BMOVE] = bmove
    fr[ply, _H] = h
    fr[ply, _ALPHA] = alpha
    fr[ply, _CNT] = 0 if cutoff else cnt
    fr[ply, _IDX] = 0


@numba.njit(cache=True, nogil=True)
def _search(
    root: np.ndarray,
    alpha: int,
    beta: int,
    depth: int,
    pits: int,
    empty_capture: bool,
    binom: np.ndarray,
    offsets: np.ndarray,
    db: np.ndarray,
    db_stones: int,
    exact_keys: bool,
    tt: np.ndarray,
    near_stones: int,
    near_rows: int,
    boards: np.ndarray,
    kids: np.ndarray,
    fr: np.ndarray,
    order: np.ndarray,
    stats: np.ndarray,
    stop: np.ndarray,
) -> int:
    """Fail-soft alpha-beta (negamax on remaining gain) of ``root`` within ``(alpha, beta)``.

    Returns ``2 * value + h``: ``h`` is 1 when the value depends on the depth horizon (or on
    table entries that did), 0 when it is a true bound (fail-soft semantics). ``depth`` >= 255
    means no horizon. Iterative, with the stack in ``boards`` (node positions), ``kids`` (their
    children), ``fr`` (frame fields) and ``order`` (children to search: pit | kind << 8, gain).

    Every 4096 nodes it looks at ``stop``: when ``stop[0]`` is set, or the node count
    ``stats[0]`` has reached ``stop[1]`` (then it sets ``stop[0]`` itself), it returns at once,
    meaningless, and stores nothing more: the unfinished nodes on the stack are dropped, every
    table entry is a complete search's result, so the table stays valid for later searches.
    Callers must look at ``stop[0]`` after every call.
    """
    size = 2 * pits + 2
    ply = 0
    for k in range(size):
        boards[0, k] = root[k]
    fr[0, _ALPHA] = alpha
    fr[0, _BETA] = beta
    fr[0, _DEPTH] = depth
    # every node gets its stone count and table keys from its parent (which computed them
    # already); the root's are computed here
    n = 0
    for k in range(pits):
        n += root[k] + root[pits + 1 + k]
    fr[0, _N] = n
    if n > db_stones:
        if exact_keys:
            fr[0, _K1] = rank_board(root, pits, binom, offsets) + 1
            fr[0, _K2] = 0
        else:
            fr[0, _K1], fr[0, _K2] = _hash_keys(root)
    enter = True
    ret = 0
    while True:
        b = boards[ply]
        finished = False
        if enter:
            stats[0] += 1
            if stats[0] & _STOP_CHECK == 0:
                if stop[0] != _STOP_NONE:
                    return 0
                if stats[0] >= stop[1]:
                    stop[0] = _STOP_NODES
                    return 0
            if ply > stats[3]:
                stats[3] = ply
            n = fr[ply, _N]
            stats[_HIST + min(n, _HIST_MAX)] += 1
            if n <= db_stones:
                stats[1] += 1
                ret = 2 * np.int64(db[rank_board(b, pits, binom, offsets)])
                finished = True  # nothing to store: the database answers this position
            else:
                alpha = fr[ply, _ALPHA]
                beta = fr[ply, _BETA]
                depth = fr[ply, _DEPTH]
                k1 = fr[ply, _K1]
                k2 = fr[ply, _K2]
                lo = -n
                hi = n
                h = 0
                ttmove = -1
                base = _tt_base(k1, k2, n, tt, near_stones, near_rows)
                slot = -1
                if tt[base, 0] == k1 and tt[base, 1] == k2:
                    slot = base
                elif tt[base + 1, 0] == k1 and tt[base + 1, 1] == k2:
                    slot = base + 1
                if slot >= 0:
                    meta = tt[slot, 3]
                    ttmove = ((meta >> 8) & 255) - 1
                    dcode = meta & 255
                    if dcode == _TRUE or (depth < _TRUE and dcode >= depth):
                        packed = tt[slot, 2]
                        elo = (packed & _LOW31) - _OFF
                        ehi = (packed >> 31) - _OFF
                        if elo > lo:
                            lo = elo
                            if dcode != _TRUE:
                                h = 1
                        if ehi < hi:
                            hi = ehi
                            if dcode != _TRUE:
                                h = 1
                        if lo > hi:  # inconsistent horizon results: trust the newer lower one
                            hi = lo
                if lo >= beta or hi <= alpha or lo == hi:
                    stats[2] += 1
                    v = lo if lo >= beta else hi
                    if lo == hi:
                        v = lo
                    ret = 2 * v + h
                    finished = True
                elif depth <= 0:  # horizon: estimate the remaining gain as 0
                    v = 0
                    if v < lo:
                        v = lo
                    if v > hi:
                        v = hi
                    ret = 2 * v + 1
                    finished = True
                else:
                    fr[ply, _A0] = alpha
                    fr[ply, _B0] = beta
                    if lo > alpha:
                        alpha = lo
                    if hi < beta:
                        beta = hi
                    fr[ply, _ALPHA] = alpha
                    fr[ply, _BETA] = beta
                    fr[ply, _LO] = lo
                    fr[ply, _HI] = hi
                    fr[ply, _NODES] = stats[0]
                    fr[ply, _TTMOVE] = ttmove
                    if ply + 1 >= boards.shape[0]:
                        raise RuntimeError(_TOO_DEEP)
                    # The table's move first, alone: most nodes are cut by it, so the other
                    # children need not even be generated.
                    best = -(1 << 40)
                    bmove = -1
                    fr[ply, _PHASE] = 0
                    queued = False
                    if ttmove >= 0 and b[ttmove] > 0:
                        c = kids[ply, ttmove]
                        stats[10] += 1
                        gain, kind, entered = child_position(b, c, pits, ttmove, empty_capture)
                        if kind != 0 and n - entered > db_stones:
                            order[ply, 0, 0] = ttmove | (kind << 8)
                            order[ply, 0, 1] = gain
                            if exact_keys:
                                order[ply, 0, 3] = rank_board(c, pits, binom, offsets) + 1
                                order[ply, 0, 4] = 0
                            else:
                                order[ply, 0, 3], order[ply, 0, 4] = _hash_keys(c)
                            order[ply, 0, 5] = n - entered
                            fr[ply, _BEST] = best
                            fr[ply, _BMOVE] = bmove
                            fr[ply, _H] = h
                            fr[ply, _ALPHA] = alpha
                            fr[ply, _CNT] = 1
                            fr[ply, _IDX] = 0
                            fr[ply, _PHASE] = 1
                            queued = True
                        else:
                            if kind == 0:
                                v = gain
                            else:
                                stats[1] += 1
                                w = np.int64(db[rank_board(c, pits, binom, offsets)])
                                v = gain + w if kind == 1 else gain - w
                            best = v
                            bmove = ttmove
                            if v > alpha:
                                alpha = v
                    if not queued:
                        if alpha >= beta:
                            fr[ply, _BEST] = best
                            fr[ply, _BMOVE] = bmove
                            fr[ply, _H] = h
                            fr[ply, _CNT] = 0
                            fr[ply, _IDX] = 0
                        else:
                            _expand(
                                ply, b, n, ttmove, best, bmove, alpha, beta, h, depth, pits,
                                empty_capture, binom, offsets, db, db_stones, exact_keys, tt,
                                near_stones, near_rows, kids, fr, order, stats,
                            )  # fmt: skip
        else:
            # a child came back: ``ret`` for the queued child number fr[ply, _IDX]
            j = fr[ply, _IDX]
            i = order[ply, j, 0] & 255
            kind = order[ply, j, 0] >> 8
            gain = order[ply, j, 1]
            w = ret >> 1
            v = gain + w if kind == 1 else gain - w
            fr[ply, _H] |= ret & 1
            if v > fr[ply, _BEST]:
                fr[ply, _BEST] = v
                fr[ply, _BMOVE] = i
                if v > fr[ply, _ALPHA]:
                    fr[ply, _ALPHA] = v
                    if v >= fr[ply, _BETA]:
                        fr[ply, _CNT] = 0  # cut-off: search no more children
                        stats[4 if j == 0 else 5] += 1
            fr[ply, _IDX] = j + 1
            if fr[ply, _PHASE] == 1 and fr[ply, _CNT] > 0:
                # the table's move did not cut: now the other children
                fr[ply, _PHASE] = 0
                _expand(
                    ply, b, fr[ply, _N], fr[ply, _TTMOVE], fr[ply, _BEST], fr[ply, _BMOVE],
                    fr[ply, _ALPHA], fr[ply, _BETA], fr[ply, _H], fr[ply, _DEPTH], pits,
                    empty_capture, binom, offsets, db, db_stones, exact_keys, tt, near_stones,
                    near_rows, kids, fr, order, stats,
                )  # fmt: skip

        if not finished:
            j = fr[ply, _IDX]
            if j < fr[ply, _CNT]:
                i = order[ply, j, 0] & 255
                kind = order[ply, j, 0] >> 8
                gain = order[ply, j, 1]
                alpha = fr[ply, _ALPHA]
                beta = fr[ply, _BETA]
                c = kids[ply, i]
                for k in range(size):
                    boards[ply + 1, k] = c[k]
                if kind == 1:
                    fr[ply + 1, _ALPHA] = alpha - gain
                    fr[ply + 1, _BETA] = beta - gain
                else:
                    fr[ply + 1, _ALPHA] = gain - beta
                    fr[ply + 1, _BETA] = gain - alpha
                fr[ply + 1, _DEPTH] = fr[ply, _DEPTH] - 1
                fr[ply + 1, _K1] = order[ply, j, 3]
                fr[ply + 1, _K2] = order[ply, j, 4]
                fr[ply + 1, _N] = order[ply, j, 5]
                ply += 1
                enter = True
                continue
            # all children done (or cut off): store and return
            best = fr[ply, _BEST]
            lo = fr[ply, _LO]
            hi = fr[ply, _HI]
            if best < lo:
                best = lo
            if best > hi:
                best = hi
            h = fr[ply, _H]
            a0 = fr[ply, _A0]
            b0 = fr[ply, _B0]
            n = fr[ply, _N]
            blo = -n
            bhi = n
            if best <= a0:
                bhi = best
            elif best >= b0:
                blo = best
            else:
                blo = best
                bhi = best
            depth = fr[ply, _DEPTH]
            dcode = _TRUE if h == 0 else min(depth, _TRUE - 1)
            work = _bit_length(stats[0] - fr[ply, _NODES])
            base = _tt_base(fr[ply, _K1], fr[ply, _K2], n, tt, near_stones, near_rows)
            _tt_store(tt, base, fr[ply, _K1], fr[ply, _K2], blo, bhi, dcode, fr[ply, _BMOVE], work)
            ret = 2 * best + h
        if ply == 0:
            return ret
        ply -= 1
        enter = False


@numba.njit(cache=True, nogil=True)
def _mover_view(board: np.ndarray, player: int, out: np.ndarray) -> tuple:
    """Write ``board`` from ``player``'s view with stores zeroed into ``out``; return
    (player's store - opponent's store, stones in the pits)."""
    size = board.shape[0]
    half = size // 2
    shift = half if player == 1 else 0
    n = 0
    for k in range(size):
        out[k] = board[(k + shift) % size]
    diff = np.int64(out[half - 1]) - np.int64(out[size - 1])
    out[half - 1] = 0
    out[size - 1] = 0
    for k in range(size):
        n += out[k]
    return diff, n


@numba.njit(cache=True, nogil=True)
def _solve(
    root: np.ndarray,
    mode: int,
    guess: int,
    depth_first: int,
    depth_last: int,
    finish: bool,
    out: np.ndarray,
    pits: int,
    empty_capture: bool,
    binom: np.ndarray,
    offsets: np.ndarray,
    db: np.ndarray,
    db_stones: int,
    exact_keys: bool,
    tt: np.ndarray,
    near_stones: int,
    near_rows: int,
    boards: np.ndarray,
    kids: np.ndarray,
    fr: np.ndarray,
    order: np.ndarray,
    stats: np.ndarray,
    stop: np.ndarray,
) -> tuple:
    """Solve ``root`` (mover's view, stores zeroed) for its remaining value.

    Schedule: MTD(f) at depths ``depth_first``, ``depth_first + 2``, .. ``depth_last`` (iterative
    deepening; stops early once a depth proves the value), then, if ``finish``, MTD(f) to the end
    of the game. Returns (value or last guess, proven lower bound, proven upper bound, passes,
    stopped).

    Once the root value is proven, ``mode`` 1 writes ``out[i]`` = 1 for the optimal pits (one
    null-window test per move) and ``mode`` 2 the exact remaining value of every legal pit, from
    the root mover's view (children solved on the same schedule). The one driver of the search
    (every numba caller of ``_search`` compiles it again, so there is only this one).

    Progress: before every pass it writes ``stats[_S_BETA]`` (the pass tests value >= beta),
    ``_S_DEPTH`` (its depth, :data:`UNLIMITED` to the end), ``_S_PASSES`` (passes begun),
    ``_S_MOVE`` (-1: the root; else the pit whose move is tested or valued), and after every
    pass the root's proven bounds ``_S_LO``, ``_S_HI`` (with ``_S_AT``, ``_S_AT_DEPTH``: node
    count and depth of the pass that last changed them), so that another thread can report.

    Stopping (see :func:`_search`): after a pass ended by ``stop`` it returns at once with
    ``stopped`` True and the root's bounds proven so far (its value if the moves were being
    tested); it stores nothing itself, the table stays valid.
    """
    c = np.empty_like(root)
    w_root = 0
    lo_root = 0
    hi_root = 0
    passes = 0
    for k in range(pits):
        out[k] = 0
    n_root = 0
    for k in range(pits):
        n_root += root[k] + root[pits + 1 + k]
    stats[_S_LO] = -n_root
    stats[_S_HI] = n_root
    stats[_S_AT] = stats[0]
    stats[_S_AT_DEPTH] = UNLIMITED
    stats[_S_BETA] = 0
    stats[_S_DEPTH] = UNLIMITED
    stats[_S_PASSES] = 0
    stats[_S_MOVE] = -1
    for t in range(-1, pits):
        gain = 0
        kind = 1  # the root itself counts as "same mover, no gain"
        board = root
        if t >= 0:
            if mode == 0 or lo_root != hi_root:
                break
            if root[t] == 0:
                continue
            stats[_S_MOVE] = t
            gain, kind, _ = child_position(root, c, pits, t, empty_capture)
            board = c
            if kind == 0:  # the move ends the game
                out[t] = gain if mode == 2 else (1 if gain >= w_root else 0)
                continue
        n = 0
        for k in range(pits):
            n += board[k] + board[pits + 1 + k]
        if n <= db_stones:
            f = np.int64(db[rank_board(board, pits, binom, offsets)])
            lo = f
            hi = f
        elif t >= 0 and mode == 1:
            # optimal <=> gain + W(c) >= w_root (extra turn) or gain - W(c) >= w_root (passes)
            if kind == 1:
                a = w_root - gain - 1
                b = a + 1
            else:
                a = gain - w_root
                b = a + 1
            stats[_S_BETA] = b
            stats[_S_DEPTH] = UNLIMITED
            stats[_S_PASSES] = passes + 1
            r = _search(
                board, a, b, UNLIMITED, pits, empty_capture, binom, offsets, db, db_stones,
                exact_keys, tt, near_stones, near_rows, boards, kids, fr, order, stats, stop,
            )  # fmt: skip
            if stop[0] != _STOP_NONE:
                return w_root, lo_root, hi_root, passes, True
            passes += 1
            ok = (r >> 1) >= b if kind == 1 else (r >> 1) <= a
            out[t] = 1 if ok else 0
            continue
        else:
            f = guess  # first guess: from the root's value for a child
            if t >= 0:
                f = w_root - gain if kind == 1 else gain - w_root
            lo = -n
            hi = n
            depth = depth_first
            while True:
                if depth > depth_last:
                    if not finish:
                        break
                    depth = UNLIMITED
                # MTD(f) at this depth
                lower = -n
                upper = n
                proven_lo = -n
                proven_hi = n
                f = min(max(f, -n), n)
                while lower < upper and proven_lo < proven_hi:
                    beta = max(f, lower + 1)
                    stats[_S_BETA] = beta
                    stats[_S_DEPTH] = depth
                    stats[_S_PASSES] = passes + 1
                    r = _search(
                        board, beta - 1, beta, depth, pits, empty_capture, binom, offsets, db,
                        db_stones, exact_keys, tt, near_stones, near_rows, boards, kids, fr, order,
                        stats, stop,
                    )  # fmt: skip
                    if stop[0] != _STOP_NONE:
                        if t < 0:
                            return f, max(lo, proven_lo), min(hi, proven_hi), passes, True
                        return w_root, lo_root, hi_root, passes, True
                    passes += 1
                    f = r >> 1
                    if f < beta:
                        upper = f
                        if r & 1 == 0:
                            proven_hi = min(proven_hi, f)
                    else:
                        lower = f
                        if r & 1 == 0:
                            proven_lo = max(proven_lo, f)
                    if t < 0:
                        plo = max(lo, proven_lo)
                        phi = min(hi, proven_hi)
                        if plo > stats[_S_LO] or phi < stats[_S_HI]:
                            stats[_S_LO] = plo
                            stats[_S_HI] = phi
                            stats[_S_AT] = stats[0]
                            stats[_S_AT_DEPTH] = depth
                lo = max(lo, proven_lo)
                hi = min(hi, proven_hi)
                if lo == hi:
                    f = lo
                    break
                if depth == UNLIMITED:
                    break
                depth += 2
        if t < 0:
            w_root = f
            lo_root = lo
            hi_root = hi
            stats[_S_LO] = lo
            stats[_S_HI] = hi
        elif kind == 1:
            out[t] = gain + f if mode == 2 else (1 if gain + f >= w_root else 0)
        else:
            out[t] = gain - f if mode == 2 else (1 if gain - f >= w_root else 0)
    return w_root, lo_root, hi_root, passes, False


# ------------------------------------------------------------------------------------------------
# Python front end
# ------------------------------------------------------------------------------------------------
@dataclass
class SolveResult:
    """What :meth:`KalahaSolver.solve` found for one position (values: see module doc)."""

    value: int
    optimal_moves: list[int]
    move_values: dict[int, int] = field(default_factory=dict)
    nodes: int = 0
    seconds: float = 0.0


class _Stopped:
    """What a stopped solve proved (shared by :class:`SolveInterrupted` and
    :class:`SolveKeyboardInterrupt`).

    ``reason``: ``"time limit"``, ``"node limit"`` or ``"keyboard interrupt"``. ``lower`` <=
    value <= ``upper``: bounds of the position's value (final store difference for the player to
    move, as :meth:`KalahaSolver.value`) proven before the stop; the trivial bounds (the store
    difference -+ the stones in the pits) if nothing was proven; ``lower == upper`` when the
    value was known and only the moves were still being tested. ``nodes``, ``seconds``: the
    work done. The solver stays usable, its table valid: solving again reuses the work done.
    """

    def __init__(self, reason: str, lower: int, upper: int, nodes: int, seconds: float) -> None:
        self.reason = reason
        self.lower = lower
        self.upper = upper
        self.nodes = nodes
        self.seconds = seconds
        proven = f"value {lower:+d}" if lower == upper else f"{lower:+d} <= value <= {upper:+d}"
        super().__init__(
            f"solve stopped ({reason}) after {nodes:,} nodes, {seconds:.2f} s: proven {proven}"
        )

    def __reduce__(self) -> tuple:  # picklable (arena worker processes)
        return type(self), (self.reason, self.lower, self.upper, self.nodes, self.seconds)

    @property
    def value_known(self) -> bool:
        """Whether the value itself was proven (only the optimal moves were missing)."""
        return self.lower == self.upper


class SolveInterrupted(_Stopped, RuntimeError):
    """A solve reached its ``time_limit`` or ``max_nodes`` before it finished; attributes: see
    :class:`_Stopped` (``reason``, ``lower``, ``upper``, ``nodes``, ``seconds``,
    ``value_known``)."""


class SolveKeyboardInterrupt(_Stopped, KeyboardInterrupt):
    """Ctrl-C stopped a solve: a ``KeyboardInterrupt`` (so that it ends programs as Ctrl-C
    does, and ``except Exception`` does not swallow it) with the same attributes as
    :class:`SolveInterrupted`. Catch both with ``except (SolveInterrupted,
    SolveKeyboardInterrupt)``."""


class SolveTooDeep(RuntimeError):
    """A line of play from the position is longer than the search's stack of :data:`MAX_PLY`
    moves (only with many stones in the pits; such positions are far beyond solving anyway).
    ``stones``: those in the position's pits. The solver stays usable."""

    def __init__(self, stones: int) -> None:
        self.stones = stones
        super().__init__(
            f"the solver searches lines of at most {MAX_PLY} moves, and this position (with "
            f"{stones} stones in the pits) has longer ones: solve a position with fewer stones"
        )

    def __reduce__(self) -> tuple:  # picklable (arena worker processes)
        return type(self), (self.stones,)


def _seconds(name: str, x: float | None) -> float | None:
    """``x`` checked as a positive finite number of seconds (None passes)."""
    if x is None:
        return None
    if isinstance(x, bool) or not isinstance(x, numbers.Real):
        raise TypeError(f"{name} must be a number of seconds, got {x!r}")
    x = float(x)
    if not (math.isfinite(x) and x > 0):
        raise ValueError(f"{name} must be a positive, finite number of seconds, got {x!r}")
    return x


#: bytes of a transposition-table row (four int64: one two-entry bucket, one cache line)
TABLE_ROW_BYTES = 32


def _raise_if_too_deep(err: BaseException, stones: int) -> None:
    """:class:`SolveTooDeep` in place of ``err``, a kernel's, when it is the stack's overflow."""
    if isinstance(err, RuntimeError) and str(err) == _TOO_DEEP:
        raise SolveTooDeep(stones) from None


def near_region_rows(tt_bits: int, near_bits: int, near_margin: int) -> int:
    """Rows of the table's near region (see :class:`KalahaSolver`): ``2**near_bits``, never
    more than the main region's ``2**tt_bits``; none when ``near_margin`` is 0."""
    return 1 << min(near_bits, tt_bits) if near_margin > 0 else 0


def table_bytes(tt_bits: int, near_bits: int, near_margin: int) -> int:
    """Bytes of a :class:`KalahaSolver`'s transposition table (both regions)."""
    return TABLE_ROW_BYTES * ((1 << tt_bits) + near_region_rows(tt_bits, near_bits, near_margin))


def _physical_memory() -> int | None:
    """Bytes of memory this machine has (None where the system does not say)."""
    try:
        return os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (AttributeError, OSError, ValueError):
        return None


def _aligned_table(rows: int) -> np.ndarray:
    """A zeroed ``(rows, 4)`` int64 table on huge pages where available (see
    :func:`~.kalaha_endgame.huge_page_array`), page-aligned so that each two-entry bucket is one
    64-byte cache line."""
    table = huge_page_array(rows * TABLE_ROW_BYTES // 8, np.int64)
    table.fill(0)  # touch the pages now, not at random during the first search
    return table.reshape(rows, 4)


def default_db_stones(pits: int, max_stones: int | None = None) -> int:
    """The largest stone count whose database fits :data:`DEFAULT_DB_ENTRIES` (and no more than
    the game has stones)."""
    n = 0
    limit = min(MAX_DB_STONES, max_stones if max_stones is not None else MAX_DB_STONES)
    while n < limit and database_entries(n + 1, pits) <= DEFAULT_DB_ENTRIES:
        n += 1
    return n


class KalahaSolver:
    """Exact solver for Kalaha positions of one board size and rule set (any number of seeds).

    ``game`` gives pits and rules (its seeds only size the default database). ``db_stones``:
    endgame database size (default: :func:`default_db_stones`), read from / written to
    ``cache_dir`` (default :func:`~spieltisch.agents.kalaha.endgame.default_cache_dir`) unless
    ``use_cache=False``. ``tt_bits``: the transposition table has ``2**tt_bits`` entries of 32
    bytes. Iterative deepening runs depth-limited MTD(f) at depths 2, 4, .. ``id_max_depth`` before
    the search to the end. The default (``None``) chooses by the position:
    :data:`AUTO_ID_DEPTH` for a position with more than ``db_stones`` + :data:`AUTO_ID_MARGIN`
    stones in its pits, else none (see those constants).
    ``near_margin``, ``near_bits``: positions with at most ``db_stones + near_margin`` stones in the
    pits are kept in a separate small region of ``2**near_bits`` entries (their subtrees are
    small and they are most of the nodes; a small region stays in the cache, so their probes are
    cheap, and they do not push deeper results out of the large region); ``near_margin=0``: one
    region for all.

    ``progress`` receives progress lines: while a position is solved (in a worker thread), every
    ``progress_interval`` seconds one line with the nodes, nodes per second, elapsed time, the
    running MTD(f) pass (its depth and the bound it tests) and the bounds proven so far; a line
    ``to the end: value >= V, nodes N, T s`` (or ``<=``; ``depth D:`` for a depth-limited pass)
    whenever a report finds a newly proven bound of the root (N: nodes at the proof, T: seconds
    at the report); and a last line when the solve ends.

    :meth:`solve` and :meth:`value` take a ``time_limit`` (seconds) and ``max_nodes``; when one
    is reached, or on Ctrl-C, the search stops within a few thousand nodes and
    :class:`SolveInterrupted` (a limit) or :class:`SolveKeyboardInterrupt` (Ctrl-C, a
    ``KeyboardInterrupt``) is raised with the bounds proven so far. The table keeps only
    complete results, so the solver stays usable and a later solve reuses the work done.

    The table persists between calls, so solving the positions of one game in order is cheap.
    One solve at a time per solver (the tables are shared).
    """

    def __init__(
        self,
        game: KalahaGame | None = None,
        *,
        db_stones: int | None = None,
        cache_dir: str | os.PathLike | None = None,
        use_cache: bool = True,
        tt_bits: int = DEFAULT_TT_BITS,
        id_max_depth: int | None = None,
        near_margin: int = DEFAULT_NEAR_MARGIN,
        near_bits: int = DEFAULT_NEAR_BITS,
        progress: ProgressFn | None = None,
        progress_interval: float = 2.0,
    ) -> None:
        self.progress_interval = _seconds("progress_interval", progress_interval)
        self.game = game if game is not None else KalahaGame()
        self.pits = self.game.pits
        self.rules = self.game.rules
        if self.pits > 127:
            raise ValueError("the solver handles at most 127 pits")
        if not 4 <= tt_bits <= 34:
            raise ValueError(f"tt_bits must be between 4 and 34, got {tt_bits}")
        if db_stones is None:
            db_stones = default_db_stones(self.pits, self.game.total_stones)
        if not 0 <= db_stones <= MAX_DB_STONES:
            raise ValueError(f"db_stones must be between 0 and {MAX_DB_STONES}, got {db_stones}")
        self.progress = progress
        if id_max_depth is not None and (
            not isinstance(id_max_depth, numbers.Integral) or id_max_depth < 0
        ):
            raise ValueError(f"id_max_depth must be None or an int >= 0, got {id_max_depth!r}")
        self.id_max_depth = id_max_depth
        if near_margin < 0:
            raise ValueError(f"near_margin must be >= 0, got {near_margin}")
        if not 4 <= near_bits <= 34:
            raise ValueError(f"near_bits must be between 4 and 34, got {near_bits}")
        # refused before anything is allocated (a table or database larger than the memory
        # failed in mmap with a traceback, or was built for minutes and then ran out of it)
        table = table_bytes(tt_bits, near_bits, near_margin)
        database = database_entries(db_stones, self.pits)
        memory = _physical_memory()
        if memory is not None and table + database > memory:
            raise ValueError(
                f"the table (tt_bits {tt_bits}: {table / 2**30:.1f} GiB) and the {db_stones}-stone "
                f"database ({database / 2**30:.1f} GiB) need more than this machine's "
                f"{memory / 2**30:.1f} GiB of memory: give smaller tt_bits or db_stones"
            )
        self.database = EndgameDatabase.load_or_build(
            self.pits, self.rules, db_stones, cache_dir, use_cache, progress
        )
        self.db_stones = db_stones
        # nodes with at most near_stones stones share a small table region (0: none)
        self.near_stones = db_stones + near_margin if near_margin > 0 else -1
        self.near_rows = near_region_rows(tt_bits, near_bits, near_margin)
        self.tt = _aligned_table((1 << tt_bits) + self.near_rows)
        size = 2 * self.pits + 2
        self._boards = np.zeros((MAX_PLY, size), dtype=BOARD_DTYPE)
        self._kids = np.zeros((MAX_PLY, self.pits, size), dtype=BOARD_DTYPE)
        self._frames = np.zeros((MAX_PLY, _NFIELDS), dtype=np.int64)
        self._order = np.zeros((MAX_PLY, self.pits, _OFIELDS), dtype=np.int64)
        # profile counters: nodes, database hits, table cut-offs, max ply, cut-offs by the first
        # / a later move, moves settled by their value bounds, full child generations, children
        # generated there, ETC probes, table moves tried first (0-10, cumulative); progress of
        # the solve running, written by _solve per pass (11-18): _S_BETA the bound the running
        # pass tests (value >= beta, remaining value of the searched position), _S_LO / _S_HI
        # the root's proven bounds (remaining value), _S_DEPTH the running pass's depth
        # (UNLIMITED: to the end), _S_PASSES passes begun, _S_MOVE -1 while the root is
        # searched, else the pit whose move is tested, _S_AT / _S_AT_DEPTH node count and depth
        # of the pass that last changed the root's bounds; from _HIST on: nodes by stones
        self.stats = np.zeros(_HIST + _HIST_MAX + 1, dtype=np.int64)
        # stop[0]: why the search stops (0 runs, 1 asked to, 2 node limit), stop[1]: node limit
        self._stop = np.array([_STOP_NONE, _NO_NODE_LIMIT], dtype=np.int64)
        self._kernel = threading.Lock()  # held while a search runs (they share every array)
        self._capacity = -1
        self._ensure_capacity(max(self.game.total_stones, db_stones))

    # --- tables ----------------------------------------------------------------------------
    def _ensure_capacity(self, stones: int) -> None:
        """Size the rank tables for positions of up to ``stones`` stones in the pits."""
        if stones <= self._capacity:
            return
        self._capacity = max(stones, 2 * self._capacity)
        self._binom = binomial_table(self._capacity, self.pits)
        self._offsets = level_offsets(self._binom, self._capacity, self.pits)
        exact = math.comb(self._capacity + 2 * self.pits, 2 * self.pits) < (1 << 61)
        if getattr(self, "_exact_keys", exact) != exact:
            self.tt[:] = 0  # the key scheme changes: old entries would not match anyway
        self._exact_keys = exact
        self._ctx = self._make_context()

    def clear(self) -> None:
        """Forget the transposition table (the database stays)."""
        self.tt[:] = 0

    # --- positions -------------------------------------------------------------------------
    def _position(self, state: KalahaState | str) -> tuple[np.ndarray, int, bool]:
        """(board from the mover's view with stores zeroed, store difference, game over)."""
        if isinstance(state, str):
            state = self.game.state_from_text(state)
        if not isinstance(state, KalahaState):
            raise TypeError(f"expected a KalahaState or its text, got {type(state).__name__}")
        game = state.game
        if game.pits != self.pits or game.rules != self.rules:
            raise ValueError(
                f"this solver is for {self.pits} pits, rules {self.rules!r}; the position is for "
                f"{game.pits} pits, rules {game.rules!r}"
            )
        board = np.empty(2 * self.pits + 2, dtype=BOARD_DTYPE)
        diff, n = _mover_view(state.board, state.current_player, board)
        if state.is_terminal():
            return board, int(diff), True  # as the engine scores it: the stores
        if n > self._capacity:
            self._ensure_capacity(int(n))
        return board, int(diff), False

    # --- search ----------------------------------------------------------------------------
    def _make_context(self) -> tuple:
        return (
            self.pits,
            self.rules == "goki",
            self._binom,
            self._offsets,
            self.database.values,
            self.db_stones,
            self._exact_keys,
            self.tt,
            self.near_stones,
            self.near_rows,
            self._boards,
            self._kids,
            self._frames,
            self._order,
            self.stats,
            self._stop,
        )

    def _remaining(
        self,
        board: np.ndarray,
        mode: int = 0,
        out: np.ndarray | None = None,
        diff: int = 0,
        time_limit: float | None = None,
        max_nodes: int | None = None,
        progress_interval: float | None = None,
    ) -> int:
        """Exact remaining value of a position (mover's view, stores zeroed); with ``mode`` 1 or
        2 also the optimal-move flags or move values in ``out`` (see :func:`_solve`). ``diff``
        (the store difference) only shifts the values reported. Raises
        :class:`SolveInterrupted` when stopped."""
        if out is None:
            out = np.zeros(self.pits, dtype=np.int64)
        p = self.pits
        n = int(board[:p].sum() + board[p + 1 : 2 * p + 1].sum())
        stop = self._stop
        idm = self.id_max_depth
        if idm is None:
            idm = AUTO_ID_DEPTH if n > self.db_stones + AUTO_ID_MARGIN else 0
        args = (board, mode, 0, 2, idm, True, out, *self._ctx)
        t0 = time.perf_counter()
        nodes0 = int(self.stats[0])
        reason = None
        cause = None
        if self.progress is None and time_limit is None and n <= self.db_stones + _INLINE_MARGIN:
            with self._kernel:
                self._arm(max_nodes)
                try:
                    w, lo, hi, _, stopped = _solve(*args)
                except RuntimeError as err:
                    _raise_if_too_deep(err, n)
                    raise
        else:
            interval = progress_interval or self.progress_interval
            report = _Reporter(self, t0, nodes0, n, diff, mode, interval)
            box: list = []
            done = threading.Event()
            cancelled = [False]

            def work() -> None:
                try:
                    # one search at a time per solver (they share the stacks and the table),
                    # also with a worker left running by a Ctrl-C during ``start``
                    with self._kernel:
                        self._arm(max_nodes, n)
                        if cancelled[0]:  # stopped before this worker got the kernel
                            stop[0] = _STOP_REQUESTED
                        box.append(_solve(*args))
                except BaseException as err:  # handed to the calling thread
                    box.append(err)
                finally:
                    done.set()

            def cancel() -> None:
                cancelled[0] = True
                stop[0] = _STOP_REQUESTED

            worker = threading.Thread(target=work, name="kalaha-solve", daemon=True)
            deadline = math.inf if time_limit is None else t0 + time_limit
            try:
                worker.start()
            except BaseException:  # Ctrl-C in ``start``: whether it runs is unknown, stop it
                cancel()
                raise
            try:
                while not done.is_set():
                    now = time.perf_counter()
                    if now >= deadline:
                        reason = "time limit"
                        cancel()
                        break
                    if now >= report.due:
                        report.tick(now)
                        continue
                    # bounded waits, interruptible by Ctrl-C
                    done.wait(min(report.due, deadline, now + 1.0) - now)
            except KeyboardInterrupt as err:
                reason = "keyboard interrupt"
                cause = err
                cancel()
            except BaseException:  # e.g. from the progress callback: stop, then pass it on
                cancel()
                wait_for(done)
                raise
            wait_for(done)
            if isinstance(box[0], BaseException):
                _raise_if_too_deep(box[0], n)
                raise box[0]
            w, lo, hi, _, stopped = box[0]
            if reason == "keyboard interrupt":
                stopped = True  # Ctrl-C is never swallowed, even when the search just ended
            if stopped and reason is None:
                reason = "node limit" if stop[0] == _STOP_NODES else "stopped"
            report.finish(reason if stopped else None)
        if stopped:
            if reason is None:
                reason = "node limit" if stop[0] == _STOP_NODES else "stopped"
            kind = SolveKeyboardInterrupt if reason == "keyboard interrupt" else SolveInterrupted
            raise kind(
                reason,
                diff + int(lo),
                diff + int(hi),
                int(self.stats[0]) - nodes0,
                time.perf_counter() - t0,
            ) from cause
        return int(w)

    def _arm(self, max_nodes: int | None, stones: int | None = None) -> None:
        """Reset the stop flag and set the node limit (holding the kernel lock); with
        ``stones``, also the progress slots that _solve writes first, so that a report before
        it starts (the first call compiles it) is right."""
        st = self.stats
        self._stop[0] = _STOP_NONE
        self._stop[1] = _NO_NODE_LIMIT if max_nodes is None else int(st[0]) + max_nodes
        if stones is not None:
            st[_S_LO], st[_S_HI], st[_S_AT], st[_S_AT_DEPTH] = -stones, stones, st[0], UNLIMITED
            st[_S_BETA], st[_S_DEPTH], st[_S_PASSES], st[_S_MOVE] = 0, UNLIMITED, 0, -1

    def _check_limits(
        self, time_limit: float | None, max_nodes: int | None, progress_interval: float | None
    ) -> tuple[float | None, float | None]:
        if max_nodes is not None and (
            isinstance(max_nodes, bool) or not isinstance(max_nodes, numbers.Integral)
        ):
            raise TypeError(f"max_nodes must be an integer, got {max_nodes!r}")
        if max_nodes is not None and max_nodes < 1:
            raise ValueError(f"max_nodes must be at least 1, got {max_nodes}")
        return _seconds("time_limit", time_limit), _seconds("progress_interval", progress_interval)

    # --- public API ------------------------------------------------------------------------
    def value(
        self,
        state: KalahaState | str,
        *,
        time_limit: float | None = None,
        max_nodes: int | None = None,
        progress_interval: float | None = None,
    ) -> int:
        """The final store difference under perfect play, for the player to move.

        ``time_limit`` (seconds) / ``max_nodes``: stop after that much work (the node limit is
        checked every 4096 nodes) and raise :class:`SolveInterrupted` with the bounds proven;
        Ctrl-C raises :class:`SolveKeyboardInterrupt` likewise. ``progress_interval``: seconds
        between progress lines (default: the solver's)."""
        time_limit, progress_interval = self._check_limits(time_limit, max_nodes, progress_interval)
        board, diff, over = self._position(state)
        if over:
            return diff
        return diff + self._remaining(
            board, 0, None, diff, time_limit, max_nodes, progress_interval
        )

    def move_values(self, state: KalahaState | str) -> dict[int, int]:
        """The exact value of every legal move, for the player to move (see module doc)."""
        return self.solve(state, move_values=True).move_values

    def optimal_moves(self, state: KalahaState | str) -> list[int]:
        """The legal moves that keep the position's value (sorted)."""
        return self.solve(state).optimal_moves

    def solve(
        self,
        state: KalahaState | str,
        move_values: bool = False,
        *,
        time_limit: float | None = None,
        max_nodes: int | None = None,
        progress_interval: float | None = None,
    ) -> SolveResult:
        """Value and optimal moves of a position (and every move's value if asked).

        ``time_limit``, ``max_nodes``, ``progress_interval``: as for :meth:`value`; the limits
        cover the whole solve, the moves included (:class:`SolveInterrupted` then has
        ``value_known`` when only the moves were missing)."""
        time_limit, progress_interval = self._check_limits(time_limit, max_nodes, progress_interval)
        t0 = time.perf_counter()
        nodes0 = int(self.stats[0])
        board, diff, over = self._position(state)
        if over:
            return SolveResult(diff, [], {}, 0, time.perf_counter() - t0)
        out = np.zeros(self.pits, dtype=np.int64)
        w = self._remaining(
            board,
            2 if move_values else 1,
            out,
            diff,
            time_limit,
            max_nodes,
            progress_interval,
        )
        pits = board.tolist()[: self.pits]
        res = out.tolist()
        legal = [i for i in range(self.pits) if pits[i] > 0]
        if move_values:
            values = {i: diff + res[i] for i in legal}
            optimal = [i for i in legal if res[i] == w]
        else:
            values = {}
            optimal = [i for i in legal if res[i]]
        return SolveResult(
            value=diff + w,
            optimal_moves=optimal,
            move_values=values,
            nodes=int(self.stats[0]) - nodes0,
            seconds=time.perf_counter() - t0,
        )


class _Reporter:
    """Progress lines of one threaded solve, from the solver's ``stats`` slots (read while the
    worker writes them: each slot is one aligned 8-byte word, so a read is never torn, though
    slots read one after the other may belong to successive passes)."""

    def __init__(
        self,
        solver: KalahaSolver,
        t0: float,
        nodes0: int,
        stones: int,
        diff: int,
        mode: int,
        interval: float,
    ) -> None:
        self.solver = solver
        self.say = solver.progress
        self.t0 = t0
        self.nodes0 = nodes0
        self.diff = diff
        self.mode = mode
        self.interval = interval
        self.due = t0 + interval if self.say is not None else math.inf
        self.last_t = t0
        self.last_nodes = 0
        self.lo = diff - stones  # bounds reported so far: the trivial ones are not news
        self.hi = diff + stones

    def _bounds(self, now: float) -> tuple[int, int]:
        """Report newly proven bounds of the root (value terms); return the current ones."""
        s = self.solver.stats
        lo = self.diff + int(s[_S_LO])
        hi = self.diff + int(s[_S_HI])
        if lo > self.lo or hi < self.hi:
            depth = int(s[_S_AT_DEPTH])
            phase = "to the end" if depth >= _TRUE else f"depth {depth}"
            at = f"nodes {int(s[_S_AT]) - self.nodes0:,}, {now - self.t0:.2f} s"
            if lo > self.lo:
                self.say(f"  {phase}: value >= {lo:+d}, {at}")
                self.lo = lo
            if hi < self.hi:
                self.say(f"  {phase}: value <= {hi:+d}, {at}")
                self.hi = hi
        return lo, hi

    def tick(self, now: float) -> None:
        """One report (and the next one due an interval later)."""
        s = self.solver.stats
        nodes = int(s[0]) - self.nodes0
        lo, hi = self._bounds(now)
        rate = (nodes - self.last_nodes) / max(now - self.last_t, 1e-9)
        depth = int(s[_S_DEPTH])
        move = int(s[_S_MOVE])
        passes = int(s[_S_PASSES])
        phase = "to the end" if depth >= _TRUE else f"depth {depth}"
        if passes == 0:
            doing = "starting"
        elif move < 0:
            doing = f"pass {passes} ({phase}): value >= {self.diff + int(s[_S_BETA]):+d}?"
        else:
            what = "testing" if self.mode == 1 else "valuing"
            doing = f"pass {passes}: {what} the move of pit {move}"
        proven = f"value {lo:+d}" if lo == hi else f"{lo:+d} <= value <= {hi:+d}"
        self.say(
            f"  {now - self.t0:.1f} s: {nodes:,} nodes ({rate:,.0f}/s); {doing}; proven: {proven}"
        )
        self.last_t = now
        self.last_nodes = nodes
        self.due = max(self.due + self.interval, now + 0.5 * self.interval)

    def finish(self, reason: str | None) -> None:
        """The last lines: bounds not reported yet, then solved or why it stopped."""
        if self.say is None:
            return
        now = time.perf_counter()
        lo, hi = self._bounds(now)
        nodes = int(self.solver.stats[0]) - self.nodes0
        seconds = now - self.t0
        if reason is not None:
            proven = f"value {lo:+d}" if lo == hi else f"{lo:+d} <= value <= {hi:+d}"
            self.say(f"  stopped ({reason}): proven {proven}, nodes {nodes:,}, {seconds:.2f} s")
        else:
            self.say(f"  solved: value {lo:+d}, nodes {nodes:,}, {seconds:.2f} s")
