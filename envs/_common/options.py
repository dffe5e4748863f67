"""``KEY=VALUE`` options, the one parser for everything written that way.

Game options (``spieltisch play kalaha -o pits=4``, :func:`add_option_argument`), agent
parameters (``alphabeta:depth=6``, :func:`spieltisch.agents.base.parse_agent_name`) and
config overrides (``spieltisch train ... --set lr=1e-3``, :mod:`spieltisch.train.config`) all
read their items with :func:`parse_key_value`. A value is read as YAML: ``6`` is an int, ``0.5``
a float, ``true`` a bool, ``[64, 64]`` a list, anything else a string.

It lives with the envs because game options are env options and every layer above may import it.
"""

from __future__ import annotations

import argparse
import difflib
import re
from collections.abc import Iterable
from typing import Any

import yaml


class _Loader(yaml.SafeLoader):
    """YAML as PyYAML reads it, but for numbers in exponent form without a dot (``1e-3``,
    ``1e6``), which its YAML 1.1 rules read as strings: floats, as in YAML 1.2 (``alphabeta:
    time=1e-2`` was refused as not a number)."""


_Loader.add_implicit_resolver(
    "tag:yaml.org,2002:float",
    re.compile(r"^[-+]?[0-9][0-9_]*[eE][-+]?[0-9]+$"),
    list("-+0123456789"),
)


def load_yaml(text: str) -> Any:
    """``yaml.safe_load(text)``, with ``1e-3`` and ``1e6`` read as numbers (:class:`_Loader`)."""
    loader = _Loader(text)  # (a SafeLoader: what yaml.safe_load does, with this one's floats)
    try:
        return loader.get_single_data()
    finally:
        loader.dispose()


def parse_key_value(item: str, what: str) -> tuple[str, Any]:
    """``"pits=4"`` -> ``("pits", 4)``: the key and the value, both stripped, the value read as
    YAML.

    Raises ValueError naming ``item`` if it is not ``KEY=VALUE`` with a non-empty key or if the
    value is not valid YAML; ``what`` names the kind of item for the message (``"game options"``).
    """
    key, sep, value = item.partition("=")
    key = key.strip()
    if not sep or not key:
        raise ValueError(f"{what} are written KEY=VALUE, got {item!r}")
    try:
        return key, load_yaml(value.strip())
    except yaml.YAMLError as err:
        problem = getattr(err, "problem", None) or "not valid YAML"
        raise ValueError(f"{what}: the value of {item!r} is not valid YAML ({problem})") from None


def pick_options(
    game: str, options: dict[str, Any], wanted: Iterable[str], known: Iterable[str]
) -> dict[str, Any]:
    """The entries of ``options`` named in ``wanted`` (the ones an engine or batch takes), after
    checking that every name is one of ``known`` (the env's options): a ValueError lists the
    unknown names and the known ones, so a misspelt option is never silently dropped."""
    known = sorted(set(known))
    unknown = sorted(set(options) - set(known))
    if unknown:
        raise ValueError(f"unknown {game} option(s) {unknown}; the options are {known}")
    return {name: options[name] for name in wanted if name in options}


def parse_options(items: Iterable[str], what: str = "game options") -> dict[str, Any]:
    """``["pits=4", "rules=standard"]`` -> ``{"pits": 4, "rules": "standard"}`` (see
    :func:`parse_key_value`; a key given twice keeps its last value)."""
    return dict(parse_key_value(item, what) for item in items)


def add_option_argument(parser: argparse.ArgumentParser) -> None:
    """``--option/-o KEY=VALUE`` (repeatable) on ``parser``; read it with
    ``parse_options(args.option)``."""
    parser.add_argument(
        "--option",
        "-o",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="a game option, e.g. -o pits=4 -o rules=standard (repeatable)",
    )


def closest_name(name: str, names: Iterable[str]) -> str | None:
    """The one of ``names`` that ``name`` most likely misspells (difflib's similarity at least
    0.6), or None: the "did you mean" of the env options and the command line."""
    close = difflib.get_close_matches(name, list(names), n=1, cutoff=0.6)
    return close[0] if close else None
