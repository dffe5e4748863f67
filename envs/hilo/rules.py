"""The HiLo rules as numba kernels over one flat int32 state vector (plus a 64-bit generator).

Every rule of ``docs/rules/hilo.md`` is implemented once, here: the single-game state
(:mod:`.engine`) and the batched engine (:mod:`.batch`) call these kernels. Nothing here imports
an RL library or draws anything.

State vector (int32), fixed offsets so one array row serves any number of players::

    0  NP      number of players            7  HAND_SRC   0 none, 1 discard pile, 2 draw pile
    1  NC      number of cards              8  WIZ_SLOT   own slot chosen for a wizard swap, -1
    2  PLAYER  seat to move                 9  ENDER      seat whose turn started the end, -1
    3  PHASE   decision phase (PH_*)       10  FINAL_LEFT turns left in the final round, -1 off
    4  DRAW_N  cards in the draw pile      11  FINAL_ROUND the ``final_round`` option (0/1)
    5  DISC_N  cards in the discard pile   12  TURNS      completed turns
    6  HAND    card held by the mover, -1  13  MOVES      actions played (setup reveals too)
    16 ..  63  layouts: seat p, slot i at 16 + 12 p + i  (slot = 6 * row + column, row 0 on top)
    64 .. 111  face-up flags, same indexing
    112 + k          draw pile, bottom (k = 0) to top; unused entries -1
    112 + NC + k     discard pile, bottom to top; unused entries -1
    112 + 2 NC + c   "known" flag of card c: its face is public knowledge while it lies in the
                     draw pile (returned starting wizards, rebuilt discards); see ``_draw_top``

Chance (deal, shuffles) comes from a per-state splitmix64 generator kept in a one-element uint64
array, seeded from the caller's ``numpy.random.Generator``: a state carries its own future, so
clones, pickles and batched rows replay identically.

Packed result of :func:`step` / :func:`packed_status`: bits 0-3 phase, 4-5 player to move,
8-19 first slot set, 20-55 second slot set; bit ``i`` of a set enables action
``BASE1[phase] + i`` (``BASE2[phase] + i``), see :func:`fill_mask`.
"""

from __future__ import annotations

import numba
import numpy as np
from spieltisch.envs.hilo.cards import (
    BARD,
    COL_COIN,
    COL_FACE,
    COL_HALVES,
    COL_KIND,
    DRAGON,
    DRAGON_KEEPER,
    HALF_B,
    HALF_L,
    HALF_R,
    HALF_T,
    KING,
    NUM_KINDS,
    PHOENIX,
    UNICORN_KEEPER,
    WIZARD,
)

STATE_DTYPE = np.int32  # of the state vector
MAX_PLAYERS = 4
SLOTS = 12
COLUMNS = 6

H_NP, H_NC, H_PLAYER, H_PHASE, H_DRAW_N, H_DISC_N, H_HAND, H_HAND_SRC = 0, 1, 2, 3, 4, 5, 6, 7
H_WIZ_SLOT, H_ENDER, H_FINAL_LEFT, H_FINAL_ROUND, H_TURNS, H_MOVES = 8, 9, 10, 11, 12, 13
HEADER = 16
OFF_LAYOUT = HEADER
OFF_FACEUP = OFF_LAYOUT + MAX_PLAYERS * SLOTS
OFF_DRAW = OFF_FACEUP + MAX_PLAYERS * SLOTS
SRC_NONE, SRC_DISCARD, SRC_DRAW = 0, 1, 2

# Decision phases.
PH_SETUP, PH_TURN, PH_TAKEN, PH_DRAWN, PH_PHOENIX, PH_WIZARD, PH_WIZARD2, PH_END = range(8)
NUM_PHASES = 8
PHASE_NAMES = ("setup", "turn", "taken", "drawn", "phoenix", "wizard", "wizard2", "end")

# Actions (one flat space; the wizard targets depend on the number of players).
A_TAKE = 0  # take the top card of the discard pile (turn A)
A_DRAW = 1  # draw the top card of the draw pile (turn B)
A_SWAP = 2  # + slot: put the held card into the slot, the slot's card goes onto the discard pile
A_DISCARD_REVEAL = A_SWAP + SLOTS  # + slot: discard the drawn card, turn the slot face up
A_REVEAL = A_DISCARD_REVEAL + SLOTS  # + slot: turn the slot face up (starting card, phoenix)
A_WIZ_OWN = A_REVEAL + SLOTS  # + slot: own card for the wizard swap
A_WIZ_OTHER = A_WIZ_OWN + SLOTS  # + 12 (j - 1) + slot: card of the j-th player to the left


def state_size(num_cards: int) -> int:
    """Length of the state vector for a deck of ``num_cards`` cards."""
    return OFF_DRAW + 3 * num_cards


def num_actions(num_players: int) -> int:
    return A_WIZ_OTHER + SLOTS * (num_players - 1)


# --- chance ------------------------------------------------------------------------------------
@numba.njit(cache=True, nogil=True)
def _next_u64(rng):
    """splitmix64: advance the generator in ``rng[0]`` and return 64 random bits."""
    z = rng[0] + np.uint64(0x9E3779B97F4A7C15)
    rng[0] = z
    z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    return z ^ (z >> np.uint64(31))


@numba.njit(cache=True, nogil=True)
def _below(rng, n):
    """A random integer in ``0 .. n-1`` (bias below 1e-17 for our small ``n``)."""
    return np.int64(_next_u64(rng) % np.uint64(n))


@numba.njit(cache=True, nogil=True)
def _shuffle(s, start, count, rng):
    """Fisher-Yates shuffle of ``s[start : start + count]``."""
    for i in range(count - 1, 0, -1):
        j = _below(rng, i + 1)
        t = s[start + i]
        s[start + i] = s[start + j]
        s[start + j] = t


# --- piles -------------------------------------------------------------------------------------
@numba.njit(cache=True, nogil=True)
def _draw_top(s, cards):
    """Take the top card of the draw pile.

    Known flags count by face, not by card: if the drawn card is not flagged but a card with the
    same face in the pile is, the flag moves to the drawn card. So the public count of known
    faces in "draw pile + drawn card" never changes on a draw, and nobody learns whether the
    drawn card was "the" known one (they look the same).
    """
    nc = s[H_NC]
    known = OFF_DRAW + 2 * nc
    d = s[H_DRAW_N] - 1
    card = s[OFF_DRAW + d]
    s[OFF_DRAW + d] = -1
    s[H_DRAW_N] = d
    if s[known + card] == 0:
        face = cards[card, COL_FACE]
        for k in range(d):
            other = s[OFF_DRAW + k]
            if s[known + other] != 0 and cards[other, COL_FACE] == face:
                s[known + other] = 0
                s[known + card] = 1
                break
    return card


@numba.njit(cache=True, nogil=True)
def _push_discard(s, card):
    nc = s[H_NC]
    s[OFF_DRAW + nc + s[H_DISC_N]] = card
    s[H_DISC_N] += 1


@numba.njit(cache=True, nogil=True)
def _rebuild_draw_pile(s, rng):
    """Rule: an empty draw pile is rebuilt by shuffling all discards but the top one."""
    nc = s[H_NC]
    disc = OFF_DRAW + nc
    known = OFF_DRAW + 2 * nc
    n = s[H_DISC_N] - 1
    top = s[disc + n]
    for k in range(n):
        card = s[disc + k]
        s[OFF_DRAW + k] = card
        s[known + card] = 1  # everybody saw these cards: the pile's content is public
        s[disc + k] = -1
    s[disc + n] = -1
    s[disc] = top
    s[H_DISC_N] = 1
    s[H_DRAW_N] = n
    _shuffle(s, OFF_DRAW, n, rng)


# --- legal choices -----------------------------------------------------------------------------
@numba.njit(cache=True, nogil=True)
def _facedown_bits(s, p):
    bits = 0
    base = OFF_FACEUP + SLOTS * p
    for i in range(SLOTS):
        if s[base + i] == 0:
            bits |= 1 << i
    return bits


@numba.njit(cache=True, nogil=True)
def _swappable_bits(s, cards, p):
    """Slots a wizard swap may use: every card but a face-up wizard (face-down cards are
    unknown to all, a face-down wizard included)."""
    bits = 0
    for i in range(SLOTS):
        card = s[OFF_LAYOUT + SLOTS * p + i]
        if s[OFF_FACEUP + SLOTS * p + i] == 0 or cards[card, COL_KIND] != WIZARD:
            bits |= 1 << i
    return bits


@numba.njit(cache=True, nogil=True)
def _wizard_target_bits(s, cards, p):
    """Bit ``12 (j - 1) + i``: slot ``i`` of the ``j``-th player to ``p``'s left may be taken."""
    n = s[H_NP]
    bits = 0
    for j in range(1, n):
        bits |= _swappable_bits(s, cards, (p + j) % n) << (SLOTS * (j - 1))
    return bits


@numba.njit(cache=True, nogil=True)
def packed_status(s, cards):
    """Phase, player to move and the sets of legal slots, packed (see the module docstring)."""
    ph = s[H_PHASE]
    p = s[H_PLAYER]
    b1 = 0
    b2 = 0
    if ph in (PH_SETUP, PH_PHOENIX):
        b1 = _facedown_bits(s, p)
    elif ph == PH_TURN:
        if s[H_DISC_N] > 0:
            b1 |= 1
        if s[H_DRAW_N] > 0:
            b1 |= 2
    elif ph == PH_TAKEN:
        b1 = (1 << SLOTS) - 1
    elif ph == PH_DRAWN:
        b1 = (1 << SLOTS) - 1
        b2 = _facedown_bits(s, p)
    elif ph == PH_WIZARD:
        if _wizard_target_bits(s, cards, p) != 0:
            b1 = _swappable_bits(s, cards, p)
    elif ph == PH_WIZARD2:
        b2 = _wizard_target_bits(s, cards, p)
    return np.int64(ph) | (np.int64(p) << 4) | (np.int64(b1) << 8) | (np.int64(b2) << 20)


# --- setup -------------------------------------------------------------------------------------
@numba.njit(cache=True, nogil=True)
def deal(s, rng, cards, num_players, final_round):
    """Rule (setup): shuffle, deal 12 face-down cards per player, turn up one discard."""
    nc = cards.shape[0]
    s[:] = -1
    for k in range(HEADER):
        s[k] = 0
    s[H_NP] = num_players
    s[H_NC] = nc
    s[H_PHASE] = PH_SETUP
    s[H_HAND] = -1
    s[H_WIZ_SLOT] = -1
    s[H_ENDER] = -1
    s[H_FINAL_LEFT] = -1
    s[H_FINAL_ROUND] = 1 if final_round else 0
    for k in range(MAX_PLAYERS * SLOTS):
        s[OFF_FACEUP + k] = 0
    for c in range(nc):
        s[OFF_DRAW + c] = c
        s[OFF_DRAW + 2 * nc + c] = 0
    _shuffle(s, OFF_DRAW, nc, rng)
    top = nc
    for k in range(num_players * SLOTS):
        top -= 1
        s[OFF_LAYOUT + k] = s[OFF_DRAW + top]
        s[OFF_DRAW + top] = -1
    top -= 1
    s[OFF_DRAW + nc] = s[OFF_DRAW + top]
    s[OFF_DRAW + top] = -1
    s[H_DISC_N] = 1
    s[H_DRAW_N] = top
    return packed_status(s, cards)


@numba.njit(cache=True, nogil=True)
def _starting_reveal(s, rng, cards, p, slot):
    """Rule (setup): turn up the chosen card; a wizard goes back into the draw pile (shuffled)
    and the top card of the draw pile takes its place face up, again while it is a wizard.
    A phoenix turned up here has no effect."""
    nc = s[H_NC]
    known = OFF_DRAW + 2 * nc
    pos = OFF_LAYOUT + SLOTS * p + slot
    s[OFF_FACEUP + SLOTS * p + slot] = 1
    card = s[pos]
    while cards[card, COL_KIND] == WIZARD:
        d = s[H_DRAW_N]
        s[OFF_DRAW + d] = card
        s[H_DRAW_N] = d + 1
        s[known + card] = 1
        _shuffle(s, OFF_DRAW, d + 1, rng)
        card = _draw_top(s, cards)
        s[known + card] = 0
        s[pos] = card


# --- a turn ------------------------------------------------------------------------------------
@numba.njit(cache=True, nogil=True)
def _end_turn(s, rng):
    """Rule (end of the game): after the turn's effects, a complete layout (all 12 face up)
    ends the game, or with ``final_round`` starts one more turn for every other player."""
    n = s[H_NP]
    p = s[H_PLAYER]
    s[H_TURNS] += 1
    complete = False
    for q in range(n):
        if _facedown_bits(s, q) == 0:
            complete = True
    over = False
    if s[H_FINAL_ROUND] != 0:
        if s[H_FINAL_LEFT] > 0:
            s[H_FINAL_LEFT] -= 1
            over = s[H_FINAL_LEFT] == 0
        elif complete:
            s[H_ENDER] = p
            s[H_FINAL_LEFT] = n - 1
    elif complete:
        s[H_ENDER] = p
        over = True
    if over:
        for k in range(n * SLOTS):  # all face-down cards are turned up, without effects
            s[OFF_FACEUP + k] = 1
        s[H_PHASE] = PH_END
        return
    if s[H_DRAW_N] == 0:
        _rebuild_draw_pile(s, rng)
    s[H_PLAYER] = (p + 1) % n
    s[H_PHASE] = PH_TURN


@numba.njit(cache=True, nogil=True)
def step(s, rng, cards, action):
    """Play ``action`` (already checked to be legal) for the player to move, in place.

    Resolves everything that needs no decision (effects without a choice lapse, end of turn,
    end of game, rebuilding the draw pile) and returns :func:`packed_status` of the result.
    """
    ph = s[H_PHASE]
    p = s[H_PLAYER]
    nc = s[H_NC]
    known = OFF_DRAW + 2 * nc
    lay = OFF_LAYOUT + SLOTS * p
    up = OFF_FACEUP + SLOTS * p
    s[H_MOVES] += 1

    if ph == PH_SETUP:
        _starting_reveal(s, rng, cards, p, action - A_REVEAL)
        if p + 1 < s[H_NP]:
            s[H_PLAYER] = p + 1
        else:
            s[H_PLAYER] = 0
            s[H_PHASE] = PH_TURN
        return packed_status(s, cards)

    if ph == PH_TURN:
        if action == A_TAKE:  # turn A
            d = s[H_DISC_N] - 1
            s[H_HAND] = s[OFF_DRAW + nc + d]
            s[OFF_DRAW + nc + d] = -1
            s[H_DISC_N] = d
            s[H_HAND_SRC] = SRC_DISCARD
            s[H_PHASE] = PH_TAKEN
        else:  # turn B: only the drawer sees the card until it is placed or discarded
            s[H_HAND] = _draw_top(s, cards)
            s[H_HAND_SRC] = SRC_DRAW
            s[H_PHASE] = PH_DRAWN
        return packed_status(s, cards)

    if ph == PH_WIZARD:
        s[H_WIZ_SLOT] = action - A_WIZ_OWN
        s[H_PHASE] = PH_WIZARD2
        return packed_status(s, cards)

    arrived = -1  # card that came face up into the mover's layout (it may trigger an effect)
    if ph in (PH_TAKEN, PH_DRAWN):
        hand = s[H_HAND]
        s[known + hand] = 0
        s[H_HAND] = -1
        s[H_HAND_SRC] = SRC_NONE
        if action < A_DISCARD_REVEAL:  # swap the held card with any card of the layout
            slot = action - A_SWAP
            _push_discard(s, s[lay + slot])  # face up onto the discard pile, no effect
            s[lay + slot] = hand
            s[up + slot] = 1
            arrived = hand
        else:  # discard the drawn card and turn one face-down card face up
            slot = action - A_DISCARD_REVEAL
            _push_discard(s, hand)
            s[up + slot] = 1
            arrived = s[lay + slot]
    elif ph == PH_PHOENIX:
        slot = action - A_REVEAL
        s[up + slot] = 1
        arrived = s[lay + slot]
    else:  # PH_WIZARD2: swap the chosen own card with another player's card, faces kept
        k = action - A_WIZ_OTHER
        q = (p + 1 + k // SLOTS) % s[H_NP]
        own = s[H_WIZ_SLOT]
        s[H_WIZ_SLOT] = -1
        a = lay + own
        b = OFF_LAYOUT + SLOTS * q + k % SLOTS
        t = s[a]
        s[a] = s[b]
        s[b] = t
        a = up + own
        b = OFF_FACEUP + SLOTS * q + k % SLOTS
        t = s[a]
        s[a] = s[b]
        s[b] = t
        if s[up + own] != 0:
            arrived = s[lay + own]

    # Effects: a wizard or phoenix arriving face up acts now (a chain, one effect at a time;
    # every action brings at most one card face up into the mover's layout).
    if arrived >= 0:
        kind = cards[arrived, COL_KIND]
        if kind == WIZARD:
            if _wizard_target_bits(s, cards, p) != 0 and _swappable_bits(s, cards, p) != 0:
                s[H_PHASE] = PH_WIZARD
                return packed_status(s, cards)
        elif kind == PHOENIX and _facedown_bits(s, p) != 0:
            s[H_PHASE] = PH_PHOENIX
            return packed_status(s, cards)
    _end_turn(s, rng)
    return packed_status(s, cards)


# --- scoring -----------------------------------------------------------------------------------
@numba.njit(cache=True, nogil=True)
def _is_person(kind):
    return kind <= UNICORN_KEEPER  # resident, king, bard, the three keepers


#: the scoring rules in the order of :func:`score_layout`'s output (the total follows)
SCORE_CATEGORIES = ("half_coins", "whole_coins", "king", "bard", "keepers")


@numba.njit(cache=True, nogil=True)
def voided_slots(layout, cards, out):
    """``out[i]``: slot ``i``'s card is voided, the other card of its column being a wizard
    (two wizards in one column void each other). What the scoring ignores, and the board marks."""
    for c in range(COLUMNS):
        out[c] = cards[layout[COLUMNS + c], COL_KIND] == WIZARD
        out[COLUMNS + c] = cards[layout[c], COL_KIND] == WIZARD


@numba.njit(cache=True, nogil=True)
def score_layout(layout, cards, out):
    """Coins of one 12-card layout (card ids, slot = 6 * row + column), all rules of scoring.

    ``out`` receives (half coins, whole coins, king, bard, keepers, total). A wizard voids the
    card in its column's other row; a voided slot and a wizard count as empty.
    """
    active = np.empty(SLOTS, dtype=np.bool_)
    voided_slots(layout, cards, active)
    for i in range(SLOTS):  # a wizard scores nothing, a voided card neither
        active[i] = not (active[i] or cards[layout[i], COL_KIND] == WIZARD)

    halves = 0
    for r in range(2):
        for c in range(COLUMNS - 1):
            i = r * COLUMNS + c
            if (
                active[i]
                and active[i + 1]
                and cards[layout[i], COL_HALVES] & HALF_R
                and cards[layout[i + 1], COL_HALVES] & HALF_L
            ):
                halves += 1
    for c in range(COLUMNS):
        if (
            active[c]
            and active[COLUMNS + c]
            and cards[layout[c], COL_HALVES] & HALF_B
            and cards[layout[COLUMNS + c], COL_HALVES] & HALF_T
        ):
            halves += 1

    whole = 0
    kings = 0
    bard = 0
    keepers = np.zeros(3, dtype=np.int64)
    animals = np.zeros(3, dtype=np.int64)
    for i in range(SLOTS):
        if not active[i]:
            continue
        card = layout[i]
        kind = cards[card, COL_KIND]
        whole += cards[card, COL_COIN]
        if kind == KING:
            kings += 1
        elif kind == BARD:
            r = i // COLUMNS
            c = i % COLUMNS
            if c > 0 and active[i - 1] and _is_person(cards[layout[i - 1], COL_KIND]):
                bard += 1
            if c < COLUMNS - 1 and active[i + 1] and _is_person(cards[layout[i + 1], COL_KIND]):
                bard += 1
            if r == 1 and active[c] and _is_person(cards[layout[c], COL_KIND]):
                bard += 1  # the card above; the bard "does not kick downwards"
        elif DRAGON_KEEPER <= kind <= UNICORN_KEEPER:
            keepers[kind - DRAGON_KEEPER] += 1
        elif DRAGON <= kind <= DRAGON + 2:
            animals[kind - DRAGON] += 1
    keeper_coins = 0
    for k in range(3):
        keeper_coins += 2 * min(animals[k], 2 * keepers[k])
    out[0] = halves
    out[1] = whole
    out[2] = kings
    out[3] = bard
    out[4] = keeper_coins
    out[5] = halves + whole + kings + bard + keeper_coins


@numba.njit(cache=True, nogil=True)
def score_all(s, cards, out):
    """``out[p]`` = :func:`score_layout` of seat ``p``'s layout (face-down cards included)."""
    for p in range(s[H_NP]):
        score_layout(s[OFF_LAYOUT + SLOTS * p : OFF_LAYOUT + SLOTS * (p + 1)], cards, out[p])


# --- information -------------------------------------------------------------------------------
@numba.njit(cache=True, nogil=True)
def resample_hidden(s, rng, cards, hand_hidden):
    """Replace everything a player cannot know by a random consistent alternative, in place.

    Unknown cards (face-down layout cards, unflagged draw-pile cards, and the drawn card when
    ``hand_hidden``) are dealt anew over their positions; then the draw pile is shuffled (its
    order is unknown to everybody). A hidden drawn card is put back on the pile first and drawn
    again afterwards, since it was the top card of a shuffled pile.
    """
    nc = s[H_NC]
    known = OFF_DRAW + 2 * nc
    if hand_hidden:
        d = s[H_DRAW_N]
        s[OFF_DRAW + d] = s[H_HAND]
        s[H_DRAW_N] = d + 1
    positions = np.empty(nc, dtype=np.int64)
    m = 0
    for k in range(s[H_NP] * SLOTS):
        if s[OFF_FACEUP + k] == 0:
            positions[m] = OFF_LAYOUT + k
            m += 1
    for k in range(s[H_DRAW_N]):
        if s[known + s[OFF_DRAW + k]] == 0:
            positions[m] = OFF_DRAW + k
            m += 1
    values = np.empty(m, dtype=np.int32)
    for k in range(m):
        values[k] = s[positions[k]]
    # Sorted first, so that the result depends only on what the player knows (which cards are
    # unknown), never on where the unknown cards really lie: the same generator gives the same
    # sample for every state the player cannot tell apart.
    values.sort()
    for i in range(m - 1, 0, -1):
        j = _below(rng, i + 1)
        t = values[i]
        values[i] = values[j]
        values[j] = t
    for k in range(m):
        s[positions[k]] = values[k]
    s[OFF_DRAW : OFF_DRAW + s[H_DRAW_N]].sort()  # the pile's real order is unknown: as above
    _shuffle(s, OFF_DRAW, s[H_DRAW_N], rng)
    if hand_hidden:
        s[H_HAND] = _draw_top(s, cards)


@numba.njit(cache=True, nogil=True)
def _card_features(cards, card, out, at):
    """16 features of a face at ``out[at:]``: kind one-hot (11), halves L R T B, whole coin."""
    out[at + cards[card, COL_KIND]] = 1.0
    h = cards[card, COL_HALVES]
    out[at + NUM_KINDS] = h & HALF_L
    out[at + NUM_KINDS + 1] = (h & HALF_R) >> 1
    out[at + NUM_KINDS + 2] = (h & HALF_T) >> 2
    out[at + NUM_KINDS + 3] = (h & HALF_B) >> 3
    out[at + NUM_KINDS + 4] = cards[card, COL_COIN]


CARD_FEATURES = NUM_KINDS + 5
SLOT_FEATURES = CARD_FEATURES + 1


@numba.njit(cache=True, nogil=True)
def observe(s, cards, face_counts, viewer, out):
    """Write ``viewer``'s observation into ``out`` (zeros on entry); layout in :mod:`.env`."""
    n = s[H_NP]
    nc = s[H_NC]
    nf = face_counts.shape[0]
    known = OFF_DRAW + 2 * nc
    mover = s[H_PLAYER]
    ph = s[H_PHASE]
    unseen = np.empty(nf, dtype=np.int64)
    for f in range(nf):
        unseen[f] = face_counts[f]
    at = 0
    for r in range(n):
        q = (viewer + r) % n
        for i in range(SLOTS):
            if s[OFF_FACEUP + SLOTS * q + i] == 0:
                out[at] = 1.0
            else:
                card = s[OFF_LAYOUT + SLOTS * q + i]
                _card_features(cards, card, out, at + 1)
                unseen[cards[card, COL_FACE]] -= 1
            at += SLOT_FEATURES
    d_n = s[H_DISC_N]
    if d_n > 0:
        _card_features(cards, s[OFF_DRAW + nc + d_n - 1], out, at)
    at += CARD_FEATURES
    hand = s[H_HAND]
    hand_known = False
    if hand >= 0:
        out[at] = 1.0
        from_draw = s[H_HAND_SRC] == SRC_DRAW
        out[at + 1] = 1.0 if from_draw else 0.0
        hand_known = not from_draw or viewer == mover
        if hand_known:
            out[at + 2] = 1.0
            _card_features(cards, hand, out, at + 3)
            unseen[cards[hand, COL_FACE]] -= 1
    at += 3 + CARD_FEATURES
    for k in range(d_n):
        f = cards[s[OFF_DRAW + nc + k], COL_FACE]
        out[at + f] += 1.0
        unseen[f] -= 1
    at += nf
    for k in range(s[H_DRAW_N]):
        card = s[OFF_DRAW + k]
        if s[known + card] != 0:
            f = cards[card, COL_FACE]
            out[at + f] += 1.0
            unseen[f] -= 1
    if hand >= 0 and not hand_known and s[known + hand] != 0:
        f = cards[hand, COL_FACE]
        out[at + f] += 1.0
        unseen[f] -= 1
    at += nf
    for f in range(nf):
        out[at + f] = unseen[f]
    at += nf
    out[at] = s[H_DRAW_N]
    out[at + 1] = d_n
    at += 2
    out[at + ph] = 1.0
    at += NUM_PHASES
    if ph != PH_END:
        out[at + (mover - viewer) % n] = 1.0
    at += n
    if s[H_WIZ_SLOT] >= 0:
        out[at + s[H_WIZ_SLOT]] = 1.0
    at += SLOTS
    out[at] = s[H_FINAL_ROUND]
    if s[H_FINAL_LEFT] > 0:
        out[at + 1] = 1.0
        out[at + 2] = s[H_FINAL_LEFT]
    return at + 3


def observation_size(num_players: int, num_faces: int) -> int:
    """Length of :func:`observe`'s output."""
    return (
        num_players * SLOTS * SLOT_FEATURES
        + CARD_FEATURES
        + 3
        + CARD_FEATURES
        + 3 * num_faces
        + 2
        + NUM_PHASES
        + num_players
        + SLOTS
        + 3
    )


# Which action each bit of the packed status's two slot sets enables, per phase (-1: unused).
BASE1 = (A_REVEAL, A_TAKE, A_SWAP, A_SWAP, A_REVEAL, A_WIZ_OWN, -1, -1)
BASE2 = (-1, -1, -1, A_DISCARD_REVEAL, -1, -1, A_WIZ_OTHER, -1)


@numba.njit(cache=True, nogil=True)
def fill_mask(packed, out):
    """Write the legal-action mask of a :func:`packed_status` into ``out`` (int8, zeroed here)."""
    out[:] = 0
    ph = packed & 15
    base = BASE1[ph]
    if base >= 0:
        bits = (packed >> 8) & ((1 << SLOTS) - 1)
        for i in range(SLOTS):
            if bits >> i & 1:
                out[base + i] = 1
    base = BASE2[ph]
    if base >= 0:
        bits = packed >> 20
        for i in range(out.shape[0] - base):
            if bits >> i & 1:
                out[base + i] = 1
