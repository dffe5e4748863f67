"""Backgammon rules engine: the rules and nothing else.

Rules as the project implements them: ``docs/rules/backgammon.md`` (from
``shared/spec/backgammon.md``, the Philos manual and GNU Backgammon's standard rules).

Quick use::

    game = BackgammonGame()
    state = game.new_initial_state()        # the opening roll is a chance node
    rng = np.random.default_rng(0)
    while not state.is_terminal():
        if state.is_chance_node():
            state.roll_dice(rng)            # or state.set_dice(3, 1)
        plays = state.legal_plays()         # [Play(actions, resulting state), ...]
        state.apply_play(0)                 # a whole play; or one checker move at a time:
                                            # state.apply(state.legal_actions()[0])
    state.returns(), state.win_type()       # e.g. (2.0, -2.0), "gammon"

A turn is played either one checker move at a time (:meth:`BackgammonState.apply` with the
actions of :meth:`~BackgammonState.legal_actions`; the compulsory-play rules are in the mask) or
as a whole play (:meth:`~BackgammonState.apply_play`, choosing among the distinct resulting
positions, as afterstate agents do). The rules live in :mod:`.rules` (numba); this module
only wraps them. Board layout and action encoding: see :mod:`.rules`.

Thread safety: states of one :class:`BackgammonGame` share a scratch workspace; use one game
object per thread.
"""

from __future__ import annotations

import functools
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import NamedTuple

import numpy as np
from spieltisch.envs._common.errors import (
    ActionTypeError,
    GameOverError,
    IllegalActionError,
)
from spieltisch.envs._common.jit import direct_entry
from spieltisch.envs._common.notation import check_action, is_count
from spieltisch.envs._common.state import EngineState
from spieltisch.envs.backgammon import notation
from spieltisch.envs.backgammon import rules as k

STATE_DTYPE = np.int32
#: the ``reward`` option of the env and the batch: ``"points"`` (win type x cube) or ``"win"``
#: (+1 / -1, the sign of the points)
REWARD_MODES = ("points", "win")
# The fields that make two states the same (see BackgammonState.__eq__).
_EQ_FIELDS = np.r_[
    0 : k.BOARD_SIZE,
    k.M_PLAYER : k.M_ROLL,
    k.M_CUBE : k.M_NPLAYS,
    k.M_FLAGS : k.M_TURNS,
]


def action_of(source: int, die: int) -> int:
    """The checker-move action moving a checker from ``source`` (1..24 = the mover's point, 25 =
    the bar) with ``die``."""
    if not 1 <= source <= 25 or not 1 <= die <= 6:
        raise ValueError(f"source must be 1..25 (25 = bar) and die 1..6, got {source}, {die}")
    return (source - 1) * 6 + die - 1


def describe_action(action: int) -> str:
    """An action in backgammon notation from the mover's view, e.g. ``"13/8"``, ``"bar/22"``,
    ``"3/off"``, ``"pass"``, ``"double"``."""
    if action < k.NUM_MOVE_ACTIONS:
        src, die = action // 6 + 1, action % 6 + 1
        dest = src - die
        return f"{'bar' if src == 25 else src}/{dest if dest > 0 else 'off'}"
    return {k.PASS: "pass", k.ROLL: "roll", k.DOUBLE: "double", k.TAKE: "take", k.DROP: "drop"}[
        action
    ]


class Play(NamedTuple):
    """One legal play of a roll: the checker-move actions of one way to play it, in order (empty
    when the roll cannot be played), and the position it leads to (a new state, the opponent
    then on turn)."""

    actions: tuple[int, ...]
    state: BackgammonState

    @property
    def notation(self) -> str:
        """E.g. ``"24/18 13/8"`` (from the mover's view); ``"pass"`` for no move."""
        return " ".join(describe_action(a) for a in self.actions) or "pass"


_MT19937 = np.random.MT19937  # (read on every roll: one name instead of two attributes)


class _Workspace(threading.local):
    """Scratch array of the play generator, and the state whose plays it holds (a state that
    is not the owner regenerates its plays before reading them): one of each per thread, so
    that states of one game may be used in several threads at once (as long as each state is
    used by one thread at a time)."""

    def __init__(self) -> None:
        # [owner, scratch] in one list: one thread-local lookup per move on the hot paths
        self.cell: list = [None, k.new_workspace()]

    def __reduce__(self) -> tuple:
        return (_Workspace, ())


@functools.cache
def _compiled() -> dict[str, Callable]:
    """The kernels' compiled entry points (for the argument types our states always pass)."""
    s = np.zeros(k.STATE_SIZE, dtype=STATE_DTYPE)
    s[k.M_PHASE] = k.PH_OVER  # harmless example calls
    ws = k.new_workspace()
    return {
        "roll": direct_entry(k.roll, s, 0, ws),
        "set_dice": direct_entry(k.set_dice, s, 1, 2, ws),
        "act": direct_entry(k.act, s, k.PASS, ws),
        "play": direct_entry(k.play, s, 0, ws),
        "refresh": direct_entry(k.refresh, s, ws),
        "play_boards": direct_entry(
            k.play_boards, s, ws, np.zeros((0, k.BOARD_SIZE), dtype=np.int8)
        ),
    }


@dataclass(frozen=True)
class BackgammonGame:
    """Game parameters.

    ``cube``: play with the doubling cube (money play, no Jacoby rule); off by default.
    ``max_cube``: a player may double only while the cube is below this value (default 64;
    a power of 2, at most 2**15 as in GNU Backgammon's match IDs; another value without
    ``cube`` is refused).
    """

    cube: bool = False
    max_cube: int = 64
    num_actions: int = field(init=False, repr=False, compare=False)
    _ws: _Workspace = field(init=False, repr=False, compare=False)
    _initial: BackgammonState = field(init=False, repr=False, compare=False)
    # The compiled kernels as plain attributes (read on every move).
    _roll: Callable = field(init=False, repr=False, compare=False)
    _set_dice: Callable = field(init=False, repr=False, compare=False)
    _act: Callable = field(init=False, repr=False, compare=False)
    _play: Callable = field(init=False, repr=False, compare=False)
    _refresh: Callable = field(init=False, repr=False, compare=False)
    _play_boards: Callable = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        if not isinstance(self.cube, bool):
            raise TypeError(f"cube must be True or False, got {self.cube!r}")
        if isinstance(self.max_cube, bool) or not isinstance(self.max_cube, int | np.integer):
            raise TypeError(f"max_cube must be an integer, got {self.max_cube!r}")
        if not 2 <= self.max_cube <= 2**15 or self.max_cube & (self.max_cube - 1):
            raise ValueError(f"max_cube must be a power of 2 from 2 to 32768, got {self.max_cube}")
        if not self.cube and self.max_cube != 64:  # silently playing cubeless would mislead
            raise ValueError(f"max_cube={self.max_cube} needs the doubling cube: set cube=True")
        object.__setattr__(
            self, "num_actions", k.NUM_ACTIONS_CUBE if self.cube else k.NUM_ACTIONS_NO_CUBE
        )
        for name, kernel in _compiled().items():
            object.__setattr__(self, "_" + name, kernel)
        object.__setattr__(self, "_ws", _Workspace())
        board = notation.board_from_sides(
            *notation.position_id_to_sides(notation.START_POSITION_ID), 0
        )
        s = self._new_vector(board)
        s[k.M_PHASE] = k.PH_OPENING
        s[k.M_PLAYER] = -1
        object.__setattr__(self, "_initial", BackgammonState(self, s))

    def __reduce__(self) -> tuple:
        # Compiled kernels and the workspace are rebuilt; the parameters are all a game is.
        return (BackgammonGame, (self.cube, self.max_cube))

    def _new_vector(self, board: np.ndarray) -> np.ndarray:
        s = np.zeros(k.STATE_SIZE, dtype=STATE_DTYPE)
        s[: k.BOARD_SIZE] = board
        s[k.M_CUBE] = 1
        s[k.M_OWNER] = -1
        s[k.M_WINNER] = -1
        s[k.M_FLAGS] = k.FLAG_CUBE if self.cube else 0
        s[k.M_MAXCUBE] = self.max_cube
        return s

    def new_initial_state(self) -> BackgammonState:
        """The starting position before the opening roll (a chance node: call
        :meth:`BackgammonState.roll_dice` or :meth:`~BackgammonState.set_dice`)."""
        return self._initial.clone()

    def state_from_text(self, text: str) -> BackgammonState:
        """Read a position written by :meth:`BackgammonState.to_text` (format there), or GNU
        Backgammon's ``"POSITIONID:MATCHID"`` (:meth:`state_from_gnubg_id`)."""
        if notation.split_gnubg_id(text) is not None:
            return self.state_from_gnubg_id(text)
        board, turn, word, dice, cube, owner = notation.parse_position(
            text, self.cube, self.max_cube
        )
        s = self._new_vector(board)
        s[k.M_TURN] = turn
        s[k.M_PLAYER] = turn
        s[k.M_CUBE] = cube
        s[k.M_OWNER] = owner
        if word == "open":
            s[k.M_PHASE] = k.PH_OPENING
            s[k.M_PLAYER] = -1
        elif word == "roll":
            s[k.M_PHASE] = k.PH_ROLL
        elif word == "cube":
            s[k.M_PHASE] = k.PH_CUBE
        elif word == "take":
            s[k.M_PHASE] = k.PH_TAKE
            s[k.M_PLAYER] = 1 - turn
        elif word in ("over", "drop"):
            s[k.M_PHASE] = k.PH_OVER
            s[k.M_WINNER] = turn
            if word == "drop":
                s[k.M_PLAYER] = 1 - turn  # the seat that dropped acted last, as in play
                s[k.M_RESULT] = k.RESULT_DROP
                s[k.M_POINTS] = cube
            else:
                result = int(k.win_type(s, turn))
                s[k.M_RESULT] = result
                s[k.M_POINTS] = result * cube
        else:
            s[k.M_PHASE] = k.PH_MOVE
            s[k.M_NDICE] = len(dice)
            s[k.M_DICE : k.M_DICE + len(dice)] = dice
            if len(dice) in (2, 4):
                s[k.M_ROLL : k.M_ROLL + 2] = dice[:2]
        return BackgammonState(self, s)

    def state_to_roll(self, board: np.ndarray, seat: int) -> BackgammonState:
        """The position ``board`` (52 cells, layout in :mod:`.rules`) with ``seat`` about to
        roll, the cube in the middle: e.g. the afterstate of the other seat's play. The board is
        taken as it is (a board from the engine's own plays is always valid)."""
        board = np.asarray(board)
        if board.shape != (k.BOARD_SIZE,):
            raise ValueError(f"board must have {k.BOARD_SIZE} cells, got shape {board.shape}")
        if isinstance(seat, bool) or seat not in (0, 1):
            raise ValueError(f"seat must be 0 or 1, got {seat!r}")
        s = self._new_vector(board)
        s[k.M_TURN] = seat
        s[k.M_PLAYER] = seat
        s[k.M_PHASE] = k.PH_ROLL
        return BackgammonState(self, s)

    def state_from_gnubg_id(self, text: str) -> BackgammonState:
        """A state from GNU Backgammon's combined ID ``"POSITIONID:MATCHID"`` (as gnubg shows and
        :meth:`BackgammonState.gnubg_id` writes), e.g. ``"4HPwATDgc/ABMA:cAkAAAAAAAAA"``: seat 1
        to roll (to double or roll with the cube) from the start.

        The match ID gives the seat on roll (gnubg's player 0 / 1 = seat 0 / 1), the dice if
        rolled, the cube value and owner and a pending double; match length and score are not
        used (the engine plays one money game). A cube value other than 1 without the cube, a
        resignation, or (with the cube) the Crawford game raise :class:`PositionFormatError`
        (a ValueError) naming the problem. Mapping: :func:`.notation.gnubg_id_to_position`."""
        return self.state_from_text(notation.gnubg_id_to_position(text, self.cube, self.max_cube))

    def state_from_position_id(
        self, position_id: str, roll: str | tuple[int, int] | None = None, seat: int = 0
    ) -> BackgammonState:
        """A state from a GNU Backgammon position ID, ``seat`` on roll (the ID's second
        player), about to play ``roll`` (two dice, e.g. ``"31"`` or ``(3, 1)``; a double is
        played four times) or, if None, about to roll; raises ValueError (PositionFormatError
        for the ID) naming the problem."""
        # Checked alone first: they are pasted into a position text, where spaces would split them
        notation.position_id_to_sides(position_id)
        if isinstance(seat, bool) or seat not in (0, 1):
            raise ValueError(f"seat must be 0 or 1, got {seat!r}")
        if roll is None:
            return self.state_from_text(f"{position_id} {seat} roll")
        if isinstance(roll, str):  # two digits; a die out of 1..6 is refused by the notation
            dice = [int(c) for c in roll] if is_count(roll) else []
        else:
            dice = list(roll)
        if len(dice) != 2 or any(not isinstance(d, int | np.integer) for d in dice):
            raise ValueError(f"roll must be two dice, e.g. '31' or (3, 1), got {roll!r}")
        word = "".join(str(d) for d in (dice * 2 if dice[0] == dice[1] else dice))
        return self.state_from_text(f"{position_id} {seat} {word}")


class BackgammonState(EngineState):
    """One backgammon position with everything the rules need: the board, whose turn it is,
    the dice left to play, the cube, the result, and the legal-action mask.

    Plain data (one int32 vector, layout in :mod:`.rules`), so ``copy``/``pickle`` work and
    :meth:`clone` is cheap. See the module docstring of :mod:`.engine` for the turn structure.
    """

    __slots__ = ("_st", "game", "s")

    def __init__(self, game: BackgammonGame, s: np.ndarray) -> None:
        self.game = game
        self.s = s
        cell = game._ws.cell
        self._st = game._refresh(s, cell[1])
        cell[0] = self

    def _scratch(self) -> np.ndarray:
        """This thread's workspace array, holding this state's plays (regenerated if another
        state used it)."""
        cell = self.game._ws.cell
        if cell[0] is not self:
            self._st = self.game._refresh(self.s, cell[1])
            cell[0] = self
        return cell[1]

    # --- queries -------------------------------------------------------------------------------
    @property
    def board(self) -> np.ndarray:
        """The 52 board cells (read-only view; layout in :mod:`.rules`)."""
        view = self.s[: k.BOARD_SIZE]
        view.flags.writeable = False
        return view

    @property
    def current_player(self) -> int:
        """The seat to act: to move, to double or to take (the roller at a chance node; -1
        before the opening roll)."""
        return ((self._st >> 3) & 3) - 1

    @property
    def turn(self) -> int:
        """The seat whose turn it is (who rolls and moves; the doubler while a double is
        pending)."""
        return int(self.s[k.M_TURN])

    @property
    def phase(self) -> int:
        """One of the ``PH_*`` constants of :mod:`.rules`."""
        return self._st & 7

    def is_terminal(self) -> bool:
        return self._st & 7 == 5  # PH_OVER, inlined: a hot call

    def is_chance_node(self) -> bool:
        """True when dice must be rolled next (:meth:`roll_dice` or :meth:`set_dice`)."""
        return self._st & 7 <= 1  # PH_OPENING or PH_ROLL

    def dice(self) -> tuple[int, ...]:
        """The dice left to play this turn, highest first (empty unless moving)."""
        return tuple(int(d) for d in self.s[k.M_DICE : k.M_DICE + self.s[k.M_NDICE]])

    def rolled(self) -> tuple[int, int] | None:
        """The two dice rolled this turn (None before the first roll)."""
        d1, d2 = int(self.s[k.M_ROLL]), int(self.s[k.M_ROLL + 1])
        return None if d1 == 0 else (d1, d2)

    def cube(self) -> tuple[int, int | None]:
        """(cube value, owner seat or None when centred)."""
        owner = int(self.s[k.M_OWNER])
        return int(self.s[k.M_CUBE]), None if owner < 0 else owner

    def side(self, seat: int) -> np.ndarray:
        """``seat``'s 26 cells (a copy): points 1..24 from its own view, bar, borne off."""
        return self.s[k.SIDE * seat : k.SIDE * seat + k.SIDE].copy()

    def borne_off(self) -> tuple[int, int]:
        return int(self.s[k.OFF]), int(self.s[k.SIDE + k.OFF])

    def pip_counts(self) -> tuple[int, int]:
        """Pips each seat still has to move (bar = 25)."""
        weights = np.arange(1, 26)
        p0 = int(self.s[0:25] @ weights)
        p1 = int(self.s[k.SIDE : k.SIDE + 25] @ weights)
        return p0, p1

    def legal_actions(self) -> tuple[int, ...]:
        """Legal actions of the player to act: checker moves that begin some legal full play
        (or PASS alone), cube actions in cube phases; empty at chance nodes and at the end."""
        return tuple(np.flatnonzero(self.s[k.MASK : k.MASK + self.game.num_actions]).tolist())

    def legal_mask(self) -> np.ndarray:
        """int8 mask over ``game.num_actions`` actions (a new array)."""
        return self.s[k.MASK : k.MASK + self.game.num_actions].astype(np.int8)

    def num_plays(self) -> int:
        """Number of distinct legal plays of the dice left (1 when no move is possible: the
        empty play); 0 outside the MOVE phase."""
        st = self._st
        return (st >> 5) & 8191 if st & 7 == 4 else 0

    def play_boards(self) -> np.ndarray:
        """The resulting boards of the legal plays, ``(num_plays, 52)`` int8 (a copy; layout
        as the board in :mod:`.rules`), in the order of :meth:`legal_plays`."""
        out = np.empty((self.num_plays(), k.BOARD_SIZE), dtype=np.int8)
        self.game._play_boards(self.s, self._scratch(), out)
        return out

    def play_actions(self, index: int) -> tuple[int, ...]:
        """The checker-move actions of legal play ``index`` (one way to play it, in order)."""
        index = self._check_play_index(index)
        row = k.play_moves(self._scratch(), index)
        return tuple(int(a) for a in row if a >= 0)

    def legal_plays(self) -> list[Play]:
        """Every distinct legal play of the dice left as ``Play(actions, state)`` pairs: the
        checker-move actions of one way to play it, and the resulting state (opponent on turn,
        or the game over). One empty play when the roll cannot be played."""
        n = self.num_plays()
        if n == 0:
            return []
        scratch = self._scratch()
        actions = [tuple(int(a) for a in k.play_moves(scratch, i) if a >= 0) for i in range(n)]
        plays = []
        for i in range(n):
            # `play` only reads the workspace, so it keeps this state's plays.
            child = self.clone()
            child._st = self.game._play(child.s, i, scratch)
            plays.append(Play(actions[i], child))
        return plays

    def returns(self) -> tuple[float, float]:
        """Points per seat once the game is over (winner +points, loser -points), else 0, 0."""
        if not self.is_terminal():
            return (0.0, 0.0)
        pts = float(self.s[k.M_POINTS])
        return (pts, -pts) if self.s[k.M_WINNER] == 0 else (-pts, pts)

    def winner(self) -> int | None:
        return int(self.s[k.M_WINNER]) if self.is_terminal() else None

    def win_type(self) -> str | None:
        """``"single"``, ``"gammon"``, ``"backgammon"`` or ``"dropped"`` (a refused double);
        None before the end."""
        return notation.result_name(int(self.s[k.M_RESULT]))

    def points(self) -> int:
        """Points the winner scores (win type x cube value); 0 before the end."""
        return int(self.s[k.M_POINTS])

    def num_turns(self) -> int:
        """Completed turns (the opening roll's turn included)."""
        return int(self.s[k.M_TURNS])

    # --- chance --------------------------------------------------------------------------------
    def roll_dice(self, rng: np.random.Generator) -> tuple[int, int]:
        """Roll the dice with ``rng`` (at the opening roll one die each, ties rolled again).
        Returns the dice as :meth:`set_dice` takes them."""
        if self._st & 7 > 1:
            self._not_chance()
        # A uniform number 0..179 (see rules.dice_of) from the top 16 bits of the generator's
        # 64-bit raw output, by rejection above 364 * 180 = 65520: exact, and 4x cheaper than
        # rng.integers. MT19937's raw output has 32 bits: it goes the slow way.
        bits = rng.bit_generator
        if type(bits) is _MT19937:
            r = int(rng.integers(180))
        else:
            r = bits.random_raw() >> 48
            while r >= 65520:
                r = bits.random_raw() >> 48
        game = self.game
        cell = game._ws.cell
        self._st = st = game._roll(self.s, r % 180, cell[1])
        cell[0] = self
        return (st >> 18) & 7, (st >> 21) & 7

    def set_dice(self, d1: int, d2: int) -> None:
        """Resolve the chance node with chosen dice. At the opening roll ``d1`` is seat 0's die
        and ``d2`` seat 1's (they must differ; the higher one starts and plays both)."""
        st = self._st
        if not (type(d1) is int and type(d2) is int and 0 < d1 < 7 and 0 < d2 < 7) or st & 7 > 1:
            self._check_dice(d1, d2)
        if st & 7 == 0 and d1 == d2:  # PH_OPENING
            raise IllegalActionError(
                f"the opening roll cannot be a tie ({d1}-{d2}): ties are rolled again"
            )
        cell = self.game._ws.cell
        self._st = self.game._set_dice(self.s, int(d1), int(d2), cell[1])
        cell[0] = self

    def _check_dice(self, d1: object, d2: object) -> None:
        if self._st & 7 > 1:
            self._not_chance()
        for d in (d1, d2):
            if isinstance(d, bool) or not isinstance(d, int | np.integer):
                raise ActionTypeError(f"dice must be integers 1..6, got {d!r}")
            if not 1 <= d <= 6:
                raise IllegalActionError(f"dice must be 1..6, got {d}")

    def _not_chance(self) -> None:
        if self.is_terminal():
            raise GameOverError("the game is over; no dice are rolled")
        raise IllegalActionError(
            f"no dice to roll now: seat {self.current_player} must act first "
            f"(legal actions {list(self.legal_actions())})"
        )

    # --- moves ---------------------------------------------------------------------------------
    def apply(self, action: int) -> None:
        """Play one action: a checker move, PASS, or a cube action. Illegal input raises and
        changes nothing."""
        game = self.game
        if type(action) is not int or not 0 <= action < game.num_actions or not self.s[73 + action]:
            action = self._validated(action)  # 73 == rules.MASK (inlined on the hot path)
        cell = game._ws.cell
        self._st = game._act(self.s, action, cell[1])
        cell[0] = self

    def _validated(self, action: object) -> int:
        action = check_action(action, self.game.num_actions)
        if self.is_terminal():
            raise GameOverError("the game is over; no further moves can be played")
        if self.is_chance_node():
            raise IllegalActionError(
                "the dice have not been rolled: call roll_dice(rng) or set_dice(d1, d2) first"
            )
        if self.s[k.MASK + action]:
            return action
        legal = ", ".join(f"{a} ({describe_action(a)})" for a in self.legal_actions())
        raise IllegalActionError(
            f"action {action} ({describe_action(action)}) is not legal for seat "
            f"{self.current_player} with dice {self.dice()}; legal actions: {legal}"
        )

    def apply_play(self, index: int) -> None:
        """Play the whole legal play ``index`` (of :meth:`legal_plays`) and pass the turn."""
        st = self._st
        if type(index) is not int or st & 7 != 4 or not 0 <= index < (st >> 5) & 8191:
            index = self._check_play_index(index)
        game = self.game
        cell = game._ws.cell
        scratch = cell[1] if cell[0] is self else self._scratch()
        self._st = game._play(self.s, index, scratch)

    def _check_play_index(self, index: object) -> int:
        if isinstance(index, bool) or not isinstance(index, int | np.integer):
            raise ActionTypeError(f"a play index must be an integer, got {index!r}")
        if self._st & 7 != k.PH_MOVE:
            if self.is_terminal():
                raise GameOverError("the game is over; no further moves can be played")
            raise IllegalActionError(
                "no plays now: "
                + ("roll the dice first" if self.is_chance_node() else "a cube decision is due")
            )
        n = self.num_plays()
        if not 0 <= index < n:
            raise IllegalActionError(f"play index {index} is out of range 0..{n - 1}")
        return int(index)

    def clone(self) -> BackgammonState:
        c = BackgammonState.__new__(BackgammonState)
        c.game = self.game
        c.s = self.s.copy()
        c._st = self._st
        return c

    def __getstate__(self) -> dict:
        return {"game": self.game, "s": self.s}

    def __setstate__(self, state: dict) -> None:
        self.game = state["game"]
        self.s = state["s"]
        self._st = k.status(self.s)

    def __eq__(self, other: object) -> bool:
        """Same game, position, player, dice left, cube and result (not compared: the dice
        already played this turn, the turn counter)."""
        if not isinstance(other, BackgammonState):
            return NotImplemented
        return self.game == other.game and np.array_equal(self.s[_EQ_FIELDS], other.s[_EQ_FIELDS])

    def __hash__(self) -> int:
        return hash((self.game, self.s[_EQ_FIELDS].tobytes()))

    # --- text ----------------------------------------------------------------------------------
    def position_id(self) -> str:
        """GNU Backgammon's position ID with the seat on turn as the player on roll."""
        return self.to_text().split()[0]

    def gnubg_id(self) -> str:
        """GNU Backgammon's ``"POSITIONID:MATCHID"`` of this state (a money game: match length 0,
        score 0-0), read back by :meth:`BackgammonGame.state_from_gnubg_id` (and by gnubg). The
        opening roll to come is game state "none"; raises ValueError in the middle of a turn
        (some of the dice played), which gnubg's IDs cannot express. With the cube, a player who
        has chosen to roll rather than double reads back as about to double or roll."""
        return notation.state_to_gnubg_id(self.s)

    def to_text(self) -> str:
        """Compact position notation: ``"<position ID> <seat> <next> [cube=V[@S]]"``.

        * position ID: GNU Backgammon's, with ``seat`` as the player on roll (the ID's second
          player); ``seat`` is the seat on turn (the winner once the game is over; 0 before the
          opening roll);
        * next: ``open`` (opening roll to come), ``roll`` (seat to roll), the dice left to
          play (e.g. ``31``, ``6666``, ``66``), ``cube`` (seat to double or roll), ``take``
          (the opponent to take or drop seat's double), ``over`` (seat has won), ``drop``
          (seat won because its double was dropped);
        * ``cube=1`` (centred) or ``cube=V@S`` (value V owned by seat S), only in cube games.

        Example: ``"4HPwATDgc/ABMA 0 open"``, the start.
        """
        return notation.format_position(self.s, self.game.cube)

    def __str__(self) -> str:
        return notation.render_text(self.s, self.game.cube)

    def __repr__(self) -> str:
        return f"BackgammonState({self.to_text()!r})"
