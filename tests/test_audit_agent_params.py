"""Agents' parameters with bad values: a ValueError naming the agent, the parameter and what is
allowed (an audit of every agent's parameters; each case below failed otherwise before)."""

from __future__ import annotations

import re

import pytest
import torch
from spieltisch.agents.neural import value_search
from spieltisch.agents.neural.policy import PolicyArch, PolicyNet
from spieltisch.agents.registry import make_agent
from spieltisch.envs.kalaha.engine import KalahaGame
from spieltisch.train.cli import main

HUGE = 10**12


def _refused(name: str, game: str, words: str) -> str:
    with pytest.raises(ValueError, match=re.escape(words)) as err:
        make_agent(name, game, seed=0)
    return str(err.value)


@pytest.mark.parametrize("game", ["kalaha", "hus", "hilo"])
def test_too_many_simulations_are_refused_before_allocating(game: str) -> None:
    # numpy's MemoryError: "Unable to allocate 124. TiB for an array with shape (17, 10**12)"
    words = f"pretrained:{game}: sims must be at most 100,000 per move, got {HUGE}"
    _refused(f"pretrained:{game}:sims={HUGE}", game, words)


def test_too_many_simulations_of_a_td_net_or_a_checkpoint_are_refused() -> None:
    words = f"sims must be at most 100,000 per move, got {HUGE}"
    _refused(f"pretrained:backgammon:sims={HUGE}", "backgammon", f"pretrained:backgammon: {words}")
    path = "checkpoint:agents/pretrained/kalaha"
    _refused(f"{path}:sims={HUGE}", "kalaha", f"{path}: {words}")


def test_hilo_determinizations_count_in_the_simulations_of_a_move() -> None:
    # accepted; the first move asked for a batch of 10**12 games
    words = "pretrained:hilo: sims times dets (default 8) must be at most 100,000 per move"
    _refused(f"pretrained:hilo:sims=2,dets={HUGE}", "hilo", words)
    _refused("pretrained:hilo:sims=20000", "hilo", words)  # 8 determinizations by default
    assert make_agent("pretrained:hilo:sims=20000,dets=5", "hilo").dets == 5


@pytest.mark.parametrize(
    ("name", "game", "words"),
    [
        # each was read as its default: no time limit (depth 4), 8 determinizations, keep 8
        ("alphabeta:time=", "kalaha", "alphabeta: depth, tt_bits and extend must be integers, "
         "time a number of seconds (got {'time': None})"),
        ("pretrained:hilo:sims=2,dets=", "hilo", "pretrained:hilo: dets= needs a whole number"),
        ("pretrained:kalaha:sims=4,dets=", "kalaha", "pretrained:kalaha: dets= needs a whole"),
        ("pretrained:backgammon:ply=2,keep=", "backgammon", "pretrained:backgammon: keep= needs"),
        ("pretrained:backgammon:ply=3,reply_keep=", "backgammon",
         "pretrained:backgammon: reply_keep= needs a whole number"),
    ],
)  # fmt: skip
def test_an_empty_value_is_not_the_default(name: str, game: str, words: str) -> None:
    _refused(name, game, words)


def test_a_time_limit_beyond_a_day_is_refused() -> None:
    # time=10**12 searched on for ever; time=10**15 overflowed an int64 after the first iteration
    for time_limit in (HUGE, 10**15):
        _refused(
            f"alphabeta:time={time_limit}",
            "kalaha",
            "alphabeta: time must be a positive number of seconds up to 86400 (a day), got",
        )
    assert make_agent("alphabeta:time=86400", "kalaha").time_limit == 86400.0


def test_a_search_too_deep_names_search_not_depth() -> None:
    # it said "depth must be between 1 and 1000" (the alpha-beta's parameter, not the agent's)
    for game in ("kalaha", "hus"):
        words = f"pretrained:{game}: search depth must be at most 1000, got 1001"
        _refused(f"pretrained:{game}:search=1001", game, words)


def test_a_leaf_budget_too_large_is_refused() -> None:
    # accepted; the full-width search grew plies until the memory ran out
    words = "pretrained:kalaha: leaves must be at most 10,000,000 (positions a ply), got"
    _refused(f"pretrained:kalaha:search=4,leaves={HUGE}", "kalaha", words)


def test_the_full_width_plies_before_the_leaf_budget_are_bounded(monkeypatch) -> None:
    # search=1000,leaves=1 expanded every ply of 1000 plies full width: terabytes
    monkeypatch.setattr(value_search, "MAX_LEAVES", 100)
    torch.manual_seed(1)
    net = PolicyNet(PolicyArch(14, 6, (8,), 1.0)).eval()
    state = KalahaGame().new_initial_state()
    words = "search=4 with leaves: ply 3 of the full-width search has 190 positions, more than 100"
    with pytest.raises(ValueError, match=re.escape(words)):
        value_search.searched_values(net, "kalaha", {}, state.board, 0, 4, max_leaves=1)
    actions, _ = value_search.searched_values(net, "kalaha", {}, state.board, 0, 2, max_leaves=1)
    assert len(actions) == 6


def test_keep_beyond_int64_is_refused() -> None:
    # accepted; the first 2-ply move failed in numba ("Int value is too large")
    for key, ply in (("keep", 2), ("reply_keep", 3)):
        words = f"pretrained:backgammon: {key} must be at most 1,000,000 (as many keeps every play)"
        _refused(f"pretrained:backgammon:ply={ply},{key}={10**20}", "backgammon", words)


def test_hilo_sample_counts_are_bounded() -> None:
    # accepted; a move of 10**12 samples never ends (search=10000 took 14 GB for one move)
    _refused(f"heuristic:samples={HUGE}", "hilo", "heuristic: samples must be at most 10,000")
    _refused(f"greedy:samples={HUGE}", "hilo", "greedy: samples must be at most 10,000")
    words = "pretrained:hilo: search samples must be at most 1,000 per move"
    _refused(f"pretrained:hilo:search={HUGE}", "hilo", words)


def test_a_negative_hilo_value_weight_is_refused() -> None:
    # accepted: it played for the results its value head rates worst
    words = "pretrained:hilo: weight must be at least 0 (0: coins alone), got -1"
    _refused("pretrained:hilo:search=2,weight=-1", "hilo", words)
    assert make_agent("pretrained:hilo:search=2,weight=0", "hilo").value_weight == 0.0


@pytest.mark.parametrize(
    ("name", "game", "words"),
    [
        # the constructors' messages named the parameter but no agent ("sims must be ...")
        ("alphabeta:depth=0", "kalaha", "alphabeta: depth must be between 1 and 1000, got 0"),
        ("alphabeta:tt_bits=2", "hus", "alphabeta: tt_bits must be 0 (no table) or between 4"),
        ("pubeval:cube_life=2", "backgammon", "pubeval: cube_life must be a number from 0 to 1"),
        ("heuristic:samples=0", "hilo", "heuristic: samples must be a whole number of at least 1"),
        ("pretrained:kalaha:sims=-1", "kalaha", "pretrained:kalaha: sims must be a whole number"),
        ("pretrained:hus:search=4,leaves=-1", "hus", "pretrained:hus: leaves must be a non-neg"),
        ("pretrained:backgammon:ply=4", "backgammon", "pretrained:backgammon: ply must be 1, 2"),
        ("pretrained:backgammon:cube=x", "backgammon", "pretrained:backgammon: cube must be one"),
        ("pretrained:hilo:search=abc", "hilo", "pretrained:hilo: search samples must be a pos"),
        ("pretrained:hilo:sims=2,dets=0", "hilo", "pretrained:hilo: dets must be a whole number"),
    ],
)  # fmt: skip
def test_a_refused_value_names_the_agent(name: str, game: str, words: str) -> None:
    assert _refused(name, game, words).startswith(words)


def test_a_message_naming_its_agent_is_not_named_twice() -> None:
    message = _refused("alphabeta:depth=abc", "kalaha", "alphabeta: depth, tt_bits and extend")
    assert message.startswith("alphabeta: depth") and "alphabeta: alphabeta" not in message


def test_eval_names_a_refused_value_in_one_line(capsys) -> None:
    argv = ["eval", "kalaha", "--agents", f"pretrained:kalaha:sims={HUGE}", "random"]
    assert main([*argv, "--seeds", "1", "--workers", "1", "--no-progress"]) == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err and len(err.strip().splitlines()) == 1, err
    assert err.startswith("spieltisch eval: pretrained:kalaha: sims must be at most 100,000")


def test_values_at_the_bounds_are_accepted() -> None:
    assert make_agent("pretrained:kalaha:sims=0", "kalaha").sims == 0
    assert make_agent("pretrained:kalaha:search=4,leaves=10000000", "kalaha").max_leaves == 10**7
    agent = make_agent("pretrained:backgammon:ply=2,keep=1000000", "backgammon")
    assert agent.keep == 10**6
