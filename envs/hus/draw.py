"""Pictures of a Hus board for ``render_mode="rgb_array"`` (Pillow; not part of the engine)."""

from __future__ import annotations

import numpy as np
from spieltisch.envs._common import draw as d
from spieltisch.envs.hus.engine import HusState


def draw_board(state: HusState) -> np.ndarray:
    """A picture of the 4 x 8 board from above, seat 1's rows on top, seat 0's at the bottom."""
    cell, margin, label_w = 78, 20, 110
    width = 2 * margin + label_w + 8 * cell
    height = 2 * margin + 4 * cell + 70
    image, draw = d.new_canvas(width, height)
    p0, p1 = state.pits_by_action(0), state.pits_by_action(1)
    # Rows from top to bottom, each as (label, counts left to right, owner, actions left to right).
    rows = [
        ("seat 1 row 1", p1[7::-1], 1, range(7, -1, -1)),
        ("seat 1 row 2", p1[15:7:-1], 1, range(15, 7, -1)),
        ("seat 0 row 2", p0[8:16], 0, range(8, 16)),
        ("seat 0 row 1", p0[0:8], 0, range(0, 8)),
    ]
    mover = None if state.is_terminal() else state.current_player
    y = margin + 20
    for r, (label, counts, owner, actions) in enumerate(rows):
        if r == 2:
            draw.line((margin, y - 2, width - margin, y - 2), fill=d.WOOD_DARK, width=4)
        d.write(draw, (margin + 4, y + cell / 2), label, 16, anchor="lm")
        for c, (count, action) in enumerate(zip(counts, actions, strict=True)):
            x = margin + label_w + c * cell
            playable = owner == mover and bool(state.legal_mask()[action])
            d.draw_pit(draw, (x + 5, y + 5, x + cell - 5, y + cell - 5), int(count), playable)
        y += cell
    if state.is_terminal():
        status = f"game over: seat {state.winner()} wins, {state.points()} points"
    else:
        status = f"seat {state.current_player} to move"
    d.write(draw, (width / 2, height - margin), status, 18, anchor="md")
    return d.to_array(image)
