"""The web app of ``spieltisch serve``: a JSON API over :mod:`.sessions` and the page in
``static/``.

Starlette on uvicorn (the ``web`` extra): the API is a handful of JSON routes whose checks are the
engines' own (legal moves, positions) rather than schema types, so a validation framework would
add a dependency without removing any code; Starlette's test client drives the same app in tests.
Handlers are plain functions, which Starlette runs in its thread pool, so an agent thinking in one
game never blocks another.

Routes (all answers JSON; an error is ``{"error": message}`` with a 4xx status and changes
nothing):

=================================  =========================================================
``GET /``                          the page
``GET /api/games``                 games, their options and agent names
``POST /api/sessions``             new game: ``{"game", "agents", "options", "seed", "position"}``
``GET /api/sessions/ID``           the game as the page shows it
``POST /api/sessions/ID/turn``     a person's turn: ``{"actions": [...]}``
``POST /api/sessions/ID/preview``  backgammon: the board after part of a roll (changes nothing)
``POST /api/sessions/ID/agent``    the agent to move plays its turn
``POST /api/sessions/ID/resign``   ``{"seat": n}``
``POST /api/sessions/ID/analysis`` what an agent thinks of the position: ``{"agent": name}``
``GET /api/sessions/ID/sowing/N``  Hus: move N stone by stone
``GET /api/sessions/ID/record``    the game record (JSON; ``?format=mat``: GNU Backgammon's)
``DELETE /api/sessions/ID``        end and forget the game
=================================  =========================================================
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from spieltisch.agents.neural.agents import pretrained_names
from spieltisch.agents.registry import agent_names
from spieltisch.envs import GAMES
from spieltisch.train.web.boards import WEB_OPTIONS
from spieltisch.train.web.sessions import (
    GameSession,
    RequestError,
    ServerSettings,
    SessionStore,
    run_with_limit,
)
from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.datastructures import Headers
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import FileResponse, JSONResponse, PlainTextResponse, Response
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles

STATIC_DIR = Path(__file__).parent / "static"

#: the largest request body the API reads (bytes)
MAX_BODY = 64 * 1024
#: the page may not be shown in a frame of another site's page, which could make a person
#: click on it unawares (its requests come from this server's page, so they pass the checks)
PAGE_HEADERS = {"X-Frame-Options": "DENY", "Content-Security-Policy": "frame-ancestors 'none'"}


def _error(err: RequestError) -> JSONResponse:
    return JSONResponse({"error": str(err)}, status_code=err.status)


def _check_origin(request: Request) -> None:
    """A browser names the page that sends a request in its Origin header: a page of another
    site (which may post to this server on the machine it runs on) is refused."""
    origin = request.headers.get("origin")
    if origin is not None and urlsplit(origin).netloc != request.headers.get("host"):
        raise RequestError(f"requests from {origin} are refused: use the page of this server", 403)


async def _read_body(request: Request) -> bytes:
    """The request's body, refused (413) as soon as it is known to be over :data:`MAX_BODY`:
    from its Content-Length, else while it streams in (a 500 MB body was read whole, 1 GB of
    the server's memory, before being refused)."""
    too_big = RequestError(f"the request body is over {MAX_BODY} bytes", 413)
    declared = request.headers.get("content-length", "")
    if declared.isdigit() and int(declared) > MAX_BODY:
        raise too_big
    chunks, size = [], 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > MAX_BODY:
            raise too_big
        chunks.append(chunk)
    return b"".join(chunks)


def _parse_body(raw: bytes) -> dict[str, Any]:
    """A request's JSON body (an empty body is ``{}``); RequestError if it is not a JSON
    object (its size: :func:`_read_body`)."""
    if not raw.strip():
        return {}
    try:
        body = json.loads(raw)
    except (ValueError, UnicodeDecodeError) as err:
        raise RequestError(f"the request body is not JSON: {err}") from None
    except RecursionError:  # (thousands of nested brackets were a 500)
        raise RequestError("the request body is nested too deeply") from None
    if not isinstance(body, dict):
        raise RequestError("the request body must be a JSON object")
    return body


def _host_name(header: str) -> str:
    """The name in a Host header, without its port: ``"[::1]:8000"`` -> ``"[::1]"``."""
    header = header.strip().lower()
    if header.startswith("["):
        return header[: header.find("]") + 1]
    name, _, port = header.rpartition(":")
    return name if name and port.isdigit() else header


class HostCheck:
    """Refuses, with a JSON 400 like every other error, a request whose Host header names none
    of ``allowed_hosts`` (a page elsewhere pointing its own name at this machine: DNS
    rebinding). Starlette's TrustedHostMiddleware answered in plain text."""

    def __init__(self, app: Any, allowed_hosts: tuple[str, ...]) -> None:
        self.app = app
        self.allowed = {name.lower() for name in allowed_hosts}

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] in ("http", "websocket"):
            header = Headers(scope=scope).get("host", "")
            if _host_name(header) not in self.allowed:
                error = (f"this server answers to the host names {sorted(self.allowed)}, not "
                         f"to {header!r}")  # fmt: skip
                await JSONResponse({"error": error}, status_code=400)(scope, receive, send)
                return
        await self.app(scope, receive, send)


def _attachment(filename: str) -> dict[str, str]:
    return {"Content-Disposition": f'attachment; filename="{filename}"'}


def _fields(body: dict[str, Any], allowed: set[str]) -> dict[str, Any]:
    unknown = set(body) - allowed
    if unknown:
        raise RequestError(
            f"unknown fields {sorted(unknown)}; this request takes {sorted(allowed)}"
        )
    return body


def create_app(settings: ServerSettings | None = None) -> Starlette:
    """The app, with its own :class:`SessionStore` (games are kept in memory)."""
    settings = settings or ServerSettings()
    store = SessionStore(settings)

    def api(handler: Callable[[Request, dict[str, Any]], Any]) -> Callable:
        """A route: reads the JSON body, runs ``handler(request, body)`` in the thread pool
        (agents think there), answers a dict as JSON and a RequestError as its 4xx answer."""

        async def endpoint(request: Request) -> Response:
            start = time.perf_counter()
            try:
                _check_origin(request)
                body = _parse_body(await _read_body(request))
                result = await run_in_threadpool(handler, request, body)
                response = result if isinstance(result, Response) else JSONResponse(result)
            except RequestError as err:
                response = _error(err)
            # the time spent here, for clients and load tests (benchmarks/web_load.py)
            response.headers["Server-Timing"] = (
                f"app;dur={(time.perf_counter() - start) * 1000:.2f}"
            )
            return response

        return endpoint

    def locked(request: Request, action: Callable[[GameSession], Any]) -> Any:
        """``action(session)`` under the session's lock; 409 while another request holds it
        (an agent thinking), so requests of one game never interleave."""
        session = store.get(request.path_params["id"])
        if not session.lock.acquire(blocking=False):
            raise RequestError("busy: this game is still working on the previous request", 409)
        try:
            return action(session)
        finally:
            session.lock.release()

    def games(request: Request, body: dict) -> dict[str, Any]:
        return {
            "games": {
                game: {
                    "env": GAMES[game],
                    "options": {k: list(v) for k, v in WEB_OPTIONS[game].items()},
                    "agents": agent_names(game),
                    # the shipped agents, those beside the default too (algo=)
                    "prefixed": pretrained_names(game)
                    + (["checkpoint:PATH"] if settings.checkpoint_root is not None else []),
                }
                for game in GAMES
            },
            "move_time_limit": settings.move_time_limit,
        }

    def new_session(request: Request, body: dict) -> dict[str, Any]:
        session = GameSession.create(body, settings)
        store.add(session)
        return session.view()

    def show(request: Request, body: dict) -> dict[str, Any]:
        return locked(request, GameSession.view)

    def then_view(request: Request, change: Callable[[GameSession], Any]) -> dict[str, Any]:
        """``change(session)`` under the lock, answered with the game as it is afterwards."""

        def run(session: GameSession) -> dict[str, Any]:
            change(session)
            return session.view()

        return locked(request, run)

    def turn(request: Request, body: dict) -> dict[str, Any]:
        body = _fields(body, {"actions"})
        return then_view(request, lambda s: s.human_turn(body.get("actions")))

    def preview(request: Request, body: dict) -> dict[str, Any]:
        body = _fields(body, {"actions"})
        return locked(request, lambda s: s.preview(body.get("actions", [])))

    def agent(request: Request, body: dict) -> dict[str, Any]:
        _fields(body, set())
        return then_view(request, GameSession.agent_turn)

    def resign(request: Request, body: dict) -> dict[str, Any]:
        body = _fields(body, {"seat"})
        return then_view(request, lambda s: s.resign(body.get("seat")))

    def analysis(request: Request, body: dict) -> dict[str, Any]:
        from spieltisch.train.web.thinking import analyse_session

        body = _fields(body, {"agent"})
        return locked(request, lambda s: analyse_session(s, body.get("agent")))

    def sowing(request: Request, body: dict) -> dict[str, Any]:
        from spieltisch.train.web.thinking import sowing_steps

        try:
            index = int(request.path_params["move"])
        except ValueError:
            raise RequestError("the move number must be a whole number") from None
        return locked(request, lambda s: sowing_steps(s, index))

    def record(request: Request, body: dict) -> Response:
        form = request.query_params.get("format", "json")
        if form not in ("json", "mat"):
            raise RequestError(f"format must be json or mat, got {form!r}")
        stem = f"spieltisch-{request.path_params['id'][:8]}"
        if form == "mat":  # GNU Backgammon's match format (File > Import > .mat)
            text = locked(request, GameSession.mat_record)
            return PlainTextResponse(text, headers=_attachment(f"{stem}.mat"))
        data = locked(request, GameSession.record)
        return JSONResponse(data, headers=_attachment(f"{stem}-{data['game']}.json"))

    def delete(request: Request, body: dict) -> dict[str, Any]:
        store.remove(request.path_params["id"])
        return {"deleted": request.path_params["id"]}

    async def page(request: Request) -> Response:
        return FileResponse(STATIC_DIR / "index.html", headers=PAGE_HEADERS)

    routes = [
        Route("/", page),
        Route("/api/games", api(games)),
        Route("/api/sessions", api(new_session), methods=["POST"]),
        Route("/api/sessions/{id}", api(show), methods=["GET"]),
        Route("/api/sessions/{id}", api(delete), methods=["DELETE"]),
        Route("/api/sessions/{id}/turn", api(turn), methods=["POST"]),
        Route("/api/sessions/{id}/preview", api(preview), methods=["POST"]),
        Route("/api/sessions/{id}/agent", api(agent), methods=["POST"]),
        Route("/api/sessions/{id}/resign", api(resign), methods=["POST"]),
        Route("/api/sessions/{id}/analysis", api(analysis), methods=["POST"]),
        Route("/api/sessions/{id}/sowing/{move}", api(sowing), methods=["GET"]),
        Route("/api/sessions/{id}/record", api(record), methods=["GET"]),
        Mount("/static", StaticFiles(directory=STATIC_DIR), name="static"),
    ]

    async def not_found(request: Request, exc: Exception) -> JSONResponse:
        status = getattr(exc, "status_code", 404)
        return JSONResponse({"error": f"{request.method} {request.url.path}: not found"
                             if status == 404 else str(getattr(exc, "detail", exc))},
                            status_code=status)  # fmt: skip

    async def internal_error(request: Request, exc: Exception) -> JSONResponse:
        # a bug, not bad input: say so plainly (the traceback goes to the server's log)
        return JSONResponse({"error": f"internal error: {type(exc).__name__}: {exc}"},
                            status_code=500)  # fmt: skip

    handlers = {404: not_found, 405: not_found, Exception: internal_error}
    middleware = []
    if settings.allowed_hosts is not None:
        middleware.append(Middleware(HostCheck, allowed_hosts=settings.allowed_hosts))
    app = Starlette(routes=routes, exception_handlers=handlers, middleware=middleware)
    app.state.store = store
    app.state.settings = settings
    return app


__all__ = ["create_app", "run_with_limit"]
