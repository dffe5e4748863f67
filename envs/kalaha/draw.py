"""Pictures of a Kalaha board for ``render_mode="rgb_array"`` (Pillow; not part of the engine)."""

from __future__ import annotations

import numpy as np
from spieltisch.envs._common import draw as d
from spieltisch.envs.kalaha.engine import KalahaState


def draw_board(state: KalahaState) -> np.ndarray:
    """A picture of the board: seat 1's row on top, seat 0's at the bottom, stores at the ends."""
    pits = state.game.pits
    cell, margin, store_w = 90, 24, 90
    width = 2 * margin + 2 * store_w + pits * cell + 20
    height = 2 * cell + 2 * margin + 60
    image, draw = d.new_canvas(width, height)
    board = state.board
    x_first = margin + store_w + 10
    y_top, y_bottom = margin + 30, margin + 30 + cell
    mover = None if state.is_terminal() else state.current_player
    for i in range(pits):
        # Seat 1's pit i is on seat 0's right-hand side, so its row runs right to left.
        x_top = x_first + (pits - 1 - i) * cell
        d.draw_pit(
            draw,
            (x_top + 6, y_top + 6, x_top + cell - 6, y_top + cell - 6),
            int(board[pits + 1 + i]),
            highlight=mover == 1 and board[pits + 1 + i] > 0,
        )
        x_bot = x_first + i * cell
        d.draw_pit(
            draw,
            (x_bot + 6, y_bottom + 6, x_bot + cell - 6, y_bottom + cell - 6),
            int(board[i]),
            highlight=mover == 0 and board[i] > 0,
        )
    d.draw_pit(draw, (margin, y_top + 10, margin + store_w, y_bottom + cell - 10), int(board[-1]))
    x_store0 = x_first + pits * cell + 10
    d.draw_pit(
        draw, (x_store0, y_top + 10, x_store0 + store_w, y_bottom + cell - 10), int(board[pits])
    )
    d.write(draw, (margin + 6, 10), "seat 1", 18)
    d.write(draw, (width - margin - 6, height - 12), "seat 0", 18, anchor="rd")
    status = "game over" if state.is_terminal() else f"seat {state.current_player} to move"
    d.write(draw, (width / 2, height - 12), status, 18, anchor="md")
    return d.to_array(image)
