"""Drawing helpers for the ``rgb_array`` renderings (Pillow), shared by the games."""

from __future__ import annotations

import math

import numpy as np
from PIL import Image, ImageDraw, ImageFont

WOOD = (181, 134, 84)
WOOD_DARK = (122, 84, 48)
PIT = (96, 62, 33)
PIT_RIM = (70, 44, 22)
TEXT = (250, 245, 235)
HIGHLIGHT = (255, 215, 0)
STONE_COLOURS = ((226, 226, 226), (120, 170, 220), (220, 130, 120), (150, 200, 140))


def font(size: int) -> ImageFont.ImageFont:
    """Pillow's bundled font at ``size`` pixels (no system font files needed)."""
    try:
        return ImageFont.load_default(size=size)
    except TypeError:  # Pillow < 10.1 has only the small bitmap font
        return ImageFont.load_default()


def new_canvas(width: int, height: int) -> tuple[Image.Image, ImageDraw.ImageDraw]:
    image = Image.new("RGB", (width, height), WOOD_DARK)
    draw = ImageDraw.Draw(image)
    draw.rounded_rectangle((6, 6, width - 7, height - 7), radius=24, fill=WOOD)
    return image, draw


def draw_pit(
    draw: ImageDraw.ImageDraw,
    box: tuple[float, float, float, float],
    count: int,
    highlight: bool = False,
    label_size: int = 16,
) -> None:
    """A pit (ellipse) in ``box`` with ``count`` stones drawn as dots and the count written."""
    x0, y0, x1, y1 = box
    draw.ellipse(box, fill=PIT, outline=HIGHLIGHT if highlight else PIT_RIM, width=3)
    cx, cy = (x0 + x1) / 2, (y0 + y1) / 2
    rx, ry = (x1 - x0) / 2 - 8, (y1 - y0) / 2 - 8
    shown = min(count, 24)
    stone = max(3.0, min(rx, ry) / 4.2)
    for k in range(shown):
        # Stones on a sunflower spiral: evenly spread for any count.
        r = math.sqrt((k + 0.5) / max(shown, 1))
        angle = k * 2.39996
        sx, sy = cx + r * rx * 0.8 * math.cos(angle), cy + r * ry * 0.8 * math.sin(angle)
        colour = STONE_COLOURS[k % len(STONE_COLOURS)]
        draw.ellipse((sx - stone, sy - stone, sx + stone, sy + stone), fill=colour, outline=PIT_RIM)
    text = str(count)
    f = font(label_size)
    left, top, right, bottom = draw.textbbox((0, 0), text, font=f)
    tx, ty = cx - (right - left) / 2, y1 - (bottom - top) - 6
    draw.rectangle((tx - 3, ty - 1, tx + (right - left) + 3, ty + (bottom - top) + 3), fill=PIT_RIM)
    draw.text((tx, ty - top), text, fill=TEXT, font=f)


def write(
    draw: ImageDraw.ImageDraw,
    xy: tuple[float, float],
    text: str,
    size: int = 18,
    anchor: str = "la",
) -> None:
    draw.text(xy, text, fill=TEXT, font=font(size), anchor=anchor)


def to_array(image: Image.Image) -> np.ndarray:
    """The image as an (H, W, 3) uint8 array, as PettingZoo's ``rgb_array`` expects."""
    return np.asarray(image.convert("RGB"), dtype=np.uint8).copy()
