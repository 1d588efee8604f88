"""The file index (mlcost_lint.file_index): an unchanged file is not read
again, a changed one always is, even with its size and mtime put back."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from mlc_testing import GPU_JOB

import mlcost_lint.file_index as file_index
import mlcost_lint.safe_io as safe_io
from mlcost_lint.config import load_settings
from mlcost_lint.pipeline import LintOptions, lint


def _run(tmp_path: Path):
    settings = load_settings(None, tmp_path)
    return lint(["."], settings, LintOptions(cache_dir=tmp_path / "cache", jobs=1))


def test_unchanged_files_are_not_read_and_a_changed_file_is(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "home"))
    tmp_path = tmp_path / "project"
    tmp_path.mkdir()
    monkeypatch.setattr(file_index, "RACY_SECONDS", 0)   # files written just now count as settled
    monkeypatch.chdir(tmp_path)
    (tmp_path / "k8s").mkdir()
    job = tmp_path / "k8s" / "job.yaml"
    job.write_text(GPU_JOB.format(name="train", gpus=4))
    (tmp_path / "k8s" / "other.yaml").write_text(GPU_JOB.format(name="other", gpus=2))
    first = _run(tmp_path)

    reads = []
    real = safe_io.read_regular

    def counting(path, *args, **kwargs):
        reads.append(str(path))
        return real(path, *args, **kwargs)

    monkeypatch.setattr(safe_io, "read_regular", counting)
    second = _run(tmp_path)
    assert [r for r in reads if "k8s" in r] == []
    assert [(f.code, f.location, f.message) for f in second.findings] == \
        [(f.code, f.location, f.message) for f in first.findings]

    # Same size, mtime put back: the change time still differs, so it is read again.
    before = job.stat()
    job.write_text(GPU_JOB.format(name="train", gpus=8))
    os.utime(job, ns=(before.st_atime_ns, before.st_mtime_ns))
    assert job.stat().st_size == before.st_size
    reads.clear()
    third = _run(tmp_path)
    assert [Path(r).name for r in reads if "k8s" in r] == ["job.yaml"]
    cold = lint(["."], load_settings(None, tmp_path), LintOptions(use_cache=False, jobs=1))
    assert [(f.code, f.location, f.message) for f in third.findings] == \
        [(f.code, f.location, f.message) for f in cold.findings]


def test_a_file_changed_just_before_the_run_is_not_recorded(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "home"))
    tmp_path = tmp_path / "project"
    tmp_path.mkdir()
    monkeypatch.chdir(tmp_path)
    (tmp_path / "job.yaml").write_text(GPU_JOB.format(name="train", gpus=4))
    _run(tmp_path)
    reads = []
    real = safe_io.read_regular
    monkeypatch.setattr(safe_io, "read_regular", lambda path, *a, **k: reads.append(str(path)) or real(path, *a, **k))
    _run(tmp_path)     # written under RACY_SECONDS ago: read and hashed again
    assert [Path(r).name for r in reads] == ["job.yaml"]


def test_known_keys_only_for_regular_files_whose_stat_is_as_recorded():
    from mlcost_lint.discover import SourceFile
    from mlcost_lint.file_index import FileIndex
    from mlcost_lint.parse.document import FileKind

    class NoCache:
        salt = b""

    index = FileIndex(NoCache(), "k")
    stat = (7, 100, 50, 10, 11)     # dev, inode, size, mtime, ctime
    names = ["same", "touched", "fifo", "big", "unknown", "odd", "gone", "other-kind"]
    index.entries = {name: ((*stat, "yaml"), f"key-{name}") for name in names}
    index.entries["odd"] = ("not", "a stamp", "pair")
    index.entries["other-kind"] = ((*stat, "terraform"), "key-other-kind")
    del index.entries["unknown"]
    probes = {"same": (True, *stat), "touched": (True, 7, 100, 50, 12, 13), "fifo": (False, *stat),
              "big": (True, 7, 100, 50, 10, 11), "unknown": (True, *stat), "odd": (True, *stat), "gone": None,
              "other-kind": (True, *stat)}
    files = [SourceFile(name, name, FileKind.YAML) for name in names]
    keys = index.known_keys(files, [probes[n] for n in names], max_bytes=50)
    assert keys == ["key-same", None, None, "key-big", None, None, None, None]
    assert index.known_keys(files[3:4], [probes["big"]], max_bytes=49) == [None]     # over the size limit
    assert sorted(index.seen) == ["big", "same"]
