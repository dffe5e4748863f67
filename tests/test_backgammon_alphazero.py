"""Gumbel AlphaZero for backgammon (train/alphazero_backgammon.py): its torch net is the TD
value net (outputs equal to the numba forward pass), its loss and replay buffer, a killed and
resumed run equals an uninterrupted one bit for bit, its checkpoints are TD checkpoints that
play 1-ply and with search, a fresh net learns to beat ``random``, bad config values are
refused clearly."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
import torch
from run_helpers import lose_newest_checkpoint
from spieltisch.agents.arena import evaluate
from spieltisch.agents.backgammon import td_value as tv
from spieltisch.agents.backgammon.chance_search import TDSearchAgent
from spieltisch.agents.neural.agents import pretrained_path
from spieltisch.agents.neural.checkpoint import CheckpointError, load_checkpoint, save_checkpoint
from spieltisch.agents.registry import make_agent
from spieltisch.envs.backgammon import rules as k
from spieltisch.envs.backgammon.batch import BackgammonBatch
from spieltisch.envs.backgammon.engine import BackgammonGame
from spieltisch.train import alphazero_backgammon as ab
from spieltisch.train.cli import main as cli_main
from spieltisch.train.config import AlphaZeroConfig, ConfigError, build_config, load_config
from spieltisch.train.run_files import latest_checkpoint
from spieltisch.train.run_loop import final_eval_seed
from spieltisch.train.td import arena_eval

ROOT = Path(__file__).resolve().parents[1]


def config(tmp_path: Path, name: str, *extra: str) -> AlphaZeroConfig:
    return build_config(
        {"game": "backgammon", "algorithm": "alphazero"},
        [
            f"run_dir={tmp_path / name}",
            "hidden=[8]",
            "num_games=4",
            "num_simulations=2",
            "batch_size=16",
            "sample_reuse=1.0",
            "total_positions=100000",
            "checkpoint_interval=2",
            "eval_interval=0",
            "final_eval_games=0",
            "progress=false",
            "tensorboard=false",
            *extra,
        ],
    )


def quiet(*_args) -> None:
    pass


def random_afterstates(num_games: int, moves: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """The afterstate boards of every legal play of positions from random games, with their
    movers (finished games' last plays included: some bear off the last checker)."""
    batch = BackgammonBatch(BackgammonGame(), num_games, seed=seed, threads=1)
    boards, movers = [], []
    for _ in range(moves):
        offsets, plays, _ = batch.legal_plays()
        boards.append(plays)
        movers.append(np.repeat(batch.current_player, np.diff(offsets)))
        batch.step_random_plays()
        if batch.terminal.all():
            batch.reset()
    return np.concatenate(boards), np.concatenate(movers)


# --- the network ---------------------------------------------------------------------------
@pytest.mark.parametrize("which", ["random", "pretrained"])
def test_torch_forward_equals_the_numba_forward(which: str) -> None:
    if which == "random":
        params = tv.init_params(tv.TDArch(12), np.random.default_rng(3), scale=0.5)
    else:
        params = tv.params_from_tensors(
            tv.TDArch(80), load_checkpoint(pretrained_path("backgammon", {})).tensors, "shipped"
        )
    boards, movers = random_afterstates(8, 400, seed=1)
    x, final, exact, possible = ab.encode_afterstates(boards, movers, tv.NUM_INPUTS)
    assert final.any() and not final.all()
    assert (possible[~final] == 0).any()  # positions with a gammon ruled out are among them
    net = ab.TDNet(params)
    with torch.no_grad():
        y = torch.where(
            torch.from_numpy(final)[:, None],
            torch.from_numpy(exact),
            net(torch.from_numpy(x)) * torch.from_numpy(possible),
        )
    reference = np.stack(
        [tv.afterstate_outputs(params, b[None], m)[0] for b, m in zip(boards, movers, strict=True)]
    )
    np.testing.assert_allclose(y.numpy(), reference, rtol=0, atol=1e-12)
    values = ab.equity_of(y, win_only=False).numpy()
    for m in (0, 1):
        rows = movers == m
        np.testing.assert_allclose(
            values[rows], tv.evaluate_boards(params, boards[rows], m), atol=1e-12
        )
    assert {n: a.shape for n, a in net.numpy_params().items()} == tv.TDArch(
        net.b1.shape[0]
    ).shapes()


def test_loss_matches_a_plain_reference_and_the_buffer_keeps_the_newest() -> None:
    rng = np.random.default_rng(0)
    params = tv.init_params(tv.TDArch(6), rng, scale=0.5)
    boards, movers = random_afterstates(4, 60, seed=2)
    replay = ab.DecisionReplay(capacity=5)
    counts = np.array([3, 1, 4, 2, 5, 2, 3])
    n_plays = int(counts.sum())
    decisions = {
        "counts": counts,
        "mover": movers[:7].astype(np.int8),
        "chosen": np.array([2, 0, 1, 1, 4, 0, 2]),
        "target": rng.integers(0, 2, size=(7, 5)).astype(np.int8),
        "boards": boards[:n_plays],
        "policy": np.concatenate([rng.dirichlet(np.ones(c)) for c in counts]).astype(np.float32),
    }
    decisions["boards"][:, k.SIDE * 0 + k.OFF] = 0  # no finished afterstates here
    decisions["boards"][:, k.SIDE * 1 + k.OFF] = 0
    replay.add({n: v[:3] if n in replay.DECISION_FIELDS else v[:8] for n, v in decisions.items()})
    replay.add({n: v[3:] if n in replay.DECISION_FIELDS else v[8:] for n, v in decisions.items()})
    assert replay.size == 5 and list(replay.counts) == [4, 2, 5, 2, 3]  # the oldest 2 dropped
    assert len(replay.boards) == 16 and np.array_equal(replay.boards, decisions["boards"][4:])
    sample = replay.sample(6, np.random.default_rng(1))
    batch = ab.minibatch_tensors(sample, tv.NUM_INPUTS, "cpu")
    net = ab.TDNet(params)
    loss, parts = ab.backgammon_alphazero_loss(net, batch, 0.05, 0.7, 1.3)
    # reference: decision by decision, in numpy
    x, seg = batch["x"].numpy(), sample["segment"]
    y = 1 / (
        1
        + np.exp(
            -(
                1 / (1 + np.exp(-(x @ params["W1"] + params["b1"]))) @ params["W2"].T
                - params["b2"] * -1
            )
        )
    )
    u = 2 * y[:, 0] - 1 + y[:, 1] + y[:, 2] - y[:, 3] - y[:, 4]
    policy, value = 0.0, 0.0
    for d in range(6):
        rows = seg == d
        logits = u[rows] / 0.05
        log_p = logits - logits.max() - np.log(np.exp(logits - logits.max()).sum())
        policy -= (sample["policy"][rows] * log_p).sum() / 6
        yc, z = y[sample["chosen"][d]], sample["target"][d]
        value -= (z * np.log(yc) + (1 - z) * np.log(1 - yc)).sum() / 6
    assert parts["loss/policy"] == pytest.approx(policy, rel=1e-9)
    assert parts["loss/value"] == pytest.approx(value, rel=1e-9)
    assert loss.item() == pytest.approx(0.7 * value + 1.3 * policy, rel=1e-9)


# --- runs ------------------------------------------------------------------------------------
def checkpoint_of(run_dir: Path):
    return load_checkpoint(latest_checkpoint(run_dir))


def test_killed_and_resumed_run_equals_uninterrupted_run(tmp_path) -> None:
    whole = ab.train(config(tmp_path, "whole", "stop_after_iterations=4"), log=quiet)
    first = ab.train(config(tmp_path, "split", "stop_after_iterations=3"), log=quiet)
    lose_newest_checkpoint(tmp_path / "split")  # killed after iteration 3
    assert first["iteration"] == 3
    assert checkpoint_of(tmp_path / "split").meta["iteration"] == 2
    resumed = ab.train(config(tmp_path, "split", "stop_after_iterations=2"), resume=True, log=quiet)
    assert resumed["iteration"] == whole["iteration"] == 4
    assert resumed["global_step"] == whole["global_step"] and resumed["games"] == 16
    a, b = checkpoint_of(tmp_path / "whole"), checkpoint_of(tmp_path / "split")
    assert sorted(a.tensors) == sorted(b.tensors)
    assert any(n.startswith("replay.") for n in a.tensors)
    assert any(n.startswith("optim.") for n in a.tensors)
    for name in a.tensors:
        assert torch.equal(a.tensors[name], b.tensors[name]), name
    assert a.meta["trainer"] == b.meta["trainer"]  # generator, optimizer settings


def test_checkpoints_are_td_agents_with_and_without_search(tmp_path) -> None:
    cfg = config(tmp_path, "agent", "total_positions=100", "final_eval_games=2")
    result = ab.train(cfg, log=quiet)
    assert result["final_eval"]["vs_random"]["games"] == 2
    assert "checkpoint:" in result["summary"]
    path = tmp_path / "agent" / "final"
    meta = json.loads(path.with_suffix(".json").read_text())
    assert tv.is_td_checkpoint(meta) and meta["algorithm"] == "alphazero"
    plain = make_agent(f"checkpoint:{path}", "backgammon", seed=0)
    searching = make_agent(f"checkpoint:{path}:sims=4", "backgammon", seed=0)
    assert type(plain) is tv.TDValueAgent and isinstance(searching, TDSearchAgent)
    weights = load_checkpoint(path).tensors
    for name in tv.PARAM_NAMES:
        assert np.array_equal(plain.params[name], weights[f"model.{name}"].numpy())
    for name in (f"checkpoint:{path}", f"checkpoint:{path}:sims=4"):
        report = evaluate("backgammon", [name, "random"], seeds=1, seed=3, bootstrap=0)
        assert report.pairs[0].games == 2


def test_init_checkpoint_starts_from_the_pretrained_net(tmp_path) -> None:
    cfg = config(tmp_path, "init", "init_checkpoint=pretrained:backgammon", "hidden=[80]")
    trainer = ab.BackgammonAlphaZeroTrainer(cfg, log=quiet)
    shipped = load_checkpoint(pretrained_path("backgammon", {})).tensors
    for name, value in trainer.state.net.numpy_params().items():
        assert np.array_equal(value, shipped[f"model.{name}"].numpy())
    assert trainer.state.earlier_games > 0
    with pytest.raises(CheckpointError, match=r"80 hidden units.*set hidden: \[80\]"):
        ab.BackgammonAlphaZeroTrainer(
            config(tmp_path, "x", "init_checkpoint=pretrained:backgammon")
        )
    with pytest.raises(CheckpointError, match="init_checkpoint"):
        ab.BackgammonAlphaZeroTrainer(config(tmp_path, "x", f"init_checkpoint={tmp_path / 'nope'}"))


@pytest.mark.parametrize(
    ("override", "words"),
    [
        ("hidden=[16, 16]", "one hidden layer: give one width"),
        ("residual_blocks=1", "'residual_blocks' must be 0 for backgammon"),
        ("game_options={cube: true}", "plays cubeless"),
        ("game_options={pits: 4}", "takes reward"),
        ("game_options={reward: money}", "must be points or win"),
        ("temperature=0", "'temperature' must be positive"),
        ("policy_weight=-1", "'policy_weight' must be at least 0"),
        (
            "init_checkpoint=pretrained:kalaha",
            "must be pretrained:backgammon\\[:algo=ALGORITHM\\] or the path",
        ),
        ("eval_opponents=[nobody]", "unknown agent 'nobody'"),
        ("num_simulations=0", "'num_simulations' must be at least 1"),
        ("device=tpu", "'device' must be cpu, cuda or auto"),
    ],
)
def test_bad_config_values_are_refused(tmp_path, override: str, words: str) -> None:
    with pytest.raises(ConfigError, match=words):
        config(tmp_path, "bad", override)


def test_backgammon_keys_are_refused_for_other_games() -> None:
    for key in ("temperature=0.1", "policy_weight=2"):
        with pytest.raises(ConfigError, match="for game backgammon only"):
            build_config({"game": "kalaha", "algorithm": "alphazero"}, [key])
    with pytest.raises(ConfigError, match="pretrained:backgammon is not a kalaha network"):
        build_config(
            {"game": "kalaha", "algorithm": "alphazero"}, ["init_checkpoint=pretrained:backgammon"]
        )


def test_shipped_config_and_the_command_line(tmp_path, capsys) -> None:
    path = ROOT / "configs" / "backgammon_alphazero.yaml"
    cfg = load_config(path)
    assert (cfg.game, cfg.algorithm, cfg.init_checkpoint) == (
        "backgammon",
        "alphazero",
        "pretrained:backgammon",
    )
    assert cli_main(["train", str(path), "--ray"]) == 2
    assert "--ray is not supported for backgammon" in capsys.readouterr().err
    sets = [
        "num_games=2",
        "num_simulations=2",
        "total_positions=50",
        "final_eval_games=2",
        "eval_interval=0",
        "progress=false",
        "tensorboard=false",
        f"run_dir={tmp_path / 'cli'}",
    ]
    assert cli_main(["train", str(path), *(a for s in sets for a in ("--set", s))]) == 0
    out = capsys.readouterr().out
    assert "Final evaluation (2 games per opponent" in out
    assert load_checkpoint(tmp_path / "cli" / "final").meta["algorithm"] == "alphazero"


# --- learning ------------------------------------------------------------------------------
def learn(tmp_path: Path, seed: int, lr: float) -> tuple[dict, dict]:
    """A fresh 16-unit net trained from ~28,000 searched positions (4 simulations, 16 games an
    iteration: about 18 iterations, 300 games); returns the arena result against random of the
    initial and of the final net (1-ply, 100 games: 50 seeds, seats swapped, paired dice, the
    final evaluation's seeds)."""
    cfg = config(
        tmp_path, f"learn_{seed}", "hidden=[16]", "num_games=16", "num_simulations=4",
        "batch_size=64", "sample_reuse=2.0", "total_positions=28000", "checkpoint_interval=100",
        f"lr={lr}", "weight_decay=0.0", "final_eval_games=100", "keep_best=false", f"seed={seed}",
    )  # fmt: skip
    arch = tv.TDArch(16)
    params = tv.init_params(arch, np.random.default_rng(seed))  # what the run starts from
    untrained = tmp_path / f"untrained_{seed}"
    meta = {"game": "backgammon", "arch": arch.to_json(), "game_options": {}}
    save_checkpoint(untrained, meta, {f"model.{n}": torch.from_numpy(a) for n, a in params.items()})
    before = arena_eval(untrained, "random", 100, final_eval_seed(cfg))
    after = ab.train(cfg, log=quiet)["final_eval"]["vs_random"]
    return before, after


def test_a_fresh_net_learns_to_beat_random(tmp_path) -> None:
    """About 20-35 s. Measured (win rate / points per game against random over the same 100
    games, before -> after): seed 1 (this test) 0.66 / +0.62 -> 0.99 / +2.55; seed 0 0.89 /
    +1.77 -> 0.98 / +2.35; seed 2 0.58 / +0.41 -> 0.94 / +1.96. With learning disabled
    (seed 1, lr=1e-7) the net stays at 0.67 / +0.63, below the test's bounds."""
    before, after = learn(tmp_path, seed=1, lr=0.003)
    assert before["win_rate"] < 0.8 and after["win_rate"] >= 0.9, (before, after)
    assert after["ppg"] > before["ppg"] + 1.0, (before, after)
