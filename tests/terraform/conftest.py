"""Helpers for the Terraform tests: parse fixture folders the way the parse
stage does (parse_bytes) and build the model."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from mlcost_lint.config import Settings
from mlcost_lint.model.terraform import build_terraform
from mlcost_lint.parse import parse_bytes
from mlcost_lint.parse.document import FileKind

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "terraform"


def kind_of(name: str) -> FileKind:
    if name.endswith(".tf.json"):
        return FileKind.TERRAFORM_JSON
    if name.endswith(".tf"):
        return FileKind.TERRAFORM
    if name.endswith((".tfvars", ".tfvars.json")):
        return FileKind.TERRAFORM_VARS
    return FileKind.JSON


def load_dir(root: Path, prefix: str = "") -> list:
    files = []
    for p in sorted(root.rglob("*")):
        if p.is_file():
            rel = prefix + os.path.relpath(p, root).replace(os.sep, "/")
            files.append(parse_bytes(p.read_bytes(), rel, kind_of(p.name)))
    return files


def build_dir(name: str, **kw):
    files = load_dir(FIXTURES / name)
    for f in files:
        assert not f.errors, f.errors
    return build_terraform(files, kw.pop("settings", Settings()), **kw)


def build_text(files: dict[str, str], **kw):
    parsed = [parse_bytes(text.encode(), path, kind_of(path)) for path, text in files.items()]
    for f in parsed:
        assert not f.errors, f.errors
    return build_terraform(parsed, kw.pop("settings", Settings()), **kw)


def by_address(model) -> dict:
    return {r.address: r for r in model.resources}


@pytest.fixture(scope="module")
def aws_model():
    return build_dir("aws_ml_platform")


@pytest.fixture(scope="module")
def gke_model():
    return build_dir("gke_platform")
