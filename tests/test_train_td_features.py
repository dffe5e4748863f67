"""The TD backgammon evaluator with features and separate contact / race networks
(agents/backgammon/td_features.py, td_value.py; trained by train/td.py)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from safetensors.torch import load_file
from spieltisch.agents.arena import evaluate
from spieltisch.agents.backgammon import td_features as tf
from spieltisch.agents.backgammon import td_value as tv
from spieltisch.agents.neural.checkpoint import load_checkpoint
from spieltisch.agents.registry import make_agent
from spieltisch.envs.backgammon import rules as k
from spieltisch.envs.backgammon.engine import BackgammonGame
from spieltisch.train import td
from spieltisch.train import td_reference as ref
from spieltisch.train.config import ConfigError, TDConfig, build_config, load_config

ROOT = Path(__file__).resolve().parents[1]


def tiny(tmp_path: Path, **over) -> TDConfig:
    data = {
        "algorithm": "td",
        "game": "backgammon",
        "hidden": 16,  # 8 hidden units with features loop for thousands of moves untrained
        "features": True,
        "race_hidden": 8,
        "total_games": 60,
        "chunk_games": 10,
        "checkpoint_interval": 20,
        "eval_interval": 0,
        "final_eval_games": 0,
        "progress": False,
        "tensorboard": False,
        "run_dir": str(tmp_path / "run"),
    }
    data.update(over)
    return build_config(data)


def quiet(*_args) -> None:
    pass


def board(mover_points: dict[int, int], opp_points: dict[int, int], mover_bar: int = 0,
          opp_bar: int = 0) -> np.ndarray:  # fmt: skip
    """A 52-cell board: seat 0's and seat 1's checkers on their own points (0..23), the rest
    borne off."""
    b = np.zeros(k.BOARD_SIZE, dtype=np.int32)
    for seat, points, bar in ((0, mover_points, mover_bar), (1, opp_points, opp_bar)):
        base = k.SIDE * seat
        for i, n in points.items():
            b[base + i] = n
        b[base + k.BAR] = bar
        b[base + k.OFF] = k.CHECKERS - sum(points.values()) - bar
    return b


# --- features ---------------------------------------------------------------------------------
#: rolls (of 36) hitting a blot d pips away from a single attacker, nothing in between
SHOTS = {1: 11, 2: 12, 3: 14, 4: 15, 5: 15, 6: 17, 7: 6, 8: 6, 9: 5, 10: 3, 11: 2, 12: 3,
         13: 0, 15: 1, 16: 1, 18: 1, 20: 1}  # fmt: skip


@pytest.mark.parametrize("dist", sorted(SHOTS))
def test_shots_on_a_lone_blot_match_the_table(dist: int) -> None:
    blot = 20  # seat 0's point (its 21-point); the attacker sits dist pips behind it
    j = blot - dist  # in seat 0's view; -1 is seat 1's bar
    b = board({blot: 1}, {} if j < 0 else {23 - j: 1}, opp_bar=1 if j < 0 else 0)
    assert tf.shots(b, 0) == SHOTS[dist]


def test_a_made_point_blocks_indirect_shots() -> None:
    # 6 away: 17 shots; a made point 3 pips in front of the attacker stops 3-3 only
    b = board({20: 1, 17: 2}, {23 - 14: 1})
    assert tf.shots(b, 0) == 16
    # a blot in front of the attacker only: nothing behind it hits it
    assert tf.shots(board({3: 1}, {23 - 10: 2}), 0) == 0


def test_escapes_race_and_the_opening_features() -> None:
    # the bar checker: nothing made in front -> 36; seat 1 holds the point 1 in front -> 35
    assert tf.escapes(board({}, {}, mover_bar=1), 0) == 36
    assert tf.escapes(board({}, {0: 2}, mover_bar=1), 0) == 35
    start = BackgammonGame().new_initial_state().s
    assert not tf.is_race(start)
    assert tf.is_race(board({0: 5, 5: 5}, {0: 5, 3: 5}))
    assert not tf.is_race(board({0: 5, 5: 5}, {0: 5}, opp_bar=1))
    # both rearmost checkers on the same pip line: 13 + 12 = 25 is no contact, 26 is
    assert tf.is_race(board({12: 1}, {11: 1}))
    assert not tf.is_race(board({12: 1}, {12: 1}))
    x = np.zeros(tv.NUM_FEATURE_INPUTS)
    nz = np.zeros(tv.NUM_FEATURE_INPUTS, dtype=np.int64)
    n = tv.encode_inputs(start, 0, x, nz)
    side = [0.0, 0.0, 1 / 6, 1 / 6, 1 / 3, 2 / 5, 10 / 15, 0.0]  # no blots, the 8/6 points...
    np.testing.assert_allclose(x[198:214], side + side)
    assert x[214] == 0.0  # equal pip counts
    np.testing.assert_array_equal(x[:198], ref.encode_numpy(start[None, :52], 0)[0])
    assert sorted(nz[:n]) == list(np.flatnonzero(x))


# --- the networks -----------------------------------------------------------------------------
def test_arch_round_trip_and_old_records_unchanged() -> None:
    old = tv.TDArch(80)
    assert "race_hidden" not in old.to_json() and old.param_names == tv.PARAM_NAMES
    assert tv.TDArch.from_json(old.to_json()) == old
    new = tv.TDArch.make(16, features=True, race_hidden=8)
    assert new.to_json()["inputs"] == 215 and new.to_json()["race_hidden"] == 8
    assert tv.TDArch.from_json(new.to_json()) == new
    assert new.shapes()["rW1"] == (215, 8)
    with pytest.raises(ValueError, match="race_hidden"):
        tv.TDArch.from_json({**new.to_json(), "race_hidden": -1})
    with pytest.raises(ValueError, match="inputs"):
        tv.TDArch.from_json({**new.to_json(), "inputs": 198})


def test_each_afterstate_is_valued_by_the_network_of_its_class() -> None:
    p = tv.init_params(tv.TDArch.make(7, True, 5), np.random.default_rng(1), 0.5)
    for b, name in ((BackgammonGame().new_initial_state().s[:52], ""),
                    (board({0: 5, 5: 5}, {0: 5, 3: 5}), "r")):  # fmt: skip
        x = np.zeros(tv.NUM_FEATURE_INPUTS)
        nz = np.zeros(tv.NUM_FEATURE_INPUTS, dtype=np.int64)
        tv.encode_inputs(np.ascontiguousarray(b, dtype=np.int32), 0, x, nz)
        net = {n: p[name + n] for n in tv.PARAM_NAMES}
        _, want = ref.forward_numpy(net, x[None])
        want[ref.ruled_out(np.asarray(b)[None], 0)] = 0.0  # (the race: both have borne off)
        np.testing.assert_allclose(tv.outputs_of(p, b, 0), want[0], atol=1e-12)
        assert tv.evaluate_boards(p, b[None], 0)[0] == pytest.approx(tv.equity(want[0]))


def test_the_shipped_net_still_evaluates_as_the_reference() -> None:
    ckpt = load_checkpoint(ROOT / "agents" / "pretrained" / "backgammon", "backgammon")
    arch = tv.TDArch.from_json(ckpt.meta["arch"])
    assert arch == tv.TDArch(80)
    p = tv.params_from_tensors(arch, ckpt.tensors, "shipped")
    state = BackgammonGame().new_initial_state()
    state.set_dice(6, 4)
    boards = np.ascontiguousarray(state.play_boards(), dtype=np.int32)
    _, y = ref.forward_numpy(p, ref.encode_numpy(boards, state.turn))
    want = 2 * y[:, 0] - 1 + y[:, 1] + y[:, 2] - y[:, 3] - y[:, 4]
    np.testing.assert_allclose(tv.evaluate_boards(p, boards, state.turn), want, atol=1e-12)


# --- training ---------------------------------------------------------------------------------
def test_shipped_features_config_is_valid() -> None:
    cfg = load_config(ROOT / "configs" / "backgammon_td_features.yaml")
    assert isinstance(cfg, TDConfig) and cfg.features and cfg.race_hidden > 0
    with pytest.raises(ConfigError, match="race_hidden"):
        build_config({"algorithm": "td", "race_hidden": -2})


def test_resume_is_exact_and_the_checkpoint_plays_its_weights(tmp_path: Path) -> None:
    whole = tiny(tmp_path / "a")
    td.train(whole, log=quiet)
    part = tiny(tmp_path / "b", stop_after_games=30)
    td.train(part, log=quiet)
    ckpts = Path(part.run_dir) / "checkpoints"
    (ckpts / "games_000000030.json").unlink()
    (ckpts / "latest.txt").write_text("games_000000020\n")
    td.train(tiny(tmp_path / "b"), resume=True, log=quiet)
    a = load_file(str(Path(whole.run_dir) / "final.safetensors"))
    b = load_file(str(Path(part.run_dir) / "final.safetensors"))
    assert sorted(a) == sorted(f"model.{n}" for n in tv.PARAM_NAMES + tv.RACE_PARAM_NAMES)
    for name in a:
        np.testing.assert_array_equal(a[name].numpy(), b[name].numpy())
    assert not np.array_equal(a["model.rb1"].numpy(), 0.0)  # the race net was trained
    # checkpoint round trip: the agent plays exactly the saved weights, 1-ply and 2-ply
    path = Path(whole.run_dir) / "final"
    meta = json.loads(path.with_suffix(".json").read_text())
    assert meta["arch"] == tv.TDArch.make(16, True, 8).to_json()
    agent = make_agent(f"checkpoint:{path}", "backgammon", seed=0)
    assert isinstance(agent, tv.TDValueAgent)
    for name in a:
        np.testing.assert_array_equal(agent.params[name[6:]], a[name].numpy())
    state = BackgammonGame().new_initial_state()
    state.set_dice(5, 2)
    boards = state.play_boards()
    np.testing.assert_array_equal(
        agent.play_values(state), tv.evaluate_boards(agent.params, boards, state.turn)
    )
    report = evaluate("backgammon", [f"checkpoint:{path}:ply=2,keep=2", "random"], seeds=1)
    assert report.pairs[0].games == 2


def test_two_ply_of_a_race_net_averages_the_class_aware_replies() -> None:
    p = tv.init_params(tv.TDArch.make(6, True, 4), np.random.default_rng(2), 0.4)
    agent = tv.TDValueAgent(p, ply=2, keep=1)
    state = BackgammonGame().new_initial_state()
    state.s[:52] = board({0: 3, 2: 3, 4: 3, 7: 3, 9: 3}, {1: 3, 3: 3, 5: 3, 8: 3, 10: 3})
    state.set_dice(4, 2)
    assert tf.is_race(state.s)
    values = agent.play_values(state)
    one_ply = tv.evaluate_boards(p, state.play_boards(), state.turn)
    best = int(np.argmax(one_ply))
    total = 0.0
    for d1 in range(1, 7):
        for d2 in range(1, 7):
            after = state.clone()
            after.apply_play(best)
            after.set_dice(d1, d2)
            total -= tv.evaluate_boards(p, after.play_boards(), after.turn).max()
    assert values[best] == pytest.approx(total / 36, abs=1e-12)


def test_a_short_run_with_features_learns_to_beat_random(tmp_path: Path) -> None:
    cfg = tiny(tmp_path, hidden=16, race_hidden=8, total_games=1000, chunk_games=500,
               checkpoint_interval=1000)  # fmt: skip
    td.train(cfg, log=quiet)
    final = f"checkpoint:{Path(cfg.run_dir) / 'final'}"
    report = evaluate("backgammon", [final, "random"], seeds=50, seed=321)
    assert report.pairs[0].win_rate > 0.85 and report.pairs[0].mean_reward > 1.0
