"""Defects of ``spieltisch serve`` found by an audit helper (each test failed before its fix):
500s on odd but well-formed input, a server on an IPv6 address that refused every request, games
kept for ever on an idle server or left behind by the page, a mid-game record that told a
person every backgammon roll ahead, and a page that another site could frame."""

from __future__ import annotations

import shutil
import threading
import time

import pytest

pytest.importorskip("starlette")
pytest.importorskip("httpx2")
from spieltisch.train.cli.serve import allowed_hosts
from spieltisch.train.web.app import create_app
from spieltisch.train.web.sessions import ServerSettings
from starlette.testclient import TestClient


@pytest.fixture(scope="module")
def app():
    return create_app(ServerSettings(move_time_limit=5.0, first_move_time_limit=60.0))


@pytest.fixture(scope="module")
def client(app):
    return TestClient(app, raise_server_exceptions=False)


def new_game(client, **body) -> dict:
    r = client.post("/api/sessions", json=body)
    assert r.status_code == 200, r.json()
    return r.json()


def test_a_seed_of_thousands_of_digits_is_refused_clearly(client):
    # int() of over 4300 digits raised ValueError: a 500 with Python's message
    r = client.post("/api/sessions", json={"game": "kalaha", "agents": ["random"] * 2,
                                           "seed": "9" * 5000})  # fmt: skip
    assert r.status_code == 400 and "seed must be a whole number" in r.json()["error"]
    assert len(r.json()["error"]) < 200


def test_no_move_time_limit_still_takes_timed_agents():
    # --move-time-limit 0 (None): alphabeta:time=1 was compared with None, a 500
    client = TestClient(create_app(ServerSettings(move_time_limit=None)),
                        raise_server_exceptions=False)  # fmt: skip
    r = client.post(
        "/api/sessions", json={"game": "kalaha", "agents": ["human", "alphabeta:time=1"]}
    )
    assert r.status_code == 200, r.json()


@pytest.mark.parametrize("host", ["2001:db8::5", "[2001:db8::5]"])
def test_a_server_on_an_ipv6_address_answers_its_browsers(host):
    # a browser sends "Host: [2001:db8::5]:8000"; --host 2001:db8::5 refused every request
    client = TestClient(create_app(ServerSettings(allowed_hosts=allowed_hosts(host))))
    assert client.get("/api/games", headers={"host": "[2001:db8::5]:8000"}).status_code == 200
    assert client.get("/api/games", headers={"host": "evil.example:8000"}).status_code == 400
    assert allowed_hosts("[::]") is None  # every address, like "::"


def test_unused_games_expire_without_new_games():
    # only a new game expired old ones: an idle server kept every game (a perfect agent holds
    # 400 MB) for as long as nobody started another
    app = create_app(ServerSettings(session_ttl=0.2))
    client = TestClient(app)
    old = new_game(client, game="kalaha", agents=["human", "random"])["id"]
    time.sleep(0.3)
    assert client.get(f"/api/sessions/{old}").status_code == 404
    assert len(app.state.store) == 0


def test_a_persons_record_has_no_seed_while_the_game_is_on(client):
    # the seed fixes every roll to come, whatever is played: a record downloaded mid-game told
    # the person the dice ahead (and the agents' random choices)
    view = new_game(client, game="backgammon", agents=["human", "random"], seed=42)
    sid = view["id"]
    record = client.get(f"/api/sessions/{sid}/record").json()
    assert "seed" not in record and record["start_position"] is None
    assert str(42) not in client.get(f"/api/sessions/{sid}/record?format=mat").text.split("Game")[0]
    client.post(f"/api/sessions/{sid}/resign", json={"seat": 0})
    assert client.get(f"/api/sessions/{sid}/record").json()["seed"] == 42  # over: it replays
    watched = new_game(client, game="backgammon", agents=["random", "random"], seed=42)
    assert client.get(f"/api/sessions/{watched['id']}/record").json()["seed"] == 42


def test_the_page_cannot_be_framed_by_another_site(client):
    r = client.get("/")
    assert r.headers["x-frame-options"] == "DENY"
    assert "frame-ancestors 'none'" in r.headers["content-security-policy"]


# --- the page: it forgets the game it leaves -----------------------------------------------------


def test_the_page_deletes_the_game_it_leaves():
    sync_api = pytest.importorskip("playwright.sync_api")
    uvicorn = pytest.importorskip("uvicorn")
    chromium = shutil.which("chromium")
    if chromium is None:
        pytest.skip("no chromium executable")
    app = create_app()
    config = uvicorn.Config(app, host="127.0.0.1", port=0, log_level="warning", lifespan="off")
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 30
    while not server.started and time.monotonic() < deadline:
        time.sleep(0.02)
    port = server.servers[0].sockets[0].getsockname()[1]
    try:
        with sync_api.sync_playwright() as p:
            browser = p.chromium.launch(executable_path=chromium, args=["--no-sandbox"])
            page = browser.new_page()
            page.goto(f"http://127.0.0.1:{port}/")
            page.wait_for_selector("body[data-ready='1']")
            ids = []
            for _ in range(2):
                old = page.evaluate("document.body.dataset.session || ''")
                page.click("#new-game")
                page.wait_for_function(f"(document.body.dataset.session || '') !== '{old}'")
                ids.append(page.evaluate("document.body.dataset.session"))
            deadline = time.monotonic() + 10  # (the page's DELETE is not awaited)
            while len(app.state.store) > 1 and time.monotonic() < deadline:
                time.sleep(0.05)
            browser.close()
        assert len(app.state.store) == 1 and app.state.store.get(ids[1]).id == ids[1]
    finally:
        server.should_exit = True
        thread.join(10)
