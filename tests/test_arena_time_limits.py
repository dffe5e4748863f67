"""Agents that hang, raise, crash or play illegal moves lose their games by forfeit, in process
and in worker processes, and the evaluation goes on (``spieltisch eval`` and ``spieltisch
play``, ``--move-time-limit``). Limits are half a second, so each hung move costs that."""

from __future__ import annotations

import io
import json
import os
import time
from typing import Any

import numpy as np
import pytest
from spieltisch.agents.arena import AgentFailure, evaluate, play_table
from spieltisch.agents.arena.match import MoveTimer, play_game
from spieltisch.agents.base import Agent, RandomAgent
from spieltisch.envs import make
from spieltisch.train.cli import main

TEST_PID = os.getpid()
LIMIT = 0.5


class _Sleeper(Agent):
    """Never returns: sleeps (an agent waiting on something that never comes)."""

    name = "sleeper"

    def act(self, observation: dict[str, np.ndarray], state: Any = None) -> int:
        time.sleep(10**6)
        raise AssertionError("unreachable")


class _Spinner(RandomAgent):
    """Plays at random in the test's own process (the arena's first game); in a worker process
    it spins in a loop that never gives the interpreter a chance to take a signal's exception
    (like a numba kernel), or ends the process (``exit`` in its name)."""

    def act(self, observation: dict[str, np.ndarray], state: Any = None) -> int:
        if os.getpid() != TEST_PID:
            if self.name == "exit":
                os._exit(3)
            while True:
                pass
        return super().act(observation, state)


class _Crasher(Agent):
    name = "crasher"

    def act(self, observation: dict[str, np.ndarray], state: Any = None) -> int:
        raise RuntimeError("boom")


class _Illegal(Agent):
    """Plays the first action the mask forbids (one past the last when it forbids none)."""

    name = "illegal"

    def act(self, observation: dict[str, np.ndarray], state: Any = None) -> int:
        mask = observation["action_mask"]
        return int(np.append(np.flatnonzero(mask == 0), len(mask))[0])


def _make(name: str, seed: int | None) -> Agent:
    if name in ("spinner", "exit"):
        agent = _Spinner(seed)
        agent.name = name
        return agent
    return {"sleeper": _Sleeper, "crasher": _Crasher, "illegal": _Illegal}[name](seed)


@pytest.fixture
def test_agents(monkeypatch: pytest.MonkeyPatch) -> None:
    """The agents above by name, in the arena (inherited by its forked workers) and in play."""
    import spieltisch.agents.arena.evaluation as arena
    import spieltisch.train.cli.play as play_command

    names = ("sleeper", "spinner", "exit", "crasher", "illegal")
    real_make, real_check = arena.make_agent, arena.check_agent_name

    def make_agent(spec, game, seed=None, game_options=None):
        return _make(spec, seed) if spec in names else real_make(spec, game, seed, game_options)

    def check_agent_name(spec, game, **kwargs):
        return spec if spec in names else real_check(spec, game, **kwargs)

    monkeypatch.setattr(arena, "make_agent", make_agent)
    monkeypatch.setattr(arena, "check_agent_name", check_agent_name)
    monkeypatch.setattr(play_command, "make_agent", make_agent)


def _forfeits(results: list, index: int, reason: str) -> int:
    return sum(r.forfeit == index and r.forfeit_reason == reason for r in results)


@pytest.mark.usefixtures("test_agents")
@pytest.mark.parametrize("workers", [1, 2])
def test_an_agent_that_sleeps_forever_loses_every_game(workers: int) -> None:
    # The first game is played in this process (the move in a thread that is given up at the
    # deadline), the others in worker processes that are killed at the deadline.
    start = time.monotonic()
    results = play_table(
        "kalaha", ["sleeper", "random"], seeds=2, options={"pits": 3}, workers=workers,
        move_time_limit=LIMIT, first_move_time_limit=LIMIT,
    )  # fmt: skip
    assert len(results) == 4
    assert _forfeits(results, 0, "time_limit") == 4
    assert all(r.rewards == (-1.0, 1.0) and r.win_type == "forfeit" for r in results)
    assert all("'sleeper' (#0)" in r.error and "0.5 s" in r.error for r in results)
    # four hung moves of half a second, two at a time with two workers, plus start-up
    assert time.monotonic() - start < 4 * LIMIT / workers + 10


@pytest.mark.usefixtures("test_agents")
def test_a_spinning_or_dying_worker_loses_the_game_and_the_rest_is_played() -> None:
    results = play_table(
        "kalaha", ["spinner", "random"], seeds=3, options={"pits": 3}, workers=2,
        move_time_limit=LIMIT,
    )  # fmt: skip
    # The first game (in this process) is played out; every game in a worker is forfeited.
    first = min(results, key=lambda r: (r.seed, r.order))
    assert first.forfeit is None and first.moves > 0
    assert _forfeits(results, 0, "time_limit") == 5
    results = play_table(
        "kalaha", ["exit", "random"], seeds=2, options={"pits": 3}, workers=2,
        move_time_limit=LIMIT,
    )  # fmt: skip
    assert _forfeits(results, 0, "raised") == 3
    assert all("exit code 3" in r.error for r in results if r.forfeit is not None)
    # fail_fast stops at the first forfeit in a worker, and the other games are not waited for
    start = time.monotonic()
    with pytest.raises(AgentFailure, match="'spinner' \\(#0\\) did not return"):
        play_table(
            "kalaha", ["spinner", "random"], seeds=20, options={"pits": 3}, workers=2,
            move_time_limit=LIMIT, fail_fast=True,
        )  # fmt: skip
    assert time.monotonic() - start < 20 * LIMIT


@pytest.mark.usefixtures("test_agents")
@pytest.mark.parametrize("workers", [1, 2])
def test_raising_and_illegal_agents_forfeit_and_are_reported_by_name(
    workers: int, tmp_path: Any
) -> None:
    report = evaluate(
        "kalaha", ["crasher", "illegal", "random"], seeds=2, mode="round-robin",
        options={"pits": 3}, workers=workers, move_time_limit=LIMIT,
    )  # fmt: skip
    crasher_vs_illegal, crasher_vs_random, illegal_vs_random = report.pairs
    # Each game is lost by whoever moves wrongly first; random wins all of its games.
    assert crasher_vs_random.losses == 4 and illegal_vs_random.losses == 4
    assert crasher_vs_illegal.wins + crasher_vs_illegal.losses == 4
    rows = {row["agent"]: row for row in report.forfeits}
    assert set(rows) == {"crasher", "illegal"}
    assert rows["crasher"]["raised"] == rows["crasher"]["games"] == 4 + crasher_vs_illegal.losses
    assert rows["illegal"]["illegal_action"] == rows["illegal"]["games"]
    assert rows["illegal"]["games"] == 4 + crasher_vs_illegal.wins
    assert "raised RuntimeError: boom" in rows["crasher"]["first"]
    assert "played the illegal action" in rows["illegal"]["first"]
    data = json.loads(report.to_json())
    assert data["forfeits"] == report.forfeits and data["move_time_limit"] == LIMIT
    markdown = report.to_markdown()
    assert "Games lost by forfeit" in markdown
    assert f"| crasher | {rows['crasher']['games']} | 0 | {rows['crasher']['games']} | 0 |" in (
        markdown
    )


@pytest.mark.parametrize(("reward", "stake"), [("points", 4.0), ("win", 1.0)])
def test_a_forfeit_in_a_doubled_backgammon_game_costs_the_cube(reward: str, stake: float) -> None:
    env = make("backgammon", cube=True, reward=reward)
    env.reset(options={"position": "4HPwATDgc/ABMA 0 cube cube=4@0"})
    agents = {"player_0": _Crasher(0), "player_1": RandomAgent(1)}
    record = play_game(env, agents, reset=False, forfeit=True)
    assert record.forfeit is not None and record.forfeit.agent == "player_0"
    assert record.rewards == {"player_0": -stake, "player_1": stake}  # it cost 1 at any cube
    # a worker killed in its move: the stake travels through the shared clock
    import multiprocessing

    from spieltisch.agents.arena.evaluation import _lost_in_worker
    from spieltisch.agents.arena.workers import SharedMoveClock

    clock = SharedMoveClock(multiprocessing.get_context("spawn"))
    clock.start(1, LIMIT, 7, env.unwrapped.forfeit_stake())
    result = _lost_in_worker(["a", "b"], (0, (1, 0)), clock.read(), "time_limit")
    assert result.rewards == (-stake, stake)  # seat 1, which lost, sat agent 0


@pytest.mark.usefixtures("test_agents")
def test_a_forfeit_in_a_hilo_table_shares_the_win() -> None:
    report = evaluate("hilo", ["crasher", "random", "random"], seeds=1, options={"num_players": 3})
    crasher, others = report.table
    assert (crasher["games"], crasher["losses"], crasher["mean_reward"]) == (3, 3, -1.0)
    assert others["mean_reward"] == pytest.approx(0.5)
    assert report.forfeits[0]["agent"] == "crasher" and report.forfeits[0]["games"] == 3


@pytest.mark.usefixtures("test_agents")
def test_eval_command_reports_forfeits_and_goes_on(tmp_path: Any, capsys: Any) -> None:
    argv = ["eval", "kalaha", "--agents", "sleeper", "random", "--seeds", "1", "-o", "pits=3"]
    argv += ["--workers", "1", "--no-progress", "--move-time-limit", "0.5"]
    argv += ["--first-move-time-limit", "0.5", "--json", str(tmp_path / "r.json")]
    assert main(argv) == 0
    captured = capsys.readouterr()
    assert "| sleeper | random | 2 | 0 / 0 / 2 |" in captured.out
    assert "| sleeper | 2 | 2 | 0 | 0 |" in captured.out
    assert "games lost by forfeit: sleeper 2 games" in captured.err
    data = json.loads((tmp_path / "r.json").read_text())
    assert data["forfeits"][0]["time_limit"] == 2
    # --fail-fast: the old behaviour, an error at the first forfeit
    assert main([*argv, "--fail-fast"]) == 1
    assert "an agent failed: agent 'sleeper' (#0)" in capsys.readouterr().err
    for bad in ("-1", "soon", "inf"):
        with pytest.raises(SystemExit):
            main([*argv[:-2], "--move-time-limit", bad])
        assert "expected seconds >= 0" in capsys.readouterr().err


@pytest.mark.usefixtures("test_agents")
def test_play_command_forfeits_a_hung_agent_but_never_times_a_person(
    monkeypatch: pytest.MonkeyPatch, capsys: Any
) -> None:
    argv = ["play", "kalaha", "-o", "pits=3", "--move-time-limit", "0.5", "--quiet"]
    command = [*argv, "--agents", "random", "sleeper", "--first-move-time-limit", "0.5"]
    assert main([*command, "--games", "2"]) == 0  # the second game with a fresh sleeper
    out = capsys.readouterr().out
    assert "game 1 lost by forfeit (agent player_1 (sleeper) did not return" in out
    assert "game 2 lost by forfeit (agent player_1 (sleeper) did not return" in out
    assert "player_1 (sleeper): -1" in out

    class SlowTyping(io.StringIO):
        def readline(self, size: int | None = -1) -> str:
            time.sleep(2 * LIMIT)  # slower than the agents' limit: a person has none
            return "q\n"

    monkeypatch.setattr("sys.stdin", SlowTyping())
    person = [a for a in argv if a != "--quiet"]  # (a person needs the boards)
    assert main([*person, "--agents", "human", "random"]) == 0
    assert "game abandoned" in capsys.readouterr().out


def test_move_timer_gives_the_first_move_longer_and_exempts_people() -> None:
    timer = MoveTimer(1.0, 5.0, exempt={"player_1"})
    agent = RandomAgent(0)
    assert timer.limit("player_0", agent) == 5.0
    env = make("kalaha", pits=3)
    record = play_game(env, {"player_0": agent, "player_1": RandomAgent(1)}, seed=0, timer=timer)
    assert record.forfeit is None and record.num_moves > 0
    assert timer.limit("player_0", agent) == 1.0
    assert timer.limit("player_1", agent) is None
    assert MoveTimer(2.0, 0.1).first_move_seconds == 2.0  # never shorter than the limit
    with pytest.raises(ValueError, match="positive"):
        MoveTimer(0.0)


def test_play_game_without_forfeit_raises_as_before() -> None:
    env = make("kalaha", pits=3)
    with pytest.raises(RuntimeError, match="boom"):
        play_game(env, {"player_0": _Crasher(), "player_1": _Crasher()}, seed=0)
