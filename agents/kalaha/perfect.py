"""Kalaha agents backed by the exact solver: ``perfect``.

``perfect`` plays a move chosen uniformly at random (from its own seeded generator) among the moves
that keep the game-theoretic value of the position (see :mod:`.kalaha_solver`). It reads the board
size and rule set from the factory's ``game_options`` (``pits``, ``seeds``, ``rules``; the env's
defaults otherwise) and the position from the ``state`` given to :meth:`PerfectAgent.act` (or, when
no state is given, from the observation, which shows the whole board from the mover's view).

Solving takes time on big boards: the first moves of Kalah(6,4) take tens of seconds on a small
machine (later positions far less, and the agent's transposition table carries over between
moves), Kalah(6,5) much longer, and Kalah(6,6) (the env's default board) is out of reach for the
opening. The first use on a board size builds the endgame database (cached on disk, see
:mod:`.kalaha_endgame`).
"""

from __future__ import annotations

import os
from typing import Any

import numpy as np
from spieltisch.agents.base import Agent, legal_actions_of
from spieltisch.agents.kalaha.solver import DEFAULT_TT_BITS, KalahaSolver
from spieltisch.envs.kalaha.engine import KalahaGame, KalahaState
from spieltisch.envs.kalaha.rules import BOARD_DTYPE


class PerfectAgent(Agent):
    """Plays a random optimal move (exact solver; ties broken by the agent's generator)."""

    name = "perfect"

    def __init__(
        self,
        game: KalahaGame,
        seed: int | None = None,
        solver: KalahaSolver | None = None,
        *,
        db_stones: int | None = None,
        cache_dir: str | os.PathLike | None = None,
        tt_bits: int = DEFAULT_TT_BITS,
    ) -> None:
        super().__init__(seed)
        self.game = game
        self.solver = solver or KalahaSolver(
            game, db_stones=db_stones, cache_dir=cache_dir, tt_bits=tt_bits
        )

    def act(self, observation: dict[str, np.ndarray], state: Any | None = None) -> int:
        moves = self.solver.optimal_moves(self.position(observation, state))
        if not moves:
            legal_actions_of(observation)  # raises the protocol's error for a finished game
        return int(self.rng.choice(moves))

    def position(self, observation: dict[str, np.ndarray], state: Any | None) -> KalahaState:
        """The position to solve: ``state``, or when none is given the board of the observation
        (which shows it from the mover's view: the mover is seat 0 there)."""
        if state is not None:
            return state
        board = np.asarray(observation["observation"]).astype(BOARD_DTYPE)
        return KalahaState(self.game, board, 0)


def _perfect(options: dict[str, Any], seed: int | None) -> Agent:
    return PerfectAgent(KalahaGame.from_options(options), seed)


#: agents of this module, by name (see :mod:`spieltisch.agents.registry`)
AGENTS = {"perfect": _perfect}
