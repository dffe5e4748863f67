"""Helpers shared by the benchmark scripts: machine facts, interleaved timing, result files."""

from __future__ import annotations

import json
import os
import platform
import subprocess
import time
from collections.abc import Callable
from datetime import UTC, datetime
from importlib import metadata
from pathlib import Path

RESULTS = Path(__file__).resolve().parent / "results"


def machine() -> dict:
    """What the numbers were measured on."""
    cpu = platform.processor() or ""
    try:
        with open("/proc/cpuinfo") as f:
            cpu = next(
                (ln.split(":", 1)[1].strip() for ln in f if ln.startswith("model name")), cpu
            )
    except OSError:
        pass
    try:
        load = os.getloadavg()
    except OSError:
        load = None
    versions = {}
    for package in ("numpy", "numba", "pettingzoo", "open-spiel", "gnubg-nn", "torch"):
        try:
            versions[package] = metadata.version(package)
        except metadata.PackageNotFoundError:
            versions[package] = None
    try:
        revision = subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True, check=False
        ).stdout.strip()
    except OSError:
        revision = ""
    return {
        "date": datetime.now(UTC).isoformat(timespec="seconds"),
        "platform": platform.platform(),
        "python": platform.python_version(),
        "cpu": cpu,
        "cpu_count": os.cpu_count(),
        "load_average_at_start": load,
        "versions": versions,
        "git_revision": revision,
    }


def interleaved(runs: dict[str, Callable[[], int]], rounds: int) -> dict[str, dict[str, float]]:
    """Time each ``run`` (which returns how many units it did) in alternating rounds, so that
    every contender sees the same machine conditions; returns units per second per name."""
    totals = {name: [0, 0.0] for name in runs}
    for _ in range(rounds):
        for name, run in runs.items():
            start = time.perf_counter()
            units = run()
            totals[name][0] += units
            totals[name][1] += time.perf_counter() - start
    return {
        name: {"units": units, "seconds": seconds, "per_second": units / seconds}
        for name, (units, seconds) in totals.items()
    }


def write_results(name: str, results: dict, markdown: str) -> None:
    RESULTS.mkdir(parents=True, exist_ok=True)
    (RESULTS / f"{name}.json").write_text(json.dumps(results, indent=2) + "\n")
    (RESULTS / f"{name}.md").write_text(markdown)
    print(f"\nwrote {RESULTS / (name + '.json')} and {RESULTS / (name + '.md')}")
