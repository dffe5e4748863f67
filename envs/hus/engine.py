"""Hus (Philos, a 4 x 8 mancala) rules engine: the rules and nothing else.

Rules as the project implements them: ``docs/rules/hus.md`` (from ``shared/spec/hus.md`` and the
Philos manual).

Each player owns 16 pits in two rows, and sows only into them, round a ring. The engine stores
each player's pits in *ring order*, so that sowing always goes to ``ring + 1 (mod 16)``::

    ring  0 .. 7   = row 2 (inner), columns 0 .. 7 from the owner's left
    ring  8 .. 15  = row 1 (outer), columns 7 .. 0 (ring 8 is column 7, ring 15 is column 0)

The board is one flat array of 32 counts: ``board[16 * player + ring]``. Actions name pits from
the mover's view: ``0..7`` = row 1 (outer) columns 0..7, ``8..15`` = row 2 (inner) columns 0..7.
The mover's inner pit at column ``c`` (ring ``c``) faces the opponent's inner pit at ring
``7 - c`` and the opponent's outer pit behind it at ring ``8 + c``.

The move kernel :func:`play_pit` is the only implementation of a move (single games call it
directly, the batched engine in a compiled loop).
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import NamedTuple

import numba
import numpy as np
from spieltisch.envs._common.errors import GameOverError, IllegalActionError, PositionFormatError
from spieltisch.envs._common.jit import direct_entry
from spieltisch.envs._common.notation import action_tuples, check_action, mask_from_bits
from spieltisch.envs._common.state import EngineState

BOARD_DTYPE = np.int32
PITS = 16  # per player
NUM_ACTIONS = 16
TOTAL_STONES = 48
#: Default sowing limit of one move (see ``docs/rules/hus.md``, "Moves that would never end").
DEFAULT_MAX_SOWN = 100_000

# Layout of the integer packed by `play_pit`.
_TERMINAL_BIT = 1 << 1
_REPETITION_BIT = 1 << 2
_LIMIT_BIT = 1 << 3
_MASK_SHIFT = 4
_CAPTURES_SHIFT = 20  # 6 bits: a capture takes at least one of the opponent's 48 stones


@numba.njit(cache=True, nogil=True, inline="always")
def ring_of_action(action: int) -> int:
    """Ring position of action ``action`` (row 1 columns 0..7, then row 2 columns 0..7)."""
    return 15 - action if action < 8 else action - 8


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
def _pick_up_and_sow(board: np.ndarray, own: int, opp: int, pos: int) -> tuple[int, int, int]:
    """From a landing in the occupied pit ``pos``: take its stones (with a capture when the
    rules allow one) and sow them on. Returns (new landing pit, stones sown, 1 if captured)."""
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
    while stones > 0:
        pos = (pos + 1) & 15
        board[own + pos] += 1
        stones -= 1
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
def play_pit(board: np.ndarray, player: int, action: int, max_sown: int) -> tuple[int, int, int]:
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
    """
    own = 16 * player
    opp = 16 * (1 - player)
    pos = ring_of_action(action)
    stones = board[own + pos]
    board[own + pos] = 0
    sown = stones
    while stones > 0:
        pos = (pos + 1) & 15
        board[own + pos] += 1
        stones -= 1
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
            pos, n, c = _pick_up_and_sow(board, own, opp, pos)
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

    next_player = 1 - player
    mask = legal_bits(board, next_player)
    packed = next_player | (mask << 4) | (captures << 20)
    if mask == 0:
        packed |= 2  # the next player cannot move and loses
    if ended_by == 1:
        packed |= 4
    elif ended_by == 2:
        packed |= 8
    return packed, sown, relays


class MoveStats(NamedTuple):
    """What happened in one move."""

    stones_sown: int
    relay_steps: int
    captures: int
    ended_by: str  # "empty pit" (normal), "repetition" or "limit" (never-ending-move rule)

    @property
    def never_ending(self) -> bool:
        return self.ended_by != "empty pit"


def unpack_stats(packed: int, sown: int, relays: int) -> MoveStats:
    if packed & _REPETITION_BIT:
        ended_by = "repetition"
    elif packed & _LIMIT_BIT:
        ended_by = "limit"
    else:
        ended_by = "empty pit"
    return MoveStats(sown, relays, (packed >> _CAPTURES_SHIFT) & 63, ended_by)


@functools.cache
def _compiled_play_pit() -> Callable:
    return direct_entry(play_pit, np.zeros(32, BOARD_DTYPE), 0, 0, DEFAULT_MAX_SOWN)


def observation_index(seat: int) -> np.ndarray:
    """Board indices of ``seat``'s view, in the order of ``hus_v0``'s observation: own row 1
    and row 2 (columns 0..7, = actions 0..15), then the opponent's inner pit facing own inner
    column ``c`` and the outer pit behind it."""
    own, opp = 16 * seat, 16 * (1 - seat)
    columns = np.arange(8)
    return np.concatenate(
        [
            own + 15 - columns,  # own outer row, columns 0..7 (ring 15..8)
            own + columns,  # own inner row, columns 0..7 (ring 0..7)
            opp + 7 - columns,  # opponent's inner pit facing own inner column c
            opp + 8 + columns,  # the opponent's outer pit behind it
        ]
    )


def initial_board() -> np.ndarray:
    """2 stones in every outer pit and in inner columns 4..7 (ring 4..7), for both players."""
    side = np.zeros(PITS, dtype=BOARD_DTYPE)
    side[8:16] = 2  # row 1
    side[4:8] = 2  # row 2, the four right-hand pits
    return np.concatenate([side, side])


@dataclass(frozen=True)
class HusGame:
    """Hus rules. ``max_sown``: the sowing limit of one move (the never-ending-move rule)."""

    max_sown: int = DEFAULT_MAX_SOWN
    _action_tuples: tuple = field(init=False, repr=False, compare=False)
    _play: object = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        if isinstance(self.max_sown, bool) or not isinstance(self.max_sown, int | np.integer):
            raise TypeError(f"max_sown must be an integer, got {self.max_sown!r}")
        if not 16 <= self.max_sown <= 10**12:
            raise ValueError(f"max_sown must be between 16 and 10**12, got {self.max_sown}")
        object.__setattr__(self, "max_sown", int(self.max_sown))
        object.__setattr__(self, "_action_tuples", action_tuples(NUM_ACTIONS))
        object.__setattr__(self, "_play", _compiled_play_pit())

    def __reduce__(self) -> tuple:
        return (HusGame, (self.max_sown,))

    num_actions = NUM_ACTIONS
    total_stones = TOTAL_STONES

    def new_initial_state(self, first_player: int = 0) -> HusState:
        if first_player not in (0, 1):
            raise ValueError(f"first_player must be 0 or 1, got {first_player!r}")
        return HusState(self, initial_board(), first_player)

    def state_from_text(self, text: str) -> HusState:
        """Read the one-line notation of :meth:`HusState.to_text` or the diagram of ``str()``."""
        board, player = parse_position(text)
        return HusState(self, board, player)


class HusState(EngineState):
    """One Hus position: the board (ring order, see the module docstring) and the mover."""

    __slots__ = ("_bits", "board", "current_player", "game", "last_move", "move_number")

    def __init__(self, game: HusGame, board: np.ndarray, current_player: int) -> None:
        self.game = game
        self.board = np.ascontiguousarray(board, dtype=BOARD_DTYPE)
        self.current_player = current_player
        self.move_number = 0
        self.last_move: MoveStats | None = None
        bits = legal_bits(self.board, current_player)
        self._bits = (bits << _MASK_SHIFT) | (0 if bits else _TERMINAL_BIT)

    # --- queries -------------------------------------------------------------------------------
    def is_terminal(self) -> bool:
        return self._bits & 2 != 0  # _TERMINAL_BIT

    def legal_actions(self) -> tuple[int, ...]:
        """Pits with at least 2 stones (0..7 outer row, 8..15 inner row, from the mover's left)."""
        return self.game._action_tuples[(self._bits >> _MASK_SHIFT) & 0xFFFF]

    def legal_mask(self) -> np.ndarray:
        return mask_from_bits((self._bits >> _MASK_SHIFT) & 0xFFFF, NUM_ACTIONS)

    def stones(self, player: int) -> int:
        """Stones on ``player``'s 16 pits."""
        return int(self.board[16 * player : 16 * player + 16].sum())

    def pits_by_action(self, player: int) -> np.ndarray:
        """``player``'s 16 pits in action order (row 1 columns 0..7, row 2 columns 0..7)."""
        side = self.board[16 * player : 16 * player + 16]
        return np.concatenate([side[15:7:-1], side[0:8]])

    def winner(self) -> int | None:
        """The winner once the game is over: the player who made the last move."""
        return 1 - self.current_player if self.is_terminal() else None

    def points(self) -> int:
        """The winner's points: stones on their side, doubled if the loser has none left."""
        w = self.winner()
        if w is None:
            return 0
        points = self.stones(w)
        return 2 * points if self.stones(1 - w) == 0 else points

    def returns(self) -> tuple[float, float]:
        w = self.winner()
        if w is None:
            return (0.0, 0.0)
        return (1.0, -1.0) if w == 0 else (-1.0, 1.0)

    # --- moves ---------------------------------------------------------------------------------
    def apply(self, action: int) -> MoveStats:
        """Play ``action`` for the player to move; returns the move's statistics.

        Illegal input raises and changes nothing.
        """
        bits = self._bits
        if type(action) is not int or action < 0 or not (bits >> (_MASK_SHIFT + action)) & 1:
            action = self._validated(action)
        game = self.game
        packed, sown, relays = game._play(self.board, self.current_player, action, game.max_sown)
        self.current_player = packed & 1
        self._bits = packed & ((1 << _CAPTURES_SHIFT) - 1)
        self.move_number += 1
        self.last_move = unpack_stats(packed, sown, relays)
        return self.last_move

    def _validated(self, action: object) -> int:
        action = check_action(action, NUM_ACTIONS)
        if self.is_terminal():
            raise GameOverError("the game is over; no further moves can be played")
        if (self._bits >> (_MASK_SHIFT + action)) & 1:
            return action
        row, col = (1, action) if action < 8 else (2, action - 8)
        count = int(self.board[16 * self.current_player + ring_of_action(action)])
        raise IllegalActionError(
            f"pit {action} (row {row}, column {col}) holds {count} stone(s); only pits with "
            f"2 or more can be played; legal pits: {list(self.legal_actions())}"
        )

    def clone(self) -> HusState:
        c = HusState.__new__(HusState)
        c.game = self.game
        c.board = self.board.copy()
        c.current_player = self.current_player
        c.move_number = self.move_number
        c.last_move = self.last_move
        c._bits = self._bits
        return c

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, HusState):
            return NotImplemented
        return self.current_player == other.current_player and np.array_equal(
            self.board, other.board
        )

    def __hash__(self) -> int:
        return hash((self.current_player, self.board.tobytes()))

    # --- text ----------------------------------------------------------------------------------
    def to_text(self) -> str:
        """One-line notation, e.g. the start:
        ``"2,2,2,2,2,2,2,2/0,0,0,0,2,2,2,2 2,2,2,2,2,2,2,2/0,0,0,0,2,2,2,2 0"``.

        For each seat: row 1 (outer) columns 0..7 ``/`` row 2 (inner) columns 0..7, from that
        seat's own left; then the player to move.
        """
        sides = []
        for p in (0, 1):
            pits = self.pits_by_action(p).tolist()
            sides.append(",".join(map(str, pits[:8])) + "/" + ",".join(map(str, pits[8:])))
        return f"{sides[0]} {sides[1]} {self.current_player}"

    def __str__(self) -> str:
        return render_text(self)

    def __repr__(self) -> str:
        return f"HusState({self.to_text()!r})"


def board_from_rows(rows: dict[tuple[int, int], list[int]]) -> np.ndarray:
    """The engine board from ``{(seat, row): [column 0..7 from that seat's left]}``."""
    board = np.zeros(32, dtype=BOARD_DTYPE)
    for (seat, row), values in rows.items():
        for col, v in enumerate(values):
            ring = 15 - col if row == 1 else col
            board[16 * seat + ring] = v
    return board


def _numbers(text: str, what: str, count: int) -> list[int]:
    cells = [c for c in re.split(r"[,\s]+", text.strip()) if c]
    if len(cells) != count:
        raise PositionFormatError(f"{what}: expected {count} numbers, got {len(cells)} in {text!r}")
    for c in cells:
        if not c.isdigit():
            raise PositionFormatError(f"{what}: {c!r} is not a non-negative whole number")
    return [int(c) for c in cells]


def parse_position(text: str) -> tuple[np.ndarray, int]:
    """Parse the one-line notation or the four-row diagram; raises PositionFormatError."""
    if not isinstance(text, str):
        raise PositionFormatError(f"a Hus position must be a string, got {type(text).__name__}")
    lines = [ln for ln in text.strip().splitlines() if ln.strip()]
    if len(lines) > 1:
        return _parse_diagram(lines)
    fields = text.split()
    if len(fields) != 3:
        raise PositionFormatError(f"expected 'ROW1/ROW2 ROW1/ROW2 PLAYER', got {text!r}")
    rows = {}
    for seat, side in enumerate(fields[:2]):
        if side.count("/") != 1:
            raise PositionFormatError(f"seat {seat}: expected 'row 1/row 2', got {side!r}")
        outer, inner = side.split("/")
        rows[(seat, 1)] = _numbers(outer, f"seat {seat} row 1", 8)
        rows[(seat, 2)] = _numbers(inner, f"seat {seat} row 2", 8)
    if fields[2] not in ("0", "1"):
        raise PositionFormatError(f"player to move must be 0 or 1, got {fields[2]!r}")
    return board_from_rows(rows), int(fields[2])


def _parse_diagram(lines: list[str]) -> tuple[np.ndarray, int]:
    """The diagram of :func:`render_text`: four rows ``label | 8 numbers`` and a mover line."""
    rows_text = [ln.split("|", 1)[1] for ln in lines if "|" in ln]
    if len(rows_text) != 4:
        raise PositionFormatError(
            f"a Hus diagram has 4 board rows written 'label | 8 numbers', found {len(rows_text)}"
        )
    names = ("seat 1 row 1", "seat 1 row 2", "seat 0 row 2", "seat 0 row 1")
    r = [_numbers(t, n, 8) for t, n in zip(rows_text, names, strict=True)]
    # Seat 1's rows are drawn from seat 0's view: its column 0 is on the right.
    rows = {(1, 1): r[0][::-1], (1, 2): r[1][::-1], (0, 2): r[2], (0, 1): r[3]}
    movers = [m for ln in lines for m in re.findall(r"seat ([01]) to move", ln)]
    if len(movers) != 1:
        raise PositionFormatError("a Hus diagram needs one line 'seat N to move' (N = 0 or 1)")
    return board_from_rows(rows), int(movers[0])


def render_text(state: HusState) -> str:
    """The board as seen from above, seat 0 at the bottom (so seat 1's rows run right to left).

    ::

        seat 1 row 1 |  2  2  2  2  2  2  2  2
        seat 1 row 2 |  2  2  2  2  0  0  0  0
        seat 0 row 2 |  0  0  0  0  2  2  2  2
        seat 0 row 1 |  2  2  2  2  2  2  2  2
        seat 0 to move
    """
    p0, p1 = state.pits_by_action(0), state.pits_by_action(1)

    def row(values: np.ndarray) -> str:
        return " ".join(f"{int(v):>2}" for v in values)

    lines = [
        f"seat 1 row 1 | {row(p1[7::-1])}",
        f"seat 1 row 2 | {row(p1[15:7:-1])}",
        f"seat 0 row 2 | {row(p0[8:16])}",
        f"seat 0 row 1 | {row(p0[0:8])}",
    ]
    if state.is_terminal():
        w = state.winner()
        lines.append(f"game over: seat {w} wins with {state.points()} points")
    else:
        lines.append(f"seat {state.current_player} to move")
    return "\n".join(lines)
