"""``spieltisch solve``'s --db-stones above the game's stones, the solver's stack of MAX_PLY
moves, the CLI's words for the solver's parameters, ``device: cuda`` without CUDA at config
time, and the batches' ``set_state`` refusing states they could not play."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from spieltisch.agents.kalaha import solver as solver_module
from spieltisch.agents.kalaha.solver import KalahaSolver
from spieltisch.envs import make_batch
from spieltisch.envs.kalaha.engine import KalahaGame, KalahaState
from spieltisch.train.cli import main
from spieltisch.train.config import ConfigError, build_config

SOLVE = ["solve", "kalaha", "--no-cache", "--quiet"]


# --- spieltisch solve --db-stones -----------------------------------------------------------
def test_solve_refuses_db_stones_above_the_games_stones(capsys):
    # was: built the levels 17..20 of a database no position of Kalah(4,2) ever reaches
    assert main([*SOLVE, "--pits", "4", "--seeds", "2", "--db-stones", "20"]) == 2
    err = capsys.readouterr().err
    assert "--db-stones 20 is more than any position of this solve holds" in err
    assert "Kalah(4,2) has 16 stones" in err and "give at most 16" in err


def test_solve_db_stones_may_reach_a_positions_stones(capsys):
    # a --position may hold more stones than the game starts with: up to those are of use
    position = ["--position", "3,3,3/0 3,3,3/0 0"]  # 18 stones, Kalah(3,1) has 6
    args = [*SOLVE, "--pits", "3", "--seeds", "1", *position]
    assert main([*args, "--db-stones", "19"]) == 2
    err = capsys.readouterr().err
    assert "the position 18 in its pits" in err and "give at most 18" in err
    from spieltisch.train.cli.solve import _check_db_stones

    game = KalahaGame(3, 1)
    _check_db_stones(18, game, game.state_from_text(position[1]))  # taken (no solve here)
    _check_db_stones(None, game, None)  # the default: by size


# --- the search's stack ---------------------------------------------------------------------
@pytest.mark.parametrize("worker", [False, True])
def test_a_line_longer_than_the_stack_is_a_clear_error(monkeypatch, worker):
    """A line of play longer than MAX_PLY raised RuntimeError("Kalaha search: position too deep
    for the stack"); it is SolveTooDeep, named, in the calling thread and from the worker."""
    from spieltisch.agents.kalaha.solver import SolveTooDeep

    monkeypatch.setattr(solver_module, "MAX_PLY", 6)  # Kalah(3,2)'s games are longer
    solver = KalahaSolver(
        KalahaGame(3, 2), db_stones=0, use_cache=False, tt_bits=10, id_max_depth=0,
        progress=(lambda line: None) if worker else None,
    )  # fmt: skip
    with pytest.raises(SolveTooDeep, match="lines of at most 6 moves") as info:
        solver.value(solver.game.new_initial_state())
    assert info.value.stones == 12 and "12 stones in the pits" in str(info.value)
    assert isinstance(info.value, RuntimeError)  # as before, for those who caught that


def test_solve_names_a_position_too_deep_for_the_stack(capsys):
    # Kalah(30,1000) (a variant the CLI takes) went past 1024 moves in its first nodes: a
    # RuntimeError traceback
    args = [*SOLVE, "--pits", "30", "--seeds", "1000", "--db-stones", "1", "--id-depth", "0"]
    assert main([*args, "--tt-bits", "10"]) == 2
    err = capsys.readouterr().err
    assert "spieltisch solve: the solver searches lines of at most 1024 moves" in err
    assert "60000 stones in the pits" in err and "Traceback" not in err


# --- the CLI's words for the solver's parameters --------------------------------------------
@pytest.mark.parametrize(
    "option, words",
    [
        (["--tt-bits", "40"], "spieltisch solve: --tt-bits must be between 4 and 34, got 40"),
        (["--db-stones", "-1"], "spieltisch solve: --db-stones must be between 0 and 100, got -1"),
    ],
)
def test_solve_names_the_options_not_the_parameters(capsys, option, words):
    assert main([*SOLVE, "--pits", "3", "--seeds", "1", *option]) == 2
    err = capsys.readouterr().err
    assert words in err and "tt_bits" not in err and "db_stones" not in err


def test_solve_id_depth_is_checked_as_an_option(capsys):
    # was: "id_max_depth must be None or an int >= 0, got -1"
    with pytest.raises(SystemExit) as info:
        main([*SOLVE, "--pits", "3", "--seeds", "1", "--id-depth", "-1"])
    assert info.value.code == 2
    err = capsys.readouterr().err
    assert "argument --id-depth" in err and "id_max_depth" not in err


def test_the_library_still_names_its_parameters():
    with pytest.raises(ValueError, match="tt_bits must be between 4 and 34, got 40"):
        KalahaSolver(KalahaGame(3, 1), tt_bits=40, use_cache=False)


# --- device: cuda at config time ------------------------------------------------------------
CONFIGS = [
    {"game": "kalaha"},
    {"game": "kalaha", "algorithm": "alphazero"},
    {"game": "backgammon", "algorithm": "alphazero", "hidden": [80]},
]


@pytest.mark.skipif(torch.cuda.is_available(), reason="this machine has CUDA")
@pytest.mark.parametrize("data", CONFIGS)
def test_cuda_without_cuda_is_refused_when_the_config_is_read(data):
    # was: accepted here, refused by the trainer after its set-up work
    with pytest.raises(ConfigError, match="key 'device': cuda was asked for, but torch finds no"):
        build_config(data, ["device=cuda"])
    cfg = build_config(data, ["device=auto"])
    assert cfg.device == "auto"
    from spieltisch.train.ppo import resolve_device

    assert resolve_device(cfg.device) == "cpu"


@pytest.mark.skipif(torch.cuda.is_available(), reason="this machine has CUDA")
def test_train_refuses_cuda_before_making_the_run(tmp_path, capsys):
    config = tmp_path / "kalaha.yaml"
    config.write_text(f"game: kalaha\nrun_dir: {tmp_path / 'run'}\n", encoding="utf-8")
    assert main(["train", str(config), "--set", "device=cuda"]) == 2
    # (was: "device: cuda was asked for ...", from the trainer once it had started)
    assert f"{config}: key 'device': cuda was asked for" in capsys.readouterr().err
    assert not (tmp_path / "run").exists()


# --- set_state -------------------------------------------------------------------------------
def _arrays(batch) -> list[np.ndarray]:
    names = getattr(batch, "state_arrays", ("states", "terminal"))  # (backgammon's)
    return [np.copy(getattr(batch, name)) for name in names]


def _unchanged(batch, before: list[np.ndarray]) -> bool:
    return all(np.array_equal(a, b) for a, b in zip(before, _arrays(batch), strict=True))


def _kalaha(board, player=0, **kwargs) -> KalahaState:
    return KalahaState(KalahaGame(3, 2), np.array(board, dtype=np.int32), player, **kwargs)


def _kalaha_player(player) -> KalahaState:
    state = KalahaGame(3, 2).new_initial_state()
    state.current_player = player  # (KalahaState checks nothing; its kernels read 0 or 1)
    return state


@pytest.mark.parametrize(
    "make, words",
    [
        (lambda: _kalaha([2, 2, 2, -1, 2, 2, 2, 1]), "negative count"),  # a bad store
        (lambda: _kalaha([2, 2, 2, 9, 2, 2, 2, 0]), "holds 21 stones, more than the 12"),
        (lambda: _kalaha([2, 2, 2, 0, 2, 2, 2, 0, 0, 0]), r"shape \(8,\).*got \(10,\)"),
        (lambda: _kalaha_player(2), "player to move must be 0 or 1, got 2"),
        (lambda: _kalaha([2, 2, 2, 0, 2, 2, 2, 0], terminal=True), "marked over, but its board"),
        (lambda: _kalaha([0, 0, 0, 6, 2, 2, 2, 0], terminal=False), "marked not over"),
        (lambda: KalahaState(KalahaGame(3, 2), np.full(8, 1.0), 0), "whole numbers"),
        (lambda: KalahaGame(3, 2, "standard").new_initial_state(), "rules='standard'"),
        (lambda: KalahaGame(3, 3).new_initial_state(), "seeds=3"),
    ],
)
def test_kalaha_set_state_refuses_a_state_it_could_not_play(make, words):
    """Only the number of pits was checked: a negative store, 21 stones in a 12-stone game, a
    player 2, a game over by its flag and not by its board, other rules, all were taken."""
    batch = make_batch("kalaha", 2, pits=3, seeds=2)
    batch.step(np.array([0, 1]))
    before = _arrays(batch)
    with pytest.raises(ValueError, match=words):
        batch.set_state(1, make())
    assert _unchanged(batch, before)


def test_kalaha_set_state_takes_the_positions_the_env_takes():
    game = KalahaGame(3, 2)
    batch = make_batch("kalaha", 3, pits=3, seeds=2)
    for g, text in enumerate(["0,0,0/7 0,0,0/5 0 end", "0,5,3/0 2,0,0/2 1", "0,1,0/0 1,0,0/0 0"]):
        batch.set_state(g, game.state_from_text(text))  # the last: an endgame of 2 stones
        assert batch.state(g).to_text() == text
    assert batch.terminal.tolist() == [True, False, False]


def test_hus_set_state_refuses_a_state_it_could_not_play():
    batch = make_batch("hus", 2)
    before = _arrays(batch)
    state = batch.state(0)
    state.board[0] = -3
    with pytest.raises(ValueError, match="negative count"):
        batch.set_state(0, state)
    state = batch.state(0)
    state.board[0] += 40
    with pytest.raises(ValueError, match="more than the"):
        batch.set_state(0, state)
    state = batch.state(0)
    state.current_player = 2
    with pytest.raises(ValueError, match="player to move must be 0 or 1"):
        batch.set_state(0, state)
    assert _unchanged(batch, before)
    batch.set_state(1, batch.state(0))  # a good one still goes


def test_backgammon_and_hilo_set_state_refuse_other_states():
    batch = make_batch("backgammon", 2, seed=0)
    before = _arrays(batch)
    state = batch.state(0)
    state.s[0] += 1  # a 16th checker
    with pytest.raises(ValueError, match="has 16 checkers"):
        batch.set_state(0, state)
    with pytest.raises(TypeError, match="must be a BackgammonState"):  # was: AttributeError
        batch.set_state(0, object())
    assert _unchanged(batch, before)
    hilo = make_batch("hilo", 1, seed=0)
    with pytest.raises(TypeError, match="must be a HiLoState"):
        hilo.set_state(0, make_batch("kalaha", 1).state(0))
    hilo.set_state(0, hilo.state(0))
