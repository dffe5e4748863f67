"""Rollout-target training of the backgammon evaluator (train/rollout_targets.py) and the batched
rollouts of many positions it uses (agents/backgammon/rollout.py: rollout_positions,
self_play_afterstates)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import torch
from spieltisch.agents.backgammon import td_value as tv
from spieltisch.agents.backgammon.rollout import (
    rollout,
    rollout_positions,
    self_play_afterstates,
)
from spieltisch.agents.neural.checkpoint import load_checkpoint
from spieltisch.agents.registry import make_agent
from spieltisch.envs.backgammon import rules as k
from spieltisch.envs.backgammon.engine import BackgammonGame
from spieltisch.train.config import ConfigError, RolloutConfig, build_config, load_config
from spieltisch.train.rollout_targets import fit_samples, mover_targets, train
from spieltisch.train.run_files import latest_checkpoint

ROOT = Path(__file__).resolve().parents[1]
NET = "pretrained:backgammon"


@pytest.fixture(scope="module")
def params() -> dict[str, np.ndarray]:
    return make_agent(NET, "backgammon").params


def tiny(tmp_path: Path, name: str = "run", *extra: str) -> RolloutConfig:
    return build_config(
        {"game": "backgammon", "algorithm": "rollout"},
        [
            f"run_dir={tmp_path / name}",
            "total_positions=60",
            "positions_per_iteration=15",
            "truncate=2",
            "sample_prob=0.3",
            "eval_interval=0",
            "final_eval_games=0",
            "progress=false",
            "tensorboard=false",
            *extra,
        ],
    )


def quiet(*_args) -> None:
    pass


# --- the rollouts of many positions -----------------------------------------------------------
def test_state_to_roll_is_the_afterstate_with_the_other_seat_on_roll() -> None:
    game = BackgammonGame()
    start = game.state_from_text("4HPwATDgc/ABMA 0 31")
    start.apply_play(0)
    after = game.state_to_roll(start.board.copy(), 1)
    assert after.is_chance_node() and after.turn == 1
    assert np.array_equal(after.board, start.board)
    assert after == game.state_from_text(f"{after.position_id()} 1 roll")
    with pytest.raises(ValueError, match="52 cells"):
        game.state_to_roll(np.zeros(10, dtype=np.int32), 0)
    with pytest.raises(ValueError, match="seat must be 0 or 1"):
        game.state_to_roll(start.board.copy(), 2)


def test_self_play_afterstates_are_positions_about_to_roll(params) -> None:
    a = self_play_afterstates(params, 40, 0.2, np.random.default_rng(3))
    b = self_play_afterstates(params, 40, 0.2, np.random.default_rng(3))
    assert len(a) == 40 and [s.to_text() for s in a] == [s.to_text() for s in b]
    for state in a:
        assert state.is_chance_node() and not state.is_terminal()
        assert state.borne_off()[1 - state.turn] < 15  # a finishing play is never kept
    assert len({s.to_text() for s in a}) > 30  # spread over games, not one position
    with pytest.raises(ValueError, match="sample_prob"):
        self_play_afterstates(params, 5, 0.0, np.random.default_rng(0))


@pytest.mark.parametrize("truncate", [None, 3])
def test_rollout_positions_equal_one_rollout_per_position(params, truncate) -> None:
    positions = self_play_afterstates(params, 5, 0.1, np.random.default_rng(8))
    seeds = [40, 41, 42, 43, 44]
    # 2 positions per batch of the engine: the batching does not change the result
    means, se = rollout_positions(positions, params, 72, seeds, truncate, batch_size=150)
    for i, state in enumerate(positions):
        one = rollout(state, NET, 72, seeds[i], truncate)
        expected = [one.win, one.win_gammon, one.win_backgammon, one.lose_gammon]
        expected.append(one.lose_backgammon)
        np.testing.assert_allclose(means[i], [e.mean for e in expected], atol=1e-12)
        assert se[i] == pytest.approx(one.equity.se, abs=1e-12)


def test_threads_do_not_change_positions_or_rollouts(params) -> None:
    one = self_play_afterstates(params, 30, 0.2, np.random.default_rng(4), num_games=32)
    two = self_play_afterstates(params, 30, 0.2, np.random.default_rng(4), num_games=32, threads=2)
    assert [s.to_text() for s in one] == [s.to_text() for s in two]
    seeds = np.arange(len(one))
    a = rollout_positions(one, params, 72, seeds, 2, threads=1)
    b = rollout_positions(one, params, 72, seeds, 2, threads=2)
    np.testing.assert_array_equal(a[0], b[0])
    np.testing.assert_array_equal(a[1], b[1])


def test_rollout_positions_refuses_bad_input(params) -> None:
    game = BackgammonGame()
    about_to_roll = game.state_from_text("4HPwATDgc/ABMA 1 roll")
    with pytest.raises(ValueError, match="multiple of 72"):
        rollout_positions([about_to_roll], params, 36, [0])
    with pytest.raises(ValueError, match="about to roll"):
        rollout_positions([game.state_from_text("4HPwATDgc/ABMA 0 31")], params, 72, [0])
    with pytest.raises(ValueError, match="one non-negative integer per position"):
        rollout_positions([about_to_roll], params, 72, [0, 1])


# --- the learner ------------------------------------------------------------------------------
def test_mover_targets_turn_the_roller_probabilities_around() -> None:
    # the player on roll wins 70%, 20% gammons (5% backgammons); loses 10% gammons, 1% bg
    on_roll = np.array([[0.7, 0.2, 0.05, 0.1, 0.01]])
    np.testing.assert_allclose(mover_targets(on_roll), [[0.3, 0.1, 0.01, 0.2, 0.05]])


def test_fit_samples_moves_each_class_net_towards_its_targets(params) -> None:
    race = tv.TDArch.make(16, features=True, race_hidden=8)
    net = tv.init_params(race, np.random.default_rng(0))
    positions = self_play_afterstates(params, 300, 0.5, np.random.default_rng(1), num_games=4)
    boards = np.stack([p.s[: k.BOARD_SIZE] for p in positions]).astype(np.int32)
    movers = np.array([1 - p.turn for p in positions], dtype=np.int64)
    is_race = np.array([bool(tv.tf.is_race(b)) for b in boards])
    assert 0 < is_race.sum() < len(boards)  # both classes present
    # learnable targets: the outputs of another net of the same shape
    teacher = tv.init_params(race, np.random.default_rng(2), scale=0.5)
    targets = np.stack([tv.outputs_of(teacher, b, m) for b, m in zip(boards, movers, strict=True)])
    contact_only = np.flatnonzero(~is_race)
    before = {n: a.copy() for n, a in net.items()}
    fit_samples(*tv.net_arrays(net), boards, movers, targets, contact_only, 0.1)
    # contact samples change the contact net only
    assert all(np.array_equal(net[n], before[n]) for n in tv.RACE_PARAM_NAMES)
    assert not np.array_equal(net["W1"], before["W1"])
    errors = [
        fit_samples(*tv.net_arrays(net), boards, movers, targets, np.arange(len(boards)), 0.1)
        for _ in range(30)
    ]
    assert errors[-1] < 0.5 * errors[0]  # it learns the teacher's outputs
    race_net_before = net["rW1"].copy()
    fit_samples(*tv.net_arrays(net), boards, movers, targets, np.flatnonzero(is_race), 0.1)
    assert not np.array_equal(net["rW1"], race_net_before)


# --- the trainer ------------------------------------------------------------------------------
# --- 2-ply targets -----------------------------------------------------------------------------
def ply2_reference(params, board: np.ndarray, mover: int) -> np.ndarray:
    """The 2-ply outputs written plainly: each of the opponent's 36 rolls through the engine's
    API, its best reply by 1-ply equity, that reply's outputs turned to the mover's view."""
    game, total = BackgammonGame(), np.zeros(5)
    for d1 in range(1, 7):
        for d2 in range(1, 7):
            state = game.state_to_roll(board, 1 - mover)
            state.set_dice(d1, d2)
            boards = np.ascontiguousarray(state.play_boards(), dtype=np.int32)
            best = int(np.argmax(tv.evaluate_boards(params, boards, 1 - mover)))
            y = tv.afterstate_outputs(params, boards[best : best + 1], 1 - mover)[0]
            total += [1 - y[0], y[3], y[4], y[1], y[2]]
    return total / 36


@pytest.mark.parametrize("net", [NET, "pretrained:backgammon:algo=td_features"])
def test_ply2_outputs_equal_the_plain_reference_on_self_play_positions(net) -> None:
    params = make_agent(net, "backgammon").params  # td_features: with a race network
    positions = self_play_afterstates(params, 30, 0.05, np.random.default_rng(5))
    boards = [p.s[: k.BOARD_SIZE].astype(np.int32) for p in positions]
    movers = [1 - p.turn for p in positions]
    for home, outside in (([3, 3, 3, 2, 2, 2], [2, 3, 3, 3, 2, 2]), ([0] * 6, [3, 3, 3, 2, 2, 2])):
        race = np.zeros(k.BOARD_SIZE, dtype=np.int32)  # no contact: seat 1 at home, seat 0
        race[k.SIDE : k.SIDE + 6] = [2, 3, 3, 3, 2, 2]  # home or on its points 7-12
        race[0:6], race[6:12] = home, outside if home == [0] * 6 else [0] * 6
        boards.append(race)
        movers.append(1)
    boards, movers = np.stack(boards), np.array(movers)
    assert bool(tv.tf.is_race(boards[-1])) and bool(tv.tf.is_race(boards[-2]))
    got = tv.outputs_2ply(params, boards, movers)
    for board, mover, row in zip(boards, movers, got, strict=True):
        assert np.allclose(row, ply2_reference(params, board, int(mover)), atol=1e-12)
    # its equity is the 2-ply search's value of the afterstate
    arrays = tv.net_arrays(params)
    ws, replies = k.new_workspace(), np.zeros((k.MAX_PLAYS, k.BOARD_SIZE), dtype=np.int32)
    s = np.zeros(k.STATE_SIZE, dtype=np.int32)
    for board, mover, row in zip(boards[:5], movers[:5], got[:5], strict=True):
        value = tv.afterstate_value_2ply(
            *arrays, board, int(mover), s, ws, replies, np.zeros(k.MAX_PLAYS)
        )
        assert tv.equity(row) == pytest.approx(value, abs=1e-12)


def test_ply2_outputs_of_a_won_afterstate_are_its_result(params) -> None:
    # seat 0 has borne off all 15; seat 1 still has a checker on its 24-point: a backgammon
    board = np.zeros(k.BOARD_SIZE, dtype=np.int32)
    board[k.OFF] = 15
    board[k.SIDE + 23], board[k.SIDE] = 1, 14  # nothing borne off, one in seat 0's home
    got = tv.outputs_2ply(params, board[None], np.array([0]))[0]
    assert got.tolist() == [1.0, 1.0, 1.0, 0.0, 0.0]


def test_ply2_run_fits_the_2ply_targets_and_resumes_exactly(tmp_path, params) -> None:
    whole = train(tiny(tmp_path, "whole", "target=ply2"), log=quiet)
    train(tiny(tmp_path, "split", "target=ply2", "stop_after_iterations=2"), log=quiet)
    resumed = train(tiny(tmp_path, "split", "target=ply2"), resume=True, log=quiet)
    assert whole["global_step"] == resumed["global_step"] == 60
    a = load_checkpoint(latest_checkpoint(tmp_path / "whole"))
    b = load_checkpoint(latest_checkpoint(tmp_path / "split"))
    for name in a.tensors:
        assert torch.equal(a.tensors[name], b.tensors[name]), name
    # the first iteration's data are the 2-ply outputs of its positions under the starting net
    data = {n: t.numpy() for n, t in a.tensors.items() if n.startswith("data.")}
    boards, movers = data["data.boards"][:15], data["data.movers"][:15]
    assert np.allclose(data["data.targets"][:15], tv.outputs_2ply(params, boards, movers))
    assert not data["data.se"][:15].any()  # exact: no sampling error


def test_a_teacher_gives_its_own_2ply_outputs_as_targets(tmp_path) -> None:
    # distillation: the student (td_features, with a race net) learns the 2-ply outputs of a
    # fixed net of another architecture, which stays fixed while the student changes
    teacher = make_agent(NET, "backgammon").params
    cfg = tiny(
        tmp_path, "taught", "target=ply2", f"teacher={NET}",
        "init_from=pretrained:backgammon:algo=td_features",
    )  # fmt: skip
    train(cfg, log=quiet)
    ckpt = load_checkpoint(latest_checkpoint(tmp_path / "taught"))
    data = {n: t.numpy() for n, t in ckpt.tensors.items() if n.startswith("data.")}
    boards, movers = data["data.boards"], data["data.movers"]
    assert len(boards) == 60
    assert np.allclose(data["data.targets"], tv.outputs_2ply(teacher, boards, movers))
    student = make_agent("pretrained:backgammon:algo=td_features", "backgammon").params
    assert not np.allclose(data["data.targets"], tv.outputs_2ply(student, boards, movers))


def test_shipped_config_is_valid() -> None:
    cfg = load_config(ROOT / "configs" / "backgammon_rollout.yaml")
    assert isinstance(cfg, RolloutConfig) and cfg.rollout_games % 72 == 0


@pytest.mark.parametrize(
    ("override", "words"),
    [
        ("rollout_games=100", "'rollout_games' must be a positive multiple of 72"),
        ("truncate=0", "'truncate' must be at least 1"),
        ("target=ply3", "'target' must be rollout or ply2"),
        ("sample_prob=0", "'sample_prob' must be in"),
        ("lr=0", "'lr' must be positive"),
        (
            "init_from=pretrained:kalaha",
            "'init_from' must be pretrained:backgammon\\[:algo=ALGORITHM\\] or",
        ),
        ("game_options={cube: true}", "'game_options' must be empty"),
        ("eval_opponent=nobody", "unknown agent 'nobody'"),
        (f"teacher={NET}", "'teacher' needs target: ply2"),
        (("target=ply2", "teacher=pretrained:hus"), "'teacher' must be pretrained:backgammon"),
    ],
)
def test_bad_config_values_are_refused(tmp_path, override, words) -> None:
    with pytest.raises(ConfigError, match=words):
        tiny(tmp_path, "bad", *((override,) if isinstance(override, str) else override))


def test_killed_and_resumed_run_equals_uninterrupted_run(tmp_path) -> None:
    whole = train(tiny(tmp_path, "whole"), log=quiet)
    train(tiny(tmp_path, "split", "stop_after_iterations=2"), log=quiet)
    resumed = train(tiny(tmp_path, "split"), resume=True, log=quiet)
    assert whole["global_step"] == resumed["global_step"] == 60
    a = load_checkpoint(latest_checkpoint(tmp_path / "whole"))
    b = load_checkpoint(latest_checkpoint(tmp_path / "split"))
    assert sorted(a.tensors) == sorted(b.tensors)
    assert any(n.startswith("data.") for n in a.tensors)
    for name in a.tensors:
        assert torch.equal(a.tensors[name], b.tensors[name]), name
    assert a.meta["trainer"]["rng"] == b.meta["trainer"]["rng"]


def test_the_trained_net_changed_and_plays_as_an_agent(tmp_path, params) -> None:
    train(tiny(tmp_path), log=quiet)
    final = tmp_path / "run" / "final"
    ckpt = load_checkpoint(final)
    assert ckpt.meta["algorithm"] == "rollout" and ckpt.meta["positions"] == 60
    assert not np.allclose(ckpt.tensors["model.W1"].numpy(), params["W1"])
    agent = make_agent(f"checkpoint:{final}", "backgammon")
    state = BackgammonGame().state_from_text("4HPwATDgc/ABMA 0 31")
    assert 0 <= agent.choose_play(state) < state.num_plays()
