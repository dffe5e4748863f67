"""Hus (Philos, a 4 x 8 mancala) rules engine: the game (:class:`HusGame`) and one position
(:class:`HusState`).

Rules as the project implements them: ``docs/rules/hus.md`` (from ``shared/spec/hus.md`` and the
Philos manual). The rules themselves are the numba kernels of :mod:`.rules` (the board layout, in
ring order, is described there): single games call :func:`~.rules.play_pit` directly, the batched
engine in a compiled loop; :meth:`HusState.sowing_trace` has the same kernel write a move step
by step. Text notation and the diagram are in :mod:`.notation`.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, NamedTuple

import numpy as np
from spieltisch.envs._common.errors import GameOverError, IllegalActionError
from spieltisch.envs._common.jit import direct_entry
from spieltisch.envs._common.notation import action_tuples, check_action, mask_from_bits
from spieltisch.envs._common.options import pick_options
from spieltisch.envs._common.state import EngineState
from spieltisch.envs.hus.notation import format_position, parse_position, render_text
from spieltisch.envs.hus.rules import (
    BOARD_DTYPE,
    CAPTURES_SHIFT,
    DEFAULT_MAX_SOWN,
    LIMIT_BIT,
    MASK_SHIFT,
    NUM_ACTIONS,
    REPETITION_BIT,
    TERMINAL_BIT,
    TOTAL_STONES,
    TRACE_BOARD,
    TRACE_COLUMNS,
    TRACE_HAND,
    TRACE_KIND,
    TRACE_KIND_NAMES,
    TRACE_PIT,
    final_result,
    initial_board,
    legal_bits,
    play_pit,
    ring_of_action,
)

#: default number of steps :meth:`HusState.sowing_trace` records of one move
DEFAULT_TRACE_STEPS = 10_000

#: the env options that set the rules (:meth:`HusGame.from_options`)
RULE_OPTIONS = ("max_sown",)
#: the env's other options (``hus_v0.env``'s keyword arguments): they leave the rules alone
PLAY_OPTIONS = ("reward", "max_turns", "random_start", "render_mode", "illegal_action")


class MoveStats(NamedTuple):
    """What happened in one move."""

    stones_sown: int
    relay_steps: int
    captures: int
    ended_by: str  # "empty pit" (normal), "repetition" or "limit" (never-ending-move rule)

    @property
    def never_ending(self) -> bool:
        return self.ended_by != "empty pit"


class SowingStep(NamedTuple):
    """One step of a move (:meth:`HusState.sowing_trace`): stones taken into the mover's hand,
    or one stone dropped from it."""

    #: "pickup" (the played pit, the first step), "sow" (one stone into ``pit``), "capture"
    #: (the landing pit ``pit`` and the opponent's two pits opposite it) or "relay" (``pit``)
    kind: str
    #: the mover's pit, numbered like actions (0..7 row 1, 8..15 row 2, columns from the mover's
    #: left); the opponent's pits of a capture are the two opposite it
    pit: int
    #: stones in the mover's hand after the step
    hand: int
    #: the board after the step (32 counts, the layout of :attr:`HusState.board`)
    board: np.ndarray

    def sides(self) -> tuple[list[int], list[int]]:
        """Both seats' pits after the step in action order (as :meth:`HusState.pits_by_action`)."""
        return _pits_by_action(self.board, 0).tolist(), _pits_by_action(self.board, 1).tolist()

    def as_dict(self) -> dict[str, Any]:
        """The step in plain Python types (for JSON): ``kind``, ``pit``, ``hand`` and ``sides``
        (both seats' pits in action order, :meth:`sides`)."""
        return {"kind": self.kind, "pit": self.pit, "hand": self.hand, "sides": self.sides()}


@dataclass(frozen=True, eq=False)
class SowingTrace(Sequence[SowingStep]):
    """A move step by step (:meth:`HusState.sowing_trace`): the sequence of its steps
    (:class:`SowingStep` objects) in order, a "pickup", then a "sow" per stone and a "capture" or
    "relay" per landing in an occupied pit; with what else is known of the move."""

    #: the steps; ``steps[-1].board`` is :attr:`board` unless ``truncated``
    steps: tuple[SowingStep, ...]
    #: the move has more steps than were asked for (``max_steps``): ``steps`` are its first ones
    truncated: bool
    #: what :meth:`HusState.apply` returns for the move
    stats: MoveStats
    #: the board after the whole move, the same as after :meth:`HusState.apply`
    board: np.ndarray
    #: the mover
    player: int

    def __len__(self) -> int:
        return len(self.steps)

    def __getitem__(self, index):  # an index or a slice, as for a tuple
        return self.steps[index]


def _pits_by_action(board: np.ndarray, player: int) -> np.ndarray:
    side = board[16 * player : 16 * player + 16]
    return np.concatenate([side[15:7:-1], side[0:8]])


def unpack_stats(packed: int, sown: int, relays: int) -> MoveStats:
    """The statistics of a move from what :func:`~.rules.play_pit` returned."""
    if packed & REPETITION_BIT:
        ended_by = "repetition"
    elif packed & LIMIT_BIT:
        ended_by = "limit"
    else:
        ended_by = "empty pit"
    return MoveStats(sown, relays, (packed >> CAPTURES_SHIFT) & 63, ended_by)


@functools.cache
def _compiled_play_pit() -> Callable:
    """:func:`~.rules.play_pit` without a trace, called as ``(board, player, action, max_sown,
    None)`` (the compiled entry point of one signature takes every argument)."""
    return direct_entry(play_pit, np.zeros(32, BOARD_DTYPE), 0, 0, DEFAULT_MAX_SOWN, None)


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

    @classmethod
    def from_options(cls, options: dict[str, Any]) -> HusGame:
        """The game that ``hus_v0.env(**options)`` plays: the rule options (:data:`RULE_OPTIONS`,
        the env's defaults for those missing) checked as the env checks them; the env's other
        options (:data:`PLAY_OPTIONS`) are ignored, any other name raises."""
        return cls(**pick_options("Hus", options, RULE_OPTIONS, RULE_OPTIONS + PLAY_OPTIONS))

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
    """One Hus position: the board (ring order, see :mod:`.rules`) and the mover."""

    __slots__ = ("_bits", "board", "current_player", "game", "last_move", "move_number")

    def __init__(self, game: HusGame, board: np.ndarray, current_player: int) -> None:
        self.game = game
        self.board = np.ascontiguousarray(board, dtype=BOARD_DTYPE)
        self.current_player = current_player
        self.move_number = 0
        self.last_move: MoveStats | None = None
        bits = legal_bits(self.board, current_player)
        self._bits = (bits << MASK_SHIFT) | (0 if bits else TERMINAL_BIT)

    # --- queries -------------------------------------------------------------------------------
    def is_terminal(self) -> bool:
        return self._bits & 2 != 0  # TERMINAL_BIT

    def legal_actions(self) -> tuple[int, ...]:
        """Pits with at least 2 stones (0..7 outer row, 8..15 inner row, from the mover's left)."""
        return self.game._action_tuples[(self._bits >> MASK_SHIFT) & 0xFFFF]

    def legal_mask(self) -> np.ndarray:
        return mask_from_bits((self._bits >> MASK_SHIFT) & 0xFFFF, NUM_ACTIONS)

    def stones(self, player: int) -> int:
        """Stones on ``player``'s 16 pits."""
        return int(self.board[16 * player : 16 * player + 16].sum())

    def pits_by_action(self, player: int) -> np.ndarray:
        """``player``'s 16 pits in action order (row 1 columns 0..7, row 2 columns 0..7)."""
        return _pits_by_action(self.board, player)

    def winner(self) -> int | None:
        """The winner once the game is over: the player who made the last move."""
        if not self.is_terminal():
            return None
        return 0 if final_result(self.board, self.current_player, 0) > 0 else 1

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
        if type(action) is not int or action < 0 or not (bits >> (MASK_SHIFT + action)) & 1:
            action = self._validated(action)
        game = self.game
        packed, sown, relays = game._play(
            self.board, self.current_player, action, game.max_sown, None
        )
        self.current_player = packed & 1
        self._bits = packed & ((1 << CAPTURES_SHIFT) - 1)
        self.move_number += 1
        self.last_move = unpack_stats(packed, sown, relays)
        return self.last_move

    def sowing_trace(self, action: int, max_steps: int = DEFAULT_TRACE_STEPS) -> SowingTrace:
        """The move ``action`` step by step, for showing it: every pick-up (the played pit, each
        capture and relay) and every stone dropped, each with the board after it; the last
        step's board is the board :meth:`apply` leaves. This state does not change.

        The steps are written by the move kernel itself (:func:`~.rules.play_pit` with a trace),
        so they are the rules' own. A move has ``1 + stones_sown + relay_steps + captures``
        steps; one that ends by the sowing limit (``docs/rules/hus.md``, "Moves that would never
        end") has more than ``max_sown`` (default 100,000), so at most ``max_steps`` steps are
        recorded and ``truncated`` says when the move had more (its end board is still
        :attr:`SowingTrace.board`). Illegal input raises as :meth:`apply` does.

        E.g. at the start, ``sowing_trace(0)`` (row 1 column 0, 2 stones) has 3 steps:
        ``pickup`` of pit 0 (hand 2), ``sow`` into pit 8 (row 2 column 0, hand 1), ``sow`` into
        pit 9 (hand 0; it was empty, so the move ends).
        """
        action = self._validated(action)
        if isinstance(max_steps, bool) or not isinstance(max_steps, int | np.integer):
            raise TypeError(f"max_steps must be an integer, got {max_steps!r}")
        if not 1 <= max_steps <= 10**6:
            raise ValueError(f"max_steps must be between 1 and 10**6, got {max_steps}")
        board = self.board.copy()
        trace = np.zeros((int(max_steps), TRACE_COLUMNS), dtype=BOARD_DTYPE)
        player = self.current_player
        packed, sown, relays = play_pit(board, player, action, self.game.max_sown, trace)
        stats = unpack_stats(packed, sown, relays)
        length = 1 + stats.stones_sown + stats.relay_steps + stats.captures
        rows = trace[: min(length, max_steps)]
        boards = rows[:, TRACE_BOARD:].copy()  # each step's board is a row of this
        steps = tuple(
            SowingStep(TRACE_KIND_NAMES[kind], int(pit), int(hand), b)
            for kind, pit, hand, b in zip(
                rows[:, TRACE_KIND], rows[:, TRACE_PIT], rows[:, TRACE_HAND], boards, strict=True
            )
        )
        return SowingTrace(steps, length > max_steps, stats, board, player)

    def _validated(self, action: object) -> int:
        action = check_action(action, NUM_ACTIONS)
        if self.is_terminal():
            raise GameOverError("the game is over; no further moves can be played")
        if (self._bits >> (MASK_SHIFT + action)) & 1:
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
        return format_position(self)

    def __str__(self) -> str:
        return render_text(self)

    def __repr__(self) -> str:
        return f"HusState({self.to_text()!r})"
