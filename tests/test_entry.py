"""The console script's end (entry._exit): the standard streams flushed,
the exit code kept, the interpreter's shutdown skipped; anything unusual
ends the usual way. In a fresh interpreter each: _exit ends the process."""

from __future__ import annotations

import subprocess
import sys

import pytest

_DRIVER = """
import atexit, sys
atexit.register(lambda: sys.stderr.write("shutdown ran\\n"))
sys.stdout.write("x" * 200_000)     # more than a pipe holds: buffered until the flush
sys.stderr.write("on stderr\\n")
from mlcost_lint.entry import _exit
_exit({code!r})
"""


@pytest.mark.parametrize("code, status", [(0, 0), (1, 1), (2, 2), (None, 0)])
def test_a_numeric_code_flushes_both_streams_and_skips_the_shutdown(code, status):
    r = subprocess.run([sys.executable, "-c", _DRIVER.format(code=code)], capture_output=True, timeout=60)
    assert r.returncode == status
    assert r.stdout == b"x" * 200_000
    assert r.stderr == b"on stderr\n"


def test_a_message_for_a_code_ends_the_usual_way():
    r = subprocess.run([sys.executable, "-c", _DRIVER.format(code="bad input")], capture_output=True, timeout=60)
    assert r.returncode == 1
    assert r.stdout == b"x" * 200_000
    assert r.stderr == b"on stderr\nbad input\nshutdown ran\n"


def test_the_console_script_exits_with_the_cli_s_code(tmp_path):
    (tmp_path / "job.yaml").write_text("apiVersion: batch/v1\nkind: Job\nmetadata:\n  name: t\nspec:\n  template:\n"
                                       "    spec:\n      restartPolicy: Never\n      containers:\n        - name: t\n"
                                       "          image: ghcr.io/acme/train:1\n          resources:\n"
                                       "            limits:\n              nvidia.com/gpu: 8\n")
    for args, status in ((["job.yaml", "--no-cache"], 1), (["job.yaml", "--no-cache", "--exit-zero"], 0),
                         (["--no-such-option"], 2), (["--version"], 0)):
        r = subprocess.run([sys.executable, "-m", "mlcost_lint", *args], cwd=tmp_path, capture_output=True,
                           timeout=120)
        assert r.returncode == status, (args, r.stderr)
    assert b"MLC" in subprocess.run([sys.executable, "-m", "mlcost_lint", "job.yaml", "--no-cache"], cwd=tmp_path,
                                    capture_output=True, timeout=120).stdout
