"""Every script in benchmarks/ and release/ runs, so that none can rot between full runs.

Each benchmark runs with ``--quick`` (tiny sizes, a few seconds) and writes its results to a
temporary ``--results-dir``; each release script runs on a tiny input, shipping (where it
ships) into a temporary folder. None may touch ``benchmarks/results/`` or the shipped agents.
"""

from __future__ import annotations

import argparse
import hashlib
import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[1]
BENCHMARKS = ROOT / "benchmarks"
RELEASE = ROOT / "release"
#: what the scripts must never change when run by this test
RECORDED = [BENCHMARKS / "results", ROOT / "agents" / "pretrained", ROOT / "agents" / "data"]
BENCHMARK_SCRIPTS = sorted(p.name for p in BENCHMARKS.glob("*.py") if not p.name.startswith("_"))
#: optional modules (from the test extra) a script needs: open_spiel, gnubg-nn, ray, pygame
NEEDS = {
    "arena_baselines.py": ["gnubg_nn"],
    "arena_cube.py": ["gnubg_nn"],
    "arena_reference.py": ["gnubg_nn"],
    "bench_backgammon.py": ["gnubg_nn", "pyspiel"],
    "bench_hilo.py": ["pygame"],
    "bench_mancala.py": ["pyspiel", "pygame"],
    "bench_ray.py": ["ray"],
    "soak_backgammon_gnubg.py": ["gnubg_nn"],
    "train_td.py": ["gnubg_nn"],
    "derive_pubeval_weights.py": ["gnubg_nn"],
}
#: a PPO run of a few seconds (small board, tiny net, no alpha-beta opponents to compile)
TINY_PPO = [
    "game_options.pits=4",
    "total_steps=300",
    "num_games=8",
    "hidden=[16]",
    "max_turns=300",
    "eval_interval=0",
    "final_eval_games=2",
    "pool_baselines=[]",
    "eval_opponents=[random]",
    "progress=false",
    "tensorboard=false",
]


def _skip_without_needs(script: str) -> None:
    missing = [m for m in NEEDS.get(script, []) if importlib.util.find_spec(m) is None]
    if missing:
        pytest.skip(f"{script} needs {missing}: pip install -e '.[test]'")


def _snapshot() -> dict[str, str]:
    """Path -> SHA-256 of every recorded file."""
    return {
        str(p): hashlib.sha256(p.read_bytes()).hexdigest()
        for folder in RECORDED
        for p in sorted(folder.rglob("*"))
        if p.is_file()
    }


@pytest.fixture
def recorded_files_unchanged():
    before = _snapshot()
    yield
    assert _snapshot() == before, "a script changed recorded results or shipped files"


def _run(script: Path, *args: object, timeout: float = 300) -> str:
    """Run ``script`` from the repository root; returns its output, fails with its tail."""
    env = dict(os.environ, PYGAME_HIDE_SUPPORT_PROMPT="1", RAY_USAGE_STATS_ENABLED="0")
    proc = subprocess.run(
        [sys.executable, str(script), *map(str, args)],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=timeout,
    )  # fmt: skip
    output = proc.stdout + proc.stderr
    assert proc.returncode == 0, f"{script.name} exited with {proc.returncode}:\n{output[-4000:]}"
    return output


@pytest.mark.parametrize("script", BENCHMARK_SCRIPTS)
def test_benchmark_quick_run(script, tmp_path, recorded_files_unchanged):
    _skip_without_needs(script)
    results = tmp_path / "results"
    _run(BENCHMARKS / script, "--quick", "--results-dir", results)
    written = sorted(results.iterdir()) if results.exists() else []
    assert written, f"{script} --quick wrote no results to --results-dir"
    for path in written:
        if path.suffix == ".json":
            data = json.loads(path.read_text())
            # every benchmark records the memory it needed (issue: none above 4 GiB)
            assert isinstance(data, dict) and 0 < data["peak_rss_gib"] < 4, path.name


def test_quick_runs_write_nowhere_unless_told(tmp_path):
    spec = importlib.util.spec_from_file_location("_common", BENCHMARKS / "_common.py")
    common = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(common)
    parser = argparse.ArgumentParser()
    common.add_run_options(parser)
    assert common.results_dir(parser.parse_args([])) == BENCHMARKS / "results"
    assert common.results_dir(parser.parse_args(["--quick"])) is None
    args = parser.parse_args(["--quick", "--results-dir", str(tmp_path)])
    assert common.result_path(args, "x.json") == tmp_path / "x.json"


def test_every_release_script_is_run_here():
    tested = {
        "train_ppo.py",
        "train_td.py",
        "record_eval.py",
        "derive_pubeval_weights.py",
        "ship_alphazero.py",
        "promote_alphazero.py",
        "average_checkpoints.py",
        "fit_pubeval_cube.py",
    }
    assert {p.name for p in RELEASE.glob("*.py")} == tested


def test_release_train_ppo_trains_evaluates_and_ships(tmp_path, recorded_files_unchanged):
    from spieltisch.agents.neural.checkpoint import load_checkpoint

    sets = [x for s in [*TINY_PPO, f"run_dir={tmp_path / 'run'}"] for x in ("--set", s)]
    _run(
        RELEASE / "train_ppo.py", "configs/kalaha_ppo.yaml", *sets, "--seeds", "1",
        "--results-dir", tmp_path, "--pretrained-dir", tmp_path / "pretrained", "--ship",
    )  # fmt: skip
    result = json.loads((tmp_path / "kalaha_ppo_train.json").read_text())
    assert result["evaluation"]["vs_random"]["games"] == 2
    assert "run_dir" not in result["command"]
    shipped = load_checkpoint(tmp_path / "pretrained" / "kalaha", "kalaha")
    assert shipped.meta["reproduce"]["benchmark"].startswith("python release/train_ppo.py")
    assert shipped.meta["evaluation"] == result["evaluation"]


def test_release_ship_alphazero_moves_the_ppo_agent_aside(tmp_path, recorded_files_unchanged):
    """A tiny Kalah(6,4) AlphaZero run, its quick strength run, shipped into a copy of the
    pretrained folder: the PPO agent becomes ``kalaha_6x4_ppo`` (``pretrained:kalaha:algo=ppo``),
    the AlphaZero one takes ``kalaha_6x4`` (``pretrained:kalaha``)."""
    from spieltisch.agents.neural.checkpoint import load_checkpoint
    from spieltisch.agents.registry import make_agent

    run = tmp_path / "run"
    tiny = ["num_games=4", "num_simulations=2", "hidden=[16]", "batch_size=16",
            "total_positions=20", "eval_interval=0", "final_eval_games=2",
            "eval_opponents=[random]",
            "progress=false", "tensorboard=false", f"run_dir={run}"]  # fmt: skip
    subprocess.run(
        [sys.executable, "-m", "spieltisch.train.cli", "train",
         "configs/kalaha_6x4_alphazero.yaml", *(x for s in tiny for x in ("--set", s))],
        cwd=ROOT, check=True, capture_output=True, timeout=300,
    )  # fmt: skip
    pretrained = tmp_path / "pretrained"
    pretrained.mkdir()
    for suffix in (".json", ".safetensors"):  # the PPO agent, shipped as it was before
        source = ROOT / "agents" / "pretrained" / f"kalaha_6x4_ppo{suffix}"
        (pretrained / f"kalaha_6x4{suffix}").write_bytes(source.read_bytes())
    sidecar = pretrained / "kalaha_6x4.json"  # its labels as they were: pretrained:kalaha...
    meta = json.loads(sidecar.read_text())
    for row in meta["evaluation"].values():
        row["agent"] = row["agent"].replace(":algo=ppo,", ":").replace(":algo=ppo", "")
    sidecar.write_text(json.dumps(meta))
    _run(  # --quick judges endgames only (a 10-stone database): about a minute on 2 busy cores
        BENCHMARKS / "alphazero_strength.py", "--quick", "--agent", f"checkpoint:{run}/final",
        "--results-dir", tmp_path, timeout=600,
    )  # fmt: skip
    _run(
        RELEASE / "ship_alphazero.py", run, "--policy", "final",
        "--strength", tmp_path / "alphazero_strength_kalaha_6x4.json",
        "--command", "spieltisch train configs/kalaha_6x4_alphazero.yaml",
        "--train-seconds-wall", "1", "--train-seconds-cpu", "1",
        "--results-dir", tmp_path, "--pretrained-dir", pretrained, "--ship",
    )  # fmt: skip
    result = json.loads((tmp_path / "kalaha_6x4_alphazero_train.json").read_text())
    assert result["evaluation"]["vs_random"]["games"] == 4
    shipped = load_checkpoint(pretrained / "kalaha_6x4", "kalaha", root=pretrained)
    assert shipped.meta["algorithm"] == "alphazero"
    assert shipped.meta["evaluation"] == result["evaluation"]
    moved = load_checkpoint(pretrained / "kalaha_6x4_ppo", "kalaha", root=pretrained)
    assert moved.meta["algorithm"] == "ppo"
    labels = [row["agent"] for row in moved.meta["evaluation"].values()]
    assert labels and all(label.count("algo=ppo") == 1 for label in labels), labels
    import spieltisch.agents.neural.agents as shipped_agents

    options = {"pits": 6, "seeds": 4, "rules": "goki"}
    saved = shipped_agents.PRETRAINED_DIR
    shipped_agents.PRETRAINED_DIR = pretrained
    try:
        ppo = make_agent("pretrained:kalaha:algo=ppo", "kalaha", game_options=options)
        alphazero = make_agent("pretrained:kalaha:sims=4", "kalaha", game_options=options)
    finally:
        shipped_agents.PRETRAINED_DIR = saved
    assert list(ppo.net.arch.hidden) == [128, 128] and list(alphazero.net.arch.hidden) == [16]


def test_release_train_td_evaluates_and_ships(tmp_path, recorded_files_unchanged):
    _skip_without_needs("train_td.py")
    from spieltisch.agents.neural.checkpoint import load_checkpoint

    out = tmp_path / "backgammon_td_train.json"
    _run(
        RELEASE / "train_td.py", ROOT / "agents" / "pretrained" / "backgammon",
        "--pubeval-seeds", "1", "--gnubg-seeds", "1", "--out", out,
        "--pretrained-dir", tmp_path, "--ship",
    )  # fmt: skip
    result = json.loads(out.read_text())
    assert {"vs_pubeval", "vs_gnubg"} == set(result["evaluation"])
    shipped = load_checkpoint(tmp_path / "backgammon", "backgammon")
    assert shipped.meta["evaluation"] == result["evaluation"]


def test_release_average_checkpoints_writes_a_net_that_plays(tmp_path, recorded_files_unchanged):
    from spieltisch.agents.backgammon.td_value import load_td_net
    from spieltisch.agents.registry import make_agent

    shipped = ROOT / "agents" / "pretrained" / "backgammon"
    (tmp_path / "copy.json").write_bytes(shipped.with_suffix(".json").read_bytes())
    (tmp_path / "copy.safetensors").write_bytes(shipped.with_suffix(".safetensors").read_bytes())
    out = tmp_path / "average"
    _run(RELEASE / "average_checkpoints.py", out, shipped, tmp_path / "copy")
    _, params, _ = load_td_net(str(out))
    _, expected, _ = load_td_net("pretrained:backgammon")
    for name, value in expected.items():  # the mean of a net and its copy is that net
        np.testing.assert_array_equal(params[name], value)
    agent = make_agent(f"checkpoint:{out}", "backgammon", seed=0)
    assert agent.params.keys() == expected.keys()
    proc = subprocess.run(
        [sys.executable, str(RELEASE / "average_checkpoints.py"), out, shipped],
        cwd=ROOT, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert proc.returncode == 2 and "not overwritten" in proc.stderr


def test_release_record_eval_records_an_arena_report(tmp_path, recorded_files_unchanged):
    pretrained, results = tmp_path / "pretrained", tmp_path / "results"
    copies = {
        pretrained / "hus.json": ROOT / "agents" / "pretrained" / "hus.json",
        results / "hus_alphazero_train.json": BENCHMARKS / "results" / "hus_alphazero_train.json",
        results / "hus_ppo_train.json": BENCHMARKS / "results" / "hus_ppo_train.json",
    }
    for copy, source in copies.items():
        copy.parent.mkdir(exist_ok=True)
        copy.write_text(source.read_text())
    ppo_results = (results / "hus_ppo_train.json").read_text()
    report = tmp_path / "report.json"
    command = "spieltisch eval hus --agents pretrained:hus random --seeds 1"
    cli = ["-m", "spieltisch.train.cli", "eval", "hus", "--agents", "pretrained:hus", "random"]
    subprocess.run(
        [sys.executable, *cli, "--seeds", "1", "--json", str(report), "--no-progress"],
        cwd=ROOT, check=True, capture_output=True, timeout=300,
    )  # fmt: skip
    _run(
        RELEASE / "record_eval.py", report, "--command", command, "--seconds", "1.5",
        "--pretrained-dir", pretrained, "--results-dir", results,
    )  # fmt: skip
    # the default (an AlphaZero agent): its metadata and its training results, not the PPO's
    for path in (pretrained / "hus.json", results / "hus_alphazero_train.json"):
        row = json.loads(path.read_text())["evaluation"]["vs_random"]
        assert row["command"] == command and row["games"] == 2 and row["seconds"] == 1.5
    assert (results / "hus_ppo_train.json").read_text() == ppo_results
    # an agent shipped beside the default (algo=X): its own files, the default's left alone
    for name in ("hus_alphazero_moves.json", "hus_alphazero_moves_train.json"):
        folder, source = (pretrained, "agents/pretrained") if "train" not in name else (
            results, "benchmarks/results")  # fmt: skip
        (folder / name).write_text((ROOT / source / name).read_text())
    before = (pretrained / "hus.json").read_text()
    agent = "pretrained:hus:algo=alphazero_moves,search=1"
    subprocess.run(
        [sys.executable, *cli[:5], agent, "random", "--seeds", "1", "--json", str(report),
         "--no-progress"],
        cwd=ROOT, check=True, capture_output=True, timeout=300,
    )  # fmt: skip
    _run(
        RELEASE / "record_eval.py", report, "--command", "c2", "--seconds", "2",
        "--pretrained-dir", pretrained, "--results-dir", results,
    )  # fmt: skip
    for path in (
        pretrained / "hus_alphazero_moves.json",
        results / "hus_alphazero_moves_train.json",
    ):
        row = json.loads(path.read_text())["evaluation"]["search1_vs_random"]
        assert row["agent"] == agent and row["command"] == "c2" and row["games"] == 2
    assert (pretrained / "hus.json").read_text() == before


def test_release_derive_pubeval_weights_reproduces_the_shipped_data(tmp_path):
    _skip_without_needs("derive_pubeval_weights.py")
    out = tmp_path / "pubeval.json"
    _run(RELEASE / "derive_pubeval_weights.py", "--out", out)
    derived = json.loads(out.read_text())
    shipped = json.loads((ROOT / "agents" / "data" / "pubeval.json").read_text())
    assert derived.keys() == shipped.keys()
    assert derived["source"] == shipped["source"]
    for kind in ("race", "contact"):
        assert derived[kind] == pytest.approx(shipped[kind], abs=2e-5)


def test_release_ship_alphazero_from_arena_reports_beside_the_shipped_agent(
    tmp_path, recorded_files_unchanged
):
    """``--arena`` rows (the policy relabelled, its parameters kept) and ``--beside``: the
    shipped agent stays, the policy becomes ``<name>_alphazero`` (``algo=alphazero``)."""
    from spieltisch.agents.neural.checkpoint import load_checkpoint

    run = tmp_path / "run"
    tiny = ["game_options.pits=4", "num_games=4", "num_simulations=2", "hidden=[16]",
            "batch_size=16", "total_positions=20", "eval_interval=0", "final_eval_games=2",
            "eval_opponents=[random]", "progress=false", "tensorboard=false",
            f"run_dir={run}"]  # fmt: skip
    cli = [sys.executable, "-m", "spieltisch.train.cli"]
    subprocess.run(
        [*cli, "train", "configs/kalaha_alphazero.yaml", *(x for s in tiny for x in ("--set", s))],
        cwd=ROOT, check=True, capture_output=True, timeout=300,
    )  # fmt: skip
    report = tmp_path / "arena.json"
    subprocess.run(
        [*cli, "eval", "kalaha", "-o", "pits=4", "--agents", f"checkpoint:{run}/final:sims=2",
         "random", "--seeds", "1", "--workers", "1", "--no-progress", "--json", str(report)],
        cwd=ROOT, check=True, capture_output=True, timeout=300,
    )  # fmt: skip
    pretrained = tmp_path / "pretrained"
    pretrained.mkdir()
    _run(
        RELEASE / "ship_alphazero.py", run, "--policy", "final", "--arena", report,
        "--command", "spieltisch train configs/kalaha_alphazero.yaml",
        "--results-dir", tmp_path, "--pretrained-dir", pretrained, "--ship", "--beside",
    )  # fmt: skip
    # without --train-seconds-*, the training time is the run's ledger (resources.json)
    ledger = json.loads((run / "resources.json").read_text())
    result = json.loads((tmp_path / "kalaha_alphazero_train.json").read_text())
    assert result["resources"] == ledger and ledger["total"]["sessions"] == 1
    assert result["train_seconds_cpu"] == ledger["total"]["cpu_seconds"] > 0
    shipped = load_checkpoint(pretrained / "kalaha_alphazero", "kalaha", root=pretrained)
    row = shipped.meta["evaluation"]["sims2_vs_random"]
    assert row["agent"] == "pretrained:kalaha:algo=alphazero,sims=2"
    assert row["games"] == 2 and "--seeds 1" in row["command"]
    assert not (pretrained / "kalaha.json").exists()  # nothing else shipped or moved
    # --algo names a variant shipped beside (an AlphaZero default keeps its recorded rows)
    _run(
        RELEASE / "ship_alphazero.py", run, "--policy", "final", "--arena", report,
        "--command", "spieltisch train configs/kalaha_alphazero.yaml", "--algo", "alphazero_moves",
        "--results-dir", tmp_path, "--pretrained-dir", pretrained, "--ship", "--beside",
    )  # fmt: skip
    variant = load_checkpoint(pretrained / "kalaha_alphazero_moves", "kalaha", root=pretrained)
    row = variant.meta["evaluation"]["sims2_vs_random"]
    assert row["agent"] == "pretrained:kalaha:algo=alphazero_moves,sims=2"
    assert (tmp_path / "kalaha_alphazero_moves_train.json").exists()
    refused = subprocess.run(
        [sys.executable, RELEASE / "ship_alphazero.py", run, "--arena", report, "--command", "x",
         "--algo", "moves", "--results-dir", tmp_path],
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert refused.returncode != 0 and "--algo names the agent shipped --beside" in refused.stderr


def test_release_promote_alphazero_swaps_the_default_and_renames_every_row(
    tmp_path, recorded_files_unchanged
):
    """The agent shipped beside (``kalaha_alphazero``) becomes ``kalaha`` with its weights; the
    PPO default moves to ``kalaha_ppo``; every recorded row and the arena report's pairs name
    the agents as they are reached after the move."""
    import torch
    from spieltisch.agents.neural.checkpoint import load_checkpoint, save_checkpoint
    from spieltisch.agents.neural.policy import PolicyArch, PolicyNet

    pretrained = tmp_path / "pretrained"
    pretrained.mkdir()
    torch.manual_seed(0)
    nets = {}
    for name, algo, row_agent in (
        ("kalaha", "ppo", "pretrained:kalaha:search=2"),
        ("kalaha_alphazero", "alphazero", "pretrained:kalaha:algo=alphazero,sims=2"),
    ):
        net = PolicyNet(PolicyArch(14, 6, (8,)))
        nets[algo] = {f"model.{k}": v for k, v in net.state_dict().items()}
        command = f"spieltisch eval kalaha --agents {row_agent} random --seeds 1"
        row = {"agent": row_agent, "opponent": "random", "games": 2, "wins": 2, "losses": 0,
               "command": command}  # fmt: skip
        meta = {"game": "kalaha", "game_options": {}, "arch": net.arch.to_json(),
                "algorithm": algo, "evaluation": {"row": row}}  # fmt: skip
        save_checkpoint(pretrained / name, meta, nets[algo])
    report = tmp_path / "h2h.json"
    pair = {"agent": "pretrained:kalaha:algo=alphazero,sims=2",
            "opponent": "pretrained:kalaha:search=2", "games": 2, "wins": 1, "draws": 0,
            "losses": 1, "win_rate": 0.5}  # fmt: skip
    report.write_text(json.dumps({"game": "kalaha", "options": {}, "seeds": 1, "seed": 7,
                                  "machine": {"cpu_count": 2, "load_average": [1, 1, 1]},
                                  "pairs": [pair]}))  # fmt: skip
    _run(
        RELEASE / "promote_alphazero.py", "kalaha", "--arena", report,
        "--search-value-weight", "2", "--pretrained-dir", pretrained,
    )  # fmt: skip
    assert sorted(p.stem for p in pretrained.glob("*.safetensors")) == ["kalaha", "kalaha_ppo"]
    new = load_checkpoint(pretrained / "kalaha", "kalaha", root=pretrained)
    old = load_checkpoint(pretrained / "kalaha_ppo", "kalaha", root=pretrained)
    assert all(torch.equal(new.tensors[k], v) for k, v in nets["alphazero"].items())
    assert all(torch.equal(old.tensors[k], v) for k, v in nets["ppo"].items())
    assert new.meta["algorithm"] == "alphazero" and new.meta["search_value_weight"] == 2.0
    assert new.meta["evaluation"]["row"]["agent"] == "pretrained:kalaha:sims=2"
    assert "--agents pretrained:kalaha:sims=2 random" in new.meta["evaluation"]["row"]["command"]
    h2h = new.meta["evaluation"]["sims2_vs_pretrained_kalaha_algoppo_search2"]
    assert (h2h["agent"], h2h["opponent"]) == (
        "pretrained:kalaha:sims=2",
        "pretrained:kalaha:algo=ppo,search=2",
    )
    assert "--seeds 1 --seed 7" in h2h["command"]
    assert old.meta["evaluation"]["row"]["agent"] == "pretrained:kalaha:algo=ppo,search=2"
    # a second promotion is refused: the default is an AlphaZero agent already
    fail = subprocess.run(
        [sys.executable, str(RELEASE / "promote_alphazero.py"), "kalaha",
         "--pretrained-dir", str(pretrained)],
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert fail.returncode == 2 and "no AlphaZero agent shipped beside kalaha" in fail.stderr


def release_module(name: str):
    """A script of release/ imported as a module (the scripts import each other by name)."""
    sys.path.insert(0, str(RELEASE))
    try:
        return importlib.import_module(name)
    finally:
        sys.path.remove(str(RELEASE))


def test_release_ship_alphazero_reads_table_reports_of_four_player_games():
    """A ``--mode table`` report (HiLo with 4 players) gives one row per checkpoint agent, the
    other seats as its opponents, and the table command that reproduces it."""
    ship_alphazero = release_module("ship_alphazero")
    agent = "checkpoint:runs/x/final:search=16"
    report = {
        "game": "hilo", "options": {"num_players": 4}, "seeds": 100, "seed": 5, "pairs": [],
        "agents": [agent, "heuristic", "heuristic", "heuristic"],
        "table": [{"agent": agent, "games": 400, "wins": 259, "losses": 141},
                  {"agent": "heuristic", "games": 1200, "wins": 394, "losses": 797}],
        "machine": {"cpu_count": 2, "load_average": [1.0, 1.0, 1.0]},
    }  # fmt: skip
    rows = ship_alphazero.arena_rows(report, "pretrained:hilo")
    assert list(rows) == ["search16_vs_heuristic"]
    row = rows["search16_vs_heuristic"]
    assert row["agent"] == "pretrained:hilo:search=16" and row["wins"] == 259
    assert row["opponents"] == ["heuristic"] * 3
    assert row["command"] == (
        "spieltisch eval hilo -o num_players=4 --mode table --agents pretrained:hilo:search=16 "
        "heuristic heuristic heuristic --seeds 100 --seed 5"
    )


def test_release_ship_alphazero_names_opponents_as_after_the_move():
    """An arena opponent that is the shipped default about to move aside is recorded under the
    name that reaches it afterwards (``pretrained:hilo:algo=ppo,search=16``)."""
    ship_alphazero = release_module("ship_alphazero")
    agent = "checkpoint:runs/x/final:search=16"
    report = {
        "game": "hilo", "options": {}, "seeds": 3, "seed": 5, "table": [],
        "pairs": [{"agent": agent, "opponent": "pretrained:hilo:search=16", "games": 6}],
        "machine": {"cpu_count": 2, "load_average": [1.0, 1.0, 1.0]},
    }  # fmt: skip
    rename = ship_alphazero.renamer("hilo", "ppo")
    (row,) = ship_alphazero.arena_rows(report, "pretrained:hilo", rename).values()
    assert row["agent"] == "pretrained:hilo:search=16"
    assert row["opponent"] == "pretrained:hilo:algo=ppo,search=16"
    assert row["command"].endswith(
        "--agents pretrained:hilo:search=16 pretrained:hilo:algo=ppo,search=16 --seeds 3 --seed 5"
    )
    assert rename("pretrained:hilo:algo=alphazero,sims=8") == "pretrained:hilo:sims=8"
    assert rename("heuristic") == "heuristic"


def test_release_scripts_read_agent_parameters_alike():
    """Both release scripts split a pretrained agent's parameters at colons and commas, as the
    agents' parser does, so ``algo=ppo:search=4`` is the PPO agent with search, not the
    default (it read as one parameter ``algo=ppo:search=4`` and so as no default)."""
    ship_alphazero = release_module("ship_alphazero")
    record_eval = release_module("record_eval")
    for name in ("pretrained:hus:algo=ppo:search=4", "pretrained:hus:algo=ppo,search=4"):
        assert ship_alphazero.pretrained_params(name, "hus") == ["algo=ppo", "search=4"]
        assert record_eval.agent_params(name) == ["algo=ppo", "search=4"]
        assert not ship_alphazero.names_shipped_default(name, "hus")
    assert ship_alphazero.names_shipped_default("pretrained:hus:search=4", "hus")
    assert ship_alphazero.pretrained_params("pretrained:hus", "hus") == []
    assert ship_alphazero.pretrained_params("pretrained:hilo_4p:search=4", "hilo") is None


def test_release_ship_alphazero_leaves_out_matches_against_the_agent_it_replaces():
    """Shipped over ``pretrained:hus``, a match against ``pretrained:hus`` would read as the
    new agent against itself: it is left out, the PPO agent's (``algo=ppo``) and the
    baseline's are kept; shipped beside the default, all are kept. Over a PPO agent that moves
    aside, the match against it is kept under its new name."""
    ship_alphazero = release_module("ship_alphazero")
    result = {"games": 10, "wins": 6, "draws": 0, "losses": 4, "seconds": 1.0}
    result |= {"score": 0.6, "score_low": 0.3, "score_high": 0.9}
    strength = {
        "matches": [
            {"sims": 0, "opponent": "pretrained:hus", **result},
            {"sims": 32, "opponent": "pretrained:hus:search=6", **result},
            {"sims": 0, "opponent": "pretrained:hus:algo=ppo", **result},
            {"sims": 32, "opponent": "alphabeta:depth=3", **result},
            {"sims": 0, "opponent": "pretrained:hilo", **result},
        ]
    }
    rows = ship_alphazero.evaluation_rows(strength, "hus")
    assert len(rows) == 5
    replacing = ship_alphazero.without_the_replaced_agent(rows, "hus")
    assert list(replacing) == [
        "vs_pretrained:hus:algo=ppo", "sims32_vs_alphabeta:depth=3", "vs_pretrained:hilo"
    ]  # fmt: skip
    over_ppo = ship_alphazero.evaluation_rows(
        {"matches": strength["matches"][:1]}, "hus", ship_alphazero.renamer("hus", "ppo")
    )
    assert list(ship_alphazero.without_the_replaced_agent(over_ppo, "hus")) == [
        "vs_pretrained:hus:algo=ppo"
    ]
    beside = ship_alphazero.evaluation_rows(strength, "hus", label="pretrained:hus:algo=x")
    assert [row["agent"] for row in beside.values()][:2] == [
        "pretrained:hus:algo=x", "pretrained:hus:algo=x,sims=32"
    ]  # fmt: skip


def test_backgammon_lookahead_append_replaces_rows_measured_again():
    """``--append``: a row measured again (same agent, opponent, ply) replaces its recorded row
    in place, other rows stay, and a run no row names any more is dropped."""
    sys.path.insert(0, str(BENCHMARKS))
    try:
        lookahead = importlib.import_module("backgammon_lookahead")
    finally:
        sys.path.remove(str(BENCHMARKS))

    def row(agent: str, opponent: str, ply: int, command: str, ppg: float) -> dict:
        return {"agent": agent, "opponent": opponent, "ply": ply, "command": command, "ppg": ppg}

    earlier = {
        "runs": [{"command": "A"}, {"command": "B"}],
        "rows": [
            row("a", "pubeval", 1, "A", 0.1),
            row("b", "pubeval", 1, "B", 0.2),
            row("b", "gnubg", 1, "B", -0.2),
        ],
    }
    new = [row("b", "pubeval", 1, "C", 0.3), row("b", "gnubg", 1, "C", -0.1),
           row("b", "pubeval", 2, "C", 0.4)]  # fmt: skip
    rows, runs = lookahead.merge_recorded(earlier, new, [{"command": "C"}])
    assert [(r["agent"], r["opponent"], r["ply"], r["ppg"]) for r in rows] == [
        ("a", "pubeval", 1, 0.1), ("b", "pubeval", 1, 0.3), ("b", "gnubg", 1, -0.1),
        ("b", "pubeval", 2, 0.4),
    ]  # fmt: skip
    assert [r["command"] for r in runs] == ["A", "C"]


def test_backgammon_lookahead_extend_is_the_longer_run(tmp_path):
    """``--extend``: a match recorded on seeds [s, s + a) extended by one on [s + a, s + a + b)
    has the row of one run on [s, s + a + b): the same games, mean, interval and wins (the
    union's statistics are exact); a run on other seeds or of another match is refused; the
    runs of both parts stay recorded."""
    sys.path.insert(0, str(BENCHMARKS))
    try:
        lookahead = importlib.import_module("backgammon_lookahead")
    finally:
        sys.path.remove(str(BENCHMARKS))

    def row(seed: int, seeds: int, command: str) -> dict:
        row = lookahead.match("pubeval", "greedy", 2 * seeds, seed, workers=1)
        return row | {"ply": 1, "command": command}

    first, second, whole = row(100, 9, "A"), row(109, 6, "B"), row(100, 15, "W")
    extended = lookahead.extend_row(first, second)
    assert extended["games"] == whole["games"] == 30
    assert 0 < whole["win_rate"] < 1 and whole["ppg_low"] < whole["ppg_high"]
    for key in ("ppg", "ppg_low", "ppg_high", "win_rate", "win_low", "win_high"):
        assert extended[key] == pytest.approx(whole[key], abs=1e-12), key
    assert extended["command"] == "A && B"
    with pytest.raises(ValueError, match="ends at seed 109, this run starts at 110"):
        lookahead.extend_row(first, row(110, 2, "C"))
    with pytest.raises(ValueError, match="another match"):
        lookahead.extend_row(first, second | {"opponent": "gnubg"})
    # --journal-dir: the match's games recorded, and read back instead of played again
    journaled = [
        lookahead.match("pubeval", "greedy", 30, 100, 1, journal_dir=tmp_path) for _ in "ab"
    ]
    for again in journaled:
        assert {k: again[k] for k in ("games", "ppg", "ppg_low", "win_rate")} == {
            k: whole[k] for k in ("games", "ppg", "ppg_low", "win_rate")
        }
    assert len((tmp_path / "pubeval_vs_greedy.jsonl").read_text().splitlines()) == 1 + 30
    earlier = {"runs": [{"command": "A"}, {"command": "Z"}], "rows": [first]}
    rows, runs = lookahead.merge_recorded(earlier, [extended], [{"command": "B"}])
    assert rows == [extended] and [r["command"] for r in runs] == ["A", "B"]


def test_release_fit_pubeval_cube_writes_a_model(tmp_path, recorded_files_unchanged):
    out = tmp_path / "pubeval_cube.json"
    _run(RELEASE / "fit_pubeval_cube.py", "--games", 10, "--bins", 3, "--out", out, "--no-progress")
    data = json.loads(out.read_text())
    for kind in ("race", "contact"):
        results = np.array(data[kind]["results"])
        assert results.shape == (len(data[kind]["edges"]) + 1, 6)
        assert np.allclose(results.sum(axis=1), 1.0)
    assert data["games"] == 10 and len(data["held_out"]["calibration"]) == 10
    assert "--games 10" in data["command"]
