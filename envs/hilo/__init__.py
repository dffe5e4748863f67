"""HiLo – Dein Königreich: deck (:mod:`.cards`), rules kernels (:mod:`.rules`), engine
(:mod:`.engine`), text notation and diagram (:mod:`.notation`), pictures (:mod:`.draw`), batched
engine (:mod:`.batch`), PettingZoo env (:mod:`.env`)."""

from spieltisch.envs.hilo.cards import Deck, DeckFormatError, Face, load_deck
from spieltisch.envs.hilo.engine import HiLoGame, HiLoState, PlayerView, score_faces

__all__ = [
    "Deck",
    "DeckFormatError",
    "Face",
    "HiLoGame",
    "HiLoState",
    "PlayerView",
    "load_deck",
    "score_faces",
]
