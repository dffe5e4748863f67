"""Kalaha (Kalah) rules engine: the game (:class:`KalahaGame`) and one position
(:class:`KalahaState`).

Rules as the project implements them: ``docs/rules/kalaha.md`` (from ``shared/spec/kalaha.md`` and
the Goki manual). The rules themselves are the numba kernels of :mod:`.rules` (the board layout is
described there): :class:`KalahaState` calls :func:`~.rules.sow` for one game and
:mod:`spieltisch.envs.kalaha.batch` calls it in a compiled loop for many games. Text notation and
the diagram are in :mod:`.notation`.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from spieltisch.envs._common.errors import GameOverError, IllegalActionError, PositionFormatError
from spieltisch.envs._common.jit import direct_entry
from spieltisch.envs._common.notation import action_tuples, check_action, mask_from_bits
from spieltisch.envs._common.options import pick_options
from spieltisch.envs._common.state import EngineState
from spieltisch.envs.kalaha.notation import (
    format_position,
    parse_diagram,
    parse_position,
    render_text,
)
from spieltisch.envs.kalaha.rules import (
    BOARD_DTYPE,
    MASK_SHIFT,
    TERMINAL_BIT,
    final_result,
    legal_bits,
    one_side_empty,
    sow,
)

RULE_SETS = ("goki", "standard")
#: the env options that set the rules (:meth:`KalahaGame.from_options`)
RULE_OPTIONS = ("pits", "seeds", "rules")
#: the env's other options (``kalaha_v0.env``'s keyword arguments): they leave the rules alone
PLAY_OPTIONS = ("reward", "max_turns", "random_start", "render_mode", "illegal_action")


@functools.cache
def _compiled_sow() -> Callable:
    return direct_entry(sow, np.zeros(4, BOARD_DTYPE), 0, 0, False)


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

    @classmethod
    def from_options(cls, options: dict[str, Any]) -> KalahaGame:
        """The game that ``kalaha_v0.env(**options)`` plays: the rule options
        (:data:`RULE_OPTIONS`, the env's defaults for those missing) checked as the env checks
        them; the env's other options (:data:`PLAY_OPTIONS`) are ignored, any other name raises."""
        return cls(**pick_options("Kalaha", options, RULE_OPTIONS, RULE_OPTIONS + PLAY_OPTIONS))

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
        diagram that ``str(state)`` draws (see :func:`~.notation.render_text`)."""
        if not isinstance(text, str):
            raise PositionFormatError(
                f"a Kalaha position must be a string, got {type(text).__name__}"
            )
        if "\n" in text.strip():
            board, player, over = parse_diagram(text, self.pits)
            if over != one_side_empty(board):
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
            terminal = one_side_empty(board)
        self._bits = TERMINAL_BIT if terminal else bits << MASK_SHIFT

    # --- queries -------------------------------------------------------------------------------
    def is_terminal(self) -> bool:
        return self._bits & 2 != 0  # TERMINAL_BIT, inlined: this is the hottest call

    def legal_actions(self) -> tuple[int, ...]:
        """Pits (0-based from the mover's left) that hold stones; empty when the game is over."""
        return self.game._action_tuples[self._bits >> 2]  # 2 == MASK_SHIFT, inlined

    def legal_mask(self) -> np.ndarray:
        return mask_from_bits(self._bits >> MASK_SHIFT, self.game.pits)

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
        win = float(final_result(self.board, self.current_player, 0))
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
        # constant MASK_SHIFT is inlined because this runs on every move).
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
        if self._bits & TERMINAL_BIT:
            raise GameOverError("the game is over; no further moves can be played")
        if (self._bits >> (MASK_SHIFT + action)) & 1:
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
        return format_position(self)

    def __str__(self) -> str:
        return render_text(self)

    def __repr__(self) -> str:
        return f"KalahaState({self.to_text()!r}, rules={self.game.rules!r})"
