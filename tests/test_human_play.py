"""``spieltisch play`` with a person (``human``), driven by scripted stdin."""

from __future__ import annotations

import io
import re
from collections.abc import Sequence

import numpy as np
import pytest
from spieltisch.agents.base import InformationSet
from spieltisch.agents.human import HumanAgent, HumanQuit, move_label, move_labels
from spieltisch.envs.hilo import rules as R
from spieltisch.envs.hilo.engine import HiLoGame
from spieltisch.envs.hus.engine import HusGame
from spieltisch.envs.kalaha.engine import KalahaGame
from spieltisch.train.cli import main


class _TypesFirstLabel(io.StringIO):
    """A stdin for ``spieltisch play`` with a person: the lines of ``script`` first, then the
    label of the first move of the menu just printed (read from the captured output), ``limit``
    times; the output read so far is kept in ``out``."""

    def __init__(self, capsys: pytest.CaptureFixture, script: list[str], limit: int) -> None:
        super().__init__()
        self.capsys = capsys
        self.script = list(script)
        self.limit = limit
        self.out = ""

    def readline(self, size: int | None = -1) -> str:
        if self.script:
            return self.script.pop(0) + "\n"
        self.out += self.capsys.readouterr().out
        if self.limit == 0:
            return ""  # end of input
        self.limit -= 1
        menu = self.out.rsplit("Your move:", 1)[1].splitlines()[1:]
        first = next(line for line in menu if line.startswith("  ") and "labels" not in line)
        return re.split(r"\s{2,}", first.strip())[0] + "\n"


@pytest.mark.parametrize(
    ("game", "options"),
    [("kalaha", ["-o", "pits=3", "-o", "seeds=2"]), ("hus", []), ("hilo", []), ("backgammon", [])],
)
def test_human_plays_with_bad_input_reasked(
    game: str, options: list[str], monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture
) -> None:
    # Bad input first, then always the label of the first listed move; the game must finish or
    # the input run out (then the game is abandoned cleanly, exit 0). ("0" is a pit label in
    # Kalaha, so "-1" is the bad number.)
    stdin = _TypesFirstLabel(capsys, ["hello", "-1", "999"], limit=400)
    monkeypatch.setattr("sys.stdin", stdin)
    assert main(["play", game, "--agents", "human", "random", *options]) == 0
    out = stdin.out + capsys.readouterr().out
    assert "not a legal move: 'hello'" in out
    assert "not a legal move: '-1'" in out
    assert "not a legal move: '999'" in out
    assert "Your move:" in out
    assert "game 1 over" in out or "game abandoned" in out


@pytest.mark.parametrize(
    ("game", "options", "seat"),
    [("kalaha", ["-o", "pits=3", "-o", "seeds=2"], 1), ("hus", [], 0), ("hilo", [], 0),
     ("backgammon", [], 1)],
)  # fmt: skip
def test_human_plays_a_whole_game_by_labels(
    game: str,
    options: list[str],
    seat: int,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture,
) -> None:
    # Typing the label of a listed move always plays that move, to the end of the game.
    stdin = _TypesFirstLabel(capsys, [], limit=2000)
    monkeypatch.setattr("sys.stdin", stdin)
    agents = ["random", "random"]
    agents[seat] = "human"
    argv = ["play", game, "--agents", *agents, *options, "-o", "max_turns=60"]
    if game == "kalaha":
        argv = argv[:-2]  # Kalaha games are short and have no turn limit
    assert main(argv) == 0
    out = stdin.out + capsys.readouterr().out
    assert "not a legal move" not in out
    assert "game abandoned" not in out
    assert "game 1 over" in out or "game 1 truncated" in out
    assert f"player_{seat} (human) plays" in out


def test_kalaha_labels_are_the_pit_numbers_and_do_not_shift() -> None:
    game = KalahaGame()
    state = game.state_from_text("6,6,0,6,6,6/0 6,6,6,6,6,6/0 0")
    out: list[str] = []
    # Pit 2 is empty: "2" is asked again, "1" is pit 1 and "0" pit 0 (not the first and the
    # second pit listed, as a menu numbered 1..n over the legal pits would have it).
    typed = iter(["2", "1", "0"])
    agent = HumanAgent("kalaha", input_fn=lambda _: next(typed), output_fn=out.append)
    obs = _observation(state.legal_actions(), game.num_actions)
    assert agent.act(obs, state.clone()) == 1
    assert agent.act(obs, state.clone()) == 0
    assert any(line.startswith("not a legal move: '2'") for line in out)
    row = next(line for line in out if line.startswith("seat 0:"))
    labels = next(line for line in out if line.startswith("labels:"))
    # Each legal pit's label right under its count in the diagram row; none under the empty pit.
    counts = [m.end() for m in re.finditer(r"\d+", row[len("seat 0:") :])]
    marks = {m.end(): m[0] for m in re.finditer(r"\d+", labels[len("labels:") :])}
    assert marks == {end: str(pit) for pit, end in enumerate(counts) if pit != 2}
    # Seat 1's row runs right to left on the board: so do its labels.
    state = game.state_from_text("6,6,6,6,6,6/0 1,2,3,4,5,6/0 1")
    out.clear()
    typed = iter(["5"])
    assert agent.act(_observation(state.legal_actions(), 6), state.clone()) == 5
    assert next(line for line in out if line.startswith("labels:")).split()[1:] == [
        "5",
        "4",
        "3",
        "2",
        "1",
        "0",
    ]


def test_hus_labels_are_row_and_column() -> None:
    state = HusGame().new_initial_state()
    for typed, action in (("24", 12), ("2 4", 12), ("1,0", 0), ("a15", 15)):
        agent = HumanAgent("hus", input_fn=lambda _, t=typed: t, output_fn=lambda _: None)
        assert agent.act(_observation(state.legal_actions(), 16), state.clone()) == action
    assert move_labels("hus", [0, 7, 8, 15], 0, {}) == {0: "10", 7: "17", 8: "20", 15: "27"}


def test_backgammon_labels_use_the_boards_point_numbers() -> None:
    # The board is drawn from seat 0's side: seat 1's 6/3 is 19/22 there, bar/22 is bar/3.
    six_three, bar_22 = 5 * 6 + 2, 24 * 6 + 2
    assert move_labels("backgammon", [six_three, bar_22], 0, {}) == {
        six_three: "6/3",
        bar_22: "bar/22",
    }
    assert move_labels("backgammon", [six_three, bar_22], 1, {}) == {
        six_three: "19/22",
        bar_22: "bar/3",
    }
    # Bearing off from the 3 point with a 4 or a 5: one name, told apart by the die.
    assert move_labels("backgammon", [2 * 6 + 3, 2 * 6 + 4], 0, {}) == {
        15: "3/off with 4",
        16: "3/off with 5",
    }


def test_hilo_labels_name_the_slot_and_the_seat() -> None:
    assert move_label("hilo", R.A_REVEAL + 7, 0, {}) == "reveal B2"
    assert move_label("hilo", R.A_SWAP + 0, 1, {}) == "swap T1"
    # The wizard takes a card of the j-th player to the left: seat (seat + j) % n.
    assert move_label("hilo", R.A_WIZ_OTHER + R.SLOTS + 3, 2, {"num_players": 4}) == "seat 0 T4"
    state = HiLoGame().new_initial_state(1)
    info = InformationSet(state, state.current_player, np.random.default_rng(0))
    legal = state.legal_actions()
    for typed in ("reveal T2", "T2", "t2"):  # the slot alone where one move uses it
        agent = HumanAgent("hilo", input_fn=lambda _, t=typed: t, output_fn=lambda _: None)
        assert agent.act(_observation(legal, HiLoGame().num_actions), info) == R.A_REVEAL + 1


def test_a_person_sees_the_card_they_drew() -> None:
    # hot-seat or --quiet: the board shown is the public one, which hides the drawn card
    state = HiLoGame().new_initial_state(3)
    rng = np.random.default_rng(0)
    while R.A_DRAW not in state.legal_actions():
        state.apply(int(rng.choice(state.legal_actions())))
    state.apply(R.A_DRAW)
    info = InformationSet(state, state.current_player, np.random.default_rng(0))
    said: list[str] = []
    agent = HumanAgent("hilo", input_fn=lambda _: "q", output_fn=said.append)
    with pytest.raises(HumanQuit):
        agent.act(_observation(state.legal_actions(), HiLoGame().num_actions), info)
    assert f"You hold {state.view(state.current_player).held} (from the draw pile)" in said
    other = InformationSet(state, 1 - state.current_player, np.random.default_rng(0))
    assert other.view().held is None  # (the other seat would not be told)


@pytest.mark.parametrize("game", ["hilo", "backgammon", "kalaha"])
def test_play_hides_the_seed_from_its_person(
    game: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture
) -> None:
    # with a default seed of 0, printed first, a person could rebuild every hidden card (HiLo),
    # every roll to come (backgammon) and the agents' random choices (any game)
    seeds = []
    for _ in range(2):
        monkeypatch.setattr("sys.stdin", io.StringIO("q\n"))
        assert main(["play", game, "--agents", "human", "random"]) == 0
        out = capsys.readouterr().out
        assert out.startswith("=== game 1\n")
        seeds.append(re.search(r"game abandoned \(seed (\d+)\)", out).group(1))
    assert seeds[0] != seeds[1]
    monkeypatch.setattr("sys.stdin", io.StringIO("q\n"))
    assert main(["play", game, "--agents", "human", "random", "--seed", "5"]) == 0
    assert capsys.readouterr().out.startswith("=== game 1, seed 5\n")  # chosen: shown


def test_play_refuses_quiet_with_a_person(capsys: pytest.CaptureFixture) -> None:
    # --quiet printed no board and no menu: the person was asked for a move blind
    assert main(["play", "kalaha", "--agents", "human", "random", "--quiet"]) == 2
    assert "a person ('human') needs them" in capsys.readouterr().err


@pytest.mark.parametrize("agent", ["human:x=1", "random:depth=2"])
def test_play_names_the_parameters_an_agent_takes(
    agent: str, capsys: pytest.CaptureFixture
) -> None:
    # the message named a Python closure: "human_factory.<locals>.factory() got an unexpected..."
    assert main(["play", "kalaha", "--agents", agent, "random", "--quiet"]) == 2
    err = capsys.readouterr().err
    assert "takes no parameters" in err
    assert "<locals>" not in err and "unexpected keyword" not in err


def test_play_names_wizard_targets_by_seat_with_random_start(capsys: pytest.CaptureFixture) -> None:
    argv = ["play", "hilo", "--agents", "random", "random", "random", "-o", "num_players=3",
            "-o", "random_start=true", "--seed", "1"]  # fmt: skip
    assert main(argv) == 0
    out = capsys.readouterr().out
    # player_0 sits in seat 1; its wizard takes from the first player to its left, seat 2
    assert "player_0 = seat 1" in out
    assert "player_0 (random) plays seat 2 T1 (a50)" in out  # it named its own seat 1


def _observation(legal: Sequence[int], num_actions: int) -> dict[str, np.ndarray]:
    mask = np.zeros(num_actions, dtype=np.int8)
    mask[list(legal)] = 1
    return {"observation": np.zeros(1, dtype=np.float32), "action_mask": mask}


def test_agents_demo_still_prints_boards(capsys: pytest.CaptureFixture) -> None:
    assert main(["play", "kalaha", "--agents", "random", "random"]) == 0
    out = capsys.readouterr().out
    assert "stores:" in out and "game 1 over" in out


def test_a_bad_parameter_value_is_not_called_an_unknown_parameter(monkeypatch) -> None:
    # the factory declares ``depth``; a TypeError from a bad value used to be reported as
    # "does not take parameters ['depth']"
    from spieltisch.agents import registry

    def picky(options, seed, depth=1):
        raise TypeError("depth must be an int")

    factories = registry.agent_factories("kalaha")
    monkeypatch.setattr(registry, "agent_factories", lambda game: {**factories, "picky": picky})
    monkeypatch.setattr(registry, "check_agent_name", lambda name, game: "picky")
    with pytest.raises(ValueError, match=r"agent 'picky': bad parameter values .*depth must be"):
        registry.make_agent("picky:depth=2", "kalaha")
