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
seat on turn, what comes next) or from GNU Backgammon's ``"POSITIONID:MATCHID"`` (e.g.
``"4HPwATDgc/ABMA:cAkAAAAAAAAA"``: seat 1 to roll; ``BackgammonGame.state_from_gnubg_id``).
The seats are fixed (``player_i`` is seat ``i``); who moves first is decided by the opening
roll.

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
from spieltisch.envs._common.aec import TurnBasedEnv, make_wrapped
from spieltisch.envs.backgammon import rules as k
from spieltisch.envs.backgammon.engine import REWARD_MODES, BackgammonGame, BackgammonState
from spieltisch.envs.backgammon.notation import render_text


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
        self.observation_shape = (k.OBS_SIZE_CUBE if cube else k.OBS_SIZE,)
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
        out = np.empty(self.observation_shape, dtype=np.float32)
        k.observe(self.state.s, seat, out)  # the batch's observation kernel too
        return out

    def _final_rewards(self) -> list[float]:
        returns = self.state.returns()
        if self.reward_mode == "win":
            return [float(np.sign(r)) for r in returns]
        return list(returns)

    def forfeit_stake(self) -> float:
        """A single game at the cube's value (GNU Backgammon's "resign a single game"): a doubled
        game resigned or forfeited costs what dropping the cube would, so neither dodges it."""
        return float(self.state.cube()[0]) if self.reward_mode == "points" else 1.0

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
        from spieltisch.envs.backgammon.draw import draw_board  # Pillow only for pictures

        return draw_board(self.state)


def env(illegal_action: str = "raise", **options: Any) -> Any:
    """``raw_env(**options)`` inside PettingZoo's standard wrappers (see the module docstring)."""
    return make_wrapped(raw_env, illegal_action, options)
