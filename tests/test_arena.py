"""Arena statistics, agent-name parsing, failures reported by name, baselines' legality and a
strength ladder (Kalaha, HiLo)."""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

import numpy as np
import pytest
from spieltisch.agents.arena import AgentFailure, evaluate, play_table, stats, summarize_pair
from spieltisch.agents.base import Agent, InformationSet
from spieltisch.agents.registry import make_agent, parse_agent_name


def test_wilson_hand_computed() -> None:
    # p = 0.5, n = 100: centre 0.5, half 1.96 sqrt(0.25/100 + 1.96^2/40000) / (1 + 1.96^2/100)
    lo, hi = stats.wilson(50, 100)
    assert lo == pytest.approx(0.4038, abs=1e-4)
    assert hi == pytest.approx(0.5962, abs=1e-4)
    assert stats.wilson(0, 10)[0] == 0.0
    assert stats.wilson(10, 10)[1] == pytest.approx(1.0)


def test_mean_interval_hand_computed() -> None:
    m, lo, hi = stats.mean_interval([1, -1, 1, -1])
    assert m == 0.0
    half = 1.959963984540054 * np.sqrt(4 / 3) / 2
    assert hi == pytest.approx(half)
    assert lo == pytest.approx(-half)


def test_bradley_terry_two_players() -> None:
    # 3 wins to 1 (plus the half-game prior each way): strengths 3.5 : 1.5.
    r = stats.bradley_terry(np.array([[0, 3], [1, 0]]))
    assert r[0] - r[1] == pytest.approx(400 * np.log10(3.5 / 1.5), abs=1e-6)


def test_numbers_in_exponent_form_are_numbers() -> None:
    """PyYAML reads 1e-3 (no dot) as a string: ``alphabeta:time=1e-2`` was refused as not a
    number of seconds, where ``time=0.01`` played."""
    from spieltisch.envs._common.options import load_yaml, parse_options

    assert parse_agent_name("alphabeta:time=1e-2")[1] == {"time": 0.01}
    assert parse_options(["seeds=4", "x=2E3", "y=-1e-3", "name=e3", "z=1e"]) == {
        "seeds": 4, "x": 2000.0, "y": -0.001, "name": "e3", "z": "1e",
    }  # fmt: skip
    assert load_yaml("lr: 3e-4\nsteps: 1e6\nhidden: [1e2, 64]") == {
        "lr": 0.0003, "steps": 1000000.0, "hidden": [100.0, 64],
    }  # fmt: skip
    agent = make_agent("alphabeta:time=1e-2", "kalaha")
    assert agent.time_limit == 0.01


def test_parse_agent_name() -> None:
    assert parse_agent_name("alphabeta:depth=6,time=0.5") == (
        "alphabeta",
        {"depth": 6, "time": 0.5},
    )
    assert parse_agent_name("random") == ("random", {})
    with pytest.raises(ValueError):
        parse_agent_name("alphabeta:depth")


class _Crasher(Agent):
    name = "crasher"

    def act(self, observation, state=None):
        raise RuntimeError("boom")


def test_failure_is_reported_by_name(monkeypatch: pytest.MonkeyPatch) -> None:
    import spieltisch.agents.arena.evaluation as arena

    real = arena.make_agent

    def fake(spec, game, seed=None, game_options=None):
        return _Crasher(seed) if spec == "crasher" else real(spec, game, seed, game_options)

    monkeypatch.setattr(arena, "make_agent", fake)
    # fail_fast: the first forfeit stops the table (by default it is scored as a lost game and
    # the table goes on: tests/test_arena_time_limits.py)
    with pytest.raises(AgentFailure, match="crasher"):
        play_table("kalaha", ["random", "crasher"], seeds=1, fail_fast=True)


def test_summary_counts_and_json() -> None:
    report = evaluate("kalaha", ["random", "random"], seeds=5, seed=3, options={"pits": 4})
    p = report.pairs[0]
    assert p.games == 10 and p.wins + p.draws + p.losses == 10
    data = json.loads(report.to_json())
    assert data["pairs"][0]["games"] == 10
    assert 0.01 < data["peak_rss_gib"] < 64  # recorded with every evaluation (GiB)
    assert "| random | random | 10 |" in report.to_markdown()
    again = evaluate("kalaha", ["random", "random"], seeds=5, seed=3, options={"pits": 4})
    assert again.pairs[0] == p  # reproducible from the seed


def test_hilo_information_set_hides_cards() -> None:
    from spieltisch.envs.hilo.engine import HiLoGame

    state = HiLoGame().new_initial_state(1)
    info = InformationSet(state, 1, np.random.default_rng(0))
    assert info.view() == state.view(1)
    assert info._stand_in is not state


def test_greedy_beats_random_kalaha() -> None:
    results = play_table(
        "kalaha", ["greedy", "random"], seeds=30, options={"pits": 4}, opening_plies=2
    )
    s = summarize_pair(results, ("greedy", "random"))
    assert s.score_low > 0.5, s


def test_pair_summary_counts_seeds_by_how_both_seat_orders_went() -> None:
    """Four seeds, each played in both seat orders: won both, split, split with a draw, lost
    both; the score is 0.5 plus (won - lost) / (2 * seeds)."""
    from spieltisch.agents.arena import GameResult

    outcomes = {1: (1.0, 1.0), 2: (1.0, -1.0), 3: (0.0, -1.0), 4: (-1.0, -1.0)}
    results = [
        GameResult(seed=seed, order=order, rewards=(r, -r), moves=10)
        for seed, pair in outcomes.items()
        for order, r in zip(((0, 1), (1, 0)), pair, strict=True)
    ]
    s = summarize_pair(results, ("a", "b"))
    assert (s.extra["seeds_won_every_order"], s.extra["seeds_split"]) == (1, 2)
    assert s.extra["seeds_lost_every_order"] == 1
    assert (s.wins, s.draws, s.losses) == (3, 1, 4)
    other = summarize_pair(
        [GameResult(g.seed, g.order, (g.rewards[1], g.rewards[0]), 10) for g in results],
        ("b", "a"),
    )
    assert (other.extra["seeds_won_every_order"], other.extra["seeds_lost_every_order"]) == (1, 1)


def test_reward_intervals_stay_within_what_a_game_can_give() -> None:
    """Near a bound the normal approximation reaches past it (+0.95 [+0.85, +1.05] here); the
    arena clips the interval to the game's reward bounds, where the env sets them."""
    from spieltisch.agents.arena import GameResult
    from spieltisch.envs import reward_bounds

    # 20 seeds: 19 won in both seat orders, one split
    pairs = [(1.0, 1.0)] * 19 + [(1.0, -1.0)]
    results = [
        GameResult(seed=seed, order=order, rewards=(r, -r), moves=10)
        for seed, pair in enumerate(pairs)
        for order, r in zip(((0, 1), (1, 0)), pair, strict=True)
    ]
    unclipped = summarize_pair(results, ("a", "b"))
    assert unclipped.reward_high > 1.0  # what the arena reported before it knew the bounds
    s = summarize_pair(results, ("a", "b"), reward_bounds("kalaha", {}))
    assert s.mean_reward == unclipped.mean_reward == pytest.approx(0.95)
    assert s.reward_low == unclipped.reward_low and s.reward_high == 1.0
    assert reward_bounds("kalaha", {"reward": "score"}) is None
    assert reward_bounds("hus", {}) == reward_bounds("hilo", {"num_players": 4}) == (-1.0, 1.0)
    assert reward_bounds("hilo", {"reward": "coins"}) is None
    assert reward_bounds("backgammon", {}) == (-3.0, 3.0)
    assert reward_bounds("backgammon", {"cube": True}) is None
    assert reward_bounds("backgammon", {"cube": True, "reward": "win"}) == (-1.0, 1.0)
    m, lo, hi = stats.mean_interval([-1.0, -1.0, -1.0, 1.0], bounds=(-1.0, 1.0))
    assert (m, lo) == (-0.5, -1.0) and hi < 1.0


def test_hilo_heuristic_beats_random() -> None:
    results = play_table("hilo", ["heuristic:samples=2", "random"], seeds=8)
    s = summarize_pair(results, ("heuristic", "random"))
    assert s.score_low > 0.5, s


def test_eval_command_writes_json_markdown_plot(tmp_path, capsys) -> None:
    from spieltisch.train.cli import main

    args = ["eval", "kalaha", "--agents", "greedy", "random", "random", "--seeds", "3"]
    args += ["-o", "pits=4", "--workers", "1", "--no-progress"]
    args += ["--json", str(tmp_path / "r.json"), "--markdown", str(tmp_path / "r.md")]
    args += ["--plot", str(tmp_path / "r.png")]
    assert main(args) == 0
    data = json.loads((tmp_path / "r.json").read_text())
    assert data["mode"] == "round-robin" and len(data["pairs"]) == 3
    assert set(data["ratings"]) == {"greedy", "random (#1)", "random (#2)"}
    assert "Elo" in (tmp_path / "r.md").read_text()
    assert (tmp_path / "r.png").stat().st_size > 1000
    assert main(["eval", "kalaha", "--agents", "nosuch", "random", "--no-progress"]) == 2
    assert "unknown agent 'nosuch'" in capsys.readouterr().err


def test_an_agent_that_cannot_be_made_fails_before_any_game(tmp_path, monkeypatch) -> None:
    """A bad parameter or a missing checkpoint of the last agent of a round robin is refused
    before the first pair plays (it failed only when its pair came, after the others' games)."""
    import spieltisch.agents.arena.evaluation as evaluation

    played = []
    monkeypatch.setattr(evaluation, "play_table", lambda *a, **k: played.append(a) or [])
    bad = {
        "alphabeta:depth=abc": "must be integers",
        "alphabeta:depth=2.5": "must be integers",  # int() once read it as depth 2
        "alphabeta:depth=true": "must be integers",  # and this as depth 1
        "alphabeta:depth=99999999999999999999999": "between 1 and 1000",  # a numba TypingError
        f"checkpoint:{tmp_path}/missing": "does not exist",
        "greedy:depth=2": "greedy",
    }
    for agent, message in bad.items():
        with pytest.raises(ValueError, match=message):
            evaluate("kalaha", ["greedy", "random", agent], 2, mode="round-robin")
    assert played == []
    with pytest.raises(ValueError, match="unknown game 'chess'; games are"):
        make_agent("random", "chess")  # once a ModuleNotFoundError


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--seeds", "0"], "seeds must be an integer of at least 1, got 0"),
        (["--seeds", "-3"], "seeds must be an integer of at least 1, got -3"),
        (["--seed", "-5"], "seed must be an integer of at least 0, got -5"),
        (["--workers", "0"], "workers must be an integer of at least 1"),
        (["--opening-plies", "-1"], "opening_plies must be an integer of at least 0"),
        (["--json", "{tmp}/missing/r.json"], "directory {tmp}/missing does not exist"),
        (["--plot", "{tmp}"], "{tmp} is a directory"),
        # these failed with a traceback after all the games
        (["--json", "/proc/r.json"], "cannot write /proc/r.json"),
        (["--plot", "/proc/r.png"], "cannot write /proc/r.png"),
        (["--plot", "{tmp}/r.txt"], "the picture's format comes from its suffix"),
        (["--journal", "/proc/j"], "cannot write /proc/j"),
        (["--agents", "human", "random"], "agent 'human' cannot play here"),  # a traceback
    ],
)
def test_eval_refuses_bad_counts_and_output_paths_before_any_game(
    extra, message, tmp_path, capsys, monkeypatch
) -> None:
    """0 seeds reported a score of 0.000 from no game; an output path in a missing directory
    failed with a traceback after all the games, losing them."""
    import spieltisch.agents.arena.evaluation as evaluation
    from spieltisch.train.cli import main

    monkeypatch.setattr(evaluation, "_bar", lambda *a: pytest.fail("a game was started"))
    args = ["eval", "kalaha", "--agents", "greedy", "random", "--seeds", "2", "--no-progress"]
    assert main(args + [x.format(tmp=tmp_path) for x in extra]) == 2
    assert message.format(tmp=tmp_path) in capsys.readouterr().err
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("mode", ["pair", "one-vs-all", "round-robin"])
def test_eval_refuses_a_pairing_mode_for_a_table(mode, capsys) -> None:
    """The mode asked for was silently replaced by a table for 3-4 player HiLo."""
    from spieltisch.train.cli import main

    args = ["eval", "hilo", "--agents", "greedy", "random", "random", "-o", "num_players=3",
            "--mode", mode, "--seeds", "1", "--no-progress"]  # fmt: skip
    assert main(args) == 2
    assert f"mode {mode!r} pairs two agents; hilo with these options seats 3" in (
        capsys.readouterr().err
    )
    with pytest.raises(ValueError, match=f"mode {mode!r} pairs two agents"):  # the Python API too
        evaluate("hilo", ["greedy", "random", "random"], 1, mode=mode, options={"num_players": 3})
    # no mode: the table for 3 seats, a pair for two agents, a round robin for more
    assert evaluate("hilo", ["greedy", "random", "random"], 1, options={"num_players": 3}).mode == (
        "table"
    )
    assert evaluate("kalaha", ["greedy", "random"], 1, options={"pits": 3}).mode == "pair"
    three = evaluate("kalaha", ["greedy", "random", "random"], 1, options={"pits": 3})
    assert three.mode == "round-robin" and len(three.pairs) == 3


def test_parallel_workers_give_the_same_results() -> None:
    one = play_table("kalaha", ["greedy", "random"], seeds=6, options={"pits": 4}, workers=1)
    two = play_table("kalaha", ["greedy", "random"], seeds=6, options={"pits": 4}, workers=2)
    assert one == two


def test_parallel_workers_with_a_torch_agent_finish() -> None:
    """A torch agent in forked workers: the parent's torch thread pool must not be inherited in
    use (that hung ``spieltisch eval --workers 2`` forever). Run in a subprocess with a time
    limit so a regression fails instead of hanging the suite."""
    import subprocess
    import sys

    command = [
        sys.executable, "-m", "spieltisch.train.cli", "eval", "kalaha", "--agents",
        "pretrained:kalaha", "random", "--seeds", "3", "--workers", "2", "--no-progress",
    ]  # fmt: skip
    done = subprocess.run(command, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert "| pretrained:kalaha | random | 6 |" in done.stdout


def test_seat_orders_of_repeated_agents_are_played_once() -> None:
    from spieltisch.agents.arena import seat_orders

    assert len(seat_orders(["a", "b", "c", "d"], distinct=True)) == 24
    # The searcher against three copies of one baseline: one order per seat of the searcher.
    orders = seat_orders(["s", "h", "h", "h"], distinct=True)
    assert [order.index(0) for order in orders] == [0, 1, 2, 3]
    assert seat_orders(["x", "x"], distinct=True) == [(0, 1)]
    assert len(seat_orders(["x", "x"])) == 2


def test_four_player_table_pools_repeated_agents() -> None:
    report = evaluate(
        "hilo", ["greedy", "random", "random", "random"], seeds=3, options={"num_players": 4}
    )
    assert report.mode == "table"
    greedy, rand = report.table
    assert (greedy["agent"], greedy["seats"], greedy["games"]) == ("greedy", 1, 12)
    assert (rand["agent"], rand["seats"], rand["games"]) == ("random", 3, 36)
    for row in report.table:
        assert row["wins"] + row["draws"] + row["losses"] == row["games"]
    # Zero-sum rewards: the pooled mean of the three randoms balances the greedy agent's.
    assert greedy["mean_reward"] + 3 * rand["mean_reward"] == pytest.approx(0.0, abs=1e-9)
    assert "| random | 3 | 36 |" in report.to_markdown()


def test_record_eval_keys_pairs_and_tables() -> None:
    import importlib.util
    from pathlib import Path

    path = Path(__file__).resolve().parents[1] / "release" / "record_eval.py"
    spec = importlib.util.spec_from_file_location("record_eval", path)
    record_eval = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(record_eval)
    machine = {"cpu_count": 2, "load_average": [1.0, 1.0, 1.0]}
    table = {
        "game": "hilo", "machine": machine,
        "agents": ["pretrained:hilo:search=16", "heuristic", "heuristic", "heuristic"],
        "table": [{"agent": "pretrained:hilo:search=16", "games": 8, "mean_reward": 0.1},
                  {"agent": "heuristic", "games": 24, "mean_reward": -0.03}],
    }  # fmt: skip
    rows = record_eval.evaluation_rows(table, "spieltisch eval ...", 12.34)
    assert list(rows) == ["search16_vs_heuristic_x3"]
    row = rows["search16_vs_heuristic_x3"]
    assert row["opponents"] == ["heuristic"] * 3 and row["games"] == 8
    assert (row["seconds"], row["machine"]) == (12.3, machine)
    pair = {"game": "hus", "machine": machine, "pairs": [
        {"agent": "pretrained:hus:search=7", "opponent": "alphabeta:depth=3", "games": 2,
         "extra": {"mean_moves": 40.0}},
        {"agent": "greedy", "opponent": "random", "games": 2, "extra": {}},
    ]}  # fmt: skip
    rows = record_eval.evaluation_rows(pair, "c", 1.0)
    assert list(rows) == ["search7_vs_alphabeta:depth=3"]
    assert "extra" not in rows["search7_vs_alphabeta:depth=3"]


def test_one_seed_shows_no_interval_and_counts_in_words() -> None:
    one = evaluate("kalaha", ["greedy", "random"], seeds=1, options={"pits": 3})
    text = one.to_markdown()
    assert "1 seed (seed 0)" in text and "1 seeds" not in text
    p = one.pairs[0]
    assert f"{p.mean_reward:+.3f} (no interval from 1 seed)" in text
    assert f"[{p.reward_low:+.3f}, {p.reward_high:+.3f}]" not in text.split("|")[-2]
    two = evaluate("kalaha", ["greedy", "random"], seeds=2, options={"pits": 3}).to_markdown()
    assert "2 seeds (seed 0)" in two and "no interval" not in two
    table = evaluate("hilo", ["random"] * 3, seeds=1, options={"num_players": 3}).to_markdown()
    assert "(no interval from 1 seed)" in table


# --- the journal: a killed evaluation continues where it stopped ----------------------------------


def _pairs(report) -> list:
    return [(p.games, p.wins, p.draws, p.losses, p.mean_reward) for p in report.pairs]


def test_a_journal_continues_an_evaluation_without_playing_recorded_games(
    tmp_path, monkeypatch
) -> None:
    """A round robin recorded for 3 seeds and continued to 5 gives the report of one run of 5
    seeds, playing only the new seeds' games; a line cut short by a kill is dropped and its
    game played again."""
    import spieltisch.agents.arena.evaluation as evaluation

    agents = ["greedy", "random", "alphabeta:depth=2"]
    run = {"options": {"pits": 4}, "mode": "round-robin", "workers": 1, "bootstrap": 10}
    whole = evaluate("kalaha", agents, 5, seed=40, **run)
    journal = tmp_path / "games.jsonl"
    evaluate("kalaha", agents, 3, seed=40, journal=journal, **run)
    lines = journal.read_text().splitlines()
    assert len(lines) == 1 + 3 * 3 * 2  # the header, 3 pairs x 3 seeds x 2 seat orders
    journal.write_text("\n".join(lines[:-1]) + "\n" + lines[-1][:25])  # killed mid-line

    played = []
    play = evaluation._Table.play

    def counted(self, task, *args):
        played.append(task)
        return play(self, task, *args)

    monkeypatch.setattr(evaluation._Table, "play", counted)
    continued = evaluate("kalaha", agents, 5, seed=40, journal=journal, **run)
    assert _pairs(continued) == _pairs(whole)
    assert len(played) == 3 * 2 * 2 + 1  # the 2 new seeds of each pair, and the cut game
    assert len(journal.read_text().splitlines()) == 1 + 3 * 5 * 2
    played.clear()
    again = evaluate("kalaha", agents, 5, seed=40, journal=journal, **run)
    assert _pairs(again) == _pairs(whole) and played == []
    assert again.ratings == whole.ratings


@pytest.mark.parametrize(
    ("game", "agents", "mode", "message"),
    [("hilo", ["random"] * 3, "table", "seats 2 agents, got 3"),
     ("kalaha", ["random"] * 3, "pair", "needs exactly 2 agents, got 3")],
)  # fmt: skip
def test_a_refused_table_writes_no_journal(tmp_path, game, agents, mode, message) -> None:
    journal = tmp_path / "games.jsonl"  # (its header was written before the refusal)
    with pytest.raises(ValueError, match=message):
        evaluate(game, agents, 1, mode=mode, journal=journal)
    assert not journal.exists()


def test_a_journal_of_other_games_is_refused(tmp_path) -> None:
    journal = tmp_path / "games.jsonl"
    evaluate("kalaha", ["greedy", "random"], 2, options={"pits": 4}, journal=journal)
    before = journal.read_text()
    for kwargs, message in [
        ({"options": {"pits": 5}}, "options.pits: 4 there, 5 here"),
        ({"options": {"pits": 4, "seeds": 4}}, "options.seeds: 6 there, 4 here"),
        ({"options": {"pits": 4}, "opening_plies": 2}, "opening_plies: 0 there, 2 here"),
    ]:
        with pytest.raises(ValueError, match=re.escape(message)):
            evaluate("kalaha", ["greedy", "random"], 2, journal=journal, **kwargs)
    assert journal.read_text() == before
    with pytest.raises(ValueError, match="records other games"):
        evaluate("hus", ["greedy", "random"], 2, journal=journal)
    # A file that is no journal is refused and left as it was: once a text without a final
    # newline was replaced by a journal, and a last line without one was cut off first.
    for text in ("hello\n", "my notes, no newline", "line one\nline two, no newline", "{}"):
        (tmp_path / "notes.txt").write_text(text)
        with pytest.raises(ValueError, match="is not an arena journal"):
            evaluate("kalaha", ["greedy", "random"], 2, journal=tmp_path / "notes.txt")
        assert (tmp_path / "notes.txt").read_text() == text
    # A journal killed while writing its first line is started afresh
    killed = tmp_path / "killed.jsonl"
    killed.write_text(before[:20])
    assert evaluate("kalaha", ["greedy", "random"], 2, options={"pits": 4}, journal=killed)
    assert killed.read_text() == before
    journal.write_text(before + "{not json\n")
    with pytest.raises(ValueError, match=r"line 6: not JSON"):
        evaluate("kalaha", ["greedy", "random"], 2, options={"pits": 4}, journal=journal)


def test_an_option_at_its_default_describes_the_same_games(tmp_path, monkeypatch) -> None:
    """``-o seeds=6`` (Kalaha's default) and no ``seeds`` are the same games: the journal
    recorded without it is continued with it, nothing played again."""
    import spieltisch.agents.arena.evaluation as evaluation

    journal = tmp_path / "games.jsonl"
    first = evaluate("kalaha", ["greedy", "random"], 2, options={"pits": 4}, journal=journal)
    played = []
    play = evaluation._Table.play
    monkeypatch.setattr(
        evaluation._Table, "play", lambda self, *a: played.append(a[0]) or play(self, *a)
    )
    again = evaluate(
        "kalaha", ["greedy", "random"], 2, options={"pits": 4, "seeds": 6, "rules": "goki"},
        journal=journal,
    )  # fmt: skip
    assert played == [] and again.pairs[0].score == first.pairs[0].score


def _children(pid: int) -> list[int]:
    """The child processes of ``pid`` (Linux: /proc)."""
    found = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[1]) == pid:
            found.append(int(stat.parent.name))
    return found


def _running(pid: int) -> bool:
    """Whether process ``pid`` exists and is not a zombie waiting to be reaped."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
def test_a_killed_eval_command_continues_from_its_journal(tmp_path) -> None:
    """``spieltisch eval --journal``: killed (SIGKILL) part way, the same command run again
    finishes with the report of an uninterrupted run."""
    import signal
    import subprocess
    import time

    command = [
        sys.executable, "-m", "spieltisch.train.cli", "eval", "hus", "--agents",
        "alphabeta:depth=2", "greedy", "--seeds", "40", "--workers", "1", "--no-progress",
    ]  # fmt: skip
    journal = tmp_path / "games.jsonl"
    proc = subprocess.Popen([*command, "--journal", str(journal)], stdout=subprocess.DEVNULL)
    deadline = time.monotonic() + 120
    workers: list[int] = []
    while time.monotonic() < deadline and proc.poll() is None:
        if journal.exists() and len(journal.read_text().splitlines()) > 10:
            workers = _children(proc.pid)
            proc.send_signal(signal.SIGKILL)
            break
        time.sleep(0.01)
    proc.wait()
    recorded = len(journal.read_text().splitlines()) - 1
    assert 10 <= recorded < 80, recorded  # killed part way
    # its worker process ends too (it waited for a task forever, holding its memory)
    assert workers
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline and any(_running(pid) for pid in workers):
        time.sleep(0.05)
    assert not any(_running(pid) for pid in workers), workers
    resumed = tmp_path / "resumed.json"
    subprocess.run([*command, "--journal", str(journal), "--json", str(resumed)], check=True,
                   stdout=subprocess.DEVNULL, timeout=300)  # fmt: skip
    whole = tmp_path / "whole.json"
    subprocess.run([*command, "--json", str(whole)], check=True, stdout=subprocess.DEVNULL,
                   timeout=300)  # fmt: skip
    assert json.loads(resumed.read_text())["pairs"] == json.loads(whole.read_text())["pairs"]
    assert len(journal.read_text().splitlines()) == 1 + 80


def test_game_results_read_back_from_json_as_they_were() -> None:
    from dataclasses import asdict

    from spieltisch.agents.arena import GameResult

    for result in (
        GameResult(
            3, (1, 0), (2.0, -2.0), 91, win_type="gammon", cube_actions=((1, 0, 0), (0, 1, 0))
        ),
        GameResult(4, (0, 2, 1), (1.0, -1.0, 0.0), 17, True),
        GameResult(
            5,
            (0, 1),
            (-1.0, 1.0),
            3,
            win_type="forfeit",
            error="raised",
            forfeit=0,
            forfeit_reason="error",
        ),
    ):
        assert GameResult.from_json(json.loads(json.dumps(asdict(result)))) == result
