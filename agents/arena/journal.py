"""An arena journal: every finished game of an evaluation, one JSON line each, so that a killed
evaluation continues where it stopped (``spieltisch eval ... --journal FILE``).

The arena's games reproduce from their seed and seat order whatever the number of workers, so
a game recorded once need not be played again: :func:`~.evaluation.play_table` skips the games
its journal holds and plays the rest. The first line says which games the file holds (the game,
its options, the random opening plies, the move time limit); a journal of other games is
refused rather than mixed in. Each later line is one game of one table of agents (their names in
table order) with its result. More seeds than recorded extend a journal; a line cut short by a
kill is dropped when the journal is opened again.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

FORMAT = "spieltisch-arena-journal"
VERSION = 1


class ArenaJournal:
    """The games recorded in a journal file; :meth:`append` records more (each write opens the
    file, so nothing is held open between games and there is nothing to close)."""

    def __init__(
        self,
        path: str | os.PathLike,
        header: dict[str, Any],
        same: Callable[[dict[str, Any]], dict[str, Any]] | None = None,
    ) -> None:
        """Open (or start) the journal at ``path`` for games described by ``header`` (JSON
        values); ValueError if the file holds other games or is not a journal. ``same(header)``,
        if given, is what two headers are compared by (e.g. the options with their defaults, so
        that an option given at its default value describes the same games)."""
        self.path = Path(path)
        self.header = {"format": FORMAT, "version": VERSION, **header}
        self._same = same or (lambda h: h)
        self.entries: list[dict[str, Any]] = []
        lines = self._complete_lines() if self.path.exists() else []
        if lines:
            self._read(lines)
        else:  # a new journal (or one killed before its first line was whole)
            self._write(self.header)

    def _complete_lines(self) -> list[str]:
        """The file's whole lines; a last line cut short (a kill while writing) is dropped
        from the file too, so that the next record starts on a line of its own. A file that
        does not begin as a journal raises ValueError first and is left as it is."""
        data = self.path.read_bytes()
        first_end = data.find(b"\n")
        opening = ('{"format": ' + json.dumps(FORMAT)).encode()
        if first_end < 0:  # not even the header is whole: a journal killed at its start?
            if not opening.startswith(data[: len(opening)]):
                raise ValueError(f"{self.path} is not an arena journal")
        elif not _is_header(data[:first_end]):
            raise ValueError(f"{self.path} is not an arena journal")
        end = data.rfind(b"\n") + 1
        if end < len(data):
            with open(self.path, "r+b") as f:
                f.truncate(end)
        return data[:end].decode(errors="replace").splitlines()

    def _read(self, lines: list[str]) -> None:
        recorded = json.loads(lines[0])  # (a header: checked by _complete_lines)
        there, here = self._same(recorded), self._same(self.header)
        if there != here:
            differ = _differences(there, here)
            raise ValueError(
                f"{self.path} records other games ({'; '.join(differ)}); give another journal"
            )
        for number, line in enumerate(lines[1:], start=2):
            try:
                entry = json.loads(line)
            except json.JSONDecodeError as err:
                raise ValueError(f"{self.path}, line {number}: not JSON ({err.msg})") from None
            if not isinstance(entry, dict) or not {"agents", "result"} <= entry.keys():
                raise ValueError(f"{self.path}, line {number}: not a recorded game")
            self.entries.append(entry)

    def recorded(self, agents: list[str]) -> list[dict[str, Any]]:
        """The results recorded for the table ``agents`` (names in table order)."""
        return [e["result"] for e in self.entries if e["agents"] == agents]

    def append(self, agents: list[str], result: dict[str, Any]) -> None:
        """Record one finished game of the table ``agents``, on disk before this returns."""
        entry = {"agents": agents, "result": result}
        self._write(entry)
        # recorded at once: a later table of the same names in this run (a round robin that
        # lists a name twice) takes the game as played instead of playing and recording it again
        self.entries.append(entry)

    def _write(self, value: dict[str, Any]) -> None:
        with open(self.path, "a") as f:
            f.write(json.dumps(value) + "\n")
            f.flush()
            os.fsync(f.fileno())


def _is_header(line: bytes) -> bool:
    """Whether ``line`` is a journal's first line."""
    try:
        recorded = json.loads(line.decode())
    except (UnicodeDecodeError, json.JSONDecodeError):
        return False
    return isinstance(recorded, dict) and recorded.get("format") == FORMAT


def _differences(there: dict[str, Any], here: dict[str, Any], prefix: str = "") -> list[str]:
    """What differs between two headers, ``key: value there, value here`` (inside a dict
    value such as the options, key by key: ``options.pits: 4 there, 5 here``)."""
    out = []
    for key in sorted(here.keys() | there.keys()):
        a, b = there.get(key), here.get(key)
        if isinstance(a, dict) and isinstance(b, dict):
            out += _differences(a, b, f"{prefix}{key}.")
        elif a != b:
            out.append(f"{prefix}{key}: {a!r} there, {b!r} here")
    return out
