"""Batched games as self-play training sees them: many games, one mover each, observations.

Each game adapter wraps a batched engine (``envs/<game>/batch.py``) and offers the same small
interface to the training loop:

* ``num_games``, ``num_players``, ``num_actions``, ``observation_size``;
* ``reset(rng)``: start every game anew (who moves first, deals and dice from ``rng``);
* ``observe()``: ``(obs, mask, mover)`` for the player to move in every game; ``obs`` equals the
  AEC env's observation of that seat (tested in ``tests/test_train_games.py``);
* ``step(actions)``: play one action per unfinished game;
* ``terminal`` (N,) bool and ``returns()`` (N, num_players), the env's ``"win"`` rewards.

The observation functions are written here (vectorised over the batch) because the engines do
not all offer one; each is checked against the env on random positions.
"""

from __future__ import annotations

from typing import Any, Protocol

import numpy as np
from spieltisch.envs.hilo.batch import HiLoBatch
from spieltisch.envs.hilo.engine import HiLoGame, coins_rewards
from spieltisch.envs.hus.batch import HusBatch
from spieltisch.envs.hus.engine import HusGame
from spieltisch.envs.hus.engine import observation_index as hus_observation_index
from spieltisch.envs.kalaha.batch import KalahaBatch
from spieltisch.envs.kalaha.engine import KalahaGame
from spieltisch.envs.kalaha.engine import observation_index as kalaha_observation_index


class BatchedGame(Protocol):
    game_name: str
    num_games: int
    num_players: int
    num_actions: int
    observation_size: int
    #: divide raw observations by this before the network (stone or card counts)
    observation_scale: float

    @property
    def terminal(self) -> np.ndarray: ...

    def reset(self, rng: np.random.Generator) -> None: ...

    def observe(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]: ...

    def step(self, actions: np.ndarray) -> None: ...

    def returns(self) -> np.ndarray: ...


class _MancalaGames:
    """What the Kalaha and Hus adapters share: a batched engine and an observation index per
    seat (``self.observation_index``, ``(2, observation size)``: the board indices of each
    seat's observation, also read by the compiled search of ``search=N`` agents)."""

    num_players = 2

    @property
    def terminal(self) -> np.ndarray:
        return self.batch.terminal

    def reset(self, rng: np.random.Generator) -> None:
        # Seat 0 always moves first in the engine; which *learner role* sits there is the
        # trainer's business, so no randomness is needed here.
        self.batch.reset()

    def observe(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        mover = self.batch.current_player.copy()
        obs = np.take_along_axis(self.batch.boards, self.observation_index[mover], axis=1)
        return obs.astype(np.float32), self.batch.legal_mask.copy(), mover

    def step(self, actions: np.ndarray) -> None:
        self.batch.step(actions)

    def returns(self) -> np.ndarray:
        return self.batch.returns()

    def load(self, boards: np.ndarray, players: np.ndarray, terminal: np.ndarray) -> None:
        """Set every game to the given positions (``num_games`` rows); used by search."""
        self.batch.boards[:] = boards
        self.batch.current_player[:] = players
        self.batch.terminal[:] = terminal
        self.batch.refresh_masks()


class KalahaGames(_MancalaGames):
    """Kalaha games; observation as ``kalaha_v0`` (the board turned so the mover comes first)."""

    game_name = "kalaha"

    def __init__(self, options: dict[str, Any], num_games: int) -> None:
        self.game = KalahaGame(
            pits=int(options.get("pits", 6)),
            seeds=int(options.get("seeds", 6)),
            rules=str(options.get("rules", "goki")),
        )
        self.batch = KalahaBatch(self.game, num_games)
        self.num_games = num_games
        self.num_actions = self.game.pits
        self.observation_size = 2 * self.game.pits + 2
        self.observation_scale = float(self.game.seeds)
        self.observation_index = np.stack(
            [kalaha_observation_index(self.game.pits, s) for s in range(2)]
        )


class HusGames(_MancalaGames):
    """Hus games; observation as ``hus_v0`` (the mover's rows first)."""

    game_name = "hus"
    num_actions = 16
    observation_size = 32
    observation_scale = 4.0

    def __init__(self, options: dict[str, Any], num_games: int) -> None:
        kwargs = {"max_sown": int(options["max_sown"])} if "max_sown" in options else {}
        self.game = HusGame(**kwargs)
        self.batch = HusBatch(self.game, num_games)
        self.num_games = num_games
        self.observation_index = np.stack([hus_observation_index(s) for s in range(2)])


class HiLoGames:
    """HiLo games (2-4 players, hidden cards); observations from the engine's own function,
    which shows each seat only what it may know."""

    game_name = "hilo"
    observation_scale = 1.0

    def __init__(self, options: dict[str, Any], num_games: int) -> None:
        kwargs = {k: options[k] for k in ("num_players", "final_round") if k in options}
        self.reward = str(options.get("reward", "win"))
        if self.reward not in ("win", "coins"):
            raise ValueError(f"reward must be 'win' or 'coins', got {self.reward!r}")
        self.game = HiLoGame(**kwargs)
        self.batch = HiLoBatch(self.game, num_games, seed=0)
        self.num_games = num_games
        self.num_players = self.game.num_players
        self.num_actions = self.game.num_actions
        self.observation_size = self.game.observation_size

    @property
    def terminal(self) -> np.ndarray:
        return self.batch.terminal

    def reset(self, rng: np.random.Generator) -> None:
        self.batch.reset(seed=rng)

    def observe(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        mover = np.asarray(self.batch.current_player, dtype=np.int64).copy()
        obs = self.batch.observations(mover)
        mask = self.batch.legal_mask.copy()
        mask[self.batch.terminal] = 0
        return obs, mask, mover

    def step(self, actions: np.ndarray) -> None:
        self.batch.step(actions)

    def returns(self) -> np.ndarray:
        """The env's final rewards: ``reward="win"`` (zero-sum win shares, the default) or
        ``"coins"`` (own coins minus the mean of the others': a denser training signal)."""
        if self.reward == "win":
            return self.batch.returns()
        r = coins_rewards(self.batch.coins())
        r[~self.batch.terminal] = 0.0
        return r


class BackgammonGames:
    """Backgammon games without the cube; one checker move per step as ``backgammon_v0``;
    rewards +1 / -1 (the env's ``reward="win"``: the value head predicts the win chance)."""

    game_name = "backgammon"
    num_players = 2
    observation_size = 59
    observation_scale = 1.0

    def __init__(self, options: dict[str, Any], num_games: int) -> None:
        from spieltisch.envs.backgammon import rules as k
        from spieltisch.envs.backgammon.batch import BackgammonBatch
        from spieltisch.envs.backgammon.engine import BackgammonGame

        if options.get("cube"):
            raise ValueError("self-play training supports backgammon without the cube only")
        self.k = k
        self.game = BackgammonGame()
        self.batch = BackgammonBatch(self.game, num_games, seed=0, threads=1)
        self.num_games = num_games
        self.num_actions = self.game.num_actions
        self._points = np.arange(24)

    @property
    def terminal(self) -> np.ndarray:
        return self.batch.terminal

    def reset(self, rng: np.random.Generator) -> None:
        # The dice come from the batch's own generator, reseeded from ``rng`` per iteration.
        self.batch.rng = np.random.default_rng(int(rng.integers(0, 2**63)))
        self.batch.reset()

    def observe(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        k, s = self.k, self.batch.states
        mover = self.batch.current_player().astype(np.int64)
        mover = np.where(mover < 0, 0, mover)
        own = (k.SIDE * mover)[:, None]
        opp = (k.SIDE * (1 - mover))[:, None]
        rows = np.arange(self.num_games)[:, None]
        obs = np.zeros((self.num_games, 59), dtype=np.float32)
        obs[:, 0:24] = s[rows, own + self._points]
        obs[:, 24:48] = s[rows, opp + 23 - self._points]
        obs[:, 48] = s[rows[:, 0], own[:, 0] + k.BAR]
        obs[:, 49] = s[rows[:, 0], opp[:, 0] + k.BAR]
        obs[:, 50] = s[rows[:, 0], own[:, 0] + k.OFF]
        obs[:, 51] = s[rows[:, 0], opp[:, 0] + k.OFF]
        for j in range(4):
            has = s[:, k.M_NDICE] > j
            die = s[:, k.M_DICE + j]
            np.add.at(obs, (np.flatnonzero(has), 51 + die[has]), 1.0)
        obs[:, 58] = ~self.batch.terminal
        return obs, self.batch.legal_mask.copy(), mover

    def step(self, actions: np.ndarray) -> None:
        self.batch.step(actions)

    def returns(self) -> np.ndarray:
        return np.sign(self.batch.returns())


GAME_ADAPTERS: dict[str, type] = {
    "kalaha": KalahaGames,
    "hus": HusGames,
    "hilo": HiLoGames,
    "backgammon": BackgammonGames,
}


def make_batched_game(game: str, options: dict[str, Any], num_games: int) -> BatchedGame:
    """The training adapter of ``game`` with ``num_games`` games (rules ``options`` as the env)."""
    if game not in GAME_ADAPTERS:
        raise ValueError(
            f"self-play training does not support game {game!r} yet; "
            f"supported: {sorted(GAME_ADAPTERS)}"
        )
    return GAME_ADAPTERS[game](dict(options), num_games)
