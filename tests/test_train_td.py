"""TD(lambda) backgammon training (train/td.py) and its agent (agents/backgammon/td_value.py)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import torch
from safetensors.torch import load_file
from spieltisch.agents.arena import evaluate
from spieltisch.agents.backgammon import td_value as tv
from spieltisch.agents.neural.checkpoint import CheckpointError, load_checkpoint, save_checkpoint
from spieltisch.agents.registry import make_agent
from spieltisch.envs.backgammon import rules as k
from spieltisch.envs.backgammon.engine import BackgammonGame
from spieltisch.train import td
from spieltisch.train import td_reference as ref
from spieltisch.train.cli import main as cli_main
from spieltisch.train.config import ConfigError, TDConfig, build_config, load_config

ROOT = Path(__file__).resolve().parents[1]


def tiny(tmp_path: Path, **over) -> TDConfig:
    data = {
        "algorithm": "td",
        "game": "backgammon",
        "hidden": 8,
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


def weights(path: Path) -> dict[str, np.ndarray]:
    return {n: v.numpy() for n, v in load_file(str(path)).items()}


def quiet(*_args) -> None:
    pass


# --- config -------------------------------------------------------------------------------
def test_shipped_config_is_valid() -> None:
    cfg = load_config(ROOT / "configs" / "backgammon_td.yaml")
    assert isinstance(cfg, TDConfig)
    assert (cfg.game, cfg.algorithm, cfg.hidden) == ("backgammon", "td", 80)


@pytest.mark.parametrize(
    "over, words",
    [
        ({"lamda": 0.5}, "unknown key 'lamda'"),
        ({"lam": 1.5}, "'lam'"),
        ({"lr": "fast"}, "'lr'"),
        ({"game": "kalaha"}, "backgammon"),
        ({"game_options": {"cube": True}}, "cube"),
        ({"hidden": 0}, "'hidden'"),
        ({"eval_opponent": "nobody"}, "key 'eval_opponent': unknown agent 'nobody'"),
        ({"eval_opponent": "human"}, "key 'eval_opponent': agent 'human' cannot play here"),
        # found at the final evaluation once, after the training, when the run could not change
        ({"eval_opponent": "pretrained:backgammon:plyy=2"}, "key 'eval_opponent': .*'plyy'"),
        ({"eval_opponent": "checkpoint:/no/such/net"}, "key 'eval_opponent': .*does not exist"),
    ],
)
def test_bad_config_is_rejected_clearly(over: dict, words: str) -> None:
    data = {"algorithm": "td", "game": "backgammon", **over}
    with pytest.raises(ConfigError, match=words):
        build_config(data)


# --- the net --------------------------------------------------------------------------------
def random_positions(count: int, seed: int = 0) -> list[tuple[np.ndarray, int]]:
    """Afterstates of random games (board, mover)."""
    rng = np.random.default_rng(seed)
    game = BackgammonGame()
    out = []
    state = game.new_initial_state()
    while len(out) < count:
        if state.is_terminal():
            state = game.new_initial_state()
        state.roll_dice(rng)
        index = int(rng.integers(state.num_plays()))
        out.append((state.play_boards()[index].astype(np.int32), state.turn))
        state.apply_play(index)
    return out


def test_encoding_matches_the_numpy_encoder_and_the_documented_layout() -> None:
    x = np.zeros(tv.NUM_INPUTS)
    nz = np.zeros(tv.NUM_INPUTS, dtype=np.int64)
    for board, mover in random_positions(300):
        n = tv.encode(board, mover, x, nz)
        np.testing.assert_array_equal(x, ref.encode_numpy(board[None], mover)[0])
        assert sorted(nz[:n]) == list(np.flatnonzero(x))
    # the starting position seen by seat 0: 2 on its 24-point, 5 on 13, 3 on 8, 5 on 6
    start = BackgammonGame().new_initial_state().s
    n = tv.encode(start, 0, x, nz)
    assert list(x[4 * 23 : 4 * 24]) == [1, 1, 0, 0]
    assert list(x[4 * 12 : 4 * 13]) == [1, 1, 1, 1]  # 5 checkers: (5 - 3) / 2
    assert list(x[4 * 7 : 4 * 8]) == [1, 1, 1, 0]
    assert x[196] == x[197] == 1.67  # 167 pips each
    assert x[96] == x[97] == 0


def test_gradients_equal_torch_autograd() -> None:
    rng = np.random.default_rng(1)
    p = tv.init_params(tv.TDArch(12), rng, 0.5)
    for board, mover in random_positions(5, seed=2):
        x = np.zeros(tv.NUM_INPUTS)
        nz = np.zeros(tv.NUM_INPUTS, dtype=np.int64)
        n = tv.encode(board, mover, x, nz)
        h, y = np.zeros(12), np.zeros(tv.NUM_OUTPUTS)
        tv.forward(p["W1"], p["b1"], p["W2"], p["b2"], x, nz, n, h, y)
        traces = {
            "W1": np.zeros((5, 198, 12)),
            "b1": np.zeros((5, 12)),
            "W2": np.zeros((5, 5, 12)),
            "b2": np.zeros((5, 5)),
        }
        active = np.zeros(198, dtype=np.bool_)
        td._add_gradient(
            p["W2"], x, nz, n, h, y, traces["W1"], traces["b1"], traces["W2"], traces["b2"], active
        )
        t = {name: torch.tensor(a, requires_grad=True) for name, a in p.items()}
        hidden = torch.sigmoid(torch.tensor(x) @ t["W1"] + t["b1"])
        out = torch.sigmoid(t["W2"] @ hidden + t["b2"])
        np.testing.assert_allclose(out.detach().numpy(), y, atol=1e-14)
        for o in range(tv.NUM_OUTPUTS):
            grads = torch.autograd.grad(out[o], list(t.values()), retain_graph=True)
            for name, g in zip(t, grads, strict=True):
                np.testing.assert_allclose(traces[name][o], g.numpy(), atol=1e-14)
        assert set(np.flatnonzero(active)) == set(nz[:n])


@pytest.mark.parametrize("lam", [0.0, 0.7, 1.0])
def test_compiled_trainer_equals_the_numpy_reference(lam: float) -> None:
    """Same dice, same net: the compiled learner and the plain numpy one (independent encoder,
    matrix forward pass, whole-array traces) end with the same weights and games."""
    p = tv.init_params(tv.TDArch(10), np.random.default_rng(3), 0.3)
    q = {n: a.copy() for n, a in p.items()}
    r1, r2 = np.random.default_rng(5), np.random.default_rng(5)
    stats = np.zeros((3, 5))
    td.train_games(
        p["W1"], p["b1"], p["W2"], p["b2"], td.initial_vector(), 3, 0,
        0.1, 0.1, 1, lam, r1, k.new_workspace(), stats,
    )  # fmt: skip
    moves = ref.train_games_numpy(q, 3, 0.1, lam, r2)
    np.testing.assert_array_equal(stats[:, td.ST_MOVES], moves)
    for name in p:
        np.testing.assert_allclose(p[name], q[name], atol=1e-12)
    assert r1.integers(1 << 30) == r2.integers(1 << 30)  # the same dice were used


def test_flip_and_results() -> None:
    y = np.array([0.6, 0.2, 0.05, 0.1, 0.01])
    out = np.zeros(5)
    tv.flip(y, out)
    np.testing.assert_allclose(out, [0.4, 0.1, 0.01, 0.2, 0.05])
    assert tv.equity(out) == pytest.approx(-tv.equity(y))
    # a gammon: the loser (seat 1) has borne off nothing, no checker in the winner's home
    board = np.zeros(k.BOARD_SIZE, dtype=np.int32)
    board[k.OFF] = 15
    board[k.SIDE + 3] = 15
    tv.result_outputs(board, 0, out)
    assert list(out) == [1, 1, 0, 0, 0]
    board[k.SIDE + 3], board[k.SIDE + k.BAR] = 14, 1  # on the bar: a backgammon
    tv.result_outputs(board, 0, out)
    assert list(out) == [1, 1, 1, 0, 0]


# --- runs, checkpoints, resume -----------------------------------------------------------
def test_tiny_run_end_to_end_writes_a_loadable_agent(tmp_path: Path) -> None:
    cfg = tiny(tmp_path, tensorboard=True, final_eval_games=4, eval_interval=20, eval_games=2)
    lines: list[str] = []
    result = td.train(cfg, log=lines.append)
    run = Path(cfg.run_dir)
    assert result["games"] == 60
    # 2 games are one seed (one paired observation): no interval is claimed for them
    periodic = [line for line in lines if " ppg" in line and "over 2 games" in line]
    assert periodic and all("ppg (no interval from 1 seed) over 2 games" in x for x in periodic)
    assert json.loads((run / "config.resolved.json").read_text())["algorithm"] == "td"
    final_eval = json.loads((run / "final_eval.json").read_text())
    assert final_eval["games"] == 4 and final_eval["opponent"] == "pubeval"
    assert "ppg_low" in final_eval and "ppg_high" in final_eval
    assert list((run / "tb").iterdir())
    ckpt = load_checkpoint(run / "final", "backgammon")
    assert ckpt.meta["arch"]["kind"] == "td_value" and ckpt.meta["games"] == 60
    assert ckpt.meta["metrics"]["final/ppg"] == final_eval["ppg"]
    assert ckpt.meta["config"]["hidden"] == 8 and "git_revision" in ckpt.meta
    assert len(json.loads((run / "checkpoints" / "games_000000060.json").read_text())
               ["trainer"]["evals"]) == 3  # fmt: skip
    agent = make_agent(f"checkpoint:{run / 'final'}", "backgammon", seed=0)
    assert isinstance(agent, tv.TDValueAgent)
    # the end of the run in words: the evaluation, the files, the commands (no best: TD)
    summary = result["summary"]
    ppg = f"{final_eval['ppg']:+.3f} points per game, 95% interval [{final_eval['ppg_low']:+.3f}"
    assert f"4 games against pubeval (seats swapped, paired dice): {ppg}" in summary
    assert f"spieltisch eval backgammon --agents checkpoint:{run / 'final'} pubeval" in summary
    report = evaluate("backgammon", [f"checkpoint:{run / 'final'}", "random"], seeds=2)
    assert report.pairs[0].games == 4


def test_cli_dispatches_td(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    config = tmp_path / "td.yaml"
    config.write_text((ROOT / "configs" / "backgammon_td.yaml").read_text())
    run = tmp_path / "cli_run"
    code = cli_main([
        "train", str(config), "--set", "hidden=4", "--set", "total_games=8",
        "--set", "chunk_games=4", "--set", "eval_interval=0", "--set", "final_eval_games=0",
        "--set", "progress=false", "--set", "tensorboard=false", "--set", f"run_dir={run}",
    ])  # fmt: skip
    assert code == 0
    # the JSON goes to final_eval.json; the command prints a summary naming the files
    assert json.loads((run / "final_eval.json").read_text())["training_games"] == 8
    out = capsys.readouterr().out
    assert "Training finished at game 8" in out and f"checkpoint:{run / 'final'}" in out
    assert (run / "final.safetensors").exists()


def test_killed_and_resumed_run_equals_an_uninterrupted_one(tmp_path: Path) -> None:
    whole = tiny(tmp_path / "a")
    td.train(whole, log=quiet)
    # killed after 30 games (a checkpoint at 20 and one written on stopping at 30) ...
    part = tiny(tmp_path / "b", stop_after_games=30)
    result = td.train(part, log=quiet)
    assert result["games"] == 30 and "final_eval" not in result
    # ... a kill between checkpoints loses what came after the last one: drop the one at 30
    ckpts = Path(part.run_dir) / "checkpoints"
    (ckpts / "games_000000030.json").unlink()
    (ckpts / "latest.txt").write_text("games_000000020\n")
    messages: list[str] = []
    resumed = tiny(tmp_path / "b")
    td.train(resumed, resume=True, log=messages.append)
    assert "at game 20" in messages[0]
    a = weights(Path(whole.run_dir) / "final.safetensors")
    b = weights(Path(resumed.run_dir) / "final.safetensors")
    for name in a:
        np.testing.assert_array_equal(a[name], b[name])
    meta_a = json.loads((Path(whole.run_dir) / "checkpoints" / "games_000000060.json").read_text())
    meta_b = json.loads((ckpts / "games_000000060.json").read_text())
    assert meta_a["trainer"]["rng"] == meta_b["trainer"]["rng"]
    assert meta_a["moves"] == meta_b["moves"]


def test_resume_refuses_a_changed_config_and_a_missing_checkpoint(tmp_path: Path) -> None:
    cfg = tiny(tmp_path, total_games=20)
    with pytest.raises(CheckpointError, match="no checkpoint"):
        td.train(cfg, resume=True, log=quiet)
    td.train(cfg, log=quiet)
    with pytest.raises(CheckpointError, match="'lr'"):
        td.train(tiny(tmp_path, total_games=40, lr=0.05), resume=True, log=quiet)
    # more games is a resumable change
    assert td.train(tiny(tmp_path, total_games=40), resume=True, log=quiet)["games"] == 40


def test_fixed_seed_is_reproducible_and_seeds_differ(tmp_path: Path) -> None:
    runs = [tiny(tmp_path / n, total_games=20, seed=s) for n, s in (("a", 1), ("b", 1), ("c", 2))]
    for cfg in runs:
        td.train(cfg, log=quiet)
    a, b, c = (weights(Path(cfg.run_dir) / "final.safetensors") for cfg in runs)
    for name in a:
        np.testing.assert_array_equal(a[name], b[name])
    assert not np.array_equal(a["model.W1"], c["model.W1"])


def test_damaged_checkpoint_fails_clearly(tmp_path: Path) -> None:
    cfg = tiny(tmp_path, total_games=20)
    td.train(cfg, log=quiet)
    final = Path(cfg.run_dir) / "final.safetensors"
    data = bytearray(final.read_bytes())
    data[len(data) // 2] ^= 0xFF
    final.write_bytes(bytes(data))
    with pytest.raises(CheckpointError, match="damaged"):
        load_checkpoint(final)
    with pytest.raises(ValueError, match="damaged"):
        make_agent(f"checkpoint:{final}", "backgammon")
    latest = Path(cfg.run_dir) / "checkpoints" / "games_000000020.safetensors"
    latest.write_bytes(latest.read_bytes()[:100])
    with pytest.raises(CheckpointError, match="damaged"):
        td.train(tiny(tmp_path, total_games=40), resume=True, log=quiet)


def test_wrong_shapes_in_a_td_checkpoint_fail_clearly(tmp_path: Path) -> None:
    p = tv.init_params(tv.TDArch(6), np.random.default_rng(0))
    meta = {"game": "backgammon", "arch": tv.TDArch(7).to_json(), "game_options": {}}
    save_checkpoint(tmp_path / "x", meta, {f"model.{n}": torch.from_numpy(a) for n, a in p.items()})
    with pytest.raises(ValueError, match="shape"):
        make_agent(f"checkpoint:{tmp_path / 'x'}", "backgammon")


# --- learning ------------------------------------------------------------------------------
def test_a_short_run_learns(tmp_path: Path) -> None:
    """2,000 self-play games (a few seconds) turn a random net that loses to the pip-count
    ``greedy`` baseline into one that beats it; a broken learner (wrong sign, no traces, no
    update) stays below."""
    cfg = tiny(tmp_path, hidden=16, total_games=2000, chunk_games=500, checkpoint_interval=1000)
    untrained = tmp_path / "untrained"
    rng = np.random.default_rng(cfg.seed)
    params = tv.init_params(tv.TDArch(16), rng, cfg.init_scale)  # what the run starts from
    meta = {"game": "backgammon", "arch": tv.TDArch(16).to_json(), "game_options": {}}
    save_checkpoint(untrained, meta, {f"model.{n}": torch.from_numpy(a) for n, a in params.items()})
    td.train(cfg, log=quiet)
    before = evaluate("backgammon", [f"checkpoint:{untrained}", "greedy"], seeds=50, seed=123)
    after = evaluate(
        "backgammon", [f"checkpoint:{Path(cfg.run_dir) / 'final'}", "greedy"], seeds=50, seed=123
    )
    assert before.pairs[0].win_rate < 0.4
    assert after.pairs[0].win_rate > 0.6 and after.pairs[0].mean_reward > 0.3


# --- the shipped agent ----------------------------------------------------------------------
def test_pretrained_backgammon_loads_and_beats_random() -> None:
    agent = make_agent("pretrained:backgammon", "backgammon", seed=0)
    assert isinstance(agent, tv.TDValueAgent)
    meta = json.loads((ROOT / "agents" / "pretrained" / "backgammon.json").read_text())
    assert meta["arch"]["kind"] == "td_value"
    assert "spieltisch train configs/backgammon_td.yaml" in meta["reproduce"]["train"]
    report = evaluate("backgammon", ["pretrained:backgammon", "random"], seeds=20, seed=5)
    assert report.pairs[0].win_rate >= 0.9


def test_two_ply_agent_plays_legal_games_and_parameters_are_checked() -> None:
    agent = make_agent("pretrained:backgammon:ply=2,keep=4", "backgammon", seed=0)
    assert isinstance(agent, tv.TDValueAgent) and (agent.ply, agent.keep) == (2, 4)
    report = evaluate("backgammon", ["pretrained:backgammon:ply=2,keep=3", "random"], seeds=1)
    assert report.pairs[0].games == 2
    with pytest.raises(ValueError, match="ply must be 1, 2 or 3"):
        make_agent("pretrained:backgammon:ply=4", "backgammon")
    with pytest.raises(ValueError, match="ply must be 1, 2 or 3, got True"):
        make_agent("pretrained:backgammon:ply=true", "backgammon")
    with pytest.raises(ValueError, match=r"plies must be 0\.\.3, got True"):
        make_agent("gnubg:plies=true", "backgammon")
    with pytest.raises(ValueError, match="reply_keep must be a positive integer"):
        make_agent("pretrained:backgammon:ply=3,reply_keep=0", "backgammon")
    # keep filters a 2- or 3-ply lookahead, reply_keep a 3-ply one: elsewhere they did nothing
    for idle in ("keep=3", "ply=1,keep=3", "reply_keep=2", "ply=2,reply_keep=2"):
        with pytest.raises(ValueError, match="filters the candidates of a deeper lookahead"):
            make_agent(f"pretrained:backgammon:{idle}", "backgammon")
    p = tv.init_params(tv.TDArch(8), np.random.default_rng(7), 0.3)  # the Python API too
    for idle in ({"keep": 3}, {"ply": 2, "reply_keep": 2}):
        with pytest.raises(ValueError, match="filters the candidates of a deeper lookahead"):
            tv.TDValueAgent(p, **idle)
    default = tv.TDValueAgent(p, ply=3)
    assert (default.keep, default.reply_keep) == (8, 2)
    with pytest.raises(ValueError, match="'ply', 'keep' and 'reply_keep'"):
        make_agent("pretrained:backgammon:search=2", "backgammon")


def two_ply_reference(p: dict, after: Any) -> float:
    """The 2-ply value of afterstate ``after`` (the opponent about to roll) for the player who
    made it, by the state API: minus the opponent's best 1-ply reply, averaged over 36 rolls."""
    total = 0.0
    for d1 in range(1, 7):
        for d2 in range(1, 7):
            rolled = after.clone()
            rolled.set_dice(d1, d2)
            total -= tv.evaluate_boards(p, rolled.play_boards(), rolled.turn).max()
    return total / 36


def test_two_ply_values_average_the_replies() -> None:
    """With keep=1 only the best 1-ply play is searched; its 2-ply value is the mean over the 36
    rolls of minus the opponent's best reply value, which we recompute here with the 1-ply
    evaluator and the state API."""
    p = tv.init_params(tv.TDArch(8), np.random.default_rng(4), 0.3)
    game = BackgammonGame()
    state = game.new_initial_state()
    state.set_dice(3, 1)
    boards = np.ascontiguousarray(state.play_boards(), dtype=np.int32)
    values = np.zeros(len(boards))
    replies = np.zeros((k.MAX_PLAYS, k.BOARD_SIZE), dtype=np.int32)
    tv.play_values_2ply(
        p["W1"], p["b1"], p["W2"], p["b2"], state.s.copy(), boards, len(boards), state.turn, 1,
        values, k.new_workspace(), replies,
    )  # fmt: skip
    one_ply = tv.evaluate_boards(p, boards, state.turn)
    best = int(np.argmax(one_ply))
    assert int(np.argmax(values)) == best
    after = state.clone()
    after.apply_play(best)
    assert values[best] == pytest.approx(two_ply_reference(p, after), abs=1e-12)


def test_three_ply_values_take_the_opponents_best_two_ply_reply_of_its_filtered_plays() -> None:
    """keep=1: only the best 1-ply play is searched; for each of the opponent's 36 rolls its
    reply_keep=2 best replies by 1-ply value are valued by 2 plies (recomputed here with the
    state API) and the best of them counts against the mover."""
    p = tv.init_params(tv.TDArch(8), np.random.default_rng(7), 0.3)
    state = BackgammonGame().new_initial_state()
    state.set_dice(6, 4)
    agent = tv.TDValueAgent(p, ply=3, keep=1, reply_keep=2)
    values = agent.play_values(state)
    one_ply = tv.evaluate_boards(p, state.play_boards(), state.turn)
    best = int(np.argmax(one_ply))
    assert int(np.argmax(values)) == best
    others = np.delete(np.arange(len(values)), best)
    np.testing.assert_array_equal(values[others], one_ply[others] - 1000.0)
    total = 0.0
    for d1 in range(1, 7):
        for d2 in range(1, 7):
            rolled = state.clone()
            rolled.apply_play(best)
            rolled.set_dice(d1, d2)
            replies = tv.evaluate_boards(p, rolled.play_boards(), rolled.turn)
            candidates = np.argsort(-replies, kind="stable")[:2]
            reply_values = []
            for q in candidates:
                after = rolled.clone()
                after.apply_play(int(q))
                reply_values.append(two_ply_reference(p, after))
            total -= max(reply_values)
    assert values[best] == pytest.approx(total / 36, abs=1e-12)


def test_a_second_stage_starts_from_a_checkpoint(tmp_path: Path) -> None:
    first = tiny(tmp_path / "a", total_games=20)
    td.train(first, log=quiet)
    final = Path(first.run_dir) / "final"
    second = tiny(
        tmp_path / "b", total_games=10, lr=0.01, lr_final=0.01, init_from=str(final), seed=3
    )
    messages: list[str] = []
    td.train(second, log=messages.append)
    assert "initialised from" in messages[0]
    meta = json.loads((Path(second.run_dir) / "final.json").read_text())
    assert (meta["games"], meta["games_total"], meta["init_from"]) == (10, 30, str(final))
    # stage 2 from stage 1's weights equals the compiled trainer run on them directly
    expected = weights(final.with_suffix(".safetensors"))
    got = weights(Path(second.run_dir) / "final.safetensors")
    # the second run drew its (unused) initial weights from the generator first
    rng = np.random.default_rng(3)
    tv.init_params(tv.TDArch(8), rng, 0.1)
    q = {name[6:]: a.copy() for name, a in expected.items()}
    td.train_games(
        q["W1"], q["b1"], q["W2"], q["b2"], td.initial_vector(), 10, 0, 0.01, 0.01, 1, 0.7,
        rng, k.new_workspace(), np.zeros((10, 5)),
    )  # fmt: skip
    for name in q:
        np.testing.assert_array_equal(got[f"model.{name}"], q[name])
    with pytest.raises(CheckpointError, match="hidden"):
        td.train(tiny(tmp_path / "c", hidden=9, init_from=str(final)), log=quiet)


@pytest.mark.parametrize(
    ("name", "hidden", "race_hidden", "features"),
    [("pretrained:backgammon", 80, 0, False),
     ("pretrained:backgammon:algo=td_features", 128, 64, True)],
)  # fmt: skip
def test_a_second_stage_starts_from_a_shipped_net_by_name(
    tmp_path: Path, name: str, hidden: int, race_hidden: int, features: bool
) -> None:
    cfg = tiny(
        tmp_path, total_games=2, hidden=hidden, race_hidden=race_hidden, features=features,
        init_from=name,
    )  # fmt: skip
    messages: list[str] = []
    td.train(cfg, log=messages.append)
    _, shipped, games = tv.load_td_net(name)
    meta = json.loads((Path(cfg.run_dir) / "final.json").read_text())
    assert (meta["init_from"], meta["games_total"]) == (name, games + 2)
    assert f"initialised from {name} ({games} games)" in messages[0]
    trained = weights(Path(cfg.run_dir) / "final.safetensors")
    assert trained["model.W1"].shape == shipped["W1"].shape
    assert not np.array_equal(trained["model.W1"], shipped["W1"])  # two games of learning


@pytest.mark.parametrize("name", ["pretrained:kalaha", "pretrained:backgammonx", ""])
def test_init_from_names_another_games_net_is_a_config_error(tmp_path: Path, name: str) -> None:
    with pytest.raises(ConfigError, match="init_from"):
        tiny(tmp_path, init_from=name)


def test_a_start_net_may_be_named_as_checkpoint_path() -> None:
    """init_from: checkpoint:PATH (as init_checkpoint takes it elsewhere) was read as a file
    named 'checkpoint:PATH' that does not exist."""
    from pathlib import Path

    path = Path(__file__).resolve().parents[1] / "agents" / "pretrained" / "backgammon"
    arch, params, games = tv.load_td_net(f"checkpoint:{path}")
    bare = tv.load_td_net(str(path))
    assert (arch, games) == bare[0::2]
    assert all(np.array_equal(params[k], bare[1][k]) for k in params)
