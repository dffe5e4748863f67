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
from spieltisch.envs.backgammon import rules as k
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


# --- the differential check --------------------------------------------------------------------
def random_positions(
    count: int, seed: int, game: BackgammonGame | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """``count`` positions at the start of a turn, ``(boards (count, 52), seats on turn)``, from
    random games (uniform over the distinct legal plays): every turn start of each game, in
    order, until there are enough."""
    game = game or BackgammonGame()
    rng = np.random.default_rng(seed)
    boards, turns = [], []
    while len(boards) < count:
        state = game.new_initial_state()
        while not state.is_terminal():
            if state.is_chance_node():
                boards.append(state.board.copy())
                turns.append(state.turn)
                state.roll_dice(rng)
            state.apply_play(int(rng.integers(state.num_plays())))
    return np.array(boards[:count]), np.array(turns[:count], dtype=np.int64)


def compare_with_gnubg(boards: np.ndarray, turns: np.ndarray, chunk: int = 5000) -> dict:
    """For every position and each of the 21 rolls, check that our legal plays lead to exactly
    the positions of ``gnubg_nn.moves`` (as sets, and without duplicates on either side).
    Returns counts; raises AssertionError naming the first mismatch.

    Both sides become sorted, concatenated 20-letter keys, so a pair costs one comparison."""
    g = gnubg()
    rolls = np.array(ROLLS, dtype=np.int64)
    stats = {"positions": 0, "pairs": 0, "plays": 0, "no_move_pairs": 0, "max_plays": 0}
    for start in range(0, len(boards), chunk):
        part_boards, part_turns = boards[start : start + chunk], turns[start : start + chunk]
        offsets, keys = all_play_keys(part_boards, part_turns, rolls)
        letters = keys_to_letters(keys)
        for p in range(len(part_boards)):
            turn = int(part_turns[p])
            board = board_to_gnubg(part_boards[p], turn)
            for r, (d1, d2) in enumerate(ROLLS):
                first, last = offsets[p * 21 + r], offsets[p * 21 + r + 1]
                theirs = g.moves(board, d1, d2)
                if "".join(sorted(theirs)).encode() != letters[20 * first : 20 * last]:
                    _mismatch(part_boards[p], turn, (d1, d2), keys[first:last], theirs)
                stats["pairs"] += 1
                stats["plays"] += int(last - first)
                stats["no_move_pairs"] += int(last == first)
                stats["max_plays"] = max(stats["max_plays"], int(last - first))
        stats["positions"] += len(part_boards)
    return stats


def _mismatch(board: np.ndarray, turn: int, roll: tuple[int, int], ours: np.ndarray, theirs):
    from spieltisch.envs.backgammon.notation import sides_to_position_id

    pid = sides_to_position_id(
        board[k.SIDE * (1 - turn) : k.SIDE * (1 - turn) + 25],
        board[k.SIDE * turn : k.SIDE * turn + 25],
    )
    state = BackgammonGame().state_from_position_id(pid, roll, turn)
    mine = [bytes_to_key(row.tobytes()) for row in ours]
    raise AssertionError(
        f"plays differ from gnubg for {state.to_text()}: {len(mine)} ours, {len(theirs)} "
        f"gnubg's; only ours: {sorted(set(mine) - set(theirs))[:5]}, only gnubg's: "
        f"{sorted(set(theirs) - set(mine))[:5]}, duplicates: {len(mine) - len(set(mine))}"
        f"\n{state}"
    )


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
