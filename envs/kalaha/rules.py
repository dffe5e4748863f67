"""The Kalaha rules as numba kernels over one flat board: every rule of ``docs/rules/kalaha.md`` is
implemented once, here. The single-game state (:mod:`.engine`), the batched engine
(:mod:`.batch`), the env (:mod:`.env`) and the search agents call these kernels; nothing here
imports an RL library or draws anything.

Board layout (one flat integer array of length ``2 * pits + 2``)::

    index:  0 .. pits-1      pits    pits+1 .. 2*pits    2*pits+1
            seat 0's pits    store 0 seat 1's pits      store 1

Each seat's pits are numbered from that seat's own left, which is also the sowing order
(counter-clockwise), so sowing always goes to ``index + 1`` (wrapping, skipping the opponent's
store). Pit ``i`` of seat 0 faces index ``2 * pits - i``; the same formula holds for seat 1.

The move kernel :func:`sow` is the *only* implementation of a move, :func:`observe` the only one
of a seat's observation (``kalaha_v0``'s), :func:`final_result` the only one of who won.
"""

from __future__ import annotations

import numba
import numpy as np

BOARD_DTYPE = np.int32

# Layout of the integer packed by `sow` (read it with `unpack_move`): bit 0 the player to move
# next, bit 1 game over, bits 2.. the legal-pit mask of the player to move next.
TERMINAL_BIT = 1 << 1
MASK_SHIFT = 2


@numba.njit(cache=True, nogil=True)
def sow(board: np.ndarray, player: int, pit: int, empty_capture: bool) -> int:
    """Play ``pit`` (0-based, from the mover's left) for ``player`` in place.

    Returns a packed integer: bit 0 = player to move next, bit 1 = game over, bits 2.. = legal-pit
    mask of the player to move next (0 when the game is over). The caller checks legality.
    """
    size = board.shape[0]
    pits = (size - 2) // 2
    own_first = player * (pits + 1)
    own_store = own_first + pits
    opp_store = (1 - player) * (pits + 1) + pits

    pos = own_first + pit
    stones = board[pos]
    board[pos] = 0
    while stones > 0:
        pos += 1
        if pos == size:
            pos = 0
        if pos == opp_store:
            continue
        board[pos] += 1
        stones -= 1

    next_player = 1 - player
    if pos == own_store:
        next_player = player  # last stone in own store: move again
    elif own_first <= pos < own_store and board[pos] == 1:
        opposite = 2 * pits - pos
        if board[opposite] > 0 or empty_capture:
            board[own_store] += board[opposite] + 1
            board[opposite] = 0
            board[pos] = 0

    # End of game: one side's pits are all empty; everybody sweeps their own pits to their store.
    side0 = 0
    side1 = 0
    for i in range(pits):
        side0 += board[i]
        side1 += board[pits + 1 + i]
    if side0 == 0 or side1 == 0:
        for i in range(pits):
            board[i] = 0
            board[pits + 1 + i] = 0
        board[pits] += side0
        board[2 * pits + 1] += side1
        return next_player | TERMINAL_BIT

    mask = 0
    first = next_player * (pits + 1)
    for i in range(pits):
        if board[first + i] > 0:
            mask |= 1 << i
    return next_player | (mask << MASK_SHIFT)


@numba.njit(cache=True, nogil=True, inline="always")
def unpack_move(packed: int) -> tuple[int, int, int]:
    """``(next player, 1 if the game is over else 0, legal-pit mask of the next player)`` of
    the integer :func:`sow` returned."""
    return packed & 1, (packed & TERMINAL_BIT) >> 1, packed >> MASK_SHIFT


@numba.njit(cache=True, nogil=True)
def legal_bits(board: np.ndarray, player: int) -> int:
    """Bit ``i`` set when pit ``i`` of ``player`` holds stones."""
    pits = (board.shape[0] - 2) // 2
    first = player * (pits + 1)
    mask = 0
    for i in range(pits):
        if board[first + i] > 0:
            mask |= 1 << i
    return mask


def one_side_empty(board: np.ndarray) -> bool:
    """Whether a Kalaha game is over on ``board``: one side's pits are all empty (as
    :func:`sow` finds after a move, before its sweep)."""
    return not legal_bits(board, 0) or not legal_bits(board, 1)


@numba.njit(cache=True, nogil=True)
def store_difference(board: np.ndarray, player: int) -> int:
    """Stones in ``player``'s store minus the opponent's (the final margin once it is over)."""
    pits = (board.shape[0] - 2) // 2
    return board[player * (pits + 1) + pits] - board[(1 - player) * (pits + 1) + pits]


@numba.njit(cache=True, nogil=True)
def final_result(board: np.ndarray, to_move: int, player: int) -> int:
    """+1 / -1 / 0 for ``player`` of the finished game ``board``: the larger store wins, equal
    stores are a draw (``to_move``, who would move next, plays no part in Kalaha)."""
    margin = store_difference(board, player)
    if margin > 0:
        return 1
    if margin < 0:
        return -1
    return 0


@numba.njit(cache=True, nogil=True)
def observe(board: np.ndarray, seat: int, out: np.ndarray) -> None:
    """Write ``seat``'s observation of ``board`` into ``out`` (length ``2 * pits + 2``): the board
    turned by one side, so the viewer's pits and store come first, then the opponent's (each
    side from its owner's left, as ``kalaha_v0`` documents)."""
    size = board.shape[0]
    shift = seat * (size // 2)  # = seat * (pits + 1)
    for i in range(size):
        j = i + shift
        if j >= size:
            j -= size
        out[i] = board[j]
