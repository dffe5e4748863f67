"""Pictures of a backgammon position for ``render_mode="rgb_array"`` (Pillow; not part of the
engine)."""

from __future__ import annotations

from typing import Any

import numpy as np
from spieltisch.envs._common import draw as d
from spieltisch.envs.backgammon import rules as k
from spieltisch.envs.backgammon.engine import BackgammonState

_FELT = (32, 96, 64)
_POINT_COLOURS = ((206, 170, 120), (140, 60, 45))
_CHECKER = ((240, 240, 232), (40, 40, 40))
_CHECKER_RIM = ((150, 150, 140), (0, 0, 0))


def draw_board(state: BackgammonState) -> np.ndarray:
    """A picture of the board from seat 0's side: seat 0's checkers white (X in the text
    board), home board bottom right; seat 1's black. Bar in the middle, borne-off trays on the
    right, the dice left to play on the mover's half."""
    s = state.s
    pw, ph, margin, bar_w, tray_w = 44, 220, 24, 48, 60
    width = 2 * margin + 12 * pw + bar_w + tray_w + 10
    height = 2 * margin + 2 * ph + 80
    image, draw = d.new_canvas(width, height)
    x0, y0 = margin, margin + 20
    draw.rectangle((x0, y0, x0 + 12 * pw + bar_w, y0 + 2 * ph + 40), fill=_FELT)
    radius = pw // 2 - 2

    def point_x(p: int) -> float:
        """Left edge of seat 0's point p (1..24)."""
        col = 12 - p if p <= 12 else p - 13  # bottom row runs 12..1, top row 13..24
        return x0 + col * pw + (bar_w if col >= 6 else 0)

    for p in range(1, 25):
        x = point_x(p)
        top = p > 12
        base = y0 if top else y0 + 2 * ph + 40
        tip = base + ph if top else base - ph
        draw.polygon([(x, base), (x + pw, base), (x + pw / 2, tip)], fill=_POINT_COLOURS[p % 2])
        d.write(draw, (x + pw / 2, base - 16 if top else base + 4), str(p), 13, anchor="ma")
        c0 = int(s[p - 1])
        c1 = int(s[k.SIDE + 24 - p])
        count, seat = (c0, 0) if c0 else (c1, 1)
        for i in range(min(count, 5)):
            cy = base + radius + 2 + 2 * radius * i if top else base - radius - 2 - 2 * radius * i
            cx = x + pw / 2
            draw.ellipse(
                (cx - radius, cy - radius, cx + radius, cy + radius),
                fill=_CHECKER[seat],
                outline=_CHECKER_RIM[seat],
                width=2,
            )
        if count > 5:
            # The count on the fifth checker, in the other colour.
            cy = base + radius + 2 + 8 * radius if top else base - radius - 2 - 8 * radius
            draw.text((x + pw / 2, cy - 8), str(count), fill=_CHECKER[1 - seat], font=d.font(15),
                      anchor="ma")  # fmt: skip
    # Bar: seat 0's checkers in the bottom half of the bar, seat 1's in the top half.
    bar_x = x0 + 6 * pw
    draw.rectangle((bar_x, y0, bar_x + bar_w, y0 + 2 * ph + 40), fill=d.WOOD_DARK)
    for seat in (0, 1):
        n = int(s[k.SIDE * seat + k.BAR])
        if n:
            cx = bar_x + bar_w / 2
            cy = y0 + ph + 20 + (60 if seat == 0 else -60)
            draw.ellipse(
                (cx - radius, cy - radius, cx + radius, cy + radius),
                fill=_CHECKER[seat],
                outline=_CHECKER_RIM[seat],
                width=2,
            )
            d.write(draw, (cx, cy + radius + 4 if seat == 0 else cy - radius - 18), str(n), 14,
                    anchor="ma")  # fmt: skip
    # Borne-off trays.
    tray_x = x0 + 12 * pw + bar_w + 10
    for seat in (0, 1):
        n = int(s[k.SIDE * seat + k.OFF])
        ty = y0 + ph + 50 if seat == 0 else y0
        draw.rectangle((tray_x, ty, tray_x + tray_w - 10, ty + ph - 10), fill=d.WOOD_DARK)
        for i in range(n):
            yy = ty + ph - 18 - i * 12 if seat == 0 else ty + 4 + i * 12
            draw.rectangle(
                (tray_x + 6, yy, tray_x + tray_w - 16, yy + 9),
                fill=_CHECKER[seat],
                outline=_CHECKER_RIM[seat],
            )
        d.write(draw, (tray_x + (tray_w - 10) / 2, ty + ph - 6 if seat == 0 else ty + ph - 22),
                f"off {n}", 12, anchor="ma")  # fmt: skip
    # Dice left to play, on the mover's half (seat 0 plays the bottom, right of the bar).
    dice = state.dice()
    if dice:
        size = 30
        dy = y0 + ph + 20 - size / 2
        start = bar_x + bar_w + 20 if state.turn == 0 else x0 + 20
        for i, die in enumerate(dice):
            _draw_die(draw, start + i * (size + 10), dy, size, die)
    phase = state.phase
    if phase == k.PH_OVER:
        status = f"game over: seat {state.winner()} wins {state.points()} ({state.win_type()})"
    elif phase == k.PH_MOVE:
        status = f"seat {state.turn} ({'white' if state.turn == 0 else 'black'}) to move"
    elif phase == k.PH_CUBE:
        status = f"seat {state.turn} to double or roll"
    elif phase == k.PH_TAKE:
        status = f"seat {1 - state.turn} to take or drop"
    else:
        status = "dice to roll"
    if state.game.cube:
        value, owner = state.cube()
        status += f"   cube {value}" + ("" if owner is None else f" (seat {owner})")
    d.write(draw, (width / 2, height - 30), status, 18, anchor="ma")
    return d.to_array(image)


def _draw_die(draw: Any, x: float, y: float, size: float, value: int) -> None:
    draw.rounded_rectangle((x, y, x + size, y + size), radius=5, fill=(250, 250, 245),
                           outline=(30, 30, 30), width=2)  # fmt: skip
    pips = {
        1: [(0.5, 0.5)],
        2: [(0.25, 0.25), (0.75, 0.75)],
        3: [(0.25, 0.25), (0.5, 0.5), (0.75, 0.75)],
        4: [(0.25, 0.25), (0.75, 0.25), (0.25, 0.75), (0.75, 0.75)],
        5: [(0.25, 0.25), (0.75, 0.25), (0.5, 0.5), (0.25, 0.75), (0.75, 0.75)],
        6: [(0.25, 0.25), (0.75, 0.25), (0.25, 0.5), (0.75, 0.5), (0.25, 0.75), (0.75, 0.75)],
    }[value]
    r = size / 10
    for px, py in pips:
        cx, cy = x + px * size, y + py * size
        draw.ellipse((cx - r, cy - r, cx + r, cy + r), fill=(20, 20, 20))
