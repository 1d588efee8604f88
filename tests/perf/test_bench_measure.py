"""bench/run.py's ``measure``: how one run is timed, bounded and judged.

No speed is asserted here (bench/ measures speed): only that a run is
waited for until it ends, that one past its timeout is killed and marked
so, and that an exit code outside the accepted ones marks it failed.
"""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parents[2] / "bench"
sys.path.insert(0, str(BENCH))

import run  # noqa: E402

pytestmark = pytest.mark.skipif(shutil.which("sleep") is None or shutil.which("sh") is None,
                                reason="needs the sleep and sh commands")


def test_a_run_is_waited_for_until_it_ends(tmp_path: Path) -> None:
    sample = run.measure(["sleep", "0.2"], tmp_path, timeout=30)
    assert not sample.timed_out and not sample.failed
    assert sample.rc == 0
    assert sample.wall >= 0.2


def test_a_run_past_its_timeout_is_killed_and_marked(tmp_path: Path) -> None:
    sample = run.measure(["sleep", "30"], tmp_path, timeout=0.3)
    assert sample.timed_out and not sample.failed
    assert 0.3 <= sample.wall < 20     # killed, not waited out


def test_a_run_with_an_unaccepted_exit_code_failed(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    sample = run.measure(["sh", "-c", "echo boom >&2; exit 3"], tmp_path, timeout=30)
    assert sample.failed and not sample.timed_out
    assert sample.rc == 3
    assert "exited 3: boom" in capsys.readouterr().err
    assert not run.measure(["sh", "-c", "exit 1"], tmp_path, timeout=30, ok_codes=(0, 1)).failed
