"""A bounded load test of ``spieltisch serve`` on 127.0.0.1: 50 people playing Kalaha against
``random`` at once, every game played to its end (benchmarks/web_load.py records the timings)."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

pytest.importorskip("uvicorn")
pytest.importorskip("starlette")


def test_fifty_concurrent_games_all_finish():
    path = Path(__file__).resolve().parents[1] / "benchmarks" / "web_load.py"
    spec = importlib.util.spec_from_file_location("web_load", path)
    web_load = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(web_load)
    results = web_load.run_load(sessions=50, max_requests=400, timeout=240.0)
    assert results["finished"] == 50
    assert results["requests"] >= 50 * 10  # each game is many turns
    # generous bounds: a 2-core machine running the rest of the suite beside this test
    assert results["client_ms"]["median"] < 1000
    assert results["server_ms"]["p99"] < 5000
