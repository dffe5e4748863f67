"""A long fuzz of every text input spieltisch reads: the properties of tests/test_fuzz_parsers.py
(positions of all four games, GNU Backgammon position IDs, ``reset(options={"position": ...})``,
agent names, ``--set`` overrides, config files, ``-o`` options, checkpoint metadata) with many
more examples than CI runs.

Run: ``python benchmarks/fuzz_parsers.py --examples 100000 --seconds 600`` (each property runs
until it has seen ``--examples`` examples or its share of ``--seconds`` is used up, in rounds of
``--chunk`` examples with fresh random draws; ``--workers`` runs properties side by side).
Results: ``benchmarks/results/fuzz_parsers.json`` and ``.md``: examples run per property,
failures found (the falsifying example), wall time, and the machine with its load. Exits 1 if a
property failed.
"""

from __future__ import annotations

import argparse
import importlib.util
import itertools
import os
import shlex
import sys
import time
import traceback
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any

from _common import add_run_options, shrink_if_quick, write_results
from spieltisch.agents.arena.provenance import load_average, machine_info

ROOT = Path(__file__).resolve().parents[1]
PROPERTIES_FILE = ROOT / "tests" / "test_fuzz_parsers.py"


def _load_properties(chunk: int) -> Any:
    """The test module, with every property set to ``chunk`` examples per run."""
    os.environ["SPIELTISCH_FUZZ_EXAMPLES"] = str(chunk)
    spec = importlib.util.spec_from_file_location("fuzz_properties", PROPERTIES_FILE)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def property_names() -> list[str]:
    """The fuzz properties of the test module (the tests decorated ``@fuzz_property``), in
    file order."""
    lines = PROPERTIES_FILE.read_text().splitlines()
    return [
        line[4:].split("(")[0]
        for above, line in itertools.pairwise(lines)
        if above == "@fuzz_property" and line.startswith("def test_")
    ]


def fuzz(name: str, examples: int, seconds: float, chunk: int) -> dict[str, Any]:
    """Run the property ``name`` until ``examples`` examples or ``seconds`` have passed."""
    module = _load_properties(chunk)
    test = getattr(module, name)
    start = time.perf_counter()
    rounds, failure = 0, None
    while module.RUNS[name] < examples and time.perf_counter() - start < seconds:
        before = module.RUNS[name]
        rounds += 1
        try:
            test()
        except (Exception, module.Hang) as err:  # falsified: record it, fuzz it no further
            notes = "\n".join(getattr(err, "__notes__", []))
            failure = "".join(traceback.format_exception_only(err)).strip() + "\n" + notes
            break
        if module.RUNS[name] == before:
            break  # nothing left to generate
    return {
        "examples": module.RUNS[name],
        "rounds": rounds,
        "seconds": round(time.perf_counter() - start, 1),
        "failure": failure,
    }


def _markdown(results: dict[str, Any]) -> str:
    machine = results["machine"]

    def load(values: list[float] | None) -> str:
        return "n/a" if values is None else " ".join(f"{v:.2f}" for v in values)

    lines = [
        "# Fuzzing the parsers",
        "",
        f"`{results['command']}`",
        "",
        f"{machine['cpu']}, {machine['cpu_count']} cores, {machine['date']}, git "
        f"{machine['git_revision']}, {results['workers']} worker(s); load average (1, 5, 15 min) "
        f"{load(machine['load_average'])} before, {load(results['load_average_after'])} after "
        "(above the number of workers: other jobs shared the machine). Properties: "
        "`tests/test_fuzz_parsers.py`.",
        *(["", results["note"]] if results["note"] else []),
        "",
        "| property | examples | seconds | result |",
        "|---|---:|---:|---|",
    ]
    for name, row in results["properties"].items():
        result = "ok" if row["failure"] is None else "FAILED: " + row["failure"].splitlines()[0]
        lines.append(f"| `{name}` | {row['examples']:,} | {row['seconds']:.0f} | {result} |")
    lines += [
        "",
        f"{results['total_examples']:,} examples in {results['wall_seconds']:.0f} s; "
        f"{results['failures']} failing properties.",
    ]
    for name, row in results["properties"].items():
        if row["failure"]:
            lines += ["", f"## {name}", "", "```", row["failure"], "```"]
    return "\n".join(lines) + "\n"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--examples", type=int, default=100_000, help="examples per property (default 100000)"
    )
    parser.add_argument(
        "--seconds",
        type=float,
        default=600.0,
        help="wall-clock budget of the whole run, shared equally by the properties (default 600)",
    )
    parser.add_argument(
        "--chunk", type=int, default=2000, help="examples per hypothesis run (default 2000)"
    )
    parser.add_argument("--workers", type=int, default=1, help="properties run side by side")
    parser.add_argument("--properties", nargs="+", help="only these (default: all)")
    parser.add_argument("--note", default="", help="a remark recorded with the results")
    add_run_options(parser)
    args = parser.parse_args()
    shrink_if_quick(args, examples=5, seconds=60.0, chunk=5)
    names = args.properties or property_names()
    unknown = sorted(set(names) - set(property_names()))
    if unknown:
        parser.error(f"unknown properties {unknown}; they are {property_names()}")
    workers = max(1, min(args.workers, len(names)))
    # each worker runs len(names) / workers properties one after another
    share = args.seconds * workers / len(names)
    chunk = max(1, min(args.chunk, args.examples))
    machine = machine_info()
    start = time.perf_counter()
    with ProcessPoolExecutor(workers) as pool:
        futures = {n: pool.submit(fuzz, n, args.examples, share, chunk) for n in names}
        rows = {}
        for name, future in futures.items():
            rows[name] = future.result()
            row = rows[name]
            status = "ok" if row["failure"] is None else "FAILED"
            print(f"{name:36s} {row['examples']:>9,} examples {row['seconds']:7.1f} s  {status}")
    results = {
        "command": "python benchmarks/fuzz_parsers.py " + shlex.join(sys.argv[1:]),
        "machine": machine,
        "examples_per_property": args.examples,
        "seconds_budget": args.seconds,
        "chunk": chunk,
        "workers": workers,
        "note": args.note,
        "properties": rows,
        "total_examples": sum(r["examples"] for r in rows.values()),
        "failures": sum(r["failure"] is not None for r in rows.values()),
        "wall_seconds": round(time.perf_counter() - start, 1),
        "load_average_after": load_average(),
    }
    print(f"{results['total_examples']:,} examples, {results['failures']} failing properties")
    write_results(args, "fuzz_parsers", results, _markdown(results))
    return 1 if results["failures"] else 0


if __name__ == "__main__":
    raise SystemExit(main())
