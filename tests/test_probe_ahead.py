"""Stats taken ahead by a helper process (mlcost_lint.probe_ahead): the same
answers as stat'ing here, a fallback when the helper fails, and a pre-commit
hook that uses them reports what it reports without them."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from mlc_testing import GPU_JOB

import mlcost_lint.file_index as file_index
import mlcost_lint.probe_ahead as probe_ahead
from mlcost_lint.config import load_settings
from mlcost_lint.discover import SourceFile
from mlcost_lint.parse.document import FileKind
from mlcost_lint.pipeline import LintOptions, lint

pytestmark = pytest.mark.skipif(not hasattr(os, "posix_spawn"),
                                reason="no posix_spawn on this system: stats are taken in-process")


def _files(tmp_path: Path) -> list[SourceFile]:
    (tmp_path / "a.yaml").write_text("kind: Pod\n")
    (tmp_path / "big.yaml").write_bytes(b"x: 1\n" * 1000)
    (tmp_path / "folder.yaml").mkdir()                       # not a regular file
    (tmp_path / "link.yaml").symlink_to(tmp_path / "a.yaml")  # walked: not followed
    return [SourceFile(str(tmp_path / name), name, FileKind.YAML, follow=follow)
            for name, follow in [("a.yaml", False), ("big.yaml", False), ("folder.yaml", False),
                                 ("link.yaml", False), ("link.yaml", True), ("gone.yaml", False)]]


def _result(files: list[SourceFile]) -> list | None:
    """What a helper started on ``files`` answers (one must start)."""
    ahead = probe_ahead.ProbesAhead.start(files)
    assert ahead is not None
    return ahead.result()


def test_the_helper_answers_as_a_stat_here_would(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setattr(probe_ahead, "MIN_FILES", 1)
    monkeypatch.setattr(probe_ahead, "HELPER_SHARE", 1.0)
    files = _files(tmp_path)
    got = _result(files)
    here = [probe_ahead.probe(sf.path, sf.follow) for sf in files]
    assert got is not None and len(got) == len(files)
    assert got[:5] == here[:5]
    assert [g[0] for g in got[:5]] == [True, True, False, False, True]
    # a file that cannot be stat'ed: None here, a non-regular probe of size -1 from the helper;
    # both are read (and fail) as before, and neither is recorded in the file index
    assert here[5] is None and got[5] == (False, 0, 0, -1, 0, 0)
    assert file_index.stamp_of(got[5], "yaml") is None


def test_the_files_past_the_helpers_share_are_stat_ed_here(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setattr(probe_ahead, "MIN_FILES", 1)
    monkeypatch.setattr(probe_ahead, "HELPER_SHARE", 0.5)
    files = _files(tmp_path)
    assert _result(files) == [probe_ahead.probe(sf.path, sf.follow) for sf in files]   # gone.yaml: None, here


def test_too_few_files_or_no_way_to_start_the_helper_take_none(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    files = _files(tmp_path)
    assert probe_ahead.ProbesAhead.start(files) is None      # MIN_FILES
    monkeypatch.setattr(probe_ahead, "MIN_FILES", 1)
    monkeypatch.setattr(probe_ahead, "_can_spawn", lambda: False)
    assert probe_ahead.ProbesAhead.start(files) is None
    monkeypatch.setattr(probe_ahead, "_can_spawn", lambda: True)
    monkeypatch.setattr(probe_ahead, "_MAX_PATHS_BYTES", 10)   # more paths than a pipe would hold
    assert probe_ahead.ProbesAhead.start(files) is None


@pytest.mark.parametrize("helper", [
    "import sys; sys.stdout.buffer.write(bytes(10)); sys.exit(1)",     # a partial answer, then an error
    "import sys; sys.stdout.buffer.write(bytes(41))",                  # a short answer
    "raise SystemExit(3)",
])
def test_a_helper_that_fails_leaves_the_stats_to_the_caller(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                            capfd: pytest.CaptureFixture, helper: str):
    monkeypatch.setattr(probe_ahead, "MIN_FILES", 1)
    monkeypatch.setattr(probe_ahead, "_HELPER", helper + "\nraise RuntimeError('a traceback nobody sees')")
    assert _result(_files(tmp_path)) is None
    assert capfd.readouterr().err == ""      # the helper's standard error is the null device


def test_a_hook_with_stats_ahead_reports_what_it_reports_without(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "home"))
    monkeypatch.setattr(file_index, "RACY_SECONDS", 0)   # files written just now count as settled
    root = tmp_path / "project"
    (root / "k8s").mkdir(parents=True)
    for i in range(6):
        (root / "k8s" / f"job-{i}.yaml").write_text(GPU_JOB.format(name=f"train-{i}", gpus=4))
    monkeypatch.chdir(root)
    settings = load_settings(None, root)

    def hook(cache: str) -> list:
        result = lint([".", "k8s/job-2.yaml"], settings,
                      LintOptions(cache_dir=root.parent / cache, jobs=2, report_paths=frozenset({"k8s/job-2.yaml"})))
        return [(f.code, f.location, f.message) for f in result.findings]

    taken = []
    real_start = probe_ahead.ProbesAhead.start

    def spying(files):
        ahead = real_start(files)
        taken.append(ahead is not None)
        return ahead

    monkeypatch.setattr(probe_ahead.ProbesAhead, "start", staticmethod(spying))
    lint(["."], settings, LintOptions(cache_dir=root.parent / "without", jobs=2))   # the index a hook slices
    lint(["."], settings, LintOptions(cache_dir=root.parent / "with", jobs=2))
    (root / "k8s" / "job-2.yaml").write_text(GPU_JOB.format(name="train-2", gpus=8))
    without = hook("without")
    monkeypatch.setattr(probe_ahead, "MIN_FILES", 1)
    with_helper = hook("with")
    assert taken == [False, True]     # whole runs take no helper; the second hook did
    assert with_helper == without and with_helper
    assert all(loc.path == "k8s/job-2.yaml" for _, loc, _ in with_helper)


def test_a_hook_with_stats_ahead_uses_the_summary_loaded_ahead_only_for_the_same_terraform(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    # The helper's hook loads the Terraform summary of the index's own .tf
    # files while the helper stats the tree (slice_plan.SlicePlan.preload):
    # used when no .tf file changed since, else the summary of the new
    # content is looked up (none yet: Terraform is read whole), as without.
    import shutil

    from mlc_testing import FIXTURES

    import mlcost_lint.project_slice as project_slice

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "home"))
    monkeypatch.setattr(file_index, "RACY_SECONDS", 0)
    root = tmp_path / "demo"
    shutil.copytree(FIXTURES / "demo", root)
    monkeypatch.chdir(root)
    settings = load_settings(None, root)
    whole = lint(["."], settings, LintOptions(cache_dir=tmp_path / "cache", jobs=2))
    config = next(c.path for c in whole.project.training
                  if not c.embedded_in and not c.launch_line and c.path.endswith((".yaml", ".yml")))
    terraform = sorted(pf.path for pf in whole.files if pf.path.endswith(".tf"))[0]
    loaded: list[str] = []      # each summary looked up, found or not, before or after the helper answered
    real_load, real_result = project_slice.load_summary, probe_ahead.ProbesAhead.result

    def spying(cache, key):
        found = real_load(cache, key)
        loaded.append(("found" if found is not None else "none") + (" after" if "stats" in loaded else " ahead"))
        return found

    def result(self):
        loaded.append("stats")
        return real_result(self)

    monkeypatch.setattr(project_slice, "load_summary", spying)
    monkeypatch.setattr(probe_ahead.ProbesAhead, "result", result)
    monkeypatch.setattr(probe_ahead, "MIN_FILES", 1)

    def hook(turn: int):
        (root / config).write_bytes((root / config).read_bytes() + f"\n# hook {turn}\n".encode())
        loaded.clear()
        result = lint([".", config], settings, LintOptions(cache_dir=tmp_path / "cache", jobs=2,
                                                            report_paths=frozenset({config})))
        again = lint(["."], settings, LintOptions(cache_dir=tmp_path / f"elsewhere{turn}", jobs=2))
        assert [(f.code, f.location, f.message) for f in result.findings] == \
            [(f.code, f.location, f.message) for f in again.findings if f.location.path == config]
        return {pf.path for pf in result.files}, list(loaded)

    read, summaries = hook(0)
    assert terraform not in read and summaries == ["found ahead", "stats"]      # loaded ahead, once, and used
    (root / terraform).write_bytes((root / terraform).read_bytes() + b"\nlocals {\n  edited = 1\n}\n")
    read, summaries = hook(1)
    # the old one ahead; none kept of the new content
    assert terraform in read and summaries == ["found ahead", "stats", "none after"]
    read, summaries = hook(2)
    assert terraform not in read and summaries == ["found ahead", "stats"]      # the summary that run left
