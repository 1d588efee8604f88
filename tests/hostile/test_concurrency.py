"""Concurrency: runs sharing one cache directory at the same time all finish
with the results of an uncached run, on a tree large enough that they
really overlap (parallel parsing, hundreds of cache writes, pruning), with
broken files in it, and with the cache torn up under them."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest


def _cmd(*args: str) -> list[str]:
    return [sys.executable, "-m", "mlcost_lint", ".", "--format", "json", "--exit-zero", "--select", "ALL", *args]


def _env() -> dict[str, str]:
    return {**os.environ, "NO_COLOR": "1"}


def _start(tree: Path, *args: str) -> subprocess.Popen:
    """Output to temporary files, not pipes: a full pipe would stall a run
    that is being watched rather than read."""
    import tempfile

    out, err = tempfile.TemporaryFile(), tempfile.TemporaryFile()
    proc = subprocess.Popen(_cmd(*args), cwd=tree, stdout=out, stderr=err, env=_env())
    proc.files = (out, err)  # type: ignore[attr-defined]
    return proc


def _read(f) -> bytes:
    f.seek(0)
    data = f.read()
    f.close()
    return data


def _finish(procs: list[subprocess.Popen]) -> list[tuple[bytes, bytes]]:
    for p in procs:
        p.wait(timeout=300)
    outs = [(_read(p.files[0]), _read(p.files[1])) for p in procs]  # type: ignore[attr-defined]
    assert [p.returncode for p in procs] == [0] * len(procs), [o[1].decode()[-2000:] for o in outs]
    for _, err in outs:
        assert b"Traceback" not in err and b"internal error" not in err
    return outs


@pytest.fixture(scope="module")
def expected(hostile_tree: Path) -> bytes:
    if not (hostile_tree / "kubeflow").is_dir():
        pytest.skip("../shared/corpus is not beside the repository: the tree is too small for runs to overlap")
    out = subprocess.run(_cmd("--no-cache"), cwd=hostile_tree, capture_output=True, timeout=300, env=_env()).stdout
    # A large report (v2 no longer reports per-step logging, which was most of it before).
    assert out.count(b'"code"') > 100 and b'"MLC001"' in out
    return out


def test_runs_sharing_a_cache_at_once(hostile_tree: Path, expected: bytes, tmp_path: Path):
    """Two cold runs (serial and parallel parsing) write the same few hundred
    entries at the same time; both give the uncached result."""
    shared = str(tmp_path / "shared")
    cold = _finish([_start(hostile_tree, "--cache-dir", shared, "--jobs", str(1 + i)) for i in range(2)])
    assert all(out == expected for out, _ in cold)
    assert len(list(Path(shared).rglob("*.pkl"))) > 300


def test_cache_deleted_and_corrupted_during_runs(hostile_tree: Path, expected: bytes, tmp_path: Path):
    """Another process scribbles over cache entries and removes the folder
    while two runs use it: entries are verified, writes are atomic, a
    missing folder is recreated, so both still give the uncached result."""
    shared = tmp_path / "shared"
    procs = [_start(hostile_tree, "--cache-dir", str(shared), "--jobs", "2") for _ in range(2)]
    deadline = time.monotonic() + 120
    while any(p.poll() is None for p in procs) and time.monotonic() < deadline:
        for entry in list(shared.rglob("*.pkl"))[:50]:
            try:
                entry.write_bytes(b"garbage")
            except OSError:
                pass
        shutil.rmtree(shared, ignore_errors=True)
        time.sleep(0.05)
    assert all(out == expected for out, _ in _finish(procs))
