"""The run loop shared by the trainers (train/run_loop.py), driven by a toy trainer: the contract
a new trainer implements, checkpoint and evaluation cadence, keep-best, exact resume, the end."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from run_helpers import lose_newest_checkpoint
from spieltisch.agents.neural.checkpoint import CheckpointError
from spieltisch.train.config import RunConfig
from spieltisch.train.run_files import RunDirError, latest_checkpoint
from spieltisch.train.run_loop import Evaluation, Trainer, run

ROUNDS = 12


class ToyTrainer(Trainer):
    """A round adds a random number to a total; a step takes up to ``chunk`` rounds; the
    evaluation's score peaks at round 6; ten progress units per round."""

    unit = "tick"

    def __init__(self, cfg: RunConfig, chunk: int = 5, stop_after: int | None = None) -> None:
        self.cfg = cfg
        self.chunk = chunk
        self.stop = stop_after
        self.rng = np.random.default_rng(cfg.seed)
        self.round = 0
        self.total = 0
        self.metrics: dict[str, float] = {}
        self.best_score = float("-inf")
        #: rounds at which this process evaluated (not saved), and its final evaluations
        self.evaluated_at: list[int] = []
        self.final_evaluations = 0

    @property
    def rounds(self) -> int:
        return self.round

    @property
    def units(self) -> int:
        return 10 * self.round

    @property
    def total_units(self) -> int:
        return 10 * ROUNDS

    @property
    def stop_after_rounds(self) -> int | None:
        return self.stop

    @property
    def keep_best(self) -> bool:
        return True

    def step(self, max_rounds: int) -> dict[str, float]:
        for _ in range(min(self.chunk, max_rounds, ROUNDS - self.round)):
            self.round += 1
            self.total += int(self.rng.integers(100))
        return {"charts/total": float(self.total)}

    def evaluate(self, num_games: int, seed: int) -> Evaluation:
        self.evaluated_at.append(self.round)
        score = 6.0 - abs(self.round - 6)
        return Evaluation({"eval/score": score}, score=score, line=f"round {self.round}: {score}")

    def final_evaluation(
        self, final: Path, best: Path | None, num_games: int, seed: int
    ) -> Evaluation:
        self.final_evaluations += 1
        report: dict[str, Any] = {"final": json.loads(final.with_suffix(".json").read_text())}
        if best is not None:
            report["best"] = json.loads(best.with_suffix(".json").read_text())
        return Evaluation({"final/total": float(self.total)}, report=report)

    def checkpoint_name(self) -> str:
        return f"round_{self.round:04d}"

    def _state(self) -> dict[str, Any]:
        return {"round": self.round, "total": self.total, "metrics": self.metrics}

    def save(self, path: Path) -> None:
        state = {**self._state(), "rng": self.rng.bit_generator.state, "best": self.best_score}
        path.with_suffix(".json").write_text(json.dumps(state))

    def restore(self, path: Path) -> None:
        state = json.loads(path.with_suffix(".json").read_text())
        self.round, self.total, self.metrics = state["round"], state["total"], state["metrics"]
        self.rng.bit_generator.state = state["rng"]
        self.best_score = state["best"]

    def save_policy(self, path: Path) -> None:
        path.with_suffix(".json").write_text(json.dumps(self._state()))

    def position(self) -> str:
        return f"round {self.round}"

    def summary(self) -> dict[str, Any]:
        return {"rounds": self.round}


def config(run_dir: Path, **over: Any) -> RunConfig:
    settings = {"checkpoint_interval": 4, "eval_interval": 3, "keep_checkpoints": 2}
    settings.update({"tensorboard": False, **over})
    return RunConfig(run_dir=str(run_dir), progress=False, **settings)


def test_cadence_keep_best_and_the_end(tmp_path: Path) -> None:
    trainer = ToyTrainer(config(tmp_path / "run"))
    lines: list[str] = []
    result = run(trainer, log=lines.append)
    run_dir = tmp_path / "run"
    # steps stop at every checkpoint (4, 8, 12) and evaluation (3, 6, 9, 12)
    assert trainer.evaluated_at == [3, 6, 9, 12]
    assert lines == ["round 3: 3.0", "round 6: 6.0", "round 9: 3.0", "round 12: 0.0"]
    assert sorted(p.name for p in (run_dir / "checkpoints").glob("*.json")) == [
        "round_0008.json",
        "round_0012.json",
    ]  # keep_checkpoints
    assert latest_checkpoint(run_dir) == run_dir / "checkpoints" / "round_0012"
    report = json.loads((run_dir / "final_eval.json").read_text())
    assert report["best"]["round"] == 6 and report["final"]["round"] == ROUNDS
    assert result["rounds"] == ROUNDS and result["final_eval"] == report
    # the final policy is saved again after its evaluation, which its metadata records
    final = json.loads((run_dir / "final.json").read_text())
    assert final["metrics"]["final/total"] == trainer.total == result["metrics"]["final/total"]
    assert json.loads((run_dir / "config.resolved.json").read_text())["eval_interval"] == 3


def test_stopped_and_resumed_run_equals_an_uninterrupted_one(tmp_path: Path) -> None:
    whole = ToyTrainer(config(tmp_path / "whole"))
    run(whole, log=lambda _: None)
    first = ToyTrainer(config(tmp_path / "split"), stop_after=7)
    result = run(first, log=lambda _: None)
    assert result == {
        "rounds": 7,
        "metrics": first.metrics,
        "position": "round 7",
    }  # no final evaluation
    # a checkpoint on stopping; without it (a kill) the run continues from round 4
    assert latest_checkpoint(tmp_path / "split").name == "round_0007"
    lose_newest_checkpoint(tmp_path / "split")
    assert latest_checkpoint(tmp_path / "split").name == "round_0004"
    messages: list[str] = []
    resumed = ToyTrainer(config(tmp_path / "split"))
    run(resumed, resume=True, log=messages.append)
    assert messages[0].endswith("at round 4")
    assert (resumed.total, resumed.best_score) == (whole.total, whole.best_score)
    assert resumed.rng.bit_generator.state == whole.rng.bit_generator.state
    with pytest.raises(CheckpointError, match="no checkpoint"):
        run(ToyTrainer(config(tmp_path / "empty")), resume=True)


def _snapshot(run_dir: Path) -> dict[str, bytes]:
    return {str(p.relative_to(run_dir)): p.read_bytes() for p in run_dir.rglob("*") if p.is_file()}


def test_one_run_per_directory_and_overwrite_starts_over(tmp_path: Path) -> None:
    run_dir = tmp_path / "run"
    run(ToyTrainer(config(run_dir)), log=lambda _: None)
    (run_dir / "notes.txt").write_text("not a run file")
    before = _snapshot(run_dir)
    # another run there is refused, naming the directory and the choices, and changes nothing
    with pytest.raises(RunDirError) as refused:
        run(ToyTrainer(config(run_dir, eval_interval=4, checkpoint_interval=5)))
    message = str(refused.value)
    assert f"run_dir {run_dir} already holds a run" in message
    assert "--resume to continue it (from checkpoints/round_0012)" in message
    assert "--overwrite" in message and "--set run_dir=DIR" in message
    assert _snapshot(run_dir) == before
    with pytest.raises(ValueError, match="not both"):
        run(ToyTrainer(config(run_dir)), resume=True, overwrite=True)
    # --overwrite: nothing of the first run is left to mix with the second
    lines: list[str] = []
    run(ToyTrainer(config(run_dir, eval_interval=4, checkpoint_interval=5)), overwrite=True,
        log=lines.append)  # fmt: skip
    assert lines[0].startswith(f"--overwrite: removed the earlier run in {run_dir}")
    assert sorted(p.name for p in (run_dir / "checkpoints").iterdir()) == [
        "latest.txt", "round_0010.json", "round_0012.json"
    ]  # fmt: skip
    assert json.loads((run_dir / "best.json").read_text())["round"] == 4  # not round 6
    assert json.loads((run_dir / "final_eval.json").read_text())["best"]["round"] == 4
    assert (run_dir / "notes.txt").read_text() == "not a run file"
    # a directory with other files only is no run
    other = tmp_path / "other"
    other.mkdir()
    (other / "data.csv").write_text("1,2\n")
    assert run(ToyTrainer(config(other)), log=lambda _: None)["rounds"] == ROUNDS


def test_resume_refuses_a_config_that_changes_learning_naming_the_keys(tmp_path: Path) -> None:
    run_dir = tmp_path / "run"
    run(ToyTrainer(config(run_dir), stop_after=5), log=lambda _: None)
    with pytest.raises(RunDirError, match=r"config keys \['game_options', 'seed'\] differ"):
        run(ToyTrainer(config(run_dir, seed=3, game_options={"pits": 4})), resume=True)
    # the run loop's resumable keys may change (the trainer's, too: resumable_keys)
    resumed = ToyTrainer(config(run_dir, eval_interval=2, keep_checkpoints=5))
    assert run(resumed, resume=True, log=lambda _: None)["rounds"] == ROUNDS


def test_latest_checkpoint_is_the_newest_complete_one(tmp_path: Path) -> None:
    run_dir = tmp_path / "run"
    run(ToyTrainer(config(run_dir, keep_checkpoints=3)), log=lambda _: None)
    ckpts = run_dir / "checkpoints"
    assert latest_checkpoint(run_dir) == ckpts / "round_0012"
    warnings: list[str] = []
    (ckpts / "round_0012.json").write_text('{"round": 12, "tot')  # a torn write
    assert latest_checkpoint(run_dir, warn=warnings.append) == ckpts / "round_0008"
    assert "names round_0012, which is incomplete" in warnings[0]
    (ckpts / "latest.txt").unlink()
    assert latest_checkpoint(run_dir) == ckpts / "round_0008"
    for old in ckpts.glob("round_*.json"):
        old.unlink()
    assert latest_checkpoint(run_dir) is None


class OvershootingToy(ToyTrainer):
    """The last round overshoots the total (as a PPO iteration does)."""

    @property
    def total_units(self) -> int:
        return 10 * ROUNDS - 5


def test_progress_bar_stops_at_its_total_and_evaluations_print_lines(
    tmp_path: Path, capsys: pytest.CaptureFixture
) -> None:
    cfg = config(tmp_path / "run")
    cfg.progress = True
    run(OvershootingToy(cfg), log=lambda _: None)
    out, err = capsys.readouterr()
    total = 10 * ROUNDS - 5
    assert "100%|" in err and f"{total}/{total}" in err
    assert f"{10 * ROUNDS}/{total}" not in err  # never past the total
    assert out.splitlines() == ["round 3: 3.0", "round 6: 6.0", "round 9: 3.0", "round 12: 0.0"]


def test_the_end_summary_names_the_files_and_the_commands(tmp_path: Path) -> None:
    run_dir = tmp_path / "run"
    cfg = config(run_dir, game_options={"pits": 4})
    summary = run(ToyTrainer(cfg), log=lambda _: None)["summary"]
    assert summary.startswith(f"Training finished at round {ROUNDS}.")
    for name in ("best.safetensors", "final.safetensors", "final_eval.json", "checkpoints"):
        assert str(run_dir / name) in summary
    assert str(run_dir / "resources.json") in summary and "CPU-s, peak memory" in summary
    assert "TensorBoard" not in summary  # tensorboard is off
    agent = f"checkpoint:{run_dir / 'best'}"
    assert f"spieltisch eval kalaha -o pits=4 --agents {agent} random" in summary
    assert f"spieltisch play kalaha -o pits=4 --agents human {agent}" in summary


def test_a_resumed_run_keeps_what_was_logged_at_its_checkpoint(tmp_path: Path) -> None:
    # The writer purged from the checkpoint's step on, losing what was logged at it (with the
    # shipped configs, an evaluation at every resume)
    from spieltisch.train.curves import read_scalars

    run(ToyTrainer(config(tmp_path / "whole", tensorboard=True)), log=lambda _: None)
    run(ToyTrainer(config(tmp_path / "split", tensorboard=True), stop_after=6), log=print)
    run(ToyTrainer(config(tmp_path / "split", tensorboard=True)), resume=True, log=print)
    whole, split = read_scalars(tmp_path / "whole" / "tb"), read_scalars(tmp_path / "split" / "tb")
    assert sorted(whole) == sorted(split) and whole
    for tag in whole:
        assert split[tag][0] == whole[tag][0], tag
    assert any(60 in steps for steps, _ in split.values())


def test_a_run_folder_moved_elsewhere_resumes(tmp_path: Path) -> None:
    import shutil

    whole = ToyTrainer(config(tmp_path / "whole"))
    run(whole, log=lambda _: None)
    run(ToyTrainer(config(tmp_path / "split"), stop_after=6), log=lambda _: None)
    shutil.move(tmp_path / "split", tmp_path / "moved")  # ('run_dir' differed: refused)
    resumed = ToyTrainer(config(tmp_path / "moved"))
    run(resumed, resume=True, log=lambda _: None)
    assert (resumed.total, resumed.best_score) == (whole.total, whole.best_score)


def test_one_process_at_a_time_trains_in_a_run_directory(tmp_path: Path) -> None:
    # A second process resumed a live run, and each deleted the other's checkpoints
    from spieltisch.train.run_files import RunDirBusy, run_dir_lock

    run(ToyTrainer(config(tmp_path / "run"), stop_after=6), log=lambda _: None)
    busy = pytest.raises(RunDirBusy, match="another process is training in")
    with run_dir_lock(tmp_path / "run"), busy:  # (as another process holds it while it trains)
        run(ToyTrainer(config(tmp_path / "run")), resume=True, log=lambda _: None)
    run(ToyTrainer(config(tmp_path / "run")), resume=True, log=lambda _: None)


def test_a_finished_run_is_not_resumed_again(tmp_path: Path) -> None:
    # (--resume evaluated it again, added a cost session and purged the last scalars)
    run(ToyTrainer(config(tmp_path / "run")), log=lambda _: None)
    before = (tmp_path / "run" / "resources.json").read_text()
    trainer = ToyTrainer(config(tmp_path / "run"))
    said: list[str] = []
    result = run(trainer, resume=True, log=said.append)
    assert "is finished" in result["summary"] and trainer.final_evaluations == 0
    assert (tmp_path / "run" / "resources.json").read_text() == before
    assert not any("resumed from" in line for line in said)  # it said so, then "nothing to"


def test_the_end_summary_seats_every_player_of_a_bigger_table(tmp_path: Path) -> None:
    # For 4-player HiLo it named 3 agents to eval and 2 to play: each command failed
    from spieltisch.train.cli import build_parser

    run_dir = tmp_path / "run"
    cfg = config(run_dir, game="hilo", game_options={"num_players": 4})
    summary = run(ToyTrainer(cfg), log=lambda _: None)["summary"]
    agent = f"checkpoint:{run_dir / 'best'}"
    commands = [line.strip() for line in summary.splitlines() if "spieltisch " in line]
    assert f"spieltisch eval hilo -o num_players=4 --agents {agent} random random random" in (
        commands
    )
    assert f"spieltisch play hilo -o num_players=4 --agents human {agent} {agent} {agent}" in (
        commands
    )
    parser = build_parser()
    for command in commands:  # each seats the table's four players
        assert len(parser.parse_args(command.split()[1:]).agents) == 4, command


def test_the_resource_ledger_counts_every_session_up_to_its_last_checkpoint(
    tmp_path: Path,
) -> None:
    run_dir = tmp_path / "run"
    # stops after round 5, with a checkpoint there (checkpoint_interval 4)
    run(ToyTrainer(config(run_dir), stop_after=5), log=lambda _: None)
    first = json.loads((run_dir / "resources.json").read_text())
    (session,) = first["sessions"]
    assert session["unit"] == "tick"
    assert session["units_start"] == 0 and session["units_end"] == 50
    assert session["wall_seconds"] >= 0 and session["cpu_seconds"] >= 0
    assert 0 < session["peak_rss_gib"] < 64 and session["cpu_count"] >= 1
    assert "command" in session and "load_average_start" in session
    result = run(ToyTrainer(config(run_dir)), resume=True, log=lambda _: None)
    ledger = json.loads((run_dir / "resources.json").read_text())
    assert result["resources"] == ledger
    assert ledger["sessions"][0] == session  # the first session as it was
    second = ledger["sessions"][1]
    assert second["units_start"] == 50 and second["units_end"] == 10 * ROUNDS
    total = ledger["total"]
    assert total["sessions"] == 2
    assert total["wall_seconds"] == round(session["wall_seconds"] + second["wall_seconds"], 1)
    assert total["cpu_seconds"] == round(session["cpu_seconds"] + second["cpu_seconds"], 1)
    assert total["peak_rss_gib"] == max(session["peak_rss_gib"], second["peak_rss_gib"])
    # a damaged ledger does not stop a resumed run: it warns and counts from that session on
    other = tmp_path / "other"
    run(ToyTrainer(config(other), stop_after=5), log=lambda _: None)
    (other / "resources.json").write_text('{"sessions": [')
    lines: list[str] = []
    run(ToyTrainer(config(other)), resume=True, log=lines.append)
    assert any("resources.json is unreadable" in line for line in lines), lines
    assert len(json.loads((other / "resources.json").read_text())["sessions"]) == 1
    # a new run in the directory (--overwrite) starts a new ledger
    run(ToyTrainer(config(run_dir)), overwrite=True, log=lambda _: None)
    assert len(json.loads((run_dir / "resources.json").read_text())["sessions"]) == 1


class SlowBuildingToy(ToyTrainer):
    """Spends about 0.3 CPU-seconds being built (as trainers compile kernels, load nets)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        end = time.process_time() + 0.3
        while time.process_time() < end:
            pass
        super().__init__(*args, **kwargs)


def test_the_resource_ledger_counts_the_trainers_construction(tmp_path: Path) -> None:
    run_dir = tmp_path / "run"
    run(SlowBuildingToy(config(run_dir)), log=lambda _: None)  # (it counted from run())
    (session,) = json.loads((run_dir / "resources.json").read_text())["sessions"]
    assert session["cpu_seconds"] >= 0.3 and session["wall_seconds"] >= 0.3, session


def test_curves_are_drawn_from_the_logs_and_named_in_the_summary(tmp_path: Path) -> None:
    """``run_dir/curves.png`` (evaluations and losses against the progress units) is drawn from
    the TensorBoard logs; a picture that cannot be drawn is a warning, not the end of the run."""
    from spieltisch.train.curves import evaluation_tags, plot_curves, read_scalars

    run_dir = tmp_path / "run"
    result = run(ToyTrainer(config(run_dir, tensorboard=True)), log=lambda _: None)
    png = run_dir / "curves.png"
    assert png.read_bytes().startswith(b"\x89PNG")
    assert f"curves           {png}" in result["summary"]
    steps, values = read_scalars(run_dir / "tb")["eval/score"]
    assert steps == [30, 60, 90, 120] and values == [3.0, 6.0, 3.0, 0.0]
    assert not list(run_dir.glob(".curves.png.*"))  # no temporary file left
    run(ToyTrainer(config(run_dir)), log=lambda _: None, overwrite=True)  # no logs: no picture
    assert not png.exists()  # the other run's picture went with its other files
    # backgammon's points per game with its interval as a band; TD's loss
    from torch.utils.tensorboard import SummaryWriter

    td_dir = tmp_path / "td"
    writer = SummaryWriter(str(td_dir / "tb"))
    for step in (1, 2, 3):
        for tag, value in (("ppg", 0.1), ("ppg_low", 0.0), ("ppg_high", 0.2), ("win_rate", 0.5)):
            writer.add_scalar(f"eval/{tag}", value * step, step)
        writer.add_scalar("loss/mse", 1.0 / step, step)
    writer.close()
    tags = list(read_scalars(td_dir / "tb"))
    assert evaluation_tags(tags) == ["eval/ppg"]
    assert plot_curves(td_dir, "game") == td_dir / "curves.png"
    assert plot_curves(tmp_path / "no_logs", "game") is None  # tensorboard: false
    lines: list[str] = []
    import spieltisch.train.curves as curves

    def broken(*args: Any) -> None:
        raise OSError("disk full")

    original, curves.plot_curves = curves.plot_curves, broken
    try:
        again = run(ToyTrainer(config(tmp_path / "again", tensorboard=True)), log=lines.append)
    finally:
        curves.plot_curves = original
    assert again["rounds"] == ROUNDS
    assert [line for line in lines if "could not draw" in line] == [
        f"warning: could not draw {tmp_path / 'again' / 'curves.png'}: disk full"
    ]


def test_curves_of_a_run_whose_points_were_all_purged_draw_nothing(tmp_path) -> None:
    # a run killed before its first checkpoint, resumed: its writer purges every point
    from spieltisch.train.curves import plot_runs, read_scalars
    from torch.utils.tensorboard import SummaryWriter

    writer = SummaryWriter(str(tmp_path / "tb"))
    writer.add_scalar("loss/value", 1.0, 5)
    writer.add_scalar("eval/ppg", 0.3, 5)
    writer.close()
    time.sleep(1.1)  # a new event file (they are named by the second)
    SummaryWriter(str(tmp_path / "tb"), purge_step=0).close()
    assert read_scalars(tmp_path / "tb") == {}
    assert plot_runs([tmp_path], "steps", tmp_path / "curves.png") is None
    assert not (tmp_path / "curves.png").exists()


def test_a_session_killed_after_a_checkpoint_counts_up_to_it(tmp_path: Path, monkeypatch) -> None:
    """Killed right after a checkpoint became the one to resume from (the pointer moved), the
    ledger already counts up to it (it was written after the pointer: that session's time up to
    the resume point was lost)."""
    import spieltisch.train.run_loop as run_loop

    class Killed(BaseException):
        pass

    real = run_loop.record_checkpoint
    calls = [0]

    def then_killed(*args: Any, **kwargs: Any) -> None:
        real(*args, **kwargs)
        calls[0] += 1
        if calls[0] == 2:
            raise Killed

    monkeypatch.setattr(run_loop, "record_checkpoint", then_killed)
    run_dir = tmp_path / "run"
    with pytest.raises(Killed):
        run(ToyTrainer(config(run_dir)), log=lambda _: None)
    resume_from = json.loads(latest_checkpoint(run_dir).with_suffix(".json").read_text())
    (session,) = json.loads((run_dir / "resources.json").read_text())["sessions"]
    assert resume_from["round"] == 8  # checkpoints at rounds 4 and 8: ten units a round
    assert session["units_end"] == 80


def test_a_session_stopped_early_draws_the_evaluations_the_interval_skipped(
    tmp_path: Path, monkeypatch
) -> None:
    """``stop_after_*``: the picture was redrawn at most once a minute and at the run's end
    only, so a session stopped early left curves.png with its first evaluation alone."""
    import spieltisch.train.curves as curves
    from spieltisch.train.curves import read_scalars

    drawn: list[list[int]] = []  # the evaluations logged at each drawing

    def record(run_dir: Path, unit: str) -> None:
        drawn.append(read_scalars(run_dir / "tb")["eval/score"][0])

    monkeypatch.setattr(curves, "plot_curves", record)
    run_dir = tmp_path / "run"
    run(ToyTrainer(config(run_dir, tensorboard=True), stop_after=7), log=lambda _: None)
    assert drawn == [[30], [30, 60]]  # after the first evaluation, then at the stop
    drawn.clear()
    run(ToyTrainer(config(tmp_path / "b", tensorboard=True), stop_after=4), log=lambda _: None)
    assert drawn == [[30]]  # nothing skipped since: not drawn again
