"""How ``spieltisch train`` reports an OSError that stops a run (a full disk, Ray's
ConnectionError, an OSError from a worker): named as what it is, with --resume offered only where
a complete checkpoint exists (it promised kept checkpoints and --resume for any OSError, also for
a run that had written none)."""

from __future__ import annotations

import errno
import json
from pathlib import Path

import pytest
import spieltisch.train.ppo as ppo
from spieltisch.train.cli import main

CONFIG = str(Path(__file__).resolve().parents[1] / "configs" / "kalaha_ppo.yaml")


def _train_failing(monkeypatch, tmp_path, error, checkpoint=False):
    """``spieltisch train`` on a run whose trainer raises ``error`` (no game is played)."""
    run_dir = tmp_path / "run"
    if checkpoint:  # a complete checkpoint written before the failure
        (run_dir / "checkpoints").mkdir(parents=True)
        (run_dir / "checkpoints" / "step_0000000256.json").write_text(json.dumps({"step": 256}))

    def failing(cfg, resume=False, log=print, overwrite=False, **kwargs):
        raise error

    monkeypatch.setattr(ppo, "train", failing)
    return main(["train", CONFIG, "--set", f"run_dir={run_dir}"]), run_dir


@pytest.mark.parametrize(
    "error",
    [
        OSError(errno.ENOSPC, "No space left on device"),
        PermissionError(errno.EACCES, "Permission denied"),
        OSError("rollout worker: [Errno 104] Connection reset by peer"),
    ],
)
def test_an_os_error_names_the_kept_checkpoints(error, tmp_path, monkeypatch, capsys):
    code, run_dir = _train_failing(monkeypatch, tmp_path, error, checkpoint=True)
    assert code == 1
    err = capsys.readouterr().err
    assert f"{type(error).__name__}: {error}" in err
    assert f"complete checkpoints are kept in {run_dir}" in err
    assert "step_0000000256" in err and "--resume" in err
    assert run_dir.exists()


def test_a_connection_error_without_checkpoints_promises_no_resume(tmp_path, monkeypatch, capsys):
    # was: "...; the run's complete checkpoints are kept in ... (continue with --resume)", as if
    # the disk had filled up, for a run that had written nothing
    error = ConnectionError("Could not find any running Ray instance")
    code, run_dir = _train_failing(monkeypatch, tmp_path, error)
    assert code == 1
    err = capsys.readouterr().err
    assert "ConnectionError: Could not find any running Ray instance" in err
    assert "no checkpoint was written" in err and "nothing to resume" in err
    assert "checkpoints are kept" not in err and "--resume" not in err
    assert not run_dir.exists()  # the empty run_dir made for it is removed again


def test_ctrl_c_names_the_kept_checkpoints_and_resume(tmp_path, monkeypatch, capsys):
    code, run_dir = _train_failing(monkeypatch, tmp_path, KeyboardInterrupt(), checkpoint=True)
    assert code == 130
    err = capsys.readouterr().err
    assert "interrupted" in err and f"complete checkpoints are kept in {run_dir}" in err
    assert "step_0000000256" in err and f"{CONFIG} --resume" in err


def test_ctrl_c_before_any_file_promises_no_resume(tmp_path, monkeypatch, capsys):
    # was: "interrupted; the run's complete checkpoints are kept in ...; continue with ...
    # --resume" for a run that had written nothing (and --resume then failed)
    code, run_dir = _train_failing(monkeypatch, tmp_path, KeyboardInterrupt())
    assert code == 130
    err = capsys.readouterr().err
    assert "no checkpoint was written" in err and "nothing to resume" in err
    assert "--resume" not in err and "--overwrite" not in err
    assert not run_dir.exists()  # the empty run_dir made for it is removed again


def test_ctrl_c_before_the_first_checkpoint_offers_the_command_that_starts_over(
    tmp_path, monkeypatch, capsys
):
    # the run wrote its config and logs but no checkpoint: a plain rerun would be refused
    # ("already holds a run"), so the message names --overwrite
    run_dir = tmp_path / "run"

    def interrupted_after_writing(cfg, resume=False, log=print, overwrite=False, **kwargs):
        run_dir.mkdir(parents=True, exist_ok=True)
        (run_dir / "config.resolved.json").write_text("{}")
        raise KeyboardInterrupt

    monkeypatch.setattr(ppo, "train", interrupted_after_writing)
    assert main(["train", CONFIG, "--set", f"run_dir={run_dir}"]) == 130
    err = capsys.readouterr().err
    assert "nothing to resume" in err and "--resume" not in err
    assert f"start it over with: spieltisch train {CONFIG} --overwrite" in err
    assert run_dir.exists()
