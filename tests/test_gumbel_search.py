"""The Gumbel search (agents/neural/gumbel_search.py) on concrete positions and random games:
Sequential Halving's schedule and visits as the paper specifies, legal actions only, no mass on
illegal actions, finished positions never expanded, and optimal play with a perfect oracle on
Kalah(3,2), solved here by exhaustive minimax."""

from __future__ import annotations

import numpy as np
import pytest
from kalah_minimax import minimax_of
from spieltisch.agents.neural.gumbel_search import (
    GumbelSearch,
    SearchConfig,
    considered_visits,
    game_outcome,
    tree_bytes,
)
from spieltisch.envs import make_batch
from spieltisch.envs.kalaha import KalahaGame, KalahaState
from spieltisch.envs.kalaha.rules import BOARD_DTYPE

SMALL = {"pits": 3, "seeds": 2}


#: exact results of Kalah(3,2) positions (a text) and of every legal move of a state
minimax, action_values = minimax_of(KalahaGame(**SMALL))


def oracle(batch_game, policy_weight: float):
    """An evaluator with the exact value and (``policy_weight`` > 0) logits favouring the
    optimal moves; it fails the test if asked about a finished position."""

    def evaluate(obs: np.ndarray, mask: np.ndarray):
        assert (mask.sum(axis=1) > 0).all(), "a finished position was evaluated"
        logits = np.zeros(mask.shape)
        values = np.zeros((len(obs), 2))
        for i in range(len(obs)):
            state = from_observation(obs[i])
            values[i] = [minimax(state.to_text()), -minimax(state.to_text())]
            for action, v in action_values(state).items():
                logits[i, action] = policy_weight * v
        return logits, values

    return evaluate


def from_observation(obs: np.ndarray) -> KalahaState:
    """The position as the mover sees it, with the mover in seat 0 (values and actions are the
    same from either seat)."""
    board = np.asarray(obs, dtype=BOARD_DTYPE)
    return KalahaState(KalahaGame(**SMALL), board, 0, terminal=False)


def random_positions(count: int, seed: int) -> list:
    """Unfinished Kalah(3,2) positions from random games."""
    rng = np.random.default_rng(seed)
    game = KalahaGame(**SMALL)
    found = []
    while len(found) < count:
        state = game.new_initial_state()
        while not state.is_terminal():
            found.append(state.clone())
            legal = state.legal_actions()
            state.apply(legal[int(rng.integers(len(legal)))])
    return found[:count]


def batch_of(states: list):
    batch = make_batch("kalaha", len(states), **SMALL)
    for g, state in enumerate(states):
        batch.set_state(g, state)
    return batch


def test_sequential_halving_schedule_as_in_the_paper() -> None:
    # m = 4 candidates, n = 16: phase 1 gives 4 x 2 visits, phase 2 gives the best 2 x 4 visits
    assert considered_visits(4, 16).tolist() == [0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 3, 3, 4, 4, 5, 5]
    assert considered_visits(2, 4).tolist() == [0, 0, 1, 1]
    assert considered_visits(1, 3).tolist() == [0, 1, 2]
    # every simulation belongs to the schedule: n entries, each a visit count already reached
    for m in range(1, 17):
        for n in (1, 8, 16, 64):
            seq = considered_visits(m, n)
            assert len(seq) == n
            counts: dict[int, int] = {}
            for k in seq:
                assert counts.get(k, 0) < m
                counts[k] = counts.get(k, 0) + 1


def test_root_visits_follow_the_gumbel_draws() -> None:
    states = random_positions(40, seed=1)
    states = [s for s in states if len(s.legal_actions()) == 3][:8]
    assert len(states) == 8
    batch = batch_of(states)

    def flat(obs, mask):  # uniform prior, equal values: only the Gumbel draws rank actions
        return np.zeros(mask.shape), np.zeros((len(obs), 2))

    config = SearchConfig(num_simulations=6, max_considered=2)
    result = GumbelSearch(config).search(batch, flat, np.random.default_rng(7))
    gumbel = np.random.default_rng(7).gumbel(size=(8, 3))
    for g in range(8):
        legal = np.array(states[g].legal_actions())
        top2 = legal[np.argsort(-gumbel[g, legal], kind="stable")[:2]]
        # m = 2, n = 6: both candidates get 3 visits, the third legal action none
        assert sorted(result.visits[g][legal].tolist()) == [0, 3, 3]
        assert set(np.flatnonzero(result.visits[g])) == set(top2.tolist())
        assert result.action[g] == top2[0]  # equal Q: the larger g + logit wins


@pytest.mark.parametrize("sims", [1, 2, 5, 16])
def test_only_legal_actions_and_no_mass_on_illegal(sims: int) -> None:
    rng = np.random.default_rng(3)
    batch = make_batch("kalaha", 64, pits=6, seeds=4)
    batch.reset()
    search = GumbelSearch(SearchConfig(num_simulations=sims))

    def noisy(obs, mask):
        assert (mask.sum(axis=1) > 0).all(), "a finished position was evaluated"
        return rng.normal(size=mask.shape) * 3, rng.uniform(-1, 1, size=(len(obs), 1)) * [1, -1]

    plies = 0
    while not batch.terminal.all():
        _, mask = batch.observe()
        result = search.search(batch, noisy, rng)
        active = ~batch.terminal
        assert (mask[active, result.action[active]] == 1).all()
        assert (result.policy[mask == 0] == 0).all()
        np.testing.assert_allclose(result.policy[active].sum(axis=1), 1.0)
        assert (result.visits[active].sum(axis=1) == sims).all()
        assert not result.policy[~active].any()
        batch.step(result.action)
        plies += 1
    assert plies > 10


def test_finished_positions_are_never_expanded() -> None:
    # Kalah(3,2) near its end: many moves finish the game; the oracle fails if asked about one
    near_end = [
        s for s in random_positions(600, seed=5) if sum(s.board[:3]) + sum(s.board[4:7]) <= 4
    ]
    states = near_end
    assert len(states) >= 10
    batch = batch_of(states[:32])
    result = GumbelSearch(SearchConfig(num_simulations=24)).search(
        batch, oracle(batch, 0.0), np.random.default_rng(0)
    )
    assert (result.visits.sum(axis=1) == 24).all()


def test_depth_one_search_with_exact_values_plays_optimally() -> None:
    """One visit per legal move (n = number of legal moves): the exact values decide."""
    states = random_positions(200, seed=11)
    for count in (2, 3):
        group = [s for s in states if len(s.legal_actions()) == count][:40]
        batch = batch_of(group)
        result = GumbelSearch(SearchConfig(num_simulations=count, gumbel_scale=0.0)).search(
            batch, oracle(batch, 0.0), np.random.default_rng(0)
        )
        for g, state in enumerate(group):
            values = action_values(state)
            assert values[int(result.action[g])] == max(values.values()), state.to_text()


def test_search_with_a_perfect_oracle_plays_optimally() -> None:
    """A perfect value and a prior favouring optimal moves: every chosen move is optimal, in
    every position of the set, with the root's Gumbel noise on."""
    states = random_positions(150, seed=13)
    batch = batch_of(states)
    result = GumbelSearch(SearchConfig(num_simulations=32)).search(
        batch, oracle(batch, 4.0), np.random.default_rng(1)
    )
    for g, state in enumerate(states):
        values = action_values(state)
        assert values[int(result.action[g])] == max(values.values()), state.to_text()
        # the improved policy puts most of its mass on optimal moves
        best = [a for a, v in values.items() if v == max(values.values())]
        assert result.policy[g, best].sum() > 0.5


def test_finished_games_in_the_batch_are_left_alone() -> None:
    batch = make_batch("kalaha", 4, pits=3, seeds=1)
    batch.reset()
    rng = np.random.default_rng(0)
    while not batch.terminal[0]:
        actions = batch.sample_random_actions(rng)
        batch.step(actions)
    before = [batch.state(g) for g in range(4)]
    result = GumbelSearch(SearchConfig(num_simulations=8)).search(
        batch,
        lambda obs, mask: (np.zeros(mask.shape), np.zeros((len(obs), 2))),
        rng,
    )
    assert [batch.state(g) for g in range(4)] == before  # the roots are not changed
    assert not result.visits[0].any() and not result.policy[0].any()


def test_bad_config_is_refused() -> None:
    with pytest.raises(ValueError, match="num_simulations"):
        SearchConfig(num_simulations=-1)
    with pytest.raises(ValueError, match="max_considered"):
        SearchConfig(max_considered=0)
    with pytest.raises(ValueError, match="c_scale"):
        SearchConfig(c_scale=-0.1)


def test_game_outcome_blends_the_result_with_the_stone_margin():
    # Seat 0 has won 7 to 5 (a margin of 2); the second game is still running.
    game = KalahaGame(**SMALL)
    batch = make_batch("kalaha", 2, **SMALL)
    batch.set_state(0, game.state_from_text("0,0,0/7 0,0,0/5 0 end"))
    batch.set_state(1, game.state_from_text("0,5,3/0 2,0,0/2 1"))
    assert batch.terminal.tolist() == [True, False]
    assert np.array_equal(game_outcome()(batch), [[1.0, -1.0], [0.0, 0.0]])
    # w = 0.5, scale 4: 0.5 * 1 + 0.5 * 2 / 4 = 0.75; unfinished games stay 0
    assert np.allclose(game_outcome(0.5, 4.0)(batch), [[0.75, -0.75], [0.0, 0.0]])
    # a margin beyond the scale counts fully: 0.5 + 0.5 * 1
    assert np.allclose(game_outcome(0.5, 1.0)(batch), [[1.0, -1.0], [0.0, 0.0]])
    # margin alone (w = 1), seen from the losing seat as well
    batch.set_state(0, game.state_from_text("0,0,0/5 0,0,0/7 0 end"))
    assert np.allclose(game_outcome(1.0, 8.0)(batch), [[-0.25, 0.25], [0.0, 0.0]])
    for bad, words in (
        ({"margin_weight": 1.5}, "margin_weight"),
        ({"margin_scale": 0}, "margin_scale"),
    ):
        with pytest.raises(ValueError, match=words):
            game_outcome(**bad)
    with pytest.raises(ValueError, match="scored in stones"):
        game_outcome(0.5)(make_batch("hus", 1))


def test_search_values_finished_leaves_with_its_outcome():
    # Seat 0 to move, one stone left in its last pit: the move ends the game 7 to 5 for seat 0
    # (margin 2). The search's exact leaf value is the outcome's, whatever the network says.
    game = KalahaGame(**SMALL)
    batch = make_batch("kalaha", 1, **SMALL)
    batch.set_state(0, game.state_from_text("0,0,1/6 0,1,0/4 0"))
    assert batch.legal_mask[0].tolist() == [0, 0, 1]

    def evaluate(obs, mask):
        return np.zeros(mask.shape), np.zeros((len(obs), 2))

    for outcome, expected in ((None, 1.0), (game_outcome(0.5, 4.0), 0.5 + 0.5 * 2 / 4)):
        search = GumbelSearch(SearchConfig(num_simulations=4, gumbel_scale=0.0), outcome)
        result = search.search(batch, evaluate, np.random.default_rng(0))
        assert result.action[0] == 2
        assert result.q[0, 2] == pytest.approx(expected)


def test_searching_some_rows_gives_their_full_search_results_and_evaluates_no_other() -> None:
    """``rows``: the games searched are those of ``rows`` (the trainer leaves out the baselines'
    and the random opening moves); each gets exactly what the search of the whole batch gives
    it (the root noise is drawn for every row either way), the other rows are zeros, and the
    evaluator never sees a position of a game not searched."""
    states = random_positions(40, seed=17)
    batch = batch_of(states)
    config = SearchConfig(num_simulations=12)
    full = GumbelSearch(config).search(batch, oracle(batch, 2.0), np.random.default_rng(5))
    rows = np.arange(3, 40, 4)
    seen = []
    exact = oracle(batch, 2.0)

    def watched(obs, mask):
        seen.append(obs.copy())
        return exact(obs, mask)

    rng = np.random.default_rng(5)
    part = GumbelSearch(config).search(batch, watched, rng, rows=rows)
    for name in ("action", "visits", "q", "root_value", "prior_logits", "network_value"):
        ours, theirs = getattr(part, name), getattr(full, name)
        assert np.array_equal(ours[rows], theirs[rows], equal_nan=True), name
    assert np.allclose(part.policy[rows], full.policy[rows])
    others = np.setdiff1d(np.arange(40), rows)
    for name in ("policy", "visits", "root_value", "network_value"):
        assert not getattr(part, name)[others].any(), name
    assert np.isnan(part.q[others]).all()
    # the root evaluation holds exactly the searched games; no call holds more of them
    obs = batch.observe()[0]
    assert np.array_equal(seen[0], obs[rows])
    assert all(len(s) <= len(rows) for s in seen)
    # the generator went on as after a search of every row
    after_full = np.random.default_rng(5)
    GumbelSearch(config).search(batch, exact, after_full)
    assert rng.random() == after_full.random()


def test_bad_rows_are_refused_and_change_nothing() -> None:
    batch = batch_of(random_positions(4, seed=3))
    before = [batch.state(g).to_text() for g in range(4)]
    search = GumbelSearch(SearchConfig(num_simulations=4))
    for bad, words in (([4], "game indices in \\[0, 4\\)"), ([[0]], "1-D"), ([0.5], "1-D")):
        rng = np.random.default_rng(0)
        with pytest.raises(ValueError, match=words):
            search.search(batch, oracle(batch, 0.0), rng, rows=np.array(bad))
        assert rng.random() == np.random.default_rng(0).random()  # nothing drawn
    assert [batch.state(g).to_text() for g in range(4)] == before

    def never(obs, mask):
        raise AssertionError("a game not searched was evaluated")

    # no rows: nothing searched, nothing evaluated
    result = search.search(batch, never, np.random.default_rng(0), rows=np.array([], dtype=int))
    assert not result.visits.any() and not result.policy.any()


@pytest.mark.parametrize("game", ["kalaha", "hus", "hilo"])
def test_tree_bytes_is_what_a_search_allocates(game):
    """The estimate the configs check against the machine's memory: within a few percent of
    the search's peak allocation (numpy's arrays are traced by tracemalloc)."""
    import tracemalloc

    games = make_batch(game, 256, seed=0)
    shape = games.num_actions, games.num_players

    def evaluate(obs, mask):
        return np.zeros((len(obs), shape[0])), np.zeros((len(obs), shape[1]))

    search = GumbelSearch(SearchConfig(num_simulations=128, max_considered=4), game_outcome())
    search.search(games, evaluate, np.random.default_rng(0))  # (compiles: not measured)
    tracemalloc.start()
    try:
        search.search(games, evaluate, np.random.default_rng(0))
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    estimate = tree_bytes(games, 128)
    assert estimate == tree_bytes(make_batch(game, 1, seed=0), 128, 256)
    assert 0.9 * peak <= estimate <= peak, (estimate, peak)
