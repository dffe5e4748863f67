"""Hus positions as text: the one-line notation of :meth:`~.engine.HusState.to_text`
(:func:`format_position`, :func:`parse_position`) and the four-row diagram that ``str(state)``
draws (:func:`render_text`; :func:`parse_position` reads it back). Plain Python (none of this is on
a hot path)."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

import numpy as np
from spieltisch.envs._common.errors import PositionFormatError
from spieltisch.envs._common.notation import check_stones, is_count
from spieltisch.envs.hus.rules import BOARD_DTYPE, legal_bits

if TYPE_CHECKING:
    from spieltisch.envs.hus.engine import HusState


#: the one-line notation of the starting position (for messages)
START_EXAMPLE = "2,2,2,2,2,2,2,2/0,0,0,0,2,2,2,2 2,2,2,2,2,2,2,2/0,0,0,0,2,2,2,2 0"


def format_position(state: HusState) -> str:
    """The notation of :meth:`HusState.to_text <.engine.HusState.to_text>`."""
    sides = []
    for p in (0, 1):
        pits = state.pits_by_action(p).tolist()
        sides.append(",".join(map(str, pits[:8])) + "/" + ",".join(map(str, pits[8:])))
    return f"{sides[0]} {sides[1]} {state.current_player}"


def board_from_rows(rows: dict[tuple[int, int], list[int]]) -> np.ndarray:
    """The engine board from ``{(seat, row): [column 0..7 from that seat's left]}``; raises
    PositionFormatError if the counts are too many for the board."""
    check_stones(count for row in rows.values() for count in row)
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
        if not is_count(c):
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
        raise PositionFormatError(
            f"expected 'ROW1/ROW2 ROW1/ROW2 PLAYER' (the start: '{START_EXAMPLE}': each seat's "
            f"row 1 and row 2, then the player to move), got {text!r}"
        )
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
    board = board_from_rows(rows)
    movers = [int(m) for ln in lines for m in re.findall(r"seat ([01]) to move", ln)]
    # A finished game's diagram names the winner; the loser is the seat to move, unable to.
    winners = [int(w) for ln in lines for w in re.findall(r"game over: seat ([01]) wins", ln)]
    if len(movers) + len(winners) != 1:
        raise PositionFormatError(
            "a Hus diagram needs one line 'seat N to move' or 'game over: seat N wins' (N = 0 or 1)"
        )
    if winners:
        loser = 1 - winners[0]
        if legal_bits(board, loser):
            raise PositionFormatError(
                f"'game over: seat {winners[0]} wins' but seat {loser} can still move"
            )
        return board, loser
    return board, movers[0]


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
