"""Folder walks kept between runs (mlcost_lint.discover_cache): a recorded
walk is used only while nothing it read has moved (a folder that lists what
the walk saw aside), and then gives exactly what walking gives."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from mlcost_lint import discover as discover_mod
from mlcost_lint import discover_cache as discover_cache_mod
from mlcost_lint.cache import ParseCache
from mlcost_lint.discover import discover
from mlcost_lint.discover_cache import WalkCache

GPU_JOB = """apiVersion: batch/v1
kind: Job
metadata: {name: train}
spec:
  template:
    spec:
      containers:
      - name: t
        image: trainer
        resources: {limits: {nvidia.com/gpu: 8}}
      restartPolicy: Never
"""


def _touch(root: Path, rel: str, text: str = "x: 1\n") -> Path:
    p = root / rel
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_text(text)
    return p


def _tree(root: Path) -> Path:
    _touch(root, "infra/main.tf", 'resource "aws_s3_bucket" "b" {}\n')
    _touch(root, "k8s/jobs/train.yaml", GPU_JOB)
    _touch(root, "k8s/jobs/old/legacy.yaml")
    _touch(root, "configs/ds.json", "{}")
    _touch(root, "configs/notes.txt", "not ours")
    _touch(root, "scripts/launch", "#!/bin/bash\n#SBATCH --gres=gpu:8\nsrun python train.py\n")
    _touch(root, "scripts/README", "plain text\n")
    _touch(root, "build/out.yaml")
    _touch(root, "venv2/pyvenv.cfg", "home = /usr\n")
    _touch(root, "venv2/lib/x.yaml")
    _touch(root, ".gitignore", "build/\n*.log.yaml\n")
    _touch(root, "k8s/debug.log.yaml")
    _touch(root, "vendor/skip.yaml")
    os.symlink(root / "configs", root / "linked-configs")
    os.symlink(root / "configs" / "ds.json", root / "k8s" / "ds-link.json")
    # A link to a file outside the tree, named as an excluded folder would be.
    _touch(root.parent, "outside/target")
    os.symlink(root.parent / "outside" / "target", root / "k8s" / "vendor")
    return root


def _discover(root: Path, walks: WalkCache | None):
    return discover([str(root)], ["vendor"], root, cwd=root.parent, respect_gitignore=True, walks=walks)


def _same(a, b) -> None:
    assert a.files == b.files
    assert a.skipped == b.skipped
    assert a.errors == b.errors
    assert a.watched == b.watched


@pytest.fixture
def counted(monkeypatch):
    """How many folder walks ran (not taken from a record)."""
    calls = []
    real = discover_mod.walk_folder

    def walk(*args, **kwargs):
        calls.append(args[0])
        return real(*args, **kwargs)

    monkeypatch.setattr(discover_mod, "walk_folder", walk)
    return calls


def _walks(tmp_path: Path) -> WalkCache:
    return WalkCache(ParseCache(tmp_path / "cache", "test"))


def _settled() -> None:
    # Records are written only for stamps older than the margin (set to 0
    # here): let the clock move past the last write.
    time.sleep(0.02)


def test_a_recorded_walk_gives_exactly_what_walking_gives(tmp_path, monkeypatch, counted):
    monkeypatch.setenv("_MLCOST_LINT_REPLAY_MARGIN_NS", "0")
    root = _tree(tmp_path / "p")
    _settled()
    fresh = _discover(root, None)
    first = _discover(root, _walks(tmp_path))
    second = _discover(root, _walks(tmp_path))
    assert len(counted) == 2        # no cache, then the run that recorded; the third was the record
    _same(first, fresh)
    _same(second, fresh)
    found = {sf.display for sf in second.files}
    assert "p/k8s/jobs/train.yaml" in found and "p/scripts/launch" in found
    assert not found & {"p/build/out.yaml", "p/k8s/debug.log.yaml", "p/vendor/skip.yaml", "p/venv2/lib/x.yaml",
                        "p/scripts/README", "p/k8s/ds-link.json"}
    assert {s.display for s in second.skipped} >= {"p/build", "p/k8s/debug.log.yaml", "p/vendor"}


def _change_gitignore(root: Path) -> None:
    (root / ".gitignore").write_text("build/\n")        # the same folder listing: only the file's own stamp


def _ignore_below(root: Path) -> None:
    _touch(root, "k8s/jobs/.gitignore", "train.yaml\n")


def _add_deep(root: Path) -> None:
    _touch(root, "k8s/jobs/old/new.yaml")


def _remove(root: Path) -> None:
    (root / "k8s/jobs/old/legacy.yaml").unlink()


def _rename_folder(root: Path) -> None:
    (root / "k8s/jobs/old").rename(root / "k8s/jobs/older")


def _make_venv(root: Path) -> None:
    _touch(root, "k8s/jobs/pyvenv.cfg", "home = /usr\n")


def _unsniff(root: Path) -> None:
    (root / "scripts/launch").write_text("plain text now\n")


def _retarget_link(root: Path) -> None:
    # No folder of the tree changes, only what the link points at: now a
    # folder, and so an excluded one (a Skip) where a file link was nothing.
    target = root.parent / "outside" / "target"
    target.unlink()
    target.mkdir()


def _git_above(root: Path) -> None:
    # A repository above the project: its ignore files now apply.
    (root.parent / ".git").mkdir()
    _touch(root.parent, ".gitignore", "p/configs/\n")


def _replace_folder(root: Path) -> None:
    # Another folder under the same name, listing the same names.
    (root / "k8s/jobs").rename(root / "k8s/jobs-was")
    _touch(root, "k8s/jobs/train.yaml", GPU_JOB)
    _touch(root, "k8s/jobs/old/legacy.yaml")
    (root / "k8s/jobs-was").rename(root.parent / "attic")     # out of the tree: no listing above changes


def _file_becomes_link(root: Path) -> None:
    job = root / "k8s/jobs/train.yaml"
    job.unlink()
    os.symlink(root / "configs" / "ds.json", job)


def _file_becomes_fifo(root: Path) -> None:
    job = root / "k8s/jobs/old/legacy.yaml"
    job.unlink()
    os.mkfifo(job)


@pytest.fixture
def rewalked(monkeypatch):
    """The folders walked again alone (discover.rewalk_folders), per call."""
    calls = []
    real = discover_cache_mod.rewalk_folders

    def rewalk(recorded, folders, *args):
        calls.append(sorted(folders))
        return real(recorded, folders, *args)

    monkeypatch.setattr(discover_cache_mod, "rewalk_folders", rewalk)
    return calls


def _recorded_then_changed(tmp_path, monkeypatch, change):
    """A walk recorded, ``change`` made, and the next run's discovery: (root, before, after)."""
    monkeypatch.setenv("_MLCOST_LINT_REPLAY_MARGIN_NS", "0")
    root = _tree(tmp_path / "p")
    _settled()
    before = _discover(root, _walks(tmp_path))
    change(root)
    _settled()
    return root, before, _discover(root, _walks(tmp_path))


# What the walk read besides folder listings: the whole folder walked again.
@pytest.mark.parametrize("change", [_change_gitignore, _unsniff, _retarget_link, _git_above])
def test_a_change_to_anything_the_walk_read_walks_again(tmp_path, monkeypatch, counted, rewalked, change):
    root, before, after = _recorded_then_changed(tmp_path, monkeypatch, change)
    assert len(counted) == 2 and rewalked == [], "the record was used after the change"
    _same(after, _discover(root, None))
    assert (after.files, after.skipped) != (before.files, before.skipped)


# A folder that lists other names (or is another folder): that folder walked again, with what is under it.
@pytest.mark.parametrize("change, folders", [
    (_ignore_below, ["k8s/jobs"]), (_add_deep, ["k8s/jobs/old"]), (_remove, ["k8s/jobs/old"]),
    (_rename_folder, ["k8s/jobs"]), (_make_venv, ["k8s/jobs"]), (_replace_folder, ["k8s/jobs", "k8s/jobs/old"]),
    (_file_becomes_link, ["k8s/jobs"]), (_file_becomes_fifo, ["k8s/jobs/old"])])
def test_a_folder_that_lists_other_names_is_walked_again_alone(tmp_path, monkeypatch, counted, rewalked, change,
                                                                folders):
    root, before, after = _recorded_then_changed(tmp_path, monkeypatch, change)
    assert len(counted) == 1, "the whole folder was walked again"
    assert rewalked == [[str(root / f) for f in folders]]
    _same(after, _discover(root, None))
    if change is not _replace_folder:     # another folder listing the same names: the same walk, walked again
        assert (after.files, after.skipped) != (before.files, before.skipped)
    # the walk recorded then is the next run's, whole
    _same(_discover(root, _walks(tmp_path)), after)
    assert len(counted) == 2 and len(rewalked) == 1


def _walk_fields(walk) -> tuple:
    return (walk.events, walk.watched, walk.body, walk.links, walk.listings, list(walk.spans.items()))


def test_a_folder_walked_again_gives_what_a_new_walk_gives(tmp_path, monkeypatch):
    """Under an ignore file of a folder above it (in force for the folder
    walked again), with a new folder holding its own ignore file, a link, a
    Python environment and an unreadable folder elsewhere: every field of the
    walk (events, watched paths and their order, links, listings, spans) is
    a new walk's."""
    monkeypatch.setenv("_MLCOST_LINT_REPLAY_MARGIN_NS", "0")
    root = _tree(tmp_path / "p")
    _touch(root, "k8s/.gitignore", "*.tmp.yaml\n")
    _touch(root, "k8s/jobs/a.tmp.yaml")
    locked = root / "z-locked"
    locked.mkdir()
    _touch(root, "z-locked/x.yaml")
    how = (["vendor"], root, root.parent, True)
    recorded = discover_mod.walk_folder(root, *how, listings=True)
    _touch(root, "k8s/jobs/new/.gitignore", "b.yaml\n")
    _touch(root, "k8s/jobs/new/b.yaml")
    _touch(root, "k8s/jobs/new/c.yaml")
    _touch(root, "k8s/jobs/new/d.tmp.yaml")
    os.symlink(root / "configs", root / "k8s/jobs/configs-link")
    (root / "k8s/jobs/old/legacy.yaml").unlink()
    _touch(root, "infra/venv/pyvenv.cfg")
    folders = [str(root / "k8s/jobs"), str(root / "k8s/jobs/old"), str(root / "infra")]
    merged = discover_mod.rewalk_folders(recorded, folders, root, *how)
    fresh = discover_mod.walk_folder(root, *how, listings=True)
    assert _walk_fields(merged) == _walk_fields(fresh)
    shown = [display for display, _ in merged.events]
    assert "p/k8s/jobs/new/c.yaml" in shown and "p/k8s/jobs/new/b.yaml" not in shown
    assert "p/k8s/jobs/a.tmp.yaml" not in shown and "p/k8s/jobs/new/d.tmp.yaml" not in shown
    assert str(root / "k8s/jobs/new/.gitignore") in merged.watched[merged.body:]


def test_the_folder_given_is_never_walked_again_alone(tmp_path):
    root = _tree(tmp_path / "p")
    how = (["vendor"], root, root.parent, True)
    recorded = discover_mod.walk_folder(root, *how, listings=True)
    assert discover_mod.rewalk_folders(recorded, [str(root)], root, *how) is None
    assert discover_mod.rewalk_folders(recorded, [str(tmp_path / "elsewhere")], root, *how) is None


def _rewrite_in_place_of(root: Path) -> None:
    # What git checkout (and pre-commit's stash of unstaged changes) does to a
    # changed file: deleted, then written again under its name. Its folder's
    # stamp moves; the folder lists the same names.
    job = root / "k8s/jobs/train.yaml"
    job.unlink()
    job.write_text(GPU_JOB.replace("gpu: 8", "gpu: 4"))


def _save_by_rename(root: Path) -> None:
    # An editor's safe save: a new file renamed over the old one.
    tmp = root / "k8s/jobs/.train.yaml.swp"
    tmp.write_text(GPU_JOB.replace("gpu: 8", "gpu: 2"))
    tmp.replace(root / "k8s/jobs/train.yaml")


@pytest.mark.parametrize("change", [_rewrite_in_place_of, _save_by_rename])
def test_a_folder_whose_names_are_the_same_keeps_its_walk(tmp_path, monkeypatch, counted, change):
    """A folder's stamp moved, its listing did not: the recorded walk holds
    (checked by listing that folder alone), and is recorded again with the
    new stamp, so the next run lists nothing."""
    monkeypatch.setenv("_MLCOST_LINT_REPLAY_MARGIN_NS", "0")
    root = _tree(tmp_path / "p")
    _settled()
    _discover(root, _walks(tmp_path))
    folder = os.stat(root / "k8s/jobs")
    change(root)
    assert os.stat(root / "k8s/jobs").st_mtime_ns != folder.st_mtime_ns
    _settled()
    listed = []
    real = discover_mod.listing_digest
    monkeypatch.setattr("mlcost_lint.discover_cache.listing_digest", lambda p: listed.append(p) or real(p))
    after = _discover(root, _walks(tmp_path))
    assert len(counted) == 1 and listed == [str(root / "k8s/jobs")]
    _same(after, _discover(root, None))
    listed.clear()
    _same(_discover(root, _walks(tmp_path)), after)
    assert len(counted) == 2 and listed == []       # the second walk above was the uncached one


def test_a_folder_changed_within_the_margin_is_checked_by_its_listing(tmp_path, monkeypatch, counted, rewalked):
    """The first runs after a pull: a folder changed less than the margin
    before the run, so its stamp cannot be trusted yet. The walk is recorded
    with that folder checked by its listing on every run: the next run walks
    nothing, a file added there walks again, and once the stamp is old enough
    the walk is recorded again without the check."""
    monkeypatch.setenv("_MLCOST_LINT_REPLAY_MARGIN_NS", str(400_000_000))
    root = _tree(tmp_path / "p")
    time.sleep(0.45)
    _discover(root, _walks(tmp_path))                       # walk 1, recorded: every stamp is old
    _touch(root, "k8s/jobs/pulled.yaml", GPU_JOB)
    pulled = _discover(root, _walks(tmp_path))              # k8s/jobs walked again: its listing changed
    listed = []
    real = discover_mod.listing_digest
    monkeypatch.setattr("mlcost_lint.discover_cache.listing_digest", lambda p: listed.append(p) or real(p))
    again = _discover(root, _walks(tmp_path))               # the record, k8s/jobs checked by its listing
    assert len(counted) == 1 and rewalked == [[str(root / "k8s/jobs")]] and listed == [str(root / "k8s/jobs")]
    _same(again, pulled)
    _same(pulled, _discover(root, None))
    counted.clear()
    assert "p/k8s/jobs/pulled.yaml" in {sf.display for sf in again.files}
    time.sleep(0.45)
    listed.clear()
    _same(_discover(root, _walks(tmp_path)), pulled)        # old enough now: recorded again without the check
    _same(_discover(root, _walks(tmp_path)), pulled)
    assert counted == [] and listed == [str(root / "k8s/jobs")]
    _touch(root, "k8s/jobs/second.yaml", GPU_JOB)
    time.sleep(0.45)
    assert "p/k8s/jobs/second.yaml" in {sf.display for sf in _discover(root, _walks(tmp_path)).files}
    assert counted == [] and len(rewalked) == 2


def test_a_walk_younger_than_the_margin_is_not_recorded(tmp_path, counted):
    root = _tree(tmp_path / "p")     # made just now: inside the default 3-second margin
    _discover(root, _walks(tmp_path))
    _discover(root, _walks(tmp_path))
    assert len(counted) == 2


def test_a_file_added_after_a_recorded_run_is_linted(tmp_path):
    # Through the CLI: the run that recorded the walk, then a new GPU job in
    # a folder deep down; its finding is reported, as with --no-cache.
    root = _tree(tmp_path / "p")
    env = {**os.environ, "_MLCOST_LINT_REPLAY_MARGIN_NS": "0"}
    _settled()

    def run(*extra: str) -> dict:
        out = subprocess.run([sys.executable, "-m", "mlcost_lint", ".", "--format", "json", "--exit-zero", *extra],
                             cwd=root, env=env, capture_output=True, text=True, check=True)
        return json.loads(out.stdout)

    first = run("--cache-dir", str(tmp_path / "c"))
    _touch(root, "k8s/jobs/old/second.yaml", GPU_JOB.replace("name: train", "name: second"))
    _settled()
    cached = run("--cache-dir", str(tmp_path / "c"))
    assert {f["path"] for f in cached["findings"]} - {f["path"] for f in first["findings"]} \
        == {"k8s/jobs/old/second.yaml"}
    assert cached == run("--no-cache")


def test_a_file_deleted_and_written_again_is_linted_as_it_is_now(tmp_path):
    # Through the CLI, as pre-commit runs it after stashing unstaged changes:
    # the job is deleted and written again with 4 GPUs; the walk is kept (its
    # folder lists the same names) and the findings are those of the new job.
    root = _tree(tmp_path / "p")
    env = {**os.environ, "_MLCOST_LINT_REPLAY_MARGIN_NS": "0"}
    _settled()

    def run(*extra: str) -> dict:
        out = subprocess.run([sys.executable, "-m", "mlcost_lint", "k8s/jobs/train.yaml", "--format", "json",
                              "--exit-zero", *extra], cwd=root, env=env, capture_output=True, text=True, check=True)
        return json.loads(out.stdout)

    first = run("--cache-dir", str(tmp_path / "c"))
    _rewrite_in_place_of(root)
    _settled()
    cached = run("--cache-dir", str(tmp_path / "c"))
    assert cached == run("--no-cache") != first
    assert any(f["code"] == "MLC204" and "holds 4 GPUs" in f["message"] for f in cached["findings"])
    assert any(f["code"] == "MLC204" and "holds 8 GPUs" in f["message"] for f in first["findings"])
