"""Small helpers shared by the engines: checking an action's type and range, legal-action tables,
reading stone counts of a position."""

from __future__ import annotations

import functools
import numbers
from collections.abc import Iterable

import numpy as np
from spieltisch.envs._common.errors import ActionTypeError, IllegalActionError, PositionFormatError

# Tables of legal-action tuples indexed by a bit mask are built for up to this many actions.
_MAX_TABLE_BITS = 16

#: most stones a Kalaha or Hus position may hold in all: the boards are int32, and moves only
#: move stones, so no count of such a position can overflow
MAX_STONES = 2**31 - 1


def is_count(text: str) -> bool:
    """Whether ``text`` is a whole number written in ASCII digits (``str.isdigit`` is true for
    digits such as ``'²'`` too, which ``int`` cannot read)."""
    return text.isascii() and text.isdigit()


def check_stones(counts: Iterable[int]) -> None:
    """Raise :class:`PositionFormatError` if ``counts`` hold more than :data:`MAX_STONES`."""
    total = sum(counts)
    if total > MAX_STONES:
        raise PositionFormatError(
            f"the position holds {total} stones in all; at most {MAX_STONES} fit the board"
        )


def check_game_stones(board: Iterable[int], game_stones: int) -> None:
    """Raise :class:`PositionFormatError` if a position holds more stones than its game is
    played with: an env declares its observations in 0..``game_stones`` (a position with fewer,
    e.g. an endgame, is fine)."""
    total = int(sum(board))
    if total > game_stones:
        raise PositionFormatError(
            f"the position holds {total} stones, more than the {game_stones} this game is "
            "played with (the env's observations count at most that many)"
        )


def check_action(action: object, num_actions: int) -> int:
    """Return ``action`` as a plain int, or raise a clear error if it is not one in range.

    Accepts Python and numpy integers and 0-d / single-element integer arrays; rejects bools,
    floats, strings and anything else with :class:`ActionTypeError`.
    """
    if type(action) is int and 0 <= action < num_actions:  # fast path for the common case
        return action
    if isinstance(action, np.ndarray):
        if action.size != 1 or not np.issubdtype(action.dtype, np.integer):
            raise ActionTypeError(
                f"action must be a single integer, got an array of shape {action.shape} "
                f"and dtype {action.dtype}"
            )
        action = action.reshape(()).item()
    if isinstance(action, bool | np.bool_) or not isinstance(action, numbers.Integral):
        raise ActionTypeError(
            f"action must be an integer in 0..{num_actions - 1}, got {action!r} "
            f"of type {type(action).__name__}"
        )
    action = int(action)
    if not 0 <= action < num_actions:
        raise IllegalActionError(
            f"action {action} is out of range: actions are 0..{num_actions - 1}"
        )
    return action


class _ActionsOfBits:
    """Legal-action tuples computed from bit masks, for action counts too large for a table."""

    def __init__(self, num_actions: int) -> None:
        self.num_actions = num_actions

    def __getitem__(self, bits: int) -> tuple[int, ...]:
        return tuple(i for i in range(self.num_actions) if bits >> i & 1)


@functools.cache  # an immutable table, built once per size (65536 tuples for Hus)
def action_tuples(num_actions: int) -> tuple[tuple[int, ...], ...] | _ActionsOfBits:
    """``action_tuples(n)[mask]`` is the tuple of the set bits of ``mask`` (a precomputed table
    for up to 16 actions, computed on demand above that)."""
    if num_actions > _MAX_TABLE_BITS:
        return _ActionsOfBits(num_actions)
    return tuple(
        tuple(i for i in range(num_actions) if mask >> i & 1) for mask in range(1 << num_actions)
    )


@functools.cache  # read-only: callers copy the row they need
def mask_rows(num_actions: int) -> np.ndarray | None:
    """Row ``m`` is the int8 legal-action mask of bit mask ``m`` (None if too many actions)."""
    if num_actions > _MAX_TABLE_BITS:
        return None
    masks = np.arange(1 << num_actions)[:, None] >> np.arange(num_actions) & 1
    table = masks.astype(np.int8)
    table.flags.writeable = False
    return table


def mask_from_bits(bits: int, num_actions: int) -> np.ndarray:
    """The int8 mask (1 = legal) of the bit mask ``bits`` over ``num_actions`` actions."""
    table = mask_rows(num_actions)
    if table is not None:
        return table[bits].copy()
    return ((bits >> np.arange(num_actions)) & 1).astype(np.int8)
