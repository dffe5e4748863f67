"""Helpers shared by the benchmark scripts: machine facts, interleaved timing, result files."""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from pathlib import Path

from spieltisch.agents.arena.provenance import machine_info

RESULTS = Path(__file__).resolve().parent / "results"


def machine() -> dict:
    """What the numbers were measured on (see ``spieltisch.agents.arena.provenance``)."""
    return machine_info()


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
