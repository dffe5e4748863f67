"""The release scripts refuse bad input with a message (no traceback, nothing half written), check
what the end of a long run needs before the run, and never replace a shipped agent of another
algorithm by accident."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from test_benchmarks import release_module

ROOT = Path(__file__).resolve().parents[1]
RELEASE = ROOT / "release"
PRETRAINED = ROOT / "agents" / "pretrained"


def copy_agent(stem: str, dest: Path) -> None:
    for suffix in (".json", ".safetensors"):
        shutil.copyfile(PRETRAINED / f"{stem}{suffix}", f"{dest}{suffix}")


def kalaha_report(agent: str, opponent: str = "random") -> dict:
    """A two-agent arena report of Kalaha as ``spieltisch eval --json`` writes it."""
    pair = {
        "agent": agent, "opponent": opponent, "games": 2, "wins": 2, "draws": 0, "losses": 0,
        "score": 1.0, "score_low": 0.34, "score_high": 1.0, "win_rate": 1.0, "win_low": 0.34,
        "win_high": 1.0, "mean_reward": 1.0, "reward_low": 1.0, "reward_high": 1.0,
        "truncated": 0, "extra": {},
    }  # fmt: skip
    return {
        "game": "kalaha", "agents": [agent, opponent], "mode": "pair", "seeds": 1, "seed": 0,
        "options": {}, "opening_plies": 2, "pairs": [pair], "table": None,
        "machine": {"cpu_count": 2, "load_average": [0.0, 0.0, 0.0]},
    }  # fmt: skip


def test_record_eval_refuses_a_file_that_is_not_an_arena_report(tmp_path, capsys):
    record_eval = release_module("record_eval")
    (tmp_path / "other.json").write_text('{"a": 1}')
    (tmp_path / "cut.json").write_text('{"game": ')
    for name in ("missing.json", "other.json", "cut.json"):
        with pytest.raises(SystemExit) as stop:
            record_eval.main([str(tmp_path / name), "--command", "c", "--seconds", "1",
                              "--pretrained-dir", str(tmp_path)])  # fmt: skip
        assert name in str(stop.value)  # (it was a FileNotFoundError, KeyError, JSONDecodeError)


def test_record_eval_records_algo_of_the_default_in_the_default(tmp_path):
    """``pretrained:kalaha:algo=alphazero`` is the default kalaha (an AlphaZero agent), as the
    agents read it: its row goes to kalaha.json (there is no kalaha_alphazero.json)."""
    record_eval = release_module("record_eval")
    copy_agent("kalaha", tmp_path / "kalaha")
    report = tmp_path / "report.json"
    report.write_text(json.dumps(kalaha_report("pretrained:kalaha:algo=alphazero")))
    dirs = ["--pretrained-dir", str(tmp_path), "--results-dir", str(tmp_path)]
    code = record_eval.main([str(report), "--command", "c", "--seconds", "1", *dirs])
    assert code == 0
    row = json.loads((tmp_path / "kalaha.json").read_text())["evaluation"]["vs_random"]
    assert row["agent"] == "pretrained:kalaha:algo=alphazero" and row["command"] == "c"
    from spieltisch.agents.neural.checkpoint import load_checkpoint

    load_checkpoint(tmp_path / "kalaha", "kalaha")  # still a checkpoint


def test_promote_alphazero_promotes_an_agent_shipped_from_a_strength_file(tmp_path):
    """The rows of a strength benchmark have no command: promoting such an agent failed with
    KeyError 'command'; its reproducing command now keeps the benchmark's (renamed)."""
    promote = release_module("promote_alphazero")
    copy_agent("kalaha_ppo", tmp_path / "kalaha")
    copy_agent("kalaha", tmp_path / "kalaha_alphazero")  # rows from --strength, no commands
    report = tmp_path / "h2h.json"
    report.write_text(json.dumps(kalaha_report("pretrained:kalaha:algo=alphazero",
                                               "pretrained:kalaha")))  # fmt: skip
    assert promote.main(["kalaha", "--arena", str(report), "--pretrained-dir", str(tmp_path)]) == 0
    meta = json.loads((tmp_path / "kalaha.json").read_text())
    assert meta["algorithm"] == "alphazero" and (tmp_path / "kalaha_ppo.json").exists()
    evaluate = meta["reproduce"]["evaluate"]
    assert evaluate.startswith("python benchmarks/alphazero_strength.py")
    assert (
        "spieltisch eval kalaha --agents pretrained:kalaha pretrained:kalaha:algo=ppo" in evaluate
    )


@pytest.mark.parametrize("option", ["num_players", "num_players=four", "nosuch=1"])
def test_promote_alphazero_refuses_bad_options(option, tmp_path):
    promote = release_module("promote_alphazero")
    with pytest.raises(SystemExit) as stop:  # (a ValueError or JSONDecodeError traceback)
        promote.main(["hilo", "--option", option, "--pretrained-dir", str(tmp_path)])
    assert stop.value.code == 2


def test_average_checkpoints_refuses_an_out_it_cannot_write(tmp_path, capsys):
    average = release_module("average_checkpoints")
    (tmp_path / "file").write_text("")
    for out in ("/", str(tmp_path / "file" / "average")):  # (CheckpointError, FileExistsError)
        assert average.main([out, str(PRETRAINED / "kalaha_ppo")]) == 2
        assert "cannot write" in capsys.readouterr().err


def test_train_ppo_checks_the_evaluation_before_training(tmp_path):
    train_ppo = release_module("train_ppo")
    run_dir = tmp_path / "run"
    base = ["configs/kalaha_ppo.yaml", "--set", f"run_dir={run_dir}",
            "--results-dir", str(tmp_path)]  # fmt: skip
    for bad in (["--opponents", "nosuch"], ["--seeds", "0"], ["--table-opponent", "random"]):
        with pytest.raises(SystemExit) as stop:  # (unknown agents failed after the training)
            train_ppo.main([*base, *bad])
        assert stop.value.code == 2
    with pytest.raises(SystemExit):
        train_ppo.main(["configs/kalaha_alphazero.yaml", "--results-dir", str(tmp_path)])
    assert not run_dir.exists()


def test_train_ppo_ships_beside_an_agent_of_another_algorithm(tmp_path):
    """``--ship`` of a PPO Kalaha policy replaced the shipped AlphaZero ``kalaha``."""
    train_ppo = release_module("train_ppo")
    assert train_ppo.ship_stem(tmp_path, "kalaha") == "kalaha"
    copy_agent("kalaha", tmp_path / "kalaha")  # AlphaZero
    assert train_ppo.ship_stem(tmp_path, "kalaha") == "kalaha_ppo"
    copy_agent("kalaha_ppo", tmp_path / "hus")  # (any PPO agent: shipped over as before)
    assert train_ppo.ship_stem(tmp_path, "hus") == "hus"


@pytest.mark.parametrize(
    "bad",
    [["--ship", "--ship-as", "kalaha"], ["--pubeval-seeds", "-1"], ["--baseline", "nosuch"],
     ["--checkpoint-is-missing"]],
)  # fmt: skip
def test_train_td_checks_before_evaluating(bad, tmp_path):
    """These failed only after the evaluation (--ship-as after writing the results), or with a
    traceback (a missing checkpoint)."""
    train_td = release_module("train_td")
    out = tmp_path / "td.json"
    checkpoint = str(PRETRAINED / "backgammon")
    if bad == ["--checkpoint-is-missing"]:
        checkpoint, bad = str(tmp_path / "none"), []
    with pytest.raises(SystemExit) as stop:
        train_td.main([checkpoint, "--gnubg-seeds", "0", "--out", str(out),
                       "--pretrained-dir", str(tmp_path), *bad])  # fmt: skip
    assert stop.value.code == 2 and not out.exists()
    with pytest.raises(SystemExit):  # the output a directory
        train_td.main([str(PRETRAINED / "backgammon"), "--out", str(tmp_path)])


@pytest.mark.parametrize(
    "content", [None, "not json", "[1, 2]", '{"opponent": "pubeval"}',
                '{"opponent": "gnubg", "games": 2, "arena_seed": 0, "training_games": 0}'],
)  # fmt: skip
def test_train_td_refuses_a_pubeval_file_that_is_not_one(content, tmp_path, capsys):
    """--pubeval-from with a missing, malformed or foreign file gave a traceback (KeyError,
    JSONDecodeError, FileNotFoundError)."""
    train_td = release_module("train_td")
    given = tmp_path / "final_eval.json"
    if content is not None:
        given.write_text(content)
    out = tmp_path / "td.json"
    with pytest.raises(SystemExit) as stop:
        train_td.main([str(PRETRAINED / "backgammon"), "--gnubg-seeds", "0", "--out", str(out),
                       "--pubeval-from", str(given)])  # fmt: skip
    assert stop.value.code == 2 and not out.exists()
    assert "--pubeval-from" in capsys.readouterr().err


def test_fit_pubeval_cube_checks_its_output_before_playing(tmp_path):
    fit = release_module("fit_pubeval_cube")
    with pytest.raises(SystemExit) as stop:  # (a FileNotFoundError after all the games)
        fit.main(["--games", "5", "--no-progress", "--out", str(tmp_path / "none" / "cube.json")])
    assert stop.value.code == 2


def test_ship_alphazero_names_a_missing_policy(tmp_path):
    ship = release_module("ship_alphazero")
    with pytest.raises(SystemExit) as stop:  # (a CheckpointError traceback)
        ship.main([str(tmp_path), "--arena", str(tmp_path / "a.json"), "--command", "c",
                   "--train-seconds-wall", "1", "--train-seconds-cpu", "1"])  # fmt: skip
    assert stop.value.code == 2
