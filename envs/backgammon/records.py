"""Backgammon game records that GNU Backgammon can import: the Jellyfish ``.mat`` match text
(required) and SGF (``GM[6]``), written from the engine's actions and read back.

Quick use::

    from spieltisch.envs.backgammon.records import mat_from_env_moves, parse_mat

    # a game played on spieltisch.envs.make("backgammon", **options), reset with seed 7
    text = mat_from_env_moves({"cube": True}, 7, None, [{"seat": 0, "action": 75}, ...])
    [record] = parse_mat(text)
    state, actions = record.replay()        # the final position, on the engine

API
---
* :func:`record_from_actions` ``(game, actions, dice, start=None, names=...) -> GameRecord``:
  replays env actions (ints, or ``(seat, action)`` pairs whose seat is checked) on a fresh
  engine state, resolving each chance node with the next entry of ``dice``: one roll per chance
  node, as ``state.rolled()`` reports it right after the roll (the opening roll as seat 0's die,
  seat 1's die). Extra rolls at the end are ignored (e.g. the env's roll for a turn not yet
  played). A turn still being played when the actions end is left out: a record holds whole
  turns (and a pending double).
* :func:`mat_from_env_moves` ``(options, seed, start_position, moves, *, names=...) -> str``
  (for the web server) and :func:`record_from_env_moves` (the same, as a :class:`GameRecord`):
  ``moves`` is a list of ``{"seat": int, "action": int}`` in env order for a game played on
  ``spieltisch.envs.make("backgammon", **options)`` reset with ``seed`` (and
  ``options={"position": start_position}`` when it is not None). The env is replayed with the
  same seed to recover the dice (the env rolls them from its seeded generator), checking each
  seat and action on the way; a bad move raises ValueError naming its index.
* :func:`game_to_mat` ``(moves, dice, ...) -> str``: :func:`record_from_actions` then
  :meth:`GameRecord.to_mat` in one call.
* :class:`GameRecord`: ``entries`` (:class:`Entry`: a move with its dice, a double, take, drop,
  or the win), player names, the cube rules; :meth:`~GameRecord.to_mat`,
  :meth:`~GameRecord.to_sgf`, :meth:`~GameRecord.replay` (play the record on the engine: the
  final state and the env actions). :func:`records_to_mat` writes several games as one money
  session.
* :func:`parse_mat`, :func:`parse_sgf` ``(text) -> list[GameRecord]``: read the subset written
  here (and the usual hand-made variants: ``24/13`` for one checker's two steps, ``13/7(2)``,
  ``*`` marks, ``Double``/``Take``/``Drop``); errors are :class:`RecordFormatError` (a
  ValueError) naming the line.

The ``.mat`` format
-------------------
The text match format of Jellyfish, GNU Backgammon's ``export match mat`` and ``import mat``;
not formally specified (the GNU Backgammon manual says so). We write what gnubg's exporter
writes and its importer reads (gnubg ``export.c`` ``ExportGameJF``, ``import.c`` ``ImportMat``)::

    ; [Player 1 "player_0"]            optional tags (eXtreme Gammon's list, bkgm.com rgb
    ; [Player 2 "player_1"]            archive "Extra elements in a MAT file"): gnubg skips
    ; [Variation "Backgammon"]         every line before the "point match" line
    ; [Jacoby "Off"]
    ; [CubeLimit "1"]                  1: played without the cube, else the highest cube

     0 point match                     0: a money session (the engine plays money games)

     Game 1
     player_0 : 0                   player_1 : 0
      1)                             52: 13/8 13/11
      2) 43: 24/20 13/10             61: 13/7* 8/7
      3) 51: bar/20 6/5               Doubles => 2
      4)  Takes                      64: 24/18 18/14
      ...
                                      Wins 1 point

Seat 0 is the left column (gnubg's player 0, ``W`` in SGF), seat 1 the right one. A move is
the dice (high die first) and each checker step of the play as the engine applied it, from
the mover's own point numbering (24 .. 1, ``bar``, ``off``; ``*`` marks a hit): the engine's
:func:`~spieltisch.envs.backgammon.engine.describe_action`. A roll that cannot be played is the
dice alone (``52:``). Doubles and takes are ``Doubles => V`` and ``Takes`` in the player's column,
a refused double ``Drops``; the game ends with ``Wins N point(s)`` (win type x cube) in the
winner's column. A game resigned (or forfeited) ends the same way before the board is over,
N being the cube's value (a single game: ``record_from_actions(..., resigned=seat)``), as gnubg's
exporter writes it; its importer reads a win before the end as the loser's resignation (of a
single game, a gammon or a backgammon: N / cube), and so does :meth:`GameRecord.replay`, which
refuses any other N. No blank line inside a game (gnubg's importer stops at one). Only the standard
start (before the opening roll) can be written; a record from another start raises ValueError.

SGF: FF[4] GM[6] as GNU Backgammon saves it (red-bean.com/sgf/backgammon.html, gnubg
``sgf.c``): ``W``/``B`` for seat 0/1, ``W[52mhmk]`` = the dice and from/to letters (seat 0's
point p is ``a`` + p - 1, seat 1's is ``x`` - (p - 1); ``y`` the bar, ``z`` off),
``double``/``take``/``drop``; ``RU[NoCube]`` without the cube, ``RE[W+2]`` the result
(``RE[W+1R]``: black resigned), and
``MI[cubelimit:N]`` a cube limit other than 64 (our own value; gnubg skips it).

GNU Backgammon itself is not installed here: the ``gnubg-nn`` package (``import gnubg_nn``)
is only gnubg's neural net and move generator, with no reader for ``.mat``, SGF or match IDs.
So the tests check the files against a sample written from the format's descriptions
(``tests/data/backgammon_sample.mat``) and by reading our own files back and replaying them on
the engine; position IDs are checked against ``gnubg_nn.position_id`` (also the position half of
``BackgammonState.gnubg_id()``, in ``tests/test_backgammon_records.py``).
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from spieltisch.envs._common.errors import IllegalActionError
from spieltisch.envs.backgammon import rules as k
from spieltisch.envs.backgammon.engine import BackgammonGame, BackgammonState, describe_action
from spieltisch.envs.backgammon.notation import START_POSITION_ID

__all__ = [
    "Entry",
    "GameRecord",
    "RecordFormatError",
    "game_to_mat",
    "mat_from_env_moves",
    "parse_mat",
    "parse_sgf",
    "record_from_actions",
    "record_from_env_moves",
    "records_to_mat",
]

KINDS = ("move", "double", "take", "drop", "win")
_DEFAULT_NAMES = ("player_0", "player_1")
#: column where the right-hand player's entries start (gnubg: "%3d) %-27s ")
_RIGHT = 33


class RecordFormatError(ValueError):
    """A game record (``.mat`` or SGF) that cannot be read or replayed; names the line."""


@dataclass(frozen=True)
class Entry:
    """One entry of a game record, in the column of ``seat``.

    ``kind``: ``"move"`` (``dice`` high die first, ``move`` the checker steps from the mover's
    view, e.g. ``"13/8 6/5*"``, empty when the roll cannot be played), ``"double"`` (``value``
    the cube after the take), ``"take"``, ``"drop"`` or ``"win"`` (``value`` the points won;
    ``resigned``: the other seat resigned, SGF's ``RE[W+1R]``; a ``.mat`` file does not say so,
    and a win entry before the game is over replays as a resignation either way). ``line``:
    the ``.mat`` line the entry was read from (None otherwise; not compared).
    """

    seat: int
    kind: str
    dice: tuple[int, int] | None = None
    move: str = ""
    value: int = 0
    resigned: bool = False
    line: int | None = field(default=None, compare=False)

    def __post_init__(self) -> None:
        if self.seat not in (0, 1) or isinstance(self.seat, bool):
            raise ValueError(f"an entry's seat is 0 or 1, got {self.seat!r}")
        if self.kind not in KINDS:
            raise ValueError(f"an entry's kind is one of {KINDS}, got {self.kind!r}")
        if (self.kind == "move") != (self.dice is not None):
            raise ValueError("a move entry has dice, and only a move entry")
        if self.resigned and self.kind != "win":
            raise ValueError("only a win entry can be a resignation")

    def steps(self) -> list[tuple[int, int]]:
        """The checker steps of a move as ``(from, to)`` from the mover's view: 25 = the bar,
        0 = off (``24/18/13`` and ``13/7(2)`` give two steps each)."""
        return _parse_move(self.move)


@dataclass(frozen=True)
class GameRecord:
    """One backgammon game as a record: its entries in order, the players' names, the cube
    rules (``cube``, ``max_cube`` as in :class:`BackgammonGame`), the score before the game
    (sessions read from a ``.mat``), and the start: None for the standard start before the
    opening roll, else the engine notation of another start (such a record cannot be written
    as ``.mat`` or SGF)."""

    entries: tuple[Entry, ...]
    names: tuple[str, str] = _DEFAULT_NAMES
    cube: bool = False
    max_cube: int = 64
    score: tuple[int, int] = (0, 0)
    start: str | None = field(default=None)

    @property
    def winner(self) -> int | None:
        """The seat that won (from the ``win`` entry), None when the record has none."""
        wins = [e for e in self.entries if e.kind == "win"]
        return wins[-1].seat if wins else None

    @property
    def points(self) -> int:
        """Points the winner scored (0 when the record has no result)."""
        wins = [e for e in self.entries if e.kind == "win"]
        return wins[-1].value if wins else 0

    def game(self) -> BackgammonGame:
        """The engine game with this record's cube rules."""
        return BackgammonGame(cube=self.cube, max_cube=self.max_cube)

    def to_mat(self, tags: Mapping[str, str] | None = None) -> str:
        """This game as a ``.mat`` money session of one game (see the module docstring);
        ``tags`` adds header lines ``; [Name "value"]`` (e.g. ``{"Site": "spieltisch"}``)."""
        return records_to_mat([self], tags)

    def to_sgf(self) -> str:
        """This game in SGF (``GM[6]``, as GNU Backgammon saves a game)."""
        _check_standard_start(self)
        names = [_sgf_escape(n) for n in self.names]
        head = f"(;FF[4]GM[6]CA[UTF-8]AP[spieltisch]MI[length:0][game:0][ws:{self.score[0]}]"
        head += f"[bs:{self.score[1]}]"
        # The cube limit is ours (gnubg skips MI values it does not know); without it a game
        # with a cube past 64 did not replay, and one with a lower limit replayed with 64.
        if self.cube and self.max_cube != 64:
            head += f"[cubelimit:{self.max_cube}]"
        head += f"PW[{names[0]}]PB[{names[1]}]"
        if not self.cube:
            head += "RU[NoCube]"
        if self.winner is not None:
            resigned = "R" if [e for e in self.entries if e.kind == "win"][-1].resigned else ""
            head += f"RE[{'WB'[self.winner]}+{self.points}{resigned}]"
        nodes = [head]
        for e in self.entries:
            color = "WB"[e.seat]
            if e.kind == "move":
                letters = "".join(
                    _sgf_point(e.seat, a) + _sgf_point(e.seat, b) for a, b in e.steps()
                )
                nodes.append(f";{color}[{e.dice[0]}{e.dice[1]}{letters}]")
            elif e.kind != "win":
                nodes.append(f";{color}[{e.kind}]")
        return "\n".join(nodes) + ")\n"

    def replay(self, game: BackgammonGame | None = None) -> tuple[BackgammonState, list[int]]:
        """Play the record on the engine (``game`` defaults to :meth:`game`): the final state
        and the env actions that lead there (a whole play per move entry, in the engine's
        order; ``roll`` before a move where the mover could have doubled). Each play must be
        legal: the position after it must be one of the legal plays' positions. A win entry
        before the game is over is a resignation (GNU Backgammon's importer reads a ``.mat`` so):
        it must be the last entry and win 1, 2 or 3 times the cube, and the replay ends in the
        position resigned (not terminal). Raises :class:`RecordFormatError` naming the entry
        (and its ``.mat`` line) otherwise."""
        game = game or self.game()
        state = game.new_initial_state() if self.start is None else game.state_from_text(self.start)
        actions: list[int] = []
        ended = False  # a win entry was replayed: nothing may follow it
        for n, e in enumerate(self.entries, 1):
            where = f"entry {n} ({_entry_text(e).strip()!r}, seat {e.seat})"
            if e.line is not None:
                where = f"line {e.line}: {where}"
            try:
                if ended:
                    raise RecordFormatError("the game's result was given already")
                _replay_entry(state, e, actions)
            except (RecordFormatError, IllegalActionError) as err:
                raise RecordFormatError(f"{where}: {err}") from None
            ended = e.kind == "win"
        return state, actions


# --- writing ---------------------------------------------------------------------------------
def record_from_actions(
    game: BackgammonGame,
    actions: Iterable[int | tuple[int, int]],
    dice: Sequence[tuple[int, int]] | None = None,
    start: BackgammonState | None = None,
    names: Sequence[str] = _DEFAULT_NAMES,
    resigned: int | None = None,
) -> GameRecord:
    """The record of a game played with env ``actions`` from ``start`` (default: the start
    before the opening roll), the chance nodes resolved with ``dice`` (see the module
    docstring). ``actions`` are ints or ``(seat, action)`` pairs; a seat that is not the one to
    act, an illegal action, or too few rolls raise ValueError naming the action's index.
    ``resigned``: the seat that resigned (or forfeited) the unfinished game after the actions:
    the record ends with the other seat winning a single game at the cube's value (what the
    env's ``forfeit_stake`` charges); ValueError if the game is over."""
    state = game.new_initial_state() if start is None else start.clone()
    if state.game != game:
        raise ValueError(f"start is a state of {state.game}, not of {game}")
    standard = _is_standard_start(state)
    start_text = None if standard else state.to_text()
    rolls = list(dice or ())
    used = 0
    entries: list[Entry] = []
    current: tuple[int, tuple[int, int], list[str]] | None = None
    for i, item in enumerate(actions):
        seat, action = _seat_action(item, i)
        if state.is_chance_node():
            if used >= len(rolls):
                raise ValueError(f"action {i}: the dice are due but only {len(rolls)} rolls given")
            d = rolls[used]
            used += 1
            if not (isinstance(d, tuple | list) and len(d) == 2):
                raise ValueError(f"roll {used - 1} must be two dice, got {d!r}")
            try:
                state.set_dice(*(int(x) for x in d))
            except (IllegalActionError, TypeError) as err:
                raise ValueError(f"roll {used - 1} {tuple(d)!r}: {err}") from None
        if state.is_terminal():
            raise ValueError(f"action {i}: the game is already over")
        if seat is not None and seat != state.current_player:
            raise ValueError(
                f"action {i} is seat {seat}'s, but seat {state.current_player} is to act"
            )
        player = state.current_player
        if state.phase == k.PH_MOVE:
            if current is None:
                current = (player, _roll_of(state), [])
            if 0 <= action < k.NUM_MOVE_ACTIONS:
                current[2].append(_step_text(state, action))
            turns = state.num_turns()
            _apply(state, action, i)
            if state.num_turns() != turns:  # the turn (or the game) is over
                entries.append(Entry(current[0], "move", current[1], " ".join(current[2])))
                current = None
        else:
            if action == k.DOUBLE:
                entries.append(Entry(player, "double", value=2 * state.cube()[0]))
            elif action == k.TAKE:
                entries.append(Entry(player, "take"))
            elif action == k.DROP:
                entries.append(Entry(player, "drop"))
            _apply(state, action, i)  # ROLL (no double) is not written
        if state.is_terminal():
            entries.append(Entry(int(state.winner()), "win", value=state.points()))
    if resigned is not None:
        if isinstance(resigned, bool) or resigned not in (0, 1):
            raise ValueError(f"resigned is the seat that resigned, 0 or 1, got {resigned!r}")
        if state.is_terminal():
            raise ValueError(
                f"the game is over (seat {state.winner()} won {state.points()} point(s)): "
                f"seat {resigned} cannot resign it"
            )
        entries.append(Entry(1 - resigned, "win", value=state.cube()[0], resigned=True))
    return GameRecord(
        tuple(entries),
        _clean_names(names),
        cube=game.cube,
        max_cube=game.max_cube,
        start=start_text,
    )


def records_to_mat(records: Sequence[GameRecord], tags: Mapping[str, str] | None = None) -> str:
    """Several games as one ``.mat`` money session (games numbered from 1, the running score
    in points won); the names and cube rules are the first record's."""
    if not records:
        raise ValueError("a .mat file needs at least one game")
    first = records[0]
    for r in records:
        _check_standard_start(r)
    header = {
        "Player 1": _clean_names(first.names)[0],
        "Player 2": _clean_names(first.names)[1],
        "Variation": "Backgammon",
        "Jacoby": "Off",
        "CubeLimit": str(first.max_cube if first.cube else 1),
        **(tags or {}),
    }
    lines = [f'; [{_tag_text(key)} "{_tag_text(value)}"]' for key, value in header.items()]
    lines += ["", " 0 point match", ""]
    score = [0, 0]
    for number, record in enumerate(records, 1):
        names = _clean_names(record.names)
        left = f"{names[0]} : {score[0]}"
        lines.append(f" Game {number}")
        lines.append(
            " " + left.ljust(31) + (" " if len(left) >= 31 else "") + f"{names[1]} : {score[1]}"
        )
        lines += _mat_lines(record.entries)
        lines.append("")
        if record.winner is not None:
            score[record.winner] += record.points
    return "\n".join(lines) + "\n"


def game_to_mat(
    moves: Iterable[int | tuple[int, int]],
    dice: Sequence[tuple[int, int]],
    *,
    cube: bool = False,
    max_cube: int = 64,
    start: BackgammonState | None = None,
    names: Sequence[str] = _DEFAULT_NAMES,
    tags: Mapping[str, str] | None = None,
) -> str:
    """``.mat`` text of a game: :func:`record_from_actions` on ``BackgammonGame(cube,
    max_cube)`` (or ``start``'s game), then :meth:`GameRecord.to_mat`."""
    game = start.game if start is not None else BackgammonGame(cube=cube, max_cube=max_cube)
    return record_from_actions(game, moves, dice, start=start, names=names).to_mat(tags)


def record_from_env_moves(
    options: Mapping[str, Any] | None,
    seed: int,
    start_position: str | None,
    moves: Sequence[Mapping[str, int]],
    names: Sequence[str] = _DEFAULT_NAMES,
    resigned: int | None = None,
) -> GameRecord:
    """The record of a game played on ``spieltisch.envs.make("backgammon", **options)`` reset
    with ``seed`` (and ``options={"position": start_position}`` unless None), ``moves`` being
    ``{"seat", "action"}`` dicts in env order. The env is replayed with the same seed to read
    the dice it rolled. ``resigned``: as in :func:`record_from_actions`."""
    from spieltisch.envs import make  # the env layer, imported on use

    if seed is None or isinstance(seed, bool) or not isinstance(seed, int | np.integer):
        raise ValueError(f"the seed the game was reset with is needed (an int), got {seed!r}")
    opts = {key: value for key, value in dict(options or {}).items() if key != "render_mode"}
    opts["illegal_action"] = "raise"
    env = make("backgammon", **opts)
    raw = env.unwrapped
    game: BackgammonGame = raw.game
    start = None if start_position is None else game.state_from_text(start_position)
    env.reset(
        seed=int(seed), options=None if start_position is None else {"position": start_position}
    )
    dice: list[tuple[int, int]] = []
    if start is None or start.phase != k.PH_MOVE:  # else the start came with its dice
        _note_roll(raw.state, None, dice)
    pairs: list[tuple[int, int]] = []
    for i, move in enumerate(moves):
        if not isinstance(move, Mapping) or not {"seat", "action"} <= set(move):
            raise ValueError(f"move {i} must be a dict with 'seat' and 'action', got {move!r}")
        seat, action = _seat_action((move["seat"], move["action"]), i)
        state = raw.state
        if state.is_terminal():
            raise ValueError(f"move {i}: the game is already over")
        if seat != state.current_player:
            raise ValueError(
                f"move {i} is seat {seat}'s, but seat {state.current_player} is to act"
            )
        before = (state.phase, state.num_turns())
        try:
            env.step(action)
        except (IllegalActionError, TypeError) as err:
            raise ValueError(f"move {i}: {err}") from None
        _note_roll(raw.state, before, dice)
        pairs.append((seat, action))
    return record_from_actions(game, pairs, dice, start=start, names=names, resigned=resigned)


def mat_from_env_moves(
    options: Mapping[str, Any] | None,
    seed: int,
    start_position: str | None,
    moves: Sequence[Mapping[str, int]],
    *,
    names: Sequence[str] = _DEFAULT_NAMES,
    resigned: int | None = None,
) -> str:
    """``.mat`` text of a game played in the env (arguments: :func:`record_from_env_moves`;
    ``names`` of seat 0 and seat 1, spaces and colons become ``_``; ``resigned``: the seat
    that resigned or forfeited the game, which then ends with the other's ``Wins N point(s)``
    as GNU Backgammon writes a resigned game). A game from a position other than the standard
    start raises ValueError (the format starts every game from the opening roll)."""
    return record_from_env_moves(options, seed, start_position, moves, names, resigned).to_mat()


# --- reading ---------------------------------------------------------------------------------
_TAG = re.compile(r';\s*\[\s*([^"\]]+?)\s+"([^"]*)"\s*\]')
_MATCH = re.compile(r"\s*(\d+)\s+point\s+match\b", re.IGNORECASE)
_GAME = re.compile(r"\s*Game\s+(\d+)\s*$", re.IGNORECASE)
_PLAYERS = re.compile(r"\s*([^:]+?)\s*:\s*(\d+)\s+([^:]+?)\s*:\s*(\d+)\s*$")
_NUMBER = re.compile(r"\s*\d+\)")
_STEP = r"[0-9A-Za-z]+(?:\*)?(?:/[0-9A-Za-z]+\*?)+(?:\(\d\))?\*?"
_ENTRY = re.compile(
    rf"(?P<dice>[1-6][1-6]):(?P<move>(?:[ \t]+{_STEP})*)"
    r"|(?P<double>doubles?)(?:\s*=>\s*(?P<value>\d+))?"
    r"|(?P<take>takes?|accepts?)\b"
    r"|(?P<drop>drops?|passes|pass|rejects?)\b"
    r"|(?P<win>wins?)\s+(?P<points>\d+)\s+points?(?:\s+and\s+the\s+match)?",
    re.IGNORECASE,
)


def parse_mat(text: str) -> list[GameRecord]:
    """The games of a ``.mat`` text (the subset :meth:`GameRecord.to_mat` writes; see the
    module docstring). ``cube`` is False when the ``CubeLimit`` tag is 1, else True (and
    ``max_cube`` the tag's value when it is a power of 2, else 64). Raises
    :class:`RecordFormatError` naming the line."""
    if not isinstance(text, str):
        raise RecordFormatError(f"a .mat record is text, got {type(text).__name__}")
    lines = text.removeprefix("\ufeff").splitlines()  # (eXtreme Gammon writes a BOM)
    tags: dict[str, str] = {}
    i = 0
    while i < len(lines) and not _MATCH.match(lines[i]):
        m = _TAG.match(lines[i].strip())
        if m:
            tags[m.group(1)] = m.group(2)
        i += 1
    if i == len(lines):
        raise RecordFormatError("not a .mat record: no 'N point match' line")
    length = int(_MATCH.match(lines[i]).group(1))
    if length != 0:
        raise RecordFormatError(
            f"line {i + 1}: a {length} point match; the engine plays money games (0 point match)"
        )
    limit = tags.get("CubeLimit", "64").strip()
    cube = limit != "1"
    max_cube = _cube_limit(limit)
    records = []
    i += 1
    while i < len(lines):
        if not _GAME.match(lines[i]):
            i += 1
            continue
        game_line = i + 1
        i += 1
        while i < len(lines) and not lines[i].strip():
            i += 1
        if i == len(lines):
            raise RecordFormatError(f"line {game_line}: the game has no 'NAME : SCORE' line")
        m = _PLAYERS.match(lines[i])
        if m is None:
            raise RecordFormatError(
                f"line {i + 1}: expected 'NAME : SCORE   NAME : SCORE', got {lines[i]!r}"
            )
        names = (m.group(1), m.group(3))
        score = (int(m.group(2)), int(m.group(4)))
        i += 1
        entries: list[Entry] = []
        while i < len(lines) and lines[i].strip() and not _GAME.match(lines[i]):
            if not lines[i].lstrip().startswith(";"):
                entries += _parse_mat_line(lines[i], i + 1)
            i += 1
        records.append(GameRecord(tuple(entries), names, cube, max_cube, score))
    if not records:
        raise RecordFormatError("the .mat record has no 'Game N' section")
    return records


_SGF_PROPERTY = re.compile(r"([A-Z]+)((?:\s*\[(?:\\.|[^\]\\])*\])+)", re.DOTALL)
_SGF_VALUE = re.compile(r"\[((?:\\.|[^\]\\])*)\]", re.DOTALL)


def parse_sgf(text: str) -> list[GameRecord]:
    """The games of an SGF backgammon text (``GM[6]``, the subset :meth:`GameRecord.to_sgf`
    writes: names, ``RU[NoCube]``, ``MI[cubelimit:N]``, the moves and cube actions, ``RE``).
    Hits are not recorded in SGF, so the moves come back without ``*``. Raises
    :class:`RecordFormatError`, also for a match (``MI[length:N]``, N > 0: the engine plays money
    games, as :func:`parse_mat` refuses a match)."""
    if not isinstance(text, str):
        raise RecordFormatError(f"an SGF record is text, got {type(text).__name__}")
    games = re.split(r"\(\s*;", text)[1:]
    if not games:
        raise RecordFormatError("not an SGF record: no '(;' game tree")
    records = []
    for number, body in enumerate(games, 1):
        props: dict[str, list[str]] = {}
        moves: list[tuple[int, str]] = []
        for m in _SGF_PROPERTY.finditer(body):
            name = m.group(1)
            values = [_sgf_unescape(v) for v in _SGF_VALUE.findall(m.group(2))]
            if name in ("W", "B"):
                moves.append(("WB".index(name), values[0]))
            else:
                props.setdefault(name, values)
        if props.get("GM", ["6"])[0] != "6":  # before the moves: another game's would not read
            raise RecordFormatError(
                f"game {number}: GM[{props['GM'][0]}] is not backgammon (GM[6])"
            )
        entries = [_sgf_entry(seat, value, number) for seat, value in moves]
        result = props.get("RE", [""])[0]
        m = re.fullmatch(r"([WB])\+(\d+)(R?)", result)
        if m:
            seat, points, resigned = "WB".index(m.group(1)), int(m.group(2)), bool(m.group(3))
            entries.append(Entry(seat, "win", value=points, resigned=resigned))
        names = (props.get("PW", ["player_0"])[0], props.get("PB", ["player_1"])[0])
        cube = "nocube" not in props.get("RU", [""])[0].lower()
        info = dict(v.split(":", 1) for v in props.get("MI", []) if ":" in v)
        length = info.get("length", "0").strip()
        if length.isdigit() and int(length) != 0:  # as parse_mat refuses a match
            raise RecordFormatError(
                f"game {number}: a {int(length)} point match; the engine plays money games "
                "(MI[length:0])"
            )
        max_cube = _cube_limit(info.get("cubelimit", "64"))
        score = tuple(
            int(s) if s.strip().isdigit() else 0 for s in (info.get("ws", "0"), info.get("bs", "0"))
        )
        records.append(GameRecord(tuple(entries), names, cube, max_cube if cube else 64, score))
    return records


# --- helpers ---------------------------------------------------------------------------------
def _cube_limit(text: str) -> int:
    """A record's cube limit (``.mat`` tag ``CubeLimit``, SGF ``MI[cubelimit:N]``): a power of
    2 from 2 to 2**15 as written, else 64."""
    limit = text.strip()
    if limit.isdigit() and int(limit) >= 2 and not int(limit) & (int(limit) - 1):
        return min(int(limit), 2**15)
    return 64


def _is_standard_start(state: BackgammonState) -> bool:
    return (
        state.phase == k.PH_OPENING
        and state.position_id() == START_POSITION_ID
        and state.cube() == (1, None)
    )


def _check_standard_start(record: GameRecord) -> None:
    if record.start is not None:
        raise ValueError(
            "a .mat or SGF record starts from the standard position before the opening roll; "
            f"this game started from {record.start!r}"
        )


def _seat_action(item: Any, i: int) -> tuple[int | None, int]:
    if isinstance(item, tuple | list) and len(item) == 2:
        seat, action = item
        if isinstance(seat, bool) or not isinstance(seat, int | np.integer) or seat not in (0, 1):
            raise ValueError(f"action {i}: the seat must be 0 or 1, got {seat!r}")
        seat = int(seat)
    else:
        seat, action = None, item
    if isinstance(action, bool) or not isinstance(action, int | np.integer):
        raise ValueError(f"action {i} must be an integer, got {action!r}")
    return seat, int(action)


def _apply(state: BackgammonState, action: int, i: int) -> None:
    try:
        state.apply(action)
    except IllegalActionError as err:
        raise type(err)(f"action {i}: {err}") from None


def _roll_of(state: BackgammonState) -> tuple[int, int]:
    """The mover's two dice, high die first."""
    rolled = state.rolled()
    if rolled is None:  # a start with dice left and no roll recorded
        dice = state.dice()
        rolled = (dice[0], dice[-1])
    return (max(rolled), min(rolled))


def _step_text(state: BackgammonState, action: int) -> str:
    """``describe_action``, with ``*`` when the step hits a blot."""
    src, die = action // 6 + 1, action % 6 + 1
    dest = src - die
    hit = dest > 0 and state.s[k.SIDE * (1 - state.turn) + 24 - dest] == 1
    return describe_action(action) + ("*" if hit else "")


def _note_roll(state: BackgammonState, before: tuple[int, int] | None, dice: list) -> None:
    """Append the roll the env just made, if it made one: the state is at the start of a
    move that was not already being played (same phase and same turn count before)."""
    if state.phase != k.PH_MOVE:
        return
    if before is not None and before == (k.PH_MOVE, state.num_turns()):
        return
    dice.append(state.rolled())


def _clean_names(names: Sequence[str]) -> tuple[str, str]:
    """Names as the .mat format can hold them: no spaces or colons, at most 31 characters."""
    if isinstance(names, str) or len(names) != 2:
        raise ValueError(f"names must be two strings, got {names!r}")
    out = []
    for seat, name in enumerate(names):
        name = re.sub(r"[\s:\[\]\"\\;]+", "_", str(name)).strip("_")[:31]
        out.append(name or _DEFAULT_NAMES[seat])
    return out[0], out[1]


def _tag_text(text: str) -> str:
    return re.sub(r'["\]\[\r\n]+', "'", str(text))


def _entry_text(e: Entry) -> str:
    if e.kind == "move":
        return f"{e.dice[0]}{e.dice[1]}: {e.move}".rstrip()
    if e.kind == "double":
        return f" Doubles => {e.value}" if e.value else " Doubles"
    if e.kind == "take":
        return " Takes"
    if e.kind == "drop":
        return " Drops"
    return f" Wins {e.value} point{'' if e.value == 1 else 's'}"


def _mat_lines(entries: Sequence[Entry]) -> list[str]:
    """The numbered move lines: seat 0's entries start a line, seat 1's go to its right."""

    def pad(line: str) -> str:  # at least two spaces before the right column
        return line.ljust(_RIGHT) if len(line) <= _RIGHT - 2 else line + "  "

    lines: list[str] = []
    number = 0
    left_open = False  # the last line has a left entry and no right one yet
    for e in entries:
        text = _entry_text(e)
        if e.kind == "win" and not (e.seat == 1 and left_open):
            lines.append(" " * 5 + text if e.seat == 0 else " " * _RIGHT + text)
            left_open = False
        elif e.seat == 0:
            number += 1
            lines.append(f"{number:3d}) {text}")
            left_open = True
        elif left_open:
            lines[-1] = pad(lines[-1]) + text
            left_open = False
        else:
            number += 1
            lines.append(pad(f"{number:3d}) ") + text)
    return [line.rstrip() for line in lines]


def _parse_mat_line(line: str, lineno: int) -> list[Entry]:
    m = _NUMBER.match(line)
    start = m.end() if m else 0
    found = []
    pos = start
    for e in _ENTRY.finditer(line, start):
        if line[pos : e.start()].strip():
            break
        found.append(e)
        pos = e.end()
    if line[pos:].strip():
        raise RecordFormatError(f"line {lineno}: cannot read {line[pos:].strip()!r} in {line!r}")
    entries = []
    for n, e in enumerate(found):
        if len(found) == 2:
            seat = n
        elif len(found) > 2:
            raise RecordFormatError(f"line {lineno}: more than two entries in {line!r}")
        else:
            seat = 0 if e.start() < 20 else 1
        if e.group("dice"):
            d = (int(e.group("dice")[0]), int(e.group("dice")[1]))
            move = " ".join(e.group("move").split())
            move = re.sub(r"(?i)bar", "bar", re.sub(r"(?i)off", "off", move))
            try:
                _parse_move(move)
            except RecordFormatError as err:
                raise RecordFormatError(f"line {lineno}: {err}") from None
            entries.append(Entry(seat, "move", (max(d), min(d)), move, line=lineno))
        elif e.group("double"):
            value = int(e.group("value")) if e.group("value") else 0
            entries.append(Entry(seat, "double", value=value, line=lineno))
        elif e.group("take"):
            entries.append(Entry(seat, "take", line=lineno))
        elif e.group("drop"):
            entries.append(Entry(seat, "drop", line=lineno))
        else:
            entries.append(Entry(seat, "win", value=int(e.group("points")), line=lineno))
    return entries


def _point(text: str) -> int:
    word = text.rstrip("*").lower()
    if word == "bar":
        return 25
    if word == "off":
        return 0
    if word.isdigit() and 1 <= int(word) <= 25:
        return int(word)
    raise RecordFormatError(f"{text!r} is not a point (1..24, bar, off)")


def _parse_move(move: str) -> list[tuple[int, int]]:
    steps = []
    for token in move.split():
        m = re.fullmatch(r"(.+?)(?:\((\d)\))?\*?", token)
        times = int(m.group(2)) if m.group(2) else 1
        points = [_point(p) for p in m.group(1).split("/")]
        if len(points) < 2 or not 1 <= times <= 4:
            raise RecordFormatError(f"cannot read the checker move {token!r}")
        for _ in range(times):
            steps += list(itertools.pairwise(points))
    return steps


def _after_steps(state: BackgammonState, steps: list[tuple[int, int]]) -> np.ndarray:
    """The board after moving the mover's checkers along ``steps`` (hitting lone checkers);
    legality is left to the comparison with the legal plays."""
    board = state.s[: k.BOARD_SIZE].astype(np.int64)
    me, op = k.SIDE * state.turn, k.SIDE * (1 - state.turn)
    for src, dest in steps:
        if not 0 <= dest < src <= 25:
            raise RecordFormatError(f"{src}/{dest or 'off'} does not move towards home")
        if board[me + src - 1] == 0:
            raise RecordFormatError(f"no checker on {'the bar' if src == 25 else src} to move")
        board[me + src - 1] -= 1
        if dest == 0:
            board[me + k.OFF] += 1
            continue
        blockers = board[op + 24 - dest]
        if blockers > 1:
            raise RecordFormatError(f"point {dest} is held by the opponent")
        if blockers == 1:
            board[op + 24 - dest] = 0
            board[op + k.BAR] += 1
        board[me + dest - 1] += 1
    return board


def _replay_entry(state: BackgammonState, e: Entry, actions: list[int]) -> None:
    """Play one entry on ``state`` (appending the env actions)."""
    if state.is_terminal():
        ended = f"the game ended with seat {state.winner()} winning {state.points()} point(s)"
        if e.kind == "win" and e.seat == state.winner() and e.value == state.points():
            if e.resigned:
                raise RecordFormatError(f"a resignation, but {ended} on the board")
            return
        if e.kind == "win":
            raise RecordFormatError(ended)
        raise RecordFormatError("the game is already over")
    if e.kind == "win":  # before the end: the other seat resigned (gnubg reads a .mat so)
        cube = state.cube()[0]
        if e.value not in (cube, 2 * cube, 3 * cube):
            raise RecordFormatError(
                f"the game is not over, so this is a resignation: it wins 1, 2 or 3 times the "
                f"cube ({cube}), not {e.value} point(s)"
            )
        return
    if e.kind == "move" and state.phase == k.PH_CUBE and state.turn == e.seat:
        state.apply(k.ROLL)
        actions.append(k.ROLL)
    if e.kind == "move":
        if state.phase == k.PH_OPENING:
            hi, lo = e.dice
            if hi == lo:
                raise RecordFormatError(f"the opening roll cannot be a double ({hi}{lo})")
            state.set_dice(*((hi, lo) if e.seat == 0 else (lo, hi)))
        elif state.is_chance_node():
            if state.turn != e.seat:
                raise RecordFormatError(f"seat {state.turn} is to roll")
            state.set_dice(*e.dice)
        elif state.phase != k.PH_MOVE or state.turn != e.seat:
            raise RecordFormatError(f"seat {state.current_player} is to act, not to move")
        target = _after_steps(state, e.steps())
        boards = state.play_boards()
        match = np.flatnonzero((boards == target).all(axis=1))
        if match.size == 0:
            raise RecordFormatError(f"{e.move or 'no move'!r} is not a legal play of {e.dice}")
        index = int(match[0])
        played = state.play_actions(index) or (k.PASS,)
        state.apply_play(index)
        actions += played
        return
    if state.current_player != e.seat:
        raise RecordFormatError(f"seat {state.current_player} is to act")
    if e.kind == "double":
        if not state.game.cube:
            raise RecordFormatError("a double in a game without the cube (cube=True allows it)")
        if e.value not in (0, 2 * state.cube()[0]):
            raise RecordFormatError(
                f"the cube is {state.cube()[0]}: a double makes it {2 * state.cube()[0]}"
            )
    action = {"double": k.DOUBLE, "take": k.TAKE, "drop": k.DROP}[e.kind]
    if action not in state.legal_actions():
        raise RecordFormatError(
            f"cannot {e.kind} now (legal actions {list(state.legal_actions())})"
        )
    state.apply(action)
    actions.append(action)


def _sgf_point(seat: int, point: int) -> str:
    if point == 25:
        return "y"
    if point == 0:
        return "z"
    return chr(ord("a") + point - 1) if seat == 0 else chr(ord("x") - point + 1)


def _sgf_escape(text: str) -> str:
    return text.replace("\\", "\\\\").replace("]", "\\]")


def _sgf_unescape(text: str) -> str:
    return re.sub(r"\\(.)", r"\1", text, flags=re.DOTALL)


def _sgf_entry(seat: int, value: str, number: int) -> Entry:
    word = value.strip().lower()
    if word in ("double", "take", "drop"):
        return Entry(seat, word)
    m = re.fullmatch(r"([1-6])([1-6])([a-z]*)", word)
    if m is None or len(m.group(3)) % 2:
        raise RecordFormatError(f"game {number}: cannot read the SGF move {value!r}")
    steps = []
    for a, b in zip(m.group(3)[::2], m.group(3)[1::2], strict=True):
        steps.append("/".join(_sgf_name(seat, c, number) for c in (a, b)))
    d = (int(m.group(1)), int(m.group(2)))
    return Entry(seat, "move", (max(d), min(d)), " ".join(steps))


def _sgf_name(seat: int, letter: str, number: int) -> str:
    if letter == "y":
        return "bar"
    if letter == "z":
        return "off"
    if not "a" <= letter <= "x":
        raise RecordFormatError(f"game {number}: {letter!r} is not an SGF backgammon point")
    i = ord(letter) - ord("a")
    return str(i + 1 if seat == 0 else 24 - i)
