"""Kalaha endgame databases: the exact value of every position with few stones left.

Values are *remaining-game* values, the quantity the solver works with: for a position given by
its playing pits alone (stores do not matter for what happens next), the value is

    (stones the mover will still add to their store) - (stones the opponent will still add)

under perfect play by both. The final store difference from the mover's point of view is that value
plus the current ``mover's store - opponent's store``.

Positions are written from the mover's point of view in the engine's board layout with the mover
as seat 0: ``board[0:pits]`` the mover's pits, ``board[pits+1:2*pits+1]`` the opponent's pits,
both stores zero. Every arrangement of ``n`` stones in the ``K = 2 * pits`` playing pits has an
index (:func:`rank_board`): arrangements with fewer stones first, then the combinatorial number
system of the "stars and bars" picture. A database for ``stones`` holds one ``int8`` per
arrangement with at most ``stones`` stones (``C(stones + K, K)`` entries).

Building a level: a move either puts stones into a store (the child has fewer stones in the pits,
a lower level that is complete already) or only moves the mover's stones to the right within
their own side (same level, the turn passes). The second kind strictly raises the position's
*weight*, the sum of every stone's place within its row, so a level is computed in one flat pass
in falling order of weight (:func:`_build_level`): every child is known when its parent is
computed, and positions of one weight are independent, so two threads share them. Moves are
played by the engine's :func:`~spieltisch.envs.kalaha.rules.sow` kernel: the rules are not
restated here.

Files: one per level, ``kalaha-p{pits}-{rules}-n{stones:03d}.v{FORMAT_VERSION}.egdb`` in the cache
directory (default ``$SPIELTISCH_CACHE_DIR`` or ``~/.cache/spieltisch`` /
``$XDG_CACHE_HOME/spieltisch``, subfolder ``kalaha_egdb``). A 64-byte header (magic, format
version, pits, rule set, stones, entry count, SHA-256 of the values) precedes the values. A file
that does not match in any way is reported, rebuilt and rewritten (atomically); it is never
trusted.
"""

from __future__ import annotations

import contextlib
import hashlib
import mmap
import os
import struct
import time
import warnings
from collections.abc import Callable
from pathlib import Path

import numba
import numpy as np
from llvmlite import ir
from numba import types
from numba.core import cgutils
from numba.extending import intrinsic
from spieltisch.agents.files import write_atomic
from spieltisch.envs.kalaha.engine import RULE_SETS
from spieltisch.envs.kalaha.rules import BOARD_DTYPE, sow

FORMAT_VERSION = 1
MAGIC = b"SPTKEGDB"
_HEADER = struct.Struct("<8sIIIIQ32s")  # magic, version, pits, rules, stones, count, sha256
HEADER_SIZE = _HEADER.size  # 64 bytes
UNKNOWN = -128  # int8 marker of a value not computed yet
MAX_DB_STONES = 100  # values must fit int8 (|value| <= stones)
_BATCH = 16  # positions per batch of the database builder (see _build_level)
_SATURATE = 1 << 62  # binomials are clipped here; keys are exact only below it

ProgressFn = Callable[[str], None]


@intrinsic
def prefetch(typingctx, arr, idx):
    """Hint the CPU to fetch element ``idx`` of the C-contiguous ``arr`` (flat index) into the
    cache; never faults, changes nothing."""
    if not isinstance(arr, types.Array) or not isinstance(idx, types.Integer):
        return None
    sig = types.void(arr, idx)

    def codegen(context, builder, signature, args):
        aryty = signature.args[0]
        ary = context.make_array(aryty)(context, builder, args[0])
        ind = context.cast(builder, args[1], signature.args[1], types.intp)
        ptr = builder.gep(ary.data, [ind])
        i8p = ir.IntType(8).as_pointer()
        i32 = ir.IntType(32)
        fnty = ir.FunctionType(ir.VoidType(), [i8p, i32, i32, i32])
        fn = cgutils.get_or_insert_function(builder.module, fnty, "llvm.prefetch.p0")
        builder.call(fn, [builder.bitcast(ptr, i8p), i32(0), i32(3), i32(1)])
        return context.get_dummy_value()

    return sig, codegen


def default_cache_dir() -> Path:
    """Where databases are kept unless told otherwise: ``$SPIELTISCH_CACHE_DIR``, else
    ``$XDG_CACHE_HOME/spieltisch``, else ``~/.cache/spieltisch``; subfolder ``kalaha_egdb``."""
    root = os.environ.get("SPIELTISCH_CACHE_DIR")
    if root:
        return Path(root).expanduser() / "kalaha_egdb"
    xdg = os.environ.get("XDG_CACHE_HOME")
    base = Path(xdg).expanduser() if xdg else Path.home() / ".cache"
    return base / "spieltisch" / "kalaha_egdb"


def huge_page_array(count: int, dtype: np.dtype | type) -> np.ndarray:
    """A zeroed 1-D array of ``count`` elements in its own anonymous memory map, marked for
    transparent huge pages where the system allows it (``madvise``): the solver's table and
    database are read at random, and with 4 KiB pages nearly every probe also missed the TLB.
    Page-aligned, so 64-byte aligned too."""
    nbytes = max(int(count) * np.dtype(dtype).itemsize, 1)
    # private (not shared) anonymous memory: shared maps are shmem, which ignores the advice
    flags = getattr(mmap, "MAP_PRIVATE", 0) | getattr(mmap, "MAP_ANONYMOUS", 0)
    buf = mmap.mmap(-1, nbytes, flags=flags) if flags else mmap.mmap(-1, nbytes)
    if hasattr(mmap, "MADV_HUGEPAGE"):
        with contextlib.suppress(OSError):  # not supported here: ordinary pages
            buf.madvise(mmap.MADV_HUGEPAGE)
    return np.frombuffer(buf, dtype=dtype, count=int(count))


def binomial_table(max_stones: int, pits: int) -> np.ndarray:
    """``C(a, b)`` for ``a <= max_stones + 2*pits``, ``b <= 2*pits`` (int64, clipped at 2**62)."""
    k = 2 * pits
    rows = max_stones + k + 1
    table = np.zeros((rows, k + 1), dtype=np.int64)
    row = [1] + [0] * k
    for a in range(rows):
        if a > 0:
            row = [1] + [min(row[b - 1] + row[b], _SATURATE) for b in range(1, k + 1)]
        table[a] = row
    return table


def level_offsets(binom: np.ndarray, max_stones: int, pits: int) -> np.ndarray:
    """``offsets[n]``: arrangements with fewer than ``n`` stones, for ``n <= max_stones + 1``."""
    k = 2 * pits
    return np.array([binom[n + k - 1, k] for n in range(max_stones + 2)], dtype=np.int64)


def database_entries(stones: int, pits: int) -> int:
    """Entries (bytes) of a database of all positions with at most ``stones`` stones."""
    from math import comb

    return comb(stones + 2 * pits, 2 * pits)


@numba.njit(cache=True, nogil=True)
def rank_board(b: np.ndarray, pits: int, binom: np.ndarray, offsets: np.ndarray) -> int:
    """Index of the arrangement of the playing pits of ``b`` (stores ignored), see module doc."""
    s = 0
    r = 0
    for k in range(pits):
        s += b[k]
        r += binom[s + k, k + 1]
    for k in range(pits - 1):
        s += b[pits + 1 + k]
        j = pits + k
        r += binom[s + j, j + 1]
    n = s + b[2 * pits]
    return offsets[n] + r


@numba.njit(cache=True, nogil=True)
def _swap_sides(c: np.ndarray, pits: int) -> None:
    """Turn a board around to the other player's point of view, in place (stores included)."""
    for k in range(pits + 1):
        t = c[k]
        c[k] = c[pits + 1 + k]
        c[pits + 1 + k] = t


@numba.njit(cache=True, nogil=True)
def child_position(b: np.ndarray, c: np.ndarray, pits: int, i: int, empty_capture: bool) -> tuple:
    """Play pit ``i`` of position ``b`` (mover's view, stores zero) into ``c``.

    Returns ``(gain, kind, entered)``: ``gain`` the mover's store gain minus the opponent's
    (including the final sweep), ``kind`` 0 = game over, 1 = the mover moves again (``c`` from
    the mover's view), 2 = the turn passes (``c`` turned around to the opponent's view),
    ``entered`` the stones that left the pits. Stores of ``c`` are zeroed. The move itself is
    played by the engine's ``sow`` kernel.
    """
    for k in range(2 * pits + 2):
        c[k] = b[k]
    packed = sow(c, 0, i, empty_capture)
    gain = c[pits] - c[2 * pits + 1]
    entered = c[pits] + c[2 * pits + 1]
    c[pits] = 0
    c[2 * pits + 1] = 0
    if packed & 2:
        return gain, 0, entered
    if packed & 1 == 0:
        return gain, 1, entered
    _swap_sides(c, pits)
    return gain, 2, entered


@numba.njit(cache=True, nogil=True)
def _enumerate_rows(max_stones: int, pits: int, total: int) -> tuple:
    """Every row of ``pits`` pits holding at most ``max_stones`` stones (``total`` of them), with
    its stone count and its weight ``sum(k * row[k])`` (how far to the right its stones lie)."""
    rows = np.zeros((total, pits), dtype=np.int16)
    stones = np.zeros(total, dtype=np.int64)
    weights = np.zeros(total, dtype=np.int64)
    comp = np.zeros(pits, dtype=np.int64)
    r = 0
    for a in range(max_stones + 1):
        comp[:] = 0
        comp[0] = a
        while True:
            w = 0
            for k in range(pits):
                rows[r, k] = comp[k]
                w += k * comp[k]
            stones[r] = a
            weights[r] = w
            r += 1
            # next composition of a into pits parts
            t = comp[pits - 1]
            comp[pits - 1] = 0
            j = pits - 2
            while j >= 0 and comp[j] == 0:
                j -= 1
            if j < 0:
                break
            comp[j] -= 1
            comp[j + 1] = t + 1
    return rows, stones, weights


def row_groups(max_stones: int, pits: int) -> tuple[np.ndarray, np.ndarray]:
    """The rows of :func:`_enumerate_rows` sorted by (stones, weight), and ``starts`` with
    ``rows[starts[a, w]:starts[a, w + 1]]`` the rows of ``a`` stones and weight ``w``."""
    from math import comb

    rows, stones, weights = _enumerate_rows(max_stones, pits, comb(max_stones + pits, pits))
    order = np.lexsort((weights, stones))
    width = (pits - 1) * max_stones + 2
    keys = stones[order] * width + weights[order]
    grid = np.arange(max_stones + 1)[:, None] * width + np.arange(width)[None, :]
    starts = np.searchsorted(keys, grid.ravel()).reshape(max_stones + 1, width)
    return np.ascontiguousarray(rows[order]), starts.astype(np.int64)


@numba.njit(cache=True, nogil=True, parallel=True)
def _build_level(
    n: int,
    pits: int,
    empty_capture: bool,
    binom: np.ndarray,
    offsets: np.ndarray,
    db: np.ndarray,
    rows: np.ndarray,
    starts: np.ndarray,
) -> None:
    """Fill ``db`` for every arrangement of exactly ``n`` stones (lower levels must be done).

    Positions are taken in falling order of their weight (the sum of every stone's place within
    its row): a child on the same level has a larger weight (see module doc), so it is done
    before its parent, and positions of one weight do not depend on each other and are shared
    out among the threads. ``rows``, ``starts``: :func:`row_groups` for at least ``n`` stones.
    """
    size = 2 * pits + 2
    top = pits - 1
    items = np.zeros(((n + 1) * (top * n + 1) + 1, 5), dtype=np.int64)
    for total_weight in range(top * n, -1, -1):
        # the pairs (mover's row, opponent's row) of this weight: groups of rows by
        # (stones, weight) for each side, items[m] = (x start, x count, y start, y count, first)
        count = 0
        positions = 0
        for a in range(n + 1):
            for wx in range(max(0, total_weight - top * (n - a)), min(top * a, total_weight) + 1):
                wy = total_weight - wx
                xs = starts[a, wx]
                nx = starts[a, wx + 1] - xs
                ys = starts[n - a, wy]
                ny = starts[n - a, wy + 1] - ys
                if nx > 0 and ny > 0:
                    items[count, 0] = xs
                    items[count, 1] = nx
                    items[count, 2] = ys
                    items[count, 3] = ny
                    items[count, 4] = positions
                    positions += nx * ny
                    count += 1
        items[count, 4] = positions
        chunks = min(max(positions // 2048, 1), 512)
        for ch in numba.prange(chunks):
            b = np.zeros(size, dtype=BOARD_DTYPE)
            c = np.zeros(size, dtype=BOARD_DTYPE)
            # a batch of positions: first every child is generated and its value prefetched,
            # then the values are read, so that the cache misses overlap
            dest = np.zeros(_BATCH, dtype=np.int64)
            moves = np.zeros(_BATCH, dtype=np.int64)
            kids = np.zeros((_BATCH * pits, 3), dtype=np.int64)  # kind, gain, rank
            first = positions * ch // chunks
            last = positions * (ch + 1) // chunks
            m = 0
            for start in range(first, last, _BATCH):
                stop = min(start + _BATCH, last)
                for f in range(start, stop):
                    while items[m + 1, 4] <= f:
                        m += 1
                    local = f - items[m, 4]
                    ny = items[m, 3]
                    x = items[m, 0] + local // ny
                    y = items[m, 2] + local % ny
                    s0 = 0
                    s1 = 0
                    for k in range(pits):
                        b[k] = rows[x, k]
                        b[pits + 1 + k] = rows[y, k]
                        s0 += b[k]
                        s1 += b[pits + 1 + k]
                    j = f - start
                    r = rank_board(b, pits, binom, offsets)
                    dest[j] = r
                    prefetch(db, r)
                    if s0 == 0 or s1 == 0:  # game over: each side keeps its own stones,
                        kids[j * pits, 0] = 0  # scored like a move that ends the game
                        kids[j * pits, 1] = s0 - s1
                        moves[j] = 1
                        continue
                    cnt = 0
                    for i in range(pits):
                        if b[i] == 0:
                            continue
                        gain, kind, _ = child_position(b, c, pits, i, empty_capture)
                        e = j * pits + cnt
                        kids[e, 0] = kind
                        kids[e, 1] = gain
                        if kind != 0:
                            cr = rank_board(c, pits, binom, offsets)
                            kids[e, 2] = cr
                            prefetch(db, cr)
                        cnt += 1
                    moves[j] = cnt
                for j in range(stop - start):
                    best = -1000
                    for e in range(j * pits, j * pits + moves[j]):
                        kind = kids[e, 0]
                        if kind == 0:
                            v = kids[e, 1]
                        elif kind == 1:
                            v = kids[e, 1] + db[kids[e, 2]]
                        else:
                            v = kids[e, 1] - db[kids[e, 2]]
                        if v > best:
                            best = v
                    db[dest[j]] = best


class EndgameDatabase:
    """Values of all positions with at most ``stones`` stones in the pits (see module doc).

    ``values[rank_board(board)]`` is the remaining-game value for the mover. Use
    :meth:`load_or_build` to get one from the cache directory (building what is missing).
    """

    def __init__(self, pits: int, rules: str, stones: int, values: np.ndarray) -> None:
        self.pits = pits
        self.rules = rules
        self.stones = stones
        self.values = values

    @staticmethod
    def file_name(pits: int, rules: str, n: int) -> str:
        return f"kalaha-p{pits}-{rules}-n{n:03d}.v{FORMAT_VERSION}.egdb"

    @classmethod
    def load_or_build(
        cls,
        pits: int,
        rules: str,
        stones: int,
        cache_dir: str | os.PathLike | None = None,
        use_cache: bool = True,
        progress: ProgressFn | None = None,
    ) -> EndgameDatabase:
        """The database up to ``stones`` stones: levels read from ``cache_dir`` where a valid file
        exists, the others built (in order) and written there. ``use_cache=False`` neither
        reads nor writes files."""
        if rules not in RULE_SETS:
            raise ValueError(f"rules must be one of {RULE_SETS}, got {rules!r}")
        if not 0 <= stones <= MAX_DB_STONES:
            raise ValueError(f"database stones must be between 0 and {MAX_DB_STONES}: {stones}")
        binom = binomial_table(stones, pits)
        offsets = level_offsets(binom, stones, pits)
        values = huge_page_array(int(offsets[stones + 1]), np.int8)
        values.fill(UNKNOWN)
        directory = Path(cache_dir) if cache_dir is not None else default_cache_dir()
        ec = rules == "goki"
        rows = starts = None  # built when a level must be built
        for n in range(stones + 1):
            level = values[offsets[n] : offsets[n + 1]]
            path = directory / cls.file_name(pits, rules, n)
            if use_cache and _read_level(path, pits, rules, n, level):
                continue
            t0 = time.perf_counter()
            level[:] = UNKNOWN
            if rows is None:
                rows, starts = row_groups(stones, pits)
            _build_level(n, pits, ec, binom, offsets, values, rows, starts)
            if progress is not None and level.size >= 100_000:
                progress(
                    f"endgame database {pits} pits {rules}: {n} stones, {level.size:,} positions "
                    f"built in {time.perf_counter() - t0:.2f} s"
                )
            if use_cache:
                _write_level(path, pits, rules, n, level)
        return cls(pits, rules, stones, values)


def _header(pits: int, rules: str, n: int, level: np.ndarray) -> bytes:
    digest = hashlib.sha256(level.tobytes()).digest()
    head = _HEADER.pack(MAGIC, FORMAT_VERSION, pits, RULE_SETS.index(rules), n, level.size, digest)
    return head


def _write_level(path: Path, pits: int, rules: str, n: int, level: np.ndarray) -> None:
    """Write atomically (temporary file + rename); a failure to write only warns."""

    def write(tmp: Path) -> None:
        with open(tmp, "wb") as f:
            f.write(_header(pits, rules, n, level))
            f.write(level.tobytes())

    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        write_atomic(path, write)
    except OSError as err:
        warnings.warn(f"could not write endgame database {path}: {err}", stacklevel=3)


def _read_level(path: Path, pits: int, rules: str, n: int, out: np.ndarray) -> bool:
    """Fill ``out`` from ``path`` if it is a valid file for this level; False (with a warning
    when the file exists but is damaged or foreign) otherwise, ``out`` then holding garbage.
    The values are read straight into ``out`` and checked there: a level of the 26-stone
    database is 1.1 GB, and reading it through a bytes object, a sliced copy and int16 copies
    for the checks held about seven times that at once."""
    try:
        with open(path, "rb") as f:
            size = os.fstat(f.fileno()).st_size
            problem = None
            if size != HEADER_SIZE + out.size:
                problem = f"size {size} bytes, expected {HEADER_SIZE + out.size}"
            else:
                magic, version, f_pits, f_rules, f_n, count, digest = _HEADER.unpack(
                    f.read(HEADER_SIZE)
                )
                expected = (MAGIC, FORMAT_VERSION, pits, RULE_SETS.index(rules), n, out.size)
                if (magic, version, f_pits, f_rules, f_n, count) != expected:
                    problem = "header does not match (other version, board, rules or level)"
                elif f.readinto(memoryview(out).cast("B")) != out.size:
                    problem = "the file ended early"
                elif hashlib.sha256(out).digest() != digest:
                    problem = "checksum mismatch"
                elif out.size and (int(out.min()) < -n or int(out.max()) > n):
                    problem = "values out of range"
                else:
                    return True
    except FileNotFoundError:
        return False
    except OSError as err:
        warnings.warn(f"could not read endgame database {path}: {err}; rebuilding", stacklevel=3)
        return False
    warnings.warn(f"endgame database {path} is damaged ({problem}); rebuilding", stacklevel=3)
    return False
