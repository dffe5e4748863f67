"""Tesauro's *pubeval*: the public linear evaluation of backgammon positions (1993).

A position is scored for the player who has just moved (the *mover*): 122 inputs, five per
point 1..24 of the mover's board plus the opponent's bar and the mover's borne-off checkers,
times one of two weight vectors — ``race`` when the sides have no contact any more, ``contact``
otherwise. A pubeval player picks the legal play whose resulting position scores highest.

The weights are data (``agents/data/pubeval.json``). They were derived from GNU Backgammon's
own implementation (``gnubg_nn.pub_eval_score``) by ``release/derive_pubeval_weights.py``
— an exact linear fit over random positions — and ``tests/test_pubeval.py`` checks that this
module scores positions exactly like GNU Backgammon's, so the package's pubeval does not need
the optional gnubg-nn package.

Inputs for published point ``j`` (1..24), ``b = 5 * (j - 1)``, with ``n`` the mover's checkers
there and ``o`` the opponent's on the same point: ``x[b] = [o == 1]``, ``x[b+1] = [n == 1]``,
``x[b+2] = [n >= 2]``, ``x[b+3] = [n == 3]``, ``x[b+4] = (n - 3) / 2`` if ``n >= 4``;
``x[120] = opponent's bar / 2``, ``x[121] = mover's borne-off / 15``. A position in which the
mover has borne off every checker scores :data:`WON`. Boards are 25 counts per
side from that side's own view (index 0..23 = points 1..24, 24 = bar), as in GNU Backgammon;
published point ``j`` is the mover's index ``24 - j`` (GNU Backgammon's orientation).
"""

from __future__ import annotations

import functools
import json
from importlib import resources

import numpy as np

NUM_INPUTS = 122
#: The score of a position in which the mover has borne off all 15 checkers (the game is won),
#: as GNU Backgammon's pubeval returns it.
WON = 1e8
_POINTS = np.arange(1, 25)


@functools.cache
def weights() -> dict[str, np.ndarray]:
    """``{"race": (122,), "contact": (122,)}`` from the package's data file (read-only)."""
    text = resources.files("spieltisch.agents").joinpath("data/pubeval.json").read_text()
    data = json.loads(text)
    out = {}
    for kind in ("race", "contact"):
        w = np.asarray(data[kind], dtype=np.float64)
        if w.shape != (NUM_INPUTS,):
            raise ValueError(f"pubeval.json: '{kind}' needs {NUM_INPUTS} weights, got {w.shape}")
        w.flags.writeable = False
        out[kind] = w
    return out


def inputs(mover: np.ndarray, opponent: np.ndarray) -> np.ndarray:
    """The 122 pubeval inputs of positions: ``mover`` and ``opponent`` are (..., 25) counts."""
    mover = np.asarray(mover)
    opponent = np.asarray(opponent)
    n = mover[..., 24 - _POINTS]  # the mover's checkers on published points 1..24
    o = opponent[..., _POINTS - 1]  # the opponent's checkers on the same points
    x = np.zeros((*mover.shape[:-1], NUM_INPUTS))
    x[..., 0:120:5] = o == 1
    x[..., 1:120:5] = n == 1
    x[..., 2:120:5] = n >= 2
    x[..., 3:120:5] = n == 3
    x[..., 4:120:5] = np.where(n >= 4, (n - 3) / 2, 0.0)
    x[..., 120] = opponent[..., 24] / 2
    x[..., 121] = (15 - mover.sum(axis=-1)) / 15
    return x


def is_race(mover: np.ndarray, opponent: np.ndarray) -> np.ndarray:
    """True where no checker of either side still has to pass one of the other's."""
    mover = np.asarray(mover)
    opponent = np.asarray(opponent)
    # Highest occupied point (1..25 with the bar, 0 if none) from each side's own view; a
    # mover's point p is the opponent's point 25 - p, so they meet iff the sum reaches 25.
    top_mover = np.where(mover > 0, np.arange(1, 26), 0).max(axis=-1)
    top_opponent = np.where(opponent > 0, np.arange(1, 26), 0).max(axis=-1)
    return top_mover + top_opponent < 25


def score(
    mover: np.ndarray, opponent: np.ndarray, race: bool | np.ndarray | None = None
) -> np.ndarray:
    """pubeval's score of positions for the player who has just moved (higher is better).

    ``race`` chooses the weights; by default each position's own :func:`is_race`. A pubeval
    *player* passes the class of the position before its move for all candidate plays, as GNU
    Backgammon's ``pub_best_move`` does (see :func:`best_play`).
    """
    w = weights()
    x = inputs(mover, opponent)
    if race is None:
        race = is_race(mover, opponent)
    linear = np.where(race, x @ w["race"], x @ w["contact"])
    return np.where(np.asarray(mover).sum(axis=-1) == 0, WON, linear)


def best_play(
    before_mover: np.ndarray,
    before_opponent: np.ndarray,
    after_mover: np.ndarray,
    after_opponent: np.ndarray,
) -> int:
    """Index of the play (rows of ``after_*``) that a pubeval player chooses: the highest score,
    all plays weighed with the race or contact weights of the position before the move (so
    that a play breaking contact is not judged by the other weight vector); the first of equal
    scores."""
    return int(np.argmax(play_scores(before_mover, before_opponent, after_mover, after_opponent)))


def play_scores(
    before_mover: np.ndarray,
    before_opponent: np.ndarray,
    after_mover: np.ndarray,
    after_opponent: np.ndarray,
) -> np.ndarray:
    """The scores :func:`best_play` chooses by: every play (rows of ``after_*``) scored with
    the race or contact weights of the position before the move."""
    race = bool(is_race(before_mover, before_opponent))
    return score(after_mover, after_opponent, race=race)
