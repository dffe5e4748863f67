"""What every engine state shares: copying and pickling of a ``__slots__`` class."""

from __future__ import annotations

from typing import Any, Self


class EngineState:
    """Base of the single-game states: subclasses define ``__slots__`` and a fast ``clone()``;
    ``copy.copy``, ``copy.deepcopy`` and ``pickle`` then work through them.

    ``child(action)`` is the state after ``action``, leaving this one unchanged.
    """

    __slots__ = ()

    def clone(self) -> Self:
        raise NotImplementedError

    def apply(self, action: int) -> Any:
        raise NotImplementedError

    def child(self, action: int) -> Self:
        c = self.clone()
        c.apply(action)
        return c

    def __copy__(self) -> Self:
        return self.clone()

    def __deepcopy__(self, memo: dict) -> Self:
        return self.clone()  # the board is copied; the game parameters are immutable

    def __getstate__(self) -> dict[str, Any]:
        return {name: getattr(self, name) for name in self.__slots__}

    def __setstate__(self, state: dict[str, Any]) -> None:
        for name, value in state.items():
            setattr(self, name, value)
