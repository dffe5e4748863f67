"""Cube decisions of the backgammon agents (agents/backgammon/cube.py): Janowski's formulas on
textbook numbers, agents that double and drop where they should, cubeless play unchanged, and
cubeful games played to the end by every agent."""

from __future__ import annotations

import numpy as np
import pytest
from spieltisch.agents.arena.match import play_game
from spieltisch.agents.backgammon import cube as cb
from spieltisch.agents.registry import make_agent
from spieltisch.envs import make
from spieltisch.envs.backgammon import rules as k
from spieltisch.envs.backgammon.engine import BackgammonGame

pytest.importorskip("gnubg_nn")

NO_GAMMONS = (0.8, 0.0, 0.0, 0.0, 0.0)


def _bisect_take_point(w: float, loss: float, x: float) -> float:
    """The winning chance at which taking starts to pay, found with should_take (the taker's
    gammon rates are chosen so that its W and L stay fixed while p varies)."""
    lo, hi = 0.0, 1.0
    for _ in range(60):
        p = (lo + hi) / 2
        probs = (p, p * (w - 1), 0.0, (1 - p) * (loss - 1), 0.0)
        lo, hi = (lo, p) if cb.should_take(probs, x) else (p, hi)
    return (lo + hi) / 2


def test_take_points_are_janowskis() -> None:
    assert cb.take_point(1, 1, 0.0) == pytest.approx(0.25)  # dead cube, no gammons
    assert cb.take_point(1, 1, 1.0) == pytest.approx(0.20)  # fully live cube
    assert cb.take_point(1, 1) == pytest.approx(0.5 / 2.34)  # x = 0.68
    assert cb.cash_point(1, 1, 1.0) == pytest.approx(0.80)
    for x in (0.0, 0.68, 1.0):
        assert _bisect_take_point(1, 1, x) == pytest.approx(cb.take_point(1, 1, x), abs=1e-9)
    # with gammons both ways the model's take point is still (L - 1/2) / (W + L + x/2)
    for w, loss, x in ((1.3, 1.2, 0.68), (1.1, 1.5, 0.3), (1.6, 1.0, 1.0)):
        assert _bisect_take_point(w, loss, x) == pytest.approx(cb.take_point(w, loss, x), abs=1e-9)


def test_equities_on_textbook_numbers() -> None:
    # 80 % wins, no gammons, x = 0.68: the opponent's take point is 21.4 %: double/pass
    nd, dt, dp = cb.cube_equities(NO_GAMMONS, 1, cb.CENTRED, 0.68)
    assert nd == pytest.approx(0.68 * 1.0 + 0.32 * 0.6)
    assert dt == pytest.approx(2 * (0.68 * 0.5 + 0.32 * 0.6))
    assert dp == 1.0
    assert cb.should_double(NO_GAMMONS) and not cb.should_take(cb.flip(NO_GAMMONS))
    # 70 %: double/take; 60 %: no double, take; 50 %: no double
    seventy = (0.7, 0, 0, 0, 0)
    assert cb.should_double(seventy) and cb.should_take(cb.flip(seventy))
    assert not cb.should_double((0.6, 0, 0, 0, 0)) and cb.should_take((0.4, 0, 0, 0, 0))
    assert not cb.should_double((0.5, 0, 0, 0, 0))
    # a dead cube doubles anything above 50 %; a fully live one never gains by doubling before
    # the cash point (80 %), and beyond it playing on and cashing are worth the same
    assert cb.should_double((0.52, 0, 0, 0, 0), cube_life=0.0)
    assert not cb.should_double((0.79, 0, 0, 0, 0), cube_life=1.0)
    live = cb.cube_equities((0.81, 0, 0, 0, 0), cube_life=1.0)
    assert live.no_double == pytest.approx(1.0) and live.double_take > live.double_pass == 1.0
    # too good: a big gammon chance plays on
    assert not cb.should_double((0.95, 0.6, 0.0, 0.0, 0.0))
    # never with the cube on the other side; equities scale with the cube
    assert not cb.should_double(NO_GAMMONS, cb.THEIRS)
    assert cb.cube_equities(NO_GAMMONS, 4).no_double == pytest.approx(4 * nd)


def test_model_identities() -> None:
    rng = np.random.default_rng(0)
    for _ in range(50):
        p = rng.uniform(0.01, 0.99)
        wg, lg = rng.uniform(0, 0.3) * p, rng.uniform(0, 0.3) * (1 - p)
        probs = (p, wg, wg * 0.1, lg, lg * 0.1)
        # a dead cube is the cubeless equity; taking is the doubler's double/take negated
        for owner in cb.OWNERS:
            assert cb.cubeful_equity(probs, owner, 0.0) == pytest.approx(cb.cubeless_equity(probs))
        dt = cb.cube_equities(probs, 2).double_take
        assert cb.take_equity(cb.flip(probs), 2) == pytest.approx(-dt)
        # owning the cube is worth more than a centred one, which beats the opponent owning it
        e = [cb.cubeful_equity(probs, o, 0.68) for o in (cb.MINE, cb.CENTRED, cb.THEIRS)]
        assert e[0] >= e[1] - 1e-12 >= e[2] - 2e-12
    with pytest.raises(ValueError, match="cube_life"):
        cb.cubeful_equity(NO_GAMMONS, cb.CENTRED, 1.5)
    with pytest.raises(ValueError, match="owner"):
        cb.cubeful_equity(NO_GAMMONS, "nobody")


# --- agents ------------------------------------------------------------------------------------
RACE = "4P8PAADf9wEAAA 0 {} cube=1"  # seat 0: 15 checkers on its 1..3 points; seat 1: all on its 6
CUBE_AGENTS = ["gnubg", "pretrained:backgammon"]


def _decision(name: str, text: str) -> int:
    game = BackgammonGame(cube=True)
    state = game.state_from_text(text)
    agent = make_agent(name, "backgammon", seed=0, game_options={"cube": True})
    obs = {"observation": np.zeros(k.OBS_SIZE_CUBE), "action_mask": state.legal_mask()}
    return agent.act(obs, state)


@pytest.mark.parametrize("name", CUBE_AGENTS)
def test_agents_double_a_won_race_and_drop_it(name: str) -> None:
    assert _decision(name, RACE.format("cube")) == k.DOUBLE
    assert _decision(name, RACE.format("take")) == k.DROP
    assert _decision(f"{name}:cube=never", RACE.format("cube")) == k.ROLL
    assert _decision(f"{name}:cube=never", RACE.format("take")) == k.TAKE
    start = BackgammonGame(cube=True).new_initial_state()
    start.roll_dice(np.random.default_rng(1))
    start.apply_play(0)  # the opening move played: the other seat decides on the cube
    text = start.to_text().replace(" roll", " cube")
    assert _decision(name, text) == k.ROLL
    assert _decision(name, text.replace(" cube cube", " take cube")) == k.TAKE


def test_pre_roll_probabilities() -> None:
    game = BackgammonGame(cube=True)
    td = make_agent("pretrained:backgammon", "backgammon", seed=0)
    cube_state = game.state_from_text(RACE.format("cube"))
    take_state = game.state_from_text(RACE.format("take"))
    probs = td.position_probabilities(cube_state)
    assert probs.shape == (5,) and probs[0] > 0.95
    assert np.allclose(probs, td.position_probabilities(take_state))
    assert cube_state.to_text() == RACE.format("cube")  # unchanged
    gnubg = make_agent("gnubg", "backgammon", seed=0)
    assert gnubg.position_probabilities(cube_state)[0] > 0.99


def test_agent_names_with_cube_parameters() -> None:
    g = make_agent("gnubg:plies=0,cube_life=0.7", "backgammon")
    assert (g.plies, g.cube_policy, g.cube_life) == (0, "janowski", 0.7)
    td = make_agent("pretrained:backgammon:cube_life=0.7", "backgammon")
    assert (td.cube_policy, td.cube_life) == ("janowski", 0.7)
    td = make_agent("pretrained:backgammon:ply=2,cube=never", "backgammon")
    assert (td.ply, td.cube_policy) == (2, "never")
    for bad in ("gnubg:cube=always", "gnubg:cube_life=2", "pretrained:backgammon:cube=maybe"):
        with pytest.raises(ValueError, match="cube"):
            make_agent(bad, "backgammon")
    with pytest.raises(ValueError, match="cube"):
        make_agent("pretrained:kalaha:cube=never", "kalaha")


def _moves(names: list[str], options: dict, seed: int) -> list[tuple[str, int]]:
    env = make("backgammon", **options)
    agents = {
        f"player_{i}": make_agent(n, "backgammon", seed=i, game_options=options)
        for i, n in enumerate(names)
    }
    return play_game(env, agents, seed=seed).moves


@pytest.mark.parametrize("name", CUBE_AGENTS)
def test_cubeless_play_is_unchanged(name: str) -> None:
    """Without the cube, the default (Janowski) agent plays move for move as with cube=never
    (the old never-double behaviour), against an opponent that draws from its generator."""
    for seed in (3, 4):
        with_cube = _moves([name, "greedy"], {}, seed)
        never = _moves([f"{name}:cube=never", "greedy"], {}, seed)
        assert with_cube == never


def test_cubeful_games_end_with_every_agent() -> None:
    names = ["random", "greedy", "pubeval", "gnubg", "pretrained:backgammon"]
    seen_cube = set()
    for i, a in enumerate(names):
        b = names[(i + 1) % len(names)]
        env = make("backgammon", cube=True)
        agents = {
            "player_0": make_agent(a, "backgammon", seed=i, game_options={"cube": True}),
            "player_1": make_agent(b, "backgammon", seed=i, game_options={"cube": True}),
        }
        record = play_game(env, agents, seed=10 + i)
        assert not record.truncated
        r = record.rewards
        assert r["player_0"] == -r["player_1"] != 0
        info = record.infos["player_0"]
        assert info["points"] == r["player_0"]  # points x cube, the env's reward
        assert abs(r["player_0"]) % info["cube"] == 0
        seen_cube |= {action for _, action in record.moves if action >= k.ROLL}
    assert {k.ROLL, k.DOUBLE} <= seen_cube
