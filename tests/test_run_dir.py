"""One run per run directory, and a run killed while writing a checkpoint always resumes.

`spieltisch train` into a directory holding another run stops with an error naming the choices
(--resume, --overwrite, another run_dir); --overwrite removes that run's files first. A PPO run
is killed (a forked process ending with ``os._exit``: no cleanup, as SIGKILL) at every stage of
writing a checkpoint, before, inside and after each file and the pointer update: `--resume` then
finds a complete checkpoint and continues exactly as the uninterrupted run."""

from __future__ import annotations

import json
import os
import time
from collections.abc import Callable
from pathlib import Path

import pytest
import torch
from safetensors.torch import load_file
from spieltisch.agents import files
from spieltisch.agents.neural import checkpoint as ckpt_module
from spieltisch.agents.neural.checkpoint import CheckpointError, load_checkpoint
from spieltisch.train import run_files
from spieltisch.train.cli import main
from spieltisch.train.config import build_config
from spieltisch.train.ppo import PPOTrainer, train
from spieltisch.train.run_files import RunDirError, latest_checkpoint

SETTINGS = {
    "total_steps": 300,
    "num_games": 8,
    "hidden": "[16]",
    "eval_interval": 0,
    "final_eval_games": 4,
    "checkpoint_interval": 1,
    "keep_checkpoints": 1,  # the previous checkpoint is deleted once the new one is recorded
    "progress": "false",
    "tensorboard": "false",
    "max_turns": 300,
}
KILLED = 77
CONFIG = Path(__file__).resolve().parents[1] / "configs" / "kalaha_ppo.yaml"


def config(run_dir: Path, **over: object):
    sets = {**SETTINGS, "run_dir": str(run_dir), **over}
    return build_config(
        {"game": "kalaha", "game_options": {"pits": 4, "seeds": 3}},
        [f"{k}={v}" for k, v in sets.items()],
    )


def quiet(*_args: object) -> None:
    pass


def _die() -> None:
    os._exit(KILLED)  # no cleanup, no finally: what a kill leaves behind


def _on_call(count: int, action: Callable[[], None]) -> Callable[[], None]:
    """A hook that runs ``action`` on its ``count``-th call."""
    calls = [0]

    def hook() -> None:
        calls[0] += 1
        if calls[0] == count:
            action()

    return hook


# Each stage patches the writers so that the process dies at that point of writing the
# checkpoint of iteration 2 (iteration 1's is complete and recorded by then).
def _save_dies(count: int) -> Callable[[], None]:
    """A patch: the process dies as the ``count``-th training checkpoint is about to be saved."""

    def patch() -> None:
        hook, save = _on_call(count, _die), PPOTrainer.save
        PPOTrainer.save = lambda self, path: (hook(), save(self, path))[1]

    return patch


def _inside_weights() -> None:
    real, calls = ckpt_module.save_file, [0]

    def save_file(tensors: dict, filename: str) -> None:
        real(tensors, filename)  # into the temporary file of the atomic write
        calls[0] += 1
        if calls[0] == 2:
            Path(filename).write_bytes(Path(filename).read_bytes()[:1000])
            _die()

    ckpt_module.save_file = save_file


def _between_weights_and_metadata() -> None:
    hook, real = _on_call(2, _die), ckpt_module.write_text_atomic
    ckpt_module.write_text_atomic = lambda path, text: (hook(), real(path, text))[1]


def _partial_write(module: object, name: str | None) -> None:
    """Die while ``module``'s atomic write of (the second) ``name`` (any file if None) has half
    of its text in the temporary file."""
    real = module.write_text_atomic
    calls = [0]

    def write_text_atomic(path: Path, text: str) -> None:
        if name is None or Path(path).name == name:
            calls[0] += 1
            if calls[0] == 2:
                files.write_atomic(
                    path, lambda tmp: (tmp.write_text(text[: len(text) // 2]), _die())
                )
        real(path, text)

    module.write_text_atomic = write_text_atomic


def _inside_metadata() -> None:
    _partial_write(ckpt_module, None)


def _inside_pointer() -> None:
    _partial_write(run_files, "latest.txt")


def _after_pointer() -> None:
    real, calls = run_files.write_text_atomic, [0]

    def write_text_atomic(path: Path, text: str) -> None:
        real(path, text)
        if Path(path).name == "latest.txt":
            calls[0] += 1
            if calls[0] == 2:
                _die()

    run_files.write_text_atomic = write_text_atomic


def _while_deleting() -> None:
    real = Path.unlink

    def unlink(self: Path, missing_ok: bool = False) -> None:
        real(self, missing_ok=missing_ok)
        if self.parent.name == "checkpoints" and self.suffix == ".json":
            _die()  # the old metadata is gone, its weights not yet

    Path.unlink = unlink


#: stage -> (patch, the iteration of the checkpoint a resume must start from)
STAGES = {
    "before-the-checkpoint": (_save_dies(2), 1),
    "inside-the-weights-write": (_inside_weights, 1),
    "between-weights-and-metadata": (_between_weights_and_metadata, 1),
    "inside-the-metadata-write": (_inside_metadata, 1),
    "inside-the-pointer-update": (_inside_pointer, 1),
    "after-the-pointer-update": (_after_pointer, 2),
    "while-deleting-the-old-checkpoint": (_while_deleting, 2),
}


def _run_killed(run_dir: Path, patch: Callable[[], None]) -> int:
    """Train in a forked process with ``patch`` applied; its exit code."""
    pid = os.fork()
    if pid == 0:  # the child: never returns into pytest
        try:
            patch()
            train(config(run_dir), log=quiet)
        finally:
            os._exit(1)  # the run ended without reaching the kill
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            return os.waitstatus_to_exitcode(status)
        time.sleep(0.05)
    os.kill(pid, 9)
    os.waitpid(pid, 0)
    raise AssertionError("the killed run hung")


@pytest.fixture(scope="module")
def uninterrupted(tmp_path_factory: pytest.TempPathFactory) -> dict[str, torch.Tensor]:
    run_dir = tmp_path_factory.mktemp("whole") / "run"
    result = train(config(run_dir), log=quiet)
    assert result["iteration"] >= 3  # the kill at iteration 2's checkpoint is mid-run
    return load_file(str(run_dir / "final.safetensors"))


@pytest.mark.skipif(not hasattr(os, "fork"), reason="kills a forked process")
@pytest.mark.parametrize("stage", list(STAGES))
def test_a_run_killed_while_writing_a_checkpoint_resumes_exactly(
    stage: str, uninterrupted: dict[str, torch.Tensor], tmp_path: Path
) -> None:
    patch, iteration = STAGES[stage]
    run_dir = tmp_path / "run"
    assert _run_killed(run_dir, patch) == KILLED
    latest = latest_checkpoint(run_dir)
    assert latest is not None
    assert load_checkpoint(latest).meta["iteration"] == iteration
    # a new run there is refused; --resume continues as if nothing had happened
    with pytest.raises(RunDirError, match="--resume to continue it"):
        train(config(run_dir), log=quiet)
    messages: list[str] = []
    train(config(run_dir), resume=True, log=messages.append)
    resumed = [m for m in messages if m.startswith("resumed from")]
    assert len(resumed) == 1 and f"iteration {iteration}," in resumed[0]
    # the killed write's temporary file is gone (it stayed until --overwrite)
    assert not list(run_dir.rglob(".*.tmp"))
    final = load_file(str(run_dir / "final.safetensors"))
    assert sorted(final) == sorted(uninterrupted)
    for key in final:
        assert torch.equal(final[key], uninterrupted[key]), key


@pytest.mark.skipif(not hasattr(os, "fork"), reason="kills a forked process")
def test_a_run_killed_before_its_first_checkpoint_can_only_start_over(tmp_path: Path) -> None:
    run_dir = tmp_path / "run"
    assert _run_killed(run_dir, _save_dies(1)) == KILLED
    assert latest_checkpoint(run_dir) is None
    with pytest.raises(RunDirError, match="--resume is not possible"):
        train(config(run_dir), log=quiet)
    with pytest.raises(CheckpointError, match="no checkpoint"):
        train(config(run_dir), resume=True, log=quiet)
    assert train(config(run_dir), overwrite=True, log=quiet)["global_step"] >= 300


def test_the_pointer_naming_a_missing_checkpoint_falls_back_to_a_complete_one(
    tmp_path: Path,
) -> None:
    """The state the issue found (latest.txt naming a checkpoint that does not exist): resume
    uses the newest complete checkpoint and says so."""
    run_dir = tmp_path / "run"
    train(config(run_dir, stop_after_iterations=2, keep_checkpoints=3), log=quiet)
    ckpts = run_dir / "checkpoints"
    (ckpts / "latest.txt").write_text("step_0000099999\n")
    messages: list[str] = []
    train(config(run_dir), resume=True, log=messages.append)
    assert "names step_0000099999, which is incomplete" in messages[0]
    assert "at iteration 2," in messages[1]


# --- the command line ---------------------------------------------------------------------------
def _cli(run_dir: Path, *extra: str) -> list[str]:
    sets = {**SETTINGS, "run_dir": str(run_dir), "game_options.pits": 4, "game_options.seeds": 3}
    sets.update(pool_baselines="[]", eval_opponents="[random]", eval_interval=1, eval_games=4)
    args = [a for k, v in sets.items() for a in ("--set", f"{k}={v}")]
    return ["train", str(CONFIG), *args, *extra]


def test_the_command_refuses_a_used_run_dir_names_the_choices_and_overwrites(
    tmp_path: Path, capsys: pytest.CaptureFixture
) -> None:
    run_dir = tmp_path / "run"
    assert main(_cli(run_dir)) == 0
    out = capsys.readouterr().out
    # the summary: both policies' evaluation, every file, the commands for the result
    assert "best " in out and "final " in out and "random" in out
    for name in ("best.safetensors", "final.safetensors", "final_eval.json", "checkpoints"):
        assert str(run_dir / name) in out
    agent = f"checkpoint:{run_dir / 'best'}"
    assert (
        f"spieltisch eval kalaha -o pits=4 -o seeds=3 -o rules=goki --agents {agent} random" in out
    )
    report = json.loads((run_dir / "final_eval.json").read_text())
    assert report["action_selection"] == "argmax" and "best" in report
    before = {p: p.stat().st_mtime_ns for p in run_dir.rglob("*")}
    (run_dir / "notes.txt").write_text("mine")

    assert main(_cli(run_dir, "--set", "seed=1")) == 2
    err = capsys.readouterr().err
    assert f"run_dir {run_dir} already holds a run" in err
    assert "--resume" in err and "--overwrite" in err and "--set run_dir=DIR" in err
    assert {p: p.stat().st_mtime_ns for p in run_dir.rglob("*") if p.name != "notes.txt"} == before

    assert main(_cli(run_dir, "--set", "seed=1", "--resume")) == 2
    assert "config keys ['seed'] differ" in capsys.readouterr().err

    assert main(_cli(run_dir, "--set", "seed=1", "--overwrite")) == 0
    assert "removed the earlier run" in capsys.readouterr().out
    assert json.loads((run_dir / "config.resolved.json").read_text())["seed"] == 1
    assert (run_dir / "notes.txt").read_text() == "mine"  # not a run file: kept
    for name in ("best.json", "final.json"):
        assert load_checkpoint(run_dir / name.removesuffix(".json")).meta["config"]["seed"] == 1

    with pytest.raises(SystemExit) as exit_info:
        main(_cli(run_dir, "--resume", "--overwrite"))
    assert exit_info.value.code == 2
    assert "not allowed with argument" in capsys.readouterr().err


def test_an_atomic_write_keeps_the_permissions_of_the_file_it_replaces(tmp_path) -> None:
    """A new file is 0644 (shared); a file replaced keeps its mode (a 0640 or read-only file
    became 0644: the rename put the temporary file's mode in its place)."""
    new = tmp_path / "new.txt"
    files.write_text_atomic(new, "a")
    assert new.stat().st_mode & 0o777 == 0o644
    for mode in (0o640, 0o444):
        kept = tmp_path / f"kept_{mode:o}.txt"
        kept.write_text("old")
        kept.chmod(mode)
        files.write_text_atomic(kept, "new")
        assert (kept.read_text(), kept.stat().st_mode & 0o777) == ("new", mode)
