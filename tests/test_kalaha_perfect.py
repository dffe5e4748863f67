"""The ``perfect`` Kalaha agent, the accuracy measure and ``spieltisch solve``."""

from __future__ import annotations

import json

import numpy as np
import pytest
from spieltisch.agents.arena.match import play_game
from spieltisch.agents.base import Agent
from spieltisch.agents.kalaha.accuracy import judge_move, move_accuracy
from spieltisch.agents.kalaha.perfect import PerfectAgent
from spieltisch.agents.kalaha.solver import KalahaSolver
from spieltisch.agents.registry import agent_names, make_agent
from spieltisch.envs import make
from spieltisch.envs.kalaha.engine import KalahaGame
from spieltisch.train.cli import main


class GreedyAgent(Agent):
    """Takes the move with the best immediate store difference (extra turns count +0.5)."""

    name = "greedy"

    def act(self, observation, state=None):
        me = state.current_player
        best, choice = None, None
        for a in state.legal_actions():
            c = state.child(a)
            s = c.stores()
            score = (
                s[me] - s[1 - me] + (0.5 if c.current_player == me and not c.is_terminal() else 0)
            )
            if best is None or score > best:
                best, choice = score, a
        return choice


@pytest.fixture(scope="module")
def solver_6_3(tmp_path_factory):
    game = KalahaGame(6, 3, "goki")
    return KalahaSolver(game, db_stones=12, cache_dir=tmp_path_factory.mktemp("egdb"), tt_bits=20)


def test_perfect_is_registered(tmp_path, monkeypatch):
    monkeypatch.setenv("SPIELTISCH_CACHE_DIR", str(tmp_path))
    assert "perfect" in agent_names("kalaha")
    agent = make_agent("perfect", "kalaha", seed=3, game_options={"pits": 3, "seeds": 2})
    assert isinstance(agent, PerfectAgent)
    assert (agent.game.pits, agent.game.seeds, agent.game.rules) == (3, 2, "goki")
    assert any(tmp_path.rglob("*.egdb"))  # its database went to the configured cache dir


def test_perfect_plays_only_optimal_moves_also_from_the_observation(tmp_path):
    game = KalahaGame(4, 2, "standard")
    solver = KalahaSolver(game, db_stones=4, cache_dir=tmp_path, tt_bits=12)
    agent = PerfectAgent(game, seed=1, solver=solver)
    env = make("kalaha", pits=4, seeds=2, rules="standard")
    rng = np.random.default_rng(0)
    for g in range(6):
        env.reset(seed=g)
        raw = env.unwrapped
        while not raw.state.is_terminal():
            state = raw.agent_state()
            obs = env.observe(env.agent_selection)
            optimal = solver.optimal_moves(state)
            assert agent.act(obs, state) in optimal
            assert agent.act(obs, None) in optimal  # the observation shows the whole board
            env.step(int(rng.choice(state.legal_actions())))


def test_perfect_ties_are_broken_at_random_but_reproducibly(tmp_path):
    game = KalahaGame(4, 2, "goki")
    solver = KalahaSolver(game, db_stones=4, cache_dir=tmp_path, tt_bits=12)
    # a position with several optimal moves, from random play
    rng = np.random.default_rng(0)
    state = game.new_initial_state()
    while len(solver.optimal_moves(state)) < 2:
        state = game.new_initial_state() if state.is_terminal() else state
        state.apply(int(rng.choice(state.legal_actions())))
        state = game.new_initial_state() if state.is_terminal() else state
    obs = {"observation": None, "action_mask": state.legal_mask()}
    picks = {PerfectAgent(game, seed=s, solver=solver).act(obs, state) for s in range(40)}
    assert picks == set(solver.optimal_moves(state))
    a = PerfectAgent(game, seed=7, solver=solver)
    b = PerfectAgent(game, seed=7, solver=solver)
    assert [a.act(obs, state) for _ in range(10)] == [b.act(obs, state) for _ in range(10)]


@pytest.mark.parametrize("opponent", ["random", "greedy"])
def test_perfect_first_player_gets_the_game_value(opponent, solver_6_3):
    """Kalah(6,3) is a first-player win by 2: perfect play as first player never gets less."""
    game = solver_6_3.game
    env = make("kalaha", pits=6, seeds=3, rules="goki", reward="score")
    for g in range(3):
        me = PerfectAgent(game, seed=g, solver=solver_6_3)
        other = make_agent("random", "kalaha", seed=g) if opponent == "random" else GreedyAgent()
        record = play_game(env, {"player_0": me, "player_1": other}, seed=g)
        assert record.rewards["player_0"] >= 2, record


def test_perfect_against_itself_ends_with_the_value(solver_6_3):
    game = solver_6_3.game
    env = make("kalaha", pits=6, seeds=3, rules="goki", reward="score")
    for g in range(2):
        agents = {
            "player_0": PerfectAgent(game, seed=g, solver=solver_6_3),
            "player_1": PerfectAgent(game, seed=g + 10, solver=solver_6_3),
        }
        record = play_game(env, agents, seed=g)
        assert record.rewards["player_0"] == 2


def test_accuracy_of_perfect_and_random(tmp_path):
    game = KalahaGame(4, 2, "goki")
    solver = KalahaSolver(game, db_stones=4, cache_dir=tmp_path, tt_bits=12)

    def perfect(seed):
        return PerfectAgent(game, seed=seed, solver=solver)

    report = move_accuracy(perfect, game, games=4, opponents=["random"], solver=solver)
    assert report.agent == "perfect"
    assert report.total.moves > 0 and report.total.optimal == report.total.moves
    assert report.total.mean_loss == 0
    assert set(report.by_opponent) == {"random", "self"}
    assert report.by_opponent["self"].games == 4

    rnd = move_accuracy("random", game, games=6, solver=solver, seed=5)
    assert 0 < rnd.total.optimal_share < 1
    assert rnd.total.mean_loss > 0
    assert rnd.as_dict()["total"]["moves"] == rnd.total.moves
    assert "random on Kalah(4,2)" in rnd.summary()

    # judging only the later positions (what a board too big to solve from the start needs)
    late = move_accuracy("random", game, games=6, solver=solver, seed=5, max_stones=8)
    assert late.total.skipped > 0 and late.total.moves > 0
    assert late.total.moves + late.total.skipped == rnd.total.moves  # the same games
    assert "at most 8 stones" in late.summary()


def test_accuracy_counts_distinct_games_and_opening_plies_vary_them(tmp_path):
    """A deterministic agent (always the leftmost pit) in self-play replays one game; random
    opening plies (played by the table, not judged) make the games differ."""
    from spieltisch.agents.base import Agent, legal_actions_of

    class Leftmost(Agent):
        name = "leftmost"

        def act(self, observation, state=None):
            return int(legal_actions_of(observation)[0])

    game = KalahaGame(4, 3, "goki")
    solver = KalahaSolver(game, db_stones=4, cache_dir=tmp_path, tt_bits=14)
    kwargs = {"games": 6, "opponents": [], "solver": solver}
    plain = move_accuracy(lambda seed: Leftmost(seed), game, **kwargs)
    opened = move_accuracy(lambda seed: Leftmost(seed), game, opening_plies=4, **kwargs)
    assert plain.distinct_games == {"self": 1} and plain.total.games == 6
    assert opened.distinct_games["self"] >= 5
    assert opened.as_dict()["opening_plies"] == 4 and "4 random opening plies" in opened.summary()
    assert "(5 distinct)" in opened.summary() or "(6 distinct)" in opened.summary()
    with pytest.raises(ValueError, match="opening_plies"):
        move_accuracy("greedy", game, opening_plies=-1, **kwargs)
    # openings that end every game leave no move judged: null in JSON, words in the text
    # (NaN was written, which strict JSON parsers refuse, and "nan% optimal" printed)
    ended = move_accuracy("greedy", KalahaGame(3, 2, "goki"), opening_plies=50, **{
        **kwargs, "solver": KalahaSolver(KalahaGame(3, 2, "goki"), db_stones=2,
                                         cache_dir=tmp_path, tt_bits=14)})  # fmt: skip
    assert ended.total.moves == 0
    text = json.dumps(ended.as_dict(), allow_nan=False)
    assert json.loads(text)["total"]["optimal_share"] is None
    assert "no moves judged" in ended.summary() and "nan" not in ended.summary()


def test_judge_move_loss(tmp_path):
    game = KalahaGame(4, 2, "goki")
    solver = KalahaSolver(game, db_stones=4, cache_dir=tmp_path, tt_bits=12)
    state = game.new_initial_state()
    values = solver.move_values(state)
    best = max(values.values())
    for a, v in values.items():
        assert judge_move(solver, state, a) == (v == best, best - v)


def test_cli_solve(tmp_path, capsys):
    game = KalahaGame(4, 2, "goki")
    solver = KalahaSolver(game, db_stones=0, use_cache=False, tt_bits=12)
    position = "2,0,3,1/1 2,2,0,1/2 1"
    expected = solver.solve(position, move_values=True)
    args = ["solve", "kalaha", "--pits", "4", "--seeds", "2", "--cache-dir", str(tmp_path)]
    assert main([*args, "--position", position, "--json", "--move-values", "--quiet"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["value"] == expected.value
    assert out["optimal_moves"] == expected.optimal_moves
    assert out["move_values"] == {str(k): v for k, v in expected.move_values.items()}

    assert main(args) == 0  # from the start, with progress lines on stderr
    captured = capsys.readouterr()
    assert f"value: {solver.value(game.new_initial_state()):+d}" in captured.out
    assert "optimal moves:" in captured.out
    assert "nodes" in captured.err

    assert main([*args, "--accuracy", "random", "--games", "2", "--quiet"]) == 0
    assert "random on Kalah(4,2) goki" in capsys.readouterr().out
    accuracy = ["--accuracy", "greedy", "--games", "2", "--opening-plies", "3", "--quiet"]
    assert main([*args, *accuracy, "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["opening_plies"] == 3

    assert main([*args, "--position", "1,2/0 3"]) == 2  # bad notation: a clear error
    assert "spieltisch solve:" in capsys.readouterr().err
