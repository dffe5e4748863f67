"""# Kalaha (``kalaha_v0``)

Kalah as in the Goki manual, with the rules of ``docs/rules/kalaha.md``. Two players.

| | |
|---|---|
| Import | ``from spieltisch.envs import kalaha_v0`` |
| Agents | ``player_0``, ``player_1`` |
| Actions | ``Discrete(pits)``: the pit to empty, 0..pits-1 counted from the mover's left |
| Observations | ``{"observation": Box(0, 2*pits*seeds, (2*pits+2,), float32), "action_mask": Box(0, 1, (pits,), int8)}`` |
| Rewards | at the end: +1 win, -1 loss, 0 draw (``reward="score"``: own store minus opponent's store); 0 on truncation |

## Options (keyword arguments of ``env()`` / ``raw_env()``)

| option | default | meaning |
|---|---|---|
| ``pits`` | 6 | playing pits per side |
| ``seeds`` | 6 | stones per pit at the start (6 x 6 = 72 stones, as in the manual) |
| ``rules`` | ``"goki"`` | ``"goki"``: capture also when the opposite pit is empty (the manual); ``"standard"``: no capture then (OpenSpiel, most literature) |
| ``reward`` | ``"win"`` | ``"win"`` (+1/-1/0) or ``"score"`` (final store difference) |
| ``max_turns`` | 1000 | moves after which the game is truncated (a guard: Kalaha always ends) |
| ``random_start`` | False | seat the agents in a seeded random order, so either may move first |
| ``render_mode`` | None | ``"ansi"`` (text board), ``"rgb_array"`` (picture), ``"human"`` (prints the text board) |
| ``illegal_action`` | ``"raise"`` | ``env()`` only: ``"raise"`` a clear error, or ``"terminate"`` (PettingZoo classic: -1 and game over) |

## Observation, line by line (from the point of view of the agent it is given to)

| index | meaning |
|---|---|
| ``0 .. pits-1`` | stones in the agent's own pits, from its left (index ``i`` is action ``i``) |
| ``pits`` | stones in the agent's own store |
| ``pits+1 .. 2*pits`` | stones in the opponent's pits, from the opponent's left (so index ``pits+1+i`` is opposite the agent's pit ``pits-1-i``) |
| ``2*pits+1`` | stones in the opponent's store |

Raw stone counts (no scaling). ``action_mask[i] == 1`` when pit ``i`` holds stones and it is the
agent's turn; all zeros otherwise.

## Infos
Every step: ``seat`` (0 moves first). At the end also ``score`` (own store), ``opponent_score``,
``score_difference`` and ``winner`` (the winning agent's name, or None for a draw).

## Versions
* v0: first release.
"""

from __future__ import annotations

from typing import Any, ClassVar

import numpy as np
from spieltisch.envs._common.aec import TurnBasedEnv, make_wrapped
from spieltisch.envs._common.notation import check_game_stones
from spieltisch.envs.kalaha.draw import draw_board
from spieltisch.envs.kalaha.engine import KalahaGame, KalahaState
from spieltisch.envs.kalaha.notation import render_text
from spieltisch.envs.kalaha.rules import observe

REWARD_MODES = ("win", "score")


class raw_env(TurnBasedEnv):
    """Kalaha as a PettingZoo AEC env without wrappers (raises on illegal actions)."""

    metadata: ClassVar[dict[str, Any]] = {**TurnBasedEnv.metadata, "name": "kalaha_v0"}

    def __init__(
        self,
        pits: int = 6,
        seeds: int = 6,
        rules: str = "goki",
        reward: str = "win",
        max_turns: int = 1000,
        random_start: bool = False,
        render_mode: str | None = None,
    ) -> None:
        self.game = KalahaGame(pits=pits, seeds=seeds, rules=rules)
        if reward not in REWARD_MODES:
            raise ValueError(f"reward must be one of {REWARD_MODES}, got {reward!r}")
        self.reward_mode = reward
        self.num_actions = self.game.pits
        self.observation_shape = (2 * self.game.pits + 2,)
        self.observation_high = float(self.game.total_stones)
        super().__init__(2, render_mode, max_turns, random_start)
        self.state: KalahaState | None = None

    def _new_state(self) -> KalahaState:
        return self.game.new_initial_state()

    def _state_from_text(self, text: str) -> KalahaState:
        state = self.game.state_from_text(text)
        check_game_stones(state.board, self.game.total_stones)
        return state

    def _observation(self, seat: int) -> np.ndarray:
        out = np.empty(self.observation_shape, dtype=np.float32)
        observe(self.state.board, seat, out)
        return out

    def _final_rewards(self) -> list[float]:
        if self.reward_mode == "score":
            diff = float(self.state.score_difference())
            return [diff, -diff]
        return list(self.state.returns())

    def _final_info(self, seat: int) -> dict[str, Any]:
        stores = self.state.stores()
        winner = self.state.winner()
        return {
            "score": stores[seat],
            "opponent_score": stores[1 - seat],
            "score_difference": stores[seat] - stores[1 - seat],
            "winner": None if winner is None else self._agent_of_seat[winner],
        }

    def _render_text(self) -> str:
        names = ", ".join(f"{a} = seat {s}" for a, s in self._seat_of.items())
        return f"{render_text(self.state)}\n({names})"

    def _render_rgb(self) -> np.ndarray:
        return draw_board(self.state)


def env(illegal_action: str = "raise", **options: Any) -> Any:
    """``raw_env(**options)`` inside PettingZoo's standard wrappers (see the module docstring)."""
    return make_wrapped(raw_env, illegal_action, options)
