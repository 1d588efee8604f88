from __future__ import annotations

import os
from pathlib import Path

from mlcost_lint.discover import discover, kind_of
from mlcost_lint.parse.document import FileKind


def _touch(root: Path, rel: str, text: str = "") -> Path:
    p = root / rel
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_text(text)
    return p


def test_kinds_by_name():
    assert kind_of("main.tf") is FileKind.TERRAFORM
    assert kind_of("main.tf.json") is FileKind.TERRAFORM_JSON
    assert kind_of("prod.auto.tfvars") is FileKind.TERRAFORM_VARS
    assert kind_of("x.tfvars.json") is FileKind.TERRAFORM_VARS
    assert kind_of("job.YML") is FileKind.YAML
    assert kind_of("ds.json") is FileKind.JSON
    assert kind_of("train.py") is None


def test_walk_skips_vendor_dirs_links_and_excludes(tmp_path: Path):
    _touch(tmp_path, "infra/main.tf")
    _touch(tmp_path, "infra/.terraform/modules/eks/main.tf")
    _touch(tmp_path, ".git/config.yaml")
    _touch(tmp_path, "node_modules/x/a.yaml")
    _touch(tmp_path, "env/pyvenv.cfg")
    _touch(tmp_path, "env/lib/x.yaml")
    _touch(tmp_path, "k8s/job.yaml")
    _touch(tmp_path, "k8s/generated/big.yaml")
    _touch(tmp_path, "README.md")
    os.symlink(tmp_path / "k8s", tmp_path / "k8s" / "loop")          # a symlink loop
    os.symlink("/etc/hostname", tmp_path / "k8s" / "outside.yaml")    # a link out of the tree
    found = discover([str(tmp_path)], exclude=["generated"], root=tmp_path, cwd=tmp_path)
    assert [(f.display, f.kind) for f in found.files] == [
        ("infra/main.tf", FileKind.TERRAFORM),
        ("k8s/job.yaml", FileKind.YAML),
    ]
    assert found.errors == []


def test_missing_path_is_reported(tmp_path: Path):
    found = discover([str(tmp_path / "nope")], exclude=[], root=tmp_path, cwd=tmp_path)
    assert [(e.path, e.message) for e in found.errors] == [("nope", "path does not exist")]


def test_explicit_files_and_stdin(tmp_path: Path):
    f = _touch(tmp_path, "a.yaml")
    found = discover([str(f), "-", str(f)], exclude=[], root=tmp_path, cwd=tmp_path)
    assert [f.display for f in found.files] == ["a.yaml", "stdin"]


def _crafted_tree(root: Path) -> Path:
    """Folders, a .gitignore, a link to a file, to a folder, to itself, a
    broken link, a FIFO, a folder that cannot be listed, a virtualenv."""
    (root / "a" / "b").mkdir(parents=True)
    (root / "a" / "b" / "job.yaml").write_text("kind: Job\n")
    (root / "a" / "main.tf").write_text("locals {}\n")
    (root / "a" / "run").write_text("#!/bin/bash\nsrun python t.py\n")
    (root / "venv-x").mkdir()
    (root / "venv-x" / "pyvenv.cfg").write_text("home = /usr\n")
    (root / "venv-x" / "x.yaml").write_text("a: 1\n")
    (root / ".gitignore").write_text("ignored/\n*.tmp.yaml\n")
    (root / "ignored").mkdir()
    (root / "ignored" / "x.yaml").write_text("a: 1\n")
    (root / "c.tmp.yaml").write_text("a: 1\n")
    os.symlink(root / "a" / "main.tf", root / "link.tf")
    os.symlink(root / "a", root / "linked-dir")
    os.symlink(root / "loop", root / "loop")
    os.symlink(root / "nowhere.yaml", root / "broken.yaml")
    os.mkfifo(root / "pipe.yaml")
    (root / "closed").mkdir()
    (root / "closed" / "x.yaml").write_text("a: 1\n")
    os.chmod(root / "closed", 0)
    return root


def test_the_walk_is_os_walk_without_following_links(tmp_path: Path):
    """discover._walk against os.walk(followlinks=False): the same folders in
    the same order, the same names, the same errors, with the caller pruning
    as discover does; and a file's type from the listing is lstat's."""
    import stat

    from mlcost_lint.discover import _entry_type, _walk

    roots = [_crafted_tree(tmp_path / "t"), Path(__file__).resolve().parents[1]]
    shared = Path(__file__).resolve().parents[2] / "shared" / "corpus-v2"
    if shared.is_dir():
        roots.append(shared)
    try:
        for root in roots:
            theirs, their_errors = [], []
            for dirpath, dirnames, filenames in os.walk(str(root), onerror=their_errors.append, followlinks=False):
                dirnames[:] = sorted(d for d in dirnames if not d.startswith("."))
                theirs.append((dirpath, list(dirnames), sorted(filenames)))
            ours, our_errors = [], []
            for dirpath, display, dirnames, files, links in _walk(str(root), ".", our_errors.append):
                assert links == [os.path.join(dirpath, d) for d in dirnames if os.path.islink(os.path.join(dirpath, d))]
                dirnames[:] = sorted(d for d in dirnames if not d.startswith("."))
                ours.append((dirpath, list(dirnames), sorted(files)))
                assert display == ("." if dirpath == str(root) else os.path.relpath(dirpath, root))
                for name, entry in files.items():
                    mode = os.lstat(os.path.join(dirpath, name)).st_mode
                    assert _entry_type(entry) == (stat.S_ISLNK(mode), stat.S_ISREG(mode)), name
            assert ours == theirs, root
            assert [(e.filename, e.errno) for e in our_errors] == [(e.filename, e.errno) for e in their_errors]
        assert len(ours) > 10
    finally:
        os.chmod(tmp_path / "t" / "closed", 0o755)


def test_discover_on_links_fifos_venvs_and_unlistable_folders(tmp_path: Path, monkeypatch):
    root = _crafted_tree(tmp_path / "t")
    monkeypatch.chdir(root)
    try:
        found = discover(["."], [], root, respect_gitignore=True)
    finally:
        os.chmod(root / "closed", 0o755)
    listed = os.geteuid() == 0     # root lists a folder whatever its mode
    assert [(f.display, f.kind) for f in found.files] == [
        ("a/b/job.yaml", FileKind.YAML), ("a/main.tf", FileKind.TERRAFORM), ("a/run", FileKind.SHELL),
        *([("closed/x.yaml", FileKind.YAML)] if listed else [])]
    assert [(s.display, s.reason) for s in found.skipped] == [("ignored", "gitignore"), ("c.tmp.yaml", "gitignore")]
    assert [e.message for e in found.errors] == ([] if listed else ["cannot read directory: Permission denied"])
