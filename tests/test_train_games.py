"""The games self-play training plays (``train.ppo.make_games`` over the batched engines) show
the AEC envs' observations and end with the envs' rewards."""

from __future__ import annotations

import numpy as np
import pytest
from spieltisch.envs import make
from spieltisch.train.ppo import make_games


@pytest.mark.parametrize(
    ("game", "options"),
    [
        ("kalaha", {}),
        ("kalaha", {"pits": 4, "seeds": 3, "rules": "standard"}),
        ("hus", {}),
        ("hilo", {}),
        ("hilo", {"num_players": 3}),
        ("backgammon", {"reward": "win"}),
    ],
)
def test_batched_observations_equal_env_observations(game: str, options: dict) -> None:
    rng = np.random.default_rng(5)
    games = make_games(game, options, 16)
    games.reset(seed=rng)
    env = make(game, **options).unwrapped
    env.reset(seed=0)
    checked = 0
    for _ in range(120):
        if games.terminal.all():
            break
        obs, mask = games.observe()
        mover = games.current_player
        for g in np.flatnonzero(~games.terminal)[:4]:
            env.state = games.state(int(g))
            expected = env._observation(int(mover[g]))
            np.testing.assert_array_equal(obs[g], expected)
            np.testing.assert_array_equal(mask[g], env.state.legal_mask())
            checked += 1
        games.step(games.sample_random_actions(rng))
    assert checked > 50
    returns = games.returns()
    assert returns.shape == (16, games.num_players)


def test_unknown_game_is_refused() -> None:
    with pytest.raises(ValueError, match="unknown game 'chess'"):
        make_games("chess", {}, 4)


@pytest.mark.parametrize("reward", ["win", "coins"])
def test_hilo_training_rewards_equal_env_rewards(reward: str) -> None:
    rng = np.random.default_rng(9)
    games = make_games("hilo", {"num_players": 3, "reward": reward}, 24)
    games.reset(seed=rng)
    for _ in range(3000):
        if games.terminal.all():
            break
        games.step(games.sample_random_actions(rng))
    assert games.terminal.all()
    env = make("hilo", num_players=3, reward=reward).unwrapped
    env.reset(seed=0)
    returns = games.returns()
    for g in range(games.num_games):
        env.state = games.state(g)
        np.testing.assert_allclose(returns[g], env._final_rewards())
    with pytest.raises(ValueError, match="reward"):
        make_games("hilo", {"reward": "points"}, 2)
