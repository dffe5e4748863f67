"""Many HiLo games stepped at once: arrays in, arrays out.

:class:`HiLoBatch` is a :class:`~spieltisch.envs._common.batch.BatchedGame`. The rules are not
restated here: the compiled loops call the kernels of :mod:`spieltisch.envs.hilo.rules`
(``deal``, ``step``, ``observe``, ``score_all``), the same ones a single
:class:`~spieltisch.envs.hilo.engine.HiLoState` and the env use. Each game row carries its own
generator, so game ``g`` played with the same seed and actions is exactly the single game.
"""

from __future__ import annotations

import copy
from typing import Any

import numba
import numpy as np
from spieltisch.envs._common.batch import (
    BatchSeed,
    check_batch_actions,
    check_batch_seed,
    check_game_index,
    check_int_seed,
    check_num_games,
    check_set_state,
    games_flags,
    load_arrays,
    move_budget,
    play_random_by_steps,
    sample_legal_actions,
    save_arrays,
)
from spieltisch.envs._common.options import pick_options
from spieltisch.envs.hilo import rules as R
from spieltisch.envs.hilo.engine import (
    REWARD_MODES,
    SCORE_CATEGORIES,
    STATE_DTYPE,
    HiLoGame,
    HiLoState,
    Seed,
    coins_rewards,
)

#: the env's options that do not concern a batch (truncation, seating, rendering, error handling)
ENV_ONLY_OPTIONS = ("max_turns", "random_start", "render_mode", "render_view", "illegal_action")


#: the arrays that hold the games (with the batch's generator: all that save() copies)
_STATE_ARRAYS = ("states", "rngs", "packed", "legal_mask")


@numba.njit(cache=True, nogil=True)
def _deal_all(states, rngs, seeds, cards, num_players, final_round, games, packed, masks):
    for k in range(games.shape[0]):
        g = games[k]
        rngs[g, 0] = seeds[k]
        packed[g] = R.deal(states[g], rngs[g], cards, num_players, final_round)
        R.fill_mask(packed[g], masks[g])


@numba.njit(cache=True, nogil=True)
def _step_all(states, rngs, cards, actions, packed, masks):
    for g in range(states.shape[0]):
        if packed[g] & 15 == R.PH_END:
            continue
        packed[g] = R.step(states[g], rngs[g], cards, actions[g])
        R.fill_mask(packed[g], masks[g])


@numba.njit(cache=True, nogil=True)
def _observe_all(states, cards, face_counts, viewers, out):
    out[:] = 0.0
    for g in range(states.shape[0]):
        R.observe(states[g], cards, face_counts, viewers[g], out[g])


@numba.njit(cache=True, nogil=True)
def _score_all(states, cards, out):
    for g in range(states.shape[0]):
        R.score_all(states[g], cards, out[g])


class HiLoBatch:
    """``num_games`` HiLo games in arrays, updated in place by :meth:`step` (a
    :class:`~spieltisch.envs._common.batch.BatchedGame`):

    * ``states`` (N, state_size) int32 and ``rngs`` (N, 1) uint64: the full games (hidden cards
      included; give agents :meth:`observations`, never these);
    * ``packed`` (N,) int64 status, ``legal_mask`` (N, num_actions) int8,
    * properties ``current_player``, ``terminal``, ``phase``, ``turns``.

    ``seed`` deals the games (see :meth:`reset`; a ``np.random.Generator`` is kept as the
    batch's generator, which later deals draw from). ``reward`` is the env's option: what
    :meth:`returns` gives.
    """

    game_name = "hilo"
    observation_scale = 1.0

    def __init__(
        self, game: HiLoGame, num_games: int, seed: Seed = None, reward: str = "win"
    ) -> None:
        num_games = check_num_games(num_games)
        if reward not in REWARD_MODES:
            raise ValueError(f"reward must be one of {REWARD_MODES}, got {reward!r}")
        self.game = game
        self.reward = reward
        self.num_games = int(num_games)
        self.num_players = game.num_players
        self.num_actions = game.num_actions
        self.observation_shape = (game.observation_size,)
        check_batch_seed(seed)
        self.rng = seed if isinstance(seed, np.random.Generator) else np.random.default_rng(seed)
        self.states = np.zeros((num_games, game.state_size), dtype=STATE_DTYPE)
        self.rngs = np.zeros((num_games, 1), dtype=np.uint64)
        self.packed = np.zeros(num_games, dtype=np.int64)
        self.legal_mask = np.zeros((num_games, game.num_actions), dtype=np.int8)
        self.reset()

    @classmethod
    def from_options(
        cls, options: dict[str, Any], num_games: int, seed: BatchSeed = None
    ) -> HiLoBatch:
        """The batch of the env's options: ``num_players``, ``final_round`` and ``deck`` (the
        game), ``reward`` (:meth:`returns`); the env's :data:`ENV_ONLY_OPTIONS` are ignored."""
        rule_names = ("num_players", "final_round", "deck")
        known = (*rule_names, "reward", *ENV_ONLY_OPTIONS)
        rules = pick_options("hilo", options, rule_names, known)
        reward = pick_options("hilo", options, ("reward",), known)
        return cls(HiLoGame(**rules), num_games, seed=seed, **reward)

    # --- status --------------------------------------------------------------------------------
    @property
    def current_player(self) -> np.ndarray:
        """(N,) int64: the seat to move (in a finished game the seat that moved last)."""
        return (self.packed >> 4) & 3

    @property
    def phase(self) -> np.ndarray:
        return self.packed & 15

    @property
    def terminal(self) -> np.ndarray:
        return self.packed & 15 == R.PH_END

    @property
    def turns(self) -> np.ndarray:
        """Completed turns per game (for truncating endless games)."""
        return self.states[:, R.H_TURNS].copy()

    # --- moves ---------------------------------------------------------------------------------
    def reset(self, seed: BatchSeed = None, games: np.ndarray | None = None) -> None:
        """Deal ``games`` (default all; indices or a boolean mask) anew.

        Each dealt game's own generator is seeded with one draw from a generator ``gen``, in
        game order, exactly as ``game.new_initial_state(gen)`` would for a single game: ``gen``
        is ``seed`` itself if it is a ``np.random.Generator`` (the caller's generator advances
        by one draw per game and is not kept); for an int the batch's generator is first
        reseeded as ``np.random.default_rng(seed)``; None draws from the batch's generator.
        """
        idx = np.flatnonzero(games_flags(games, self.num_games))
        if isinstance(seed, np.random.Generator):
            gen = seed
        else:
            if seed is not None:
                self.rng = np.random.default_rng(check_int_seed(seed))
            gen = self.rng
        seeds = np.array(
            [gen.integers(0, 2**63, dtype=np.int64) for _ in range(idx.size)], dtype=np.uint64
        )
        game = self.game
        _deal_all(
            self.states,
            self.rngs,
            seeds,
            game.deck.cards,
            game.num_players,
            game.final_round,
            idx.astype(np.int64),
            self.packed,
            self.legal_mask,
        )

    def step(self, actions: np.ndarray) -> None:
        """Play ``actions[g]`` in every unfinished game ``g`` (finished games ignore theirs).

        All actions are checked first; if any is illegal, nothing changes and the error names the
        first offending game.
        """
        actions = check_batch_actions(actions, self.legal_mask, self.terminal)
        _step_all(
            self.states, self.rngs, self.game.deck.cards, actions, self.packed, self.legal_mask
        )

    def sample_random_actions(self, rng: np.random.Generator) -> np.ndarray:
        """A uniformly random legal action per game (0 for finished games)."""
        return sample_legal_actions(self.legal_mask, rng)

    def play_random(
        self, rng: np.random.Generator | None = None, max_moves: int | None = None
    ) -> None:
        """Play every unfinished game on with uniformly random legal actions drawn from ``rng``
        (None: the batch's generator) until it ends or has made ``max_moves`` more (None: no
        limit): :meth:`sample_random_actions` and :meth:`step` for all games at a time (a HiLo
        game is short; no compiled rollout loop)."""
        budget = move_budget(max_moves)
        play_random_by_steps(self, self.rng if rng is None else rng, budget)

    # --- information ---------------------------------------------------------------------------
    def observe(self) -> tuple[np.ndarray, np.ndarray]:
        """The player to move's :meth:`observations` and a copy of ``legal_mask`` (all zero for
        finished games)."""
        return self.observations(), self.legal_mask.copy()

    def observations(self, viewers: np.ndarray | None = None) -> np.ndarray:
        """(N, observation_size) float32: game ``g`` seen by seat ``viewers[g]`` (default: the
        player to move). Holds exactly what that seat may know."""
        if viewers is None:
            viewers = self.current_player
        viewers = np.asarray(viewers, dtype=np.int64)
        if viewers.shape != (self.num_games,):
            raise ValueError(f"viewers must have shape ({self.num_games},), got {viewers.shape}")
        if ((viewers < 0) | (viewers >= self.game.num_players)).any():
            raise ValueError(f"viewers must be seats 0..{self.game.num_players - 1}")
        out = np.empty((self.num_games, self.game.observation_size), dtype=np.float32)
        deck = self.game.deck
        _observe_all(self.states, deck.cards, deck.face_counts, viewers, out)
        return out

    def score_breakdown(self) -> np.ndarray:
        """(N, num_players, 6) int64: coins per rule (:data:`SCORE_CATEGORIES`) and the total."""
        out = np.zeros(
            (self.num_games, self.game.num_players, len(SCORE_CATEGORIES) + 1), dtype=np.int64
        )
        _score_all(self.states, self.game.deck.cards, out)
        return out

    def coins(self) -> np.ndarray:
        """(N, num_players) coins of the layouts as they lie (final once a game is over)."""
        return self.score_breakdown()[:, :, -1]

    def returns(self) -> np.ndarray:
        """(N, num_players) float64 final rewards as the env's ``reward`` option gives them:
        zero-sum win shares as :meth:`HiLoState.returns` (``"win"``) or
        :func:`~spieltisch.envs.hilo.engine.coins_rewards` (``"coins"``); zeros while running."""
        coins = self.coins()
        if self.reward == "coins":
            r = coins_rewards(coins)
        else:
            n = self.game.num_players
            won = coins == coins.max(axis=1, keepdims=True)
            k = won.sum(axis=1, keepdims=True)
            with np.errstate(divide="ignore", invalid="ignore"):
                r = np.where(won, 1.0 / k, -1.0 / (n - k))
            r[(k[:, 0] == n)] = 0.0
        r[~self.terminal] = 0.0
        return r

    # --- saving and copying --------------------------------------------------------------------
    def save(self) -> dict[str, Any]:
        """Copies of the games (``states``, ``rngs``, ``packed``, ``legal_mask``) and of the
        batch's generator; :meth:`load` restores them."""
        saved = save_arrays(self, _STATE_ARRAYS)
        return {**saved, "rng": copy.deepcopy(self.rng)}

    def load(self, saved: dict[str, Any]) -> None:
        """Restore what :meth:`save` returned (same game, same number of games)."""
        load_arrays(self, saved, _STATE_ARRAYS)
        self.rng = copy.deepcopy(saved["rng"])

    def clone(self) -> HiLoBatch:
        """An independent copy (games, their generators and the batch's generator)."""
        twin = HiLoBatch(self.game, self.num_games, reward=self.reward)
        twin.load(self.save())
        return twin

    # --- single games --------------------------------------------------------------------------
    def state(self, g: int) -> HiLoState:
        """Game ``g`` as a single-game state (a copy)."""
        g = check_game_index(g, self.num_games)
        return HiLoState(self.game, self.states[g].copy(), self.rngs[g].copy(), int(self.packed[g]))

    def set_state(self, g: int, state: HiLoState) -> None:
        """Overwrite game ``g`` with ``state`` (same game parameters; another type or game is
        refused, the batch unchanged)."""
        g = check_game_index(g, self.num_games)
        check_set_state(state, HiLoState, self.game)
        self.states[g] = state.s
        self.rngs[g] = state.rng
        self.packed[g] = state._packed
        self.legal_mask[g] = state.legal_mask()
