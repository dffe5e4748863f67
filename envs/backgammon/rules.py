"""The rules of backgammon as numba kernels over plain arrays (the only implementation of a rule).

Both the single-game state (:mod:`.engine`) and the batched engine (:mod:`.batch`) call these
kernels; nothing here knows about Python objects.

A game is one ``int32[STATE_SIZE]`` vector ``s``:

* ``s[0:52]``, the board: one side of 26 cells per seat, each from that seat's own view::

      side index:  0 .. 23            24     25
                   points 1 .. 24     bar    borne off

  Seat ``p`` occupies ``s[26*p : 26*p + 26]``. A seat moves from its 24-point towards its
  1-point and off; its home board is indices 0..5. Its point ``i + 1`` is the opponent's point
  ``24 - i`` (opponent side index ``23 - i``).
* ``s[52:73]``, the ``M_*`` fields below (whose turn, phase, dice left, cube, result, ...).
* ``s[73:228]``, the legal-action mask of the player to act (``MASK`` .. ``MASK + 155``).

Turn structure::

    OPENING (chance) -> MOVE -> [CUBE (decision) ->] ROLL (chance) -> MOVE -> ... -> OVER
                                 CUBE --double--> TAKE --take--> ROLL ; TAKE --drop--> OVER

Checker-move actions are ``source * 6 + (die - 1)`` (source 0..23 = own point 1..24, 24 = bar),
then PASS and the cube actions. The mask of a MOVE state allows exactly the checker moves that
begin some legal full play of the dice left (:func:`generate`).

:func:`observe` writes the observation vector an agent gets (the env's and the batch's; layout in
:mod:`.env`).

Every top-level kernel returns :func:`status`, a packed int, so that callers need not read the
array back: bits 0-2 phase, bits 3-4 player to act + 1, bits 5-17 number of legal plays,
bits 18-20 and 21-23 the two dice rolled this turn.
"""

from __future__ import annotations

import numba
import numpy as np
from numba.cpython.unsafe.numbers import leading_zeros, trailing_zeros

SIDE = 26
BAR = 24
OFF = 25
BOARD_SIZE = 2 * SIDE
CHECKERS = 15

# Actions.
NUM_MOVE_ACTIONS = 150  # 25 sources x 6 dice
PASS = 150
ROLL = 151  # cube game: do not double, roll
DOUBLE = 152
TAKE = 153
DROP = 154
NUM_ACTIONS_NO_CUBE = 151
NUM_ACTIONS_CUBE = 155

# Phases.
PH_OPENING = 0  # chance: the opening roll (one die each, ties rolled again)
PH_ROLL = 1  # chance: the player on turn rolls two dice
PH_CUBE = 2  # decision (cube game): the player on turn doubles or rolls
PH_TAKE = 3  # decision (cube game): the doubled player takes or drops
PH_MOVE = 4  # decision: checker moves (or pass) with the dice left
PH_OVER = 5

# Fields of the state vector after the board.
M_PLAYER = 52  # seat to act (the roller at chance nodes; -1 before the opening roll)
M_TURN = 53  # seat whose turn it is (the doubler while a double is pending)
M_PHASE = 54
M_NDICE = 55  # dice left to play
M_DICE = 56  # 56..59: dice left to play, highest first
M_ROLL = 60  # 60, 61: the two dice rolled this turn (for display; 0 before any roll)
M_CUBE = 62  # cube value
M_OWNER = 63  # cube owner seat, -1 when centred
M_WINNER = 64  # -1 until the game is over
M_POINTS = 65  # points won by the winner (win type x cube)
M_RESULT = 66  # RESULT_* below
M_NPLAYS = 67  # distinct legal plays (MOVE phase)
M_MAXDEPTH = 68  # dice a legal play uses (0: the roll cannot be played)
M_FLAGS = 69  # bit 0: the cube is in play
M_MAXCUBE = 70  # a player may double only while the cube is below this value
M_TURNS = 71  # completed turns
M_RESERVED = 72
MASK = 73
STATE_SIZE = MASK + NUM_ACTIONS_CUBE

FLAG_CUBE = 1

# Observation sizes (layout: the table in :mod:`.env`): without and with the cube.
OBS_SIZE = 59
OBS_SIZE_CUBE = 63

RESULT_NONE = 0
RESULT_SINGLE = 1
RESULT_GAMMON = 2
RESULT_BACKGAMMON = 3
RESULT_DROP = 4

# Workspace: gnubg's generator bounds the distinct plays of a roll by 3060 (its MAX_MOVES).
MAX_PLAYS = 4096
TABLE_SIZE = 8192
W_MOVES = 0  # MAX_PLAYS x 4 checker-move actions per play (-1 padded)
_W_KEYS = W_MOVES + 4 * MAX_PLAYS  # MAX_PLAYS x 2: the exact key of each play's position
_W_SLOTS = _W_KEYS + 2 * MAX_PLAYS  # hash-table slot of each play
_W_TABLE = _W_SLOTS + MAX_PLAYS  # open-addressing hash table of play indices (-1 = empty)
_W_SCRATCH = _W_TABLE + TABLE_SIZE  # the search's per-depth variables, starting with
_W_ACTS = _W_SCRATCH  # the moves of the play being searched, as actions (4)
_W_STACK = _W_SCRATCH + 34  # _can_extend's (after the 34 of _search_equal)
_SCRATCH_SIZE = 54
WS_SIZE = _W_SCRATCH + _SCRATCH_SIZE
_HASH_MUL1 = -7046029254386353131  # 0x9E3779B97F4A7C15 as int64 (Fibonacci hashing)
_HASH_MUL2 = -4658895280553007687  # 0xBF58476D1CE4E5B9 as int64
_HIT_SHIFT = 40  # key part 2: mover cells 15..24 in 4-bit nibbles (40 bits), then the hits


def new_workspace() -> np.ndarray:
    """Scratch array ``int64[WS_SIZE]`` of :func:`generate` (one per thread; its hash table
    must start empty, i.e. -1)."""
    ws = np.zeros(WS_SIZE, dtype=np.int64)
    ws[W_MOVES:_W_KEYS] = -1
    ws[_W_TABLE:_W_SCRATCH] = -1
    return ws


def play_moves(ws: np.ndarray, index: int) -> np.ndarray:
    """The checker-move actions of play ``index`` in a workspace (-1 padded to 4)."""
    return ws[W_MOVES + 4 * index : W_MOVES + 4 * index + 4]


@numba.njit(cache=True, nogil=True)
def status(s):
    """The packed summary every kernel returns (see the module docstring)."""
    return (
        s[M_PHASE]
        | ((s[M_PLAYER] + 1) << 3)
        | (s[M_NPLAYS] << 5)
        | (s[M_ROLL] << 18)
        | (s[M_ROLL + 1] << 21)
    )


@numba.njit(cache=True, nogil=True)
def move_checker(s, me, op, src, d):
    """Move a checker of the side at ``me`` from side index ``src`` (24 = bar) by ``d`` pips:
    onto index ``src - d``, hitting a lone opposing checker there, or off the board. Returns
    whether it hit. The one implementation of a checker move on the board (legality is checked
    elsewhere; the play generator's search moves on a bit state instead, :func:`_step`)."""
    s[me + src] -= 1
    t = src - d
    if t < 0:
        s[me + OFF] += 1
        return False
    s[me + t] += 1
    o = op + 23 - t
    if s[o] == 1:
        s[o] = 0
        s[op + BAR] += 1
        return True
    return False


_BAR_BIT = 1 << BAR


@numba.njit(cache=True, nogil=True)
def _bit_index(low):
    """Index of the lowest set bit of ``low`` (one instruction: LLVM's count of trailing zeros)."""
    return trailing_zeros(low)


@numba.njit(cache=True, nogil=True)
def _highest(occ):
    """The highest set bit of ``occ``: the highest occupied side index, -1 if none."""
    return 63 - leading_zeros(occ)


@numba.njit(cache=True, nogil=True)
def _movable(cand, d, far, blocked):
    """The sources in the bit mask ``cand`` (occupied side indices) from which a checker may
    move by ``d``: onto a point the opponent does not block, or off the board once every
    checker is home (``far``, the highest occupied index, at most 5; a die higher than needed
    bears off only from the highest point); the bar alone while it holds a checker.
    ``blocked``: bit ``t`` set where the opponent holds the mover's side index ``t`` with two
    or more checkers (fixed for a whole turn: the mover only hits single checkers)."""
    if cand & _BAR_BIT:
        cand = _BAR_BIT
    ok = cand & ~(blocked << d) & ~((np.int64(1) << d) - 1)  # onto open points
    if far <= 5:  # bearing off: exactly, or a higher die from the highest point
        ok |= cand & (np.int64(1) << (d - 1))
        if far < d - 1:
            ok |= cand & (np.int64(1) << far)
    return ok


@numba.njit(cache=True, nogil=True)
def _step(key1, key2, occ, far, blots, x, d):
    """Move a checker of the mover from side index ``x`` by ``d`` on the search's bit state
    (see :func:`generate`; the board itself is not touched): returns the new ``key1, key2,
    occ, far, blots``. The counts in the key tell when ``x`` empties; landing on a blot
    records the hit in the key and removes the blot."""
    if x < 15:
        gone = ((key1 >> (4 * x)) & 15) == 1
        key1 -= np.int64(1) << (4 * x)
    else:
        gone = ((key2 >> (4 * (x - 15))) & 15) == 1
        key2 -= np.int64(1) << (4 * (x - 15))
    if gone:
        occ &= ~(np.int64(1) << x)
    t = x - d
    if t >= 0:
        bit = np.int64(1) << t
        if t < 15:
            key1 += np.int64(1) << (4 * t)
        else:
            key2 += np.int64(1) << (4 * (t - 15))
        occ |= bit
        if blots & bit:
            key2 |= np.int64(1) << (_HIT_SHIFT + t)
            blots ^= bit
    if x == far:
        far = _highest(occ)
    return key1, key2, occ, far, blots


@numba.njit(cache=True, nogil=True)
def _can_extend(key1, key2, occ, far, d, count, blocked, stack):
    """Whether ``count`` more moves of die ``d`` can be played from the bit state of
    :func:`generate`, their sources non-increasing (enough for equal dice, see there). Depth
    first on ``stack`` (20 cells), stops at the first success."""
    cands = stack[0:4]  # sources still to try at each depth
    key1_saved = stack[4:8]
    key2_saved = stack[8:12]
    occ_saved = stack[12:16]
    far_saved = stack[16:20]
    depth = 0
    cands[0] = _movable(occ, d, far, blocked)
    while True:
        cand = cands[depth]
        if cand == 0:
            if depth == 0:
                return False
            depth -= 1
            key1 = key1_saved[depth]
            key2 = key2_saved[depth]
            occ = occ_saved[depth]
            far = far_saved[depth]
            continue
        if depth == count - 1:
            return True
        x = _highest(cand)
        cands[depth] = cand ^ (np.int64(1) << x)
        key1_saved[depth] = key1
        key2_saved[depth] = key2
        occ_saved[depth] = occ
        far_saved[depth] = far
        key1, key2, occ, far, _ = _step(key1, key2, occ, far, 0, x, d)
        depth += 1
        cands[depth] = _movable(occ & ((np.int64(2) << x) - 1), d, far, blocked)


@numba.njit(cache=True, nogil=True)
def _forget_plays(s, ws, n, clear_mask):
    """Empty the hash table of the ``n`` plays recorded (a longer play was found), and with
    ``clear_mask`` the checker moves of the mask."""
    for i in range(n):
        ws[_W_TABLE + ws[_W_SLOTS + i]] = -1
    if clear_mask:
        for a in range(MASK, MASK + NUM_MOVE_ACTIONS):
            s[a] = 0


@numba.njit(cache=True, nogil=True)
def _record_play(ws, key1, key2, n, count, dedup):
    """Record the play of the first ``count`` checker-move actions at ``_W_ACTS``, leading to
    the position with key ``(key1, key2)``; with ``dedup``, unless a play leading there is
    recorded already (the hash table). Returns the number of plays recorded.

    The workspace is indexed directly, never sliced: each slice of an array costs numba two
    atomic reference-count updates, which this hot path would pay per play."""
    if dedup:
        h = ((key1 * _HASH_MUL1) ^ (key2 * _HASH_MUL2)) >> 40
        h &= TABLE_SIZE - 1
        while ws[_W_TABLE + h] >= 0:
            j = ws[_W_TABLE + h]
            if ws[_W_KEYS + 2 * j] == key1 and ws[_W_KEYS + 2 * j + 1] == key2:
                return n
            h = (h + 1) & (TABLE_SIZE - 1)
        ws[_W_TABLE + h] = n
        ws[_W_SLOTS + n] = h
        ws[_W_KEYS + 2 * n] = key1
        ws[_W_KEYS + 2 * n + 1] = key2
    if n >= MAX_PLAYS:  # pragma: no cover - above gnubg's bound of 3060
        raise RuntimeError("backgammon play generator: workspace overflow")
    for j in range(4):
        ws[W_MOVES + 4 * n + j] = ws[_W_ACTS + j] if j < count else -1
    return n + 1


@numba.njit(cache=True, nogil=True)
def _longer(s, ws, n, depth, need_mask):
    """A play of ``depth`` moves, longer than those recorded so far, was found: forget the
    ``n`` of them in the hash table (and with ``need_mask`` the mask bits); returns the new
    ``n, maxdepth``."""
    _forget_plays(s, ws, n, need_mask)
    return 0, depth


@numba.njit(cache=True, nogil=True)
def _search_two(s, ws, need_mask, hi, lo, key1, key2, occ, far, blots, blocked):
    """The plays of two different dice ``hi > lo`` (see :func:`generate`): both orders, the
    higher die first, each as two nested loops over the sources of :func:`_movable`. Returns
    ``n, maxdepth``."""
    n = 0
    maxdepth = -1
    for order in range(2):
        d1 = hi if order == 0 else lo
        d2 = hi + lo - d1
        cand = _movable(occ, d1, far, blocked)
        while cand:
            low = cand & -cand
            cand ^= low
            x = _bit_index(low)
            ws[_W_ACTS] = x * 6 + d1 - 1
            key1b, key2b, occb, farb, blotsb = _step(key1, key2, occ, far, blots, x, d1)
            cand2 = _movable(occb, d2, farb, blocked)
            if cand2 == 0:
                # The other die cannot follow: a one-move play, unless longer ones exist.
                if maxdepth > 1:
                    continue
                if maxdepth < 1:
                    n, maxdepth = _longer(s, ws, n, 1, need_mask)
                n = _record_play(ws, key1b, key2b, n, 1, True)
            t0 = x - d1
            if order == 1 and x != BAR and t0 >= 0:
                # Low die first: a move of another checker that neither enters nor bears off
                # (nor does the first move) gives a play the high-die-first search has already
                # found (same moves, other order). Only the checker moved, an entering one or
                # one bearing off is searched; the first move keeps its mask bit (below).
                cand2 &= (np.int64(1) << t0) | _BAR_BIT | ((np.int64(1) << d2) - 1)
            while cand2:
                low = cand2 & -cand2
                cand2 ^= low
                y = _bit_index(low)
                if maxdepth < 2:
                    n, maxdepth = _longer(s, ws, n, 2, need_mask)
                ws[_W_ACTS + 1] = y * 6 + d2 - 1
                leaf1, leaf2, _, _, _ = _step(key1b, key2b, occb, farb, blotsb, y, d2)
                n = _record_play(ws, leaf1, leaf2, n, 2, True)
            if need_mask:  # the first move begins a longest play found so far: legal
                s[MASK + ws[_W_ACTS]] = 1
    if maxdepth < 0:  # no move at all: the one play is the empty one
        maxdepth = 0
        n = _record_play(ws, key1, key2, n, 0, True)
    return n, maxdepth


@numba.njit(cache=True, nogil=True)
def _search_equal(s, ws, need_mask, d, nd, key1, key2, occ, far, blots, blocked):
    """The plays of ``nd`` equal dice ``d`` (a double, or the last die of a turn; see
    :func:`generate`): depth first, the sources of each move at most the last one's, on an
    explicit stack in the workspace. Returns ``n, maxdepth``.

    No two plays found lead to the same position, so none needs the hash table: the change a
    play makes to the mover's points 1..24 and bar, ``sum of m[x] * (e[x - d] - e[x])`` over the
    sources ``x`` moved from ``m[x]`` times, gives those counts one by one from the bar down,
    and one non-increasing sequence of sources (with its hits) has each multiset."""
    sc = ws[_W_SCRATCH : _W_SCRATCH + _SCRATCH_SIZE]
    acts = sc[0:4]  # the moves played, as actions (_W_ACTS, which _record_play reads)
    lvl_cand = sc[4:9]  # sources still to try at each depth (bit mask over side indices)
    lvl_found = sc[9:14]  # some move was possible at this depth
    key1_saved = sc[14:18]  # the bit state before the move at each depth
    key2_saved = sc[18:22]
    occ_saved = sc[22:26]
    far_saved = sc[26:30]
    blots_saved = sc[30:34]
    n = 0
    maxdepth = -1
    depth = 0
    lvl_cand[0] = _movable(occ, d, far, blocked) if nd else 0
    lvl_found[0] = 0
    while True:
        cand = lvl_cand[depth]
        if depth == nd - 1 and cand:
            # The last die: every move here ends a full-length play. Record the position it
            # leads to from the key alone (most of the search's nodes are such moves).
            lvl_found[depth] = 1
            lvl_cand[depth] = 0
            if nd > maxdepth:
                n, maxdepth = _longer(s, ws, 0, nd, need_mask)  # (none in the table)
            while cand:
                low = cand & -cand
                cand ^= low
                x = _bit_index(low)
                acts[depth] = x * 6 + d - 1
                if need_mask:  # its first move begins a longest play: legal (see below)
                    s[MASK + acts[0]] = 1
                leaf1, leaf2, _, _, _ = _step(key1, key2, occ, far, blots, x, d)
                n = _record_play(ws, leaf1, leaf2, n, nd, False)
        elif cand:
            low = cand & -cand
            lvl_cand[depth] = cand ^ low
            x = _bit_index(low)
            acts[depth] = x * 6 + d - 1
            key1_saved[depth] = key1
            key2_saved[depth] = key2
            occ_saved[depth] = occ
            far_saved[depth] = far
            blots_saved[depth] = blots
            key1, key2, occ, far, blots = _step(key1, key2, occ, far, blots, x, d)
            lvl_found[depth] = 1
            depth += 1
            # Sources in non-increasing order: at most this one (while checkers wait on the
            # bar, this one was the bar).
            lvl_cand[depth] = _movable(occ & ((np.int64(2) << x) - 1), d, far, blocked)
            lvl_found[depth] = 0
            continue
        if lvl_found[depth] == 0 and depth >= maxdepth:
            # No move at all from here: a play that cannot use every die.
            if depth > maxdepth:
                n, maxdepth = _longer(s, ws, 0, depth, need_mask)
            if need_mask and depth > 0:
                s[MASK + acts[0]] = 1
            n = _record_play(ws, key1, key2, n, depth, False)
        if depth == 0:
            break
        depth -= 1
        key1 = key1_saved[depth]
        key2 = key2_saved[depth]
        occ = occ_saved[depth]
        far = far_saved[depth]
        blots = blots_saved[depth]
    return n, maxdepth


@numba.njit(cache=True, nogil=True)
def generate(s, ws, need_mask):
    """All distinct legal plays of the dice left, for the player on turn (phase MOVE).

    A play uses as many of the dice as possible; when only one of two different dice can be
    played, the higher one if it can. Plays leading to the same position (the opponent's side
    included, so a hit on an intermediate stop makes a different play) count once. Fills the
    workspace with each play's checker-move actions (one way to play it, see
    :func:`play_moves`) and sets ``s[M_NPLAYS]`` and ``s[M_MAXDEPTH]`` (the number of dice a
    play uses; 0: the roll cannot be played, and the one play is the empty one). With
    ``need_mask`` the mask gets exactly the checker moves that begin some legal play (PASS
    alone when the roll cannot be played). The board is not changed.

    Search: depth first over single checker moves on a bit state, never on the board: the
    mover's occupied side indices (``occ``) and highest one (``far``), the opponent's blots
    (``blots``) and an exact key of the position (the mover's 25 counts in 4-bit nibbles plus
    the points where it hit), all updated move by move (:func:`_step`). The sources of each die
    come from bit masks (the occupied points less those whose target the opponent blocks,
    :func:`_movable`). The plays of two different dice are told apart by the key of their
    position in an open-addressing table (equal dice never reach a position twice, see
    :func:`_search_equal`). The moves of the last die only compute the key they lead to: most
    of the search's nodes are such last moves.

    * Two different dice are searched in both orders, the higher die first
      (:func:`_search_two`). When the lower die went first, a second move of another checker
      that neither enters nor bears off (nor did the first) is not searched again: the same
      two moves in the other order are legal and were found already; only its mask bit is
      kept.
    * With equal dice (:func:`_search_equal`) the moves are generated in non-increasing order
      of their source: a legal sequence of equal dice stays legal, with the same result, when
      sorted that way (checkers only move forward, entering comes first, bearing off only gets
      easier), so no position is lost. The first moves of the plays found are legal; each
      other legal single move is then checked on its own: it is legal when ``maxdepth - 1``
      more moves can follow it (:func:`_can_extend`, stopping at the first way found).
    """
    me = SIDE * s[M_TURN]
    op = SIDE - me
    nd = s[M_NDICE]
    hi = s[M_DICE]
    distinct = nd == 2 and hi != s[M_DICE + 1]
    if need_mask:
        for a in range(MASK, STATE_SIZE):
            s[a] = 0

    key1 = np.int64(0)  # mover's side indices 0..14, 4 bits each
    key2 = np.int64(0)  # indices 15..24, then one bit per point hit
    occ = np.int64(0)  # bit c: the mover has a checker on side index c
    blocked = np.int64(0)  # bit t: the opponent holds the mover's side index t (see _movable)
    blots = np.int64(0)  # bit t: a single opposing checker there
    for c in range(25):
        cnt = np.int64(s[me + c])
        if c < 15:
            key1 |= cnt << (4 * c)
        else:
            key2 |= cnt << (4 * (c - 15))
        if cnt > 0:
            occ |= np.int64(1) << c
    for c in range(24):
        held = s[op + 23 - c]
        if held >= 2:
            blocked |= np.int64(1) << c
        elif held == 1:
            blots |= np.int64(1) << c
    far = _highest(occ)
    if distinct:
        n, maxdepth = _search_two(
            s, ws, need_mask, hi, s[M_DICE + 1], key1, key2, occ, far, blots, blocked
        )
    else:
        n, maxdepth = _search_equal(s, ws, need_mask, hi, nd, key1, key2, occ, far, blots, blocked)
    if distinct:  # (equal dice leave the table empty, see _search_equal)
        _forget_plays(s, ws, n, False)

    if distinct and maxdepth == 1:
        # Only one of the two dice can be played: the higher one if it can. The search tries
        # the higher die first, so a position reachable with either die has the higher one.
        m = 0
        for i in range(n):
            if ws[W_MOVES + 4 * i] % 6 + 1 == hi:
                if m != i:
                    for j in range(4):
                        ws[W_MOVES + 4 * m + j] = ws[W_MOVES + 4 * i + j]
                m += 1
        if m > 0:
            n = m
            if need_mask:
                low = s[M_DICE + 1]
                for x in range(25):
                    s[MASK + x * 6 + low - 1] = 0

    if need_mask:
        if maxdepth == 0:
            s[MASK + PASS] = 1
        elif not distinct:
            # Equal dice: a first move is legal when maxdepth - 1 more moves can follow it.
            stack = ws[_W_STACK : _W_STACK + 20]
            cand = _movable(occ, hi, far, blocked)
            while cand:
                low = cand & -cand
                cand ^= low
                x = _bit_index(low)
                a = MASK + x * 6 + hi - 1
                if s[a] == 0:  # (the first moves of the plays found are marked already)
                    key1b, key2b, occb, farb, _ = _step(key1, key2, occ, far, 0, x, hi)
                    if maxdepth == 1 or _can_extend(
                        key1b, key2b, occb, farb, hi, maxdepth - 1, blocked, stack
                    ):
                        s[a] = 1

    s[M_NPLAYS] = n
    s[M_MAXDEPTH] = maxdepth
    return n


@numba.njit(cache=True, nogil=True)
def apply_play_moves(s, ws, index):
    """Play the checker moves of play ``index`` of the last :func:`generate` on ``s``."""
    me = SIDE * s[M_TURN]
    op = SIDE - me
    for j in range(4):
        a = ws[W_MOVES + 4 * index + j]
        if a < 0:
            break
        move_checker(s, me, op, a // 6, a % 6 + 1)


@numba.njit(cache=True, nogil=True)
def play_boards(s, ws, out):
    """The boards after each legal play of the last :func:`generate` into ``out[:n]``."""
    me = SIDE * s[M_TURN]
    op = SIDE - me
    for i in range(s[M_NPLAYS]):
        for j in range(BOARD_SIZE):
            out[i, j] = s[j]
        row = out[i]
        for j in range(4):
            a = ws[W_MOVES + 4 * i + j]
            if a < 0:
                break
            move_checker(row, me, op, a // 6, a % 6 + 1)


@numba.njit(cache=True, nogil=True)
def _decision_mask(s):
    """The mask of a non-MOVE phase (all zero at chance nodes and at the end)."""
    for a in range(MASK, STATE_SIZE):
        s[a] = 0
    phase = s[M_PHASE]
    if phase == PH_CUBE:
        s[MASK + ROLL] = 1
        s[MASK + DOUBLE] = 1
    elif phase == PH_TAKE:
        s[MASK + TAKE] = 1
        s[MASK + DROP] = 1


@numba.njit(cache=True, nogil=True)
def _may_double(s, seat):
    if (s[M_FLAGS] & FLAG_CUBE) == 0:
        return False
    owner = s[M_OWNER]
    return (owner == -1 or owner == seat) and s[M_CUBE] < s[M_MAXCUBE]


@numba.njit(cache=True, nogil=True)
def end_turn(s):
    """Hand the turn to the opponent: a cube decision if they may double, else their roll."""
    nxt = 1 - s[M_TURN]
    s[M_TURN] = nxt
    s[M_PLAYER] = nxt
    s[M_NDICE] = 0
    for i in range(4):
        s[M_DICE + i] = 0
    s[M_NPLAYS] = 0
    s[M_MAXDEPTH] = 0
    s[M_TURNS] += 1
    s[M_PHASE] = PH_CUBE if _may_double(s, nxt) else PH_ROLL
    _decision_mask(s)


@numba.njit(cache=True, nogil=True)
def win_type(s, winner):
    """1 single, 2 gammon (loser has borne off nothing), 3 backgammon (and the loser still has
    a checker on the bar or in the winner's home board, i.e. on the loser's points 19..24)."""
    lose = SIDE * (1 - winner)
    if s[lose + OFF] > 0:
        return RESULT_SINGLE
    for j in range(18, 25):
        if s[lose + j] > 0:
            return RESULT_BACKGAMMON
    return RESULT_GAMMON


@numba.njit(cache=True, nogil=True)
def finish_if_won(s):
    """End the game if the player on turn has borne off all checkers; True if so."""
    turn = s[M_TURN]
    if s[SIDE * turn + OFF] < CHECKERS:
        return False
    result = win_type(s, turn)
    s[M_WINNER] = turn
    s[M_RESULT] = result
    s[M_POINTS] = result * s[M_CUBE]
    s[M_PHASE] = PH_OVER
    s[M_NDICE] = 0
    for i in range(4):
        s[M_DICE + i] = 0
    s[M_NPLAYS] = 0
    s[M_MAXDEPTH] = 0
    s[M_TURNS] += 1
    _decision_mask(s)
    return True


@numba.njit(cache=True, nogil=True)
def put_dice(s, d1, d2):
    """Resolve a chance node with dice ``d1, d2`` (the caller checks them), without generating
    the plays (:func:`set_dice` does both). At the opening roll ``d1`` is seat 0's die and
    ``d2`` seat 1's; they differ, and the higher die's seat plays both. Afterwards the player on
    turn plays ``d1, d2`` (four times if equal)."""
    if s[M_PHASE] == PH_OPENING:
        turn = 0 if d1 > d2 else 1
        s[M_TURN] = turn
        s[M_PLAYER] = turn
    s[M_ROLL] = d1
    s[M_ROLL + 1] = d2
    hi = d1 if d1 >= d2 else d2
    lo = d1 + d2 - hi
    if hi == lo:
        s[M_NDICE] = 4
        for i in range(4):
            s[M_DICE + i] = hi
    else:
        s[M_NDICE] = 2
        s[M_DICE] = hi
        s[M_DICE + 1] = lo
        s[M_DICE + 2] = 0
        s[M_DICE + 3] = 0
    s[M_PHASE] = PH_MOVE


@numba.njit(cache=True, nogil=True)
def set_dice(s, d1, d2, ws):
    """:func:`put_dice`, then generate the plays and the mask."""
    put_dice(s, d1, d2)
    generate(s, ws, True)
    return status(s)


@numba.njit(cache=True, nogil=True)
def dice_of(s, r):
    """The dice of a uniform random number ``r`` in 0..179 (180 = 36 * 5 = 30 * 6, so both the
    36 rolls and the 30 unequal opening rolls are exactly uniform)."""
    if s[M_PHASE] == PH_OPENING:
        k = r % 30
        a = k // 5
        b = k % 5
        if b >= a:
            b += 1
        return a + 1, b + 1
    k = r % 36
    return k // 6 + 1, k % 6 + 1


@numba.njit(cache=True, nogil=True)
def roll(s, r, ws):
    """Resolve a chance node with the dice of the random number ``r`` (see :func:`dice_of`)."""
    d1, d2 = dice_of(s, r)
    return set_dice(s, d1, d2, ws)


@numba.njit(cache=True, nogil=True)
def act(s, action, ws):
    """Play one legal ``action`` (the caller checks it against the mask) and update the mask.

    A checker move after which no die is playable ends the turn; bearing off the last checker
    ends the game at once.
    """
    if action < NUM_MOVE_ACTIONS:
        me = SIDE * s[M_TURN]
        d = action % 6 + 1
        move_checker(s, me, SIDE - me, action // 6, d)
        # Remove the die (dice stay sorted highest first).
        nd = s[M_NDICE]
        i = 0
        while s[M_DICE + i] != d:
            i += 1
        for j in range(i, nd - 1):
            s[M_DICE + j] = s[M_DICE + j + 1]
        s[M_DICE + nd - 1] = 0
        s[M_NDICE] = nd - 1
        if not finish_if_won(s):
            if nd == 1:
                end_turn(s)
            else:
                generate(s, ws, True)
                if s[M_MAXDEPTH] == 0:
                    end_turn(s)
    elif action == PASS:
        end_turn(s)
    elif action == ROLL:
        s[M_PHASE] = PH_ROLL
        _decision_mask(s)
    elif action == DOUBLE:
        s[M_PHASE] = PH_TAKE
        s[M_PLAYER] = 1 - s[M_TURN]
        _decision_mask(s)
    elif action == TAKE:
        s[M_CUBE] *= 2
        s[M_OWNER] = s[M_PLAYER]
        s[M_PLAYER] = s[M_TURN]
        s[M_PHASE] = PH_ROLL
        _decision_mask(s)
    elif action == DROP:
        s[M_WINNER] = s[M_TURN]
        s[M_RESULT] = RESULT_DROP
        s[M_POINTS] = s[M_CUBE]
        s[M_PHASE] = PH_OVER
        s[M_TURNS] += 1
        _decision_mask(s)
    return status(s)


@numba.njit(cache=True, nogil=True, inline="always")
def play(s, index, ws):
    """Play the legal play ``index`` of the last :func:`generate` for this position (the
    caller guarantees that the workspace holds them) and end the turn.

    Inlined into compiled callers (numba's IR): random rollouts call it once per decision, and
    a call of its own costs four atomic reference-count updates of ``s`` and ``ws``."""
    apply_play_moves(s, ws, index)
    s[M_NDICE] = 0
    if not finish_if_won(s):
        end_turn(s)
    return status(s)


@numba.njit(cache=True, nogil=True)
def refresh(s, ws):
    """Recompute the plays (MOVE phase) and the mask of any phase."""
    if s[M_PHASE] == PH_MOVE:
        generate(s, ws, True)
    else:
        _decision_mask(s)
    return status(s)


@numba.njit(cache=True, nogil=True)
def gnubg_key(board, turn, out):
    """GNU Backgammon's 10-byte position key of ``board`` (52 cells, or a whole state vector)
    with seat ``turn`` on roll: the bit string of the side not on roll, then of the side on
    roll (points 1..24 and the bar, each as that many 1s and a 0), packed little-endian."""
    for i in range(10):
        out[i] = 0
    bit = 0
    for side in range(2):
        base = SIDE * (1 - turn) if side == 0 else SIDE * turn
        for j in range(25):
            for _ in range(board[base + j]):
                out[bit >> 3] |= np.uint8(1 << (bit & 7))
                bit += 1
            bit += 1


@numba.njit(cache=True, nogil=True)
def observe(s, seat, out):
    """The observation of ``seat`` (0 or 1) into ``out`` (float32, :data:`OBS_SIZE` values, or
    :data:`OBS_SIZE_CUBE` in a cube game; every value is written): the board from ``seat``'s
    view, the dice left to play, whether ``seat`` acts now, and the cube (layout: the table in
    :mod:`.env`). The one implementation of the observation, for the env and the batch."""
    own = SIDE * seat
    opp = SIDE - own
    for i in range(24):
        out[i] = s[own + i]
        out[24 + i] = s[opp + 23 - i]  # the opponent's checkers on the seat's point i + 1
    out[48] = s[own + BAR]
    out[49] = s[opp + BAR]
    out[50] = s[own + OFF]
    out[51] = s[opp + OFF]
    for j in range(52, 58):
        out[j] = 0.0
    for i in range(s[M_NDICE]):
        out[51 + s[M_DICE + i]] += 1.0
    out[58] = 1.0 if s[M_PLAYER] == seat and s[M_PHASE] != PH_OVER else 0.0
    if s[M_FLAGS] & FLAG_CUBE:
        owner = s[M_OWNER]
        out[59] = s[M_CUBE]
        out[60] = 1.0 if owner == seat else 0.0
        out[61] = 1.0 if owner == 1 - seat else 0.0
        out[62] = 1.0 if s[M_PHASE] == PH_TAKE else 0.0
