"""Many Hus games stepped at once: arrays in, arrays out.

The compiled loop calls :func:`spieltisch.envs.hus.engine.play_pit`, the same kernel a single
:class:`~spieltisch.envs.hus.engine.HusState` uses; the rules are not restated here.
"""

from __future__ import annotations

import numba
import numpy as np
from spieltisch.envs._common.batch import check_batch_actions, sample_legal_actions
from spieltisch.envs.hus.engine import (
    BOARD_DTYPE,
    NUM_ACTIONS,
    HusGame,
    HusState,
    initial_board,
    legal_bits,
    play_pit,
)

#: columns of :attr:`HusBatch.last_move`
STAT_COLUMNS = ("stones_sown", "relay_steps", "captures", "ended_by")


@numba.njit(cache=True, nogil=True)
def _step_all(boards, players, terminal, actions, max_sown, masks, stats):
    for g in range(boards.shape[0]):
        if terminal[g]:
            continue
        packed, sown, relays = play_pit(boards[g], players[g], actions[g], max_sown)
        players[g] = packed & 1
        terminal[g] = (packed >> 1) & 1
        bits = packed >> 4
        for a in range(masks.shape[1]):
            masks[g, a] = (bits >> a) & 1
        stats[g, 0] = sown
        stats[g, 1] = relays
        stats[g, 2] = (packed >> 20) & 63
        stats[g, 3] = (packed >> 2) & 3  # 0 empty pit, 1 repetition, 2 sowing limit


@numba.njit(cache=True, nogil=True)
def _masks_of(boards, players, terminal, masks):
    for g in range(boards.shape[0]):
        bits = legal_bits(boards[g], players[g])
        terminal[g] = bits == 0
        for a in range(masks.shape[1]):
            masks[g, a] = (bits >> a) & 1


class HusBatch:
    """``num_games`` Hus games in arrays: ``boards`` (N, 32, ring order as in the engine),
    ``current_player`` (N,), ``terminal`` (N,), ``legal_mask`` (N, 16) and ``last_move``
    (N, 4: stones sown, relay steps, captures, how the move ended), updated by :meth:`step`."""

    def __init__(self, game: HusGame, num_games: int) -> None:
        if num_games < 1:
            raise ValueError(f"num_games must be at least 1, got {num_games}")
        self.game = game
        self.num_games = num_games
        self.boards = np.zeros((num_games, 32), dtype=BOARD_DTYPE)
        self.current_player = np.zeros(num_games, dtype=np.int64)
        self.terminal = np.zeros(num_games, dtype=np.bool_)
        self.legal_mask = np.zeros((num_games, NUM_ACTIONS), dtype=np.int8)
        self.last_move = np.zeros((num_games, len(STAT_COLUMNS)), dtype=np.int64)
        self.reset()

    def reset(self, first_player: int | np.ndarray = 0, games: np.ndarray | None = None) -> None:
        """Put ``games`` (default: all; an index or boolean array) back to the start position."""
        idx = slice(None) if games is None else games
        self.boards[idx] = initial_board()
        self.current_player[idx] = first_player
        self.last_move[idx] = 0
        self.refresh_masks()

    def refresh_masks(self) -> None:
        """Recompute ``legal_mask`` after ``boards``/``current_player``/``terminal`` were set."""
        _masks_of(self.boards, self.current_player, self.terminal, self.legal_mask)

    def step(self, actions: np.ndarray) -> None:
        """Play ``actions[g]`` in every unfinished game ``g`` (finished games ignore theirs).

        All actions are checked first; if any is illegal nothing changes and the error names
        the first offending game.
        """
        actions = check_batch_actions(actions, self.legal_mask, self.terminal)
        _step_all(
            self.boards,
            self.current_player,
            self.terminal,
            actions,
            self.game.max_sown,
            self.legal_mask,
            self.last_move,
        )

    def sample_random_actions(self, rng: np.random.Generator) -> np.ndarray:
        """A uniformly random legal action per game (0 for finished games)."""
        return sample_legal_actions(self.legal_mask, rng)

    def returns(self) -> np.ndarray:
        """(N, 2) array: +1 for the winner (the player who made the last move), -1 the loser."""
        winner_is_0 = (self.current_player == 1) & self.terminal
        winner_is_1 = (self.current_player == 0) & self.terminal
        r0 = winner_is_0.astype(np.float64) - winner_is_1
        return np.stack([r0, -r0], axis=1)

    def state(self, g: int) -> HusState:
        """Game ``g`` as a single-game state (a copy)."""
        return HusState(self.game, self.boards[g].copy(), int(self.current_player[g]))

    def set_state(self, g: int, state: HusState) -> None:
        """Overwrite game ``g`` with ``state``."""
        self.boards[g] = state.board
        self.current_player[g] = state.current_player
        self.terminal[g] = state.is_terminal()
        self.legal_mask[g] = state.legal_mask()
