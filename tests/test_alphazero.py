"""Gumbel AlphaZero training (train/alphazero.py): it learns on a small Kalah board (beats
``random`` clearly and plays more solver-optimal moves than the untrained network), a killed and
resumed run equals an uninterrupted one bit for bit, the same seed gives the same weights, its
checkpoints are agents (``checkpoint:PATH:sims=N``) and bad config values are refused clearly."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import torch
from run_helpers import lose_newest_checkpoint
from spieltisch.agents.arena import evaluate
from spieltisch.agents.kalaha.accuracy import move_accuracy
from spieltisch.agents.kalaha.solver import KalahaSolver
from spieltisch.agents.neural.agents import PRETRAINED_DIR
from spieltisch.agents.neural.checkpoint import CheckpointError, load_checkpoint
from spieltisch.agents.neural.gumbel_search import policy_evaluator
from spieltisch.agents.neural.policy import PolicyArch, PolicyNet
from spieltisch.agents.registry import make_agent
from spieltisch.envs.kalaha import KalahaGame
from spieltisch.train.alphazero import (
    AlphaZeroTrainer,
    ReplayBuffer,
    alphazero_loss,
    make_search,
    self_play,
    train,
    value_outcome,
    value_targets,
)
from spieltisch.train.config import AlphaZeroConfig, ConfigError, build_config
from spieltisch.train.opponents import ScriptedOpponent
from spieltisch.train.ppo import make_games
from spieltisch.train.run_files import latest_checkpoint

SMALL = {"pits": 4, "seeds": 3, "rules": "goki"}


def config(tmp_path: Path, name: str, *extra: str) -> AlphaZeroConfig:
    return build_config(
        {"game": "kalaha", "algorithm": "alphazero", "game_options": SMALL},
        [
            f"run_dir={tmp_path / name}",
            "num_games=16",
            "num_simulations=8",
            "hidden=[32]",
            "batch_size=64",
            "total_positions=100000",
            "checkpoint_interval=2",
            "eval_interval=0",
            "final_eval_games=4",
            "progress=false",
            "tensorboard=false",
            *extra,
        ],
    )


def checkpoint_tensors(run_dir: Path) -> dict[str, torch.Tensor]:
    return load_checkpoint(latest_checkpoint(run_dir)).tensors


@pytest.mark.parametrize(
    "search",
    [
        (),
        ("policy_improvement=alphabeta", "alphabeta_depth=2", "alphabeta_q_scale=5"),
        ("pool_prob=0.5", "pool_baselines=[alphabeta:depth=2]"),  # the baselines' ties: reseeded
    ],
    ids=["gumbel", "alphabeta", "baselines"],
)
def test_killed_and_resumed_run_equals_uninterrupted_run(tmp_path, search) -> None:
    whole = train(config(tmp_path, "whole", "stop_after_iterations=4", *search))
    first = train(config(tmp_path, "split", "stop_after_iterations=3", *search))
    lose_newest_checkpoint(tmp_path / "split")  # killed after iteration 3
    assert first["iteration"] == 3
    assert load_checkpoint(latest_checkpoint(tmp_path / "split")).meta["iteration"] == 2
    resumed = train(config(tmp_path, "split", "stop_after_iterations=2", *search), resume=True)
    assert resumed["iteration"] == whole["iteration"] == 4
    assert resumed["global_step"] == whole["global_step"]
    a, b = checkpoint_tensors(tmp_path / "whole"), checkpoint_tensors(tmp_path / "split")
    assert sorted(a) == sorted(b)
    assert any(k.startswith("replay.") for k in a) and any(k.startswith("optim.") for k in a)
    for key in a:
        assert torch.equal(a[key], b[key]), key
    ma = load_checkpoint(latest_checkpoint(tmp_path / "whole")).meta["trainer"]
    mb = load_checkpoint(latest_checkpoint(tmp_path / "split")).meta["trainer"]
    assert ma == mb  # optimizer settings, generator state, replay pointers


def test_same_seed_same_weights_other_seed_other_weights(tmp_path) -> None:
    runs = {}
    for name, seed in (("a", 0), ("b", 0), ("c", 1)):
        train(config(tmp_path, name, "stop_after_iterations=2", f"seed={seed}"))
        runs[name] = checkpoint_tensors(tmp_path / name)
    assert all(torch.equal(runs["a"][k], runs["b"][k]) for k in runs["a"])
    assert not all(torch.equal(runs["a"][k], runs["c"][k]) for k in runs["a"])


def test_short_run_learns(tmp_path) -> None:
    """About 40 s: Kalah(4,3) with search in self-play beats random clearly and plays more
    solver-optimal moves than the untrained network (both judged without search)."""
    cfg = config(
        tmp_path,
        "learn",
        "total_positions=12000",
        "num_games=32",
        "hidden=[64, 64]",
        "lr=0.003",
        "final_eval_games=200",
        "eval_opponents=[random]",
    )
    result = train(cfg)
    final = result["final_eval"]["vs_random"]
    # measured 0.735 over 200 games that open with 2 random moves each (95% interval about
    # +-0.06; without the openings, a few repeated games scored 0.875)
    assert final["score"] >= 0.65, final
    untrained = config(tmp_path, "untrained", "total_positions=1", "final_eval_games=2")
    train(untrained)  # one iteration: a policy checkpoint with (nearly) initial weights
    game = KalahaGame(**SMALL)
    solver = KalahaSolver(game)
    judged = {
        name: move_accuracy(
            f"checkpoint:{tmp_path / name / 'final'}", game, games=6, solver=solver, seed=5
        ).total
        for name in ("learn", "untrained")
    }
    # measured: 67% optimal moves, 1.7 stones lost per move; untrained 61%, 3.1 stones
    assert judged["learn"].optimal_share > judged["untrained"].optimal_share, judged
    assert judged["learn"].mean_loss < 0.75 * judged["untrained"].mean_loss, judged


def test_checkpoint_is_an_agent_with_and_without_search(tmp_path) -> None:
    train(config(tmp_path, "agent", "stop_after_iterations=1", "total_positions=100"))
    path = tmp_path / "agent" / "final"
    for name in (f"checkpoint:{path}", f"checkpoint:{path}:sims=8"):
        report = evaluate("kalaha", [name, "random"], 2, options=SMALL, bootstrap=0)
        assert report.pairs[0].games == 4
    with pytest.raises(ValueError, match="sims"):
        make_agent(f"checkpoint:{path}:sims=-1", "kalaha", game_options=SMALL)
    with pytest.raises(ValueError, match="dets=D is for HiLo"):
        make_agent(f"checkpoint:{path}:sims=4,dets=2", "kalaha", game_options=SMALL)
    with pytest.raises(ValueError, match="'dets' needs 'sims'"):
        make_agent(f"checkpoint:{path}:dets=2", "kalaha", game_options=SMALL)
    with pytest.raises(ValueError, match="'dets' needs a search: sims=0 plays the raw"):
        make_agent(f"checkpoint:{path}:sims=0,dets=2", "kalaha", game_options=SMALL)


def test_init_checkpoint_starts_from_those_weights_and_resume_does_not_read_it(tmp_path) -> None:
    train(config(tmp_path, "parent", "stop_after_iterations=1", "total_positions=100"))
    parent = load_checkpoint(tmp_path / "parent" / "final").tensors
    init = f"init_checkpoint=checkpoint:{tmp_path / 'parent' / 'final'}"
    lines: list[str] = []
    trainer = AlphaZeroTrainer(config(tmp_path, "child", init), log=lines.append)
    start = trainer.state.net.state_dict()
    assert all(torch.equal(start[k], parent[f"model.{k}"]) for k in start)
    assert lines == [f"initialised from checkpoint:{tmp_path / 'parent' / 'final'}"]
    fresh = AlphaZeroTrainer(config(tmp_path, "fresh")).state.net.state_dict()
    assert not all(torch.equal(start[k], fresh[k]) for k in start)
    # A fine-tuning run resumes from its own checkpoint, even once the parent is gone
    train(config(tmp_path, "child", init, "stop_after_iterations=2"))
    whole = train(config(tmp_path, "whole", init, "stop_after_iterations=3"))
    for suffix in (".safetensors", ".json"):
        (tmp_path / "parent" / f"final{suffix}").rename(tmp_path / "parent" / f"moved{suffix}")
    resumed = train(config(tmp_path, "child", init, "stop_after_iterations=1"), resume=True)
    assert resumed["global_step"] == whole["global_step"]
    a, b = checkpoint_tensors(tmp_path / "whole"), checkpoint_tensors(tmp_path / "child")
    assert all(torch.equal(a[k], b[k]) for k in a)
    with pytest.raises(CheckpointError, match=r"init_checkpoint .*final"):
        AlphaZeroTrainer(config(tmp_path, "again", init))


@pytest.mark.parametrize(
    ("init", "extra", "words"),
    [
        (
            "pretrained:kalaha",
            ["game_options={pits: 6, seeds: 6, rules: goki}"],
            "differs from the config's: hidden \\(256, 256\\) \\(the config gives \\(32,\\)\\)",
        ),
        ("pretrained:kalaha", [], "was trained with pits=6"),
        (
            f"checkpoint:{PRETRAINED_DIR / 'hus.safetensors'}",
            [],
            "a network for hus, not for kalaha",
        ),
        ("pretrained:kalaha:sims=4", [], "without agent parameters \\(sims=4\\)"),
        ("checkpoint:/no/such/file", [], "init_checkpoint"),
    ],
)
def test_init_checkpoint_that_does_not_fit_is_named(tmp_path, init, extra, words) -> None:
    with pytest.raises(CheckpointError, match=words):
        AlphaZeroTrainer(config(tmp_path, "x", f"init_checkpoint={init}", *extra))


def test_a_network_plays_only_the_board_it_was_trained_on(tmp_path) -> None:
    # Only the options typed were compared: without -o, a 4-pit network played the default
    # 6 pits (or forfeited every game with a matmul error), and -o pits=4 alone played 6 seeds.
    train(config(tmp_path, "small", "stop_after_iterations=1"))
    path = latest_checkpoint(tmp_path / "small")
    name = f"checkpoint:{path}"
    for options, words in [
        ({}, "trained with pits=4, the game has pits=6 \\(its default: give -o pits=...\\)"),
        ({"pits": 4}, "trained with seeds=3, the game has seeds=6 \\(its default"),
        ({"pits": 4, "seeds": 3, "rules": "standard"}, "rules='goki'.*rules='standard'$"),
    ]:
        with pytest.raises(ValueError, match=words):
            make_agent(name, "kalaha", 0, options)
    assert make_agent(f"{name}:sims=2", "kalaha", 0, {**SMALL, "reward": "score"}) is not None


def test_init_checkpoint_must_name_a_network_of_the_game() -> None:
    with pytest.raises(ConfigError, match="'init_checkpoint' must be pretrained:GAME"):
        build_config({"game": "kalaha", "algorithm": "alphazero"}, ["init_checkpoint=random"])
    with pytest.raises(ConfigError, match="pretrained:hus is not a kalaha network"):
        build_config(
            {"game": "kalaha", "algorithm": "alphazero"}, ["init_checkpoint=pretrained:hus"]
        )


@pytest.mark.parametrize(
    ("override", "words"),
    [
        ("num_simulations=0", "'num_simulations' must be at least 1"),
        ("c_scale=-1", "'c_scale' must be at least 0"),
        ("lr=0", "'lr' must be positive"),
        ("device=tpu", "'device' must be cpu, cuda or auto"),
        ("eval_opponents=[nobody]", "unknown agent 'nobody'"),
        ("sims=4", "unknown key 'sims'"),
        ("lr_final=0.01", "'lr_final' must be in"),
        ("margin_weight=1.5", "'margin_weight' must be in"),
        ("margin_scale=0", "'margin_scale' must be positive"),
        ("td_steps=-1", "'td_steps' must be at least 0"),
        ("opening_plies=-1", "'opening_plies' must be at least 0"),
        ("policy_improvement=mcts", "'policy_improvement' must be gumbel or alphabeta"),
        ("alphabeta_depth=0", "'alphabeta_depth' must be at least 1"),
        ("alphabeta_q_scale=-1", "'alphabeta_q_scale' must be at least 0"),
        ("stop_after_iterations=0", "'stop_after_iterations' must be at least 1, got 0"),
        ("pool_prob=1.5", "'pool_prob' must be in \\[0, 1\\], got 1.5"),
        ("pool_prob=0.5", "'pool_prob' 0.5 needs agents to play those games"),
        ("pool_baselines=[greedy]", "'pool_baselines' would never play with pool_prob 0"),
    ],
)
def test_bad_config_values_are_refused(tmp_path, override: str, words: str) -> None:
    with pytest.raises(ConfigError, match=words):
        config(tmp_path, "bad", override)


def test_searches_too_large_for_the_machine_are_refused_before_the_run(tmp_path, monkeypatch):
    with pytest.raises(ConfigError, match="'num_simulations' must be at most 100,000"):
        config(tmp_path, "bad", "num_simulations=1000000")
    with pytest.raises(ConfigError, match="'eval_simulations' must be at most 100,000"):
        config(tmp_path, "bad", "eval_simulations=100001")
    # a machine of 1 GiB: the trees are sized against it (2,048 small Kalah games at 4,096
    # simulations: about 1.4 GiB; at the config's 8 simulations they fit)
    monkeypatch.setattr("os.sysconf", {"SC_PAGE_SIZE": 4096, "SC_PHYS_PAGES": 1 << 18}.get)
    config(tmp_path, "fits", "num_games=2048")
    with pytest.raises(ConfigError, match="2,048 self-play games at 4,096 simulations need about"):
        config(tmp_path, "bad", "num_games=2048", "num_simulations=4096")
    with pytest.raises(
        ConfigError, match=r"1.0 GiB of memory \(lower eval_simulations or final_eval_games\)"
    ):
        config(tmp_path, "bad", "eval_simulations=4096", "final_eval_games=2048")
    # expert iteration's self-play searches no tree: only the evaluations' count
    config(tmp_path, "ab", "num_games=2048", "num_simulations=4096", "policy_improvement=alphabeta")


def test_baselines_must_be_agents_of_the_game_and_not_for_backgammon(tmp_path) -> None:
    with pytest.raises(ConfigError, match="'pool_baselines': unknown agent 'nobody'"):
        config(tmp_path, "bad", "pool_prob=0.5", "pool_baselines=[nobody]")
    with pytest.raises(ConfigError, match="'pool_baselines': unknown agent 'pubeval'"):
        config(tmp_path, "bad", "pool_prob=0.5", "pool_baselines=[pubeval]")
    with pytest.raises(ConfigError, match="backgammon's AlphaZero plays self-play only"):
        build_config(
            {"game": "backgammon", "algorithm": "alphazero"},
            ["hidden=[80]", "pool_prob=0.5", "pool_baselines=[pubeval]"],
        )


class RecordingBaseline(ScriptedOpponent):
    """A baseline that records which games and seats it was asked to move."""

    def __init__(self, *args) -> None:
        super().__init__(*args)
        self.asked: list[tuple[int, int]] = []

    def actions(self, games, idx, obs, mask, mover, rng):
        self.asked += list(zip(idx.tolist(), mover.tolist(), strict=True))
        return super().actions(games, idx, obs, mask, mover, rng)


def searching_only_the_learners_moves(monkeypatch, search) -> list[int]:
    """The number of games each self-play search is asked to search (its ``rows``), filled in
    as self-play runs."""
    counts: list[int] = []
    inner = search.search

    def counted(games, evaluate, rng, rows=None):
        assert rows is not None, "self-play searches every game"
        assert not games.terminal[rows].any()
        counts.append(len(rows))
        return inner(games, evaluate, rng, rows=rows)

    monkeypatch.setattr(search, "search", counted)
    return counts


@pytest.mark.parametrize("share", [0.5, 1.0])
def test_baseline_games_seat_the_baseline_in_one_seat_and_learn_only_the_other(
    tmp_path, monkeypatch, share
) -> None:
    cfg = config(tmp_path, "pool", f"pool_prob={share}", "pool_baselines=[greedy]")
    games = make_games(cfg.game, cfg.game_options, 16)
    net = PolicyNet(PolicyArch(games.observation_shape[0], games.num_actions, (16,)))
    search = make_search(cfg, cfg.num_simulations, cfg.gumbel_scale)
    evaluate = policy_evaluator(net, games.num_players)
    baseline = RecordingBaseline("greedy", cfg.game, dict(cfg.game_options))
    # what self_play draws right after the reset's own draws (no opening moves here)
    probe = np.random.default_rng(3)
    games.clone().reset(seed=probe)
    probe.integers(0, 2**31)  # the baseline's reseed
    pool_game = probe.random(16) < share
    learner_seat = probe.integers(0, 2, size=16)
    assert pool_game.any() and (share == 1.0 or not pool_game.all())
    moves_played = []
    step = type(games).step

    def counting_step(self, action):
        if self is games:  # not the search's clones
            moves_played.append(int((~games.terminal).sum()))
        return step(self, action)

    monkeypatch.setattr(type(games), "step", counting_step)
    searched = searching_only_the_learners_moves(monkeypatch, search)
    positions, stats = self_play(cfg, games, search, evaluate, np.random.default_rng(3), [baseline])
    assert sum(searched) == len(positions["value"])  # the baseline's moves were never searched
    asked_games = {g for g, _ in baseline.asked}
    assert asked_games == set(np.flatnonzero(pool_game).tolist())  # every pool game, no other
    assert all(seat != learner_seat[g] for g, seat in baseline.asked)
    # every move of every game was either the baseline's or recorded for learning, never both
    assert sum(moves_played) == len(baseline.asked) + len(positions["value"])
    assert stats["selfplay/positions"] == len(positions["value"])
    assert stats["selfplay/baseline_games"] == pool_game.sum()
    final = value_outcome(cfg)(games)
    rows = np.flatnonzero(pool_game)
    assert stats["selfplay/baseline_result"] == pytest.approx(
        final[rows, learner_seat[rows]].mean()
    )


def test_alphabeta_improvement_needs_a_board_and_an_mlp_value(tmp_path) -> None:
    with pytest.raises(ConfigError, match="searches kalaha and hus boards, not hilo"):
        build_config({"game": "hilo", "algorithm": "alphazero"}, ["policy_improvement=alphabeta"])
    for extra in ("residual_blocks=1", "value_per_seat=true"):
        with pytest.raises(ConfigError, match="residual_blocks must be 0 and value_per_seat"):
            config(tmp_path, "bad", "policy_improvement=alphabeta", extra)


def test_margin_weight_needs_a_game_scored_in_stones(tmp_path) -> None:
    with pytest.raises(ConfigError, match="'margin_weight' needs a game scored in stones"):
        build_config({"game": "hus", "algorithm": "alphazero"}, ["margin_weight=0.5"])


@pytest.mark.parametrize(("game", "reward"), [("kalaha", "score"), ("hus", "points")])
@pytest.mark.parametrize("algorithm", ["alphazero", "ppo"])
def test_self_play_on_a_board_takes_the_win_reward_only(game, reward, algorithm) -> None:
    # The batched engines score Kalaha and Hus by who won: the option was silently ignored.
    base = {"game": game, "algorithm": algorithm}
    with pytest.raises(ConfigError, match=f"takes 'win' only, got '{reward}'"):
        build_config(base, [f"game_options.reward={reward}"])
    assert build_config(base, ["game_options.reward=win"]).game_options == {"reward": "win"}


def test_n_step_value_targets_on_two_drawn_games() -> None:
    # Game 0 moves at moves 0-3 (seats 0, 0, 1, 0: an extra turn, then a capture) and ends;
    # game 1 moves at moves 0-1 only. Positions are recorded move by move, games in order.
    rows_per_move = [np.array([0, 1]), np.array([0, 1]), np.array([0]), np.array([0])]
    seat = np.array([0, 1, 0, 0, 1, 0])
    final = np.array([[1.0, -1.0], [-1.0, 1.0]])  # game 0 won by seat 0, game 1 by seat 1
    # the search's root value per seat of each recorded position
    root = np.array([[0.1, -0.1], [0.2, -0.2], [0.3, -0.3], [0.4, -0.4], [0.5, -0.5], [0.6, -0.6]])
    plain = value_targets(final, rows_per_move, seat, root, 0)
    assert plain[:, 0].tolist() == [1, 1, 1, -1, -1, 1]
    two = value_targets(final, rows_per_move, seat, root, 2)[:, 0]
    # game 0: move 0 (seat 0) reads move 2's root value for seat 0 (position 4: 0.5), move 1
    # (seat 0) reads move 3 for seat 0 (position 5: 0.6); moves 2 and 3 and all of game 1 end
    # within 2 moves, so they keep the result
    np.testing.assert_allclose(two, [0.5, 1.0, 0.6, -1.0, -1.0, 1.0])
    one = value_targets(final, rows_per_move, seat, root, 1)[:, 0]
    # the mover's own seat is read: game 1's move 0 is seat 1's, its move 1 seat 0's (position
    # 3: -0.4 for seat 1); game 0's move 2 is seat 1's, its move 3 seat 0's (position 5: -0.6)
    np.testing.assert_allclose(one, [0.3, -0.4, 0.5, -1.0, -0.6, 1.0])


def test_per_seat_value_targets_start_from_the_mover() -> None:
    # one 3-player game: seats 0, 1, 2, 0 move, then seat 1 wins; root values per seat
    rows_per_move = [np.array([0])] * 4
    seat = np.array([0, 1, 2, 0])
    final = np.array([[-0.5, 1.0, -0.5]])
    root = np.array([[0.1, 0.2, -0.3], [0.4, -0.1, -0.3], [-0.2, 0.5, -0.3], [0.0, 0.6, -0.6]])
    z = value_targets(final, rows_per_move, seat, root, 0, outputs=3)
    # each row: the mover's result, then the next seats' in turn order
    np.testing.assert_allclose(
        z, [[-0.5, 1.0, -0.5], [1.0, -0.5, -0.5], [-0.5, -0.5, 1.0], [-0.5, 1.0, -0.5]]
    )
    np.testing.assert_array_equal(value_targets(final, rows_per_move, seat, root, 0)[:, 0], z[:, 0])
    one = value_targets(final, rows_per_move, seat, root, 1, outputs=3)
    # move t reads move t + 1's root values, rotated to move t's mover; the last keeps z
    np.testing.assert_allclose(
        one, [[0.4, -0.1, -0.3], [0.5, -0.3, -0.2], [-0.6, 0.0, 0.6], [-0.5, 1.0, -0.5]]
    )


def test_per_seat_evaluator_reads_each_seats_value() -> None:
    torch.manual_seed(1)
    net = PolicyNet(PolicyArch(5, 3, (8,), value_outputs=3))
    obs, mask = (
        np.random.default_rng(0).normal(size=(4, 5)).astype(np.float32),
        np.ones((4, 3), dtype=np.int8),
    )
    _, values = policy_evaluator(net, 3)(obs, mask)
    expected = net.forward_seats(torch.from_numpy(obs), torch.from_numpy(mask))[1]
    # the evaluator's forward pass runs in numpy (ArrayPolicy): float32 rounding apart
    np.testing.assert_allclose(values, expected.detach().numpy(), rtol=1e-5, atol=1e-6)
    with pytest.raises(ValueError, match="has 3 value outputs; a 4-player game needs 1"):
        policy_evaluator(net, 4)


def test_evaluator_in_numpy_equals_the_torch_path_of_other_devices() -> None:
    """On the CPU the evaluator runs the net in numpy (ArrayPolicy); on another device
    (here "cpu:0", which takes that path on the CPU) it runs torch: the same logits and
    values up to float32 rounding."""
    torch.manual_seed(2)
    net = PolicyNet(PolicyArch(14, 6, (32,), 4.0, count_bins=8, residual_blocks=1)).eval()
    obs = np.random.default_rng(3).integers(0, 12, (9, 14)).astype(np.float32)
    mask = (np.random.default_rng(4).random((9, 6)) < 0.7).astype(np.int8)
    mask[:, 0] = 1
    numpy_logits, numpy_values = policy_evaluator(net, 2, "cpu")(obs, mask)
    torch_logits, torch_values = policy_evaluator(net, 2, "cpu:0")(obs, mask)
    np.testing.assert_allclose(numpy_logits, torch_logits, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(numpy_values, torch_values, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(numpy_values[:, 1], -numpy_values[:, 0])


def test_value_per_seat_is_refused_for_backgammon() -> None:
    with pytest.raises(ConfigError, match="'value_per_seat' is for the policy-value network"):
        build_config(
            {"game": "backgammon", "algorithm": "alphazero"}, ["hidden=[80]", "value_per_seat=true"]
        )


@pytest.mark.parametrize("opening", [0, 4])
def test_n_step_targets_of_real_self_play_are_root_values_or_results(tmp_path, opening) -> None:
    cfg = config(tmp_path, "td", "td_steps=3", f"opening_plies={opening}")
    games = make_games(cfg.game, cfg.game_options, 8)
    net = PolicyNet(PolicyArch(games.observation_shape[0], games.num_actions, (16,)))
    evaluate = policy_evaluator(net, games.num_players)
    outcome_cfg = config(tmp_path, "z", f"opening_plies={opening}")
    search = make_search(cfg, cfg.num_simulations, cfg.gumbel_scale)
    with_td, _ = self_play(cfg, games, search, evaluate, np.random.default_rng(5))
    plain, _ = self_play(outcome_cfg, games, search, evaluate, np.random.default_rng(5))
    np.testing.assert_array_equal(with_td["policy"], plain["policy"])  # same games
    results = np.isin(plain["value"], (-1.0, 0.0, 1.0))
    assert results.all()
    # the last 3 moves of each of the 8 games keep their result; the earlier ones take a root
    # value, which is rarely exactly a result
    bootstrapped = len(plain["value"]) - 3 * 8
    differ = with_td["value"] != plain["value"]
    assert differ.sum() > 0.5 * bootstrapped
    assert np.all(np.abs(with_td["value"]) <= 1.0)


def test_random_opening_moves_are_played_not_learnt(tmp_path, monkeypatch) -> None:
    cfg = config(tmp_path, "open", "opening_plies=3")
    games = make_games(cfg.game, cfg.game_options, 16)
    net = PolicyNet(PolicyArch(games.observation_shape[0], games.num_actions, (16,)))
    search = make_search(cfg, cfg.num_simulations, cfg.gumbel_scale)
    evaluate = policy_evaluator(net, games.num_players)
    # the opening lengths self_play draws: right after the reset's own draws
    probe = np.random.default_rng(7)
    games.clone().reset(seed=probe)
    opening = probe.integers(0, 4, size=16)
    assert 0 < (opening == 0).sum() < 16
    searched = searching_only_the_learners_moves(monkeypatch, search)
    positions, stats = self_play(cfg, games, search, evaluate, np.random.default_rng(7))
    assert sum(searched) == len(positions["value"])  # nor the random opening moves
    games.reset()
    start = games.observe()[0][0]
    # the starting position (which never comes back in Kalaha) is learnt from exactly in the
    # games without random opening moves
    at_start = (positions["obs"] == start).all(axis=1)
    assert at_start.sum() == (opening == 0).sum()
    assert stats["selfplay/positions"] == len(positions["value"])
    with pytest.raises(ConfigError, match="'opening_plies' must be 0 for backgammon"):
        build_config(
            {"game": "backgammon", "algorithm": "alphazero"}, ["hidden=[80]", "opening_plies=2"]
        )


def test_cuda_asked_for_without_one_is_a_clear_error(tmp_path) -> None:
    if torch.cuda.is_available():
        pytest.skip("this machine has CUDA")
    with pytest.raises(ValueError, match="no CUDA device"):
        train(config(tmp_path, "cuda", "device=cuda"))


def test_loss_and_replay_buffer() -> None:
    buffer = ReplayBuffer(5, obs_size=2, num_actions=3)
    for start in (0, 3):  # 6 positions into 5 slots: the oldest is replaced
        rows = np.arange(start, start + 3)
        buffer.add(
            {
                "obs": np.stack([rows, rows], axis=1).astype(np.float32),
                "mask": np.ones((3, 3), dtype=np.int8),
                "policy": np.full((3, 3), 1 / 3, dtype=np.float32),
                "value": rows.astype(np.float32)[:, None],
            }
        )
    assert buffer.size == 5 and sorted(buffer.value[:, 0].tolist()) == [1, 2, 3, 4, 5]
    from spieltisch.agents.neural.policy import PolicyArch, PolicyNet

    torch.manual_seed(0)
    net = PolicyNet(PolicyArch(2, 3, (8,)))
    batch = {
        "obs": torch.zeros(4, 2),
        "mask": torch.tensor([[1, 1, 0]] * 4, dtype=torch.int8),
        "policy": torch.tensor([[1.0, 0.0, 0.0]] * 4),
        "value": torch.ones(4, 1),
    }
    loss, parts = alphazero_loss(net, batch, value_weight=2.0)
    logits, value = net(batch["obs"], batch["mask"])
    expected_policy = -torch.log_softmax(logits, -1)[:, 0].mean()
    expected_value = ((value - 1) ** 2).mean()
    assert torch.isclose(loss, expected_policy + 2.0 * expected_value)
    assert parts["loss/policy"] == pytest.approx(expected_policy.item())


def test_shipped_configs_load_and_train_an_iteration(tmp_path) -> None:
    from spieltisch.train.config import load_config

    configs = sorted(
        Path(__file__).resolve().parents[1].joinpath("configs").glob("*_alphazero.yaml")
    )
    assert configs
    for path in configs:
        cfg = load_config(
            path,
            [
                f"run_dir={tmp_path / path.stem}",
                "num_games=4",
                "num_simulations=2",
                "total_positions=10",
                "final_eval_games=2",
                "eval_opponents=[random]",
                "progress=false",
                "tensorboard=false",
            ],
        )
        result = train(cfg, log=lambda *a: None)
        # a table of n > 2 players plays each seat: at least n games
        expected = max(2, cfg.game_options.get("num_players", 2))
        assert result["iteration"] == 1
        assert result["final_eval"]["vs_random"]["games"] == expected, path.name


def test_cosine_learning_rate_schedule() -> None:
    from spieltisch.train.alphazero import cosine_lr

    assert cosine_lr(1e-3, None, 500, 1000) == 1e-3  # no lr_final: constant
    assert cosine_lr(1e-3, 1e-4, 0, 1000) == pytest.approx(1e-3)
    assert cosine_lr(1e-3, 1e-4, 500, 1000) == pytest.approx(5.5e-4)
    assert cosine_lr(1e-3, 1e-4, 1000, 1000) == pytest.approx(1e-4)
    assert cosine_lr(1e-3, 1e-4, 5000, 1000) == pytest.approx(1e-4)  # past the end: lr_final


def test_residual_network_trains_and_loads_as_an_agent(tmp_path) -> None:
    train(config(tmp_path, "res", "residual_blocks=2", "total_positions=40"))
    with pytest.raises(ValueError, match="residual blocks: play it with sims=N"):
        make_agent(
            f"checkpoint:{tmp_path / 'res' / 'final'}:search=2", "kalaha", game_options=SMALL
        )
    ckpt = load_checkpoint(tmp_path / "res" / "final")
    assert ckpt.meta["arch"]["residual_blocks"] == 2
    assert sum(k.startswith("model.trunk.") for k in ckpt.tensors) > 4  # blocks' weights saved
    agent = make_agent(
        f"checkpoint:{tmp_path / 'res' / 'final'}:sims=4", "kalaha", game_options=SMALL
    )
    assert agent.net.arch.residual_blocks == 2
    with pytest.raises(ConfigError, match="'residual_blocks' must be at least 0"):
        config(tmp_path, "bad", "residual_blocks=-1")


def test_one_hot_count_inputs_train_and_load_as_an_agent(tmp_path) -> None:
    # Kalah(4,3) seen by the mover: pits 0, 1, 2, 7 stones and a store of 2 (bins: 0..3, 3+)
    arch = PolicyArch(10, 4, (8,), 6.0, count_bins=4)
    net = PolicyNet(arch)
    obs = torch.tensor([[0.0, 1, 2, 7, 2, 3, 3, 3, 3, 0]])
    x = net.inputs(obs)
    assert x.shape == (1, 10 * 5) and torch.equal(x[0, :10], obs[0] / 6.0)
    onehot = x[0, 10:].reshape(10, 4)
    assert onehot[:5].tolist() == [
        [1, 0, 0, 0],
        [0, 1, 0, 0],
        [0, 0, 1, 0],
        [0, 0, 0, 1],
        [0, 0, 1, 0],
    ]
    assert PolicyArch.from_json(arch.to_json()) == arch
    with pytest.raises(ValueError, match="count_bins"):
        PolicyArch.from_json({**arch.to_json(), "count_bins": -1})
    train(config(tmp_path, "onehot", "count_bins=8", "total_positions=40"))
    ckpt = load_checkpoint(tmp_path / "onehot" / "final")
    assert ckpt.meta["arch"]["count_bins"] == 8
    path = tmp_path / "onehot" / "final"
    agent = make_agent(f"checkpoint:{path}:sims=4", "kalaha", game_options=SMALL)
    assert agent.net.arch.count_bins == 8
    report = evaluate("kalaha", [f"checkpoint:{path}", "random"], 2, options=SMALL, bootstrap=0)
    assert report.pairs[0].games == 4
    searching = f"checkpoint:{path}:search=2"  # alpha-beta over the value head, compiled
    report = evaluate("kalaha", [searching, "random"], 2, options=SMALL, bootstrap=0)
    assert report.pairs[0].games == 4
    with pytest.raises(ConfigError, match="'count_bins' is for the stone counts"):
        build_config({"game": "hilo", "algorithm": "alphazero"}, ["count_bins=4"])


def test_rollout_worker_searches_the_weights_it_was_sent(tmp_path) -> None:
    """A Ray self-play worker (here in this process) with ``policy_improvement: alphabeta``
    searches the value head of the weights each ``play`` call sends, as the trainer's own
    self-play with a network holding them does."""
    from spieltisch.agents.neural.value_search import AlphaBetaImprovement
    from spieltisch.train.ray_rollouts import SelfPlayWorker

    cfg = config(tmp_path, "worker", "policy_improvement=alphabeta", "alphabeta_depth=2")
    worker = None
    for seed in (0, 1):
        torch.manual_seed(seed)
        net = PolicyNet(PolicyArch(10, 4, (32,), 3.0)).eval()
        if worker is None:
            worker = SelfPlayWorker(cfg, net.arch.to_json(), 8)
        sent, _ = worker.play(net.state_dict(), seed=5)[0]
        games = make_games("kalaha", SMALL, 8)
        search = AlphaBetaImprovement(net, "kalaha", SMALL, 2)
        own, _ = self_play(cfg, games, search, policy_evaluator(net, 2), np.random.default_rng(5))
        for name in ("obs", "policy", "value"):
            assert np.array_equal(sent[name], own[name]), (seed, name)
