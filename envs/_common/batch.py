"""Checks and helpers shared by the batched engines (compiled, so they cost little per game)."""

from __future__ import annotations

import numba
import numpy as np
from spieltisch.envs._common.errors import ActionTypeError, IllegalActionError


@numba.njit(cache=True, nogil=True)
def _first_bad_action(actions, legal_mask, terminal):
    """Index of the first unfinished game whose action is not legal, or -1."""
    num_actions = legal_mask.shape[1]
    for g in range(actions.shape[0]):
        if terminal[g]:
            continue
        a = actions[g]
        if a < 0 or a >= num_actions or legal_mask[g, a] == 0:
            return g
    return -1


def check_batch_actions(
    actions: object, legal_mask: np.ndarray, terminal: np.ndarray
) -> np.ndarray:
    """``actions`` as an int64 array of one action per game, checked against ``legal_mask``.

    Finished games (``terminal``) may carry any value. Raises naming the first bad game; the
    caller has changed nothing yet.
    """
    num_games, num_actions = legal_mask.shape
    arr = actions if isinstance(actions, np.ndarray) else np.asarray(actions)
    if arr.shape != (num_games,):
        raise ActionTypeError(
            f"expected one action per game, shape ({num_games},), got {arr.shape}"
        )
    if not np.issubdtype(arr.dtype, np.integer):
        raise ActionTypeError(f"actions must be integers, got dtype {arr.dtype}")
    arr = np.ascontiguousarray(arr, dtype=np.int64)
    g = _first_bad_action(arr, legal_mask, terminal)
    if g >= 0:
        a = int(arr[g])
        if not 0 <= a < num_actions:
            raise IllegalActionError(f"game {g}: action {a} is out of range 0..{num_actions - 1}")
        legal = np.flatnonzero(legal_mask[g]).tolist()
        raise IllegalActionError(f"game {g}: action {a} is illegal; legal actions: {legal}")
    return arr


@numba.njit(cache=True, nogil=True)
def _pick_legal(legal_mask, uniforms, out):
    for g in range(legal_mask.shape[0]):
        count = 0
        for a in range(legal_mask.shape[1]):
            count += legal_mask[g, a] != 0
        out[g] = 0
        if count == 0:
            continue
        k = min(int(uniforms[g] * count), count - 1)
        for a in range(legal_mask.shape[1]):
            if legal_mask[g, a] != 0:
                if k == 0:
                    out[g] = a
                    break
                k -= 1


def sample_legal_actions(legal_mask: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """One uniformly random legal action per row of ``legal_mask`` (0 for rows with none)."""
    out = np.empty(legal_mask.shape[0], dtype=np.int64)
    _pick_legal(legal_mask, rng.random(legal_mask.shape[0]), out)
    return out
