"""# Backgammon (``backgammon_v0``)

Backgammon with the rules of ``docs/rules/backgammon.md`` (the Philos manual, completed with the
standard rules as GNU Backgammon plays them). Two players; the dice are rolled inside the env
from its seeded generator, the opening roll included (so either seat may move first: the
higher opening die starts and plays both dice).

| | |
|---|---|
| Import | ``from spieltisch.envs import backgammon_v0`` |
| Agents | ``player_0``, ``player_1`` |
| Actions | ``Discrete(151)`` (``Discrete(155)`` with ``cube=True``): one checker move ``source * 6 + (die - 1)``, ``150`` = pass; cube: ``151`` roll (no double), ``152`` double, ``153`` take, ``154`` drop |
| Observations | ``{"observation": Box(0, high, (59,) or (63,), float32), "action_mask": Box(0, 1, (num_actions,), int8)}`` |
| Rewards | at the end: +points / -points (1 single, 2 gammon, 3 backgammon, times the cube); ``reward="win"``: +1 / -1; 0 on truncation |

A turn is 0-4 checker-move steps of the same agent (the dice are played one at a time), or a
single ``pass`` when the roll cannot be played at all. ``source`` is from the mover's view:
0..23 = the mover's point 1..24, 24 = the bar; the checker moves ``die`` points towards the
mover's home board (index 0..5), or off. The mask allows exactly the checker moves that begin
some legal full play of the dice left, so the compulsory-play rules (use both dice if
possible, else the higher one; as many of a double as possible) hold whatever legal action
is picked. With the cube, a player who may double first chooses ``roll`` or ``double``; a
doubled player chooses ``take`` or ``drop``.

## Options (keyword arguments of ``env()`` / ``raw_env()``)

| option | default | meaning |
|---|---|---|
| ``cube`` | False | play with the doubling cube (money play, no Jacoby rule) |
| ``max_cube`` | 64 | doubling is allowed only while the cube is below this value |
| ``reward`` | ``"points"`` | ``"points"`` (win type x cube) or ``"win"`` (+1 / -1) |
| ``max_turns`` | 10000 | env steps after which the game is truncated (a guard; backgammon always ends) |
| ``render_mode`` | None | ``"ansi"`` (text board), ``"rgb_array"`` (picture), ``"human"`` (prints the text board) |
| ``illegal_action`` | ``"raise"`` | ``env()`` only: ``"raise"`` a clear error, or ``"terminate"`` (PettingZoo classic: -1 and game over) |

``reset(options={"position": text})`` starts from a position in the engine's notation
(``BackgammonState.to_text``, e.g. ``"4HPwATDgc/ABMA 0 roll"``; GNU Backgammon position ID,
seat on turn, what comes next). The seats are fixed (``player_i`` is seat ``i``); who moves first
is decided by the opening roll.

## Observation, line by line (from the point of view of the agent it is given to)

Points are numbered from that agent's view: its home board is points 1..6, it moves from 24
towards 1. Raw counts, no scaling.

| index | meaning |
|---|---|
| ``0 .. 23`` | the agent's checkers on its points 1..24 (index ``i`` = point ``i + 1``) |
| ``24 .. 47`` | the opponent's checkers on the same points (index ``24 + i`` = the agent's point ``i + 1``) |
| ``48`` | the agent's checkers on the bar |
| ``49`` | the opponent's checkers on the bar |
| ``50`` | the agent's checkers borne off |
| ``51`` | the opponent's checkers borne off |
| ``52 .. 57`` | dice left to play this turn: how many dice showing 1, 2, ..., 6 (a fresh double shows 4); the mover's dice, whoever observes |
| ``58`` | 1 if this agent is the one to act now, else 0 |
| ``59`` | (cube only) cube value |
| ``60`` | (cube only) 1 if this agent owns the cube |
| ``61`` | (cube only) 1 if the opponent owns the cube |
| ``62`` | (cube only) 1 if a double is pending (the doubled player must take or drop) |

``action_mask[a] == 1`` for the legal actions of the agent to act; all zeros for the other.

## Infos
Every step: ``seat``. At the end also ``winner`` (agent name), ``win_type`` (``"single"``,
``"gammon"``, ``"backgammon"``, or ``"dropped"`` when a double was refused), ``points`` (points
this agent won, negative when it lost: win type x cube), ``cube`` (final cube value) and
``turns`` (completed turns).

## Versions
* v0: first release.
"""

from __future__ import annotations

from typing import Any, ClassVar

import numpy as np
from spieltisch.envs._common import draw as d
from spieltisch.envs._common.aec import TurnBasedEnv, make_wrapped
from spieltisch.envs.backgammon import rules as k
from spieltisch.envs.backgammon.engine import BackgammonGame, BackgammonState
from spieltisch.envs.backgammon.notation import render_text

REWARD_MODES = ("points", "win")
OBS_SIZE = 59
OBS_SIZE_CUBE = 63


def observation_of(state: BackgammonState, seat: int) -> np.ndarray:
    """The observation vector of ``seat`` (layout in the module docstring)."""
    s = state.s
    cube = state.game.cube
    obs = np.zeros(OBS_SIZE_CUBE if cube else OBS_SIZE, dtype=np.float32)
    own = k.SIDE * seat
    opp = k.SIDE * (1 - seat)
    obs[0:24] = s[own : own + 24]
    obs[24:48] = s[opp + 23 : opp - 1 if opp else None : -1]  # opponent's index 23 - i
    obs[48] = s[own + k.BAR]
    obs[49] = s[opp + k.BAR]
    obs[50] = s[own + k.OFF]
    obs[51] = s[opp + k.OFF]
    for die in s[k.M_DICE : k.M_DICE + s[k.M_NDICE]]:
        obs[51 + die] += 1
    obs[58] = float(state.current_player == seat and not state.is_terminal())
    if cube:
        owner = int(s[k.M_OWNER])
        obs[59] = s[k.M_CUBE]
        obs[60] = owner == seat
        obs[61] = owner == 1 - seat
        obs[62] = state.phase == k.PH_TAKE
    return obs


class raw_env(TurnBasedEnv):
    """Backgammon as a PettingZoo AEC env without wrappers (raises on illegal actions)."""

    metadata: ClassVar[dict[str, Any]] = {
        **TurnBasedEnv.metadata,
        "name": "backgammon_v0",
        "render_fps": 4,
    }

    def __init__(
        self,
        cube: bool = False,
        max_cube: int = 64,
        reward: str = "points",
        max_turns: int = 10000,
        render_mode: str | None = None,
    ) -> None:
        self.game = BackgammonGame(cube=cube, max_cube=max_cube)
        if reward not in REWARD_MODES:
            raise ValueError(f"reward must be one of {REWARD_MODES}, got {reward!r}")
        self.reward_mode = reward
        self.num_actions = self.game.num_actions
        self.observation_shape = (OBS_SIZE_CUBE if cube else OBS_SIZE,)
        self.observation_high = float(max(15, max_cube if cube else 15))
        super().__init__(2, render_mode, max_turns, random_start=False)
        self.state: BackgammonState | None = None

    def _new_state(self) -> BackgammonState:
        return self.game.new_initial_state()

    def _state_from_text(self, text: str) -> BackgammonState:
        return self.game.state_from_text(text)

    def _after_move(self) -> None:
        # Chance events: the opening roll and every later roll, from the env's generator.
        if self.state.is_chance_node():
            self.state.roll_dice(self._rng)

    def _observation(self, seat: int) -> np.ndarray:
        return observation_of(self.state, seat)

    def _final_rewards(self) -> list[float]:
        returns = self.state.returns()
        if self.reward_mode == "win":
            return [float(np.sign(r)) for r in returns]
        return list(returns)

    def _final_info(self, seat: int) -> dict[str, Any]:
        state = self.state
        winner = state.winner()
        return {
            "winner": None if winner is None else self._agent_of_seat[winner],
            "win_type": state.win_type(),
            "points": int(state.returns()[seat]),
            "cube": state.cube()[0],
            "turns": state.num_turns(),
        }

    def _render_text(self) -> str:
        names = ", ".join(f"{a} = seat {s} ({'XO'[s]})" for a, s in self._seat_of.items())
        return f"{render_text(self.state.s, self.game.cube)}\n({names})"

    def _render_rgb(self) -> np.ndarray:
        return draw_board(self.state)


# --- the picture ---------------------------------------------------------------------------------
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


def env(illegal_action: str = "raise", **options: Any) -> Any:
    """``raw_env(**options)`` inside PettingZoo's standard wrappers (see the module docstring)."""
    return make_wrapped(raw_env, illegal_action, options)
