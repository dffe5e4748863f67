"""Input features a network may read beside the observation (``PolicyArch.features``).

A feature set is a function of the mover's observation alone (so every reader of a network --
training on replayed observations, the agents, the searches' leaf evaluations -- computes the
same inputs) into a fixed number of extra inputs, computed outside the network by the game's
own kernels. They are inputs, not rules: the rules stay in the engines.

``hus_moves``: what each of the mover's 16 actions would do (:func:`~spieltisch.envs.hus.rules.
move_outcomes`: legal, stones captured / 8, wins at once, the opponent's legal actions after it /
16), 64 inputs. ``hus_moves_threats``: those, then the opponent's 64 as if it moved now (which
of the mover's stones it threatens), 128 inputs. In Hus a move's outcome comes from relay
sowing round a ring, a long computation an MLP over the counts does not learn (the raw
AlphaZero network stayed near 31% against ``alphabeta:depth=3`` from 6M to 12M positions).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numba
import numpy as np
from spieltisch.envs.hus.rules import (
    BOARD_DTYPE,
    DEFAULT_MAX_SOWN,
    MOVE_OUTCOMES_WIDTH,
    board_of_observation,
    sides_move_outcomes,
)


@numba.njit(cache=True, nogil=True)
def _hus_move_rows(obs: np.ndarray, out: np.ndarray, sides: int) -> None:
    board = np.zeros(32, dtype=BOARD_DTYPE)
    for n in range(obs.shape[0]):
        board_of_observation(obs[n], board)  # the mover is seat 0 of this board
        sides_move_outcomes(board, 0, sides, DEFAULT_MAX_SOWN, out[n])


def _hus_rows(obs: np.ndarray, sides: int) -> np.ndarray:
    obs = np.ascontiguousarray(obs, dtype=np.float32).reshape(-1, 32)
    out = np.empty((obs.shape[0], sides * MOVE_OUTCOMES_WIDTH), dtype=np.float32)
    _hus_move_rows(obs, out, sides)
    return out


def hus_moves(obs: np.ndarray) -> np.ndarray:
    """``[n, 64]`` float32 move-outcome features of ``n`` Hus observations ``[n, 32]`` (each the
    mover's, as ``hus_v0`` gives them; the sowing limit is the rules' default)."""
    return _hus_rows(obs, 1)


def hus_moves_threats(obs: np.ndarray) -> np.ndarray:
    """``[n, 128]``: :func:`hus_moves`, then the same 64 for the opponent as if it moved now
    (which of the mover's stones it threatens to capture)."""
    return _hus_rows(obs, 2)


@dataclass(frozen=True)
class FeatureSet:
    """A named feature set: the game it is for, its width, and the function computing it."""

    game: str
    width: int
    compute: Callable[[np.ndarray], np.ndarray]


#: every feature set, by the name ``PolicyArch.features`` and the ``features`` config key take
FEATURE_SETS: dict[str, FeatureSet] = {
    "hus_moves": FeatureSet("hus", MOVE_OUTCOMES_WIDTH, hus_moves),
    "hus_moves_threats": FeatureSet("hus", 2 * MOVE_OUTCOMES_WIDTH, hus_moves_threats),
}


def feature_set(name: str) -> FeatureSet:
    """The feature set called ``name``; ValueError listing the known ones otherwise."""
    try:
        return FEATURE_SETS[name]
    except (KeyError, TypeError):
        raise ValueError(
            f"unknown input features {name!r}; known: {sorted(FEATURE_SETS)} (or '' for none)"
        ) from None
