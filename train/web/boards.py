"""What the page is sent of a position: each game's board as plain JSON, and its move labels.

One function per game turns the engine state into the data the page draws (``board_view``),
always from seat 0's side of the table, with seats absolute. Hidden information: HiLo's board is
the engine's ``view(viewer)`` (what that seat knows; ``viewer=None`` is what everybody knows),
so a face-down card, the draw pile's order or another player's drawn card is never in it. This
module is the only place that reads a HiLo state for the page.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np
from spieltisch.agents.human import move_labels

#: the options a request may set, per game (everything else is refused: no paths, such as
#: HiLo's ``deck``, no render or play options the server sets itself). Values are checked by the
#: engines; sizes are capped here so one request cannot ask for a huge game.
WEB_OPTIONS: dict[str, dict[str, Any]] = {
    "kalaha": {"pits": range(1, 13), "seeds": range(1, 21), "rules": ("goki", "standard")},
    "hus": {},
    "backgammon": {"cube": (True, False)},
    "hilo": {"num_players": (2, 3, 4), "final_round": (True, False)},
}  # (no random_start: the page seats its players in the order chosen, seat 0 first)


def check_web_options(game: str, options: Any) -> dict[str, Any]:
    """``options`` if every key is one the page may set for ``game`` with an allowed value;
    raises ValueError naming the problem."""
    if not isinstance(options, dict):
        raise ValueError(f"options must be an object of option: value, got {options!r}")
    allowed = WEB_OPTIONS[game]
    for key, value in options.items():
        if key not in allowed:
            raise ValueError(f"{game} has no option {key!r} here; options are {sorted(allowed)}")
        choices = allowed[key]
        # bool is an int in Python: True must not pass as pits=1, nor 1 as cube=True
        if isinstance(value, bool) != isinstance(next(iter(choices)), bool) or value not in choices:
            shown = (
                f"{choices.start}..{choices.stop - 1}" if isinstance(choices, range) else choices
            )
            raise ValueError(f"{game} option {key!r} must be one of {shown}, got {value!r}")
    return dict(options)


def board_view(game: str, state: Any, viewer: int | None = None) -> dict[str, Any]:
    """The board of ``state`` as the page draws it (see the module docstring)."""
    if game == "kalaha":
        return {
            "pits": state.game.pits,
            "rules": state.game.rules,
            "sides": [state.side(0).tolist(), state.side(1).tolist()],
            "stores": list(state.stores()),
        }
    if game == "hus":
        return {"sides": [state.pits_by_action(0).tolist(), state.pits_by_action(1).tolist()]}
    if game == "backgammon":
        return _backgammon_view(state)
    if game == "hilo":
        view = dataclasses.asdict(state.view(viewer))
        view["layouts"] = [list(row) for row in view["layouts"]]
        return view
    raise ValueError(f"unknown game {game!r}")


def _backgammon_view(state: Any) -> dict[str, Any]:
    """Points 1..24 as seat 0 numbers them; ``points[p - 1]`` > 0: seat 0's checkers, < 0:
    seat 1's (seat 1's own point ``q`` is seat 0's ``25 - q``)."""
    own, other = state.side(0), state.side(1)
    points = [int(own[p]) - int(other[23 - p]) for p in range(24)]
    value, owner = state.cube()
    return {
        "points": points,
        "bar": [int(own[24]), int(other[24])],
        "off": list(state.borne_off()),
        "dice": list(state.dice()),
        "rolled": list(state.rolled() or ()),
        "cube": {"enabled": state.game.cube, "value": value, "owner": owner},
        "pips": list(state.pip_counts()),
        "turn": state.turn,
        "phase": ("opening", "roll", "cube", "take", "move", "over")[state.phase],
        "position_id": state.position_id(),
    }


def backgammon_move_ends(action: int, seat: int) -> dict[str, Any] | None:
    """Where checker move ``action`` of ``seat`` goes, in seat 0's numbering: ``{"from": 1..24
    or "bar", "to": 1..24 or "off", "die": d}``; None for pass and cube actions."""
    from spieltisch.envs.backgammon import rules as k

    if action >= k.NUM_MOVE_ACTIONS:
        return None
    source, die = action // 6 + 1, action % 6 + 1
    dest = source - die
    if seat == 1:
        source, dest = 25 - source if source != 25 else 25, 25 - dest if dest > 0 else 0
    return {"from": "bar" if source == 25 else source, "to": dest if 0 < dest < 25 else "off",
            "die": die}  # fmt: skip


def legal_moves(game: str, mask: np.ndarray, seat: int, options: dict[str, Any]) -> list[dict]:
    """The legal actions of ``mask`` for ``seat``, each with the label the board calls it by
    (:func:`spieltisch.agents.human.move_labels`) and, in backgammon, where it goes."""
    legal = [int(a) for a in np.flatnonzero(mask)]
    labels = move_labels(game, legal, seat, options)
    moves = []
    for a in legal:
        move: dict[str, Any] = {"action": a, "label": labels[a]}
        if game == "backgammon":
            ends = backgammon_move_ends(a, seat)
            if ends is not None:
                move.update(ends)
        moves.append(move)
    return moves
