"""The Hus rules as numba kernels over one flat board: every rule of ``docs/rules/hus.md`` is
implemented once, here. The single-game state (:mod:`.engine`), the batched engine
(:mod:`.batch`), the env (:mod:`.env`) and the search agents call these kernels; nothing here
imports an RL library or draws anything.

Each player owns 16 pits in two rows, and sows only into them, round a ring. The board stores
each player's pits in *ring order*, so that sowing always goes to ``ring + 1 (mod 16)``::

    ring  0 .. 7   = row 2 (inner), columns 0 .. 7 from the owner's left
    ring  8 .. 15  = row 1 (outer), columns 7 .. 0 (ring 8 is column 7, ring 15 is column 0)

The board is one flat array of 32 counts: ``board[16 * player + ring]``. Actions name pits from
the mover's view: ``0..7`` = row 1 (outer) columns 0..7, ``8..15`` = row 2 (inner) columns 0..7.
The mover's inner pit at column ``c`` (ring ``c``) faces the opponent's inner pit at ring
``7 - c`` and the opponent's outer pit behind it at ring ``8 + c``.

The move kernel :func:`play_pit` is the only implementation of a move, :func:`observe` the only
one of a seat's observation (``hus_v0``'s), :func:`final_result` the only one of who won.
Given a ``trace`` array, :func:`play_pit` also writes the move step by step (every stone picked
up or dropped, see "Sowing trace" in its docstring), which
:meth:`~.engine.HusState.sowing_trace` reads.
"""

from __future__ import annotations

import numba
import numpy as np

BOARD_DTYPE = np.int32
PITS = 16  # per player
NUM_ACTIONS = 16
TOTAL_STONES = 48
#: Default sowing limit of one move (see ``docs/rules/hus.md``, "Moves that would never end").
DEFAULT_MAX_SOWN = 100_000

# Layout of the integer packed by `play_pit` (read it with `unpack_move`).
TERMINAL_BIT = 1 << 1
#: bits 2..3: how the move ended (0 last stone in an empty pit, 1 repetition, 2 sowing limit)
END_SHIFT = 2
REPETITION_BIT = 1 << END_SHIFT
LIMIT_BIT = 2 << END_SHIFT
MASK_SHIFT = 4
CAPTURES_SHIFT = 20  # 6 bits: a capture takes at least one of the opponent's 48 stones

# Sowing trace (the optional ``trace`` of `play_pit`): one row per step of the move.
#: step kinds (column `TRACE_KIND`); 0 marks a row that holds no step
TRACE_PICKUP = 1  # the move's first pick-up from the played pit
TRACE_SOW = 2  # one stone dropped from the hand into the next pit
TRACE_CAPTURE = 3  # landing pit and the two opponent pits opposite taken into the hand
TRACE_RELAY = 4  # landing pit taken into the hand (relay sowing)
#: names of the step kinds, by kind number
TRACE_KIND_NAMES = ("", "pickup", "sow", "capture", "relay")
TRACE_KIND = 0  # column: the step's kind
TRACE_PIT = 1  # column: the mover's pit of the step, numbered like actions (0..15)
TRACE_HAND = 2  # column: stones in the mover's hand after the step
TRACE_BOARD = 3  # columns 3..34: the whole board after the step (ring order, as `board`)
TRACE_COLUMNS = TRACE_BOARD + 2 * PITS


@numba.njit(cache=True, nogil=True, inline="always")
def ring_of_action(action: int) -> int:
    """Ring position of action ``action`` (row 1 columns 0..7, then row 2 columns 0..7)."""
    return 15 - action if action < 8 else action - 8


@numba.njit(cache=True, nogil=True, inline="always")
def action_of_ring(ring: int) -> int:
    """The action that names the mover's pit at ring position ``ring`` (the inverse of
    :func:`ring_of_action`)."""
    return ring + 8 if ring < 8 else 15 - ring


@numba.njit(cache=True, nogil=True)
def legal_bits(board: np.ndarray, player: int) -> int:
    """Bit ``a`` set when action ``a`` of ``player`` names a pit with 2 or more stones."""
    base = 16 * player
    mask = 0
    for a in range(16):
        if board[base + ring_of_action(a)] >= 2:
            mask |= 1 << a
    return mask


@numba.njit(cache=True, nogil=True)
def _trace_step(trace: np.ndarray, row: int, kind: int, ring: int, hand: int, board: np.ndarray):
    """Write step ``row`` of a sowing trace (see :func:`play_pit`), unless the trace is full."""
    if row < trace.shape[0]:
        trace[row, TRACE_KIND] = kind
        trace[row, TRACE_PIT] = action_of_ring(ring)
        trace[row, TRACE_HAND] = hand
        trace[row, TRACE_BOARD:] = board


@numba.njit(cache=True, nogil=True)
def _pick_up_and_sow(
    board: np.ndarray, own: int, opp: int, pos: int, trace=None, row: int = 0
) -> tuple[int, int, int]:
    """From a landing in the occupied pit ``pos``: take its stones (with a capture when the
    rules allow one) and sow them on. Returns (new landing pit, stones sown, 1 if captured).

    With a ``trace`` (see :func:`play_pit`) the pick-up is written as step ``row`` and each stone
    sown as the next one: ``1 + stones sown`` steps. ``trace=None`` compiles without them."""
    captured = 0
    if pos < 8 and board[opp + 7 - pos] > 0:
        # Capture: the landing pit plus the opponent's inner and outer pits opposite it.
        stones = board[own + pos] + board[opp + 7 - pos] + board[opp + 8 + pos]
        board[opp + 7 - pos] = 0
        board[opp + 8 + pos] = 0
        captured = 1
    else:
        stones = board[own + pos]  # relay sowing
    board[own + pos] = 0
    sown = stones
    if trace is not None:
        _trace_step(trace, row, TRACE_CAPTURE if captured else TRACE_RELAY, pos, stones, board)
    while stones > 0:
        pos = (pos + 1) & 15
        board[own + pos] += 1
        stones -= 1
        if trace is not None:
            row += 1
            _trace_step(trace, row, TRACE_SOW, pos, stones, board)
    return pos, sown, captured


@numba.njit(cache=True, nogil=True)
def _same_event(a: np.ndarray, pos_a: int, b: np.ndarray, pos_b: int) -> bool:
    if pos_a != pos_b:
        return False
    for i in range(a.shape[0]):  # noqa: SIM110 (numba compiles loops, not generators)
        if a[i] != b[i]:
            return False
    return True


@numba.njit(cache=True, nogil=True)
def play_pit(
    board: np.ndarray, player: int, action: int, max_sown: int, trace=None
) -> tuple[int, int, int]:
    """Play ``action`` (legality checked by the caller) for ``player`` in place.

    Returns ``(packed, stones_sown, relay_steps)``; ``packed`` holds bit 0 the next player,
    bit 1 game over, bit 2 "ended by a repetition", bit 3 "ended by the sowing limit",
    bits 4..19 the next player's legal-action mask and bits 20..25 the number of captures.

    Never-ending moves (``docs/rules/hus.md``). An *event* is a landing of the last stone in an
    occupied pit, described by (whole board, landing pit); it determines the rest of the move.
    The move ends, before the pick-up, at the first event that repeats an earlier one (it would
    never end), or at the first event once ``max_sown`` stones have been sown, whichever comes
    first. Repeats can come hundreds of millions of stones later, so rather than storing every
    event the kernel uses Brent's cycle detection (constant memory): phase 1 walks the events
    and finds the cycle length, phase 2 replays from the first event to find the first repeat.

    Sowing trace. ``trace`` (optional) is an array of :data:`TRACE_COLUMNS` columns, zeros, of
    the board's dtype; ``trace=None`` (the default, what the engines use) compiles a kernel
    without any of the tracing code. Row ``i`` is step ``i`` of the move: its kind
    (:data:`TRACE_PICKUP` first, then :data:`TRACE_SOW` per stone dropped, :data:`TRACE_CAPTURE`
    or :data:`TRACE_RELAY` per landing in an occupied pit that is picked up), the mover's pit
    (numbered like actions), the stones in hand after the step, and the whole board after it.
    The move has ``1 + stones_sown + relay_steps + captures`` steps; the last one's board is the
    board the move leaves. Steps beyond the trace's rows are not written (the move itself is
    played to its end all the same); rows after the move's last step are left zero (phase 1
    walks on past the end of a never-ending move, and the rows it wrote there are cleared).
    """
    own = 16 * player
    opp = 16 * (1 - player)
    pos = ring_of_action(action)
    stones = board[own + pos]
    board[own + pos] = 0
    sown = stones
    row = 0  # trace rows written: the next step's row
    if trace is not None:
        _trace_step(trace, 0, TRACE_PICKUP, pos, stones, board)
        row = 1
    while stones > 0:
        pos = (pos + 1) & 15
        board[own + pos] += 1
        stones -= 1
        if trace is not None:
            _trace_step(trace, row, TRACE_SOW, pos, stones, board)
            row += 1
    relays = 0
    captures = 0
    ended_by = 0  # 0: empty pit, 1: repetition, 2: sowing limit
    if board[own + pos] > 1:
        saved = np.empty((3, board.shape[0]), dtype=board.dtype)
        saved[0] = board  # the first event, for phase 2
        first_pos = pos
        first_sown = sown
        saved[1] = board  # Brent's tortoise
        tortoise_pos = pos
        power = 1
        cycle = 0
        event = 0  # index of the current event (the first is 0)
        limit_event = -1  # first event with `max_sown` stones sown, once reached
        limit_sown = 0
        limit_relays = 0
        limit_captures = 0
        if sown >= max_sown:
            limit_event = 0
            saved[2] = board
            limit_sown = sown
        # Phase 1. Once the limit event k is known, a repeat at an index <= k is certain to be
        # detected by index 3k + 2, so the walk can stop at 4k + 4.
        while limit_event < 0 or event < 4 * limit_event + 4:
            if trace is None:  # the engines' call, exactly as without tracing
                pos, n, c = _pick_up_and_sow(board, own, opp, pos)
            else:
                pos, n, c = _pick_up_and_sow(board, own, opp, pos, trace, row)
                row += 1 + n
            sown += n
            captures += c
            relays += 1 - c
            if board[own + pos] == 1:
                break  # the last stone fell into an empty pit
            event += 1
            if limit_event < 0 and sown >= max_sown:
                limit_event = event
                saved[2] = board
                limit_sown = sown
                limit_relays, limit_captures = relays, captures
            cycle += 1
            if _same_event(board, pos, saved[1], tortoise_pos):
                ended_by = 1
                break
            if cycle == power:
                saved[1] = board
                tortoise_pos = pos
                power *= 2
                cycle = 0
        if ended_by == 1:
            # Phase 2: the hare starts `cycle` events ahead of the tortoise; they meet at the
            # first repeat. The hare's walk is the real move, so it counts the statistics.
            board[:] = saved[0]
            pos = first_pos
            sown = first_sown
            relays = 0
            captures = 0
            repeat_event = cycle
            for _ in range(cycle):
                pos, n, c = _pick_up_and_sow(board, own, opp, pos)
                sown += n
                captures += c
                relays += 1 - c
            tortoise = saved[1]
            tortoise[:] = saved[0]
            tortoise_pos = first_pos
            while not _same_event(board, pos, tortoise, tortoise_pos):
                pos, n, c = _pick_up_and_sow(board, own, opp, pos)
                sown += n
                captures += c
                relays += 1 - c
                tortoise_pos, n, c = _pick_up_and_sow(tortoise, own, opp, tortoise_pos)
                repeat_event += 1
            if limit_event >= 0 and limit_event < repeat_event:
                ended_by = 2
        elif limit_event >= 0:
            ended_by = 2  # ended naturally or never repeated, but only after the limit
        if ended_by == 2:
            board[:] = saved[2]
            sown, relays, captures = limit_sown, limit_relays, limit_captures
        if trace is not None:
            # Phase 1's walk is the move up to its end and, for a never-ending move, beyond.
            for i in range(1 + sown + relays + captures, min(row, trace.shape[0])):
                trace[i] = 0

    next_player = 1 - player
    mask = legal_bits(board, next_player)
    packed = next_player | (mask << MASK_SHIFT) | (captures << CAPTURES_SHIFT)
    if mask == 0:
        packed |= TERMINAL_BIT  # the next player cannot move and loses
    packed |= ended_by << END_SHIFT
    return packed, sown, relays


@numba.njit(cache=True, nogil=True, inline="always")
def unpack_move(packed: int) -> tuple[int, int, int]:
    """``(next player, 1 if the game is over else 0, legal-action mask of the next player)`` of
    the integer :func:`play_pit` returned."""
    return packed & 1, (packed & TERMINAL_BIT) >> 1, (packed >> MASK_SHIFT) & 0xFFFF


@numba.njit(cache=True, nogil=True)
def final_result(board: np.ndarray, to_move: int, player: int) -> int:
    """+1 / -1 for ``player`` of the finished game ``board``, where ``to_move`` is the seat to
    move: that player cannot move and loses (the board's stones only count for the points)."""
    return -1 if to_move == player else 1


@numba.njit(cache=True, nogil=True)
def observe(board: np.ndarray, seat: int, out: np.ndarray) -> None:
    """Write ``seat``'s observation of ``board`` into ``out`` (length 32, ``hus_v0``'s): own row 1
    and row 2 (columns 0..7, = actions 0..15), then the opponent's inner pit facing own inner
    column ``c`` (``16 + c``) and the outer pit behind it (``24 + c``)."""
    own = 16 * seat
    opp = 16 * (1 - seat)
    for c in range(8):
        out[c] = board[own + 15 - c]  # own outer row, column c (ring 15 - c)
        out[8 + c] = board[own + c]  # own inner row, column c (ring c)
        out[16 + c] = board[opp + 7 - c]  # the opponent's inner pit facing own inner column c
        out[24 + c] = board[opp + 8 + c]  # the opponent's outer pit behind it


#: the outcome features of one action (:func:`move_outcomes`), per action
OUTCOME_FEATURES = 4
#: the length of :func:`move_outcomes`' output: every action's features
MOVE_OUTCOMES_WIDTH = NUM_ACTIONS * OUTCOME_FEATURES


@numba.njit(cache=True, nogil=True)
def move_outcomes(board: np.ndarray, player: int, max_sown: int, out: np.ndarray) -> None:
    """What each of ``player``'s 16 actions would do, played with :func:`play_pit` on a copy
    of ``board``: ``out[OUTCOME_FEATURES * a + k]`` is, for action ``a``, k = 0: 1 if legal,
    1: the opponent's stones it captures / 8, 2: 1 if it wins at once (the opponent is left
    without a move), 3: the opponent's legal actions after it / 16; all 0 for an illegal action.
    A network reads these beside the board (``features: hus_moves``): the outcome of a relay
    sowing is a long computation, not a pattern a small MLP sees in the counts."""
    opp = 16 * (1 - player)
    opp_before = 0
    for i in range(16):
        opp_before += board[opp + i]
    legal = legal_bits(board, player)
    scratch = np.empty_like(board)
    for a in range(16):
        row = OUTCOME_FEATURES * a
        if not (legal >> a) & 1:
            for k in range(OUTCOME_FEATURES):
                out[row + k] = 0.0
            continue
        scratch[:] = board
        packed, _, _ = play_pit(scratch, player, a, max_sown)
        opp_after = 0
        for i in range(16):
            opp_after += scratch[opp + i]
        replies = (packed >> MASK_SHIFT) & 0xFFFF
        mobility = 0
        while replies:
            replies &= replies - 1
            mobility += 1
        out[row] = 1.0
        out[row + 1] = (opp_before - opp_after) / 8.0
        out[row + 2] = 1.0 if packed & TERMINAL_BIT else 0.0
        out[row + 3] = mobility / 16.0


@numba.njit(cache=True, nogil=True)
def sides_move_outcomes(
    board: np.ndarray, mover: int, sides: int, max_sown: int, out: np.ndarray
) -> None:
    """:func:`move_outcomes` of ``mover`` into ``out[:MOVE_OUTCOMES_WIDTH]``, and with
    ``sides`` = 2 those of the opponent as if it moved now after them (which of the mover's
    stones it threatens): the layout of the ``hus_moves`` / ``hus_moves_threats`` inputs."""
    for k in range(sides):
        side = out[k * MOVE_OUTCOMES_WIDTH : (k + 1) * MOVE_OUTCOMES_WIDTH]
        move_outcomes(board, mover if k == 0 else 1 - mover, max_sown, side)


@numba.njit(cache=True, nogil=True)
def board_of_observation(obs: np.ndarray, board: np.ndarray) -> None:
    """The board ``observe(board, 0, obs)`` was written from (the inverse of :func:`observe`:
    the observing seat becomes seat 0; the observation holds every pit)."""
    for c in range(8):
        board[15 - c] = obs[c]
        board[c] = obs[8 + c]
        board[16 + 7 - c] = obs[16 + c]
        board[24 + c] = obs[24 + c]


def initial_board() -> np.ndarray:
    """2 stones in every outer pit and in inner columns 4..7 (ring 4..7), for both players."""
    side = np.zeros(PITS, dtype=BOARD_DTYPE)
    side[8:16] = 2  # row 1
    side[4:8] = 2  # row 2, the four right-hand pits
    return np.concatenate([side, side])
