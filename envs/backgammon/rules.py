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
_W_SCRATCH = _W_TABLE + TABLE_SIZE  # the search's per-depth variables
_SCRATCH_SIZE = 72
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
    whether it hit. The one implementation of a checker move (legality is checked elsewhere)."""
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


@numba.njit(cache=True, nogil=True)
def unmove_checker(s, me, op, src, d, hit):
    """Take back :func:`move_checker`."""
    s[me + src] += 1
    t = src - d
    if t < 0:
        s[me + OFF] -= 1
        return
    s[me + t] -= 1
    if hit:
        s[op + 23 - t] = 1
        s[op + BAR] -= 1


@numba.njit(cache=True, nogil=True)
def can_move(s, me, op, src, d, far):
    """Whether the side at ``me`` may move a checker from ``src`` by ``d``, ignoring the bar
    rule (callers only offer the bar while checkers are on it). ``far`` is the side's highest
    occupied index: bearing off needs every checker home (``far <= 5``), and a die higher than
    needed bears off only from the highest point."""
    if s[me + src] == 0:
        return False
    t = src - d
    if t >= 0:
        return s[op + 23 - t] < 2
    return far <= 5 and (t == -1 or src == far)


@numba.njit(cache=True, nogil=True)
def highest_checker(s, base, start):
    """Highest side index ``<= start`` (bar = 24) holding a checker of the side at ``base``;
    -1 if none."""
    for j in range(start, -1, -1):
        if s[base + j] > 0:
            return j
    return -1


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
def _nibble(c):
    """Where side index ``c`` counts in the two-part position key (part, shift)."""
    return (0, 4 * c) if c < 15 else (1, 4 * (c - 15))


@numba.njit(cache=True, nogil=True)
def _movable(cand, d, far, blocked):
    """The sources in the bit mask ``cand`` (occupied side indices) from which a checker may
    move by ``d``: :func:`can_move` for all of them at once, and the bar alone while it holds a
    checker. ``blocked``: bit ``t`` set where the opponent holds the mover's side index ``t``
    with two or more checkers (fixed for a whole turn: the mover only hits single checkers)."""
    if cand & _BAR_BIT:
        cand = _BAR_BIT
    ok = cand & ~(blocked << d) & ~((np.int64(1) << d) - 1)  # onto open points
    if far <= 5:  # bearing off: exactly, or a higher die from the highest point
        ok |= cand & (np.int64(1) << (d - 1))
        if far < d - 1:
            ok |= cand & (np.int64(1) << far)
    return ok


@numba.njit(cache=True, nogil=True)
def _can_extend(s, me, op, d, count, far, limit, sc):
    """Whether ``count`` more moves of die ``d`` can be played (sources at most ``limit``,
    non-increasing: enough for equal dice, see :func:`generate`). Depth-first, stops at the
    first success; restores the board."""
    src = sc[40:44]
    hit = sc[44:48]
    fars = sc[48:52]
    nxt = sc[52:56]
    depth = 0
    nxt[0] = far if far < limit else limit
    while True:
        found = False
        x = nxt[depth]
        on_bar = s[me + BAR] > 0
        while x >= 0:
            if on_bar and x != BAR:
                x = -1
                break
            ok = can_move(s, me, op, x, d, far)
            x -= 1
            if ok:
                found = True
                break
        nxt[depth] = x
        if found:
            x += 1
            src[depth] = x
            fars[depth] = far
            hit[depth] = move_checker(s, me, op, x, d)
            if x == far and s[me + x] == 0:
                far = highest_checker(s, me, x)
            depth += 1
            if depth == count:
                success = True
                break
            nxt[depth] = far if far < x else x
            continue
        if depth == 0:
            success = False
            break
        depth -= 1
        unmove_checker(s, me, op, src[depth], d, hit[depth])
        far = fars[depth]
    # Take back whatever is still played.
    while depth > 0:
        depth -= 1
        unmove_checker(s, me, op, src[depth], d, hit[depth])
    return success


@numba.njit(cache=True, nogil=True)
def _key_after(s, op, key1, key2, x, d):
    """The two-part position key (see :func:`generate`) after moving a checker from ``x`` by
    ``d``, the board itself unchanged."""
    part, shift = _nibble(x)
    if part == 0:
        key1 -= np.int64(1) << shift
    else:
        key2 -= np.int64(1) << shift
    t = x - d
    if t >= 0:
        part, shift = _nibble(t)
        if part == 0:
            key1 += np.int64(1) << shift
        else:
            key2 += np.int64(1) << shift
        if s[op + 23 - t] == 1:  # a hit
            key2 |= np.int64(1) << (_HIT_SHIFT + t)
    return key1, key2


@numba.njit(cache=True, nogil=True)
def _forget_plays(s, table, slots, n, clear_mask):
    """Empty the hash table of the ``n`` plays recorded (a longer play was found), and with
    ``clear_mask`` the checker moves of the mask."""
    for i in range(n):
        table[slots[i]] = -1
    if clear_mask:
        for a in range(MASK, MASK + NUM_MOVE_ACTIONS):
            s[a] = 0


@numba.njit(cache=True, nogil=True)
def _record_play(ws, key1, key2, n, mv_src, mv_die, count):
    """Record the play of the ``count`` moves ``mv_src``/``mv_die``, leading to the position
    with key ``(key1, key2)``, unless a play leading there is recorded already; returns the
    number of plays recorded."""
    table = ws[_W_TABLE:]  # (one slice: fewer bounds to compute on this hot path)
    h = ((key1 * _HASH_MUL1) ^ (key2 * _HASH_MUL2)) >> 40
    h &= TABLE_SIZE - 1
    while table[h] >= 0:
        j = table[h]
        if ws[_W_KEYS + 2 * j] == key1 and ws[_W_KEYS + 2 * j + 1] == key2:
            return n
        h = (h + 1) & (TABLE_SIZE - 1)
    if n >= MAX_PLAYS:  # pragma: no cover - above gnubg's bound of 3060
        raise RuntimeError("backgammon play generator: workspace overflow")
    table[h] = n
    ws[_W_SLOTS + n] = h
    ws[_W_KEYS + 2 * n] = key1
    ws[_W_KEYS + 2 * n + 1] = key2
    for j in range(4):
        ws[W_MOVES + 4 * n + j] = mv_src[j] * 6 + mv_die[j] - 1 if j < count else -1
    return n + 1


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
    alone when the roll cannot be played). The board is used as scratch and restored.

    Search: depth first over single checker moves, the sources of each die from bit masks (the
    occupied points less those whose target the opponent blocks, :func:`_movable`). Positions
    are told apart by an exact key (the mover's 25 counts in 4-bit nibbles plus the points
    where it hit), updated move by move, in an open-addressing table. The moves of the last die
    are not made: each one's key is computed from the key before it (:func:`_key_after`), and
    most of the search's nodes are such last moves.

    * Two different dice are searched in both orders, the higher die first. When the lower
      die went first, a second move of another checker that neither enters nor bears off
      (nor did the first) is not searched again: the same two moves in the other order are
      legal and were found already; only its mask bit is kept.
    * With equal dice the moves are generated in non-increasing order of their source: a legal
      sequence of equal dice stays legal, with the same result, when sorted that way (checkers
      only move forward, entering comes first, bearing off only gets easier), so no position
      is lost. The first moves of the plays found are legal; each other legal single move is
      then checked on its own: it is legal when ``maxdepth - 1`` more moves can follow it
      (:func:`_can_extend`, stopping at the first way found).
    """
    me = SIDE * s[M_TURN]
    op = SIDE - me
    nd = s[M_NDICE]
    sc = ws[_W_SCRATCH : _W_SCRATCH + _SCRATCH_SIZE]
    dv = sc[0:4]  # dice values, highest first
    lvl_die = sc[4:9]  # index into dv of the die tried at each depth
    lvl_cand = sc[9:14]  # sources still to try at each depth (bit mask over side indices)
    lvl_found = sc[14:19]  # some move was possible at this depth
    mv_src = sc[19:23]
    mv_die = sc[23:27]
    mv_idx = sc[27:31]
    mv_hit = sc[31:35]
    far_saved = sc[35:39]
    occ_saved = sc[56:60]
    key1_saved = sc[60:64]
    key2_saved = sc[64:68]
    moves = ws[W_MOVES:_W_KEYS]
    slots = ws[_W_SLOTS:_W_TABLE]
    table = ws[_W_TABLE:_W_SCRATCH]
    for i in range(nd):
        dv[i] = s[M_DICE + i]
    distinct = nd == 2 and dv[0] != dv[1]
    if need_mask:
        for a in range(MASK, STATE_SIZE):
            s[a] = 0

    key1 = np.int64(0)  # mover's side indices 0..14, 4 bits each
    key2 = np.int64(0)  # indices 15..24, then one bit per point hit
    occ = np.int64(0)  # bit c: the mover has a checker on side index c
    blocked = np.int64(0)  # bit t: the opponent holds the mover's side index t (see _movable)
    for c in range(25):
        cnt = np.int64(s[me + c])
        if c < 15:
            key1 |= cnt << (4 * c)
        else:
            key2 |= cnt << (4 * (c - 15))
        if cnt > 0:
            occ |= np.int64(1) << c
    for c in range(24):
        if s[op + 23 - c] >= 2:
            blocked |= np.int64(1) << c

    n = 0
    maxdepth = -1
    used = 0
    far = _highest(occ)
    depth = 0
    lvl_die[0] = 0
    lvl_cand[0] = _movable(occ, dv[0], far, blocked) if nd else 0
    lvl_found[0] = 0

    while True:
        # Find the next legal move at this depth.
        found = False
        src = -1
        d = 0
        di = lvl_die[depth]
        while di < nd:
            d = dv[di]
            cand = lvl_cand[depth]
            # Low die played first, now the high die: a move of another checker that neither
            # enters nor bears off (nor does the first move) gives a play the high-die-first
            # search has already found (same moves, other order): skip it, keeping its mask bit.
            skip_indep = distinct and depth == 1 and mv_idx[0] == 1
            t0 = mv_src[0] - mv_die[0]
            if skip_indep and (mv_src[0] == BAR or t0 < 0):
                skip_indep = False
            while cand:  # the sources that may move by d (see _movable)
                low = cand & -cand
                cand ^= low
                x = _bit_index(low)
                if skip_indep and x != BAR and x != t0 and x - d >= 0:
                    lvl_found[1] = 1
                    if need_mask:
                        s[MASK + mv_src[0] * 6 + mv_die[0] - 1] = 1
                    continue
                if depth == nd - 1:
                    # The last die: every move here ends a full-length play. Record the
                    # position it leads to from the key alone, without making the move.
                    lvl_found[depth] = 1
                    if nd > maxdepth:
                        _forget_plays(s, table, slots, n, need_mask)
                        n = 0
                        maxdepth = nd
                    mv_src[depth] = x
                    mv_die[depth] = d
                    if need_mask:  # its first move begins a longest play: legal (see below)
                        s[MASK + mv_src[0] * 6 + mv_die[0] - 1] = 1
                    leaf1, leaf2 = _key_after(s, op, key1, key2, x, d)
                    n = _record_play(ws, leaf1, leaf2, n, mv_src, mv_die, nd)
                    continue
                found = True
                src = x
                break
            lvl_cand[depth] = cand
            if found:
                break
            # Next die value at this depth (only two different dice give a second choice).
            di += 1
            if not distinct or (used >> di) & 1:
                di = nd
            lvl_die[depth] = di
            if di < nd:
                lvl_cand[depth] = _movable(occ, dv[di], far, blocked)
        if found:
            mv_src[depth] = src
            mv_die[depth] = d
            mv_idx[depth] = di
            far_saved[depth] = far
            occ_saved[depth] = occ
            key1_saved[depth] = key1
            key2_saved[depth] = key2
            key1, key2 = _key_after(s, op, key1, key2, src, d)  # before the move: a hit?
            mv_hit[depth] = move_checker(s, me, op, src, d)
            if s[me + src] == 0:
                occ &= ~(np.int64(1) << src)
            if src >= d:
                occ |= np.int64(1) << (src - d)
            if src == far:
                far = _highest(occ)
            used |= 1 << di
            lvl_found[depth] = 1
            depth += 1  # below the last die (handled above): another die is left
            if distinct:
                nxt = 0
                while (used >> nxt) & 1:
                    nxt += 1
                lvl_die[depth] = nxt
                lvl_cand[depth] = _movable(occ, dv[nxt], far, blocked)
            else:
                # Equal dice: sources in non-increasing order (at most the last source; while
                # checkers wait on the bar, the last source was the bar).
                lvl_die[depth] = 0
                lvl_cand[depth] = _movable(occ & ((np.int64(2) << src) - 1), d, far, blocked)
            lvl_found[depth] = 0
            continue

        if lvl_found[depth] == 0 and depth >= maxdepth:
            # No move at all from here: a play that cannot use every die (as in the last-die
            # loop above, which is written out there because it is the hot path).
            if depth > maxdepth:
                _forget_plays(s, table, slots, n, need_mask)
                n = 0
                maxdepth = depth
            if need_mask and depth > 0:
                # Both orders of two different dice are searched, so the first moves of the
                # longest plays are exactly the legal first moves (equal dice: some of them).
                s[MASK + mv_src[0] * 6 + mv_die[0] - 1] = 1
            n = _record_play(ws, key1, key2, n, mv_src, mv_die, depth)
        if depth == 0:
            break
        depth -= 1
        # Undo the move at `depth`.
        x = mv_src[depth]
        d = mv_die[depth]
        unmove_checker(s, me, op, x, d, mv_hit[depth])
        key1 = key1_saved[depth]
        key2 = key2_saved[depth]
        far = far_saved[depth]
        occ = occ_saved[depth]
        used &= ~(1 << mv_idx[depth])

    _forget_plays(s, table, slots, n, False)  # the table starts empty next time

    if distinct and maxdepth == 1:
        # Only one of the two dice can be played: the higher one if it can. The search tries
        # the higher die first, so a position reachable with either die has the higher one.
        high = dv[0]
        m = 0
        for i in range(n):
            if moves[4 * i] % 6 + 1 == high:
                if m != i:
                    for j in range(4):
                        moves[4 * m + j] = moves[4 * i + j]
                m += 1
        if m > 0:
            n = m
            if need_mask:
                low = dv[1]
                for x in range(25):
                    s[MASK + x * 6 + low - 1] = 0

    if need_mask:
        if maxdepth == 0:
            s[MASK + PASS] = 1
        elif not distinct:
            # Equal dice: a first move is legal when maxdepth - 1 more moves can follow it.
            d = dv[0]
            far = highest_checker(s, me, BAR)
            x = far
            while x >= 0:
                if s[me + BAR] > 0 and x != BAR:
                    break
                # (a first move of a play the search recorded is marked already)
                if s[MASK + x * 6 + d - 1] == 0 and can_move(s, me, op, x, d, far):
                    ok = maxdepth == 1
                    if not ok:
                        hit = move_checker(s, me, op, x, d)
                        far2 = far
                        if x == far and s[me + x] == 0:
                            far2 = highest_checker(s, me, x)
                        ok = _can_extend(s, me, op, d, maxdepth - 1, far2, BAR, sc)
                        unmove_checker(s, me, op, x, d, hit)
                    if ok:
                        s[MASK + x * 6 + d - 1] = 1
                x -= 1

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


@numba.njit(cache=True, nogil=True)
def play(s, index, ws):
    """Play the legal play ``index`` of the last :func:`generate` for this position (the
    caller guarantees that the workspace holds them) and end the turn."""
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
