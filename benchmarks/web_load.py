"""Load test of ``spieltisch serve``: many people playing Kalaha against ``random`` at once.

Starts the real server (uvicorn, in this process, on 127.0.0.1 and a free port: no other address
is ever contacted), then ``--sessions`` clients in parallel threads each start a game of Kalaha
(``human`` against ``random``) and play it to the end through the API, as the page does: their
move, then ``POST .../agent`` for the agent's. Every request is timed twice: end to end at the
client, and inside the server (the ``Server-Timing`` header the app sets). Bounded: each game has
at most ``--max-requests`` requests and the whole run ``--timeout`` seconds; it stops by itself.

    python benchmarks/web_load.py                  # 50 sessions, results in benchmarks/results/
    python benchmarks/web_load.py --quick          # 4 sessions, nothing written
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import platform
import random
import statistics
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import add_run_options, shrink_if_quick, write_results
from spieltisch.agents.arena.provenance import load_average_text


def start_server(**settings: Any) -> tuple[Any, threading.Thread, int]:
    """The app under uvicorn in a background thread on 127.0.0.1; returns (server, thread,
    port). Stop it with ``server.should_exit = True; thread.join()``."""
    import uvicorn
    from spieltisch.train.web.app import create_app
    from spieltisch.train.web.sessions import ServerSettings

    config = uvicorn.Config(create_app(ServerSettings(**settings)), host="127.0.0.1", port=0,
                            log_level="warning", limit_concurrency=1000)  # fmt: skip
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 60
    while not server.started:
        if time.monotonic() > deadline or not thread.is_alive():
            raise RuntimeError("the server did not start")
        time.sleep(0.02)
    port = server.servers[0].sockets[0].getsockname()[1]
    return server, thread, port


class Client:
    """One person's connection (kept alive), timing every request."""

    def __init__(self, port: int, timeout: float) -> None:
        self.conn = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
        self.client_ms: list[float] = []
        self.server_ms: list[float] = []

    def call(self, method: str, path: str, body: dict | None = None) -> dict:
        data = None if body is None else json.dumps(body)
        headers = {"Content-Type": "application/json"} if body is not None else {}
        start = time.perf_counter()
        self.conn.request(method, path, body=data, headers=headers)
        response = self.conn.getresponse()
        payload = json.loads(response.read())
        self.client_ms.append((time.perf_counter() - start) * 1000)
        timing = response.getheader("Server-Timing", "")
        if "dur=" in timing:
            self.server_ms.append(float(timing.split("dur=")[1].split(",")[0]))
        if response.status != 200:
            raise RuntimeError(f"{method} {path}: {response.status} {payload}")
        return payload


def play_one(port: int, seed: int, pits: int, max_requests: int, deadline: float) -> dict:
    """One person's game against ``random``; returns its timings and result."""
    client = Client(port, timeout=max(deadline - time.monotonic(), 1.0))
    rng = random.Random(seed)
    view = client.call("POST", "/api/sessions", {"game": "kalaha", "agents": ["human", "random"],
                                                 "options": {"pits": pits}, "seed": seed})  # fmt: skip
    path = f"/api/sessions/{view['id']}"
    while view["status"] == "playing":
        if len(client.client_ms) >= max_requests or time.monotonic() > deadline:
            raise RuntimeError(f"game {seed} was not over after {len(client.client_ms)} requests")
        if view["human_to_move"]:
            move = rng.choice(view["legal"])["action"]
            view = client.call("POST", f"{path}/turn", {"actions": [move]})
        else:
            view = client.call("POST", f"{path}/agent")
    client.call("GET", f"{path}/record")
    client.conn.close()
    return {"requests": len(client.client_ms), "client_ms": client.client_ms,
            "server_ms": client.server_ms, "status": view["status"]}  # fmt: skip


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q / 100 * (len(ordered) - 1)))]


def run_load(sessions: int = 50, pits: int = 6, max_requests: int = 400,
             timeout: float = 300.0) -> dict[str, Any]:  # fmt: skip
    """Play ``sessions`` games at once against a fresh server; the summary of the timings."""
    server, thread, port = start_server(move_time_limit=10.0)
    try:
        Client(port, 60).call("POST", "/api/sessions", {"game": "kalaha", "agents":
                                                        ["random", "random"]})  # fmt: skip
        deadline = time.monotonic() + timeout
        start = time.perf_counter()
        with ThreadPoolExecutor(max_workers=sessions) as pool:
            games = list(pool.map(lambda s: play_one(port, s, pits, max_requests, deadline),
                                  range(sessions)))  # fmt: skip
        wall = time.perf_counter() - start
    finally:
        server.should_exit = True
        thread.join(timeout=30)
    client_ms = [t for g in games for t in g["client_ms"]]
    server_ms = [t for g in games for t in g["server_ms"]]
    return {
        "sessions": sessions,
        "finished": sum(g["status"] in ("over", "truncated") for g in games),
        "requests": len(client_ms),
        "wall_s": round(wall, 2),
        "requests_per_s": round(len(client_ms) / wall, 1),
        "client_ms": {"median": round(statistics.median(client_ms), 2),
                      "p99": round(percentile(client_ms, 99), 2),
                      "max": round(max(client_ms), 2)},
        "server_ms": {"median": round(statistics.median(server_ms), 2),
                      "p99": round(percentile(server_ms, 99), 2),
                      "max": round(max(server_ms), 2)},
    }  # fmt: skip


def markdown(results: dict[str, Any]) -> str:
    c, s = results["client_ms"], results["server_ms"]
    return (
        "# `spieltisch serve` under load\n\n"
        f"{results['sessions']} people at once, each playing Kalaha {results['pits']}x6 against "
        "`random` through the API to the end (their move, then the agent's), on one server "
        "(uvicorn, 127.0.0.1) in the same process as the clients.\n\n"
        "| measure | value |\n|---|---|\n"
        f"| games finished | {results['finished']} of {results['sessions']} |\n"
        f"| requests | {results['requests']} in {results['wall_s']} s "
        f"({results['requests_per_s']} per second) |\n"
        f"| response time at the client, median / 99th percentile / max | "
        f"{c['median']} / {c['p99']} / {c['max']} ms |\n"
        f"| time inside the server (Server-Timing), median / 99th percentile / max | "
        f"{s['median']} / {s['p99']} / {s['max']} ms |\n\n"
        f"Machine: {results['machine']}; load average at the start {results['load_average']}.\n\n"
        f"Command: `{results['command']}`\n"
    )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--sessions", type=int, default=50, help="games played at once (default 50)")
    ap.add_argument("--pits", type=int, default=6, help="Kalaha pits per side (default 6)")
    ap.add_argument("--max-requests", type=int, default=400, help="bound per game")
    ap.add_argument("--timeout", type=float, default=300.0, help="bound of the run (seconds)")
    add_run_options(ap)
    args = ap.parse_args()
    shrink_if_quick(args, sessions=4)
    load = load_average_text()
    results = run_load(args.sessions, args.pits, args.max_requests, args.timeout)
    results.update(
        pits=args.pits,
        load_average=load,
        machine=f"{platform.platform()}, {os.cpu_count()} CPUs, Python {platform.python_version()}",
        command="python benchmarks/web_load.py " + " ".join(sys.argv[1:]),
    )
    print(markdown(results))
    write_results(args, "web_load", results, markdown(results))
    if results["finished"] != results["sessions"]:
        raise SystemExit(f"only {results['finished']} of {results['sessions']} games finished")


if __name__ == "__main__":
    main()
