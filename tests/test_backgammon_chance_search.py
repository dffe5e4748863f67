"""Gumbel search with chance nodes for backgammon (``spieltisch.agents.backgammon.chance_search``):
the 21 rolls, values against exact expectimax of small bear-offs (computed here by a plain
memoised recursion over the engine's plays), the tree's backup invariants, legal play in random
positions and whole arena games, and the agent's parameters."""

from __future__ import annotations

import functools

import numpy as np
import pytest
from spieltisch.agents.arena import evaluate
from spieltisch.agents.backgammon import chance_search as cs
from spieltisch.agents.backgammon import td_value as tv
from spieltisch.agents.neural.gumbel_search import SearchConfig
from spieltisch.agents.registry import make_agent
from spieltisch.envs.backgammon import BackgammonGame
from spieltisch.envs.backgammon import rules as k
from spieltisch.envs.backgammon.batch import BackgammonBatch
from spieltisch.envs.backgammon.notation import sides_to_position_id

GAME = BackgammonGame()
EXACT = 1e-9  # values equal to exact expectimax to this (floating-point sums only)


def side(points: dict[int, int]) -> np.ndarray:
    """A side's 25 counts from ``{point: checkers}`` (its own points 1..24, 25 = the bar)."""
    counts = np.zeros(25, dtype=np.int8)
    for point, n in points.items():
        counts[point - 1] = n
    return counts


def position(on_roll: dict[int, int], other: dict[int, int], dice: str) -> str:
    """Engine notation, seat 0 to play ``dice`` (the rest of each side's 15 checkers off)."""
    return f"{sides_to_position_id(side(other), side(on_roll))} 0 {dice}"


def rolled_state(board: np.ndarray, seat: int, d1: int, d2: int):
    """``board`` (52 cells) with ``seat`` about to play ``d1, d2``."""
    own = board[k.SIDE * seat : k.SIDE * seat + 25]
    other = board[k.SIDE * (1 - seat) : k.SIDE * (1 - seat) + 25]
    state = GAME.state_from_text(f"{sides_to_position_id(other, own)} {seat} roll")
    state.set_dice(d1, d2)
    return state


@functools.cache
def to_roll_value(board_bytes: bytes, seat: int) -> float:
    """Exact expected points for ``seat``, about to roll (expectimax over the 36 rolls, each
    roll's best play by this same recursion): the reference."""
    board = np.frombuffer(board_bytes, dtype=np.int8)
    total = 0.0
    for d1 in range(1, 7):
        for d2 in range(1, d1 + 1):
            state = rolled_state(board, seat, d1, d2)
            best = max(afterstate_value(play.state, seat) for play in state.legal_plays())
            total += best * (1 if d1 == d2 else 2)
    return total / 36


def afterstate_value(state, mover: int) -> float:
    """Exact value for ``mover`` of the position right after its play."""
    if state.is_terminal():
        return state.returns()[mover]
    return -to_roll_value(np.asarray(state.board, dtype=np.int8).tobytes(), 1 - mover)


def board_value(board: np.ndarray, mover: int) -> float:
    if board[k.SIDE * mover + k.OFF] == k.CHECKERS:  # mover has won; the opponent has some off
        return 1.0
    return -to_roll_value(np.asarray(board[: k.BOARD_SIZE], dtype=np.int8).tobytes(), 1 - mover)


def oracle(boards: np.ndarray, movers: np.ndarray) -> np.ndarray:
    """The perfect evaluator of bear-offs in which both sides have checkers off (no gammons)."""
    return np.array([board_value(b, int(m)) for b, m in zip(boards, movers, strict=True)])


def batch_of(*texts: str, reward: str = "points") -> BackgammonBatch:
    batch = BackgammonBatch(GAME, len(texts), seed=0, threads=1, reward=reward)
    for g, text in enumerate(texts):
        batch.set_state(g, GAME.state_from_text(text))
    return batch


def exact_play_values(text: str) -> np.ndarray:
    state = GAME.state_from_text(text)
    return np.array([afterstate_value(play.state, state.turn) for play in state.legal_plays()])


# bear-offs, 1-3 checkers a side, the player to move having several distinct plays
BEAR_OFFS = [
    position({6: 1, 5: 1, 2: 1}, {4: 1, 1: 1}, "21"),
    position({6: 2, 3: 1}, {6: 1, 5: 1, 1: 1}, "41"),
    position({5: 1, 4: 1, 1: 1}, {3: 2}, "31"),
    position({6: 1, 4: 1}, {5: 1, 2: 1, 1: 1}, "22"),
]


# 15 single checkers and a double: 1733 distinct plays
SPREAD = "770DAACgqqqqAg 0 2222"


def test_the_21_rolls_are_the_36_ordered_rolls():
    assert len(cs.ROLLS) == cs.NUM_OUTCOMES == 21 and len(set(cs.ROLLS)) == 21
    assert cs.ROLL_PROBS.sum() == pytest.approx(1.0, abs=1e-15)
    counts = np.zeros(21)
    for a in range(1, 7):
        for b in range(1, 7):
            counts[cs.ROLLS.index((max(a, b), min(a, b)))] += 1
    np.testing.assert_array_equal(counts / 36, cs.ROLL_PROBS)
    # each roll code makes the engine roll those dice (rules.dice_of at a roll)
    s = np.zeros(k.STATE_SIZE, dtype=np.int32)
    s[k.M_PHASE] = k.PH_ROLL
    for code, roll in zip(cs.ROLL_CODES, cs.ROLLS, strict=True):
        assert tuple(sorted(k.dice_of(s, int(code)), reverse=True)) == roll


@pytest.mark.parametrize("chance_value", cs.CHANCE_VALUES)
def test_every_root_play_of_a_bear_off_is_valued_by_exact_expectimax(chance_value):
    """A perfect leaf oracle; two plays considered, 21 simulations each: both chance nodes have
    all 21 rolls expanded once, so their values are the exact expectations (either way of
    valuing a chance node)."""
    search = cs.ChanceSearch(
        SearchConfig(42, max_considered=2, gumbel_scale=0.0), chance_value=chance_value
    )
    result = search.search(batch_of(*BEAR_OFFS), oracle)
    tree = result.tree
    for g, text in enumerate(BEAR_OFFS):
        exact = exact_play_values(text)
        rows = slice(result.offsets[g], result.offsets[g + 1])
        q, visits = result.q[rows], result.visits[rows]
        assert len(exact) == len(q) >= 2
        assert sorted(visits)[-2:] == [21, 21] and visits.sum() == 42
        tried = np.flatnonzero(visits)
        np.testing.assert_allclose(q[tried], exact[tried], rtol=0, atol=EXACT)
        for a in tried:  # the chance nodes: all 21 rolls expanded, each once
            chance = tree.children(g, 0)[a]
            outcomes = tree.children(g, chance)
            assert tree.kind[g, chance] == cs.CHANCE and (outcomes >= 0).all()
            assert (tree.visits[g, outcomes] == 1).all()
        # the prior is the oracle's values, so the best play is among those tried and chosen
        assert exact[result.play[g]] == pytest.approx(exact.max(), abs=EXACT)
        seat = tree.mover[g, 0]
        assert tree.raw[g, 0, seat] == pytest.approx(exact.max(), abs=EXACT)  # v_hat, 1-ply
        assert result.root_value[g, seat] <= exact.max() + EXACT  # a mean over the plays tried


def random_bear_offs(n: int, seed: int) -> list[str]:
    """``n`` bear-offs with 1-3 checkers a side on their home boards, the player to move with a
    choice of plays."""
    rng = np.random.default_rng(seed)
    texts: list[str] = []
    while len(texts) < n:
        sides = []
        for _ in range(2):
            points = rng.integers(1, 7, size=rng.integers(1, 4))
            sides.append({int(p): int((points == p).sum()) for p in set(points.tolist())})
        d1, d2 = sorted(rng.integers(1, 7, size=2).tolist(), reverse=True)
        dice = f"{d1}{d2}" * (2 if d1 == d2 else 1)
        text = position(sides[0], sides[1], dice)
        if GAME.state_from_text(text).num_plays() >= 2:
            texts.append(text)
    return texts


@pytest.mark.parametrize(
    ("sims", "temperature", "chance_value"),
    [
        (16, cs.DEFAULT_TEMPERATURE, "completed"),
        (64, cs.DEFAULT_TEMPERATURE, "completed"),
        (200, 1e-6, "completed"),
        (32, cs.DEFAULT_TEMPERATURE, "renormalized"),
    ],
)
def test_the_play_made_in_bear_offs_is_optimal(sims, temperature, chance_value):
    """With the perfect oracle the play made is an optimal one, and every root play whose 21
    rolls are expanded and were each visited once (their values: the oracle's, exact) has its
    exact value."""
    texts = BEAR_OFFS + random_bear_offs(16, seed=sims)
    config = SearchConfig(sims, gumbel_scale=0.0)
    result = cs.ChanceSearch(config, temperature, chance_value).search(batch_of(*texts), oracle)
    tree = result.tree
    for g, text in enumerate(texts):
        exact = exact_play_values(text)
        assert exact[result.play[g]] == pytest.approx(exact.max(), abs=EXACT), text
        for a, chance in enumerate(tree.children(g, 0)):
            if chance < 0 or tree.kind[g, chance] != cs.CHANCE:
                continue
            outcomes = tree.children(g, chance)
            expanded = outcomes[outcomes >= 0]
            if len(expanded) == cs.NUM_OUTCOMES and (tree.visits[g, expanded] == 1).all():
                q = result.q[result.offsets[g] + a]
                assert q == pytest.approx(exact[a], abs=EXACT), (text, a)


@pytest.mark.parametrize("chance_value", cs.CHANCE_VALUES)
def test_the_tree_backs_up_means_at_decisions_and_expectations_at_chance(chance_value):
    """On a TD net's search of a middle-game position: every decision node's visits and value
    sum are its own (1 and v_hat) plus its children's, every chance node's value is the
    probability-weighted mean of its expanded rolls, a finished node keeps its result."""
    params = make_agent("pretrained:backgammon", "backgammon").params
    state = GAME.state_from_text("4HPwATDgc/ABMA 0 31")
    batch = BackgammonBatch(GAME, 1, seed=0, threads=1)
    batch.set_state(0, state)
    search = cs.ChanceSearch(SearchConfig(300, gumbel_scale=0.0), chance_value=chance_value)
    result = search.search(batch, cs.td_evaluator(params))
    tree, kinds = result.tree, set()
    assert tree.num_nodes[0] > 300
    for node in range(tree.num_nodes[0]):
        kind = tree.kind[0, node]
        kinds.add(int(kind))
        children = [c for c in tree.children(0, node) if c >= 0]
        visits = sum(tree.visits[0, c] for c in children)
        sums = sum((tree.value_sum[0, c] for c in children), np.zeros(2))
        np.testing.assert_allclose(tree.value_sum[0, node].sum(), 0, atol=1e-9)  # zero-sum
        if kind == cs.DECISION:
            assert tree.visits[0, node] == 1 + visits
            np.testing.assert_allclose(tree.value_sum[0, node], tree.raw[0, node] + sums)
        elif kind == cs.CHANCE:
            assert tree.visits[0, node] == visits and children
            outcomes = tree.children(0, node)
            p = np.where(outcomes >= 0, cs.ROLL_PROBS, 0.0)
            values = [tree.value(0, c) if c >= 0 else np.zeros(2) for c in outcomes]
            expected = (p[:, None] * np.array(values)).sum(axis=0)
            if chance_value == "completed":  # the rest: the net's value of the afterstate
                expected += (1 - p.sum()) * tree.raw[0, node]
            else:
                expected /= p.sum()
            np.testing.assert_allclose(tree.value(0, node), expected, atol=1e-12)
        else:
            np.testing.assert_allclose(tree.value(0, node), tree.raw[0, node])
    assert kinds == {cs.DECISION, cs.CHANCE}
    assert result.visits.sum() == 300 and result.root_value[0, 0] == tree.value(0, 0)[0]
    assert result.policy.sum() == pytest.approx(1) and result.prior.sum() == pytest.approx(1)


@functools.cache
def td_params() -> dict[str, np.ndarray]:
    return make_agent("pretrained:backgammon", "backgammon").params


def random_positions(game: BackgammonGame, seed: int, num_games: int = 24) -> list:
    """Positions with dice to play from random games (at several stages), and a few in the
    middle of a turn (one checker of the roll moved)."""
    batch = BackgammonBatch(game, num_games, seed=seed, threads=1)
    rng = np.random.default_rng(seed)
    states = []
    for step in range(70):
        if step in (0, 4, 12, 25, 40, 60):
            for g in np.flatnonzero(~batch.terminal):
                state = batch.state(int(g))
                if state.num_plays() > 0:
                    states.append(state)
        batch.step_random_plays()
    for state in states[:: len(states) // 8]:
        legal = state.legal_actions()
        if len(state.dice()) >= 2 and legal[0] < k.PASS:
            mid = state.clone()
            mid.apply(int(rng.choice(legal)))
            if mid.num_plays() > 0:
                states.append(mid)
    return states


def test_searches_of_random_positions_choose_legal_plays_batched_as_one_by_one():
    """Many random positions (cube games too, searched as their cubeless copies) in one batched
    search: each chooses one of its position's legal plays, and each game's search is the one it
    gets alone."""
    states = random_positions(GAME, seed=3) + random_positions(BackgammonGame(cube=True), seed=4)
    states.insert(1, GAME.state_from_text(SPREAD))
    assert len(states) > 150 and states[1].num_plays() > 1700
    cubeless = [cs.cubeless_state(s) for s in states]
    batch = BackgammonBatch(GAME, len(states), seed=0, threads=1)
    for g, state in enumerate(cubeless):
        batch.set_state(g, state)
    search = cs.ChanceSearch(SearchConfig(24, gumbel_scale=0.0))
    evaluator = cs.td_evaluator(td_params())
    result = search.search(batch, evaluator)
    offsets, boards, _ = batch.legal_plays()
    for g, state in enumerate(states):
        legal = state.play_boards()
        assert result.offsets[g + 1] - result.offsets[g] == len(legal)
        assert 0 <= result.play[g] < len(legal)
        chosen = boards[offsets[g] + result.play[g]]
        assert (legal == chosen).all(axis=1).any()  # a legal play of the real position
        assert result.visits[offsets[g] : offsets[g + 1]].sum() == 24
    for g in range(1, len(states), 37):
        one = BackgammonBatch(GAME, 1, seed=0, threads=1)
        one.set_state(0, cubeless[g])
        alone = search.search(one, evaluator)
        rows = slice(offsets[g], offsets[g + 1])
        assert alone.play[0] == result.play[g]
        np.testing.assert_array_equal(alone.visits, result.visits[rows])
        np.testing.assert_allclose(alone.q, result.q[rows], atol=1e-12)


def test_the_agent_makes_legal_plays_and_leaves_finished_and_cube_positions_alone():
    agent = cs.TDSearchAgent(td_params(), seed=0, sims=8)
    for state in random_positions(BackgammonGame(cube=True), seed=5, num_games=8):
        index = agent.choose_play(state)
        assert 0 <= index < state.num_plays()
        assert agent.planned_play(state) == index  # deterministic, no plan yet
    # a batch whose games are finished or at a cube decision has nothing to search
    batch = BackgammonBatch(GAME, 2, seed=0, threads=1)
    batch.set_state(0, GAME.state_from_text(position({}, {6: 15}, "over")))
    search = cs.ChanceSearch(SearchConfig(8))  # root noise (self-play): gumbel_scale=1
    result = search.search(batch, cs.td_evaluator(td_params()), np.random.default_rng(0))
    assert result.play[0] == -1 and result.play[1] >= 0 and result.offsets[1] == 0
    assert result.visits.sum() == 8
    with pytest.raises(ValueError, match="cubeless"):
        cube_batch = BackgammonBatch(BackgammonGame(cube=True), 1, seed=0)
        cs.ChanceSearch(SearchConfig(8)).search(cube_batch, cs.td_evaluator(td_params()))


@pytest.mark.parametrize(("reward", "points"), [("points", 2.0), ("win", 1.0)])
def test_finished_games_are_valued_by_their_result(reward, points):
    """Bearing off the last checker while the opponent has none off wins a gammon: 2 points,
    or 1 with ``reward=win``, as the batch's returns() and the net's exact outputs say."""
    text = position({3: 1, 1: 1}, {6: 15}, "31")
    result = cs.ChanceSearch(SearchConfig(16, gumbel_scale=0.0)).search(
        batch_of(text, reward=reward), cs.td_evaluator(td_params(), reward)
    )
    tree = result.tree
    finished = [c for c in tree.children(0, 0) if c >= 0 and tree.kind[0, c] == cs.FINISHED]
    assert finished and all(tree.raw[0, c, 0] == points for c in finished)
    assert result.q[result.play[0]] == points and tree.raw[0, 0, 0] == points


def test_sims_agents_play_whole_arena_games():
    report = evaluate("backgammon", ["pretrained:backgammon:sims=4", "pubeval"], seeds=2, seed=1)
    assert report.pairs[0].games == 4
    cube = evaluate(
        "backgammon",
        ["pretrained:backgammon:sims=2,cube_life=0.7", "pretrained:backgammon"],
        seeds=1,
        options={"cube": True},
    )
    assert cube.pairs[0].games == 2


def test_parameters_are_checked():
    agent = make_agent("pretrained:backgammon:sims=3", "backgammon", seed=0)
    assert isinstance(agent, cs.TDSearchAgent) and agent.sims == 3
    assert agent.name == "pretrained:backgammon:sims=3"
    plain = make_agent("pretrained:backgammon:sims=0", "backgammon")
    assert type(plain) is tv.TDValueAgent and plain.ply == 1
    for bad in ("-1", "2.5", "true", "many"):
        with pytest.raises(ValueError, match="sims must be a whole number >= 0"):
            make_agent(f"pretrained:backgammon:sims={bad}", "backgammon")
    for both in ("sims=8,ply=2", "ply=2,sims=0", "sims=4,keep=3"):
        with pytest.raises(ValueError, match=r"'sims' .* and .* two different searches"):
            make_agent(f"pretrained:backgammon:{both}", "backgammon")
    with pytest.raises(ValueError, match="sims must be at least 1"):
        cs.TDSearchAgent(td_params(), sims=0)
    with pytest.raises(ValueError, match="temperature"):
        cs.ChanceSearch(SearchConfig(4), temperature=0.0)
    with pytest.raises(ValueError, match="chance_value"):
        cs.ChanceSearch(SearchConfig(4), chance_value="mean")
    with pytest.raises(ValueError, match="reward"):
        cs.td_evaluator(td_params(), "cube")
