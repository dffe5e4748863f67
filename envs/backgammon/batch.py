"""Many backgammon games stepped at once: arrays in, arrays out, on several threads.

:class:`BackgammonBatch` is a :class:`~spieltisch.envs._common.batch.BatchedGame`. The rules are
not restated here: the compiled loops call the kernels of :mod:`spieltisch.envs.backgammon.rules`
(the observation included), the same ones a single
:class:`~spieltisch.envs.backgammon.engine.BackgammonState` and the env use. Each game is one row
of ``states`` (the state vector of :mod:`.rules`). Chance nodes never show: after every call, each
unfinished game waits for a decision (checker move, pass, or cube action), its dice rolled from
the batch's own seeded generator.

Two ways to step:

* :meth:`BackgammonBatch.step` with one action per game (checker moves, as the env's actions),
  checked against ``legal_mask`` first;
* whole plays: :meth:`~BackgammonBatch.legal_plays` lists every game's distinct resulting
  positions (for afterstate agents), :meth:`~BackgammonBatch.step_plays` plays the chosen ones;
  :meth:`~BackgammonBatch.step_random_plays` plays uniformly random ones, and
  :meth:`~BackgammonBatch.play_random` plays every game to its end that way (random rollouts).
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

import numba
import numpy as np
from spieltisch.envs._common.batch import (
    BatchSeed,
    BlockThreads,
    check_batch_actions,
    check_batch_seed,
    check_game_index,
    check_int_seed,
    check_num_games,
    check_set_state,
    games_flags,
    load_arrays,
    move_budget,
    next_uniform,
    resolve_threads,
    rollout_streams,
    sample_legal_actions,
    save_arrays,
)
from spieltisch.envs._common.errors import ActionTypeError, IllegalActionError
from spieltisch.envs._common.options import pick_options
from spieltisch.envs.backgammon import rules as k
from spieltisch.envs.backgammon.engine import REWARD_MODES, BackgammonGame, BackgammonState
from spieltisch.envs.backgammon.notation import check_board

ROLL_RANGE = 180  # the chance kernels take uniform numbers 0..179 (see rules.dice_of)
#: the env's options that do not concern a batch (truncation, rendering, error handling)
ENV_ONLY_OPTIONS = ("max_turns", "render_mode", "illegal_action")


@numba.njit(cache=True, nogil=True)
def _finish(s, r, masks, terminal, g, w, eager):
    """After a decision: roll if a chance node came up, set the end flag, and (``eager``)
    generate the plays and export the mask; else they are left for :func:`_refresh_all`."""
    if s[k.M_PHASE] <= k.PH_ROLL:
        if eager:
            k.roll(s, r, w)
        else:
            d1, d2 = k.dice_of(s, r)
            k.put_dice(s, d1, d2)
    if eager:
        for a in range(masks.shape[1]):
            masks[g, a] = s[k.MASK + a]
    terminal[g] = s[k.M_PHASE] == k.PH_OVER


@numba.njit(cache=True, nogil=True)
def _roll_some(states, games, rolls, masks, terminal, w, eager):
    for i in range(games.shape[0]):
        g = games[i]
        _finish(states[g], rolls[i], masks, terminal, g, w, eager)


@numba.njit(cache=True, nogil=True)
def _observe_all(states, viewers, out):
    for g in range(states.shape[0]):
        k.observe(states[g], viewers[g], out[g])


@numba.njit(cache=True, nogil=True)
def _refresh_all(states, masks, terminal, w):
    for g in range(states.shape[0]):
        s = states[g]
        if not terminal[g]:
            k.refresh(s, w)
        for a in range(masks.shape[1]):
            masks[g, a] = s[k.MASK + a]


# Each loop below runs over a contiguous block of games with one workspace; the batch splits the
# games into one block per thread and runs the blocks on a thread pool (the kernels release the
# GIL). Plain loops over contiguous blocks compile to much faster code than numba's prange here.
@numba.njit(cache=True, nogil=True)
def _step_all(states, actions, rolls, masks, terminal, w):
    for g in range(states.shape[0]):
        if terminal[g]:
            continue
        s = states[g]
        k.act(s, actions[g], w)
        _finish(s, rolls[g], masks, terminal, g, w, True)


@numba.njit(cache=True, nogil=True)
def _random_plays(states, rolls, uniforms, masks, terminal, w):
    for g in range(states.shape[0]):
        if terminal[g]:
            continue
        s = states[g]
        _random_decision(s, uniforms[g], w)
        _finish(s, rolls[g], masks, terminal, g, w, False)


@numba.njit(cache=True, nogil=True)
def _random_decision(s, u, w):
    """One uniformly random decision in state ``s`` from the uniform number ``u``: a legal play,
    or an even choice between the two cube answers of the phase."""
    phase = s[k.M_PHASE]
    if phase == k.PH_MOVE:
        n = k.generate(s, w, False)
        k.play(s, min(int(u * n), n - 1), w)
    elif phase == k.PH_CUBE:
        k.act(s, k.ROLL if u < 0.5 else k.DOUBLE, w)
    else:
        k.act(s, k.TAKE if u < 0.5 else k.DROP, w)


@numba.njit(cache=True, nogil=True)
def _play_random(states, choices, dice, masks, terminal, max_moves, w):
    """Every game on with random decisions (as :func:`_random_plays`) and dice until it ends or
    has made ``max_moves`` decisions (-1: no limit), each game before the next (no barrier
    between the steps, good cache locality), the numbers from the game's own streams
    (:func:`~spieltisch.envs._common.batch.next_uniform`): ``choices`` for the decisions,
    ``dice`` for the rolls (the same array: one stream drawn alternately)."""
    for g in range(states.shape[0]):
        s = states[g]
        made = 0
        while made != max_moves and not terminal[g]:
            made += 1
            _random_decision(s, next_uniform(choices, g), w)
            roll = min(int(next_uniform(dice, g) * ROLL_RANGE), ROLL_RANGE - 1)
            _finish(s, roll, masks, terminal, g, w, False)


@numba.njit(cache=True, nogil=True)
def _count_plays(states, counts, masks, terminal, w):
    """Generate every game's plays (and mask, so that stale masks are up to date after)."""
    for g in range(states.shape[0]):
        s = states[g]
        counts[g] = 0
        if not terminal[g]:
            k.refresh(s, w)
            if s[k.M_PHASE] == k.PH_MOVE:
                counts[g] = s[k.M_NPLAYS]
        for a in range(masks.shape[1]):
            masks[g, a] = s[k.MASK + a]


@numba.njit(cache=True, nogil=True)
def _fill_plays(states, offsets, boards, moves, w):
    """``offsets`` holds this block's games' first rows (and one more) in ``boards``."""
    for g in range(states.shape[0]):
        s = states[g]
        first = offsets[g]
        if offsets[g + 1] == first:
            continue
        n = k.generate(s, w, False)
        k.play_boards(s, w, boards[first : first + n])
        for i in range(n):
            for j in range(4):
                moves[first + i, j] = w[k.W_MOVES + 4 * i + j]


@numba.njit(cache=True, nogil=True)
def _step_plays(states, offsets, moves, choices, rolls, masks, terminal, w):
    for g in range(states.shape[0]):
        if terminal[g] or offsets[g + 1] == offsets[g]:
            continue
        s = states[g]
        me = k.SIDE * s[k.M_TURN]
        row = offsets[g] + choices[g]
        for j in range(4):
            a = moves[row, j]
            if a < 0:
                break
            k.move_checker(s, me, k.SIDE - me, a // 6, a % 6 + 1)
        s[k.M_NDICE] = 0
        if not k.finish_if_won(s):
            k.end_turn(s)
        _finish(s, rolls[g], masks, terminal, g, w, False)


class BackgammonBatch:
    """``num_games`` backgammon games in arrays, all updated in place (a
    :class:`~spieltisch.envs._common.batch.BatchedGame`):

    * ``states`` ``(N, STATE_SIZE)`` int32: one state vector per game (layout in
      :mod:`.rules`; ``boards`` is a view of its first 52 columns);
    * ``legal_mask`` ``(N, num_actions)`` int8: the legal actions of the player to act (after
      whole-play steps it is computed on first access, so play-only loops never pay for it);
    * ``terminal`` ``(N,)`` bool.

    After whole-play steps the mask columns of ``states`` (and its play count) are brought up
    to date when ``legal_mask`` or :meth:`legal_plays` is next read.

    ``seed`` seeds the dice (a ``np.random.Generator`` is used as the batch's generator itself).
    ``threads`` (default: numba's thread count) splits the games into that many blocks, each
    stepped by its own worker thread (the compiled loops release the GIL); results do not depend
    on it. ``reward`` is the env's option: what :meth:`returns` gives.
    """

    game_name = "backgammon"
    num_players = 2
    observation_scale = 1.0

    def __init__(
        self,
        game: BackgammonGame,
        num_games: int,
        seed: int | np.random.Generator | None = None,
        threads: int | None = None,
        reward: str = "points",
    ) -> None:
        num_games = check_num_games(num_games)
        threads = resolve_threads(threads, num_games, 1)
        if reward not in REWARD_MODES:
            raise ValueError(f"reward must be one of {REWARD_MODES}, got {reward!r}")
        self.game = game
        self.reward = reward
        self.num_games = num_games
        self.num_actions = game.num_actions
        self.observation_shape = (k.OBS_SIZE_CUBE if game.cube else k.OBS_SIZE,)
        check_batch_seed(seed)
        self.rng = seed if isinstance(seed, np.random.Generator) else np.random.default_rng(seed)
        self.states = np.zeros((self.num_games, k.STATE_SIZE), dtype=np.int32)
        self._mask = np.zeros((self.num_games, game.num_actions), dtype=np.int8)
        self._mask_stale = False
        self.terminal = np.zeros(self.num_games, dtype=np.bool_)
        self.threads = threads
        self._threads = BlockThreads(self.num_games, threads, "backgammon")
        # One separately allocated workspace per block: numba counts references to an array's
        # memory atomically, so threads sharing one parent array would contend on its counter.
        self._ws = [k.new_workspace() for _ in self._threads.blocks]
        self._plays: tuple[np.ndarray, np.ndarray, np.ndarray] | None = None
        self.reset()

    @classmethod
    def from_options(
        cls, options: dict[str, Any], num_games: int, seed: BatchSeed = None
    ) -> BackgammonBatch:
        """The batch of the env's options: ``cube`` and ``max_cube`` (the game), ``reward``
        (:meth:`returns`); the env's :data:`ENV_ONLY_OPTIONS` are ignored. One thread, as
        self-play training steps it (results do not depend on the number of threads)."""
        rule_names = ("cube", "max_cube")
        known = (*rule_names, "reward", *ENV_ONLY_OPTIONS)
        rules = pick_options("backgammon", options, rule_names, known)
        reward = pick_options("backgammon", options, ("reward",), known)
        return cls(BackgammonGame(**rules), num_games, seed=seed, threads=1, **reward)

    def _run(self, kernel: Callable, args: Callable[[int, int], tuple]) -> None:
        """``kernel(*args(lo, hi), workspace)`` on every block of games, in parallel."""
        self._threads.run(kernel, lambda lo, hi, block: (*args(lo, hi), self._ws[block]))

    def close(self) -> None:
        """Stop the worker threads (also done when the batch is garbage collected)."""
        if getattr(self, "_threads", None) is not None:
            self._threads.close()

    def __del__(self) -> None:
        self.close()

    @property
    def legal_mask(self) -> np.ndarray:
        """``(N, num_actions)`` int8: the legal actions of the player to act in each game
        (all zero in finished games)."""
        if self._mask_stale:
            self._run(
                _refresh_all,
                lambda lo, hi: (self.states[lo:hi], self._mask[lo:hi], self.terminal[lo:hi]),
            )
            self._mask_stale = False
        return self._mask

    @property
    def boards(self) -> np.ndarray:
        """``(N, 52)`` view of the boards (layout in :mod:`.rules`)."""
        return self.states[:, : k.BOARD_SIZE]

    def _rolls(self) -> np.ndarray:
        return self.rng.integers(0, ROLL_RANGE, size=self.num_games)

    @property
    def current_player(self) -> np.ndarray:
        """``(N,)`` int64: the seat to act per game (never -1: chance nodes never show; in a
        finished game the seat that acted last)."""
        return self.states[:, k.M_PLAYER].astype(np.int64)

    def reset(self, seed: BatchSeed = None, games: np.ndarray | None = None) -> None:
        """Put ``games`` (default: all; an index or boolean array) back to the start and play
        their opening rolls; the other games are left as they are (so finished games can be
        restarted while the rest play on).

        ``seed`` first reseeds the batch's generator (all the dice come from it): an int as
        ``np.random.default_rng(seed)``; a ``np.random.Generator`` gives one draw,
        ``int(seed.integers(0, 2**63))``, that seeds a new generator of the batch (the caller's
        generator is advanced by that one draw and not kept); None keeps the generator as it is.
        """
        idx = np.flatnonzero(games_flags(games, self.num_games))  # (checked before any change)
        if isinstance(seed, np.random.Generator):
            self.rng = np.random.default_rng(int(seed.integers(0, 2**63)))
        elif seed is not None:
            self.rng = np.random.default_rng(check_int_seed(seed))
        if idx.size == 0:
            return
        self.states[idx] = self.game.new_initial_state().s
        self.terminal[idx] = False
        self._plays = None
        _roll_some(
            self.states,
            np.ascontiguousarray(idx, dtype=np.int64),
            self.rng.integers(0, ROLL_RANGE, size=idx.size),
            self._mask,
            self.terminal,
            self._ws[0],
            not self._mask_stale,  # stale masks are all recomputed when next read
        )

    def step(self, actions: np.ndarray) -> None:
        """Play ``actions[g]`` (one checker move, PASS, or cube action) in every unfinished game
        ``g`` (finished games ignore theirs). All actions are checked first; if any is illegal,
        nothing changes and the error names the first offending game."""
        actions = check_batch_actions(actions, self.legal_mask, self.terminal)
        self._plays = None
        rolls = self._rolls()
        self._run(
            _step_all,
            lambda lo, hi: (self.states[lo:hi], actions[lo:hi], rolls[lo:hi],
                            self._mask[lo:hi], self.terminal[lo:hi]),
        )  # fmt: skip

    def sample_random_actions(self, rng: np.random.Generator) -> np.ndarray:
        """A uniformly random legal action per game (0 for finished games)."""
        return sample_legal_actions(self.legal_mask, rng)

    def step_random_plays(self) -> None:
        """Every unfinished game makes one random decision with the batch's generator: a
        uniformly random legal play (of its distinct resulting positions) when moving, a coin
        flip at cube decisions."""
        self._plays = None
        rolls, uniforms = self._rolls(), self.rng.random(self.num_games)
        self._run(
            _random_plays,
            lambda lo, hi: (self.states[lo:hi], rolls[lo:hi], uniforms[lo:hi],
                            self._mask[lo:hi], self.terminal[lo:hi]),
        )  # fmt: skip
        self._mask_stale = True

    def play_random(
        self, rng: np.random.Generator | None = None, max_moves: int | None = None
    ) -> None:
        """Play every unfinished game on with random decisions of the kind
        :meth:`step_random_plays` makes (random rollouts) until it ends or has made
        ``max_moves`` more decisions (plays and cube answers; None: no limit). Each thread plays
        whole games, each game drawing from streams of its own (as the mancala batches'
        rollouts): the decisions' seeded by one number of ``rng``, the dice's by one of the
        batch's generator; with ``rng`` None one stream of the batch's generator serves both.
        So the result does not depend on the number of threads, and no numbers are drawn for
        all games between the threads' work (those serial draws held 2 threads to 1.65-1.74x
        one)."""
        budget = move_budget(max_moves)
        if budget == 0:
            return
        dice = rollout_streams(self.rng, self.num_games)
        choices = dice if rng is None else rollout_streams(rng, self.num_games)
        self._plays = None
        self._run(
            _play_random,
            lambda lo, hi: (self.states[lo:hi], choices[lo:hi], dice[lo:hi], self._mask[lo:hi],
                            self.terminal[lo:hi], budget),
        )  # fmt: skip
        self._mask_stale = True

    def legal_plays(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The legal plays of every game about to move: ``(offsets, boards, actions)``.

        Game ``g``'s plays are rows ``offsets[g] : offsets[g + 1]`` of ``boards`` ``(total,
        52)`` int8 (the resulting boards) and ``actions`` ``(total, 4)`` (their checker-move
        actions, -1 padded; all -1 for the empty play of a roll that cannot be played), in the
        order of :meth:`BackgammonState.legal_plays`. Games not in the move phase (cube
        decisions, finished games) have none."""
        if self._plays is None:
            counts = np.zeros(self.num_games, dtype=np.int64)
            self._run(
                _count_plays,
                lambda lo, hi: (self.states[lo:hi], counts[lo:hi], self._mask[lo:hi],
                                self.terminal[lo:hi]),
            )  # fmt: skip
            self._mask_stale = False
            offsets = np.zeros(self.num_games + 1, dtype=np.int64)
            np.cumsum(counts, out=offsets[1:])
            total = int(offsets[-1])
            boards = np.zeros((total, k.BOARD_SIZE), dtype=np.int8)
            actions = np.full((total, 4), -1, dtype=np.int64)
            self._run(
                _fill_plays,
                lambda lo, hi: (self.states[lo:hi], offsets[lo : hi + 1], boards, actions),
            )
            self._plays = (offsets, boards, actions)
        offsets, boards, actions = self._plays
        return offsets.copy(), boards.copy(), actions.copy()

    def step_plays(self, choices: np.ndarray, rolls: np.ndarray | None = None) -> None:
        """Play ``choices[g]`` (an index into game ``g``'s :meth:`legal_plays`) in every game
        about to move; the others (cube decisions, finished games) ignore theirs. Checked
        first: on a bad index nothing changes.

        ``rolls``: the dice each game rolls next (after its play), ``(N,)`` integers 0..179 as
        :func:`.rules.dice_of` reads them (the roll phase: ``r % 36`` is the roll
        ``(r % 36 // 6 + 1, r % 6 + 1)``), in place of draws from the batch's generator (which
        is then left as it is): controlled dice, e.g. for stratified rollouts."""
        offsets, _, actions = self._plays_cached()
        arr = np.asarray(choices)
        if arr.shape != (self.num_games,) or not np.issubdtype(arr.dtype, np.integer):
            raise ActionTypeError(
                f"expected one integer play index per game, shape ({self.num_games},), got "
                f"{arr.shape} {arr.dtype}"
            )
        if rolls is not None:
            rolls = np.asarray(rolls)
            if rolls.shape != (self.num_games,) or not np.issubdtype(rolls.dtype, np.integer):
                raise ActionTypeError(
                    f"expected one integer roll per game, shape ({self.num_games},), got "
                    f"{rolls.shape} {rolls.dtype}"
                )
            if ((rolls < 0) | (rolls >= ROLL_RANGE)).any():
                raise ValueError(f"rolls must be integers 0..{ROLL_RANGE - 1}")
            rolls = np.ascontiguousarray(rolls, dtype=np.int64)
        counts = np.diff(offsets)
        bad = np.flatnonzero((counts > 0) & ((arr < 0) | (arr >= counts)))
        if bad.size:
            g = int(bad[0])
            raise IllegalActionError(
                f"game {g}: play index {int(arr[g])} is out of range 0..{int(counts[g]) - 1}"
            )
        arr = np.ascontiguousarray(arr, dtype=np.int64)
        self._plays = None
        if rolls is None:
            rolls = self._rolls()
        self._run(
            _step_plays,
            lambda lo, hi: (self.states[lo:hi], offsets[lo : hi + 1], actions, arr[lo:hi],
                            rolls[lo:hi], self._mask[lo:hi], self.terminal[lo:hi]),
        )  # fmt: skip
        self._mask_stale = True

    def _plays_cached(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        if self._plays is None:
            self.legal_plays()
        assert self._plays is not None
        return self._plays

    def observations(self, viewers: np.ndarray | None = None) -> np.ndarray:
        """``(N, *observation_shape)`` float32: game ``g`` seen by seat ``viewers[g]`` (default:
        the player to act), the env's observation of that seat (:func:`.rules.observe`)."""
        viewers = self.current_player if viewers is None else np.asarray(viewers, dtype=np.int64)
        if viewers.shape != (self.num_games,):
            raise ValueError(f"viewers must have shape ({self.num_games},), got {viewers.shape}")
        if ((viewers < 0) | (viewers > 1)).any():
            raise ValueError("viewers must be seats 0 or 1")
        out = np.empty((self.num_games, *self.observation_shape), dtype=np.float32)
        _observe_all(self.states, np.ascontiguousarray(viewers), out)
        return out

    def observe(self) -> tuple[np.ndarray, np.ndarray]:
        """The player to act's :meth:`observations` and a copy of :attr:`legal_mask` (all zero
        for finished games)."""
        return self.observations(), self.legal_mask.copy()

    def points(self) -> np.ndarray:
        """``(N, 2)`` points per seat (winner +points, loser -points: win type x cube), whatever
        the ``reward`` option; zeros for unfinished games."""
        pts = self.states[:, k.M_POINTS].astype(np.float64) * self.terminal
        sign = np.where(self.states[:, k.M_WINNER] == 0, 1.0, -1.0)
        return np.stack([pts * sign, -pts * sign], axis=1)

    def returns(self) -> np.ndarray:
        """``(N, 2)`` float64 final rewards as the env's ``reward`` option gives them:
        :meth:`points` (``"points"``) or their sign, +1 / -1 (``"win"``); zeros for unfinished
        games."""
        points = self.points()
        return np.sign(points) if self.reward == "win" else points

    def save(self) -> dict[str, Any]:
        """Copies of the games (``states``, ``terminal``, the up-to-date ``legal_mask``) and of
        the generator; :meth:`load` restores them."""
        saved = save_arrays(self, ("states", "terminal", "legal_mask"))
        return {**saved, "rng": copy.deepcopy(self.rng)}

    def load(self, saved: dict[str, Any]) -> None:
        """Restore what :meth:`save` returned (same game, same number of games)."""
        load_arrays(self, {**saved, "_mask": saved["legal_mask"]}, ("states", "terminal", "_mask"))
        self._mask_stale = False
        self._plays = None
        self.rng = copy.deepcopy(saved["rng"])

    def clone(self) -> BackgammonBatch:
        """An independent copy (games and generator; its own worker threads)."""
        twin = BackgammonBatch(self.game, self.num_games, threads=self.threads, reward=self.reward)
        twin.load(self.save())
        return twin

    def state(self, g: int) -> BackgammonState:
        """Game ``g`` as a single-game state (a copy)."""
        g = check_game_index(g, self.num_games)
        return BackgammonState(self.game, self.states[g].copy())

    def set_state(self, g: int, state: BackgammonState) -> None:
        """Overwrite game ``g`` with ``state`` (same game parameters). A state at a chance node
        gets its dice rolled from the batch's generator. A state of another type or game, or
        whose board is no backgammon position (15 checkers a side, as a position's text is
        checked), is refused, the batch unchanged."""
        g = check_game_index(g, self.num_games)
        check_set_state(state, BackgammonState, self.game)
        if not isinstance(state.s, np.ndarray) or state.s.shape != self.states.shape[1:]:
            raise ValueError(f"state's vector must have shape {self.states.shape[1:]}")
        check_board(state.s[: k.BOARD_SIZE])
        self.states[g] = state.s
        self.terminal[g] = state.is_terminal()
        self._plays = None
        _roll_some(
            self.states,
            np.array([g], dtype=np.int64),
            self.rng.integers(0, ROLL_RANGE, size=1),
            self._mask,
            self.terminal,
            self._ws[0],
            not self._mask_stale,
        )
