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

For cube decisions pubeval also gives cubeless probabilities (:func:`probabilities`) of the
position after its play: the frequencies of the six results of the mover (lose a backgammon, a
gammon, a single game; win one, a gammon, a backgammon) among the positions of pubeval's own
self-play games with a similar value of one number (:func:`cube_feature`; the same class of
position, race or contact, and the same of 40 quantile bins), counted by
``release/fit_pubeval_cube.py`` (data ``agents/data/pubeval_cube.json``). In contact the number
is pubeval's score; binned, not fitted, because its winning chances do not rise steadily with
the score (self-play positions of the lowest tenth of scores win about as often as the middle
ones). Its race score only ranks the plays of one roll: across positions it goes against the
result (correlation -0.2 with winning in self-play races), so in races the number is the pip
lead over the square root of the pip total (correlation 0.8).
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


#: the results of :func:`result_probabilities`, worst first: the mover loses a backgammon, a
#: gammon, a single game, wins a single game, a gammon, a backgammon
RESULTS = (
    "lose_backgammon",
    "lose_gammon",
    "lose_single",
    "win_single",
    "win_gammon",
    "win_backgammon",
)
#: a result model: per class of position, (bin edges, result frequencies per bin)
Model = dict[str, tuple[np.ndarray, np.ndarray]]


@functools.cache
def calibration() -> Model:
    """``{"race": (edges, results), "contact": (edges, results)}`` of :func:`probabilities`:
    increasing bin edges of :func:`cube_feature` (B - 1) and the result frequencies (B, 6) of
    each bin, rows summing to one, from ``agents/data/pubeval_cube.json`` (read-only)."""
    text = resources.files("spieltisch.agents").joinpath("data/pubeval_cube.json").read_text()
    data = json.loads(text)
    out = {}
    for kind in ("race", "contact"):
        edges = np.asarray(data[kind]["edges"], dtype=np.float64)
        results = np.asarray(data[kind]["results"], dtype=np.float64)
        if (
            results.ndim != 2
            or results.shape != (edges.size + 1, len(RESULTS))
            or np.any(np.diff(edges) <= 0)
            or np.any(results < 0)
            or not np.allclose(results.sum(axis=1), 1.0)
        ):
            raise ValueError(
                f"pubeval_cube.json: '{kind}' needs increasing edges and one row of "
                f"{len(RESULTS)} frequencies summing to 1 per bin"
            )
        edges.flags.writeable = False
        results.flags.writeable = False
        out[kind] = (edges, results)
    return out


def cube_feature(mover: np.ndarray, opponent: np.ndarray, race: bool | np.ndarray) -> np.ndarray:
    """The number :func:`probabilities` maps to results, of positions the mover has just made
    (not won ones): in ``race`` the pip lead over the square root of the pip total, else the
    score with the contact weights."""
    mover = np.asarray(mover)
    opponent = np.asarray(opponent)
    pips_mover = mover @ np.arange(1, 26)
    pips_opponent = opponent @ np.arange(1, 26)
    lead = (pips_opponent - pips_mover) / np.sqrt(np.maximum(pips_mover + pips_opponent, 1))
    contact = inputs(mover, opponent) @ weights()["contact"]
    return np.where(race, lead, contact)


def result_probabilities(
    features: np.ndarray, race: bool | np.ndarray, model: Model | None = None
) -> np.ndarray:
    """``(..., 6)`` probabilities of the mover's results (:data:`RESULTS`) for :func:`cube_feature`
    values ``features`` of positions of the class ``race``: the frequencies of their bin in
    ``model`` (default the package's, :func:`calibration`)."""
    model = calibration() if model is None else model
    values = np.asarray(features, dtype=np.float64)
    race = np.broadcast_to(np.asarray(race, dtype=bool), values.shape)
    out = np.empty((*values.shape, len(RESULTS)))
    for kind, where in (("race", race), ("contact", ~race)):
        edges, results = model[kind]
        out[where] = results[np.searchsorted(edges, values[where], side="right")]
    return out


def probabilities(
    mover: np.ndarray,
    opponent: np.ndarray,
    race: bool | np.ndarray,
    model: Model | None = None,
) -> np.ndarray:
    """``(..., 5)`` cubeless probabilities ``(win, win gammon, win backgammon, lose gammon, lose
    backgammon)`` (gammons include backgammons; the order of the TD nets and gnubg) of the mover
    of positions it has just made, not won ones, whose position before the move was of the
    class ``race`` (:func:`cube_feature`, :func:`result_probabilities`)."""
    features = cube_feature(mover, opponent, race)
    return cubeless_of_results(result_probabilities(features, race, model))


def cubeless_of_results(results: np.ndarray) -> np.ndarray:
    """``(..., 5)`` ``(win, win gammon, win backgammon, lose gammon, lose backgammon)`` of
    ``(..., 6)`` result probabilities (:data:`RESULTS`); gammons include backgammons."""
    r = results
    return np.stack(
        [r[..., 3:].sum(-1), r[..., 4:].sum(-1), r[..., 5], r[..., :2].sum(-1), r[..., 0]], axis=-1
    )


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
