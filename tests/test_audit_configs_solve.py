"""Training configs and ``spieltisch solve``: options that were silently ignored, and boards too
big for the machine's memory (a traceback from mmap)."""

from __future__ import annotations

import pytest
from spieltisch.train.cli import main
from spieltisch.train.config import ConfigError, build_config


@pytest.mark.parametrize(
    "option, hint",
    [
        ("max_turns=3", "set the config's own key max_turns"),
        ("random_start=true", "seat the players themselves"),
        ("render_mode=human", "training draws no boards"),
        ("illegal_action=terminate", "mask illegal moves"),
    ],
)
def test_env_only_game_options_are_refused(option, hint):
    # was accepted and ignored: the batched engines the trainers play on take the rules alone
    # (game_options.max_turns: 3 trained on games of up to 1000 moves)
    with pytest.raises(ConfigError, match=f"game_options.{option.split('=')[0]}") as err:
        build_config({"game": "kalaha"}, [f"game_options.{option}"])
    assert hint in str(err.value)


def test_env_only_game_options_name_td_has_no_limit():
    with pytest.raises(ConfigError, match="algorithm td has no limit"):
        build_config({"algorithm": "td"}, ["game_options.max_turns=30"])


def test_rule_options_still_pass():
    cfg = build_config({"game": "hilo"}, ["game_options.num_players=3"])
    assert cfg.game_options == {"num_players": 3}


def test_ppo_refuses_settings_it_would_ignore():
    # backgammon PPO replaced reward: points by win without a word; PPO's pool_baselines with
    # pool_prob 0 never played (AlphaZero refused the same)
    with pytest.raises(ConfigError, match="PPO plays backgammon for 'win' only"):
        build_config({"game": "backgammon"}, ["game_options.reward=points"])
    with pytest.raises(ConfigError, match="would never play with pool_prob 0"):
        build_config({"game": "kalaha"}, ["pool_prob=0", "pool_baselines=[greedy]"])
    cfg = build_config({"game": "backgammon"}, ["game_options.reward=win"])
    assert cfg.game_options == {"reward": "win"}
    assert build_config({"algorithm": "td"}, ["game_options.reward=points"]).game == "backgammon"


def test_solve_refuses_a_database_larger_than_the_memory(capsys):
    # was: OSError: [Errno 12] Cannot allocate memory, a traceback from mmap (6 pits, 100
    # stones: C(112, 12) bytes, about a petabyte)
    # (--seeds 9: 108 stones; Kalah(6,4)'s 48 are now below --db-stones 100, refused for that)
    code = main(["solve", "kalaha", "--seeds", "9", "--no-cache", "--db-stones", "100", "--quiet"])
    assert code == 2
    err = capsys.readouterr().err
    assert "100-stone database" in err and "more than this machine's" in err
    assert "give smaller --tt-bits or --db-stones" in err


def test_solve_names_an_allocation_that_fails(monkeypatch, capsys):
    import errno

    import spieltisch.agents.kalaha.solver as solver

    def fail(*args, **kwargs):
        raise OSError(errno.ENOMEM, "Cannot allocate memory")

    monkeypatch.setattr(solver.EndgameDatabase, "load_or_build", fail)
    code = main(["solve", "kalaha", "--no-cache", "--pits", "3", "--seeds", "2", "--quiet"])
    assert code == 2
    assert "out of memory" in capsys.readouterr().err
