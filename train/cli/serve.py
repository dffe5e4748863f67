"""``spieltisch serve``: play, watch and analyse the games in the browser."""

from __future__ import annotations

import argparse
import errno
import socket
import sys
from pathlib import Path

from spieltisch.train.cli.eval import first_move_time_argument, time_limit_argument


def add_parser(subparsers: argparse._SubParsersAction) -> argparse.ArgumentParser:
    p = subparsers.add_parser(
        "serve",
        help="play, watch and analyse the games in the browser",
        description=(
            "Start a local web server with a page for every game: play agents, watch them play "
            "each other, see what they think. Needs the web extra: pip install -e '.[web]'. "
            "Example: spieltisch serve, then open the address it prints (docs/web.md)."
        ),
    )
    p.add_argument(
        "--host",
        default="127.0.0.1",
        help="address to listen on (default 127.0.0.1: this machine only)",
    )
    p.add_argument("--port", type=int, default=8000, help="port (default 8000; 0: any free one)")
    p.add_argument(
        "--checkpoint-dir",
        type=Path,
        default=None,
        metavar="DIR",
        help="allow checkpoint:PATH agents, PATH relative to DIR (default: none)",
    )
    p.add_argument(
        "--move-time-limit",
        type=time_limit_argument,
        default=10.0,
        metavar="SECONDS",
        help="seconds an agent may take for a move before it loses the game "
        "(default 10; 0: no limit)",
    )
    p.add_argument(
        "--first-move-time-limit",
        type=first_move_time_argument,
        default=120.0,
        metavar="SECONDS",
        help="seconds for an agent's first move in a game, which may compile code "
        "or load a network (default 120)",
    )
    p.add_argument(
        "--max-sessions",
        type=int,
        default=500,
        help="games kept at once; the longest unused goes first (default 500)",
    )
    p.add_argument(
        "--max-memory",
        type=float,
        default=8.0,
        metavar="GIB",
        help="while the server holds more resident memory than this, the games unused for "
        "longest are dropped (default 8; 0: no bound; Linux only)",
    )
    return p  # fmt: skip


LOOPBACK_NAMES = ("127.0.0.1", "localhost", "::1", "[::1]")


def allowed_hosts(host: str) -> tuple[str, ...] | None:
    """The Host names the server answers to when it listens on ``host``: this machine's names
    on loopback, the address itself (and this machine's names) otherwise; None (any) when it
    listens on every address, where the network's own names cannot be known."""
    if host in ("0.0.0.0", "::", "[::]", ""):
        return None
    if host in LOOPBACK_NAMES:
        return LOOPBACK_NAMES
    if ":" in host and not host.startswith("["):  # a browser's Host names it "[2001:db8::5]"
        return (host, f"[{host}]", *LOOPBACK_NAMES)  # (every request was refused)
    return (host, *LOOPBACK_NAMES)


def listening_socket(host: str, port: int) -> socket.socket:
    """A socket bound to ``host``:``port`` and listening, for the server to take over; raises
    OSError naming the address when it cannot be bound (taken, or not this machine's)."""
    address = host.strip("[]")
    family = socket.AF_INET6 if ":" in address else socket.AF_INET
    try:
        return socket.create_server((address, port), family=family)
    except OSError as err:
        hint = " (another server? choose another --port, or --port 0 for any free one)"
        # (os.strerror of a name lookup's error, -2, said "Unknown error -2")
        reason = err.strerror or str(err)
        raise OSError(f"cannot listen on {host}:{port}: {reason}"
                      + (hint if err.errno == errno.EADDRINUSE else "")) from err  # fmt: skip


def run(args: argparse.Namespace) -> int:
    try:
        import uvicorn
        from spieltisch.train.web.app import create_app
        from spieltisch.train.web.sessions import ServerSettings
    except ImportError as err:
        print(f"spieltisch serve needs the web extra ({err}): pip install -e '.[web]'",
              file=sys.stderr)  # fmt: skip
        return 2
    root = args.checkpoint_dir
    if root is not None and not root.is_dir():
        print(f"spieltisch serve: --checkpoint-dir {root} is not a folder", file=sys.stderr)
        return 2
    problems = [f"--port must be 0..65535, got {args.port}"] if not 0 <= args.port <= 65535 else []
    if args.max_sessions < 1:
        problems.append(f"--max-sessions must be at least 1, got {args.max_sessions}")
    if not args.max_memory >= 0:  # (nan too)
        problems.append(f"--max-memory must be at least 0 GiB, got {args.max_memory}")
    if problems:
        print(f"spieltisch serve: {'; '.join(problems)}", file=sys.stderr)
        return 2
    settings = ServerSettings(
        move_time_limit=args.move_time_limit,
        first_move_time_limit=args.first_move_time_limit or args.move_time_limit,
        checkpoint_root=None if root is None else root.resolve(),
        max_sessions=args.max_sessions,
        max_memory_gib=args.max_memory or None,
        allowed_hosts=allowed_hosts(args.host),
    )
    try:  # bound here, so that a taken port is named before anything starts
        sock = listening_socket(args.host, args.port)
    except OSError as err:
        print(f"spieltisch serve: {err}", file=sys.stderr)
        return 1
    config = uvicorn.Config(create_app(settings), host=args.host, port=args.port,
                            log_level="warning")  # fmt: skip
    server = uvicorn.Server(config)
    original_startup = server.startup

    async def startup(sockets=None) -> None:  # print the address once the port is bound
        await original_startup(sockets)
        for sock in server.servers[0].sockets if server.servers else ():
            host, port = sock.getsockname()[:2]
            shown = f"[{host}]" if ":" in host else host
            print(f"spieltisch serve: open http://{shown}:{port}/  (Ctrl-C stops)", flush=True)

    server.startup = startup
    with sock:
        server.run(sockets=[sock])
    return 0
