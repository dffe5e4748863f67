"""``human``: a person choosing moves in the terminal.

The board is printed by ``spieltisch play`` after every move (in HiLo from the human's own view);
the agent lists the legal moves with readable names and reads one from the input. Input may be
the move's number in the list or the action number (``a12``); anything else is asked again.
End of input (Ctrl-D) raises :class:`HumanQuit`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
from spieltisch.agents.base import Agent, InformationSet, legal_actions_of


class HumanQuit(Exception):
    """The person ended the input."""


def action_name(game: str, action: int, state: Any | None, options: dict[str, Any]) -> str:
    """A readable name of ``action`` in ``game``."""
    if game == "backgammon":
        from spieltisch.envs.backgammon.engine import describe_action

        return describe_action(action)
    if game == "hilo":
        engine = state._stand_in.game if isinstance(state, InformationSet) else None
        if engine is None:
            from spieltisch.envs.hilo.engine import HiLoGame

            engine = HiLoGame(num_players=int(options.get("num_players", 2)))
        return engine.action_name(action)
    if game == "hus":
        row, col = (1, action) if action < 8 else (2, action - 8)
        return f"pit row {row} column {col}"
    return f"pit {action} (from your left)"


class HumanAgent(Agent):
    """Asks a person for each move (see the module docstring)."""

    name = "human"

    def __init__(
        self,
        game: str,
        options: dict[str, Any] | None = None,
        input_fn: Callable[[str], str] = input,
        output_fn: Callable[[str], None] = print,
    ) -> None:
        super().__init__(None)
        self.game = game
        self.options = dict(options or {})
        self.input_fn = input_fn
        self.output_fn = output_fn

    def act(self, observation: dict[str, np.ndarray], state: Any | None = None) -> int:
        legal = [int(a) for a in legal_actions_of(observation)]
        self.output_fn("Your move:")
        for i, a in enumerate(legal, 1):
            self.output_fn(f"  {i:2d}: {action_name(self.game, a, state, self.options)}  (a{a})")
        while True:
            try:
                text = self.input_fn(f"move [1-{len(legal)}]: ").strip()
            except EOFError as err:
                raise HumanQuit("input ended") from err
            if text.lower() in ("q", "quit", "exit"):
                raise HumanQuit("quit")
            try:
                if text.lower().startswith("a"):
                    action = int(text[1:])
                    if action in legal:
                        return action
                else:
                    index = int(text)
                    if 1 <= index <= len(legal):
                        return legal[index - 1]
            except ValueError:
                pass
            self.output_fn(
                f"not a legal move: {text!r}; type a number 1-{len(legal)} (or q to quit)"
            )


def human_factory(game: str) -> Callable[[dict[str, Any], int | None], Agent]:
    def factory(options: dict[str, Any], seed: int | None) -> Agent:
        return HumanAgent(game, options)

    return factory
