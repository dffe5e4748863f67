"""``human``: a person choosing moves in the terminal.

The board is printed by ``spieltisch play`` after every move (in HiLo from the human's own view);
the agent lists the legal moves, each under a *label* that names it on the board, and reads one.
A label never changes while the position stays the same, and no list position is asked for, so
typing what the board shows plays that move:

* Kalaha: the pit number, ``0 .. pits-1`` from the player's own left (the rules' numbering);
  the player's row of the diagram is shown again with the labels of the legal pits under it.
* Hus: row then column from the player's own left, ``10 .. 17`` (row 1, the outer row) and
  ``20 .. 27`` (row 2), shown under the player's rows the same way (``2 4`` also works).
* Backgammon: the move as the board numbers the points (the diagram is drawn from seat 0's side,
  so seat 1's moves are named that way too: ``19/22`` for what seat 1 calls ``6/3``); ``bar/..``,
  ``../off``, ``pass``, ``double``, ``take``, ``drop``.
* HiLo: the slot as ``T1 .. T6`` (top row) and ``B1 .. B6`` (bottom row), after a verb: ``swap
  T3``, ``discard B2`` (discard the drawn card and reveal B2), ``reveal T1``, the wizard's ``own
  T2`` and ``seat 1 B4`` (another seat's card); ``take``, ``draw``. The slot alone (``T3``) is
  enough when only one move uses it.

Case and spaces do not matter; the action number (``a12``) is accepted too; anything else is
asked again. ``q`` or end of input (Ctrl-D) raises :class:`HumanQuit`.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
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


def move_label(game: str, action: int, seat: int, options: dict[str, Any]) -> str:
    """The label of ``action`` for the player in ``seat``: what the board calls it (see the
    module docstring). Two backgammon moves can share one (``3/off`` with either die):
    :func:`move_labels` tells them apart."""
    if game == "kalaha":
        return str(action)
    if game == "hus":
        row, col = (1, action) if action < 8 else (2, action - 8)
        return f"{row}{col}"
    if game == "backgammon":
        from spieltisch.envs.backgammon.engine import describe_action

        name = describe_action(action)
        # the diagram numbers the points from seat 0's side; seat 1's point p is its 25 - p
        return name if seat == 0 else re.sub(r"\d+", lambda m: str(25 - int(m[0])), name)
    if game == "hilo":
        return _hilo_label(action, seat, int(options.get("num_players", 2)))
    return str(action)


def _hilo_label(action: int, seat: int, num_players: int) -> str:
    from spieltisch.envs.hilo import rules as R

    if action == R.A_TAKE:
        return "take"
    if action == R.A_DRAW:
        return "draw"
    verbs = ((R.A_SWAP, "swap"), (R.A_DISCARD_REVEAL, "discard"), (R.A_REVEAL, "reveal"),
             (R.A_WIZ_OWN, "own"))  # fmt: skip
    for base, verb in verbs:
        if base <= action < base + R.SLOTS:
            return f"{verb} {_slot_label(action - base)}"
    k = action - R.A_WIZ_OTHER  # the slot of the (k // SLOTS + 1)-th player to the left
    other = (seat + 1 + k // R.SLOTS) % num_players
    return f"seat {other} {_slot_label(k % R.SLOTS)}"


def _slot_label(slot: int) -> str:
    from spieltisch.envs.hilo import rules as R

    row, col = divmod(slot, R.COLUMNS)
    return f"{'TB'[row]}{col + 1}"


def _key(text: str) -> str:
    """What a typed label is compared by: lower case, without spaces and commas."""
    return re.sub(r"[\s,]+", "", text.lower())


def move_labels(
    game: str, legal: Sequence[int], seat: int, options: dict[str, Any]
) -> dict[int, str]:
    """The label of each legal action (:func:`move_label`), all different: backgammon moves
    that share one get the die they use (``3/off with 5``)."""
    labels = {a: move_label(game, a, seat, options) for a in legal}
    counts: dict[str, int] = {}
    for label in labels.values():
        counts[_key(label)] = counts.get(_key(label), 0) + 1
    for a, label in labels.items():
        if counts[_key(label)] > 1:  # backgammon actions are (point - 1) * 6 + die - 1
            labels[a] = f"{label} with {a % 6 + 1}" if game == "backgammon" else f"{label} a{a}"
    return labels


def _seat_of(state: Any | None) -> int:
    if isinstance(state, InformationSet):
        return state.seat
    return int(getattr(state, "current_player", 0))


def labelled_rows(game: str, state: Any, seat: int, labels: dict[int, str]) -> list[str]:
    """The player's rows of the game's text diagram (``str(state)``), each with the labels of
    its legal pits right under the pits (Kalaha and Hus; empty for the other games, or when
    the diagram has no such row)."""
    if game == "kalaha":
        pits = range(state.game.pits)
        rows = [(f"seat {seat}:", pits if seat == 0 else pits[::-1])]
    elif game == "hus":  # the diagram's rows by action: row 1 is 0..7, row 2 is 8..15
        if seat == 0:
            rows = [("seat 0 row 2 |", range(8, 16)), ("seat 0 row 1 |", range(8))]
        else:
            rows = [("seat 1 row 1 |", range(7, -1, -1)), ("seat 1 row 2 |", range(15, 7, -1))]
    else:
        return []
    diagram = str(state).splitlines()
    out = []
    for prefix, actions in rows:
        line = next((row for row in diagram if row.startswith(prefix)), None)
        cells = None if line is None else list(re.finditer(r"\d+", line[len(prefix) :]))
        if cells is None or len(cells) != len(actions):
            return []
        marks = [" "] * len(line)
        for cell, action in zip(cells, actions, strict=True):
            label = labels.get(action, "")
            end = len(prefix) + cell.end()
            marks[end - len(label) : end] = label
        tail = prefix[len(prefix.rstrip(":|").rstrip()) :]  # ":" or " |"
        out += [line, ("labels" + tail).rjust(len(prefix)) + "".join(marks[len(prefix) :])]
    return [row.rstrip() for row in out]


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
        seat = _seat_of(state)
        labels = move_labels(self.game, legal, seat, self.options)
        by_key = {_key(label): a for a, label in labels.items()}
        if self.game == "hilo":  # a slot alone ("T3") where only one legal move uses it
            slots: dict[str, list[int]] = {}
            for a, label in labels.items():
                slots.setdefault(_key(label.split()[-1]), []).append(a)
            by_key.update({k: v[0] for k, v in slots.items() if len(v) == 1 and k not in by_key})
        if self.game == "hilo" and isinstance(state, InformationSet):
            # the board shown may be the public one (two people, or --quiet): the card drawn
            # is seen by the drawer alone, so say it here
            seen = state.view()
            if seen.held is not None:
                self.output_fn(f"You hold {seen.held} (from the {seen.held_from} pile)")
        self.output_fn("Your move: type its label (q to quit)")
        if state is not None and not isinstance(state, InformationSet):
            for row in labelled_rows(self.game, state, seat, labels):
                self.output_fn(row)
        width = max(len(label) for label in labels.values())
        for a in legal:
            name = action_name(self.game, a, state, self.options)
            if self.game == "backgammon" and name != labels[a]:
                name = f"your {name}"  # seat 1's own numbering of the move
            text = labels[a] if name == labels[a] else f"{labels[a]:<{width}}  {name}"
            self.output_fn(f"  {text}" if labels[a] == str(a) else f"  {text}  (a{a})")
        while True:
            try:
                text = self.input_fn("move: ").strip()
            except EOFError as err:  # (Ctrl-D echoes no newline: end the prompt's line)
                self.output_fn("")
                raise HumanQuit("input ended") from err
            if text.lower() in ("q", "quit", "exit"):
                raise HumanQuit("quit")
            key = _key(text)
            if key in by_key:
                return by_key[key]
            if re.fullmatch(r"a\d+", key) and int(key[1:]) in legal:
                return int(key[1:])
            self.output_fn(
                f"not a legal move: {text!r}; type one of the labels listed (or q to quit)"
            )


def human_factory(game: str) -> Callable[[dict[str, Any], int | None], Agent]:
    def factory(options: dict[str, Any], seed: int | None) -> Agent:
        return HumanAgent(game, options)

    return factory
