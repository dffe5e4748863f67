"""Properties over many random games of Kalaha (both rule sets, several sizes) and Hus.

Stones are conserved after every move, masks equal the legal actions computed independently from
the board, every game ends, the same seed gives the same game, and the batched engine plays
exactly the same games as the single-game engine.
"""

from __future__ import annotations

import numpy as np
import pytest
from spieltisch.envs.hus import HusGame
from spieltisch.envs.hus.batch import HusBatch
from spieltisch.envs.kalaha import KalahaGame
from spieltisch.envs.kalaha.batch import KalahaBatch

GAMES = 1000
HUS_MAX_TURNS = 1000

KALAHA_GAMES = [
    KalahaGame(pits=6, seeds=6, rules="goki"),
    KalahaGame(pits=6, seeds=4, rules="standard"),
    KalahaGame(pits=4, seeds=3, rules="goki"),
    KalahaGame(pits=3, seeds=2, rules="standard"),
]


def kalaha_legal_from_board(state) -> tuple[int, ...]:
    return tuple(int(i) for i in np.flatnonzero(state.side(state.current_player)))


def hus_legal_from_board(state) -> tuple[int, ...]:
    return tuple(int(i) for i in np.flatnonzero(state.pits_by_action(state.current_player) >= 2))


def play_random(game, rng, max_turns, legal_from_board, total):
    """One random game, checking the invariants after every move; returns the action list."""
    state = game.new_initial_state()
    actions = []
    while not state.is_terminal() and len(actions) < max_turns:
        legal = state.legal_actions()
        assert legal == legal_from_board(state)
        assert tuple(np.flatnonzero(state.legal_mask())) == legal
        action = int(rng.choice(legal))
        state.apply(action)
        actions.append(action)
        assert int(state.board.sum()) == total
        assert state.board.min() >= 0
    if state.is_terminal():
        assert state.legal_actions() == ()
        assert not state.legal_mask().any()
    return actions, state


@pytest.mark.parametrize("game", KALAHA_GAMES, ids=lambda g: f"{g.rules}-{g.pits}x{g.seeds}")
def test_kalaha_random_games(game):
    rng = np.random.default_rng(0)
    bound = game.total_stones * (2 * game.pits + 1)  # every move puts a stone nearer a store
    for _ in range(GAMES):
        _, state = play_random(game, rng, bound, kalaha_legal_from_board, game.total_stones)
        assert state.is_terminal(), "a Kalaha game must end"
        s0, s1 = state.stores()
        assert s0 + s1 == game.total_stones
        assert state.returns()[0] == float(np.sign(s0 - s1))


def test_hus_random_games():
    rng = np.random.default_rng(0)
    game = HusGame()
    ended = 0
    for _ in range(GAMES):
        actions, state = play_random(game, rng, HUS_MAX_TURNS, hus_legal_from_board, 48)
        if state.is_terminal():
            ended += 1
            w = state.winner()
            assert state.stones(w) + state.stones(1 - w) == 48
            assert not any(state.pits_by_action(1 - w) >= 2)  # the loser cannot move
            assert state.points() in (state.stones(w), 2 * state.stones(w))
        else:
            assert len(actions) == HUS_MAX_TURNS  # truncated by the env's guard
    assert ended >= 0.95 * GAMES  # random Hus games end; a few may cycle past max_turns


@pytest.mark.parametrize("game_name", ["kalaha", "hus"])
def test_same_seed_same_game(game_name):
    from spieltisch.agents import RandomAgent
    from spieltisch.agents.arena.match import play_game
    from spieltisch.envs import make

    def run(seed):
        env = make(game_name, random_start=True, max_turns=200)
        agents = {a: RandomAgent(seed + i) for i, a in enumerate(env.possible_agents)}
        record = play_game(env, agents, seed=seed)
        return record.moves, record.rewards, env.unwrapped.state.to_text()

    runs = [run(seed) for seed in range(10)]
    assert runs == [run(seed) for seed in range(10)]
    assert len({str(moves) for moves, *_ in runs}) == 10  # and seeds do matter


def check_batch_equals_single(batch, game, num_steps_cap):
    rng = np.random.default_rng(1)
    histories = [[] for _ in range(batch.num_games)]
    steps = 0
    while not batch.terminal.all() and steps < num_steps_cap:
        actions = batch.sample_random_actions(rng)
        for g in np.flatnonzero(~batch.terminal):
            histories[g].append(int(actions[g]))
        batch.step(actions)
        steps += 1
    for g, history in enumerate(histories):
        state = game.new_initial_state()
        for action in history:
            state.apply(action)
        assert np.array_equal(state.board, batch.boards[g])
        assert state.is_terminal() == bool(batch.terminal[g])
        assert batch.state(g) == state
        assert np.array_equal(batch.legal_mask[g], state.legal_mask())
        if state.is_terminal():
            assert tuple(batch.returns()[g]) == state.returns()


@pytest.mark.parametrize("game", KALAHA_GAMES[:2], ids=lambda g: f"{g.rules}-{g.pits}x{g.seeds}")
def test_kalaha_batch_equals_single(game):
    check_batch_equals_single(KalahaBatch(game, GAMES), game, 10_000)


def test_hus_batch_equals_single():
    game = HusGame()
    check_batch_equals_single(HusBatch(game, GAMES), game, HUS_MAX_TURNS)


def test_batch_rejects_illegal_actions_and_changes_nothing():
    from spieltisch.envs._common.errors import ActionTypeError, IllegalActionError

    batch = KalahaBatch(KalahaGame(), 4)
    # Game 0: pit 0's 6 stones end in the store, so seat 0 moves again with pit 0 empty.
    batch.step(np.array([0, 1, 2, 3]))
    assert batch.current_player[0] == 0
    before = (batch.boards.copy(), batch.current_player.copy(), batch.terminal.copy())
    with pytest.raises(
        IllegalActionError, match=r"game 0: action 0 is illegal; legal actions: \[1, 2"
    ):
        batch.step(np.array([0, 1, 1, 1]))
    with pytest.raises(IllegalActionError, match="game 2: action 6 is out of range"):
        batch.step(np.array([1, 1, 6, 1]))
    with pytest.raises(ActionTypeError, match="shape"):
        batch.step(np.array([1, 1]))
    with pytest.raises(ActionTypeError, match="integers"):
        batch.step(np.array([1.0, 1.0, 1.0, 1.0]))
    assert np.array_equal(batch.boards, before[0])
    assert np.array_equal(batch.current_player, before[1])
    assert np.array_equal(batch.terminal, before[2])
