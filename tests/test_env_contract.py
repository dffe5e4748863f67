"""One contract every spieltisch env honours (in the spirit of pgx's shared env test).

It runs for every game in ``spieltisch.envs.GAMES`` with its default options and with the
non-default options listed in ``OPTIONS``: PettingZoo's own api/seed/render tests, masks and
observations per agent, the final reward of every agent (the loser's too), bad input that
raises a clear error and changes nothing, and copies.
"""

from __future__ import annotations

import copy
import pickle

import numpy as np
import pytest
from pettingzoo.test import api_test, render_test, seed_test
from spieltisch.envs import GAMES, env_module

# Non-default options per game (the defaults are always tested too).
OPTIONS = {
    "kalaha": {"pits": 4, "seeds": 3, "rules": "standard", "reward": "score", "random_start": True},
    "hus": {"reward": "points", "random_start": True, "max_turns": 50},
    "backgammon": {"cube": True},
    "hilo": {"num_players": 4, "random_start": True},
}

CASES = [(game, {}) for game in GAMES] + [(g, OPTIONS[g]) for g in GAMES if g in OPTIONS]
IDS = [f"{g}-{'custom' if o else 'default'}" for g, o in CASES]


def make(game, options, **extra):
    return env_module(game).env(**options, **extra)


def snapshot(env):
    """Everything an agent could see: whose turn, every observation, rewards, flags."""
    raw = env.unwrapped
    return (
        raw.agent_selection,
        {a: {k: v.copy() for k, v in raw.observe(a).items()} for a in raw.agents},
        dict(raw._cumulative_rewards),
        dict(raw.terminations),
        dict(raw.truncations),
        raw.num_turns,
    )


def same(a, b) -> bool:
    sel_a, obs_a, *rest_a = a
    sel_b, obs_b, *rest_b = b
    if sel_a != sel_b or rest_a != rest_b or obs_a.keys() != obs_b.keys():
        return False
    return all(
        np.array_equal(obs_a[agent][k], obs_b[agent][k]) for agent in obs_a for k in obs_a[agent]
    )


def first_legal(env) -> int:
    observation, *_ = env.last()
    return int(np.flatnonzero(observation["action_mask"])[0])


@pytest.mark.parametrize(("game", "options"), CASES, ids=IDS)
def test_pettingzoo_api_seed_and_render(game, options):
    api_test(make(game, options), num_cycles=300)
    seed_test(lambda: make(game, options), num_cycles=300)
    render_test(lambda render_mode=None: make(game, options, render_mode=render_mode))


@pytest.mark.parametrize(("game", "options"), CASES, ids=IDS)
def test_masks_observations_and_final_rewards_over_random_games(game, options):
    env = make(game, options)
    raw = env.unwrapped
    rng = np.random.default_rng(0)
    decisive = 0
    for episode in range(20):
        env.reset(seed=episode)
        final_rewards = {}
        for agent in env.agent_iter():
            observation, reward, terminated, truncated, _info = env.last()
            assert env.observation_space(agent).contains(observation)
            if terminated or truncated:
                final_rewards[agent] = reward
                env.step(None)
                continue
            mask = observation["action_mask"]
            assert mask.dtype == np.int8 and mask.any(), "the agent to move always has a move"
            assert np.array_equal(mask, raw.state.legal_mask())
            for other in env.agents:
                if other != agent:
                    assert not raw.observe(other)["action_mask"].any()
            env.step(int(rng.choice(np.flatnonzero(mask))))
        # every agent saw its final reward, the loser's included; the games are zero-sum
        assert set(final_rewards) == set(env.possible_agents)
        assert sum(final_rewards.values()) == pytest.approx(0.0, abs=1e-9)
        decisive += any(r != 0 for r in final_rewards.values())
        assert env.agents == []
    assert decisive > 0


@pytest.mark.parametrize("illegal_action", ["raise", "terminate"])
@pytest.mark.parametrize(("game", "options"), CASES, ids=IDS)
def test_bad_input_raises_a_clear_error_and_changes_nothing(game, options, illegal_action):
    # With illegal_action="terminate" only a masked action of the action space ends the game;
    # anything that is no action at all raises as with "raise".
    env = make(game, options, illegal_action=illegal_action)
    env.reset(seed=3)
    env.step(first_legal(env))  # get away from the start position
    before = snapshot(env)
    agent = env.agent_selection
    num_actions = env.action_space(agent).n
    illegal = np.flatnonzero(env.last()[0]["action_mask"] == 0)
    bad_inputs = [(num_actions, "out of range"), (-1, "out of range"), (None, "None")]
    bad_inputs += [(1.5, "integer"), ("1", "integer"), (np.array([0, 1]), "single integer")]
    bad_inputs += [(True, "integer"), (np.uint64(2**63), "out of range")]
    if illegal.size and illegal_action == "raise":
        bad_inputs.append((int(illegal[0]), agent))
    for action, message in bad_inputs:
        with pytest.raises((ValueError, TypeError), match=message):
            env.step(action)
        assert same(snapshot(env), before), f"{action!r} changed the game"
    with pytest.raises(TypeError, match="unknown option"):
        env_module(game).env(no_such_option=1)


@pytest.mark.parametrize("game", list(GAMES))
def test_stepping_a_finished_game_raises(game):
    env = make(game, {})
    env.reset(seed=0)
    rng = np.random.default_rng(0)
    for _agent in env.agent_iter():
        observation, _, terminated, truncated, _ = env.last()
        if terminated or truncated:
            with pytest.raises(ValueError, match="over"):
                env.step(0)
            env.step(None)
            continue
        env.step(int(rng.choice(np.flatnonzero(observation["action_mask"]))))
    with pytest.raises(ValueError, match="reset"):
        env.step(0)


@pytest.mark.parametrize("game", list(GAMES))
@pytest.mark.parametrize("illegal_action", ["raise", "terminate"])
def test_global_state_is_not_implemented_as_pettingzoo_says(game, illegal_action):
    """AECEnv.state() raises NotImplementedError where an env has no global state array; the
    raw env's attribute ``state`` (the engine state) hid it, and env.state() raised TypeError."""
    env = env_module(game).env(illegal_action=illegal_action)
    env.reset(seed=0)
    with pytest.raises(NotImplementedError, match=r"env\.unwrapped\.state"):
        env.state()
    assert env.unwrapped.state is not None  # the engine state, for spectators


@pytest.mark.parametrize("game", list(GAMES))
def test_reset_to_a_finished_position_ends_every_agent(game):
    env = make(game, {})
    env.reset(seed=1)
    rng = np.random.default_rng(0)
    final = None
    for _agent in env.agent_iter():
        observation, _, terminated, truncated, _ = env.last()
        if terminated or truncated:
            final = final or dict(env.unwrapped._cumulative_rewards)
            env.step(None)
            continue
        env.step(int(rng.choice(np.flatnonzero(observation["action_mask"]))))
    text = env.unwrapped.state.to_text()

    again = make(game, {})
    again.reset(options={"position": text})
    assert all(again.terminations.values())
    left = []
    for agent in again.agent_iter():  # each agent is stepped out once, then the loop ends
        observation, reward, terminated, _, _ = again.last()
        assert terminated and not observation["action_mask"].any()
        assert reward == final[agent]
        left.append(agent)
        again.step(None)
    assert sorted(left) == sorted(again.possible_agents)


@pytest.mark.parametrize(
    ("game", "overfull", "endgame"),
    [
        ("kalaha", "90,4,4,4,4,4/0 4,4,4,4,4,4/0 0", "0,0,0,0,0,1/40 0,0,2,0,0,0/20 0"),
        (
            "hus",
            "60,2,2,2,2,2,2,2/2,2,2,2,2,2,2,2 2,2,2,2,2,2,2,2/2,2,2,2,2,2,2,2 0",
            "0,0,0,0,0,0,0,2/0,0,0,0,0,0,0,0 0,0,0,0,0,0,0,0/3,0,0,0,0,0,0,0 0",
        ),
    ],
)
def test_a_position_must_fit_the_observation_space(game, overfull, endgame):
    env = make(game, {})
    env.reset(seed=0)
    before = snapshot(env)
    with pytest.raises(ValueError, match="more than the"):
        env.reset(options={"position": overfull})
    assert same(snapshot(env), before)
    env.reset(options={"position": endgame})  # fewer stones than the game's: fine
    for agent in env.agents:
        assert env.observation_space(agent).contains(env.observe(agent))


@pytest.mark.parametrize("game", list(GAMES))
def test_render_without_a_mode_is_a_clear_error(game):
    env = make(game, {})
    env.reset(seed=0)
    with pytest.raises(ValueError, match="render_mode"):
        env.render()


@pytest.mark.parametrize("game", list(GAMES))
def test_copies_and_pickles_continue_identically(game):
    env = make(game, {})
    env.reset(seed=5)
    for _ in range(3):
        env.step(first_legal(env))
    raw = env.unwrapped
    for other in (copy.deepcopy(raw), pickle.loads(pickle.dumps(raw))):
        assert same(snapshot(other), snapshot(raw))
        for _ in range(3):
            if other.terminations[other.agent_selection]:
                break
            action = first_legal(other)
            other.step(action)
    # the copies moved on; the original did not
    assert raw.num_turns == 3


@pytest.mark.parametrize("game", list(GAMES))
def test_unknown_game_and_bad_render_mode_are_named(game):
    from spieltisch.envs import make as make_by_name

    with pytest.raises(ValueError, match="unknown game"):
        make_by_name("chess")
    with pytest.raises(ValueError, match="render_mode"):
        make(game, {}, render_mode="3d")


@pytest.mark.parametrize(
    ("game", "option", "meant"),
    [
        ("kalaha", "seed", "seeds"),
        ("hilo", "players", "num_players"),
        ("hus", "max_turn", "max_turns"),
    ],
)
def test_a_misspelt_option_names_the_option_meant(game, option, meant):
    with pytest.raises(TypeError, match=f"'{option}': did you mean '{meant}'"):
        env_module(game).env(**{option: 3})
