"""Kalaha positions as text: the one-line notation of :meth:`~.engine.KalahaState.to_text`
(:func:`format_position`, :func:`parse_position`) and the board diagram that ``str(state)`` draws
(:func:`render_text`, :func:`parse_diagram`). Plain Python (none of this is on a hot path)."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

import numpy as np
from spieltisch.envs._common.errors import PositionFormatError
from spieltisch.envs._common.notation import check_stones, is_count
from spieltisch.envs.kalaha.rules import BOARD_DTYPE, one_side_empty

if TYPE_CHECKING:
    from spieltisch.envs.kalaha.engine import KalahaState


def format_position(state: KalahaState) -> str:
    """The notation of :meth:`KalahaState.to_text <.engine.KalahaState.to_text>`."""
    pits = state.game.pits
    b = state.board.tolist()
    s0 = ",".join(map(str, b[:pits])) + f"/{b[pits]}"
    s1 = ",".join(map(str, b[pits + 1 : 2 * pits + 1])) + f"/{b[-1]}"
    text = f"{s0} {s1} {state.current_player}"
    return text + " end" if state.is_terminal() else text


def parse_position(text: str, pits: int) -> tuple[np.ndarray, int, bool | None]:
    """Parse :meth:`KalahaState.to_text` notation; raises PositionFormatError naming the problem."""
    fields = text.split()
    if len(fields) not in (3, 4) or (len(fields) == 4 and fields[3] != "end"):
        side = ",".join(["3"] * pits) + "/0"
        raise PositionFormatError(
            f"expected 'PITS/STORE PITS/STORE PLAYER [end]' (e.g. '{side} {side} 0': seat 0's "
            f"pits and store, seat 1's, the player to move), got {text!r}"
        )
    counts: list[int] = []  # the board's cells in order: seat 0's pits and store, seat 1's
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
        for cell in [*cells, store_text]:
            if not is_count(cell):
                raise PositionFormatError(
                    f"seat {seat}: {cell!r} is not a non-negative whole number in {side_text!r}"
                )
            counts.append(int(cell))
    check_stones(counts)
    board = np.array(counts, dtype=BOARD_DTYPE)
    if fields[2] not in ("0", "1"):
        raise PositionFormatError(f"player to move must be 0 or 1, got {fields[2]!r}")
    player = int(fields[2])
    pits_empty = one_side_empty(board)
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
    # 4 columns a pit, wider when a pit holds 1,000 stones or more (they ran together)
    width = max(4, 1 + len(str(int(b.max()))))
    top = "".join(f"{int(v):>{width}}" for v in b[2 * pits : pits : -1])
    bottom = "".join(f"{int(v):>{width}}" for v in b[:pits])
    gap = " " * (width * pits + 2)
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
            if not all(is_count(c) for c in cells):
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
    check_stones(count for row in rows.values() for count in row)
    board = np.zeros(2 * pits + 2, dtype=BOARD_DTYPE)
    board[:pits] = rows["seat 0"]
    board[pits + 1 : 2 * pits + 1] = rows["seat 1"][::-1]
    board[-1], board[pits] = rows["stores"]
    return board, 0 if mover is None else mover, over
