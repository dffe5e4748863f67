"""Audit of the arena: a journal resumed with a name listed twice, and the report's wording of
intervals without spread."""

from __future__ import annotations

import json

from spieltisch.agents.arena import evaluate
from spieltisch.agents.arena.journal import ArenaJournal
from spieltisch.agents.arena.report import interval_text


def _pairs(report) -> list:
    return [(p.games, p.wins, p.draws, p.losses, p.mean_reward) for p in report.pairs]


def test_a_resumed_round_robin_that_lists_a_name_twice_counts_each_game_once(tmp_path) -> None:
    """Two pairs of the same names (greedy against either random) are one table to the journal:
    the second played and recorded its games again, and the continued run counted each twice."""
    agents = ["greedy", "random", "random"]
    run = {"options": {"pits": 3}, "mode": "round-robin", "bootstrap": 5}
    journal = tmp_path / "games.jsonl"
    first = evaluate("kalaha", agents, 2, journal=journal, **run)
    lines = journal.read_text().splitlines()
    assert len(lines) == 1 + 2 * 2 * 2  # the header, 2 distinct tables x 2 seeds x 2 orders
    again = evaluate("kalaha", agents, 2, journal=journal, **run)
    assert _pairs(again) == _pairs(first) and [p.games for p in again.pairs] == [4, 4, 4]
    assert again.ratings == first.ratings


def test_a_journal_that_records_a_game_twice_counts_it_once(tmp_path) -> None:
    journal = tmp_path / "games.jsonl"
    run = {"options": {"pits": 3}}
    first = evaluate("kalaha", ["greedy", "random"], 2, journal=journal, **run)
    lines = journal.read_text().splitlines()
    journal.write_text("\n".join([*lines, *lines[1:]]) + "\n")  # every game recorded twice
    again = evaluate("kalaha", ["greedy", "random"], 2, journal=journal, **run)
    assert _pairs(again) == _pairs(first)


def test_journal_append_is_seen_by_recorded(tmp_path) -> None:
    header = {"game": "kalaha", "options": {}, "opening_plies": 0, "move_time_limit": None}
    j = ArenaJournal(tmp_path / "j.jsonl", header)
    j.append(["a", "b"], {"seed": 0})
    assert j.recorded(["a", "b"]) == [{"seed": 0}]


def test_seeds_without_spread_show_no_zero_width_interval() -> None:
    assert interval_text(1.0, 1.0, 5) == " (no interval: all 5 seeds gave the same result)"
    assert interval_text(0.2, 0.4, 5) == " [+0.200, +0.400]"
    assert interval_text(1.0, 1.0, 1) == " (no interval from 1 seed)"
    report = evaluate("kalaha", ["greedy", "random"], 3, opening_plies=2)
    p = report.pairs[0]
    assert (p.wins, p.reward_low, p.reward_high) == (6, 1.0, 1.0)  # every game won
    text = report.to_markdown()
    assert "+1.000 (no interval: all 3 seeds gave the same result)" in text
    assert "[+1.000, +1.000]" not in text
    assert json.loads(report.to_json())["pairs"][0]["reward_low"] == 1.0
