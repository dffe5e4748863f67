"""A deliberately naive backgammon move generator, written straight from the rules and sharing
no code with the engine, to check the engine's legal plays and masks against.

Sides are lists of 26 counts from the owner's view: index 0..23 = points 1..24, 24 = bar,
25 = borne off. It tries every die order and every source at every step (no pruning), so it is
slow and only used on samples.
"""

from __future__ import annotations


def single_moves(me: list[int], op: list[int], die: int) -> list[int]:
    """Sources (side indices) from which ``me`` may move a checker ``die`` points."""
    # Checkers on the bar must enter first.
    sources = [24] if me[24] > 0 else [x for x in range(24) if me[x] > 0]
    all_home = sum(me[6:25]) == 0
    out = []
    for x in sources:
        t = x - die
        if t >= 0:
            if op[23 - t] < 2:  # the landing point is not held by two or more opponents
                out.append(x)
        elif all_home and (t == -1 or sum(me[x + 1 : 25]) == 0):
            out.append(x)  # exact bear-off, or a higher die from the highest point
    return out


def apply_move(me: list[int], op: list[int], x: int, die: int) -> tuple[list[int], list[int]]:
    me, op = me[:], op[:]
    me[x] -= 1
    t = x - die
    if t < 0:
        me[25] += 1
    else:
        me[t] += 1
        if op[23 - t] == 1:  # hit a blot
            op[23 - t] = 0
            op[24] += 1
    return me, op


def legal_plays(
    me: list[int], op: list[int], dice: list[int]
) -> tuple[set[tuple[tuple[int, ...], tuple[int, ...]]], set[tuple[int, int]], int]:
    """(resulting positions as (me, op) tuples, legal first moves as (source, die), dice used).

    With no legal move: ({(me, op)}, set(), 0)."""
    sequences: list[tuple[list[tuple[int, int]], list[int], list[int]]] = []

    def rec(me: list[int], op: list[int], left: list[int], seq: list[tuple[int, int]]) -> None:
        extended = False
        if me[25] < 15:
            for die in sorted(set(left)):
                rest = left[:]
                rest.remove(die)
                for x in single_moves(me, op, die):
                    me2, op2 = apply_move(me, op, x, die)
                    rec(me2, op2, rest, [*seq, (x, die)])
                    extended = True
        if not extended:
            sequences.append((seq, me, op))

    rec(me, op, list(dice), [])
    longest = max(len(seq) for seq, _, _ in sequences)
    chosen = [item for item in sequences if len(item[0]) == longest]
    if longest == 1 and len(dice) == 2 and dice[0] != dice[1]:
        high = max(dice)
        with_high = [item for item in chosen if item[0][0][1] == high]
        if with_high:
            chosen = with_high
    positions = {(tuple(m), tuple(o)) for _, m, o in chosen}
    firsts = {seq[0] for seq, _, _ in chosen if seq}
    return positions, firsts, longest


def observation(
    me: list[int],
    op: list[int],
    dice: list[int],
    acts: bool,
    cube: tuple[int, bool, bool, bool] | None = None,
) -> list[float]:
    """The observation of the side ``me`` (table in ``backgammon_v0``'s docstring), written out
    entry by entry: ``dice`` are the dice left to play, ``acts`` whether this side acts now,
    ``cube`` (cube games only) is (value, this side owns it, the opponent owns it, a double is
    pending)."""
    obs = [0.0] * (59 if cube is None else 63)
    for point in range(1, 25):
        obs[point - 1] = float(me[point - 1])  # my checkers on my point `point`
        obs[24 + point - 1] = float(op[24 - point])  # my point p is the opponent's 25 - p
    obs[48], obs[49] = float(me[24]), float(op[24])  # bars
    obs[50], obs[51] = float(me[25]), float(op[25])  # borne off
    for die in dice:
        obs[52 + die - 1] += 1.0
    obs[58] = 1.0 if acts else 0.0
    if cube is not None:
        value, mine, theirs, pending = cube
        obs[59:63] = [float(value), float(mine), float(theirs), float(pending)]
    return obs
