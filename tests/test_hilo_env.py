"""The ``hilo_v0`` PettingZoo environment: PettingZoo's own tests, rewards, infos, rendering."""

from __future__ import annotations

import re
import warnings

import numpy as np
import pytest
from pettingzoo.test import api_test, render_test, seed_test
from spieltisch.agents.arena.match import play_game
from spieltisch.agents.base import RandomAgent
from spieltisch.envs import hilo_v0, make
from spieltisch.envs._common.errors import ActionTypeError, GameOverError, IllegalActionError
from spieltisch.envs.hilo.cards import DeckFormatError


def random_step(env, rng: np.random.Generator) -> bool:
    """One step of the agent to move with a random legal action; False once it is over."""
    obs, _, term, trunc, _ = env.last()
    if term or trunc:
        return False
    env.step(int(rng.choice(np.flatnonzero(obs["action_mask"]))))
    return True


@pytest.mark.parametrize("n", [2, 3, 4])
def test_pettingzoo_api_seed_and_render_tests(n):
    with warnings.catch_warnings():
        # api_test warns about the dict observation (with action masks, as PettingZoo classic)
        warnings.simplefilter("ignore")
        api_test(hilo_v0.env(num_players=n), num_cycles=200)
        api_test(hilo_v0.env(num_players=n, random_start=True, final_round=True), num_cycles=200)
    seed_test(lambda **kw: hilo_v0.env(num_players=n, **kw), num_cycles=200)
    for view in ("public", "all", 0):
        render_test(
            lambda render_mode=None, view=view: hilo_v0.env(
                num_players=n, render_mode=render_mode, render_view=view
            )
        )


@pytest.mark.parametrize("n", [2, 3, 4])
def test_full_games_rewards_and_infos(n):
    env = hilo_v0.env(num_players=n, random_start=True)
    rng = np.random.default_rng(n)
    for seed in range(5):
        env.reset(seed=seed)
        raw = env.unwrapped
        assert raw.agent_state() is None  # hidden information: no engine state for agents
        while random_step(env, rng):
            pass
        rewards = {a: env.rewards[a] for a in env.agents}
        assert abs(sum(rewards.values())) < 1e-12
        infos = {a: env.infos[a] for a in env.agents}
        all_coins = infos["player_0"]["all_coins"]
        best = max(all_coins.values())
        winners = [a for a, c in all_coins.items() if c == best]
        for a in env.agents:
            info = infos[a]
            assert info["winners"] == sorted(winners, key=lambda x: raw.seat_of(x))
            assert info["coins"] == all_coins[a] == info["score_breakdown"][a]["total"]
            assert set(info["score_breakdown"][a]) == {
                "half_coins", "whole_coins", "king", "bard", "keepers", "total",
            }  # fmt: skip
            expected = 0.0 if len(winners) == n else (
                1 / len(winners) if a in winners else -1 / (n - len(winners))
            )  # fmt: skip
            assert rewards[a] == pytest.approx(expected)
            assert info["ended_by"] in env.possible_agents
        for _ in env.agent_iter():
            env.step(None)
        assert env.agents == []


def test_coins_reward_is_own_coins_minus_the_others_mean():
    env = hilo_v0.env(num_players=3, reward="coins")
    env.reset(seed=3)
    rng = np.random.default_rng(0)
    while random_step(env, rng):
        pass
    coins = env.infos["player_0"]["all_coins"]
    for a in env.agents:
        others = [c for b, c in coins.items() if b != a]
        assert env.rewards[a] == pytest.approx(coins[a] - np.mean(others))


def test_play_game_with_random_agents_and_make_by_name():
    env = make("hilo", num_players=4)
    agents = {a: RandomAgent(seed=i) for i, a in enumerate(env.possible_agents)}
    record = play_game(env, agents, seed=11)
    assert not record.truncated and record.num_moves > 20
    assert sum(record.rewards.values()) == pytest.approx(0.0)


def test_truncation_at_max_turns_is_a_draw():
    env = hilo_v0.env(num_players=2, max_turns=10)
    env.reset(seed=0)
    rng = np.random.default_rng(0)
    steps = 0
    while random_step(env, rng):
        steps += 1
    assert steps == 10
    assert all(env.truncations.values()) and all(r == 0 for r in env.rewards.values())
    assert env.infos["player_0"]["truncated_at_turn"] == 10


def test_reset_from_a_position():
    env = hilo_v0.env(num_players=2)
    p0 = "Re-LR,?Re-L,?Re-L,?Re-L,?Re-L,?Wz|?Re-R,?Re-R,?Re-R,?Re-R,?Re-T,?Re-T"
    p1 = "Re-B,Re-B,Re-B,?Dr,?Dr,?Dr|?Dr,?Dr,?Wo,?Wo,?Wo,?Wo"
    env.reset(options={"position": f"p0={p0} p1={p1} draw=* discard=Un phase=turn to_move=1"})
    assert env.agent_selection == "player_1"
    assert np.flatnonzero(env.observe("player_1")["action_mask"]).tolist() == [0, 1]
    assert not env.observe("player_0")["action_mask"].any()


def test_a_position_without_rng_takes_its_chance_from_the_reset_seed():
    # the text's generator defaulted to 0: every reset reshuffled alike, whatever the seed
    env = hilo_v0.env(num_players=2)
    env.reset(seed=3)
    text = env.unwrapped.state.to_text()
    bare = re.sub(r"\s*rng=\S+", "", text)
    generators = []
    for seed in (1, 2, 1):
        env.reset(seed=seed, options={"position": bare})
        generators.append(int(env.unwrapped.state.rng[0]))
    assert generators[0] == generators[2] != generators[1]
    env.reset(seed=1, options={"position": text})  # a text's own rng= is kept
    assert env.unwrapped.state.to_text() == text


def test_observation_is_the_engine_view_of_the_agents_seat():
    env = hilo_v0.env(num_players=3, random_start=True)
    env.reset(seed=5)
    raw = env.unwrapped
    for agent in env.agents:
        seat = raw.seat_of(agent)
        assert np.array_equal(env.observe(agent)["observation"], raw.state.observation(seat))
    assert env.observation_space("player_0")["observation"].shape == (204 * 3 + 60 + 66 + 3,)
    assert env.action_space("player_0").n == 74


def test_render_views():
    env = hilo_v0.env(num_players=2, render_mode="ansi")
    env.reset(seed=1)
    env.step(26)
    env.step(26)
    env.step(1)  # player_0 draws
    held = env.unwrapped.game.deck.card_faces[env.unwrapped.state.held_card].code
    public = env.render()
    assert "holds ??" in public and public.count("??") == 22 + 1
    mine = hilo_v0.env(num_players=2, render_mode="ansi", render_view="player_0")
    mine.reset(seed=1)
    for a in (26, 26, 1):
        mine.step(a)
    assert f"holds {held}" in mine.render()
    spectator = hilo_v0.env(num_players=2, render_mode="ansi", render_view="all")
    spectator.reset(seed=1)
    for a in (26, 26, 1):
        spectator.step(a)
    assert "??" not in spectator.render()
    picture = hilo_v0.env(num_players=4, render_mode="rgb_array", render_view=2)
    picture.reset(seed=1)
    image = picture.render()
    assert image.ndim == 3 and image.shape[2] == 3 and image.dtype == np.uint8
    with pytest.raises(ValueError, match="render_view"):
        hilo_v0.env(num_players=2, render_view="player_3")
    with pytest.raises(ValueError, match="render_view"):
        hilo_v0.env(num_players=2, render_view=True)


def test_bad_input_gives_clear_errors_and_changes_nothing():
    env = hilo_v0.env(num_players=2)
    env.reset(seed=2)
    raw = env.unwrapped
    before = raw.state.to_text()
    obs_before = env.observe("player_1")["observation"]
    with pytest.raises(IllegalActionError, match=r"player_0: action 1 \(draw\) is illegal.*legal"):
        env.step(1)  # drawing during the setup
    with pytest.raises(IllegalActionError, match="out of range"):
        env.step(62)
    with pytest.raises(ActionTypeError):
        env.step(2.0)
    with pytest.raises(ActionTypeError):
        env.step("26")
    with pytest.raises(ActionTypeError):
        env.step(None)
    assert raw.state.to_text() == before
    assert np.array_equal(env.observe("player_1")["observation"], obs_before)
    assert env.agent_selection == "player_0"
    with pytest.raises(TypeError, match="unknown option"):
        hilo_v0.env(players=3)
    with pytest.raises(ValueError, match="num_players"):
        hilo_v0.env(num_players=5)
    with pytest.raises(ValueError, match="reward"):
        hilo_v0.env(reward="points")
    with pytest.raises(DeckFormatError, match="cannot read deck file"):
        hilo_v0.env(deck="/nonexistent/deck.json")


def test_illegal_action_terminate_convention():
    env = hilo_v0.env(num_players=2, illegal_action="terminate")
    env.reset(seed=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        env.step(1)
    assert env.rewards["player_0"] == -1


def test_step_after_the_end_raises():
    env = hilo_v0.raw_env(num_players=2)
    env.reset(seed=9)
    rng = np.random.default_rng(9)
    while random_step(env, rng):
        pass
    with pytest.raises(GameOverError):
        env.step(0)
