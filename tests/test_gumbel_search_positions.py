"""The Gumbel search (agents/neural/gumbel_search.py) checked on small positions against things
known independently of it: a plain-Python re-implementation of the paper's search (mctx
semantics, values per seat), the exact Kalah(4,2) values, the completed-Q formula, the
simulation budget, and batch independence. Seconds in all."""

from __future__ import annotations

import numpy as np
import pytest
from kalah_minimax import minimax_of
from spieltisch.agents.neural.gumbel_search import GumbelSearch, SearchConfig, considered_visits
from spieltisch.envs import make_batch
from spieltisch.envs.kalaha import KalahaGame, KalahaState
from spieltisch.envs.kalaha.rules import BOARD_DTYPE

_W = np.random.default_rng(1).normal(size=(1200, 160))


def fixed_evaluator(players: int):
    """A deterministic evaluator of the observation alone (so its answers do not depend on the
    batch): logits and a zero-sum value vector from the mover on."""

    def evaluate(obs: np.ndarray, mask: np.ndarray):
        h = np.tanh(obs.reshape(len(obs), -1) / 4 @ _W[: obs.shape[1]])
        v = h[:, -players:]
        return 2 * h[:, : mask.shape[1]], v - v.mean(axis=1, keepdims=True)

    return evaluate


def positions(game: str, options: dict, count: int, plies: int, seed: int):
    rng = np.random.default_rng(seed)
    batch = make_batch(game, count, **options)
    batch.reset(seed=seed)
    for _ in range(plies):
        batch.step(batch.sample_random_actions(rng))
    return batch


# --- a plain re-implementation -----------------------------------------------------------------
class _Node:
    def __init__(self, batch, evaluate) -> None:
        self.state = batch.state(0)
        self.terminal = bool(batch.terminal[0])
        self.mover = int(batch.current_player[0])
        self.children: dict[int, _Node] = {}
        self.visits = 0
        if self.terminal:
            self.raw = batch.returns()[0].astype(float)
            self.legal = np.zeros(batch.num_actions, dtype=bool)
        else:
            obs, mask = batch.observe()
            logits, values = evaluate(obs, mask)
            self.legal = mask[0] != 0
            self.logits = np.where(self.legal, logits[0], -1e9)
            self.raw = np.roll(np.asarray(values[0], dtype=float), self.mover)  # absolute seats
        self.total = np.zeros_like(self.raw)


def _sigma(node: _Node, c_visit: float, c_scale: float):
    seat, legal = node.mover, node.legal
    logits = np.where(legal, node.logits, -np.inf)
    prior = np.exp(logits - logits.max())
    prior /= prior.sum()
    n = np.array([node.children[a].visits if a in node.children else 0 for a in range(len(legal))])
    q = np.array([node.children[a].total[seat] / n[a] if n[a] else 0.0 for a in range(len(n))])
    seen = n > 0
    v_mix = node.raw[seat]
    if n.sum():
        p = np.maximum(prior, 1e-30)
        v_mix = (v_mix + n.sum() * (p[seen] * q[seen]).sum() / p[seen].sum()) / (1 + n.sum())
    completed = np.where(seen, q, v_mix)
    low, high = completed[legal].min(), completed[legal].max()
    completed = (completed - low) / max(high - low, 1e-8)
    return np.where(legal, (c_visit + n.max()) * c_scale * completed, 0.0), n


def reference_search(game, options, state, evaluate, sims, max_considered, gumbel):
    """Gumbel search as the paper and mctx state it, one tree of Python objects."""
    c_visit, c_scale = 50.0, 0.1

    def batch_of(state, action=None):
        batch = make_batch(game, 1, **options)
        batch.set_state(0, state)
        if action is not None:
            batch.step(np.array([action]))
        return batch

    root = _Node(batch_of(state), evaluate)
    root.visits, root.total = 1, root.raw.copy()
    schedule = considered_visits(min(max_considered, int(root.legal.sum())), sims)

    def root_score(sigma, n, considered):
        shifted = root.logits - root.logits[root.legal].max()
        score = np.maximum(-1e9, gumbel + shifted + sigma)
        return np.where(root.legal & (n == considered), score, -np.inf)

    for _ in range(sims):
        node, path = root, [root]
        while True:
            sigma, n = _sigma(node, c_visit, c_scale)
            if node is root:
                action = int(np.argmax(root_score(sigma, n, schedule[n.sum()])))
            else:
                z = np.where(node.legal, node.logits + sigma, -np.inf)
                pi = np.exp(z - z.max())
                pi /= pi.sum()
                action = int(np.argmax(np.where(node.legal, pi - n / (1 + n.sum()), -np.inf)))
            if action not in node.children:
                node.children[action] = _Node(batch_of(node.state, action), evaluate)
                path.append(node.children[action])
                break
            node = node.children[action]
            path.append(node)
            if node.terminal:
                break
        value = path[-1].raw
        for visited in path:
            visited.visits += 1
            visited.total = visited.total + value
    sigma, n = _sigma(root, c_visit, c_scale)
    z = np.where(root.legal, root.logits + sigma, -np.inf)
    policy = np.exp(z - z.max())
    return int(np.argmax(root_score(sigma, n, n.max()))), n, policy / policy.sum()


@pytest.mark.parametrize(
    ("game", "options", "players"),
    [("kalaha", {"pits": 4, "seeds": 3}, 2), ("hilo", {"num_players": 3}, 3)],
)
def test_search_equals_a_plain_reimplementation(game, options, players) -> None:
    """Kalaha's extra turns (the mover again: no change of perspective), HiLo's three seats,
    turns of several decisions and sampled chance: the compiled search makes the same visits,
    action and improved policy as the re-implementation, for several budgets and m."""
    batch = positions(game, options, 8, plies=3, seed=5)
    evaluate = fixed_evaluator(players)
    for sims, considered in ((7, 16), (12, 2), (20, 3)):
        gumbel = np.random.default_rng(sims).gumbel(size=(8, batch.num_actions))
        config = SearchConfig(num_simulations=sims, max_considered=considered)
        found = GumbelSearch(config).search(batch, evaluate, np.random.default_rng(0), gumbel)
        for g in np.flatnonzero(~batch.terminal):
            action, visits, policy = reference_search(
                game, options, batch.state(int(g)), evaluate, sims, considered, gumbel[g]
            )
            assert found.action[g] == action
            assert np.array_equal(found.visits[g], visits)
            np.testing.assert_allclose(found.policy[g], policy, atol=1e-9)


# --- exact values ----------------------------------------------------------------------------
KALAH_42 = KalahaGame(pits=4, seeds=2)


#: +1 / 0 / -1 under perfect play for the player to move, of a position and of its moves
exact, move_values = minimax_of(KALAH_42)


def exact_evaluator(obs: np.ndarray, mask: np.ndarray):
    """Uniform prior, the exact value (the observation is the board from the mover's side)."""
    values = np.zeros((len(obs), 2))
    for i, row in enumerate(obs):
        state = KalahaState(KALAH_42, np.asarray(row, dtype=BOARD_DTYPE), 0, terminal=False)
        values[i] = [exact(state.to_text()), -exact(state.to_text())]
    return np.zeros(mask.shape), values


def test_kalah_4_2_exact_values_uniform_prior_plays_optimally() -> None:
    rng = np.random.default_rng(0)
    states = []
    while len(states) < 150:
        state = KALAH_42.new_initial_state()
        while not state.is_terminal():
            states.append(state.clone())
            legal = state.legal_actions()
            state.apply(legal[int(rng.integers(len(legal)))])
    batch = make_batch("kalaha", len(states), pits=4, seeds=2)
    for g, state in enumerate(states):
        batch.set_state(g, state)
    decided = 0
    for scale in (0.0, 1.0):
        config = SearchConfig(num_simulations=32, gumbel_scale=scale)
        found = GumbelSearch(config).search(batch, exact_evaluator, np.random.default_rng(1))
        for g, state in enumerate(states):
            values = move_values(state)
            best = [a for a, v in values.items() if v == max(values.values())]
            if len(best) == len(values):
                continue
            decided += 1
            assert int(found.action[g]) in best, state.to_text()
            assert found.policy[g, best].sum() > 0.5, state.to_text()
    assert decided > 50


# --- budget, completed Q, seats, batches -------------------------------------------------------
def test_every_root_spends_exactly_its_simulations() -> None:
    """Any budget (powers of two or not), m above or below the legal count, one legal move."""
    batch = positions("kalaha", {"pits": 3, "seeds": 2}, 64, plies=4, seed=2)
    _, mask = batch.observe()
    legal = mask.sum(axis=1)
    assert {1, 2, 3} <= set(legal[~batch.terminal].tolist())
    evaluate = fixed_evaluator(2)
    for considered in (1, 2, 3, 16):
        for sims in (1, 2, 3, 5, 7, 10, 33):
            config = SearchConfig(num_simulations=sims, max_considered=considered)
            found = GumbelSearch(config).search(batch, evaluate, np.random.default_rng(sims))
            active = ~batch.terminal
            assert (found.visits[active].sum(axis=1) == sims).all()
            one = active & (legal == 1)
            assert (found.visits[one].max(axis=1) == sims).all()
            np.testing.assert_allclose(found.policy[one].max(axis=1), 1.0)
            tried = (found.visits[active] > 0).sum(axis=1)
            assert (tried == np.minimum(np.minimum(considered, legal[active]), sims)).all()


def test_policy_target_is_softmax_of_logits_plus_sigma_of_completed_q() -> None:
    """Four seats: pi' = softmax(logits + (c_visit + max N) * c_scale * rescaled completed Q),
    an unvisited action completed with v_mix (equation 33), all for the mover's seat."""
    batch = positions("hilo", {"num_players": 4}, 16, plies=5, seed=3)
    c_visit, c_scale = 30.0, 0.3
    config = SearchConfig(num_simulations=10, max_considered=4, c_visit=c_visit, c_scale=c_scale)
    found = GumbelSearch(config).search(batch, fixed_evaluator(4), np.random.default_rng(0))
    _, mask = batch.observe()
    checked = 0
    for g in np.flatnonzero(~batch.terminal):
        legal, n = mask[g] != 0, found.visits[g]
        logits = np.where(legal, found.prior_logits[g], -np.inf)
        prior = np.exp(logits - logits.max())
        prior /= prior.sum()
        q = np.nan_to_num(found.q[g])
        v_hat = found.network_value[g, batch.current_player[g]]
        seen = n > 0
        v_mix = (v_hat + n.sum() * (prior[seen] * q[seen]).sum() / prior[seen].sum()) / (
            1 + n.sum()
        )
        completed = np.where(seen, q, v_mix)
        completed = (completed - completed[legal].min()) / max(np.ptp(completed[legal]), 1e-8)
        z = np.where(legal, logits + (c_visit + n.max()) * c_scale * completed, -np.inf)
        expected = np.exp(z - z.max())
        np.testing.assert_allclose(found.policy[g], expected / expected.sum(), atol=1e-12)
        checked += (legal & ~seen).any()
    assert checked >= 4  # unvisited legal actions (v_mix) were part of it


def test_values_are_kept_by_seat_from_the_mover_on() -> None:
    """An evaluator saying (10, 20, 30) from the mover on: the mover's seat gets 10, the next
    seat 20, the one after 30."""
    batch = positions("hilo", {"num_players": 3}, 8, plies=7, seed=2)

    def evaluate(obs, mask):
        return np.zeros(mask.shape), np.tile([10.0, 20.0, 30.0], (len(obs), 1))

    found = GumbelSearch(SearchConfig(num_simulations=4)).search(
        batch, evaluate, np.random.default_rng(0)
    )
    for g in np.flatnonzero(~batch.terminal):
        mover = batch.current_player[g]
        expected = {mover: 10.0, (mover + 1) % 3: 20.0, (mover + 2) % 3: 30.0}
        assert found.network_value[g].tolist() == [expected[s] for s in range(3)]


@pytest.mark.parametrize(
    ("game", "options", "players"),
    [("kalaha", {"pits": 6, "seeds": 4}, 2), ("hilo", {"num_players": 3}, 3)],
)
def test_a_game_searched_alone_or_in_a_batch_gets_the_same_result(game, options, players):
    """Same root noise: the search of game g alone equals row g of the batch's search, and a
    repeated search is identical."""
    batch = positions(game, options, 12, plies=5, seed=4)
    evaluate = fixed_evaluator(players)
    config = SearchConfig(num_simulations=24, max_considered=4)
    gumbel = np.random.default_rng(9).gumbel(size=(12, batch.num_actions))
    full = GumbelSearch(config).search(batch, evaluate, np.random.default_rng(1), gumbel)
    again = GumbelSearch(config).search(batch, evaluate, np.random.default_rng(1), gumbel)
    for name in ("action", "policy", "visits", "q", "root_value"):
        assert np.array_equal(getattr(full, name), getattr(again, name), equal_nan=True), name
    for g in np.flatnonzero(~batch.terminal):
        alone = make_batch(game, 1, **options)
        alone.set_state(0, batch.state(int(g)))
        one = GumbelSearch(config).search(
            alone, evaluate, np.random.default_rng(1), gumbel[g : g + 1]
        )
        assert one.action[0] == full.action[g]
        assert np.array_equal(one.visits[0], full.visits[g])
        np.testing.assert_allclose(one.policy[0], full.policy[g], atol=1e-12)


@pytest.mark.parametrize(("game", "shipped"), [("kalaha", "kalaha"), ("hilo", "hilo")])
def test_a_search_agent_searches_with_the_settings_its_network_was_trained_with(
    game, shipped, tmp_path
) -> None:
    """``checkpoint:PATH:sims=N`` searches with the run's max_considered, c_visit and c_scale, as
    the run's own evaluations did (it used the defaults whatever the run had trained with)."""
    from spieltisch.agents.neural.agents import pretrained_path
    from spieltisch.agents.neural.checkpoint import load_checkpoint, save_checkpoint
    from spieltisch.agents.registry import make_agent

    ckpt = load_checkpoint(pretrained_path(shipped, {}, None), shipped)
    meta = {k: v for k, v in ckpt.meta.items() if k not in ("format", "format_version")}
    meta["config"] = {**meta["config"], "max_considered": 4, "c_visit": 20.0, "c_scale": 0.5}
    save_checkpoint(tmp_path / "net", meta, ckpt.tensors)
    agent = make_agent(f"checkpoint:{tmp_path / 'net'}:sims=8", game, seed=0)
    config = agent.search.config
    assert (config.max_considered, config.c_visit, config.c_scale) == (4, 20.0, 0.5)
    assert config.gumbel_scale == 0.0 and config.num_simulations == 8
