"""Backgammon rollouts (``spieltisch.agents.backgammon.rollout``, ``spieltisch rollout``): exact
values of races computed here independently, the variance reduction, reproducibility,
truncation, batched against game-by-game play, and the command line."""

from __future__ import annotations

import functools
import json

import numpy as np
import pytest
from spieltisch.agents.backgammon.rollout import NUM_ROLLS, RolloutResult, rollout
from spieltisch.envs.backgammon import BackgammonGame
from spieltisch.envs.backgammon.notation import sides_to_position_id
from spieltisch.train.cli import main

RACE = "27aVAABt21oAAA 0 roll"  # 73 pips against 67, a bear-off race with no contact left


def side(points: dict[int, int]) -> np.ndarray:
    """A side's 25 counts from ``{point: checkers}`` (its own points 1..24, 25 = the bar)."""
    counts = np.zeros(25, dtype=np.int8)
    for point, n in points.items():
        counts[point - 1] = n
    return counts


def position(on_roll: dict[int, int], other: dict[int, int], word: str = "roll") -> str:
    """Engine notation with seat 0 on roll (the rest of each side's 15 checkers borne off)."""
    return f"{sides_to_position_id(side(other), side(on_roll))} 0 {word}"


@functools.cache
def one_checker_win(p: int, q: int) -> float:
    """Exact probability that the player on roll, one checker ``p`` pips from home, wins the
    race against one checker ``q`` pips from home (no contact). With a single checker the play
    of a roll is forced in effect: it moves ``a + b`` pips (``4a`` for a double) or bears off."""
    total = 0.0
    for a in range(1, 7):
        for b in range(1, 7):
            pips = 4 * a if a == b else a + b
            total += 1.0 if pips >= p else 1.0 - one_checker_win(q, p - pips)
    return total / 36


def test_exact_race_win_probability_lies_within_four_standard_errors():
    exact = one_checker_win(12, 10)  # 0.6737; the checkers never meet (our 12 vs their 10)
    result = rollout(position({12: 1}, {10: 1}), "pretrained:backgammon", games=1440, seed=3)
    assert result.batched and result.games == 1440
    assert 0 < result.win.se < 0.02
    assert abs(result.win.mean - exact) < 4 * result.win.se
    assert result.win_gammon.mean == result.lose_gammon.mean == 0  # 14 checkers off each
    assert result.equity.mean == pytest.approx(2 * result.win.mean - 1)


def test_every_agent_plays_the_same_games_batched_or_not():
    text = position({9: 1}, {8: 1})  # the play cannot change the result: the dice decide
    batched = rollout(text, "pretrained:backgammon", games=72, seed=1)
    pubeval = rollout(text, "pubeval", games=72, seed=1)
    assert batched.batched and not pubeval.batched
    assert pubeval.win == batched.win and pubeval.equity == batched.equity
    # The TD net game by game plays exactly the batched games
    one_by_one = rollout(RACE, "pretrained:backgammon", games=72, seed=2, batched=False)
    at_once = rollout(RACE, "pretrained:backgammon", games=72, seed=2, batch_size=50)
    assert not one_by_one.batched and at_once.batched
    assert one_by_one.equity == at_once.equity and one_by_one.win == at_once.win


def test_a_search_agent_plays_its_search_not_the_batched_net():
    # TDSearchAgent is a TD value net too: batched, it would silently play the 1-ply net.
    searched = rollout(RACE, "pretrained:backgammon:sims=4", games=72, seed=3, truncate=3)
    by_hand = rollout(RACE, "pretrained:backgammon:sims=4", games=72, seed=3, truncate=3,
                      batched=False)  # fmt: skip
    assert not searched.batched and searched.equity == by_hand.equity
    with pytest.raises(ValueError, match="batched rollouts need"):
        rollout(RACE, "pretrained:backgammon:sims=4", games=72, seed=3, batched=True)


def test_a_won_position_is_exact():
    over = f"{sides_to_position_id(side({6: 15}), side({}))} 0 over"  # nothing off: a gammon
    result = rollout(over, games=10, seed=0)
    assert (result.win.mean, result.win_gammon.mean, result.win_backgammon.mean) == (1, 1, 0)
    assert result.equity.mean == 2 and result.equity.se == 0 and result.win.se == 0
    assert "exact" in result.notes[-1]
    # Sure to win a backgammon with any roll: the opponent has a checker on the bar
    sure = rollout(position({1: 1}, {6: 14, 25: 1}), games=72, seed=0)
    assert sure.win_backgammon.mean == 1 and sure.equity.mean == 3 and sure.equity.se == 0
    assert sure.lose.mean == 0


def test_stratification_covers_every_first_roll_evenly():
    # One checker on the 4 point against a sure win next turn: the first roll decides; every
    # roll but 2-1 and 1-2 bears off, so the stratified estimate is exactly 34/36 with no error
    result = rollout(position({4: 1}, {1: 1}), games=144, seed=5)
    assert result.first_rolls == (4,) * NUM_ROLLS and result.stratified
    assert result.win.mean == pytest.approx(34 / 36) and result.win.se == 0
    one_unit_each = rollout(position({4: 1}, {1: 1}), games=72, seed=5)  # collapsed strata
    assert one_unit_each.win.mean == pytest.approx(34 / 36) and one_unit_each.win.se == 0
    # With dice to play the opponent's first roll is the stratified one: 2-1 brings our checker
    # to the 3 point, and the opponent (one checker on its 4 point) misses only with 2-1, 1-2
    dice = rollout(position({6: 1}, {4: 1}, "21"), games=72, seed=0)
    assert dice.first_rolls == (2,) * NUM_ROLLS
    assert dice.win.mean == pytest.approx(2 / 36) and dice.win.se == 0
    # Unstratified, the first roll is random
    plain = rollout(position({4: 1}, {1: 1}), games=144, seed=5, stratify=False)
    assert plain.first_rolls == () and plain.win.se > 0


def test_games_are_rounded_up_and_the_note_says_so():
    result = rollout(position({4: 1}, {1: 1}), games=100, seed=0)
    assert (result.games_requested, result.games) == (100, 144)
    assert "rounded up from 100 to 144" in result.notes[0]
    assert rollout(position({4: 1}, {1: 1}), games=3, seed=0, stratify=False).games == 4
    assert (
        rollout(position({4: 1}, {1: 1}), games=3, seed=0, stratify=False, duplicate=False).games
        == 3
    )


def test_standard_errors_shrink_with_more_games():
    few = rollout(RACE, games=72, seed=4)
    many = rollout(RACE, games=720, seed=4)
    assert many.equity.se < few.equity.se / 2 and many.win.se < few.win.se / 2


def test_same_seed_same_result():
    first = rollout(RACE, games=144, seed=11).to_dict()
    again = rollout(RACE, games=144, seed=11).to_dict()
    other = rollout(RACE, games=144, seed=12).to_dict()
    for data in (first, again, other):
        data.pop("seconds")
        data.pop("games_per_second")
    assert first == again
    assert first != other


def test_truncation_is_close_to_the_full_rollout_on_a_race():
    full = rollout(RACE, games=720, seed=0)
    for plies in (2, 6):
        cut = rollout(RACE, games=720, seed=0, truncate=plies)
        assert cut.truncate == plies and cut.equity.se < full.equity.se
        bound = 4 * np.hypot(full.equity.se, cut.equity.se)
        assert abs(cut.equity.mean - full.equity.mean) < bound
        assert abs(cut.win.mean - full.win.mean) < 4 * np.hypot(full.win.se, cut.win.se)
    # One ply from a position about to roll: the net's exact 1-ply average over the 36 rolls
    one = rollout(RACE, games=144, seed=0, truncate=1)
    assert one.equity.se == pytest.approx(0, abs=1e-12)
    assert rollout(RACE, games=144, seed=9, truncate=1).equity.mean == pytest.approx(
        one.equity.mean
    )
    # Game by game the TD net truncates the same games the same way
    per_game = rollout(RACE, games=72, seed=0, truncate=3, batched=False)
    assert per_game.equity == rollout(RACE, games=72, seed=0, truncate=3).equity


def test_truncation_needs_a_value_net():
    with pytest.raises(ValueError, match="pubeval has none"):
        rollout(RACE, "pubeval", games=36, seed=0, truncate=4)


def test_positions_as_states_and_position_ids():
    game = BackgammonGame()
    state = game.state_from_text(RACE)
    from_state = rollout(state, games=72, seed=0)
    assert from_state.equity == rollout(RACE, games=72, seed=0).equity
    assert from_state.position == RACE and state.is_chance_node()  # the state is not changed
    assert rollout(RACE.split()[0], games=72, seed=0).equity == from_state.equity  # a bare ID
    seat1 = rollout("27aVAABt21oAAA 1 roll", games=72, seed=0)  # the same, seat 1 on roll
    assert seat1.player == 1 and seat1.equity == from_state.equity


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"position": "nonsense 0 roll"}, "bad position"),
        ({"position": "4HPwATDgc/ABMA 0 open"}, "before the opening roll"),
        ({"position": "4HPwATDgc/ABMA 0 roll cube=1"}, "no doubling cube"),
        ({"agents": "nobody"}, "unknown agent 'nobody'"),
        ({"agents": "human"}, "agent 'human' cannot play here"),
        ({"games": 0}, "games must be"),
        ({"seed": -1}, "seed must be"),
        ({"seed": 2**63}, "seed must be below"),
        ({"truncate": 0}, "truncate must be"),
        ({"agents": "pubeval", "batched": True}, "batched rollouts need"),
        ({"agents": "pubeval", "threads": 2}, "threads=2 needs a batched rollout"),
        ({"batched": False, "threads": 2}, "threads=2 needs a batched rollout"),
    ],
)
def test_bad_input_is_named(kwargs, message):
    args = {"position": RACE, "agents": "pretrained:backgammon", "games": 36, "seed": 0, **kwargs}
    with pytest.raises(ValueError, match=message):
        rollout(args.pop("position"), args.pop("agents"), **args)


def test_result_table_and_dict():
    result = rollout(RACE, games=144, seed=0)
    assert isinstance(result, RolloutResult)
    table = result.to_table()
    for text in ("seat 0 (on roll) wins", "seat 1 wins", "a backgammon", "equity of seat 0",
                 "95% interval", "144 games", "games/s"):  # fmt: skip
        assert text in table
    low, high = result.equity.interval()
    assert low < result.equity.mean < high
    data = json.loads(json.dumps(result.to_dict()))
    assert data["win"]["mean"] == result.win.mean and data["lose"]["se"] == result.win.se
    assert data["games"] == 144 and len(data["first_rolls"]) == NUM_ROLLS


def test_cli_happy_path(capsys):
    argv = ["rollout", "backgammon", "--position", RACE, "--games", "100", "--seed", "1"]
    assert main([*argv, "--json", "--no-progress"]) == 0
    captured = capsys.readouterr()
    data = json.loads(captured.out)
    assert data["games"] == 144 and data["agents"] == ["pretrained:backgammon"] * 2
    assert data["equity"]["se"] > 0 and data["batched"]
    assert "rounded up from 100 to 144" in captured.err
    assert main([*argv, "--truncate", "4"]) == 0
    captured = capsys.readouterr()
    assert "equity of seat 0" in captured.out and "truncated after 4 plies" in captured.out
    assert "game/s" in captured.err or "it/s" in captured.err  # the progress bar


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--position", "4HPwATDgc/ABMA 2 roll"], "bad position"),
        (["--position", RACE, "--agent", "nobody"], "unknown agent 'nobody'"),
        (["--position", RACE, "--games", "0"], "--games must be at least 1"),
        (["--position", RACE, "--truncate", "0"], "--truncate must be at least 1"),
        (["--position", RACE, "--seed", str(2**63)], "--seed must be below 2**63"),
        (["--position", RACE, "--agent", "pubeval", "--truncate", "3"], "pubeval has none"),
        (["--position", RACE, "--agent", "pubeval", "--threads", "2"], "needs a batched rollout"),
    ],
)
def test_cli_bad_input_exits_2(extra, message, capsys):
    assert main(["rollout", "backgammon", *extra, "--no-progress"]) == 2
    err = capsys.readouterr().err
    assert message in err and err.startswith("spieltisch rollout: ")


def test_cli_rollouts_are_for_backgammon(capsys):
    assert main(["rollout", "kalaha", "--position", "x", "--no-progress"]) == 2
    assert "rollouts are for backgammon" in capsys.readouterr().err
    with pytest.raises(SystemExit) as exit_info:
        main(["rollout", "backgammon", "--position", RACE, "--games", "many"])
    assert exit_info.value.code == 2


def test_step_plays_takes_the_next_rolls():
    from spieltisch.envs.backgammon.batch import BackgammonBatch

    batch = BackgammonBatch(BackgammonGame(), 3, seed=0)
    before = batch.save()["rng"].bit_generator.state
    batch.step_plays(np.zeros(3, dtype=np.int64), rolls=np.array([0, 7, 35 + 36]))
    assert [batch.state(g).rolled() for g in range(3)] == [(1, 1), (2, 2), (6, 6)]
    assert batch.rng.bit_generator.state == before  # the batch's generator is not used
    with pytest.raises(ValueError, match=r"rolls must be integers 0\.\.179"):
        batch.step_plays(np.zeros(3, dtype=np.int64), rolls=np.array([0, 180, 1]))
    with pytest.raises(TypeError, match="one integer roll per game"):
        batch.step_plays(np.zeros(3, dtype=np.int64), rolls=np.array([0, 1]))
