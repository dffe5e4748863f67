"""Scripted baselines: legal moves only, alpha-beta against exhaustive search, strength ladders,
paired chance in the arena."""

from __future__ import annotations

import functools

import numpy as np
import pytest
from spieltisch.agents.arena import play_table, summarize_pair
from spieltisch.agents.arena.match import play_game
from spieltisch.agents.mancala.alphabeta import HUS, KALAHA, WIN, MancalaSearchAgent
from spieltisch.agents.registry import make_agent
from spieltisch.envs import make
from spieltisch.envs.kalaha.engine import KalahaGame


def _exhaustive(state) -> int:
    """Value for the mover (win/loss +-WIN plus the final store margin), plain recursion."""

    @functools.cache
    def value(text: str) -> int:
        s = state.game.state_from_text(text)
        me = s.current_player
        best = None
        for a in s.legal_actions():
            c = s.child(a)
            if c.is_terminal():
                margin = c.score_difference() * (1 if me == 0 else -1)
                v = (WIN if margin > 0 else -WIN if margin < 0 else 0) + margin
            elif c.current_player == me:
                v = value(c.to_text())
            else:
                v = -value(c.to_text())
            best = v if best is None else max(best, v)
        return best

    return value(state.to_text())


@pytest.mark.parametrize(("pits", "seeds", "rules"), [(3, 2, "goki"), (3, 2, "standard")])
def test_alphabeta_agrees_with_exhaustive_search(pits: int, seeds: int, rules: str) -> None:
    game = KalahaGame(pits=pits, seeds=seeds, rules=rules)
    agent = MancalaSearchAgent(KALAHA, 1 if rules == "goki" else 0, seed=0, depth=60)
    rng = np.random.default_rng(0)
    checked = 0
    for _ in range(30):
        state = game.new_initial_state(int(rng.integers(2)))
        for _ in range(int(rng.integers(0, 6))):
            if state.is_terminal():
                break
            state.apply(int(rng.choice(state.legal_actions())))
        if state.is_terminal() or len(state.legal_actions()) < 2:
            continue
        values = agent.root_values(state)
        best = max(values.values())
        assert best == _exhaustive(state), state.to_text()
        # The moves the search calls best are exactly the optimal ones.
        optimal = set()
        for a in values:
            c = state.child(a)
            if c.is_terminal():
                m = c.score_difference() * (1 if state.current_player == 0 else -1)
                v = (WIN if m > 0 else -WIN if m < 0 else 0) + m
            elif c.current_player == state.current_player:
                v = _exhaustive(c)
            else:
                v = -_exhaustive(c)
            if v == best:
                optimal.add(a)
        assert {a for a, v in values.items() if v == best} == optimal
        checked += 1
    assert checked >= 10


def test_alphabeta_finds_forced_kalaha_wins() -> None:
    # In every won position met in random Kalaha(3, 2) games, the agent's move keeps the win.
    game = KalahaGame(pits=3, seeds=2, rules="standard")
    agent = MancalaSearchAgent(KALAHA, 0, seed=0, depth=40)
    rng = np.random.default_rng(3)
    wins = 0
    for _ in range(40):
        state = game.new_initial_state(int(rng.integers(2)))
        while not state.is_terminal():
            if len(state.legal_actions()) > 1 and _exhaustive(state) > WIN // 2:
                me = state.current_player
                child = state.child(agent.act({"action_mask": state.legal_mask()}, state))
                if child.is_terminal():
                    assert (child.score_difference() > 0) == (me == 0)
                else:
                    v = _exhaustive(child)
                    assert (v if child.current_player == me else -v) > WIN // 2
                wins += 1
            state.apply(int(rng.choice(state.legal_actions())))
    assert wins >= 20


def test_hus_alphabeta_takes_an_immediate_win() -> None:
    # From random positions: whenever some move leaves the opponent without a move, depth-2
    # alpha-beta plays a winning move.
    from spieltisch.envs.hus.engine import HusGame

    game = HusGame()
    agent = MancalaSearchAgent(HUS, game.max_sown, seed=0, depth=2)
    rng = np.random.default_rng(1)
    found = 0
    for _ in range(40):
        state = game.new_initial_state()
        while not state.is_terminal():
            winning = [a for a in state.legal_actions() if state.child(a).is_terminal()]
            if winning:
                a = agent.act({"action_mask": state.legal_mask()}, state)
                assert a in winning
                found += 1
                break
            state.apply(int(rng.choice(state.legal_actions())))
    assert found >= 5


@pytest.mark.parametrize(
    ("game", "agents", "options", "seeds"),
    [
        ("kalaha", ["alphabeta:depth=3", "greedy"], {}, 10),
        ("hus", ["alphabeta:depth=2", "greedy"], {}, 5),
        ("hilo", ["heuristic:samples=1", "greedy:samples=1"], {}, 3),
        ("hilo", ["heuristic:samples=1", "random", "greedy:samples=1"], {"num_players": 3}, 1),
        ("backgammon", ["greedy", "pubeval"], {}, 5),
        ("backgammon", ["gnubg", "random"], {}, 3),
    ],
)
def test_baselines_play_only_legal_moves(game, agents, options, seeds) -> None:
    # The arena checks every move against the mask and raises AgentFailure otherwise.
    results = play_table(game, agents, seeds=seeds, options=options, opening_plies=1)
    assert len(results) == seeds * (2 if len(agents) == 2 else 6)
    assert not any(r.truncated for r in results)


@pytest.mark.parametrize(
    ("game", "options"),
    [
        ("kalaha", {"pits": 6, "seeds": 6}),
        ("kalaha", {"pits": 4, "seeds": 3, "rules": "standard"}),
        ("hus", {}),
    ],
)
@pytest.mark.parametrize("name", ["greedy", "alphabeta:depth=3"])
def test_act_boards_plays_a_best_move_of_every_position(game, options, name) -> None:
    """The batched search (what training's opponents call) picks, in every position, a move
    that the single-position search values best; ties go different ways with other seeds."""
    from spieltisch.envs import make_batch

    games = make_batch(game, 64, **options)
    rng = np.random.default_rng(7)
    for _ in range(6):
        games.step(games.sample_random_actions(rng))
    live = np.flatnonzero(~games.terminal)
    agent = make_agent(name, game, seed=1, game_options=options)
    boards = games.boards[live].copy()
    picks = [
        make_agent(name, game, seed=s, game_options=options).act_boards(
            games.boards[live], games.current_player[live], games.legal_mask[live]
        )
        for s in range(4)
    ]
    assert np.array_equal(games.boards[live], boards)  # the batch is left as it was
    tied_choices = []
    for k, g in enumerate(live):
        values = agent.root_values(games.state(int(g)))
        best = max(values.values())
        for actions in picks:
            assert values[int(actions[k])] == best, (g, values, actions[k])
        if sum(v == best for v in values.values()) > 1:
            tied_choices.append(len({int(actions[k]) for actions in picks}))
    assert tied_choices and max(tied_choices) > 1


def test_act_boards_rejects_what_it_cannot_search() -> None:
    agent = make_agent("alphabeta:time=0.1", "kalaha", seed=0)
    board = KalahaGame().new_initial_state().board[None]
    with pytest.raises(ValueError, match="fixed depth"):
        agent.act_boards(board, np.zeros(1), np.ones((1, 6), np.int8))
    with pytest.raises(ValueError, match="legal move"):
        make_agent("greedy", "kalaha").act_boards(board, np.zeros(1), np.zeros((1, 6), np.int8))


@pytest.mark.parametrize("name", ["heuristic", "greedy"])
def test_hilo_baselines_refuse_to_play_without_an_information_set(name: str) -> None:
    # given agent_state() (None in HiLo) they played at random under their own names
    env = make("hilo")
    env.reset(seed=0)
    agent = make_agent(name, "hilo", seed=0)
    observation = env.observe(env.agent_selection)
    with pytest.raises(ValueError, match="needs the seat's information set"):
        agent.act(observation, env.unwrapped.agent_state())
    from spieltisch.agents.arena.match import agent_input

    state = agent_input(env.unwrapped, env.agent_selection, np.random.default_rng(0))
    assert observation["action_mask"][agent.act(observation, state)]


def test_alphabeta_deeper_beats_shallower_kalaha() -> None:
    results = play_table(
        "kalaha", ["alphabeta:depth=5", "alphabeta:depth=1"], seeds=40, opening_plies=2
    )
    s = summarize_pair(results, ("depth 5", "depth 1"))
    assert s.score_low > 0.5, s


def test_alphabeta_time_limit_and_speed() -> None:
    import time

    state = KalahaGame().new_initial_state()
    obs = {"action_mask": state.legal_mask()}
    agent = make_agent("alphabeta:depth=6", "kalaha", seed=0)
    agent.act(obs, state)  # compile
    agent.reset(0)
    t = time.perf_counter()
    agent.act(obs, state)
    assert time.perf_counter() - t < 0.5
    timed = make_agent("alphabeta:time=0.2", "kalaha", seed=0)
    t = time.perf_counter()
    timed.act(obs, state)
    assert time.perf_counter() - t < 1.0
    # The first search also touches the fresh 40 MB transposition table's pages (in its time
    # budget): measure the depth reached on the second, as a running agent plays.
    timed.reset(0)
    timed.act(obs, state)
    assert timed.last_depth >= 4


_SEARCH_IN_A_FRESH_PROCESS = """
from spieltisch.agents.mancala.alphabeta import _root_values
from spieltisch.agents.registry import make_agent
from spieltisch.envs.kalaha.engine import KalahaGame
state = KalahaGame().new_initial_state()
make_agent("alphabeta:depth=3", "kalaha", seed=0).act({"action_mask": state.legal_mask()}, state)
print(sum(_root_values.stats.cache_hits.values()), sum(_root_values.stats.cache_misses.values()))
"""


def test_a_fresh_process_loads_the_search_from_numbas_cache() -> None:
    """The search is compiled once, not in every process: the second of two processes loads
    the search (``_root_values``, with the negamax it calls) from numba's on-disk cache (a
    recursive negamax could not be cached; compiling it cost every command 10-20 s before its
    first move)."""
    import subprocess
    import sys

    runs = [
        subprocess.run(
            [sys.executable, "-c", _SEARCH_IN_A_FRESH_PROCESS],
            capture_output=True,
            text=True,
            timeout=300,
            check=True,
        ).stdout
        for _ in range(2)
    ]
    hits, misses = (int(n) for n in runs[1].split())
    assert (hits, misses) == (1, 0), runs


_DEEP_SEARCH_STOPPED_BY_CTRL_C = """
import signal, sys, time
signal.signal(signal.SIGINT, signal.default_int_handler)  # (a test runner may ignore it)
from spieltisch.agents.registry import make_agent
from spieltisch.envs.kalaha.engine import KalahaGame
state = KalahaGame().new_initial_state()
make_agent("alphabeta:depth=2", "kalaha").act({"action_mask": state.legal_mask()}, state)
agent = make_agent(sys.argv[1], "kalaha", seed=0)  # (the same kernel, compiled by now)
print("searching", flush=True)
start = time.perf_counter()
try:
    agent.act({"action_mask": state.legal_mask()}, state)
    print("finished")
except KeyboardInterrupt:
    print(f"interrupted after {time.perf_counter() - start:.1f} s")
"""


@pytest.mark.parametrize("name", ["alphabeta:depth=30", "alphabeta:time=600"])
def test_ctrl_c_stops_a_long_search(name) -> None:
    """A numba kernel holds the thread that calls it: Ctrl-C during ``alphabeta:depth=24`` on a
    full board did nothing for minutes. Deep and timed searches run beside the calling thread,
    which Ctrl-C reaches; the search is told to stop and returns within a node."""
    import signal
    import subprocess
    import sys
    import time

    child = subprocess.Popen(
        [sys.executable, "-c", _DEEP_SEARCH_STOPPED_BY_CTRL_C, name],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert child.stdout.readline().strip() == "searching", child.stderr.read()
        time.sleep(1.0)
        child.send_signal(signal.SIGINT)
        out, err = child.communicate(timeout=20)
    finally:
        child.kill()
    assert out.startswith("interrupted after"), (out, err)
    assert float(out.split()[2]) < 10, out


def test_pubeval_beats_random_by_a_wide_margin() -> None:
    results = play_table("backgammon", ["pubeval", "random"], seeds=30)
    s = summarize_pair(results, ("pubeval", "random"))
    assert s.score_low > 0.8, s
    assert s.reward_low > 1.0, s


def test_paired_chance_replays_the_dice() -> None:
    """Backgammon: with the seats swapped, the same seed gives the same roll turn by turn."""
    env = make("backgammon")
    raw = env.unwrapped
    rolls: list[dict[int, tuple]] = []
    for order in (("greedy", "random"), ("random", "greedy")):
        seen: dict[int, tuple] = {}
        agents = {
            name: make_agent(spec, "backgammon", seed=i)
            for i, (name, spec) in enumerate(zip(env.possible_agents, order, strict=True))
        }

        def note(agent_name: str, action: int, seen=seen) -> None:
            st = raw.state
            if st.rolled() is not None and not st.is_terminal():
                seen.setdefault(st.num_turns(), (st.turn, tuple(st.rolled())))

        env.reset(seed=11)
        seen[-1] = (raw.state.turn, raw.state.rolled())
        play_game(env, agents, seed=11, on_move=note)
        rolls.append(seen)
    common = set(rolls[0]) & set(rolls[1])
    assert len(common) > 10
    assert all(rolls[0][t] == rolls[1][t] for t in common)


def test_paired_chance_replays_the_deal() -> None:
    env = make("hilo")
    env.reset(seed=5)
    first = env.unwrapped.state.to_text()
    play_game(env, {a: make_agent("random", "hilo", seed=1) for a in env.possible_agents}, seed=5)
    env.reset(seed=5)
    assert env.unwrapped.state.to_text() == first
