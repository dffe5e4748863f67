"""Audit of ``spieltisch play`` with a person and of ``spieltisch curves``: the defects found,
each with the test that shows it fixed."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from spieltisch.agents.human import HumanAgent, HumanQuit
from spieltisch.train.cli import main


def _write_run(run_dir: Path, points: dict[str, list[tuple[int, float]]]) -> None:
    from torch.utils.tensorboard import SummaryWriter

    writer = SummaryWriter(str(run_dir / "tb"))
    for tag, values in points.items():
        for step, value in values:
            writer.add_scalar(tag, value, step)
    writer.close()


def _drawn_figures(monkeypatch: pytest.MonkeyPatch) -> list[Any]:
    """The figures plot_runs draws (caught as it closes them)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    figures: list[Any] = []
    close = plt.close

    def keep(fig: Any = None) -> None:
        figures.append(fig)
        close(fig)

    monkeypatch.setattr(plt, "close", keep)
    return figures


def test_play_draws_a_new_secret_seed_for_every_game(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture
) -> None:
    # game 1's seed, printed after it, was game 2's minus one: the person knew the next deal
    import spieltisch.train.cli.play as play

    draws = iter([100, 500, 900])
    monkeypatch.setattr(play.secrets, "randbelow", lambda _: next(draws))
    make_agent = play.make_agent  # the person replaced by a random agent, still "human" to play

    def no_person(name: str, *args: Any, **kwargs: Any) -> Any:
        return make_agent("random" if name == "human" else name, *args, **kwargs)

    monkeypatch.setattr(play, "make_agent", no_person)
    argv = ["play", "hilo", "--agents", "human", "random", "--games", "2"]
    assert main([*argv, "-o", "max_turns=2"]) == 0  # (two short games)
    seeds = re.findall(r"\(seed (\d+)\)", capsys.readouterr().out)
    assert seeds == ["500", "900"]


def test_end_of_input_ends_the_prompts_line() -> None:
    # Ctrl-D echoes no newline: "move: game abandoned" came out on one line
    said: list[str] = []

    def ended(_: str) -> str:
        raise EOFError

    agent = HumanAgent("kalaha", input_fn=ended, output_fn=said.append)
    mask = np.ones(6, dtype=np.int8)
    with pytest.raises(HumanQuit):
        agent.act({"observation": mask, "action_mask": mask})
    assert said[-1] == ""


@pytest.mark.parametrize(("suffix", "magic"), [(".svg", b"<?xml"), (".pdf", b"%PDF")])
def test_curves_writes_the_format_its_suffix_names(
    tmp_path: Path, suffix: str, magic: bytes
) -> None:
    # check_plot_format accepts any suffix matplotlib knows, but PNG bytes were written
    _write_run(tmp_path / "a", {"loss/value": [(1, 1.0), (2, 0.5)]})
    out = tmp_path / f"c{suffix}"
    assert main(["curves", str(tmp_path / "a"), "--out", str(out)]) == 0
    assert out.read_bytes().startswith(magic)


def test_a_loss_logged_once_is_drawn(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # after one iteration the losses panel was empty: a line through one point draws nothing
    from spieltisch.train.curves import plot_runs

    figures = _drawn_figures(monkeypatch)
    _write_run(tmp_path / "run", {"loss/value": [(5, 0.3)]})
    assert plot_runs([tmp_path / "run"], "steps", tmp_path / "c.png") is not None
    (line,) = figures[0].axes[1].lines
    assert line.get_marker() not in (None, "None", "")


def test_runs_with_one_folder_name_are_told_apart(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # runs/a/run and runs/b/run: both runs' lines were labelled "run: ..."
    from spieltisch.train.curves import plot_runs

    figures = _drawn_figures(monkeypatch)
    for parent in ("a", "b"):
        _write_run(tmp_path / parent / "run", {"eval/score_vs_random": [(1, 0.5), (2, 0.6)]})
    runs = [tmp_path / "a" / "run", tmp_path / "b" / "run"]
    assert plot_runs(runs, "steps", tmp_path / "c.png") is not None
    labels = figures[0].axes[0].get_legend_handles_labels()[1]
    assert labels == [f"{runs[0]}: score_vs_random", f"{runs[1]}: score_vs_random"]


def test_the_clip_fraction_is_no_loss() -> None:
    from spieltisch.train.curves import loss_tags

    tags = ["loss/policy", "loss/value", "loss/entropy", "loss/approx_kl", "loss/clip_fraction"]
    assert loss_tags(tags) == ["loss/policy", "loss/value"]


def test_curves_of_a_tb_folder_names_the_run_directory(
    tmp_path: Path, capsys: pytest.CaptureFixture
) -> None:
    # it said "no TensorBoard logs (...; tensorboard: false?)" of the folder holding them
    _write_run(tmp_path / "run", {"loss/value": [(1, 1.0)]})
    assert main(["curves", str(tmp_path / "run" / "tb"), "--out", str(tmp_path / "c.png")]) == 2
    assert "give its run directory" in capsys.readouterr().err
