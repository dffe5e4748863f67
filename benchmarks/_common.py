"""Helpers shared by the benchmark scripts: the common options, interleaved timing, result files.

Every script takes ``--quick`` (a smoke run: tiny sizes, a few seconds; tests/test_benchmarks.py
runs each this way) and ``--results-dir`` (where its results go: by default
``benchmarks/results/`` for a full run, nowhere for a quick one, so that smoke numbers never
replace the recorded ones).
"""

from __future__ import annotations

import argparse
import json
import shlex
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from spieltisch.agents.arena.provenance import peak_rss_gib

RESULTS = Path(__file__).resolve().parent / "results"


def positive_int(text: str) -> int:
    """An argparse type: an integer of at least 1 (a count of rounds, games, workers), so that
    ``--rounds 0`` is a usage error, not a traceback from an empty median."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not an integer: {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, got {value}")
    return value


def add_run_options(parser: argparse.ArgumentParser) -> None:
    """Add ``--quick`` and ``--results-dir`` to a script's ``parser``."""
    parser.add_argument(
        "--quick",
        action="store_true",
        help="a smoke run: tiny sizes (overriding the size options), a few seconds",
    )
    parser.add_argument(
        "--results-dir",
        type=Path,
        help=f"write the results here (default: {RESULTS} for a full run, nowhere for --quick)",
    )


def command_line(script: str, argv: list[str] | None) -> str:
    """The command that reruns ``script`` (a benchmark's ``__file__``) with ``argv`` (default
    the process's own arguments), quoted for a shell, as the results record it."""
    args = argv if argv is not None else sys.argv[1:]
    return shlex.join(["python", f"benchmarks/{Path(script).name}", *args])


def shrink_if_quick(args: argparse.Namespace, **sizes: Any) -> None:
    """In a ``--quick`` run, set the options named in ``sizes`` to their tiny values."""
    if args.quick:
        for name, value in sizes.items():
            setattr(args, name, value)


def results_dir(args: argparse.Namespace) -> Path | None:
    """Where this run writes its results (see the module docstring); None: nowhere."""
    if args.results_dir is not None:
        return args.results_dir
    return None if args.quick else RESULTS


def result_path(args: argparse.Namespace, filename: str) -> Path | None:
    """``filename`` in :func:`results_dir`, or None when this run writes nothing."""
    directory = results_dir(args)
    return None if directory is None else directory / filename


def write_text(path: Path | None, text: str) -> None:
    """Write ``text`` to ``path`` (making its folder); nothing when ``path`` is None."""
    if path is None:
        print("(a --quick run without --results-dir: nothing written)")
        return
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    print(f"wrote {path}")


def write_json(path: Path | None, data: Any) -> None:
    """Write ``data`` as indented JSON to ``path`` (see :func:`write_text`). A dict of results
    gets the run's peak memory so far (:func:`peak_rss_gib`) as ``peak_rss_gib``: every
    benchmark records what it needed."""
    if isinstance(data, dict):
        data = {**data, "peak_rss_gib": peak_rss_gib()}
        print(f"peak resident memory {data['peak_rss_gib']:.2f} GiB")
    write_text(path, json.dumps(data, indent=2) + "\n")


def interleaved(runs: dict[str, Callable[[], int]], rounds: int) -> dict[str, dict[str, Any]]:
    """Time each ``run`` (which returns how many units it did) in alternating rounds, so that
    every contender sees the same machine conditions.

    Returns per name: ``per_second`` (the median over the rounds: one noisy round, e.g. another
    process waking up, does not move it), ``per_second_rounds`` (every round's rate), and the
    totals ``units`` and ``seconds``.
    """
    rates: dict[str, list[float]] = {name: [] for name in runs}
    totals = {name: [0, 0.0] for name in runs}
    for _ in range(rounds):
        for name, run in runs.items():
            start = time.perf_counter()
            units = run()
            elapsed = time.perf_counter() - start
            totals[name][0] += units
            totals[name][1] += elapsed
            rates[name].append(units / elapsed)
    return {
        name: {
            "units": units,
            "seconds": seconds,
            "per_second": statistics.median(rates[name]),
            "per_second_rounds": rates[name],
        }
        for name, (units, seconds) in totals.items()
    }


def write_results(args: argparse.Namespace, name: str, results: dict, markdown: str) -> None:
    """``<name>.json`` and ``<name>.md`` in :func:`results_dir`."""
    write_json(result_path(args, f"{name}.json"), results)
    write_text(result_path(args, f"{name}.md"), markdown)
