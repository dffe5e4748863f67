"""HiLo bad input: deck files, positions, actions and parameters give clear errors and change
nothing; the deck ships with the package."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import zipfile
from importlib import resources
from pathlib import Path

import numpy as np
import pytest
from spieltisch.envs._common.errors import (
    ActionTypeError,
    GameOverError,
    IllegalActionError,
    PositionFormatError,
)
from spieltisch.envs.hilo import DeckFormatError, HiLoGame, load_deck
from spieltisch.envs.hilo.batch import HiLoBatch
from spieltisch.envs.hilo.cards import WIZARD

P0 = "?Re-L,?Re-L,?Re-L,?Re-L,?Re-R,?Re-R|?Re-R,?Re-R,?Re-T,?Re-T,?Re-T,?Re-B"
P1 = "?Re-B,?Re-B,?Dr,?Dr,?Dr,?Dr|?Dr,?Wo,?Wo,?Wo,?Wo,?Wo"
G2 = HiLoGame(2)


def test_default_deck_is_the_reconstruction_of_the_spec():
    deck = load_deck()
    assert deck.num_cards == 69 and deck.num_faces == 22
    counts = {}
    for face in deck.card_faces:
        counts[face.kind_name] = counts.get(face.kind_name, 0) + 1
    assert counts == {
        "wizard": 4, "phoenix": 4, "king": 3, "bard": 3, "dragon_keeper": 2, "wolf_keeper": 2,
        "unicorn_keeper": 2, "dragon": 5, "wolf": 5, "unicorn": 5, "resident": 34,
    }  # fmt: skip
    halves = np.array([[f.halves >> i & 1 for i in range(4)] for f in deck.card_faces])
    assert halves.sum(axis=0).tolist() == [18, 18, 11, 11]  # left, right, top, bottom
    assert sum(f.coin for f in deck.card_faces) == 4 + 4  # phoenixes and 4 residents
    assert deck.count(WIZARD) == 4


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("not json", "not valid JSON"),
        ("[]", "must hold a JSON object"),
        ('{"cards": []}', "non-empty list"),
        ('{"cards": [{"kind": "dragonn", "count": 3}]}', "kind 'dragonn'"),
        ('{"cards": [{"kind": "dragon", "count": 0}]}', "positive integer count"),
        ('{"cards": [{"kind": "dragon", "count": 2.5}]}', "positive integer count"),
        ('{"cards": [{"kind": "king", "count": 1, "halves": "LX"}]}', "unknown edge 'X'"),
        ('{"cards": [{"kind": "king", "count": 1, "halves": "LL"}]}', "given twice"),
        ('{"cards": [{"kind": "king", "count": 1, "coin": "yes"}]}', "true or false"),
        ('{"cards": [{"kind": "wizard", "count": 1, "coin": true}]}', "wizard scores nothing"),
        ('{"cards": [{"kind": "king", "count": 1, "colour": "red"}]}', "unknown fields"),
        ('{"cards": [{"kind": "king", "count": 80}], "format": "v9"}', "not supported"),
        ('{"cards": [{"kind": "king", "count": 20}]}', "players need at least 26"),
        (
            '{"cards": [{"kind": "king", "count": 20}, {"kind": "wizard", "count": 30}]}',
            "non-wizard cards",
        ),
    ],
)
def test_malformed_deck_files_are_named(tmp_path, content, message):
    path = tmp_path / "deck.json"
    path.write_text(content)
    with pytest.raises(DeckFormatError, match=message) as err:
        HiLoGame(2, deck=str(path))
    if "players need" not in message and "non-wizard" not in message:
        assert str(path) in str(err.value)


def test_another_deck_file_can_be_played(tmp_path):
    shipped = resources.files("spieltisch.envs.hilo").joinpath("data", "deck.json")
    data = json.loads(shipped.read_text(encoding="utf-8"))
    data["cards"].append({"kind": "king", "count": 2, "halves": "TB", "name": "Koenig 2"})
    path = tmp_path / "bigger.json"
    path.write_text(json.dumps(data))
    game = HiLoGame(4, deck=path)
    assert game.num_cards == 71 and game.deck.num_faces == 23
    assert game.observation_size == 204 * 4 + 60 + 3 * 23 + 4
    s = game.new_initial_state(0)
    rng = np.random.default_rng(0)
    while not s.is_terminal():
        legal = s.legal_actions()
        s.apply(legal[int(rng.integers(len(legal)))])
    assert sorted(s.all_cards().tolist()) == list(range(71))
    assert HiLoGame(4, deck=path) == game and HiLoGame(4) != game


def test_bad_game_parameters():
    with pytest.raises(ValueError, match="2, 3 or 4"):
        HiLoGame(1)
    with pytest.raises(TypeError, match="num_players"):
        HiLoGame(2.0)
    with pytest.raises(TypeError, match="final_round"):
        HiLoGame(2, final_round=1)
    with pytest.raises(TypeError, match="deck"):
        HiLoGame(2, deck=69)


def test_bad_actions_raise_and_change_nothing():
    s = G2.new_initial_state(1)
    before = s.to_text()
    with pytest.raises(
        IllegalActionError, match=r"action 0 \(take the discard\) is illegal in phase 'setup'"
    ):
        s.apply(0)
    with pytest.raises(IllegalActionError, match="out of range"):
        s.apply(62)
    with pytest.raises(IllegalActionError, match="out of range"):
        s.apply(-1)
    for bad in (26.0, "26", None, True, np.array([26, 27])):
        with pytest.raises(ActionTypeError):
            s.apply(bad)
    assert s.to_text() == before
    s.apply(np.int64(26))  # numpy integers are fine
    s.apply(np.array(30))
    s.apply(1)
    before = s.to_text()
    with pytest.raises(IllegalActionError, match="legal actions"):
        s.apply(1)  # drawing twice
    with pytest.raises(IllegalActionError):
        s.apply(14)  # slot 0 is face up: it cannot be revealed
    assert s.to_text() == before
    for p in (-1, 2, "0", None):
        with pytest.raises((TypeError, ValueError)):
            s.observation(p)


def test_moves_after_the_end_raise():
    s = G2.state_from_text(
        f"p0={P0.replace('?', '')} p1={P1.replace('?', '')} draw=* discard=Un phase=end to_move=0"
    )
    with pytest.raises(GameOverError, match="over"):
        s.apply(0)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (f"p0={P0} draw=* discard=Un phase=turn to_move=0", "missing field 'p1'"),
        (f"p0={P0} p1={P1} draw=* discard=Un phase=turn", "missing field 'to_move'"),
        (f"p0={P0} p1={P1} p2={P1} draw=* discard=Un phase=turn to_move=0", "unknown field"),
        (f"p0={P0} p1={P1} draw=* discard=Un phase=play to_move=0", "phase must be one of"),
        (f"p0={P0} p1={P1} draw=* discard=Un phase=turn to_move=2", "to_move must be"),
        (f"p0={P0},?Un p1={P1} draw=* discard=Un phase=turn to_move=0", "expected 12 cards"),
        (f"p0={P0} p1={P1} draw=* discard=Xy phase=turn to_move=0", "unknown card 'Xy'"),
        (f"p0={P0} p1={P1} draw=* discard=Ki-TB phase=turn to_move=0", "no card 'Ki-TB'"),
        (f"p0={P0} p1={P1} draw=* discard=Re-L phase=turn to_move=0", "too many 'Re-L'"),
        (f"p0={P0} p1={P1} draw=Un discard=Un phase=turn to_move=0", "missing:"),
        (f"p0={P0} p1={P1} draw=* discard=* phase=turn to_move=0", "only one of"),
        (f"p0={P0} p1={P1} draw=* discard=Un phase=taken to_move=0", "needs hand=discard"),
        (f"p0={P0} p1={P1} draw=* discard=Un hand=draw:Ba phase=turn to_move=0", "only phases"),
        (f"p0={P0} p1={P1} draw=* discard=Un phase=end to_move=0", "all cards lie face up"),
        (f"p0={P0} p1={P1} draw=- discard=* phase=turn to_move=0", "empty draw pile"),
        (f"p0={P0} p1={P1} draw=* discard=Un phase=turn to_move=0 final=1", "final_round"),
        (f"p0={P0} p1={P1} draw=* discard=Un phase=turn to_move=0 rng=xyz", "hexadecimal"),
        (f"p0={P0} p1={P1} draw=* discard=Un phase=wizard2 to_move=0", "wizslot"),
        (f"p0={P0} p1={P1} draw=* discard=Un phase turn", "key=value"),
        (f"p0={P0} p1={P1} draw=* discard=Un phase=turn to_move=0 to_move=1", "twice"),
        (
            f"p0={P0.replace('?', '')} p1={P1} draw=* discard=Un phase=phoenix to_move=0",
            "no legal action",
        ),
    ],
)
def test_malformed_positions_are_named(text, message):
    with pytest.raises(PositionFormatError, match=message):
        G2.state_from_text(text)


def test_position_must_be_a_string():
    with pytest.raises(PositionFormatError, match="string"):
        G2.state_from_text(None)


def test_batch_rejects_bad_actions_and_changes_nothing():
    batch = HiLoBatch(G2, 8, seed=0)
    states, mask = batch.states.copy(), batch.legal_mask.copy()
    actions = np.full(8, 26)
    actions[5] = 1  # drawing during the setup
    with pytest.raises(IllegalActionError, match="game 5: action 1 is illegal"):
        batch.step(actions)
    with pytest.raises(ActionTypeError, match="shape"):
        batch.step(np.full(7, 26))
    with pytest.raises(ActionTypeError, match="integers"):
        batch.step(np.full(8, 26.0))
    assert np.array_equal(batch.states, states) and np.array_equal(batch.legal_mask, mask)
    with pytest.raises(ValueError, match="viewers"):
        batch.observations(np.full(8, 2))
    with pytest.raises(ValueError, match="num_games"):
        HiLoBatch(G2, 0)
    with pytest.raises(ValueError, match="state belongs"):
        batch.set_state(0, HiLoGame(3).new_initial_state(0))
    s = G2.new_initial_state(3)
    batch.set_state(2, s)
    assert batch.state(2) == s


def test_deck_is_packaged_in_the_wheel(tmp_path):
    """A non-editable install must carry data/deck.json (package-data in pyproject.toml)."""
    root = Path(__file__).resolve().parents[1]
    src = tmp_path / "src"  # build from a copy: the build leaves nothing in the working tree
    src.mkdir()
    for name in ("pyproject.toml", "README.md"):
        if (root / name).exists():
            shutil.copy(root / name, src / name)
    for package in ("envs", "agents", "train"):
        shutil.copytree(
            root / package, src / package, ignore=shutil.ignore_patterns("__pycache__", "*.nbi")
        )
    result = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", str(src), "-w", str(tmp_path / "dist"),
         "--no-deps", "--no-build-isolation", "-q"],
        capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    if result.returncode != 0:
        pytest.fail(f"pip wheel failed: {result.stderr[-2000:]}")
    wheel = next((tmp_path / "dist").glob("spieltisch-*.whl"))
    names = zipfile.ZipFile(wheel).namelist()
    assert "spieltisch/envs/hilo/data/deck.json" in names
    assert "spieltisch/envs/hilo/rules.py" in names
