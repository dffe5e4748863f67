"""Numba's on-disk cache of compiled kernels, in a folder named by the kernels' source.

Numba compiles a ``cache=True`` kernel again when the file that defines it changes, but not
when a kernel it calls, defined in another file, changes: the callee is compiled into the
caller, so after an update of ``td_value.py`` the chance search and the TD trainer, in files
that had not changed, ran the old evaluator from their caches. Here the cache lives in a folder
per digest of the package's kernel sources (every ``.py`` file of ``envs`` and ``agents``, and
those of ``train`` that use numba), so that any change to them starts a fresh cache.

The folder is ``$SPIELTISCH_NUMBA_CACHE`` (default ``~/.cache/spieltisch/numba``, under
``$XDG_CACHE_HOME`` where set) ``/<digest>``; the folders of older sources beside it are
removed, all but the newest few. A ``NUMBA_CACHE_DIR`` set by the user is kept as it is (then
the user chose where the cache lives, and clears it when the sources change).
"""

from __future__ import annotations

import hashlib
import os
import shutil
import sys
from collections.abc import Callable
from pathlib import Path

#: folders of other sources kept beside the current one (another checkout may still use them)
KEEP_OTHERS = 3

#: whether :func:`announce_compiling` has registered its listener in this process
_announcing = False

#: the NUMBA_CACHE_DIR this module set (a user's own is left alone)
_OURS = "SPIELTISCH_NUMBA_CACHE_SET"


def source_digest(package_root: Path) -> str:
    """A digest of the kernel sources under ``package_root`` (the folder holding ``envs``,
    ``agents`` and ``train``, whatever their installed names): 16 hex digits."""
    digest = hashlib.sha256()
    for part in ("envs", "agents", "train"):
        for path in sorted((package_root / part).rglob("*.py")):
            data = path.read_bytes()
            if part == "train" and b"numba" not in data:
                continue  # (trainers without kernels: editing them keeps the cache)
            digest.update(path.relative_to(package_root).as_posix().encode() + b"\0")
            digest.update(hashlib.sha256(data).digest())
    return digest.hexdigest()[:16]


def cache_base() -> Path:
    """Where the per-digest cache folders live."""
    if chosen := os.environ.get("SPIELTISCH_NUMBA_CACHE"):
        return Path(chosen).expanduser()
    xdg = os.environ.get("XDG_CACHE_HOME")
    return (Path(xdg) if xdg else Path.home() / ".cache") / "spieltisch" / "numba"


def configure(package_root: Path) -> Path | None:
    """Point numba's cache at the folder of the current sources (before any kernel is
    defined); returns it, or None where the user set ``NUMBA_CACHE_DIR`` or no folder can be
    made (numba then caches beside the sources as before)."""
    chosen = os.environ.get("NUMBA_CACHE_DIR")
    if chosen and chosen != os.environ.get(_OURS):  # (ours: set here, or in a parent process)
        return None
    base = cache_base()
    folder = base / source_digest(package_root)
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError:
        return None
    os.utime(folder)  # (the newest folders are the ones kept)
    # numba reads it when imported (and again when its environment changes); worker
    # processes inherit it
    os.environ["NUMBA_CACHE_DIR"] = os.environ[_OURS] = str(folder)
    if (numba := sys.modules.get("numba")) is not None:  # imported already: tell it too
        numba.config.CACHE_DIR = str(folder)
    _remove_old(base, folder)
    return folder


def _remove_old(base: Path, current: Path) -> None:
    """Remove the cache folders of older sources, all but the :data:`KEEP_OTHERS` newest."""
    try:
        others = [p for p in base.iterdir() if p.is_dir() and p != current]
        others.sort(key=lambda p: p.stat().st_mtime, reverse=True)
    except OSError:
        return
    for old in others[KEEP_OTHERS:]:
        shutil.rmtree(old, ignore_errors=True)  # (best effort: another process may use it)


def announce_compiling(write: Callable[[str], object]) -> None:
    """Call ``write`` once with a line saying the kernels are being compiled, when numba first
    compiles one in this process (a kernel missing from the cache: the first run after an
    install or an update of the sources, 10-30 s of silence before this was said). Loading a
    cached kernel says nothing."""
    global _announcing
    if _announcing:  # (one listener a process: the command line's main may run again)
        return
    _announcing = True
    from numba.core import event

    class _FirstCompile(event.Listener):
        said = False

        def on_start(self, ev: event.Event) -> None:
            if not self.said:
                self.said = True
                where = os.environ.get("NUMBA_CACHE_DIR") or "numba's cache"
                write(
                    "compiling the game kernels for this machine (once after an install or an "
                    f"update; they are cached in {where})..."
                )

        def on_end(self, ev: event.Event) -> None:
            pass

    event.register("numba:compile", _FirstCompile())
