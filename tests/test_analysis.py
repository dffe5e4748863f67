"""agents/analysis.py: what the agent to move thinks, on concrete positions of every game.

For each agent kind: legal moves only, probabilities summing to 1, ``chosen`` equal to what
``act`` plays on the same input, ``act`` (and the agent's generator) unchanged by an analysis
before it, the state not mutated, a JSON-ready result. The Kalaha solver's values against
``KalahaSolver.move_values``; HiLo: the same analysis for real states that differ only in
hidden cards."""

from __future__ import annotations

import copy
import json

import numpy as np
import pytest
import torch
from spieltisch.agents import analysis
from spieltisch.agents.analysis import MAX_PLAYS, analyse, solver_analysis
from spieltisch.agents.base import InformationSet
from spieltisch.agents.human import HumanAgent
from spieltisch.agents.kalaha.perfect import PerfectAgent
from spieltisch.agents.kalaha.solver import KalahaSolver
from spieltisch.agents.neural.gumbel_search import GumbelSearchAgent
from spieltisch.agents.neural.policy import NeuralAgent, PolicyArch, PolicyNet
from spieltisch.agents.registry import make_agent
from spieltisch.envs import make_batch
from spieltisch.envs.backgammon import rules as bg
from spieltisch.envs.backgammon.engine import BackgammonGame
from spieltisch.envs.hilo import HiLoGame
from spieltisch.envs.hilo import rules as R
from spieltisch.envs.hus.engine import HusGame
from spieltisch.envs.kalaha import KalahaGame

# Kalaha 6x6 (the shipped networks' board), mid-game, seat 0 to move
KALAHA_6 = """\
seat 1:      7   0   8   2   9   1
stores:  10                   6
seat 0:      0   5   7   1   8   8
seat 0 to move"""
KALAHA_4x3 = "0,4,5,1/3 4,0,4,2/1 1"  # Kalah(4,3), seat 1 to move
HUS = "0,2,2,2,2,2,2,2/1,1,0,0,2,2,2,2 2,2,2,2,2,2,2,2/0,0,0,0,2,2,2,2 1"
BG_OPENING = "4HPwATDgc/ABMA 0 31"
BG_DOUBLES = "Ss/gAQrQs3ACMQ 0 6666"  # more than MAX_PLAYS plays
BG_NO_MOVE = "HDcI8CiYlyZATA 0 63"
BG_CUBE = "4HPwATDgc/ABMA 0 cube cube=1"


def observation_of(state, seat=None) -> dict[str, np.ndarray]:
    """The env's observation of the mover (mancala and backgammon batches observe the same)."""
    if hasattr(state, "sample_consistent"):  # HiLo
        return {"observation": state.observation(seat), "action_mask": state.legal_mask()}
    game = type(state).__module__.split(".")[-2]
    options = {}
    if game == "kalaha":
        options = {"pits": state.game.pits, "seeds": state.game.seeds, "rules": state.game.rules}
    elif game == "backgammon":
        options = {"cube": state.game.cube}
    batch = make_batch(game, 1, **options)
    batch.set_state(0, state)
    obs, mask = batch.observe()
    return {"observation": obs[0], "action_mask": mask[0]}


def check(result: dict, observation: dict) -> None:
    """The format: JSON-ready, legal moves only, the columns present, probabilities sum to 1."""
    json.dumps(result, allow_nan=False)
    assert set(result) == {
        "agent", "method", "value", "value_meaning", "columns", "moves", "chosen", "note",
    }  # fmt: skip
    legal = set(np.flatnonzero(observation["action_mask"]).tolist())
    keys = [c["key"] for c in result["columns"]]
    assert all(c["format"] in ("percent", "number", "int") for c in result["columns"])
    for move in result["moves"]:
        assert set(keys) <= set(move)
        if "action" in move:
            assert move["action"] in legal
        else:  # a backgammon play: its first checker move is legal
            assert move["actions"] and move["actions"][0] in legal
    if "action" in (result["moves"] or [{}])[0]:
        assert sorted(m["action"] for m in result["moves"]) == sorted(legal)
    for c in result["columns"]:
        if c["format"] == "percent" and c["key"] in ("prob", "policy", "prior"):
            assert sum(m[c["key"]] for m in result["moves"]) == pytest.approx(1.0)
    if result["value"] is not None:
        assert result["value_meaning"]


def analysed_then_act(make, state, observation) -> tuple[dict, int, object]:
    """Analyse with one agent then act; act with a twin that was never analysed: the moves and
    the generators afterwards must agree, and the state must be unchanged."""
    agent, twin = make(), make()
    before = copy.deepcopy(state)
    result = analyse(agent, GAME_OF[type(state).__name__], observation, state, {})
    assert state == before and np.array_equal(state.board, before.board)
    action = agent.act(observation, state.clone())
    assert action == twin.act(observation, state.clone())
    assert agent.rng.bit_generator.state == twin.rng.bit_generator.state
    return result, action, agent


GAME_OF = {"KalahaState": "kalaha", "HusState": "hus", "BackgammonState": "backgammon"}


MANCALA_CASES = [
    ("random", KALAHA_4x3, {"pits": 4, "seeds": 3}),
    ("greedy", KALAHA_4x3, {"pits": 4, "seeds": 3}),
    ("alphabeta:depth=3", KALAHA_4x3, {"pits": 4, "seeds": 3}),
    ("pretrained:kalaha", KALAHA_6, {}),
    ("pretrained:kalaha:sims=8", KALAHA_6, {}),
    ("pretrained:kalaha:search=2", KALAHA_6, {}),
    ("pretrained:kalaha:search=1,leaves=300", KALAHA_6, {}),
    ("pretrained:kalaha:search=2,extend=2", KALAHA_6, {}),
    ("alphabeta:depth=2,extend=3", KALAHA_4x3, {"pits": 4, "seeds": 3}),
    ("alphabeta:depth=2", HUS, {}),
    ("pretrained:hus", HUS, {}),
]


@pytest.mark.parametrize(
    ("name", "text", "options"),
    MANCALA_CASES,
    ids=[f"{'hus' if text == HUS else 'kalaha'}-{name}" for name, text, _ in MANCALA_CASES],
)
def test_mancala_agents(name: str, text: str, options: dict) -> None:
    game = "hus" if text == HUS else "kalaha"
    engine = HusGame() if game == "hus" else KalahaGame(**options)
    state = engine.state_from_text(text)
    observation = observation_of(state)
    result, action, agent = analysed_then_act(
        lambda: make_agent(name, game, seed=5, game_options=options), state, observation
    )
    check(result, observation)
    assert result["chosen"] == action
    assert result["agent"] == agent.name
    if name != "random":
        assert result["value"] is not None
    if "alphabeta" in name or name == "greedy":  # the search's own values
        values = {m["action"]: m["value"] for m in result["moves"]}
        assert values[action] == max(values.values())
    if "sims" in name:
        assert sum(m["visits"] for m in result["moves"]) == 8
        assert sum(m["policy"] for m in result["moves"]) == pytest.approx(1.0)
    if "search" in name:
        values = {m["action"]: m["value"] for m in result["moves"]}
        assert values[action] == pytest.approx(max(values.values()))
    if "extend" in name and "search" in name:
        assert "extra turns per line cost no ply" in result["method"], result["method"]


def test_alphabeta_analysis_leaves_the_transposition_table_alone() -> None:
    state = KalahaGame(4, 3).state_from_text(KALAHA_4x3)
    agent = make_agent("alphabeta:depth=5", "kalaha", seed=1, game_options={"pits": 4, "seeds": 3})
    table = agent.tt.copy()
    analyse(agent, "kalaha", observation_of(state), state, {})
    assert np.array_equal(agent.tt, table)


def test_perfect_agent_gives_exact_values(tmp_path) -> None:
    game = KalahaGame(4, 3)
    state = game.state_from_text(KALAHA_4x3)
    solver = KalahaSolver(game, db_stones=4, cache_dir=tmp_path, tt_bits=12)
    observation = observation_of(state)
    result, action, _ = analysed_then_act(
        lambda: PerfectAgent(game, seed=2, solver=solver), state, observation
    )
    check(result, observation)
    exact = solver.move_values(state)
    assert {m["action"]: m["value"] for m in result["moves"]} == exact
    assert result["value"] == max(exact.values()) == exact[action]
    assert result["chosen"] == action


def tiny_net(game: str, seed: int = 0, **options) -> PolicyNet:
    torch.manual_seed(seed)
    batch = make_batch(game, 1, **options)
    arch = PolicyArch(batch.observation_shape[0], batch.num_actions, (16,))
    return PolicyNet(arch)


def test_sampling_network_agent_chosen_is_its_sample() -> None:
    state = KalahaGame(4, 3).state_from_text(KALAHA_4x3)
    observation = observation_of(state)
    net = tiny_net("kalaha", pits=4, seeds=3)
    for seed in range(5):
        result, action, _ = analysed_then_act(
            lambda seed=seed: NeuralAgent(net, seed=seed, greedy=False), state, observation
        )
        check(result, observation)
        assert result["chosen"] == action


@pytest.mark.parametrize(
    "name", ["pretrained:backgammon", "pretrained:backgammon:ply=2", "pubeval", "greedy", "gnubg"]
)
@pytest.mark.parametrize("text", [BG_OPENING, BG_DOUBLES], ids=["opening", "doubles"])
def test_backgammon_play_agents_rank_whole_plays(name: str, text: str) -> None:
    if name == "gnubg":
        pytest.importorskip("gnubg_nn")
    state = BackgammonGame().state_from_text(text)
    observation = observation_of(state)
    result, action, agent = analysed_then_act(
        lambda: make_agent(name, "backgammon", seed=4), state, observation
    )
    check(result, observation)
    plays = state.legal_plays()
    moves = result["moves"]
    assert len(moves) == min(len(plays), MAX_PLAYS)
    for move in moves:
        play = plays[move["index"]]
        assert move["actions"] == list(play.actions) and move["notation"] == play.notation
    # the chosen play is the one act started, and the agent now heads for its board
    chosen = result["chosen"]
    assert plays[chosen].actions[0] == action
    assert np.array_equal(agent._target, state.play_boards()[chosen])
    assert chosen in [m["index"] for m in moves]
    if len(plays) > MAX_PLAYS:
        assert f"{MAX_PLAYS} of {len(plays)}" in result["note"]
    key = {"pubeval": "score", "greedy": "pip_lead"}.get(name, "equity")
    if name.endswith("ply=2"):
        key = "equity_2ply"
    ranked = [m[key] for m in moves if m[key] is not None]
    assert ranked == sorted(ranked, reverse=True)  # best first
    if key in ("equity", "equity_2ply"):
        assert result["value"] == pytest.approx(max(ranked))
        for m in moves:
            assert 0 <= m["win"] <= 1 and m["win_gammon"] <= m["win"]
            equity = 2 * m["win"] - 1 + m["win_gammon"] + m["win_backgammon"]
            equity -= m["lose_gammon"] + m["lose_backgammon"]
            assert m["equity"] == pytest.approx(equity)


def bearoff_state(mover: tuple[int, ...], other: tuple[int, ...], dice: str):
    from spieltisch.envs.backgammon.notation import sides_to_position_id

    own, opp = np.zeros(25, dtype=np.int8), np.zeros(25, dtype=np.int8)
    own[:6], opp[:6] = mover, other
    return BackgammonGame().state_from_text(f"{sides_to_position_id(opp, own)} 0 {dice}")


@pytest.mark.parametrize(
    ("name", "text", "key"),
    [
        ("pretrained:backgammon:ply=3,keep=3,reply_keep=2", BG_OPENING, "equity_3ply"),
        ("pretrained:backgammon:sims=4", BG_OPENING, "policy"),
        ("pretrained:backgammon:bearoff=true", "bearoff 61", "equity"),
        ("pretrained:backgammon:bearoff=true", "bearoff 42", "equity"),
    ],
)
def test_backgammon_td_agents_show_what_they_rank_by(name: str, text: str, key: str) -> None:
    """A lookahead, a search or the bear-off database: the panel lists the values the agent
    chooses by (an analysis that showed the net's 1-ply numbers listed another play first)."""
    from spieltisch.agents.backgammon import bearoff

    if text.startswith("bearoff"):
        state = bearoff_state((2, 2, 2, 2, 2, 3), (1, 1, 3, 3, 3, 2), text.split()[1])
    else:
        state = BackgammonGame().state_from_text(text)
    observation = observation_of(state)
    result, action, _ = analysed_then_act(
        lambda: make_agent(name, "backgammon", seed=0), state, observation
    )
    check(result, observation)
    moves = result["moves"]
    ranked = [m[key] for m in moves if m[key] is not None]  # None: a play not searched
    assert ranked == sorted(ranked, reverse=True) and ranked
    plays = state.legal_plays()
    assert plays[result["chosen"]].actions[0] == action
    if key != "policy":  # the agent's best play heads the list
        assert moves[0]["index"] == result["chosen"]
        assert result["value"] == pytest.approx(ranked[0])
    if key == "policy":
        assert {"visits", "q"} <= set(moves[0]) and sum(m["visits"] for m in moves) <= 4
        assert "chance-node search with 4 simulations" in result["method"]
    if name.endswith("bearoff=true"):  # every play here bears off: exact values
        outputs, exact = bearoff.afterstate_outputs(state.play_boards(), state.turn)
        assert exact.all() and "bear-off database" in result["method"]
        for m in moves:
            assert m["win"] == pytest.approx(outputs[m["index"], 0], abs=1e-12)


def test_backgammon_mid_turn_continues_the_chosen_play() -> None:
    state = BackgammonGame().state_from_text(BG_OPENING)
    agent = make_agent("greedy", "backgammon", seed=0)
    first = agent.act(observation_of(state), state.clone())
    state.apply(first)
    observation = observation_of(state)
    result = analyse(agent, "backgammon", observation, state, {})
    check(result, observation)
    assert np.array_equal(state.play_boards()[result["chosen"]], agent._target)
    assert agent.act(observation, state.clone()) == state.legal_plays()[result["chosen"]].actions[0]


def test_backgammon_cube_and_no_move_and_network_agents() -> None:
    cube = BackgammonGame(cube=True).state_from_text(BG_CUBE)
    observation = observation_of(cube)
    result, action, _ = analysed_then_act(
        lambda: make_agent("pretrained:backgammon", "backgammon", seed=0), cube, observation
    )
    check(result, observation)
    assert result["chosen"] == action == bg.ROLL and result["note"]
    assert {m["notation"] for m in result["moves"]} == {"roll", "double"}
    assert "Janowski" in result["method"] and result["note"].startswith("win ")
    result, action, _ = analysed_then_act(
        lambda: make_agent("pretrained:backgammon:cube=never", "backgammon", seed=0),
        cube, observation,
    )  # fmt: skip
    assert result["chosen"] == action == bg.ROLL and "never doubles" in result["method"]

    stuck = BackgammonGame().state_from_text(BG_NO_MOVE)
    observation = observation_of(stuck)
    result, action, _ = analysed_then_act(
        lambda: make_agent("pubeval", "backgammon", seed=0), stuck, observation
    )
    check(result, observation)
    assert result["chosen"] == action == bg.PASS and "cannot be played" in result["note"]

    state = BackgammonGame().state_from_text(BG_OPENING)
    observation = observation_of(state)
    net = tiny_net("backgammon")
    for make in (
        lambda: NeuralAgent(net, seed=1),
        lambda: GumbelSearchAgent(net, "backgammon", {}, sims=4, seed=1),
        lambda: make_agent("random", "backgammon", seed=1),
    ):
        result, action, _ = analysed_then_act(make, state, observation)
        check(result, observation)  # per checker move, with its notation
        assert result["chosen"] == action
        assert all("notation" in m for m in result["moves"])


def test_an_agent_without_explanation_lists_the_moves() -> None:
    state = KalahaGame(4, 3).state_from_text(KALAHA_4x3)
    observation = observation_of(state)
    result = analyse(HumanAgent("kalaha", {}), "kalaha", observation, state, {})
    check(result, observation)
    assert result["method"] == "this agent does not explain its moves"
    assert result["chosen"] is None and result["columns"] == []
    assert [m["action"] for m in result["moves"]] == list(state.legal_actions()) == [0, 2, 3]
    nothing = {**observation, "action_mask": np.zeros(4, dtype=np.int8)}
    assert analyse(make_agent("random", "kalaha"), "kalaha", nothing, state, {})["moves"] == []


# ------------------------------------------------------------------------------------------------
# HiLo: the seat's knowledge only
# ------------------------------------------------------------------------------------------------
def hilo_position(seed: int, moves: int):
    """A real HiLo state after ``moves`` random moves, at a decision with several moves."""
    game = HiLoGame(2)
    rng = np.random.default_rng(seed)
    state = game.new_initial_state(rng)
    while state.move_number < moves or len(state.legal_actions()) < 3:
        legal = state.legal_actions()
        state.apply(legal[int(rng.integers(len(legal)))])
    return state


def perturb_hidden(state, rng: np.random.Generator):
    """The same position with the hidden cards (face-down cards, the unknown draw pile and its
    order, the future chance) dealt differently (as in tests/test_hilo_information.py)."""
    c = state.clone()
    s = c.s
    known = c.known_in_draw_pile()
    positions = [R.OFF_LAYOUT + k for k in range(24) if s[R.OFF_FACEUP + k] == 0]
    positions += [R.OFF_DRAW + k for k in range(s[R.H_DRAW_N]) if not known[s[R.OFF_DRAW + k]]]
    values = s[positions]
    rng.shuffle(values)
    s[positions] = values
    rng.shuffle(s[R.OFF_DRAW : R.OFF_DRAW + s[R.H_DRAW_N]])
    c.rng[0] = rng.integers(2**63)
    return c


@pytest.mark.parametrize(
    "name", ["heuristic", "greedy", "pretrained:hilo", "pretrained:hilo:search=3", "random"]
)
def test_hilo_analysis_depends_on_the_seats_knowledge_only(name: str) -> None:
    real = hilo_position(seed=3, moves=12)
    other = perturb_hidden(real, np.random.default_rng(9))
    seat = real.current_player
    assert not np.array_equal(real.s, other.s)
    observation = observation_of(real, seat)
    assert np.array_equal(observation["observation"], other.observation(seat))
    results, sets = [], []
    for state in (real, other):
        infoset = InformationSet(state, seat, np.random.default_rng(7))
        agent = make_agent(name, "hilo", seed=11)
        results.append(analyse(agent, "hilo", observation, infoset, {}))
        sets.append(infoset)
    assert results[0] == results[1]
    check(results[0], observation)
    # chosen is what act plays; act is unchanged by the analysis before it
    agent, twin = make_agent(name, "hilo", seed=11), make_agent(name, "hilo", seed=11)
    analyse(agent, "hilo", observation, sets[1], {})
    action = agent.act(observation, sets[1])
    assert action == twin.act(observation, sets[1]) == results[0]["chosen"]
    assert agent.rng.bit_generator.state == twin.rng.bit_generator.state
    if name in ("heuristic", "greedy", "pretrained:hilo:search=3"):
        scores = {m["action"]: m["score"] for m in results[0]["moves"]}
        assert scores[results[0]["chosen"]] == pytest.approx(max(scores.values()))


def test_hilo_heuristic_analysis_without_an_information_set_is_refused() -> None:
    """Given the real state instead of the seat's information set, the analysis refuses as act
    does: it must not sample from, or show, what the seat cannot know."""
    real = hilo_position(seed=3, moves=12)
    observation = observation_of(real, real.current_player)
    with pytest.raises(ValueError, match="needs the seat's information set"):
        analyse(make_agent("heuristic", "hilo", seed=1), "hilo", observation, real, {})


# ------------------------------------------------------------------------------------------------
# the Kalaha solver
# ------------------------------------------------------------------------------------------------
@pytest.fixture
def small_solvers(monkeypatch, tmp_path):
    """Module solvers with a small database in a temporary cache (fast to build)."""
    monkeypatch.setenv("SPIELTISCH_CACHE_DIR", str(tmp_path))
    monkeypatch.setattr(analysis, "SOLVER_DB_STONES", 4)
    monkeypatch.setattr(analysis, "_SOLVERS", {})


def test_solver_analysis_matches_the_solver(small_solvers, tmp_path) -> None:
    game = KalahaGame(4, 2, "standard")
    state = game.state_from_text("2,0,3,1/2 1,2,0,2/3 0")
    solver = KalahaSolver(game, db_stones=0, use_cache=False, tt_bits=12)
    reference = solver.move_values(state)
    result = solver_analysis(state, time_limit=5.0)
    json.dumps(result, allow_nan=False)
    assert result["solved"] is True
    assert {m["action"]: m["value"] for m in result["moves"]} == reference
    assert result["value"] == max(reference.values())
    assert result["optimal"] == [a for a, v in sorted(reference.items()) if v == result["value"]]
    assert state.to_text() == "2,0,3,1/2 1,2,0,2/3 0"
    again = solver_analysis(state)  # the cached solver
    assert again == result and len(analysis._SOLVERS) == 1
    over = game.state_from_text("0,0,0,0/9 1,0,0,0/6 1 end")
    expected = {"solved": True, "value": solver.value(over), "moves": [], "optimal": []}
    assert solver_analysis(over) == expected


def test_solver_analysis_gives_up_after_the_time_limit(small_solvers) -> None:
    state = KalahaGame(6, 6).new_initial_state()
    result = solver_analysis(state, time_limit=0.05)
    assert result == {"solved": False, "note": result["note"]}
    assert result["note"].startswith("not solved within 0.05 s (72 stones left)")
