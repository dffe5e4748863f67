"""# Hus (``hus_v0``)

Hus, the 4 x 8 mancala of the Philos manual, with the rules of ``docs/rules/hus.md``. Two players.

| | |
|---|---|
| Import | ``from spieltisch.envs import hus_v0`` |
| Agents | ``player_0``, ``player_1`` |
| Actions | ``Discrete(16)``: the pit to empty, from the mover's view: ``0..7`` outer row (row 1) columns 0..7 from the left, ``8..15`` inner row (row 2) columns 0..7 |
| Observations | ``{"observation": Box(0, 48, (32,), float32), "action_mask": Box(0, 1, (16,), int8)}`` |
| Rewards | at the end: +1 win, -1 loss (``reward="points"``: +/- the winner's points, doubled on a wipe-out); 0 on truncation (a draw) |

## Options (keyword arguments of ``env()`` / ``raw_env()``)

| option | default | meaning |
|---|---|---|
| ``reward`` | ``"win"`` | ``"win"`` (+1/-1) or ``"points"`` (the winner's points, see below) |
| ``max_turns`` | 1000 | moves after which the game is truncated and counts as a draw (Hus games can cycle) |
| ``max_sown`` | 100000 | sowing limit of one move (the never-ending-move rule, ``docs/rules/hus.md``) |
| ``random_start`` | False | seat the agents in a seeded random order, so either may move first |
| ``render_mode`` | None | ``"ansi"`` (text board), ``"rgb_array"`` (picture), ``"human"`` (prints the text board) |
| ``illegal_action`` | ``"raise"`` | ``env()`` only: ``"raise"`` a clear error, or ``"terminate"`` (PettingZoo classic: -1 and game over) |

## Observation, line by line (from the point of view of the agent it is given to)

| index | meaning |
|---|---|
| ``0 .. 7`` | stones in the agent's outer row (row 1), columns 0..7 from its left (= actions 0..7) |
| ``8 .. 15`` | stones in the agent's inner row (row 2), columns 0..7 from its left (= actions 8..15) |
| ``16 .. 23`` | stones in the opponent's inner row, index ``16 + c`` is the pit facing the agent's inner column ``c`` |
| ``24 .. 31`` | stones in the opponent's outer row, index ``24 + c`` is the pit behind ``16 + c`` |

Raw stone counts (48 in all). So the agent's capture targets for its inner pit ``c`` are
``16 + c`` and ``24 + c``. ``action_mask[a] == 1`` when pit ``a`` holds 2 or more stones and it
is the agent's turn; all zeros otherwise.

## Infos
Every step: ``seat`` (0 moves first). At the end also ``winner`` (agent name), ``points`` (the
winner's points: stones on the winner's side, doubled if the loser has none left), ``stones``
and ``opponent_stones``. What the last move did (stones sown, relay steps, captures, how it
ended) is ``env.unwrapped.state.last_move``.

## Versions
* v0: first release.
"""

from __future__ import annotations

from typing import Any, ClassVar

import numpy as np
from spieltisch.envs._common.aec import TurnBasedEnv, make_wrapped
from spieltisch.envs._common.notation import check_game_stones
from spieltisch.envs.hus.draw import draw_board
from spieltisch.envs.hus.engine import HusGame, HusState
from spieltisch.envs.hus.notation import render_text
from spieltisch.envs.hus.rules import DEFAULT_MAX_SOWN, observe

REWARD_MODES = ("win", "points")


class raw_env(TurnBasedEnv):
    """Hus as a PettingZoo AEC env without wrappers (raises on illegal actions)."""

    metadata: ClassVar[dict[str, Any]] = {**TurnBasedEnv.metadata, "name": "hus_v0"}
    num_actions = 16
    observation_shape = (32,)
    observation_high = 48.0

    def __init__(
        self,
        reward: str = "win",
        max_turns: int = 1000,
        max_sown: int = DEFAULT_MAX_SOWN,
        random_start: bool = False,
        render_mode: str | None = None,
    ) -> None:
        if reward not in REWARD_MODES:
            raise ValueError(f"reward must be one of {REWARD_MODES}, got {reward!r}")
        self.game = HusGame(max_sown=max_sown)
        self.reward_mode = reward
        super().__init__(2, render_mode, max_turns, random_start)
        self.state: HusState | None = None

    def _new_state(self) -> HusState:
        return self.game.new_initial_state()

    def _state_from_text(self, text: str) -> HusState:
        state = self.game.state_from_text(text)
        check_game_stones(state.board, self.game.total_stones)
        return state

    def _observation(self, seat: int) -> np.ndarray:
        out = np.empty(self.observation_shape, dtype=np.float32)
        observe(self.state.board, seat, out)
        return out

    def _final_rewards(self) -> list[float]:
        returns = self.state.returns()
        if self.reward_mode == "points":
            points = float(self.state.points())
            return [r * points for r in returns]
        return list(returns)

    def _final_info(self, seat: int) -> dict[str, Any]:
        winner = self.state.winner()
        return {
            "winner": self._agent_of_seat[winner],
            "points": self.state.points(),
            "stones": self.state.stones(seat),
            "opponent_stones": self.state.stones(1 - seat),
        }

    def _render_text(self) -> str:
        names = ", ".join(f"{a} = seat {s}" for a, s in self._seat_of.items())
        return f"{render_text(self.state)}\n({names})"

    def _render_rgb(self) -> np.ndarray:
        return draw_board(self.state)


def env(illegal_action: str = "raise", **options: Any) -> Any:
    """``raw_env(**options)`` inside PettingZoo's standard wrappers (see the module docstring)."""
    return make_wrapped(raw_env, illegal_action, options)
