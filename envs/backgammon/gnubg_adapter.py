"""GNU Backgammon's engine (the ``gnubg-nn`` package, ``import gnubg_nn``) next to ours.

Used by the tests (the move generator as the reference) and by the evaluation harness (a 0-ply
gnubg opponent). ``gnubg-nn`` is an optional dependency (extra ``gnubg``); importing this module
works without it, calling into gnubg then raises a clear ImportError.

Board conventions. gnubg passes a position as two lists of 25 counts, ``[not on roll, on
roll]`` (gnubg's ``anBoard[0]``, ``anBoard[1]``), each from that player's own view: index
``i`` = point ``i + 1``, index 24 = the bar; borne-off checkers are the rest of 15. Move lists
name points 1..24 from the mover's view, 25 = the bar, 0 = off. ``gnubg_nn.moves(board, d1,
d2)`` returns the distinct positions after the legal plays as 20-letter keys (the 10-byte
position key, two letters ``A``-``P`` per byte, high nibble first), with the mover still as
``anBoard[1]``.
"""

from __future__ import annotations

import importlib
from typing import Any

import numba
import numpy as np
from spieltisch.envs.backgammon import kernels as k
from spieltisch.envs.backgammon.engine import BackgammonGame, BackgammonState

_KEY_TO_HEX = str.maketrans("ABCDEFGHIJKLMNOP", "0123456789abcdef")
_HEX_TO_KEY = str.maketrans("0123456789abcdef", "ABCDEFGHIJKLMNOP")

#: the 21 distinct rolls (high die first)
ROLLS = tuple((a, b) for a in range(1, 7) for b in range(1, a + 1))


def gnubg() -> Any:
    """The ``gnubg_nn`` module; a clear ImportError if the package is missing."""
    try:
        return importlib.import_module("gnubg_nn")
    except ImportError as err:  # pragma: no cover - installed in the test environment
        raise ImportError(
            "GNU Backgammon's engine is not installed: pip install 'spieltisch[gnubg]' "
            "(the gnubg-nn package)"
        ) from err


# --- boards -------------------------------------------------------------------------------------
def to_gnubg_board(state: BackgammonState, on_roll: int | None = None) -> list[list[int]]:
    """``state``'s board as gnubg's ``[not on roll, on roll]`` lists, with seat ``on_roll``
    (default: the seat on turn) on roll."""
    seat = state.turn if on_roll is None else on_roll
    return board_to_gnubg(state.s, seat)


def board_to_gnubg(board: np.ndarray, on_roll: int) -> list[list[int]]:
    """An engine board (52 cells, or a whole state vector) as gnubg's ``[not on roll, on
    roll]`` lists."""
    other = k.SIDE * (1 - on_roll)
    own = k.SIDE * on_roll
    return [board[other : other + 25].tolist(), board[own : own + 25].tolist()]


def from_gnubg_board(
    board: Any,
    game: BackgammonGame | None = None,
    seat: int = 0,
    dice: tuple[int, int] | None = None,
) -> BackgammonState:
    """A state from a gnubg board (``[not on roll, on roll]``), ``seat`` on roll, with
    ``dice`` to play (None: to roll). Checks the position like any other input."""
    from spieltisch.envs.backgammon.notation import sides_to_position_id

    game = game or BackgammonGame()
    not_on_roll, on_roll = (np.asarray(side, dtype=np.int64) for side in board)
    if not_on_roll.shape != (25,) or on_roll.shape != (25,):
        raise ValueError("a gnubg board is two lists of 25 counts")
    if (
        (not_on_roll < 0).any()
        or (on_roll < 0).any()
        or max(not_on_roll.sum(), on_roll.sum()) > k.CHECKERS
    ):
        raise ValueError("a gnubg board has 0..15 checkers per side and no negative counts")
    pid = sides_to_position_id(not_on_roll, on_roll)
    return game.state_from_position_id(pid, dice, seat=seat)


def key_to_bytes(key: str) -> bytes:
    """A gnubg 20-letter position key as its 10 bytes."""
    return bytes.fromhex(key.translate(_KEY_TO_HEX))


def bytes_to_key(raw: bytes) -> str:
    """10 key bytes as gnubg's 20-letter key."""
    return raw.hex().translate(_HEX_TO_KEY)


def keys_to_array(keys: tuple[str, ...] | list[str]) -> np.ndarray:
    """Many gnubg keys as an ``(n, 10)`` uint8 array (one C call for all of them)."""
    if not keys:
        return np.zeros((0, 10), dtype=np.uint8)
    return np.frombuffer(key_to_bytes("".join(keys)), dtype=np.uint8).reshape(-1, 10)


# --- legal plays ----------------------------------------------------------------------------------
def gnubg_play_keys(state: BackgammonState) -> np.ndarray:
    """gnubg's positions after the legal plays of ``state``'s roll, ``(n, 10)`` key bytes in
    gnubg's order (n = 0 when the roll cannot be played). ``state`` must be at the start of its
    turn (gnubg plays a whole roll of two dice)."""
    d1, d2 = _whole_roll(state)
    return keys_to_array(gnubg().moves(to_gnubg_board(state), d1, d2))


def play_keys(state: BackgammonState) -> np.ndarray:
    """Our positions after the legal plays of ``state``, as gnubg keys ``(n, 10)`` (mover as
    gnubg's ``anBoard[1]``, as :func:`gnubg_play_keys`); no rows when the roll cannot be played
    (gnubg lists nothing then, where we list the empty play)."""
    boards = state.play_boards()
    if state.s[k.M_MAXDEPTH] == 0:
        return np.zeros((0, 10), dtype=np.uint8)
    out = np.zeros((len(boards), 10), dtype=np.uint8)
    _keys_of(boards, state.turn, out)
    return out


@numba.njit(cache=True, nogil=True)
def _keys_of(boards, turn, out):
    for i in range(boards.shape[0]):
        k.gnubg_key(boards[i], turn, out[i])


def keys_to_letters(keys: np.ndarray) -> bytes:
    """``(n, 10)`` key bytes as gnubg's 20-letter keys, concatenated (ASCII)."""
    letters = np.empty((len(keys), 20), dtype=np.uint8)
    letters[:, 0::2] = 65 + (keys >> 4)
    letters[:, 1::2] = 65 + (keys & 15)
    return letters.tobytes()


@numba.njit(cache=True, nogil=True)
def _sort_keys(keys, first, last):
    """Sort rows ``first:last`` of ``keys`` in byte order (insertion sort: a few rows)."""
    for i in range(first + 1, last):
        j = i
        while j > first:
            greater = False
            for b in range(10):
                if keys[j - 1, b] != keys[j, b]:
                    greater = keys[j - 1, b] > keys[j, b]
                    break
            if not greater:
                break
            for b in range(10):
                tmp = keys[j - 1, b]
                keys[j - 1, b] = keys[j, b]
                keys[j, b] = tmp
            j -= 1


@numba.njit(cache=True, nogil=True)
def all_play_keys(boards, turns, rolls):
    """For every position ``boards[p]`` (seat ``turns[p]`` on turn) and roll ``rolls[r]``: the
    gnubg keys of our legal plays, sorted in byte order (as gnubg's sorted key strings).
    Returns ``(offsets, keys)``: the keys of pair ``(p, r)`` are ``keys[offsets[p * R + r] :
    offsets[p * R + r + 1]]`` (R = number of rolls), none when the roll cannot be played.
    Used by the differential test against gnubg."""
    ws_boards = np.zeros((k.MAX_PLAYS, k.BOARD_SIZE), dtype=np.int8)
    ws = np.zeros(k.WS_SIZE, dtype=np.int64)
    ws[k._W_TABLE : k._W_SCRATCH] = -1  # as new_workspace() (not callable from here)
    num_pos, num_rolls = boards.shape[0], rolls.shape[0]
    offsets = np.zeros(num_pos * num_rolls + 1, dtype=np.int64)
    cap = 1 << 16
    keys = np.zeros((cap, 10), dtype=np.uint8)
    s = np.zeros(k.STATE_SIZE, dtype=np.int32)
    total = 0
    for p in range(num_pos):
        for r in range(num_rolls):
            s[:] = 0
            s[: k.BOARD_SIZE] = boards[p]
            s[k.M_TURN] = turns[p]
            s[k.M_PHASE] = k.PH_ROLL
            k.set_dice(s, rolls[r, 0], rolls[r, 1], ws)
            n = s[k.M_NPLAYS] if s[k.M_MAXDEPTH] > 0 else 0
            k.play_boards(s, ws, ws_boards)
            if total + n > cap:
                cap = max(2 * cap, total + n)
                grown = np.zeros((cap, 10), dtype=np.uint8)
                grown[:total] = keys[:total]
                keys = grown
            for i in range(n):
                k.gnubg_key(ws_boards[i], turns[p], keys[total + i])
            _sort_keys(keys, total, total + n)
            total += n
            offsets[p * num_rolls + r + 1] = total
    return offsets, keys[:total]


def _whole_roll(state: BackgammonState) -> tuple[int, int]:
    rolled = state.rolled()
    dice = state.dice()
    if state.phase != k.PH_MOVE or rolled is None:
        raise ValueError("gnubg plays a whole roll: the state must have dice to play")
    expected = (rolled[0],) * 4 if rolled[0] == rolled[1] else tuple(sorted(rolled, reverse=True))
    if dice != expected:
        raise ValueError(
            f"gnubg plays a whole roll: dice left {dice} are not the whole roll {rolled}"
        )
    return rolled


# --- a 0-ply gnubg opponent --------------------------------------------------------------------
def best_play_index(state: BackgammonState, plies: int = 0) -> int:
    """Index (into :meth:`BackgammonState.legal_plays`) of gnubg's best play for ``state``'s
    roll at ``plies`` (0 = the plain neural-net evaluation, gnubg's fastest level)."""
    d1, d2 = _whole_roll(state)
    if state.s[k.M_MAXDEPTH] == 0:
        return 0
    g = gnubg()
    _moves, key = g.best_move(to_gnubg_board(state), d1, d2, plies, b"X", 1)
    # gnubg returns the position after the move from the opponent's view (the mover first).
    target = np.frombuffer(key_to_bytes(key), dtype=np.uint8)
    boards = state.play_boards()
    mine = np.zeros((len(boards), 10), dtype=np.uint8)
    _keys_of(boards, 1 - state.turn, mine)
    hits = np.flatnonzero((mine == target).all(axis=1))
    if hits.size != 1:  # pragma: no cover - would be a move-generation mismatch
        raise RuntimeError(f"gnubg's best play {key} is not one of our legal plays")
    return int(hits[0])


def best_actions(state: BackgammonState, plies: int = 0) -> tuple[int, ...]:
    """The checker-move actions (in order) of gnubg's best play; ``(PASS,)`` when the roll
    cannot be played. Feed them one per env step."""
    index = best_play_index(state, plies)
    return state.play_actions(index) or (k.PASS,)


def evaluate(state: BackgammonState, on_roll: int | None = None, plies: int = 0) -> tuple:
    """gnubg's cubeless probabilities ``(win, win gammon, win backgammon, lose gammon, lose
    backgammon)`` for seat ``on_roll`` (default: the seat on turn) about to roll."""
    return tuple(gnubg().probabilities(to_gnubg_board(state, on_roll), plies))


def equity(state: BackgammonState, on_roll: int | None = None, plies: int = 0) -> float:
    """Cubeless equity (expected points) of :func:`evaluate`."""
    w, wg, wbg, lg, lbg = evaluate(state, on_roll, plies)
    return float(2 * w - 1 + wg - lg + wbg - lbg)
