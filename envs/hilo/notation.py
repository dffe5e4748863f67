"""HiLo positions as text: the engine's position notation (read and written) and the readable
text diagram of a game as one player (or everybody) sees it. Plain Python (none of this is on a
hot path)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
from spieltisch.envs._common.errors import PositionFormatError
from spieltisch.envs._common.notation import is_count
from spieltisch.envs.hilo import rules as R
from spieltisch.envs.hilo.cards import COL_FACE, COL_KIND, KIND_CODES, WIZARD
from spieltisch.envs.hilo.rules import SCORE_CATEGORIES, STATE_DTYPE

if TYPE_CHECKING:
    from spieltisch.envs.hilo.engine import HiLoGame, HiLoState


# --- position notation -------------------------------------------------------------------------
def format_position(state: HiLoState) -> str:
    """``state`` in position notation, one line of ``key=value`` fields (format:
    :meth:`spieltisch.envs.hilo.engine.HiLoState.to_text`)."""
    game = state.game
    faces = game.deck.card_faces
    known = state.known_in_draw_pile()
    fields = []
    for seat in range(game.num_players):
        ids, up = state.layout(seat), state.face_up(seat)
        cells = [("" if u else "?") + faces[c].code for c, u in zip(ids, up, strict=True)]
        fields.append(f"p{seat}=" + ",".join(cells[:6]) + "|" + ",".join(cells[6:]))
    draw = [("!" if known[c] else "") + faces[c].code for c in state.draw_pile()]
    fields.append("draw=" + (",".join(draw) or "-"))
    fields.append("discard=" + (",".join(faces[c].code for c in state.discard_pile()) or "-"))
    hand = state.held_card
    if hand is None:
        fields.append("hand=-")
    else:
        fields.append(f"hand={state.held_from}:{'!' if known[hand] else ''}{faces[hand].code}")
    fields.append(f"to_move={state.current_player}")
    fields.append(f"phase={state.phase}")
    s = state.s
    if s[R.H_WIZ_SLOT] >= 0:
        fields.append(f"wizslot={int(s[R.H_WIZ_SLOT])}")
    if s[R.H_ENDER] >= 0:
        fields.append(f"ender={int(s[R.H_ENDER])}")
    if s[R.H_FINAL_LEFT] >= 0:
        fields.append(f"final={int(s[R.H_FINAL_LEFT])}")
    fields.append(f"turns={int(s[R.H_TURNS])}")
    fields.append(f"moves={int(s[R.H_MOVES])}")
    fields.append(f"rng={int(state.rng[0]):016x}")
    return " ".join(fields)


def parse_position(game: HiLoGame, text: str) -> tuple[np.ndarray, np.ndarray]:
    """Read :meth:`HiLoState.to_text` notation into a state vector and generator; raises
    PositionFormatError naming the problem."""
    if not isinstance(text, str):
        raise PositionFormatError(f"a HiLo position must be a string, got {type(text).__name__}")
    n = game.num_players
    deck = game.deck
    nc = deck.num_cards
    fields: dict[str, str] = {}
    for item in text.split():
        key, sep, value = item.partition("=")
        if not sep:
            raise PositionFormatError(f"expected key=value fields, got {item!r}")
        if key in fields:
            raise PositionFormatError(f"field {key!r} given twice")
        fields[key] = value
    allowed = {f"p{p}" for p in range(n)} | {
        "draw", "discard", "hand", "to_move", "phase", "wizslot", "ender", "final", "turns",
        "moves", "rng",
    }  # fmt: skip
    unknown = sorted(set(fields) - allowed)
    if unknown:
        raise PositionFormatError(
            f"unknown field(s) {unknown} for {n} players; fields are {sorted(allowed)}"
        )
    for key in [*(f"p{p}" for p in range(n)), "discard", "to_move", "phase"]:
        if key not in fields:
            raise PositionFormatError(f"missing field {key!r}")

    free: dict[int, list[int]] = {}
    for card in range(nc - 1, -1, -1):  # pop() hands out the lowest id first
        free.setdefault(int(deck.cards[card, COL_FACE]), []).append(card)

    def take(code: str, where: str) -> int:
        try:
            face = deck.face_of_code(code)
        except (KeyError, ValueError) as err:
            raise PositionFormatError(f"{where}: {err.args[0]}") from None
        ids = free[deck.face_index(face)]
        if not ids:
            total = int(deck.face_counts[deck.face_index(face)])
            raise PositionFormatError(f"{where}: too many {code!r} cards; the deck has {total}")
        return ids.pop()

    s = np.full(R.state_size(nc), -1, dtype=STATE_DTYPE)
    s[: R.HEADER] = 0
    s[R.OFF_FACEUP : R.OFF_DRAW] = 0
    s[R.OFF_DRAW + 2 * nc :] = 0
    known = R.OFF_DRAW + 2 * nc
    s[R.H_NP] = n
    s[R.H_NC] = nc
    s[R.H_FINAL_ROUND] = int(game.final_round)
    for p in range(n):
        cells = fields[f"p{p}"].replace("|", ",").split(",")
        if len(cells) != R.SLOTS:
            raise PositionFormatError(f"p{p}: expected 12 cards, got {len(cells)}")
        for i, cell in enumerate(cells):
            down = cell.startswith("?")
            s[R.OFF_LAYOUT + R.SLOTS * p + i] = take(cell[1:] if down else cell, f"p{p} slot {i}")
            s[R.OFF_FACEUP + R.SLOTS * p + i] = 0 if down else 1
    hand_text = fields.get("hand", "-")
    src = R.SRC_NONE
    hand = -1
    if hand_text != "-":
        where, sep, code = hand_text.partition(":")
        if not sep or where not in ("draw", "discard"):
            raise PositionFormatError(
                f"hand: expected 'draw:CARD' or 'discard:CARD', got {hand_text!r}"
            )
        flagged = code.startswith("!")
        hand = take(code[1:] if flagged else code, "hand")
        src = R.SRC_DRAW if where == "draw" else R.SRC_DISCARD
        if flagged:
            if src != R.SRC_DRAW:
                raise PositionFormatError("hand: only a card from the draw pile can carry '!'")
            s[known + hand] = 1
    s[R.H_HAND] = hand
    s[R.H_HAND_SRC] = src

    draw_text = fields.get("draw", "*")
    discard_text = fields["discard"]
    if draw_text == "*" and discard_text == "*":
        raise PositionFormatError("only one of draw and discard can be '*' (the remaining cards)")
    draw: list[int] = []
    if draw_text != "*":
        for k, cell in enumerate([] if draw_text == "-" else draw_text.split(",")):
            flagged = cell.startswith("!")
            card = take(cell[1:] if flagged else cell, f"draw card {k}")
            s[known + card] = int(flagged)
            draw.append(card)
    discard: list[int] = []
    if discard_text != "*":
        for k, cell in enumerate([] if discard_text == "-" else discard_text.split(",")):
            discard.append(take(cell, f"discard card {k}"))
    rest = sorted(c for ids in free.values() for c in ids)
    if draw_text == "*":
        draw = rest
    elif discard_text == "*":
        discard = rest
    elif rest:
        names = sorted({deck.card_faces[c].code for c in rest})
        raise PositionFormatError(
            f"the position places {nc - len(rest)} of the deck's {nc} cards; missing: "
            f"{', '.join(names)} (write draw=* or discard=* for 'all remaining cards')"
        )
    for k, card in enumerate(draw):
        s[R.OFF_DRAW + k] = card
    s[R.H_DRAW_N] = len(draw)
    for k, card in enumerate(discard):
        s[R.OFF_DRAW + nc + k] = card
    s[R.H_DISC_N] = len(discard)

    s[R.H_PLAYER] = _int_field(fields, "to_move", 0, n - 1)
    phase = fields["phase"]
    if phase not in R.PHASE_NAMES:
        raise PositionFormatError(f"phase must be one of {R.PHASE_NAMES}, got {phase!r}")
    ph = R.PHASE_NAMES.index(phase)
    s[R.H_PHASE] = ph
    s[R.H_WIZ_SLOT] = _int_field(fields, "wizslot", 0, R.SLOTS - 1, -1)
    s[R.H_ENDER] = _int_field(fields, "ender", 0, n - 1, -1)
    s[R.H_FINAL_LEFT] = _int_field(fields, "final", 0, n - 1, -1)
    s[R.H_TURNS] = _int_field(fields, "turns", 0, 2**31 - 1, 0)
    s[R.H_MOVES] = _int_field(fields, "moves", 0, 2**31 - 1, 0)
    rng_text = fields.get("rng", "0")
    try:
        rng_value = int(rng_text, 16)
    except ValueError:
        raise PositionFormatError(f"rng must be hexadecimal, got {rng_text!r}") from None
    if not 0 <= rng_value < 2**64:
        raise PositionFormatError(f"rng must fit in 64 bits, got {rng_text!r}")
    rng = np.array([rng_value], dtype=np.uint64)
    _check_consistency(game, s, ph)
    return s, rng


def _int_field(
    fields: dict[str, str], key: str, lo: int, hi: int, default: int | None = None
) -> int:
    if key not in fields:
        if default is None:
            raise PositionFormatError(f"missing field {key!r}")
        return default
    text = fields[key]
    if not is_count(text) or not lo <= int(text) <= hi:
        raise PositionFormatError(f"{key} must be a whole number in {lo}..{hi}, got {text!r}")
    return int(text)


def _check_consistency(game: HiLoGame, s: np.ndarray, ph: int) -> None:
    n = game.num_players
    holding = s[R.H_HAND] >= 0
    if ph == R.PH_TAKEN and not (holding and s[R.H_HAND_SRC] == R.SRC_DISCARD):
        raise PositionFormatError("phase 'taken' needs hand=discard:CARD")
    if ph == R.PH_DRAWN and not (holding and s[R.H_HAND_SRC] == R.SRC_DRAW):
        raise PositionFormatError("phase 'drawn' needs hand=draw:CARD")
    if ph not in (R.PH_TAKEN, R.PH_DRAWN) and holding:
        raise PositionFormatError(
            f"only phases 'taken' and 'drawn' hold a card, not {R.PHASE_NAMES[ph]!r}"
        )
    if (ph == R.PH_WIZARD2) != (s[R.H_WIZ_SLOT] >= 0):
        raise PositionFormatError("wizslot is given exactly in phase 'wizard2'")
    if s[R.H_FINAL_LEFT] >= 0 and not game.final_round:
        raise PositionFormatError("'final' needs the final_round option")
    up = s[R.OFF_FACEUP : R.OFF_FACEUP + R.SLOTS * n]
    if ph == R.PH_END and not up.all():
        raise PositionFormatError("phase 'end': all cards lie face up at the end")
    if ph == R.PH_TURN and s[R.H_DRAW_N] == 0:
        raise PositionFormatError("a turn cannot start with an empty draw pile (it is rebuilt)")
    if ph == R.PH_WIZARD2:
        card = s[R.OFF_LAYOUT + R.SLOTS * s[R.H_PLAYER] + s[R.H_WIZ_SLOT]]
        if s[R.OFF_FACEUP + R.SLOTS * s[R.H_PLAYER] + s[R.H_WIZ_SLOT]] and (
            game.deck.cards[card, COL_KIND] == WIZARD
        ):
            raise PositionFormatError("wizslot holds a face-up wizard, which cannot be swapped")
    if ph != R.PH_END:
        packed = int(game._k["status"](s, game.deck.cards))
        if packed >> 8 == 0:
            raise PositionFormatError(
                f"phase {R.PHASE_NAMES[ph]!r} has no legal action in this position"
            )


# --- text rendering ----------------------------------------------------------------------------
_KIND_LABELS = (
    "resident",
    "king",
    "bard",
    "dragon keeper",
    "wolf keeper",
    "unicorn keeper",
    "dragon",
    "wolf",
    "unicorn",
    "phoenix",
    "wizard",
)


def voided_cards(state: HiLoState, seat: int) -> np.ndarray:
    """Which of ``seat``'s 12 slots a wizard voids (:func:`~.rules.voided_slots`, the scoring's
    rule), for the text board and the image."""
    out = np.zeros(R.SLOTS, dtype=np.bool_)
    R.voided_slots(np.ascontiguousarray(state.layout(seat)), state.game.deck.cards, out)
    return out


def render_text(state: HiLoState, viewer: int | str | None = None) -> str:
    """The game as text. ``viewer``: None shows every card (face-down ones in parentheses);
    ``"public"`` what every player sees; a seat number what that seat knows (``??`` for cards it
    cannot see). At the end, ``~`` marks cards voided by a wizard and the scores follow."""
    game = state.game
    faces = game.deck.card_faces
    n = game.num_players
    see_all = viewer is None
    seat_view = viewer if isinstance(viewer, int | np.integer) else None
    if not see_all and seat_view is None and viewer != "public":
        raise ValueError(f"viewer must be None, 'public' or a seat number, got {viewer!r}")
    terminal = state.is_terminal()
    lines = []
    who = "game over" if terminal else f"seat {state.current_player} to move ({state.phase})"
    extra = ""
    if game.final_round and state.s[R.H_FINAL_LEFT] > 0:
        extra = f", final round: {int(state.s[R.H_FINAL_LEFT])} turn(s) left"
    lines.append(f"HiLo, {n} players, turn {state.num_turns}: {who}{extra}")
    view = state.view(None if see_all else seat_view)
    known = ",".join(view.known_in_draw) if see_all is False else ""
    if see_all:
        pile = [faces[c].code for c in state.draw_pile()]
        draw_text = f"draw pile {len(pile)} (top last): {' '.join(pile) or '-'}"
    else:
        # a hidden card just drawn may be one of the known ones: they lie in the pile or hand
        inside = "known inside" if not view.held_hidden else "known in it or the drawn card"
        draw_text = f"draw pile {view.draw_size} cards" + (f", {inside}: {known}" if known else "")
    disc = [faces[c].code for c in state.discard_pile()]
    top = disc[-1] if disc else "-"
    lines.append(f"{draw_text}; discard pile {len(disc)} cards, top {top}")
    if state.held_card is not None:
        hidden = not see_all and view.held_hidden
        card = "??" if hidden else faces[state.held_card].code
        lines.append(f"seat {state.current_player} holds {card} (from the {state.held_from} pile)")
    scores = state.score_breakdown() if terminal else None
    for seat in range(n):
        ids, up = state.layout(seat), state.face_up(seat)
        voided = voided_cards(state, seat) if terminal else np.zeros(R.SLOTS, dtype=bool)
        mark = " <- to move" if not terminal and seat == state.current_player else ""
        head = f"seat {seat}{mark}"
        if scores is not None:
            b = scores[seat]
            parts = ", ".join(f"{k} {b[k]}" for k in SCORE_CATEGORIES if b[k])
            head += f": {b['total']} coins" + (f" ({parts})" if parts else "")
        lines.append(head)
        for row in range(2):
            cells = []
            for col in range(R.COLUMNS):
                i = row * R.COLUMNS + col
                code = faces[ids[i]].code
                if up[i]:
                    cell = ("~" if voided[i] else "") + code
                elif see_all:
                    cell = f"({code})"
                else:
                    cell = "??"
                cells.append(f"{cell:<9}")
            lines.append("  " + "".join(cells).rstrip())
    if terminal:
        won = state.winners()
        lines.append(
            "winner" + ("s" if len(won) > 1 else "") + ": " + ", ".join(f"seat {p}" for p in won)
        )
    legend = ", ".join(
        f"{code}={name}" for code, name in zip(KIND_CODES, _KIND_LABELS, strict=True)
    )
    lines.append(f"({legend}; -LRTB half coins, $ whole coin)")
    return "\n".join(lines)
