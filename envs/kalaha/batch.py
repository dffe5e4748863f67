"""Many Kalaha games stepped at once: arrays in, arrays out.

The rules are not restated here: the compiled loop calls :func:`spieltisch.envs.kalaha.engine.sow`,
the same kernel a single :class:`~spieltisch.envs.kalaha.engine.KalahaState` uses.
"""

from __future__ import annotations

import numba
import numpy as np
from spieltisch.envs._common.batch import check_batch_actions, sample_legal_actions
from spieltisch.envs.kalaha.engine import BOARD_DTYPE, KalahaGame, KalahaState, legal_bits, sow


@numba.njit(cache=True, nogil=True)
def _step_all(boards, players, terminal, actions, empty_capture, masks):
    for g in range(boards.shape[0]):
        if terminal[g]:
            continue
        packed = sow(boards[g], players[g], actions[g], empty_capture)
        players[g] = packed & 1
        terminal[g] = (packed >> 1) & 1
        bits = packed >> 2
        for i in range(masks.shape[1]):
            masks[g, i] = (bits >> i) & 1


@numba.njit(cache=True, nogil=True)
def _masks_of(boards, players, terminal, masks):
    for g in range(boards.shape[0]):
        bits = 0 if terminal[g] else legal_bits(boards[g], players[g])
        for i in range(masks.shape[1]):
            masks[g, i] = (bits >> i) & 1


class KalahaBatch:
    """``num_games`` Kalaha games in arrays: ``boards`` (N, 2*pits+2), ``current_player`` (N,),
    ``terminal`` (N,) and ``legal_mask`` (N, pits), all updated in place by :meth:`step`."""

    def __init__(self, game: KalahaGame, num_games: int) -> None:
        if num_games < 1:
            raise ValueError(f"num_games must be at least 1, got {num_games}")
        self.game = game
        self.num_games = num_games
        size = 2 * game.pits + 2
        self.boards = np.zeros((num_games, size), dtype=BOARD_DTYPE)
        self.current_player = np.zeros(num_games, dtype=np.int64)
        self.terminal = np.zeros(num_games, dtype=np.bool_)
        self.legal_mask = np.zeros((num_games, game.pits), dtype=np.int8)
        self.reset()

    def reset(self, first_player: int | np.ndarray = 0, games: np.ndarray | None = None) -> None:
        """Put ``games`` (default: all; an index or boolean array) back to the start position."""
        idx = slice(None) if games is None else games
        initial = self.game.new_initial_state()
        self.boards[idx] = initial.board
        self.current_player[idx] = first_player
        self.terminal[idx] = False
        self.refresh_masks()

    def refresh_masks(self) -> None:
        """Recompute ``legal_mask`` after ``boards``/``current_player``/``terminal`` were set."""
        _masks_of(self.boards, self.current_player, self.terminal, self.legal_mask)

    def step(self, actions: np.ndarray) -> None:
        """Play ``actions[g]`` in every unfinished game ``g`` (finished games ignore theirs).

        All actions are checked first; if any is illegal, nothing changes and the error names
        the first offending game.
        """
        actions = check_batch_actions(actions, self.legal_mask, self.terminal)
        _step_all(
            self.boards,
            self.current_player,
            self.terminal,
            actions,
            self.game.empty_capture,
            self.legal_mask,
        )

    def sample_random_actions(self, rng: np.random.Generator) -> np.ndarray:
        """A uniformly random legal action per game (0 for finished games)."""
        return sample_legal_actions(self.legal_mask, rng)

    def score_difference(self) -> np.ndarray:
        """Store of seat 0 minus store of seat 1, per game."""
        pits = self.game.pits
        return self.boards[:, pits].astype(np.int64) - self.boards[:, 2 * pits + 1]

    def returns(self) -> np.ndarray:
        """(N, 2) array of +1 / -1 / 0 per seat; zeros for unfinished games."""
        win = np.sign(self.score_difference()) * self.terminal
        return np.stack([win, -win], axis=1).astype(np.float64)

    def state(self, g: int) -> KalahaState:
        """Game ``g`` as a single-game state (a copy)."""
        return KalahaState(
            self.game,
            self.boards[g].copy(),
            int(self.current_player[g]),
            terminal=bool(self.terminal[g]),
        )

    def set_state(self, g: int, state: KalahaState) -> None:
        """Overwrite game ``g`` with ``state`` (same game parameters)."""
        if state.game.pits != self.game.pits:
            raise ValueError(f"state has {state.game.pits} pits, the batch {self.game.pits}")
        self.boards[g] = state.board
        self.current_player[g] = state.current_player
        self.terminal[g] = state.is_terminal()
        self.legal_mask[g] = state.legal_mask()
