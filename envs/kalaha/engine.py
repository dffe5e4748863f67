"""Kalaha (Kalah) rules engine: the rules and nothing else.

Rules as the project implements them: ``docs/rules/kalaha.md`` (from ``shared/spec/kalaha.md`` and
the Goki manual).

Board layout (one flat integer array of length ``2 * pits + 2``)::

    index:  0 .. pits-1      pits    pits+1 .. 2*pits    2*pits+1
            seat 0's pits    store 0 seat 1's pits      store 1

Each seat's pits are numbered from that seat's own left, which is also the sowing order
(counter-clockwise), so sowing always goes to ``index + 1`` (wrapping, skipping the opponent's
store). Pit ``i`` of seat 0 faces index ``2 * pits - i``; the same formula holds for seat 1.

The move kernel :func:`sow` is compiled with numba and is the *only* implementation of a move:
:class:`KalahaState` calls it for one game and :mod:`spieltisch.envs.kalaha.batch` calls it in a
compiled loop for many games.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable
from dataclasses import dataclass, field

import numba
import numpy as np
from spieltisch.envs._common.errors import GameOverError, IllegalActionError, PositionFormatError
from spieltisch.envs._common.jit import direct_entry
from spieltisch.envs._common.notation import action_tuples, check_action, mask_from_bits
from spieltisch.envs._common.state import EngineState

RULE_SETS = ("goki", "standard")
BOARD_DTYPE = np.int32

# Bits of the integer packed by `sow`.
_TERMINAL_BIT = 1 << 1
_MASK_SHIFT = 2


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
        return next_player | _TERMINAL_BIT

    mask = 0
    first = next_player * (pits + 1)
    for i in range(pits):
        if board[first + i] > 0:
            mask |= 1 << i
    return next_player | (mask << _MASK_SHIFT)


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


@functools.cache
def _compiled_sow() -> Callable:
    return direct_entry(sow, np.zeros(4, BOARD_DTYPE), 0, 0, False)


def observation_index(pits: int, seat: int) -> np.ndarray:
    """Board indices of ``seat``'s view, in the order of ``kalaha_v0``'s observation: the board
    turned by one side, so the viewer's pits and store come first."""
    size = 2 * pits + 2
    return (np.arange(size) + seat * (pits + 1)) % size


@dataclass(frozen=True)
class KalahaGame:
    """Game parameters: ``pits`` per side, ``seeds`` per pit at the start, and the rule set.

    ``rules="goki"`` (the manual's rule) captures even when the opposite pit is empty;
    ``rules="standard"`` (OpenSpiel's ``mancala``, most literature) does not.
    """

    pits: int = 6
    seeds: int = 6
    rules: str = "goki"
    empty_capture: bool = field(init=False, repr=False, compare=False)
    _action_tuples: tuple = field(init=False, repr=False, compare=False)
    _sow: object = field(init=False, repr=False, compare=False)
    _initial_states: tuple = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        if not isinstance(self.pits, int | np.integer) or isinstance(self.pits, bool):
            raise TypeError(f"pits must be an integer, got {self.pits!r}")
        if not isinstance(self.seeds, int | np.integer) or isinstance(self.seeds, bool):
            raise TypeError(f"seeds must be an integer, got {self.seeds!r}")
        if not 1 <= self.pits <= 30:
            raise ValueError(f"pits must be between 1 and 30, got {self.pits}")
        if not 1 <= self.seeds <= 1000:
            raise ValueError(f"seeds must be between 1 and 1000, got {self.seeds}")
        if self.rules not in RULE_SETS:
            raise ValueError(f"rules must be one of {RULE_SETS}, got {self.rules!r}")
        # Plain attributes (not properties): they are read on every move.
        object.__setattr__(self, "empty_capture", self.rules == "goki")
        object.__setattr__(self, "_action_tuples", action_tuples(self.pits))
        object.__setattr__(self, "_sow", _compiled_sow())
        object.__setattr__(
            self, "_initial_states", (self._make_initial_state(0), self._make_initial_state(1))
        )

    def __reduce__(self) -> tuple:
        # The compiled kernel is not picklable; the parameters are all a game is.
        return (KalahaGame, (self.pits, self.seeds, self.rules))

    @property
    def total_stones(self) -> int:
        return 2 * self.pits * self.seeds

    @property
    def num_actions(self) -> int:
        return self.pits

    def new_initial_state(self, first_player: int = 0) -> KalahaState:
        """The starting position with ``first_player`` (0 or 1) to move."""
        if first_player not in (0, 1):
            raise ValueError(f"first_player must be 0 or 1, got {first_player!r}")
        return self._initial_states[first_player].clone()

    def _make_initial_state(self, first_player: int) -> KalahaState:
        board = np.full(2 * self.pits + 2, self.seeds, dtype=BOARD_DTYPE)
        board[self.pits] = 0
        board[-1] = 0
        return KalahaState(self, board, first_player)

    def state_from_text(self, text: str) -> KalahaState:
        """Read a position: the one-line notation of :meth:`KalahaState.to_text`, or the
        diagram that ``str(state)`` draws (see :func:`render_text`)."""
        if not isinstance(text, str):
            raise PositionFormatError(
                f"a Kalaha position must be a string, got {type(text).__name__}"
            )
        if "\n" in text.strip():
            board, player, over = parse_diagram(text, self.pits)
            empty_side = not board[: self.pits].any() or not board[self.pits + 1 : -1].any()
            if over != empty_side:
                raise PositionFormatError(
                    "'game over' must be written exactly when one side has no stones left"
                )
            return KalahaState(self, board, player, terminal=over)
        board, player, terminal = parse_position(text, self.pits)
        return KalahaState(self, board, player, terminal=terminal)


class KalahaState(EngineState):
    """One Kalaha position: the board, the player to move, and whether the game is over.

    Plain data (a numpy board and two ints), so ``copy``/``pickle`` work and :meth:`clone` is cheap.
    """

    __slots__ = ("_bits", "board", "current_player", "game", "move_number")

    def __init__(
        self,
        game: KalahaGame,
        board: np.ndarray,
        current_player: int,
        terminal: bool | None = None,
        move_number: int = 0,
    ) -> None:
        self.game = game
        self.board = board
        self.current_player = current_player
        self.move_number = move_number
        bits = legal_bits(board, current_player)
        if terminal is None:
            terminal = not legal_bits(board, 0) or not legal_bits(board, 1)
        self._bits = _TERMINAL_BIT if terminal else bits << _MASK_SHIFT

    # --- queries -------------------------------------------------------------------------------
    def is_terminal(self) -> bool:
        return self._bits & 2 != 0  # _TERMINAL_BIT, inlined: this is the hottest call

    def legal_actions(self) -> tuple[int, ...]:
        """Pits (0-based from the mover's left) that hold stones; empty when the game is over."""
        return self.game._action_tuples[self._bits >> 2]  # 2 == _MASK_SHIFT, inlined

    def legal_mask(self) -> np.ndarray:
        return mask_from_bits(self._bits >> _MASK_SHIFT, self.game.pits)

    def stores(self) -> tuple[int, int]:
        pits = self.game.pits
        return int(self.board[pits]), int(self.board[2 * pits + 1])

    def side(self, player: int) -> np.ndarray:
        """A view of ``player``'s pits, from that player's left."""
        first = player * (self.game.pits + 1)
        return self.board[first : first + self.game.pits]

    def score_difference(self) -> int:
        """Store of seat 0 minus store of seat 1 (the final margin once the game is over)."""
        s0, s1 = self.stores()
        return s0 - s1

    def returns(self) -> tuple[float, float]:
        """+1 / -1 / 0 per seat once the game is over (0, 0 before)."""
        if not self.is_terminal():
            return (0.0, 0.0)
        diff = self.score_difference()
        win = float((diff > 0) - (diff < 0))
        return (win, -win)

    def winner(self) -> int | None:
        """0 or 1, or None for a draw or an unfinished game."""
        r = self.returns()[0]
        return None if r == 0 else (0 if r > 0 else 1)

    # --- moves ---------------------------------------------------------------------------------
    def apply(self, action: int) -> None:
        """Play pit ``action`` for the player to move. Illegal input raises and changes nothing."""
        bits = self._bits
        # Fast path: a plain int naming a legal pit (bits >> 2 is the legal-pit mask; the
        # constant _MASK_SHIFT is inlined because this runs on every move).
        if type(action) is not int or action < 0 or not (bits >> (2 + action)) & 1:
            action = self._validated(action)
        game = self.game
        packed = game._sow(self.board, self.current_player, action, game.empty_capture)
        self.current_player = packed & 1
        self._bits = packed  # bit 0 (the player) is ignored by every reader of _bits
        self.move_number += 1

    def _validated(self, action: object) -> int:
        """The slow path of :meth:`apply`: a legal action as a plain int, or the right error."""
        action = check_action(action, self.game.pits)
        if self._bits & _TERMINAL_BIT:
            raise GameOverError("the game is over; no further moves can be played")
        if (self._bits >> (_MASK_SHIFT + action)) & 1:
            return action  # e.g. a numpy integer naming a legal pit
        raise IllegalActionError(
            f"pit {action} is empty and cannot be played; legal pits: {list(self.legal_actions())}"
        )

    def clone(self) -> KalahaState:
        c = KalahaState.__new__(KalahaState)
        c.game = self.game
        c.board = self.board.copy()
        c.current_player = self.current_player
        c.move_number = self.move_number
        c._bits = self._bits
        return c

    def __eq__(self, other: object) -> bool:
        """Same game, board and player to move (who would move is irrelevant once it is over)."""
        if not isinstance(other, KalahaState):
            return NotImplemented
        over = self.is_terminal()
        return (
            self.game == other.game
            and over == other.is_terminal()
            and (over or self.current_player == other.current_player)
            and np.array_equal(self.board, other.board)
        )

    def __hash__(self) -> int:
        mover = -1 if self.is_terminal() else self.current_player
        return hash((self.game, mover, self.board.tobytes()))

    # --- text ----------------------------------------------------------------------------------
    def to_text(self) -> str:
        """Compact position notation, e.g. ``"6,6,6,6,6,6/0 6,6,6,6,6,6/0 0"``.

        Three fields: seat 0's pits (from its own left) ``/`` its store, the same for seat 1, and
        the player to move; a fourth field ``end`` marks a finished game.
        """
        pits = self.game.pits
        b = self.board.tolist()
        s0 = ",".join(map(str, b[:pits])) + f"/{b[pits]}"
        s1 = ",".join(map(str, b[pits + 1 : 2 * pits + 1])) + f"/{b[-1]}"
        text = f"{s0} {s1} {self.current_player}"
        return text + " end" if self.is_terminal() else text

    def __str__(self) -> str:
        return render_text(self)

    def __repr__(self) -> str:
        return f"KalahaState({self.to_text()!r}, rules={self.game.rules!r})"


def parse_position(text: str, pits: int) -> tuple[np.ndarray, int, bool | None]:
    """Parse :meth:`KalahaState.to_text` notation; raises PositionFormatError naming the problem."""
    fields = text.split()
    if len(fields) not in (3, 4) or (len(fields) == 4 and fields[3] != "end"):
        raise PositionFormatError(f"expected 'PITS/STORE PITS/STORE PLAYER [end]', got {text!r}")
    board = np.zeros(2 * pits + 2, dtype=BOARD_DTYPE)
    for seat, side_text in enumerate(fields[:2]):
        if side_text.count("/") != 1:
            raise PositionFormatError(
                f"seat {seat}: expected 'pit,pit,.../store', got {side_text!r}"
            )
        pit_text, store_text = side_text.split("/")
        cells = pit_text.split(",")
        if len(cells) != pits:
            raise PositionFormatError(
                f"seat {seat}: expected {pits} pits, got {len(cells)} in {side_text!r}"
            )
        first = seat * (pits + 1)
        for i, cell in enumerate([*cells, store_text]):
            if not cell.isdigit():
                raise PositionFormatError(
                    f"seat {seat}: {cell!r} is not a non-negative whole number in {side_text!r}"
                )
            board[first + i] = int(cell)
    if fields[2] not in ("0", "1"):
        raise PositionFormatError(f"player to move must be 0 or 1, got {fields[2]!r}")
    player = int(fields[2])
    pits_empty = not board[:pits].any() or not board[pits + 1 : 2 * pits + 1].any()
    if len(fields) == 4 and not pits_empty:
        raise PositionFormatError("'end' marks a finished game, but both sides still have stones")
    if pits_empty and len(fields) == 3:
        raise PositionFormatError(
            "one side has no stones, so the game is over: write 'end' as a fourth field"
        )
    return board, player, pits_empty


def render_text(state: KalahaState) -> str:
    """The board as seen by seat 0: seat 1's row on top (its pits run right to left, since its
    left is seat 0's right), seat 1's store on the left, seat 0's on the right::

        seat 1:      6   6   6   6   6   6
        stores:   0                          0
        seat 0:      6   6   6   6   6   6
        seat 0 to move

    :meth:`KalahaGame.state_from_text` reads this diagram back.
    """
    pits = state.game.pits
    b = state.board
    top = "".join(f"{int(v):>4}" for v in b[2 * pits : pits : -1])
    bottom = "".join(f"{int(v):>4}" for v in b[:pits])
    gap = " " * (4 * pits + 2)
    lines = [
        f"seat 1:   {top}",
        f"stores: {int(b[-1]):>3}{gap}{int(b[pits])}",
        f"seat 0:   {bottom}",
    ]
    if state.is_terminal():
        s0, s1 = state.stores()
        result = "a draw" if s0 == s1 else f"seat {0 if s0 > s1 else 1} wins"
        lines.append(f"game over: {result}, {s0} to {s1}")
    else:
        lines.append(f"seat {state.current_player} to move")
    return "\n".join(lines)


def parse_diagram(text: str, pits: int) -> tuple[np.ndarray, int, bool]:
    """Read the diagram of :func:`render_text` (labels ``seat 1:``, ``stores:``, ``seat 0:`` and
    a last line ``seat N to move`` or ``game over...``)."""
    rows: dict[str, list[int]] = {}
    mover: int | None = None
    over = False
    for line in text.strip().splitlines():
        line = line.strip()
        label, sep, rest = line.partition(":")
        if sep and label in ("seat 0", "seat 1", "stores"):
            cells = rest.split()
            if not all(c.isdigit() for c in cells):
                raise PositionFormatError(f"{label}: expected whole numbers, got {rest.strip()!r}")
            rows[label] = [int(c) for c in cells]
        elif m := re.fullmatch(r"seat ([01]) to move", line):
            mover = int(m.group(1))
        elif line.startswith("game over"):
            over = True
    for label, count in (("seat 1", pits), ("stores", 2), ("seat 0", pits)):
        if label not in rows:
            raise PositionFormatError(f"the diagram has no line '{label}: ...'")
        if len(rows[label]) != count:
            raise PositionFormatError(
                f"'{label}:' needs {count} numbers, got {len(rows[label])}: {rows[label]}"
            )
    if mover is None and not over:
        raise PositionFormatError("the diagram needs a last line 'seat N to move' or 'game over'")
    board = np.zeros(2 * pits + 2, dtype=BOARD_DTYPE)
    board[:pits] = rows["seat 0"]
    board[pits + 1 : 2 * pits + 1] = rows["seat 1"][::-1]
    board[-1], board[pits] = rows["stores"]
    return board, 0 if mover is None else mover, over
