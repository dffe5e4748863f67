"""The Gymnasium wrapper's seeding, rewards and truncation against the env, and analyses of HiLo
search agents from the seat's knowledge only (what ``test_gym_wrapper.py`` and
``test_analysis.py`` leave out)."""

from __future__ import annotations

import numpy as np
import pytest
from spieltisch.agents.analysis import analyse
from spieltisch.agents.base import InformationSet
from spieltisch.agents.gym_env import make_gym
from spieltisch.agents.registry import make_agent
from spieltisch.envs._common.errors import GameOverError
from test_analysis import check, hilo_position, observation_of, perturb_hidden


def episode(env, rng: np.random.Generator, seed: int | None = None) -> tuple[list, float, dict]:
    """Observations of one random episode, its last reward and info."""
    obs, info = env.reset(seed=seed)
    seen = [obs.copy()]
    while True:
        action = int(rng.choice(np.flatnonzero(env.action_masks())))
        obs, reward, terminated, truncated, info = env.step(action)
        seen.append(obs.copy())
        if terminated or truncated:
            return seen, reward, info


KALAH_43 = {"pits": 4, "seeds": 3}


def same(a: list, b: list) -> bool:
    return len(a) == len(b) and all(np.array_equal(x, y) for x, y in zip(a, b, strict=True))


def test_an_explicit_seed_replaces_the_constructors_for_later_resets() -> None:
    """``make_gym(seed=0)``, ``reset(seed=5)``, ``reset()``: the second reset replayed seed 0's
    episode (the constructor's seed was kept for the first reset *without* a seed); it must go
    on from seed 5's generator, as in an env made without a seed."""
    runs = []
    for constructor_seed in (0, None):
        env = make_gym("kalaha", seat="random", seed=constructor_seed, **KALAH_43)
        first = episode(env, np.random.default_rng(1), seed=5)
        second = episode(env, np.random.default_rng(2))
        runs.append((first, second))
    assert same(runs[0][0][0], runs[1][0][0])
    assert same(runs[0][1][0], runs[1][1][0]), "reset() after reset(seed=5) differs"
    replayed = episode(
        make_gym("kalaha", seat="random", seed=0, **KALAH_43), np.random.default_rng(2)
    )
    assert not same(runs[0][1][0], replayed[0]), "reset() replayed the constructor's seed"
    # the constructor's seed still seeds the first reset
    a = episode(make_gym("hilo", seat="random", seed=3), np.random.default_rng(0))
    b = episode(make_gym("hilo", seat="random"), np.random.default_rng(0), seed=3)
    assert same(a[0], b[0]) and a[1] == b[1]


@pytest.mark.parametrize(
    ("game", "options", "info_key"),
    [
        ("kalaha", {"pits": 4, "seeds": 3, "reward": "score"}, "score_difference"),
        ("hilo", {"num_players": 3, "reward": "coins"}, None),
        ("backgammon", {"reward": "points"}, None),
    ],
)
def test_the_final_reward_is_the_envs_for_your_seat(game, options, info_key) -> None:
    env = make_gym(game, opponents=["random"], seat="random", seed=4, **options)
    rng = np.random.default_rng(4)
    for _ in range(4):
        _, reward, info = episode(env, rng)
        raw = env.unwrapped._raw
        assert raw.state.is_terminal()
        assert reward == pytest.approx(raw._final_rewards()[info["seat"]])
        assert raw.seat_of(env.unwrapped._me) == info["seat"]
        if info_key is not None:
            assert reward == info[info_key]
        assert not env.action_masks().any()
        with pytest.raises(GameOverError):
            env.step(0)


def test_truncation_gives_reward_zero_and_ends_the_episode() -> None:
    env = make_gym("hus", opponents=["random"], seat=1, seed=0, max_turns=5)
    obs, info = env.reset()
    steps = 0
    while True:
        obs, reward, terminated, truncated, info = env.step(int(env.action_masks().argmax()))
        steps += 1
        if terminated or truncated:
            break
    assert (reward, terminated, truncated) == (0.0, False, True)
    assert info["truncated_at_turn"] == 5 and steps <= 3
    assert env.observation_space.contains(obs) and not env.action_masks().any()
    with pytest.raises(GameOverError):
        env.step(0)
    env.reset()  # and a new episode plays
    assert env.action_masks().any()


# ------------------------------------------------------------------------------------------------
# analysis of HiLo search agents
# ------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("name", ["pretrained:hilo:sims=4", "pretrained:hilo:sims=4,dets=2"])
def test_hilo_gumbel_analysis_uses_the_seats_knowledge_only(name: str) -> None:
    """A Gumbel search agent's analysis of HiLo: the same for two real states that differ only
    in hidden cards, ``chosen`` is what ``act`` plays, the agent and the information set are
    left as they were, and a real state (it would show hidden cards) is refused."""
    real = hilo_position(seed=3, moves=12)
    other = perturb_hidden(real, np.random.default_rng(9))
    seat = real.current_player
    observation = observation_of(real, seat)
    results = []
    for state in (real, other):
        infoset = InformationSet(state, seat, np.random.default_rng(7))
        agent, twin = make_agent(name, "hilo", seed=11), make_agent(name, "hilo", seed=11)
        probe = infoset.sample(np.random.default_rng(0))
        results.append(analyse(agent, "hilo", observation, infoset, {}))
        assert infoset.sample(np.random.default_rng(0)) == probe  # the infoset is unchanged
        assert agent.act(observation, infoset) == twin.act(observation, infoset)
        assert agent.rng.bit_generator.state == twin.rng.bit_generator.state
    assert results[0] == results[1]
    check(results[0], observation)
    result = results[0]
    assert result["chosen"] in np.flatnonzero(observation["action_mask"]).tolist()
    assert sum(m["visits"] for m in result["moves"]) > 0
    with pytest.raises(TypeError, match="InformationSet"):
        analyse(make_agent(name, "hilo", seed=1), "hilo", observation, real, {})
