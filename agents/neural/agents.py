"""Neural agents by name: ``pretrained:<game>`` and ``checkpoint:<path>``.

``pretrained:kalaha`` loads the policy shipped in ``agents/pretrained/kalaha.safetensors`` (+
``.json``); ``checkpoint:runs/kalaha_ppo/final`` loads a trained checkpoint (with or without
suffix). Both play greedily (the most likely legal action). The checkpoint must be for the game
asked for, and rules options given for the game must match those it was trained with.

Parameters follow the name after one more colon: ``pretrained:kalaha:search=4`` searches 4 plies
of minimax over the network's value head before each move (Kalaha and Hus; see
:mod:`spieltisch.agents.neural.value_search`), ``checkpoint:runs/x/final:search=3`` likewise;
``search=6,leaves=100000`` keeps searching deeper than 6 plies while a ply has at most 100,000
positions (endgames, forced lines); ``search=8,extend=4`` lets up to 4 Kalaha extra turns per line
cost no ply. HiLo (hidden cards): ``pretrained:hilo:search=16`` samples
16 states consistent with the seat's knowledge and looks to the end of its turn
(``search=16,weight=0.5``: the value head's weight; see :mod:`spieltisch.agents.hilo.search`).
Backgammon's TD nets take ``ply``, ``keep``, ``sims`` (``pretrained:backgammon:sims=32``: Gumbel
search with the dice as chance nodes, :mod:`spieltisch.agents.backgammon.chance_search`;
``sims=0`` is the plain 1-ply net) and the cube parameters ``cube=janowski|never`` and
``cube_life=0.68`` (``pretrained:backgammon:cube_life=0.7``; see
:mod:`spieltisch.agents.backgammon.cube`).
"""

from __future__ import annotations

import functools
import json
from pathlib import Path
from typing import Any

import numpy as np
from spieltisch.agents.base import Agent, build_named, parse_agent_name
from spieltisch.agents.neural.checkpoint import Checkpoint, CheckpointError, load_checkpoint
from spieltisch.envs import options_with_defaults

PRETRAINED_DIR = Path(__file__).resolve().parents[1] / "pretrained"


def pretrained_name(game: str, game_options: dict[str, Any] | None = None) -> str:
    """The file stem of the shipped agent for ``game`` with ``game_options``: the game's name,
    except HiLo with 3 or 4 players (``hilo_3p``, ``hilo_4p``), whose observations differ, and
    Kalaha with 4 seeds per pit (``kalaha_6x4``: Kalah(6,4), the board the solver solves from
    the start, so that its moves can be judged against perfect play)."""
    options = game_options or {}
    players = int(options.get("num_players", 2))
    if game == "hilo" and players != 2:
        return f"hilo_{players}p"
    if game == "kalaha" and int(options.get("seeds", 6)) == 4:
        return "kalaha_6x4"
    return game


def pretrained_path(
    game: str, game_options: dict[str, Any] | None = None, algo: str | None = None
) -> Path:
    """The shipped checkpoint of ``game`` (weights path); raises if there is none. ``algo``
    (``pretrained:kalaha:algo=ppo``): the one trained by that algorithm, which is the default
    file ``<name>`` if that was trained so, else ``<name>_<algo>`` (where a newer algorithm's
    agent took the default name, the older one stays reachable)."""
    name = pretrained_name(game, game_options)
    path = PRETRAINED_DIR / f"{name}.safetensors"
    if algo is not None and _shipped_algorithm(path) != algo:
        path = PRETRAINED_DIR / f"{name}_{algo}.safetensors"
        name = f"{name}_{algo}"
    if not path.exists():
        shipped = sorted(p.stem for p in PRETRAINED_DIR.glob("*.safetensors"))
        message = f"no pretrained agent {name!r} for {game}; shipped: {shipped}"
        if algo is not None:
            message += f" (algo= takes {_shipped_algos(pretrained_name(game, game_options))} here)"
        raise ValueError(message)
    return path


def pretrained_names(game: str, game_options: dict[str, Any] | None = None) -> list[str]:
    """The names of the agents shipped for ``game`` with ``game_options``: ``pretrained:<game>``,
    then one ``pretrained:<game>:algo=<algo>`` for each agent shipped beside it (``[]`` where
    none is shipped)."""
    name = pretrained_name(game, game_options)
    default = PRETRAINED_DIR / f"{name}.safetensors"
    if not default.exists():
        return []
    beside = [a for a in _shipped_algos(name) if a != _shipped_algorithm(default)]
    return [f"pretrained:{game}"] + [f"pretrained:{game}:algo={a}" for a in beside]


def _shipped_algos(name: str) -> list[str]:
    """The ``algo=`` values that reach a shipped agent of the board whose default file is
    ``name``: the default's algorithm and each ``<name>_<algo>`` file of the same rules options
    (``kalaha_6x4`` is another board, not an ``algo`` of ``kalaha``)."""

    def position_options(path: Path) -> dict[str, Any]:
        recorded = _shipped_meta(path).get("game_options", {})
        return {k: v for k, v in recorded.items() if k not in BOOKKEEPING_OPTIONS}

    default = PRETRAINED_DIR / f"{name}.safetensors"
    board = position_options(default)
    algos = {_shipped_algorithm(default)} - {None}
    for path in PRETRAINED_DIR.glob(f"{name}_*.safetensors"):
        if position_options(path) == board:
            algos.add(path.stem.removeprefix(f"{name}_"))
    return sorted(algos)


def _shipped_meta(path: Path) -> dict[str, Any]:
    """The metadata recorded beside a shipped checkpoint (empty if there is none)."""
    sidecar = path.with_suffix(".json")
    return json.loads(sidecar.read_text()) if sidecar.exists() else {}


def _shipped_algorithm(path: Path) -> str | None:
    """The training algorithm recorded beside a shipped checkpoint (None if not shipped)."""
    return _shipped_meta(path).get("algorithm")


#: env options that only change bookkeeping, not the position: an agent trained with other
#: values plays the same game
BOOKKEEPING_OPTIONS = frozenset(
    {"reward", "max_turns", "random_start", "render_mode", "illegal_action"}
)


#: rules options that make the game a network was trained on: compared with their defaults
#: filled in (a network trained on 4 pits must not play the default 6 because ``-o pits=4`` was
#: left out); the others are compared where both name them (backgammon's cube is played by the
#: agent's own rule, whatever the net learnt)
GAME_DEFINING_OPTIONS: dict[str, tuple[str, ...]] = {
    "kalaha": ("pits", "seeds", "rules"),
    "hus": ("max_sown",),
    "hilo": ("num_players",),
    "backgammon": (),
}


def _check_options(
    ckpt_options: dict[str, Any], options: dict[str, Any], where: str, game: str | None
) -> None:
    """Raise ValueError if the game of ``options`` is not the one the network of ``where`` was
    trained on (see :data:`GAME_DEFINING_OPTIONS`)."""
    given = dict(options)
    defining = GAME_DEFINING_OPTIONS.get(game or "", ())
    if defining:
        trained = options_with_defaults(game, ckpt_options)
        playing = options_with_defaults(game, options)
        ckpt_options = {**ckpt_options, **{key: trained[key] for key in defining}}
        options = {**options, **{key: playing[key] for key in defining}}
    for key, value in options.items():
        if key in BOOKKEEPING_OPTIONS:
            continue
        if key in ckpt_options and ckpt_options[key] != value:
            default = "" if key in given else f" (its default: give -o {key}=...)"
            raise ValueError(
                f"{where} was trained with {key}={ckpt_options[key]!r}, "
                f"the game has {key}={value!r}{default}"
            )


def split_parameters(prefix: str, value: str) -> tuple[str, dict[str, Any]]:
    """``value`` (of ``prefix:value``) without its trailing ``KEY=VALUE,...`` groups, and their
    parameters in the order written. The groups may be split by colons as well as commas
    (``backgammon:algo=td_long:ply=2`` is ``backgammon:algo=td_long,ply=2``); a parameter
    given twice is an error."""
    groups = []
    head, sep, tail = value.rpartition(":")
    while sep and "=" in tail:
        groups.append(tail)
        value = head
        head, sep, tail = value.rpartition(":")
    params: dict[str, Any] = {}
    label = ":".join([f"{prefix}:{value}", *reversed(groups)])
    for group in reversed(groups):
        for key, setting in parse_agent_name(f"x:{group}", label)[1].items():
            if key in params:
                raise ValueError(f"{prefix}:{value}: the parameter {key!r} is given twice")
            params[key] = setting
    return value, params


class NetworkNameError(CheckpointError):
    """A name that does not name a network (:func:`load_network`)."""


def _check_sizes(name: str, ckpt: Checkpoint) -> None:
    """A policy network's input and action counts against the game it names (a network of
    another game relabelled would load and then fail, or export, with the wrong sizes)."""
    from spieltisch.envs import GAMES, make_batch

    arch, game = ckpt.meta.get("arch"), ckpt.meta.get("game")
    if not isinstance(arch, dict) or "observation_size" not in arch or game not in GAMES:
        return  # a TD value net, or a record the architecture check reports
    try:
        batch = make_batch(game, 1, **ckpt.game_options)
    except (TypeError, ValueError) as err:  # (a record's options the game refuses: a traceback)
        raise CheckpointError(f"{name}: its game options {ckpt.game_options}: {err}") from err
    want = (int(np.prod(batch.observation_shape)), int(batch.num_actions))
    got = (arch.get("observation_size"), arch.get("num_actions"))
    if got != want:
        raise CheckpointError(
            f"{name}: a network of {got[0]} inputs and {got[1]} actions, but {game} with "
            f"{ckpt.game_options} has {want[0]} and {want[1]}"
        )


def _pop_algo(params: dict[str, Any], where: str) -> str | None:
    """The ``algo`` of a ``pretrained:`` name's ``params``, removed from them (None: the
    default network). Raises ValueError for one given without an algorithm's name (``algo=``
    parsed as None, which named the default network)."""
    given = "algo" in params
    algo = params.pop("algo", None)
    if given and not (isinstance(algo, str) and algo):
        raise ValueError(f"{where}: algo= needs an algorithm, e.g. algo=ppo")
    return algo


def load_network(
    name: str, game_options: dict[str, Any] | None = None, game: str | None = None
) -> Checkpoint:
    """The checkpoint of the network named ``name``: ``pretrained:<game>`` (the shipped network
    for the game with ``game_options``: ``pretrained:kalaha`` with ``{"seeds": 4}`` is Kalah(6,4)'s;
    with ``:algo=ALGO`` the one shipped for that algorithm, ``pretrained:hus:algo=ppo``) or
    ``checkpoint:<path>``; ``game_options`` must be the game it was trained on, defaults
    filled in (None: any game; see :data:`GAME_DEFINING_OPTIONS`). Raises
    :class:`CheckpointError` naming the problem (:class:`NetworkNameError` for a name that is not
    a network's, e.g. an agent with play parameters). ``game``: the game the network must be
    for (checked before the options)."""
    from spieltisch.envs import GAMES, make_batch

    options = dict(game_options or {})
    prefix, sep, value = name.partition(":")
    if not sep or prefix not in ("pretrained", "checkpoint") or not value:
        raise NetworkNameError(
            f"{name!r}: name a network, pretrained:GAME[:algo=ALGO] "
            f"({', '.join(sorted(GAMES))}) or checkpoint:PATH"
        )
    try:
        network, params = split_parameters(prefix, value)
    except ValueError as err:
        raise NetworkNameError(str(err)) from err
    algo = None
    if prefix == "pretrained":
        try:
            algo = _pop_algo(params, name)
        except ValueError as err:
            raise NetworkNameError(str(err)) from None
    if params:  # algo= picks a shipped network; anything else is how an agent plays it
        given = ",".join(f"{k}={v}" for k, v in params.items())
        keep = f"{prefix}:{network}" + (f":algo={algo}" if algo is not None else "")
        raise NetworkNameError(
            f"{name}: a network is named alone, without agent parameters ({given}); name {keep}"
        )
    if prefix == "pretrained" and network not in GAMES:
        raise NetworkNameError(f"pretrained:{network}: unknown game; games are {sorted(GAMES)}")
    try:
        if prefix == "pretrained":
            _check_game(name, network, game)
            make_batch(network, 1, **options)  # unknown or invalid options are named here
            ckpt = load_checkpoint(pretrained_path(network, options, algo), network)
        else:
            ckpt = load_checkpoint(network)
            _check_game(name, ckpt.meta.get("game"), game)
            if options and ckpt.meta.get("game") in GAMES:
                make_batch(ckpt.meta["game"], 1, **options)
        if game_options is not None:  # (None: whatever game it was trained on)
            _check_options(ckpt.game_options, options, name, ckpt.meta.get("game"))
        _check_sizes(name, ckpt)
    except CheckpointError:
        raise
    except (ValueError, TypeError) as err:
        raise CheckpointError(str(err)) from err
    return ckpt


def make_prefixed_agent(
    prefix: str,
    value: str,
    game: str,
    seed: int | None,
    game_options: dict[str, Any],
    checkpoint_root: str | Path | None = None,
) -> Agent:
    """The agent named ``prefix:value[:KEY=VALUE,...]`` (see
    :data:`agents.registry.PREFIX_AGENT_MODULES`). ``checkpoint_root``: the folder a
    ``checkpoint:`` path must lie in (see :func:`~.checkpoint.load_checkpoint`); the shipped
    ``pretrained:`` agents are always loaded from inside their own folder."""
    if value.endswith(":") or value.endswith(","):
        raise ValueError(f"{prefix}:{value}: nothing after the last {value[-1]!r}")
    value, params = split_parameters(prefix, value)
    # ply, keep, cube, cube_life: TD value nets (cube: agents/backgammon/cube.py); weight: HiLo
    # search (agents/hilo/search.py); sims: Gumbel search (dets: its HiLo determinizations);
    # algo: which shipped agent (pretrained:)
    known = {
        *("search", "leaves", "extend", "ply", "keep", "reply_keep", "cube", "cube_life", "weight"),
        *("sims", "dets", "algo", "bearoff"),
    }
    unknown = set(params) - known
    if unknown:
        raise ValueError(
            f"{prefix}: agents take the parameters {sorted(known)}; got {sorted(unknown)}"
        )
    for key in ("dets", "keep", "reply_keep"):  # (None is their default: dets= played dets=8)
        if key in params and params[key] is None:
            raise ValueError(f"{prefix}:{value}: {key}= needs a whole number, e.g. {key}=4")
    if prefix == "pretrained":
        if not value:  # (it loaded the game's default agent, unlike every documented name)
            raise ValueError(f"pretrained: needs the game's name, e.g. pretrained:{game}")
        shipped, sep, rest = value.partition(":")
        if sep:  # e.g. pretrained:kalaha:search, a parameter without its value
            bare = next(p for p in rest.replace(",", ":").split(":") if "=" not in p)
            raise ValueError(
                f"pretrained:{value}: parameters are KEY=VALUE (e.g. pretrained:{shipped}:"
                f"search=8); {bare!r} has no value"
            )
        if value != game:
            raise ValueError(f"pretrained:{value} is an agent for {value}, not for {game}")
        algo = _pop_algo(params, f"pretrained:{value}")
        path = pretrained_path(game, game_options, algo)
        root = PRETRAINED_DIR
    elif prefix == "checkpoint":
        algo = None
        if "algo" in params:
            raise ValueError("checkpoint:<path>: 'algo' picks a shipped agent (pretrained: only)")
        if not value:
            raise ValueError("checkpoint:<path> needs a path")
        path, root = Path(value), checkpoint_root
    else:
        raise ValueError(f"unknown agent prefix {prefix!r}")
    try:
        ckpt = load_checkpoint(path, game, root=root)
        _check_sizes(f"{prefix}:{value}", ckpt)
    except CheckpointError as err:
        raise ValueError(str(err)) from err
    _check_options(ckpt.game_options, game_options, f"{prefix}:{value}", game)
    from spieltisch.agents.backgammon import td_value

    if td_value.is_td_checkpoint(ckpt.meta):  # a TD value net: best afterstate, 1-ply
        lookahead = ("ply", "keep", "reply_keep", "bearoff")
        unknown = set(params) - {*lookahead, "cube", "cube_life", "sims"}
        if unknown:
            raise ValueError(
                f"{prefix}:{value}: a TD value net takes 'ply', 'keep' and 'reply_keep' "
                "(lookahead), 'bearoff' (exact bear-offs), 'sims' (Gumbel search with chance "
                "nodes), 'cube' and 'cube_life' (cube decisions)"
            )
        search = {key: v for key, v in params.items() if key in lookahead}
        cube = {key: v for key, v in params.items() if key in ("cube", "cube_life")}
        sims = 0
        if "sims" in params:  # sims=N: agents/backgammon/chance_search.py; sims=0: 1-ply
            from spieltisch.agents.backgammon import chance_search

            sims = _named(f"{prefix}:{value}", chance_search.check_sims, params["sims"])
            if search:
                raise ValueError(
                    f"{prefix}:{value}: 'sims' (Gumbel search) and {sorted(search)} (the "
                    "lookahead) are two different searches: give one of them"
                    + (" ('bearoff' is an option of the lookahead)" if "bearoff" in search else "")
                )
        try:
            agent = _named(
                f"{prefix}:{value}", td_value.agent_from_checkpoint, ckpt, seed=seed, **search
            )
        except CheckpointError as err:
            raise ValueError(str(err)) from err
        if sims:
            reward = game_options.get("reward", "points")
            agent = chance_search.TDSearchAgent(agent.params, seed, sims, reward=reward)
        _named(f"{prefix}:{value}", agent.set_cube, **cube)
        agent.name = _agent_label(prefix, value, algo, params, ":")
        return agent
    if {"ply", "keep", "reply_keep", "bearoff", "cube", "cube_life"} & set(params):
        raise ValueError(
            f"{prefix}:{value}: 'ply', 'keep' and 'reply_keep' (lookahead), 'bearoff' (exact "
            "bear-offs), 'cube' and 'cube_life' (cube decisions) are for TD value nets "
            "(backgammon)"
        )
    for needs_search in ("leaves", "extend"):
        if needs_search in params and "search" not in params:
            raise ValueError(
                f"{prefix}:{value}: '{needs_search}' needs 'search' (e.g. search=6,"
                f"{needs_search}=4)"
            )
    searched_name = _agent_label(prefix, value, algo, params, ",")
    if "search" in params and game == "hilo":  # hidden cards: information-set sampling
        from spieltisch.agents.hilo.search import hilo_search_agent

        agent = _named(f"{prefix}:{value}", hilo_search_agent, ckpt, params, seed)
        agent.name = searched_name
        agent.trained_options = ckpt.game_options  # what its value means (analysis)
        return agent
    if "weight" in params:
        raise ValueError(f"{prefix}:{value}: 'weight' is for HiLo search (search=16,weight=2)")
    if "dets" in params and "sims" not in params:
        raise ValueError(f"{prefix}:{value}: 'dets' needs 'sims' (e.g. sims=16,dets=8)")
    if "dets" in params and params.get("sims") == 0:  # (sims=0 plays the raw policy: no search)
        raise ValueError(f"{prefix}:{value}: 'dets' needs a search: sims=0 plays the raw policy")
    if "sims" in params:
        if set(params) - {"sims", "dets"}:
            raise ValueError(f"{prefix}:{value}: 'sims' takes no other parameter but 'dets'")
        from spieltisch.agents.neural.gumbel_search import GumbelSearchAgent, game_outcome

        outcome = game_outcome(*ckpt.value_margin)
        agent = _named(
            f"{prefix}:{value}",
            GumbelSearchAgent,
            ckpt.policy(),
            game,
            ckpt.game_options,
            params["sims"],
            seed,
            params.get("dets"),
            outcome,
            ckpt.search_settings,
        )
        agent.name = searched_name
        agent.trained_options = ckpt.game_options  # what its value means (analysis)
        return agent
    if "search" in params:
        from spieltisch.agents.neural.value_search import ValueSearchAgent

        agent: Agent = _named(
            f"{prefix}:{value}",
            ValueSearchAgent,
            ckpt.policy(),
            game,
            ckpt.game_options,
            params["search"],
            seed=seed,
            max_leaves=params.get("leaves", 0),
            value_margin=ckpt.value_margin,
            extend=params.get("extend", 0),
        )
        agent.name = searched_name
        agent.trained_options = ckpt.game_options  # what its value means (analysis)
        return agent
    agent = ckpt.agent(seed=seed, greedy=True)
    agent.name = _agent_label(prefix, value, algo, {}, ",")
    agent.trained_options = ckpt.game_options  # what its value means (analysis)
    return agent


#: build(...) with a parameter's ValueError told with the agent in front (a checkpoint's error
#: names its file already)
_named = functools.partial(build_named, named_already=(CheckpointError,))


def _agent_label(
    prefix: str, value: str, algo: str | None, params: dict[str, Any], separator: str
) -> str:
    """An agent's name as given, ``algo`` included (two shipped agents of a game showed under
    one name), its parameters joined by ``separator``."""
    items = ([f"algo={algo}"] if algo is not None else []) + [f"{k}={v}" for k, v in params.items()]
    return f"{prefix}:{value}" + (":" + separator.join(items) if items else "")


def _check_game(name: str, found: str | None, wanted: str | None) -> None:
    if wanted is not None and found != wanted:
        raise CheckpointError(f"{name}: a network for {found}, not for {wanted}")
