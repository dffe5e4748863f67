"""Backgammon's chance search and lookahead at play time, against Python brute force over the
same evaluator: a chance node with all 21 rolls expanded is the 2-ply value of the TD net
(``TDValueAgent(ply=2)`` too, and ``ply=3`` by its definition), on bear-offs (wins by a reply,
doubles, forced rolls) and contact positions; mirrored positions search alike; finished plays
are scored single / gammon / backgammon; rolls without a choice; bad values refused clearly."""

from __future__ import annotations

import functools

import numpy as np
import pytest
from spieltisch.agents.backgammon import chance_search as cs
from spieltisch.agents.backgammon import td_value as tv
from spieltisch.agents.neural.gumbel_search import SearchConfig
from spieltisch.agents.registry import make_agent
from spieltisch.envs.backgammon import BackgammonGame
from spieltisch.envs.backgammon import rules as k
from spieltisch.envs.backgammon.notation import sides_to_position_id
from test_backgammon_chance_search import batch_of, position, random_positions

GAME = BackgammonGame()
EXACT = 1e-12


@functools.cache
def params() -> dict[str, np.ndarray]:
    return make_agent("pretrained:backgammon", "backgammon").params


def net_values(boards: np.ndarray, mover: int) -> np.ndarray:
    """The TD net's 1-ply value of each afterstate for ``mover`` (exact where it has won)."""
    return tv.evaluate_boards(params(), np.asarray(boards), mover)


def reply_boards(board: np.ndarray, player: int, d1: int, d2: int) -> np.ndarray:
    """The afterstates of ``player``'s plays of ``(d1, d2)`` from ``board`` (the engine's)."""
    own = board[k.SIDE * player : k.SIDE * player + 25]
    other = board[k.SIDE * (1 - player) : k.SIDE * (1 - player) + 25]
    state = GAME.state_from_text(f"{sides_to_position_id(other, own)} {player} roll")
    state.set_dice(d1, d2)
    return state.play_boards()


def rolls():
    """The 21 rolls with their weights in 36 (written here, not read from the module)."""
    for d1 in range(1, 7):
        for d2 in range(1, d1 + 1):
            yield d1, d2, 1 if d1 == d2 else 2


def two_ply(board: np.ndarray, mover: int) -> float:
    """Brute force: ``mover``'s value of afterstate ``board`` averaged over the opponent's 21
    rolls, the opponent playing each with its best play by the net (a won board: exact)."""
    if board[k.SIDE * mover + k.OFF] == k.CHECKERS:
        return float(net_values(board[None], mover)[0])
    opp = 1 - mover
    total = sum(
        -w * net_values(reply_boards(board, opp, d1, d2), opp).max() for d1, d2, w in rolls()
    )
    return total / 36


def three_ply(board: np.ndarray, mover: int, reply_keep: int) -> float:
    """Brute force of ``ply=3``: over the opponent's rolls, its best 2-ply reply among its
    ``reply_keep`` best by 1-ply value (first of equal ones)."""
    if board[k.SIDE * mover + k.OFF] == k.CHECKERS:
        return float(net_values(board[None], mover)[0])
    opp = 1 - mover
    total = 0.0
    for d1, d2, w in rolls():
        replies = reply_boards(board, opp, d1, d2)
        order = np.argsort(-net_values(replies, opp), kind="stable")[:reply_keep]
        total -= w * max(two_ply(replies[q], opp) for q in order)
    return total / 36


# small bear-offs: a reply that wins, a double to play, both sides with checkers off or none
BEAR_OFFS = [
    position({6: 1, 5: 1, 2: 1}, {4: 1, 1: 1}, "21"),
    position({6: 1, 4: 1}, {5: 1, 2: 1, 1: 1}, "22"),
    position({6: 2, 3: 1}, {6: 1, 5: 1, 1: 1}, "41"),
    position({6: 2, 5: 1, 3: 1}, {6: 3}, "3333"),
]
# contact: the start with 31, a double, the other seat to play
CONTACT = ["4HPwATDgc/ABMA 0 31", "4HPwATDgc/ABMA 1 66", "4HPwATDgc/ABMA 0 21"]


@pytest.mark.parametrize("chance_value", cs.CHANCE_VALUES)
def test_a_fully_expanded_chance_node_is_the_2_ply_value_of_the_net(chance_value):
    """Two plays considered, 21 simulations each: every roll of the two chance nodes is expanded
    and visited once, so each node's Q is the probability-weighted mean over the 21 rolls of
    minus the opponent's best 1-ply value: the brute-force 2-ply value, and the lookahead's."""
    texts = BEAR_OFFS + CONTACT
    search = cs.ChanceSearch(
        SearchConfig(42, max_considered=2, gumbel_scale=0.0), chance_value=chance_value
    )
    result = search.search(batch_of(*texts), cs.td_evaluator(params()))
    lookahead = tv.TDValueAgent(params(), ply=2, keep=k.MAX_PLAYS)
    for g, text in enumerate(texts):
        state = GAME.state_from_text(text)
        boards = state.play_boards()
        expected = np.array([two_ply(b, state.turn) for b in boards])
        np.testing.assert_allclose(lookahead.play_values(state), expected, rtol=0, atol=EXACT)
        rows = slice(result.offsets[g], result.offsets[g + 1])
        visits, q = result.visits[rows], result.q[rows]
        tried = np.flatnonzero(visits)
        assert len(tried) == 2 and (visits[tried] == 21).all(), text
        np.testing.assert_allclose(q[tried], expected[tried], rtol=0, atol=EXACT, err_msg=text)
        for a in tried:
            chance = result.tree.children(g, 0)[a]
            outcomes = result.tree.children(g, chance)
            assert (outcomes >= 0).all() and (result.tree.visits[g, outcomes] == 1).all()


def test_three_ply_is_the_best_2_ply_reply_of_the_filtered_replies():
    state = GAME.state_from_text(BEAR_OFFS[0])
    boards = state.play_boards()
    for reply_keep in (1, 2):
        agent = tv.TDValueAgent(params(), ply=3, keep=k.MAX_PLAYS, reply_keep=reply_keep)
        expected = [three_ply(b, state.turn, reply_keep) for b in boards]
        np.testing.assert_allclose(agent.play_values(state), expected, rtol=0, atol=EXACT)


def mirrored(text: str) -> str:
    """The same position with the other seat on turn (the ID is from the player on roll)."""
    position_id, seat, rest = text.split(" ", 2)
    return f"{position_id} {1 - int(seat)} {rest}"


def test_mirrored_positions_search_alike_with_values_from_the_other_seat():
    """The mirror image (each side's checkers where the other's were, the other seat to move)
    has the same plays in the same order; the search makes the same play with the same Q and
    visits, and the root value is the same for the player on turn."""
    states = random_positions(GAME, seed=11, num_games=6)[::3]
    texts = [s.to_text() for s in states]
    texts += [mirrored(t) for t in texts]
    assert len(texts) >= 20
    result = cs.ChanceSearch(SearchConfig(24, gumbel_scale=0.0)).search(
        batch_of(*texts), cs.td_evaluator(params())
    )
    half = len(texts) // 2
    for g in range(half):
        a, b = GAME.state_from_text(texts[g]), GAME.state_from_text(texts[half + g])
        assert a.turn == 1 - b.turn
        own_a = a.play_boards()[:, k.SIDE * a.turn : k.SIDE * a.turn + k.SIDE]
        own_b = b.play_boards()[:, k.SIDE * b.turn : k.SIDE * b.turn + k.SIDE]
        np.testing.assert_array_equal(own_a, own_b)
        ra = slice(result.offsets[g], result.offsets[g + 1])
        rb = slice(result.offsets[half + g], result.offsets[half + g + 1])
        assert result.play[g] == result.play[half + g]
        np.testing.assert_array_equal(result.visits[ra], result.visits[rb])
        np.testing.assert_allclose(result.q[ra], result.q[rb], rtol=0, atol=1e-12)
        value_a = result.root_value[g, a.turn]
        assert value_a == pytest.approx(result.root_value[half + g, b.turn], abs=1e-12)
        assert result.root_value[g].sum() == pytest.approx(0, abs=1e-12)


@pytest.mark.parametrize(
    ("other", "kind", "points"),
    [({6: 14}, "single", 1.0), ({6: 15}, "gammon", 2.0), ({19: 1, 6: 14}, "backgammon", 3.0)],
)
@pytest.mark.parametrize("reward", ["points", "win"])
def test_bearing_off_the_last_checker_is_scored_exactly(other, kind, points, reward):
    """A play that bears off the last checker is a finished node worth its result: 1, 2 or 3
    points (the opponent with a checker off, none off, one in the winner's home board), 1 with
    ``reward=win``; the evaluator values that afterstate alike."""
    text = position({2: 1, 1: 1}, other, "21")
    state = GAME.state_from_text(text)
    wins = [i for i, p in enumerate(state.legal_plays()) if p.state.is_terminal()]
    assert len(wins) == 1 and state.legal_plays()[wins[0]].state.win_type() == kind
    assert state.legal_plays()[wins[0]].state.returns() == (points, -points)
    worth = points if reward == "points" else 1.0
    evaluate = cs.td_evaluator(params(), reward)
    values = evaluate(state.play_boards(), np.zeros(state.num_plays(), dtype=np.int64))
    assert values[wins[0]] == worth
    result = cs.ChanceSearch(SearchConfig(8, gumbel_scale=0.0)).search(
        batch_of(text, reward=reward), evaluate
    )
    tree = result.tree
    child = tree.children(0, 0)[wins[0]]
    assert tree.kind[0, child] == cs.FINISHED and result.q[wins[0]] == worth
    assert tree.visits[0, child] == result.visits[wins[0]] > 0
    np.testing.assert_array_equal(tree.raw[0, child], [worth, -worth])
    if kind == "gammon":  # the most a play can win here: the search makes it
        assert result.play[0] == wins[0]


@pytest.mark.parametrize(
    "opponent",
    [{6: 14}, {19: 1, 6: 13}],  # (the second also has a checker in seat 0's home board)
)
def test_an_immediate_win_worth_the_most_possible_is_taken(opponent):
    """The opponent has borne off a checker, so no play can win more than the single game that
    bearing off the last checker wins now: every agent must take it. The net valued the play
    that leaves a checker on the 1-point at about 1.05 points (1.95 with the opponent's
    checker back: backgammon chances), so 1-ply, 2-ply and the chance search (all the sims it
    is played with) bore off one checker and kept the other; the evaluator now rules out the
    gammons the position cannot have (``td_value.rule_out_results``)."""
    state = GAME.state_from_text(position({2: 1, 1: 1}, opponent, "21"))
    win = next(i for i, p in enumerate(state.legal_plays()) if p.state.is_terminal())
    agents = [tv.TDValueAgent(params()), tv.TDValueAgent(params(), ply=2)]
    agents += [tv.TDValueAgent(params(), ply=3)]
    agents += [cs.TDSearchAgent(params(), sims=sims) for sims in (2, 8, 32)]
    assert [agent.choose_play(state) for agent in agents] == [win] * len(agents)
    values = tv.TDValueAgent(params()).play_values(state)
    assert values[win] == 1.0 and np.all(np.delete(values, win) < 1.0)


def test_rolls_without_a_choice():
    """On the bar against a closed board the roll cannot be played: one (empty) play, every
    simulation through it, its chance node fully expanded after 21 (the 2-ply value); the
    agent plays it without searching. A roll with one legal play likewise."""
    closed = position(
        {25: 1, 6: 2, 5: 2, 4: 2, 3: 2, 2: 2, 1: 4},
        {6: 2, 5: 2, 4: 2, 3: 2, 2: 2, 1: 2, 13: 3},
        "63",
    )
    state = GAME.state_from_text(closed)
    assert state.num_plays() == 1 and state.legal_actions() == (k.PASS,)
    result = cs.ChanceSearch(SearchConfig(21, gumbel_scale=0.0)).search(
        batch_of(closed), cs.td_evaluator(params())
    )
    assert result.play.tolist() == [0] and result.visits.tolist() == [21]
    assert result.q[0] == pytest.approx(two_ply(state.play_boards()[0], 0), abs=EXACT)
    agent = cs.TDSearchAgent(params(), sims=4)
    calls = []
    agent.run_search = lambda s: calls.append(s)  # a forced play makes no search
    assert agent.choose_play(state) == 0
    one = GAME.state_from_text(position({6: 1}, {6: 1, 5: 1}, "65"))  # 6 off: the only play
    assert one.num_plays() == 1 and agent.choose_play(one) == 0 and not calls


def test_the_search_steps_each_roll_code_to_its_dice_doubles_four_moves():
    """As the search steps a play and then outcome ``o`` (``step_plays(play,
    rolls=ROLL_CODES[o])``), the opponent gets the dice of ``ROLLS[o]``: from the start after
    31 every reply moves the roll's pips, four times the die for a double."""
    n = cs.NUM_OUTCOMES
    batch = batch_of(*["4HPwATDgc/ABMA 0 31"] * n)
    batch.step_plays(np.zeros(n, dtype=np.int64), rolls=cs.ROLL_CODES)
    assert (batch.current_player == 1).all()
    offsets, boards, _ = batch.legal_plays()
    before = batch.state(0).pip_counts()[1]
    for o, (d1, d2) in enumerate(cs.ROLLS):
        dice = sorted(batch.state(o).dice(), reverse=True)
        assert dice == ([d1] * 4 if d1 == d2 else [d1, d2])
        replies = boards[offsets[o] : offsets[o + 1]]
        pips = [GAME.state_to_roll(b, 0).pip_counts()[1] for b in replies]
        assert len(replies) > 1 and set(before - np.array(pips)) == {
            4 * d1 if d1 == d2 else d1 + d2
        }, (d1, d2)


@pytest.mark.parametrize("temperature", [1e-310, 5e-324, 1e-308])
def test_a_temperature_too_small_for_the_logits_is_refused(temperature):
    """values / T overflowing to infinity made NaN priors and -inf values (and play 0): refused
    with a clear error; the smallest that works still gives finite values."""
    with pytest.raises(ValueError, match=r"temperature .* too small"):
        cs.ChanceSearch(SearchConfig(4), temperature=temperature)
    with pytest.raises(ValueError, match=r"temperature .* too small"):
        cs.TDSearchAgent(params(), sims=4, temperature=temperature)
    result = cs.ChanceSearch(SearchConfig(16, gumbel_scale=0.0), temperature=1e-300).search(
        batch_of(CONTACT[0]), cs.td_evaluator(params())
    )
    assert np.isfinite(result.root_value).all() and np.isfinite(result.prior).all()
    assert np.isfinite(result.q[result.visits > 0]).all()


def test_bad_values_give_clear_errors():
    for bad in (0, -1.0, float("nan"), float("inf"), "0.1", True, None):
        with pytest.raises(ValueError, match="temperature must be a positive number"):
            cs.ChanceSearch(SearchConfig(4), temperature=bad)
    with pytest.raises(ValueError, match="max_considered must be at least 1"):
        cs.TDSearchAgent(params(), sims=4, max_considered=0)
    with pytest.raises(ValueError, match="reward must be 'points' or 'win'"):
        cs.TDSearchAgent(params(), sims=4, reward="coins")
    with pytest.raises(ValueError, match="chance_value must be one of"):
        cs.TDSearchAgent(params(), sims=4, chance_value="mean")
    # the search's own knobs are not agent-spec parameters: named, not ignored
    for spec, words in (
        ("sims=8,temperature=0.1", "agents take the parameters"),
        ("sims=8,bearoff=true", "'bearoff' is an option of the lookahead"),
        ("sims=4,reply_keep=2", "two different searches"),
    ):
        with pytest.raises(ValueError, match=words):
            make_agent(f"pretrained:backgammon:{spec}", "backgammon")


def test_the_evaluator_rules_out_exactly_the_gammons_a_position_cannot_have():
    """Over afterstates of random games (bear-offs on both sides among them): the evaluator's
    outputs equal the raw network's, except the mover's gammons (outputs 1, 2) once the
    opponent has a checker off and the opponent's (3, 4) once the mover has, which are 0."""
    from test_backgammon_alphazero import random_afterstates

    boards, movers = random_afterstates(8, 400, seed=5)
    net = params()
    ruled = borne = 0
    for row, mover in zip(boards, movers, strict=True):
        row = np.ascontiguousarray(row, dtype=np.int32)
        if row[k.SIDE * mover + k.OFF] == k.CHECKERS:
            continue
        x = np.zeros(tv.NUM_INPUTS)
        nz = np.zeros(tv.NUM_INPUTS, dtype=np.int64)
        n_nz = tv.encode(row, mover, x, nz)
        raw = np.zeros(tv.NUM_OUTPUTS)
        tv.forward(net["W1"], net["b1"], net["W2"], net["b2"], x, nz, n_nz, np.zeros(80), raw)
        want = raw.copy()
        if row[k.SIDE * (1 - mover) + k.OFF] > 0:
            want[1:3] = 0.0
            ruled += 1
        if row[k.SIDE * mover + k.OFF] > 0:
            want[3:5] = 0.0
            borne += 1
        np.testing.assert_array_equal(tv.outputs_of(net, row, mover), want)
    assert ruled > 20 and borne > 20  # both cases were met
