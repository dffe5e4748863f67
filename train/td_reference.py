"""A plain numpy TD(lambda) learner, the same algorithm and net as :mod:`spieltisch.train.td`.

It exists as the peer of the compiled trainer: ``benchmarks/bench_td.py`` times both in one
run, and ``tests/test_train_td.py`` checks that both give the same weights from the same dice
(an independent check of the compiled forward pass, gradients, traces and perspective flips).
Games go through the engine's single-state API (``BackgammonState.play_boards`` /
``apply_play``: the same rule kernels); the net is evaluated on all plays of a roll at once
with numpy matrix products, and the traces are updated with whole-array numpy operations.
"""

from __future__ import annotations

import numpy as np
from spieltisch.agents.backgammon import td_value as tv
from spieltisch.envs.backgammon import rules as k
from spieltisch.envs.backgammon.engine import BackgammonGame

#: the linear part of the perspective flip: output o of the other side is SIGN[o] * y[PERM[o]]
PERM = np.array([0, 3, 4, 1, 2])
SIGN = np.array([-1.0, 1.0, 1.0, 1.0, 1.0])


def encode_numpy(boards: np.ndarray, mover: int) -> np.ndarray:
    """The 198 inputs of each board (rows of >= 52 cells) from ``mover``'s view (see
    :mod:`spieltisch.agents.backgammon.td_value`), written independently of the compiled encoder."""
    boards = np.asarray(boards, dtype=np.float64)
    x = np.zeros((len(boards), tv.NUM_INPUTS))
    for half, seat in enumerate((mover, 1 - mover)):
        side = boards[:, k.SIDE * seat : k.SIDE * seat + k.SIDE]
        n = side[:, :24]
        off = 98 * half
        x[:, off : off + 96 : 4] = n >= 1
        x[:, off + 1 : off + 96 : 4] = n >= 2
        x[:, off + 2 : off + 96 : 4] = n >= 3
        x[:, off + 3 : off + 96 : 4] = np.where(n > 3, (n - 3) / 2, 0.0)
        x[:, off + 96] = side[:, k.BAR] / 2
        x[:, off + 97] = side[:, k.OFF] / 15
        x[:, 196 + half] = (n @ np.arange(1, 25) + 25 * side[:, k.BAR]) / 100
    return x


def _sigmoid(z: np.ndarray) -> np.ndarray:
    return 0.5 * (1.0 + np.tanh(0.5 * z))


def forward_numpy(params: dict[str, np.ndarray], x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Hidden activations and outputs for inputs ``x`` (rows)."""
    h = _sigmoid(x @ params["W1"] + params["b1"])
    return h, _sigmoid(h @ params["W2"].T + params["b2"])


def ruled_out(boards: np.ndarray, mover: int) -> np.ndarray:
    """``(n, 5)``: True for the outputs a board rules out: the mover's gammons once the
    opponent has borne off a checker, the opponent's once the mover has."""
    out = np.zeros((len(boards), tv.NUM_OUTPUTS), dtype=bool)
    out[:, 1:3] = (boards[:, k.SIDE * (1 - mover) + k.OFF] > 0)[:, None]
    out[:, 3:5] = (boards[:, k.SIDE * mover + k.OFF] > 0)[:, None]
    return out


def _result(board: np.ndarray, mover: int) -> np.ndarray:
    wt = k.win_type(board, mover)
    return np.array([1.0, wt >= k.RESULT_GAMMON, wt >= k.RESULT_BACKGAMMON, 0.0, 0.0])


def train_games_numpy(
    params: dict[str, np.ndarray],
    n_games: int,
    lr: float,
    lam: float,
    rng: np.random.Generator,
) -> np.ndarray:
    """Like :func:`spieltisch.train.td.train_games` with a constant step size; updates
    ``params`` in place and returns the number of plays of each game."""
    game = BackgammonGame()
    W1, b1, W2, b2 = params["W1"], params["b1"], params["W2"], params["b2"]
    moves_of = np.zeros(n_games, dtype=np.int64)
    for g in range(n_games):
        state = game.new_initial_state()
        traces = {name: np.zeros((tv.NUM_OUTPUTS, *a.shape)) for name, a in params.items()}
        prev = None
        moves = 0
        while True:
            d1, d2 = k.dice_of(state.s, rng.integers(0, 180))
            state.set_dice(int(d1), int(d2))
            mover = state.turn
            boards = state.play_boards()
            final = boards[:, k.SIDE * mover + k.OFF] == k.CHECKERS
            x = encode_numpy(boards, mover)
            h, y = forward_numpy(params, x)
            y[ruled_out(boards, mover)] = 0.0  # (their gradients vanish with them)
            for i in np.flatnonzero(final):
                y[i] = _result(boards[i], mover)
            values = 2 * y[:, 0] - 1 + y[:, 1] + y[:, 2] - y[:, 3] - y[:, 4]
            best = int(np.argmax(values))
            yb, hb, xb = y[best], h[best], x[best]
            if prev is not None:
                delta = np.array([1 - yb[0], yb[3], yb[4], yb[1], yb[2]]) - prev
                for name, a in params.items():
                    a += lr * np.tensordot(delta, traces[name], axes=1)
            state.apply_play(best)
            moves += 1
            if final[best]:
                break
            # traces: e <- lam * L e + grad y
            c = yb * (1 - yb)
            g_b1 = c[:, None] * W2 * (hb * (1 - hb))[None, :]  # (5, hidden)
            g_W2 = np.zeros((tv.NUM_OUTPUTS, *W2.shape))
            g_b2 = np.zeros((tv.NUM_OUTPUTS, *b2.shape))
            for o in range(tv.NUM_OUTPUTS):
                g_W2[o, o] = c[o] * hb
                g_b2[o, o] = c[o]
            grads = {
                "W1": xb[None, :, None] * g_b1[:, None, :],
                "b1": g_b1,
                "W2": g_W2,
                "b2": g_b2,
            }
            for name in params:
                t = traces[name]
                traces[name] = lam * SIGN.reshape(-1, *[1] * (t.ndim - 1)) * t[PERM] + grads[name]
            prev = yb.copy()
        moves_of[g] = moves
    # keep the caller's arrays (updated in place above)
    assert params["W1"] is W1 and params["b1"] is b1
    return moves_of
