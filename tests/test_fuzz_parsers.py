"""Fuzzing every text input spieltisch reads (issue 22), with hypothesis.

The inputs: the position notation and diagrams of all four games, GNU Backgammon position IDs,
``env.reset(options={"position": ...})``, agent names with parameters, ``--set`` overrides,
``-o`` game options, config files and checkpoint metadata. Each property draws valid inputs
(from randomly played games, the shipped configs and checkpoints), mutations of them (characters
deleted, inserted or replaced, numbers swapped for huge, negative or non-ASCII ones, fields
swapped or cut off) and random text, and checks that each input either works or raises the
documented error type (:class:`PositionFormatError`, ``ValueError``, :class:`ConfigError`,
:class:`CheckpointError`), raised on purpose by a ``raise`` of the project (not a ``ValueError``
leaked from ``int()`` or numpy) with a message; never another exception, never a hang (each
example runs under :data:`SECONDS_PER_EXAMPLE`), never a changed state (a failed reset leaves the
env as it was; the parsers leave their inputs alone). What works is checked too: a parsed position
writes back to the same text and can be played on.

Each bug the fuzzing found is kept as an ``@example``. CI runs a few hundred examples per parser;
``benchmarks/fuzz_parsers.py`` runs the same properties with many more (it sets
``SPIELTISCH_FUZZ_EXAMPLES`` before importing this module).
"""

from __future__ import annotations

import atexit
import contextlib
import copy
import dataclasses
import functools
import importlib.util
import json
import linecache
import math
import os
import re
import shutil
import signal
import tempfile
import time
from collections import Counter
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import torch
import yaml
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from spieltisch.agents.backgammon import td_value
from spieltisch.agents.base import Agent
from spieltisch.agents.neural.checkpoint import CheckpointError, load_checkpoint
from spieltisch.agents.neural.policy import NeuralAgent
from spieltisch.agents.registry import agent_names, check_agent_name, make_agent, parse_agent_name
from spieltisch.envs import make
from spieltisch.envs._common.errors import PositionFormatError
from spieltisch.envs._common.options import parse_options
from spieltisch.envs.backgammon import BackgammonGame
from spieltisch.envs.hilo import HiLoGame
from spieltisch.envs.hus import HusGame
from spieltisch.envs.kalaha import KalahaGame
from spieltisch.train.config import (
    CONFIG_CLASSES,
    ConfigError,
    build_config,
    config_to_dict,
    load_config,
    parse_override,
)

ROOT = Path(__file__).resolve().parents[1]
PRETRAINED = ROOT / "agents" / "pretrained"
#: the project's own code: a documented error must be raised by a ``raise`` in one of these
PROJECT = tuple(str(ROOT / part) + os.sep for part in ("envs", "agents", "train"))
GAMES = ("kalaha", "hus", "backgammon", "hilo")
#: examples per property in a long run (benchmarks/fuzz_parsers.py); unset: the CI counts below
LONG_RUN = int(os.environ.get("SPIELTISCH_FUZZ_EXAMPLES", "0"))
#: wall-clock limit of one example: anything slower is reported as a hang
SECONDS_PER_EXAMPLE = float(os.environ.get("SPIELTISCH_FUZZ_SECONDS", "20"))
#: examples run per property (read by the benchmark)
RUNS: Counter[str] = Counter()


def fuzz_settings(ci_examples: int) -> settings:
    """``ci_examples`` in CI, ``SPIELTISCH_FUZZ_EXAMPLES`` in a long run; no deadline of
    hypothesis' own (it cannot stop a hang: :func:`fuzz_property` does) and no example database
    in a long run."""
    return settings(
        max_examples=LONG_RUN or ci_examples,
        deadline=None,
        database=None if LONG_RUN else settings.default.database,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    )


class Hang(BaseException):
    """An example ran past :data:`SECONDS_PER_EXAMPLE` (a BaseException: no parser may catch it)."""


@contextlib.contextmanager
def time_limit(seconds: float) -> Iterator[None]:
    def expire(signum: int, frame: Any) -> None:
        raise Hang(f"an example ran for more than {seconds} s")

    previous = signal.signal(signal.SIGALRM, expire)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def fuzz_property(fn: Callable) -> Callable:
    """Count the examples of ``fn`` in :data:`RUNS` and run each under the time limit."""

    @functools.wraps(fn)
    def run(*args: Any, **kwargs: Any) -> None:
        RUNS[fn.__name__] += 1
        with time_limit(SECONDS_PER_EXAMPLE):
            fn(*args, **kwargs)

    return run


def raised_on_purpose(err: BaseException) -> bool:
    """Whether ``err`` comes from a ``raise`` statement in the project's code (not from a
    library call such as ``int()`` inside it)."""
    tb = err.__traceback__
    while tb is not None and tb.tb_next is not None:
        tb = tb.tb_next
    if tb is None:
        return False
    filename = os.path.realpath(tb.tb_frame.f_code.co_filename)
    line = linecache.getline(filename, tb.tb_lineno).strip()
    return filename.startswith(PROJECT) and line.startswith("raise")


#: what :func:`attempt` returns after a documented error
REFUSED = object()


def attempt(errors: type | tuple[type, ...], fn: Callable, *args: Any, **kwargs: Any) -> Any:
    """``fn(*args, **kwargs)``, or :data:`REFUSED` after one of the documented ``errors`` raised
    on purpose with a message; any other exception fails the property."""
    try:
        return fn(*args, **kwargs)
    except errors as err:
        assert str(err).strip(), f"{type(err).__name__} without a message"
        assert raised_on_purpose(err), f"{type(err).__name__} leaked from a library: {err!r}"
        return REFUSED


def test_the_checks_can_fail() -> None:
    """The time limit stops a hang, and an error leaked from a library call inside the project
    is told apart from one the project raises."""
    give_up = time.monotonic() + 10
    with pytest.raises(Hang), time_limit(0.05):
        while time.monotonic() < give_up:
            pass
    from spieltisch.agents.base import RandomAgent

    with pytest.raises(TypeError) as leaked:
        RandomAgent("not a seed")  # numpy's error, from a call inside agents/base.py
    assert not raised_on_purpose(leaked.value)
    with pytest.raises(PositionFormatError) as refused:
        KalahaGame().state_from_text("x")
    assert raised_on_purpose(refused.value)


# --- text strategies ---------------------------------------------------------------------------
#: characters that trip parsers: non-ASCII digits ('²'.isdigit() but int('²') fails), odd
#: whitespace, NUL, signs, exponents, and every separator the notations use
TRICKY = "²١٠\u00a0\t\x00\x0b\u2028-+.eE_xX#:=!?*|,/ \n"
NUMBERS = st.one_of(
    st.integers(0, 30).map(str),
    st.integers(0, 2**70).map(str),
    st.integers(-9, -1).map(str),
    st.sampled_from(["²", "١٢", "0x1f", "1e3", "+1", "-0", "007", "1.5", "", " ", "2147483648"]),
)


@st.composite
def mutated(draw: st.DrawFn, valid: st.SearchStrategy[str], alphabet: str) -> str:
    """A valid text with 1-4 edits: a span deleted, characters inserted, a number replaced,
    two space-separated fields swapped, or the text cut off."""
    text = draw(valid)
    for _ in range(draw(st.integers(1, 4))):
        i = draw(st.integers(0, len(text)))
        op = draw(st.sampled_from(["delete", "insert", "number", "swap", "truncate"]))
        if op == "delete":
            text = text[:i] + text[draw(st.integers(i, min(len(text), i + 8))) :]
        elif op == "insert":
            text = text[:i] + draw(st.text(alphabet, min_size=1, max_size=6)) + text[i:]
        elif op == "number":
            runs = list(re.finditer(r"\d+", text))
            if runs:
                m = runs[draw(st.integers(0, len(runs) - 1))]
                text = text[: m.start()] + draw(NUMBERS) + text[m.end() :]
        elif op == "swap":
            fields = text.split(" ")
            a, b = (draw(st.integers(0, len(fields) - 1)) for _ in range(2))
            fields[a], fields[b] = fields[b], fields[a]
            text = " ".join(fields)
        else:
            text = text[:i]
    return text


def texts(valid: st.SearchStrategy[str], samples: list[str]) -> st.SearchStrategy[str]:
    """Valid texts, mutations of them, and random text (over the notation's own characters
    and over all of Unicode)."""
    alphabet = "".join(sorted(set("".join(samples)) | set(TRICKY)))
    return st.one_of(
        valid, mutated(valid, alphabet), st.text(alphabet, max_size=80), st.text(max_size=40)
    )


#: values as YAML text (``KEY=VALUE`` items, agent parameters, overrides)
YAML_TEXT = st.one_of(
    st.integers(-3, 40).map(str),
    st.integers().map(str),
    st.floats().map(repr),
    st.sampled_from(
        [
            "true",
            "no",
            "",
            "null",
            "~",
            "[1, 2]",
            "[]",
            "{a: 1}",
            ".inf",
            "-.inf",
            ".nan",
            "1.0e400",
            "1e-3",
            "abc",
            "'quoted'",
            "[",
            "{",
            "!!python/object/apply:os.system [x]",
            "&a [*a]",
            "1_000",
            "0x10",
            "2:30",
            "goki",
            "standard",
            "win",
            "score",
        ]
    ),
    st.text(max_size=10),
)


# --- games -------------------------------------------------------------------------------------
@functools.cache
def engines(game: str) -> tuple[Any, ...]:
    """The engines a game's positions are read with: the default rules and a variant."""
    return {
        "kalaha": (KalahaGame(), KalahaGame(pits=4, seeds=3, rules="standard")),
        "hus": (HusGame(),),
        "backgammon": (BackgammonGame(), BackgammonGame(cube=True)),
        "hilo": (HiLoGame(), HiLoGame(num_players=3, final_round=True)),
    }[game]


def play_random(engine: Any, seed: int, plies: int) -> Any:
    """The state after ``plies`` random moves (dice and cards from ``seed``)."""
    rng = np.random.default_rng(seed)
    if isinstance(engine, HiLoGame):
        state = engine.new_initial_state(seed)
    else:
        state = engine.new_initial_state()
    for _ in range(plies):
        if state.is_terminal():
            break
        if getattr(state, "is_chance_node", lambda: False)():
            state.roll_dice(rng)
        else:
            state.apply(int(rng.choice(state.legal_actions())))
    return state


def played(game: str) -> st.SearchStrategy[tuple[Any, Any]]:
    """``(engine, state)`` after a random number of random moves."""
    return st.builds(
        lambda engine, seed, plies: (engine, play_random(engine, seed, plies)),
        st.sampled_from(engines(game)),
        st.integers(0, 2**32 - 1),
        st.integers(0, 250),
    )


@functools.cache
def samples(game: str) -> list[str]:
    """Some valid texts of ``game`` (the characters the notation uses)."""
    out = []
    for engine in engines(game):
        state = play_random(engine, 0, 30)
        out += [state.to_text(), str(state)]
    return out


def position_texts(game: str) -> st.SearchStrategy[str]:
    """Positions of ``game``: written by ``to_text()`` (and, for Kalaha and Hus, the diagram of
    ``str(state)``, which they read back too), mutated, or random."""
    valid = played(game).map(lambda p: p[1].to_text())
    if game in ("kalaha", "hus"):
        valid = st.one_of(valid, played(game).map(lambda p: str(p[1])))
    return texts(valid, samples(game))


def check_position(engine: Any, text: str) -> None:
    """``engine.state_from_text(text)`` works or raises PositionFormatError; a state read
    writes back to a text that reads back the same, and can be played on."""
    state = attempt(PositionFormatError, engine.state_from_text, text)
    if state is REFUSED:
        return
    again = engine.state_from_text(state.to_text())
    assert again.to_text() == state.to_text()
    if not state.is_terminal() and not getattr(state, "is_chance_node", lambda: False)():
        state.apply(state.legal_actions()[0])


@fuzz_settings(200)
@given(engine=st.sampled_from(engines("kalaha")), text=position_texts("kalaha"))
@example(engine=KalahaGame(), text="6,6,6,6,6,²/0 6,6,6,6,6,6/0 0")  # int('²') failed
@example(engine=KalahaGame(), text="6,6,6,6,6,2147483648/0 6,6,6,6,6,6/0 0")  # int32 overflow
@example(engine=KalahaGame(), text=str(KalahaGame().new_initial_state()).replace(" 6\n", " ²\n", 1))
@fuzz_property
def test_kalaha_positions(engine: KalahaGame, text: str) -> None:
    check_position(engine, text)


@fuzz_settings(150)
@given(text=position_texts("hus"))
@example(text="2,2,2,2,2,2,2,²/2,2,2,2,0,0,0,0 2,2,2,2,2,2,2,2/2,2,2,2,0,0,0,0 0")
@example(text="2,2,2,2,2,2,2,2147483648/2,2,2,2,0,0,0,0 2,2,2,2,2,2,2,2/2,2,2,2,0,0,0,0 0")
@fuzz_property
def test_hus_positions(text: str) -> None:
    check_position(HusGame(), text)


@fuzz_settings(200)
@given(engine=st.sampled_from(engines("backgammon")), text=position_texts("backgammon"))
@example(engine=BackgammonGame(), text="4HPwATDgc/ABMA 0 ²1")  # int('²') failed
@fuzz_property
def test_backgammon_positions(engine: BackgammonGame, text: str) -> None:
    check_position(engine, text)


HILO_START = HiLoGame().new_initial_state(0).to_text()


@fuzz_settings(100)
@given(engine=st.sampled_from(engines("hilo")), text=position_texts("hilo"))
@example(engine=HiLoGame(), text=HILO_START.replace("to_move=0", "to_move=²"))  # int('²')
@fuzz_property
def test_hilo_positions(engine: HiLoGame, text: str) -> None:
    check_position(engine, text)


BASE64 = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
POSITION_IDS = st.one_of(
    played("backgammon").map(lambda p: p[1].position_id()),
    mutated(played("backgammon").map(lambda p: p[1].position_id()), BASE64 + TRICKY),
    st.text(BASE64, min_size=14, max_size=14),
    st.text(max_size=20),
)
ROLLS = st.one_of(
    st.none(),
    st.text("0123456789²x ", max_size=3),
    st.tuples(st.integers(-1, 8), st.integers(-1, 8)),
    st.lists(st.one_of(st.integers(0, 7), st.floats(0, 7), st.booleans()), max_size=3),
)


@fuzz_settings(200)
@given(position_id=POSITION_IDS, roll=ROLLS, seat=st.integers(-1, 2))
@example(position_id="4HPwATDgc/ABMA", roll="3x", seat=0)  # int('x') failed
@example(position_id="4HPwATDgc/ABMA", roll="²1", seat=0)
@example(position_id="\u20284HPwATDgc/ABMA", roll=None, seat=0)  # read as '4HPwATDgc/ABMA'
@example(position_id="HPwATDgc/ABMA0", roll=None, seat=0)  # '0': stray bits 81-84 ignored
@fuzz_property
def test_backgammon_position_ids(position_id: str, roll: Any, seat: int) -> None:
    game = engines("backgammon")[0]
    state = attempt(ValueError, game.state_from_position_id, position_id, roll, seat)
    if state is not REFUSED:
        assert state.position_id() == position_id


# --- env.reset(options={"position": ...}) ------------------------------------------------------
@functools.cache
def env_of(game: str) -> Any:
    return make(game)


def env_snapshot(env: Any) -> dict[str, Any]:
    """Everything a reset sets."""
    raw = env.unwrapped
    return {
        "state": (id(raw.state), raw.state.to_text()),
        "rng": raw._rng.bit_generator.state,
        "seats": dict(raw._seat_of),
        "selection": raw.agent_selection,
        "agents": list(raw.agents),
        "turns": raw.num_turns,
        "rewards": dict(raw._cumulative_rewards),
        "ended": (dict(raw.terminations), dict(raw.truncations)),
    }


POSITIONS_OF_ANY_GAME = st.sampled_from(GAMES).flatmap(
    lambda g: st.tuples(st.just(g), st.one_of(position_texts(g), st.integers(), st.binary()))
)


@fuzz_settings(100)
@given(
    game_position=POSITIONS_OF_ANY_GAME,
    seed=st.integers(0, 2**32 - 1),
    plies=st.integers(0, 20),
    reseed=st.booleans(),
)
@example(game_position=("kalaha", "6,6,6,6,6,6/0 6,6,6,6,6,x/0 0"), seed=0, plies=3, reseed=True)
@fuzz_property
def test_env_reset_positions(
    game_position: tuple[str, Any], seed: int, plies: int, reseed: bool
) -> None:
    """A reset from a bad position raises PositionFormatError and leaves the env as it was
    (its state, generator and seats too, even with a new seed); a good one starts there."""
    game, position = game_position
    env = env_of(game)
    env.reset(seed=seed)
    rng = np.random.default_rng(seed)
    for _ in range(plies):
        if not env.agents:
            break
        obs, _, done, cut, _ = env.last()
        env.step(None if done or cut else int(rng.choice(np.flatnonzero(obs["action_mask"]))))
    before = env_snapshot(env)
    options = {"position": position}
    result = attempt(
        PositionFormatError, env.reset, seed=seed + 1 if reseed else None, options=options
    )
    if result is REFUSED:
        assert env_snapshot(env) == before, "a failed reset changed the env"
    else:  # started there (backgammon then rolls the dice if the position is about to roll)
        assert env.agent_selection in env.agents
        env.last()


# --- agent names -------------------------------------------------------------------------------
AGENT_BASES = sorted({n for g in GAMES for n in agent_names(g)})
PARAM_KEYS = st.one_of(
    st.sampled_from(
        [
            "depth",
            "time",
            "tt_bits",
            "samples",
            "plies",
            "search",
            "leaves",
            "ply",
            "keep",
            "weight",
            "seed",
            "name",
            "x",
        ]
    ),
    st.text(max_size=8),
)
PREFIX_VALUES = st.one_of(
    st.sampled_from([*GAMES, "", "../x", "/", "runs/none/final", "a:b", "kalaha:"]),
    st.text(max_size=12),
)


@st.composite
def agent_specs(draw: st.DrawFn) -> str:
    """``NAME[:KEY=VALUE,...]``, ``pretrained:VALUE[:...]``, ``checkpoint:VALUE[:...]``, possibly
    mutated."""
    base = draw(st.one_of(st.sampled_from(AGENT_BASES), st.text(max_size=10)))
    if draw(st.booleans()):
        base = f"{draw(st.sampled_from(['pretrained', 'checkpoint']))}:{draw(PREFIX_VALUES)}"
    params = draw(st.lists(st.tuples(PARAM_KEYS, YAML_TEXT), max_size=3))
    spec = base
    if params or draw(st.booleans()):
        spec += ":" + ",".join(f"{k}={v}" for k, v in params)
    if draw(st.integers(0, 3)) == 0:
        spec = draw(mutated(st.just(spec), "".join(sorted(set(spec) | set(TRICKY)))))
    return spec


@fuzz_settings(150)
@given(spec=agent_specs(), game=st.sampled_from(GAMES))
@example(spec="alphabeta:", game="kalaha")
@fuzz_property
def test_agent_name_parsing(spec: str, game: str) -> None:
    """parse_agent_name and check_agent_name: a name and identifier keys, or ValueError."""
    parsed = attempt(ValueError, parse_agent_name, spec)
    if parsed is not REFUSED:
        name, params = parsed
        assert name and all(key.isidentifier() for key in params)
    base = attempt(ValueError, check_agent_name, spec, game)
    if base is not REFUSED:
        assert base in (*agent_names(game), "pretrained", "checkpoint")


@fuzz_settings(100)
@given(spec=agent_specs(), game=st.sampled_from(GAMES))
@example(spec="alphabeta:time=.nan", game="kalaha")  # searched forever
@example(spec="alphabeta:depth=1.0e400", game="hus")  # int(inf): OverflowError
@example(spec="heuristic:samples=.inf", game="hilo")  # int(inf): OverflowError
@example(spec="checkpoint:/", game="kalaha")  # Path('/').with_suffix: ValueError of pathlib
@example(spec="pretrained:kalaha:", game="kalaha")
@fuzz_property
def test_make_agent(spec: str, game: str) -> None:
    """make_agent: an Agent, or ValueError naming the problem."""
    if spec == "perfect":
        return  # nothing to parse, and loading the solver's databases takes seconds
    errors = (ValueError,) if importlib.util.find_spec("gnubg_nn") else (ValueError, ImportError)
    agent = attempt(errors, make_agent, spec, game, seed=0)
    assert agent is REFUSED or isinstance(agent, Agent)


# --- --set overrides and config files ----------------------------------------------------------
CONFIG_FILES = sorted((ROOT / "configs").glob("*.yaml"))
CONFIG_TEXTS = [p.read_text() for p in CONFIG_FILES]
CONFIG_KEYS = sorted({f.name for c in CONFIG_CLASSES.values() for f in dataclasses.fields(c)})
OVERRIDE_KEYS = st.one_of(
    st.sampled_from(CONFIG_KEYS),
    st.sampled_from(["game_options.pits", "game_options.cube", "lr.x", "a.b.c", "", ".", "x"]),
    st.text(max_size=10),
)
OVERRIDES = st.lists(
    st.builds(
        lambda key, sep, value: f"{key}{sep}{value}",
        OVERRIDE_KEYS,
        st.sampled_from(["=", " = ", "", "=="]),
        YAML_TEXT,
    ),
    max_size=4,
)


def check_config(cfg: Any) -> None:
    """A config that was accepted: finite numbers, recorded as strict JSON. ``game_options`` is
    free-form here: the game checks it when the run starts (``make_batch``)."""
    recorded = config_to_dict(cfg)
    json.dumps(recorded)  # what the run directory writes
    del recorded["game_options"]
    for key, value in recorded.items():
        if isinstance(value, float):
            assert math.isfinite(value), f"{key}={value} accepted"
    json.dumps(recorded, allow_nan=False)


@fuzz_settings(150)
@given(base=st.sampled_from(CONFIG_TEXTS).map(yaml.safe_load), overrides=OVERRIDES)
@example(base={"algorithm": []}, overrides=[])  # unhashable: TypeError
@example(base={}, overrides=["lr=.nan"])  # accepted a NaN step size
@example(base={}, overrides=["game_options.x=&a [*a]"])  # a loop: config_to_dict recursed
@example(base={}, overrides=["game_options.day=2020-01-01"])  # a date: not JSON
@fuzz_property
def test_set_overrides(base: dict[str, Any], overrides: list[str]) -> None:
    """parse_override and build_config: a valid config or ConfigError; the dict given is left
    as it was."""
    for text in overrides:
        parsed = attempt(ConfigError, parse_override, text)
        if parsed is not REFUSED:
            path, _ = parsed
            assert path and all(isinstance(part, str) for part in path)
    before = copy.deepcopy(base)
    cfg = attempt(ConfigError, build_config, base, overrides)
    assert base == before, "build_config changed the dict it was given"
    if cfg is not REFUSED:
        check_config(cfg)


YAML_DOCUMENTS = st.one_of(
    mutated(
        st.sampled_from(CONFIG_TEXTS), "".join(sorted(set("".join(CONFIG_TEXTS)) | set(TRICKY)))
    ),
    st.dictionaries(st.sampled_from(CONFIG_KEYS), YAML_TEXT.map(lambda t: attempt_yaml(t))).map(
        lambda d: yaml.safe_dump(d, allow_unicode=True)
    ),
    st.text(max_size=80),
)


def attempt_yaml(text: str) -> Any:
    """``text`` read as YAML, or the text itself if it is not valid YAML."""
    try:
        return yaml.safe_load(text)
    except yaml.YAMLError:
        return text


@fuzz_settings(80)
@given(document=st.one_of(YAML_DOCUMENTS.map(str.encode), st.binary(max_size=60)))
@example(document=b"\xff\xfe game: kalaha")  # not UTF-8: UnicodeDecodeError
@example(document=b"[" * 2000)  # nested too deep for the YAML reader
@fuzz_property
def test_config_files(document: bytes) -> None:
    """load_config: a valid config or ConfigError, whatever the file holds."""
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "config.yaml"
        path.write_bytes(document)
        cfg = attempt(ConfigError, load_config, path)
    if cfg is not REFUSED:
        check_config(cfg)


# --- -o game options ---------------------------------------------------------------------------
OPTION_KEYS = st.one_of(
    st.sampled_from(
        [
            "pits",
            "seeds",
            "rules",
            "max_sown",
            "cube",
            "max_cube",
            "num_players",
            "final_round",
            "deck",
            "reward",
            "max_turns",
            "random_start",
            "render_mode",
            "game",
            "num_games",
            "seed",
            "options",
        ]
    ),
    st.text(max_size=8),
)
OPTION_ITEMS = st.lists(
    st.builds(
        lambda key, sep, value: f"{key}{sep}{value}",
        OPTION_KEYS,
        st.sampled_from(["=", " = ", "", ":"]),
        YAML_TEXT,
    ),
    max_size=4,
)


@fuzz_settings(150)
@given(items=OPTION_ITEMS, game=st.sampled_from(GAMES))
@example(items=["game=kalaha"], game="hus")  # make(game, game=...): TypeError of Python
@fuzz_property
def test_game_options(items: list[str], game: str) -> None:
    """parse_options: a dict or ValueError; the env built with them (as ``-o`` does), or
    ValueError (a bad value) or TypeError (an unknown name, a value of the wrong type)."""
    before = list(items)
    options = attempt(ValueError, parse_options, items)
    assert items == before
    if options is not REFUSED:
        attempt((ValueError, TypeError), make, game, **options)


# --- checkpoint metadata -----------------------------------------------------------------------
#: the shipped checkpoints whose metadata is fuzzed: a policy network and a TD value network
SEED_CHECKPOINTS = ("kalaha", "backgammon")
JSON_VALUES = st.recursive(
    st.one_of(st.none(), st.booleans(), st.integers(), st.floats(), st.text(max_size=8)),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner, max_size=3)
    ),
    max_leaves=6,
)


@functools.cache
def checkpoint_dir() -> Path:
    """A folder with copies of the seed checkpoints (removed when the tests end)."""
    folder = Path(tempfile.mkdtemp(prefix="spieltisch-fuzz-"))
    atexit.register(shutil.rmtree, folder, ignore_errors=True)
    for name in SEED_CHECKPOINTS:
        for suffix in (".json", ".safetensors"):
            shutil.copy(PRETRAINED / f"{name}{suffix}", folder / f"{name}{suffix}")
    return folder


@functools.cache
def seed_meta(name: str) -> dict[str, Any]:
    return json.loads((PRETRAINED / f"{name}.json").read_text())


def with_arch(name: str, **changes: Any) -> str:
    """The metadata of the shipped checkpoint ``name`` with its architecture record changed."""
    meta = seed_meta(name)
    return json.dumps({**meta, "arch": {**meta["arch"], **changes}})


@st.composite
def mutated_json(draw: st.DrawFn, document: Any) -> str:
    """``document`` as JSON text with 1-3 values replaced, removed or added anywhere in it (the
    text itself sometimes mutated too)."""
    document = copy.deepcopy(document)
    for _ in range(draw(st.integers(1, 3))):
        parent: Any = None
        key: Any = None
        node: Any = document
        while isinstance(node, dict | list) and node and (parent is None or draw(st.booleans())):
            keys = sorted(node) if isinstance(node, dict) else range(len(node))
            parent, key = node, draw(st.sampled_from(list(keys)))
            node = parent[key]
        if parent is None:
            break
        op = draw(st.sampled_from(["replace", "delete", "add"]))
        if op == "replace":
            parent[key] = draw(JSON_VALUES)
        elif op == "delete":
            del parent[key]
        elif isinstance(parent, dict):
            parent[draw(st.text(max_size=6))] = draw(JSON_VALUES)
        else:
            parent.append(draw(JSON_VALUES))
    text = json.dumps(document)
    if draw(st.integers(0, 4)) == 0:
        text = draw(mutated(st.just(text), '{}[]":,0123456789.-eEnulltrufas ' + TRICKY))
    return text


#: ``(checkpoint, JSON text)``: a shipped checkpoint's metadata, mutated
METADATA = st.sampled_from(SEED_CHECKPOINTS).flatmap(
    lambda name: st.tuples(st.just(name), mutated_json(seed_meta(name)))
)


def agent_of_checkpoint(ckpt: Any) -> Agent:
    """The agent ``checkpoint:PATH`` plays: a TD value net's or the policy's."""
    if td_value.is_td_checkpoint(ckpt.meta):
        return td_value.agent_from_checkpoint(ckpt, seed=0)
    return ckpt.agent(seed=0)


@fuzz_settings(100)
@given(checkpoint=METADATA)
@example(checkpoint=("kalaha", json.dumps({**seed_meta("kalaha"), "game_options": [1]})))
@example(  # the game refused the options inside the size check: TypeError
    checkpoint=("kalaha", json.dumps({**seed_meta("kalaha"), "game_options": {"pits": None}}))
)
@example(checkpoint=("kalaha", with_arch("kalaha", hidden=[10**9])))  # built 10**9 units
@example(checkpoint=("kalaha", with_arch("kalaha", observation_size=float("inf"))))  # int(inf)
@example(checkpoint=("kalaha", with_arch("kalaha", observation_scale=0)))  # divided by zero
@example(checkpoint=("backgammon", with_arch("backgammon", hidden=1e400)))  # int(inf)
@fuzz_property
def test_checkpoint_metadata(checkpoint: tuple[str, str]) -> None:
    """load_checkpoint and the agent of a checkpoint: it loads, or CheckpointError (ValueError
    through make_agent); never another exception."""
    name, text = checkpoint
    folder = checkpoint_dir()
    (folder / f"{name}.json").write_text(text)
    try:
        ckpt = attempt(CheckpointError, load_checkpoint, folder / name, name)
        agent = REFUSED if ckpt is REFUSED else attempt(CheckpointError, agent_of_checkpoint, ckpt)
        if isinstance(agent, NeuralAgent):  # a policy that loads must also compute
            arch = agent.net.arch
            with torch.no_grad():
                logits, value = agent.net(
                    torch.zeros(1, arch.observation_size), torch.ones(1, arch.num_actions)
                )
            assert torch.isfinite(logits).all() and torch.isfinite(value).all()
        attempt(ValueError, make_agent, f"checkpoint:{folder / name}", name, seed=0)
    finally:
        (folder / f"{name}.json").write_text(json.dumps(seed_meta(name)))


# --- HiLo deck files ---------------------------------------------------------------------------
DECK = json.loads((ROOT / "envs" / "hilo" / "data" / "deck.json").read_text())


@fuzz_settings(100)
@given(
    document=st.one_of(
        mutated_json(DECK).map(str.encode), JSON_VALUES.map(json.dumps).map(str.encode), st.binary()
    ),
    players=st.integers(2, 4),
)
@example(document=b"\xff{}", players=2)  # not UTF-8: UnicodeDecodeError
@example(document=b"[" * 100_000, players=2)  # nested too deep for the JSON reader
@example(  # built a list of 10**12 cards before counting them
    document=json.dumps({"cards": [{"kind": "king", "count": 10**12}]}).encode(), players=2
)
@fuzz_property
def test_hilo_deck_files(document: bytes, players: int) -> None:
    """A deck file (``-o deck=PATH``): a playable game, or DeckFormatError (a ValueError)."""
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "deck.json"
        path.write_bytes(document)
        game = attempt(ValueError, HiLoGame, num_players=players, deck=str(path))
    if game is not REFUSED:
        play_random(game, 0, 30).to_text()
