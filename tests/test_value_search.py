"""Search over a network's value head (``pretrained:<game>:search=N``) against a plain recursive
minimax over the single-game engine, which shares no code with the batched tree expansion."""

from __future__ import annotations

import re

import numpy as np
import pytest
import torch
from spieltisch.agents.neural.policy import PolicyArch, PolicyNet
from spieltisch.agents.neural.value_search import ValueSearchAgent, searched_values
from spieltisch.agents.registry import make_agent
from spieltisch.envs.hus import rules as hus_rules
from spieltisch.envs.hus.engine import HusGame
from spieltisch.envs.kalaha import rules as kalaha_rules
from spieltisch.envs.kalaha.engine import KalahaGame, KalahaState

KALAHA = {"pits": 4, "seeds": 3, "rules": "goki"}


def _net(observation_size: int, num_actions: int, scale: float) -> PolicyNet:
    torch.manual_seed(1)
    return PolicyNet(PolicyArch(observation_size, num_actions, (16,), scale)).eval()


def _value(net: PolicyNet, obs: np.ndarray, mask: np.ndarray) -> float:
    with torch.no_grad():
        _, v = net(torch.from_numpy(obs[None].astype(np.float32)), torch.from_numpy(mask[None]))
    return float(v[0])


def _observation(state, seat: int) -> np.ndarray:
    """``seat``'s observation of ``state`` (the env's, from the game's observation kernel)."""
    rules = kalaha_rules if isinstance(state, KalahaState) else hus_rules
    out = np.empty(state.board.shape[0], np.float32)
    rules.observe(state.board, seat, out)
    return out


def _minimax(
    state, root: int, depth: int, net: PolicyNet, margin: tuple[float, float] = (0.0, 1.0)
) -> float:
    """Value for ``root`` of ``state``: exact at the end (the result, blended with the stone
    margin by ``margin`` = (weight, scale) as a margin-trained net learns it), the value head
    at depth 0."""
    if state.is_terminal():
        weight, scale = margin
        stones = state.score_difference() * (1 if root == 0 else -1) if weight else 0
        return (1 - weight) * float(state.returns()[root]) + weight * min(
            max(stones / scale, -1.0), 1.0
        )
    mover = state.current_player
    if depth == 0:
        v = _value(net, _observation(state, mover), state.legal_mask())
        return v if mover == root else -v
    children = []
    for a in state.legal_actions():
        child = state.clone()
        child.apply(a)
        children.append(_minimax(child, root, depth - 1, net, margin))
    return max(children) if mover == root else min(children)


def _random_states(game, count: int, rng: np.random.Generator):
    states = []
    while len(states) < count:
        state = game.new_initial_state()
        for _ in range(int(rng.integers(0, 30))):
            if state.is_terminal():
                break
            state.apply(int(rng.choice(state.legal_actions())))
        if not state.is_terminal():
            states.append(state)
    return states


@pytest.mark.parametrize(
    ("depth", "margin"), [(1, (0.0, 1.0)), (2, (0.0, 1.0)), (3, (0.0, 1.0)), (3, (0.5, 4.0))]
)
def test_kalaha_search_equals_recursive_minimax(depth: int, margin: tuple[float, float]) -> None:
    game = KalahaGame(**KALAHA)
    net = _net(10, 4, 3.0)
    rng = np.random.default_rng(depth)
    for state in _random_states(game, 25, rng):
        player = state.current_player
        actions, values = searched_values(
            net, "kalaha", KALAHA, state.board, player, depth, value_margin=margin
        )
        assert actions.tolist() == list(state.legal_actions())
        for a, v in zip(actions, values, strict=True):
            child = state.clone()
            child.apply(int(a))
            expected = _minimax(child, player, depth - 1, net, margin)
            assert v == pytest.approx(expected, abs=1e-5), (state.to_text(), a)


def test_hus_search_equals_recursive_minimax() -> None:
    game = HusGame()
    net = _net(32, 16, 4.0)
    rng = np.random.default_rng(5)
    for state in _random_states(game, 8, rng):
        player = state.current_player
        actions, values = searched_values(net, "hus", {}, state.board, player, 2)
        for a, v in zip(actions, values, strict=True):
            child = state.clone()
            child.apply(int(a))
            assert v == pytest.approx(_minimax(child, player, 1, net), abs=1e-5)


def test_search_plays_the_only_winning_move() -> None:
    """Late positions where exactly one move wins by force within 4 plies (found by the
    recursive minimax, all leaves finished games): the agent must play it."""
    game = KalahaGame(**KALAHA)
    net = _net(10, 4, 3.0)
    agent = ValueSearchAgent(net, "kalaha", KALAHA, depth=4)
    rng = np.random.default_rng(11)
    found = 0
    for state in _random_states(game, 400, rng):
        player = state.current_player
        wins = []
        for a in state.legal_actions():
            child = state.clone()
            child.apply(a)
            wins.append(_minimax(child, player, 3, net) == 1.0)
        if sum(wins) != 1 or len(wins) < 2:
            continue
        obs = {"observation": _observation(state, player), "action_mask": state.legal_mask()}
        assert agent.act(obs, state.clone()) == state.legal_actions()[wins.index(True)]
        found += 1
        if found == 10:
            break
    assert found >= 5, found


def test_search_agent_names_and_errors() -> None:
    agent = make_agent("pretrained:kalaha:search=2", "kalaha", seed=0)
    assert isinstance(agent, ValueSearchAgent) and agent.depth == 2
    with pytest.raises(ValueError, match="positive integer"):
        make_agent("pretrained:kalaha:search=0", "kalaha")
    with pytest.raises(ValueError, match="search"):
        make_agent("pretrained:kalaha:depth=2", "kalaha")
    with pytest.raises(ValueError, match="game state"):
        agent.act({"observation": np.zeros(14), "action_mask": np.ones(6, np.int8)}, None)
    agent = make_agent("pretrained:kalaha:search=2,leaves=1000", "kalaha", seed=0)
    assert agent.max_leaves == 1000 and agent.name.endswith("search=2,leaves=1000")
    with pytest.raises(ValueError, match="'leaves' needs 'search'"):
        make_agent("pretrained:kalaha:leaves=1000", "kalaha")
    with pytest.raises(ValueError, match="non-negative"):
        make_agent("pretrained:kalaha:search=2,leaves=-1", "kalaha")


def test_a_leaf_budget_searches_small_endgames_to_the_end() -> None:
    """With a budget larger than any ply of the remaining game, a 1-ply search keeps going
    until every line is finished: its values are the exact game results."""
    game = KalahaGame(**KALAHA)
    net = _net(10, 4, 3.0)
    rng = np.random.default_rng(21)
    checked = 0
    for state in _random_states(game, 600, rng):
        if state.board.sum() - state.board[4] - state.board[9] > 8:  # stones left in the pits
            continue
        player = state.current_player
        actions, values = searched_values(
            net, "kalaha", KALAHA, state.board, player, 1, max_leaves=10**6
        )
        plain, _ = searched_values(net, "kalaha", KALAHA, state.board, player, 1)
        assert plain.tolist() == actions.tolist()
        for a, v in zip(actions, values, strict=True):
            child = state.clone()
            child.apply(int(a))
            assert v == _minimax(child, player, 100, net), (state.to_text(), a)
        checked += 1
    assert checked >= 10, checked


def test_compiled_tanh_is_accurate() -> None:
    import numba
    from spieltisch.agents.mancala.alphabeta import _tanh

    @numba.njit
    def apply(xs):
        out = np.empty_like(xs)
        for i in range(xs.size):
            out[i] = _tanh(xs[i])
        return out

    xs = np.linspace(-12.0, 12.0, 100_001).astype(np.float32)
    assert np.abs(apply(xs) - np.tanh(xs.astype(np.float64))).max() < 5e-7


@pytest.mark.parametrize(
    ("game", "count_bins"), [("kalaha", 0), ("hus", 0), ("kalaha", 5), ("hus", 6)]
)
def test_compiled_value_net_equals_torch(game: str, count_bins: int) -> None:
    """The alpha-beta's numba value net reads the env's observation (one-hot counts too) and
    matches PolicyNet.value."""
    from spieltisch.agents.mancala import alphabeta
    from spieltisch.agents.mancala.alphabeta import _net_value, net_leaf_evaluator
    from spieltisch.agents.neural.value_search import value_layers

    kind, size, actions, scale = (
        (alphabeta.KALAHA, 10, 4, 3.0) if game == "kalaha" else (alphabeta.HUS, 32, 16, 4.0)
    )
    torch.manual_seed(3)
    net = PolicyNet(PolicyArch(size, actions, (24, 12), scale, count_bins=count_bins)).eval()
    leaf_net = net_leaf_evaluator(value_layers(net), size, scale, count_bins)
    states = _random_states(KalahaGame(**KALAHA) if game == "kalaha" else HusGame(), 20,
                            np.random.default_rng(0))  # fmt: skip
    for state in states:
        for mover in (0, 1):
            obs = torch.from_numpy(_observation(state, mover))[None]
            with torch.no_grad():
                expected = float(net.value(obs)[0])
            value = _net_value(kind, state.board, mover, leaf_net)
            assert value == pytest.approx(expected, abs=1e-5)
    with pytest.raises(ValueError, match="not a value net"):
        net_leaf_evaluator(value_layers(net)[:-1], size, scale, count_bins)


@pytest.mark.parametrize(
    ("game", "depth", "margin"),
    [
        ("kalaha", 1, (0.0, 1.0)),
        ("kalaha", 3, (0.0, 1.0)),
        ("kalaha", 4, (0.0, 1.0)),
        ("hus", 3, (0.0, 1.0)),
        ("kalaha", 3, (1.0, 6.0)),
        ("kalaha", 4, (0.5, 4.0)),
    ],
)
def test_alphabeta_equals_the_full_width_search(
    game: str, depth: int, margin: tuple[float, float]
) -> None:
    """Without a transposition table the compiled alpha-beta gives the best moves the exact
    full-width minimax value (rounded to 1e-4; a forced win scores beyond any value, or on the
    value head's scale for a net trained on the margin), and every other move an upper bound of
    its value."""
    from spieltisch.agents.mancala.alphabeta import VALUE_SCALE, WIN
    from spieltisch.agents.neural.value_search import alphabeta_searcher

    options, size, actions, scale = (KALAHA, 10, 4, 3.0) if game == "kalaha" else ({}, 32, 16, 4.0)
    net = _net(size, actions, scale)
    searcher = alphabeta_searcher(net, game, options, depth, seed=0, tt_bits=0, value_margin=margin)
    engine = KalahaGame(**KALAHA) if game == "kalaha" else HusGame()
    for state in _random_states(engine, 30, np.random.default_rng(depth)):
        moves, full = searched_values(
            net, game, options, state.board, state.current_player, depth, value_margin=margin
        )
        found = searcher.root_values(state)
        raw = np.array([found[int(a)] for a in moves])
        if margin[0] > 0:
            assert np.all(np.abs(raw) <= VALUE_SCALE), raw  # one scale for proven and estimated
        bounds = np.where(np.abs(raw) >= WIN // 2, np.sign(raw), raw / VALUE_SCALE)
        best = raw == raw.max()
        assert bounds[best][0] == pytest.approx(full.max(), abs=1.5e-4), state.to_text()
        assert np.all(full[best] >= full.max() - 2e-4), state.to_text()
        assert np.all(full <= bounds + 1.5e-4), state.to_text()


def _minimax_extended(
    state, root: int, depth: int, extend: int, net: PolicyNet, margin: tuple[float, float]
) -> float:
    """:func:`_minimax` where up to ``extend`` extra turns along a line cost no ply."""
    if state.is_terminal() or depth == 0:
        return _minimax(state, root, 0, net, margin)
    mover = state.current_player
    children = []
    for a in state.legal_actions():
        child = state.child(a)
        free = child.current_player == mover and not child.is_terminal() and extend > 0
        below = (depth, extend - 1) if free else (depth - 1, extend)
        children.append(_minimax_extended(child, root, *below, net, margin))
    return max(children) if mover == root else min(children)


@pytest.mark.parametrize(("depth", "extend"), [(1, 2), (2, 1), (3, 3)])
def test_alphabeta_extensions_equal_recursive_minimax(depth: int, extend: int) -> None:
    """``extend=K``: up to K extra turns per line are searched without using up a ply; without
    a transposition table the best moves get exactly the value of a recursive minimax that
    counts plies that way (and the other moves upper bounds)."""
    from spieltisch.agents.mancala.alphabeta import VALUE_SCALE, WIN
    from spieltisch.agents.neural.value_search import alphabeta_searcher

    margin = (0.5, 4.0)
    net = _net(10, 4, 3.0)
    searcher = alphabeta_searcher(
        net, "kalaha", KALAHA, depth, seed=0, tt_bits=0, value_margin=margin, extend=extend
    )
    engine = KalahaGame(**KALAHA)
    deeper = 0
    for state in _random_states(engine, 30, np.random.default_rng(10 + depth)):
        player = state.current_player
        found = searcher.root_values(state)
        expected = {}
        for a in state.legal_actions():
            child = state.child(a)
            free = child.current_player == player and not child.is_terminal()
            below = (depth, extend - 1) if free else (depth - 1, extend)
            expected[a] = _minimax_extended(child, player, *below, net, margin)
        plain = {a: _minimax(state.child(a), player, depth - 1, net, margin) for a in expected}
        deeper += any(abs(expected[a] - plain[a]) > 1e-4 for a in expected)
        raw = np.array([found[a] for a in expected])
        assert np.all(np.abs(raw) <= VALUE_SCALE) and WIN > VALUE_SCALE
        values = np.array(list(expected.values()))
        best = raw == raw.max()
        assert raw.max() / VALUE_SCALE == pytest.approx(values.max(), abs=1.5e-4), state.to_text()
        assert np.all(values[best] >= values.max() - 2e-4), state.to_text()
        assert np.all(values <= raw / VALUE_SCALE + 1.5e-4), state.to_text()
    assert deeper >= 5  # the extensions changed some values: the test compares something new


def test_extend_option_errors() -> None:
    with pytest.raises(ValueError, match="'extend' needs 'search'"):
        make_agent("pretrained:kalaha:extend=2", "kalaha")
    with pytest.raises(ValueError, match="extend must be"):
        make_agent("alphabeta:depth=4,extend=-1", "kalaha")
    with pytest.raises(ValueError, match="extend must be"):
        make_agent("alphabeta:depth=4,extend=99", "kalaha")
    with pytest.raises(ValueError, match="alpha-beta search, not of leaves"):
        make_agent("pretrained:kalaha:search=4,leaves=10,extend=2", "kalaha")
    # Hus passes the turn on every move: extend was accepted and searched as extend=0
    for hus_spec in ("alphabeta:depth=3,extend=2", "pretrained:hus:search=3,extend=2"):
        with pytest.raises(ValueError, match="Hus has none"):
            make_agent(hus_spec, "hus")
    assert make_agent("alphabeta:depth=3,extend=0", "hus").extend == 0


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("pretrained:", "needs the game's name, e.g. pretrained:kalaha"),  # it loaded the default
        ("pretrained:kalaha:search", "'search' has no value"),  # it said 'an agent for kalaha:s..'
        ("pretrained:kalaha:search=4:extend", "'extend' has no value"),
    ],
)
def test_pretrained_name_errors(spec: str, message: str) -> None:
    with pytest.raises(ValueError, match=re.escape(message)):
        make_agent(spec, "kalaha")


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"pits": "abc"}, "pits must be an integer"),
        ({"pitz": 4}, "did you mean 'pits'"),
        ({"pits": -1}, "pits must be between"),
    ],
)
@pytest.mark.parametrize("spec", ["alphabeta:depth=2", "random", "pretrained:kalaha"])
def test_make_agent_checks_game_options(spec: str, options: dict, message: str) -> None:
    """The Python API's game options get the env's checks (a misspelt option was ignored)."""
    with pytest.raises(ValueError, match=re.escape(message)):
        make_agent(spec, "kalaha", game_options=options)


def test_alphabeta_improvement_targets_the_best_searched_moves() -> None:
    """Expert iteration's search (self-play with ``policy_improvement: alphabeta``) on a batch
    of Kalah(4,3) positions: its policy target is uniform over exactly the moves whose 3-ply
    minimax value (the recursive reference) is the best, it plays the one of them the policy
    head prefers, its root value is that best value; finished games get zeros; and it searches
    the network's weights as they are at each call (a trainer updates them in place)."""
    from spieltisch.agents.neural.gumbel_search import policy_evaluator
    from spieltisch.agents.neural.value_search import AlphaBetaImprovement
    from spieltisch.envs import make_batch

    net = _net(10, 4, 3.0)
    search = AlphaBetaImprovement(net, "kalaha", KALAHA, depth=3)
    rng = np.random.default_rng(3)
    games = make_batch("kalaha", 48, **KALAHA)
    for _ in range(int(rng.integers(4, 12))):
        games.step(games.sample_random_actions(rng))
    for _ in range(12):  # some games end: their rows stay zeros
        games.step(games.sample_random_actions(rng))
    assert games.terminal.any() and not games.terminal.all()
    boards = games.boards.copy()
    states = [games.state(g) for g in range(games.num_games)]
    for round_ in range(2):
        if round_:  # new weights, read at the next call
            with torch.no_grad():
                for p in net.parameters():
                    p.add_(0.3 * torch.randn_like(p))
        result = search.search(games, policy_evaluator(net, 2), np.random.default_rng(round_))
        assert np.array_equal(games.boards, boards)  # the batch is left as it was
        obs, mask = games.observe()
        with torch.no_grad():
            logits, _ = net(torch.from_numpy(obs), torch.from_numpy(mask))
        ties = 0
        for g in range(games.num_games):
            if games.terminal[g]:
                assert not result.policy[g].any() and not result.root_value[g].any()
                continue
            state = states[g]
            player = state.current_player
            values = {}
            for a in state.legal_actions():
                child = state.clone()
                child.apply(a)
                values[a] = _minimax(child, player, 2, net)
            best = max(values.values())
            support = set(np.flatnonzero(result.policy[g]).tolist())
            assert {a for a, v in values.items() if v == best} <= support, (g, values)
            assert support <= {a for a, v in values.items() if v >= best - 2e-4}, (g, values)
            assert np.allclose(result.policy[g, sorted(support)], 1 / len(support))
            ties += len(support) > 1
            top = sorted(support)
            assert result.action[g] == top[int(np.argmax(logits[g].numpy()[top]))]
            assert result.root_value[g, player] == pytest.approx(best, abs=1e-4)
            assert result.root_value[g, 1 - player] == -result.root_value[g, player]
        assert ties  # finished lines (+-1) tie in some position


def test_alphabeta_improvement_with_q_values_corrects_the_policy() -> None:
    """``q_scale`` s > 0: the policy target is ``softmax(logits + s * q)`` over the legal moves,
    ``q`` every move's exact 3-ply minimax value (the recursive reference), not only the best's."""
    from spieltisch.agents.neural.gumbel_search import policy_evaluator
    from spieltisch.agents.neural.value_search import AlphaBetaImprovement
    from spieltisch.envs import make_batch

    net = _net(10, 4, 3.0)
    search = AlphaBetaImprovement(net, "kalaha", KALAHA, depth=3, q_scale=5.0)
    rng = np.random.default_rng(4)
    games = make_batch("kalaha", 24, **KALAHA)
    for _ in range(5):
        games.step(games.sample_random_actions(rng))
    live = np.flatnonzero(~games.terminal)
    states = [games.state(int(g)) for g in live]
    result = search.search(games, policy_evaluator(net, 2), rng)
    obs, mask = games.observe()
    with torch.no_grad():
        logits, _ = net(torch.from_numpy(obs), torch.from_numpy(mask))
    for g, state in zip(live, states, strict=True):
        player = state.current_player
        legal = list(state.legal_actions())
        q = np.empty(len(legal))
        for k, a in enumerate(legal):
            child = state.clone()
            child.apply(a)
            q[k] = _minimax(child, player, 2, net)
        expected = np.exp(logits[g].numpy()[legal] + 5.0 * q)
        expected /= expected.sum()
        assert np.allclose(result.policy[g, legal], expected, atol=1e-3), (g, q)
        assert result.policy[g].sum() == pytest.approx(1.0)
        assert np.allclose(result.q[g, legal], q, atol=1e-4)
        assert q[legal.index(int(result.action[g]))] == pytest.approx(q.max(), abs=1e-4)


def test_alphabeta_improvement_searches_only_the_rows_asked_for() -> None:
    """``rows``: those games get what a search of every game gives them (the move-order noise
    is drawn for every unfinished game either way), the others zeros, and the generator goes on
    as after the full search."""
    from spieltisch.agents.neural.gumbel_search import policy_evaluator
    from spieltisch.agents.neural.value_search import AlphaBetaImprovement
    from spieltisch.envs import make_batch

    net = _net(10, 4, 3.0)
    search = AlphaBetaImprovement(net, "kalaha", KALAHA, depth=2, q_scale=5.0)
    rng = np.random.default_rng(8)
    games = make_batch("kalaha", 24, **KALAHA)
    for _ in range(int(rng.integers(3, 9))):
        games.step(games.sample_random_actions(rng))
    evaluate = policy_evaluator(net, 2)
    full_rng, part_rng = np.random.default_rng(2), np.random.default_rng(2)
    full = search.search(games, evaluate, full_rng)
    rows = np.arange(1, 24, 3)
    part = search.search(games, evaluate, part_rng, rows=rows)
    for name in ("action", "policy", "q", "root_value", "prior_logits", "network_value"):
        ours, theirs = getattr(part, name), getattr(full, name)
        assert np.array_equal(ours[rows], theirs[rows], equal_nan=True), name
    others = np.setdiff1d(np.arange(24), rows)
    assert not part.policy[others].any() and not part.root_value[others].any()
    assert part_rng.random() == full_rng.random()
    with pytest.raises(ValueError, match="game indices"):
        search.search(games, evaluate, part_rng, rows=np.array([24]))
