"""HiLo – Dein Königreich rules engine: the game, its state and what each player knows.

Rules as the project implements them: ``docs/rules/hilo.md`` (from ``shared/spec/hilo.md`` and the
Schmidt manual; the deck is the project's reconstruction, shipped as ``data/deck.json``). The rules
themselves are the numba kernels of :mod:`.rules`, shared with the batched engine
(:mod:`.batch`); this module wraps them for one game and adds what is not hot: what each player
knows and sampling hidden cards. The position notation and the text diagram are in
:mod:`.notation`.

Players sit in seats ``0 .. n-1`` in playing order (clockwise, so seat ``p + 1`` sits to ``p``'s
left). A layout has 12 slots, ``slot = 6 * row + column``, row 0 on top, columns from the owner's
left. Actions (one flat space of :attr:`HiLoGame.num_actions`):

=============================  ===========================================================
``0``                          take the top card of the discard pile (turn A)
``1``                          draw the top card of the draw pile (turn B)
``2 + i``                      put the held card into slot ``i``; its card goes face up on
                               the discard pile
``14 + i``                     discard the drawn card and turn face-down slot ``i`` face up
``26 + i``                     turn face-down slot ``i`` face up (starting card, phoenix)
``38 + i``                     wizard: give own slot ``i`` ...
``50 + 12 (j - 1) + i``        ... for slot ``i`` of the ``j``-th player to the mover's left
=============================  ===========================================================
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from os import PathLike

import numpy as np
from spieltisch.envs._common.errors import GameOverError, IllegalActionError
from spieltisch.envs._common.jit import direct_entry
from spieltisch.envs._common.notation import check_action
from spieltisch.envs._common.state import EngineState
from spieltisch.envs.hilo import notation
from spieltisch.envs.hilo import rules as R
from spieltisch.envs.hilo.cards import COL_FACE, Deck, DeckFormatError, load_deck
from spieltisch.envs.hilo.rules import SCORE_CATEGORIES, STATE_DTYPE

#: the ``reward`` option of the env and the batch: ``"win"`` (zero-sum win shares,
#: :meth:`HiLoState.returns`) or ``"coins"`` (:func:`coins_rewards`)
REWARD_MODES = ("win", "coins")
_MASK12 = (1 << R.SLOTS) - 1
_BASE1 = R.BASE1
_BASE2 = R.BASE2

Seed = np.random.Generator | int | None


@functools.cache
def _slot_table(base: int) -> tuple[tuple[int, ...], ...]:
    """For every 12-bit slot set, the actions ``base + slot`` of its set bits."""
    return tuple(
        tuple(base + i for i in range(R.SLOTS) if bits >> i & 1) for bits in range(1 << R.SLOTS)
    )


@functools.cache
def _kernels() -> dict[str, Callable]:
    """The compiled entry points of the hot kernels (see ``direct_entry``), on throwaway data."""
    cards = np.zeros((R.MAX_PLAYERS * R.SLOTS + 4, 4), dtype=np.int32)
    cards.setflags(write=False)
    counts = np.ones(1, dtype=np.int32)
    counts.setflags(write=False)
    s = np.zeros(R.state_size(cards.shape[0]), dtype=STATE_DTYPE)
    rng = np.zeros(1, dtype=np.uint64)
    deal = direct_entry(R.deal, s, rng, cards, 2, False)
    step = direct_entry(R.step, s, rng, cards, R.A_REVEAL)
    status = direct_entry(R.packed_status, s, cards)
    out = np.zeros(R.observation_size(2, 1), dtype=np.float32)
    observe = direct_entry(R.observe, s, cards, counts, 0, out)
    mask = direct_entry(R.fill_mask, 0, np.zeros(R.num_actions(2), dtype=np.int8))
    return {"deal": deal, "step": step, "status": status, "observe": observe, "mask": mask}


def new_rng(seed: Seed) -> np.ndarray:
    """A state's own generator (splitmix64 state), seeded from ``seed``."""
    gen = seed if isinstance(seed, np.random.Generator) else np.random.default_rng(seed)
    return np.array([gen.integers(0, 2**63, dtype=np.int64)], dtype=np.uint64)


@dataclass(frozen=True)
class HiLoGame:
    """Game parameters: ``num_players`` (2-4), ``final_round`` and the ``deck``.

    ``final_round=False`` (default, as published): the game ends as soon as a layout is complete
    after a turn's effects. ``True``: every other player has one more turn first. ``deck``: None
    for the shipped deck, the path of a deck file, or a :class:`~.cards.Deck`.
    """

    num_players: int = 2
    final_round: bool = False
    deck: Deck | str | PathLike | None = None
    num_actions: int = field(init=False, repr=False, compare=False)
    observation_size: int = field(init=False, repr=False, compare=False)
    _phase_tables: tuple = field(init=False, repr=False, compare=False)
    _wiz_tables: tuple = field(init=False, repr=False, compare=False)
    _k: dict = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        n = self.num_players
        if isinstance(n, bool) or not isinstance(n, int | np.integer):
            raise TypeError(f"num_players must be an integer, got {n!r}")
        if not 2 <= n <= R.MAX_PLAYERS:
            raise ValueError(f"num_players must be 2, 3 or 4, got {n}")
        object.__setattr__(self, "num_players", int(n))
        if not isinstance(self.final_round, bool):
            raise TypeError(f"final_round must be True or False, got {self.final_round!r}")
        deck = self.deck
        if not isinstance(deck, Deck):
            if deck is not None and not isinstance(deck, str | PathLike):
                raise TypeError(f"deck must be None, a path or a Deck, got {deck!r}")
            deck = load_deck(deck)
            object.__setattr__(self, "deck", deck)
        deck.check_playable(n)
        object.__setattr__(self, "num_actions", R.num_actions(n))
        object.__setattr__(self, "observation_size", R.observation_size(n, deck.num_faces))
        tables = tuple(_slot_table(b) if b >= 0 else None for b in _BASE1)
        object.__setattr__(self, "_phase_tables", tables)
        wiz = tuple(_slot_table(R.A_WIZ_OTHER + R.SLOTS * j) for j in range(n - 1))
        object.__setattr__(self, "_wiz_tables", wiz)
        object.__setattr__(self, "_k", _kernels())

    def __reduce__(self) -> tuple:
        # The compiled kernels are not picklable; the parameters are all a game is.
        return (HiLoGame, (self.num_players, self.final_round, self.deck))

    # --- sizes ---------------------------------------------------------------------------------
    @property
    def num_cards(self) -> int:
        return self.deck.num_cards

    @property
    def state_size(self) -> int:
        return R.state_size(self.deck.num_cards)

    # --- states --------------------------------------------------------------------------------
    def new_initial_state(self, seed: Seed = None) -> HiLoState:
        """A shuffled and dealt game in the setup phase (seat 0 turns up its starting card).

        All chance of the game comes from ``seed`` (a ``numpy.random.Generator`` or an int; None
        draws fresh entropy).
        """
        s = np.empty(self.state_size, dtype=STATE_DTYPE)
        rng = new_rng(seed)
        packed = self._k["deal"](s, rng, self.deck.cards, self.num_players, self.final_round)
        return HiLoState(self, s, rng, packed)

    def state_from_text(self, text: str) -> HiLoState:
        """Read a position written by :meth:`HiLoState.to_text` (see there for the format)."""
        s, rng = notation.parse_position(self, text)
        return HiLoState(self, s, rng)

    # --- names ---------------------------------------------------------------------------------
    def action_name(self, action: int) -> str:
        """A readable name of ``action``, e.g. ``"swap into slot 7 (bottom row, column 2)"``."""
        action = check_action(action, self.num_actions)
        if action == R.A_TAKE:
            return "take the discard"
        if action == R.A_DRAW:
            return "draw"
        names = (
            (R.A_SWAP, "swap into"),
            (R.A_DISCARD_REVEAL, "discard and reveal"),
            (R.A_REVEAL, "reveal"),
            (R.A_WIZ_OWN, "wizard: give own"),
        )
        for base, verb in names:
            if base <= action < base + R.SLOTS:
                return f"{verb} {slot_name(action - base)}"
        k = action - R.A_WIZ_OTHER
        j = k // R.SLOTS + 1
        return f"wizard: take {slot_name(k % R.SLOTS)} of the player {j} to the left"


def slot_name(slot: int) -> str:
    row, col = divmod(slot, R.COLUMNS)
    return f"slot {slot} ({'top' if row == 0 else 'bottom'} row, column {col + 1})"


class HiLoState(EngineState):
    """One HiLo game in progress: the state vector, the game's own generator, and the status.

    Plain data (two numpy arrays and ints), so ``copy``/``pickle`` work and :meth:`clone` is
    cheap. ``s`` is the full state, hidden cards included: hand an agent only :meth:`view`,
    :meth:`observation` or :meth:`sample_consistent` of its seat.
    """

    __slots__ = ("_packed", "current_player", "game", "rng", "s")

    def __init__(
        self, game: HiLoGame, s: np.ndarray, rng: np.ndarray, packed: int | None = None
    ) -> None:
        self.game = game
        self.s = s
        self.rng = rng
        if packed is None:
            packed = game._k["status"](s, game.deck.cards)
        self._packed = int(packed)
        self.current_player = (self._packed >> 4) & 3

    # --- queries -------------------------------------------------------------------------------
    @property
    def phase(self) -> str:
        """One of ``setup turn taken drawn phoenix wizard wizard2 end``."""
        return R.PHASE_NAMES[self._packed & 15]

    @property
    def phase_id(self) -> int:
        return self._packed & 15

    def is_terminal(self) -> bool:
        return self._packed & 15 == R.PH_END

    def legal_actions(self) -> tuple[int, ...]:
        """The legal actions of the player to move (empty when the game is over)."""
        packed = self._packed
        ph = packed & 15
        game = self.game
        if ph == R.PH_DRAWN:
            tables = game._phase_tables
            return (
                tables[R.PH_TAKEN][(packed >> 8) & _MASK12]
                + _slot_table(R.A_DISCARD_REVEAL)[(packed >> 20) & _MASK12]
            )
        if ph == R.PH_WIZARD2:
            out: tuple[int, ...] = ()
            for j, table in enumerate(game._wiz_tables):
                out += table[(packed >> (20 + R.SLOTS * j)) & _MASK12]
            return out
        table = game._phase_tables[ph]
        return () if table is None else table[(packed >> 8) & _MASK12]

    def legal_mask(self) -> np.ndarray:
        mask = np.empty(self.game.num_actions, dtype=np.int8)
        self.game._k["mask"](self._packed, mask)
        return mask

    def is_legal(self, action: int) -> bool:
        packed = self._packed
        ph = packed & 15
        base = _BASE1[ph]
        if base >= 0 and 0 <= action - base < R.SLOTS and (packed >> (8 + action - base)) & 1:
            return True
        base = _BASE2[ph]
        return base >= 0 and 0 <= action - base < 36 and bool((packed >> (20 + action - base)) & 1)

    @property
    def num_turns(self) -> int:
        """Completed turns (setup not counted)."""
        return int(self.s[R.H_TURNS])

    @property
    def move_number(self) -> int:
        """Actions played so far, the starting reveals included."""
        return int(self.s[R.H_MOVES])

    def layout(self, seat: int) -> np.ndarray:
        """A copy of ``seat``'s 12 card ids (slot = 6 * row + column); hidden ones included."""
        base = R.OFF_LAYOUT + R.SLOTS * seat
        return self.s[base : base + R.SLOTS].copy()

    def face_up(self, seat: int) -> np.ndarray:
        base = R.OFF_FACEUP + R.SLOTS * seat
        return self.s[base : base + R.SLOTS].astype(bool)

    def draw_pile(self) -> np.ndarray:
        """Card ids of the draw pile, bottom to top (hidden information)."""
        return self.s[R.OFF_DRAW : R.OFF_DRAW + self.s[R.H_DRAW_N]].copy()

    def discard_pile(self) -> np.ndarray:
        """Card ids of the discard pile, bottom to top (public)."""
        nc = self.game.num_cards
        start = R.OFF_DRAW + nc
        return self.s[start : start + self.s[R.H_DISC_N]].copy()

    def known_in_draw_pile(self) -> np.ndarray:
        """Flags per card id: the card counts as publicly known to lie in the draw pile."""
        nc = self.game.num_cards
        return self.s[R.OFF_DRAW + 2 * nc : R.OFF_DRAW + 3 * nc].astype(bool)

    @property
    def held_card(self) -> int | None:
        """The card the player to move holds (drawn or taken), or None."""
        hand = int(self.s[R.H_HAND])
        return None if hand < 0 else hand

    @property
    def held_from(self) -> str | None:
        return (None, "discard", "draw")[int(self.s[R.H_HAND_SRC])]

    def all_cards(self) -> np.ndarray:
        """Every card id in the game (layouts, piles, held card); a permutation of the deck."""
        n = self.game.num_players
        parts = [
            self.s[R.OFF_LAYOUT : R.OFF_LAYOUT + R.SLOTS * n],
            self.draw_pile(),
            self.discard_pile(),
        ]
        if self.held_card is not None:
            parts.append(np.array([self.held_card], dtype=STATE_DTYPE))
        return np.concatenate(parts)

    # --- scoring -------------------------------------------------------------------------------
    def coins(self) -> tuple[int, ...]:
        """Coins per seat of the layouts as they lie, face-down cards counted (the final score
        once the game is over)."""
        return tuple(int(x) for x in self._scores()[:, -1])

    def score_breakdown(self) -> list[dict[str, int]]:
        """Per seat: coins of each scoring rule (:data:`SCORE_CATEGORIES`) and ``total``."""
        table = self._scores()
        return [
            {
                **{k: int(v) for k, v in zip(SCORE_CATEGORIES, row[:-1], strict=True)},
                "total": int(row[-1]),
            }
            for row in table
        ]

    def _scores(self) -> np.ndarray:
        out = np.zeros((self.game.num_players, len(SCORE_CATEGORIES) + 1), dtype=np.int64)
        R.score_all(self.s, self.game.deck.cards, out)
        return out

    def winners(self) -> tuple[int, ...]:
        """Seats with the most coins once the game is over (ties share the win); () before."""
        if not self.is_terminal():
            return ()
        coins = self.coins()
        best = max(coins)
        return tuple(p for p, c in enumerate(coins) if c == best)

    def returns(self) -> tuple[float, ...]:
        """Zero-sum result per seat: each of k winners +1/k, every other player -1/(n-k); all
        tied: 0 each. Zeros before the end."""
        n = self.game.num_players
        if not self.is_terminal():
            return (0.0,) * n
        won = self.winners()
        k = len(won)
        if k == n:
            return (0.0,) * n
        return tuple(1.0 / k if p in won else -1.0 / (n - k) for p in range(n))

    # --- moves ---------------------------------------------------------------------------------
    def apply(self, action: int) -> None:
        """Play ``action`` for the player to move. Illegal input raises and changes nothing."""
        if type(action) is not int or not self.is_legal(action):
            action = self._validated(action)
        game = self.game
        packed = game._k["step"](self.s, self.rng, game.deck.cards, action)
        self._packed = packed
        self.current_player = (packed >> 4) & 3

    def _validated(self, action: object) -> int:
        action = check_action(action, self.game.num_actions)
        if self.is_terminal():
            raise GameOverError("the game is over; no further moves can be played")
        if self.is_legal(action):
            return action
        raise IllegalActionError(
            f"action {action} ({self.game.action_name(action)}) is illegal in phase "
            f"{self.phase!r} for seat {self.current_player}; legal actions: "
            f"{list(self.legal_actions())}"
        )

    def clone(self) -> HiLoState:
        c = HiLoState.__new__(HiLoState)
        c.game = self.game
        c.s = self.s.copy()
        c.rng = self.rng.copy()
        c._packed = self._packed
        c.current_player = self.current_player
        return c

    def _canonical(self) -> tuple:
        """Everything that defines the game, with cards as faces (equal faces are equal cards)."""
        nc = self.game.num_cards
        faces = self.game.deck.cards[:, COL_FACE]
        s = self.s
        known = self.known_in_draw_pile()

        def f(ids: np.ndarray) -> bytes:
            return np.where(ids >= 0, faces[np.maximum(ids, 0)], -1).astype(np.int32).tobytes()

        hand = int(s[R.H_HAND])
        header = s[: R.HEADER].copy()
        header[R.H_HAND] = faces[hand] if hand >= 0 else -1
        return (
            header.tobytes(),
            f(s[R.OFF_LAYOUT : R.OFF_DRAW]),
            s[R.OFF_FACEUP : R.OFF_DRAW].tobytes(),
            f(s[R.OFF_DRAW : R.OFF_DRAW + 2 * nc]),
            known[self.draw_pile()].tobytes(),
            bool(known[hand]) if hand >= 0 else None,
            int(self.rng[0]),
        )

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, HiLoState):
            return NotImplemented
        return self.game == other.game and self._canonical() == other._canonical()

    def __hash__(self) -> int:
        return hash((self.game.num_players, self._canonical()))

    # --- what a player knows -------------------------------------------------------------------
    def _hand_visible_to(self, player: int) -> bool:
        return self.held_from == "discard" or player == self.current_player

    def observation(self, player: int) -> np.ndarray:
        """The float32 observation vector of ``player`` (layout: :mod:`spieltisch.envs.hilo.env`).

        Holds exactly what ``player`` may know; its own face-down cards are unknown to it too.
        """
        player = self._check_player(player)
        game = self.game
        out = np.zeros(game.observation_size, dtype=np.float32)
        game._k["observe"](self.s, game.deck.cards, game.deck.face_counts, player, out)
        return out

    def view(self, player: int | None) -> PlayerView:
        """What ``player`` knows (``None``: what every player knows), as readable data."""
        if player is not None:
            player = self._check_player(player)
        game = self.game
        deck = game.deck
        faces = deck.card_faces
        known = self.known_in_draw_pile()
        layouts = []
        for seat in range(game.num_players):
            ids, up = self.layout(seat), self.face_up(seat)
            layouts.append(
                tuple(faces[c].code if u else None for c, u in zip(ids, up, strict=True))
            )
        hand = self.held_card
        hand_code = None
        hand_hidden = False
        known_codes = [faces[c].code for c in self.draw_pile() if known[c]]
        if hand is not None:
            if self.held_from == "discard" or (
                player is not None and player == self.current_player
            ):
                hand_code = faces[hand].code
            else:
                hand_hidden = True
                if known[hand]:
                    known_codes.append(faces[hand].code)
        coins = self.coins() if self.is_terminal() else None
        return PlayerView(
            num_players=game.num_players,
            viewer=player,
            current_player=self.current_player,
            phase=self.phase,
            layouts=tuple(layouts),
            discard=tuple(faces[c].code for c in self.discard_pile()),
            draw_size=int(self.s[R.H_DRAW_N]),
            known_in_draw=tuple(sorted(known_codes)),
            held=hand_code,
            held_from=self.held_from,
            held_hidden=hand_hidden,
            wizard_slot=None if self.s[R.H_WIZ_SLOT] < 0 else int(self.s[R.H_WIZ_SLOT]),
            final_round=game.final_round,
            final_turns_left=max(int(self.s[R.H_FINAL_LEFT]), 0),
            turns=self.num_turns,
            coins=coins,
        )

    def information_state_string(self, player: int) -> str:
        """A canonical text of :meth:`view`: equal exactly when ``player`` cannot tell two
        states apart."""
        return self.view(player).to_text()

    def sample_consistent(self, player: int, seed: Seed = None) -> HiLoState:
        """A full state that ``player`` cannot tell apart from this one, drawn at random.

        Face-down cards, the unknown part and order of the draw pile, another player's drawn
        card and the game's future chance are resampled; everything ``player`` knows is kept.
        Every unknown card is equally likely at every unknown place (the pile's known cards count
        by face, see ``docs/rules/hilo.md``).
        """
        player = self._check_player(player)
        gen = seed if isinstance(seed, np.random.Generator) else np.random.default_rng(seed)
        c = self.clone()
        hidden = self.held_from == "draw" and player != self.current_player
        tmp = new_rng(gen)
        R.resample_hidden(c.s, tmp, self.game.deck.cards, hidden)
        c.rng = new_rng(gen)
        c._packed = int(self.game._k["status"](c.s, self.game.deck.cards))
        return c

    def _check_player(self, player: object) -> int:
        n = self.game.num_players
        if isinstance(player, bool) or not isinstance(player, int | np.integer):
            raise TypeError(f"player must be a seat number 0..{n - 1}, got {player!r}")
        if not 0 <= player < n:
            raise ValueError(f"player must be a seat number 0..{n - 1}, got {player}")
        return int(player)

    # --- text ----------------------------------------------------------------------------------
    def to_text(self) -> str:
        """Position notation (one line of ``key=value`` fields), e.g.::

            p0=?Re-LR,Ki-LR,...|... p1=... draw=?,... discard=Re-L hand=- to_move=0 phase=turn
            turns=4 moves=11 rng=00ab...

        ``pN`` is seat N's layout, top row ``|`` bottom row, 6 cards each from the owner's left;
        ``?`` marks a face-down card. ``draw`` lists the draw pile bottom to top, ``!`` marking a
        card whose face is public knowledge; ``discard`` bottom to top; ``-`` is an empty pile;
        ``draw=*`` or ``discard=*`` (input only) means all remaining cards in deck order.
        ``hand=draw:CARD`` or ``hand=discard:CARD`` is the card held by the player to move.
        Optional fields: ``wizslot`` (phase wizard2: the own slot chosen), ``ender`` (seat whose
        turn started the end), ``final`` (turns left in the final round), ``turns``, ``moves``,
        ``rng`` (16 hex digits; without it a state read here has generator 0, and an env reset
        to the text draws one from the reset's seed).
        Cards are face codes (:attr:`Face.code`, e.g. ``Ki-LR``, ``Ph$``, ``Wz``).
        """
        return notation.format_position(self)

    def __str__(self) -> str:
        return notation.render_text(self)

    def __repr__(self) -> str:
        return f"HiLoState({self.to_text()!r})"


@dataclass(frozen=True)
class PlayerView:
    """What one player knows (``viewer``; None = what everybody knows). Cards are face codes;
    ``None`` in a layout is a face-down card. Seats are absolute. ``known_in_draw``: the cards
    known to lie in the draw pile, and, while the player to move holds a card just drawn that
    the viewer cannot see (``held_hidden``), that card too if it was one of them (the viewer
    knows it is among these, not which)."""

    num_players: int
    viewer: int | None
    current_player: int
    phase: str
    layouts: tuple[tuple[str | None, ...], ...]
    discard: tuple[str, ...]
    draw_size: int
    known_in_draw: tuple[str, ...]
    held: str | None
    held_from: str | None
    held_hidden: bool
    wizard_slot: int | None
    final_round: bool
    final_turns_left: int
    turns: int
    coins: tuple[int, ...] | None

    def to_text(self) -> str:
        lays = " ".join(
            f"p{p}=" + ",".join(c or "?" for c in lay) for p, lay in enumerate(self.layouts)
        )
        held = "-" if self.held_from is None else f"{self.held_from}:{self.held or '?'}"
        return (
            f"viewer={self.viewer} {lays} draw={self.draw_size}"
            f" known={','.join(self.known_in_draw)}"
            f" discard={','.join(self.discard)} hand={held} to_move={self.current_player}"
            f" phase={self.phase} wizslot={self.wizard_slot} final={int(self.final_round)}:"
            f"{self.final_turns_left} turns={self.turns}"
        )


def score_faces(game: HiLoGame, layout: Sequence[str]) -> dict[str, int]:
    """Score a layout given as 12 face codes (top row, then bottom row), e.g. for examples."""
    if len(layout) != R.SLOTS:
        raise ValueError(f"a layout has 12 cards, got {len(layout)}")
    deck = game.deck
    ids = []
    for code in layout:
        face = deck.face_of_code(code)
        ids.append(next(c for c, f in enumerate(deck.card_faces) if f == face))
    out = np.zeros(len(SCORE_CATEGORIES) + 1, dtype=np.int64)
    R.score_layout(np.array(ids, dtype=STATE_DTYPE), deck.cards, out)
    return {
        **{k: int(v) for k, v in zip(SCORE_CATEGORIES, out[:-1], strict=True)},
        "total": int(out[-1]),
    }


def coins_rewards(coins: np.ndarray) -> np.ndarray:
    """The ``reward="coins"`` outcome: each seat's coins minus the mean of the other seats'
    coins, along the last axis (one game ``(n,)`` or a batch ``(games, n)``), as float64."""
    coins = np.asarray(coins, dtype=np.float64)
    n = coins.shape[-1]
    return coins - (coins.sum(axis=-1, keepdims=True) - coins) / (n - 1)


__all__ = [
    "REWARD_MODES",
    "SCORE_CATEGORIES",
    "DeckFormatError",
    "HiLoGame",
    "HiLoState",
    "PlayerView",
    "coins_rewards",
    "score_faces",
]
