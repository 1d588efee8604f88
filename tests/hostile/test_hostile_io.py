"""Standard input and files a stranger controls (issue 16, items 5-7).

- 5: ``-`` with ``--format full`` prints source lines from what was read
  on standard input, never from a file named ``stdin`` in the working
  folder (nor through a link of that name).
- 6: config search stops at the repository root; ``--config`` still
  reaches anywhere.
- 7: a file swapped for a FIFO or device after discovery does not hang the
  run: it is opened non-blocking, fstat-checked, and reported as MLC001.
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

import pytest
from fuzzing import internal_errors
from hostile_helpers import SENTINEL, SENTINEL_NAME, findings_of
from mlc_testing import run_cli

from mlcost_lint.config import Settings, load_settings
from mlcost_lint.discover import discover
from mlcost_lint.parse_stage import parse_all
from mlcost_lint.pipeline import LintOptions
from mlcost_lint.safe_io import NotRegularFile, TooLarge, read_regular

JOB = SENTINEL.decode()


# ------------------------------------------------------------ 5: stdin ---

@pytest.mark.parametrize("as_link", [False, True])
def test_full_format_of_stdin_prints_the_bytes_read_from_stdin(as_link: bool, tmp_path: Path):
    decoy = "line 1\nline 2\nline 3\nline 4\nOUTSIDE SECRET ON LINE 5\n"
    if as_link:
        (tmp_path / "outside.txt").write_text(decoy)
        work = tmp_path / "work"
        work.mkdir()
        (work / "stdin").symlink_to(tmp_path / "outside.txt")
    else:
        work = tmp_path
        (work / "stdin").write_text(decoy)
    r = run_cli("-", "--format", "full", "--no-cache", cwd=work, stdin=JOB)
    assert r.code == 1, r.err
    assert "OUTSIDE SECRET" not in r.out
    lines = r.out.splitlines()
    at = lines.index("  5:1  warning  MLC204 gpu-job-without-deadline")
    assert lines[at + 2:at + 5] == ["    |", "  5 | spec:", "    | ^^^^"]


def test_stdin_over_the_limit_shows_no_source_line_and_reads_no_file(tmp_path: Path):
    (tmp_path / "stdin").write_text("A\n" * 3 + "FROM DISK\n")
    (tmp_path / ".mlcost-lint.toml").write_text("max-file-size-mb = 0.0001\n")
    r = run_cli("-", "--format", "full", "--no-cache", cwd=tmp_path, stdin=JOB)
    assert "FROM DISK" not in r.out
    assert r.out.splitlines()[:2] == [
        "stdin", "  1:1  error  MLC001 parse-error"]


# --------------------------------------------------- 6: config search ---

def _repo_below_a_hostile_parent(tmp_path: Path) -> Path:
    (tmp_path / ".mlcost-lint.toml").write_text('select = ["MLC001"]\nmax-file-size-mb = 0.0001\n')
    repo = tmp_path / "checkout"
    (repo / ".git").mkdir(parents=True)
    (repo / "k8s").mkdir()
    (repo / "k8s" / "job.yaml").write_bytes(SENTINEL)
    return repo


def test_config_search_stops_at_the_repository_root(tmp_path: Path):
    repo = _repo_below_a_hostile_parent(tmp_path)
    settings = load_settings(None, repo / "k8s")
    assert settings.source is None and settings.select == []
    r = run_cli("k8s", "--no-cache", "--format", "json", cwd=repo)
    found = [(f["code"], f["path"], f["line"]) for f in json.loads(r.out)["findings"]]
    assert found == [("MLC204", "k8s/job.yaml", 5)]


def test_config_at_the_repository_root_is_still_found(tmp_path: Path):
    repo = _repo_below_a_hostile_parent(tmp_path)
    (repo / ".mlcost-lint.toml").write_text('ignore = ["MLC204"]\n')
    settings = load_settings(None, repo / "k8s" / "job.yaml")
    assert settings.source == str(repo / ".mlcost-lint.toml") and settings.ignore == ["MLC204"]


def test_git_file_of_a_worktree_or_submodule_is_a_repository_root(tmp_path: Path):
    repo = _repo_below_a_hostile_parent(tmp_path)
    (repo / ".git").rmdir()
    (repo / ".git").write_text("gitdir: /elsewhere\n")
    assert load_settings(None, repo / "k8s").source is None


def test_explicit_config_still_reaches_a_parent_folder(tmp_path: Path):
    repo = _repo_below_a_hostile_parent(tmp_path)
    r = run_cli("k8s", "--no-cache", "--config", str(tmp_path / ".mlcost-lint.toml"), cwd=repo)
    assert r.code == 1
    assert r.out.splitlines()[0] == ("k8s/job.yaml:1:1: MLC001 [error] file is 0.0 MB, over the 0.0 MB limit "
                                     "(max-file-size-mb); not parsed")


def test_without_a_repository_the_search_climbs_as_before(tmp_path: Path):
    (tmp_path / ".mlcost-lint.toml").write_text('ignore = ["MLC204"]\n')
    (tmp_path / "a" / "b").mkdir(parents=True)
    assert load_settings(None, tmp_path / "a" / "b").ignore == ["MLC204"]


# ------------------------------------------------- 7: FIFO and devices ---

def test_file_swapped_for_a_fifo_after_discovery_does_not_hang(tmp_path: Path, monkeypatch):
    root = tmp_path / "root"
    (root / "k8s").mkdir(parents=True)
    (root / SENTINEL_NAME).parent.mkdir(parents=True)
    (root / SENTINEL_NAME).write_bytes(SENTINEL)
    (root / "k8s" / "job.yaml").write_bytes(SENTINEL)
    monkeypatch.chdir(root)
    found = discover(["."], [], root)
    assert [f.display for f in found.files] == ["k8s/job.yaml", SENTINEL_NAME]
    (root / "k8s" / "job.yaml").unlink()
    os.mkfifo(root / "k8s" / "job.yaml")        # swapped between discovery and reading
    start = time.monotonic()
    parsed = parse_all(found.files, Settings(root=root), LintOptions(use_cache=False, jobs=1))
    assert time.monotonic() - start < 5
    assert [(e.path, e.line, e.column, e.message) for e in parsed[0].errors] == [
        ("k8s/job.yaml", 1, 1, "not a regular file (FIFO, device or socket); not read")]
    assert parsed[1].errors == [] and parsed[1].documents


def test_file_swapped_for_a_link_after_discovery_is_not_followed(tmp_path: Path, monkeypatch):
    root = tmp_path / "root"
    root.mkdir()
    (tmp_path / "outside.yaml").write_bytes(SENTINEL)
    (root / "job.yaml").write_bytes(b"apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\n")
    monkeypatch.chdir(root)
    found = discover(["."], [], root)
    (root / "job.yaml").unlink()
    (root / "job.yaml").symlink_to(tmp_path / "outside.yaml")
    parsed = parse_all(found.files, Settings(root=root), LintOptions(use_cache=False, jobs=1))
    assert [e.message for e in parsed[0].errors] == ["cannot read file: Too many levels of symbolic links"]
    assert parsed[0].documents == []


def test_full_format_does_not_hang_when_a_reported_file_becomes_a_fifo(tmp_path: Path, monkeypatch):
    from fuzzing import lint_tree

    from mlcost_lint.report import ReportInput, read_source_lines
    from mlcost_lint.report.full import render

    root = tmp_path / "root"
    (root / SENTINEL_NAME).parent.mkdir(parents=True)
    (root / SENTINEL_NAME).write_bytes(SENTINEL)
    result = lint_tree(root)
    assert internal_errors(result) == []
    monkeypatch.chdir(root)
    (root / SENTINEL_NAME).unlink()
    os.mkfifo(root / SENTINEL_NAME)
    start = time.monotonic()
    assert read_source_lines(SENTINEL_NAME) is None
    out = render(ReportInput(result.findings, [], 1))
    assert time.monotonic() - start < 5
    assert out.splitlines()[:3] == [
        SENTINEL_NAME, "  5:1  warning  MLC204",
        "  Job sentinel holds 1 GPU with no run-time bound; a hung run keeps it until someone notices: "
        "set spec.activeDeadlineSeconds (price unknown)"]


@pytest.mark.skipif(not os.path.exists("/dev/zero"), reason="needs /dev/zero")
def test_read_regular_refuses_devices_and_bounds_regular_files(tmp_path: Path):
    with pytest.raises(NotRegularFile):
        read_regular("/dev/zero", 100)
    os.mkfifo(tmp_path / "fifo")
    with pytest.raises(NotRegularFile):
        read_regular(tmp_path / "fifo", 100)
    (tmp_path / "big").write_bytes(b"x" * 101)
    with pytest.raises(TooLarge) as big:
        read_regular(tmp_path / "big", 100)
    assert big.value.size == 101
    assert read_regular(tmp_path / "big", 101) == b"x" * 101
    (tmp_path / "link").symlink_to(tmp_path / "big")
    with pytest.raises(OSError):
        read_regular(tmp_path / "link", 1000, follow_links=False)
    assert read_regular(tmp_path / "link", 1000) == b"x" * 101


def test_explicit_fifo_on_the_command_line_is_mlc001_through_the_cli(tmp_path: Path):
    os.mkfifo(tmp_path / "pipe.yaml")
    (tmp_path / "job.yaml").write_bytes(SENTINEL)
    r = run_cli("pipe.yaml", "job.yaml", "--no-cache", timeout=30, cwd=tmp_path)
    assert r.out.splitlines()[:2] == [
        "job.yaml:5:1: MLC204 [warning] Job sentinel holds 1 GPU with no run-time bound; a hung run keeps it "
        "until someone notices: set spec.activeDeadlineSeconds (price unknown)",
        "pipe.yaml:1:1: MLC001 [error] not a regular file or folder; not read",
    ]


def test_read_regular_reads_every_byte_whatever_the_size_fstat_gave(tmp_path: Path, monkeypatch):
    # One read of fstat's size and a byte more ends a file of that size; a
    # file that grew since fstat (or shrank) is read on to its end, within the bound.
    import mlcost_lint.safe_io as safe_io

    for size in (0, 1, 4095, 65536, (1 << 20) + 7, 3 * (1 << 20)):
        data = bytes(range(256)) * (size // 256) + b"x" * (size % 256)
        (tmp_path / "f").write_bytes(data)
        assert read_regular(tmp_path / "f", 4 << 20) == data
    real_fstat = os.fstat

    class Stale:
        def __init__(self, st, size):
            self._st, self.st_size = st, size

        def __getattr__(self, name):
            return getattr(self._st, name)

    data = b"y" * 5000
    (tmp_path / "f").write_bytes(data)
    for reported in (10, 4999, 5001, 0):      # grew since, by 1 byte and more; shrank; was empty
        monkeypatch.setattr(safe_io.os, "fstat", lambda fd, n=reported: Stale(real_fstat(fd), n))
        assert read_regular(tmp_path / "f", 10_000) == data
        with pytest.raises(TooLarge):
            read_regular(tmp_path / "f", 4000 if reported < 4000 else 4999)
    monkeypatch.setattr(safe_io.os, "fstat", real_fstat)
