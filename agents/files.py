"""Atomic file writes, shared by everything that writes files readers may open at any time
(checkpoints, the Kalaha endgame databases, training run files)."""

from __future__ import annotations

import os
import stat
import tempfile
from collections.abc import Callable
from pathlib import Path


def write_atomic(path: str | os.PathLike, write: Callable[[Path], object]) -> None:
    """Let ``write`` fill a temporary file next to ``path``, then rename it over ``path``.

    The rename is atomic on POSIX, so a reader sees the old file or the complete new one, never
    a partial one; the temporary file is removed if ``write`` fails. Its name is unique, so
    concurrent writers of the same path do not clobber each other's temporary files.
    """
    path = Path(path)
    try:  # a file replaced keeps its permissions (a read-only or group-only file stays so)
        mode = stat.S_IMODE(path.stat().st_mode)
    except (FileNotFoundError, NotADirectoryError):
        mode = 0o644  # mkstemp makes 0600; these files are meant to be shared
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    os.close(fd)
    try:
        write(Path(tmp))
        os.chmod(tmp, mode)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def write_text_atomic(path: str | os.PathLike, text: str) -> None:
    """Write ``text`` to ``path`` atomically (see :func:`write_atomic`)."""
    write_atomic(path, lambda tmp: tmp.write_text(text))


def check_output_path(path: str | os.PathLike) -> Path:
    """``path`` as a Path if a file can be written there, checked before any long work (so a
    typo in an output path does not lose a finished run's results); ValueError naming the
    problem otherwise: a directory, a missing parent directory, a parent that is a file."""
    out = Path(path)
    if out.is_dir():
        raise ValueError(f"{out} is a directory; give the path of the file to write")
    if not out.parent.exists():
        raise ValueError(f"cannot write {out}: directory {out.parent} does not exist")
    if not out.parent.is_dir():
        raise ValueError(f"cannot write {out}: {out.parent} is not a directory")
    try:  # a write that fails here (permissions, /proc, a read-only disk) changes nothing
        if out.exists():
            with open(out, "ab"):
                pass
        else:
            fd, probe = tempfile.mkstemp(dir=out.parent, prefix=f".{out.name}.", suffix=".tmp")
            os.close(fd)
            os.unlink(probe)
    except OSError as err:
        raise ValueError(f"cannot write {out}: {err.strerror or err}") from None
    return out


def check_plot_format(path: str | os.PathLike) -> None:
    """ValueError unless matplotlib writes pictures of ``path``'s suffix (checked before the
    work whose picture it is)."""
    from matplotlib.figure import Figure

    formats = Figure().canvas.get_supported_filetypes()
    suffix = Path(path).suffix.lower().lstrip(".")
    if suffix not in formats:
        raise ValueError(
            f"cannot draw {path}: the picture's format comes from its suffix, one of "
            f"{sorted(formats)}"
        )
