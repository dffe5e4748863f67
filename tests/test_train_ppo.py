"""Self-play PPO end to end: configs, checkpoints, exact resume, reproducibility, learning."""

from __future__ import annotations

import copy
import json
import re
from pathlib import Path

import numpy as np
import pytest
import torch
from run_helpers import lose_newest_checkpoint
from spieltisch.agents.arena.match import play_game
from spieltisch.agents.neural.checkpoint import CheckpointError, load_checkpoint
from spieltisch.agents.neural.policy import PolicyArch, PolicyNet, sample_masked
from spieltisch.agents.registry import make_agent
from spieltisch.envs import make
from spieltisch.train.cli import main
from spieltisch.train.config import ConfigError, build_config, load_config
from spieltisch.train.opponents import PolicyPool, RandomOpponent, opponent_actions, random_step
from spieltisch.train.ppo import (
    Rollout,
    evaluate_vs_random,
    gae,
    latest_checkpoint,
    ppo_update,
    train,
)

CONFIGS = sorted(Path(__file__).resolve().parents[1].joinpath("configs").glob("*_ppo.yaml"))
SMALL_KALAHA = {"pits": 4, "seeds": 3}


def tiny(tmp_path: Path, **extra) -> list[str]:
    """``--set`` overrides for a run of a few seconds."""
    sets = {
        "total_steps": 600,
        "num_games": 8,
        "hidden": "[16]",
        "run_dir": str(tmp_path / "run"),
        "eval_games": 8,
        "final_eval_games": 8,
        "eval_interval": 1,
        "checkpoint_interval": 1,
        "pool_interval": 1,
        "progress": "false",
        "tensorboard": "false",
        "max_turns": 300,
    }
    sets.update(extra)
    return [f"{k}={v}" for k, v in sets.items()]


# --- configs --------------------------------------------------------------------------------------
def test_config_errors_name_the_key(tmp_path) -> None:
    with pytest.raises(ConfigError, match="unknown key 'learning_rate'"):
        build_config({"learning_rate": 0.1})
    with pytest.raises(ConfigError, match="key 'lr' must be float"):
        build_config({"lr": "fast"})
    with pytest.raises(ConfigError, match="key 'num_games' must be int"):
        build_config({}, ["num_games=1.5"])
    with pytest.raises(ConfigError, match="key 'pool_prob' must be in"):
        build_config({}, ["pool_prob=2"])
    with pytest.raises(ConfigError, match="key 'update_threads' must be at least 1"):
        build_config({}, ["update_threads=0"])
    with pytest.raises(ConfigError, match="key 'game'"):
        build_config({"game": "chess"})
    with pytest.raises(ConfigError, match="KEY=VALUE"):
        build_config({}, ["lr"])
    # accepted before: max_grad_norm 0 clipped every gradient to nothing, a run that never learnt
    for key, value, message in [
        ("max_grad_norm", "0", "must be positive"), ("clip_coef", "-1", "must be positive"),
        ("vf_coef", "-1", "must be at least 0"), ("ent_coef", "-0.1", "must be at least 0"),
        ("target_kl", "0", "must be positive"),
    ]:  # fmt: skip
        with pytest.raises(ConfigError, match=f"key '{key}' {message}"):
            build_config({}, [f"{key}={value}"])
    # a wrongly typed game option: the game's own TypeError, a traceback from the trainer before
    for algorithm in ("ppo", "alphazero"):
        with pytest.raises(ConfigError, match="key 'game_options': pits must be an integer"):
            build_config({"algorithm": algorithm}, ["game_options.pits=abc"])
    for seed in ("-1", "1e20"):  # numpy's "expected non-negative integer", torch's overflow
        with pytest.raises(ConfigError, match=r"key 'seed' must be in \[0, 4294967295\]"):
            build_config({}, [f"seed={seed}"])
    with pytest.raises(ConfigError, match=re.escape("got 64 (a list in YAML's brackets: [64])")):
        build_config({}, ["hidden=64"])
    bad = tmp_path / "bad.yaml"
    bad.write_text("game: kalaha\nbatch: 3\n")
    with pytest.raises(ConfigError, match=r"bad.yaml: unknown key 'batch'"):
        load_config(bad)


def test_opponent_names_are_checked() -> None:
    with pytest.raises(ConfigError, match="key 'pool_baselines': unknown agent 'minimax'"):
        build_config({"game": "kalaha"}, ["pool_baselines=[minimax]"])
    with pytest.raises(ConfigError, match="key 'eval_opponents': agent 'human' cannot play here"):
        build_config({"game": "hus"}, ["eval_opponents=[human]"])
    cfg = build_config({"game": "hilo"}, ["eval_opponents=[random, 'heuristic:samples=2']"])
    assert cfg.eval_opponents == ["random", "heuristic:samples=2"]


def test_best_policy_is_kept_and_evaluated(tmp_path) -> None:
    cfg = build_config(
        {"game": "kalaha", "game_options": SMALL_KALAHA},
        tiny(tmp_path, total_steps=300, eval_opponents="[random, greedy]"),
    )
    result = train(cfg)
    best = load_checkpoint(tmp_path / "run" / "best")
    assert best.meta["kind"] == "policy" and best.meta["global_step"] <= result["global_step"]
    evaluation = json.loads((tmp_path / "run" / "final_eval.json").read_text())
    assert set(evaluation) >= {"vs_random", "vs_greedy", "best"}
    assert evaluation["best"]["global_step"] == best.meta["global_step"]
    for ev in (evaluation["vs_greedy"], evaluation["best"]["vs_greedy"]):
        assert ev["win_rate"] + ev["draw_rate"] + ev["loss_rate"] == pytest.approx(1.0)
        assert ev["games"] == 8


def test_no_final_evaluation_when_none_is_asked_for(tmp_path) -> None:
    """``final_eval_games: 0`` (PPO and AlphaZero alike): no games, and the summary says so; it
    played one game per seat and reported a 2-game score as the final evaluation."""
    from spieltisch.train.alphazero import train as train_alphazero

    runs = {
        "ppo": (train, {"game": "kalaha", "game_options": SMALL_KALAHA}),
        "alphazero": (
            train_alphazero,
            {"game": "kalaha", "algorithm": "alphazero", "game_options": SMALL_KALAHA},
        ),
    }
    for name, (run, base) in runs.items():
        sets = {"run_dir": str(tmp_path / name), "final_eval_games": 0, "eval_interval": 0}
        if name == "ppo":
            overrides = tiny(tmp_path, total_steps=300, **sets)
        else:
            sets.update(total_positions=50, num_games=4, num_simulations=4, hidden="[8]")
            overrides = [f"{k}={v}" for k, v in {**sets, "progress": "false"}.items()]
        result = run(build_config(base, overrides))
        report = json.loads((tmp_path / name / "final_eval.json").read_text())
        assert not [key for key in report if key.startswith("vs_")], (name, report)
        assert "No final evaluation (final_eval_games: 0)." in result["summary"], name


def test_whole_counts_may_be_written_as_floats() -> None:
    """``total_steps=1e6`` (a string to PyYAML: no dot) and ``1.5e6`` are counts; a fraction
    is not."""
    assert build_config({}, ["total_steps=1e6"]).total_steps == 1_000_000
    assert build_config({}, ["total_steps=1.5e6", "seed=2.0"]).total_steps == 1_500_000
    assert isinstance(build_config({}, ["seed=2.0"]).seed, int)
    with pytest.raises(ConfigError, match=re.escape("key 'total_steps' must be int, got 1.5")):
        build_config({}, ["total_steps=1.5"])


def test_overrides_apply_with_yaml_values() -> None:
    cfg = build_config({"game": "kalaha"}, ["lr=1e-3", "game_options.pits=4", "hidden=[8, 8]"])
    assert cfg.lr == 1e-3 and cfg.game_options == {"pits": 4} and cfg.hidden == [8, 8]


def test_cli_reports_config_errors(tmp_path, capsys) -> None:
    assert main(["train", str(CONFIGS[0]), "--set", "nonsense=1"]) == 2
    assert "unknown key 'nonsense'" in capsys.readouterr().err


# --- every config trains end to end ---------------------------------------------------------------
@pytest.mark.parametrize("config", CONFIGS, ids=lambda p: p.stem)
def test_each_config_trains_and_writes_a_loadable_checkpoint(config: Path, tmp_path) -> None:
    overrides = tiny(tmp_path, tensorboard="true")
    if "kalaha" in config.stem:
        overrides.append("game_options.pits=4")
    args = [x for o in overrides for x in ("--set", o)]
    assert main(["train", str(config), *args]) == 0
    run = tmp_path / "run"
    resolved = json.loads((run / "config.resolved.json").read_text())
    assert resolved["total_steps"] == 600 and resolved["hidden"] == [16]
    assert (run / "final_eval.json").exists() and any((run / "tb").iterdir())
    assert 1 <= len(list((run / "checkpoints").glob("step_*.json"))) <= 3  # keep_checkpoints
    ckpt = load_checkpoint(run / "final")
    meta = ckpt.meta
    for key in (
        "game",
        "env_version",
        "game_options",
        "arch",
        "global_step",
        "config",
        "git_revision",
        "metrics",
    ):
        assert key in meta, key
    assert meta["global_step"] >= 600
    assert "final/win_rate_vs_random" in meta["metrics"]
    game = meta["game"]
    env = make(game, **meta["game_options"])
    agents = {
        a: make_agent(
            f"checkpoint:{run / 'final'}", game, seed=i, game_options=meta["game_options"]
        )
        if i == 0
        else make_agent("random", game, seed=i)
        for i, a in enumerate(env.possible_agents)
    }
    assert play_game(env, agents, seed=1).num_moves > 0


# --- resume and reproducibility -------------------------------------------------------------------
def _final_tensors(run_dir: Path) -> dict[str, torch.Tensor]:
    return load_checkpoint(latest_checkpoint(run_dir)).tensors


def _run(tmp_path: Path, name: str, *extra: str, resume: bool = False, log=None) -> dict:
    cfg = build_config(
        {"game": "kalaha", "game_options": SMALL_KALAHA},
        [
            *tiny(tmp_path, total_steps=100000, checkpoint_interval=2),
            f"run_dir={tmp_path / name}",
            *extra,
        ],
    )
    return train(cfg, resume=resume) if log is None else train(cfg, resume=resume, log=log)


WITH_BASELINES = ("pool_baselines=[greedy]", "pool_prob=1.0", "eval_opponents=[random, greedy]")


@pytest.mark.parametrize(
    "extra",
    [(), WITH_BASELINES, ("update_threads=2",)],
    ids=["self-play", "baselines", "two-update-threads"],
)
def test_killed_and_resumed_run_equals_uninterrupted_run(tmp_path, extra) -> None:
    whole = _run(tmp_path, "whole", "stop_after_iterations=4", *extra)
    first = _run(tmp_path, "split", "stop_after_iterations=3", *extra)
    lose_newest_checkpoint(tmp_path / "split")  # killed after iteration 3
    assert first["iteration"] == 3
    # the last checkpoint is iteration 2: one interval is lost at most
    assert load_checkpoint(latest_checkpoint(tmp_path / "split")).meta["iteration"] == 2
    resumed = _run(tmp_path, "split", "stop_after_iterations=2", *extra, resume=True)
    assert resumed["iteration"] == whole["iteration"] == 4
    assert resumed["global_step"] == whole["global_step"]
    a, b = _final_tensors(tmp_path / "whole"), _final_tensors(tmp_path / "split")
    assert sorted(a) == sorted(b)
    assert any(k.startswith("optim.") for k in a) and any(k.startswith("pool.") for k in a)
    for key in a:
        assert torch.equal(a[key], b[key]), key
    ma = load_checkpoint(latest_checkpoint(tmp_path / "whole")).meta["trainer"]
    mb = load_checkpoint(latest_checkpoint(tmp_path / "split")).meta["trainer"]
    assert ma == mb  # optimizer settings, pool, generator state


def test_resume_refuses_a_changed_config_and_a_missing_checkpoint(tmp_path) -> None:
    _run(tmp_path, "r", "stop_after_iterations=2")
    with pytest.raises(CheckpointError, match=r"config keys \['lr'\] differ"):
        _run(tmp_path, "r", "lr=0.5", resume=True)
    with pytest.raises(CheckpointError, match="no checkpoint"):
        _run(tmp_path, "empty", resume=True)


def test_a_fixed_seed_reproduces_the_run(tmp_path) -> None:
    _run(tmp_path, "a", "stop_after_iterations=2")
    _run(tmp_path, "b", "stop_after_iterations=2")
    _run(tmp_path, "c", "stop_after_iterations=2", "seed=1")
    a, b, c = (_final_tensors(tmp_path / n) for n in "abc")
    assert all(torch.equal(a[k], b[k]) for k in a)
    assert not all(torch.equal(a[k], c[k]) for k in a if k.startswith("model."))


def test_a_damaged_checkpoint_stops_resume_clearly(tmp_path) -> None:
    _run(tmp_path, "d", "stop_after_iterations=2")
    weights = latest_checkpoint(tmp_path / "d").with_suffix(".safetensors")
    weights.write_bytes(weights.read_bytes()[:-10])
    with pytest.raises(CheckpointError, match="damaged"):
        _run(tmp_path, "d", resume=True)


def test_other_evaluation_opponents_choose_the_best_afresh(tmp_path) -> None:
    # best stayed where it was against the old opponents, whose scores do not compare
    _run(tmp_path, "o", "stop_after_iterations=2")
    messages: list[str] = []
    # a checkpoint before the next evaluation recorded best_score -Infinity, not JSON
    _run(tmp_path, "o", "stop_after_iterations=1", "eval_opponents=[greedy]", "eval_interval=4",
         "checkpoint_interval=1", resume=True, log=messages.append)  # fmt: skip
    assert any("the best policy is chosen afresh" in m for m in messages)
    for meta in (tmp_path / "o" / "checkpoints").glob("*.json"):
        json.loads(meta.read_text(), parse_constant=lambda c, m=meta: pytest.fail(f"{m}: {c}"))
    messages.clear()
    _run(tmp_path, "o", "stop_after_iterations=1", "eval_opponents=[greedy]", resume=True,
         log=messages.append)  # fmt: skip
    assert not any("afresh" in m for m in messages)  # the same opponents as last time


def test_a_damaged_newest_checkpoint_gives_way_to_the_one_before(tmp_path) -> None:
    # (resume stopped at the damaged one, the intact one before it unmentioned)
    whole = _run(tmp_path, "whole", "stop_after_iterations=6")
    _run(tmp_path, "d", "stop_after_iterations=4")  # checkpoints at iterations 2 and 4
    weights = latest_checkpoint(tmp_path / "d").with_suffix(".safetensors")
    weights.write_bytes(b"")  # as a power cut can leave a file that was not synced
    messages: list[str] = []
    resumed = _run(tmp_path, "d", "stop_after_iterations=4", resume=True, log=messages.append)
    assert any("damaged" in m and "trying the checkpoint before it" in m for m in messages)
    assert any(m.startswith("resumed from") and "iteration 2," in m for m in messages)
    assert resumed["global_step"] == whole["global_step"]


# --- learning -------------------------------------------------------------------------------------
def test_pool_members_answer_in_one_pass_as_each_would_alone() -> None:
    """``opponent_actions`` plays a pool's snapshots in one stacked forward pass: the same
    actions as each network sampling its own rows in turn from the same generator."""
    torch.manual_seed(3)
    nets = [PolicyNet(PolicyArch(14, 6, (32, 32), 6.0)) for _ in range(3)]
    for net in nets:  # sharper policies than the near-uniform initial ones
        torch.nn.init.normal_(net.policy_head.weight, std=1.0)
    opponents = [RandomOpponent(), *PolicyPool(nets).members()]
    data = np.random.default_rng(4)
    obs = data.integers(0, 12, (200, 14)).astype(np.float32)
    mask = (data.random((200, 6)) < 0.6).astype(np.int8)
    mask[np.arange(200), data.integers(0, 6, 200)] = 1
    which = data.integers(0, 4, 200)
    which[:5] = 2  # one member plays many more rows than the others (padding)
    rows = np.arange(200)
    got = opponent_actions(
        opponents, which, None, rows, obs, mask, rows % 2, np.random.default_rng(5)
    )
    rng = np.random.default_rng(5)
    want = np.zeros(200, dtype=np.int64)
    for k in range(4):
        mine = np.flatnonzero(which == k)
        if k == 0:
            want[mine] = random_step(mask[mine], rng)
        else:
            with torch.no_grad():
                logits, _ = nets[k - 1](torch.from_numpy(obs[mine]), torch.from_numpy(mask[mine]))
            want[mine] = sample_masked(logits.numpy().astype(np.float64), rng)
    assert np.array_equal(got, want)
    assert mask[rows, got].all()
    # a member on its own (as any opponent is called) samples from its own network
    alone = opponents[2].actions(None, rows, obs, mask, rows % 2, np.random.default_rng(6))
    with torch.no_grad():
        logits, _ = nets[1](torch.from_numpy(obs), torch.from_numpy(mask))
    expected = sample_masked(logits.numpy().astype(np.float64), np.random.default_rng(6))
    assert np.array_equal(alone, expected)


def test_gae_is_the_discounted_sum_of_td_errors_within_each_episode() -> None:
    """GAE by its definition (Schulman et al. 2016): A_t = sum_l (gamma lam)^l delta_{t+l} up to
    the episode's end, where the value after the last step is 0."""
    rng = np.random.default_rng(0)
    lengths = [1, 4, 7, 2]
    episode_end = np.concatenate([np.arange(n) == n - 1 for n in lengths])
    rewards, values = rng.normal(size=sum(lengths)), rng.normal(size=sum(lengths))
    gamma, lam = 0.9, 0.8
    expected = []
    start = 0
    for n in lengths:
        r, v = rewards[start : start + n], values[start : start + n]
        delta = r + gamma * np.append(v[1:], 0.0) - v
        expected += [sum((gamma * lam) ** k * delta[t + k] for k in range(n - t)) for t in range(n)]
        start += n
    np.testing.assert_allclose(gae(rewards, values, episode_end, gamma, lam), expected)
    # lambda = 1: the Monte-Carlo return minus the value; lambda = 0: the one-step TD error
    mc = gae(rewards, values, episode_end, 1.0, 1.0)
    np.testing.assert_allclose(mc[:1] + values[:1], rewards[:1])
    np.testing.assert_allclose(mc[1:5] + values[1:5], np.cumsum(rewards[1:5][::-1])[::-1])
    td0 = gae(rewards, values, episode_end, gamma, 0.0)
    np.testing.assert_allclose(td0[1:4], rewards[1:4] + gamma * values[2:5] - values[1:4])


def test_ppo_update_moves_the_policy_towards_positive_advantages() -> None:
    """One update on a batch where action 0 has advantage +1 and action 1 has -1 (every state
    the same) raises the probability of action 0; the statistics are finite."""
    cfg = build_config({"game": "kalaha"}, ["hidden=[8]", "update_epochs=2", "num_minibatches=2"])
    torch.manual_seed(0)
    net = PolicyNet(PolicyArch(observation_size=3, num_actions=2, hidden=(8,)))
    n = 64
    obs = np.zeros((n, 3), dtype=np.float32)
    mask = np.ones((n, 2), dtype=np.float32)
    actions = np.arange(n) % 2
    with torch.no_grad():
        logits, value = net(torch.from_numpy(obs), torch.from_numpy(mask))
    logp = torch.log_softmax(logits, -1).numpy()[np.arange(n), actions]
    advantages = np.where(actions == 0, 1.0, -1.0).astype(np.float32)
    batch = Rollout(
        obs=obs, mask=mask, actions=actions, logp=logp, values=value.numpy(),
        advantages=advantages, returns=advantages + value.numpy(), games_played=n,
        moves_played=n, learner_results=np.zeros(0),
    )  # fmt: skip
    optimizer = torch.optim.Adam(net.parameters(), lr=0.01)
    stats = ppo_update(net, optimizer, batch, cfg, np.random.default_rng(0))
    assert set(stats) == {
        "loss/policy", "loss/value", "loss/entropy", "loss/approx_kl", "loss/clip_fraction"
    }  # fmt: skip
    assert all(np.isfinite(v) for v in stats.values())
    with torch.no_grad():
        after = torch.softmax(net(torch.from_numpy(obs[:1]), torch.from_numpy(mask[:1]))[0], -1)
    assert after[0, 0] > torch.exp(torch.from_numpy(logp[:1]))[0]


def test_kalaha_learner_beats_random(tmp_path) -> None:
    """A broken learner fails this: a short run on a small board must beat random clearly."""
    cfg = build_config(
        {"game": "kalaha", "game_options": SMALL_KALAHA},
        tiny(
            tmp_path,
            total_steps=15000,
            num_games=64,
            hidden="[64, 64]",
            lr=0.001,
            eval_interval=0,
            checkpoint_interval=100,
            pool_interval=5,
            final_eval_games=400,
        ),
    )
    untrained = build_config(
        {"game": "kalaha", "game_options": SMALL_KALAHA}, tiny(tmp_path, hidden="[64, 64]")
    )
    from spieltisch.agents.neural.policy import PolicyNet
    from spieltisch.train.ppo import make_arch, make_games

    torch.manual_seed(0)
    before = evaluate_vs_random(
        untrained,
        PolicyNet(make_arch(untrained, make_games("kalaha", SMALL_KALAHA, 1))),
        400,
        seed=3,
    )
    result = train(cfg)
    after = result["final_eval"]["vs_random"]
    assert after["win_rate"] >= 0.65, (before, after)
    assert after["win_rate"] > before["win_rate"] + 0.1, (before, after)


def test_hus_learner_beats_random(tmp_path) -> None:
    cfg = build_config(
        {"game": "hus"},
        tiny(
            tmp_path,
            total_steps=8000,
            num_games=32,
            hidden="[64]",
            lr=0.001,
            eval_interval=0,
            checkpoint_interval=100,
            pool_interval=5,
            final_eval_games=200,
        ),
    )
    result = train(cfg)
    # measured 0.71 (an untrained or broken learner stays near 0.5)
    assert result["final_eval"]["vs_random"]["win_rate"] >= 0.62, result["final_eval"]


# --- the shipped agent ----------------------------------------------------------------------------
PRETRAINED_PPO = sorted(
    p.stem
    for p in (Path(__file__).resolve().parents[1] / "agents" / "pretrained").glob("*.json")
    if json.loads(p.read_text()).get("algorithm") == "ppo"
)


@pytest.mark.parametrize("name", PRETRAINED_PPO)
def test_shipped_ppo_agents_load_and_beat_random(name: str) -> None:
    """Every shipped PPO agent loads by name, carries its recorded evaluation and the command
    that reproduces it, and beats random clearly (seeded games: the result is fixed)."""
    from spieltisch.agents.arena import evaluate
    from spieltisch.agents.arena.stats import wilson

    meta = load_checkpoint(Path(__file__).resolve().parents[1] / "agents/pretrained" / name).meta
    game, options = meta["game"], dict(meta["game_options"])
    options.pop("reward", None)  # a training-only choice; the agent plays any reward setting
    assert "evaluation" in meta and "train" in meta["reproduce"]
    players = int(options.get("num_players", 2))
    # HiLo: 200 games for 2 players, 4 x 40 (the agent in each seat) for 4
    seeds = (100 if players == 2 else 40) if game == "hilo" else 20
    agents = [f"pretrained:{game}"] + ["random"] * (players - 1)
    report = evaluate(game, agents, seeds=seeds, seed=11, options=options)
    if report.pairs:
        wins, games = report.pairs[0].wins, report.pairs[0].games
    else:
        row = report.table[0]
        wins, games = row["wins"], row["games"]
    low, _ = wilson(wins, games)
    assert low > 1 / len(agents), (name, wins, games)


def test_learner_off_the_cpu_path_equals_the_cpu_run(tmp_path, monkeypatch) -> None:
    """The path a CUDA learner takes (games played by a CPU copy of the network, refreshed
    after every update; pool snapshots, evaluations and saved policies from that copy), run on
    the CPU, gives the very weights of the plain CPU run: the copy is kept up to date."""
    from spieltisch.train import ppo

    args = ("total_steps=3000", *WITH_BASELINES, "pool_interval=2", "eval_interval=2")
    _run(tmp_path, "plain", *args)
    copies = []

    def always_a_copy(net, device):
        copies.append(copy.deepcopy(net))
        return copies[-1]

    monkeypatch.setattr(ppo, "playing_copy", always_a_copy)
    _run(tmp_path, "copied", *args)
    assert copies  # the copy path really ran
    for name in ("final", "best"):  # policies saved from the copy
        a = load_checkpoint(tmp_path / "plain" / name).tensors
        b = load_checkpoint(tmp_path / "copied" / name).tensors
        assert sorted(a) == sorted(b)
        for key in a:
            assert torch.equal(a[key], b[key]), (name, key)
    a, b = _final_tensors(tmp_path / "plain"), _final_tensors(tmp_path / "copied")
    for key in a:
        assert torch.equal(a[key], b[key]), key


def test_cuda_learner_without_cuda_is_a_clear_error(tmp_path) -> None:
    if torch.cuda.is_available():
        pytest.skip("this machine has CUDA")
    with pytest.raises(ValueError, match="no CUDA device"):
        _run(tmp_path, "cuda", "device=cuda")
    with pytest.raises(ConfigError, match="'device' must be cpu, cuda or auto"):
        build_config({}, ["device=tpu"])


def test_the_evaluation_line_counts_the_games_played(tmp_path) -> None:
    # 3 asked, 2 played (a multiple of the seats): the line said 3
    messages: list[str] = []
    _run(tmp_path, "e", "stop_after_iterations=1", "eval_interval=1", "eval_games=3",
         log=messages.append)  # fmt: skip
    lines = [m for m in messages if "games per opponent" in m]
    assert lines and all("2 games per opponent" in m for m in lines)
