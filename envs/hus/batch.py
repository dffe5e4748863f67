"""Many Hus games stepped at once: arrays in, arrays out (a
:class:`~spieltisch.envs._common.batch.BatchedGame`).

The compiled loops call the kernels of :mod:`spieltisch.envs.hus.rules`
(:func:`~.rules.play_pit`, :func:`~.rules.observe`, :func:`~.rules.final_result`), the same ones a
single :class:`~spieltisch.envs.hus.engine.HusState` and the env use; the rules are not restated
here.
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
from spieltisch.envs.hus.engine import HusGame, HusState
from spieltisch.envs.hus.rules import (
    BOARD_DTYPE,
    CAPTURES_SHIFT,
    END_SHIFT,
    NUM_ACTIONS,
    final_result,
    initial_board,
    legal_bits,
    observe,
    play_pit,
    unpack_move,
)

#: columns of :attr:`HusBatch.last_move`
STAT_COLUMNS = ("stones_sown", "relay_steps", "captures", "ended_by")
#: the arrays that hold the games (what :meth:`HusBatch.save` copies)
_STATE_ARRAYS = ("boards", "current_player", "terminal", "legal_mask", "last_move")


@numba.njit(cache=True, nogil=True)
def _step_all(boards, players, terminal, actions, max_sown, masks, stats):
    for g in range(boards.shape[0]):
        if terminal[g]:
            continue
        packed, sown, relays = play_pit(boards[g], players[g], actions[g], max_sown)
        player, over, bits = unpack_move(packed)
        store_move(players, terminal, masks, g, player, over, bits)
        _record_move(stats, g, packed, sown, relays)


@numba.njit(cache=True, nogil=True)
def _random_moves(boards, players, terminal, streams, max_sown, masks, stats, max_moves):
    """Random moves in each unfinished game until it ends or has made ``max_moves`` (-1: no
    limit), the numbers drawn from its stream in ``streams`` (see ``play_random``);
    ``stats`` holds each game's last move, as after :func:`_step_all`."""
    for g in range(boards.shape[0]):
        if terminal[g]:
            continue
        board = boards[g]
        player = players[g]
        bits = legal_bits(board, player)
        over = False
        packed = sown = relays = 0
        made = 0
        while made != max_moves:
            made += 1
            action = pick_from_bits(bits, next_uniform(streams, g))
            packed, sown, relays = play_pit(board, player, action, max_sown)
            player, over, bits = unpack_move(packed)
            if over:
                break
        store_move(players, terminal, masks, g, player, over, bits)
        _record_move(stats, g, packed, sown, relays)


@numba.njit(cache=True, nogil=True)
def _record_move(stats, g, packed, sown, relays):
    stats[g, 0] = sown
    stats[g, 1] = relays
    stats[g, 2] = (packed >> CAPTURES_SHIFT) & 63
    stats[g, 3] = (packed >> END_SHIFT) & 3  # 0 empty pit, 1 repetition, 2 sowing limit


@numba.njit(cache=True, nogil=True)
def _restart(boards, players, terminal, masks, stats, which, initial, first_player):
    """Games flagged in ``which`` back to ``initial`` with ``first_player[g]`` to move."""
    for g in range(boards.shape[0]):
        if not which[g]:
            continue
        boards[g, :] = initial
        players[g] = first_player[g]
        stats[g, :] = 0
        bits = legal_bits(initial, first_player[g])
        terminal[g] = bits == 0
        write_mask(masks[g], bits)


@numba.njit(cache=True, nogil=True)
def _masks_of(boards, players, terminal, masks):
    for g in range(boards.shape[0]):
        bits = legal_bits(boards[g], players[g])
        terminal[g] = bits == 0
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


def _no_legal_move(board: np.ndarray, player: int) -> bool:
    """Whether a Hus game is over on ``board``: the mover has no legal move (as
    :class:`HusState` reads it)."""
    return not legal_bits(board, player)


class HusBatch(ArrayStateBatch):
    """``num_games`` Hus games in arrays: ``boards`` (N, 32, ring order as in the engine),
    ``current_player`` (N,), ``terminal`` (N,), ``legal_mask`` (N, 16) and ``last_move``
    (N, 4: stones sown, relay steps, captures, how the move ended), updated by :meth:`step`.

    ``current_player`` of a finished game is the seat that cannot move (the loser), as in
    :class:`~spieltisch.envs.hus.engine.HusState`.

    ``threads`` (default: numba's thread count, fewer for small batches, see
    :func:`~spieltisch.envs._common.batch.resolve_threads`) splits the games into that many
    blocks stepped in parallel; the games do not depend on it.
    """

    state_arrays = _STATE_ARRAYS

    game_name = "hus"
    num_players = 2
    num_actions = NUM_ACTIONS
    observation_shape = (32,)
    #: the network's inputs of order one (48 stones on 32 pits)
    observation_scale = 4.0

    def __init__(self, game: HusGame, num_games: int, threads: int | None = None) -> None:
        num_games = check_num_games(num_games)
        self.game = game
        self.num_games = num_games
        self._init_threads(threads, "hus")
        self._allocate(NUM_ACTIONS)
        self.last_move = np.zeros((num_games, len(STAT_COLUMNS)), dtype=np.int64)
        self.reset()

    @classmethod
    def from_options(
        cls, options: dict[str, Any], num_games: int, seed: BatchSeed = None
    ) -> HusBatch:
        """``num_games`` games with the rules of ``hus_v0.env(**options)`` (see
        :meth:`HusGame.from_options`); Hus has no chance, so ``seed`` changes nothing. The
        env's ``reward`` option is accepted and left to the env: :meth:`returns` is the win
        value."""
        check_batch_seed(seed)
        return cls(HusGame.from_options(options), num_games)

    def _restart_args(self, which: np.ndarray, first: np.ndarray) -> Any:
        initial = initial_board()
        return lambda lo, hi: (
            self.boards[lo:hi], self.current_player[lo:hi], self.terminal[lo:hi],
            self.legal_mask[lo:hi], self.last_move[lo:hi], which[lo:hi], initial, first[lo:hi],
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
            moves[lo:hi], self.game.max_sown, self.legal_mask[lo:hi], self.last_move[lo:hi],
        )  # fmt: skip

    def state(self, g: int) -> HusState:
        """Game ``g`` as a single-game state (a copy)."""
        g = check_game_index(g, self.num_games)
        return HusState(self.game, self.boards[g].copy(), int(self.current_player[g]))

    def set_state(self, g: int, state: HusState) -> None:
        """Overwrite game ``g`` with ``state`` (same game parameters). A state the batch could
        not play (see :func:`~spieltisch.envs._common.batch.check_set_state`) is refused with a
        ValueError, the batch unchanged."""
        g = check_game_index(g, self.num_games)
        check_set_state(state, HusState, self.game, self.boards, _no_legal_move)
        self.boards[g] = state.board
        self.current_player[g] = state.current_player
        self.terminal[g] = state.is_terminal()
        self.legal_mask[g] = state.legal_mask()
