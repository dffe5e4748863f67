"""The batched-game protocol against the PettingZoo env itself, through the env's public API.

``test_batch_contract.py`` compares each batch with the single-game engine move for move; here
the *env* (``make(game).reset/step/observe/last``) is stepped in lockstep with the batch over
random games and must show the same mover, observation, legal mask and final rewards (every
``reward`` option and player count), with the batch's chance handed to the env. Also: game
indices of ``state``/``set_state`` are checked as ``reset(games=...)`` checks them, the games do
not depend on ``threads``, and ``clone`` is independent of its original.
"""

from __future__ import annotations

import numpy as np
import pytest
from spieltisch.envs import make, make_batch
from spieltisch.envs.backgammon.batch import BackgammonBatch
from spieltisch.envs.hus.batch import HusBatch
from spieltisch.envs.kalaha.batch import KalahaBatch

NUM_GAMES = 5

LOCKSTEP_CASES = [
    ("kalaha", {}),
    ("kalaha", {"pits": 4, "seeds": 3, "rules": "standard", "reward": "score"}),
    ("hus", {}),
    ("hus", {"reward": "points"}),
    ("backgammon", {}),
    ("backgammon", {"reward": "win"}),
    ("backgammon", {"cube": True}),
    ("hilo", {}),
    ("hilo", {"num_players": 3, "reward": "coins"}),
    ("hilo", {"num_players": 4, "final_round": True}),
]
LOCKSTEP_IDS = [f"{g}-{'-'.join(f'{k}={v}' for k, v in o.items()) or 'default'}" for g, o in
                LOCKSTEP_CASES]  # fmt: skip
#: the batch's returns are the env's final rewards, except where the batch documents the win
#: value whatever the env's ``reward`` (Kalaha's and Hus's): there only the sign agrees
WIN_VALUE_ONLY = {("kalaha", "score"), ("hus", "points")}


class _Lockstep:
    """One env per batch game; backgammon's envs take their dice from the batch's games."""

    def __init__(self, game: str, options: dict, batch) -> None:
        self.game = game
        self.batch = batch
        self.envs = [make(game, max_turns=100_000, **options) for _ in range(batch.num_games)]
        self.pending: list[tuple[int, int] | None] = [None] * batch.num_games
        if game == "backgammon":
            for g, env in enumerate(self.envs):
                raw = env.unwrapped

                def after_move(raw=raw, g=g) -> None:
                    if raw.state.is_chance_node():
                        raw.state.set_dice(*self.pending[g])

                raw._after_move = after_move

    def reset(self, seed: int) -> None:
        batch = self.batch
        if self.game == "hilo":
            # game g dealt from default_rng(seed + g), exactly as the env's reset(seed + g)
            for g in range(batch.num_games):
                batch.reset(seed=np.random.default_rng(seed + g), games=[g])
        else:
            batch.reset(seed=seed)
        self._take_dice()
        for g, env in enumerate(self.envs):
            env.reset(seed=seed + g)

    def _take_dice(self) -> None:
        if self.game == "backgammon":
            self.pending = [self.batch.state(g).rolled() for g in range(self.batch.num_games)]

    def mover(self, g: int) -> tuple[str, dict]:
        env = self.envs[g]
        agent = env.agent_selection
        return agent, env.observe(agent)

    def step(self, actions: np.ndarray) -> None:
        live = ~self.batch.terminal
        self.batch.step(actions)
        self._take_dice()
        for g in np.flatnonzero(live):
            self.envs[int(g)].step(int(actions[g]))


@pytest.mark.parametrize(("game", "options"), LOCKSTEP_CASES, ids=LOCKSTEP_IDS)
def test_batch_and_env_agree_move_for_move_and_on_the_final_rewards(
    game: str, options: dict
) -> None:
    batch = make_batch(game, NUM_GAMES, seed=0, **options)
    run = _Lockstep(game, options, batch)
    rng = np.random.default_rng(21)
    finished_games = 0
    for episode in range(2):
        run.reset(seed=100 * episode)
        moves = 0
        while not batch.terminal.all():
            obs, mask = batch.observe()
            player = batch.current_player
            for g in np.flatnonzero(~batch.terminal):
                g = int(g)
                env = run.envs[g]
                agent, seen = run.mover(g)
                assert env.unwrapped.seat_of(agent) == player[g], (
                    f"game {g}: another mover ({episode}, {moves})"
                )
                np.testing.assert_array_equal(seen["observation"], obs[g])
                np.testing.assert_array_equal(seen["action_mask"], mask[g])
            actions = batch.sample_random_actions(rng)
            run.step(actions)
            moves += 1
            assert moves < 20_000
        returns = batch.returns()
        reward = options.get("reward")
        for g, env in enumerate(run.envs):
            raw = env.unwrapped
            assert all(raw.terminations.values()), f"game {g}: the env has not ended"
            final = np.array([raw.rewards[raw._agent_of_seat[s]] for s in
                              range(batch.num_players)])  # fmt: skip
            if (game, reward) in WIN_VALUE_ONLY:
                np.testing.assert_array_equal(np.sign(final), returns[g])
            else:
                np.testing.assert_allclose(returns[g], final)
            # what every agent's last() gives it as it leaves
            cumulative = [raw._cumulative_rewards[raw._agent_of_seat[s]] for s in
                          range(batch.num_players)]  # fmt: skip
            np.testing.assert_allclose(cumulative, final)
            finished_games += 1
        assert np.isclose(returns.sum(axis=1), 0).all() or reward == "coins"
    assert finished_games == 2 * NUM_GAMES


# ------------------------------------------------------------------------------------------------
# game indices
# ------------------------------------------------------------------------------------------------
GAMES = ["kalaha", "hus", "backgammon", "hilo"]


@pytest.mark.parametrize("game", GAMES)
def test_state_and_set_state_check_the_game_index(game: str) -> None:
    """``state(-1)`` was the last game and ``set_state(-1, s)`` overwrote it, ``state(True)``
    gave numpy's words (backgammon: "index 1 is out of bounds for axis 0 with size 1"), while
    ``reset(games=[-1])`` is refused: a game index is 0..num_games-1, one check for all."""
    batch = make_batch(game, 4, seed=2)
    rng = np.random.default_rng(2)
    for _ in range(3):
        batch.step(batch.sample_random_actions(rng))
    states = [batch.state(g) for g in range(4)]
    other = make_batch(game, 1, seed=7).state(0)
    for bad in (-1, 4, 10**9):
        with pytest.raises(IndexError, match=r"game index must be in 0\.\.3"):
            batch.state(bad)
        with pytest.raises(IndexError, match=r"game index must be in 0\.\.3"):
            batch.set_state(bad, other)
    for bad in (True, 1.0, "1", None, np.array([1])):
        with pytest.raises(TypeError, match="game index must be an integer"):
            batch.state(bad)
        with pytest.raises(TypeError, match="game index must be an integer"):
            batch.set_state(bad, other)
    assert [batch.state(g) for g in range(4)] == states  # nothing changed
    batch.set_state(np.int64(3), other)  # a numpy integer is an index
    assert batch.state(np.int64(3)) == other
    assert [batch.state(g) for g in range(3)] == states[:3]


# ------------------------------------------------------------------------------------------------
# threads, clone
# ------------------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("cls", "game"),
    [(KalahaBatch, "kalaha"), (HusBatch, "hus"), (BackgammonBatch, "backgammon")],
)
def test_games_do_not_depend_on_threads(cls, game: str) -> None:
    """Stepping, random rollouts and partial resets on 1 and on 3 threads (and more threads than
    games) give the same games."""
    proto = make_batch(game, 1).game
    runs = []
    for threads in (1, 3, 16):
        kwargs = {"seed": 5} if game == "backgammon" else {}
        batch = cls(proto, 10, threads=threads, **kwargs)
        assert batch.threads == threads
        rng = np.random.default_rng(1)
        for _ in range(4):
            batch.step(batch.sample_random_actions(rng))
        batch.play_random(np.random.default_rng(2), max_moves=3)
        batch.reset(games=[1, 7])
        obs, mask = batch.observe()
        batch.play_random(np.random.default_rng(3))
        runs.append((obs, mask, [batch.state(g) for g in range(10)], batch.returns()))
        batch.close()
    for other in runs[1:]:
        np.testing.assert_array_equal(runs[0][0], other[0])
        np.testing.assert_array_equal(runs[0][1], other[1])
        assert runs[0][2] == other[2]
        np.testing.assert_array_equal(runs[0][3], other[3])


@pytest.mark.parametrize("game", GAMES)
def test_a_clone_is_independent_of_its_original(game: str) -> None:
    batch = make_batch(game, 4, seed=3)
    twin = batch.clone()
    states = [twin.state(g) for g in range(4)]
    batch.play_random(np.random.default_rng(0))
    assert batch.terminal.all()
    assert [twin.state(g) for g in range(4)] == states
    assert not twin.terminal.any() and twin.observe()[1].any(axis=1).all()
    twin.step(twin.sample_random_actions(np.random.default_rng(1)))  # its arrays, not shared
    assert batch.terminal.all() and not batch.observe()[1].any()


@pytest.mark.parametrize("game", GAMES)
def test_observe_returns_fresh_arrays(game: str) -> None:
    batch = make_batch(game, 3, seed=4)
    obs, mask = batch.observe()
    obs[:] = -7
    mask[:] = 0
    again_obs, again_mask = batch.observe()
    assert again_mask.any(axis=1).all() and (again_obs != -7).any()
    batch.step(batch.sample_random_actions(np.random.default_rng(0)))  # the mask is intact


def test_set_state_refuses_a_state_of_another_game() -> None:
    """A KalahaBatch given a HusState failed with "'HusGame' object has no attribute 'pits'";
    a HusBatch took a state of other rules (``max_sown``) and played it under its own."""
    from spieltisch.envs.hus.engine import HusGame

    kalaha, hus = make_batch("kalaha", 2), make_batch("hus", 2)
    saved = (kalaha.state(0), hus.state(0))
    with pytest.raises(TypeError, match="KalahaState"):
        kalaha.set_state(0, hus.state(0))
    with pytest.raises(TypeError, match="HusState"):
        hus.set_state(0, kalaha.state(0))
    with pytest.raises(ValueError, match="max_sown=20"):
        hus.set_state(0, HusGame(max_sown=20).new_initial_state())
    assert (kalaha.state(0), hus.state(0)) == saved
