"""HiLo properties over 1,000 random games for each of 2, 3 and 4 players.

The batched engine and 1,000 single games are stepped in lockstep with the same seeds and actions;
at every step: all 69 cards are somewhere (exactly once), the mask equals the legal actions and is
never empty for the player to move, and the batched state equals the single-game state. Every
game ends; the same seed replays the same games.
"""

from __future__ import annotations

import copy
import pickle

import numpy as np
import pytest
from spieltisch.envs import make_batch
from spieltisch.envs.hilo import HiLoGame
from spieltisch.envs.hilo.batch import HiLoBatch
from spieltisch.envs.hilo.engine import coins_rewards

NUM_GAMES = 1000
MAX_STEPS = 3000  # random games take about 80-150 actions; this bound is never reached


@pytest.mark.slow
@pytest.mark.parametrize(
    ("n", "final_round", "num_games"),
    [(2, False, NUM_GAMES), (3, False, NUM_GAMES), (4, False, NUM_GAMES), (3, True, 300)],
)
def test_random_games_batched_equals_single(n, final_round, num_games):
    game = HiLoGame(n, final_round=final_round)
    batch = HiLoBatch(game, num_games, seed=100 + n)
    gen = np.random.default_rng(100 + n)
    singles = [game.new_initial_state(gen) for _ in range(num_games)]
    rng = np.random.default_rng(n)
    all_cards = list(range(game.num_cards))
    history = []
    steps = 0
    while not batch.terminal.all():
        assert steps < MAX_STEPS, "a random game did not end"
        actions = batch.sample_random_actions(rng)
        history.append(actions)
        for k, s in enumerate(singles):
            if s.is_terminal():
                continue
            mask = s.legal_mask()
            legal = s.legal_actions()
            assert legal and tuple(np.flatnonzero(mask)) == legal
            assert np.array_equal(mask, batch.legal_mask[k])
            s.apply(int(actions[k]))
            assert sorted(s.all_cards().tolist()) == all_cards
        batch.step(actions)
        steps += 1
        for k, s in enumerate(singles):
            if s.move_number == steps:  # still played this step: compare the whole state
                assert np.array_equal(batch.states[k], s.s) and batch.packed[k] == s._packed
                assert batch.rngs[k, 0] == s.rng[0]
    assert all(s.is_terminal() for s in singles)
    returns = batch.returns()
    np.testing.assert_allclose(returns.sum(axis=1), 0.0, atol=1e-12)
    for k in range(0, num_games, 37):
        assert np.allclose(returns[k], singles[k].returns())
        assert tuple(batch.coins()[k]) == singles[k].coins()
        assert all(singles[k].face_up(p).all() for p in range(n))

    # The same seed and actions give the same games.
    again = HiLoBatch(game, num_games, seed=100 + n)
    for actions in history:
        again.step(actions)
    assert np.array_equal(again.states, batch.states)


@pytest.mark.parametrize("n", [2, 3, 4])
def test_same_seed_same_game_and_text_round_trip(n):
    game = HiLoGame(n)
    rng = np.random.default_rng(7)
    for seed in range(20):
        a, b = game.new_initial_state(seed), game.new_initial_state(seed)
        assert a == b
        step = 0
        while not a.is_terminal():
            if step % 7 == 0:
                text = a.to_text()
                back = game.state_from_text(text)
                assert back == a and back.to_text() == text
                assert pickle.loads(pickle.dumps(a)) == a
                assert copy.deepcopy(a) == a and a.clone() == a
                assert back.legal_actions() == a.legal_actions()
            legal = a.legal_actions()
            action = legal[int(rng.integers(len(legal)))]
            a.apply(action)
            b.apply(action)
            assert a == b
            step += 1
        assert game.state_from_text(a.to_text()) == a
        assert a.to_text() == b.to_text()


def test_clone_is_independent():
    game = HiLoGame(3)
    s = game.new_initial_state(1)
    c = s.clone()
    c.apply(c.legal_actions()[0])
    assert c != s and s.move_number == 0
    # a clone replays the same chance (its own generator is copied)
    x, y = s.clone(), s.clone()
    for _ in range(60):
        if x.is_terminal():
            break
        a = x.legal_actions()[-1]
        x.apply(a)
        y.apply(a)
    assert x == y


def test_batch_seeds_options_and_rewards():
    game = HiLoGame(3)
    # reset(seed=generator): one draw per game seeds that game, as new_initial_state(generator)
    batch = make_batch("hilo", 5, seed=0, num_players=3, reward="coins", max_turns=100)
    batch.reset(seed=np.random.default_rng(8))
    gen = np.random.default_rng(8)
    assert [batch.state(g) for g in range(5)] == [game.new_initial_state(gen) for _ in range(5)]
    batch.reset(seed=4)
    assert np.array_equal(batch.states, HiLoBatch(game, 5, seed=4).states)
    with pytest.raises(TypeError, match="seed"):
        batch.reset(np.arange(2))  # games are passed by name: reset(games=...)
    rng = np.random.default_rng(1)
    while not batch.terminal.all():
        batch.step(batch.sample_random_actions(rng))
    for g in range(5):
        np.testing.assert_allclose(batch.returns()[g], coins_rewards(batch.state(g).coins()))
    batch.reward = "win"
    assert [tuple(r) for r in batch.returns()] == [batch.state(g).returns() for g in range(5)]
    with pytest.raises(ValueError, match="unknown hilo option"):
        make_batch("hilo", 2, cube=True)
    with pytest.raises(ValueError, match="reward"):
        make_batch("hilo", 2, reward="points")
