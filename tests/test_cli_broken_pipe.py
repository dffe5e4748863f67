"""A reader that leaves early (``spieltisch play ... | head``) ends the command quietly: it
ended in a BrokenPipeError traceback and exit status 1."""

from __future__ import annotations

import subprocess
import sys


def test_a_closed_pipe_ends_the_command_without_a_traceback():
    command = [sys.executable, "-m", "spieltisch.train.cli", "play", "kalaha", "--games", "200"]
    proc = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert proc.stdout.readline().startswith(b"=== game 1")
    proc.stdout.close()  # as `head -1` does
    _, err = proc.communicate(timeout=120)
    assert proc.returncode == 141, err.decode()
    assert b"Traceback" not in err and b"BrokenPipe" not in err
