"""# HiLo – Dein Königreich (``hilo_v0``)

HiLo as in the Schmidt manual, with the rules (and the reconstructed 69-card deck) of
``docs/rules/hilo.md``. 2 to 4 players, hidden information: every player sees only what it may know.

| | |
|---|---|
| Import | ``from spieltisch.envs import hilo_v0`` |
| Agents | ``player_0`` .. ``player_{n-1}`` |
| Actions | ``Discrete(50 + 12 (n - 1))``: one flat space, masked by phase (table below) |
| Observations | ``{"observation": Box(0, num_cards, (204 n + 60 + 3 F + n,), float32), "action_mask": Box(0, 1, (num_actions,), int8)}``; ``F`` = number of distinct card faces of the deck (22 for the shipped deck) |
| Rewards | at the end, zero-sum: each of k winners +1/k, every other player -1/(n-k), all tied 0 (``reward="coins"``: own coins minus the mean of the others'); 0 on truncation |

## Options (keyword arguments of ``env()`` / ``raw_env()``)

| option | default | meaning |
|---|---|---|
| ``num_players`` | 2 | 2, 3 or 4 |
| ``final_round`` | False | False: the game ends once a turn leaves a layout with all 12 cards face up (as published); True: every other player has one more turn first |
| ``deck`` | None | None for the shipped deck (``spieltisch/envs/hilo/data/deck.json``) or the path of another deck file (format in ``spieltisch.envs.hilo.cards``) |
| ``reward`` | ``"win"`` | ``"win"`` (shared win, zero-sum) or ``"coins"`` (coins minus the mean of the other players' coins) |
| ``max_turns`` | 2000 | actions (all decisions, setup included) after which the game is truncated, a draw (random games take about 80 actions with 2 players, 140 with 4) |
| ``random_start`` | False | seat the agents in a seeded random order (seat 0 turns up its starting card first and moves first) |
| ``render_mode`` | None | ``"ansi"`` (text), ``"rgb_array"`` (picture), ``"human"`` (prints the text) |
| ``render_view`` | ``"public"`` | whose knowledge a rendering shows: ``"public"`` (what every player sees: face-down cards and another player's drawn card as backs), an agent name (``"player_1"``) or index (``1``) for what that agent knows, or ``"all"`` (every card, for spectators and debugging). Rendering never feeds an observation. |
| ``illegal_action`` | ``"raise"`` | ``env()`` only: ``"raise"`` a clear error, or ``"terminate"`` (PettingZoo classic: -1 and game over) |

## Actions (``i`` = slot ``6 * row + column``, row 0 on top, columns from the owner's left)

| action | phase | meaning |
|---|---|---|
| ``0`` | turn | A: take the top card of the discard pile |
| ``1`` | turn | B: draw the top card of the draw pile (only the drawer sees it) |
| ``2 + i`` | taken, drawn | put the held card face up into slot ``i``; the slot's card goes face up onto the discard pile |
| ``14 + i`` | drawn | discard the drawn card and turn face-down slot ``i`` face up |
| ``26 + i`` | setup, phoenix | turn face-down slot ``i`` face up (the starting card; the phoenix effect) |
| ``38 + i`` | wizard | wizard effect, step 1: the own card to give (any but a face-up wizard) |
| ``50 + 12 (j - 1) + i`` | wizard2 | wizard effect, step 2: take slot ``i`` of the ``j``-th player to the mover's left (``j = 1 .. n-1``; any card but a face-up wizard) |

Phases: ``setup`` (each seat in turn chooses its starting card), ``turn``, ``taken`` (holding the
discard), ``drawn`` (holding a drawn card), ``phoenix`` and ``wizard``/``wizard2`` (an effect to
resolve). Effects without a possible choice lapse by themselves, so the mask is never all zero for
the agent to move.

## Observation, line by line (from the point of view of the agent it is given to)

A *card block* has 16 entries: kind one-hot (11: resident, king, bard, dragon keeper, wolf keeper,
unicorn keeper, dragon, wolf, unicorn, phoenix, wizard), half coin on the left, right, top, bottom
edge (4), whole coin (1). ``L = 204 n``; ``F`` faces in the order of ``game.deck.faces``.

| index | meaning |
|---|---|
| ``17 (12 r + i)`` | layout of the player ``r`` places to the agent's left (``r = 0`` the agent itself, then in playing order), slot ``i``: 1 if the card lies face down (nobody, its owner included, knows it) |
| ``17 (12 r + i) + 1 .. +16`` | that card's block if it lies face up, zeros if face down |
| ``L .. L+15`` | top card of the discard pile (block; zeros if the pile is empty) |
| ``L+16`` | 1 if the player to move holds a card (drawn or taken) |
| ``L+17`` | 1 if that card was drawn from the draw pile (0: taken from the discard pile) |
| ``L+18`` | 1 if this agent may see the held card (taken from the discard, or drawn by this agent) |
| ``L+19 .. L+34`` | the held card's block, if this agent may see it |
| ``L+35 .. L+34+F`` | cards of each face in the discard pile (all of it is public) |
| ``L+35+F .. L+34+2F`` | cards of each face publicly known to lie in the draw pile (returned starting wizards, rebuilt discards; counted by face) |
| ``L+35+2F .. L+34+3F`` | cards of each face this agent has not located (face-down cards and the unknown rest of the draw pile) |
| ``L+35+3F`` | cards in the draw pile |
| ``L+36+3F`` | cards in the discard pile |
| ``L+37+3F .. L+44+3F`` | phase one-hot: setup, turn, taken, drawn, phoenix, wizard, wizard2, end |
| ``L+45+3F .. L+44+3F+n`` | player to move, one-hot, relative to the agent (0 = the agent; all zeros at the end) |
| ``L+45+3F+n .. L+56+3F+n`` | phase wizard2: the own slot chosen in step 1, one-hot |
| ``L+57+3F+n`` | 1 if the ``final_round`` option is on |
| ``L+58+3F+n`` | 1 while the final round is running |
| ``L+59+3F+n`` | turns left in the final round |

Raw counts, no scaling. The shipped deck's faces (``F = 22``): Wz, Ph$, Ki-LR, Ba, Dk-L, Dk-R, Wk-L,
Wk-R, Uk-T, Uk-B, Dr, Wo, Un, Re-LR, Re-L, Re-R, Re-TB, Re-T, Re-B, Re-LB, Re-RT, Re$. Two states that
differ only in cards this agent cannot see give it identical observations (tested). The engine
state is never given to agents (``perfect_information = False``); search agents can draw states
consistent with an agent's knowledge from ``HiLoState.sample_consistent``.

## Infos
Every step: ``seat`` (0 moves first). At the end also ``coins`` (own), ``all_coins`` and
``score_breakdown`` (per agent: half_coins, whole_coins, king, bard, keepers, total), ``winners``
(agent names) and ``ended_by`` (the agent whose turn ended the game or started the final round).

## Versions
* v0: first release.
"""

from __future__ import annotations

import re
from typing import Any, ClassVar

import numpy as np
from spieltisch.envs._common.aec import TurnBasedEnv, make_wrapped
from spieltisch.envs.hilo import rules as R
from spieltisch.envs.hilo.engine import (
    REWARD_MODES,
    HiLoGame,
    HiLoState,
    coins_rewards,
    new_rng,
)
from spieltisch.envs.hilo.notation import render_text


class raw_env(TurnBasedEnv):
    """HiLo as a PettingZoo AEC env without wrappers (raises on illegal actions)."""

    metadata: ClassVar[dict[str, Any]] = {**TurnBasedEnv.metadata, "name": "hilo_v0"}
    perfect_information = False

    def __init__(
        self,
        num_players: int = 2,
        final_round: bool = False,
        deck: str | None = None,
        reward: str = "win",
        max_turns: int = 2000,
        random_start: bool = False,
        render_mode: str | None = None,
        render_view: str | int = "public",
    ) -> None:
        self.game = HiLoGame(num_players=num_players, final_round=final_round, deck=deck)
        if reward not in REWARD_MODES:
            raise ValueError(f"reward must be one of {REWARD_MODES}, got {reward!r}")
        self.reward_mode = reward
        self.num_actions = self.game.num_actions
        self.observation_shape = (self.game.observation_size,)
        self.observation_high = float(self.game.num_cards)
        super().__init__(self.game.num_players, render_mode, max_turns, random_start)
        self.render_view = self._check_view(render_view)
        self._cards = self.game.deck.cards
        self._face_counts = self.game.deck.face_counts
        self.state: HiLoState | None = None

    def _check_view(self, view: object) -> str:
        if view in ("public", "all") or view in self.possible_agents:
            return str(view)
        if isinstance(view, int) and not isinstance(view, bool) and 0 <= view < self.num_players:
            return self.possible_agents[view]
        raise ValueError(
            f"render_view must be 'public', 'all', an agent name {self.possible_agents} or "
            f"index 0..{self.num_players - 1}, got {view!r}"
        )

    def _new_state(self) -> HiLoState:
        return self.game.new_initial_state(self._rng)

    def _state_from_text(self, text: str) -> HiLoState:
        return self.game.state_from_text(text)

    def _chance_of_position(self, state: HiLoState, text: str) -> None:
        # Without rng= the text's generator is 0, so every reset of it reshuffled alike,
        # whatever the reset's seed: the seed (or the env's generator) decides instead.
        if not re.search(r"(^|\s)rng=", text):
            state.rng[:] = new_rng(self._rng)

    def _observation(self, seat: int) -> np.ndarray:
        # Same kernel as HiLoState.observation, without re-checking the seat on the hot path.
        out = np.zeros(self.observation_shape, dtype=np.float32)
        self.game._k["observe"](self.state.s, self._cards, self._face_counts, seat, out)
        return out

    def _final_rewards(self) -> list[float]:
        if self.reward_mode == "coins":
            return [float(r) for r in coins_rewards(self.state.coins())]
        return list(self.state.returns())

    def _final_info(self, seat: int) -> dict[str, Any]:
        state = self.state
        breakdown = state.score_breakdown()
        agent = self._agent_of_seat
        ender = int(state.s[R.H_ENDER])
        return {
            "coins": breakdown[seat]["total"],
            "all_coins": {agent[p]: b["total"] for p, b in enumerate(breakdown)},
            "score_breakdown": {agent[p]: b for p, b in enumerate(breakdown)},
            "winners": [agent[p] for p in state.winners()],
            "ended_by": agent[ender] if ender >= 0 else None,
        }

    def _viewer(self) -> int | str | None:
        """The engine's viewer for ``render_view``: None (all), ``"public"`` or a seat."""
        if self.render_view == "all":
            return None
        if self.render_view == "public":
            return "public"
        return self._seat_of[self.render_view]

    def _render_text(self) -> str:
        names = ", ".join(f"{a} = seat {s}" for a, s in self._seat_of.items())
        return f"{render_text(self.state, self._viewer())}\n({names}; view: {self.render_view})"

    def _render_rgb(self) -> np.ndarray:
        from spieltisch.envs.hilo.draw import draw_state  # Pillow only when pictures are asked for

        names = [f"{self._agent_of_seat[p]} (seat {p})" for p in range(self.num_players)]
        return draw_state(self.state, self._viewer(), names)


def env(illegal_action: str = "raise", **options: Any) -> Any:
    """``raw_env(**options)`` inside PettingZoo's standard wrappers (see the module docstring)."""
    return make_wrapped(raw_env, illegal_action, options)
