"""The package's layers: a lower layer never imports a higher one, not even inside a function.

envs/ (games) < agents/ (players, arena) < train/ (trainers, command line). envs imports neither
``spieltisch.agents`` nor ``spieltisch.train``; agents does not import ``spieltisch.train``;
nothing imports the command line ``spieltisch.train.cli`` except the command line itself (the
entry point), nor the web server ``spieltisch.train.web`` except itself and the command line.
Imports are read from the source with :mod:`ast`: top-level, inside functions, relative ones,
and module names given to ``importlib.import_module`` as strings.
"""

from __future__ import annotations

import ast
import importlib
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
#: source folder -> the package it is installed as
LAYERS = {"envs": "spieltisch.envs", "agents": "spieltisch.agents", "train": "spieltisch.train"}
#: layer -> packages it must not import
FORBIDDEN = {
    "spieltisch.envs": ("spieltisch.agents", "spieltisch.train"),
    "spieltisch.agents": ("spieltisch.train",),
    "spieltisch.train": (),
}
CLI = "spieltisch.train.cli"
#: the web server (``spieltisch serve``) sits beside the command line: only it and the command
#: line import it (the trainers never do)
WEB = "spieltisch.train.web"
#: a string that names a module: ``spieltisch.agents.{game}.agents`` (a format) counts too
MODULE_STRING = re.compile(r"spieltisch(\.[A-Za-z_{][\w{}]*)+")


def module_name(path: Path) -> str:
    """``agents/neural/policy.py`` -> ``spieltisch.agents.neural.policy``."""
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(["spieltisch", *parts])


def imported_modules(source: str, module: str, is_package: bool) -> list[tuple[int, str]]:
    """``(line, module)`` for every module that ``source`` (the module ``module``) imports.

    ``from X import Y`` yields both ``X`` and ``X.Y`` (``Y`` may be a submodule); relative
    imports are resolved; a string constant that is a dotted ``spieltisch.`` module name (as
    passed to ``importlib.import_module``; f-strings with their constant parts) counts as an
    import of that module.
    """
    package = module if is_package else module.rpartition(".")[0]
    found: list[tuple[int, str]] = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[: len(base) - (node.level - 1)]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            found.append((node.lineno, target))
            found += [(node.lineno, f"{target}.{alias.name}") for alias in node.names]
        elif isinstance(node, ast.Constant) and isinstance(node.value, str):
            if MODULE_STRING.fullmatch(node.value):
                found.append((node.lineno, node.value))
        elif isinstance(node, ast.JoinedStr):
            text = "".join(v.value if isinstance(v, ast.Constant) else "{}" for v in node.values)
            if MODULE_STRING.fullmatch(text):
                found.append((node.lineno, text))
    return found


def _within(name: str, package: str) -> bool:
    return name == package or name.startswith(package + ".")


def violations(path: Path) -> list[str]:
    """Imports of ``path`` that break the layering, as ``file:line: message``."""
    module = module_name(path)
    layer = next(p for p in FORBIDDEN if _within(module, p))
    where = path.relative_to(ROOT)
    found: dict[tuple[int, str], str] = {}  # one message per line and rule
    imports = imported_modules(path.read_text(), module, path.name == "__init__.py")
    for line, name in sorted(imports):
        for higher in FORBIDDEN[layer]:
            if _within(name, higher):
                found.setdefault((line, higher), f"{layer} imports {name} (a higher layer)")
        if _within(name, CLI) and not _within(module, CLI):
            found.setdefault((line, CLI), f"imports the command line {name}")
        if _within(name, WEB) and not (_within(module, WEB) or _within(module, CLI)):
            found.setdefault((line, WEB), f"imports the web server {name}")
    return [f"{where}:{line}: {message}" for (line, _), message in sorted(found.items())]


def _sources() -> list[Path]:
    return sorted(p for folder in LAYERS for p in (ROOT / folder).rglob("*.py"))


def test_the_layer_folders_are_the_installed_packages():
    for folder, package in LAYERS.items():
        installed = Path(importlib.import_module(package).__file__).resolve().parent
        assert installed == ROOT / folder, (package, installed)
    assert _sources(), "no sources found"


@pytest.mark.parametrize("folder", sorted(LAYERS))
def test_no_module_imports_a_higher_layer_or_the_command_line(folder):
    found = [v for p in _sources() if p.is_relative_to(ROOT / folder) for v in violations(p)]
    assert not found, "layer violations:\n" + "\n".join(found)


def test_the_import_reader_sees_every_kind_of_import():
    source = '''
"""Mentions spieltisch.train in a docstring, which is no import."""
import spieltisch.envs.kalaha
from spieltisch.train import cli
from .. import arena
from ..neural.policy import PolicyNet

def late():
    from spieltisch.train.ppo import train
    import importlib
    importlib.import_module(f"spieltisch.train.{name}.x")
    return importlib.import_module("spieltisch.agents.{game}.agents")
'''
    found = {name for _, name in imported_modules(source, "spieltisch.agents.kalaha.x", False)}
    assert {
        "spieltisch.envs.kalaha",
        "spieltisch.train",
        "spieltisch.train.cli",
        "spieltisch.agents.arena",
        "spieltisch.agents.neural.policy",
        "spieltisch.agents.neural.policy.PolicyNet",
        "spieltisch.train.ppo",
        "spieltisch.train.{}.x",
        "spieltisch.agents.{game}.agents",
    } <= found
    assert not any("docstring" in name for name in found)
    assert all(not name.startswith(".") for name in found)


def test_the_modules_the_agent_registry_loads_do_not_import_it_back():
    """The registry loads the modules behind prefixed names (``pretrained:``, ``checkpoint:``)
    by name; were they to import the registry, the two would import each other (the network
    agents did, for the name parser and the parameter-error wrapper, now in agents/base.py)."""
    from spieltisch.agents.registry import PREFIX_AGENT_MODULES

    registry = "spieltisch.agents.registry"
    found = []
    for module in sorted(set(PREFIX_AGENT_MODULES.values())):
        path = ROOT / Path(*module.split(".")[1:]).with_suffix(".py")
        found += [
            f"{path.relative_to(ROOT)}:{line}: imports {name}"
            for line, name in imported_modules(path.read_text(), module, False)
            if _within(name, registry)
        ]
    assert not found, "\n".join(found)
