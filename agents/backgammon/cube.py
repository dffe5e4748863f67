"""Money-game cube decisions from cubeless probabilities, with Janowski's cube-life model.

Source: Rick Janowski, "Take-Points in Money Games" (1993), in the form GNU Backgammon uses it
for its 0-ply cubeful equities (``eval.c``: ``Cl2CfMoney``, ``MoneyLive``), with the glossary
statement of bkgm.com ("Janowski's formulas": ``CF = CL * (1 - x) + CE * x``) and nextgammon's
("Janowski's takepoint formula").

Inputs are the five cubeless probabilities of one player, ``(p, wg, wbg, lg, lbg)``: wins,
gammons won (backgammons included), backgammons won, gammons lost (backgammons included),
backgammons lost -- gnubg's order and the TD net's outputs. From them:

* the average value of a win and of a loss, ``W = 1 + (wg + wbg) / p`` and
  ``L = 1 + (lg + lbg) / (1 - p)`` (1 when no gammons);
* the *dead cube* (cubeless) equity ``E_dead = p W - (1 - p) L = 2 p - 1 + wg + wbg - lg - lbg``;
* the *fully live cube* equity ``E_live``, piecewise linear in ``p`` between the live take point
  ``TP = (L - 1/2) / (W + L + 1/2)`` and cash point ``CP = (L + 1) / (W + L + 1/2)``:

  ======================  =========================================================
  cube centred            ``(0, -L)``, ``(TP, -1)``, ``(CP, +1)``, ``(1, W)``
  cube owned by me        ``(0, -L)``, ``(CP, +1)``, ``(1, W)``
  cube owned by opponent  ``(0, -L)``, ``(TP, -1)``, ``(1, W)``
  ======================  =========================================================

* the cubeful equity (per unit of the cube) ``E = x E_live + (1 - x) E_dead``, with the *cube
  life* ``x`` in ``[0, 1]``: 0 a dead cube (nobody can use it later), 1 a fully efficient one
  (the game jumps to the cash and take points). :data:`DEFAULT_CUBE_LIFE` = 0.68 (Janowski's
  typical values lie in 0.55..0.8; gnubg uses about 2/3).

Cube decisions of the player on roll with cube value ``c`` (equities from its view, in points):

* no double ``ND = c E(owner as now)``; double/take ``DT = 2 c E(opponent owns)``; double/pass
  ``DP = +c``;
* **double** iff ``min(DT, DP) > ND`` (the opponent picks the smaller; "too good" positions,
  where ``ND >= DP``, play on);
* **take** iff the taker's equity after taking, ``2 c E_taker(taker owns)`` from the taker's own
  probabilities, is ``> -c`` (better than passing).

With this model the take point in cubeless winning chances is exactly Janowski's
``TP(x) = (L - 1/2) / (W + L + x / 2)``: 25 % for a dead cube and 20 % for a live one without
gammons (:func:`take_point`), and the opponent's take point gives the doubler's cash point
``CP(x) = 1 - (W - 1/2) / (W + L + x / 2)`` (:func:`cash_point`).

The probabilities of a position *before the roll* come from the agents
(:meth:`spieltisch.agents.backgammon.baselines.BackgammonPlayAgent.position_probabilities`);
:func:`roll_average` averages an afterstate evaluator over the 21 rolls for nets that only
value afterstates. Limits: money play only (no match score, no Jacoby rule, which the env does
not play either), and the cap ``max_cube`` is ignored (the cube stays as live after a double to
the cap, where the env forbids redoubling).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, NamedTuple

import numpy as np
from spieltisch.envs.backgammon import rules as k

#: Janowski's cube life ``x`` the agents use by default (0 dead, 1 fully live)
DEFAULT_CUBE_LIFE = 0.68
#: cube ownership, from the view of the player whose probabilities are given
CENTRED, MINE, THEIRS = "centred", "mine", "theirs"
OWNERS = (CENTRED, MINE, THEIRS)
#: the cube policies of agent names (``cube=janowski`` or ``cube=never``)
POLICIES = ("janowski", "never")

_EPS = 1e-7


class CubeEquities(NamedTuple):
    """Cubeful equities in points of the player on roll: no double, double/take, double/pass."""

    no_double: float
    double_take: float
    double_pass: float


def flip(probs: Sequence[float]) -> tuple[float, float, float, float, float]:
    """The same probabilities from the other player's view: ``(1 - p, lg, lbg, wg, wbg)``."""
    p, wg, wbg, lg, lbg = (float(v) for v in probs)
    return 1.0 - p, lg, lbg, wg, wbg


def win_loss_values(probs: Sequence[float]) -> tuple[float, float]:
    """``(W, L)``: the average cubeless value of a win and of a loss (1 without gammons)."""
    p, wg, wbg, lg, lbg = (float(v) for v in probs)
    w = 1.0 + (wg + wbg) / p if p > _EPS else 1.0
    loss = 1.0 + (lg + lbg) / (1.0 - p) if p < 1.0 - _EPS else 1.0
    return w, loss


def cubeless_equity(probs: Sequence[float]) -> float:
    """Expected points per unit of the cube if nobody could double again (a dead cube)."""
    p, wg, wbg, lg, lbg = (float(v) for v in probs)
    return 2.0 * p - 1.0 + wg + wbg - lg - lbg


def take_point(w: float, loss: float, cube_life: float = DEFAULT_CUBE_LIFE) -> float:
    """Janowski's take point: the least winning chance at which taking is right,
    ``(L - 1/2) / (W + L + x / 2)``, for a taker whose wins are worth ``w`` and losses ``loss``
    on average."""
    _check_life(cube_life)
    return (loss - 0.5) / (w + loss + 0.5 * cube_life)


def cash_point(w: float, loss: float, cube_life: float = DEFAULT_CUBE_LIFE) -> float:
    """The doubler's cash point (the opponent's take point seen from the doubler):
    ``1 - (W - 1/2) / (W + L + x / 2)``."""
    return 1.0 - take_point(loss, w, cube_life)


def live_equity(probs: Sequence[float], owner: str) -> float:
    """Cubeful equity per unit of the cube with a fully live cube (Janowski's ``x = 1``; the
    piecewise-linear table of the module docstring)."""
    _check_owner(owner)
    p = float(probs[0])
    if p <= _EPS or p >= 1.0 - _EPS:
        return cubeless_equity(probs)  # the game is decided: nothing to use the cube for
    w, loss = win_loss_values(probs)
    tp = (loss - 0.5) / (w + loss + 0.5)
    cp = (loss + 1.0) / (w + loss + 0.5)
    if owner == MINE:
        if p < cp:
            return -loss + (1.0 + loss) * p / cp
        return 1.0 + (w - 1.0) * (p - cp) / (1.0 - cp)
    if p < tp:
        return -loss + (loss - 1.0) * p / tp
    if owner == THEIRS:
        return -1.0 + (w + 1.0) * (p - tp) / (1.0 - tp)
    if p < cp:
        return -1.0 + 2.0 * (p - tp) / (cp - tp)
    return 1.0 + (w - 1.0) * (p - cp) / (1.0 - cp)


def cubeful_equity(
    probs: Sequence[float], owner: str = CENTRED, cube_life: float = DEFAULT_CUBE_LIFE
) -> float:
    """Janowski's cubeful equity per unit of the cube, ``x E_live + (1 - x) E_dead``, of the
    player whose ``probs`` they are, with the cube ``owner`` (:data:`OWNERS`, its view)."""
    _check_life(cube_life)
    return cube_life * live_equity(probs, owner) + (1.0 - cube_life) * cubeless_equity(probs)


def cube_equities(
    probs: Sequence[float],
    cube: int = 1,
    owner: str = CENTRED,
    cube_life: float = DEFAULT_CUBE_LIFE,
) -> CubeEquities:
    """No double, double/take and double/pass equities in points of the player on roll, whose
    probabilities ``probs`` are, with the cube at ``cube`` owned by ``owner`` (its view)."""
    return CubeEquities(
        cube * cubeful_equity(probs, owner, cube_life),
        2 * cube * cubeful_equity(probs, THEIRS, cube_life),
        float(cube),
    )


def should_double(
    probs: Sequence[float], owner: str = CENTRED, cube_life: float = DEFAULT_CUBE_LIFE
) -> bool:
    """Whether the player on roll (``probs`` its probabilities before rolling) doubles: the
    equity after the opponent's better answer beats playing on, ``min(DT, DP) > ND``."""
    if owner == THEIRS:
        return False
    nd, dt, dp = cube_equities(probs, 1, owner, cube_life)
    return min(dt, dp) > nd


def take_equity(
    taker_probs: Sequence[float], cube: int = 1, cube_life: float = DEFAULT_CUBE_LIFE
) -> float:
    """The doubled player's equity in points after taking a double of a cube at ``cube`` (it
    then owns the cube at ``2 cube``), from its own probabilities ``taker_probs``."""
    return 2 * cube * cubeful_equity(taker_probs, MINE, cube_life)


def should_take(taker_probs: Sequence[float], cube_life: float = DEFAULT_CUBE_LIFE) -> bool:
    """Whether the doubled player takes: its equity after taking beats passing (``-cube``)."""
    return take_equity(taker_probs, 1, cube_life) > -1.0


# --- pre-roll probabilities from an afterstate evaluator ----------------------------------------
#: the 21 distinct rolls (high die first) and their weights out of 36
ROLLS = tuple((a, b) for a in range(1, 7) for b in range(1, a + 1))
ROLL_WEIGHTS = tuple(1.0 if a == b else 2.0 for a, b in ROLLS)


def roll_average(state: Any, best_outputs: Callable[[Any], Sequence[float]]) -> np.ndarray:
    """The probabilities of the player on roll of ``state`` (a position before its roll: a cube
    decision, a pending double, or dice to roll) as the average over the 36 rolls (21 distinct)
    of ``best_outputs(rolled)``: the five probabilities, for the mover, of the play it would
    make in ``rolled`` (a copy of the position with that roll to play) -- 1-ply lookahead, the
    usual way to value a pre-roll position with an afterstate net. ``state`` is not changed."""
    base = state.clone()
    if base.phase == k.PH_CUBE:
        base.apply(k.ROLL)
    elif base.phase == k.PH_TAKE:
        base.apply(k.TAKE)
    if base.phase != k.PH_ROLL:
        raise ValueError("roll_average needs a position before the roll of the player on turn")
    total = np.zeros(5)
    for (d1, d2), weight in zip(ROLLS, ROLL_WEIGHTS, strict=True):
        rolled = base.clone()
        rolled.set_dice(d1, d2)
        total += weight * np.asarray(best_outputs(rolled), dtype=np.float64)
    return total / 36.0


def _check_owner(owner: str) -> None:
    if owner not in OWNERS:
        raise ValueError(f"owner must be one of {OWNERS}, got {owner!r}")


def _check_life(cube_life: float) -> None:
    if isinstance(cube_life, bool) or not 0.0 <= float(cube_life) <= 1.0:
        raise ValueError(f"cube_life must be a number from 0 to 1, got {cube_life!r}")
