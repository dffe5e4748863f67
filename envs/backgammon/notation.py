"""Backgammon positions as text: GNU Backgammon position IDs, the engine's position notation, and
a readable board diagram. Plain Python (none of this is on a hot path)."""

from __future__ import annotations

import base64
import binascii
import re

import numpy as np
from spieltisch.envs._common.errors import PositionFormatError
from spieltisch.envs._common.notation import is_count
from spieltisch.envs.backgammon import rules as k

#: GNU Backgammon's position ID of the starting position
START_POSITION_ID = "4HPwATDgc/ABMA"

_RESULT_NAMES = {
    k.RESULT_SINGLE: "single",
    k.RESULT_GAMMON: "gammon",
    k.RESULT_BACKGAMMON: "backgammon",
    k.RESULT_DROP: "dropped",
}
_PHASE_WORDS = {
    k.PH_OPENING: "open",
    k.PH_ROLL: "roll",
    k.PH_CUBE: "cube",
    k.PH_TAKE: "take",
}


def result_name(result: int) -> str | None:
    """``"single"``, ``"gammon"``, ``"backgammon"``, ``"dropped"`` or None (game not over)."""
    return _RESULT_NAMES.get(int(result))


# --- GNU Backgammon position IDs ---------------------------------------------------------------
def sides_to_position_id(not_on_roll: np.ndarray, on_roll: np.ndarray) -> str:
    """The 14-character position ID of two sides (25 counts each: points 1..24 from that side's
    own view, then the bar), encoded as GNU Backgammon's ``PositionKey`` does: first the player
    *not* on roll, then the player on roll (gnubg's ``anBoard[0]``, ``anBoard[1]``)."""
    bits = []
    for side in (not_on_roll, on_roll):
        for c in side[:25]:
            bits.extend([1] * int(c))
            bits.append(0)
    bits.extend([0] * (80 - len(bits)))
    key = bytearray(10)
    for i, b in enumerate(bits):
        if b:
            key[i >> 3] |= 1 << (i & 7)
    return base64.b64encode(bytes(key)).decode("ascii")[:14]


def position_id_to_sides(position_id: str) -> tuple[np.ndarray, np.ndarray]:
    """The two sides (not on roll, on roll) of a position ID, 25 counts each; raises
    :class:`PositionFormatError` naming the problem."""
    if not isinstance(position_id, str):
        raise PositionFormatError(
            f"a position ID must be a string, got {type(position_id).__name__}"
        )
    if not re.fullmatch(r"[A-Za-z0-9+/]{14}", position_id):
        raise PositionFormatError(
            f"a GNU Backgammon position ID is 14 characters of A-Z a-z 0-9 + /, got {position_id!r}"
        )
    try:
        key = base64.b64decode(position_id + "==")
    except binascii.Error as err:  # pragma: no cover - the regex already rules this out
        raise PositionFormatError(f"position ID {position_id!r} is not base64: {err}") from None
    if base64.b64encode(key).decode("ascii")[:14] != position_id:  # bits 81-84 are not zero
        raise PositionFormatError(f"position ID {position_id!r} has stray bits after the board")
    bits = [(key[i >> 3] >> (i & 7)) & 1 for i in range(80)]
    sides = [np.zeros(25, dtype=np.int8), np.zeros(25, dtype=np.int8)]
    pos = 0
    for side in sides:
        for j in range(25):
            count = 0
            while pos < 80 and bits[pos] == 1:
                count += 1
                pos += 1
            if pos >= 80:
                raise PositionFormatError(f"position ID {position_id!r} is truncated")
            pos += 1  # the 0 after each point
            if count > k.CHECKERS:
                raise PositionFormatError(
                    f"position ID {position_id!r} has {count} checkers on one point"
                )
            side[j] = count
    if any(bits[pos:]):
        raise PositionFormatError(f"position ID {position_id!r} has stray bits after the board")
    for name, side in zip(("not on roll", "on roll"), sides, strict=True):
        if int(side.sum()) > k.CHECKERS:
            raise PositionFormatError(
                f"position ID {position_id!r}: the player {name} has {int(side.sum())} "
                f"checkers on the board (at most {k.CHECKERS})"
            )
    return sides[0], sides[1]


def board_from_sides(not_on_roll: np.ndarray, on_roll: np.ndarray, turn: int) -> np.ndarray:
    """An engine board (52 cells, seat sides) from two 25-count sides, ``turn`` on roll.
    Checks that the sides fit together; raises :class:`PositionFormatError` if not."""
    board = np.zeros(k.BOARD_SIZE, dtype=np.int8)
    for seat, side in ((turn, on_roll), (1 - turn, not_on_roll)):
        side = np.asarray(side)
        if side.shape != (25,) or (side < 0).any():
            raise PositionFormatError("each side needs 25 non-negative counts (24 points, bar)")
        total = int(side.sum())
        if total > k.CHECKERS:
            raise PositionFormatError(f"seat {seat} has {total} checkers on the board (max 15)")
        base = k.SIDE * seat
        board[base : base + 25] = side
        board[base + k.OFF] = k.CHECKERS - total
    check_board(board)
    return board


def check_board(board: np.ndarray) -> None:
    """Raise :class:`PositionFormatError` unless ``board`` is a possible backgammon position."""
    for seat in (0, 1):
        base = k.SIDE * seat
        side = board[base : base + k.SIDE].astype(int)
        if (side < 0).any():
            raise PositionFormatError(f"seat {seat} has a negative checker count")
        if side.sum() != k.CHECKERS:
            raise PositionFormatError(
                f"seat {seat} has {side.sum()} checkers in all (points, bar and off); must be 15"
            )
    for i in range(24):
        if board[i] > 0 and board[k.SIDE + 23 - i] > 0:
            raise PositionFormatError(
                f"both players have checkers on the same point (seat 0's point {i + 1} = "
                f"seat 1's point {24 - i})"
            )
    if board[k.OFF] == k.CHECKERS and board[k.SIDE + k.OFF] == k.CHECKERS:
        raise PositionFormatError("both players have borne off all their checkers")


# --- the engine's position notation ------------------------------------------------------------
def format_position(s: np.ndarray, cube_game: bool) -> str:
    """``"<position ID> <seat on turn> <what happens next> [cube=V[@S]]"`` (see
    :meth:`spieltisch.envs.backgammon.engine.BackgammonState.to_text`)."""
    phase = int(s[k.M_PHASE])
    turn = int(s[k.M_TURN])
    if phase == k.PH_OPENING:
        turn = 0
    elif phase == k.PH_OVER:
        turn = int(s[k.M_WINNER])
    on = s[k.SIDE * turn : k.SIDE * turn + 25]
    other = s[k.SIDE * (1 - turn) : k.SIDE * (1 - turn) + 25]
    pid = sides_to_position_id(other, on)
    if phase == k.PH_MOVE:
        word = "".join(str(int(d)) for d in s[k.M_DICE : k.M_DICE + int(s[k.M_NDICE])])
    elif phase == k.PH_OVER:
        word = "drop" if int(s[k.M_RESULT]) == k.RESULT_DROP else "over"
    else:
        word = _PHASE_WORDS[phase]
    text = f"{pid} {turn} {word}"
    if cube_game:
        cube, owner = int(s[k.M_CUBE]), int(s[k.M_OWNER])
        text += f" cube={cube}" if owner < 0 else f" cube={cube}@{owner}"
    return text


def parse_position(
    text: str, cube_game: bool, max_cube: int
) -> tuple[np.ndarray, int, str, list[int], int, int]:
    """Parse :func:`format_position` notation into (board, turn, word, dice, cube, owner);
    raises :class:`PositionFormatError` naming the offending part."""
    if not isinstance(text, str):
        raise PositionFormatError(
            f"a backgammon position must be a string, got {type(text).__name__}"
        )
    fields = text.split()
    expected = "'<position ID> <seat 0|1> <open|roll|cube|take|over|drop|DICE>"
    expected += " [cube=V[@S]]'" if cube_game else "'"
    if len(fields) not in ((3, 4) if cube_game else (3,)):
        if not cube_game and len(fields) == 4 and fields[3].startswith("cube="):
            raise PositionFormatError(
                "this game has no doubling cube (BackgammonGame(cube=True) enables it), "
                f"got {fields[3]!r}"
            )
        raise PositionFormatError(f"expected {expected}, got {text!r}")
    pid, seat_text, word = fields[:3]
    not_on_roll, on_roll = position_id_to_sides(pid)
    if seat_text not in ("0", "1"):
        raise PositionFormatError(f"the seat on turn must be 0 or 1, got {seat_text!r}")
    turn = int(seat_text)
    board = board_from_sides(not_on_roll, on_roll, turn)
    dice: list[int] = []
    if is_count(word):
        dice = sorted((int(c) for c in word), reverse=True)
        if any(not 1 <= d <= 6 for d in dice):
            raise PositionFormatError(f"dice are 1..6, got {word!r}")
        equal = len(set(dice)) == 1
        if not (1 <= len(dice) <= 4 and (equal or len(dice) == 2)):
            raise PositionFormatError(
                f"dice left to play are two different dice or 1-4 equal ones, got {word!r}"
            )
    elif word not in ("open", "roll", "cube", "take", "over", "drop"):
        raise PositionFormatError(
            f"expected dice left to play (e.g. 31, 5555) or one of open, roll, cube, take, "
            f"over, drop; got {word!r}"
        )
    if word in ("cube", "take", "drop") and not cube_game:
        raise PositionFormatError(f"{word!r} needs the doubling cube (BackgammonGame(cube=True))")
    cube, owner = 1, -1
    if len(fields) == 4:
        m = re.fullmatch(r"cube=([0-9]+)(?:@([01]))?", fields[3])
        if not m:
            raise PositionFormatError(f"expected cube=VALUE or cube=VALUE@SEAT, got {fields[3]!r}")
        cube = int(m.group(1))
        owner = -1 if m.group(2) is None else int(m.group(2))
        if cube < 1 or cube & (cube - 1) or cube > max_cube:
            raise PositionFormatError(f"the cube value must be a power of 2 up to {max_cube}")
        if (cube == 1) != (owner == -1):
            raise PositionFormatError(
                "the cube is centred exactly while its value is 1: write cube=1 or cube=V@SEAT"
            )
    off = (int(board[k.OFF]), int(board[k.SIDE + k.OFF]))
    if word == "over":
        if off[turn] != k.CHECKERS:
            raise PositionFormatError(
                f"'over' names the winner as the seat field, but seat {turn} has not borne off "
                "all 15 checkers"
            )
    elif k.CHECKERS in off:
        raise PositionFormatError(
            "a player has borne off all 15 checkers, so the game is over: write "
            "'<position ID> <winner> over'"
        )
    if word == "open" and turn != 0:
        raise PositionFormatError("before the opening roll nobody is on turn: write seat 0")
    if word == "cube" and not (owner in (-1, turn) and cube < max_cube):
        raise PositionFormatError(f"seat {turn} may not double (cube={cube}, owner={owner})")
    if word == "take" and owner not in (-1, turn):
        raise PositionFormatError(f"seat {turn} cannot have doubled: the opponent owns the cube")
    return board, turn, word, dice, cube, owner


# --- the diagram ---------------------------------------------------------------------------------
_MARK = ("X", "O")


def _column(count: int, mark: str, top: bool, rows: int = 5) -> list[str]:
    """One point's checkers as ``rows`` cells, base first. A count above ``rows`` is written in
    the cells farthest from the base, to be read from top to bottom on either half."""
    cells = [mark if r < count else " " for r in range(rows)]
    if count > rows:
        digits = str(count)
        if len(digits) == 1:
            cells[-1] = digits
        elif top:  # rows run downwards: the tens above the units
            cells[-2], cells[-1] = digits
        else:  # rows run upwards
            cells[-1], cells[-2] = digits
    return cells


def render_text(s: np.ndarray, cube_game: bool) -> str:
    """The board drawn as text, from seat 0's side (X, home board bottom right, points
    numbered for seat 0); seat 1 plays O. Bar and borne-off checkers, dice and cube below.

    ::

        +13-14-15-16-17-18------19-20-21-22-23-24-+
        | X           O    |   | O              X |
        ...
        +12-11-10--9--8--7-------6--5--4--3--2--1-+
    """

    def point(p: int) -> tuple[int, str]:
        """(count, mark) on seat 0's point p (1..24)."""
        c0 = int(s[p - 1])
        c1 = int(s[k.SIDE + 24 - p])
        return (c0, "X") if c0 else (c1, "O")

    top_points = list(range(13, 25))
    bottom_points = list(range(12, 0, -1))
    top_cols = [_column(*point(p), top=True) for p in top_points]
    bottom_cols = [_column(*point(p), top=False) for p in bottom_points]
    lines = ["+13-14-15-16-17-18------19-20-21-22-23-24-+"]
    bar = (int(s[k.BAR]), int(s[k.SIDE + k.BAR]))
    for r in range(5):
        cells = [f" {col[r]} " for col in top_cols]
        lines.append("|" + "".join(cells[:6]) + "|   |" + "".join(cells[6:]) + "|")
    lines.append("|" + " " * 18 + "|BAR|" + " " * 18 + f"|  bar: X {bar[0]}, O {bar[1]}")
    for r in range(4, -1, -1):
        cells = [f" {col[r]} " for col in bottom_cols]
        lines.append("|" + "".join(cells[:6]) + "|   |" + "".join(cells[6:]) + "|")
    lines.append("+12-11-10--9--8--7-------6--5--4--3--2--1-+")
    off = (int(s[k.OFF]), int(s[k.SIDE + k.OFF]))
    lines.append(f"borne off: X (seat 0) {off[0]}, O (seat 1) {off[1]}")
    phase = int(s[k.M_PHASE])
    turn = int(s[k.M_TURN])
    who = f"seat {turn} ({_MARK[turn]})"
    if phase == k.PH_OPENING:
        status = "opening roll to come"
    elif phase == k.PH_ROLL:
        status = f"{who} to roll"
    elif phase == k.PH_CUBE:
        status = f"{who} to double or roll"
    elif phase == k.PH_TAKE:
        status = f"seat {1 - turn} ({_MARK[1 - turn]}) to take or drop {who}'s double"
    elif phase == k.PH_MOVE:
        rolled = f"{int(s[k.M_ROLL])}-{int(s[k.M_ROLL + 1])}"
        left = " ".join(str(int(d)) for d in s[k.M_DICE : k.M_DICE + int(s[k.M_NDICE])])
        status = f"{who} to move, rolled {rolled}, dice left: {left}"
    else:
        winner = int(s[k.M_WINNER])
        status = (
            f"game over: seat {winner} ({_MARK[winner]}) wins "
            f"{int(s[k.M_POINTS])} point(s), {result_name(int(s[k.M_RESULT]))}"
        )
    if cube_game:
        owner = int(s[k.M_OWNER])
        holder = "centred" if owner < 0 else f"owned by seat {owner}"
        status += f"; cube {int(s[k.M_CUBE])} {holder}"
    lines.append(status)
    return "\n".join(lines)


# --- GNU Backgammon match IDs --------------------------------------------------------------------
# The match key (GNU Backgammon manual, section 11.7 "A technical description of the Match ID",
# https://www.gnu.org/software/gnubg/manual/html_node/A-technical-description-of-the-Match-ID.html):
# 66 bits, stored little-endian like the position key (bit i in byte i // 8 at bit i % 8), each
# field least significant bit first, then the 9 bytes in base64 (12 characters). Field: (first
# bit, width); the manual numbers the bits from 1.
_MATCH_KEY = {
    "cube_log": (0, 4),  # log2 of the cube value
    "cube_owner": (4, 2),  # 0 or 1; 3 = centred
    "on_roll": (6, 1),  # the player on roll or who did roll ("dice owner")
    "crawford": (7, 1),  # this game is the Crawford game
    "game_state": (8, 3),  # see GAME_STATES
    "turn": (11, 1),  # the player to make a decision (the doubled player while a double is up)
    "double_offered": (12, 1),
    "resign": (13, 2),  # 0 none, 1 single, 2 gammon, 3 backgammon offered
    "die1": (15, 3),
    "die2": (18, 3),
    "match_length": (21, 15),  # 0: money play
    "score0": (36, 15),
    "score1": (51, 15),
}
#: the match ID's game states, in the order of their codes 0..4
GAME_STATES = ("none", "playing", "over", "resigned", "dropped")
_GNUBG_ID = re.compile(r"\s*([A-Za-z0-9+/]{14}):([A-Za-z0-9+/]{12})\s*")


def match_id_to_fields(match_id: str) -> dict:
    """The fields of a GNU Backgammon match ID (12 base64 characters), as the keyword arguments
    of :func:`fields_to_match_id`:

    ``cube`` (value), ``cube_owner`` (0, 1 or None when centred), ``on_roll`` (the player on roll
    or who rolled: gnubg's dice owner), ``crawford`` (bool), ``game_state`` (one of
    :data:`GAME_STATES`), ``turn`` (the player to decide: the doubled player while a double is
    offered), ``double_offered`` (bool), ``resign`` (0 none, 1/2/3 a single/gammon/backgammon
    offered), ``dice`` (two dice, or None before the roll), ``match_length`` (0 = money play),
    ``score`` (player 0's, player 1's).

    Raises :class:`PositionFormatError` for text that is not a match ID or holds an impossible
    value (a cube owner code 2, a game state above 4, a die of 7, one die only). The bits after
    the 66th (gnubg's undocumented extensions) are ignored."""
    if not isinstance(match_id, str):
        raise PositionFormatError(f"a match ID must be a string, got {type(match_id).__name__}")
    if not re.fullmatch(r"[A-Za-z0-9+/]{12}", match_id):
        raise PositionFormatError(
            f"a GNU Backgammon match ID is 12 characters of A-Z a-z 0-9 + /, got {match_id!r}"
        )
    key = int.from_bytes(base64.b64decode(match_id), "little")
    raw = {name: (key >> first) & ((1 << width) - 1) for name, (first, width) in _MATCH_KEY.items()}
    if raw["cube_owner"] == 2:
        raise PositionFormatError(
            f"match ID {match_id!r}: cube owner code 2 does not exist (0, 1, or 3 = centred)"
        )
    if raw["game_state"] >= len(GAME_STATES):
        raise PositionFormatError(
            f"match ID {match_id!r}: game state {raw['game_state']} does not exist (0..4)"
        )
    dice = (raw["die1"], raw["die2"])
    if any(d > 6 for d in dice) or (0 in dice and dice != (0, 0)):
        raise PositionFormatError(
            f"match ID {match_id!r}: the dice must be two of 1..6, or 0, 0 before the roll; "
            f"got {dice}"
        )
    return {
        "cube": 1 << raw["cube_log"],
        "cube_owner": None if raw["cube_owner"] == 3 else raw["cube_owner"],
        "on_roll": raw["on_roll"],
        "crawford": bool(raw["crawford"]),
        "game_state": GAME_STATES[raw["game_state"]],
        "turn": raw["turn"],
        "double_offered": bool(raw["double_offered"]),
        "resign": raw["resign"],
        "dice": None if dice == (0, 0) else dice,
        "match_length": raw["match_length"],
        "score": (raw["score0"], raw["score1"]),
    }


def fields_to_match_id(
    *,
    cube: int = 1,
    cube_owner: int | None = None,
    on_roll: int = 0,
    crawford: bool = False,
    game_state: str = "playing",
    turn: int | None = None,
    double_offered: bool = False,
    resign: int = 0,
    dice: tuple[int, int] | None = None,
    match_length: int = 0,
    score: tuple[int, int] = (0, 0),
) -> str:
    """The 12-character GNU Backgammon match ID of these fields (meanings in
    :func:`match_id_to_fields`, which reads them back exactly); ``turn`` defaults to ``on_roll``.
    Raises ValueError naming a field that does not fit."""

    def check(name: str, value: object, ok: bool, expected: str) -> None:
        if isinstance(value, bool) and name not in ("crawford", "double_offered"):
            ok = False
        if not ok:
            raise ValueError(f"match ID field {name} must be {expected}, got {value!r}")

    def is_int(x: object) -> bool:
        return isinstance(x, int | np.integer) and not isinstance(x, bool)

    turn = on_roll if turn is None else turn
    cube_ok = is_int(cube) and 1 <= cube <= 2**15 and not cube & (cube - 1)
    check("cube", cube, cube_ok, "a power of 2 from 1 to 32768")
    check("cube_owner", cube_owner, cube_owner in (None, 0, 1), "0, 1 or None (centred)")
    check("on_roll", on_roll, is_int(on_roll) and on_roll in (0, 1), "0 or 1")
    check("turn", turn, is_int(turn) and turn in (0, 1), "0 or 1")
    check("crawford", crawford, isinstance(crawford, bool), "True or False")
    check("double_offered", double_offered, isinstance(double_offered, bool), "True or False")
    check("game_state", game_state, game_state in GAME_STATES, f"one of {GAME_STATES}")
    check("resign", resign, is_int(resign) and 0 <= resign <= 3, "0..3")
    dice_ok = dice is None or (
        isinstance(dice, tuple | list)
        and len(dice) == 2
        and all(is_int(d) and 1 <= d <= 6 for d in dice)
    )
    check("dice", dice, dice_ok, "None or two dice 1..6")
    length_ok = is_int(match_length) and 0 <= match_length < 2**15
    check("match_length", match_length, length_ok, "0 (money) or a length below 32768")
    score_ok = (
        isinstance(score, tuple | list)
        and len(score) == 2
        and all(is_int(x) and 0 <= x < 2**15 for x in score)
    )
    check("score", score, score_ok, "two scores 0..32767")
    values = {
        "cube_log": int(cube).bit_length() - 1,
        "cube_owner": 3 if cube_owner is None else int(cube_owner),
        "on_roll": int(on_roll),
        "crawford": int(crawford),
        "game_state": GAME_STATES.index(game_state),
        "turn": int(turn),
        "double_offered": int(double_offered),
        "resign": int(resign),
        "die1": 0 if dice is None else int(dice[0]),
        "die2": 0 if dice is None else int(dice[1]),
        "match_length": int(match_length),
        "score0": int(score[0]),
        "score1": int(score[1]),
    }
    key = 0
    for name, (first, _width) in _MATCH_KEY.items():
        key |= values[name] << first
    return base64.b64encode(key.to_bytes(9, "little")).decode("ascii")


def split_gnubg_id(text: str) -> tuple[str, str] | None:
    """``(position ID, match ID)`` of GNU Backgammon's combined ``"POSITIONID:MATCHID"`` form
    (surrounding spaces allowed), or None when ``text`` does not have that form."""
    m = _GNUBG_ID.fullmatch(text) if isinstance(text, str) else None
    return None if m is None else (m.group(1), m.group(2))


def gnubg_id_to_position(text: str, cube_game: bool, max_cube: int) -> str:
    """The engine's position notation (:func:`format_position`) of a GNU Backgammon ID
    ``"POSITIONID:MATCHID"``; raises :class:`PositionFormatError` naming the problem.

    The match ID gives the seat on roll (gnubg's player 0 / 1 is seat 0 / 1; the position ID has
    that player on roll, as gnubg writes it), the dice when rolled, the cube value and owner, a
    double offered, and whether the game is over. Game state ``none`` reads as the opening roll
    to come, ``playing`` as a turn (dice rolled: to move; a double offered: the opponent to take
    or drop; else to roll, or to double or roll when the cube is in play and available),
    ``over`` as won by the player who has borne off all checkers, ``dropped`` as won by the
    player on roll (the doubler). The engine plays one money game: the match length, the score
    and gnubg's extension bits are not used; resignations and (with the cube) the Crawford game,
    which the engine does not have, are refused, and so is a cube value other than 1 when the
    game has no cube."""
    ids = split_gnubg_id(text)
    if ids is None:
        raise PositionFormatError(
            "a GNU Backgammon ID is 'POSITIONID:MATCHID' (14 and 12 characters of A-Z a-z 0-9 "
            f"+ /), e.g. '{START_POSITION_ID}:cAkAAAAAAAAA'; got {text!r}"
        )
    pid, mid = ids
    not_on_roll, on_roll_side = position_id_to_sides(pid)
    f = match_id_to_fields(mid)
    seat, state = f["on_roll"], f["game_state"]
    cube, owner = f["cube"], f["cube_owner"]
    where = f"GNU Backgammon ID {text.strip()!r}"
    if state == "resigned" or f["resign"]:
        raise PositionFormatError(f"{where}: resignations are not part of this engine's game")
    if not cube_game:
        if cube != 1 or owner is not None or f["double_offered"] or state == "dropped":
            raise PositionFormatError(
                f"{where} has the doubling cube in play (value {cube}, "
                f"{'centred' if owner is None else f'owned by player {owner}'}"
                f"{', a double offered' if f['double_offered'] else ''}), but this game has no "
                "cube: use BackgammonGame(cube=True) (env option cube=True)"
            )
    elif f["crawford"]:
        raise PositionFormatError(
            f"{where} is a Crawford game (no doubling), which this engine does not play with the "
            "cube: use a game without the cube"
        )
    if cube > max_cube:
        raise PositionFormatError(f"{where}: cube value {cube} is above max_cube {max_cube}")
    if (cube == 1) != (owner is None):
        raise PositionFormatError(
            f"{where}: the engine's cube is centred exactly while its value is 1 (cube {cube}, "
            f"owner {owner})"
        )
    dice = f["dice"]
    if state == "none":
        word, seat = "open", 0
    elif state == "playing":
        if f["double_offered"]:
            if dice is not None or f["turn"] == seat:
                raise PositionFormatError(
                    f"{where}: a double is offered, so the dice are not rolled and the other "
                    "player decides"
                )
            word = "take"
        elif f["turn"] != seat:
            raise PositionFormatError(
                f"{where}: player {f['turn']} decides, but player {seat} is on roll and no "
                "double is offered"
            )
        elif dice is not None:
            word = "".join(str(d) for d in (dice * 2 if dice[0] == dice[1] else dice))
        else:
            may_double = cube_game and owner in (None, seat) and cube < max_cube
            word = "cube" if may_double else "roll"
    elif state == "over":
        if int(on_roll_side.sum()) == 0:
            pass
        elif int(not_on_roll.sum()) == 0:
            seat = 1 - seat
            pid = sides_to_position_id(on_roll_side, not_on_roll)
        else:
            raise PositionFormatError(
                f"{where}: the game is over, but neither player has borne off all checkers"
            )
        word = "over"
    else:  # dropped: the doubler (on roll) wins
        word = "drop"
    text_out = f"{pid} {seat} {word}"
    if cube_game:
        text_out += f" cube={cube}" if owner is None else f" cube={cube}@{owner}"
    return text_out


def state_to_gnubg_id(s: np.ndarray) -> str:
    """GNU Backgammon's ``"POSITIONID:MATCHID"`` of a state vector (a money game: match length
    0, score 0-0); the inverse of :func:`gnubg_id_to_position`. Raises ValueError in the middle of
    a turn (some dice played), which gnubg's IDs cannot express."""
    phase = int(s[k.M_PHASE])
    turn = int(s[k.M_TURN])
    owner = int(s[k.M_OWNER])
    fields = {
        "cube": int(s[k.M_CUBE]),
        "cube_owner": None if owner < 0 else owner,
        "on_roll": turn,
    }
    if phase == k.PH_OPENING:
        fields.update(on_roll=0, game_state="none")
    elif phase == k.PH_TAKE:
        fields.update(turn=1 - turn, double_offered=True)
    elif phase == k.PH_MOVE:
        rolled = (int(s[k.M_ROLL]), int(s[k.M_ROLL + 1]))
        left = sorted((int(d) for d in s[k.M_DICE : k.M_DICE + int(s[k.M_NDICE])]), reverse=True)
        full = sorted(rolled, reverse=True) * (2 if rolled[0] == rolled[1] else 1)
        if 0 in rolled or left != full:
            raise ValueError(
                "GNU Backgammon IDs hold a whole roll: this position is in the middle of a turn "
                f"(dice left {left}, rolled {rolled})"
            )
        fields.update(dice=rolled)
    elif phase == k.PH_OVER:
        winner = int(s[k.M_WINNER])
        if int(s[k.M_RESULT]) == k.RESULT_DROP:
            fields.update(on_roll=winner, turn=1 - winner, game_state="dropped")
        else:
            fields.update(on_roll=winner, game_state="over")
    seat = fields["on_roll"]
    on = s[k.SIDE * seat : k.SIDE * seat + 25]
    other = s[k.SIDE * (1 - seat) : k.SIDE * (1 - seat) + 25]
    return f"{sides_to_position_id(other, on)}:{fields_to_match_id(**fields)}"
