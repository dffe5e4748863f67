"""``backgammon_v0``: PettingZoo's own tests, the observation layout, rewards, infos, bad input."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from backgammon_reference import observation as reference_observation
from pettingzoo.test import api_test, render_test, seed_test
from spieltisch.envs import backgammon_v0, make, make_batch
from spieltisch.envs._common.errors import IllegalActionError
from spieltisch.envs.backgammon import rules as k
from spieltisch.envs.backgammon.engine import action_of


def play_out(env, rng: np.random.Generator, max_steps: int = 20_000) -> dict:
    """Random legal actions until the game ends; returns the final (reward, info) per agent."""
    final = {}
    for agent in env.agent_iter(max_steps):
        obs, reward, term, trunc, info = env.last()
        if term or trunc:
            final[agent] = (reward, info)
            env.step(None)
            continue
        legal = np.flatnonzero(obs["action_mask"])
        env.step(int(rng.choice(legal)))
    return final


@pytest.mark.parametrize("options", [{}, {"cube": True}])
def test_pettingzoo_api_test(options):
    with warnings.catch_warnings():
        # api_test warns about dict observations (as for PettingZoo classic's envs) and passes
        # made-up reset options on purpose.
        warnings.simplefilter("ignore")
        api_test(backgammon_v0.env(**options), num_cycles=500)


@pytest.mark.parametrize("options", [{}, {"cube": True}])
def test_pettingzoo_seed_test(options):
    seed_test(lambda **kw: backgammon_v0.env(**options, **kw), num_cycles=300)


def test_pettingzoo_render_test():
    render_test(backgammon_v0.env)


def test_registered_by_name():
    env = make("backgammon", cube=True)
    assert env.unwrapped.metadata["name"] == "backgammon_v0"
    assert env.action_space("player_0").n == 155


def test_observation_of_the_start_line_by_line():
    env = backgammon_v0.env()
    env.reset(options={"position": "4HPwATDgc/ABMA 0 31"})
    obs = env.observe("player_0")["observation"]
    expected = np.zeros(59, dtype=np.float32)
    expected[[5, 7, 12, 23]] = [5, 3, 5, 2]  # own 6, 8, 13, 24 points
    expected[[24 + 0, 24 + 11, 24 + 16, 24 + 18]] = [2, 5, 3, 5]  # opponent on own 1, 12, 17, 19
    expected[52 + 2] = 1  # one 3 left
    expected[52 + 0] = 1  # one 1 left
    expected[58] = 1  # player_0 to act
    assert np.array_equal(obs, expected)
    other = env.observe("player_1")["observation"]
    assert np.array_equal(other[:52], expected[:52]) and other[58] == 0  # symmetric start
    assert not env.observe("player_1")["action_mask"].any()
    mask = env.observe("player_0")["action_mask"]
    assert set(np.flatnonzero(mask)) == {30, 32, 42, 44, 74, 138, 140}


@pytest.mark.parametrize("cube", [False, True])
def test_observation_kernel_equals_a_plain_reference_on_random_positions(cube):
    """The one observation kernel (``rules.observe``), through the env and through the batch,
    equals the docstring's table written out in plain Python, for both seats of random
    positions (every phase a batch shows, finished games included)."""
    num_games = 16
    batch = make_batch("backgammon", num_games, seed=3, cube=cube)
    env = make("backgammon", cube=cube).unwrapped
    env.reset(seed=0)
    rng = np.random.default_rng(4)
    phases = set()

    def expected(state, seat: int) -> list[float]:
        value, owner = state.cube()
        cube_fields = (value, owner == seat, owner == 1 - seat, state.phase == k.PH_TAKE)
        acts = state.current_player == seat and not state.is_terminal()
        return reference_observation(
            state.side(seat).tolist(),
            state.side(1 - seat).tolist(),
            list(state.dice()),
            acts,
            cube_fields if cube else None,
        )

    while True:
        viewers = rng.integers(0, 2, size=num_games)
        seen = batch.observations(viewers)
        movers_view, _ = batch.observe()
        for g in range(num_games):
            state = batch.state(g)
            phases.add(state.phase)
            env.state = state
            for seat in (0, 1):
                assert env._observation(seat).tolist() == expected(state, seat)
            assert seen[g].tolist() == expected(state, int(viewers[g]))
            assert movers_view[g].tolist() == expected(state, state.current_player)
        if batch.terminal.all():
            break
        batch.step(batch.sample_random_actions(rng))
    assert {k.PH_MOVE, k.PH_OVER} | ({k.PH_CUBE, k.PH_TAKE} if cube else set()) <= phases


def test_bar_and_borne_off_in_the_observation():
    env = backgammon_v0.env(cube=True)
    env.reset(options={"position": "m23wAQDgc/ABYA 1 63 cube=2@0"})
    obs = env.observe("player_1")["observation"]
    assert obs.shape == (63,)
    assert obs[48] == 2 and obs[49] == 0  # player_1 (on roll) has two on the bar
    assert obs[52 + 5] == 1 and obs[52 + 2] == 1 and obs[58] == 1
    assert obs[59] == 2 and obs[60] == 0 and obs[61] == 1 and obs[62] == 0
    seen_by_0 = env.observe("player_0")["observation"]
    assert seen_by_0[49] == 2 and seen_by_0[60] == 1 and seen_by_0[58] == 0


def test_a_turn_is_several_steps_of_the_same_agent_and_pass_is_one_step():
    env = backgammon_v0.env()
    env.reset(options={"position": "4HPwATDgc/ABMA 0 31"})
    assert env.agent_selection == "player_0"
    env.step(action_of(8, 3))
    assert env.agent_selection == "player_0"  # the 1 is still to play
    env.step(action_of(6, 1))
    assert env.agent_selection == "player_1"
    env.reset(options={"position": "27YBBwDgc/ADQA 0 roll"}, seed=1)  # X on the bar, shut out
    assert np.flatnonzero(env.observe("player_0")["action_mask"]).tolist() == [k.PASS]
    env.step(k.PASS)
    assert env.agent_selection == "player_1"


def test_rewards_and_infos_at_the_end_points_and_win_modes():
    # X (player_0) bears off the last checker; O has none off and one in X's home: backgammon.
    for reward, expected in (("points", 3.0), ("win", 1.0)):
        env = backgammon_v0.env(reward=reward)
        env.reset(options={"position": "4P8HAAIBAAAAAA 0 21"})
        env.step(action_of(1, 2))
        assert env.terminations == {"player_0": True, "player_1": True}
        assert env.rewards == {"player_0": expected, "player_1": -expected}
        info = env.infos["player_1"]
        assert info["winner"] == "player_0" and info["win_type"] == "backgammon"
        assert info["points"] == -3 and info["cube"] == 1 and info["seat"] == 1


def test_random_games_end_with_zero_sum_rewards_and_the_opening_roll_picks_the_starter():
    starters = set()
    rng = np.random.default_rng(0)
    for seed in range(20):
        env = backgammon_v0.env(cube=seed % 2 == 1)
        env.reset(seed=seed)
        starters.add(env.agent_selection)
        final = play_out(env, rng)
        rewards = [final[a][0] for a in ("player_0", "player_1")]
        assert rewards[0] == -rewards[1] != 0
        assert final["player_0"][1]["win_type"] in ("single", "gammon", "backgammon", "dropped")
    assert starters == {"player_0", "player_1"}


def test_truncation_guard():
    env = backgammon_v0.env(max_turns=5)
    env.reset(seed=0)
    final = play_out(env, np.random.default_rng(0))
    assert all(info.get("truncated_at_turn") == 5 for _, info in final.values())
    assert all(r == 0 for r, _ in final.values())


def test_illegal_actions_raise_and_change_nothing_or_terminate():
    env = backgammon_v0.env()
    env.reset(options={"position": "4HPwATDgc/ABMA 0 31"})
    before = env.unwrapped.state.clone()
    with pytest.raises(IllegalActionError, match="player_0"):
        env.step(action_of(13, 2))
    with pytest.raises(IllegalActionError):
        env.step(151)  # a cube action without the cube: out of range
    with pytest.raises(TypeError):
        env.step("8/5")
    assert env.unwrapped.state == before and env.agent_selection == "player_0"
    wrapped = backgammon_v0.env(illegal_action="terminate")
    wrapped.reset(options={"position": "4HPwATDgc/ABMA 0 31"})
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        wrapped.step(action_of(13, 2))
    assert wrapped.rewards["player_0"] == -1 and all(wrapped.terminations.values())


def test_bad_options_are_named():
    with pytest.raises(TypeError, match="unknown option"):
        backgammon_v0.env(pits=4)
    with pytest.raises(ValueError, match="reward"):
        backgammon_v0.env(reward="score")
    with pytest.raises(ValueError, match="power of 2"):
        backgammon_v0.env(cube=True, max_cube=3)
    env = backgammon_v0.env()
    with pytest.raises(ValueError, match="position ID"):
        env.reset(options={"position": "nonsense 0 31"})


def test_renders_text_and_a_board_picture():
    env = backgammon_v0.env(render_mode="ansi")
    env.reset(options={"position": "4HPwATDgc/ABMA 0 31"})
    text = env.render()
    assert "+13-14-15-16-17-18------19-20-21-22-23-24-+" in text
    assert "seat 0 (X) to move, rolled 3-1, dice left: 3 1" in text
    assert "player_0 = seat 0 (X)" in text
    env = backgammon_v0.env(render_mode="rgb_array", cube=True)
    env.reset(options={"position": "m23wAQDgc/ABYA 0 63 cube=2@1"})
    image = env.render()
    assert image.dtype == np.uint8 and image.ndim == 3 and image.shape[2] == 3
    assert image.shape[0] > 400 and image.shape[1] > 600
    # Both checker colours and the felt are in the picture.
    colours = {tuple(c) for c in image.reshape(-1, 3)[::7]}
    assert (240, 240, 232) in colours and (40, 40, 40) in colours and (32, 96, 64) in colours
