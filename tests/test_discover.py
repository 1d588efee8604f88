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
