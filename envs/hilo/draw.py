"""Pictures of a HiLo game for ``render_mode="rgb_array"`` (Pillow; not part of the engine).

Every layout is drawn as 2 x 6 cards; cards the viewer cannot see are drawn as card backs.
"""

from __future__ import annotations

import numpy as np
from PIL import ImageDraw
from spieltisch.envs._common import draw as d
from spieltisch.envs.hilo import rules as R
from spieltisch.envs.hilo.cards import (
    HALF_B,
    HALF_L,
    HALF_R,
    HALF_T,
    KING,
    WIZARD,
    Face,
)
from spieltisch.envs.hilo.engine import SCORE_CATEGORIES, HiLoState
from spieltisch.envs.hilo.notation import voided_cards

CARD_W, CARD_H, GAP = 64, 90, 6
BLOCK_W = R.COLUMNS * (CARD_W + GAP) - GAP
BLOCK_H = 2 * (CARD_H + GAP) - GAP + 26
MARGIN = 24
STRIP_H = CARD_H + 50
GOLD = (240, 196, 40)
GOLD_RIM = (150, 110, 20)
BACK = (40, 60, 110)
BACK_LINE = (90, 120, 180)
INK = (30, 25, 20)
KIND_COLOURS = (
    (225, 215, 190),  # resident
    (250, 225, 120),  # king
    (200, 170, 230),  # bard
    (240, 160, 140),  # dragon keeper
    (190, 190, 190),  # wolf keeper
    (170, 220, 240),  # unicorn keeper
    (220, 100, 90),  # dragon
    (140, 140, 150),  # wolf
    (140, 200, 235),  # unicorn
    (255, 150, 60),  # phoenix
    (110, 80, 160),  # wizard
)
KIND_LABELS = (
    "resident",
    "KING",
    "bard",
    "dragon\nkeeper",
    "wolf\nkeeper",
    "unicorn\nkeeper",
    "dragon",
    "wolf",
    "unicorn",
    "phoenix",
    "WIZARD",
)


def draw_card(
    draw: ImageDraw.ImageDraw,
    x: float,
    y: float,
    face: Face | None,
    hidden_but_shown: bool = False,
    voided: bool = False,
    highlight: bool = False,
) -> None:
    """One card at (x, y): its face, or a card back when ``face`` is None."""
    box = (x, y, x + CARD_W, y + CARD_H)
    outline = d.HIGHLIGHT if highlight else INK
    if face is None:
        draw.rounded_rectangle(box, radius=7, fill=BACK, outline=outline, width=2)
        for k in range(6, CARD_W + CARD_H, 12):  # diagonal hatching of a card back
            draw.line(
                (
                    x + max(0, k - CARD_H),
                    y + min(k, CARD_H),
                    x + min(k, CARD_W),
                    y + max(0, k - CARD_W),
                ),
                fill=BACK_LINE,
                width=1,
            )
        return
    fill = KIND_COLOURS[face.kind]
    draw.rounded_rectangle(box, radius=7, fill=fill, outline=outline, width=2)
    cx, cy = x + CARD_W / 2, y + CARD_H / 2
    r = 9
    # Half coins are half discs on the edges, so that two touching halves look like one coin.
    if face.halves & HALF_L:
        draw.pieslice((x - r, cy - r, x + r, cy + r), 270, 90, fill=GOLD, outline=GOLD_RIM)
    if face.halves & HALF_R:
        draw.pieslice(
            (x + CARD_W - r, cy - r, x + CARD_W + r, cy + r), 90, 270, fill=GOLD, outline=GOLD_RIM
        )
    if face.halves & HALF_T:
        draw.pieslice((cx - r, y - r, cx + r, y + r), 0, 180, fill=GOLD, outline=GOLD_RIM)
    if face.halves & HALF_B:
        draw.pieslice(
            (cx - r, y + CARD_H - r, cx + r, y + CARD_H + r), 180, 360, fill=GOLD, outline=GOLD_RIM
        )
    if face.coin:
        draw.ellipse((cx - 11, cy + 10, cx + 11, cy + 32), fill=GOLD, outline=GOLD_RIM, width=2)
    if face.kind == KING:
        draw.rectangle((cx - 14, cy + 22, cx + 14, cy + 30), fill=GOLD_RIM)  # the pedestal
    draw.multiline_text(
        (cx, y + 24), KIND_LABELS[face.kind], fill=INK, font=d.font(12), anchor="ma", align="center"
    )
    if hidden_but_shown:  # "all" view: a face-down card, shown to the spectator
        draw.rounded_rectangle(box, radius=7, outline=BACK, width=4)
        draw.text((x + 5, y + 4), "down", fill=BACK, font=d.font(10))
    if voided:
        draw.line((x + 4, y + 4, x + CARD_W - 4, y + CARD_H - 4), fill=(90, 90, 90), width=3)
        draw.line((x + CARD_W - 4, y + 4, x + 4, y + CARD_H - 4), fill=(90, 90, 90), width=3)
    if face.kind == WIZARD:
        draw.text((cx, y + CARD_H - 16), "*", fill=(255, 255, 255), font=d.font(16), anchor="ma")


def draw_state(state: HiLoState, viewer: int | str | None, names: list[str]) -> np.ndarray:
    """A picture of ``state`` as ``viewer`` sees it: a seat number, ``"public"`` (what every
    player sees) or None (every card, face-down ones marked ``down``). ``names[seat]`` labels
    the layouts."""
    game = state.game
    n = game.num_players
    faces = game.deck.card_faces
    see_all = viewer is None
    view = state.view(viewer if isinstance(viewer, int) else None)
    cols = 1 if n == 1 else 2
    rows = (n + cols - 1) // cols
    width = 2 * MARGIN + cols * BLOCK_W + (cols - 1) * 40
    height = 2 * MARGIN + STRIP_H + rows * (BLOCK_H + 24)
    image, draw = d.new_canvas(width, height)
    terminal = state.is_terminal()

    # Piles, held card and status on top.
    x, y = MARGIN + 10, MARGIN + 20
    d.write(draw, (x, y - 18), f"draw pile: {view.draw_size}", 14)
    if view.draw_size:
        draw_card(draw, x, y, None)
    x += CARD_W + 30
    disc = state.discard_pile()
    d.write(draw, (x, y - 18), f"discard: {len(disc)}", 14)
    if len(disc):
        draw_card(draw, x, y, faces[disc[-1]])
    x += CARD_W + 30
    if state.held_card is not None:
        d.write(draw, (x, y - 18), f"held ({state.held_from})", 14)
        shown = see_all or not view.held_hidden
        draw_card(draw, x, y, faces[state.held_card] if shown else None, highlight=True)
        x += CARD_W + 30
    if terminal:
        won = state.winners()
        status = "game over - winner" + ("s: " if len(won) > 1 else ": ")
        status += ", ".join(names[p] for p in won)
    else:
        status = f"{names[state.current_player]} to move ({state.phase})"
    d.write(draw, (x, y + 4), status, 16)
    if view.known_in_draw and not see_all:
        where = "draw pile or drawn card" if view.held_hidden else "draw pile"
        d.write(draw, (x, y + 28), f"known in {where}: " + " ".join(view.known_in_draw), 12)
    if who := ("all cards" if see_all else "public view" if viewer == "public" else None):
        d.write(draw, (x, y + 50), f"showing: {who}", 12)
    elif isinstance(viewer, int):
        d.write(draw, (x, y + 50), f"showing: what {names[viewer]} knows", 12)

    scores = state.score_breakdown() if terminal else None
    for seat in range(n):
        bx = MARGIN + (seat % cols) * (BLOCK_W + 40)
        by = MARGIN + STRIP_H + (seat // cols) * (BLOCK_H + 24)
        label = names[seat]
        if scores is not None:
            label += (
                f": {scores[seat]['total']} coins ("
                + ", ".join(
                    f"{k.replace('_coins', '')} {scores[seat][k]}" for k in SCORE_CATEGORIES
                )
                + ")"
            )
        elif seat == state.current_player:
            label += "  <- to move"
        d.write(draw, (bx, by), label, 14)
        ids, up = state.layout(seat), state.face_up(seat)
        voided = voided_cards(state, seat) if terminal else np.zeros(R.SLOTS, dtype=bool)
        for i in range(R.SLOTS):
            row, col = divmod(i, R.COLUMNS)
            cx = bx + col * (CARD_W + GAP)
            cy = by + 22 + row * (CARD_H + GAP)
            face = faces[ids[i]] if (up[i] or see_all) else None
            draw_card(draw, cx, cy, face, hidden_but_shown=see_all and not up[i], voided=voided[i])
    return d.to_array(image)
