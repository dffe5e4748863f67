"""Scripted baselines for the two mancala games, Kalaha and Hus: ``greedy`` and ``alphabeta``.

Both search with the engines' own rule kernels (:mod:`spieltisch.envs.kalaha.rules`: ``sow``,
``final_result``, ``observe``; :mod:`spieltisch.envs.hus.rules`: ``play_pit``, ``final_result``,
``observe``), called from one numba-compiled negamax; no rule is re-implemented here.

* ``alphabeta`` -- negamax alpha-beta with iterative deepening, move ordering (transposition-table
  move first, then the children by their static value) and a transposition table (Zobrist
  hashing, depth-preferred replacement). Options (``alphabeta:depth=6`` or ``alphabeta:time=0.5``):

  ``depth`` (default 4)  search this many plies (an extra turn in Kalaha counts as a ply; the same
                          player moves again, so the value is not negated there)
  ``time``  (seconds)     search deeper until the time is spent (overrides ``depth``; the last,
                          unfinished iteration is abandoned through a node budget estimated from
                          the speed of the previous one, so a move can take slightly longer)
  ``tt_bits`` (20)        the transposition table has ``2**tt_bits`` entries; 0: no table
                          (plain depth-limited values, no deeper results via transpositions)
  ``extend`` (0)          up to this many extra turns along a line cost no ply (Kalaha: a move
                          ending in the own store is searched past the horizon, which otherwise
                          cuts such chains off with the same player to move)

* ``greedy`` -- one-move lookahead: the move whose resulting position has the best static value
  (= ``alphabeta:depth=1``).

Static value (from the mover's view): Kalaha: own store minus the opponent's store; Hus: own
stones on the board minus the opponent's. The same search scores its horizon with a trained
network's value head instead when given one (:func:`net_leaf_evaluator`; the agent
``pretrained:<game>:search=N`` of :mod:`spieltisch.agents.neural.value_search`); move ordering stays
static. A finished game is worth ``+-WIN`` plus that margin
(the margin makes winning by more preferred); a network trained on the stone margin scores it
on its own scale instead (:func:`_finished_value`). Ties between equally good moves are broken at
random with the agent's own generator (seeded by ``reset(seed)``), so games differ.
"""

from __future__ import annotations

import time
from typing import Any

import numba
import numpy as np
from spieltisch.agents.base import Agent, legal_actions_of
from spieltisch.envs._common.jit import call_interruptibly
from spieltisch.envs.hus.rules import (
    DEFAULT_MAX_SOWN,
    MOVE_OUTCOMES_WIDTH,
    play_pit,
    sides_move_outcomes,
)
from spieltisch.envs.hus.rules import final_result as hus_final_result
from spieltisch.envs.hus.rules import observe as hus_observe
from spieltisch.envs.hus.rules import unpack_move as hus_unpack_move
from spieltisch.envs.kalaha.rules import final_result as kalaha_final_result
from spieltisch.envs.kalaha.rules import observe as kalaha_observe
from spieltisch.envs.kalaha.rules import sow, store_difference
from spieltisch.envs.kalaha.rules import unpack_move as kalaha_unpack_move

WIN = 100_000
#: the most extra turns a line may search beyond its plies (``extend``)
MAX_EXTEND = 32
INF = 1 << 30
#: a network value in [-1, 1] is searched as the integer round(value * VALUE_SCALE) (< WIN / 2)
VALUE_SCALE = 10_000
KALAHA = 0
HUS = 1
_EXACT, _LOWER, _UPPER = 0, 1, 2


@numba.njit(cache=True, nogil=True)
def _move(kind: int, board: np.ndarray, player: int, action: int, param: int) -> int:
    """Play ``action`` in place with the engine kernel; returns (next player) | terminal << 1 |
    legal mask << 2 (the mask of the next player)."""
    if kind == KALAHA:
        nxt, over, mask = kalaha_unpack_move(sow(board, player, action, param != 0))
    else:
        packed, _sown, _relays = play_pit(board, player, action, param)
        nxt, over, mask = hus_unpack_move(packed)
    return nxt | (over << 1) | (mask << 2)


@numba.njit(cache=True, nogil=True)
def _static(kind: int, board: np.ndarray, player: int) -> int:
    """Heuristic value of ``board`` for ``player``."""
    if kind == KALAHA:
        return store_difference(board, player)
    own = 0
    opp = 0
    for i in range(16):
        own += board[16 * player + i]
        opp += board[16 * (1 - player) + i]
    return own - opp


@numba.njit(cache=True, nogil=True)
def _final_result(kind: int, board: np.ndarray, player: int, next_player: int) -> int:
    """+1 / -1 / 0 for ``player`` of a finished game (``next_player``: who would move next)."""
    if kind == KALAHA:
        return kalaha_final_result(board, next_player, player)
    return hus_final_result(board, next_player, player)


@numba.njit(cache=True, nogil=True)
def _terminal_value(kind: int, board: np.ndarray, player: int, next_player: int) -> int:
    """Value for ``player`` of a finished game (``next_player``: who would move next): ``+-WIN``
    by the game's result plus the static margin (0 for a Kalaha draw, whose stores are equal)."""
    return _final_result(kind, board, player, next_player) * WIN + _static(kind, board, player)


#: what the compiled search reads to score its horizon: layer sizes, weights, scratch, the
#: input encoding (observation size, one-hot bins per count, feature inputs) and how finished
#: games are scored (``(margin_weight, margin_scale)``, see :func:`_finished_value`); empty arrays
#: (:func:`static_leaf_evaluator`) mean the static value
NetTuple = tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]


def static_leaf_evaluator() -> NetTuple:
    """No network: the search scores its horizon with the static value."""
    return (
        np.zeros(0, np.int64), np.zeros(0, np.float32), np.zeros((2, 0), np.float32),
        np.zeros(3, np.int64), np.zeros(0, np.float64),
    )  # fmt: skip


def net_leaf_evaluator(
    layers: list[tuple[np.ndarray, np.ndarray]],
    observation_size: int,
    scale: float,
    count_bins: int = 0,
    margin_weight: float = 0.0,
    margin_scale: float = 1.0,
    features: int = 0,
) -> NetTuple:
    """A tanh MLP value net (``layers`` = (weight (out, in), bias) per layer, the last one
    the value head; every layer is followed by tanh) as the arrays the compiled search reads:
    its input is the mover's observation (the env's, ``observation_size`` long, from the rules'
    ``observe`` kernel) divided by ``scale``, followed with ``count_bins`` C > 0 by each count
    one-hot over 0..C-1 (as :meth:`~spieltisch.agents.neural.policy.PolicyNet.inputs`).
    ``features`` > 0 (Hus only): that many move-outcome inputs
    (:func:`~spieltisch.envs.hus.rules.move_outcomes`; 64: the ``hus_moves`` feature set, 128:
    ``hus_moves_threats``) follow the observation, before the one-hot counts.

    ``margin_weight`` w and ``margin_scale``: the value the net was trained to predict for a
    finished game (``game_outcome``: ``(1 - w) * result + w * clip(margin / margin_scale, -1,
    1)``); with w > 0 the search scores finished games on that scale (:func:`_finished_value`)."""
    if not 0.0 <= margin_weight <= 1.0 or not margin_scale > 0:
        raise ValueError(
            f"margin_weight must be in [0, 1] and margin_scale above 0, got {margin_weight}, "
            f"{margin_scale}"
        )
    sizes = [layers[0][0].shape[1]] + [w.shape[0] for w, _ in layers]
    if features not in (0, MOVE_OUTCOMES_WIDTH, 2 * MOVE_OUTCOMES_WIDTH):
        raise ValueError(
            f"features: 0, {MOVE_OUTCOMES_WIDTH} (Hus's move outcomes) or "
            f"{2 * MOVE_OUTCOMES_WIDTH} (and the opponent's), got {features}"
        )
    if sizes[-1] != 1 or sizes[0] != observation_size * (1 + count_bins) + features:
        raise ValueError(f"not a value net over this observation: layer sizes {sizes}")
    params = []
    for k, (w, b) in enumerate(layers):
        w = np.array(w, np.float32)
        if k == 0:
            w[:, :observation_size] /= np.float32(scale)  # the one-hot columns stay as they are
        params += [w.ravel(), np.asarray(b, np.float32).ravel()]
    return (
        np.asarray(sizes, np.int64), np.concatenate(params).astype(np.float32),
        np.zeros((2, max(sizes)), np.float32),
        np.array([observation_size, count_bins, features], np.int64),
        np.array([margin_weight, margin_scale], np.float64),
    )  # fmt: skip


@numba.njit(cache=True, nogil=True, fastmath=True, inline="always")
def _tanh(x: float) -> float:
    """float32 tanh as a rational function (|error| < 5e-7, checked in the tests): libm's
    tanh would cost twice the matrix products of the value net."""
    x = min(max(x, np.float32(-7.90531110763549805)), np.float32(7.90531110763549805))
    x2 = x * x
    p = np.float32(-2.76076847742355e-16)
    p = x2 * p + np.float32(2.00018790482477e-13)
    p = x2 * p + np.float32(-8.60467152213735e-11)
    p = x2 * p + np.float32(5.12229709037114e-08)
    p = x2 * p + np.float32(1.48572235717979e-05)
    p = x2 * p + np.float32(6.37261928875436e-04)
    p = x2 * p + np.float32(4.89352455891786e-03)
    q = np.float32(1.19825839466702e-06)
    q = x2 * q + np.float32(1.18534705686654e-04)
    q = x2 * q + np.float32(2.26843463243900e-03)
    q = x2 * q + np.float32(4.89352518554385e-03)
    return x * p / q


@numba.njit(cache=True, nogil=True, fastmath=True)
def _net_value(kind: int, board: np.ndarray, mover: int, net: NetTuple) -> float:
    """The value net's output for ``mover`` (to move) on ``board`` (about 4 us for 32 inputs
    and two hidden layers of 128)."""
    sizes, params, scratch, encoding, _outcome = net
    x = scratch[0]
    y = scratch[1]
    if kind == KALAHA:
        kalaha_observe(board, mover, x)
    else:
        hus_observe(board, mover, x)
    n_obs, bins, n_feat = encoding[0], encoding[1], encoding[2]
    if n_feat > 0:  # Hus's move outcomes after the observation, as PolicyNet.inputs reads them
        sides = n_feat // MOVE_OUTCOMES_WIDTH
        sides_move_outcomes(board, mover, sides, DEFAULT_MAX_SOWN, x[n_obs : n_obs + n_feat])
    n_dense = n_obs + n_feat
    offset = 0
    for layer in range(sizes.shape[0] - 1):
        n_in = sizes[layer]
        n_out = sizes[layer + 1]
        bias = offset + n_in * n_out
        dense = n_dense if layer == 0 and bins > 0 else n_in  # one-hot inputs: one column each
        for o in range(n_out):
            weights = params[offset + o * n_in : offset + (o + 1) * n_in]  # contiguous: SIMD
            acc = params[bias + o]
            for i in range(dense):
                acc += weights[i] * x[i]
            if dense < n_in:
                for i in range(n_obs):
                    acc += weights[n_dense + i * bins + min(max(int(x[i]), 0), bins - 1)]
            y[o] = acc
        for o in range(n_out):
            y[o] = _tanh(y[o])
        offset = bias + n_out
        x, y = y, x
    return x[0]


@numba.njit(cache=True, nogil=True)
def _leaf_value(kind: int, board: np.ndarray, player: int, mover: int, net: NetTuple) -> int:
    """Horizon value of an unfinished ``board`` for ``player`` (``mover`` moves next): the
    static value, or the value net's scaled to an integer."""
    if net[0].shape[0] == 0:
        return _static(kind, board, player)
    v = round(_net_value(kind, board, mover, net) * VALUE_SCALE)
    return v if mover == player else -v


@numba.njit(cache=True, nogil=True)
def _finished_value(
    kind: int, board: np.ndarray, player: int, next_player: int, net: NetTuple
) -> int:
    """Value for ``player`` of a finished game in the search's units.

    The static search and a net trained on the result alone (margin weight 0): ``+-WIN`` plus
    the margin (:func:`_terminal_value`; the net's values estimate the same result, so a proven
    win ranks above all of them and the margin breaks ties). A net trained on the stone margin
    (w > 0) predicts ``(1 - w) * result + w * clip(margin / scale, -1, 1)``: a finished game is
    scored the same way, times ``VALUE_SCALE``, so a proven small win is not preferred over a
    line the net values as a bigger one (the Kalah solver, too, scores the margin)."""
    outcome = net[4]
    if outcome.shape[0] == 0 or outcome[0] == 0.0:
        return _terminal_value(kind, board, player, next_player)
    result = _final_result(kind, board, player, next_player)
    margin = min(max(_static(kind, board, player) / outcome[1], -1.0), 1.0)
    return round(((1.0 - outcome[0]) * result + outcome[0] * margin) * VALUE_SCALE)


@numba.njit(cache=True, nogil=True)
def _hash(board: np.ndarray, player: int, zobrist: np.ndarray) -> np.int64:
    h = zobrist[0, 0] if player == 1 else np.int64(0)
    cap = zobrist.shape[1] - 1
    for i in range(board.shape[0]):
        v = board[i]
        if v > cap:
            v = cap  # (more stones than the table's columns: share the last key)
        h ^= zobrist[i + 1, v]
    return h


#: the frames of :func:`_negamax`: each level's children boards, its children's (packed move
#: results, moves, search order) and move-ordering keys, and its scalar fields
StackTuple = tuple[np.ndarray, np.ndarray, np.ndarray]
_FRAME_FIELDS = 14


@numba.njit(cache=True, nogil=True)
def _new_stack(kind: int, board: np.ndarray, levels: int) -> StackTuple:
    """Frames for a search of up to ``levels - 1`` plies below ``board``."""
    n_actions = 16 if kind == HUS else (board.shape[0] - 2) // 2
    return (
        np.empty((levels, n_actions, board.shape[0]), board.dtype),
        np.empty((4, levels, n_actions), np.int64),
        np.empty((_FRAME_FIELDS, levels), np.int64),
    )


@numba.njit(cache=True, nogil=True)
def _child_depth(depth: int, extend: int, extra_turn: bool) -> tuple[int, int]:
    """The plies left below a child, and its extensions: an extra turn costs no ply while
    extensions are left."""
    if extra_turn and extend > 0:
        return depth, extend - 1
    return depth - 1, extend


@numba.njit(cache=True, nogil=True)
def _negamax(
    kind: int,
    board: np.ndarray,
    player: int,
    mask: int,
    depth: int,
    extend: int,
    alpha: int,
    beta: int,
    param: int,
    zobrist: np.ndarray,
    tt: np.ndarray,
    counters: np.ndarray,
    net: NetTuple,
    stack: StackTuple,
) -> int:
    """Value of ``board`` for ``player`` (to move, legal moves ``mask``) searched ``depth`` plies,
    of which up to ``extend`` extra turns (the same player moving again) do not count.

    ``tt`` rows: key, depth, value, flag, move. ``counters[0]`` counts nodes, ``counters[1]``
    is the node budget (search aborts, returning 0, when exceeded; ``counters[2]`` = 1 then).

    Negamax written as a loop over an explicit stack of frames, one per ply (frame ``d``'s
    fields are the ``f_*[d]``), not as a recursive function: numba cannot load a recursive
    function from its on-disk cache (numba issue #6061), and without the cache every process
    compiled this search again (10-20 s before its first move). The frames live in ``stack``
    (:func:`_new_stack`), allocated once per root search.
    """
    children, lists, frames = stack  # at least depth + 1 levels (see _new_stack)
    n_actions = children.shape[1]
    packs, moves, order = lists[0], lists[1], lists[2]
    keys = lists[3, 0]
    f_player, f_mask, f_depth, f_alpha, f_beta = (
        frames[0],
        frames[1],
        frames[2],
        frames[3],
        frames[4],
    )
    f_alpha0 = frames[5]  # alpha as the frame was entered
    f_key, f_slot = frames[6], frames[7]
    f_n = frames[8]  # children
    f_j = frames[9]  # the child being searched (position in ``order``)
    f_best, f_best_move = frames[10], frames[11]
    f_sign = frames[12]  # the child's value for this frame's player: sign * it
    f_extend = frames[13]  # extra turns that may still be searched without using up a ply
    use_table = tt.shape[0] > 1  # a one-row table means none

    d = 0
    f_player[0] = player
    f_mask[0] = mask
    f_depth[0] = depth
    f_extend[0] = extend
    f_alpha[0] = alpha
    f_beta[0] = beta
    enter = True
    value = 0  # the value of frame d's current child for frame d's player
    while True:
        finished = False
        result = 0
        if enter:  # a new frame: count it, then the horizon, the table, or its children
            enter = False
            b = board if d == 0 else children[d - 1, order[d - 1, f_j[d - 1]]]
            me = f_player[d]
            counters[0] += 1
            if counters[0] > counters[1]:
                counters[2] = 1
                return 0
            if f_depth[d] == 0:
                result = _leaf_value(kind, b, me, me, net)
                finished = True
            else:
                key = _hash(b, me, zobrist)
                slot = key & (tt.shape[0] - 1)
                tt_move = -1
                f_alpha0[d] = f_alpha[d]
                if use_table and tt[slot, 0] == key:
                    tt_move = tt[slot, 4]
                    if tt[slot, 1] >= f_depth[d]:
                        v = tt[slot, 2]
                        flag = tt[slot, 3]
                        if flag == _LOWER and v > f_alpha[d]:
                            f_alpha[d] = v
                        elif flag == _UPPER and v < f_beta[d]:
                            f_beta[d] = v
                        if flag == _EXACT or f_alpha[d] >= f_beta[d]:
                            result = v
                            finished = True
                if not finished:
                    f_key[d] = key
                    f_slot[d] = slot
                    n = 0
                    for a in range(n_actions):
                        if (f_mask[d] >> a) & 1:
                            child = children[d, n]
                            child[:] = b
                            p = _move(kind, child, me, a, param)
                            packs[d, n] = p
                            moves[d, n] = a
                            if (p >> 1) & 1:
                                s = _terminal_value(kind, child, me, p & 1)
                            else:
                                s = _static(kind, child, me)
                            keys[n] = -(s + (INF if a == tt_move else 0))
                            n += 1
                    order[d, :n] = np.argsort(keys[:n], kind="mergesort")
                    f_n[d] = n
                    f_j[d] = 0
                    f_best[d] = -INF
                    f_best_move[d] = -1
        else:  # `value` is the current child's: take it in, stop at a cutoff
            if value > f_best[d]:
                f_best[d] = value
                f_best_move[d] = moves[d, order[d, f_j[d]]]
            if value > f_alpha[d]:
                f_alpha[d] = value
            f_j[d] += 1
            if f_alpha[d] >= f_beta[d]:
                f_j[d] = f_n[d]

        if not finished:
            if f_j[d] < f_n[d]:  # the next child: a finished game, or a frame to search
                i = order[d, f_j[d]]
                p = packs[d, i]
                me = f_player[d]
                nxt = p & 1
                if (p >> 1) & 1:
                    value = _finished_value(kind, children[d, i], me, nxt, net)
                    continue
                c = d + 1
                f_mask[c] = p >> 2
                f_depth[c], f_extend[c] = _child_depth(f_depth[d], f_extend[d], nxt == me)
                f_player[c] = nxt
                if nxt == me:  # an extra turn: same player, same window
                    f_alpha[c] = f_alpha[d]
                    f_beta[c] = f_beta[d]
                    f_sign[d] = 1
                else:
                    f_alpha[c] = -f_beta[d]
                    f_beta[c] = -f_alpha[d]
                    f_sign[d] = -1
                d = c
                enter = True
                continue
            # Every child searched (or a cutoff): store the frame's result.
            best = f_best[d]
            slot = f_slot[d]
            if use_table and (f_depth[d] >= tt[slot, 1] or tt[slot, 0] != f_key[d]):
                tt[slot, 0] = f_key[d]
                tt[slot, 1] = f_depth[d]
                tt[slot, 2] = best
                if best <= f_alpha0[d]:
                    tt[slot, 3] = _UPPER
                elif best >= f_beta[d]:
                    tt[slot, 3] = _LOWER
                else:
                    tt[slot, 3] = _EXACT
                tt[slot, 4] = f_best_move[d]
            result = best
        # Back to the parent frame with this frame's result.
        if d == 0:
            return result
        d -= 1
        value = f_sign[d] * result


@numba.njit(cache=True, nogil=True)
def _root_values(
    kind: int,
    board: np.ndarray,
    player: int,
    actions: np.ndarray,
    depth: int,
    extend: int,
    param: int,
    zobrist: np.ndarray,
    tt: np.ndarray,
    counters: np.ndarray,
    net: NetTuple,
    exact_all: bool = False,
) -> np.ndarray:
    """Value of every root move in ``actions``: exact for the best ones (moves are searched
    with a window that only proves a move is worse than the best so far), and with
    ``exact_all`` for every move (each searched with the full window: slower)."""
    out = np.full(actions.shape[0], -INF, np.int64)
    best = -INF
    child = np.empty_like(board)
    # the root's children search at most depth - 1 plies plus the extensions
    stack = _new_stack(kind, board, max(depth, 1) + extend)
    for j in range(actions.shape[0]):
        counters[0] += 1
        child[:] = board
        p = _move(kind, child, player, actions[j], param)
        nxt = p & 1
        below, below_extend = _child_depth(depth, extend, nxt == player)
        # alpha = best - 1 so that moves equal to the best get their exact value (ties).
        alpha = best - 1 if best > -INF and not exact_all else -INF
        if (p >> 1) & 1:
            v = _finished_value(kind, child, player, nxt, net)
        elif below <= 0:
            v = _leaf_value(kind, child, player, nxt, net)
        elif nxt == player:
            v = _negamax(
                kind, child, player, p >> 2, below, below_extend, alpha, INF, param, zobrist, tt,
                counters, net, stack,
            )  # fmt: skip
        else:
            v = -_negamax(
                kind, child, nxt, p >> 2, below, below_extend, -INF, -alpha, param, zobrist, tt,
                counters, net, stack,
            )  # fmt: skip
        if counters[2]:
            return out
        out[j] = v
        if v > best:
            best = v
    return out


@numba.njit(cache=True, nogil=True)
def _move_values(
    kind: int,
    boards: np.ndarray,
    players: np.ndarray,
    masks: np.ndarray,
    keys: np.ndarray,
    depth: int,
    extend: int,
    param: int,
    zobrist: np.ndarray,
    tt: np.ndarray,
    net: NetTuple,
    search_forced: bool,
    exact_all: bool,
    out: np.ndarray,
) -> None:
    """The searched value of every legal move of every row: ``out[g, a]`` for the legal moves
    ``a`` of board ``g`` (``masks[g]``), searched in the order of ``keys[g]`` (random), as
    :func:`_root_values` (exact for the best ones, or for all with ``exact_all``); ``-INF``
    elsewhere. A row with one legal move is searched only with ``search_forced`` (else its move
    gets 0)."""
    counters = np.zeros(3, np.int64)
    out[:] = -INF
    for g in range(boards.shape[0]):
        legal = np.flatnonzero(masks[g])
        if legal.shape[0] == 1 and not search_forced:
            out[g, legal[0]] = 0
            continue
        actions = legal[np.argsort(keys[g][legal])].astype(np.int64)
        counters[1] = 1 << 62
        values = _root_values(
            kind, boards[g], players[g], actions, depth, extend, param, zobrist, tt, counters, net,
            exact_all,
        )  # fmt: skip
        for j in range(actions.shape[0]):
            out[g, actions[j]] = values[j]


#: the deepest search asked for (longer than any game; the compiled search takes int64)
MAX_DEPTH = 1000
#: fixed-depth searches at least this deep, and timed ones of at least this many seconds, run
#: in a worker thread that Ctrl-C can stop (:meth:`MancalaSearchAgent._root_search`): depth 10
#: takes about 0.05 s a move on a full Kalaha 6x6 board, each two plies more about five times
#: as long (a thread costs about 0.1 ms to start)
INTERRUPTIBLE_DEPTH = 10
INTERRUPTIBLE_SECONDS = 1.0
#: the longest ``time`` a move, in seconds: a day (``time=10**12`` searched on for ever, and
#: ``time=10**15`` overflowed the node budget, an int64, after the first iteration)
MAX_TIME = 86400.0


class MancalaSearchAgent(Agent):
    """Alpha-beta (``depth`` plies, or iterative deepening for ``time`` seconds) over Kalaha or
    Hus; ``depth=1`` is the ``greedy`` agent. Needs the engine state (perfect information)."""

    def __init__(
        self,
        kind: int,
        param: int,
        seed: int | None = None,
        depth: int = 4,
        time_limit: float | None = None,
        tt_bits: int = 20,
        name: str = "alphabeta",
        extend: int = 0,
    ) -> None:
        super().__init__(seed)
        if not 1 <= depth <= MAX_DEPTH:
            raise ValueError(f"depth must be between 1 and {MAX_DEPTH}, got {depth}")
        if not 0 <= extend <= MAX_EXTEND:
            raise ValueError(f"extend must be between 0 and {MAX_EXTEND}, got {extend}")
        if extend and kind == HUS:  # (it was accepted and searched exactly as extend=0)
            raise ValueError(
                "extend counts extra turns, and Hus has none (every move passes the turn)"
            )
        if time_limit is not None and not 0 < time_limit <= MAX_TIME:  # NaN would search forever
            raise ValueError(
                f"time must be a positive number of seconds up to {MAX_TIME:g} (a day), "
                f"got {time_limit}"
            )
        if tt_bits != 0 and not 4 <= tt_bits <= 28:
            raise ValueError(f"tt_bits must be 0 (no table) or between 4 and 28, got {tt_bits}")
        self.kind = kind
        self.param = param
        self.depth = depth
        self.extend = extend
        self.time_limit = time_limit
        self.name = name
        wanted = tt_bits and (depth > 1 or time_limit)
        self.tt = np.zeros((1 << tt_bits, 5), np.int64) if wanted else np.zeros((1, 5), np.int64)
        size = 33 if kind == HUS else 64
        # Zobrist keys: fixed (not from the agent's seed) so searches are reproducible.
        self.zobrist = np.random.default_rng(12345).integers(
            -(1 << 62), 1 << 62, size=(size, 200), dtype=np.int64
        )
        self.last_depth = 0
        self.last_nodes = 0
        self.leaf_net = static_leaf_evaluator()  # (a net search sets its value net here)

    def reset(self, seed: int | None = None) -> None:
        super().reset(seed)
        self.tt[:] = 0

    def _board_and_player(self, state: Any) -> tuple[np.ndarray, int]:
        if state is None:
            raise ValueError(f"{self.name} needs the game state (a perfect-information game)")
        return np.ascontiguousarray(state.board, dtype=np.int32), int(state.current_player)

    def act(self, observation: dict[str, np.ndarray], state: Any | None = None) -> int:
        legal = legal_actions_of(observation)
        if legal.size == 1:
            return int(legal[0])
        actions, values = self.search_root(legal, state)
        return int(actions[int(np.argmax(values))])

    def act_boards(self, boards: np.ndarray, players: np.ndarray, masks: np.ndarray) -> np.ndarray:
        """:meth:`act` for many positions in one compiled call (a batch's ``boards``, the
        movers, the legal masks): what a training loop's opponent needs, without a state and a
        call per game. Ties are broken at random as in :meth:`act`, with other draws."""
        keys = self.rng.random(np.shape(masks))
        values = self.move_values_boards(boards, players, masks, keys, search_forced=False)
        # the first best move in the order of the keys (the search's random order)
        order = np.argsort(np.where(np.asarray(masks) > 0, keys, np.inf), axis=1, kind="stable")
        first = np.argmax(np.take_along_axis(values, order, axis=1), axis=1)
        return order[np.arange(len(order)), first]

    def move_values_boards(
        self,
        boards: np.ndarray,
        players: np.ndarray,
        masks: np.ndarray,
        keys: np.ndarray,
        search_forced: bool = True,
        exact_all: bool = False,
    ) -> np.ndarray:
        """The searched value of every legal move of many positions in one compiled call
        (``[positions, actions]`` int64 in the search's units, ``-INF`` at illegal moves): exact
        for each position's best moves, upper bounds for the others (``exact_all``: exact for
        every move, each searched with the full window). ``keys`` (floats, the shape of
        ``masks``): the order in which each position's moves are searched (through the
        transposition table it can change the bounds of moves worse than the best);
        ``search_forced``: a position with one legal move is searched too (else its move gets
        0). Uses and keeps the agent's transposition table."""
        if self.time_limit is not None:
            raise ValueError("a batched search is to a fixed depth; this agent has a time limit")
        masks = np.asarray(masks)
        if not masks.any(axis=1).all():
            raise ValueError("a batched search needs a legal move in each position (game over?)")
        out = np.empty(masks.shape, dtype=np.int64)
        _move_values(
            self.kind, np.ascontiguousarray(boards, dtype=np.int32),
            np.asarray(players, dtype=np.int64), masks, np.asarray(keys, dtype=np.float64),
            self.depth, self.extend, self.param, self.zobrist, self.tt, self.leaf_net,
            search_forced, exact_all, out,
        )  # fmt: skip
        return out

    def search_root(
        self, legal: np.ndarray, state: Any, tt: np.ndarray | None = None
    ) -> tuple[np.ndarray, np.ndarray]:
        """What :meth:`act` searches: ``(actions, values)``, the legal moves in the random
        order that breaks ties (drawn from the agent's generator) and their searched values
        (the first best one is played; moves worse than the best: upper bounds). Sets
        ``last_depth`` and ``last_nodes``. ``tt``: the transposition table to use (default the
        agent's own; a copy leaves the agent's unchanged)."""
        board, player = self._board_and_player(state)
        tt = self.tt if tt is None else tt
        actions = self.rng.permutation(legal).astype(np.int64)  # random tie-breaking
        counters = np.zeros(3, np.int64)
        if self.time_limit is None:
            counters[1] = 1 << 62
            values = self._root_search(board, player, actions, self.depth, tt, counters)
            self.last_depth = self.depth
        else:
            values = self._deepen(board, player, actions, tt, counters)
        self.last_nodes = int(counters[0])
        return actions, values

    def root_values(
        self, state: Any, depth: int | None = None, tt: np.ndarray | None = None
    ) -> dict[int, int]:
        """The searched value of every legal move of ``state`` (for the mover), at ``depth``
        (default: the agent's). Values of moves worse than the best are upper bounds. ``tt``:
        the transposition table to use (default the agent's own)."""
        board, player = self._board_and_player(state)
        actions = np.array(state.legal_actions(), dtype=np.int64)
        counters = np.zeros(3, np.int64)
        counters[1] = 1 << 62
        tt = self.tt if tt is None else tt
        values = self._root_search(board, player, actions, depth or self.depth, tt, counters)
        return {int(a): int(v) for a, v in zip(actions, values, strict=True)}

    def _root_search(
        self,
        board: np.ndarray,
        player: int,
        actions: np.ndarray,
        depth: int,
        tt: np.ndarray,
        counters: np.ndarray,
    ) -> np.ndarray:
        """The compiled search of every root move; a deep or timed one beside this thread, so
        that Ctrl-C stops it (a kernel holds its calling thread: ``alphabeta:depth=24`` kept a
        Kalaha game going for minutes after Ctrl-C)."""
        args = (
            self.kind, board, player, actions, depth, self.extend, self.param, self.zobrist, tt,
            counters, self.leaf_net, False,  # (exact_all, given: compile() needs every type)
        )  # fmt: skip
        timed = self.time_limit is not None and self.time_limit >= INTERRUPTIBLE_SECONDS
        if depth < INTERRUPTIBLE_DEPTH and not timed:
            return _root_values(*args)  # (milliseconds, or the time limit's: no thread)

        def stop() -> None:
            counters[1] = -1  # no nodes left: the search returns within a node

        # compiled (or loaded) here, where Ctrl-C stops it; in the worker it could not be
        _root_values.compile(tuple(numba.typeof(a) for a in args))
        return call_interruptibly(lambda: _root_values(*args), stop)

    def _deepen(
        self, board: np.ndarray, player: int, actions: np.ndarray, tt: np.ndarray, counters
    ) -> np.ndarray:
        start = time.perf_counter()
        deadline = start + float(self.time_limit)
        values = None
        nodes_total = 0
        for depth in range(1, 64):
            now = time.perf_counter()
            left = deadline - now
            if values is not None and left <= 0:
                break
            rate = nodes_total / max(now - start, 1e-4)
            counters[:] = 0
            counters[1] = 1 << 62 if values is None else max(int(rate * left), 1000)
            new = self._root_search(board, player, actions, depth, tt, counters)
            nodes_total += int(counters[0])
            if counters[2]:
                break  # unfinished: keep the last complete iteration
            values = new
            self.last_depth = depth
            if np.max(values) >= WIN // 2 or np.all(np.abs(values) >= WIN // 2):
                break  # a forced win is found, or every move's result is proven
        counters[0] = nodes_total
        return values


def _kalaha_param(options: dict[str, Any]) -> int:
    return 1 if str(options.get("rules", "goki")) == "goki" else 0


def _hus_param(options: dict[str, Any]) -> int:
    return int(options.get("max_sown", DEFAULT_MAX_SOWN))


def search_kind(game: str, options: dict[str, Any]) -> tuple[int, int]:
    """``(kind, rules parameter)`` of the compiled search for ``game`` with ``options``."""
    if game == "kalaha":
        return KALAHA, _kalaha_param(options)
    if game == "hus":
        return HUS, _hus_param(options)
    raise ValueError(f"the compiled search plays kalaha and hus, not {game!r}")


def _search_factory(kind: int, param_of, greedy: bool):
    def factory(options: dict[str, Any], seed: int | None, **params: Any) -> Agent:
        if greedy:
            if params:
                raise ValueError(f"greedy takes no parameters, got {sorted(params)}")
            return MancalaSearchAgent(kind, param_of(options), seed, depth=1, name="greedy")
        unknown = set(params) - {"depth", "time", "tt_bits", "extend"}
        if unknown:
            raise ValueError(
                f"alphabeta parameters are depth, time, tt_bits, extend; got {sorted(unknown)}"
            )
        whole = {"depth": 4, "tt_bits": 20, "extend": 0}
        values = {key: params.get(key, default) for key, default in whole.items()}
        time_limit = params.get("time")
        # (int() would read depth=2.5 as 2 and depth=true as 1; an empty time= played depth 4)
        if any(isinstance(v, bool) or not isinstance(v, int) for v in values.values()) or not (
            "time" not in params
            or (isinstance(time_limit, int | float) and not isinstance(time_limit, bool))
        ):
            raise ValueError(
                f"alphabeta: depth, tt_bits and extend must be integers, time a number of "
                f"seconds (got {params})"
            )
        depth, tt_bits, extend = values["depth"], values["tt_bits"], values["extend"]
        time_limit = None if time_limit is None else float(time_limit)
        return MancalaSearchAgent(
            kind, param_of(options), seed, depth=depth, time_limit=time_limit, tt_bits=tt_bits,
            name="alphabeta", extend=extend,
        )  # fmt: skip

    return factory


KALAHA_AGENTS = {
    "greedy": _search_factory(KALAHA, _kalaha_param, greedy=True),
    "alphabeta": _search_factory(KALAHA, _kalaha_param, greedy=False),
}
HUS_AGENTS = {
    "greedy": _search_factory(HUS, _hus_param, greedy=True),
    "alphabeta": _search_factory(HUS, _hus_param, greedy=False),
}
