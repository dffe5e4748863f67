"""The command line: help, the play command, and clear errors for bad input."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from spieltisch.train.cli import COMMAND_MODULES, build_parser, main


def test_help_lists_every_command(capsys):
    with pytest.raises(SystemExit) as exit_info:
        main(["--help"])
    assert exit_info.value.code == 0
    out = capsys.readouterr().out
    for module in COMMAND_MODULES:
        name = module.rsplit(".", 1)[1]
        assert name in out


def test_help_loads_no_torch():
    """Every command's parser is built for `spieltisch --help`; through the train and export
    commands it imported torch, two seconds before a line was printed."""
    import subprocess
    import sys

    probe = (
        "import sys; from spieltisch.train.cli import build_parser; build_parser(); "
        "print(sorted(m for m in ('torch', 'matplotlib', 'tensorboard') if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_every_command_has_help(capsys):
    parser = build_parser()
    commands = parser._subparsers._group_actions[0].choices
    for name in commands:
        with pytest.raises(SystemExit) as exit_info:
            main([name, "--help"])
        assert exit_info.value.code == 0
        assert "usage: spieltisch " + name in capsys.readouterr().out


def test_play_prints_boards_and_the_result(capsys):
    assert main(["play", "kalaha", "-o", "pits=3", "-o", "seeds=2", "--seed", "1"]) == 0
    out = capsys.readouterr().out
    assert "seat 0 to move" in out
    assert "game 1 over after" in out


def test_play_is_reproducible(capsys):
    main(["play", "hus", "--quiet", "--games", "3", "--seed", "7"])
    first = capsys.readouterr().out
    main(["play", "hus", "--quiet", "--games", "3", "--seed", "7"])
    assert capsys.readouterr().out == first


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["play", "kalaha", "--agents", "nobody", "random"], "unknown agent 'nobody'"),
        (["play", "kalaha", "-o", "pitz=3"], "unknown option(s) ['pitz']"),
        (["play", "kalaha", "-o", "pits"], "KEY=VALUE"),
        (["play", "kalaha", "--agents", "random"], "needs 2 agents"),
        (["play", "kalaha", "-o", "rules=oware"], "rules must be one of"),
    ],
)
def test_bad_input_is_named(argv, message, capsys):
    assert main(argv) == 2
    assert message in capsys.readouterr().err


def test_play_refuses_a_negative_seed(capsys):
    with pytest.raises(SystemExit) as exit_info:
        main(["play", "kalaha", "--seed", "-5"])
    assert exit_info.value.code == 2
    assert "--seed: expected an integer of at least 0, got '-5'" in capsys.readouterr().err


def test_train_names_a_run_dir_it_cannot_make(tmp_path, capsys):
    (tmp_path / "afile").write_text("x")
    config = str(Path(__file__).resolve().parents[1] / "configs" / "kalaha_alphazero.yaml")
    argv = ["train", config, "--set", f"run_dir={tmp_path / 'afile' / 'run'}"]
    assert main(argv) == 2
    assert f"cannot make run_dir {tmp_path / 'afile' / 'run'}: Not a directory" in (
        capsys.readouterr().err
    )


def test_a_run_that_fails_before_writing_leaves_no_run_dir(tmp_path, capsys):
    config = str(Path(__file__).resolve().parents[1] / "configs" / "kalaha_alphazero.yaml")
    run_dir = tmp_path / "runs" / "new"
    assert main(["train", config, "--set", f"run_dir={run_dir}", "--resume"]) == 2
    assert "no checkpoint" in capsys.readouterr().err
    assert not run_dir.exists()  # (an empty folder was left behind)
    run_dir.mkdir(parents=True)  # a folder of one's own stays
    assert main(["train", config, "--set", f"run_dir={run_dir}", "--resume"]) == 2
    assert run_dir.is_dir()


@pytest.mark.parametrize(
    ("algorithm", "override", "words"),
    [
        (algorithm, override, words)
        for algorithm in ("ppo", "alphazero")
        for override, words in (
            ("eval_opponents=[]", "'eval_opponents' must name at least one agent"),  # crashed
            ("eval_opponents=[pretrained:kalaha]", "pretrained: agents are not taken here"),
        )
    ]
    + [("ppo", "pool_baselines=[checkpoint:x/y]", "checkpoint: agents are not taken here")],
)
def test_evaluation_opponents_are_checked_before_training(algorithm, override, words, capsys):
    config = str(Path(__file__).resolve().parents[1] / "configs" / f"kalaha_{algorithm}.yaml")
    assert main(["train", config, "--set", override]) == 2
    assert words in capsys.readouterr().err


def test_an_interrupted_training_run_says_how_to_continue(tmp_path, capsys, monkeypatch):
    import spieltisch.train.ppo as ppo

    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(ppo, "train", interrupted)
    config = str(Path(__file__).resolve().parents[1] / "configs" / "kalaha_ppo.yaml")
    (tmp_path / "run" / "checkpoints").mkdir(parents=True)  # a complete one, written before
    (tmp_path / "run" / "checkpoints" / "step_0000000256.json").write_text('{"step": 256}')
    assert main(["train", config, "--set", f"run_dir={tmp_path / 'run'}"]) == 130
    err = capsys.readouterr().err
    assert err.startswith("\n") and f"kept in {tmp_path / 'run'}" in err  # (it said only
    assert f"spieltisch train {config} --resume" in err  # 'interrupted', on the bar's line)


def test_unknown_arguments_show_the_commands_usage_and_the_option_meant(capsys):
    """An option a command does not take is refused with that command's usage (argparse gave
    the top level's, which lists no options) and the close option it has."""
    with pytest.raises(SystemExit) as exit_info:
        main(["eval", "kalaha", "--agents", "random", "greedy", "--time-limit", "1"])
    assert exit_info.value.code == 2
    err = capsys.readouterr().err
    assert "usage: spieltisch eval" in err
    assert "unrecognized arguments: --time-limit 1" in err
    assert "did you mean --move-time-limit?" in err
    with pytest.raises(SystemExit):
        main(["train", "configs/kalaha_ppo.yaml", "--sets", "lr=1"])
    err = capsys.readouterr().err
    assert "usage: spieltisch train" in err and "did you mean --set?" in err
    # play's and eval's -o KEY=VALUE is train's --set (it offered --overwrite, which deletes)
    for other in ("-o", "--option"):
        with pytest.raises(SystemExit):
            main(["train", "configs/kalaha_ppo.yaml", other, "lr=1"])
        err = capsys.readouterr().err
        assert f"{other}: did you mean --set?" in err and "mean --overwrite" not in err
    with pytest.raises(SystemExit):
        main(["play", "kalaha", "surplus"])
    err = capsys.readouterr().err
    assert "unrecognized arguments: surplus; see 'spieltisch play --help'" in err


def test_no_command_prints_help(capsys):
    assert main([]) == 2
    assert "usage: spieltisch" in capsys.readouterr().out


def test_curves_draws_one_run_or_several_and_names_what_it_cannot_draw(tmp_path, capsys):
    import json

    from torch.utils.tensorboard import SummaryWriter

    for name, unit in (("a", "step"), ("b", "pos")):
        run_dir = tmp_path / name
        writer = SummaryWriter(str(run_dir / "tb"))
        for step in (10, 20):
            writer.add_scalar("eval/score_vs_random", step / 40, step)
            writer.add_scalar("loss/policy", 1.0 / step, step)
        writer.close()
        (run_dir / "resources.json").write_text(json.dumps({"sessions": [{"unit": unit}]}))
    assert main(["curves", str(tmp_path / "a")]) == 0
    assert (tmp_path / "a" / "curves.png").read_bytes().startswith(b"\x89PNG")
    out = tmp_path / "both.png"
    assert main(["curves", str(tmp_path / "a"), str(tmp_path / "b"), "--out", str(out)]) == 0
    assert out.read_bytes().startswith(b"\x89PNG") and f"wrote {out}" in capsys.readouterr().out
    (tmp_path / "no_logs").mkdir()
    (tmp_path / "empty" / "tb").mkdir(parents=True)
    for argv, code, words in (
        ([str(tmp_path / "missing")], 2, "no run directory"),
        ([str(tmp_path / "no_logs")], 2, "no TensorBoard logs"),
        ([str(tmp_path / "a"), "--out", str(tmp_path / "x" / "c.png")], 2, "does not exist"),
        ([str(tmp_path / "a"), "--out", "/proc/c.png"], 2, "cannot write /proc/c.png"),
        ([str(tmp_path / "a"), "--out", str(tmp_path / "c.txt")], 2, "format comes from"),
        ([str(tmp_path / "empty")], 1, "nothing logged to draw yet"),
    ):
        assert main(["curves", *argv]) == code
        assert words in capsys.readouterr().err


@pytest.mark.parametrize(
    ("argv", "words"),
    [
        (["play", "kalaha", "--games", "0"], "--games: expected an integer of at least 1"),
        (["play", "kalaha", "-o", "render_mode=human"], "play draws the boards itself"),
        (["serve", "--max-sessions", "0"], "--max-sessions must be at least 1, got 0"),
        (["serve", "--max-memory", "-1"], "--max-memory must be at least 0 GiB, got -1.0"),
        (["serve", "--max-memory", "nan"], "--max-memory must be at least 0 GiB, got nan"),
        (["train", "{configs}/kalaha_ppo.yaml", "--workers", "2"], "give it with --ray"),
        (["train", "/dev/null"], "is empty"),  # it started a 2M-step run of the defaults
        (["train", "{configs}/kalaha_ppo.yaml", "--set", "totl_steps=5"], "'total_steps'?"),
    ],
)
def test_small_command_line_mistakes_are_named(argv, words, capsys):
    configs = Path(__file__).resolve().parents[1] / "configs"
    try:
        assert main([a.format(configs=configs) for a in argv]) == 2
    except SystemExit as exit_info:  # argparse's refusals
        assert exit_info.code == 2
    assert words in capsys.readouterr().err


def test_serve_names_a_taken_port_before_starting(capsys):
    import socket

    pytest.importorskip("uvicorn")
    with socket.create_server(("127.0.0.1", 0)) as taken:
        port = taken.getsockname()[1]
        assert main(["serve", "--port", str(port)]) == 1  # was uvicorn's undocumented exit 3
    err = capsys.readouterr().err
    assert f"cannot listen on 127.0.0.1:{port}: Address already in use" in err
    assert "--port 0 for any free one" in err
    # a name that does not resolve (it said "Unknown error -2", os.strerror of a lookup error)
    assert main(["serve", "--host", "nonexistent.invalid", "--port", "0"]) == 1
    err = capsys.readouterr().err
    assert "cannot listen on nonexistent.invalid:0: " in err and "Unknown error" not in err, err


def test_agent_names_and_configs_read_as_meant(tmp_path):
    from spieltisch.agents.registry import make_agent
    from spieltisch.train.config import build_config

    for name, words in [
        ("alphabeta:depth=2,depth=3", "give 'depth' twice"),  # the last one was kept
        ("pretrained:kalaha:sims=4,sims=8", "'pretrained:kalaha:sims=4,sims=8' give 'sims'"),
        ("random:seed=3", "seed comes from the arena"),  # "got multiple values for 'seed'"
        ("pretrained:kalaha:", "nothing after the last ':'"),  # "an agent for kalaha:"
        ("pretrained:kalaha:algo=", "algo= needs an algorithm"),  # played the default
        (f"checkpoint:{tmp_path}", "is a folder; name a checkpoint in it"),  # "x.json ..."
    ]:
        with pytest.raises(ValueError, match=re.escape(words)):
            make_agent(name, "kalaha")
    assert build_config({"game": "hus"}).run_dir == "runs/hus_ppo"  # was runs/kalaha_ppo
    assert build_config({"game": "hus", "algorithm": "alphazero"}).run_dir == "runs/hus_alphazero"
    assert build_config({}, ["hidden=[128.0, 64]"]).hidden == [128, 64]  # "must be list"


def test_a_full_disk_while_saving_weights_is_named(tmp_path, capsys, monkeypatch):
    # safetensors raised its own error (no OSError): a traceback instead of the message
    import spieltisch.agents.neural.checkpoint as checkpoint
    from safetensors import SafetensorError

    def full(*args, **kwargs):
        raise SafetensorError("No space left on device (os error 28)")

    monkeypatch.setattr(checkpoint, "save_file", full)
    config = str(Path(__file__).resolve().parents[1] / "configs" / "kalaha_ppo.yaml")
    small = ["game_options.pits=4", "game_options.seeds=3", "num_games=16", "hidden=[8]"]
    sets = [f"run_dir={tmp_path / 'run'}", "stop_after_iterations=1", "progress=false", *small]
    argv = ["train", config] + [x for s in sets for x in ("--set", s)]
    assert main(argv) == 1
    err = capsys.readouterr().err
    assert "No space left on device" in err
    # the first checkpoint failed: nothing to resume (it said complete checkpoints were kept)
    assert "no checkpoint was written" in err and "--resume" not in err
    assert "start it over once the cause is mended with: spieltisch train" in err  # --overwrite


def test_a_stopped_run_says_where_it_stands_in_its_own_units(tmp_path, capsys):
    # TD said "stopped at iteration 2, step 100" for 100 games
    config = str(Path(__file__).resolve().parents[1] / "configs" / "backgammon_td.yaml")
    sets = [f"run_dir={tmp_path / 'run'}", "total_games=300", "chunk_games=50",
            "stop_after_games=100", "progress=false", "eval_interval=0"]  # fmt: skip
    assert main(["train", config] + [x for s in sets for x in ("--set", s)]) == 0
    assert "stopped at game 100; continue with: spieltisch train" in capsys.readouterr().out


@pytest.mark.parametrize(("given", "bound"), [([], 8.0), (["--max-memory", "0"], None),
                                              (["--max-memory", "2.5"], 2.5)])  # fmt: skip
def test_serve_bounds_the_memory_its_games_hold(given, bound, monkeypatch):
    uvicorn = pytest.importorskip("uvicorn")
    import spieltisch.train.web.app as web_app

    seen = []
    create_app = web_app.create_app
    monkeypatch.setattr(web_app, "create_app", lambda s: seen.append(s) or create_app(s))
    monkeypatch.setattr(uvicorn.Server, "run", lambda self, sockets=None: None)  # (no serving)
    assert main(["serve", "--port", "0", *given]) == 0
    assert seen[0].max_memory_gib == bound
