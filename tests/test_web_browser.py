"""The page of ``spieltisch serve`` in a real browser: Debian's chromium driven by Playwright
against the real server (uvicorn in a thread). One game per test, played by clicking the board
as a person would; each test also saves a screenshot to ``tests/artifacts/web_<game>.png`` (and,
with ``SPIELTISCH_UPDATE_SCREENSHOTS=1``, to ``docs/images/`` for the README).

Skipped when the ``playwright`` package, ``uvicorn`` or a ``chromium`` executable is missing
(Playwright's own browsers are never downloaded: ``.ci/run`` installs Debian's chromium).
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import threading
import time
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

sync_api = pytest.importorskip("playwright.sync_api", reason="the playwright package is missing")
uvicorn = pytest.importorskip("uvicorn", reason="uvicorn (the web extra) is missing")
pytest.importorskip("starlette", reason="starlette (the web extra) is missing")

CHROMIUM = shutil.which("chromium")
if CHROMIUM is None:
    pytest.skip("no chromium executable (apt-get install chromium)", allow_module_level=True)

ROOT = Path(__file__).resolve().parent.parent
ARTIFACTS = ROOT / "tests" / "artifacts"
DOCS_IMAGES = ROOT / "docs" / "images"

#: the page is quiet: no request in flight, no agent turn or animation pending
IDLE = "document.body.dataset.busy === '0'"
#: quiet, and either a person is to move or the game is over
SETTLED = (
    "(() => { const v = window.spieltisch.view; return document.body.dataset.busy === '0' && !!v"
    " && (v.status !== 'playing' || v.human_to_move); })()"
)


# --- fixtures ---------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def server():
    """The real app on 127.0.0.1 (a free port), in a background thread."""
    from spieltisch.train.web.app import create_app

    app = create_app()
    config = uvicorn.Config(app, host="127.0.0.1", port=0, log_level="warning", lifespan="off")
    srv = uvicorn.Server(config)
    thread = threading.Thread(target=srv.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 30
    while not srv.started:
        if not thread.is_alive() or time.monotonic() > deadline:
            pytest.fail("the server did not start")
        time.sleep(0.05)
    port = srv.servers[0].sockets[0].getsockname()[1]
    yield SimpleNamespace(url=f"http://127.0.0.1:{port}/", app=app)
    srv.should_exit = True
    thread.join(10)


@pytest.fixture(scope="module")
def browser():
    with sync_api.sync_playwright() as p:
        chromium = p.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"], headless=True)
        yield chromium
        chromium.close()


@pytest.fixture
def page(browser, server):
    """A fresh tab on the page, 1280 x 900; fails the test on any JavaScript error."""
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    tab = context.new_page()
    tab.set_default_timeout(30_000)
    errors: list[str] = []
    tab.on("pageerror", lambda err: errors.append(str(err)))
    tab.goto(server.url)
    tab.wait_for_selector("body[data-ready='1']")
    # no delay between agent turns (the control shows once a game is on)
    tab.eval_on_selector("#speed", "el => { el.value = '0'; }")
    yield tab
    context.close()
    assert not errors, f"JavaScript errors on the page: {errors}"


# --- helpers ----------------------------------------------------------------------------------


def new_game(
    page,
    game: str,
    agents: list[str],
    options: dict | None = None,
    seed: int | None = None,
    position: str = "",
) -> dict[str, Any]:
    """Fill in the new-game form and start the game; returns the page's first view of it."""
    old = page.evaluate("document.body.dataset.session || ''")
    page.select_option("#game-select", game)
    for name, value in (options or {}).items():
        page.select_option(f"#opt-{name}", json.dumps(value))
    for seat, agent in enumerate(agents):
        page.fill(f"#agent-{seat}", agent)
    assert page.locator("#agents input").count() == len(agents)
    page.fill("#seed", "" if seed is None else str(seed))
    page.fill("#position", position)
    page.click("#new-game")
    page.wait_for_function(f"(document.body.dataset.session || '') !== {json.dumps(old)}")
    return view(page)


def view(page) -> dict[str, Any]:
    return page.evaluate("window.spieltisch.view")


def settle(page, timeout: float = 30_000) -> dict[str, Any]:
    page.wait_for_function(SETTLED, timeout=timeout)
    return view(page)


def session_of(server, page):
    return server.app.state.store.get(page.evaluate("document.body.dataset.session"))


def hus_counts(page, seat: int) -> list[int]:
    """The stone counts the Hus board shows for ``seat``, in action order."""
    return page.locator(f'#hus-board .pit[data-seat="{seat}"]').evaluate_all(
        "els => els.map(e => [Number(e.dataset.pit), Number(e.dataset.count)])"
        ".sort((a, b) => a[0] - b[0]).map(p => p[1])"
    )


def check_moves_list(page, server) -> int:
    """The page lists exactly the server's moves, in order."""
    moves = session_of(server, page).moves
    items = page.locator("#moves li")
    assert items.count() == len(moves)
    if moves:
        assert items.last.get_attribute("data-seat") == str(moves[-1]["seat"])
        assert moves[-1]["label"] in items.last.inner_text()
    return len(moves)


def analyse(page, agent: str = "") -> None:
    """Run the analysis panel; waits for its table (or a message)."""
    page.fill("#analysis-agent", agent)
    page.click("#analyse")
    page.wait_for_function(
        "document.querySelector('#analysis-table') || "
        "!document.querySelector('#analysis-message').hidden && "
        "document.querySelector('#analysis-message').classList.contains('error')",
        timeout=60_000,
    )
    page.wait_for_function(IDLE)


def screenshot(page, game: str, docs: bool = True) -> None:
    """The page as it is now, for the README (``docs``) and the test artifacts."""
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / f"web_{game}.png"))
    if docs and os.environ.get("SPIELTISCH_UPDATE_SCREENSHOTS") == "1":
        DOCS_IMAGES.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(ARTIFACTS / f"web_{game}.png", DOCS_IMAGES / f"web_{game}.png")


# --- Kalaha -----------------------------------------------------------------------------------


def test_kalaha_whole_game_by_clicking_pits(page, server):
    # a bad agent name: the server's error is shown on the page, no game starts
    page.select_option("#game-select", "kalaha")
    page.fill("#agent-1", "no-such-agent")
    page.click("#new-game")
    page.wait_for_selector("#message.error:not([hidden])")
    assert "no-such-agent" in page.inner_text("#message")
    assert page.evaluate("document.body.dataset.session") is None

    v = new_game(page, "kalaha", ["human", "random"], {"pits": 6, "seeds": 4}, seed=11)
    assert page.locator("#message").is_hidden()
    assert page.locator("#kalaha-board .pit").count() == 12
    assert page.locator("#download").get_attribute("href") == f"/api/sessions/{v['id']}/record"
    turns = 0
    analysed = False
    while True:
        v = settle(page)
        if v["status"] != "playing":
            break
        session = session_of(server, page)
        board = session.view()["board"]
        # the pits show the server's stone counts
        for seat in (0, 1):
            for pit, count in enumerate(board["sides"][seat]):
                pit_el = page.locator(f'#kalaha-board .pit[data-seat="{seat}"][data-pit="{pit}"]')
                assert pit_el.get_attribute("data-count") == str(count)
        legal = [m["action"] for m in v["legal"]]
        clickable = page.locator("#kalaha-board .pit.legal")
        pits = clickable.evaluate_all("els => els.map(e => Number(e.dataset.pit))")
        assert sorted(pits) == legal
        if turns == 4 and not analysed:
            # the person's seat: the game's shipped agent, and the solver's verdict
            analysed = True
            analyse(page)
            rows = page.locator("#analysis-table tbody tr")
            assert rows.count() == len(legal)
            assert page.locator("#analysis-table tr.chosen").count() == 1
            assert "pretrained:kalaha" in page.inner_text("#analysis-summary")
            assert "Solver" in page.inner_text("#analysis")
            screenshot(page, "kalaha")
        action = legal[(turns * 7) % len(legal)]
        page.click(f'#kalaha-board .pit.legal[data-seat="0"][data-pit="{action}"]')
        turns += 1
        assert turns < 200
    session = session_of(server, page)
    assert session.status == "over"
    result = page.locator("#result")
    assert result.is_visible()
    assert session.message in result.inner_text()
    assert "Result" in result.inner_text()
    assert check_moves_list(page, server) == len(session.moves) > 0
    assert any(m["seat"] == 0 for m in session.moves) and any(m["seat"] == 1 for m in session.moves)
    href = page.get_attribute("#download", "href")
    record = page.request.get(server.url.rstrip("/") + href).json()
    assert len(record["moves"]) == len(session.moves)


def _person_moves(server, page) -> int:
    return sum(m["seat"] == 0 for m in session_of(server, page).moves)


def test_the_page_plays_what_a_person_meant(page, server):
    """Found by a helper playing the page as a person (each step failed before its fix)."""
    v = new_game(page, "kalaha", ["human", "random"], {"pits": 6, "seeds": 4}, seed=7)
    # a double click on a pit played it, then the next move on the redrawn board (the agent's
    # reply came before the second click)
    box = page.locator(f'#kalaha-board .pit.legal[data-pit="{v["legal"][0]["action"]}"]')
    box = box.bounding_box()
    x, y = box["x"] + box["width"] / 2, box["y"] + box["height"] / 2
    page.mouse.click(x, y)
    settle(page)
    page.mouse.down(click_count=2)  # the second click of the double click
    page.mouse.up(click_count=2)
    v = settle(page)
    assert _person_moves(server, page) == 1
    # the keyboard player keeps focus on the board after a move (it fell to <body>) ...
    assert page.evaluate("!!document.activeElement.closest('#board')")
    page.keyboard.press("Enter")
    v = settle(page)
    assert _person_moves(server, page) == 2
    # ... and an analysis of an earlier position no longer plays its rows in this one
    analyse(page, "greedy")
    page.click(f'#kalaha-board .pit.legal[data-pit="{v["legal"][-1]["action"]}"]')
    settle(page)
    assert "outdated" in page.get_attribute("#analysis", "class")
    page.locator("#analysis-table tbody tr").first.click(force=True)
    page.wait_for_timeout(300)
    assert _person_moves(server, page) == 3

    # a screen reader read the board as one image: the pits that play are named buttons now
    first = page.locator("#kalaha-board .pit.legal").first
    assert first.get_attribute("role") == "button"
    assert "play pit" in first.get_attribute("aria-label")
    assert page.get_attribute("#kalaha-board", "role") == "group"

    # Hus pits took focus but Enter did nothing
    new_game(page, "hus", ["human", "random"], seed=4)
    page.focus("#hus-board .pit.legal >> nth=0")
    page.keyboard.press("Enter")
    settle(page)
    assert _person_moves(server, page) == 1

    # a seed typed into the form is played exactly (Number() rounded it above 2**53)
    new_game(page, "kalaha", ["random", "random"], seed=8329487250728968641)
    assert session_of(server, page).seed == 8329487250728968641

    # a table's shares show as 2 decimals, not -0.3333333333333333
    new_game(page, "hilo", ["human", "random", "random", "random"], {"num_players": 4}, seed=2)
    page.click("#resign")
    page.wait_for_selector("#result:not([hidden])")
    shown = page.inner_text("#result") + page.inner_text("#seats")
    assert "+0.33" in shown and "0.333" not in shown


# --- Backgammon -------------------------------------------------------------------------------


def _point(where) -> str:
    return '[data-point="off"][data-seat="0"]' if where == "off" else f'[data-point="{where}"]'


def _checker_move(page, move) -> None:
    before = len(page.evaluate("window.spieltisch.turnState().partial"))
    page.click(f"#backgammon-board {_point(move['from'])}")
    assert page.evaluate("window.spieltisch.turnState().selected") == str(move["from"])
    page.click(f"#backgammon-board {_point(move['to'])}")
    page.wait_for_function(
        "(() => { const t = window.spieltisch.turnState();"
        f" return t.partial.length === {before + 1}"
        " && !t.pending && document.body.dataset.busy === '0'; })()"
    )


def test_a_reload_comes_back_to_the_game(page, server):
    # a reload (or Back) lost the game: the page's address did not name it
    v = new_game(page, "kalaha", ["human", "random"], {"pits": 4, "seeds": 3}, seed=3)
    page.click(f'#kalaha-board .pit.legal[data-pit="{v["legal"][0]["action"]}"]')
    before = settle(page)
    page.reload()
    page.wait_for_selector("body[data-ready='1']")
    after = settle(page)
    assert after["id"] == before["id"] and after["moves"] == before["moves"]
    assert page.locator("#kalaha-board .pit").count() == 8
    page.goto(server.url + "#game=gone")
    page.reload()
    page.wait_for_selector("body[data-ready='1']")
    assert "is gone" in page.inner_text("#message")
    assert page.evaluate("location.hash") == ""


def test_a_backgammon_roll_is_played_by_keyboard(page, server):
    # points took no focus: backgammon could not be played without a mouse
    new_game(
        page, "backgammon", ["human", "random"], {"cube": False}, position="4HPwATDgc/ABMA 0 31"
    )
    settle(page)
    for source, target in ((8, 5), (6, 5)):
        page.focus(f'#backgammon-board [data-point="{source}"]')
        page.keyboard.press("Enter")
        assert page.evaluate("window.spieltisch.turnState().selected") == str(source)
        page.focus(f'#backgammon-board [data-point="{target}"]')
        page.keyboard.press("Space")
        page.wait_for_function("!window.spieltisch.turnState().pending")
    page.focus("#confirm")
    page.keyboard.press("Enter")
    v = settle(page)
    assert [(m["seat"], m["label"]) for m in v["moves"][:2]] == [(0, "8/5"), (0, "6/5")]


def test_a_phone_shows_the_board_first_and_no_sideways_scroll(page, server):
    # the board started 650-750 px down, below the form, and the page scrolled 3 px sideways
    page.set_viewport_size({"width": 360, "height": 740})
    new_game(page, "backgammon", ["human", "random"], {"cube": False})
    settle(page)
    assert page.evaluate("document.documentElement.scrollWidth") <= 360
    assert page.evaluate("document.querySelector('#board').getBoundingClientRect().top") < 300


def test_a_game_the_server_no_longer_has_ends_on_the_page(page, server):
    # after a server restart the page kept saying "your move", with Resign and Pause on
    v = new_game(page, "kalaha", ["human", "random"], {"pits": 4, "seeds": 3}, seed=3)
    assert page.request.delete(server.url + f"api/sessions/{v['id']}").ok
    page.click(f'#kalaha-board .pit.legal[data-pit="{v["legal"][0]["action"]}"]')
    page.wait_for_function("document.body.dataset.status === 'gone'")
    assert "no longer has this game" in page.inner_text("#result")
    assert page.locator("#resign").is_hidden()


def test_a_game_moved_on_elsewhere_is_shown_as_it_stands(page, server):
    # another tab (or the API) resigned the game: the page's agent turn got a 409, shown as an
    # error and the page stayed on "thinking"
    v = new_game(page, "kalaha", ["human", "random"], {"pits": 4, "seeds": 3}, seed=3)
    page.select_option("#speed", "2000")  # the agent's turn waits 2 s
    page.click(f'#kalaha-board .pit.legal[data-pit="{v["legal"][0]["action"]}"]')
    page.wait_for_function("!window.spieltisch.view.human_to_move")
    r = page.request.post(server.url + f"api/sessions/{v['id']}/resign", data={"seat": 0})
    assert r.ok
    page.wait_for_function("document.body.dataset.status === 'resigned'")
    assert page.locator("#message.error").count() == 0


def test_backgammon_bears_off_only_to_the_movers_tray(page, server):
    # seat 0 bearing off with 5-2: point 4, then seat 1's tray played 4/off too
    bearing_off = "TqBQ4B3/CAAAAA 0 52"
    new_game(page, "backgammon", ["human", "random"], {"cube": False}, position=bearing_off)
    settle(page)
    page.click('#backgammon-board [data-point="4"]')
    assert page.evaluate("window.spieltisch.turnState().selected") == "4"
    page.click('#backgammon-board [data-point="off"][data-seat="1"]')
    page.wait_for_timeout(300)
    assert page.evaluate("window.spieltisch.turnState().partial") == []
    page.click('#backgammon-board [data-point="off"][data-seat="0"]')
    page.wait_for_function("window.spieltisch.turnState().partial.length === 1")


def test_backgammon_turn_by_clicking_checkers_with_undo(page, server):
    # the start position: a GNU Backgammon position ID, seat 0 to play a 3-1
    start = "4HPwATDgc/ABMA 0 31"
    v = new_game(page, "backgammon", ["human", "random"], {"cube": False}, seed=5, position=start)
    assert v["options"] == {"cube": False}
    assert v["to_move"] == 0 and sorted(v["board"]["dice"]) == [1, 3]
    assert page.inner_text("#position-text") == v["position"]
    v = settle(page)
    turns_before = len(session_of(server, page).moves)
    while True:  # a roll that cannot be played is a single pass: press it and wait for the next
        checker_moves = [m for m in v["legal"] if m.get("from") is not None]
        if checker_moves or v["status"] != "playing":
            break
        page.click(f'#actions button[data-action="{v["legal"][0]["action"]}"]')
        v = settle(page)
    assert v["status"] == "playing" and v["to_move"] == 0
    assert page.locator("#bg-cube").count() == 0  # no cube without the cube option
    assert page.locator("#backgammon-board .die").count() in (2, 4)
    # the analysis of the person's position: the shipped network, whole plays, one chosen
    analyse(page)
    assert "pretrained:backgammon" in page.inner_text("#analysis-summary")
    assert page.locator("#analysis-table tbody tr").count() >= 1
    assert page.locator("#analysis-table tr.chosen").count() == 1

    # one checker move, taken back with Undo
    first = checker_moves[0]
    source = page.locator(f"#backgammon-board {_point(first['from'])}")
    assert "movable" in source.get_attribute("class")
    _checker_move(page, first)
    page.click("#undo")
    page.wait_for_function(
        "window.spieltisch.turnState().partial.length === 0 && document.body.dataset.busy === '0'"
    )
    points = session_of(server, page).view()["board"]["points"]
    drawn = [
        int(page.get_attribute(f'#backgammon-board [data-point="{p}"]', "data-count"))
        for p in range(1, 25)
    ]
    assert drawn == points  # back to the board before the roll

    # the whole roll, each next move from the server's preview
    played = []
    legal = checker_moves
    while True:
        move = legal[-1]  # any legal move; the last differs from the undone one in most rolls
        _checker_move(page, move)
        played.append(move["action"])
        state = page.evaluate("window.spieltisch.turnState()")
        assert state["partial"] == played
        if len(played) == 1:
            assert page.locator("#backgammon-board .die.used").count() >= 1
            screenshot(page, "backgammon")
        if state["complete"]:
            break
        legal = [m for m in state["legal"] if m.get("from") is not None]
        assert legal, state
    assert session_of(server, page).moves[turns_before:] == []  # nothing sent before Confirm
    page.check("#analyse-auto")  # from now on every position is analysed as it comes
    page.click("#confirm")
    v = settle(page)
    if v["status"] == "playing":
        summary = page.locator("#analysis-summary")
        assert summary.get_attribute("data-moves") == str(len(v["moves"]))
        assert "for seat 0" in summary.inner_text()
    session = session_of(server, page)
    mine = [m for m in session.moves[turns_before:] if m["seat"] == 0]
    assert [m["action"] for m in mine][: len(played)] == played
    check_moves_list(page, server)

    # resigning ends the game for the person's seat
    if v["status"] == "playing":
        page.click("#resign")
        page.wait_for_selector("#status[data-status='resigned']")
        assert session.status == "resigned"
        assert "resigned" in page.inner_text("#result")


# --- Hus --------------------------------------------------------------------------------------


def test_hus_sowing_step_by_step(page, server):
    new_game(page, "hus", ["human", "random"], seed=4)
    page.check("#sowing")
    page.click("#hus-board .pit.legal >> nth=0")
    # the move is shown stone by stone: the caption counts the steps, the pit being sown is lit
    page.wait_for_function(
        "/step \\d+ of \\d+/.test(document.querySelector('#board-caption').textContent)"
    )
    assert page.locator("#hus-board .pit.sow-active, #hus-board .pit.sow-pickup").count() >= 1
    page.uncheck("#sowing")  # stops the animation
    settle(page)
    assert page.locator("#hus-board .sow-active, #hus-board .sow-pickup").count() == 0
    board = session_of(server, page).view()["board"]
    for seat in (0, 1):
        assert hus_counts(page, seat) == board["sides"][seat]


def test_hus_agents_play_to_the_end(page, server):
    v = new_game(page, "hus", ["random", "random"], seed=3)
    assert v["status"] == "playing" and not v["human_to_move"]
    assert page.locator("#hus-board .pit").count() == 32
    # agents against agents start paused: nothing moves until Play or Step
    page.wait_for_timeout(300)
    assert len(session_of(server, page).moves) == 0
    page.click("#step")
    page.wait_for_function("window.spieltisch.view.moves.length === 1")
    page.select_option("#speed", "100")
    page.click("#play")
    page.wait_for_function("window.spieltisch.view.moves.length >= 8", timeout=30_000)
    page.click("#pause")
    page.wait_for_function(IDLE)
    paused_at = len(session_of(server, page).moves)
    if session_of(server, page).status == "playing":
        page.wait_for_timeout(300)
        assert len(session_of(server, page).moves) == paused_at
        analyse(page, "pretrained:hus")
        assert page.locator("#analysis-table td.pct .bar").count() >= 1
        screenshot(page, "hus")
    page.select_option("#speed", "0")
    page.click("#play")
    page.wait_for_function(
        "document.querySelector('#status').dataset.status !== 'playing'", timeout=60_000
    )
    session = session_of(server, page)
    assert session.status in ("over", "truncated")
    assert page.locator("#result").is_visible()
    assert session.message in page.inner_text("#result")
    check_moves_list(page, server)
    # the pits show the final board
    board = session.view()["board"]
    for seat in (0, 1):
        assert hus_counts(page, seat) == board["sides"][seat]


# --- HiLo: hidden cards stay hidden ------------------------------------------------------------


class BoardSpy:
    """Wraps the server's board_view: every HiLo board it sends, with the real state's hidden
    cards at that moment."""

    def __init__(self, real):
        self.real = real
        self.sent: list[tuple[dict, dict]] = []

    def __call__(self, game, state, viewer=None):
        board = self.real(game, state, viewer)
        if game == "hilo":
            truth = {
                "hidden": [
                    [not up for up in state.face_up(seat)] for seat in range(state.game.num_players)
                ],
                "codes": [
                    [state.game.deck.card_faces[c].code for c in state.layout(seat)]
                    for seat in range(state.game.num_players)
                ],
                "held_hidden": state.held_from == "draw" and viewer != state.current_player,
            }
            self.sent.append((json.loads(json.dumps(board)), truth))
        return board


def _check_hilo_dom(page, server) -> None:
    """Every face-down card of the real state is a card back on the page (no value, no code);
    every face-up card shows its code; another player's drawn card is a back."""
    session = session_of(server, page)
    state = session.raw.state
    faces = state.game.deck.card_faces
    cards = page.locator("#hilo-board .card[data-slot]").evaluate_all(
        "els => els.map(e => ({seat: +e.dataset.seat, slot: +e.dataset.slot, face: e.dataset.face,"
        " code: e.dataset.code ?? null, text: e.textContent}))"
    )
    assert len(cards) == 12 * state.game.num_players
    for card in cards:
        seat, slot = card["seat"], card["slot"]
        if state.face_up(seat)[slot]:
            assert card["face"] == "up"
            assert card["code"] == faces[state.layout(seat)[slot]].code
        else:
            assert card["face"] == "down", card
            assert card["code"] is None and card["text"] == "", card
    held = page.locator("#hilo-held .card")
    if state.held_from == "draw" and state.current_player != session.viewer:
        assert held.get_attribute("data-face") == "down"
        assert held.text_content() == "" and held.get_attribute("data-code") is None
    elif state.held_from is not None:
        assert held.get_attribute("data-code") == faces[state.held_card].code


def _check_hilo_sent(spy: BoardSpy, responses: list[dict]) -> None:
    """No board the server sent holds a face-down card or a hidden drawn card, and the browser
    got no other boards (nor any position notation)."""
    assert spy.sent
    for board, truth in spy.sent:
        for seat, hidden in enumerate(truth["hidden"]):
            for slot, down in enumerate(hidden):
                if down:
                    code = truth["codes"][seat][slot]
                    assert board["layouts"][seat][slot] is None, (seat, slot, code)
        if truth["held_hidden"]:
            assert board["held"] is None and board["held_hidden"]
    sent = [json.dumps(b, sort_keys=True) for b, _ in spy.sent]
    boards = 0
    for body in responses:
        assert "position" not in body and "start_position" not in body
        if isinstance(body.get("board"), dict):
            boards += 1
            assert json.dumps(body["board"], sort_keys=True) in sent
    assert boards


@pytest.mark.parametrize("players", [2, 4])
def test_hilo_never_shows_hidden_cards(page, server, monkeypatch, players):
    from spieltisch.train.web import sessions

    spy = BoardSpy(sessions.board_view)
    monkeypatch.setattr(sessions, "board_view", spy)
    responses: list[dict] = []

    def capture(response):
        if "/api/" in response.url and "json" in (response.headers.get("content-type") or ""):
            # a response the page dropped (a new game) has no body: nothing to check
            with contextlib.suppress(Exception):
                responses.append(response.json())

    page.on("response", capture)
    agents = ["human"] + ["heuristic"] * (players - 1)
    new_game(page, "hilo", agents, {"num_players": players}, seed=7)
    assert page.locator("#hilo-board .layout").count() == players
    limit = 14 if players == 2 else 6
    for turn in range(limit):
        v = settle(page)
        _check_hilo_dom(page, server)
        if v["status"] != "playing":
            break
        buttons = page.locator("#actions button[data-action]")
        assert buttons.count() == len(v["legal"])
        if players == 2 and turn == 9:
            analyse(page)  # the person's own seat: heuristic's view of its moves
            assert page.locator("#analysis-table tbody tr").count() >= 1
            screenshot(page, "hilo")
        # a slot or pile named by one action is clickable on the board too
        spots = page.locator("#hilo-board .legal[data-action]")
        if turn % 2 and spots.count():
            spots.first.click()
        else:
            buttons.nth((turn * 5) % buttons.count()).click()
    settle(page)
    _check_hilo_dom(page, server)
    check_moves_list(page, server)
    _check_hilo_sent(spy, responses)
    if players == 4:
        screenshot(page, "hilo4", docs=False)
        # only agents at the table: the page shows what everybody knows, step by step, and
        # the analysis (which would need a seat's hidden knowledge) is refused in the panel
        new_game(page, "hilo", ["heuristic", "heuristic"], {"num_players": 2}, seed=8)
        for _ in range(5):
            page.click("#step")
            page.wait_for_function(IDLE)
            _check_hilo_dom(page, server)
        page.click("#analyse")
        page.wait_for_selector("#analysis-message.error:not([hidden])")
        assert "HiLo" in page.inner_text("#analysis-message")
        _check_hilo_sent(spy, responses)


def test_the_page_deletes_the_game_it_leaves(page, server):
    """The page shows one game: the server forgets the one it leaves (it kept every game for
    hours, with its agents: a perfect agent's 400 MB each)."""
    from spieltisch.train.web.sessions import RequestError

    first = new_game(page, "kalaha", ["random", "random"])["id"]
    second = new_game(page, "kalaha", ["random", "random"])["id"]
    store = server.app.state.store
    deadline = time.monotonic() + 10  # (the page's DELETE is not awaited)
    while first in store._sessions and time.monotonic() < deadline:
        time.sleep(0.05)
    with pytest.raises(RequestError, match="no game"):
        store.get(first)
    assert store.get(second).id == second
