"""The protocol every batched engine (``envs/<game>/batch.py``) implements, and the checks and
helpers they share (compiled, so they cost little per game).

One set of verbs and shapes for all four games, after pgx's ``init/step/observe/legal_action_mask/
terminated/rewards`` over plain state arrays: the trainers and the search agents use only
:class:`BatchedGame`, never a game's own arrays.
"""

from __future__ import annotations

import itertools
import queue
import threading
from collections.abc import Callable
from typing import Any, Protocol, Self, runtime_checkable

import numba
import numpy as np
from spieltisch.envs._common.errors import ActionTypeError, IllegalActionError


@numba.njit(cache=True, nogil=True)
def _first_bad_action(actions, legal_mask, terminal):
    """Index of the first unfinished game whose action is not legal, or -1."""
    num_actions = legal_mask.shape[1]
    for g in range(actions.shape[0]):
        if terminal[g]:
            continue
        a = actions[g]
        if a < 0 or a >= num_actions or legal_mask[g, a] == 0:
            return g
    return -1


def check_num_games(num_games: Any) -> int:
    """``num_games`` as an int; a TypeError for a non-integer (``True``, 2.0), a ValueError below 1,
    the same words for every batch."""
    if isinstance(num_games, bool) or not isinstance(num_games, int | np.integer):
        raise TypeError(f"num_games must be an integer, got {num_games!r}")
    if num_games < 1:
        raise ValueError(f"num_games must be at least 1, got {num_games}")
    return int(num_games)


def check_game_index(g: Any, num_games: int) -> int:
    """Game index ``g`` of :meth:`BatchedGame.state` and :meth:`BatchedGame.set_state` as an
    int: a TypeError for a non-integer (``True``, 1.0), an IndexError outside
    ``0..num_games - 1`` (-1 is no game here, as in ``reset(games=...)``)."""
    if isinstance(g, bool) or not isinstance(g, int | np.integer):
        raise TypeError(f"game index must be an integer, got {g!r}")
    if not 0 <= g < num_games:
        raise IndexError(f"game index must be in 0..{num_games - 1}, got {g}")
    return int(g)


def _short(game: Any, most: int = 100) -> str:
    """``repr(game)`` cut to ``most`` characters (a HiLo game's repr lists its 69-card deck)."""
    text = repr(game)
    return text if len(text) <= most else text[: most - 3] + "..."


def check_set_state(
    state: Any,
    state_type: type,
    game: Any,
    boards: np.ndarray | None = None,
    ended: Callable[[np.ndarray, int], Any] | None = None,
) -> None:
    """What :meth:`BatchedGame.set_state` checks before it writes anything: ``state`` is a
    ``state_type`` (else TypeError) of the batch's ``game`` (else ValueError). For a pit game
    (Kalaha, Hus), given the batch's ``boards`` (one row a game), also a ValueError unless the
    state's board has a row's shape and holds whole, non-negative counts of at most
    ``game.total_stones`` in all (as the env reads a position), the player to move is 0 or 1,
    and the state is over exactly when ``ended(board, player)`` says so."""
    if not isinstance(state, state_type):
        raise TypeError(f"state must be a {state_type.__name__}, got {type(state).__name__}")
    if state.game != game:
        raise ValueError(f"state belongs to {_short(state.game)}, the batch plays {_short(game)}")
    if boards is None:
        return
    cells = state.board
    shape = boards.shape[1:]
    if not isinstance(cells, np.ndarray) or cells.shape != shape:
        got = cells.shape if isinstance(cells, np.ndarray) else type(cells).__name__
        raise ValueError(f"state's board must be an array of shape {shape} for {game}, got {got}")
    if not np.issubdtype(cells.dtype, np.integer):
        raise ValueError(f"state's board must hold whole numbers, got dtype {cells.dtype}")
    if (cells < 0).any():
        raise ValueError(f"state's board has a negative count: {cells.tolist()}")
    total = int(cells.sum(dtype=np.int64))
    if total > game.total_stones:
        raise ValueError(f"state holds {total} stones, more than the {game.total_stones} of {game}")
    player = state.current_player
    if not isinstance(player, int | np.integer) or isinstance(player, bool) or player not in (0, 1):
        raise ValueError(f"state's player to move must be 0 or 1, got {player!r}")
    over = bool(ended(cells, int(player)))
    if state.is_terminal() != over:
        marked, board_says = ("", "not ") if not over else ("not ", "")
        raise ValueError(
            f"state is marked {marked}over, but its board {cells.tolist()} with seat {player} "
            f"to move is {board_says}a finished game"
        )


def check_batch_actions(
    actions: object, legal_mask: np.ndarray, terminal: np.ndarray
) -> np.ndarray:
    """``actions`` as an int64 array of one action per game, checked against ``legal_mask``.

    Finished games (``terminal``) may carry any value. Raises naming the first bad game; the
    caller has changed nothing yet.
    """
    num_games, num_actions = legal_mask.shape
    arr = actions if isinstance(actions, np.ndarray) else np.asarray(actions)
    if arr.shape != (num_games,):
        raise ActionTypeError(
            f"expected one action per game, shape ({num_games},), got {arr.shape}"
        )
    if not np.issubdtype(arr.dtype, np.integer):
        raise ActionTypeError(f"actions must be integers, got dtype {arr.dtype}")
    arr = np.ascontiguousarray(arr, dtype=np.int64)
    g = _first_bad_action(arr, legal_mask, terminal)
    if g >= 0:
        a = int(arr[g])
        if not 0 <= a < num_actions:
            raise IllegalActionError(f"game {g}: action {a} is out of range 0..{num_actions - 1}")
        legal = np.flatnonzero(legal_mask[g]).tolist()
        raise IllegalActionError(f"game {g}: action {a} is illegal; legal actions: {legal}")
    return arr


@numba.njit(cache=True, nogil=True)
def pick_from_bits(bits: int, uniform: float) -> int:
    """The legal action a uniform number in [0, 1) picks from a legal-action bit set (bit ``a``
    set: action ``a`` is legal): the ``floor(uniform * count)``-th set bit, as
    :func:`sample_legal_actions` picks from a mask row; -1 when no bit is set."""
    count = 0
    rest = bits
    while rest:
        rest &= rest - 1
        count += 1
    if count == 0:
        return -1
    k = min(int(uniform * count), count - 1)
    a = 0
    rest = bits
    while True:
        if rest & 1:
            if k == 0:
                return a
            k -= 1
        rest >>= 1
        a += 1


@numba.njit(cache=True, nogil=True)
def write_mask(row, bits):
    """``row[a] = 1`` where bit ``a`` of the legal-action bit set ``bits`` is set, else 0."""
    for a in range(row.shape[0]):
        row[a] = (bits >> a) & 1


@numba.njit(cache=True, nogil=True)
def store_move(players, terminal, masks, g, player, over, bits):
    """Game ``g`` after a move: the seat to move, whether it is over and its legal mask (the
    three values a mancala move kernel's ``unpack_move`` gives)."""
    players[g] = player
    terminal[g] = over
    write_mask(masks[g], bits)


@numba.njit(cache=True, nogil=True)
def _pick_legal(legal_mask, uniforms, out):
    for g in range(legal_mask.shape[0]):
        count = 0
        for a in range(legal_mask.shape[1]):
            count += legal_mask[g, a] != 0
        out[g] = 0
        if count == 0:
            continue
        k = min(int(uniforms[g] * count), count - 1)
        for a in range(legal_mask.shape[1]):
            if legal_mask[g, a] != 0:
                if k == 0:
                    out[g] = a
                    break
                k -= 1


def sample_legal_actions(legal_mask: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """One uniformly random legal action per row of ``legal_mask`` (0 for rows with none)."""
    out = np.empty(legal_mask.shape[0], dtype=np.int64)
    _pick_legal(legal_mask, rng.random(legal_mask.shape[0]), out)
    return out


# SplitMix64 (Steele, Lea and Flood 2014): each game of a rollout has its own counter-based
# stream, so a thread draws its games' numbers itself and the games never depend on the threads.
_GOLDEN = np.uint64(0x9E3779B97F4A7C15)
_MIX1 = np.uint64(0xBF58476D1CE4E5B9)
_MIX2 = np.uint64(0x94D049BB133111EB)
_TO_UNIT = 2.0**-53


@numba.njit(cache=True, nogil=True)
def _mix64(z):
    z = (z ^ (z >> np.uint64(30))) * _MIX1
    z = (z ^ (z >> np.uint64(27))) * _MIX2
    return z ^ (z >> np.uint64(31))


@numba.njit(cache=True, nogil=True)
def next_uniform(streams, g) -> float:
    """The next uniform number in [0, 1) of game ``g``'s stream (``streams[g]`` advances)."""
    state = streams[g] + _GOLDEN
    streams[g] = state
    return float(_mix64(state) >> np.uint64(11)) * _TO_UNIT


def rollout_streams(rng: np.random.Generator, num_games: int) -> np.ndarray:
    """A fresh random-number stream per game (uint64 states for :func:`next_uniform`), drawn
    from one number of ``rng``."""
    key = rng.integers(0, 2**63, dtype=np.uint64)
    with np.errstate(over="ignore"):  # the arithmetic is modulo 2**64 on purpose
        return _mix64_array(key + np.arange(num_games, dtype=np.uint64) * _GOLDEN)


@numba.njit(cache=True)
def _mix64_array(z):
    out = np.empty_like(z)
    for i in range(z.shape[0]):
        out[i] = _mix64(z[i])
    return out


def move_budget(max_moves: int | None) -> int:
    """``max_moves`` of :meth:`BatchedGame.play_random` checked, as the compiled loops take it:
    the number of moves, -1 for no limit."""
    if max_moves is None:
        return -1
    if isinstance(max_moves, bool) or not isinstance(max_moves, int | np.integer):
        raise TypeError(f"max_moves must be None or an integer, got {max_moves!r}")
    if max_moves < 0:
        raise ValueError(f"max_moves must be None or at least 0, got {max_moves!r}")
    return int(max_moves)


def play_random_by_steps(batch: BatchedGame, rng: np.random.Generator, budget: int) -> None:
    """:meth:`BatchedGame.play_random` through the protocol's own verbs, one :meth:`step` of
    :meth:`sample_random_actions` for all games at a time (``budget`` from :func:`move_budget`),
    for a batch without a compiled rollout loop."""
    made = 0
    while made != budget and not batch.terminal.all():
        batch.step(batch.sample_random_actions(rng))
        made += 1


#: what :meth:`BatchedGame.reset` accepts as its seed
BatchSeed = int | np.random.Generator | None


def check_int_seed(seed: object) -> int:
    """``seed`` if it is an integer seed (not a bool) of at least 0, else a TypeError (or a
    ValueError) naming what reset takes."""
    if isinstance(seed, bool) or not isinstance(seed, int | np.integer):
        raise TypeError(f"seed must be an int, a numpy Generator or None, got {seed!r}")
    if seed < 0:
        raise ValueError(f"seed must be at least 0, got {seed}")
    return int(seed)


def check_batch_seed(seed: object) -> None:
    """A batch's seed: None, a numpy Generator or an int of at least 0, one check for every
    batch (games without chance, where it is unused, included: "x" or 1.5 is a mistake there
    too; numpy's own words named it only where it was used)."""
    if seed is not None and not isinstance(seed, np.random.Generator):
        check_int_seed(seed)


def save_arrays(owner: object, names: tuple[str, ...]) -> dict[str, np.ndarray]:
    """Copies of the arrays ``owner.<name>``: the state part of a batch's :meth:`save`."""
    return {name: getattr(owner, name).copy() for name in names}


def load_arrays(owner: object, saved: dict[str, Any], names: tuple[str, ...]) -> None:
    """Copy ``saved[name]`` into ``owner.<name>`` for every name, after checking every shape
    (so a wrong save changes nothing)."""
    for name in names:
        if np.shape(saved[name]) != np.shape(getattr(owner, name)):
            raise ValueError(
                f"saved {name} has shape {np.shape(saved[name])}, "
                f"the batch's {np.shape(getattr(owner, name))}"
            )
    for name in names:
        getattr(owner, name)[...] = saved[name]


@runtime_checkable
class BatchedGame(Protocol):
    """``num_games`` games of one kind stepped at once; every array has the games as axis 0.

    Chance (dice, shuffles, draws) is handled inside, from the batch's own generator: after
    :meth:`reset` and after every :meth:`step`, each unfinished game waits for a player's
    decision. Finished games stay finished: :meth:`step` ignores their actions, their mask row is
    all zeros and their :meth:`returns` row is final.
    """

    #: the game's name in :data:`spieltisch.envs.GAMES`
    game_name: str
    num_games: int
    num_players: int
    #: size of the flat action space (the env's ``Discrete(num_actions)``)
    num_actions: int
    #: shape of one observation, as the env's ``observation_space`` of the default view
    observation_shape: tuple[int, ...]
    #: a network divides observations by this (stone or card counts to order one)
    observation_scale: float

    @property
    def current_player(self) -> np.ndarray:
        """``(B,)`` int64: the seat to move; a finished game keeps a valid seat (the engine's
        ``current_player`` of that final state), never a marker such as -1."""
        ...

    @property
    def terminal(self) -> np.ndarray:
        """``(B,)`` bool: the game has ended."""
        ...

    def reset(self, seed: BatchSeed = None, games: np.ndarray | None = None) -> None:
        """Start ``games`` (default: all; an index or boolean array) anew; ``seed`` (an int or a
        generator to draw from) reseeds the batch's chance first."""
        ...

    def observe(self) -> tuple[np.ndarray, np.ndarray]:
        """The mover's observation ``(B, *observation_shape)`` float32 (the env's observation of
        that seat, unscaled) and the legal mask ``(B, num_actions)`` int8; fresh arrays."""
        ...

    def step(self, actions: np.ndarray) -> None:
        """Play ``actions[g]`` in every unfinished game (checked first: an illegal action
        raises naming the game, and nothing changes)."""
        ...

    def returns(self) -> np.ndarray:
        """``(B, num_players)`` float64: each seat's final result, zeros for unfinished games:
        backgammon's and HiLo's as their ``reward`` option gives them; Kalaha's and Hus's the
        win value (+1 / -1, 0 for a draw) whatever their env's ``reward``, which the env alone
        applies (self-play training takes ``reward: win`` only for them)."""
        ...

    def sample_random_actions(self, rng: np.random.Generator) -> np.ndarray:
        """A uniformly random legal action per game (0 for finished games)."""
        ...

    def play_random(self, rng: np.random.Generator, max_moves: int | None = None) -> None:
        """Play every unfinished game on with random moves (random rollouts) until it ends or
        has made ``max_moves`` more (None: no limit; an integer >= 0, else a clear error and
        nothing changes): a uniformly random legal action per move, but in backgammon a
        uniformly random whole play per turn (of its distinct resulting positions), counted as
        one move. The moves are drawn from ``rng``, chance from the batch's own generator
        (backgammon and HiLo also take ``rng=None``: their generator draws both); the result
        does not depend on the number of threads."""
        ...

    def save(self) -> dict[str, Any]:
        """Copies of the state arrays and the generator's state: :meth:`load` restores them."""
        ...

    def load(self, saved: dict[str, Any]) -> None:
        """Restore what :meth:`save` returned (same game, same number of games)."""
        ...

    def clone(self) -> Self:
        """An independent copy (state arrays and generator)."""
        ...

    def state(self, g: int) -> Any:
        """Game ``g`` (an integer 0..num_games-1, see :func:`check_game_index`) as a single-game
        engine state (a copy)."""
        ...

    def set_state(self, g: int, state: Any) -> None:
        """Overwrite game ``g`` (checked as by :meth:`state`) with a single-game engine
        ``state`` of the same game."""
        ...


def block_bounds(num_games: int, blocks: int) -> list[tuple[int, int]]:
    """``num_games`` split into at most ``blocks`` contiguous, non-empty ``(lo, hi)`` ranges of
    near-equal size."""
    bounds = np.linspace(0, num_games, blocks + 1).astype(int)
    return [(int(lo), int(hi)) for lo, hi in itertools.pairwise(bounds) if hi > lo]


def resolve_threads(threads: int | None, num_games: int, min_games_per_thread: int) -> int:
    """The number of threads a batch steps its games on: ``threads`` if given (1..1024), else
    numba's thread count, but never so many that a thread has fewer than
    ``min_games_per_thread`` games (below that, handing work to a thread costs more than the
    moves themselves)."""
    if threads is None:
        return max(1, min(numba.get_num_threads(), num_games // min_games_per_thread))
    if isinstance(threads, bool) or not isinstance(threads, int | np.integer):
        raise TypeError(f"threads must be an integer or None, got {threads!r}")
    if not 1 <= threads <= 1024:
        raise ValueError(f"threads must be 1..1024, got {threads}")
    return int(threads)


class BlockThreads:
    """Runs a compiled loop over contiguous blocks of games, one block per thread.

    Each block has its own daemon thread that always runs the same block, so its games stay in
    that core's cache (a shared pool moving blocks between threads measured about half as fast
    per CPU-second). The kernels release the GIL (``nogil=True``), so the blocks run in
    parallel. With one block, :meth:`run` calls the kernel directly and no thread is started.
    The threads keep this object alive: its owner calls :meth:`close` (in its ``__del__``).
    """

    def __init__(self, num_games: int, threads: int, name: str) -> None:
        self.blocks = block_bounds(num_games, threads)
        self._name = name
        self._inboxes: list[queue.SimpleQueue] = []
        self._done: queue.SimpleQueue = queue.SimpleQueue()

    def _start(self) -> None:
        self._inboxes = [queue.SimpleQueue() for _ in self.blocks]
        for i, inbox in enumerate(self._inboxes):
            threading.Thread(
                target=self._serve, args=(inbox,), name=f"{self._name}-{i}", daemon=True
            ).start()

    def __getstate__(self) -> dict:
        # A copy (pickle, deepcopy) gets threads of its own, started at its first run; queues
        # and threads cannot be copied (batches holding one could not be pickled).
        return {"blocks": self.blocks, "_name": self._name}

    def __setstate__(self, state: dict) -> None:
        self.blocks = state["blocks"]
        self._name = state["_name"]
        self._inboxes = []
        self._done = queue.SimpleQueue()

    def _serve(self, inbox: queue.SimpleQueue) -> None:
        while True:
            task = inbox.get()
            if task is None:
                return
            kernel, args = task
            try:
                kernel(*args)
                self._done.put(None)
            except BaseException as err:  # handed to the caller of run()
                self._done.put(err)

    def run(self, kernel: Callable, args: Callable[[int, int, int], tuple]) -> None:
        """``kernel(*args(lo, hi, block))`` for every block, in parallel; waits for all and
        re-raises the first error."""
        if len(self.blocks) == 1:
            kernel(*args(*self.blocks[0], 0))
            return
        if not self._inboxes:
            self._start()
        for block, ((lo, hi), inbox) in enumerate(zip(self.blocks, self._inboxes, strict=True)):
            inbox.put((kernel, args(lo, hi, block)))
        errors = [self._done.get() for _ in self.blocks]
        for err in errors:
            if err is not None:
                raise err

    def close(self) -> None:
        """Stop the threads (a later :meth:`run` starts new ones)."""
        for inbox in self._inboxes:
            inbox.put(None)
        self._inboxes = []


#: below this many games per thread, a mancala batch steps its games on fewer threads
MIN_GAMES_PER_THREAD = 512


def games_flags(games: np.ndarray | None, num_games: int) -> np.ndarray:
    """``games`` (None: all; a boolean array; or indices) as one bool flag per game."""
    if games is None:
        return np.ones(num_games, dtype=np.bool_)
    arr = np.asarray(games)
    if arr.dtype == np.bool_:
        if arr.shape != (num_games,):
            raise ValueError(f"a boolean games array needs shape ({num_games},), got {arr.shape}")
        return np.ascontiguousarray(arr)
    if arr.size == 0:
        return np.zeros(num_games, dtype=np.bool_)
    if arr.ndim != 1 or not np.issubdtype(arr.dtype, np.integer):
        raise ValueError(
            "games must be game indices (a 1-d integer array) or one bool per game, got "
            f"{arr.dtype} of shape {arr.shape}"
        )
    if arr.min() < 0 or arr.max() >= num_games:
        raise IndexError(f"games: indices must be in 0..{num_games - 1}, got {arr.tolist()}")
    flags = np.zeros(num_games, dtype=np.bool_)
    flags[arr] = True
    return flags


class ArrayStateBatch:
    """What the mancala batches share: ``save``/``load``/``clone`` for a batch whose whole
    state is the arrays named in ``state_arrays`` (no generator: these games have no chance),
    the threads their compiled loops run on (:class:`BlockThreads`), and the protocol's verbs
    around those loops (``reset``, ``step``, ``play_random``, ``observe``, ``returns``, ...).

    A subclass calls :meth:`_init_threads` and :meth:`_allocate` in its constructor, names its
    compiled loops (``_restart_kernel``, ``_step_kernel``, ...: the game's rules) and their
    arguments (:meth:`_restart_args`, :meth:`_block_args`); each loop must only touch the games
    of the block it is handed.
    """

    state_arrays: tuple[str, ...] = ()
    num_games: int
    boards: np.ndarray
    current_player: np.ndarray
    legal_mask: np.ndarray
    terminal: np.ndarray
    observation_shape: tuple[int, ...]

    def _init_threads(self, threads: int | None, name: str) -> None:
        #: threads the compiled loops run on (see :func:`resolve_threads`)
        self.threads = resolve_threads(threads, self.num_games, MIN_GAMES_PER_THREAD)
        self._block_threads = BlockThreads(self.num_games, self.threads, name)
        self._thread_name = name

    def _run(self, kernel: Callable, args: Callable[[int, int], tuple]) -> None:
        """``kernel(*args(lo, hi))`` on every block of games, in parallel."""
        self._block_threads.run(kernel, lambda lo, hi, _block: args(lo, hi))

    def close(self) -> None:
        """Stop the worker threads (also done when the batch is garbage collected)."""
        if getattr(self, "_block_threads", None) is not None:
            self._block_threads.close()

    def __del__(self) -> None:
        self.close()

    def _allocate(self, num_actions: int) -> None:
        """The state arrays every mancala batch has, zeroed (:meth:`reset` fills them)."""
        n = self.num_games
        self.boards = np.zeros((n, *self.observation_shape), dtype=self.board_dtype)
        self.current_player = np.zeros(n, dtype=np.int64)
        self.terminal = np.zeros(n, dtype=np.bool_)
        self.legal_mask = np.zeros((n, num_actions), dtype=np.int8)

    def reset(
        self,
        seed: BatchSeed = None,
        games: np.ndarray | None = None,
        *,
        first_player: int | np.ndarray = 0,
    ) -> None:
        """Put ``games`` (default: all; an index or boolean array) back to the start position,
        ``first_player`` to move (seat 0 unless told; or one seat per game). There is no chance:
        ``seed`` is unused (but checked)."""
        check_batch_seed(seed)
        which = games_flags(games, self.num_games)
        first = np.broadcast_to(np.asarray(first_player, dtype=np.int64), (self.num_games,))
        if not np.isin(first, (0, 1)).all():
            raise ValueError(f"first_player must be 0 or 1, got {first_player!r}")
        self._run(type(self)._restart_kernel, self._restart_args(which, first))

    def _restart_args(self, which: np.ndarray, first: np.ndarray) -> Callable[[int, int], tuple]:
        """The arguments of :attr:`_restart_kernel` for games ``lo:hi`` (``which``: the games to
        restart, ``first``: their first players)."""
        raise NotImplementedError

    def refresh_masks(self) -> None:
        """Recompute ``legal_mask`` after ``boards``/``current_player``/``terminal`` were set."""
        type(self)._masks_kernel(self.boards, self.current_player, self.terminal, self.legal_mask)

    def observe(self) -> tuple[np.ndarray, np.ndarray]:
        """The mover's observation (the env's, unscaled) and the legal mask of every game (all
        zeros for finished games); fresh arrays."""
        obs = np.empty((self.num_games, *self.observation_shape), dtype=np.float32)
        players = self.current_player
        self._run(
            type(self)._observe_kernel,
            lambda lo, hi: (self.boards[lo:hi], players[lo:hi], obs[lo:hi]),
        )
        return obs, self.legal_mask.copy()

    def returns(self) -> np.ndarray:
        """(N, 2): each seat's result, +1 for a win, -1 for a loss, 0 for a draw; zeros for
        unfinished games."""
        out = np.zeros((self.num_games, 2), dtype=np.float64)
        type(self)._returns_kernel(self.boards, self.current_player, self.terminal, out)
        return out

    #: dtype of ``boards``
    board_dtype: Any
    #: compiled loops: over a block's games, the flagged ones back to the start (arguments from
    #: :meth:`_restart_args`); over all games, ``(boards, players, terminal, masks)`` sets
    #: each game's terminal flag and legal mask, ``(boards, players, out)`` writes each mover's
    #: observation, ``(boards, players, terminal, out)`` each finished game's results
    _restart_kernel: Callable
    _masks_kernel: Callable
    _observe_kernel: Callable
    _returns_kernel: Callable

    def sample_random_actions(self, rng: np.random.Generator) -> np.ndarray:
        """A uniformly random legal action per game (0 for finished games); the same actions
        as :func:`sample_legal_actions`, whatever the number of threads."""
        uniforms = rng.random(self.num_games)
        out = np.empty(self.num_games, dtype=np.int64)
        self._run(_pick_legal, lambda lo, hi: (self.legal_mask[lo:hi], uniforms[lo:hi], out[lo:hi]))
        return out

    def step(self, actions: np.ndarray) -> None:
        """Play ``actions[g]`` in every unfinished game ``g`` (finished games ignore theirs).

        All actions are checked first; if any is illegal nothing changes and the error names
        the first offending game.
        """
        actions = check_batch_actions(actions, self.legal_mask, self.terminal)
        self._run(type(self)._step_kernel, self._block_args(actions))

    def play_random(self, rng: np.random.Generator, max_moves: int | None = None) -> None:
        """Play every unfinished game on with uniformly random legal moves until it ends (or
        has made ``max_moves`` more moves), each thread playing whole games in one compiled loop
        (random rollouts). Each move is picked as :meth:`sample_random_actions` picks
        (:func:`pick_from_bits`), from a per-game stream of uniform numbers
        (:func:`rollout_streams`, seeded by one draw from ``rng``), so the games do not depend
        on the number of threads."""
        budget = move_budget(max_moves)
        if budget == 0:
            return
        streams = rollout_streams(rng, self.num_games)
        args = self._block_args(streams)
        self._run(type(self)._random_moves_kernel, lambda lo, hi: (*args(lo, hi), budget))

    #: the compiled loop of :meth:`step`, ``kernel(*block_args(actions)(lo, hi))``
    _step_kernel: Callable
    #: the compiled loop of :meth:`play_random`: random moves in each game of a block until it
    #: ends or has made ``max_moves`` (the last argument; -1: no limit), with the arguments
    #: :meth:`_block_args` gives for the games' random-number streams
    _random_moves_kernel: Callable

    def _block_args(self, moves: np.ndarray) -> Callable[[int, int], tuple]:
        """The arguments of :attr:`_step_kernel` (``moves``: one action per game) and of
        :attr:`_random_moves_kernel` (``moves``: one random-number stream per game) for games
        ``lo:hi``."""
        raise NotImplementedError

    def save(self) -> dict[str, Any]:
        """Copies of the state arrays; :meth:`load` restores them."""
        return save_arrays(self, self.state_arrays)

    def load(self, saved: dict[str, Any]) -> None:
        """Restore what :meth:`save` returned (same game, same number of games)."""
        load_arrays(self, saved, self.state_arrays)

    def clone(self) -> Self:
        """An independent copy: the same game, fresh copies of the state arrays."""
        twin = type(self).__new__(type(self))
        twin.__dict__.update(self.__dict__)
        twin.__dict__.update(self.save())
        if hasattr(self, "_block_threads"):  # threads of its own: callers may run both at once
            twin._block_threads = BlockThreads(self.num_games, self.threads, self._thread_name)
        return twin
