"""The TD(lambda) backgammon value network: input encoding, forward and gradient as numba kernels,
and the agent that plays it (``pretrained:backgammon``, ``checkpoint:<path>`` of a TD run).

The network values an *afterstate*: the board right after a player (the *mover*) has made a
whole legal play, with the opponent to roll. Everything is from the mover's view.

Inputs (``NUM_INPUTS = 198``, Tesauro's encoding made relative to the mover):

====================  ===========================================================================
``x[0:96]``           mover's points 1..24 (side index 0..23), 4 units each for ``n`` checkers:
                      ``[n >= 1]``, ``[n >= 2]``, ``[n >= 3]``, ``(n - 3) / 2`` if ``n > 3``
``x[96]``, ``x[97]``  mover's checkers on the bar / 2, borne off / 15
``x[98:196]``         the same 98 units for the opponent (its own points, its own view)
``x[196]``            mover's pip count / 100
``x[197]``            opponent's pip count / 100
====================  ===========================================================================

(Tesauro's two "whose turn" units are not needed: the opponent of the mover is always to roll.
The two pip counts replace them; they make races easier to learn.)

Network: ``hidden`` sigmoid units, then ``NUM_OUTPUTS = 5`` sigmoid outputs, the mover's
probabilities (unconditional) of: 0 winning, 1 winning a gammon or backgammon, 2 winning a
backgammon, 3 losing a gammon or backgammon, 4 losing a backgammon. Its *equity* (expected
points for the mover, no cube) is ``2 y0 - 1 + y1 + y2 - y3 - y4``. The same outputs seen from
the other player are :func:`flip`: ``(1 - y0, y3, y4, y1, y2)``.

Parameters: ``W1`` (198, hidden), ``b1`` (hidden), ``W2`` (5, hidden), ``b2`` (5), float64.
The agent plays the legal play whose afterstate has the highest equity (1-ply); a play that
bears off the last checker is valued by its exact result, and the outputs a position rules out
(gammons once the losing side has borne off a checker) are 0 (:func:`rule_out_results`).

**The evaluator with features** (``TDArch(features=True, race_hidden=R)``, encoding
``tesauro198+features-v1``, ``NUM_FEATURE_INPUTS = 215`` inputs): the 198 inputs above, then the
17 hand-designed features of :mod:`spieltisch.agents.backgammon.td_features` (blots and the
shots hitting them, primes, home and anchor points, checkers back, escapes, pip difference;
its docstring has the table). With ``race_hidden > 0`` it has a second network of the same
form for **race** positions (no more contact possible, :func:`td_features.is_race`), with
parameters ``rW1`` (215, R), ``rb1``, ``rW2`` (5, R), ``rb2``: every afterstate is valued by
the network of its own class (:func:`evaluate_afterstate`, shared by the agent, the 2-ply
search and the trainer). A net with 198 inputs and no race net is exactly the net above.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numba
import numpy as np
from spieltisch.agents.backgammon import td_features as tf
from spieltisch.agents.backgammon.baselines import BackgammonPlayAgent
from spieltisch.envs.backgammon import rules as k

NUM_INPUTS = 198
NUM_OUTPUTS = 5
ARCH_KIND = "td_value"
ENCODING = "tesauro198-mover-v1"
PARAM_NAMES = ("W1", "b1", "W2", "b2")
#: the evaluator with features: the 198 inputs, then td_features' hand-designed ones
NUM_FEATURE_INPUTS = NUM_INPUTS + tf.NUM_FEATURES
ENCODING_FEATURES = "tesauro198+features-v1"
#: the race network's parameters (nets with race_hidden > 0)
RACE_PARAM_NAMES = ("rW1", "rb1", "rW2", "rb2")
#: afterstate classes (:func:`evaluate_afterstate`)
CLASS_CONTACT, CLASS_RACE, CLASS_FINAL = 0, 1, 2


@dataclass(frozen=True)
class TDArch:
    """Architecture record of a TD value net (stored in checkpoint metadata)."""

    hidden: int = 80
    inputs: int = NUM_INPUTS
    outputs: int = NUM_OUTPUTS
    encoding: str = ENCODING
    #: hidden units of the separate race network (0: one network for every position)
    race_hidden: int = 0

    @classmethod
    def make(cls, hidden: int, features: bool = False, race_hidden: int = 0) -> TDArch:
        """The architecture of a config's ``hidden``, ``features`` and ``race_hidden``."""
        if features:
            return cls(hidden, NUM_FEATURE_INPUTS, NUM_OUTPUTS, ENCODING_FEATURES, race_hidden)
        return cls(hidden, race_hidden=race_hidden)

    @property
    def param_names(self) -> tuple[str, ...]:
        return PARAM_NAMES + (RACE_PARAM_NAMES if self.race_hidden else ())

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {
            "kind": ARCH_KIND,
            "hidden": self.hidden,
            "inputs": self.inputs,
            "outputs": self.outputs,
            "encoding": self.encoding,
        }
        if self.race_hidden:
            data["race_hidden"] = self.race_hidden
        return data

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> TDArch:
        if data.get("kind") != ARCH_KIND:
            raise ValueError(f"not a TD value net architecture: kind={data.get('kind')!r}")
        sizes = [data["hidden"], data["inputs"], data["outputs"]]
        if any(isinstance(n, bool) or not isinstance(n, int) for n in sizes):
            raise ValueError(f"hidden, inputs and outputs must be integers, got {sizes}")
        race = data.get("race_hidden", 0)
        if isinstance(race, bool) or not isinstance(race, int) or race < 0:
            raise ValueError(f"race_hidden must be a non-negative integer, got {race!r}")
        arch = cls(*sizes, data["encoding"], race)
        readable = {
            (NUM_INPUTS, NUM_OUTPUTS, ENCODING),
            (NUM_FEATURE_INPUTS, NUM_OUTPUTS, ENCODING_FEATURES),
        }
        if (arch.inputs, arch.outputs, arch.encoding) not in readable:
            raise ValueError(
                f"TD net with {arch.inputs} inputs, {arch.outputs} outputs, encoding "
                f"{arch.encoding!r}; this spieltisch reads {NUM_INPUTS}/{NUM_OUTPUTS}/{ENCODING}"
                f" and {NUM_FEATURE_INPUTS}/{NUM_OUTPUTS}/{ENCODING_FEATURES}"
            )
        if arch.hidden < 1:
            raise ValueError(f"hidden must be positive, got {arch.hidden}")
        return arch

    def shapes(self) -> dict[str, tuple[int, ...]]:
        h, r, n = self.hidden, self.race_hidden, self.inputs
        out = {"W1": (n, h), "b1": (h,), "W2": (NUM_OUTPUTS, h), "b2": (NUM_OUTPUTS,)}
        if r:
            out.update(rW1=(n, r), rb1=(r,), rW2=(NUM_OUTPUTS, r), rb2=(NUM_OUTPUTS,))
        return out


def init_params(
    arch: TDArch, rng: np.random.Generator, scale: float = 0.1
) -> dict[str, np.ndarray]:
    """Small uniform random weights in ``[-scale, scale]``, zero biases (drawn in the order of
    :attr:`TDArch.param_names`)."""
    return {
        name: rng.uniform(-scale, scale, shape) if "W" in name else np.zeros(shape)
        for name, shape in arch.shapes().items()
    }


# ----------------------------------------------------------------------------------------------
# Kernels
# ----------------------------------------------------------------------------------------------
@numba.njit(cache=True, nogil=True)
def encode(board, mover, x, nz):
    """Write the inputs of ``board`` (52 cells or a whole state vector) seen by seat ``mover``
    into ``x`` (float64[198]) and the indices of its non-zero entries into ``nz``; returns their
    number."""
    for i in range(NUM_INPUTS):
        x[i] = 0.0
    n_nz = 0
    for half in range(2):
        base = k.SIDE * mover if half == 0 else k.SIDE * (1 - mover)
        off = 98 * half
        pips = 0
        for i in range(24):
            n = board[base + i]
            if n > 0:
                pips += n * (i + 1)
                j = off + 4 * i
                x[j] = 1.0
                nz[n_nz] = j
                n_nz += 1
                if n > 1:
                    x[j + 1] = 1.0
                    nz[n_nz] = j + 1
                    n_nz += 1
                    if n > 2:
                        x[j + 2] = 1.0
                        nz[n_nz] = j + 2
                        n_nz += 1
                        if n > 3:
                            x[j + 3] = (n - 3) / 2.0
                            nz[n_nz] = j + 3
                            n_nz += 1
        bar = board[base + k.BAR]
        pips += 25 * bar
        if bar > 0:
            x[off + 96] = bar / 2.0
            nz[n_nz] = off + 96
            n_nz += 1
        home = board[base + k.OFF]
        if home > 0:
            x[off + 97] = home / 15.0
            nz[n_nz] = off + 97
            n_nz += 1
        if pips > 0:
            x[196 + half] = pips / 100.0
            nz[n_nz] = 196 + half
            n_nz += 1
    return n_nz


@numba.njit(cache=True, nogil=True, fastmath=False)
def _sigmoid(z):
    if z >= 0:
        return 1.0 / (1.0 + np.exp(-z))
    e = np.exp(z)
    return e / (1.0 + e)


@numba.njit(cache=True, nogil=True)
def forward(W1, b1, W2, b2, x, nz, n_nz, h, y):
    """Hidden activations into ``h`` and outputs into ``y`` for sparse input ``x``."""
    hidden = b1.shape[0]
    for j in range(hidden):
        h[j] = b1[j]
    for t in range(n_nz):
        i = nz[t]
        xi = x[i]
        for j in range(hidden):
            h[j] += W1[i, j] * xi
    for j in range(hidden):
        h[j] = _sigmoid(h[j])
    for o in range(NUM_OUTPUTS):
        z = b2[o]
        for j in range(hidden):
            z += W2[o, j] * h[j]
        y[o] = _sigmoid(z)


@numba.njit(cache=True, nogil=True)
def equity(y):
    """Expected points for the mover (no cube) of outputs ``y``."""
    return 2.0 * y[0] - 1.0 + y[1] + y[2] - y[3] - y[4]


@numba.njit(cache=True, nogil=True)
def result_outputs(board, mover, y):
    """The exact outputs of a position in which ``mover`` has borne off all checkers."""
    wt = k.win_type(board, mover)
    y[0] = 1.0
    y[1] = 1.0 if wt >= k.RESULT_GAMMON else 0.0
    y[2] = 1.0 if wt >= k.RESULT_BACKGAMMON else 0.0
    y[3] = 0.0
    y[4] = 0.0


@numba.njit(cache=True, nogil=True)
def rule_out_results(row, mover, y):
    """Zero the outputs that afterstate ``row`` rules out: no gammon (nor backgammon) for
    ``mover`` once the opponent has borne off a checker, none against ``mover`` once it has.
    The net learns these zeros only roughly, and a few hundredths too much made every TD
    agent pass up a win by bearing off (1.05 points for the play that leaves a checker,
    against the win's exact 1)."""
    if row[k.SIDE * (1 - mover) + k.OFF] > 0:
        y[1] = 0.0
        y[2] = 0.0
    if row[k.SIDE * mover + k.OFF] > 0:
        y[3] = 0.0
        y[4] = 0.0


@numba.njit(cache=True, nogil=True)
def flip(y, out):
    """Outputs seen from the other player: ``(1 - y0, y3, y4, y1, y2)``."""
    a0, a1, a2, a3, a4 = y[0], y[1], y[2], y[3], y[4]
    out[0] = 1.0 - a0
    out[1] = a3
    out[2] = a4
    out[3] = a1
    out[4] = a2


@numba.njit(cache=True, nogil=True)
def gradients(W2, x, nz, n_nz, h, y, gW1, gb1, gW2, gb2):
    """The gradient of every output with respect to every parameter at the last
    :func:`forward`: ``gW1[o]`` (only the rows in ``nz`` are written; callers use them
    sparsely), ``gb1[o]``, ``gW2[o]`` (full, zero outside row ``o``), ``gb2[o]``."""
    hidden = h.shape[0]
    for o in range(NUM_OUTPUTS):
        c = y[o] * (1.0 - y[o])
        for o2 in range(NUM_OUTPUTS):
            gb2[o, o2] = c if o2 == o else 0.0
            for j in range(hidden):
                gW2[o, o2, j] = c * h[j] if o2 == o else 0.0
        for j in range(hidden):
            gb1[o, j] = c * W2[o, j] * h[j] * (1.0 - h[j])
        for t in range(n_nz):
            i = nz[t]
            xi = x[i]
            for j in range(hidden):
                gW1[o, i, j] = gb1[o, j] * xi


@numba.njit(cache=True, nogil=True)
def encode_inputs(board, mover, x, nz):
    """:func:`encode`, then (``x`` longer than 198: the evaluator with features) the
    hand-designed features of :mod:`td_features` after them; returns the non-zero count."""
    n_nz = encode(board, mover, x, nz)
    if x.shape[0] > NUM_INPUTS:
        tf.features(board, mover, x, NUM_INPUTS)
        for i in range(NUM_INPUTS, x.shape[0]):
            if x[i] != 0.0:
                nz[n_nz] = i
                n_nz += 1
    return n_nz


@numba.njit(cache=True, nogil=True)
def evaluate_afterstate(W1, b1, W2, b2, rW1, rb1, rW2, rb2, row, mover, x, nz, h, rh, y):
    """The outputs ``y`` of afterstate ``row`` for ``mover`` from the network of its class:
    the exact result when ``mover`` has borne off every checker (``CLASS_FINAL``), the race
    network (``rW1``..., hidden activations into ``rh``) for a race when there is one
    (``rb1`` not empty; ``CLASS_RACE``), else the main network (``h``; ``CLASS_CONTACT``).
    ``x`` has the net's input size. The outputs the position rules out are 0
    (:func:`rule_out_results`; their gradients then vanish too). Returns ``(class, number of
    non-zero inputs)``."""
    if row[k.SIDE * mover + k.OFF] == k.CHECKERS:
        result_outputs(row, mover, y)
        return CLASS_FINAL, 0
    n_nz = encode_inputs(row, mover, x, nz)
    cls = CLASS_CONTACT
    if rb1.shape[0] > 0 and tf.is_race(row):
        forward(rW1, rb1, rW2, rb2, x, nz, n_nz, rh, y)
        cls = CLASS_RACE
    else:
        forward(W1, b1, W2, b2, x, nz, n_nz, h, y)
    rule_out_results(row, mover, y)
    return cls, n_nz


@numba.njit(cache=True, nogil=True)
def best_afterstate(W1, b1, W2, b2, rW1, rb1, rW2, rb2, boards, n, mover, x, nz, h, rh, y):
    """The index of the afterstate among ``boards[:n]`` with the highest equity for ``mover``
    (the first of equal ones), each valued by :func:`evaluate_afterstate` (scratch ``x`` ..
    ``y`` as there): the greedy 1-ply choice of self-play."""
    best = -1e300
    bi = 0
    for p in range(n):
        evaluate_afterstate(W1, b1, W2, b2, rW1, rb1, rW2, rb2, boards[p], mover, x, nz, h, rh, y)
        v = equity(y)
        if v > best:
            best = v
            bi = p
    return bi


@numba.njit(cache=True, nogil=True)
def no_race_net(W1):
    """Empty race parameters (a net without a race network)."""
    n_in = W1.shape[0]
    return (
        np.zeros((n_in, 0)),
        np.zeros(0),
        np.zeros((NUM_OUTPUTS, 0)),
        np.zeros(NUM_OUTPUTS),
    )


@numba.njit(cache=True, nogil=True)
def play_values_net(W1, b1, W2, b2, rW1, rb1, rW2, rb2, boards, n, mover, values):
    """Equity for ``mover`` of each of the first ``n`` afterstate ``boards``, each valued by
    the network of its class (:func:`evaluate_afterstate`)."""
    n_in = W1.shape[0]
    x = np.zeros(n_in)
    nz = np.zeros(n_in, dtype=np.int64)
    h = np.zeros(b1.shape[0])
    rh = np.zeros(rb1.shape[0])
    y = np.zeros(NUM_OUTPUTS)
    for p in range(n):
        evaluate_afterstate(W1, b1, W2, b2, rW1, rb1, rW2, rb2, boards[p], mover, x, nz, h, rh, y)
        values[p] = equity(y)


@numba.njit(cache=True, nogil=True)
def play_values(W1, b1, W2, b2, boards, n, mover, values):
    """:func:`play_values_net` of a net without a race network."""
    rW1, rb1, rW2, rb2 = no_race_net(W1)
    play_values_net(W1, b1, W2, b2, rW1, rb1, rW2, rb2, boards, n, mover, values)


@numba.njit(cache=True, nogil=True)
def play_values_2ply(W1, b1, W2, b2, s, boards, n, mover, keep, values, ws, replies):
    """:func:`play_values_lookahead` at 2 plies of a net without a race network."""
    rW1, rb1, rW2, rb2 = no_race_net(W1)
    play_values_lookahead(
        W1, b1, W2, b2, rW1, rb1, rW2, rb2, s, boards, n, mover, 2, keep, 1, values,
        ws, replies, ws, replies,
    )  # fmt: skip


@numba.njit(cache=True, nogil=True)
def roll_plays(row, player, d1, d2, s, ws, boards):
    """The afterstates of ``player``'s legal plays of the roll ``(d1, d2)`` from the board
    ``row`` (``player`` about to roll there) into ``boards``; returns how many. ``s``: a
    scratch state vector, ``ws`` a workspace."""
    for j in range(k.BOARD_SIZE):
        s[j] = row[j]
    s[k.M_TURN] = player
    s[k.M_PLAYER] = player
    s[k.M_PHASE] = k.PH_ROLL
    k.put_dice(s, d1, d2)
    k.generate(s, ws, False)
    k.play_boards(s, ws, boards)
    return s[k.M_NPLAYS]


@numba.njit(cache=True, nogil=True)
def afterstate_value_2ply(W1, b1, W2, b2, rW1, rb1, rW2, rb2, row, mover, s, ws, replies, out):
    """Two plies from one afterstate ``row`` of ``mover``: its equity for ``mover`` averaged
    over the opponent's 21 rolls, the opponent answering each with its 1-ply best play (the
    caller handles a won ``row``). ``s``: a scratch state vector, ``ws`` a workspace,
    ``replies`` room for a roll's plays, ``out`` for their values."""
    opp = 1 - mover
    total = 0.0
    for d1 in range(1, 7):
        for d2 in range(d1, 7):
            m = roll_plays(row, opp, d1, d2, s, ws, replies)
            play_values_net(W1, b1, W2, b2, rW1, rb1, rW2, rb2, replies, m, opp, out)
            best = out[0]
            for q in range(1, m):
                if out[q] > best:
                    best = out[q]
            total -= best * (1.0 if d1 == d2 else 2.0)  # zero-sum: the mover's equity
    return total / 36.0


@numba.njit(cache=True, nogil=True)
def afterstate_outputs_2ply(W1, b1, W2, b2, rW1, rb1, rW2, rb2, row, mover, s, ws, replies, out):
    """The five outputs for ``mover`` of afterstate ``row`` two plies deep, into ``out``: over
    the opponent's 21 rolls (weights 1/36 and 2/36), the outputs of its 1-ply best play
    (:func:`best_afterstate`; the exact result where it bears off its last checker), seen from
    ``mover``. Their equity is :func:`afterstate_value_2ply`'s. A won ``row`` gets its exact
    result. ``s``, ``ws``, ``replies`` as there."""
    if row[k.SIDE * mover + k.OFF] == k.CHECKERS:
        result_outputs(row, mover, out)
        return
    opp = 1 - mover
    n_in = W1.shape[0]
    x = np.zeros(n_in)
    nz = np.zeros(n_in, dtype=np.int64)
    h, rh = np.zeros(b1.shape[0]), np.zeros(rb1.shape[0])
    y, seen = np.zeros(NUM_OUTPUTS), np.zeros(NUM_OUTPUTS)
    for o in range(NUM_OUTPUTS):
        out[o] = 0.0
    for d1 in range(1, 7):
        for d2 in range(d1, 7):
            m = roll_plays(row, opp, d1, d2, s, ws, replies)
            best = best_afterstate(
                W1, b1, W2, b2, rW1, rb1, rW2, rb2, replies, m, opp, x, nz, h, rh, y
            )
            evaluate_afterstate(
                W1, b1, W2, b2, rW1, rb1, rW2, rb2, replies[best], opp, x, nz, h, rh, y
            )
            flip(y, seen)
            weight = 1.0 if d1 == d2 else 2.0
            for o in range(NUM_OUTPUTS):
                out[o] += weight * seen[o]
    for o in range(NUM_OUTPUTS):
        out[o] /= 36.0


@numba.njit(cache=True, nogil=True)
def _outputs_2ply_all(W1, b1, W2, b2, rW1, rb1, rW2, rb2, boards, movers, out, ws):
    s = np.zeros(k.STATE_SIZE, dtype=boards.dtype)
    replies = np.zeros((k.MAX_PLAYS, k.BOARD_SIZE), dtype=boards.dtype)
    for p in range(boards.shape[0]):
        afterstate_outputs_2ply(
            W1, b1, W2, b2, rW1, rb1, rW2, rb2, boards[p], movers[p], s, ws, replies, out[p]
        )


def outputs_2ply(
    params: dict[str, np.ndarray], boards: np.ndarray, movers: np.ndarray
) -> np.ndarray:
    """``(n, 5)``: :func:`afterstate_outputs_2ply` of each afterstate ``boards[p]`` (rows of 52
    cells) for its mover ``movers[p]``."""
    boards = np.ascontiguousarray(boards, dtype=np.int32)
    out = np.zeros((len(boards), NUM_OUTPUTS))
    _outputs_2ply_all(
        *net_arrays(params), boards, np.asarray(movers, dtype=np.int64), out, k.new_workspace()
    )
    return out


@numba.njit(cache=True, nogil=True)
def afterstate_value_3ply(
    W1, b1, W2, b2, rW1, rb1, rW2, rb2, row, mover, reply_keep, s, ws, replies, out,
    s2, ws2, replies2, out2,
):  # fmt: skip
    """Three plies from one afterstate ``row`` of ``mover`` (not won): over the opponent's 21
    rolls, the opponent's best play by its 2-ply value (:func:`afterstate_value_2ply`) among
    its ``reply_keep`` best by 1-ply equity; the mover's equity averaged over the rolls.
    ``s2, ws2, replies2, out2``: the 2-ply level's scratch (as ``s, ws, replies, out``)."""
    opp = 1 - mover
    total = 0.0
    for d1 in range(1, 7):
        for d2 in range(d1, 7):
            m = roll_plays(row, opp, d1, d2, s, ws, replies)
            play_values_net(W1, b1, W2, b2, rW1, rb1, rW2, rb2, replies, m, opp, out)
            best = -1.0e9
            order = np.argsort(-out[:m], kind="mergesort")  # stable: the first of equal values
            for r in range(min(reply_keep, m)):
                q = order[r]
                if replies[q, k.SIDE * opp + k.OFF] == k.CHECKERS:
                    value = out[q]  # the opponent bears off its last checker: exact
                else:
                    value = afterstate_value_2ply(
                        W1, b1, W2, b2, rW1, rb1, rW2, rb2, replies[q], opp,
                        s2, ws2, replies2, out2,
                    )  # fmt: skip
                if value > best:
                    best = value
            total -= best * (1.0 if d1 == d2 else 2.0)
    return total / 36.0


@numba.njit(cache=True, nogil=True)
def play_values_lookahead(
    W1, b1, W2, b2, rW1, rb1, rW2, rb2, s, boards, n, mover, ply, keep, reply_keep, values,
    ws, replies, ws2, replies2,
):  # fmt: skip
    """The mover's equity of each afterstate ``boards[:n]`` looking ``ply`` (2 or 3) plies
    ahead (:func:`afterstate_value_2ply`, :func:`afterstate_value_3ply` with ``reply_keep``).
    Only the ``keep`` best plays by 1-ply equity are searched (the others keep their 1-ply
    value minus 1000, so they rank below); a play that wins keeps its exact value. ``s``: a
    scratch state vector (a copy of the position's); ``ws``, ``ws2`` two workspaces and
    ``replies``, ``replies2`` room for a roll's plays each (the second pair for ply 3)."""
    play_values_net(W1, b1, W2, b2, rW1, rb1, rW2, rb2, boards, n, mover, values)
    if n <= 1:
        return
    order = np.argsort(-values[:n])
    out, out2, s2 = np.zeros(k.MAX_PLAYS), np.zeros(k.MAX_PLAYS), s.copy()
    for r in range(n):
        p = order[r]
        if r >= keep:
            values[p] -= 1000.0
            continue
        row = boards[p]
        if row[k.SIDE * mover + k.OFF] == k.CHECKERS:
            continue  # a won game: its exact value
        if ply == 2:
            values[p] = afterstate_value_2ply(
                W1, b1, W2, b2, rW1, rb1, rW2, rb2, row, mover, s, ws, replies, out
            )
        else:
            values[p] = afterstate_value_3ply(
                W1, b1, W2, b2, rW1, rb1, rW2, rb2, row, mover, reply_keep, s, ws, replies,
                out, s2, ws2, replies2, out2,
            )  # fmt: skip


def net_arrays(params: dict[str, np.ndarray]) -> tuple[np.ndarray, ...]:
    """``(W1, b1, W2, b2, rW1, rb1, rW2, rb2)`` of a parameter dict for the ``*_net`` kernels
    (empty race arrays for a net without a race network)."""
    main = tuple(params[n] for n in PARAM_NAMES)
    if "rb1" in params:
        return main + tuple(params[n] for n in RACE_PARAM_NAMES)
    return main + tuple(no_race_net(params["W1"]))


def evaluate_boards(params: dict[str, np.ndarray], boards: np.ndarray, mover: int) -> np.ndarray:
    """Mover's equity of afterstate ``boards`` (rows of 52 cells or more)."""
    boards = np.ascontiguousarray(boards, dtype=np.int32)
    values = np.zeros(len(boards))
    play_values_net(*net_arrays(params), boards, len(boards), mover, values)
    return values


def afterstate_outputs(params: dict[str, np.ndarray], boards: np.ndarray, mover: int) -> np.ndarray:
    """``(n, 5)``: the five outputs for ``mover`` of each afterstate (rows of ``boards``), the
    exact result where ``mover`` has borne off every checker (as :func:`play_values`)."""
    out = np.zeros((len(boards), NUM_OUTPUTS))
    for p, row in enumerate(np.ascontiguousarray(boards, dtype=np.int32)):
        if row[k.SIDE * mover + k.OFF] == k.CHECKERS:
            result_outputs(row, mover, out[p])
        else:
            out[p] = outputs_of(params, row, mover)
    return out


def outputs_of(params: dict[str, np.ndarray], board: np.ndarray, mover: int) -> np.ndarray:
    """The five outputs of one afterstate from the network of its class (for inspection and
    tests)."""
    net = net_arrays(params)
    n_in = params["W1"].shape[0]
    x = np.zeros(n_in)
    nz = np.zeros(n_in, dtype=np.int64)
    h, rh, y = np.zeros(net[1].shape[0]), np.zeros(net[5].shape[0]), np.zeros(NUM_OUTPUTS)
    row = np.ascontiguousarray(board, dtype=np.int32)
    evaluate_afterstate(*net, row, mover, x, nz, h, rh, y)
    return y


# ----------------------------------------------------------------------------------------------
# Agent
# ----------------------------------------------------------------------------------------------
#: the largest ``keep`` and ``reply_keep`` (a roll has far fewer plays: more keeps every one)
MAX_KEEP = 1_000_000


class TDValueAgent(BackgammonPlayAgent):
    """Plays the legal play with the highest afterstate equity (first of equal values).
    ``ply=1``: the net's value of each afterstate; ``ply=2``: averaged over the opponent's 21
    rolls and its 1-ply best reply, for the ``keep`` best plays by 1-ply value (about 20x
    slower); ``ply=3``: over the opponent's 21 rolls, its best reply by 2-ply value among its
    ``reply_keep`` best by 1-ply value (move filtering at both levels; ``keep=4,reply_keep=2``
    costs about 170x a 1-ply move; defaults 8 and 2, and either given at a ply it does not
    filter is refused). ``bearoff=True``: every play into a bear-off (both sides'
    checkers all on their points 1..6) is valued from the bear-off database
    (:mod:`.bearoff`) instead of by the net or the lookahead, and so is a bear-off before the
    roll for the cube. Cube (if on): Janowski's formulas on :meth:`position_probabilities` by
    default (:class:`.baselines.BackgammonPlayAgent`, ``set_cube``)."""

    name = "td"

    def __init__(
        self,
        params: dict[str, np.ndarray],
        seed: int | None = None,
        ply: int = 1,
        keep: int | None = None,
        reply_keep: int | None = None,
        bearoff: bool = False,
    ) -> None:
        super().__init__(seed)
        if not isinstance(bearoff, bool):
            raise ValueError(f"bearoff must be true or false, got {bearoff!r}")
        if isinstance(ply, bool) or ply not in (1, 2, 3):
            raise ValueError(f"ply must be 1, 2 or 3, got {ply!r}")
        # None: the default (8, 2); a count given where the lookahead does not filter did nothing
        for name, n, least in (("keep", keep, 2), ("reply_keep", reply_keep, 3)):
            if n is None:
                continue
            if isinstance(n, bool) or not isinstance(n, int) or n < 1:
                raise ValueError(f"{name} must be a positive integer, got {n!r}")
            if n > MAX_KEEP:  # (the compiled lookahead takes int64: keep=10**20 failed in numba)
                raise ValueError(
                    f"{name} must be at most {MAX_KEEP:,} (as many keeps every play), got {n!r}"
                )
            if ply < least:
                raise ValueError(
                    f"'{name}' filters the candidates of a deeper lookahead: it needs "
                    f"ply={least}" + (" or 3" if least == 2 else "")
                )
        keep = 8 if keep is None else keep
        reply_keep = 2 if reply_keep is None else reply_keep
        names = PARAM_NAMES + (RACE_PARAM_NAMES if "rb1" in params else ())
        self.params = {n: np.ascontiguousarray(params[n], dtype=np.float64) for n in names}
        self.ply = ply
        self.keep = keep
        self.reply_keep = reply_keep
        self.bearoff = bearoff
        self._scratch: tuple[np.ndarray, ...] | None = None

    def choose_play(self, state: Any) -> int:
        if state.num_plays() <= 1:
            return 0
        return int(np.argmax(self.play_values(state)))

    def play_values(self, state: Any) -> np.ndarray:
        """The mover's equity of every legal play of ``state``, as :meth:`choose_play` ranks
        them (``ply`` > 1: plays outside the ``keep`` best have their 1-ply value minus 1000;
        ``bearoff``: plays into a bear-off valued exactly)."""
        boards = np.ascontiguousarray(state.play_boards(), dtype=np.int32)
        if not self.bearoff:
            return self._net_play_values(state, boards)
        from spieltisch.agents.backgammon import bearoff

        outputs, exact = bearoff.afterstate_outputs(boards, state.turn)
        # In a bear-off every play is exact: no net (or lookahead) to evaluate.
        values = np.zeros(len(boards)) if exact.all() else self._net_play_values(state, boards)
        for p in np.flatnonzero(exact):
            values[p] = equity(outputs[p])
        return values

    def _net_play_values(self, state: Any, boards: np.ndarray) -> np.ndarray:
        if self.ply == 1:
            return evaluate_boards(self.params, boards, state.turn)
        if self._scratch is None:  # two levels of workspace and reply boards, made once
            plays = (k.MAX_PLAYS, k.BOARD_SIZE)
            self._scratch = (
                *(k.new_workspace(), np.zeros(plays, dtype=np.int32)),
                *(k.new_workspace(), np.zeros(plays, dtype=np.int32)),
            )
        ws, replies, ws2, replies2 = self._scratch
        values = np.zeros(len(boards))
        play_values_lookahead(
            *net_arrays(self.params), state.s.copy(), boards, len(boards), state.turn,
            self.ply, self.keep, self.reply_keep, values, ws, replies, ws2, replies2,
        )  # fmt: skip
        return values

    def position_probabilities(self, state: Any) -> np.ndarray:
        """The five outputs for the player on turn of ``state`` before its roll (cube
        decisions, :mod:`.cube`): over the 21 rolls, the average of the outputs of the
        afterstate with the best 1-ply equity (whatever ``ply``; :func:`.cube.roll_average`);
        with ``bearoff``, a bear-off's exact outputs."""
        from spieltisch.agents.backgammon.cube import roll_average

        if self.bearoff:
            from spieltisch.agents.backgammon import bearoff

            board = np.ascontiguousarray(state.board, dtype=np.int32)
            if bearoff.is_bearoff(board):
                return bearoff.to_roll_outputs(board, state.turn)

        def best(rolled: Any) -> np.ndarray:
            boards = np.ascontiguousarray(rolled.play_boards(), dtype=np.int32)
            i = int(np.argmax(evaluate_boards(self.params, boards, rolled.turn)))
            return afterstate_outputs(self.params, boards[i : i + 1], rolled.turn)[0]

        return roll_average(state, best)


def params_from_tensors(arch: TDArch, tensors: dict[str, Any], where: str) -> dict[str, np.ndarray]:
    """The net's parameters from checkpoint tensors ``model.<name>``; checks that these are
    exactly the net's, each of its shape."""
    shapes = arch.shapes()
    extra = sorted(k for k in tensors if k.startswith("model.") and k[6:] not in shapes)
    if extra:
        raise ValueError(f"{where}: tensors {extra} are not part of a TD value net")
    out = {}
    for name, shape in shapes.items():
        t = tensors.get(f"model.{name}")
        if t is None:
            raise ValueError(f"{where}: tensor model.{name} is missing")
        a = t.numpy() if hasattr(t, "numpy") else np.asarray(t)
        if tuple(a.shape) != shape:
            raise ValueError(f"{where}: model.{name} has shape {tuple(a.shape)}, expected {shape}")
        out[name] = np.ascontiguousarray(a, dtype=np.float64)
    return out


def agent_from_checkpoint(ckpt: Any, seed: int | None = None, **params: Any) -> TDValueAgent:
    """A :class:`TDValueAgent` from a loaded checkpoint (:class:`agents.checkpoint.Checkpoint`);
    ``params``: ``ply``, ``keep``, ``reply_keep``, ``bearoff``."""
    from spieltisch.agents.neural.checkpoint import CheckpointError

    where = ckpt._where()
    try:
        arch = TDArch.from_json(ckpt.meta["arch"])
        weights = params_from_tensors(arch, ckpt.tensors, where)
    except (KeyError, TypeError, ValueError) as err:
        raise CheckpointError(f"{where}: bad TD value net: {err}") from err
    return TDValueAgent(weights, seed=seed, **params)


def load_td_net(name: str) -> tuple[TDArch, dict[str, np.ndarray], int]:
    """``(arch, params, games)`` of a TD value net named ``pretrained:backgammon`` (the shipped
    net; ``pretrained:backgammon:algo=td_features`` another shipped one) or by a checkpoint's
    path (``checkpoint:PATH`` or PATH): its architecture, weights and the self-play games
    behind it (its metadata's ``games_total``, else ``games``, else 0). Raises CheckpointError
    saying why it is not one."""
    from spieltisch.agents.neural.checkpoint import CheckpointError, load_checkpoint

    try:
        if name.startswith("pretrained:"):
            from spieltisch.agents.neural.agents import pretrained_path, split_parameters

            game, params = split_parameters("pretrained", name.removeprefix("pretrained:"))
            if game != "backgammon" or set(params) - {"algo"}:
                raise ValueError(
                    "the shipped TD value nets are pretrained:backgammon[:algo=ALGORITHM]"
                )
            path: Any = pretrained_path("backgammon", {}, params.get("algo"))
        else:  # a path, or checkpoint:PATH as the other trainers' init_checkpoint takes it
            path = name.removeprefix("checkpoint:")
        start = load_checkpoint(path, "backgammon")
        if not is_td_checkpoint(start.meta):
            raise ValueError("it is not a TD value net (arch kind 'td_value')")
        arch = TDArch.from_json(start.meta["arch"])
        params = params_from_tensors(arch, start.tensors, str(path))
    except (KeyError, TypeError, ValueError, CheckpointError) as err:
        raise CheckpointError(f"{name}: {err}") from err
    games = start.meta.get("games_total", start.meta.get("games", 0))
    return arch, params, int(games) if isinstance(games, int) else 0


def is_td_checkpoint(meta: dict[str, Any]) -> bool:
    arch = meta.get("arch")
    return isinstance(arch, dict) and arch.get("kind") == ARCH_KIND
