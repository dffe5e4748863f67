"""HiLo cards: kinds, half-coin edges, and the deck read from a data file.

The card list of the manual is missing, so the deck is data (``data/deck.json``, the project's
reconstruction, see ``docs/rules/hilo.md``), never code: a corrected list replaces the file and
nothing else. A user can pass another deck file to :class:`~spieltisch.envs.hilo.engine.HiLoGame`.

Deck file format (JSON)::

    {"format": "spieltisch-hilo-deck/1",
     "name": "...", "source": "...",          # optional, free text
     "cards": [{"kind": "king", "count": 3, "halves": "LR", "coin": false, "name": "Koenig"}, ...]}

``kind`` is one of :data:`KIND_NAMES`; ``count`` a positive integer; ``halves`` the edges that show
half a coin, letters of ``"LRTB"`` (left, right, top, bottom; default none); ``coin`` whether the
card shows a whole coin (default false); ``name`` optional. Cards with the same kind, halves and
coin are the same *face* (interchangeable).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from importlib import resources
from os import PathLike
from pathlib import Path

import numpy as np

# Card kinds (the order is the observation's one-hot order).
RESIDENT, KING, BARD, DRAGON_KEEPER, WOLF_KEEPER, UNICORN_KEEPER = 0, 1, 2, 3, 4, 5
DRAGON, WOLF, UNICORN, PHOENIX, WIZARD = 6, 7, 8, 9, 10
NUM_KINDS = 11
KIND_NAMES = (
    "resident",
    "king",
    "bard",
    "dragon_keeper",
    "wolf_keeper",
    "unicorn_keeper",
    "dragon",
    "wolf",
    "unicorn",
    "phoenix",
    "wizard",
)
#: two-letter codes used in the position notation and the text rendering
KIND_CODES = ("Re", "Ki", "Ba", "Dk", "Wk", "Uk", "Dr", "Wo", "Un", "Ph", "Wz")
#: person cards (what the bard counts): residents, king, bard and the three keepers
PERSON_KINDS = (RESIDENT, KING, BARD, DRAGON_KEEPER, WOLF_KEEPER, UNICORN_KEEPER)

# Half-coin edges as bits.
HALF_L, HALF_R, HALF_T, HALF_B = 1, 2, 4, 8
EDGE_LETTERS = "LRTB"

# Columns of the card table handed to the kernels.
COL_KIND, COL_HALVES, COL_COIN, COL_FACE = 0, 1, 2, 3

DECK_FORMAT = "spieltisch-hilo-deck/1"
DEFAULT_DECK_FILE = "deck.json"


#: the most cards a deck may have
MAX_CARDS = 10_000


class DeckFormatError(ValueError):
    """A deck file that cannot be used; the message names the file and the offending entry."""


@dataclass(frozen=True)
class Face:
    """What a card shows: its kind, the edges with half a coin (bits), and a whole coin."""

    kind: int
    halves: int = 0
    coin: bool = False

    @property
    def code(self) -> str:
        """Short code, e.g. ``"Ki-LR"`` (king, halves left and right) or ``"Ph$"`` (whole coin)."""
        text = KIND_CODES[self.kind]
        if self.halves:
            text += "-" + "".join(e for i, e in enumerate(EDGE_LETTERS) if self.halves >> i & 1)
        return text + "$" if self.coin else text

    @property
    def kind_name(self) -> str:
        return KIND_NAMES[self.kind]

    def __str__(self) -> str:
        return self.code


def halves_from_letters(letters: str) -> int:
    """``"LB"`` -> ``HALF_L | HALF_B``; raises ValueError on unknown or repeated letters."""
    bits = 0
    for ch in letters:
        i = EDGE_LETTERS.find(ch)
        if i < 0:
            raise ValueError(f"unknown edge {ch!r} (edges are L, R, T, B)")
        if bits >> i & 1:
            raise ValueError(f"edge {ch!r} given twice")
        bits |= 1 << i
    return bits


@dataclass(frozen=True)
class Deck:
    """A deck: one :class:`Face` per card (card ids are the positions), plus the faces' table.

    ``faces`` lists each distinct face once, in the order of first appearance; ``cards`` is the
    ``(num_cards, 4)`` int32 table (kind, halves, coin, face index) the kernels read.
    """

    card_faces: tuple[Face, ...]
    name: str = ""
    source: str = ""
    faces: tuple[Face, ...] = field(init=False, compare=False)
    cards: np.ndarray = field(init=False, repr=False, compare=False)
    face_counts: np.ndarray = field(init=False, repr=False, compare=False)
    _face_index: dict = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        faces: list[Face] = []
        index: dict[Face, int] = {}
        for face in self.card_faces:
            if face not in index:
                index[face] = len(faces)
                faces.append(face)
        table = np.array(
            [(f.kind, f.halves, int(f.coin), index[f]) for f in self.card_faces], dtype=np.int32
        ).reshape(-1, 4)
        table.setflags(write=False)
        counts = np.bincount(table[:, COL_FACE], minlength=len(faces)).astype(np.int32)
        counts.setflags(write=False)
        object.__setattr__(self, "faces", tuple(faces))
        object.__setattr__(self, "cards", table)
        object.__setattr__(self, "face_counts", counts)
        object.__setattr__(self, "_face_index", index)

    def __reduce__(self) -> tuple:
        return (Deck, (self.card_faces, self.name, self.source))

    @property
    def num_cards(self) -> int:
        return len(self.card_faces)

    @property
    def num_faces(self) -> int:
        return len(self.faces)

    def count(self, kind: int) -> int:
        return sum(1 for f in self.card_faces if f.kind == kind)

    def face_index(self, face: Face) -> int:
        return self._face_index[face]

    def face_of_code(self, code: str) -> Face:
        """The deck's face written as ``code`` (halves in any order); KeyError if none."""
        face = parse_face_code(code)
        if face not in self._face_index:
            raise KeyError(f"the deck has no card {code!r}")
        return face

    def check_playable(self, num_players: int) -> None:
        """Raise DeckFormatError if ``num_players`` cannot play with this deck.

        12 cards per layout, one discard and at least one card to draw after rebuilding the draw
        pile need ``12 * n + 2`` cards; replacing a starting wizard needs a non-wizard in the
        draw pile, which ``12 * n + 1`` non-wizards guarantee.
        """
        need = 12 * num_players + 2
        if self.num_cards < need:
            raise DeckFormatError(
                f"deck {self.name or '(unnamed)'!r} has {self.num_cards} cards; "
                f"{num_players} players need at least {need}"
            )
        non_wizards = self.num_cards - self.count(WIZARD)
        if non_wizards < 12 * num_players + 1:
            raise DeckFormatError(
                f"deck {self.name or '(unnamed)'!r} has {non_wizards} non-wizard cards; "
                f"{num_players} players need at least {12 * num_players + 1}"
            )


def parse_face_code(code: str) -> Face:
    """Read a face code such as ``"Re-LB"``, ``"Ph$"`` or ``"Wz"``; ValueError if malformed."""
    text = code
    coin = text.endswith("$")
    if coin:
        text = text[:-1]
    kind_code, sep, letters = text.partition("-")
    if kind_code not in KIND_CODES:
        raise ValueError(f"unknown card {code!r}: kinds are {', '.join(KIND_CODES)}")
    if sep and not letters:
        raise ValueError(f"card {code!r}: '-' must be followed by edges (L, R, T, B)")
    try:
        halves = halves_from_letters(letters)
    except ValueError as err:
        raise ValueError(f"card {code!r}: {err}") from None
    return Face(KIND_CODES.index(kind_code), halves, coin)


def _read_entry(entry: object, i: int, where: str) -> tuple[Face, int]:
    if not isinstance(entry, dict):
        raise DeckFormatError(f"{where}: cards[{i}] must be an object, got {entry!r}")
    unknown = sorted(set(entry) - {"kind", "count", "halves", "coin", "name"})
    if unknown:
        raise DeckFormatError(f"{where}: cards[{i}] has unknown fields {unknown}")
    kind = entry.get("kind")
    if kind not in KIND_NAMES:
        raise DeckFormatError(
            f"{where}: cards[{i}] has kind {kind!r}; kinds are {', '.join(KIND_NAMES)}"
        )
    count = entry.get("count")
    if isinstance(count, bool) or not isinstance(count, int) or count < 1:
        raise DeckFormatError(
            f"{where}: cards[{i}] ({kind}) needs a positive integer count, got {count!r}"
        )
    letters = entry.get("halves", "")
    if not isinstance(letters, str):
        raise DeckFormatError(f"{where}: cards[{i}] ({kind}) halves must be a string like 'LR'")
    try:
        halves = halves_from_letters(letters)
    except ValueError as err:
        raise DeckFormatError(f"{where}: cards[{i}] ({kind}) halves {letters!r}: {err}") from None
    coin = entry.get("coin", False)
    if not isinstance(coin, bool):
        raise DeckFormatError(f"{where}: cards[{i}] ({kind}) coin must be true or false")
    name = entry.get("name", "")
    if not isinstance(name, str):
        raise DeckFormatError(f"{where}: cards[{i}] ({kind}) name must be a string")
    if kind == "wizard" and (halves or coin):
        raise DeckFormatError(
            f"{where}: cards[{i}]: a wizard scores nothing, so it cannot show coins or halves"
        )
    return Face(KIND_NAMES.index(kind), halves, coin), count


def deck_from_dict(data: object, where: str = "deck") -> Deck:
    """A :class:`Deck` from the parsed JSON of a deck file (see the module docstring)."""
    if not isinstance(data, dict):
        raise DeckFormatError(f"{where}: a deck file must hold a JSON object")
    if data.get("format", DECK_FORMAT) != DECK_FORMAT:
        raise DeckFormatError(
            f"{where}: format {data.get('format')!r} is not supported (expected {DECK_FORMAT!r})"
        )
    unknown = sorted(set(data) - {"format", "name", "source", "cards"})
    if unknown:
        raise DeckFormatError(f"{where}: unknown top-level fields {unknown}")
    entries = data.get("cards")
    if not isinstance(entries, list) or not entries:
        raise DeckFormatError(f"{where}: 'cards' must be a non-empty list")
    faces: list[Face] = []
    for i, entry in enumerate(entries):
        face, count = _read_entry(entry, i, where)
        if len(faces) + count > MAX_CARDS:  # counted before the cards are made
            raise DeckFormatError(
                f"{where}: {len(faces) + count} cards or more is more than the engine supports "
                f"({MAX_CARDS})"
            )
        faces.extend([face] * count)
    name, source = data.get("name", ""), data.get("source", "")
    if not isinstance(name, str) or not isinstance(source, str):
        raise DeckFormatError(f"{where}: 'name' and 'source' must be strings")
    return Deck(tuple(faces), name, source)


def load_deck(path: str | PathLike | None = None) -> Deck:
    """The deck in ``path`` (a JSON deck file), or the shipped default deck when None."""
    if path is None:
        where = f"spieltisch.envs.hilo/data/{DEFAULT_DECK_FILE}"
        text = resources.files("spieltisch.envs.hilo").joinpath("data", DEFAULT_DECK_FILE)
        raw = text.read_text(encoding="utf-8")
    else:
        where = str(path)
        try:
            raw = Path(path).read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as err:
            raise DeckFormatError(f"cannot read deck file {where}: {err}") from None
    try:
        data = json.loads(raw)
    except (json.JSONDecodeError, RecursionError) as err:  # RecursionError: nested too deep
        raise DeckFormatError(f"{where}: not valid JSON: {err}") from None
    return deck_from_dict(data, where)
