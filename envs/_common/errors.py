"""Exceptions shared by every game engine and environment.

Each subclasses the built-in exception a caller would expect (``ValueError`` or ``TypeError``), so
``except ValueError`` keeps working, while the specific class names the problem.
"""


class IllegalActionError(ValueError):
    """An action that is not legal in the current state (the state is left unchanged)."""


class ActionTypeError(TypeError):
    """An action of the wrong type (a float, a string, an array of several values, ...)."""


class PositionFormatError(ValueError):
    """A position string that cannot be read; the message names the offending part."""


class GameOverError(IllegalActionError):
    """An attempt to move in a finished game."""
