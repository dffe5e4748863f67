"""Many Kalaha games stepped at once: arrays in, arrays out (a
:class:`~spieltisch.envs._common.batch.BatchedGame`).

The rules are not restated here: the compiled loops call the kernels of
:mod:`spieltisch.envs.kalaha.rules` (:func:`~.rules.sow`, :func:`~.rules.observe`,
:func:`~.rules.final_result`), the same ones a single
:class:`~spieltisch.envs.kalaha.engine.KalahaState` and the env use.
"""

from __future__ import annotations

from typing import Any

import numba
import numpy as np
from spieltisch.envs._common.batch import (
    ArrayStateBatch,
    BatchSeed,
    check_batch_seed,
    check_game_index,
    check_num_games,
    check_set_state,
    next_uniform,
    pick_from_bits,
    store_move,
    write_mask,
)
from spieltisch.envs.kalaha.engine import KalahaGame, KalahaState
from spieltisch.envs.kalaha.rules import (
    BOARD_DTYPE,
    final_result,
    legal_bits,
    observe,
    one_side_empty,
    sow,
    unpack_move,
)

#: the arrays that hold the games (what :meth:`KalahaBatch.save` copies)
_STATE_ARRAYS = ("boards", "current_player", "terminal", "legal_mask")


@numba.njit(cache=True, nogil=True)
def _step_all(boards, players, terminal, actions, empty_capture, masks):
    for g in range(boards.shape[0]):
        if terminal[g]:
            continue
        player, over, bits = unpack_move(sow(boards[g], players[g], actions[g], empty_capture))
        store_move(players, terminal, masks, g, player, over, bits)


@numba.njit(cache=True, nogil=True)
def _random_moves(boards, players, terminal, streams, empty_capture, masks, max_moves):
    """Random moves in each unfinished game until it ends or has made ``max_moves`` (-1: no
    limit), the numbers drawn from its stream in ``streams`` (see ``play_random``)."""
    for g in range(boards.shape[0]):
        if terminal[g]:
            continue
        board = boards[g]
        player = players[g]
        bits = legal_bits(board, player)
        over = False
        made = 0
        while made != max_moves:
            made += 1
            pit = pick_from_bits(bits, next_uniform(streams, g))
            player, over, bits = unpack_move(sow(board, player, pit, empty_capture))
            if over:
                break
        store_move(players, terminal, masks, g, player, over, bits)


@numba.njit(cache=True, nogil=True)
def _masks_of(boards, players, terminal, masks):
    for g in range(boards.shape[0]):
        bits = 0 if terminal[g] else legal_bits(boards[g], players[g])
        write_mask(masks[g], bits)


@numba.njit(cache=True, nogil=True)
def _restart(boards, players, terminal, masks, which, initial, first_player):
    """Games flagged in ``which`` back to ``initial`` with ``first_player[g]`` to move."""
    for g in range(boards.shape[0]):
        if not which[g]:
            continue
        boards[g, :] = initial
        players[g] = first_player[g]
        terminal[g] = False
        bits = legal_bits(initial, first_player[g])
        write_mask(masks[g], bits)


@numba.njit(cache=True, nogil=True)
def _observe_all(boards, players, out):
    for g in range(boards.shape[0]):
        observe(boards[g], players[g], out[g])


@numba.njit(cache=True, nogil=True)
def _returns_all(boards, players, terminal, out):
    for g in range(boards.shape[0]):
        if terminal[g]:
            r = final_result(boards[g], players[g], 0)
            out[g, 0] = r
            out[g, 1] = -r


class KalahaBatch(ArrayStateBatch):
    """``num_games`` Kalaha games in arrays: ``boards`` (N, 2*pits+2), ``current_player`` (N,),
    ``terminal`` (N,) and ``legal_mask`` (N, pits), all updated in place by :meth:`step`.

    ``current_player`` of a finished game is the seat that would move next, as in
    :class:`~spieltisch.envs.kalaha.engine.KalahaState`.

    ``threads`` (default: numba's thread count, fewer for small batches, see
    :func:`~spieltisch.envs._common.batch.resolve_threads`) splits the games into that many
    blocks stepped in parallel; the games do not depend on it.
    """

    state_arrays = _STATE_ARRAYS

    game_name = "kalaha"
    num_players = 2

    def __init__(self, game: KalahaGame, num_games: int, threads: int | None = None) -> None:
        num_games = check_num_games(num_games)
        self.game = game
        self.num_games = num_games
        self._init_threads(threads, "kalaha")
        self._initial_boards = [game.new_initial_state(p).board for p in (0, 1)]
        self.num_actions = game.pits
        self.observation_shape = (2 * game.pits + 2,)
        #: stones per pit at the start: a network's inputs of order one
        self.observation_scale = float(game.seeds)
        self._allocate(game.pits)
        self.reset()

    @classmethod
    def from_options(
        cls, options: dict[str, Any], num_games: int, seed: BatchSeed = None
    ) -> KalahaBatch:
        """``num_games`` games with the rules of ``kalaha_v0.env(**options)`` (see
        :meth:`KalahaGame.from_options`); Kalaha has no chance, so ``seed`` changes nothing. The
        env's ``reward`` option is accepted and left to the env: :meth:`returns` is the win
        value."""
        check_batch_seed(seed)
        return cls(KalahaGame.from_options(options), num_games)

    def _restart_args(self, which: np.ndarray, first: np.ndarray) -> Any:
        initial = self._initial_boards[0]  # the same for either first player
        return lambda lo, hi: (
            self.boards[lo:hi], self.current_player[lo:hi], self.terminal[lo:hi],
            self.legal_mask[lo:hi], which[lo:hi], initial, first[lo:hi],
        )  # fmt: skip

    board_dtype = BOARD_DTYPE
    _restart_kernel = _restart
    _step_kernel = _step_all
    _random_moves_kernel = _random_moves
    _masks_kernel = _masks_of
    _observe_kernel = _observe_all
    _returns_kernel = _returns_all

    def _block_args(self, moves: np.ndarray) -> Any:
        return lambda lo, hi: (
            self.boards[lo:hi], self.current_player[lo:hi], self.terminal[lo:hi],
            moves[lo:hi], self.game.empty_capture, self.legal_mask[lo:hi],
        )  # fmt: skip

    def score_difference(self) -> np.ndarray:
        """Store of seat 0 minus store of seat 1, per game."""
        pits = self.game.pits
        return self.boards[:, pits].astype(np.int64) - self.boards[:, 2 * pits + 1]

    def state(self, g: int) -> KalahaState:
        """Game ``g`` as a single-game state (a copy)."""
        g = check_game_index(g, self.num_games)
        return KalahaState(
            self.game,
            self.boards[g].copy(),
            int(self.current_player[g]),
            terminal=bool(self.terminal[g]),
        )

    def set_state(self, g: int, state: KalahaState) -> None:
        """Overwrite game ``g`` with ``state`` (same game parameters). A state the batch could
        not play (see :func:`~spieltisch.envs._common.batch.check_set_state`) is refused with a
        ValueError, the batch unchanged."""
        g = check_game_index(g, self.num_games)
        check_set_state(
            state, KalahaState, self.game, self.boards, lambda board, _mover: one_side_empty(board)
        )
        self.boards[g] = state.board
        self.current_player[g] = state.current_player
        self.terminal[g] = state.is_terminal()
        self.legal_mask[g] = state.legal_mask()
